/*
 * progress_internal.h - the progress line's hooks for the flow runtime
 * (src/progress.c): a progress whose counts a sampler gives at each
 * round, and the tick that a flow's gets and puts call.
 */
#ifndef RIVER_PROGRESS_INTERNAL_H
#define RIVER_PROGRESS_INTERNAL_H

#include "river/progress.h"

/* Fills this rank's counts so far into cnt (RIVER__PROGRESS_NCOUNT of
 * them): records its sources read and its sinks took in, their bytes,
 * and its work in bytes (its rate), in that order. */
#define RIVER__PROGRESS_NCOUNT 5
typedef void (*river__progress_sample_fn)(void *arg, uint64_t *cnt);

/* river_progress_create, showing by default where dflt (RIVER_PROGRESS
 * decides otherwise), with counts from fn(arg) when fn is not NULL
 * (then river_progress_add refuses). */
int river__progress_create(MPI_Comm comm, const char *label,
                           uint64_t total_records, uint64_t total_bytes,
                           int dflt, river__progress_sample_fn fn,
                           void *arg, river_progress **out);

/* Free p without its collective end (a run torn down before it
 * finished): no closing line; kept, not freed, where a round is still
 * in flight. NULL is nothing. */
void river__progress_drop(river_progress *p);

/* A step of every active progress whose round is due: one clock read
 * when none is. */
void river__progress_tick(void);

#endif /* RIVER_PROGRESS_INTERNAL_H */
