/*
 * wait.c - test-and-sleep waiting for MPI requests (see river/wait.h).
 *
 * The backoff is a sleep that starts at 1 us and doubles up to 100 us,
 * reset for every call: short waits stay short, long waits cost ~1% of a
 * core per 100 us of sleep granted.
 */
#include "river_internal.h"

#include <mpi.h>
#include <time.h>

#define RIVER_BACKOFF_MIN_NS 1000L
#define RIVER_BACKOFF_MAX_NS 100000L

void river__backoff(long *ns)
{
  struct timespec ts = {0, *ns};

  nanosleep(&ts, NULL);
  *ns = *ns * 2 > RIVER_BACKOFF_MAX_NS ? RIVER_BACKOFF_MAX_NS : *ns * 2;
}

int river_wait(MPI_Request *req, MPI_Status *status)
{
  long ns = RIVER_BACKOFF_MIN_NS;
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
  long ns = RIVER_BACKOFF_MIN_NS;
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
