/*
 * river-bench dq - distributed queue benchmarks (river/dq.h), after the
 * River paper's figures:
 *
 *   mpirun -n N river-bench dq EXPERIMENT [--perturb SPEC] [--csv FILE] ...
 *
 * Each run is one configuration, a struct dq_cfg: n producers -> DQ -> n
 * consumers on the first ranks of WORLD. Adaptive runs (policy "river")
 * and the static baseline (policy "static") run on the same code path and
 * are divided by the same fluid ideal (dq_ideal), so their ratios compare
 * directly. Each point runs them --repeats times interleaved (river,
 * static, river, static, ...: the VM's slow stretches hit both alike);
 * every run is a CSV row, and rank 0 prints each point's medians with
 * their min..max.
 *
 * Data check: every record is hashed where it is made and where it is
 * got (river_hash64 over its bytes); the counts, the XORs and the sums
 * of the hashes must match, so a dropped and a duplicated record cannot
 * cancel out (the overhead runs, whose consumers do not read records,
 * check counts only).
 *
 * Rates are emulated (river/throttle.h): a producer "reads its disk" by
 * passing each message through a token bucket at the disk rate; a
 * consumer "computes" (or "writes its disk") by passing each message it
 * gets through its own bucket.
 *
 * Experiments:
 *   scaling   n producers at the disk rate -> DQ -> n consumers (not the
 *             bottleneck), n = 1, 2, 4, 8, 16
 *   read      15 producers, 15 consumers; k = 0..15 consumers at 25%
 *   read-slow the same with one consumer at 5%, 10%, 25% and 50%: a
 *             severe straggler (a failing node) down to a mild one
 *   write     15 CPU sources -> DQ -> 15 disk writers; k = 0..15 at 50%
 *   overhead  1 -> 1 unthrottled, 64 KiB - 1 MiB messages (one of them
 *             with --message-size), against a raw
 *             MPI_Isend/MPI_Irecv stream in the same run, with put
 *             ("river") and with reserve/commit ("river-reserve"); then
 *             8 x 8, which also runs "raw-wide": raw-hot's pairs, each
 *             rank cycling through as many buffers as the queue's ranks
 *             do (what that working set alone costs; its CSV ratio is
 *             to raw-hot), and "raw-a2a": raw MPI in the queue's own
 *             pattern (every producer to every consumer, STATIC's
 *             round-robin, credits in flight per pair, the queue's
 *             working set; its CSV ratio is to raw-hot too)
 *   wait      CPU time of a consumer blocked for 10 s
 * With RIVER_BENCH_VERBOSE set, every rank's end (s from the start) and
 * every consumer's records are printed after each run.
 * A sweep uses subsets of the ranks for smaller sizes and skips sizes that
 * need more ranks than it has; with fewer ranks than an experiment's
 * default, producers and consumers split the ranks evenly. --perturb runs
 * just that one configuration.
 */
#include "bench.h"
#include "../common/ideal.h"

#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The suite's own options (the table at the end): 64 KiB messages and 2
 * credits per pair, so that what a slow consumer has queued at the end
 * of a run (credits x producers x message size) is small beside the run
 * (doc/results.md). */
#define DQ_MESSAGE_SIZE (64 << 10)
static struct dq_opts {
  int credits;             /* --credits, each pair's (0: the queue's) */
  size_t message_size;     /* --message-size (0: not given: DQ_MESSAGE_SIZE,
                              and overhead runs every size) */
} dq_opt = {2, 0};

/* One configuration of a DQ run. Rates in bytes/s; 0 = unthrottled. */
struct dq_cfg {
  const char *experiment;
  int nprod, ncons;
  double prod_rate, cons_rate;
  int perturb_kind;        /* which role a perturbation applies to:
                              RIVER_PERTURB_DISK or _CPU, see below */
  int perturb_consumers;   /* 1: perturbation indices are consumers */
  const river_perturb *perturb;
  river_dq_policy policy;
  uint64_t bytes_per_producer;
  size_t message_size;
  int credits;
  int lean;                /* overhead: put from a pre-filled 64 MiB
                              source, consumers do not read the records;
                              exactly-once is checked by counts only */
  int reserve;             /* producers write into the queue's own
                              message (river_dq_reserve/commit): no copy;
                              lean: nothing written at all, as raw MPI
                              sends what is already there */
};

static const size_t record_size = 100;

/* ------------------------------------------------------------- helpers */

static void csv_row(struct bench *b, const struct dq_cfg *c,
                    const char *policy, int k, double factor,
                    const struct bench_result *r)
{
  bench_row(b, c->experiment, policy, c->nprod, c->ncons, k, factor, r);
}

/* The perturbation factor of a rank at t seconds into the run. */
static double factor_at(const struct dq_cfg *c, int consumer_side, int idx,
                        double t)
{
  double f = 1.0;

  if (c->perturb != NULL && consumer_side == c->perturb_consumers)
    river_perturb_factor(c->perturb, c->perturb_kind, idx, t, &f);
  return f;
}

static double factor_of(const struct dq_cfg *c, int consumer_side, int idx)
{
  return factor_at(c, consumer_side, idx, 0.0);
}

