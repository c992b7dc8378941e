/*
 * test_dq_mpi - distributed queues (river/dq.h) on 8 ranks (or a multiple
 * of 8: the pattern repeats). Each round splits the ranks into groups
 * that run at the same time, so groups of 1..8 ranks are covered without
 * idle ranks spinning; then PUSH and STATIC run once over the whole job
 * (tests/mpi/test_dq16.sh runs all of it on 16 ranks):
 *
 *   flow         every policy, with producers (P), consumers (C), ranks in
 *                both roles (B, which interleave try_put and try_get) and
 *                a rank in neither (-): exactly-once delivery (count, sum
 *                and xor of a hash of every record's contents, consumers
 *                against producers; BROADCAST: each consumer against all
 *                producers), every record's embedded hash, FIFO per
 *                (producer, consumer), EOS only after all data, and the
 *                stats (records, messages per pair) agree on both sides;
 *                consumers sleep random small amounts per message;
 *                producers finish at very different times, one puts no
 *                record at all; 1 MiB messages and 1-record messages
 *   push-slow    PUSH with one consumer sleeping 2 ms per message gets
 *                less than its 1/n share and less than every fast one
 *   static       every consumer gets its round-robin share from each
 *                producer, within one message
 *   exchange     every record reaches consumer partition(record) only
 *                (hash and range partitions)
 *   one-to-one   consumer i hears from producer i only
 *   credits      with consumers holding back, a producer gets exactly
 *                credits messages out to each consumer plus one full
 *                buffer, then try_put says RIVER_EAGAIN (RIVER_ENOBUFS
 *                for more than all credits could ever let out), taking
 *                nothing; a blocking put then waits, counted in
 *                put_wait_seconds
 *   bad input    refusals on every rank (mismatched parameters, bad roles,
 *                no producer or consumer, ...), wrong-role calls, put after
 *                close, a partition index out of range (nothing taken,
 *                with a message), destroy before close/EOS: RIVER_ESTATE
 *   wait         a consumer blocked ~1 s in get uses < 25% of a core
 *   pull         RIVER_DQ_PULL, 3 producers x 4 units of 3-8 MB (1 MiB
 *                messages) and one producer with no unit, 3 consumers,
 *                one slow: every unit whole (count, sum and xor per unit),
 *                in order and contiguous (river_dq_unit's id and
 *                first/last) at exactly one consumer, the slow one gets
 *                fewer units, EOS; bad arguments and wrong roles for
 *                river_dq_end_unit and river_dq_unit, which are
 *                RIVER_EINVAL on a queue of another policy
 *
 * Collective calls are made on every rank of their communicator whatever
 * the checks say, so a failing check does not hang the test. The test's
 * own barriers and reductions wait with river_wait (no spinning).
 */
#define _GNU_SOURCE
#include <river.h>
#include "mpitest.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PATTERN 8   /* ranks per copy of the round layout */
#define MAXR 8      /* most ranks in one group */
#define FILLER 40

/* A 64-byte record: who made it, its number, a hash of both, filler
 * derived from the hash. */
struct rec {
  uint32_t prod;
  uint32_t tag;     /* the scenario; POISON: the partition refuses it */
  uint64_t seq;
  uint64_t hash;
  unsigned char fill[FILLER];
};
#define RS ((size_t)sizeof(struct rec))
#define POISON 0xbadu

static int wrank, wsize;

/* ------------------------------------------------------------ helpers */

static void rec_make(struct rec *r, uint32_t prod, uint64_t seq, uint32_t tag)
{
  int i;

  r->prod = prod;
  r->tag = tag;
  r->seq = seq;
  r->hash = river_hash64(((uint64_t)prod << 48) ^ ((uint64_t)tag << 32) ^ seq);
  for (i = 0; i < FILLER; i += 8) {
    uint64_t v = river_hash64(r->hash + (uint64_t)i);
    memcpy(r->fill + i, &v, 8);
  }
}

/* 1 if r's hash and filler match its producer, tag and number. */
static int rec_ok(const struct rec *r)
{
  struct rec x;

  rec_make(&x, r->prod, r->seq, r->tag);
  return memcmp(&x, r, sizeof x) == 0;
}

/* A hash of all 64 bytes (for the order-independent checksum). */
static uint64_t rec_digest(const struct rec *r)
{
  uint64_t w[8], h = 0x5851f42d4c957f2dULL;
  int i;

  memcpy(w, r, sizeof w);
  for (i = 0; i < 8; i++)
    h = river_hash64(h ^ w[i]);
  return h;
}

struct sums {
  uint64_t count, sum, xor;
};

static void sums_add(struct sums *s, const struct rec *r)
{
  uint64_t d = rec_digest(r);

  s->count++;
  s->sum += d;
  s->xor ^= d;
}

static void sleep_us(long us)
{
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};

  if (us > 0)
    nanosleep(&ts, NULL);
}

/* Barrier and allgather that wait with river_wait: no spinning. */
static void quiet_barrier(MPI_Comm c)
{
  MPI_Request r;

  MPI_Ibarrier(c, &r);
  MT_CHECK_RC(river_wait(&r, MPI_STATUS_IGNORE), RIVER_SUCCESS);
}

static void quiet_allgather(const void *in, void *out, int n, MPI_Comm c)
{
  MPI_Request r;

  MPI_Iallgather(in, n, MPI_UINT64_T, out, n, MPI_UINT64_T, c, &r);
  MT_CHECK_RC(river_wait(&r, MPI_STATUS_IGNORE), RIVER_SUCCESS);
}

/* This round's group: ranks are laid out in copies of PATTERN, each
 * split into groups of the given sizes. *grank gets the rank in it. */
static MPI_Comm round_group(const int *sizes, int n, int *group, int *grank)
{
  int p = wrank % PATTERN, copy = wrank / PATTERN, g = 0, first = 0;
  MPI_Comm c;

  while (g < n - 1 && p >= first + sizes[g])
    first += sizes[g++];
  quiet_barrier(MPI_COMM_WORLD);
  MPI_Comm_split(MPI_COMM_WORLD, copy * n + g, wrank, &c);
  MPI_Comm_rank(c, grank);
  *group = g;
  return c;
}

/* ----------------------------------------------------------- logging */

static char logbuf[1 << 15];

static void capture(int level, int rank_, const char *msg, void *ctx)
{
  size_t n = strlen(logbuf);

  snprintf(logbuf + n, sizeof logbuf - n, "%s\n", msg);
}

static void log_capture(void)
{
  logbuf[0] = '\0';
  river_log_set_handler(capture, NULL);
}

static void log_restore(void)
{
  river_log_set_handler(NULL, NULL);
}

/* ---------------------------------------------------------- partitions */

static int part_hash(const void *record, int n, void *ctx)
{
  const struct rec *r = record;

  return (int)(river_hash64(r->hash ^ 0x1234) % (uint64_t)n);
}

/* By sequence number in ranges of *ctx records. */
static int part_range(const void *record, int n, void *ctx)
{
  const struct rec *r = record;
  uint64_t total = *(const uint64_t *)ctx;

  return (int)(r->seq * (uint64_t)n / total);
}

/* part_hash, but n (out of range) for a poisoned record. */
static int part_poison(const void *record, int n, void *ctx)
{
  const struct rec *r = record;

  return r->tag == POISON ? n : part_hash(record, n, ctx);
}

