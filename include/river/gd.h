/*
 * river/gd.h - graduated declustering: reading mirrored data from every
 * mirror at once, with disks that favour the reader that lags.
 *
 * A mirrored collection keeps partition p on disks p, p+1, ..., p+r-1
 * (mod ndisks; chained declustering, river/pcoll.h). A GD read is
 * collective over a communicator whose ranks play two roles:
 *
 *   client  reads whole partitions: partition p is read by one rank. The
 *           client hands out its partition's block indices itself,
 *           keeping up to `outstanding` requests at each mirror, so no
 *           block is read twice and more requests go to whichever mirror
 *           answers faster.
 *   server  serves disks: disk d is served by one rank. Clients report
 *           their progress (the fraction of the partition received so
 *           far) on every request and, as each block arrives, to their
 *           other mirrors; a disk with requests from several clients
 *           serves the one that lags the most (the feedback allocator), so
 *           the disks next to a slow disk give more of their bandwidth to
 *           the clients that share it and every client progresses at the
 *           same rate.
 *
 * A rank may be client and server, or neither. Every rank of the
 * communicator calls river_gd_next until it returns RIVER_EOS (or an
 * error): a rank with partitions gets their blocks; a server keeps
 * serving inside river_gd_next until every client is done, so the calls
 * return only when the rank's whole part is over. Then river_gd_close.
 *
 * Failover: a copy that cannot be read (file missing, directory
 * unreadable, checksum mismatch) is reported back to the client, which
 * asks another mirror for that block; a copy whose file is missing or
 * unusable is not asked again, so a dead disk's load spreads over the
 * remaining mirrors. Only when every copy of a block has failed does the
 * read fail: the client logs an error naming the partition and block,
 * and returns RIVER_ENOTFOUND (no copy exists) or RIVER_ECORRUPT.
 *
 * Baselines on the same code path (for measuring what GD buys):
 * RIVER_GD_MIRROR_NOGD reads one fixed mirror (the partition's first
 * usable copy; others only on failure) and disks take their streams in
 * turn, without bias; RIVER_GD_NOMIRROR reads the first copy only, as if
 * there were no mirror (no failover).
 *
 * Emulation (river/throttle.h): opts can give every disk a token-bucket
 * rate, a perturbation ("disk:3=0.5") and a seek cost paid when a disk
 * switches from one partition's stream to another's.
 *
 * Part of the River API; include <river.h> rather than this file.
 */
#ifndef RIVER_GD_H
#define RIVER_GD_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include "river/core.h"
#include "river/pcoll.h"
#include "river/throttle.h"

