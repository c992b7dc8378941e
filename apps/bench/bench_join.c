/*
 * bench_join.c - river-bench join: the hash join (flows/join.yaml and
 * flows/join_replicated.yaml) on emulated joiner CPUs of --rate MB/s
 * each, three policies interleaved --repeats times per point:
 *
 *   river       join.yaml: GD readers -> DQ -> hash partitioners ->
 *               exchange on the key -> joiners (a joiner's share of the
 *               keys is fixed by the hash)
 *   replicated  join_replicated.yaml: the smaller relation broadcast to
 *               every joiner, the larger through a DQ to whichever
 *               joiner is ready (the paper's robust variant)
 *   static      join.yaml with fixed readers, reader i -> partitioner i
 *
 *   scaling     n = 1, 2, 4, ... ranks (and the job's size), unperturbed
 *   perturb     k = 0..n of the n joiners at 25% of their CPU
 *
 * R holds gensort rows 0..N-1, S every 16th of them (the same keys, so
 * each S record matches one R record: a small dimension relation, the
 * build side), N such that the unperturbed ideal takes about --seconds:
 * OUT has N/16 records of R's 100 bytes and S's 90-byte payload. Every output is
 * checked: its count and the sum and xor of its records' CRC-32s must
 * be the expected join's (computed from the rows here). Rows: measured
 * MB/s of input (R + S bytes per second), the fluid ideal
 * (app_join_ideal: the input over the joiners' summed rates), ratio.
 */
#include "bench.h"
#include "../common/ideal.h"
#include "../common/shipped.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 10000
#define OUT_SIZE 190   /* R's 100 bytes, S's payload */
#define S_EVERY 16     /* S holds every 16th row of R */

struct point {
  const char *exp;
  int n, k;
};

struct jctx {
  struct bench *b;
  MPI_Comm comm;
  const char *root, *spec, *spec_rep;
  uint64_t rows;               /* R's records; S has rows / S_EVERY */
  uint64_t want[3];            /* OUT's count, CRC sum, CRC xor */
};

/* The digest of records: count, sum and xor of CRC-32Cs. */
static void digest(const unsigned char *recs, size_t n, size_t rs,
                   uint64_t *d)
{
  uint32_t c;
  size_t i;

  for (i = 0; i < n; i++) {
    c = 0;   /* each record's own CRC */
    river_crc32c(recs + i * rs, rs, &c);
    d[0]++;
    d[1] += c;
    d[2] ^= c;
  }
}

/* R (every row) and S (every fourth) over the point's ranks, rank r its
 * slice; c->want gets the expected join's digest. */
static int make_inputs(struct jctx *c)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  river_schema *s = NULL;
  river_pcoll *pr = NULL, *ps = NULL;
  unsigned char *buf = malloc((size_t)CHUNK * 100), *out =
      malloc((size_t)CHUNK * OUT_SIZE);
  uint64_t first, end, at, mine[3] = {0, 0, 0};
  int r, n, rc;
  size_t k, i, m;

  MPI_Comm_rank(c->comm, &r);
  MPI_Comm_size(c->comm, &n);
  o.root = c->root;
  rc = buf && out ? river_schema_create_default(&s) : RIVER_ENOMEM;
  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_create(c->comm, "r", s, &o, &pr);
  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_create(c->comm, "s", s, &o, &ps);
  first = c->rows * (uint64_t)r / (uint64_t)n;
  end = c->rows * (uint64_t)(r + 1) / (uint64_t)n;
  for (at = first; rc == RIVER_SUCCESS && at < end; at += k) {
    k = end - at < CHUNK ? (size_t)(end - at) : CHUNK;
    rc = river_gensort_fill(at, k, 0, 0, buf);
    if (rc == RIVER_SUCCESS)
      rc = river_pcoll_write(pr, buf, k);
    for (i = 0, m = 0; rc == RIVER_SUCCESS && i < k; i++)
      if ((at + i) % S_EVERY == 0) {   /* an S row: matches this R row */
        memcpy(buf + m * 100, buf + i * 100, 100);
        memcpy(out + m * OUT_SIZE, buf + i * 100, 100);
        memcpy(out + m * OUT_SIZE + 100, buf + i * 100 + 10, 90);
        m++;
      }
    if (rc == RIVER_SUCCESS && m > 0)
      rc = river_pcoll_write(ps, buf, m);
    digest(out, m, OUT_SIZE, mine);
  }
  if (pr != NULL) {
    int crc = river_pcoll_commit(pr);
    rc = rc != RIVER_SUCCESS ? rc : crc;
  }
  if (ps != NULL) {
    int crc = river_pcoll_commit(ps);
    rc = rc != RIVER_SUCCESS ? rc : crc;
  }
  MPI_Allreduce(mine, c->want, 2, MPI_UINT64_T, MPI_SUM, c->comm);
  MPI_Allreduce(&mine[2], &c->want[2], 1, MPI_UINT64_T, MPI_BXOR, c->comm);
  river_schema_destroy(s);
  free(buf);
  free(out);
  return rc;
}

