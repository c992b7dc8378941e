/*
 * ideal.h - the fluid ideals River's applications and benchmarks divide
 * their measured rates by: the best any placement of the work could do
 * at the emulated rates (doc/design.md: every experiment reports its
 * figure, this ideal and their ratio). The sort's and the join's (`river
 * sort`, `river join`, `river-bench sort|join`) and the distributed
 * queue's (`river-bench dq`); GD's is the library's own
 * (river_gd_fluid_ideal). Pure functions, checked against hand-computed
 * cases in tests/unit/test_ideals.c; include only River's public headers.
 */
#ifndef RIVER_APPS_IDEAL_H
#define RIVER_APPS_IDEAL_H

#include <river.h>

/* The emulated machine an application runs on: disk and partitioner CPU rates
 * (bytes/s each; 0: real speed, not modelled) and a perturbation (NULL:
 * none; its factors at the start are used). */
struct app_machine {
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
double app_sort_ideal(const struct app_machine *m, double bytes, int n,
                      int in_disks, int in_parts, int in_copies,
                      int out_copies);

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
double app_join_ideal(const struct app_machine *m, double bytes, int n);

/*
 * The fluid ideal of a distributed-queue run, in bytes/s: each of the
 * nprod producers has `bytes` to send at its rate prod[p] (bytes/s; NULL
 * or 0: unbounded), and the ncons consumers share whatever arrives at
 * their rates cons[c] (NULL or 0: unbounded). The run cannot end before
 * the slowest producer has made its data, nor before the consumers
 * together have taken everything:
 *
 *   T* = max(max_p bytes / prod[p], nprod bytes / sum_c cons[c])
 *
 * and the ideal is nprod x bytes / T*. 0 when neither side is bounded.
 */
double app_dq_ideal(double bytes, int nprod, const double *prod, int ncons,
                    const double *cons);

#endif /* RIVER_APPS_IDEAL_H */
