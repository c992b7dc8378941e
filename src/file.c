/*
 * file.c - River's file-system helpers (file_internal.h), a base layer
 * any of River's files may use: mapping a failed system call to a code
 * (river__syserr), opening a file only if it is a regular one (a FIFO,
 * device or directory refused at once, never blocked on: the open is
 * O_NONBLOCK until fstat has shown a regular file), in one step
 * (river__open_regular) or two (river__open_quiet now,
 * river__open_report when the file is needed), and syncing the
 * directory of a file renamed into it (river__fsync_dir). Single-disk
 * collections needed them first; the metadata, the flow spec loader and
 * parallel collections' commits use them too.
 */
#include "river_internal.h"
#include "file_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

int river__syserr(int level, const char *name, const char *what)
{
  int e = errno;

  river_log(level, "%s: %s failed: %s", name, what, strerror(e));
  if (e == ENOENT)
    return RIVER_ENOTFOUND;
  return e == EACCES || e == EPERM ? RIVER_EACCES : RIVER_EIO;
}

/* What kind of file mode m is, for a message. */
static const char *file_kind(mode_t m)
{
  if (S_ISFIFO(m))
    return "a FIFO";
  if (S_ISDIR(m))
    return "a directory";
  if (S_ISCHR(m))
    return "a character device";
  if (S_ISBLK(m))
    return "a block device";
  if (S_ISSOCK(m))
    return "a socket";
  return "of an unknown kind";
}

void river__open_quiet(const char *path, river__file *f)
{
  struct stat st;
  int fd, fl;

  f->fd = -1;
  f->err = 0;
  f->call = NULL;
  f->mode = 0;
  /* O_NONBLOCK: opening a FIFO must not wait for a writer. */
  fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    f->err = errno;
    f->call = "open";
    return;
  }
  if (fstat(fd, &st) != 0) {
    f->err = errno;
    f->call = "fstat";
  } else if (!S_ISREG(st.st_mode)) {
    f->mode = (unsigned)st.st_mode;
  } else if ((fl = fcntl(fd, F_GETFL)) < 0
             || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
    f->err = errno;
    f->call = "fcntl(O_NONBLOCK)";
  } else {
    f->fd = fd;
    return;
  }
  close(fd);
}

int river__open_report(const char *path, const char *what, int level,
                       const river__file *f)
{
  if (f->fd >= 0)
    return RIVER_SUCCESS;
  if (f->call != NULL) {
    errno = f->err;
    return river__syserr(level, path, f->call);
  }
  river_log(level, "%s: not a regular file (%s); not read as %s", path,
            file_kind((mode_t)f->mode), what);
  return RIVER_ECORRUPT;
}

int river__open_regular(const char *path, const char *what, int level,
                        int *fd)
{
  river__file f;
  int rc;

  river__open_quiet(path, &f);
  rc = river__open_report(path, what, level, &f);
  if (rc == RIVER_SUCCESS)
    *fd = f.fd;
  return rc;
}

/* fsync the directory holding path, so that a rename in it is durable. */
int river__fsync_dir(const char *path)
{
  const char *slash = strrchr(path, '/');
  char *dir;
  int fd, rc = RIVER_SUCCESS;

  if (slash == NULL)
    dir = strdup(".");
  else
    dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));
  if (dir == NULL)
    return RIVER_ENOMEM;
  fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    rc = river__syserr(RIVER_LOG_ERROR, dir,
                       "open (to fsync the directory)");
    goto out;
  }
  if (fsync(fd) < 0)
    rc = river__syserr(RIVER_LOG_ERROR, dir, "fsync of the directory");
  close(fd);
out:
  free(dir);
  return rc == RIVER_ENOTFOUND ? RIVER_EIO : rc;
}