/* OUT's digest equals c->want: rank r reads its share of the
 * partitions. */
static int check_out(struct jctx *c, int *ok)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  river_pcoll *pc = NULL;
  river_pcoll_info info;
  unsigned char *buf = NULL;
  uint64_t mine[3] = {0, 0, 0}, got[3];
  int r, n, p, rc;

  *ok = 0;
  MPI_Comm_rank(c->comm, &r);
  MPI_Comm_size(c->comm, &n);
  o.root = c->root;
  o.hold = RIVER_PCOLL_HOLD_NONE;  /* the bench's own output: each rank
                                      opens its share as it reads it */
  rc = river_pcoll_open(c->comm, "out", &o, &pc);
  if (rc != RIVER_SUCCESS)
    return rc;
  river_pcoll_info_get(pc, &info);
  if ((buf = malloc(info.block_size)) == NULL)
    rc = RIVER_ENOMEM;
  for (p = (int)((int64_t)info.npartitions * r / n);
       rc == RIVER_SUCCESS
       && p < (int)((int64_t)info.npartitions * (r + 1) / n); p++) {
    uint64_t b, nb = 0;
    size_t rpb, got_n;
    river_pcoll_blocks(pc, p, &rpb, &nb);
    for (b = 0; rc == RIVER_SUCCESS && b < nb; b++) {
      rc = river_pcoll_read_block(pc, p, b, buf, info.block_size, &got_n);
      if (rc == RIVER_SUCCESS)
        digest(buf, got_n, info.record_size, mine);
    }
  }
  MPI_Allreduce(mine, got, 2, MPI_UINT64_T, MPI_SUM, c->comm);
  MPI_Allreduce(&mine[2], &got[2], 1, MPI_UINT64_T, MPI_BXOR, c->comm);
  *ok = rc == RIVER_SUCCESS && info.record_size == OUT_SIZE
        && memcmp(got, c->want, sizeof got) == 0;
  river_pcoll_close(pc);
  free(buf);
  return rc;
}

/* One join (policy 0 river, 1 replicated, 2 static); *seconds its time;
 * OUT checked and removed. */
