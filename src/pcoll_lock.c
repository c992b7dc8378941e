/*
 * pcoll_lock.c - the writers' lock of a parallel collection: one empty
 * file per name, ROOT/.NAME.lock, locked exclusively by rank 0 of a job
 * that writes (from create to the end of commit), removes (river rm) or
 * cleans up (river_pcoll_gc) that name. A second such job fails at once
 * with RIVER_EBUSY instead of waiting, so two writers of one name never
 * interleave their commits; readers take no lock (they rely on the
 * rename being atomic and on holding their files open, pcoll.c).
 *
 * The lock is an open-file-description lock (F_OFD_SETLK, Linux >= 3.15;
 * plain POSIX record locks elsewhere): it belongs to the descriptor, so
 * two writers in one process exclude each other too, and it dies with
 * the process, so a killed writer never leaves a stale lock. The file is
 * removed only by a holder (after rm or a write that created nothing);
 * a job that locked an unlinked file notices (its descriptor and the
 * path name different files) and tries again.
 *
 * Where the file system has no locks (ENOLCK, EOPNOTSUPP) the job goes
 * on with a warning; the generation check at commit (pcoll.c) is then
 * the only guard.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1  /* F_OFD_SETLK */
#endif
#include "pcoll_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef F_OFD_SETLK
#define LOCK_CMD F_OFD_SETLK
#define TEST_CMD F_OFD_GETLK
#else
#define LOCK_CMD F_SETLK
#define TEST_CMD F_GETLK
#endif

#define LOCK_TRIES 8  /* lock files replaced under us before giving up */

/* Try to lock fd exclusively without waiting: 0, or an errno value. */
static int try_lock(int fd)
{
  struct flock fl;

  memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  return fcntl(fd, LOCK_CMD, &fl) == 0 ? 0 : errno;
}

/* 1 if fd and path name the same file. */
static int same_file(int fd, const char *path)
{
  struct stat a, b;

  return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev
         && a.st_ino == b.st_ino;
}

/* Open (creating) the lock file at path; -1 with errno on failure or if
 * it is not a regular file (a FIFO would block a plain open). */
static int open_lock_file(const char *path)
{
  struct stat st;
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW
                      | O_NONBLOCK, 0666);

  if (fd < 0)
    return -1;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    errno = EINVAL;
    return -1;
  }
  return fd;
}

int river__pcoll_lock(const char *root, const char *name, int flags,
                      int *fd_out)
{
  char path[RIVER_PATH_MAX];
  int tries, fd, err;

  *fd_out = -1;
  if (river__pcoll_lock_path(root, name, path, sizeof path)
      != RIVER_SUCCESS)
    return RIVER_EOVERFLOW;
  for (tries = 0; tries < LOCK_TRIES; tries++) {
    fd = open_lock_file(path);
    if (fd < 0) {
      err = errno;
      river__error("collection %s: cannot open its lock file %s: %s", name,
                   path, err == EINVAL || err == ELOOP
                             ? "not a regular file (remove it)"
                             : strerror(err));
      return err == EACCES || err == EPERM ? RIVER_EACCES : RIVER_EIO;
    }
    err = try_lock(fd);
    if (err == EAGAIN || err == EACCES) {
      close(fd);
      if (!(flags & RIVER__LOCK_QUIET))
        river__error("collection %s is in use: another job is writing or "
                     "removing it (%s is locked)", name, path);
      return RIVER_EBUSY;
    }
    if ((err == ENOLCK || err == EOPNOTSUPP || err == EINVAL)
        && (flags & RIVER__LOCK_REQUIRED)) {
      close(fd);
      river__warn("collection %s: cannot lock %s (%s): its files are left "
                  "alone", name, path, strerror(err));
      return RIVER_ENOTSUP;
    }
    if (err == ENOLCK || err == EOPNOTSUPP || err == EINVAL) {
      river__warn("collection %s: cannot lock %s (%s): a concurrent writer "
                  "of this name is detected only at commit", name, path,
                  strerror(err));
      *fd_out = fd;
      return RIVER_SUCCESS;
    }
    if (err != 0) {
      close(fd);
      river__error("collection %s: cannot lock %s: %s", name, path,
                   strerror(err));
      return RIVER_EIO;
    }
    if (same_file(fd, path)) {
      *fd_out = fd;
      return RIVER_SUCCESS;
    }
    close(fd);  /* a holder removed it meanwhile: lock the new one */
  }
  river__error("collection %s is in use: its lock file %s keeps being "
               "replaced", name, path);
  return RIVER_EBUSY;
}

void river__pcoll_unlock(int fd, const char *root, const char *name,
                         int remove_file)
{
  char path[RIVER_PATH_MAX];

  if (fd < 0)
    return;
  if (remove_file
      && river__pcoll_lock_path(root, name, path, sizeof path)
             == RIVER_SUCCESS
      && same_file(fd, path))
    unlink(path);  /* while still held: see the opening comment */
  close(fd);
}

int river__file_in_use(const char *path)
{
  struct flock fl;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  int busy;

  if (fd < 0)
    return 0;
  memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  busy = fcntl(fd, TEST_CMD, &fl) == 0 && fl.l_type != F_UNLCK;
  close(fd);
  return busy;
}