/* Pass n bytes of work through thr at the factor in force now (a
 * perturbation with a start time, "@2s", changes it mid-run). */
static void throttled(river_throttle *thr, const struct dq_cfg *c,
                      int consumer_side, int idx, double t0, size_t n)
{
  double f;

  if (thr == NULL)
    return;
  f = factor_at(c, consumer_side, idx, river_wtime() - t0);
  river_throttle_set_factor(thr, f);
  river_throttle_consume(thr, n);
}

/* The fluid ideal of a DQ run (app_dq_ideal) at the rates at the start:
 * a perturbation that starts later ("@2s") is applied during the run,
 * but not here. Unthrottled sides (rate 0) impose no bound. */
static double dq_ideal(const struct dq_cfg *c)
{
  double *prod = calloc((size_t)c->nprod, sizeof *prod);
  double *cons = calloc((size_t)c->ncons, sizeof *cons), ideal = 0.0;
  int i;

  if (prod != NULL && cons != NULL) {
    for (i = 0; i < c->nprod; i++)
      prod[i] = c->prod_rate * factor_of(c, 0, i);
    for (i = 0; i < c->ncons; i++)
      cons[i] = c->cons_rate * factor_of(c, 1, i);
    ideal = app_dq_ideal((double)c->bytes_per_producer, c->nprod, prod,
                         c->ncons, cons);
  }
  free(prod);
  free(cons);
  return ideal;
}

/* Records in the lean source: 64 MiB worth, a whole number of chunks. */
static size_t lean_records(size_t chunk)
{
  size_t n = ((size_t)64 << 20) / record_size / chunk * chunk;

  return n ? n : chunk;
}

/* Deterministic record contents: producer p's record i. */
static void fill_records(unsigned char *buf, size_t n, int p, uint64_t first)
{
  size_t i;

  for (i = 0; i < n; i++) {
    uint64_t id = ((uint64_t)p << 40) | (first + i);
    memset(buf + i * record_size, (int)(id & 0xff), record_size);
    memcpy(buf + i * record_size, &id, sizeof id);
  }
}

/* A hash of one record's bytes (the data check's unit). */
static uint64_t record_hash(const unsigned char *r)
{
  uint64_t h = record_size, w;
  size_t i;

  for (i = 0; i + 8 <= record_size; i += 8) {
    memcpy(&w, r + i, 8);
    h = river_hash64(h ^ w);
  }
  for (; i < record_size; i++)
    h = river_hash64(h ^ r[i]);
  return h;
}

/* One rank's part of a DQ run. */
struct dq_rank {
  int me, idx, is_prod;    /* rank in the run; index among its side */
  river_dq *q;
  river_throttle *thr;     /* NULL: unthrottled */
  unsigned char *buf;      /* producers: the records to put */
  size_t chunk, nbuf;      /* records per message; records in buf */
  double t0;               /* start of the run, after a barrier */
  uint64_t sent, got;
  uint64_t hsum, hxor;     /* of the records' hashes, put or got */
};

/* Add n records at buf to r's data check. */
static void check_add(struct dq_rank *r, const unsigned char *buf, size_t n)
{
  size_t i;

  for (i = 0; i < n; i++) {
    uint64_t h = record_hash(buf + i * record_size);
    r->hsum += h;
    r->hxor ^= h;
  }
}

/* Create r's queue and (producers) its source buffer. */
static int rank_open(const struct dq_cfg *c, MPI_Comm comm, struct dq_rank *r)
{
  river_dq_opts o = RIVER_DQ_OPTS_INIT;
  int rc;

  MPI_Comm_rank(comm, &r->me);
  r->is_prod = r->me < c->nprod;
  r->idx = r->is_prod ? r->me : r->me - c->nprod;
  o.policy = c->policy;
  o.credits = c->credits;
  o.message_size = c->message_size;
  o.seed = 12345;
  rc = river_dq_create(comm, r->is_prod ? RIVER_DQ_PRODUCER
                                        : RIVER_DQ_CONSUMER,
                       record_size, &o, &r->q);
  r->chunk = (c->message_size ? c->message_size
                              : RIVER_DQ_DEFAULT_MESSAGE_SIZE) / record_size;
  r->nbuf = c->lean ? lean_records(r->chunk) : r->chunk;
  if (rc == RIVER_SUCCESS && r->is_prod
      && (r->buf = malloc(r->nbuf * record_size)) == NULL)
    rc = RIVER_ENOMEM;
  if (rc == RIVER_SUCCESS && r->is_prod && c->lean)
    fill_records(r->buf, r->nbuf, r->idx, 0);
  return rc;
}

/* Put `total` records by reserve/commit, written in place in the queue's
 * own message (lean: not written at all). */
static int put_reserved(const struct dq_cfg *c, struct dq_rank *r,
                        uint64_t total)
{
  int rc = RIVER_SUCCESS;

  while (rc == RIVER_SUCCESS && r->sent < total) {
    void *dst;
    size_t room, k;

    rc = river_dq_reserve(r->q, &dst, &room);
    if (rc != RIVER_SUCCESS)
      break;
    k = total - r->sent < room ? (size_t)(total - r->sent) : room;
    if (!c->lean) {
      fill_records(dst, k, r->idx, r->sent);
      check_add(r, dst, k);
    }
    throttled(r->thr, c, 0, r->idx, r->t0, k * record_size);
    rc = river_dq_commit(r->q, k);
    r->sent += k;
  }
  return rc;
}

