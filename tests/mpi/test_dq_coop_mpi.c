/*
 * test_dq_coop_mpi - every rank both producer and consumer of one queue,
 * driving it with the nonblocking calls only (river/dq.h, "Nonblocking
 * forms"), as the flow runtime's cooperative tasks do: one loop per rank
 * that try_puts (or, for PUSH and STATIC, try_reserves and try_commits),
 * try_gets and releases, try_end_units every few dozen records on PULL
 * and finally try_closes, backing off only after a pass in which nothing
 * moved. On 8 ranks (or a multiple of 8), split into groups of 2, 3 and 3
 * ranks, then 4 and 4, so each of PUSH, STATIC, EXCHANGE and PULL runs at
 * 2, 3 and 4 ranks, with small messages and 2 credits so that credits run
 * out all the time.
 *
 * Checked: every record arrives intact, exactly once (count, sum and xor
 * of record digests over the group, produced against consumed), in order
 * per (producer, consumer) pair and from the producer get names; PULL
 * units are contiguous at their consumer, from one producer; the stats
 * count what was put and got; the queue is destroyed cleanly. A rank that
 * makes no progress for 30 s (times RIVER_TEST_TIMEOUT_SCALE, 3 under
 * the sanitizers: a rank of this test can wait that long on a loaded
 * machine, when a 64-rank test runs beside it) prints its state and
 * aborts the job rather than hang silently.
 */
#define _GNU_SOURCE
#include "dqtest.h"

#include <sched.h>

#define COOP_MSG ((size_t)1024)   /* 15 records of 64 bytes */
#define COOP_CREDITS 2
#define COOP_STUCK 30.0           /* seconds without progress: abort,
                                     times RIVER_TEST_TIMEOUT_SCALE */

/* One rank's side of a cooperative run. */
struct coop {
  river_dq *q;
  river_dq_policy policy;
  int grank, gsize;
  uint64_t n;            /* records this rank makes */
  uint64_t made;         /* taken by the queue so far */
  uint64_t unit_len;     /* PULL: records per unit */
  uint64_t in_unit;      /* PULL: records in the open unit */
  int end_pending;       /* PULL: the unit must end before more puts */
  int closing, closed, eos;
  uint64_t *next_seq;    /* per producer: the smallest seq still due */
  int cur_prod;          /* PULL: producer of the unit in progress, -1 */
  uint64_t cur_unit, units_got;
  struct sums made_sums, got_sums;
  uint64_t messages_got;
};

/* Put 1..7 records: try_put, or for PUSH and STATIC on odd calls,
 * try_reserve + try_commit. 1 if records went, 0 if not now. */
static int coop_put(struct coop *k)
{
  struct rec r[7];
  uint64_t want = 1 + (k->made * 7 + (uint64_t)k->grank) % 7, i;
  void *buf = NULL;
  size_t room = 0;
  int rc, zc;

  if (want > k->n - k->made)
    want = k->n - k->made;
  if (k->policy == RIVER_DQ_PULL && want > k->unit_len - k->in_unit)
    want = k->unit_len - k->in_unit;
  zc = (k->policy == RIVER_DQ_PUSH || k->policy == RIVER_DQ_STATIC)
       && (k->made / 3) % 2 == 1;
  if (zc) {
    rc = river_dq_try_reserve(k->q, &buf, &room);
    if (rc == RIVER_EAGAIN)
      return 0;
    MT_CHECK_RC(rc, RIVER_SUCCESS);
    if (rc != RIVER_SUCCESS || room == 0)
      return 0;
    want = want < room ? want : room;
  }
  for (i = 0; i < want; i++)
    rec_make(&r[i], (uint32_t)k->grank, k->made + i, (uint32_t)k->policy);
  if (zc) {
    memcpy(buf, r, want * RS);
    MT_CHECK_RC(river_dq_try_commit(k->q, want), RIVER_SUCCESS);
  } else {
    rc = river_dq_try_put(k->q, r, want);
    if (rc == RIVER_EAGAIN)
      return 0;
    MT_CHECK_RC(rc, RIVER_SUCCESS);
    if (rc != RIVER_SUCCESS)
      return 0;
  }
  for (i = 0; i < want; i++)
    sums_add(&k->made_sums, &r[i]);
  k->made += want;
  if (k->policy == RIVER_DQ_PULL && (k->in_unit += want) == k->unit_len)
    k->end_pending = 1;
  return 1;
}