#ifdef __cplusplus
extern "C" {
#endif

/* BALANCED reads every copy of a partition at once, each disk biased
 * toward the client that lags. Where reading first copies alone is
 * balanced (one first copy per disk, partitions of one size, every
 * client reading all its partitions at once, unordered mode) it reads
 * them alone, as
 * MIRROR_NOGD does, probing the other copies one block in 16, until a
 * disk is measured 1% slower than another, fails, or is shared, or a
 * client falls 4 blocks behind another of its disk's: at equal speeds
 * every disk then serves exactly its share. */
typedef enum river_gd_policy {
  RIVER_GD_BALANCED = 0,     /* graduated declustering (the default) */
  RIVER_GD_MIRROR_NOGD = 1,  /* one fixed mirror, failover, no bias */
  RIVER_GD_NOMIRROR = 2      /* the first copy only, no failover */
} river_gd_policy;

typedef enum river_gd_mode {
  RIVER_GD_UNORDERED = 0,    /* blocks as they arrive */
  RIVER_GD_STREAM = 1        /* each client's blocks in write order
                                (river_gd_layout.order): partition by
                                partition, or stripe by stripe */
} river_gd_mode;

#define RIVER_GD_DEFAULT_OUTSTANDING 2
#define RIVER_GD_MAX_REPLICATION 64
#define RIVER_GD_MAX_RUN_BLOCKS 1024

typedef struct river_gd_opts {
  river_gd_policy policy;
  river_gd_mode mode;
  int outstanding;          /* requests a client keeps at each mirror;
                               0 = RIVER_GD_DEFAULT_OUTSTANDING */
  int window;               /* stream mode: how many blocks past the next
                               one to deliver may be requested (held for
                               reordering); 0 = 8 x outstanding x r */
  const int *disk_ranks;    /* [ndisks] rank serving disk d; NULL: d mod
                               size (river_gd_open: river_pcoll_disk_ranks,
                               which is that unless the disks are
                               node-local) */
  const int *client_ranks;  /* [npartitions] rank reading partition p;
                               NULL: p mod size */
  double disk_rate;         /* emulated bytes/s per disk; 0 = real speed */
  double seek_seconds;      /* emulated seek when a disk switches streams
                               (needs disk_rate) */
  const river_perturb *perturb; /* "disk:..." factors on disk_rate, times
                               from the end of river_gd_open/create;
                               borrowed until river_gd_close */
  int run_blocks;           /* used by BALANCED only: a disk keeps
                               serving the client it served last until
                               that client leads the laggard by this many
                               blocks, so it switches streams (a seek on a
                               spinning disk) less often, at some cost in
                               balance. 0 (the default): it serves the
                               laggard, staying only on an exact tie. 2
                               suits spinning disks; at most
                               RIVER_GD_MAX_RUN_BLOCKS */
} river_gd_opts;

#define RIVER_GD_OPTS_INIT                                                   \
  {RIVER_GD_BALANCED, RIVER_GD_UNORDERED, 0, 0, NULL, NULL, 0.0, 0.0, NULL, 0}

/* What a custom source looks like (river_gd_create); river_gd_open takes
 * it from the collection. Partition p's copy c is on disk
 * (first_disk[p] + c) mod ndisks. */
typedef struct river_gd_layout {
  int npartitions;
  int ndisks;
  int replication;          /* 1..min(ndisks, RIVER_GD_MAX_REPLICATION) */
  size_t record_size;
  size_t records_per_block;
  const uint64_t *nrecords; /* [npartitions] records in each partition */
  const int *first_disk;    /* [npartitions]; NULL: partition p on disk
                               p mod ndisks */
  river_layout order;       /* stream mode's write order over a client's
                               partitions: RIVER_LAYOUT_PARTITIONED (each
                               partition whole, in ascending order) or
                               RIVER_LAYOUT_INTERLEAVED (block b of each
                               partition, then block b + 1) */
} river_gd_layout;

/* Read block `block` of copy `copy` of partition p (on disk `disk`) into
 * buf (bufsize >= records_per_block x record_size); set *nrecords. Called
 * on the rank serving `disk`. Return RIVER_SUCCESS or an error code
 * (RIVER_ENOTFOUND: this copy does not exist, and is not asked again).
 * What the callback logs is logged as it says: a failure another copy
 * will make good is GD's to judge, so a callback that expects mirrors
 * logs its failures as warnings (GD logs the error when no copy is left). */
typedef int (*river_gd_read_fn)(void *ctx, int partition, int copy, int disk,
                                uint64_t block, void *buf, size_t bufsize,
                                size_t *nrecords);

typedef struct river_gd river_gd;

/* Per-rank counters. */
typedef struct river_gd_stats {
  uint64_t blocks_received;  /* client: blocks of its partitions */
  uint64_t bytes_received;
  uint64_t failovers;        /* client: blocks asked again elsewhere */
  uint64_t blocks_served;    /* server: blocks its disks sent (a piece
                                of a split block, in a lost disk's
                                plan, counts as one) */
  uint64_t bytes_served;
  uint64_t seeks;            /* server: stream switches */
  double seconds;            /* client: from the start to its last block;
                                0 on a rank with no partitions */
  uint64_t cancels;          /* client, end game: blocks it asked a busy
                                mirror to withdraw */
  uint64_t cancelled;        /* ... of which withdrawn (not yet started)
                                and asked of an idle mirror instead */
  double served_seconds;     /* server: from the start until its disks
                                were done with their last block (an
                                emulated disk: its rate's time); 0 on a
                                rank with no disks or none served */
} river_gd_stats;

/*
 * Read collection pc (a reader handle from river_pcoll_open, opened on
 * every rank of comm) with GD. Collective; every rank must pass the same
 * options (else RIVER_EINVAL on every rank, naming what differs). On
 * failure *out is NULL. The collection's record size, block size and partition table
 * give the layout; pc must stay open until river_gd_close.
 */
RIVER_API int river_gd_open(MPI_Comm comm, river_pcoll *pc,
                            const river_gd_opts *opts, river_gd **out);

/* Read a custom mirrored source with GD (as river_gd_open; the layout and
 * read function are used on the ranks that need them and must describe
 * the same data on every rank). */
RIVER_API int river_gd_create(MPI_Comm comm, const river_gd_layout *layout,
                              river_gd_read_fn read, void *ctx,
                              const river_gd_opts *opts, river_gd **out);

/*
 * The next block for this rank: *records points at *nrecords records of
 * partition *partition, block *block (either may be NULL), valid until
 * the next call. RIVER_EOS once this rank's partitions are all delivered
 * and its disks have served every client; the first error otherwise.
 */
RIVER_API int river_gd_next(river_gd *gd, const void **records,
                            size_t *nrecords, int *partition,
                            uint64_t *block);

RIVER_API int river_gd_stats_get(const river_gd *gd, river_gd_stats *stats);

/* The read's communicator: River's duplicate of the one gd was opened
 * over (same ranks, same order; gd's own: do not free it). Local. */
RIVER_API int river_gd_comm(const river_gd *gd, MPI_Comm *comm);

/* What one of this rank's disks served from one partition copy it
 * stores, and to whom: the rank of the GD's communicator that reads the
 * partition. */
typedef struct river_gd_served {
  int disk, partition, copy;
  int client;
  uint64_t blocks, bytes;  /* sent (as river_gd_stats' blocks_served) */
} river_gd_served;

/* This rank's rows, one per (local disk, partition copy on it), into
 * rows[0..max-1] (rows may be NULL with max 0); *n is how many there
 * are, also where more than max: call with max 0 to size rows. Local. */
RIVER_API int river_gd_served_get(const river_gd *gd, river_gd_served *rows,
                                  size_t max, size_t *n);

/* Finish: collective. Returns the first error any rank met (the same on
 * every rank), so every rank fails together. Frees gd; NULL is a no-op
 * (but then the call is not collective). A rank that stops calling
 * river_gd_next early may leave other ranks waiting for its disks: call
 * river_gd_next until it returns non-success first. */
RIVER_API int river_gd_close(river_gd *gd);

/*
 * The fluid ideal of a GD read of n partitions on n disks with chained
 * replication r (partition p on disks p..p+r-1 mod n), disk d delivering
 * rates[d] bytes/s. Every client must get the same rate t, and a run of
 * consecutive clients j..k can only use disks j..k+r-1, so
 *   t* = min over all such runs (and the whole ring) of
 *        (sum of those disks' rates) / (clients in the run)
 * and the ideal total is n t*. *per_client = t*, *total = n t* (either may
 * be NULL). RIVER_EINVAL for n < 1, r outside 1..n or a negative rate;
 * RIVER_ENOMEM without room for 2n + 1 prefix sums. O(n^2) time.
 */
RIVER_API int river_gd_fluid_ideal(const double *rates, int n, int r,
                                   double *per_client, double *total);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_GD_H */