/* ----------------------------------------------------------- the flow */

struct scen {
  const char *name;
  const char *roles;      /* per group rank: P, C, B (both) or - */
  river_dq_policy policy;
  int credits;
  size_t msgsize;
  uint64_t nrec;          /* records per producer */
  int zero_first;         /* producer 0 puts no record */
  long prod_sleep;        /* odd producers sleep this (us) every 4 puts */
  long cons_sleep;        /* consumers sleep 0..this (us) per message */
  int slow;               /* consumer sleeping slow_us per message, or -1 */
  long slow_us;
  int max_chunk;          /* records per put: 1..max_chunk; for B ranks at
                             most (credits - 1) x records a message + 1, so
                             that try_put never has to say RIVER_ENOBUFS */
  river_dq_partition_fn part;
  int null_opts;          /* create with opts == NULL (defaults) */
  int reserve;            /* producer-only ranks put with reserve/commit,
                             writing records in place, in random amounts */
};

/* What each rank reports after a flow, gathered in its group. */
enum {
  F_ROLE, F_PIDX, F_CIDX, F_PCOUNT, F_PSUM, F_PXOR, F_CCOUNT, F_CSUM, F_CXOR,
  F_FROM, F_TO = F_FROM + MAXR,
  F_N = F_TO + MAXR
};

/* Local checks of one delivered message at consumer cidx. */
struct seen {
  struct sums sums;
  int64_t last[MAXR];      /* last seq from each producer */
  uint64_t bad_hash, bad_order, bad_dest, bad_size;
};

static void consume(const struct scen *sc, struct seen *s, int cidx,
                    int ncons, const void *records, size_t n, int from,
                    size_t per_msg)
{
  const struct rec *r = records;
  size_t i;

  if (n == 0 || n > per_msg || from < 0 || from >= MAXR)
    s->bad_size++;
  if (from < 0 || from >= MAXR)
    return;
  if (sc->policy == RIVER_DQ_ONE_TO_ONE && from != cidx)
    s->bad_dest++;
  for (i = 0; i < n; i++) {
    if (!rec_ok(&r[i]) || r[i].prod != (uint32_t)from)
      s->bad_hash++;
    if ((int64_t)r[i].seq <= s->last[from])
      s->bad_order++;
    s->last[from] = (int64_t)r[i].seq;
    if (sc->policy == RIVER_DQ_EXCHANGE
        && sc->part(&r[i], ncons, (void *)&sc->nrec) != cidx)
      s->bad_dest++;
    sums_add(&s->sums, &r[i]);
  }
}

