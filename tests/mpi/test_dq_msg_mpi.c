/*
 * test_dq_msg_mpi - the two-sided credit path (RIVER_DQ_CREDITS=msg,
 * src/dq_credit.c) where timing decides, on groups of 3 ranks (any
 * multiple of 3):
 *
 *   late    the consumer's credit returns queue behind an unfinished
 *           send until destroy (test fault dq-credit-late, as behind
 *           data on a busy link): destroy must count the ADD that waits
 *           and wait for it, or it arrives after the producer freed the
 *           queue, on a communicator whose id MPI gives the next queue
 *           (Open MPI matched it there, and that queue lost a credit
 *           message and hung); a second queue on the same communicator
 *           then streams every record exactly once (ranks 0 and 1)
 *   closed  PULL: producer 0 closes with no unit and then waits outside
 *           River (MPI_Barrier) without having answered the consumer's
 *           claim (test fault dq-claim-deaf: claims answered only at
 *           destroy); the consumer joins that barrier only after all 5
 *           units of producer 1, so it must stop awaiting a closed
 *           producer's answer (it granted nothing) and claim at producer
 *           1 (it used to wait for producer 0's answer for ever)
 *   destroy the same without a fault or barrier, 10 times: producer 0
 *           closes with no unit and calls destroy at once, whose count
 *           exchange serves no claim until every rank is in destroy; a
 *           consumer that asked it before its end of stream came waited
 *           for the answer for good (4 runs in 8 hung)
 *
 * RIVER_TIMEOUT bounds every wait, so a hang fails the test.
 */
#define _GNU_SOURCE
#include <river.h>
#include "mpitest.h"

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define MSG 4096
#define PER ((MSG - 32) / 64) /* records of 64 bytes per message (32:
                                 the header, src/dq_internal.h) */

/* Stream n records of 64 bytes (record i: its number in every word) from
 * rank 0 of c to rank 1 on a queue with the given credits; the consumer
 * checks each record, their order and count, and EOS. */
static void stream(MPI_Comm c, int rank, int credits, uint64_t n)
{
  river_dq_opts o = RIVER_DQ_OPTS_INIT;
  river_dq *q = NULL;
  uint64_t rec[8], i, got = 0, bad = 0;
  const void *recs;
  size_t k, j;
  int rc, w;

  o.credits = credits;
  o.message_size = MSG;
  rc = river_dq_create(c, rank == 0 ? RIVER_DQ_PRODUCER : RIVER_DQ_CONSUMER,
                       sizeof rec, &o, &q);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc != RIVER_SUCCESS)
    return;
  if (rank == 0) {
    for (i = 0; i < n; i++) {
      for (w = 0; w < 8; w++)
        rec[w] = i;
      MT_CHECK_RC(river_dq_put(q, rec, 1), RIVER_SUCCESS);
    }
    MT_CHECK_RC(river_dq_close(q), RIVER_SUCCESS);
  } else {
    while ((rc = river_dq_get(q, &recs, &k, NULL)) == RIVER_SUCCESS)
      for (j = 0; j < k; j++, got++)
        for (w = 0; w < 8; w++)
          bad += ((const uint64_t *)recs)[8 * j + (size_t)w] != got;
    MT_CHECK_RC(rc, RIVER_EOS);
    MT_CHECK(got == n);
    MT_CHECK(bad == 0);
  }
  MT_CHECK_RC(river_dq_destroy(q), RIVER_SUCCESS);
}

static void test_late(MPI_Comm c, int rank)
{
  /* 3 messages on 8 credits: the held returns never starve the
   * producer. */
  if (rank == 1)
    setenv("RIVER_TEST_FAULT", "dq-credit-late:fail", 1);
  stream(c, rank, 8, 3 * PER);
  unsetenv("RIVER_TEST_FAULT");
  /* Many messages on 2 credits: every credit message must arrive. */
  stream(c, rank, 2, 200 * PER);
}

