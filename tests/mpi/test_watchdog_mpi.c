/*
 * test_watchdog_mpi - what River does after its watchdog (RIVER_TIMEOUT)
 * has ended a wait, on 3 ranks (doc/design.md, "The watchdog").
 *
 * Rank 1 is late in a collective (test fault allreduce-late: it sleeps
 * 4 s before each allreduce of River's while the fault is set) inside
 * a queue's create; ranks 0 and 2 time out there after RIVER_TIMEOUT=1
 * and leave their allreduce pending, which rank 1 joins later. Then:
 *
 *   fired    every rank's create returns RIVER_ETIMEDOUT, ranks 0 and 2
 *            within the timeout and a margin, and river_watchdog_fired
 *            says so; the timeout is logged once per rank
 *   nothing  after that, River calls that would communicate (a create,
 *            a producer's close, a consumer's get, destroy, on a queue
 *            made before) return RIVER_ETIMEDOUT at once and start no
 *            MPI operation: this program wraps MPI's starts (PMPI) and
 *            counts them. Before, each posted its collective or message,
 *            which the late rank's pending calls matched out of step
 *            (MPI_ERR_TRUNCATE), or hung in a blocking split
 *   stack    the pending allreduce completes while ranks 0 and 2 wait
 *            in a barrier of this program's, with a 64 KiB pattern on
 *            the stack where River's frames were: the pattern must be
 *            whole. Before, MPI wrote the late result into River's dead
 *            stack frame ("stack smashing detected" seen after a
 *            timeout)
 */
#define _GNU_SOURCE
#include <river.h>
#include "mpitest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------- MPI starts, counted (PMPI) */

static int counting;   /* count from now on */
static int starts;     /* MPI operations started while counting */

#define COUNT() (starts += counting)

int MPI_Isend(const void *b, int n, MPI_Datatype t, int d, int tag,
              MPI_Comm c, MPI_Request *r)
{
  COUNT();
  return PMPI_Isend(b, n, t, d, tag, c, r);
}

int MPI_Issend(const void *b, int n, MPI_Datatype t, int d, int tag,
               MPI_Comm c, MPI_Request *r)
{
  COUNT();
  return PMPI_Issend(b, n, t, d, tag, c, r);
}

int MPI_Irecv(void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c,
              MPI_Request *r)
{
  COUNT();
  return PMPI_Irecv(b, n, t, s, tag, c, r);
}

int MPI_Iallreduce(const void *i, void *o, int n, MPI_Datatype t, MPI_Op op,
                   MPI_Comm c, MPI_Request *r)
{
  COUNT();
  return PMPI_Iallreduce(i, o, n, t, op, c, r);
}

int MPI_Ibcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c,
               MPI_Request *r)
{
  COUNT();
  return PMPI_Ibcast(b, n, t, root, c, r);
}

int MPI_Ibarrier(MPI_Comm c, MPI_Request *r)
{
  COUNT();
  return PMPI_Ibarrier(c, r);
}

int MPI_Iallgather(const void *i, int n, MPI_Datatype t, void *o, int m,
                   MPI_Datatype u, MPI_Comm c, MPI_Request *r)
{
  COUNT();
  return PMPI_Iallgather(i, n, t, o, m, u, c, r);
}

int MPI_Ialltoall(const void *i, int n, MPI_Datatype t, void *o, int m,
                  MPI_Datatype u, MPI_Comm c, MPI_Request *r)
{
  COUNT();
  return PMPI_Ialltoall(i, n, t, o, m, u, c, r);
}

int MPI_Comm_idup(MPI_Comm c, MPI_Comm *n, MPI_Request *r)
{
  COUNT();
  return PMPI_Comm_idup(c, n, r);
}

int MPI_Comm_split_type(MPI_Comm c, int t, int k, MPI_Info i, MPI_Comm *n)
{
  COUNT();
  return PMPI_Comm_split_type(c, t, k, i, n);
}

int MPI_Win_allocate(MPI_Aint s, int u, MPI_Info i, MPI_Comm c, void *b,
                     MPI_Win *w)
{
  COUNT();
  return PMPI_Win_allocate(s, u, i, c, b, w);
}

int MPI_Win_allocate_shared(MPI_Aint s, int u, MPI_Info i, MPI_Comm c,
                            void *b, MPI_Win *w)
{
  COUNT();
  return PMPI_Win_allocate_shared(s, u, i, c, b, w);
}

/* ------------------------------------------------------------ helpers */

#define REC 64

/* A queue over c: rank 0 produces, ranks 1 and 2 consume. */
static int make_queue(MPI_Comm c, int rank, river_dq **q)
{
  river_dq_opts o = RIVER_DQ_OPTS_INIT;

  o.message_size = 4096;
  return river_dq_create(c, rank == 0 ? RIVER_DQ_PRODUCER
                                      : RIVER_DQ_CONSUMER, REC, &o, q);
}