/* Run one scenario on group comm c; every rank of c calls it. */
static void run_flow(MPI_Comm c, const struct scen *sc)
{
  river_dq_opts o = RIVER_DQ_OPTS_INIT;
  river_dq *q = NULL;
  river_dq_stats st;
  struct seen s;
  struct sums ps = {0, 0, 0};
  struct rec *chunk;
  uint64_t mine[F_N], *all, put = 0, nrec = 0;
  int grank, gsize, role = 0, i, rc, k = 0, closed = 0, eos = 0;
  int puts = 0, pidx, cidx, nprod, ncons;
  size_t per_msg;
  uint64_t rng;
  const void *recs;
  size_t n;
  int from;
  char letter;

  MPI_Comm_rank(c, &grank);
  MPI_Comm_size(c, &gsize);
  letter = sc->roles[grank];
  role = letter == 'P' ? RIVER_DQ_PRODUCER
         : letter == 'C' ? RIVER_DQ_CONSUMER
         : letter == 'B' ? RIVER_DQ_PRODUCER | RIVER_DQ_CONSUMER : 0;
  o.policy = sc->policy;
  o.credits = sc->credits;
  o.message_size = sc->msgsize;
  o.seed = 42;
  o.partition = sc->part;
  o.partition_ctx = (void *)&sc->nrec;
  /* Records a message can hold, at most (the header takes some bytes). */
  per_msg = (sc->msgsize ? sc->msgsize : RIVER_DQ_DEFAULT_MESSAGE_SIZE) / RS;
  memset(&s, 0, sizeof s);
  for (i = 0; i < MAXR; i++)
    s.last[i] = -1;
  chunk = malloc((size_t)sc->max_chunk * RS);
  all = malloc(sizeof mine * (size_t)gsize);
  MT_CHECK(chunk != NULL && all != NULL);

  rc = river_dq_create(c, role, RS, sc->null_opts ? NULL : &o, &q);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc != RIVER_SUCCESS) {
    free(chunk);
    free(all);
    return; /* every rank got the same code */
  }
  MT_CHECK_RC(river_dq_stats_get(q, &st), RIVER_SUCCESS);
  pidx = st.producer_index;
  cidx = st.consumer_index;
  nprod = st.nproducers;
  ncons = st.nconsumers;
  MT_CHECK((pidx >= 0) == !!(role & RIVER_DQ_PRODUCER));
  MT_CHECK((cidx >= 0) == !!(role & RIVER_DQ_CONSUMER));
  if (pidx >= 0)
    nrec = sc->zero_first && pidx == 0 ? 0 : sc->nrec;
  rng = river_hash64(0x777 + (uint64_t)wrank);

  /* Producer-only and consumer-only ranks block; ranks in both roles
   * interleave try_put and try_get (they must not block in put). */
  while (!(pidx < 0 || closed) || !(cidx < 0 || eos)) {
    int progressed = 0;

    if (pidx >= 0 && !closed) {
      if (put < nrec) {
        if (k == 0) {
          k = 1 + (int)(river_hash64(rng++) % (uint64_t)sc->max_chunk);
          if ((uint64_t)k > nrec - put)
            k = (int)(nrec - put);
          for (i = 0; i < k; i++)
            rec_make(&chunk[i], (uint32_t)pidx, put + (uint64_t)i,
                     (uint32_t)sc->policy);
        }
        if (sc->reserve && cidx < 0) {
          /* Zero-copy: write the records into the queue's message. */
          void *dst = NULL;
          size_t room = 0;
          rc = river_dq_reserve(q, &dst, &room);
          if (rc == RIVER_SUCCESS) {
            k = (size_t)k < room ? k : (int)room;
            for (i = 0; i < k; i++) {
              struct rec x;
              rec_make(&x, (uint32_t)pidx, put + (uint64_t)i,
                       (uint32_t)sc->policy);
              memcpy((unsigned char *)dst + (size_t)i * RS, &x, RS);
              chunk[i] = x;
            }
            rc = river_dq_commit(q, (size_t)k);
          }
        } else {
          rc = cidx >= 0 ? river_dq_try_put(q, chunk, (size_t)k)
                         : river_dq_put(q, chunk, (size_t)k);
        }
        if (rc == RIVER_SUCCESS) {
          for (i = 0; i < k; i++)
            sums_add(&ps, &chunk[i]);
          put += (uint64_t)k;
          k = 0;
          progressed = 1;
          if (sc->prod_sleep && pidx % 2 == 1 && ++puts % 4 == 0)
            sleep_us(sc->prod_sleep);
        } else if (rc != RIVER_EAGAIN) {
          MT_CHECK_RC(rc, RIVER_SUCCESS);
          break;
        }
      } else {
        MT_CHECK_RC(river_dq_close(q), RIVER_SUCCESS);
        closed = 1;
        progressed = 1;
      }
    }
    if (cidx >= 0 && !eos) {
      rc = pidx >= 0 ? river_dq_try_get(q, &recs, &n, &from)
                     : river_dq_get(q, &recs, &n, &from);
      if (rc == RIVER_SUCCESS) {
        consume(sc, &s, cidx, ncons, recs, n, from, per_msg);
        if (cidx == sc->slow)
          sleep_us(sc->slow_us);
        else if (sc->cons_sleep)
          sleep_us((long)(river_hash64(rng++) % (uint64_t)sc->cons_sleep));
        progressed = 1;
      } else if (rc == RIVER_EOS) {
        eos = 1;
      } else if (rc != RIVER_EAGAIN) {
        MT_CHECK_RC(rc, RIVER_SUCCESS);
        break;
      }
    }
    if (!progressed)
      sleep_us(20);
  }
  if (cidx >= 0) {
    MT_CHECK(eos);
    if (eos) /* EOS stays EOS */
      MT_CHECK_RC(river_dq_get(q, &recs, &n, &from), RIVER_EOS);
    MT_CHECK(s.bad_hash == 0);
    MT_CHECK(s.bad_order == 0);
    MT_CHECK(s.bad_dest == 0);
    MT_CHECK(s.bad_size == 0);
  }

  MT_CHECK_RC(river_dq_stats_get(q, &st), RIVER_SUCCESS);
  memset(mine, 0, sizeof mine);
  mine[F_ROLE] = (uint64_t)role;
  mine[F_PIDX] = (uint64_t)(int64_t)pidx;
  mine[F_CIDX] = (uint64_t)(int64_t)cidx;
  mine[F_PCOUNT] = ps.count;
  mine[F_PSUM] = ps.sum;
  mine[F_PXOR] = ps.xor;
  mine[F_CCOUNT] = s.sums.count;
  mine[F_CSUM] = s.sums.sum;
  mine[F_CXOR] = s.sums.xor;
  {
    uint64_t in = 0, out = 0;
    for (i = 0; i < nprod && i < MAXR && st.msgs_from; i++)
      in += mine[F_FROM + i] = st.msgs_from[i];
    for (i = 0; i < ncons && i < MAXR && st.msgs_to; i++)
      out += mine[F_TO + i] = st.msgs_to[i];
    MT_CHECK(in == st.messages_in && out == st.messages_out);
  }
  MT_CHECK(pidx < 0 || st.records_out == nrec);
  MT_CHECK(pidx < 0 || st.bytes_out == nrec * RS);
  MT_CHECK(cidx < 0 || st.records_in == s.sums.count);
  /* A message that holds one record carries one. */
  MT_CHECK(per_msg > 1 || st.messages_in == st.records_in);
  MT_CHECK(cidx < 0 || st.bytes_in == s.sums.count * RS);
  MT_CHECK((pidx >= 0) == (st.msgs_to != NULL));
  MT_CHECK((cidx >= 0) == (st.msgs_from != NULL));
  MT_CHECK_RC(river_dq_destroy(q), RIVER_SUCCESS);
  quiet_allgather(mine, all, F_N, c);

  if (grank == 0) {
    struct sums P = {0, 0, 0}, C = {0, 0, 0};
    uint64_t *r, lo, hi, slowc = 0, fastmin = UINT64_MAX;
    int p, cc, failed = mt_failures;

    for (i = 0; i < gsize; i++) {
      r = all + (size_t)i * F_N;
      if (r[F_ROLE] & RIVER_DQ_PRODUCER) {
        P.count += r[F_PCOUNT];
        P.sum += r[F_PSUM];
        P.xor ^= r[F_PXOR];
      }
      if (r[F_ROLE] & RIVER_DQ_CONSUMER) {
        C.count += r[F_CCOUNT];
        C.sum += r[F_CSUM];
        C.xor ^= r[F_CXOR];
      }
    }
    MT_CHECK(P.count == (uint64_t)(nprod - (sc->zero_first ? 1 : 0))
                        * sc->nrec);
    for (i = 0; i < gsize; i++) {
      r = all + (size_t)i * F_N;
      if (!(r[F_ROLE] & RIVER_DQ_CONSUMER))
        continue;
      cc = (int)r[F_CIDX];
      if (sc->policy == RIVER_DQ_BROADCAST) {
        /* Every consumer got every record, once. */
        MT_CHECK(r[F_CCOUNT] == P.count && r[F_CSUM] == P.sum
                 && r[F_CXOR] == P.xor);
      }
      /* Messages per pair agree with the producer's count. */
      for (p = 0; p < gsize; p++) {
        uint64_t *w = all + (size_t)p * F_N;
        if (w[F_ROLE] & RIVER_DQ_PRODUCER)
          MT_CHECK(r[F_FROM + w[F_PIDX]] == w[F_TO + cc]);
      }
      if (sc->policy == RIVER_DQ_ONE_TO_ONE) {
        for (p = 0; p < nprod; p++)
          MT_CHECK(p == cc || r[F_FROM + p] == 0);
        MT_CHECK(r[F_CCOUNT] == (sc->zero_first && cc == 0 ? 0 : sc->nrec));
      }
      if (cc == sc->slow)
        slowc = r[F_CCOUNT];
      else if (r[F_CCOUNT] < fastmin)
        fastmin = r[F_CCOUNT];
    }
    if (sc->policy != RIVER_DQ_BROADCAST)
      MT_CHECK(C.count == P.count && C.sum == P.sum && C.xor == P.xor);
    if (sc->policy == RIVER_DQ_STATIC) {
      /* Round-robin: from each producer, shares within one message. */
      for (p = 0; p < nprod; p++) {
        lo = UINT64_MAX;
        hi = 0;
        for (i = 0; i < gsize; i++) {
          r = all + (size_t)i * F_N;
          if (!(r[F_ROLE] & RIVER_DQ_CONSUMER))
            continue;
          lo = r[F_FROM + p] < lo ? r[F_FROM + p] : lo;
          hi = r[F_FROM + p] > hi ? r[F_FROM + p] : hi;
        }
        MT_CHECK(hi - lo <= 1);
      }
    }
    if (sc->slow >= 0) {
      MT_CHECK(slowc * (uint64_t)ncons < P.count);
      MT_CHECK(slowc < fastmin);
      printf("%s: slow consumer got %" PRIu64 " of %" PRIu64 " records "
             "(fewest of a fast one: %" PRIu64 ")\n", sc->name, slowc,
             P.count, fastmin);
    }
    if (mt_failures != failed)
      fprintf(stderr, "scenario %s failed\n", sc->name);
  }
  free(chunk);
  free(all);
}

/* --------------------------------------------------------- credits */

/* Group roles "PCC": consumers hold back, so the producer gets exactly
 * credits messages out to each plus one full buffer, then try_put says
 * RIVER_EAGAIN; a blocking put then waits until they consume. */
