/*
 * deny_open.c - a test-only LD_PRELOAD shim: open() of the paths named
 * in RIVER_TEST_DENY_OPEN (colon-separated, each compared whole) fails
 * with EACCES, as it would for a user without read permission. The
 * tests run as root, for whom a chmod 000 file is still readable, so
 * they use this to see how River reports a permission failure.
 *
 * Every entry point that opens a file by name is covered: open, openat
 * and their 64-bit and fortified (__open_2) forms, and fopen, so that
 * both River's own opens and HDF5's are caught. Anything else is passed
 * to the next definition (dlsym(RTLD_NEXT)).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef FILE *(*fopen_fn)(const char *, const char *);

/* 1 if path is one of RIVER_TEST_DENY_OPEN's entries. */
static int denied(const char *path)
{
  const char *list = getenv("RIVER_TEST_DENY_OPEN"), *p, *end;
  size_t n;

  if (list == NULL || path == NULL)
    return 0;
  n = strlen(path);
  for (p = list; *p != '\0'; p = *end ? end + 1 : end) {
    end = strchr(p, ':');
    if (end == NULL)
      end = p + strlen(p);
    if ((size_t)(end - p) == n && n > 0 && strncmp(p, path, n) == 0)
      return 1;
  }
  return 0;
}

static void *next(const char *name)
{
  return dlsym(RTLD_NEXT, name);
}

/* The mode argument, present when flags create a file. */
#define MODE_ARG(flags, mode)                                                \
  do {                                                                       \
    if ((flags) & (O_CREAT | O_TMPFILE)) {                                   \
      va_list ap;                                                            \
      va_start(ap, flags);                                                   \
      mode = (mode_t)va_arg(ap, int);                                        \
      va_end(ap);                                                            \
    }                                                                        \
  } while (0)

#define DENY_OR(path)                                                        \
  do {                                                                       \
    if (denied(path)) {                                                      \
      errno = EACCES;                                                        \
      return -1;                                                             \
    }                                                                        \
  } while (0)

int open(const char *path, int flags, ...);
int open64(const char *path, int flags, ...);
int openat(int dir, const char *path, int flags, ...);
int openat64(int dir, const char *path, int flags, ...);
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
FILE *fopen(const char *path, const char *mode);
FILE *fopen64(const char *path, const char *mode);

int open(const char *path, int flags, ...)
{
  mode_t mode = 0;

  MODE_ARG(flags, mode);
  DENY_OR(path);
  return ((open_fn)next("open"))(path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
  mode_t mode = 0;

  MODE_ARG(flags, mode);
  DENY_OR(path);
  return ((open_fn)next("open64"))(path, flags, mode);
}

int openat(int dir, const char *path, int flags, ...)
{
  mode_t mode = 0;

  MODE_ARG(flags, mode);
  DENY_OR(path);
  return ((openat_fn)next("openat"))(dir, path, flags, mode);
}

int openat64(int dir, const char *path, int flags, ...)
{
  mode_t mode = 0;

  MODE_ARG(flags, mode);
  DENY_OR(path);
  return ((openat_fn)next("openat64"))(dir, path, flags, mode);
}

int __open_2(const char *path, int flags)
{
  DENY_OR(path);
  return ((open_fn)next("open"))(path, flags);
}

int __open64_2(const char *path, int flags)
{
  DENY_OR(path);
  return ((open_fn)next("open64"))(path, flags);
}

FILE *fopen(const char *path, const char *mode)
{
  if (denied(path)) {
    errno = EACCES;
    return NULL;
  }
  return ((fopen_fn)next("fopen"))(path, mode);
}

FILE *fopen64(const char *path, const char *mode)
{
  if (denied(path)) {
    errno = EACCES;
    return NULL;
  }
  return ((fopen_fn)next("fopen64"))(path, mode);
}
