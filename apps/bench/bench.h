/*
 * bench.h - what river-bench's files share: bench.c (main, options, rows,
 * CSV, the suite table) and one file per suite (bench_dq.c, bench_gd.c,
 * bench_sort.c, bench_join.c, bench_scale.c).
 * A suite file includes only this header; it exports its two entry points
 * below, and bench.c's suite table names them.
 */
#ifndef RIVER_BENCH_H
#define RIVER_BENCH_H

#include <river.h>

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>
#include <stdio.h>

#define MB 1e6

/* The run's options and state, the same on every rank. */
struct bench {
  FILE *csv;               /* rank 0 */
  int rank, size;
  int spread;              /* the suite's rows add finish_spread (gd) */
  const char *csv_header;  /* the suite's own CSV header, or NULL: the
                              throughput rows' (bench_row) */
  const char *perturb_text;
  river_perturb *perturb;
  double rate_mbps;        /* --rate: the nominal disk rate */
  double seconds;          /* --seconds: target length of one run */
  int credits;             /* dq: --credits */
  size_t message_size;     /* dq: --message-size */
  int message_size_set;    /* ... was given (overhead: that size only) */
  int outstanding;         /* gd: --outstanding, requests per mirror */
  size_t block_size;       /* gd: --block-size */
  double seek_ms;          /* gd: --seek-ms, the seek cost when on */
  double cpu_rate_mbps;    /* sort: --cpu-rate, each partitioner (0: 2 x
                              rate_mbps) */
  int repeats;             /* sort: --repeats, runs of each policy */
  uint64_t records;        /* sort real: --records, the input's size */
  int failures;            /* runs whose data check failed */
  int bind;                /* --bind: river_topo_bind before the runs */
  int group;               /* scale: --group, ranks per queue (0: all) */
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

/* The experiment called name in table t of n entries, or NULL. */
const struct bench_experiment *bench_find(const struct bench_experiment *t,
                                          size_t n, const char *name);

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

/* Usage, with msg, on rank 0's stderr. */
void bench_usage(const char *msg);

/* The suites, one file each: the usage (what follows "river-bench NAME "
 * in the usage message, lines ending in '\n'), is `experiment` one of the
 * suite's, and run it (collective over WORLD). */
extern const char bench_dq_usage[];
int bench_dq_known(const char *experiment);
int bench_dq_run(struct bench *b, const char *experiment);
extern const char bench_gd_usage[];
int bench_gd_known(const char *experiment);
int bench_gd_run(struct bench *b, const char *experiment);
extern const char bench_sort_usage[];
int bench_sort_known(const char *experiment);
int bench_sort_run(struct bench *b, const char *experiment);

extern const char bench_join_usage[];
int bench_join_known(const char *experiment);
int bench_join_run(struct bench *b, const char *experiment);
/* scale's rows are not throughput rows: its CSV has its own header. */
extern const char bench_scale_usage[];
extern const char bench_scale_csv_header[];
int bench_scale_known(const char *experiment);
int bench_scale_run(struct bench *b, const char *experiment);

#endif /* RIVER_BENCH_H */