static void test_credits(MPI_Comm c)
{
  river_dq_opts o = RIVER_DQ_OPTS_INIT;
  river_dq *q = NULL;
  river_dq_stats st;
  struct rec r;
  uint64_t seq = 0, got = 0, sum = 0, total = 0;
  int grank, rc, i;
  const size_t per = 4;
  const void *recs;
  size_t n;

  MPI_Comm_rank(c, &grank);
  o.policy = RIVER_DQ_PUSH;
  o.credits = 3;
  o.message_size = (per + 1) * RS - 1; /* 4 records and a header */
  rc = river_dq_create(c, grank == 0 ? RIVER_DQ_PRODUCER : RIVER_DQ_CONSUMER,
                       RS, &o, &q);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc != RIVER_SUCCESS)
    return;
  if (grank == 0) {
    for (;;) {
      rec_make(&r, 0, seq, 7);
      if ((rc = river_dq_try_put(q, &r, 1)) != RIVER_SUCCESS)
        break;
      seq++;
    }
    MT_CHECK_RC(rc, RIVER_EAGAIN);
    /* 2 consumers x 3 credits x 4 records + one full buffer waiting. */
    MT_CHECK(seq == 2 * 3 * per + per);
    MT_CHECK_RC(river_dq_stats_get(q, &st), RIVER_SUCCESS);
    MT_CHECK(st.msgs_to[0] == 3 && st.msgs_to[1] == 3);
    MT_CHECK(st.messages_out == 6);
    MT_CHECK(st.records_out == seq);
    MT_CHECK(st.credit_stalls >= 1);
    /* Refused again: still nothing taken, nothing sent. */
    MT_CHECK_RC(river_dq_try_put(q, &r, 1), RIVER_EAGAIN);
    MT_CHECK_RC(river_dq_stats_get(q, &st), RIVER_SUCCESS);
    MT_CHECK(st.records_out == seq && st.messages_out == 6);
    /* More than all credits could ever let out at once (2 x 3 messages
     * and one left in the buffer): RIVER_ENOBUFS, with a message. */
    {
      struct rec many[2 * 3 * 4 + 1];
      for (i = 0; i < (int)(sizeof many / sizeof *many); i++)
        rec_make(&many[i], 0, seq + (uint64_t)i, 7);
      log_capture();
      MT_CHECK_RC(river_dq_try_put(q, many, sizeof many / sizeof *many),
                  RIVER_ENOBUFS);
      log_restore();
      MT_CHECK(strstr(logbuf, "put fewer at a time") != NULL);
      MT_CHECK_RC(river_dq_stats_get(q, &st), RIVER_SUCCESS);
      MT_CHECK(st.records_out == seq);
    }
  }
  quiet_barrier(c);
  if (grank == 0) {
    /* Consumers sleep 200 ms before taking anything: put must wait. */
    for (i = 0; i < 40; i++, seq++) {
      rec_make(&r, 0, seq, 7);
      MT_CHECK_RC(river_dq_put(q, &r, 1), RIVER_SUCCESS);
    }
    MT_CHECK_RC(river_dq_close(q), RIVER_SUCCESS);
    MT_CHECK_RC(river_dq_stats_get(q, &st), RIVER_SUCCESS);
    MT_CHECK(st.put_wait_seconds > 0.1);
    total = seq;
  } else {
    sleep_us(200000);
    while ((rc = river_dq_get(q, &recs, &n, NULL)) == RIVER_SUCCESS) {
      got += n;
      for (i = 0; i < (int)n; i++)
        sum += ((const struct rec *)recs)[i].seq + 1;
    }
    MT_CHECK_RC(rc, RIVER_EOS);
  }
  MT_CHECK_RC(river_dq_destroy(q), RIVER_SUCCESS);
  {
    uint64_t in[3] = {got, sum, total}, out[3 * 3];
    quiet_allgather(in, out, 3, c);
    MT_CHECK(out[1 * 3] + out[2 * 3] == out[2]);
    MT_CHECK(out[1 * 3 + 1] + out[2 * 3 + 1] == out[2] * (out[2] + 1) / 2);
  }
}

/* ------------------------------------------------------------ bad input */

/* Create on every rank of c with the given per-rank arguments; expect
 * RIVER_EINVAL everywhere and q untouched; the log must name why. */
static void expect_refused(MPI_Comm c, int role, size_t rs,
                           const river_dq_opts *o, int null_out,
                           const char *why)
{
  river_dq *keep = (river_dq *)&keep, *q = keep;

  log_capture();
  MT_CHECK_RC(river_dq_create(c, role, rs, o, null_out ? NULL : &q),
              RIVER_EINVAL);
  log_restore();
  MT_CHECK(q == keep);
  if (why != NULL && strstr(logbuf, why) == NULL) {
    fprintf(stderr, "rank %d: expected '%s' in the log, got: %s\n", wrank,
            why, logbuf);
    mt_failures++;
  }
}

static void test_bad_create(MPI_Comm c)
{
  river_dq_opts o = RIVER_DQ_OPTS_INIT, x;
  int grank, gsize, half;

  MPI_Comm_rank(c, &grank);
  MPI_Comm_size(c, &gsize);
  half = grank < gsize / 2 ? RIVER_DQ_PRODUCER : RIVER_DQ_CONSUMER;
  o.message_size = 4096;

  expect_refused(c, half, 0, &o, 0, "record_size");
  x = o;
  x.message_size = 64;
  expect_refused(c, half, 100, &x, 0, "do not fit");
  x = o;
  x.credits = -1;
  expect_refused(c, half, RS, &x, 0, "credits");
  x = o;
  x.policy = (river_dq_policy)99;
  expect_refused(c, half, RS, &x, 0, "policy");
  x = o;
  x.policy = RIVER_DQ_EXCHANGE;
  expect_refused(c, half, RS, &x, 0, "partition");
  /* Different on one rank only: refused on every rank. */
  expect_refused(c, half, grank == 0 ? 32 : RS, &o, 0, "record_size");
  x = o;
  x.seed = grank == gsize - 1 ? 1 : 0;
  expect_refused(c, half, RS, &x, 0, "seed");
  x = o;
  x.credits = grank == 1 ? 5 : 0;
  expect_refused(c, half, RS, &x, 0, "credits");
  expect_refused(c, grank == 3 ? 4 : half, RS, &o, 0, NULL);
  expect_refused(c, half, RS, &o, grank == 2, NULL);
  /* Roles the queue cannot run with. */
  expect_refused(c, RIVER_DQ_CONSUMER, RS, &o, 0, "producers");
  expect_refused(c, RIVER_DQ_PRODUCER, RS, &o, 0, "consumers");
  expect_refused(c, 0, RS, &o, 0, "at least one");
  x = o;
  x.policy = RIVER_DQ_ONE_TO_ONE;
  expect_refused(c, grank == 0 ? RIVER_DQ_PRODUCER : RIVER_DQ_CONSUMER, RS,
                 &x, 0, "ONE_TO_ONE");
  MT_CHECK_RC(river_dq_destroy(NULL), RIVER_SUCCESS);
}

/* EXCHANGE on c (first two ranks produce): wrong-role calls, NULLs, a
 * partition index out of range (nothing taken), put after close. */
