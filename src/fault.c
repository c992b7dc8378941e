/*
 * fault.c - test-only fault injection at named steps of River's storage
 * paths. $RIVER_TEST_FAULT lists STEP:ACTION pairs, comma-separated;
 * river__test_fault(STEP) carries out STEP's actions, in the list's
 * order (a step may be named more than once):
 *   fail       return 1 (the caller fails that step as if I/O failed)
 *   kill       the process dies at once (SIGKILL), as a crash would
 *   sleep=MS   sleep MS milliseconds, then go on (return 0)
 *   touch=PATH create PATH (empty) if it is not there, then go on: a
 *              test learns that the job reached the step
 *   wait=PATH  wait (sleeping 10 ms at a time, at most 10 minutes)
 *              while PATH exists, then go on: a test holds a job at the
 *              step until it removes PATH, whatever the machine's speed
 *              (STEP:touch=A,STEP:wait=B: the test knows when to act)
 * Unset (always, outside tests) it returns 0 and costs one getenv. The
 * steps are named where they are called (e.g. "commit-rename" in
 * pcoll.c); doc/collections.md lists them with what each leaves behind.
 */
#include "river_internal.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Find step's action in the list: a pointer just past "STEP:", or NULL. */
static const char *find_action(const char *list, const char *step)
{
  size_t n = strlen(step);
  const char *p = list;

  while (p != NULL && *p != '\0') {
    if (strncmp(p, step, n) == 0 && p[n] == ':')
      return p + n + 1;
    p = strchr(p, ',');
    if (p != NULL)
      p++;
  }
  return NULL;
}

int river_fault_point(const char *step)
{
  return river__test_fault(step);
}

/* Carry out one action (a: its text, up to the next ',' or the end):
 * 1 for fail, else 0. */
static int act(const char *a)
{
  char path[4096];
  size_t n;

  if (strncmp(a, "fail", 4) == 0)
    return 1;
  if (strncmp(a, "kill", 4) == 0) {
    kill(getpid(), SIGKILL);
    pause();
  }
  if (strncmp(a, "touch=", 6) == 0 || strncmp(a, "wait=", 5) == 0) {
    n = strcspn(a + (a[0] == 't' ? 6 : 5), ",");
    snprintf(path, sizeof path, "%.*s", (int)n, a + (a[0] == 't' ? 6 : 5));
  }
  if (strncmp(a, "touch=", 6) == 0) {
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0)
      close(fd);
    return 0;
  }
  if (strncmp(a, "wait=", 5) == 0) {
    struct timespec ts = {0, 10000000L};
    int i;
    for (i = 0; i < 60000 && access(path, F_OK) == 0; i++)
      nanosleep(&ts, NULL);
    return 0;
  }
  if (strncmp(a, "sleep=", 6) == 0) {
    long ms = strtol(a + 6, NULL, 10);
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    if (ms > 0)
      nanosleep(&ts, NULL);
  }
  return 0;
}

int river__test_fault(const char *step)
{
  const char *list = getenv("RIVER_TEST_FAULT"), *a;
  int failed = 0;

  if (list == NULL || step == NULL)
    return 0;
  while ((a = find_action(list, step)) != NULL) {
    failed |= act(a);
    if ((list = strchr(a, ',')) == NULL)
      break;
    list++;
  }
  return failed;
}
