/*
 * river/stats.h - a run's stats file: one JSON document (doc/stats.md,
 * its JSON Schema doc/stats.schema.json) with the job and, for each
 * flow run, every stage instance's records and bytes in and out, its
 * time running and blocked, and the same over time (a row a second);
 * the stages' arguments and the spec a flow was loaded from; every
 * edge's queue as each rank saw it: its credit path, records and
 * messages sent and received, credit stalls, and the messages each
 * producer sent each consumer; for each GD read, what each disk
 * served each client; and for other work (river gen, copy-in, fsck)
 * each rank's records, bytes and seconds.
 *
 *   river_stats *s;
 *   river_stats_create(MPI_COMM_WORLD, "my-job --n 4", &s);  (collective)
 *   ... river_flow_go(f); river_stats_add_flow(s, f, "sort");  (collective)
 *   river_stats_add_number(s, "seconds", t);
 *   river_stats_write(s, "run.json");                        (collective)
 *   river_stats_destroy(s);
 *
 * Rank 0 holds the document and writes it (a temporary beside PATH,
 * renamed over it once complete). A rank cannot take part in a
 * collective call with s NULL: pass the same, valid s on every rank.
 * Part of the River API; include <river.h> rather than this file.
 */
#ifndef RIVER_STATS_H
#define RIVER_STATS_H

#include <mpi.h>
#include "river/core.h"
#include "river/flow.h"
#include "river/gd.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct river_stats river_stats;

/* Collective over comm: a document for the job that comm's ranks run;
 * command (may be NULL) is the command line it records. The job part:
 * River's, MPI's and HDF5's versions, the ranks, the nodes (by
 * river_node_name) and the command. */
RIVER_API int river_stats_create(MPI_Comm comm, const char *command,
                                 river_stats **out);

/* Collective over the flow's ranks, which must be s's, in the same
 * order (the flow's communicator congruent with s's): add flow f, which
 * has run (river_flow_go), as one entry of "flows", named label (may be
 * NULL). RIVER_ESTATE if f has not run, RIVER_EINVAL on other ranks. */
RIVER_API int river_stats_add_flow(river_stats *s, river_flow *f,
                                   const char *label);

/* Local: keep what GD read gd (river_gd_open or _create over s's
 * communicator: the same ranks in the same order) did on this rank so
 * far, for one entry of "gd" named label (may be NULL; at most 40
 * characters kept): the rank's blocks received, bytes, failovers and
 * seconds as a client, and its disks' blocks and bytes served from
 * each partition copy, with the rank reading it (who served whom).
 * Call it once the read is done (or failed), before river_gd_close.
 * Every rank adds each read (also one that failed there):
 * river_stats_write gathers them, and refuses (RIVER_EINVAL on every
 * rank) where the ranks added different numbers. Local, so that no
 * rank waits in a collective while another still reads from its
 * disks. */
RIVER_API int river_stats_add_gd(river_stats *s, river_gd *gd,
                                 const char *label);

/* Collective over s's ranks: add an entry of "work" named label (may be
 * NULL): each rank's records and bytes done and its seconds, for work
 * that is no flow and no GD read (river gen, copy-in, fsck: what each
 * rank wrote or verified). seconds must be finite and >= 0 (else
 * RIVER_EINVAL on every rank). */
RIVER_API int river_stats_add_work(river_stats *s, const char *label,
                                   uint64_t records, uint64_t bytes,
                                   double seconds);

/* Record a number of the job's ("seconds", "fluid_ideal_seconds", ...):
 * key is letters, digits and '_' (at most 40), value finite; rank 0's
 * is kept. Local. */
RIVER_API int river_stats_add_number(river_stats *s, const char *key,
                                     double value);

/* Collective: whether path can take the document (rank 0's path is
 * used; the others may pass NULL): its directory exists and nothing but
 * a regular file is there (a symbolic link, FIFO, device or directory
 * is refused, named). For a check before a long run. Agreed. */
RIVER_API int river_stats_check_path(river_stats *s, const char *path);

/* Collective: write the document to path (rank 0's; the others may pass
 * NULL), checked as river_stats_check_path does, to a temporary beside
 * it renamed over it (mode 0666 less the umask). The outcome is agreed. */
RIVER_API int river_stats_write(river_stats *s, const char *path);

/* Free s (local); NULL is nothing. */
RIVER_API int river_stats_destroy(river_stats *s);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_STATS_H */