static void test_bad_use(MPI_Comm c)
{
  river_dq_opts o = RIVER_DQ_OPTS_INIT;
  river_dq *q = NULL;
  river_dq_stats st;
  struct rec r[3];
  struct sums ps = {0, 0, 0}, cs = {0, 0, 0};
  uint64_t in[6], out[6];
  const void *recs = (const void *)&o, *keep = recs;
  size_t n = 7;
  int grank, from = 7, prod, rc, i;
  MPI_Request req;

  MPI_Comm_rank(c, &grank);
  prod = grank < 2;
  o.policy = RIVER_DQ_EXCHANGE;
  o.partition = part_poison;
  o.message_size = 1000;
  rc = river_dq_create(c, prod ? RIVER_DQ_PRODUCER : RIVER_DQ_CONSUMER, RS,
                       &o, &q);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc != RIVER_SUCCESS)
    return;
  MT_CHECK_RC(river_dq_stats_get(q, NULL), RIVER_EINVAL);
  MT_CHECK_RC(river_dq_stats_get(NULL, &st), RIVER_EINVAL);
  if (prod) {
    /* Consumer calls on a producer-only rank. */
    MT_CHECK_RC(river_dq_get(q, &recs, &n, &from), RIVER_EINVAL);
    MT_CHECK_RC(river_dq_try_get(q, &recs, &n, &from), RIVER_EINVAL);
    MT_CHECK_RC(river_dq_release(q), RIVER_EINVAL);
    MT_CHECK(recs == keep && n == 7 && from == 7);
    MT_CHECK_RC(river_dq_put(q, NULL, 1), RIVER_EINVAL);
    MT_CHECK_RC(river_dq_try_put(q, NULL, 1), RIVER_EINVAL);
    MT_CHECK_RC(river_dq_put(q, NULL, 0), RIVER_SUCCESS);
    {
      void *rb = NULL;
      size_t room = 0;
      log_capture();
      MT_CHECK_RC(river_dq_reserve(q, &rb, &room), RIVER_EINVAL);
      MT_CHECK(strstr(logbuf, "not for EXCHANGE queues") != NULL);
      log_restore();
    }
    /* A record the partition refuses: the whole put is refused, with a
     * message, and the good records around it are not taken. */
    rec_make(&r[0], (uint32_t)grank, 0, 1);
    rec_make(&r[1], (uint32_t)grank, 1, POISON);
    rec_make(&r[2], (uint32_t)grank, 2, 1);
    log_capture();
    MT_CHECK_RC(river_dq_put(q, r, 3), RIVER_EINVAL);
    MT_CHECK(strstr(logbuf, "partition function gave consumer") != NULL);
    logbuf[0] = '\0';
    MT_CHECK_RC(river_dq_try_put(q, r, 3), RIVER_EINVAL);
    MT_CHECK(strstr(logbuf, "partition function gave consumer") != NULL);
    log_restore();
    MT_CHECK_RC(river_dq_stats_get(q, &st), RIVER_SUCCESS);
    MT_CHECK(st.records_out == 0);
    MT_CHECK_RC(river_dq_put(q, &r[0], 1), RIVER_SUCCESS);
    MT_CHECK_RC(river_dq_put(q, &r[2], 1), RIVER_SUCCESS);
    sums_add(&ps, &r[0]);
    sums_add(&ps, &r[2]);
    for (i = 3; i < 500; i++) {
      rec_make(&r[0], (uint32_t)grank, (uint64_t)i, 1);
      MT_CHECK_RC(river_dq_put(q, &r[0], 1), RIVER_SUCCESS);
      sums_add(&ps, &r[0]);
    }
    MT_CHECK_RC(river_dq_close(q), RIVER_SUCCESS);
    MT_CHECK_RC(river_dq_close(q), RIVER_ESTATE);
    MT_CHECK_RC(river_dq_put(q, &r[0], 1), RIVER_ESTATE);
    MT_CHECK_RC(river_dq_try_put(q, &r[0], 1), RIVER_ESTATE);
  } else {
    /* Producer calls on a consumer-only rank. */
    rec_make(&r[0], 0, 0, 1);
    MT_CHECK_RC(river_dq_put(q, r, 1), RIVER_EINVAL);
    MT_CHECK_RC(river_dq_try_put(q, r, 1), RIVER_EINVAL);
    MT_CHECK_RC(river_dq_close(q), RIVER_EINVAL);
    MT_CHECK_RC(river_dq_get(q, NULL, &n, &from), RIVER_EINVAL);
    MT_CHECK_RC(river_dq_get(q, &recs, NULL, &from), RIVER_EINVAL);
    MT_CHECK_RC(river_dq_try_get(q, NULL, &n, NULL), RIVER_EINVAL);
    MT_CHECK_RC(river_dq_release(q), RIVER_SUCCESS); /* nothing held */
    while ((rc = river_dq_get(q, &recs, &n, &from)) == RIVER_SUCCESS) {
      for (i = 0; i < (int)n; i++) {
        const struct rec *x = (const struct rec *)recs + i;
        MT_CHECK(rec_ok(x) && x->tag != POISON);
        sums_add(&cs, x);
      }
      MT_CHECK_RC(river_dq_release(q), RIVER_SUCCESS);
      MT_CHECK_RC(river_dq_release(q), RIVER_SUCCESS);
    }
    MT_CHECK_RC(rc, RIVER_EOS);
    MT_CHECK_RC(river_dq_try_get(q, &recs, &n, &from), RIVER_EOS);
  }
  MT_CHECK_RC(river_dq_destroy(q), RIVER_SUCCESS);
  in[0] = ps.count;
  in[1] = ps.sum;
  in[2] = cs.count;
  in[3] = cs.sum;
  MPI_Iallreduce(in, out, 4, MPI_UINT64_T, MPI_SUM, c, &req);
  MT_CHECK_RC(river_wait(&req, MPI_STATUS_IGNORE), RIVER_SUCCESS);
  in[4] = ps.xor;
  in[5] = cs.xor;
  MPI_Iallreduce(in + 4, out + 4, 2, MPI_UINT64_T, MPI_BXOR, c, &req);
  MT_CHECK_RC(river_wait(&req, MPI_STATUS_IGNORE), RIVER_SUCCESS);
  MT_CHECK(out[0] == 2 * 499);
  MT_CHECK(out[0] == out[2] && out[1] == out[3] && out[4] == out[5]);
}

/* Destroy before the stream is done: RIVER_ESTATE on every rank, no hang
 * (messages still in flight and unread). */
static void test_estate(MPI_Comm c)
{
  river_dq_opts o = RIVER_DQ_OPTS_INIT;
  river_dq *q = NULL;
  struct rec r[50];
  int grank, rc, i;

  MPI_Comm_rank(c, &grank);
  o.message_size = 1024;
  o.credits = 2;
  rc = river_dq_create(c, grank < 2 ? RIVER_DQ_PRODUCER : RIVER_DQ_CONSUMER,
                       RS, &o, &q);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc != RIVER_SUCCESS)
    return;
  for (i = 0; i < 50; i++)
    rec_make(&r[i], (uint32_t)grank, (uint64_t)i, 3);
  if (grank == 0) {
    /* Reserve/commit misuse: state and size errors, named. */
    void *rb = NULL;
    size_t room = 0;
    log_capture();
    MT_CHECK_RC(river_dq_commit(q, 1), RIVER_ESTATE);
    MT_CHECK(strstr(logbuf, "no reservation") != NULL);
    MT_CHECK_RC(river_dq_reserve(q, &rb, &room), RIVER_SUCCESS);
    MT_CHECK(rb != NULL && room == (1024 - 24) / RS);
    MT_CHECK_RC(river_dq_reserve(q, &rb, &room), RIVER_ESTATE);
    MT_CHECK_RC(river_dq_put(q, r, 1), RIVER_ESTATE);
    logbuf[0] = '\0';
    MT_CHECK_RC(river_dq_commit(q, room + 1), RIVER_EINVAL);
    MT_CHECK(strstr(logbuf, "but the reservation holds") != NULL);
    MT_CHECK_RC(river_dq_commit(q, 0), RIVER_SUCCESS);
    log_restore();
    MT_CHECK_RC(river_dq_put(q, r, 50), RIVER_SUCCESS);
    MT_CHECK_RC(river_dq_close(q), RIVER_SUCCESS);
    log_capture();
    MT_CHECK_RC(river_dq_reserve(q, &rb, &room), RIVER_ESTATE);
    MT_CHECK(strstr(logbuf, "the queue is closed") != NULL);
    log_restore();
  } else if (grank == 1) {
    MT_CHECK_RC(river_dq_try_put(q, r, 20), RIVER_SUCCESS); /* no close */
  } else {
    void *rb = NULL;
    size_t room = 0;
    MT_CHECK_RC(river_dq_reserve(q, &rb, &room), RIVER_EINVAL);
    MT_CHECK_RC(river_dq_commit(q, 0), RIVER_EINVAL);
  }
  log_capture();
  MT_CHECK_RC(river_dq_destroy(q), RIVER_ESTATE);
  log_restore();
  MT_CHECK(grank == 0 || strstr(logbuf, grank == 1 ? "did not close"
                                        : "did not reach end of stream"));
}

