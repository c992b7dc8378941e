/*
 * fault.c - test-only fault injection at named steps of River's storage
 * paths. $RIVER_TEST_FAULT lists STEP:ACTION pairs, comma-separated;
 * river__test_fault(STEP) carries out STEP's action:
 *   fail       return 1 (the caller fails that step as if I/O failed)
 *   kill       the process dies at once (SIGKILL), as a crash would
 *   sleep=MS   sleep MS milliseconds, then go on (return 0)
 *   wait=PATH  wait (sleeping 10 ms at a time, at most 10 minutes)
 *              while PATH exists, then go on: a test holds a job at the
 *              step until it removes PATH, whatever the machine's speed
 * Unset (always, outside tests) it returns 0 and costs one getenv. The
 * steps are named where they are called (e.g. "commit-rename" in
 * pcoll.c); doc/collections.md lists them with what each leaves behind.
 */
#include "river_internal.h"

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

int river__test_fault(const char *step)
{
  const char *list = getenv("RIVER_TEST_FAULT"), *a;

  if (list == NULL || step == NULL || (a = find_action(list, step)) == NULL)
    return 0;
  if (strncmp(a, "fail", 4) == 0)
    return 1;
  if (strncmp(a, "kill", 4) == 0) {
    kill(getpid(), SIGKILL);
    pause();
  }
  if (strncmp(a, "wait=", 5) == 0) {
    char path[4096];
    size_t n = strcspn(a + 5, ",");
    struct timespec ts = {0, 10000000L};
    int i;
    snprintf(path, sizeof path, "%.*s", (int)n, a + 5);
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
