/*
 * pmpi_count.c - river-bench's MPI profiling layer (pmpi_count.h): the
 * executable defines these MPI_ functions, so the library's calls to
 * them come here (the PMPI interface of the MPI standard), are timed
 * and counted, and go on to MPI's own PMPI_ ones. Only the calls a
 * distributed queue makes while it moves messages are wrapped. A file
 * of its own: it calls nothing of River's, so the library's arrows into
 * it make no circle.
 */
#include "pmpi_count.h"

#include <mpi.h>
#include <time.h>

static double mpi_cpu;
static long mpi_calls;

double pmpi_count_cpu(void)
{
  return mpi_cpu;
}

long pmpi_count_calls(void)
{
  return mpi_calls;
}

/* This thread's CPU time (s), as bench_scale.c's timer. */
static double cpu_now(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define TIMED(call)                                                        \
  do {                                                                     \
    double t0_ = cpu_now();                                                \
    int r_ = (call);                                                       \
    mpi_cpu += cpu_now() - t0_;                                            \
    mpi_calls++;                                                           \
    return r_;                                                             \
  } while (0)

int MPI_Test(MPI_Request *r, int *f, MPI_Status *st)
{
  TIMED(PMPI_Test(r, f, st));
}
int MPI_Testsome(int n, MPI_Request r[], int *o, int idx[], MPI_Status st[])
{
  TIMED(PMPI_Testsome(n, r, o, idx, st));
}
int MPI_Testall(int n, MPI_Request r[], int *f, MPI_Status st[])
{
  TIMED(PMPI_Testall(n, r, f, st));
}
int MPI_Isend(const void *b, int n, MPI_Datatype t, int d, int tag,
              MPI_Comm c, MPI_Request *r)
{
  TIMED(PMPI_Isend(b, n, t, d, tag, c, r));
}
int MPI_Irecv(void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c,
              MPI_Request *r)
{
  TIMED(PMPI_Irecv(b, n, t, s, tag, c, r));
}
int MPI_Improbe(int s, int tag, MPI_Comm c, int *f, MPI_Message *m,
                MPI_Status *st)
{
  TIMED(PMPI_Improbe(s, tag, c, f, m, st));
}
int MPI_Mrecv(void *b, int n, MPI_Datatype t, MPI_Message *m, MPI_Status *st)
{
  TIMED(PMPI_Mrecv(b, n, t, m, st));
}
int MPI_Imrecv(void *b, int n, MPI_Datatype t, MPI_Message *m,
               MPI_Request *r)
{
  TIMED(PMPI_Imrecv(b, n, t, m, r));
}
int MPI_Win_flush(int rank, MPI_Win w)
{
  TIMED(PMPI_Win_flush(rank, w));
}
int MPI_Win_flush_all(MPI_Win w)
{
  TIMED(PMPI_Win_flush_all(w));
}
int MPI_Win_sync(MPI_Win w)
{
  TIMED(PMPI_Win_sync(w));
}
int MPI_Get_accumulate(const void *o, int on, MPI_Datatype ot, void *r,
                       int rn, MPI_Datatype rt, int tr, MPI_Aint td, int tn,
                       MPI_Datatype tt, MPI_Op op, MPI_Win w)
{
  TIMED(PMPI_Get_accumulate(o, on, ot, r, rn, rt, tr, td, tn, tt, op, w));
}
int MPI_Accumulate(const void *o, int on, MPI_Datatype ot, int tr,
                   MPI_Aint td, int tn, MPI_Datatype tt, MPI_Op op, MPI_Win w)
{
  TIMED(PMPI_Accumulate(o, on, ot, tr, td, tn, tt, op, w));
}
int MPI_Fetch_and_op(const void *o, void *r, MPI_Datatype t, int tr,
                     MPI_Aint td, MPI_Op op, MPI_Win w)
{
  TIMED(PMPI_Fetch_and_op(o, r, t, tr, td, op, w));
}
