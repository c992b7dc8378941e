/*
 * peak_rss.c - a test-only LD_PRELOAD shim that reports a process's peak
 * resident memory: when the process exits normally, a destructor appends
 * one line, "<VmHWM in KiB> <pid> <command name>", to the file named by
 * RIVER_TEST_PEAK_RSS (nothing if it is unset). tests/cli/
 * test_coll_memory.sh preloads it into the river command to check how
 * much memory a write takes, on every rank. Only processes with River
 * loaded (river_init defined) report, not the launcher, the libtool
 * wrapper script or their children.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1  /* RTLD_DEFAULT */
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* VmHWM from /proc/self/status, in KiB (-1 if it cannot be read), and
 * the command name (Name:) into name. */
static long peak_kib(char *name, size_t len)
{
  char line[256];
  long kib = -1;
  FILE *f = fopen("/proc/self/status", "r");

  snprintf(name, len, "?");
  if (f == NULL)
    return -1;
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "VmHWM:", 6) == 0)
      kib = strtol(line + 6, NULL, 10);
    else if (strncmp(line, "Name:", 5) == 0)
      sscanf(line + 5, "%63s", name);
  }
  fclose(f);
  return kib;
}

__attribute__((destructor)) static void report(void)
{
  const char *out = getenv("RIVER_TEST_PEAK_RSS");
  char line[128], name[64];
  long kib;
  int fd, n;

  if (out == NULL || *out == '\0'
      || dlsym(RTLD_DEFAULT, "river_init") == NULL)
    return;
  kib = peak_kib(name, sizeof name);
  n = snprintf(line, sizeof line, "%ld %ld %s\n", kib, (long)getpid(), name);
  fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0)
    return;
  if (write(fd, line, (size_t)n) != n)
    perror("peak_rss: write");
  close(fd);
}
