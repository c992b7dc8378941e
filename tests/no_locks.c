/*
 * no_locks.c - a test-only LD_PRELOAD shim: a file system without
 * locks. fcntl()'s record and open-file-description lock commands fail
 * with ENOLCK, as on some network file systems; every other fcntl call
 * goes to the next definition. (glibc >= 2.28 also exports fcntl64,
 * which 64-bit-offset builds call: both are covered.)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>

typedef int (*fcntl_fn)(int, int, ...);

static int is_lock_cmd(int cmd)
{
  switch (cmd) {
  case F_SETLK: case F_SETLKW: case F_GETLK:
#ifdef F_OFD_SETLK
  case F_OFD_SETLK: case F_OFD_SETLKW: case F_OFD_GETLK:
#endif
    return 1;
  default:
    return 0;
  }
}

static int call(const char *name, int fd, int cmd, void *arg)
{
  fcntl_fn next = (fcntl_fn)dlsym(RTLD_NEXT, name);

  if (is_lock_cmd(cmd)) {
    errno = ENOLCK;
    return -1;
  }
  if (next == NULL) {
    errno = ENOSYS;
    return -1;
  }
  return next(fd, cmd, arg);
}

int fcntl(int fd, int cmd, ...)
{
  va_list ap;
  void *arg;

  va_start(ap, cmd);
  arg = va_arg(ap, void *);
  va_end(ap);
  return call("fcntl", fd, cmd, arg);
}

int fcntl64(int fd, int cmd, ...)
{
  va_list ap;
  void *arg;

  va_start(ap, cmd);
  arg = va_arg(ap, void *);
  va_end(ap);
  return call("fcntl64", fd, cmd, arg);
}