/* PULL: the message just got belongs to the unit in progress, or starts
 * one, whose producer sent every record of it. */
static void coop_check_unit(struct coop *k, const struct rec *r, size_t n)
{
  uint64_t unit;
  int first = 0, last = 0;
  size_t i;

  MT_CHECK_RC(river_dq_unit(k->q, &unit, &first, &last), RIVER_SUCCESS);
  if (first) {
    MT_CHECK(k->cur_prod < 0);
    k->cur_prod = (int)(unit >> RIVER_DQ_UNIT_SHIFT);
    k->cur_unit = unit;
    k->units_got++;
  }
  MT_CHECK(k->cur_prod >= 0 && unit == k->cur_unit);
  for (i = 0; i < n; i++)
    MT_CHECK(r[i].prod == (uint32_t)k->cur_prod);
  if (last)
    k->cur_prod = -1;
}

/* Get one message if there is one: check and count its records, then
 * release it. 1 if something happened (a message or the EOS). */
static int coop_get(struct coop *k)
{
  const void *recs = NULL;
  const struct rec *r;
  size_t n = 0, i;
  int from = -1, rc;

  rc = river_dq_try_get(k->q, &recs, &n, &from);
  if (rc == RIVER_EAGAIN)
    return 0;
  if (rc == RIVER_EOS) {
    k->eos = 1;
    return 1;
  }
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc != RIVER_SUCCESS) {
    k->eos = 1;  /* give up this side; the checksums will tell */
    return 1;
  }
  MT_CHECK(from >= 0 && from < k->gsize && n > 0);
  r = recs;
  for (i = 0; i < n; i++) {
    MT_CHECK(rec_ok(&r[i]) && r[i].prod == (uint32_t)from
             && r[i].tag == (uint32_t)k->policy);
    if (r[i].prod < (uint32_t)k->gsize) {
      MT_CHECK(r[i].seq >= k->next_seq[r[i].prod]); /* FIFO per pair */
      k->next_seq[r[i].prod] = r[i].seq + 1;
    }
    sums_add(&k->got_sums, &r[i]);
  }
  if (k->policy == RIVER_DQ_PULL)
    coop_check_unit(k, r, n);
  k->messages_got++;
  MT_CHECK_RC(river_dq_release(k->q), RIVER_SUCCESS);
  return 1;
}

/* One pass of the producer side: end the unit, put, or close. 1 if
 * something moved. */
static int coop_produce(struct coop *k)
{
  int rc;

  if (k->closed)
    return 0;
  if (!k->closing && k->end_pending) {
    rc = river_dq_try_end_unit(k->q);
    if (rc == RIVER_EAGAIN)
      return 0;
    MT_CHECK_RC(rc, RIVER_SUCCESS);
    k->end_pending = 0;
    k->in_unit = 0;
    return 1;
  }
  if (!k->closing && k->made < k->n)
    return coop_put(k);
  k->closing = 1;
  rc = river_dq_try_close(k->q);
  if (rc == RIVER_EAGAIN)
    return 0;
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  k->closed = 1;
  return 1;
}

/* Back off after a pass without progress, like river_wait: yields, then
 * sleeps from 1 us doubling to 1 ms. */
static void coop_backoff(long *step)
{
  if (*step < 64) {
    sched_yield();
    (*step)++;
    return;
  }
  sleep_us(*step / 1000 < 1000 ? *step / 1000 : 1000);
  *step = *step < 1000000 ? *step * 2 : *step;
}

