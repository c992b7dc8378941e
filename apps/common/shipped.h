/*
 * shipped.h - what `river sort` and `river join` (apps/cli/) and
 * `river-bench sort|join` (apps/bench/) share about running the shipped
 * flows: finding a flow spec shipped with River, the sort's static
 * baseline and emulation settings, and the two-pass sort's run blocks.
 * Their fluid ideals are apps/common/ideal.h's. Compiled into both
 * programs (apps/common/shipped.c); includes only River's public
 * headers.
 */
#ifndef RIVER_APPS_SHIPPED_H
#define RIVER_APPS_SHIPPED_H

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
#define APP_SORT_EMUL_MSG "64Ki"

/* The params that make sort.yaml the static baseline (river sort
 * --static): fixed readers, reader i -> partitioner i, sorter i's one
 * run -> writer i. */
#define APP_SORT_NSTATIC 5
extern const char *const app_sort_static[APP_SORT_NSTATIC];

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


#endif /* RIVER_APPS_SHIPPED_H */
