/*
 * sort.c - `river sort IN OUT [--memory SIZE] [--mirror R] [--root DIR]`:
 * the one-pass parallel sort of collection IN into collection OUT. The
 * sort is the flow spec flows/sort.yaml, which `river run` runs as well;
 * this command finds it and fills in its params from the options.
 *
 * Where the spec is: $RIVER_FLOWS/sort.yaml if set; else, for the river
 * program of a build tree (not installed), the source tree's flows/;
 * else the installed $(pkgdatadir)/flows. Every rank looks; they agree.
 */
#include "coll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef RIVER_SRC_FLOWSDIR
#define RIVER_SRC_FLOWSDIR "flows"
#endif
#ifndef RIVER_FLOWSDIR
#define RIVER_FLOWSDIR "/usr/local/share/river/flows"
#endif
#ifndef RIVER_BUILDDIR
#define RIVER_BUILDDIR "."
#endif

/* Whether this program is the one in the build tree (apps/river, or
 * libtool's apps/.libs/ copy), not an installed one. */
static int in_build_tree(void)
{
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  size_t len = strlen(RIVER_BUILDDIR);

  if (n <= 0)
    return 0;
  exe[n] = '\0';
  return strncmp(exe, RIVER_BUILDDIR, len) == 0 && exe[len] == '/';
}

/* The path of the shipped spec `name` into buf. */
static int find_spec(const char *name, char *buf, size_t len)
{
  const char *env = getenv("RIVER_FLOWS");
  const char *dirs[] = {env && *env ? env : NULL,
                        in_build_tree() ? RIVER_SRC_FLOWSDIR : NULL,
                        RIVER_FLOWSDIR};
  size_t i;

  for (i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
    if (dirs[i] == NULL)
      continue;
    if (snprintf(buf, len, "%s/%s", dirs[i], name) < (int)len
        && access(buf, R_OK) == 0)
      return RIVER_SUCCESS;
    if (i == 0) {   /* RIVER_FLOWS given: it must hold the spec */
      river_log(RIVER_LOG_ERROR, "sort: no %s in RIVER_FLOWS=%s (rank %d)",
                name, env, cli_rank());
      return RIVER_ENOTFOUND;
    }
  }
  river_log(RIVER_LOG_ERROR, "sort: cannot find %s in %s (rank %d; set "
            "RIVER_FLOWS to the folder that holds it)", name, RIVER_FLOWSDIR,
            cli_rank());
  return RIVER_ENOTFOUND;
}

/* OUT must not exist unless --force (then the sort replaces it when it
 * commits, and a failed sort leaves it as it was). Collective. */
static int refuse_existing(const char *out, const river_pcoll_opts *opts)
{
  char path[4200];
  size_t len = 4096;
  int rc;

  rc = river_pcoll_root(opts, path, &len);
  if (rc == RIVER_SUCCESS
      && snprintf(path + strlen(path), sizeof path - strlen(path),
                  "/%s" RIVER_PCOLL_META_SUFFIX, out)
             >= (int)(sizeof path - strlen(path)))
    rc = RIVER_EINVAL;
  if (rc == RIVER_SUCCESS && access(path, F_OK) == 0) {
    if (cli_rank() == 0)
      river_log(RIVER_LOG_ERROR, "sort: collection %s exists (--force "
                "replaces it once the sorted one is written)", out);
    rc = RIVER_EEXIST;
  }
  return cli_agree(rc);
}

/* "key=value" into buf, or 0 (said) if it does not fit: a value is
 * never cut short. */
static int param(char *buf, size_t len, const char *key, const char *value)
{
  if (snprintf(buf, len, "%s=%s", key, value) < (int)len)
    return 1;
  if (cli_rank() == 0)
    river_log(RIVER_LOG_ERROR, "sort: --%s is longer than %zu bytes", key,
              len - strlen(key) - 2);
  return 0;
}

int cmd_sort(int argc, char **argv)
{
  struct args a;
  char spec[4096], kv[5][4200];
  const char *params[5];
  int n = 0, i, rc;

  rc = cli_coll_args(argc, argv, OPT_ROOT | OPT_MIRROR | OPT_MEMORY
                     | OPT_FORCE, 2, "IN and OUT COLL", &a);
  if (rc != RIVER_SUCCESS)
    return rc;
  for (i = 0; i < 2; i++)
    if ((rc = river_pcoll_check_name(a.pos[i])) != RIVER_SUCCESS)
      return rc;
  if (strcmp(a.pos[0], a.pos[1]) == 0) {
    if (cli_rank() == 0)
        river_log(RIVER_LOG_ERROR, "sort: IN and OUT are both '%s': the "
                "sort reads IN while it writes OUT", a.pos[0]);
    return RIVER_EINVAL;
  }
  /* A rank that cannot find it says so; every rank fails alike. */
  if ((rc = cli_agree(find_spec("sort.yaml", spec, sizeof spec)))
      != RIVER_SUCCESS)
    return rc;
  if (!a.force && (rc = refuse_existing(a.pos[1], &a.opts)) != RIVER_SUCCESS)
    return rc;
  snprintf(kv[n++], sizeof kv[0], "in=%s", a.pos[0]);  /* names: short */
  snprintf(kv[n++], sizeof kv[0], "out=%s", a.pos[1]);
  snprintf(kv[n++], sizeof kv[0], "mirror=%d",
           a.opts.replication > 0 ? a.opts.replication : 1);
  if ((a.memory != NULL && !param(kv[n++], sizeof kv[0], "memory", a.memory))
      || (a.opts.root != NULL
          && !param(kv[n++], sizeof kv[0], "root", a.opts.root)))
    return RIVER_EINVAL;
  for (i = 0; i < n; i++)
    params[i] = kv[i];
  return cli_run_flow(spec, params, n);
}