/* ----------------------------------------------------------------- wait */

/* Producers (first two ranks) sleep 1 s, then put; the consumers' first
 * get blocks meanwhile and must use little CPU. */
static void test_wait(MPI_Comm c)
{
  river_dq_opts o = RIVER_DQ_OPTS_INIT;
  river_dq *q = NULL;
  river_dq_stats st;
  struct rec r[100];
  struct timespec c0, c1;
  double w0, w1, frac = 0.0, fmax = 0.0, wall = 0.0;
  int grank, rc, i;
  const void *recs;
  size_t n;
  uint64_t got = 0, total = 0;

  MPI_Comm_rank(c, &grank);
  o.message_size = 4096;
  rc = river_dq_create(c, grank < 2 ? RIVER_DQ_PRODUCER : RIVER_DQ_CONSUMER,
                       RS, &o, &q);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc != RIVER_SUCCESS)
    return;
  if (grank < 2) {
    sleep_us(1000000);
    for (i = 0; i < 100; i++)
      rec_make(&r[i], (uint32_t)grank, (uint64_t)i, 9);
    MT_CHECK_RC(river_dq_put(q, r, 100), RIVER_SUCCESS);
    MT_CHECK_RC(river_dq_close(q), RIVER_SUCCESS);
  } else {
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    w0 = river_wtime();
    rc = river_dq_get(q, &recs, &n, NULL);
    w1 = river_wtime();
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    MT_CHECK(rc == RIVER_SUCCESS || rc == RIVER_EOS);
    wall = w1 - w0;
    frac = ((double)(c1.tv_sec - c0.tv_sec)
            + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec)) / wall;
    MT_CHECK(wall > 0.5);
    MT_CHECK(frac < 0.25);
    MT_CHECK_RC(river_dq_stats_get(q, &st), RIVER_SUCCESS);
    MT_CHECK(st.get_wait_seconds > 0.5 * wall);
    got = rc == RIVER_SUCCESS ? n : 0;
    while (rc == RIVER_SUCCESS
           && (rc = river_dq_get(q, &recs, &n, NULL)) == RIVER_SUCCESS)
      got += n;
    MT_CHECK_RC(rc, RIVER_EOS);
  }
  MT_CHECK_RC(river_dq_destroy(q), RIVER_SUCCESS);
  {
    MPI_Request req;
    MPI_Iallreduce(&got, &total, 1, MPI_UINT64_T, MPI_SUM, c, &req);
    MT_CHECK_RC(river_wait(&req, MPI_STATUS_IGNORE), RIVER_SUCCESS);
    MPI_Ireduce(&frac, &fmax, 1, MPI_DOUBLE, MPI_MAX, 0, c, &req);
    MT_CHECK_RC(river_wait(&req, MPI_STATUS_IGNORE), RIVER_SUCCESS);
  }
  MT_CHECK(total == 200);
  if (grank == 0)
    printf("wait: a consumer blocked ~1 s in get used at most %.1f%% of a "
           "core\n", 100.0 * fmax);
}

/* ---------------------------------------------------------------- pull */

#define PULL_NP 4        /* producers: grank 0..3; producer 3 has no unit */
#define PULL_NC 3        /* consumers: grank 4..6; consumer 0 is slow */
#define PULL_NU 4        /* units per producer (but the last) */
#define PULL_MSG ((size_t)1 << 20)
#define PULL_PER ((PULL_MSG - 24) / RS) /* records per message (24: the
                                           header, see src/dq.c) */
#define PULL_TAG 100u

/* Records in unit u of producer p: 3..8 MB, most not a whole number of
 * messages; producer 0's unit 0 is exactly 3 messages. */
static size_t pull_unit_len(int p, int u)
{
  if (p == 0 && u == 0)
    return 3 * PULL_PER;
  return (((size_t)3 << 20) + (size_t)((p * PULL_NU + u) % 6) * ((size_t)1
          << 20)) / RS + (size_t)(p * 7 + u * 3 + 1);
}

/* RIVER_DQ_PULL on a 7-rank group: every unit whole at exactly one
 * consumer (count, sum and xor of record digests, per unit), its records
 * in order and its messages contiguous (river_dq_unit's first/last and
 * id), exactly once overall, the slow consumer gets fewer units, EOS; a
 * producer with no unit; wrong-role and bad-argument calls. */
