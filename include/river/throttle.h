/*
 * river/throttle.h - emulated rates for experiments (src/throttle.c).
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
 * Perturbations (river/perturb.h) multiply these rates; a real CPU
 * perturber is river/cpu_hog.h's. This header includes both, as it held
 * them before they had their own.
 *
 * Part of the River API; include <river.h> rather than this file.
 */
#ifndef RIVER_THROTTLE_H
#define RIVER_THROTTLE_H

#include <stddef.h>
#include "river/core.h"
#include "river/cpu_hog.h"
#include "river/perturb.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------- throttle */

/* A token bucket: `rate` bytes per second with a burst of `burst` bytes.
 * Not thread-safe. */
typedef struct river_throttle river_throttle;

/* rate > 0 bytes/s; burst > 0 bytes (0: rate/20, i.e. 50 ms of work,
 * at least 64 KiB). The bucket starts full. */
RIVER_API int river_throttle_create(double rate, double burst,
                                    river_throttle **out);

/*
 * A flow stage's bucket, as a stage's cpu_rate and disk_rate get (and a
 * module that emulates a rate of its own may take): river_throttle_create
 * (rate, 0, out), but empty at its first use, having earned nothing
 * before it, and while idle after it banking at most the burst's time
 * at its current rate (burst x factor bytes: a stage perturbed to a
 * quarter speed banks 50 ms of its own work, not 200 ms). Errors as
 * river_throttle_create's.
 */
RIVER_API int river_throttle_create_stage(double rate, river_throttle **out);

/* Free t; NULL is a no-op. */
RIVER_API void river_throttle_destroy(river_throttle *t);

/*
 * Account for `bytes` of work: returns once the bucket has had the tokens
 * (sleeping, never spinning; called from a flow module, it yields to the
 * other stages on its rank instead, so only its own stage is slowed). Work larger than the burst is admitted in
 * pieces, so long-run throughput is exactly `rate` x the current factor.
 */
RIVER_API int river_throttle_consume(river_throttle *t, size_t bytes);

/*
 * Account for `bytes` of work now, without waiting: *ready gets the
 * time (river_wtime) at which t is out of the debt that leaves (now,
 * if it leaves none), for a caller that waits on its own terms (a flow
 * stage's emulated CPU: its next get waits until then). What it waits
 * is not counted in river_throttle_slept. RIVER_EINVAL for a NULL t or
 * ready (nothing taken, *ready untouched).
 */
RIVER_API int river_throttle_take(river_throttle *t, size_t bytes,
                                  double *ready);

/* Multiply the rate by factor (> 0) from now on (1 = nominal). */
RIVER_API int river_throttle_set_factor(river_throttle *t, double factor);

/* The effective rate (nominal x factor), bytes/s. */
RIVER_API int river_throttle_rate(const river_throttle *t, double *rate);

/* Seconds consume() has spent waiting so far. */
RIVER_API int river_throttle_slept(const river_throttle *t, double *seconds);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_THROTTLE_H */
