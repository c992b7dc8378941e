/*
 * river-bench - River's benchmarks, after the River paper's figures.
 *
 *   mpirun -n N river-bench SUITE EXPERIMENT [--perturb SPEC] [--csv FILE]
 *                           [--bind] ...
 *
 * This file holds main, the options, the result rows and the CSV; it is
 * driven by the suite table below, one line per suite, which names each
 * suite's usage and its two entry points (is this one of your
 * experiments; run it). Each suite is a file of its own: dq (the
 * distributed queue, bench_dq.c), gd (graduated declustering,
 * bench_gd.c), sort (flows/sort.yaml, bench_sort.c), join
 * (flows/join.yaml, bench_join.c) and scale (a queue's memory and work
 * per message against the ranks, bench_scale.c: its CSV has columns of
 * its own).
 *
 * Every measured configuration is printed (rank 0) and, with --csv,
 * written as a row with the columns
 *   experiment,policy,n_producers,n_consumers,k_perturbed,factor,
 *   measured_MBps,ideal_MBps,ratio,seconds,records
 * (gd adds finish_spread) where ideal is the fluid ideal from the
 * configured rates and ratio = measured / ideal. Adaptive runs and their
 * baselines run on the same code path and are divided by the same ideal,
 * so their ratios compare directly.
 *
 * Rates are emulated (river/throttle.h): token buckets that sleep, so many
 * ranks share two cores without disturbing the measurement, as long as
 * the emulated rates stay well below what the machine can really move.
 */
#define _XOPEN_SOURCE 700   /* nftw */
#include "bench.h"
#include "../common/number.h"

#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A suite: its name, its usage (what follows "river-bench NAME "), whether
 * its rows carry finish_spread, and its two entry points. */
struct suite {
  const char *name;
  const char *usage;
  int spread;
  const char *csv_header;  /* NULL: bench_row's columns */
  int (*known)(const char *experiment);
  int (*run)(struct bench *b, const char *experiment);
};

static const struct suite suites[] = {
  {"dq", bench_dq_usage, 0, NULL, bench_dq_known, bench_dq_run},
  {"gd", bench_gd_usage, 1, NULL, bench_gd_known, bench_gd_run},
  {"sort", bench_sort_usage, 0, NULL, bench_sort_known, bench_sort_run},
  {"join", bench_join_usage, 0, NULL, bench_join_known, bench_join_run},
  {"scale", bench_scale_usage, 0, bench_scale_csv_header, bench_scale_known,
   bench_scale_run},
};

#define NSUITES (sizeof suites / sizeof suites[0])

/* ------------------------------------------------------------- helpers */

void bench_usage(const char *msg)
{
  int rank = 0;
  size_t i;

  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0)
    return;
  fprintf(stderr, "river-bench: %s\n", msg);
  for (i = 0; i < NSUITES; i++)
    fprintf(stderr, "%sriver-bench %s %s", i ? "       " : "usage: ",
            suites[i].name, suites[i].usage);
  fprintf(stderr, "every suite: --bind binds each rank the launcher left "
          "unbound to a core of its node (as river --bind)\n");
}

const struct bench_experiment *bench_find(const struct bench_experiment *t,
                                          size_t n, const char *name)
{
  size_t i;

  for (i = 0; i < n; i++)
    if (strcmp(name, t[i].name) == 0)
      return &t[i];
  return NULL;
}