static void test_pull(MPI_Comm c)
{
  enum { NU = PULL_NP * PULL_NU };
  river_dq_opts o = RIVER_DQ_OPTS_INIT;
  river_dq *q = NULL;
  struct rec *buf = NULL;
  uint64_t pin[NU * 4], cin[NU * 5], pout[NU * 4], cout_[NU * 5];
  uint64_t units[PULL_NC], uall[PULL_NC * 7], unit = 7, cur = 0, next = 0;
  const void *recs = NULL;
  size_t n = 0, len, i, k, chunk = 5000;
  int grank, prod, cidx, rc, u, first = 7, last = 7, from = -1, inunit = 0;
  int slot = 0, j, ok;
  MPI_Request req;
  double t0 = river_wtime();

  MPI_Comm_rank(c, &grank);
  prod = grank < PULL_NP;
  cidx = grank - PULL_NP;
  memset(pin, 0, sizeof pin);
  memset(cin, 0, sizeof cin);
  memset(units, 0, sizeof units);
  o.policy = RIVER_DQ_PULL;
  o.credits = 2;
  o.message_size = PULL_MSG;
  rc = river_dq_create(c, prod ? RIVER_DQ_PRODUCER : RIVER_DQ_CONSUMER, RS,
                       &o, &q);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc != RIVER_SUCCESS)
    return;
  MT_CHECK_RC(river_dq_end_unit(NULL), RIVER_EINVAL);
  MT_CHECK_RC(river_dq_unit(NULL, &unit, &first, &last), RIVER_EINVAL);
  if (prod) {
    MT_CHECK_RC(river_dq_unit(q, &unit, &first, &last), RIVER_EINVAL);
    MT_CHECK_RC(river_dq_get(q, &recs, &n, &from), RIVER_EINVAL);
    MT_CHECK_RC(river_dq_end_unit(q), RIVER_SUCCESS); /* empty: no unit */
    buf = malloc(chunk * RS);
    MT_CHECK(buf != NULL);
    for (u = 0; buf != NULL && grank < PULL_NP - 1 && u < PULL_NU; u++) {
      len = pull_unit_len(grank, u);
      for (i = 0; i < len; i += k) {
        k = len - i < chunk ? len - i : chunk;
        for (j = 0; j < (int)k; j++) {
          rec_make(&buf[j], (uint32_t)grank, i + (size_t)j, PULL_TAG + u);
          pin[(grank * PULL_NU + u) * 4] += 1;
          pin[(grank * PULL_NU + u) * 4 + 1] += rec_digest(&buf[j]);
          pin[(grank * PULL_NU + u) * 4 + 2] ^= rec_digest(&buf[j]);
        }
        if (grank == 1) { /* try_put: all or nothing, retried */
          while ((rc = river_dq_try_put(q, buf, k)) == RIVER_EAGAIN)
            sleep_us(200);
          MT_CHECK_RC(rc, RIVER_SUCCESS);
        } else {
          MT_CHECK_RC(river_dq_put(q, buf, k), RIVER_SUCCESS);
        }
      }
      pin[(grank * PULL_NU + u) * 4 + 3] = 1; /* units made */
      if (grank == 2 && u == PULL_NU - 1)
        break; /* close ends the last unit */
      MT_CHECK_RC(river_dq_end_unit(q), RIVER_SUCCESS);
      MT_CHECK_RC(river_dq_end_unit(q), RIVER_SUCCESS); /* no-op */
    }
    MT_CHECK_RC(river_dq_close(q), RIVER_SUCCESS);
    MT_CHECK_RC(river_dq_end_unit(q), RIVER_ESTATE);
  } else {
    MT_CHECK_RC(river_dq_end_unit(q), RIVER_EINVAL);
    MT_CHECK_RC(river_dq_unit(q, &unit, &first, &last), RIVER_ESTATE);
    MT_CHECK_RC(river_dq_unit(q, NULL, &first, &last), RIVER_EINVAL);
    MT_CHECK_RC(river_dq_unit(q, &unit, NULL, &last), RIVER_EINVAL);
    MT_CHECK_RC(river_dq_unit(q, &unit, &first, NULL), RIVER_EINVAL);
    MT_CHECK(unit == 7 && first == 7 && last == 7);
    while ((rc = river_dq_get(q, &recs, &n, &from)) == RIVER_SUCCESS) {
      const struct rec *x = recs;
      MT_CHECK_RC(river_dq_unit(q, &unit, &first, &last), RIVER_SUCCESS);
      MT_CHECK(first == !inunit); /* contiguous: no other unit between */
      if (first) {
        cur = unit;
        next = 0;
        inunit = 1;
        u = (int)(unit & (((uint64_t)1 << RIVER_DQ_UNIT_SHIFT) - 1));
        ok = (unit >> RIVER_DQ_UNIT_SHIFT) < PULL_NP - 1 && u < PULL_NU;
        MT_CHECK(ok);
        slot = ok ? (int)(unit >> RIVER_DQ_UNIT_SHIFT) * PULL_NU + u : 0;
        cin[slot * 5 + 3]++;
        cin[slot * 5 + 4] += (uint64_t)cidx + 1;
        units[cidx]++;
      }
      MT_CHECK(unit == cur && (uint64_t)from == unit >> RIVER_DQ_UNIT_SHIFT);
      for (i = 0; i < n; i++, next++) {
        ok = rec_ok(&x[i]) && x[i].prod == (uint32_t)from
             && x[i].tag == PULL_TAG + (uint32_t)(slot % PULL_NU)
             && x[i].seq == next;
        if (!ok) {
          MT_CHECK(ok);
          break;
        }
        cin[slot * 5] += 1;
        cin[slot * 5 + 1] += rec_digest(&x[i]);
        cin[slot * 5 + 2] ^= rec_digest(&x[i]);
      }
      if (last)
        inunit = 0;
      if (cidx == 0)
        sleep_us(40000); /* the slow consumer */
    }
    MT_CHECK_RC(rc, RIVER_EOS);
    MT_CHECK(!inunit);
    MT_CHECK_RC(river_dq_try_get(q, &recs, &n, &from), RIVER_EOS);
  }
  free(buf);
  MT_CHECK_RC(river_dq_destroy(q), RIVER_SUCCESS);
  /* Sums per unit: the xors (and unit flags) reduce with BXOR, the rest
   * with SUM; then every unit: made once, received by exactly one
   * consumer, whole. */
  MPI_Iallreduce(pin, pout, NU * 4, MPI_UINT64_T, MPI_SUM, c, &req);
  MT_CHECK_RC(river_wait(&req, MPI_STATUS_IGNORE), RIVER_SUCCESS);
  MPI_Iallreduce(cin, cout_, NU * 5, MPI_UINT64_T, MPI_SUM, c, &req);
  MT_CHECK_RC(river_wait(&req, MPI_STATUS_IGNORE), RIVER_SUCCESS);
  for (j = 0; j < NU; j++) {
    uint64_t px = pin[j * 4 + 2], cx = cin[j * 5 + 2];
    MPI_Iallreduce(MPI_IN_PLACE, &px, 1, MPI_UINT64_T, MPI_BXOR, c, &req);
    MT_CHECK_RC(river_wait(&req, MPI_STATUS_IGNORE), RIVER_SUCCESS);
    MPI_Iallreduce(MPI_IN_PLACE, &cx, 1, MPI_UINT64_T, MPI_BXOR, c, &req);
    MT_CHECK_RC(river_wait(&req, MPI_STATUS_IGNORE), RIVER_SUCCESS);
    if (j / PULL_NU == PULL_NP - 1) {
      MT_CHECK(pout[j * 4 + 3] == 0 && cout_[j * 5 + 3] == 0);
      continue;
    }
    MT_CHECK(pout[j * 4 + 3] == 1);
    MT_CHECK(cout_[j * 5 + 3] == 1); /* exactly one consumer */
    MT_CHECK(pout[j * 4] == pull_unit_len(j / PULL_NU, j % PULL_NU));
    MT_CHECK(cout_[j * 5] == pout[j * 4] && cout_[j * 5 + 1] == pout[j * 4 + 1]
             && cx == px);
  }
  quiet_allgather(units, uall, PULL_NC, c);
  for (j = 0, k = 0; j < PULL_NC; j++)
    k += uall[PULL_NP * PULL_NC + j * PULL_NC + j]; /* consumer j's count */
  MT_CHECK(k == NU - PULL_NU);
  /* The slow one gets less than its 1/n share, no more than any fast
   * one and less than the busiest (a fast one may lose time waiting for
   * a unit number it took in a race: see src/dq.c). */
  MT_CHECK(uall[PULL_NP * PULL_NC] * PULL_NC < (uint64_t)(NU - PULL_NU));
  for (j = 1, k = 0; j < PULL_NC; j++) {
    MT_CHECK(uall[PULL_NP * PULL_NC] <= uall[(PULL_NP + j) * PULL_NC + j]);
    if (uall[(PULL_NP + j) * PULL_NC + j] > k)
      k = uall[(PULL_NP + j) * PULL_NC + j];
  }
  MT_CHECK(uall[PULL_NP * PULL_NC] < k);
  if (grank == 0)
    printf("pull: %d units of 3-8 MB to consumers: slow %" PRIu64 ", fast %"
           PRIu64 " and %" PRIu64 " (%.2f s)\n", NU - PULL_NU,
           uall[PULL_NP * PULL_NC], uall[(PULL_NP + 1) * PULL_NC + 1],
           uall[(PULL_NP + 2) * PULL_NC + 2], river_wtime() - t0);
}

