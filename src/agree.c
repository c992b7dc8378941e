/*
 * agree.c - collective outcomes: every rank of a communicator learns the
 * worst status of any rank, or that some rank passed different arguments.
 *
 * River's collective calls (create, open, commit, close) end with one of
 * these so that a failure on one rank is a failure on every rank, with
 * the same code, and no rank is left waiting in a later collective.
 *
 * Every collective River makes waits like its point-to-point waits: a
 * nonblocking collective, then river_wait (test, then sleep backing off
 * to 1 ms). A blocking MPI collective spins while one rank is late (Open
 * MPI polls): 15 ranks waiting for a rank held in a commit used 175% of
 * two cores. The wrappers below are the only collectives in the library,
 * apart from communicator splits and window creation, which MPI offers
 * only blocking.
 */
#include "river_internal.h"

#include <mpi.h>

/* Wait for a nonblocking collective over comm started with status
 * `started` (RIVER_ETIMEDOUT too: the watchdog). */
static int finish(int started, MPI_Request *req, MPI_Comm comm)
{
  if (started != MPI_SUCCESS)
    return RIVER_EMPI;
  return river__wait_collective(req, comm);
}

int river__comm_dup(MPI_Comm comm, MPI_Comm *out)
{
  MPI_Request req = MPI_REQUEST_NULL;
  int up = 0, down = 0;

  /* Every object River makes starts here: called before MPI_Init or
   * after MPI_Finalize, MPI would abort the process; say so instead. */
  if (MPI_Initialized(&up) != MPI_SUCCESS || !up
      || MPI_Finalized(&down) != MPI_SUCCESS || down) {
    river_log(RIVER_LOG_ERROR, "River needs MPI: MPI is %s",
              up ? "finalized" : "not initialized");
    return RIVER_EINVAL;
  }
  if (comm == MPI_COMM_NULL || out == NULL)
    return RIVER_EINVAL;
  return finish(MPI_Comm_idup(comm, out, &req), &req, comm);
}

int river__barrier(MPI_Comm comm)
{
  MPI_Request req = MPI_REQUEST_NULL;

  return finish(MPI_Ibarrier(comm, &req), &req, comm);
}

int river__bcast(void *buf, int count, MPI_Datatype type, int root,
                 MPI_Comm comm)
{
  MPI_Request req = MPI_REQUEST_NULL;

  return finish(MPI_Ibcast(buf, count, type, root, comm, &req), &req, comm);
}

int river__gather(const void *in, int count, MPI_Datatype type, void *out,
                  int root, MPI_Comm comm)
{
  MPI_Request req = MPI_REQUEST_NULL;

  return finish(MPI_Igather(in, count, type, out, count, type, root, comm,
                            &req), &req, comm);
}

int river__allgather(const void *in, int count, MPI_Datatype type, void *out,
                     MPI_Comm comm)
{
  MPI_Request req = MPI_REQUEST_NULL;

  return finish(MPI_Iallgather(in, count, type, out, count, type, comm,
                               &req), &req, comm);
}

int river__gatherv(const void *in, int count, void *out, const int *counts,
                   const int *displs, int root, MPI_Comm comm)
{
  MPI_Request req = MPI_REQUEST_NULL;

  return finish(MPI_Igatherv(in, count, MPI_BYTE, out, counts, displs,
                             MPI_BYTE, root, comm, &req), &req, comm);
}

int river__scatterv(const void *in, const int *counts, const int *displs,
                    void *out, int count, int root, MPI_Comm comm)
{
  MPI_Request req = MPI_REQUEST_NULL;

  return finish(MPI_Iscatterv(in, counts, displs, MPI_BYTE, out, count,
                              MPI_BYTE, root, comm, &req), &req, comm);
}

int river__allreduce(const void *in, void *out, int count, MPI_Datatype type,
                     MPI_Op op, MPI_Comm comm)
{
  MPI_Request req = MPI_REQUEST_NULL;

  return finish(MPI_Iallreduce(in, out, count, type, op, comm, &req), &req,
                comm);
}

int river__agree(MPI_Comm comm, int rc)
{
  int all = rc, r;

  r = river__allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, comm);

  /* The watchdog's code says more than "MPI failed": keep it. */
  if (r != RIVER_SUCCESS)
    return r == RIVER_ETIMEDOUT ? r : RIVER_EMPI;
  return all;
}

int river__agree_same(MPI_Comm comm, const char *what, int local_rc, int n,
                      const char *const names[], const uint64_t values[])
{
  uint64_t v[1 + 2 * RIVER_AGREE_SAME_MAX], r[1 + 2 * RIVER_AGREE_SAME_MAX];
  int i;

  if (n < 0 || n > RIVER_AGREE_SAME_MAX)
    return RIVER_EINVAL;
  v[0] = local_rc != RIVER_SUCCESS;
  for (i = 0; i < n; i++) {
    v[1 + 2 * i] = values[i];
    v[2 + 2 * i] = ~values[i];    /* max of ~x is ~(min of x) */
  }
  if (river__allreduce(v, r, 1 + 2 * n, MPI_UINT64_T, MPI_MAX, comm)
      != RIVER_SUCCESS)
    return RIVER_EMPI;
  if (r[0]) {
    if (local_rc == RIVER_SUCCESS)
      river__error("%s: another rank passed invalid arguments", what);
    return RIVER_EINVAL;
  }
  for (i = 0; i < n; i++)
    if (r[1 + 2 * i] != ~r[2 + 2 * i]) {
      river__error("%s: ranks passed different %s (from %llu to %llu); "
                   "every rank must pass the same", what, names[i],
                   (unsigned long long)~r[2 + 2 * i],
                   (unsigned long long)r[1 + 2 * i]);
      return RIVER_EINVAL;
    }
  return RIVER_SUCCESS;
}
