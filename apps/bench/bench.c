/*
 * river-bench - River's benchmarks, after the River paper's figures.
 *
 *   mpirun -n N river-bench SUITE EXPERIMENT [--perturb SPEC] [--csv FILE]
 *                           [--bind] ...
 *
 * This file holds main, the options every suite shares (struct bench),
 * the one option parser, the result rows and the CSV. It names the
 * suites in one place only, the suite table SUITES below. Each suite is
 * a file of its own that defines a struct bench_suite (bench.h): its
 * experiments and its own options, kept in a struct of its own that its
 * option table points into. The parser reads the shared options and the
 * chosen suite's, and refuses another suite's by name ("--block-size is
 * not an option of suite 'dq'"); the usage lists each suite's own. A new
 * suite is one new file plus its line in SUITES (and its file in
 * apps/local.mk): nothing else here changes. The suites: dq (the
 * distributed queue, bench_dq.c), gd (graduated declustering,
 * bench_gd.c), sort (flows/sort.yaml, bench_sort.c), join
 * (flows/join.yaml, bench_join.c) and scale (a queue's memory and work
 * per message against the ranks, bench_scale.c: its CSV has columns of
 * its own) and net (a many-to-many exchange across nodes, direct and
 * combined per node, bench_net.c: MPI's own costs, its own CSV).
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
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The suite table: X(NAME) for each suite, whose file bench_NAME.c
 * defines bench_NAME_suite. The only place this file names a suite. */
#define SUITES(X) \
  X(dq)    /* the distributed queue */ \
  X(gd)    /* graduated declustering */ \
  X(sort)  /* flows/sort.yaml; real: against GNU sort */ \
  X(join)  /* flows/join.yaml and join_replicated.yaml */ \
  X(scale) /* a queue's memory and work per message against the ranks */ \
  X(net)   /* crossing nodes: direct against node-aggregated exchange */

#define SUITE_DECLARE(name) \
  extern const struct bench_suite bench_##name##_suite;
#define SUITE_ENTRY(name) &bench_##name##_suite,
SUITES(SUITE_DECLARE)
static const struct bench_suite *const suites[] = {SUITES(SUITE_ENTRY)};

#define NSUITES (sizeof suites / sizeof suites[0])

/* The run's state, with the options every suite shares at their
 * defaults (see doc/results.md for why): 40 MB/s emulated disks, runs of
 * about 1.5 s, 3 runs of each policy. The suites' own defaults are in
 * their files. */
static struct bench state = {.rate_mbps = 40, .seconds = 1.5, .repeats = 3};
static const char *csv_path;   /* --csv */

static const struct bench_opt shared_opts[] = {
  {"csv", "FILE", "a CSV row for each run (rank 0 writes it)",
   bench_opt_string, &csv_path, 0, 0},
  {"perturb", "SPEC", "slow disks or CPUs: \"disk:1=0.5;cpu:3=0.25\" "
   "(perturb.h)", bench_opt_string, &state.perturb_text, 0, 0},
  {"rate", "MBPS", "(40): the emulated disk rate, MB/s", bench_opt_positive,
   &state.rate_mbps, 0, 0},
  {"seconds", "S", "(1.5): about how long a run takes", bench_opt_positive,
   &state.seconds, 0, 0},
  {"repeats", "R", "(3, 1..63): runs of each policy, interleaved",
   bench_opt_int, &state.repeats, 1, 63},
  {"bind", NULL, "bind unbound ranks to their node's cores (river "
   "--bind)", bench_opt_flag, &state.bind, 0, 0},
  {"quiet", NULL, "no progress line (river/progress.h) on stderr",
   bench_opt_flag, &state.quiet, 0, 0},
};

#define NSHARED (sizeof shared_opts / sizeof shared_opts[0])

/* ------------------------------------------------------------- helpers */

/* An option's usage line. */
static void usage_opt(const struct bench_opt *o)
{
  char head[48];

  snprintf(head, sizeof head, "--%s%s%s", o->name, o->arg ? " " : "",
           o->arg ? o->arg : "");
  fprintf(stderr, "    %-22s %s\n", head, o->help);
}

