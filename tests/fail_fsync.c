/*
 * fail_fsync.c - a test-only LD_PRELOAD shim: fsync() and fdatasync() of
 * the file or directory named by RIVER_TEST_FAIL_FSYNC fail with EIO
 * (compared by device and inode, so any path to it counts), as a failing
 * disk or a lost network mount would make them. Naming the root makes
 * the directory sync just after a collection's metadata is renamed into
 * place fail, while the data files' own syncs (on the disk directories)
 * succeed. Everything else goes to the next definition.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

typedef int (*sync_fn)(int);

/* 1 if fd is the file RIVER_TEST_FAIL_FSYNC names. */
static int targeted(int fd)
{
  const char *path = getenv("RIVER_TEST_FAIL_FSYNC");
  struct stat a, b;

  return path != NULL && fstat(fd, &a) == 0 && stat(path, &b) == 0
         && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static int call(const char *name, int fd)
{
  sync_fn next = (sync_fn)dlsym(RTLD_NEXT, name);

  if (targeted(fd)) {
    errno = EIO;
    return -1;
  }
  if (next == NULL) {
    errno = ENOSYS;
    return -1;
  }
  return next(fd);
}

int fsync(int fd)
{
  return call("fsync", fd);
}

int fdatasync(int fd)
{
  return call("fdatasync", fd);
}