static void test_closed(MPI_Comm c, int rank)
{
  river_dq_opts o = RIVER_DQ_OPTS_INIT;
  river_dq *q = NULL;
  uint64_t rec[8] = {0}, unit = 0;
  const void *recs;
  size_t n;
  int rc, i, from = -1, first = 0, last = 0, units = 0, more = 0;

  o.policy = RIVER_DQ_PULL;
  o.message_size = MSG;
  if (rank == 0)
    setenv("RIVER_TEST_FAULT", "dq-claim-deaf:fail", 1);
  rc = river_dq_create(c, rank < 2 ? RIVER_DQ_PRODUCER : RIVER_DQ_CONSUMER,
                       sizeof rec, &o, &q);
  unsetenv("RIVER_TEST_FAULT");
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc != RIVER_SUCCESS)
    return;
  if (rank == 0) {
    struct timespec ts = {0, 300000000L};

    nanosleep(&ts, NULL); /* the consumer asks this producer first */
    MT_CHECK_RC(river_dq_close(q), RIVER_SUCCESS);
    MPI_Barrier(c);
  } else if (rank == 1) {
    for (i = 0; i < 5; i++) {
      rec[0] = (uint64_t)i;
      MT_CHECK_RC(river_dq_put(q, rec, 1), RIVER_SUCCESS);
      MT_CHECK_RC(river_dq_end_unit(q), RIVER_SUCCESS);
    }
    MT_CHECK_RC(river_dq_close(q), RIVER_SUCCESS);
    MPI_Barrier(c);
  } else {
    while (units < 5
           && (rc = river_dq_get(q, &recs, &n, &from)) == RIVER_SUCCESS) {
      MT_CHECK(from == 1 && n == 1);
      MT_CHECK(((const uint64_t *)recs)[0] == (uint64_t)units);
      MT_CHECK_RC(river_dq_unit(q, &unit, &first, &last), RIVER_SUCCESS);
      units += last;
    }
    MT_CHECK(units == 5);
    MPI_Barrier(c);
    while ((rc = river_dq_get(q, &recs, &n, &from)) == RIVER_SUCCESS)
      more++;
    MT_CHECK_RC(rc, RIVER_EOS);
    MT_CHECK(more == 0);
  }
  MT_CHECK_RC(river_dq_destroy(q), RIVER_SUCCESS);
}

/* One round of case destroy: 0 if it passed. */
static int destroy_round(MPI_Comm c, int rank)
{
  river_dq_opts o = RIVER_DQ_OPTS_INIT;
  river_dq *q = NULL;
  uint64_t rec[8] = {0}, unit = 0;
  const void *recs;
  size_t n;
  int rc, i, from = -1, first = 0, last = 0, units = 0, before, all;

  before = mt_failures;
  o.policy = RIVER_DQ_PULL;
  o.message_size = MSG;
  rc = river_dq_create(c, rank < 2 ? RIVER_DQ_PRODUCER : RIVER_DQ_CONSUMER,
                       sizeof rec, &o, &q);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc != RIVER_SUCCESS)
    return 1;
  if (rank == 0) {
    MT_CHECK_RC(river_dq_close(q), RIVER_SUCCESS);
  } else if (rank == 1) {
    for (i = 0; i < 5; i++) {
      MT_CHECK_RC(river_dq_put(q, rec, 1), RIVER_SUCCESS);
      MT_CHECK_RC(river_dq_end_unit(q), RIVER_SUCCESS);
    }
    MT_CHECK_RC(river_dq_close(q), RIVER_SUCCESS);
  } else {
    while ((rc = river_dq_get(q, &recs, &n, &from)) == RIVER_SUCCESS) {
      MT_CHECK_RC(river_dq_unit(q, &unit, &first, &last), RIVER_SUCCESS);
      units += last;
    }
    MT_CHECK_RC(rc, RIVER_EOS);
    MT_CHECK(units == 5);
  }
  MT_CHECK_RC(river_dq_destroy(q), RIVER_SUCCESS);
  before = mt_failures != before;
  MPI_Allreduce(&before, &all, 1, MPI_INT, MPI_MAX, c);
  return all;
}

static void test_destroy(MPI_Comm c, int rank)
{
  int i;

  for (i = 0; i < 10; i++)
    if (destroy_round(c, rank) != 0)
      break;
}

int main(int argc, char **argv)
{
  MPI_Comm c, pair;
  int wrank, wsize, rank, rc;
  double t0;

  setenv("RIVER_DQ_CREDITS", "msg", 1);
  setenv("RIVER_TIMEOUT", "20", 0);
  if (river_init(&argc, &argv) != RIVER_SUCCESS) {
    fprintf(stderr, "river_init failed\n");
    return 1;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  if (wsize % 3 != 0) {
    if (wrank == 0)
      fprintf(stderr, "test_dq_msg_mpi needs a multiple of 3 ranks\n");
    river_finalize();
    return 1;
  }
  t0 = river_wtime();
  MPI_Comm_split(MPI_COMM_WORLD, wrank / 3, wrank, &c);
  MPI_Comm_rank(c, &rank);
  MPI_Comm_split(c, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
  if (pair != MPI_COMM_NULL) {
    test_late(pair, rank);
    MPI_Comm_free(&pair);
  }
  test_closed(c, rank);
  test_destroy(c, rank);
  MPI_Comm_free(&c);
  MPI_Barrier(MPI_COMM_WORLD);
  if (wrank == 0)
    printf("test_dq_msg_mpi: %d ranks, %.1f s\n", wsize, river_wtime() - t0);
  rc = mt_verdict(MPI_COMM_WORLD, "test_dq_msg_mpi");
  river_finalize();
  return rc;
}
