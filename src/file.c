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
 * parallel collections' commits use them too. And names no bystander
 * can guess (river__random_hex), and a job's locked records of what it
 * leaves while it runs (river__record_make: an output's temporary, a
 * scratch collection), which gc judges once the lock is gone.
 */
#define _GNU_SOURCE 1  /* F_OFD_SETLK */
#include "river_internal.h"
#include "file_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#ifdef F_OFD_SETLK
#define RECORD_LOCK F_OFD_SETLK
#else
#define RECORD_LOCK F_SETLK
#endif

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

/* --------------------------------------------------- names and records */

void river__random_hex(char hex[17])
{
  uint64_t r = 0;
  struct timespec ts;

  if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
    clock_gettime(CLOCK_REALTIME, &ts);   /* no entropy yet: mix what */
    r = river_hash64((uint64_t)getpid() ^ (uint64_t)ts.tv_nsec   /* is */
                     ^ ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)(uintptr_t)&r);
  }
  snprintf(hex, 17, "%016llx", (unsigned long long)r);
}

int river__record_make(const char *dir, const char *sub, const char *name,
                       const char *what, const char *content, int n,
                       int *dirfd, int *recfd)
{
  struct flock fl;
  int rfd, e;

  *dirfd = *recfd = -1;
  rfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);  /* a root may be a
                                                           link: followed */
  if (rfd >= 0 && mkdirat(rfd, sub, 0777) != 0 && errno != EEXIST)
    goto fail;
  if (rfd >= 0)
    *dirfd = openat(rfd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW
                              | O_CLOEXEC);
  if (*dirfd >= 0)
    *recfd = openat(*dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW
                    | O_CLOEXEC, 0666);
  if (*recfd < 0)
    goto fail;
  memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  if (fcntl(*recfd, RECORD_LOCK, &fl) != 0
      || write(*recfd, content, (size_t)n) != n) {
    unlinkat(*dirfd, name, 0);
    goto fail;
  }
  close(rfd);
  return 0;
fail:
  e = errno;
  if (*recfd >= 0)
    close(*recfd);
  if (*dirfd >= 0)
    close(*dirfd);
  if (rfd >= 0)
    close(rfd);
  *dirfd = *recfd = -1;
  /* Said at debug level for a directory that does not exist or cannot
   * be written (a read-only root copy-out reads from), else warned. */
  river_log(e == ENOENT || e == EROFS || e == EACCES ? RIVER_LOG_DEBUG
                                                    : RIVER_LOG_WARN,
            "%s: not recorded under %s/%s (gc will not list it if this job "
            "dies): %s", what, dir, sub, strerror(e));
  errno = e;
  return -1;
}