void bench_usage(const char *msg)
{
  const struct bench_suite *s;
  size_t i, j;

  if (state.rank != 0)
    return;
  fprintf(stderr, "river-bench: %s\n"
          "usage: river-bench SUITE EXPERIMENT [OPTION]...\n"
          "  BYTES, N and LIST: digits, then k, M, G, T (\xc3\x97" "1000) or "
          "Ki, Mi, Gi, Ti\n  (\xc3\x97" "1024): 64Ki is 65536, 10M 10000000 "
          "(as river's options); MBPS:\n  MB/s, 1 MB = 1000000 bytes\n"
          "  options of every suite:\n", msg);
  for (i = 0; i < NSHARED; i++)
    usage_opt(&shared_opts[i]);
  for (i = 0; i < NSUITES; i++) {
    s = suites[i];
    fprintf(stderr, "  river-bench %s ", s->name);
    for (j = 0; j < s->nexperiments; j++)
      fprintf(stderr, "%s%s", j ? "|" : "", s->experiments[j].name);
    fprintf(stderr, "\n");
    for (j = 0; j < s->nopts; j++)
      usage_opt(&s->opts[j]);
    if (s->notes)
      fprintf(stderr, "%s", s->notes);
  }
}

/* The experiment of s called name, or NULL. */
static const struct bench_experiment *find_experiment(
    const struct bench_suite *s, const char *name)
{
  size_t i;

  for (i = 0; i < s->nexperiments; i++)
    if (strcmp(name, s->experiments[i].name) == 0)
      return &s->experiments[i];
  return NULL;
}

