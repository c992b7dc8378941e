/*
 * fail_write.c - a test-only LD_PRELOAD shim: writes to a file whose
 * path ends with one of the suffixes in RIVER_TEST_FAIL_WRITE
 * (colon-separated) fail with ENOSPC, as they would on a full disk. The
 * file is named by the descriptor (/proc/self/fd), so writes through
 * any library are caught, HDF5's included; opening, reading and
 * everything else pass untouched, so the failure comes where a full
 * disk makes it come: at the first write.
 *
 * Covered: write, pwrite, pwrite64 and writev; anything else goes to
 * the next definition (dlsym(RTLD_NEXT)).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*writev_fn)(int, const struct iovec *, int);

/* 1 if fd's file ends with one of RIVER_TEST_FAIL_WRITE's suffixes. */
static int full(int fd)
{
  const char *list = getenv("RIVER_TEST_FAIL_WRITE"), *p, *end;
  char link[64], path[4096];
  ssize_t len;
  size_t n;
  int saved = errno;

  if (list == NULL || *list == '\0' || fd < 0)
    return 0;
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  len = readlink(link, path, sizeof path - 1);
  errno = saved;
  if (len <= 0)
    return 0;
  path[len] = '\0';
  for (p = list; *p != '\0'; p = *end ? end + 1 : end) {
    end = strchr(p, ':');
    if (end == NULL)
      end = p + strlen(p);
    n = (size_t)(end - p);
    if (n > 0 && n <= (size_t)len && strncmp(path + len - n, p, n) == 0)
      return 1;
  }
  return 0;
}

static void *next(const char *name)
{
  return dlsym(RTLD_NEXT, name);
}

#define FULL_OR(fd)                                                          \
  do {                                                                       \
    if (full(fd)) {                                                          \
      errno = ENOSPC;                                                        \
      return -1;                                                             \
    }                                                                        \
  } while (0)

ssize_t write(int fd, const void *buf, size_t n);
ssize_t pwrite(int fd, const void *buf, size_t n, off_t off);
ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off);
ssize_t writev(int fd, const struct iovec *iov, int cnt);

ssize_t write(int fd, const void *buf, size_t n)
{
  FULL_OR(fd);
  return ((write_fn)next("write"))(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
  FULL_OR(fd);
  return ((pwrite_fn)next("pwrite"))(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
  FULL_OR(fd);
  return ((pwrite_fn)next("pwrite64"))(fd, buf, n, off);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
  FULL_OR(fd);
  return ((writev_fn)next("writev"))(fd, iov, cnt);
}
