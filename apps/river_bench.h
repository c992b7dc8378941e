/*
 * river_bench.h - what river-bench's suites (river_bench.c: dq, and
 * river_bench_gd.c: gd) share: options, result rows, perturbation specs.
 */
#ifndef RIVER_BENCH_H
#define RIVER_BENCH_H

#include <river.h>

#include <stdint.h>
#include <stdio.h>

#define MB 1e6

struct bench {
  FILE *csv;               /* rank 0 */
  int rank, size;
  int gd;                  /* the suite is gd (rows add finish_spread) */
  const char *perturb_text;
  river_perturb *perturb;
  double rate_mbps;        /* --rate: the nominal disk rate */
  double seconds;          /* --seconds: target length of one run */
  int credits;             /* dq: --credits */
  size_t message_size;     /* dq: --message-size */
  int outstanding;         /* gd: --outstanding, requests per mirror */
  size_t block_size;       /* gd: --block-size */
  double seek_ms;          /* gd: --seek-ms, the seek cost when on */
  int failures;            /* runs whose data check failed */
};

/* One measured configuration. */
struct bench_result {
  double seconds, measured, ideal;  /* s, bytes/s, bytes/s */
  uint64_t records;
  int ok;                  /* every record arrived exactly once */
  double spread;           /* gd: (last - first client finish) / last */
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

/* Usage, with msg, on rank 0's stderr. */
void bench_usage(const char *msg);

/* A perturbation of the first k indices of `kind` by factor. */
int bench_first_k(int kind, int k, double factor, river_perturb **out);

/* The gd suite: run `experiment` (scaling, read, lost). */
int river_bench_gd(struct bench *b, const char *experiment);
int river_bench_gd_known(const char *experiment);

#endif /* RIVER_BENCH_H */