/* Put `total` records a message at a time from r->buf: filled before each
 * put, or (lean) cycled through pre-filled. */
static int put_copied(const struct dq_cfg *c, struct dq_rank *r,
                      uint64_t total)
{
  int rc = RIVER_SUCCESS;

  while (rc == RIVER_SUCCESS && r->sent < total) {
    size_t k = total - r->sent < r->chunk ? (size_t)(total - r->sent)
                                          : r->chunk;
    unsigned char *src = r->buf;

    if (c->lean) {
      size_t at = (size_t)(r->sent % (r->nbuf / r->chunk * r->chunk));
      src = r->buf + at * record_size;
    } else {
      fill_records(r->buf, k, r->idx, r->sent);
      check_add(r, r->buf, k);
    }
    throttled(r->thr, c, 0, r->idx, r->t0, k * record_size);
    rc = river_dq_put(r->q, src, k);
    r->sent += k;
  }
  return rc;
}

/* A producer's run: its share of records, then close. */
static int produce(const struct dq_cfg *c, struct dq_rank *r)
{
  uint64_t total = c->bytes_per_producer / record_size;
  int rc = c->reserve ? put_reserved(c, r, total) : put_copied(c, r, total);

  return rc == RIVER_SUCCESS ? river_dq_close(r->q) : rc;
}

/* A consumer's run: get until the end of the stream, hashing every
 * record (unless lean). */
static int consume(const struct dq_cfg *c, struct dq_rank *r)
{
  const void *rec;
  size_t k;
  int rc;

  while ((rc = river_dq_get(r->q, &rec, &k, NULL)) == RIVER_SUCCESS) {
    if (!c->lean)
      check_add(r, rec, k);
    r->got += k;
    throttled(r->thr, c, 1, r->idx, r->t0, k * record_size);
    river_dq_release(r->q);
  }
  return rc == RIVER_EOS ? RIVER_SUCCESS : rc;
}

/* With RIVER_BENCH_VERBOSE set: every rank's end (s after t0) and every
 * consumer's records, printed by comm's rank 0 (collective over comm). */
static void print_ends(const struct dq_cfg *c, MPI_Comm comm,
                       const struct dq_rank *r, double t1)
{
  double v[2] = {t1 - r->t0, r->is_prod ? -1.0 : (double)r->got};
  double *all = NULL;
  int n = c->nprod + c->ncons, i, on = 0;

  /* Rank 0 decides, so every rank makes the same collective calls. */
  if (r->me == 0 && getenv("RIVER_BENCH_VERBOSE"))
    on = (all = malloc(2 * (size_t)n * sizeof *all)) != NULL;
  MPI_Bcast(&on, 1, MPI_INT, 0, comm);
  if (!on)
    return;
  MPI_Gather(v, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, comm);
  if (all == NULL)
    return;
  printf("  end (s) by producer:");
  for (i = 0; i < n; i++)
    if (all[2 * i + 1] < 0)
      printf(" %.3f", all[2 * i]);
  printf("\n  end (s) / records by consumer:");
  for (i = 0; i < n; i++)
    if (all[2 * i + 1] >= 0)
      printf(" %.3f/%.0f", all[2 * i], all[2 * i + 1]);
  printf("\n");
  free(all);
}

/* The run's outcome, in res on comm's rank 0 (collective over comm): the
 * time to the last rank's end t1, and exactly once: the counts, and the
 * sums and XORs of the records' hashes, put and got, must match. */
static void tally(const struct dq_cfg *c, MPI_Comm comm,
                  const struct dq_rank *r, double t1,
                  struct bench_result *res)
{
  uint64_t sums[4] = {0, 0, 0, 0}, all[4], xors[2] = {0, 0}, xall[2];
  double tmax;

  print_ends(c, comm, r, t1);
  MPI_Reduce(&t1, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  sums[r->is_prod ? 0 : 1] = r->is_prod ? r->sent : r->got;
  sums[r->is_prod ? 2 : 3] = r->hsum;
  xors[r->is_prod ? 0 : 1] = r->hxor;
  MPI_Reduce(sums, all, 4, MPI_UINT64_T, MPI_SUM, 0, comm);
  MPI_Reduce(xors, xall, 2, MPI_UINT64_T, MPI_BXOR, 0, comm);
  if (r->me == 0) {
    res->seconds = tmax - r->t0;
    res->records = all[1];
    /* lean: nothing hashed on either side; the counts decide */
    res->ok = all[0] == all[1] && all[2] == all[3] && xall[0] == xall[1]
              && (c->lean || all[0] == 0 || all[2] != 0);
    res->measured = (double)all[1] * record_size / res->seconds;
    res->ideal = dq_ideal(c);
  }
}

/* r's emulated rate, if it has one: a bucket of one message, empty at the
 * start of the timed run (made after the barrier, not before it: a
 * bucket made earlier would have earned up to a message while the
 * slowest rank reached the barrier, a head start the fluid ideal does
 * not count; issue 13). */
static int start_throttle(const struct dq_cfg *c, struct dq_rank *r)
{
  double rate = r->is_prod ? c->prod_rate : c->cons_rate;
  int rc;

  if (rate <= 0)
    return RIVER_SUCCESS;
  rc = river_throttle_create(rate, (double)(r->chunk * record_size),
                             &r->thr);
  if (rc == RIVER_SUCCESS)
    river_throttle_consume(r->thr, r->chunk * record_size);
  return rc;
}

/* Run one DQ configuration on the first nprod + ncons ranks of WORLD
 * (collective over WORLD; the other ranks idle in the collectives). */
static int run_dq(struct bench *b, const struct dq_cfg *c,
                  struct bench_result *res)
{
  int n = c->nprod + c->ncons, color = b->rank < n ? 0 : MPI_UNDEFINED;
  int rc = RIVER_SUCCESS;
  struct dq_rank r;
  MPI_Comm comm;
  double t1;

