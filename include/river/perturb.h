/*
 * river/perturb.h - perturbations for experiments (src/perturb.c): a
 * spec that multiplies a rank's emulated disk or CPU rate by a factor,
 * from the start or from a time on (a disk at half speed, consumers at
 * a quarter of their CPU: the River paper's experiments).
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
 * Part of the River API; include <river.h> rather than this file.
 */
#ifndef RIVER_PERTURB_H
#define RIVER_PERTURB_H

#include "river/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RIVER_PERTURB_DISK 0
#define RIVER_PERTURB_CPU 1
#define RIVER_PERTURB_FACTOR_MIN 0.001
#define RIVER_PERTURB_FACTOR_MAX 1000.0

/* ---------------------------------------------------------- perturbation */

typedef struct river_perturb river_perturb;

/* Parse a spec (see above). On bad text: RIVER_EFORMAT, with a logged
 * message quoting the spec and naming the bad clause and why. An empty
 * string is a valid spec with no clauses. */
RIVER_API int river_perturb_parse(const char *spec, river_perturb **out);

/* As river_perturb_parse, but a bad spec's message (the same text) goes
 * to why, at most whylen bytes with its NUL, instead of the log: for a
 * caller that says it itself, with where the spec came from. why is
 * untouched on success. RIVER_EINVAL, nothing logged, for NULLs or a
 * whylen of 0. */
RIVER_API int river_perturb_parse_msg(const char *spec, river_perturb **out,
                                      char *why, size_t whylen);

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

#ifdef __cplusplus
}
#endif

#endif /* RIVER_PERTURB_H */
