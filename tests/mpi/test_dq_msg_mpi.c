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
 *   blocked PULL: producer 0, before any unit, waits in MPI_Barrier
 *           (outside River: it answers no claim) that the consumer joins
 *           only after all 5 units of producer 1; then producer 0 makes
 *           3 units. The consumer must ask producer 1 while producer 0's
 *           answer is late (it used to await that answer alone, took no
 *           unit, and RIVER_TIMEOUT fired)
 *   granted PULL: producer 0 opens a unit, then waits in MPI_Recv on
 *           another communicator until the consumer has taken producer
 *           1's first message; the consumer then stays outside River,
 *           mid-unit, until producer 0 has answered its claim, asked
 *           before, with a grant that came late: that unit must still
 *           be taken, whole and once, next after the one in progress
 *           (a case of this path only: on rma a claim needs nothing of
 *           the producer, so the consumer takes producer 0's open unit
 *           first and waits on it while producer 0 waits for it)
 *   self    PULL, rank 1 both producer and consumer, driving both sides
 *           with the try_ calls: it asks producer 0 (rank 0) for a unit
 *           while rank 0 is outside River, so the answer is late; it
 *           then opens a unit of its own and claims it at once, here;
 *           rank 0 comes back, grants the claim and sends two messages
 *           (its credits) of the unit granted. They wait in rank 1's
 *           receives behind its own unit, whose messages need a receive
 *           too: a claim made here must post the receives a claim asked
 *           elsewhere does (test_dq_coop_2n's PULL group stopped for
 *           good about once in 20 runs: both of rank 1's receives held
 *           the late unit's messages, its own could not come in)
 *
 * In blocked and granted every record is checked against its producer,
 * number and unit (content), each producer's records come in the order
 * made (per-pair FIFO) and each unit whole, every record once.
 * RIVER_TIMEOUT bounds every wait, so a hang fails the test. Arguments
 * name the cases to run (all without).
 */
#define _GNU_SOURCE
#include <river.h>
#include "mpitest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

/* ------------------------------------------------ blocked and granted */

#define U1 5 /* producer 1's units; producer 0 makes U0 */
#define U0 3

/* Records of producer p's unit u: three messages, the last partly
 * filled. */
static uint64_t unit_len(int p, int u)
{
  return 2 * PER + 7 + (uint64_t)(3 * p + u);
}

/* Record seq of producer p, in its unit u: who, which, then words
 * derived from them and a checksum of the first seven. */
static void rec_fill(uint64_t *r, int p, uint64_t seq, int u)
{
  int w;

  r[0] = (uint64_t)p;
  r[1] = seq;
  r[2] = (uint64_t)u;
  for (w = 3; w < 7; w++)
    r[w] = river_hash64(r[w - 1] ^ ((uint64_t)p << 56) ^ seq);
  r[7] = 0;
  for (w = 0; w < 7; w++)
    r[7] = river_hash64(r[7] ^ r[w]);
}

/* Put producer p's n units, each ended, then close; stops at the first
 * failure. after (if not NULL) runs after each put, given the records
 * put so far. */
static void put_units(river_dq *q, int p, int n, void (*after)(uint64_t))
{
  uint64_t rec[8], seq = 0, i;
  int u, rc = RIVER_SUCCESS;

  for (u = 0; u < n && rc == RIVER_SUCCESS; u++) {
    for (i = 0; i < unit_len(p, u) && rc == RIVER_SUCCESS; i++) {
      rec_fill(rec, p, seq++, u);
      rc = river_dq_put(q, rec, 1);
      if (after != NULL)
        after(seq);
    }
    if (rc == RIVER_SUCCESS)
      rc = river_dq_end_unit(q);
  }
  if (rc == RIVER_SUCCESS)
    rc = river_dq_close(q);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
}

/* What the consumer got from each producer: the next record number
 * (FIFO), units ended, the unit in progress (-1: none) and a checksum
 * of what came, to compare with what was made; and the producer of
 * each unit in the order they began. */
struct got {
  uint64_t next[2], sum[2];
  int units[2], open[2], bad;
  int order[U0 + U1 + 1], norder;
};

static void got_init(struct got *g)
{
  memset(g, 0, sizeof *g);
  g->open[0] = g->open[1] = -1;
}

/* Check one message of n records from producer p and count it in g:
 * every record the next of p's, in p's current unit, its content
 * intact; the unit's first and last flags where they belong. */
static void got_msg(struct got *g, river_dq *q, int p, const uint64_t *r,
                    size_t n)
{
  uint64_t x[8], unit = 0;
  int first = 0, last = 0;
  size_t j;

  if (p < 0 || p > 1 || river_dq_unit(q, &unit, &first, &last)
                           != RIVER_SUCCESS) {
    g->bad++;
    return;
  }
  if (first != (g->open[p] < 0) || (unit >> RIVER_DQ_UNIT_SHIFT) != (uint64_t)p
      || (unit & ((UINT64_C(1) << RIVER_DQ_UNIT_SHIFT) - 1))
             != (uint64_t)g->units[p])
    g->bad++;
  if (g->open[p] < 0 && g->norder <= U0 + U1)
    g->order[g->norder++] = p;
  g->open[p] = g->units[p];
  for (j = 0; j < n; j++, r += 8) {
    rec_fill(x, p, g->next[p]++, g->open[p]);
    g->bad += memcmp(x, r, sizeof x) != 0;
    g->sum[p] += river_hash64(r[7]);
  }
  if (last) {
    g->units[p]++;
    g->open[p] = -1;
  }
}

/* Get messages into g until EOS, or (stop >= 0) until producer 1 has
 * had stop units; only producer `only` may send meanwhile (-1: any).
 * at_first (if not NULL) runs once, after the first message. The last
 * get's return code. */
static int got_until(struct got *g, river_dq *q, int stop, int only,
                     void (*at_first)(void))
{
  const void *recs;
  size_t n;
  int rc = RIVER_SUCCESS, from = -1;

  while ((stop < 0 || g->units[1] < stop)
         && (rc = river_dq_get(q, &recs, &n, &from)) == RIVER_SUCCESS) {
    if (only >= 0 && from != only)
      g->bad++;
    got_msg(g, q, from, recs, n);
    if (at_first != NULL) {
      at_first();
      at_first = NULL;
    }
  }
  return stop >= 0 && g->units[1] >= stop ? RIVER_SUCCESS : rc;
}

/* Every unit and record of both producers, once and whole. */
static void got_check(const struct got *g)
{
  uint64_t x[8], seq = 0, i;
  int p, u;

  for (p = 0; p < 2; p++) {
    uint64_t want = 0;

    for (seq = 0, u = 0; u < (p == 0 ? U0 : U1); u++)
      for (i = 0; i < unit_len(p, u); i++) {
        rec_fill(x, p, seq++, u);
        want += river_hash64(x[7]);
      }
    MT_CHECK(g->next[p] == seq);
    MT_CHECK(g->sum[p] == want);
    MT_CHECK(g->units[p] == (p == 0 ? U0 : U1));
    MT_CHECK(g->open[p] < 0);
  }
  MT_CHECK(g->bad == 0);
}

static river_dq *pull_queue(MPI_Comm c, int rank)
{
  river_dq_opts o = RIVER_DQ_OPTS_INIT;
  river_dq *q = NULL;
  int rc;

  o.policy = RIVER_DQ_PULL;
  o.message_size = MSG;
  rc = river_dq_create(c, rank < 2 ? RIVER_DQ_PRODUCER : RIVER_DQ_CONSUMER,
                       64, &o, &q);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  return rc == RIVER_SUCCESS ? q : NULL;
}

static void test_blocked(MPI_Comm c, int rank)
{
  struct got g;
  river_dq *q = pull_queue(c, rank);

  got_init(&g);
  if (q == NULL)
    return;
  if (rank == 0) {
    MPI_Barrier(c);  /* outside River: no claim is answered here */
    put_units(q, 0, U0, NULL);
  } else if (rank == 1) {
    put_units(q, 1, U1, NULL);
    MPI_Barrier(c);
  } else {
    /* Producer 1's units only, all of them, before the barrier. */
    MT_CHECK_RC(got_until(&g, q, U1, 1, NULL), RIVER_SUCCESS);
    MPI_Barrier(c);
    MT_CHECK_RC(got_until(&g, q, -1, 0, NULL), RIVER_EOS);
    got_check(&g);
  }
  MT_CHECK_RC(river_dq_destroy(q), RIVER_SUCCESS);
}

/* Case granted: the communicator producer 0 waits on beside the
 * queue's, and whether the consumer has let it go. */
static MPI_Comm side;
static int side_sent;

/* Producer 0 after its first record (its first unit open, unclaimed):
 * tell the consumer so, then wait outside River until the consumer
 * lets it go. After its second: its put has answered the consumer's
 * claim, which had waited here (the first River call since), with a
 * grant: say so. */
static void hold_producer0(uint64_t n)
{
  int token = 0;

  if (n == 1) {
    MPI_Send(&token, 1, MPI_INT, 2, 0, side);
    MPI_Recv(&token, 1, MPI_INT, 2, 1, side, MPI_STATUS_IGNORE);
  } else if (n == 2) {
    MPI_Send(&token, 1, MPI_INT, 2, 2, side);
  }
}

/* The consumer, at its first message (producer 1's): let producer 0
 * go, and stay out of River until it has granted the claim. */
static void release_producer0(void)
{
  int token = 1;

  MPI_Send(&token, 1, MPI_INT, 0, 1, side);
  side_sent = 1;
  MPI_Recv(&token, 1, MPI_INT, 0, 2, side, MPI_STATUS_IGNORE);
}

static void test_granted(MPI_Comm c, int rank)
{
  struct got g;
  river_dq *q;
  int token = 0;

  got_init(&g);
  MPI_Comm_dup(c, &side);
  side_sent = 0;
  q = pull_queue(c, rank);
  if (rank == 0 && q != NULL) {
    put_units(q, 0, U0, hold_producer0);
  } else if (rank == 0) {   /* create failed: the consumer still sends */
    MPI_Send(&token, 1, MPI_INT, 2, 0, side);
    MPI_Recv(&token, 1, MPI_INT, 2, 1, side, MPI_STATUS_IGNORE);
  } else if (q != NULL && rank == 1) {
    put_units(q, 1, U1, NULL);
  } else if (rank == 2) {
    /* Producer 0's unit is open before this consumer first asks it,
     * and the claim is answered only after the first message, which is
     * producer 1's: the grant comes mid-unit, and its unit is the next
     * one taken (a grant waiting goes before any new ask; its reply
     * left producer 0 before the message that ends release_producer0,
     * and Open MPI delivers one peer's messages in order). */
    MPI_Recv(&token, 1, MPI_INT, 0, 0, side, MPI_STATUS_IGNORE);
    if (q != NULL) {
      MT_CHECK_RC(got_until(&g, q, -1, -1, release_producer0), RIVER_EOS);
      MT_CHECK(g.norder >= 2 && g.order[0] == 1 && g.order[1] == 0);
      got_check(&g);
    }
    if (!side_sent) /* so that a failure does not hang producer 0 */
      MPI_Send(&token, 1, MPI_INT, 0, 1, side);
  }
  if (q != NULL)
    MT_CHECK_RC(river_dq_destroy(q), RIVER_SUCCESS);
  MPI_Comm_free(&side);
}

/* ------------------------------------------------------------- self */

/* Poll try_get for s seconds: nothing may be delivered meanwhile. */
static void poll_nothing(river_dq *q, double s)
{
  const void *recs;
  size_t n;
  int from = -1;
  double t0 = river_wtime();
  struct timespec ts = {0, 1000000L};

  while (river_wtime() - t0 < s) {
    MT_CHECK_RC(river_dq_try_get(q, &recs, &n, &from), RIVER_EAGAIN);
    nanosleep(&ts, NULL);
  }
}

/* Rank 1's cooperative loop: the rest of its unit (record 1 on), its
 * end and close, with try_get between, until EOS; no progress for 10 s
 * fails the job (a hang). */
static void self_loop(river_dq *q, struct got *g)
{
  uint64_t rec[8], seq = 1, len = unit_len(1, 0);
  const void *recs;
  size_t n;
  int rc, from = -1, ended = 0, closed = 0, eos = 0, moved;
  double idle = river_wtime();
  struct timespec ts = {0, 100000L};

  while (!closed || !eos) {
    moved = 0;
    if (seq < len) {
      rec_fill(rec, 1, seq, 0);
      if ((rc = river_dq_try_put(q, rec, 1)) != RIVER_EAGAIN) {
        MT_CHECK_RC(rc, RIVER_SUCCESS);
        seq++;
        moved = 1;
      }
    } else if (!ended) {
      if ((rc = river_dq_try_end_unit(q)) != RIVER_EAGAIN) {
        MT_CHECK_RC(rc, RIVER_SUCCESS);
        ended = moved = 1;
      }
    } else if (!closed
               && (rc = river_dq_try_close(q)) != RIVER_EAGAIN) {
      MT_CHECK_RC(rc, RIVER_SUCCESS);
      closed = moved = 1;
    }
    if (!eos && (rc = river_dq_try_get(q, &recs, &n, &from))
                    != RIVER_EAGAIN) {
      if (rc == RIVER_SUCCESS)
        got_msg(g, q, from, recs, n);
      else
        MT_CHECK_RC(rc, RIVER_EOS);
      eos = rc != RIVER_SUCCESS;
      moved = 1;
    }
    if (moved) {
      idle = river_wtime();
    } else if (river_wtime() - idle > 10.0) {
      fprintf(stderr, "test_dq_msg_mpi self: no progress for 10 s (put "
              "%llu of %llu records, ended %d, closed %d)\n",
              (unsigned long long)seq, (unsigned long long)len, ended,
              closed);
      MPI_Abort(MPI_COMM_WORLD, 2);
    } else {
      nanosleep(&ts, NULL);
    }
  }
}

static void test_self(MPI_Comm c, int rank)
{
  river_dq_opts o = RIVER_DQ_OPTS_INIT;
  river_dq *q = NULL;
  struct got g;
  uint64_t rec[8], i;
  int token = 0, rc;

  got_init(&g);
  MPI_Comm_dup(c, &side);
  o.policy = RIVER_DQ_PULL;
  o.message_size = MSG;
  rc = river_dq_create(c, rank == 0   ? RIVER_DQ_PRODUCER
                          : rank == 1 ? RIVER_DQ_PRODUCER | RIVER_DQ_CONSUMER
                                      : 0,
                       64, &o, &q);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rank == 0) {
    /* One unit: open (announced), then outside River until released,
     * so the consumer's claim waits; then two messages, and a word. */
    for (i = 0; i < unit_len(0, 0); i++) {
      rec_fill(rec, 0, i, 0);
      if (q != NULL)
        MT_CHECK_RC(river_dq_put(q, rec, 1), RIVER_SUCCESS);
      if (i == 0) {
        MPI_Send(&token, 1, MPI_INT, 1, 0, side);
        MPI_Recv(&token, 1, MPI_INT, 1, 1, side, MPI_STATUS_IGNORE);
      } else if (i == 2 * PER + 1) {
        MPI_Send(&token, 1, MPI_INT, 1, 2, side);
      }
    }
    if (q != NULL) {
      MT_CHECK_RC(river_dq_end_unit(q), RIVER_SUCCESS);
      MT_CHECK_RC(river_dq_close(q), RIVER_SUCCESS);
    }
  } else if (rank == 1) {
    MPI_Recv(&token, 1, MPI_INT, 0, 0, side, MPI_STATUS_IGNORE);
    if (q != NULL) {
      poll_nothing(q, 0.05);  /* asks producer 0, whose answer is late */
      rec_fill(rec, 1, 0, 0); /* opens this rank's own unit */
      MT_CHECK_RC(river_dq_try_put(q, rec, 1), RIVER_SUCCESS);
      poll_nothing(q, 0.05);  /* claims it, here, at once */
    }
    MPI_Send(&token, 1, MPI_INT, 0, 1, side);
    MPI_Recv(&token, 1, MPI_INT, 0, 2, side, MPI_STATUS_IGNORE);
    if (q != NULL) {
      poll_nothing(q, 0.1);   /* producer 0's two messages come in */
      self_loop(q, &g);
      MT_CHECK(g.norder == 2 && g.order[0] == 1 && g.order[1] == 0);
      for (i = 0; i < 2; i++) {
        MT_CHECK(g.units[i] == 1 && g.open[i] < 0);
        MT_CHECK(g.next[i] == unit_len((int)i, 0));
      }
      MT_CHECK(g.bad == 0);
    }
  }
  if (q != NULL)
    MT_CHECK_RC(river_dq_destroy(q), RIVER_SUCCESS);
  MPI_Comm_free(&side);
}

/* 1 if case name is to run: every case when no argument names one. */
static int wanted(int argc, char **argv, const char *name)
{
  int i;

  for (i = 1; i < argc; i++)
    if (strcmp(argv[i], name) == 0)
      return 1;
  return argc < 2;
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
    if (wanted(argc, argv, "late"))
      test_late(pair, rank);
    MPI_Comm_free(&pair);
  }
  if (wanted(argc, argv, "closed"))
    test_closed(c, rank);
  if (wanted(argc, argv, "destroy"))
    test_destroy(c, rank);
  if (wanted(argc, argv, "blocked"))
    test_blocked(c, rank);
  if (wanted(argc, argv, "granted"))
    test_granted(c, rank);
  if (wanted(argc, argv, "self"))
    test_self(c, rank);
  MPI_Comm_free(&c);
  MPI_Barrier(MPI_COMM_WORLD);
  if (wrank == 0)
    printf("test_dq_msg_mpi: %d ranks, %.1f s\n", wsize, river_wtime() - t0);
  rc = mt_verdict(MPI_COMM_WORLD, "test_dq_msg_mpi");
  river_finalize();
  return rc;
}
