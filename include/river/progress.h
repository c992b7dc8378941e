/*
 * river/progress.h - a progress line on rank 0 while a job works.
 *
 * Every rank counts what it has done (records and bytes) with
 * river_progress_add, which costs a clock read; about once a second
 * each rank joins a round of nonblocking reductions (MPI_Ireduce on a
 * communicator of the progress's own), started and tested from its own
 * calls, so a rank that is busy is never waited for: its numbers are
 * simply older. Rank 0 shows the totals: records and bytes done (of the
 * total, when known), MB/s, elapsed time, ETA, and the slowest and
 * fastest rank by throughput over the last round. On a terminal the
 * line is redrawn in place; otherwise (a pipe, a batch log under Slurm)
 * a plain line every RIVER_PROGRESS_EVERY seconds (default 5). A
 * rank's stderr is usually a pipe to its launcher, whatever the
 * launcher's is: RIVER_PROGRESS_TTY=1 or 0 says which it is
 * (scripts/river-mpirun sets it from its own stderr); unset, rank 0's
 * stderr decides. A job
 * shorter than one line's interval prints nothing; a longer one ends
 * with a line saying what was done, in how long, and the slowest and
 * fastest rank over the whole run.
 *
 * RIVER_PROGRESS=1 (on, yes, true) shows it, 0 (off, no, false) hides
 * it; anything else is warned about and taken as unset (a display
 * setting never fails a job). Unset, a progress created here shows, and
 * a flow shows it where the program asked (river_flow_progress,
 * river/flow.h). The `river` command shows it unless --quiet. Rank 0's
 * setting decides for the job.
 *
 * Part of the River API; include <river.h> rather than this file.
 */
#ifndef RIVER_PROGRESS_H
#define RIVER_PROGRESS_H

#include <mpi.h>
#include <stdint.h>
#include "river/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct river_progress river_progress;

/* Collective over comm: start a progress named label (what the line
 * begins with: at most 40 characters, no control characters) for a job
 * of total_records records and total_bytes bytes over all ranks (0:
 * not known; then no percentage or ETA). RIVER_EINVAL for a NULL or
 * bad argument on any rank. The progress may be off
 * (RIVER_PROGRESS=0): every call still works. */
RIVER_API int river_progress_create(MPI_Comm comm, const char *label,
                                    uint64_t total_records,
                                    uint64_t total_bytes,
                                    river_progress **out);

/* A progress whose counts fn(arg, &records, &bytes, &work) gives at
 * each round instead of river_progress_add (which then refuses): for
 * work done inside a library call, such as a rank serving graduated
 * declustering reads (river_gd_stats_get) while its client counts the
 * records. records and bytes count toward the totals, work (bytes) is
 * the rank's rate. fn runs in this rank's River calls and waits, so it
 * must only read counters. Collective, as river_progress_create. */
typedef void (*river_progress_sample_fn)(void *arg, uint64_t *records,
                                         uint64_t *bytes, uint64_t *work);
RIVER_API int river_progress_create_sampled(MPI_Comm comm,
                                            const char *label,
                                            uint64_t total_records,
                                            uint64_t total_bytes,
                                            river_progress_sample_fn fn,
                                            void *arg,
                                            river_progress **out);

/* This rank did records records of bytes bytes more. Local; may start
 * or take in a round (never waits). */
RIVER_API int river_progress_add(river_progress *p, uint64_t records,
                                 uint64_t bytes);

/* Take a step without adding anything (a rank that waits elsewhere
 * may call it). Local; never waits. */
RIVER_API int river_progress_poll(river_progress *p);

/* Whether the line shows (*on 1) on this job. */
RIVER_API int river_progress_on(const river_progress *p, int *on);

/* Collective: end it and free it. ok: this rank's work succeeded
 * (nonzero); where every rank's did and a line was shown, rank 0 prints
 * the closing line (what was done, in how long, the slowest and fastest
 * rank over the run). */
RIVER_API int river_progress_end(river_progress *p, int ok);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_PROGRESS_H */
