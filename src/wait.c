/*
 * wait.c - test-and-sleep waiting for MPI requests (see river/wait.h).
 *
 * The backoff first yields the core (sched_yield) RIVER_BACKOFF_YIELDS
 * times, then sleeps, starting at 1 us and doubling up to 1 ms; it starts
 * over for every wait. Yielding first matters: on these VMs the shortest
 * nanosleep takes ~60 us, which capped a 1-to-1 queue of 64 KiB messages
 * at ~0.6 GB/s; a yield returns at once when the core is free and hands
 * it over when another rank is runnable, so short waits stay short and
 * oversubscribed ranks still make way for each other. Long waits cost
 * little. Measured on these VMs, a loop of
 * nanosleep alone costs 14% of a core at 100 us, 4.3% at 500 us and 2.5%
 * at 1 ms, so the design card's 100 us cap could not meet the < 5% target
 * for a blocked rank; 1 ms does, at the price of up to 1 ms of extra
 * latency after a long wait.
 *
 * Called from a task of the cooperative scheduler (a module instance of
 * a flow, src/sched.c), a backoff step yields to the rank's other tasks
 * instead (river__sched_yield(1)): every River call that waits (a
 * collective's river_wait, a blocking DQ call, GD's loops) then lets the
 * other stages on the rank run, where sleeping would stop them and could
 * deadlock a flow whose stages wait on each other. The scheduler itself
 * sleeps when a whole round of its tasks was blocked.
 */
#include "river_internal.h"
#include "sched_internal.h"

#include <mpi.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#define RIVER_BACKOFF_YIELDS 64
#define RIVER_BACKOFF_MIN_NS 1000L
#define RIVER_BACKOFF_MAX_NS 1000000L

void river__backoff(long *ns)
{
  struct timespec ts;

  if (river__sched_current() != NULL) {  /* in a task: let others run */
    river__sched_yield(1);
    return;
  }
  if (*ns < RIVER_BACKOFF_YIELDS) {  /* yield phase: *ns counts yields */
    sched_yield();
    *ns = *ns + 1 < RIVER_BACKOFF_YIELDS ? *ns + 1 : RIVER_BACKOFF_MIN_NS;
    return;
  }
  ts.tv_sec = 0;
  ts.tv_nsec = *ns;
  nanosleep(&ts, NULL);
  *ns = *ns * 2 > RIVER_BACKOFF_MAX_NS ? RIVER_BACKOFF_MAX_NS : *ns * 2;
}

int river_wait(MPI_Request *req, MPI_Status *status)
{
  long ns = RIVER_BACKOFF_START;
  int done = 0;

  if (req == NULL)
    return RIVER_EINVAL;
  for (;;) {
    if (MPI_Test(req, &done, status) != MPI_SUCCESS)
      return RIVER_EMPI;
    if (done)
      return RIVER_SUCCESS;
    river__backoff(&ns);
  }
}

int river_waitall(int n, MPI_Request *reqs)
{
  long ns = RIVER_BACKOFF_START;
  int done = 0;

  if (n < 0 || (n > 0 && reqs == NULL))
    return RIVER_EINVAL;
  for (;;) {
    if (MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
      return RIVER_EMPI;
    if (done)
      return RIVER_SUCCESS;
    river__backoff(&ns);
  }
}

/* ------------------------------------------------------------ orphans */

struct orphan {
  struct orphan *next;
  void *p;
};

static struct orphan *orphans;   /* reachable: never reported as leaks */

void river__orphan(void *p)
{
  struct orphan *o;

  if (p == NULL || (o = malloc(sizeof *o)) == NULL)
    return;   /* without a node p is lost, which is what it must be */
  o->p = p;
  o->next = orphans;
  orphans = o;
}
