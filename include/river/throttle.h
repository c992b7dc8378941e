/*
 * river/throttle.h - emulated rates and perturbations for experiments.
 *
 * The River paper's results are about perturbation: a disk at half
 * speed, consumers at a quarter of their CPU. On one machine (or to make
 * a cluster run repeatable) River emulates each rank's disk bandwidth and
 * CPU rate with a token bucket: work of n bytes may proceed only as fast
 * as the bucket refills, and waiting for tokens sleeps (never spins), so
 * dozens of emulated ranks share two cores without disturbing each
 * other. A perturbation multiplies a rank's rate by a factor, from the
 * start or from a time on.
 *
 * Perturbation spec (the --perturb option of river-bench and flows):
 *
 *     KIND:INDICES=FACTOR[@TIME][;KIND:INDICES=FACTOR[@TIME]...]
 *
 * KIND is "disk" or "cpu"; INDICES a comma-separated list of indices and
 * ranges ("3", "0,4-6") within the role (disk index for disk, consumer
 * index for cpu); FACTOR a number from 0.001 to 1000 (0.5 = half speed:
 * beyond that range an emulated run would take practically forever, or
 * the rate overflow); TIME, if given,
 * when it starts, in seconds from the start of the run ("2s", "2", or
 * "500ms"). Later clauses override earlier ones for the same index and
 * time. Example: "disk:3=0.5;cpu:0,4-6=0.25@2s".
 *
 * A real CPU perturber for real clusters (a thread spinning on the
 * rank's core, bound with hwloc, stealing a duty cycle) is
 * river_cpu_hog_start.
 *
 * Part of the River API; include <river.h> rather than this file.
 */
#ifndef RIVER_THROTTLE_H
#define RIVER_THROTTLE_H

#include <stddef.h>
#include "river/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RIVER_PERTURB_DISK 0
#define RIVER_PERTURB_CPU 1
#define RIVER_PERTURB_FACTOR_MIN 0.001
#define RIVER_PERTURB_FACTOR_MAX 1000.0

/* ----------------------------------------------------------- throttle */

/* A token bucket: `rate` bytes per second with a burst of `burst` bytes.
 * Not thread-safe. */
typedef struct river_throttle river_throttle;

/* rate > 0 bytes/s; burst > 0 bytes (0: rate/20, i.e. 50 ms of work,
 * at least 64 KiB). The bucket starts full. */
RIVER_API int river_throttle_create(double rate, double burst,
                                    river_throttle **out);

/* Free t; NULL is a no-op. */
RIVER_API void river_throttle_destroy(river_throttle *t);

/*
 * Account for `bytes` of work: returns once the bucket has had the tokens
 * (sleeping, never spinning; called from a flow module, it yields to the
 * other stages on its rank instead, so only its own stage is slowed). Work larger than the burst is admitted in
 * pieces, so long-run throughput is exactly `rate` x the current factor.
 */
RIVER_API int river_throttle_consume(river_throttle *t, size_t bytes);

/* Multiply the rate by factor (> 0) from now on (1 = nominal). */
RIVER_API int river_throttle_set_factor(river_throttle *t, double factor);

/* The effective rate (nominal x factor), bytes/s. */
RIVER_API int river_throttle_rate(const river_throttle *t, double *rate);

/* Seconds consume() has spent waiting so far. */
RIVER_API int river_throttle_slept(const river_throttle *t, double *seconds);

/* ---------------------------------------------------------- perturbation */

typedef struct river_perturb river_perturb;

/* Parse a spec (see above). On bad text: RIVER_EFORMAT, with a logged
 * message quoting the spec and naming the bad clause and why. An empty
 * string is a valid spec with no clauses. */
RIVER_API int river_perturb_parse(const char *spec, river_perturb **out);

RIVER_API void river_perturb_destroy(river_perturb *p);

/* The factor for (kind, index) at `t` seconds into the run: the last
 * clause naming that index whose start time is <= t, or 1. */
RIVER_API int river_perturb_factor(const river_perturb *p, int kind,
                                   int index, double t, double *factor);

/* The number of distinct indices of `kind` that some clause slows or
 * speeds up (factor != 1) at any time: for reports ("k perturbed"). */
RIVER_API int river_perturb_count(const river_perturb *p, int kind, int *k);

/* The largest index of `kind` named by any clause, or -1 if none: lets a
 * caller check the spec fits the run (e.g. "disk:20" with 14 disks). */
RIVER_API int river_perturb_max_index(const river_perturb *p, int kind,
                                      int *max);

/* ----------------------------------------------------- real CPU perturber */

typedef struct river_cpu_hog river_cpu_hog;

/*
 * Start a thread that steals `fraction` (0 < fraction < 1) of the core
 * this process is bound to: it spins for fraction x 10 ms, sleeps the
 * rest, over and over; bound with hwloc to the same PUs as the calling
 * process. It steals from the rank's core only if the rank is bound to
 * one (the launcher's binding, or river_topo_bind, before or after this
 * call: river topo shows it); unbound, it may run on any PU (logged at
 * info). For real clusters, where emulation is not wanted. RIVER_ETOPO
 * if hwloc cannot bind it.
 */
RIVER_API int river_cpu_hog_start(double fraction, river_cpu_hog **out);

/* Stop and join the thread; NULL is a no-op. */
RIVER_API int river_cpu_hog_stop(river_cpu_hog *h);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_THROTTLE_H */
