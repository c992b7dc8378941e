/*
 * mpitest.h - a tiny harness for multi-rank tests (header-only).
 *
 * MT_CHECK(cond) records a failure with file:line and rank and goes on;
 * mt_verdict() reduces the failure count over MPI_COMM_WORLD, rank 0
 * prints PASS or FAIL, and every rank gets the exit status: non-zero on
 * all ranks if any rank failed. A crash or abort on any rank makes
 * mpirun itself exit non-zero, so that fails the test too.
 *
 * Include <river.h> first.
 */
#ifndef RIVER_MPITEST_H
#define RIVER_MPITEST_H

#include <mpi.h>
#include <stdio.h>
#include <string.h>

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

/* ----------------------------------------------------------- the log */
/* Install with river_log_set_handler(mt_log_capture, NULL): every message
 * this rank logs is kept, one "level|message" per line, so tests can
 * check what was said. */
static char mt_logbuf[1 << 16];
static size_t mt_loglen;

static inline void mt_log_capture(int level, int rank_, const char *msg,
                                  void *ctx)
{
  int n = snprintf(mt_logbuf + mt_loglen, sizeof mt_logbuf - mt_loglen,
                   "%s|%s\n", river_log_level_name(level), msg);

  (void)rank_;
  (void)ctx;
  if (n > 0 && (size_t)n < sizeof mt_logbuf - mt_loglen)
    mt_loglen += (size_t)n;
}

static inline void mt_log_clear(void)
{
  mt_loglen = 0;
  mt_logbuf[0] = '\0';
}

/* Some logged line contains every one of the texts (NULL: any). */
static inline int mt_logged(const char *a, const char *b, const char *c)
{
  const char *line = mt_logbuf;

  while (*line) {
    const char *end = strchr(line, '\n');
    char one[1200];
    size_t n = end ? (size_t)(end - line) : strlen(line);
    if (n >= sizeof one)
      n = sizeof one - 1;
    memcpy(one, line, n);
    one[n] = '\0';
    if ((a == NULL || strstr(one, a)) && (b == NULL || strstr(one, b))
        && (c == NULL || strstr(one, c)))
      return 1;
    line += n + (end ? 1 : 0);
    if (!end)
      break;
  }
  return 0;
}

#endif /* RIVER_MPITEST_H */