static int run_join(struct jctx *c, const struct point *pt, int policy,
                    double *seconds, int *ok)
{
  char kv[16][1100];
  const char *params[16];
  int n = 0, i, rc;

  snprintf(kv[n++], sizeof kv[0], "r=r");
  snprintf(kv[n++], sizeof kv[0], "s=s");
  snprintf(kv[n++], sizeof kv[0], "out=out");
  snprintf(kv[n++], sizeof kv[0], "key=key");
  snprintf(kv[n++], sizeof kv[0], "build=1");   /* S: the smaller */
  snprintf(kv[n++], sizeof kv[0], "root=%s", c->root);
  snprintf(kv[n++], sizeof kv[0], "cpu_rate=%.0f", c->b->rate_mbps * MB);
  snprintf(kv[n++], sizeof kv[0], "message_size=%s", APP_SORT_EMUL_MSG);
  if (policy != 1)
    snprintf(kv[n++], sizeof kv[0], "credits=%s", APP_SORT_EMUL_CREDITS);
  if (pt->k > 0)
    snprintf(kv[n++], sizeof kv[0], "perturb=cpu:0-%d=0.25", pt->k - 1);
  if (policy == 1) {   /* S, the build relation, to every joiner */
    snprintf(kv[n++], sizeof kv[0], "r_edge=dq");
    snprintf(kv[n++], sizeof kv[0], "s_edge=broadcast");
    snprintf(kv[n++], sizeof kv[0], "r_credits=%s", APP_SORT_EMUL_CREDITS);
    snprintf(kv[n++], sizeof kv[0], "s_credits=64");
  } else if (policy == 2) {
    snprintf(kv[n++], sizeof kv[0], "read_policy=mirror-nogd");
    snprintf(kv[n++], sizeof kv[0], "spread=one-to-one");
  }
  for (i = 0; i < n; i++)
    params[i] = kv[i];
  *ok = 0;
  rc = bench_time_flow(c->comm, policy == 1 ? c->spec_rep : c->spec, params,
                       n, seconds);
  if (rc == RIVER_SUCCESS)
    rc = check_out(c, ok);
  bench_drop(c->comm, c->root, "out");
  return rc;
}

/* R's and S's records together. */
static uint64_t in_records(uint64_t rows)
{
  return rows + (rows + S_EVERY - 1) / S_EVERY;
}

static double ideal_rate(const struct jctx *c, const struct point *pt)
{
  struct app_machine m = {0, c->b->rate_mbps * MB, NULL};
  river_perturb *p = NULL;
  double bytes = (double)in_records(c->rows) * 100, t;
  char spec[64];

  if (pt->k > 0) {
    snprintf(spec, sizeof spec, "cpu:0-%d=0.25", pt->k - 1);
    river_perturb_parse(spec, &p);
  }
  m.perturb = p;
  t = app_join_ideal(&m, bytes, pt->n);
  river_perturb_destroy(p);
  return t > 0 ? bytes / t : 0;
}

static int run_point(struct bench *b, struct jctx *c, const struct point *pt)
{
  static const char *names[3] = {"river", "replicated", "static"};
  double ratios[3][64];
  int nrep = b->repeats < 64 ? b->repeats : 64, rep, pol, rc = RIVER_SUCCESS;

  c->rows = (uint64_t)(b->rate_mbps * MB * b->seconds * pt->n / 100
                       / (1 + 1.0 / S_EVERY));
  if (c->rows < 4000)
    c->rows = 4000;
  MPI_Comm_split(MPI_COMM_WORLD, b->rank < pt->n ? 0 : MPI_UNDEFINED,
                 b->rank, &c->comm);
  if (c->comm != MPI_COMM_NULL)
    rc = make_inputs(c);
  for (rep = 0; rep < nrep; rep++)
    for (pol = 0; pol < 3; pol++) {
      struct bench_result res;
      double secs = 0;
      int ok = 0, frc = rc;

      memset(&res, 0, sizeof res);
      if (c->comm != MPI_COMM_NULL && rc == RIVER_SUCCESS)
        frc = run_join(c, pt, pol, &secs, &ok);
      bench_world_wait();
      res.seconds = secs;
      res.records = in_records(c->rows);
      res.measured = secs > 0 && frc == RIVER_SUCCESS
                     ? (double)res.records * 100 / secs : 0;
      res.ideal = ideal_rate(c, pt);
      res.ok = ok;
      frc = bench_end_run(b, &res, frc);
      if (frc != RIVER_SUCCESS && rc == RIVER_SUCCESS)
        rc = frc;
      bench_row(b, pt->exp, names[pol], pt->n, pt->n, pt->k,
                pt->k ? 0.25 : 1.0, &res);
      ratios[pol][rep] = res.ideal > 0 ? res.measured / res.ideal : 0;
    }
  if (b->rank == 0 && nrep > 0) {
    for (pol = 0; pol < 3; pol++)
      bench_median(ratios[pol], nrep);
    printf("%-8s n=%-2d k=%-2d median of %d: river %.1f%% (%.1f..%.1f), "
           "replicated %.1f%% (%.1f..%.1f), static %.1f%% (%.1f..%.1f) of "
           "the fluid ideal\n", pt->exp, pt->n, pt->k, nrep,
           100 * ratios[0][nrep / 2], 100 * ratios[0][0],
           100 * ratios[0][nrep - 1], 100 * ratios[1][nrep / 2],
           100 * ratios[1][0], 100 * ratios[1][nrep - 1],
           100 * ratios[2][nrep / 2], 100 * ratios[2][0],
           100 * ratios[2][nrep - 1]);
    fflush(stdout);
  }
  if (c->comm != MPI_COMM_NULL) {
    int r;
    MPI_Comm_rank(c->comm, &r);
    if (r == 0) {
      river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
      o.root = c->root;
      river_pcoll_remove("r", &o);
      river_pcoll_remove("s", &o);
    }
    MPI_Comm_free(&c->comm);
  }
  bench_world_wait();
  return rc;
}

