/*
 * agree.c - collective outcomes: every rank of a communicator learns the
 * worst status of any rank, or that some rank passed different arguments.
 *
 * River's collective calls (create, open, commit, close) end with one of
 * these so that a failure on one rank is a failure on every rank, with
 * the same code, and no rank is left waiting in a later collective.
 */
#include "river_internal.h"

#include <mpi.h>

int river__agree(MPI_Comm comm, int rc)
{
  int all = rc;

  if (MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
    return RIVER_EMPI;
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
  if (MPI_Allreduce(v, r, 1 + 2 * n, MPI_UINT64_T, MPI_MAX, comm)
      != MPI_SUCCESS)
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
