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
 *
 * After the watchdog (src/backoff.c). A wait the watchdog ends leaves its
 * collective pending for good: the late rank may still join it, and MPI
 * then writes the result, whenever this process next enters MPI (a later
 * River call, the program's MPI_Finalize). So each collective runs on a
 * heap copy of its buffers (struct staged), copied back when it
 * completes and kept (river__orphan) when the watchdog ends it: a late
 * result lands in memory that is still River's, never in a caller's
 * stack frame that is gone or a buffer the caller freed (found so: after
 * a timeout, later calls crashed with "stack smashing detected"). And
 * once the watchdog has fired, no new collective starts: every wrapper
 * returns RIVER_ETIMEDOUT at once. A collective started after an
 * abandoned one on the same communicator would be matched with it by
 * the ranks still inside it, out of step (MPI_ERR_TRUNCATE, or a wrong
 * answer). The copies cost a memcpy of what a collective moves; River's
 * collectives move counts, names and splitters, never records.
 */
#include "river_internal.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

/* A collective's buffers while MPI may write them (the header comment):
 * in and out point into one heap block, the input's copy first, then
 * the output's; or, where that block cannot be had, at the caller's own
 * buffers (the collective must still run: every rank takes part, or
 * the others wait for ever). */
struct staged {
  char *blk;
  void *in, *out;
  size_t out_bytes;
};

/* Bytes that count items of type span (River passes predefined types
 * only, at lower bound 0): count extents, not count sizes, as a pair
 * type such as MPI_DOUBLE_INT has a hole (12 bytes of data in 16; with
 * sizes, the copy of two pairs left out the second's int). */
static size_t type_bytes(int count, MPI_Datatype type)
{
  MPI_Aint lb = 0, extent = 0;
  int sz = 0;

  if (count <= 0 || MPI_Type_size(type, &sz) != MPI_SUCCESS || sz <= 0
      || MPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS)
    return 0;
  if (extent < sz)
    extent = sz;
  return (size_t)count * (size_t)extent;
}

/* Set st up for a collective reading in_bytes of in and writing
 * out_bytes of out; inplace: out is read too (MPI_IN_PLACE). RIVER_ETIMEDOUT,
 * and nothing set up, once the watchdog has fired: nothing may start. */
static int stage(struct staged *st, const void *in, size_t in_bytes,
                 void *out, size_t out_bytes, int inplace)
{
  st->blk = NULL;
  st->in = (void *)in;
  st->out = out;
  st->out_bytes = out_bytes;
  if (river__watchdog_fired())
    return RIVER_ETIMEDOUT;
  if ((st->blk = malloc(in_bytes + out_bytes + 1)) == NULL)
    return RIVER_SUCCESS;   /* on the caller's buffers, as before */
  if (in != NULL && in_bytes > 0) {
    memcpy(st->blk, in, in_bytes);
    st->in = st->blk;
  }
  if (inplace && out_bytes > 0)
    memcpy(st->blk + in_bytes, out, out_bytes);
  st->out = st->blk + in_bytes;
  return RIVER_SUCCESS;
}

/* Wait for the collective started with status `started` over comm, then
 * copy the output back to out (NULL: none) and free the block, or keep
 * the block for good if the watchdog ended the wait. */
static int finish(int started, MPI_Request *req, MPI_Comm comm,
                  struct staged *st, void *out)
{
  int rc = started == MPI_SUCCESS ? river__wait_collective(req, comm)
                                  : RIVER_EMPI;

  if (rc == RIVER_ETIMEDOUT) {
    river__orphan(st->blk);
    return rc;
  }
  if (rc == RIVER_SUCCESS && st->blk != NULL && out != NULL
      && st->out_bytes > 0)
    memcpy(out, st->out, st->out_bytes);
  free(st->blk);
  return rc;
}

int river__comm_dup(MPI_Comm comm, MPI_Comm *out)
{
  MPI_Request req = MPI_REQUEST_NULL;
  struct staged st;
  int up = 0, down = 0, rc;

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
  /* MPI writes the new handle when the dup completes: staged too. */
  if ((rc = stage(&st, NULL, 0, out, sizeof *out, 0)) != RIVER_SUCCESS)
    return rc;
  return finish(MPI_Comm_idup(comm, st.out, &req), &req, comm, &st, out);
}

int river__barrier(MPI_Comm comm)
{
  MPI_Request req = MPI_REQUEST_NULL;
  struct staged st;
  int rc;

  if ((rc = stage(&st, NULL, 0, NULL, 0, 0)) != RIVER_SUCCESS)
    return rc;
  return finish(MPI_Ibarrier(comm, &req), &req, comm, &st, NULL);
}

int river__bcast(void *buf, int count, MPI_Datatype type, int root,
                 MPI_Comm comm)
{
  MPI_Request req = MPI_REQUEST_NULL;
  struct staged st;
  size_t n = type_bytes(count, type);
  int rc;

  if ((rc = stage(&st, NULL, 0, buf, n, 1)) != RIVER_SUCCESS)
    return rc;
  return finish(MPI_Ibcast(st.out, count, type, root, comm, &req),
                &req, comm, &st, buf);
}

/* The number of ranks of comm (0 if MPI cannot say). */
static int comm_size(MPI_Comm comm)
{
  int n = 0;

  return MPI_Comm_size(comm, &n) == MPI_SUCCESS ? n : 0;
}

/* 1 if this rank is root of comm. */
static int is_root(MPI_Comm comm, int root)
{
  int me = -1;

  return MPI_Comm_rank(comm, &me) == MPI_SUCCESS && me == root;
}

int river__gather(const void *in, int count, MPI_Datatype type, void *out,
                  int root, MPI_Comm comm)
{
  MPI_Request req = MPI_REQUEST_NULL;
  struct staged st;
  size_t n = type_bytes(count, type);
  size_t all = is_root(comm, root) ? n * (size_t)comm_size(comm) : 0;
  int rc;

  if ((rc = stage(&st, in, n, all ? out : NULL, all, 0)) != RIVER_SUCCESS)
    return rc;
  return finish(MPI_Igather(st.in, count, type, st.out,
                            count, type, root, comm, &req),
                &req, comm, &st, all ? out : NULL);
}

int river__allgather(const void *in, int count, MPI_Datatype type, void *out,
                     MPI_Comm comm)
{
  MPI_Request req = MPI_REQUEST_NULL;
  struct staged st;
  size_t n = type_bytes(count, type), all = n * (size_t)comm_size(comm);
  int rc, inplace = in == MPI_IN_PLACE;

  /* In place, this rank's part is in out: the whole of out is copied. */
  if ((rc = stage(&st, inplace ? NULL : in, inplace ? 0 : n, out, all,
                  inplace)) != RIVER_SUCCESS)
    return rc;
  return finish(MPI_Iallgather(inplace ? MPI_IN_PLACE : st.in, count, type,
                               st.out, count, type,
                               comm, &req),
                &req, comm, &st, out);
}

/* The bytes a v-collective's root buffer spans: the end of its last
 * piece (counts and displs over comm's ranks). */
static size_t v_extent(const int *counts, const int *displs, MPI_Comm comm)
{
  size_t end = 0, e;
  int i, n = comm_size(comm);

  for (i = 0; counts != NULL && displs != NULL && i < n; i++) {
    e = (size_t)(displs[i] > 0 ? displs[i] : 0)
        + (size_t)(counts[i] > 0 ? counts[i] : 0);
    end = e > end ? e : end;
  }
  return end;
}

int river__gatherv(const void *in, int count, void *out, const int *counts,
                   const int *displs, int root, MPI_Comm comm)
{
  MPI_Request req = MPI_REQUEST_NULL;
  struct staged st;
  size_t all = is_root(comm, root) ? v_extent(counts, displs, comm) : 0;
  int rc;

  if ((rc = stage(&st, in, count > 0 ? (size_t)count : 0,
                  all ? out : NULL, all, 0)) != RIVER_SUCCESS)
    return rc;
  return finish(MPI_Igatherv(st.in, count, MPI_BYTE, st.out,
                             counts, displs, MPI_BYTE, root, comm, &req),
                &req, comm, &st, all ? out : NULL);
}

int river__scatterv(const void *in, const int *counts, const int *displs,
                    void *out, int count, int root, MPI_Comm comm)
{
  MPI_Request req = MPI_REQUEST_NULL;
  struct staged st;
  size_t all = is_root(comm, root) ? v_extent(counts, displs, comm) : 0;
  int rc;

  if ((rc = stage(&st, all ? in : NULL, all, out,
                  count > 0 ? (size_t)count : 0, 0)) != RIVER_SUCCESS)
    return rc;
  return finish(MPI_Iscatterv(all ? st.in : in, counts, displs, MPI_BYTE,
                              st.out, count, MPI_BYTE, root, comm,
                              &req),
                &req, comm, &st, out);
}

int river__allreduce(const void *in, void *out, int count, MPI_Datatype type,
                     MPI_Op op, MPI_Comm comm)
{
  MPI_Request req = MPI_REQUEST_NULL;
  struct staged st;
  size_t n = type_bytes(count, type);
  int rc, inplace = in == MPI_IN_PLACE;

  if ((rc = stage(&st, inplace ? NULL : in, inplace ? 0 : n, out, n,
                  inplace)) != RIVER_SUCCESS)
    return rc;
  river__test_fault("allreduce-late");  /* tests: sleep=MS, a late rank */
  return finish(MPI_Iallreduce(inplace ? MPI_IN_PLACE : st.in, st.out, count,
                               type, op, comm, &req),
                &req, comm, &st, out);
}

/* A wrapper's failure as River's collective calls report it: the
 * watchdog's code says more than "MPI failed", so it is kept. */
static int collective_failed(int r)
{
  return r == RIVER_ETIMEDOUT ? r : RIVER_EMPI;
}

int river__agree(MPI_Comm comm, int rc)
{
  int all = rc, r;

  r = river__allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, comm);
  if (r != RIVER_SUCCESS)
    return collective_failed(r);
  return all;
}
int river__agree_same(MPI_Comm comm, const char *what, int local_rc, int n,
                      const char *const names[], const uint64_t values[])
{
  uint64_t v[1 + 2 * RIVER_AGREE_SAME_MAX], r[1 + 2 * RIVER_AGREE_SAME_MAX];
  int i, e;

  if (n < 0 || n > RIVER_AGREE_SAME_MAX)
    return RIVER_EINVAL;
  v[0] = local_rc != RIVER_SUCCESS;
  for (i = 0; i < n; i++) {
    v[1 + 2 * i] = values[i];
    v[2 + 2 * i] = ~values[i];    /* max of ~x is ~(min of x) */
  }
  if ((e = river__allreduce(v, r, 1 + 2 * n, MPI_UINT64_T, MPI_MAX, comm))
      != RIVER_SUCCESS)
    return collective_failed(e);
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
