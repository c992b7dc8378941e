/*
 * sortapp.h - what `river sort` and `river join` (apps/cli/) and
 * `river-bench sort|join` (apps/bench/) share: finding a flow spec
 * shipped with River, and the sort's and the join's fluid ideals. Compiled into both programs
 * (apps/common/sortapp.c); includes only River's public headers.
 */
#ifndef RIVER_APPS_SORTAPP_H
#define RIVER_APPS_SORTAPP_H

#include <river.h>

#include <stddef.h>
#include <stdint.h>

/*
 * The path of the shipped spec `name` (e.g. "sort.yaml") into buf:
 * $RIVER_FLOWS/name if RIVER_FLOWS is set (it must be there); else, for
 * a program of the build tree (not installed), the source tree's
 * flows/; else the installed $(pkgdatadir)/flows. RIVER_ENOTFOUND,
 * logged naming `who` and where it looked, if it is not there.
 */
int app_find_flow(const char *who, const char *name, char *buf, size_t len);

/* The read -> partition DQ's credits and message size for sorts on
 * emulated rates (the measured experiments of doc/results.md): a slow
 * partitioner then holds little at the end of the run (sort.yaml's own
 * defaults, larger, suit real hardware, where per-message cost counts). */
#define APP_SORT_EMUL_CREDITS "1"
#define APP_SORT_EMUL_MSG "64K"

/* The params that make sort.yaml the static baseline (river sort
 * --static): fixed readers, reader i -> partitioner i, sorter i's one
 * run -> writer i. */
#define APP_SORT_NSTATIC 5
extern const char *const app_sort_static[APP_SORT_NSTATIC];

/* The emulated machine a sort runs on: disk and partitioner CPU rates
 * (bytes/s each; 0: real speed, not modelled) and a perturbation (NULL:
 * none; its factors at the start are used). */
struct app_sort_machine {
  double disk, cpu;
  const river_perturb *perturb;
};

/*
 * The fluid ideal of flows/sort.yaml, in seconds: the best any placement
 * of the work could do at m's rates, for `bytes` of input on n ranks,
 * read from IN's `in_disks` disks (`in_parts` partitions, `in_copies`
 * copies each) and written with `out_copies` copies. The sort holds
 * every record before it writes one, so
 *
 *   T* = bytes / min(R_read, R_cpu) + bytes x out_copies / R_write
 *
 * R_read: GD's fluid ideal over IN's disks (river_gd_fluid_ideal; the
 * sum of their rates if IN has more partitions than disks); R_cpu: the
 * n partitioners' summed rates; R_write: the n disks' summed rates. The
 * in-memory sort and the exchange are not emulated and count as free,
 * so it is a bound. 0 if neither rate is set (nothing to model).
 */
double app_sort_ideal(const struct app_sort_machine *m, double bytes, int n,
                      int in_disks, int in_parts, int in_copies,
                      int out_copies);

/*
 * The block size for the runs of a two-pass sort's first pass, for
 * `nrecords` records of `record_size` bytes (key `key_size` bytes) on
 * `nranks` ranks with `mem` bytes each: a merger holds a block of each
 * run of a group (about its share of the input over a run's size, a run
 * being what fits in mem), and must fit them in mem: half of mem over
 * the runs (*nruns: their estimated number), in whole RIVER_COLL_ALIGN
 * units, at most 1 MiB. 0 if mem cannot hold even the smallest blocks
 * (RIVER_COLL_ALIGN, or two records).
 */
uint64_t app_sort_run_block(size_t record_size, size_t key_size,
                            uint64_t nrecords, int nranks, uint64_t mem,
                            double *nruns);

/*
 * The fluid ideal of a join (flows/join.yaml) on n joiners whose CPUs
 * take m->cpu bytes/s each (times their perturb factors at the start):
 * every input byte must pass through some joiner once, so
 *
 *   T* = (bytes of R + bytes of S) / (sum of the joiners' rates)
 *
 * Reads, the exchange and writes are not emulated and count as free. The
 * replicated join does more work than this (every joiner reads the whole
 * build relation); the ideal is the same bound for every variant. 0 if
 * m->cpu is 0.
 */
double app_join_ideal(const struct app_sort_machine *m, double bytes, int n);

#endif /* RIVER_APPS_SORTAPP_H */