void bench_row(struct bench *b, const char *experiment, const char *policy,
               int n1, int n2, int k, double factor,
               const struct bench_result *r)
{
  double ratio = r->ideal > 0 ? r->measured / r->ideal : 0.0;

  if (b->rank != 0)
    return;
  printf("%-9s %-11s %3d x %-3d k=%-2d f=%-5.2f %9.2f MB/s  ideal %9.2f  "
         "ratio %.3f  (%.2f s, %llu records", experiment, policy, n1, n2, k,
         factor, r->measured / MB, r->ideal / MB, ratio, r->seconds,
         (unsigned long long)r->records);
  if (b->spread)
    printf(", finish spread %.1f%%", 100 * r->spread);
  printf(")%s\n", r->ok ? "" : "  DATA CHECK FAILED");
  fflush(stdout);
  if (b->csv) {
    fprintf(b->csv, "%s,%s,%d,%d,%d,%.3f,%.3f,%.3f,%.4f,%.4f,%llu",
            experiment, policy, n1, n2, k, factor, r->measured / MB,
            r->ideal / MB, ratio, r->seconds, (unsigned long long)r->records);
    if (b->spread)
      fprintf(b->csv, ",%.4f", r->spread);
    fprintf(b->csv, "\n");
  }
}

void bench_world_wait(void)
{
  MPI_Request req;
  struct timespec ts = {0, 1000};
  int done = 0;

  /* river_wait backs off to 1 ms sleeps; ranks that idle through a
   * whole run wake less often here (up to every 10 ms), so a 1 x 1 run
   * on a 16-rank job is not disturbed by 14 ranks waking 1000 times a
   * second each. */
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  for (;;) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done)
      break;
    nanosleep(&ts, NULL);
    if (ts.tv_nsec < 10000000L)
      ts.tv_nsec *= 2;
  }
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;

  return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
  if (n < 1)
    return 0;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return v[n / 2];
}

double bench_slowest_factor(const river_perturb *p, int kind, int n)
{
  double f, lo = 1.0;
  int i;

  for (i = 0; p && i < n; i++)
    if (river_perturb_factor(p, kind, i, 0.0, &f) == RIVER_SUCCESS
        && f < lo)
      lo = f;
  return lo;
}

