/*
 * mpitest.h - a tiny harness for multi-rank tests (header-only).
 *
 * MT_CHECK(cond) records a failure with file:line and rank and goes on;
 * mt_verdict() reduces the failure count over MPI_COMM_WORLD, rank 0
 * prints PASS or FAIL, and every rank gets the exit status: non-zero on
 * all ranks if any rank failed. A crash or abort on any rank makes
 * mpirun itself exit non-zero, so that fails the test too.
 */
#ifndef RIVER_MPITEST_H
#define RIVER_MPITEST_H

#include <mpi.h>
#include <stdio.h>

static int mt_failures;

#define MT_CHECK(cond)                                                     \
  do {                                                                     \
    if (!(cond)) {                                                         \
      int mt_rank_ = -1;                                                   \
      MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank_);                            \
      fprintf(stderr, "%s:%d: rank %d: check failed: %s\n", __FILE__,      \
              __LINE__, mt_rank_, #cond);                                  \
      mt_failures++;                                                       \
    }                                                                      \
  } while (0)

#define MT_CHECK_RC(call, expect)                                          \
  do {                                                                     \
    int mt_rc_ = (call);                                                   \
    if (mt_rc_ != (expect)) {                                              \
      int mt_rank_ = -1;                                                   \
      MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank_);                            \
      fprintf(stderr, "%s:%d: rank %d: %s returned %d (%s), expected %s\n",\
              __FILE__, __LINE__, mt_rank_, #call, mt_rc_,                 \
              river_err_name(mt_rc_), #expect);                            \
      mt_failures++;                                                       \
    }                                                                      \
  } while (0)

/* Collective over comm: 0 if no rank failed, 1 otherwise. */
static inline int mt_verdict(MPI_Comm comm, const char *name)
{
  int total = 0, rank = 0;

  MPI_Allreduce(&mt_failures, &total, 1, MPI_INT, MPI_SUM, comm);
  MPI_Comm_rank(comm, &rank);
  if (rank == 0)
    printf("%s: %s (%d failed check%s)\n", total ? "FAIL" : "PASS", name,
           total, total == 1 ? "" : "s");
  return total ? 1 : 0;
}

#endif /* RIVER_MPITEST_H */