/* The unit calls on a queue of another policy (one rank, both roles):
 * RIVER_EINVAL; the queue still works. */
static void test_pull_other(MPI_Comm c)
{
  river_dq *q = NULL;
  struct rec r;
  uint64_t unit = 7;
  const void *recs;
  size_t n;
  int first = 7, last = 7, rc;

  rc = river_dq_create(c, RIVER_DQ_PRODUCER | RIVER_DQ_CONSUMER, RS, NULL,
                       &q);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc != RIVER_SUCCESS)
    return;
  MT_CHECK_RC(river_dq_end_unit(q), RIVER_EINVAL);
  rec_make(&r, 0, 0, 5);
  MT_CHECK_RC(river_dq_put(q, &r, 1), RIVER_SUCCESS);
  MT_CHECK_RC(river_dq_close(q), RIVER_SUCCESS);
  MT_CHECK_RC(river_dq_get(q, &recs, &n, NULL), RIVER_SUCCESS);
  MT_CHECK(n == 1 && rec_ok(recs));
  MT_CHECK_RC(river_dq_unit(q, &unit, &first, &last), RIVER_EINVAL);
  MT_CHECK(unit == 7 && first == 7 && last == 7);
  MT_CHECK_RC(river_dq_get(q, &recs, &n, NULL), RIVER_EOS);
  MT_CHECK_RC(river_dq_destroy(q), RIVER_SUCCESS);
}

/* ----------------------------------------------------------------- main */

int main(int argc, char **argv)
{
  static const struct scen r1[] = {
    {"push-tiny", "PC", RIVER_DQ_PUSH, 2, 2 * 64 - 1, 8000, 0, 0, 0, -1, 0,
     40, NULL, 0, 0},
    {"static-3", "PCC", RIVER_DQ_STATIC, 2, 1024, 20000, 0, 0, 200, -1, 0, 50,
     NULL, 0, 0},
    {"one-to-one-3", "BPC", RIVER_DQ_ONE_TO_ONE, 3, 2048, 15000, 0, 300, 100,
     -1, 0, 30, NULL, 0, 0},
  };
  static const struct scen r2[] = {
    {"exchange-1MiB", "PPCC", RIVER_DQ_EXCHANGE, 2, (size_t)1 << 20, 150000,
     0, 0, 0, -1, 0, 5000, part_hash, 0, 0},
    {"broadcast-4", "BPCC", RIVER_DQ_BROADCAST, 3, 4096, 20000, 0, 200, 100,
     -1, 0, 60, NULL, 0, 0},
  };
  static const struct scen r3[] = {
    {"push-slow", "PPPCCCCC", RIVER_DQ_PUSH, 4, 2048, 60000, 1, 50, 0, 0,
     2000, 100, NULL, 0, 0},
  };
  static const struct scen r4[] = {
    {"exchange-range-all-both", "BBBBB", RIVER_DQ_EXCHANGE, 2, 1024,
     12000, 0, 0, 50, -1, 0, 16, part_range, 0, 0},
    {"push-both-credit1", "PBC", RIVER_DQ_PUSH, 1, 1024, 15000, 1, 500, 200,
     -1, 0, 16, NULL, 0, 0},
  };
  static const struct scen r5[] = {
    {"static-6", "PPCCCC", RIVER_DQ_STATIC, 3, 2048, 20000, 0, 200, 200, -1,
     0, 50, NULL, 0, 0},
    {"self-and-idle", "B-", RIVER_DQ_STATIC, 2, 4096, 20000, 0, 0, 0, -1, 0,
     60, NULL, 0, 0},
  };
  static const struct scen r6[] = {
    {"one-to-one-7", "BBBPPCC", RIVER_DQ_ONE_TO_ONE, 2, 1024, 10000, 1, 200,
     100, -1, 0, 16, NULL, 0, 0},
    {"self-defaults", "B", RIVER_DQ_PUSH, 0, 0, 30000, 0, 0, 0, -1, 0, 500,
     NULL, 1, 0},
  };
  static const int s1[] = {2, 3, 3}, s2[] = {4, 4}, s3[] = {8},
                   s4[] = {5, 3}, s5[] = {6, 2}, s6[] = {7, 1};
  MPI_Comm c;
  int g, grank, rc;
  double t0;

  if (river_init(&argc, &argv) != RIVER_SUCCESS) {
    fprintf(stderr, "river_init failed\n");
    return 1;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  if (wsize % PATTERN != 0) {
    if (wrank == 0)
      fprintf(stderr, "test_dq_mpi needs a multiple of %d ranks\n", PATTERN);
    river_finalize();
    return 1;
  }
  t0 = river_wtime();

#define ROUND(sizes, scens)                                                 \
  do {                                                                      \
    c = round_group(sizes, (int)(sizeof sizes / sizeof *sizes), &g, &grank);\
    run_flow(c, &scens[g]);                                                 \
    MPI_Comm_free(&c);                                                      \
  } while (0)

  ROUND(s1, r1);
  ROUND(s2, r2);
  ROUND(s3, r3);
  ROUND(s4, r4);
  ROUND(s5, r5);
  ROUND(s6, r6);

  /* The whole job as one queue (4 x 4 on 8 ranks, 8 x 8 on 16): PUSH and
   * STATIC under random consumer delays, producers finishing at different
   * times, producer 0 with no record. */
  {
    static char roles[1024];
    int i, half = wsize / 2;
    struct scen whole = {"push-whole", roles, RIVER_DQ_PUSH, 2, 2048, 8000,
                         1, 200, 100, -1, 0, 40, NULL, 0, 0};
    for (i = 0; i < wsize && i < (int)sizeof roles - 1; i++)
      roles[i] = i < half ? 'P' : 'C';
    roles[i] = '\0';
    run_flow(MPI_COMM_WORLD, &whole);
    whole.name = "static-whole";
    whole.policy = RIVER_DQ_STATIC;
    run_flow(MPI_COMM_WORLD, &whole);
    whole.name = "push-reserve";
    whole.policy = RIVER_DQ_PUSH;
    whole.reserve = 1;
    run_flow(MPI_COMM_WORLD, &whole);
  }

  /* Credits (3 ranks) beside a 5-rank bad-input group. */
  c = round_group(s4, 2, &g, &grank);
  if (g == 1)
    test_credits(c);
  else {
    test_bad_create(c);
    test_bad_use(c);
    test_estate(c);
  }
  MPI_Comm_free(&c);

  c = round_group(s3, 1, &g, &grank);
  test_wait(c);
  MPI_Comm_free(&c);

  /* PULL (7 ranks) beside the unit calls on a PUSH queue (1 rank). */
  c = round_group(s6, 2, &g, &grank);
  if (g == 0)
    test_pull(c);
  else
    test_pull_other(c);
  MPI_Comm_free(&c);

  quiet_barrier(MPI_COMM_WORLD);
  if (wrank == 0)
    printf("test_dq_mpi: %d ranks, %.1f s\n", wsize, river_wtime() - t0);
  rc = mt_verdict(MPI_COMM_WORLD, "test_dq_mpi");
  river_finalize();
  return rc;
}
