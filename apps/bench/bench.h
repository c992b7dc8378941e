/*
 * bench.h - what river-bench's files share: bench.c (main, the shared
 * options, rows, CSV, the suite table) and one file per suite
 * (bench_dq.c, bench_gd.c, bench_sort.c, bench_join.c, bench_scale.c).
 * A suite file needs no other header of river-bench's; it exports one
 * struct bench_suite, bench_NAME_suite: its experiments and its own
 * options, which it keeps in a struct of its own; bench.c's suite table
 * names it.
 */
#ifndef RIVER_BENCH_H
#define RIVER_BENCH_H

#include <river.h>

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>
#include <stdio.h>

#define MB 1e6

/* The run's state and the options every suite shares (bench.c parses
 * them), the same on every rank. A suite's own options live in its own
 * file (struct bench_suite's opts). */
struct bench {
  FILE *csv;               /* rank 0 */
  int rank, size;
  int spread;              /* the suite's rows add finish_spread (gd) */
  const char *csv_header;  /* the suite's own CSV header, or NULL: the
                              throughput rows' (bench_row) */
  const char *perturb_text;
  river_perturb *perturb;  /* --perturb */
  double rate_mbps;        /* --rate: the nominal disk rate */
  double seconds;          /* --seconds: target length of one run */
  int repeats;             /* --repeats: runs of each policy */
  int failures;            /* runs whose data check failed */
  int bind;                /* --bind: river_topo_bind before the runs */
  int quiet;               /* --quiet: no progress line */
  uint64_t done_records;   /* rank 0: what the runs so far moved (the */
  uint64_t done_bytes;     /* progress line's counts; bench_row) */
};

/* One measured configuration. */
struct bench_result {
  double seconds, measured, ideal;  /* s, bytes/s, bytes/s */
  uint64_t records;
  int ok;                  /* every record arrived exactly once */
  double spread;           /* gd: (last - first client finish) / last */
};

/* An experiment of a suite: its name and the function that runs it
 * (collective over WORLD; returns RIVER_SUCCESS or a RIVER_E* code). */
struct bench_experiment {
  const char *name;
  int (*fn)(struct bench *b);
};

/* Print a row (rank 0) and write it to the CSV, if any. n1 x n2 are the
 * producers x consumers (dq) or disks x clients (gd). */
void bench_row(struct bench *b, const char *experiment, const char *policy,
               int n1, int n2, int k, double factor,
               const struct bench_result *r);

/* End a run (collective over WORLD): rank 0's result to every rank, the
 * worst code of any rank (RIVER_ECORRUPT if the data check failed), and
 * the failure counted. */
int bench_end_run(struct bench *b, struct bench_result *res, int rc);

/* Remove dir and everything under it (a benchmark's temporary root);
 * failures are ignored. */
void bench_rm_tree(const char *dir);

/* Every rank of WORLD waits here, backing off to 10 ms sleeps (no
 * spinning: ranks outside a point take no CPU from it). Ranks leave up
 * to 10 ms apart: a timed start needs a barrier after it. */
void bench_world_wait(void);

/* Sort v[0..n) and return its median (0 for n 0). */
double bench_median(double *v, int n);

/* The smallest factor a --perturb spec gives indices 0..n-1 of `kind`
 * at the start (1.0 if none): the factor a row is labelled with. */
double bench_slowest_factor(const river_perturb *p, int kind, int n);

/* A temporary root for a suite's data (rank 0 makes it under $TMPDIR or
 * /tmp, named for `what`; every rank gets it). RIVER_EIO, said, if it
 * cannot be made. Collective over WORLD. */
int bench_make_root(char *root, size_t len, const char *what);

/* Load flow spec with params over comm, wait for every rank, and run
 * it: *seconds its run (the same start on every rank; each rank's own
 * end). The flow is destroyed. Collective over comm. */
int bench_time_flow(MPI_Comm comm, const char *spec,
                    const char *const *params, int n, double *seconds);

/* Rank 0 of comm removes collection `name` under root (if there); then
 * every rank of comm waits. */
void bench_drop(MPI_Comm comm, const char *root, const char *name);

/* Usage, with msg, on rank 0's stderr: the shared options, then each
 * suite's experiments and its own options. */
void bench_usage(const char *msg);

/* An option: --NAME, with a value or without, and how to read it. The
 * parser (bench.c) consults the shared table and the chosen suite's;
 * an option of another suite is refused, naming the suite. */
struct bench_opt {
  const char *name;        /* spelled --name */
  const char *arg;         /* what the usage calls its value ("BYTES");
                              NULL: it takes none */
  const char *help;        /* its default and meaning, for the usage */
  /* Store val (NULL for an option without one) at o->dst. Returns
   * RIVER_SUCCESS, or RIVER_EINVAL with the reason said by rank 0 only
   * (every rank parses the same arguments). */
  int (*parse)(const struct bench_opt *o, const char *val);
  void *dst;               /* where parse stores the value */
  uint64_t min, max;       /* the range, for the integer parsers */
};

/* The parsers for bench_opt.parse, each refusing a value outside [min,
 * max] or not wholly a number as --NAME VALUE (said once):
 * an int (no suffix); a size_t and a uint64_t (river_parse_size's
 * suffixes, k x1000 and Ki x1024, as the river command's:
 * apps/common/number.c); a double > 0, a double >= 0
 * (min and max unused); a string (a const char *, pointing into argv);
 * a flag (an int set to 1). */
int bench_opt_int(const struct bench_opt *o, const char *val);
int bench_opt_size(const struct bench_opt *o, const char *val);
int bench_opt_u64(const struct bench_opt *o, const char *val);
int bench_opt_positive(const struct bench_opt *o, const char *val);
int bench_opt_nonnegative(const struct bench_opt *o, const char *val);
int bench_opt_string(const struct bench_opt *o, const char *val);
int bench_opt_flag(const struct bench_opt *o, const char *val);

/* A suite: river-bench NAME EXPERIMENT [options]. Each is a file of its
 * own (bench_NAME.c, defining bench_NAME_suite) with a line in bench.c's
 * suite table; its options are its own struct, which its table's dst
 * pointers name, set to the defaults by its initializer. */
struct bench_suite {
  const char *name;
  const struct bench_experiment *experiments;
  size_t nexperiments;
  const struct bench_opt *opts;  /* its own options (NULL if none) */
  size_t nopts;
  const char *notes;       /* lines the usage adds after its options (how
                              it reads the shared ones), or NULL */
  int spread;              /* its rows carry finish_spread */
  const char *csv_header;  /* NULL: bench_row's columns */
};

#endif /* RIVER_BENCH_H */