int bench_make_root(char *root, size_t len, const char *what)
{
  int rank;

  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  root[0] = '\0';
  if (rank == 0) {
    const char *tmp = getenv("TMPDIR");
    snprintf(root, len, "%s/river-bench-%s-XXXXXX",
             tmp && *tmp ? tmp : "/tmp", what);
    if (mkdtemp(root) == NULL)
      root[0] = '\0';
  }
  MPI_Bcast(root, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (root[0] != '\0')
    return RIVER_SUCCESS;
  if (rank == 0)
    river_log(RIVER_LOG_ERROR, "%s: cannot make a temporary root", what);
  return RIVER_EIO;
}

int bench_time_flow(MPI_Comm comm, const char *spec,
                    const char *const *params, int n, double *seconds)
{
  river_flow *f = NULL;
  MPI_Request req;
  double t0;
  int rc = river_flow_load(comm, spec, params, n, &f);

  MPI_Ibarrier(comm, &req);
  river_wait(&req, MPI_STATUS_IGNORE);
  t0 = river_wtime();
  if (rc == RIVER_SUCCESS)
    rc = river_flow_go(f);
  *seconds = river_wtime() - t0;
  river_flow_destroy(f);
  return rc;
}

void bench_drop(MPI_Comm comm, const char *root, const char *name)
{
  MPI_Request req;
  int r;

  MPI_Comm_rank(comm, &r);
  if (r == 0) {
    river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
    o.root = root;
    river_pcoll_remove(name, &o);
  }
  MPI_Ibarrier(comm, &req);
  river_wait(&req, MPI_STATUS_IGNORE);
}

static int rm_one(const char *path, const struct stat *sb, int flag,
                  struct FTW *f)
{
  (void)sb;
  (void)flag;
  (void)f;
  return remove(path);
}

void bench_rm_tree(const char *dir)
{
  nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The watchdog (RIVER_TIMEOUT) ended a wait on this rank: some rank may
 * never answer, so the collectives below would wait for ever. */
static void abort_if_timed_out(int rc)
{
  if (rc != RIVER_ETIMEDOUT)
    return;
  river_log(RIVER_LOG_ERROR, "%s (%s): aborting the job",
            river_strerror(rc), river_err_name(rc));
  fflush(NULL);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

int bench_end_run(struct bench *b, struct bench_result *res, int rc)
{
  abort_if_timed_out(rc);
  MPI_Bcast(res, sizeof *res, MPI_BYTE, 0, MPI_COMM_WORLD);
  rc = rc == RIVER_SUCCESS && !res->ok ? RIVER_ECORRUPT : rc;
  MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!res->ok)
    b->failures++;
  return rc;
}

/* ----------------------------------------------------------------- main */

/* Open the CSV (rank 0) and write its header. */
static int open_csv(struct bench *b, const char *path)
{
  b->csv = fopen(path, "w");
  if (b->csv == NULL) {
    river_log(RIVER_LOG_ERROR, "--csv %s: %s", path, strerror(errno));
    return RIVER_EIO;
  }
  if (b->csv_header != NULL)
    fprintf(b->csv, "%s\n", b->csv_header);
  else
    fprintf(b->csv, "experiment,policy,n_producers,n_consumers,"
                    "k_perturbed,factor,measured_MBps,ideal_MBps,ratio,"
                    "seconds,records%s\n",
            b->spread ? ",finish_spread" : "");
  return RIVER_SUCCESS;
}

/* Parse the options after SUITE EXPERIMENT into b. Returns 1 for --help,
 * else RIVER_SUCCESS or a RIVER_E* code (said on rank 0). */
static int parse_opts(struct bench *b, int argc, char **argv)
{
  static const struct option opts[] = {
    {"perturb", required_argument, NULL, 'p'},
    {"csv", required_argument, NULL, 'c'},
    {"rate", required_argument, NULL, 'r'},
    {"seconds", required_argument, NULL, 's'},
    {"credits", required_argument, NULL, 'k'},
    {"message-size", required_argument, NULL, 'm'},
    {"outstanding", required_argument, NULL, 'o'},
    {"block-size", required_argument, NULL, 'b'},
    {"seek-ms", required_argument, NULL, 'e'},
    {"cpu-rate", required_argument, NULL, 'u'},
    {"repeats", required_argument, NULL, 'R'},
    {"records", required_argument, NULL, 'n'},
    {"bind", no_argument, NULL, 'B'},
    {"group", required_argument, NULL, 'g'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}};
  const char *csv = NULL;
  char *end;
  uint64_t v;
  int o;

  opterr = 0;
  while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (o) {
    case 'p': b->perturb_text = optarg; break;
    case 'c': csv = optarg; break;
    case 'r': b->rate_mbps = strtod(optarg, &end); break;
    case 's': b->seconds = strtod(optarg, &end); break;
    case 'k': b->credits = atoi(optarg); break;
    case 'm':
      if (app_parse_u64("--message-size", optarg, 1, SIZE_MAX, 1, &v)
          != RIVER_SUCCESS)
        return RIVER_EINVAL;
      b->message_size = (size_t)v;
      b->message_size_set = 1;
      break;
    case 'o': b->outstanding = atoi(optarg); break;
    case 'b':
      if (app_parse_u64("--block-size", optarg, 0, SIZE_MAX, 1, &v)
          != RIVER_SUCCESS)
        return RIVER_EINVAL;
      b->block_size = (size_t)v;
      break;
    case 'e': b->seek_ms = strtod(optarg, &end); break;
    case 'u': b->cpu_rate_mbps = strtod(optarg, &end); break;
    case 'R': b->repeats = atoi(optarg); break;
    case 'n':
      if (app_parse_u64("--records", optarg, 0, UINT64_MAX, 1, &v)
          != RIVER_SUCCESS)
        return RIVER_EINVAL;
      b->records = v;
      break;
    case 'B': b->bind = 1; break;
    case 'g': b->group = atoi(optarg); break;
    case 'h': bench_usage("help"); return 1;
    default: bench_usage("unknown option"); return RIVER_EINVAL;
    }
  }
  if (!(b->rate_mbps > 0) || !(b->seconds > 0) || b->credits < 0
      || b->outstanding < 1 || b->block_size < 100 || !(b->seek_ms >= 0)
      || !(b->cpu_rate_mbps >= 0) || b->repeats < 1 || b->repeats > 63
      || b->records < 1 || b->records > ((uint64_t)1 << 40)
      || b->group < 0 || b->group == 1) {
    bench_usage("--rate and --seconds must be > 0, --credits >= 0, "
                "--outstanding >= 1, --block-size >= 100, --seek-ms >= 0, "
                "--cpu-rate >= 0, --repeats 1..63, --records 1..2^40, "
                "--group 0 or >= 2");
    return RIVER_EINVAL;
  }
  if (b->perturb_text
      && river_perturb_parse(b->perturb_text, &b->perturb) != RIVER_SUCCESS)
    return RIVER_EFORMAT;
  if (csv && b->rank == 0)
    return open_csv(b, csv);
  return RIVER_SUCCESS;
}

/* The suite called name, or NULL. */
static const struct suite *find_suite(const char *name)
{
  size_t i;

  for (i = 0; i < NSUITES; i++)
    if (strcmp(name, suites[i].name) == 0)
      return &suites[i];
  return NULL;
}

/* The defaults (see doc/results.md for why): 40 MB/s emulated disks, runs
 * of about 1.5 s, 64 KiB messages and 2 credits per pair, so that what a
 * slow consumer has queued at the end of a run (credits x producers x
 * message size) is small beside the run; for GD, 256 KiB blocks, 2
 * requests out per mirror, and a 0.5 ms seek when seeks are on (a block's
 * 6.5 ms at 40 MB/s plus 8%, as a 10 MB/s disk's 512 KiB request plus a
 * 4 ms seek). */
static void set_defaults(struct bench *b)
{
  b->rate_mbps = 40;
  b->seconds = 1.5;
  b->credits = 2;
  b->message_size = 64 << 10;
  b->outstanding = RIVER_GD_DEFAULT_OUTSTANDING;
  b->block_size = 256 << 10;
  b->seek_ms = 0.5;
  b->repeats = 3;
  b->records = 10000000;   /* sort real: 1 GB of gensort records */
}

int main(int argc, char **argv)
{
  struct bench b = {0};
  const struct suite *s = NULL;
  int rc;

  if (river_init(&argc, &argv) != RIVER_SUCCESS)
    return 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &b.size);
  set_defaults(&b);
  if (argc < 3 || (s = find_suite(argv[1])) == NULL) {
    bench_usage(argc < 3 ? "missing suite and experiment" : "unknown suite");
    river_finalize();
    return 2;
  }
  if (!s->known(argv[2])) {
    bench_usage("unknown experiment");
    river_finalize();
    return 2;
  }
  b.spread = s->spread;
  b.csv_header = s->csv_header;
  rc = parse_opts(&b, argc - 2, argv + 2);
  if (rc == RIVER_SUCCESS && b.bind) {
    int outcome = 0;   /* river topo shows where each rank ended up */
    rc = river_topo_bind(MPI_COMM_WORLD, &outcome);
  }
  if (rc == RIVER_SUCCESS)
    rc = s->run(&b, argv[2]);
  abort_if_timed_out(rc);
  if (b.csv)
    fclose(b.csv);
  river_perturb_destroy(b.perturb);
  if (rc > 0)
    rc = RIVER_SUCCESS; /* --help */
  if (rc != RIVER_SUCCESS && b.rank == 0)
    river_log(RIVER_LOG_ERROR, "%s %s: %s", argv[1], argv[2],
              river_strerror(rc));
  river_finalize();
  return rc != RIVER_SUCCESS || b.failures ? 1 : 0;
}
