/*
 * timing.c - clock helpers: a monotonic clock and an accumulating
 * stopwatch (river_timer), usable before river_init and without MPI,
 * and a thread's CPU time (river__thread_cpu).
 */
#include "river_internal.h"

#include <time.h>

double river_wtime(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double river__thread_cpu(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int river_timer_reset(river_timer *t)
{
  if (t == NULL)
    return RIVER_EINVAL;
  t->start = 0.0;
  t->total = 0.0;
  t->running = 0;
  return RIVER_SUCCESS;
}

int river_timer_start(river_timer *t)
{
  if (t == NULL)
    return RIVER_EINVAL;
  if (t->running)
    return RIVER_ESTATE;
  t->start = river_wtime();
  t->running = 1;
  return RIVER_SUCCESS;
}

int river_timer_stop(river_timer *t)
{
  if (t == NULL)
    return RIVER_EINVAL;
  if (!t->running)
    return RIVER_ESTATE;
  t->total += river_wtime() - t->start;
  t->running = 0;
  return RIVER_SUCCESS;
}

int river_timer_elapsed(const river_timer *t, double *seconds)
{
  if (t == NULL || seconds == NULL)
    return RIVER_EINVAL;
  *seconds = t->total + (t->running ? river_wtime() - t->start : 0.0);
  return RIVER_SUCCESS;
}
