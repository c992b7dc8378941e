/*
 * wait.c - test-and-sleep waiting for MPI requests (see river/wait.h):
 * river_wait, river_waitall, the collectives' wait, and river__backoff,
 * the step every wait of River's takes: in a task of the cooperative
 * scheduler (a module instance of a flow, src/sched.c) it yields to the
 * rank's other tasks (river__sched_yield(1)), so that a River call that
 * waits (a collective's river_wait, a blocking DQ call, GD's loops)
 * lets the other stages on the rank run, where sleeping would stop them
 * and could deadlock a flow whose stages wait on each other; elsewhere
 * it naps (src/backoff.c: yields, then sleeps, and the watchdog). The
 * backoff hooks run either way.
 */
#include "river_internal.h"
#include "sched_internal.h"

#include <mpi.h>
#include <stdlib.h>

int river__backoff(long *ns)
{
  if (river__sched_current() != NULL) {  /* in a task: let others run */
    river__run_hooks();
    return river__sched_yield(1);        /* the scheduler's watchdog */
  }
  return river__nap(ns);
}

int river__wait_collective(MPI_Request *req, MPI_Comm comm)
{
  long ns = RIVER_BACKOFF_START;
  int done = 0, rank = -1, size = 0, i, n = 0, *ranks, rc;

  for (;;) {
    if (MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return RIVER_EMPI;
    if (done) {
      river__progress();
      return RIVER_SUCCESS;
    }
    if (river__backoff(&ns) != RIVER_SUCCESS)
      break;
  }
  /* Which rank is late MPI does not say: name every other one. */
  if (comm != MPI_COMM_NULL) {
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
  }
  ranks = size > 1 ? malloc((size_t)size * sizeof *ranks) : NULL;
  for (i = 0; ranks != NULL && i < size; i++)
    if (i != rank)
      ranks[n++] = i;
  rc = river__timeout_error(comm, ranks, n, "a collective waiting for the "
                            "latest of its ranks (one or more of them)");
  free(ranks);
  return rc;
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
    if (done) {
      river__progress();
      return RIVER_SUCCESS;
    }
    if (river__backoff(&ns) != RIVER_SUCCESS)
      return river__timeout_error(MPI_COMM_NULL, NULL, 0,
                                  "waiting for an MPI request");
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
    if (done) {
      river__progress();
      return RIVER_SUCCESS;
    }
    if (river__backoff(&ns) != RIVER_SUCCESS)
      return river__timeout_error(MPI_COMM_NULL, NULL, 0,
                                  "waiting for MPI requests");
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