static int run_points(struct bench *b, const struct point *pts, int npts)
{
  char root[1024], spec[4096] = "", spec_rep[4096] = "";
  struct jctx c;
  int i, rc;

  if (b->perturb) {
    bench_usage("join experiments set their own perturbations: no "
                "--perturb");
    return RIVER_EINVAL;
  }
  rc = app_find_flow("river-bench join", "join.yaml", spec, sizeof spec);
  if (rc == RIVER_SUCCESS)
    rc = app_find_flow("river-bench join", "join_replicated.yaml", spec_rep,
                       sizeof spec_rep);
  MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rc == RIVER_SUCCESS)
    rc = bench_make_root(root, sizeof root, "join");
  if (rc != RIVER_SUCCESS)
    return rc;
  memset(&c, 0, sizeof c);
  c.b = b;
  c.root = root;
  c.spec = spec;
  c.spec_rep = spec_rep;
  for (i = 0; i < npts && rc == RIVER_SUCCESS; i++)
    rc = run_point(b, &c, &pts[i]);
  bench_world_wait();
  if (b->rank == 0)
    bench_rm_tree(root);
  return rc;
}

static int exp_scaling(struct bench *b)
{
  struct point pts[32];
  int n, np = 0;

  for (n = 1; n < b->size && np < 31; n *= 2)
    pts[np++] = (struct point){"scaling", n, 0};
  pts[np++] = (struct point){"scaling", b->size, 0};
  return run_points(b, pts, np);
}

static int exp_perturb(struct bench *b)
{
  struct point *pts = malloc((size_t)(b->size + 1) * sizeof *pts);
  int k, rc;

  if (pts == NULL)
    return RIVER_ENOMEM;
  for (k = 0; k <= b->size; k++)
    pts[k] = (struct point){"perturb", b->size, k};
  rc = run_points(b, pts, b->size + 1);
  free(pts);
  return rc;
}

static const struct bench_experiment experiments[] = {
  {"scaling", exp_scaling},
  {"perturb", exp_perturb},
};

/* No options of its own: the shared ones only. */
const struct bench_suite bench_join_suite = {
  .name = "join",
  .experiments = experiments,
  .nexperiments = sizeof experiments / sizeof experiments[0],
  .notes = "    (--rate: each joiner's CPU; --seconds: the ideal run;\n"
           "     no --perturb: the experiments set their own)\n",
};