  memset(res, 0, sizeof *res);
  memset(&r, 0, sizeof r);
  MPI_Comm_split(MPI_COMM_WORLD, color, b->rank, &comm);
  if (comm != MPI_COMM_NULL) {
    rc = rank_open(c, comm, &r);
    MPI_Barrier(comm);
    if (rc == RIVER_SUCCESS)
      rc = start_throttle(c, &r);
    r.t0 = river_wtime();
    if (rc == RIVER_SUCCESS)
      rc = r.is_prod ? produce(c, &r) : consume(c, &r);
    t1 = river_wtime();
    river_dq_destroy(r.q);
    tally(c, comm, &r, t1, res);
    river_throttle_destroy(r.thr);
    free(r.buf);
    MPI_Comm_free(&comm);
  }
  /* Ranks outside the run wait here without spinning: blocked in a
   * collective, Open MPI would poll and take the 2 cores' time from the
   * run (at 1 x 1 on 16 ranks that halved the measured rate). */
  bench_world_wait();
  return bench_end_run(b, res, rc);
}

/* --------------------------------------------------------- experiments */

/* The median of v[0..n) and its min..max, as " NAME M% (LO..HI)". */
static void print_spread(const char *name, double *v, int n)
{
  double lo = v[0], hi = v[0];
  int i;

  for (i = 1; i < n; i++) {
    lo = v[i] < lo ? v[i] : lo;
    hi = v[i] > hi ? v[i] : hi;
  }
  printf(" %s %.1f%% (%.1f..%.1f)", name, 100 * bench_median(v, n),
         100 * lo, 100 * hi);
}

/* Run cfg --repeats times with both policies interleaved (adaptive,
 * static, adaptive, ...), a row each; rank 0 prints the medians. */
static int run_pair(struct bench *b, struct dq_cfg *c, int k, double factor)
{
  static const river_dq_policy pol[2] = {RIVER_DQ_PUSH, RIVER_DQ_STATIC};
  static const char *const name[2] = {"river", "static"};
  double ratio[2][64];
  struct bench_result r;
  int rc = RIVER_SUCCESS, rep, i, nrep = b->repeats < 64 ? b->repeats : 64;

  for (rep = 0; rep < nrep && rc == RIVER_SUCCESS; rep++)
    for (i = 0; i < 2 && rc == RIVER_SUCCESS; i++) {
      c->policy = pol[i];
      rc = run_dq(b, c, &r);
      csv_row(b, c, name[i], k, factor, &r);
      ratio[i][rep] = r.ideal > 0 ? r.measured / r.ideal : 0.0;
    }
  if (rc == RIVER_SUCCESS && b->rank == 0) {
    printf("%-9s %d x %d k=%-2d f=%.2f median of %d:", c->experiment,
           c->nprod, c->ncons, k, factor, nrep);
    print_spread("river", ratio[0], nrep);
    print_spread("static", ratio[1], nrep);
    printf(" of the ideal\n");
    fflush(stdout);
  }
  return rc;
}

/* Split the ranks between producers and consumers: the experiment's
 * default sizes if they fit, else half and half. */
static void sizes(const struct bench *b, int want_p, int want_c, int *np,
                  int *nc)
{
  if (want_p + want_c <= b->size) {
    *np = want_p;
    *nc = want_c;
  } else {
    *np = b->size / 2;
    *nc = b->size - *np;
  }
}

static void base_cfg(const struct bench *b, struct dq_cfg *c, const char *exp)
{
  memset(c, 0, sizeof *c);
  c->experiment = exp;
  c->credits = dq_opt.credits;
  c->message_size = dq_opt.message_size ? dq_opt.message_size
                                        : DQ_MESSAGE_SIZE;
}

/* A perturbation of the first k indices of `kind` by factor, as a spec. */
static int first_k(int kind, int k, double factor, river_perturb **out)
{
  char spec[96];

  if (k == 0)
    snprintf(spec, sizeof spec, "%s", "");
  else
    snprintf(spec, sizeof spec, "%s:0-%d=%g",
             kind == RIVER_PERTURB_CPU ? "cpu" : "disk", k - 1, factor);
  return river_perturb_parse(spec, out);
}

/* read/write: a sweep over k perturbed consumers, or the one --perturb. */
static int exp_perturbed(struct bench *b, const char *exp, int kind,
                         double prod_mult, double cons_mult, double factor)
{
  struct dq_cfg c;
  double disk = b->rate_mbps * MB;
  int np, nc, k, rc = RIVER_SUCCESS, kk;
  river_perturb *p = NULL;

  base_cfg(b, &c, exp);
  sizes(b, 15, 15, &np, &nc);
  c.nprod = np;
  c.ncons = nc;
  c.prod_rate = disk * prod_mult;
  c.cons_rate = disk * cons_mult;
  c.perturb_kind = kind;
  c.perturb_consumers = 1;
  /* About b->seconds of work for the slower side, unperturbed. */
  c.bytes_per_producer = (uint64_t)(fmin(c.prod_rate, c.cons_rate)
                                    * b->seconds);
  if (b->perturb) {
    c.perturb = b->perturb;
    river_perturb_count(b->perturb, kind, &kk);
    return run_pair(b, &c, kk, bench_slowest_factor(b->perturb, kind, nc));
  }
  for (k = 0; k <= nc && rc == RIVER_SUCCESS; k++) {
    rc = first_k(kind, k, factor, &p);
    c.perturb = p;
    if (rc == RIVER_SUCCESS)
      rc = run_pair(b, &c, k, k ? factor : 1.0);
    river_perturb_destroy(p);
    p = NULL;
  }
  return rc;
}

static int exp_read(struct bench *b)
{
  /* Consumers at 1.5x the disk rate: not the bottleneck unperturbed. */
  return exp_perturbed(b, "read", RIVER_PERTURB_CPU, 1.0, 1.5, 0.25);
}

/* read-slow: one consumer of 15 at 5%, 10%, 25% and 50% of its speed
 * (or the one --perturb). */
static int exp_read_slow(struct bench *b)
{
  static const double factors[] = {0.05, 0.1, 0.25, 0.5};
  size_t i;
  int rc = RIVER_SUCCESS;

  if (b->perturb)
    return exp_perturbed(b, "read-slow", RIVER_PERTURB_CPU, 1.0, 1.5, 1.0);
  for (i = 0; i < sizeof factors / sizeof factors[0] && rc == RIVER_SUCCESS;
       i++) {
    struct dq_cfg c;
    river_perturb *p = NULL;
    int np, nc;

    base_cfg(b, &c, "read-slow");
    sizes(b, 15, 15, &np, &nc);
    c.nprod = np;
    c.ncons = nc;
    c.prod_rate = b->rate_mbps * MB;
    c.cons_rate = 1.5 * c.prod_rate;
    c.perturb_kind = RIVER_PERTURB_CPU;
    c.perturb_consumers = 1;
    c.bytes_per_producer = (uint64_t)(c.prod_rate * b->seconds);
    rc = first_k(RIVER_PERTURB_CPU, 1, factors[i], &p);
    c.perturb = p;
    if (rc == RIVER_SUCCESS)
      rc = run_pair(b, &c, 1, factors[i]);
    river_perturb_destroy(p);
  }
  return rc;
}

static int exp_write(struct bench *b)
{
  /* CPU sources at 1.5x the disk rate feed disk writers. */
  return exp_perturbed(b, "write", RIVER_PERTURB_DISK, 1.5, 1.0, 0.5);
}

static int exp_scaling(struct bench *b)
{
  static const int ns[] = {1, 2, 4, 8, 16};
  struct dq_cfg c;
  size_t i;
  int rc = RIVER_SUCCESS, k = 0;

  base_cfg(b, &c, "scaling");
  c.prod_rate = b->rate_mbps * MB;
  c.cons_rate = 2 * c.prod_rate;
  c.perturb_kind = RIVER_PERTURB_DISK;
  c.perturb_consumers = 0;
  c.perturb = b->perturb;
  c.bytes_per_producer = (uint64_t)(c.prod_rate * b->seconds);
  if (b->perturb)
    river_perturb_count(b->perturb, RIVER_PERTURB_DISK, &k);
  for (i = 0; i < sizeof ns / sizeof ns[0] && rc == RIVER_SUCCESS; i++) {
    if (2 * ns[i] > b->size) {
      if (b->rank == 0)
        printf("scaling: n=%d skipped (needs %d ranks, have %d)\n", ns[i],
               2 * ns[i], b->size);
      continue;
    }
    if (b->perturb && i + 1 < sizeof ns / sizeof ns[0]
        && 2 * ns[i + 1] <= b->size)
      continue;  /* --perturb: just the largest size that fits */
    c.nprod = c.ncons = ns[i];
    rc = run_pair(b, &c, k, 1.0);
  }
  return rc;
}

/* A raw MPI stream: producers 0..n-1 send `bytes` each to consumer n+i in
 * `msg`-byte messages, `depth` in flight; returns the aggregate B/s.
 * Senders cycle through a 64 MiB source (nsnd 0), as the DQ's producers
 * do in this experiment, or through nsnd buffers; receivers through nrcv.
 * raw-hot: depth each, a pair's own few buffers. raw-wide: as many as the
 * ranks of an n x n queue cycle through, a buffer per credit per peer
 * and one more (a consumer's ring of posted receives and its spare; a
 * producer's message slots, up to credits x n of them in flight).
 * a2a (raw-a2a): the queue's pattern instead of pairs, `depth` in flight
 * per pair: producer p sends its message j to consumer (p + j) mod n (as
 * STATIC does) from a ring of depth x n slots, and each consumer keeps
 * depth receives posted per producer (slot s for producer s mod n); the
 * buffers are the slots (nsnd and nrcv are not used). Ranks outside the
 * stream allocate nothing. */
static double raw_stream(struct bench *b, int n, uint64_t bytes, size_t msg,
                         int depth, size_t nsnd, size_t nrcv, int a2a)
{
  int me = b->rank, i, active = me < 2 * n, peer = me < n ? me + n : me - n;
  int nreq = a2a ? depth * n : depth;
  MPI_Request *req = calloc((size_t)nreq, sizeof *req);
  size_t nsrc = nsnd ? nsnd
                : ((size_t)64 << 20) / msg > (size_t)depth
                    ? ((size_t)64 << 20) / msg : (size_t)depth;
  size_t nb = !active ? 0 : a2a ? (size_t)nreq : me < n ? nsrc : nrcv;
  void *mem = NULL;
  char *buf;
  uint64_t count = bytes / msg, done;
  double t0, t1, tmax;

  if (a2a) {
    count -= count % (uint64_t)n;  /* count / n to every consumer */
    nsrc = nrcv = (size_t)nreq;
  }
  for (i = 0; i < nreq; i++)
    req[i] = MPI_REQUEST_NULL;
  /* Page-aligned, as the queue's own message buffers are (the sizes
   * overhead runs are whole pages, so every buffer starts on one):
   * malloc'd buffers ran raw MPI slower here (issue 13,
   * doc/results/issue13-session6-local.txt), which would flatter River. */
  if (nb && posix_memalign(&mem, 4096, nb * msg) != 0)
    mem = NULL;
  buf = mem;
  if (nb && buf == NULL) {
    fprintf(stderr, "river-bench: no memory for %zu buffers of %zu bytes\n",
            nb, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (buf)
    memset(buf, 1, nb * msg);
  bench_world_wait();
  MPI_Barrier(MPI_COMM_WORLD); /* a common start: all are here now */
  t0 = river_wtime();
  for (done = 0; active && done < count; done++) {
    int s = (int)(done % (uint64_t)nreq);
    if (a2a)   /* slot s: consumer (me + s) mod n, or producer s mod n */
      peer = me < n ? n + (me + s) % n : s % n;
    MPI_Wait(&req[s], MPI_STATUS_IGNORE);
    if (me < n)
      MPI_Isend(buf + (size_t)(done % nsrc) * msg, (int)msg, MPI_BYTE, peer,
                9, MPI_COMM_WORLD, &req[s]);
    else
      MPI_Irecv(buf + (size_t)(done % nrcv) * msg, (int)msg, MPI_BYTE,
                peer, 9, MPI_COMM_WORLD, &req[s]);
  }
  MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
  t1 = active ? river_wtime() : 0.0;
  bench_world_wait(); /* idle ranks: no spinning (run_dq) */
  MPI_Allreduce(&t1, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  free(req);
  free(buf);
  return (double)count * (double)msg * n / (tmax - t0);
}

/* A raw stream's row, its ratio to `base` (raw-hot's rate) in the CSV. */
static struct bench_result raw_row(struct bench *b, struct dq_cfg *c,
                                   const char *name, double rate,
                                   double base)
{
  struct bench_result r = {0};

  r.measured = rate;
  r.ideal = base;
  r.ok = 1;
  r.seconds = (double)c->bytes_per_producer * c->nprod / rate;
  r.records = c->bytes_per_producer * (uint64_t)c->nprod / record_size;
  csv_row(b, c, name, 0, (double)c->message_size / 1024, &r);
  return r;
}

/* One overhead repeat at one size: raw, river (put), raw-hot,
 * river-reserve, a row each, and at n x n > 1 x 1 raw-wide (raw-hot's
 * pairs and depth, each rank cycling through as many buffers as a rank
 * of the queue does, credits x n + 1: the cost of that working set
 * alone) and raw-a2a (raw MPI in the queue's own all-to-all pattern);
 * their CSV rows' ideal is raw-hot's rate, so their ratio is to
 * raw-hot, where the other raw rows have ratio 1. ratio[0] = put / raw,
 * ratio[1] = reserve / raw-hot, ratio[2] = raw-wide / raw-hot,
 * ratio[3] = raw-a2a / raw-hot (2 and 3: 0 at 1 x 1). */
static int overhead_once(struct bench *b, struct dq_cfg *c, int credits,
                         double ratio[4])
{
  struct bench_result raw = {0}, r;
  uint64_t bytes = c->bytes_per_producer;
  int n = c->nprod, hot, rc = RIVER_SUCCESS;

  for (hot = 0; hot < 2 && rc == RIVER_SUCCESS; hot++) {
    /* With reserve/commit records are not copied, and what goes out is
     * the queue's own few message buffers: compared with raw MPI sending
     * from as few buffers ("raw-hot"). */
    raw.measured = raw_stream(b, n, bytes, c->message_size, credits,
                              hot ? (size_t)credits : 0, (size_t)credits, 0);
    raw.ideal = raw.measured;
    raw.ok = 1;
    raw.seconds = (double)bytes * n / raw.measured;
    raw.records = bytes * (uint64_t)n / record_size;
    csv_row(b, c, hot ? "raw-hot" : "raw", 0,
            (double)c->message_size / 1024, &raw);
    c->policy = RIVER_DQ_PUSH;
    c->reserve = hot;
    rc = run_dq(b, c, &r);
    c->reserve = 0;
    r.ideal = raw.measured;  /* overhead is measured against raw MPI */
    csv_row(b, c, hot ? "river-reserve" : "river", 0,
            (double)c->message_size / 1024, &r);
    ratio[hot] = r.measured / raw.measured;
  }
  ratio[2] = ratio[3] = 0;
  if (n > 1 && rc == RIVER_SUCCESS) {
    double hot_rate = raw.measured, rate;
    size_t wbuf = (size_t)credits * (size_t)n + 1;
    rate = raw_stream(b, n, bytes, c->message_size, credits, wbuf, wbuf, 0);
    raw_row(b, c, "raw-wide", rate, hot_rate);
    ratio[2] = rate / hot_rate;
    rate = raw_stream(b, n, bytes, c->message_size, credits, 0, 0, 1);
    raw_row(b, c, "raw-a2a", rate, hot_rate);
    ratio[3] = rate / hot_rate;
  }
  return rc;
}

static int exp_overhead(struct bench *b)
{
  static const size_t sizes_[] = {64 << 10, 128 << 10, 256 << 10, 512 << 10,
                                  1 << 20};
  static const int widths[] = {1, 8};
  struct dq_cfg c;
  size_t i, w;
  int rc = RIVER_SUCCESS, rep, nrep = b->repeats < 64 ? b->repeats : 64;
  int credits = dq_opt.credits ? dq_opt.credits : RIVER_DQ_DEFAULT_CREDITS;

  base_cfg(b, &c, "overhead");
  for (w = 0; w < 2 && rc == RIVER_SUCCESS; w++) {
    int n = widths[w];
    if (2 * n > b->size) {
      if (b->rank == 0)
        printf("overhead: %dx%d skipped (needs %d ranks)\n", n, n, 2 * n);
      continue;
    }
    for (i = 0; i < sizeof sizes_ / sizeof sizes_[0] && rc == RIVER_SUCCESS;
         i++) {
      double ratio[4][64], four[4];
      if (dq_opt.message_size && sizes_[i] != dq_opt.message_size)
        continue;  /* --message-size: just that size (for profiling) */
      c.nprod = c.ncons = n;
      c.message_size = sizes_[i];
      c.bytes_per_producer = ((uint64_t)4 << 30) / (uint64_t)n;
      c.lean = 1;
      for (rep = 0; rep < nrep && rc == RIVER_SUCCESS; rep++) {
        rc = overhead_once(b, &c, credits, four);
        ratio[0][rep] = four[0];
        ratio[1][rep] = four[1];
        ratio[2][rep] = four[2];
        ratio[3][rep] = four[3];
      }
      if (rc == RIVER_SUCCESS && b->rank == 0) {
        printf("overhead  %dx%d %4zu KiB median of %d:", n, n,
               sizes_[i] >> 10, nrep);
        print_spread("put/raw", ratio[0], nrep);
        print_spread("reserve/raw-hot", ratio[1], nrep);
        if (n > 1) {
          double q[64];
          for (rep = 0; rep < nrep; rep++)
            q[rep] = ratio[3][rep] > 0 ? ratio[1][rep] / ratio[3][rep] : 0;
          print_spread("raw-wide/raw-hot", ratio[2], nrep);
          print_spread("raw-a2a/raw-hot", ratio[3], nrep);
          print_spread("reserve/raw-a2a", q, nrep);
        }
        printf("\n");
        fflush(stdout);
      }
    }
  }
  return rc;
}

/* CPU used by a consumer blocked in river_dq_get for `secs` seconds. */
static int wait_trickle(struct bench *b, MPI_Comm comm, double secs,
                        double *pct, uint64_t *got);

static int exp_wait(struct bench *b)
{
  river_dq *q = NULL;
  struct timespec c0, c1;
  double w0, w1, secs = b->seconds > 5 ? b->seconds : 10.0, pct = 0;
  double tpct = 0;
  uint64_t tgot[2] = {0, 0};
  const void *r;
  size_t n;
  int rc;
  MPI_Comm comm;

  if (b->size < 2) {
    bench_usage("wait needs 2 ranks");
    return RIVER_EINVAL;
  }
  MPI_Comm_split(MPI_COMM_WORLD, b->rank < 2 ? 0 : MPI_UNDEFINED, b->rank,
                 &comm);
  if (comm != MPI_COMM_NULL) {
    rc = river_dq_create(comm, b->rank == 0 ? RIVER_DQ_PRODUCER
                                            : RIVER_DQ_CONSUMER,
                         record_size, NULL, &q);
    if (rc == RIVER_SUCCESS && b->rank == 0) {
      struct timespec ts = {(time_t)secs, (long)((secs - (time_t)secs) * 1e9)};
      nanosleep(&ts, NULL);
      rc = river_dq_close(q);
    } else if (rc == RIVER_SUCCESS) {
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
      w0 = river_wtime();
      rc = river_dq_get(q, &r, &n, NULL);
      w1 = river_wtime();
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
      pct = 100.0 * ((double)(c1.tv_sec - c0.tv_sec)
                     + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec)) / (w1 - w0);
      rc = rc == RIVER_EOS ? RIVER_SUCCESS : RIVER_ESTATE;
      secs = w1 - w0;
    }
    river_dq_destroy(q);
    if (rc == RIVER_SUCCESS)
      rc = wait_trickle(b, comm, secs, &tpct, &tgot[b->rank == 0 ? 0 : 1]);
    MPI_Comm_free(&comm);
  } else {
    rc = RIVER_SUCCESS;
  }
  /* Rank 1 measured; rank 0 reports. The CSV row puts the CPU share (in
   * percent of a core) in the measured column and the 5% target in the
   * ideal column: ratio < 1 meets the target. */
  MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Bcast(&pct, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
  MPI_Bcast(&secs, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
  MPI_Bcast(&tpct, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
  MPI_Bcast(&tgot[1], 1, MPI_UINT64_T, 1, MPI_COMM_WORLD);
  if (rc == RIVER_SUCCESS && b->rank == 0 && tgot[0] != tgot[1]) {
    river_log(RIVER_LOG_ERROR, "wait: put %llu records every 2 ms, got %llu",
              (unsigned long long)tgot[0], (unsigned long long)tgot[1]);
    rc = RIVER_ESTATE;
  }
  if (b->rank == 0) {
    printf("wait: a consumer blocked %.2f s in river_dq_get used %.2f%% of a "
           "core (target < 5%%)\n", secs, pct);
    printf("wait: a consumer fed a message every 2 ms used %.2f%% of a core "
           "(the spin's worst case; no target)\n", tpct);
    if (b->csv) {
      fprintf(b->csv, "wait,river,1,1,0,1.000,%.4f,5.000,%.4f,%.4f,0\n", pct,
              pct / 5.0, secs);
      fprintf(b->csv, "wait-trickle,river,1,1,0,1.000,%.4f,0,0,%.4f,%llu\n",
              tpct, secs / 2, (unsigned long long)tgot[1]);
    }
  }
  return rc;
}

/* wait, second part: the producer puts one small message every 2 ms
 * for `secs` / 2 seconds; the CPU share of a consumer that gets them one
 * by one. Each wait is ~2 ms, just over the spin (RIVER_SPIN_US, 1 ms
 * with a CPU per rank): the spin's worst case. */
static int wait_trickle(struct bench *b, MPI_Comm comm, double secs,
                        double *pct, uint64_t *got)
{
  river_dq_opts o = RIVER_DQ_OPTS_INIT;
  river_dq *q = NULL;
  struct timespec c0, c1, gap = {0, 2000000L};
  unsigned char rec[record_size];
  uint64_t i, n = (uint64_t)(secs / 2 / 0.002);
  double w0, w1;
  const void *r;
  size_t k;
  int rc;

  o.message_size = record_size + 64;   /* one record and the header */
  rc = river_dq_create(comm, b->rank == 0 ? RIVER_DQ_PRODUCER
                                          : RIVER_DQ_CONSUMER,
                       record_size, &o, &q);
  *got = 0;
  if (rc == RIVER_SUCCESS && b->rank == 0) {
    memset(rec, 7, sizeof rec);
    for (i = 0; i < n && rc == RIVER_SUCCESS; i++) {
      nanosleep(&gap, NULL);
      rc = river_dq_put(q, rec, 1);
    }
    if (rc == RIVER_SUCCESS)
      rc = river_dq_close(q);
    *got = n;
  } else if (rc == RIVER_SUCCESS) {
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    w0 = river_wtime();
    while ((rc = river_dq_get(q, &r, &k, NULL)) == RIVER_SUCCESS)
      *got += k;
    w1 = river_wtime();
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    *pct = 100.0 * ((double)(c1.tv_sec - c0.tv_sec)
                    + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec)) / (w1 - w0);
    rc = rc == RIVER_EOS ? RIVER_SUCCESS : RIVER_ESTATE;
  }
  river_dq_destroy(q);
  return rc;
}

/* ---------------------------------------------------------- the suite */

static const struct bench_experiment experiments[] = {
  {"scaling", exp_scaling}, {"read", exp_read},
  {"read-slow", exp_read_slow}, {"write", exp_write},
  {"overhead", exp_overhead}, {"wait", exp_wait},
};

static const struct bench_opt opts[] = {
  {"credits", "N", "(2): each producer-consumer pair's (0: the "
   "queue's)", bench_opt_int, &dq_opt.credits, 0, INT_MAX},
  {"message-size", "BYTES", "(64Ki): the messages; overhead: that size "
   "only", bench_opt_size, &dq_opt.message_size, 1, SIZE_MAX},
};

const struct bench_suite bench_dq_suite = {
  .name = "dq",
  .experiments = experiments,
  .nexperiments = sizeof experiments / sizeof experiments[0],
  .opts = opts,
  .nopts = sizeof opts / sizeof opts[0],
};