/* Lines of this rank's log with text in them. */
static int logged_count(const char *text)
{
  const char *p = mt_logbuf;
  int n = 0;

  while ((p = strstr(p, text)) != NULL) {
    n++;
    p += strlen(text);
  }
  return n;
}

#define PATTERN 0xA5
#define STACK_BYTES 65536

/* Fill STACK_BYTES of this frame with PATTERN, wait for every rank in
 * MPI_Barrier(tc) (MPI progresses the pending allreduce there), and
 * count the bytes that changed. */
static __attribute__((noinline)) int pattern_barrier(MPI_Comm tc)
{
  volatile unsigned char buf[STACK_BYTES];
  int i, bad = 0;

  for (i = 0; i < STACK_BYTES; i++)
    buf[i] = PATTERN;
  MPI_Barrier(tc);
  usleep(200000);   /* the late rank's allreduce completes by then */
  MPI_Barrier(tc);
  for (i = 0; i < STACK_BYTES; i++)
    bad += buf[i] != PATTERN;
  return bad;
}

/* ------------------------------------------------------------- the test */

int main(int argc, char **argv)
{
  river_dq *q = NULL, *q2 = NULL, *q3 = NULL;
  MPI_Comm tc, rc_comm;
  const void *recs;
  size_t k;
  double t0, took;
  int rank, size, rc, fired = -1, bad;

  setenv("RIVER_TIMEOUT", "1", 1);
  if (river_init(&argc, &argv) != RIVER_SUCCESS)
    return 1;
  river_log_set_handler(mt_log_capture, NULL);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 3) {
    if (rank == 0)
      fprintf(stderr, "test_watchdog_mpi: needs 3 ranks, got %d\n", size);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &tc);       /* this program's own */
  MPI_Comm_dup(MPI_COMM_WORLD, &rc_comm);  /* River's */

  /* A queue made before the watchdog fires, for the calls after. */
  MT_CHECK_RC(make_queue(rc_comm, rank, &q), RIVER_SUCCESS);
  MT_CHECK_RC(river_watchdog_fired(&fired), RIVER_SUCCESS);
  MT_CHECK(fired == 0);

  /* fired: rank 1 late in the next create's allreduces. */
  if (rank == 1)
    setenv("RIVER_TEST_FAULT", "allreduce-late:sleep=4000", 1);
  t0 = MPI_Wtime();
  rc = make_queue(rc_comm, rank, &q2);
  took = MPI_Wtime() - t0;
  unsetenv("RIVER_TEST_FAULT");
  MT_CHECK_RC(rc, RIVER_ETIMEDOUT);
  MT_CHECK(q2 == NULL);
  if (rank != 1)
    MT_CHECK(took >= 0.9 && took < 3.9);   /* before rank 1 comes */
  MT_CHECK_RC(river_watchdog_fired(&fired), RIVER_SUCCESS);
  MT_CHECK(fired == 1);
  if (logged_count("no progress for 1 s") != 1) {
    fprintf(stderr, "rank %d: the timeout logged %d times, want 1:\n%s",
            rank, logged_count("no progress for 1 s"), mt_logbuf);
    MT_CHECK(!"the timeout logged once");
  }

  /* nothing: every later call fails at once and starts nothing. */
  counting = 1;
  t0 = MPI_Wtime();
  MT_CHECK_RC(make_queue(rc_comm, rank, &q3), RIVER_ETIMEDOUT);
  MT_CHECK(q3 == NULL);
  if (rank == 0) {
    MT_CHECK_RC(river_dq_close(q), RIVER_ETIMEDOUT);
  } else {
    MT_CHECK_RC(river_dq_get(q, &recs, &k, NULL), RIVER_ETIMEDOUT);
  }
  MT_CHECK_RC(river_dq_destroy(q), RIVER_ETIMEDOUT);
  took = MPI_Wtime() - t0;
  counting = 0;
  if (starts != 0) {
    fprintf(stderr, "rank %d: %d MPI operations started after the "
            "watchdog fired\n", rank, starts);
    MT_CHECK(starts == 0);
  }
  MT_CHECK(took < 0.9);   /* at once: a wait would take the timeout */
  MT_CHECK(logged_count("no progress for") == 1);

  /* stack: the pending allreduce completes here. */
  bad = pattern_barrier(tc);
  if (bad != 0) {
    fprintf(stderr, "rank %d: %d bytes of the stack pattern changed while "
            "MPI completed an abandoned collective\n", rank, bad);
    MT_CHECK(bad == 0);
  }

  rc = mt_verdict(tc, "test_watchdog_mpi");
  MPI_Comm_free(&tc);
  /* River's abandoned requests stay pending: Open MPI's finalize does
   * not wait for them. */
  MPI_Finalize();
  return rc;
}
