/*
 * sortapp.h - what `river sort` (apps/cli/sort.c) and `river-bench sort`
 * (apps/bench/bench_sort.c) share: finding a flow spec shipped with
 * River, and the sort's fluid ideal. Compiled into both programs
 * (apps/common/sortapp.c); includes only River's public headers.
 */
#ifndef RIVER_APPS_SORTAPP_H
#define RIVER_APPS_SORTAPP_H

#include <river.h>

#include <stddef.h>

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

#endif /* RIVER_APPS_SORTAPP_H */