void bench_row(struct bench *b, const char *experiment, const char *policy,
               int n1, int n2, int k, double factor,
               const struct bench_result *r)
{
  double ratio = r->ideal > 0 ? r->measured / r->ideal : 0.0;

  if (b->rank != 0)
    return;
  b->done_records += r->records;
  b->done_bytes += (uint64_t)(r->measured * r->seconds);
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
  MPI_Abort(MPI_COMM_WORLD, 124);   /* as timeout(1): exit 124 */
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

/* ------------------------------------------------------------- options */

/* val as an integer of o's range (sizes: river_parse_size's suffixes
 * taken), said once with "--NAME" if it is not one. */
static int parse_u64(const struct bench_opt *o, const char *val, int sizes,
                     uint64_t *v)
{
  char flag[64];

  snprintf(flag, sizeof flag, "--%s", o->name);
  return app_parse_u64(flag, val, o->min, o->max, sizes, v);
}

int bench_opt_int(const struct bench_opt *o, const char *val)
{
  uint64_t v;

  if (parse_u64(o, val, 0, &v) != RIVER_SUCCESS)
    return RIVER_EINVAL;
  *(int *)o->dst = (int)v;
  return RIVER_SUCCESS;
}

int bench_opt_size(const struct bench_opt *o, const char *val)
{
  uint64_t v;

  if (parse_u64(o, val, 1, &v) != RIVER_SUCCESS)
    return RIVER_EINVAL;
  *(size_t *)o->dst = (size_t)v;
  return RIVER_SUCCESS;
}

int bench_opt_u64(const struct bench_opt *o, const char *val)
{
  return parse_u64(o, val, 1, (uint64_t *)o->dst);
}

/* A finite double, > 0 or (zero_ok) >= 0; the whole of val. */
static int opt_double(const struct bench_opt *o, const char *val,
                      int zero_ok)
{
  char *end = NULL;
  double v = 0;

  errno = 0;
  if (val != NULL)
    v = strtod(val, &end);
  if (val == NULL || end == val || *end != '\0' || errno != 0
      || !isfinite(v) || v < 0 || (v == 0 && !zero_ok)) {
    if (state.rank == 0)
      river_log(RIVER_LOG_ERROR, "--%s %s: expected a number %s 0", o->name,
                val ? val : "", zero_ok ? ">=" : ">");
    return RIVER_EINVAL;
  }
  *(double *)o->dst = v;
  return RIVER_SUCCESS;
}

int bench_opt_positive(const struct bench_opt *o, const char *val)
{
  return opt_double(o, val, 0);
}

int bench_opt_nonnegative(const struct bench_opt *o, const char *val)
{
  return opt_double(o, val, 1);
}

int bench_opt_string(const struct bench_opt *o, const char *val)
{
  *(const char **)o->dst = val;
  return RIVER_SUCCESS;
}

int bench_opt_flag(const struct bench_opt *o, const char *val)
{
  (void)val;
  *(int *)o->dst = 1;
  return RIVER_SUCCESS;
}

/* The option called name in t[0..n), or NULL. */
static const struct bench_opt *find_opt(const struct bench_opt *t, size_t n,
                                        const char *name)
{
  size_t i;

  for (i = 0; t && i < n; i++)
    if (strcmp(name, t[i].name) == 0)
      return &t[i];
  return NULL;
}

/* getopt_long's table: the shared options, then every suite's (each name
 * once), then --help; NULL if out of memory. Every suite's, so that an
 * abbreviation matches as it always did, and another suite's option is
 * recognized and refused by name rather than said unknown. Entry i
 * returns OPT_VAL + i: distinct values, so that glibc calls an
 * abbreviation of two options ambiguous (it takes the first of two
 * that return the same). */
#define OPT_VAL 256

static struct option *getopt_table(void)
{
  struct option *t;
  size_t n = NSHARED + 2, k = 0, i, j, m;

  for (i = 0; i < NSUITES; i++)
    n += suites[i]->nopts;
  t = calloc(n, sizeof *t);
  if (t == NULL)
    return NULL;
  for (i = 0; i < NSUITES + 1; i++)
    for (j = 0; j < (i == 0 ? NSHARED : suites[i - 1]->nopts); j++) {
      const struct bench_opt *o = i == 0 ? &shared_opts[j]
                                         : &suites[i - 1]->opts[j];
      for (m = 0; m < k && strcmp(t[m].name, o->name) != 0; m++)
        ;
      if (m == k) {
        t[k] = (struct option){o->name, o->arg ? required_argument
                                               : no_argument,
                               NULL, OPT_VAL + (int)k};
        k++;
      }
    }
  t[k] = (struct option){"help", no_argument, NULL, 'h'};
  return t;   /* calloc'ed: ends in a zero entry */
}

/* Option `name` of the command line, with val: a shared option or one of
 * suite s's, parsed; another suite's refused, said by rank 0. */
static int take_opt(const struct bench_suite *s, const char *name,
                    const char *val)
{
  const struct bench_opt *o = find_opt(shared_opts, NSHARED, name);
  char msg[160];

  if (o == NULL)
    o = find_opt(s->opts, s->nopts, name);
  if (o != NULL)
    return o->parse(o, val);
  snprintf(msg, sizeof msg, "--%s is not an option of suite '%s'", name,
           s->name);
  bench_usage(msg);
  return RIVER_EINVAL;
}

/* Parse the options after SUITE EXPERIMENT: the shared ones into b (and
 * csv_path), suite s's into its own struct. Returns 1 for --help, else
 * RIVER_SUCCESS or a RIVER_E* code (said once, by rank 0). */
static int parse_opts(struct bench *b, const struct bench_suite *s, int argc,
                      char **argv)
{
  struct option *t = getopt_table();
  char msg[160];
  int c, rc = RIVER_SUCCESS;

  if (t == NULL)
    return RIVER_ENOMEM;
  opterr = 0;
  while (rc == RIVER_SUCCESS
         && (c = getopt_long(argc, argv, ":h", t, NULL)) != -1) {
    if (c >= OPT_VAL) {
      rc = take_opt(s, t[c - OPT_VAL].name, optarg);
    } else if (c == 'h') {
      bench_usage("help");
      rc = 1;
    } else {
      /* ':' (no value) or '?': glibc has stepped past the word, and
       * optopt is the option's value if it has one (a value given to
       * a flag), else 0 (unknown or ambiguous long) */
      if (c == ':')
        snprintf(msg, sizeof msg, "%s needs a value", argv[optind - 1]);
      else if (optopt >= OPT_VAL)
        snprintf(msg, sizeof msg, "--%s takes no value",
                 t[optopt - OPT_VAL].name);
      else if (optopt != 0)
        snprintf(msg, sizeof msg, "unknown option -%c", optopt);
      else
        snprintf(msg, sizeof msg, "unknown or ambiguous option %s",
                 argv[optind - 1]);
      bench_usage(msg);
      app_usage_error();
      rc = RIVER_EINVAL;
    }
  }
  free(t);
  if (rc == RIVER_SUCCESS && b->perturb_text
      && river_perturb_parse(b->perturb_text, &b->perturb) != RIVER_SUCCESS) {
    app_usage_error();
    rc = RIVER_EFORMAT;
  }
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

/* The suite called name, or NULL. */
static const struct bench_suite *find_suite(const char *name)
{
  size_t i;

  for (i = 0; i < NSUITES; i++)
    if (strcmp(name, suites[i]->name) == 0)
      return suites[i];
  return NULL;
}

/* The progress line's counts: what the runs so far moved, as rank 0's
 * rows say (one run's records arrive at its end; the line shows the
 * experiment going, with its rate over all of it). */
static void progress_sample(void *arg, uint64_t *records, uint64_t *bytes,
                            uint64_t *work)
{
  const struct bench *b = arg;

  *records = b->done_records;
  *bytes = b->done_bytes;
  *work = b->done_bytes;
}

int main(int argc, char **argv)
{
  struct bench *b = &state;
  river_progress *prog = NULL;
  char label[41];
  const struct bench_suite *s = NULL;
  const struct bench_experiment *e = NULL;
  int rc;

  if (river_init(&argc, &argv) != RIVER_SUCCESS)
    return 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &b->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &b->size);
  if (argc < 3 || (s = find_suite(argv[1])) == NULL) {
    bench_usage(argc < 3 ? "missing suite and experiment" : "unknown suite");
    river_finalize();
    return 2;
  }
  if ((e = find_experiment(s, argv[2])) == NULL) {
    bench_usage("unknown experiment");
    river_finalize();
    return 2;
  }
  b->spread = s->spread;
  b->csv_header = s->csv_header;
  rc = parse_opts(b, s, argc - 2, argv + 2);
  if (rc == RIVER_SUCCESS && csv_path && b->rank == 0)
    rc = open_csv(b, csv_path);
  if (rc == RIVER_SUCCESS && b->bind) {
    int outcome = 0;   /* river topo shows where each rank ended up */
    rc = river_topo_bind(MPI_COMM_WORLD, &outcome);
  }
  /* The progress line, unless --quiet (RIVER_PROGRESS decides too):
   * the experiment's records so far, its rate and time. Rank 0 alone
   * counts them (its rows), so the progress is rank 0's alone: no
   * slowest and fastest rank that would mean nothing. */
  snprintf(label, sizeof label, "river-bench %s %s", argv[1], argv[2]);
  if (rc == RIVER_SUCCESS && !b->quiet && b->rank == 0)
    rc = river_progress_create_sampled(MPI_COMM_SELF, label, 0, 0,
                                       progress_sample, b, &prog);
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);   /* only rank 0 fails */
  if (rc == RIVER_SUCCESS)
    rc = e->fn(b);
  abort_if_timed_out(rc);
  if (prog != NULL) {
    int prc = river_progress_end(prog, rc == RIVER_SUCCESS);
    if (rc == RIVER_SUCCESS)
      rc = prc;
  }
  if (b->csv)
    fclose(b->csv);
  river_perturb_destroy(b->perturb);
  if (rc > 0)
    rc = RIVER_SUCCESS; /* --help */
  if (rc != RIVER_SUCCESS && b->rank == 0)
    river_log(RIVER_LOG_ERROR, "%s %s: %s", argv[1], argv[2],
              river_strerror(rc));
  river_finalize();
  /* 2: a wrong command line (every rank parses the same one) */
  if (rc != RIVER_SUCCESS && app_usage_seen())
    return 2;
  return rc != RIVER_SUCCESS || b->failures ? 1 : 0;
}
