/*
 * plugin.c - loading shared libraries of user modules (river/module.h,
 * river_plugin_load): dlopen the path as given (./NAME for a bare name:
 * no search path is ever used), call its river_plugin_init, which
 * registers its modules, and remember the library so that a second load
 * does nothing. Libraries stay loaded until the process ends: their
 * modules' functions live there.
 */
#include "flow_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define ENTRY "river_plugin_init"

typedef int (*plugin_init_fn)(void);

static void **handles;   /* the libraries loaded so far */
static int nhandles;

static int seen(void *h)
{
  int i;

  for (i = 0; i < nhandles; i++)
    if (handles[i] == h)
      return 1;
  return 0;
}

int river_plugin_load(const char *path)
{
  char file[4096];
  struct stat st;
  plugin_init_fn init;
  void *h, **grown;
  int rc;

  if (path == NULL || path[0] == '\0') {
    river__error("river_plugin_load: %s", path == NULL ? "path is NULL"
                                                      : "an empty path");
    return RIVER_EINVAL;
  }
  if ((size_t)snprintf(file, sizeof file, "%s%s",
                       strchr(path, '/') ? "" : "./", path) >= sizeof file) {
    river__error("plugin %s: the path is too long", path);
    return RIVER_EINVAL;
  }
  if (stat(file, &st) != 0) {
    river__error("plugin %s: %s", path, strerror(errno));
    return errno == ENOENT ? RIVER_ENOTFOUND : RIVER_EIO;
  }
  if (!S_ISREG(st.st_mode)) {
    river__error("plugin %s: not a regular file", path);
    return RIVER_EINVAL;
  }
  dlerror();
  if ((h = dlopen(file, RTLD_NOW | RTLD_LOCAL)) == NULL) {
    river__error("plugin %s: cannot load it: %s", path, dlerror());
    return RIVER_EFORMAT;
  }
  if (seen(h)) {
    dlclose(h);   /* the reference this call took; loaded already */
    return RIVER_SUCCESS;
  }
  *(void **)&init = dlsym(h, ENTRY);
  if (init == NULL) {
    river__error("plugin %s: no entry point %s (a plugin defines int "
                 ENTRY "(void), which registers its modules: "
                 "doc/modules.md, \"Plugins\")", path, ENTRY);
    dlclose(h);
    return RIVER_ENOTFOUND;
  }
  if ((grown = realloc(handles, (size_t)(nhandles + 1) * sizeof *handles))
      == NULL) {
    dlclose(h);
    return RIVER_ENOMEM;
  }
  handles = grown;
  (void)river__module_find(NULL);   /* the built-ins are River's own */
  river__module_set_plugin(path);
  rc = init();
  river__module_set_plugin(NULL);
  if (rc != RIVER_SUCCESS) {
    river__error("plugin %s: " ENTRY " failed: %s", path,
                 rc < 0 ? river_strerror(rc) : "a positive return");
    river__module_drop_plugin(path);
    /* Not closed: code of it may still be referenced (a handler it
     * set); it is not remembered, so loading it again calls it again. */
    return rc < 0 ? rc : RIVER_EINVAL;
  }
  handles[nhandles++] = h;
  return RIVER_SUCCESS;
}
