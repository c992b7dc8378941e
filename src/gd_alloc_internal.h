/*
 * gd_alloc_internal.h - GD's feedback allocator and end game (src/gd_alloc.c): pure functions
 * of the numbers the GD engine keeps (no MPI, no handles), unit-tested on
 * a ring model (tests/unit/test_gd_alloc.c).
 */
#ifndef RIVER_GD_ALLOC_INTERNAL_H
#define RIVER_GD_ALLOC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* GD's feedback allocator (src/gd_alloc.c): which of n streams a disk
 * serves next, the pending one whose client lags the most (progress ==
 * NULL: round-robin, no bias); -1 if none is pending. Streams within
 * RIVER_GD_TIE of the laggard alternate from *cursor. */
#define RIVER_GD_TIE 1e-9
int river__gd_pick(const double *progress, const int *pending, int n,
                   int *cursor);
/* The same, staying with stream `last` while it is pending and within
 * `margin` of the laggard (fewer stream switches). */
int river__gd_pick_sticky(const double *progress, const int *pending, int n,
                          int *cursor, int last, double margin);
/* The same on progress + an integral bias per stream (bias[n], kept by
 * the caller, updated here; progress is scratch, overwritten with the
 * sum; see src/gd_alloc.c). */
int river__gd_pick_balanced(double *progress, const int *pending, int n,
                            int *cursor, int last, double margin,
                            double *bias, double gain, double cap);

/* GD's end game: whether a block queued behind `out` requests at a copy
 * with block time tbusy is worth moving to an idle copy with block time
 * tidle (0: not measured); see src/gd_alloc.c. */
int river__gd_worth_moving(int out, double tbusy, double tidle, double gain,
                           double slower);

/* GD: whether the n-th of a partition's `left` blocks queued at a copy
 * slower than the other (block times tslow, tfast) would arrive after
 * the other copy could deliver the rest; see src/gd_alloc.c. */
int river__gd_too_late(int n, double tslow, uint64_t left, double tfast,
                       double slower);

/* GD: the usable copy with the shortest block time (tnow > 0), or -1;
 * and BALANCED's choice of a copy for one more block (src/gd_alloc.c). */
int river__gd_fastest(int repl, const unsigned char *usable,
                      const double *tnow);
int river__gd_choose_copy(int repl, int k, const int *out,
                          const unsigned char *usable, const double *tavg,
                          const double *tnow, uint64_t left, int rr,
                          double slower, int *could);

/* GD's dormant partitions (src/gd_alloc.c): whether the first copy is
 * slower than another (disk block times tserve, 0: unknown; or silent
 * for `silent` seconds), and the copy to ask next while dormant. */
int river__gd_first_slower(int repl, const double *tserve,
                           const unsigned char *dead, double silent,
                           double slower, double silent_x);
int river__gd_choose_dormant(int repl, int k, const int *out,
                             const unsigned char *dead, uint64_t next,
                             uint64_t probe_at, int probes);

/* GD: a lost disk's plan (records of each partition to read from its
 * first copy; 0, or -1 with no plan), and whether a planned partition
 * has a copy slower than another; see src/gd_alloc.c. */
int river__gd_plan(int n, const int *part_of, const uint64_t *nrec,
                   const unsigned char *lost, uint64_t *first);
int river__gd_plan_slower(int repl, const double *tserve,
                          const unsigned char *dead, const double *silent,
                          double slower, double silent_x);

/* GD: when an emulated disk starts a block (the disk's clock; see
 * src/gd_alloc.c). */
double river__gd_disk_start(double ready_at, double queued, double since,
                            double now, double t, int same_factor);

#endif /* RIVER_GD_ALLOC_INTERNAL_H */