static void coop_loop(struct coop *k)
{
  const char *scale = getenv("RIVER_TEST_TIMEOUT_SCALE");
  double stuck = COOP_STUCK * (scale != NULL && atof(scale) > 1.0
                               ? atof(scale) : 1.0);
  long step = 0;
  double idle_since = river_wtime();
  int moved;

  while (!k->closed || !k->eos) {
    moved = coop_produce(k);
    if (!k->eos)
      moved |= coop_get(k);
    if (moved) {
      step = 0;
      idle_since = river_wtime();
      continue;
    }
    if (river_wtime() - idle_since > stuck) {
      fprintf(stderr, "rank %d: policy %d stuck: made %llu/%llu, closing %d"
              " closed %d eos %d end_pending %d\n", wrank, (int)k->policy,
              (unsigned long long)k->made, (unsigned long long)k->n,
              k->closing, k->closed, k->eos, k->end_pending);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (step == 0)
      step = 1;
    coop_backoff(&step);
  }
}

/* Reduce the group's sums and compare made with got. */
static void coop_judge(struct coop *k, MPI_Comm c)
{
  uint64_t mine[5], all[5], x[2], xall[2];
  river_dq_stats st;

  MT_CHECK_RC(river_dq_stats_get(k->q, &st), RIVER_SUCCESS);
  MT_CHECK(st.records_out == k->n && k->made == k->n);
  MT_CHECK(st.records_in == k->got_sums.count
           && st.messages_in == k->messages_got);
  MT_CHECK(k->policy != RIVER_DQ_PULL || k->cur_prod < 0);
  mine[0] = k->made_sums.count;
  mine[1] = k->made_sums.sum;
  mine[2] = k->got_sums.count;
  mine[3] = k->got_sums.sum;
  mine[4] = k->n;
  MPI_Allreduce(mine, all, 5, MPI_UINT64_T, MPI_SUM, c);
  x[0] = k->made_sums.xor;
  x[1] = k->got_sums.xor;
  MPI_Allreduce(x, xall, 2, MPI_UINT64_T, MPI_BXOR, c);
  MT_CHECK(all[0] == all[4] && all[2] == all[0]);
  MT_CHECK(all[1] == all[3] && xall[0] == xall[1]);
}

static void run_coop(MPI_Comm c, river_dq_policy policy)
{
  river_dq_opts o = RIVER_DQ_OPTS_INIT;
  struct coop k;
  uint64_t units, all_units;
  int rc;

  memset(&k, 0, sizeof k);
  MPI_Comm_rank(c, &k.grank);
  MPI_Comm_size(c, &k.gsize);
  k.policy = policy;
  /* The last unit of 1, 6, 11 or 16 records: mostly one message, which
   * goes with the EOS once claimed (try_close waits for the claim). */
  k.unit_len = 40 + 3 * (uint64_t)k.grank;
  k.n = k.unit_len * (30 + (uint64_t)k.grank) + 1 + 5 * (uint64_t)k.grank;
  k.cur_prod = -1;
  k.next_seq = calloc((size_t)k.gsize, sizeof *k.next_seq);
  o.policy = policy;
  o.credits = COOP_CREDITS;
  o.message_size = COOP_MSG;
  o.seed = 7;
  o.partition = policy == RIVER_DQ_EXCHANGE ? part_hash : NULL;
  rc = river_dq_create(c, RIVER_DQ_PRODUCER | RIVER_DQ_CONSUMER, RS, &o,
                       &k.q);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc != RIVER_SUCCESS || k.next_seq == NULL) {
    free(k.next_seq);
    return;
  }
  coop_loop(&k);
  coop_judge(&k, c);
  /* PULL: units got over the group = units made (every unit whole at
   * one consumer: coop_check_unit). */
  units = policy == RIVER_DQ_PULL ? (k.n + k.unit_len - 1) / k.unit_len : 0;
  MPI_Allreduce(&units, &all_units, 1, MPI_UINT64_T, MPI_SUM, c);
  units = k.units_got;
  MPI_Allreduce(MPI_IN_PLACE, &units, 1, MPI_UINT64_T, MPI_SUM, c);
  MT_CHECK(units == all_units);
  MT_CHECK_RC(river_dq_destroy(k.q), RIVER_SUCCESS);
  free(k.next_seq);
}

int main(int argc, char **argv)
{
  static const int s233[] = {2, 3, 3}, s44[] = {4, 4};
  static const river_dq_policy pol[] = {RIVER_DQ_PUSH, RIVER_DQ_STATIC,
                                        RIVER_DQ_EXCHANGE, RIVER_DQ_PULL};
  MPI_Comm c;
  int g, grank, i;
  double t0;

  if (dqtest_begin(&argc, &argv, "test_dq_coop_mpi") != 0)
    return 1;
  t0 = river_wtime();
  for (i = 0; i < 4; i++) {
    /* Groups of 2, 3, 3: policy i, i + 1 and i + 2 (each policy meets
     * every size over the four rounds); then 4 + 4: policy i. */
    c = round_group(s233, 3, &g, &grank);
    run_coop(c, pol[(i + g) % 4]);
    MPI_Comm_free(&c);
    c = round_group(s44, 2, &g, &grank);
    run_coop(c, pol[i]);
    MPI_Comm_free(&c);
  }
  return dqtest_end("test_dq_coop_mpi", t0);
}
