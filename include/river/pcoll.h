/*
 * river/pcoll.h - parallel collections: a named set of partitions spread
 * over disks, with mirrors, described by one HDF5 metadata file.
 *
 * On disk, under a root directory (default $RIVER_ROOT, else
 * ./river-data):
 *
 *   ROOT/NAME.river.h5            metadata, written by one rank: the schema
 *                                 as an HDF5 compound type, the partition
 *                                 table, layout, replication, ordering
 *   DISK(d)/NAME.pP.GEN.rdat      partition P's data (a single-disk
 *                                 collection, river/collection.h) on each
 *                                 disk holding a copy; GEN identifies the
 *                                 write that made it
 *
 * DISK(d) is the disk pattern with d in place of its one %d ("disk%d",
 * relative to ROOT, by default). With replication r, partition p lives
 * on disks p, p+1, ..., p+r-1 (mod ndisks): chained declustering.
 *
 * Writing is collective: each rank of the writers' communicator writes
 * one partition (partition = rank), every copy of it. A collection
 * becomes visible only at river_pcoll_commit: data files are fsync'd,
 * then the metadata is written under a temporary name, fsync'd and
 * renamed into place; only then are the files of the collection it
 * replaces removed. A crash before that leaves the old collection intact.
 *
 * Reading: any number of ranks (not tied to the number of partitions)
 * open the metadata, each holding open the files of the copies it will
 * read (river_pcoll_hold), safe from a concurrent commit or remove;
 * each block read tries the partition's copies in turn, so a missing or
 * damaged copy is covered by a mirror.
 *
 * Errors are logged (RIVER_LOG_ERROR) naming the collection and, for
 * data, the partition, disk and block; collective calls return the same
 * code on every rank.
 *
 * Part of the River API; include <river.h> rather than this file.
 */
#ifndef RIVER_PCOLL_H
#define RIVER_PCOLL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include "river/core.h"
#include "river/schema.h"
#include "river/collection.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RIVER_PCOLL_NAME_MAX 128
#define RIVER_PCOLL_DEFAULT_ROOT "./river-data"
#define RIVER_PCOLL_DEFAULT_DISKS "disk%d"
/* A collection NAME's metadata is ROOT/NAME followed by this. */
#define RIVER_PCOLL_META_SUFFIX ".river.h5"

typedef enum river_layout {
  RIVER_LAYOUT_PARTITIONED = 0, /* partition p holds a contiguous run of
                                   the collection's records */
  RIVER_LAYOUT_INTERLEAVED = 1  /* record j lives in partition j mod P
                                   (round-robin by record, as in Bridge) */
} river_layout;

typedef struct river_pcoll river_pcoll;

/*
 * Which partition copies' files a reader opens with the metadata
 * (river_pcoll_opts.hold; doc/collections.md, "Readers and concurrent
 * writers"). A copy opened then is held until river_pcoll_close: a
 * commit of a new write of the same name, or a remove, cannot take its
 * data away. A copy not opened then is opened when first read, without
 * that guarantee: if the collection was replaced or removed meanwhile,
 * its read fails over to a mirror or fails (RIVER_ENOTFOUND), never
 * reading another write's data.
 */
typedef enum river_pcoll_hold {
  RIVER_PCOLL_HOLD_SERVED = 0, /* the default: the copies on the disks
                                  this rank serves, as
                                  river_pcoll_disk_ranks deals them over
                                  the open's communicator (what GD's
                                  servers, copy-out and fsck read) */
  RIVER_PCOLL_HOLD_ALL = 1,    /* every copy, up to a descriptor budget
                                  (doc/collections.md) */
  RIVER_PCOLL_HOLD_NONE = 2    /* none: the metadata only (a reader that
                                  wants facts, or that chooses its
                                  partitions from them:
                                  river_pcoll_hold_partitions) */
} river_pcoll_hold;

/* Options; NULL means all defaults. Fields marked "create" are ignored
 * by river_pcoll_open, which takes them from the metadata; "open" by
 * river_pcoll_create. */
typedef struct river_pcoll_opts {
  const char *root;     /* NULL: $RIVER_ROOT, else RIVER_PCOLL_DEFAULT_ROOT */
  const char *disks;    /* disk directory pattern with exactly one %d; a
                           relative pattern is under root and may not climb
                           out of it; no ".." component is accepted.
                           NULL: create uses RIVER_PCOLL_DEFAULT_DISKS,
                           open the pattern recorded at create */
  int ndisks;           /* create: 0 = one disk per partition */
  int replication;      /* create: copies of each partition (1..ndisks);
                           0 = 1 */
  river_layout layout;  /* create */
  size_t block_size;    /* create: 0 = RIVER_COLL_DEFAULT_BLOCK_SIZE */
  int ordered;          /* create: 1 = partitions are in key order (each
                           partition's keys ascend and partition p's last
                           key <= partition p+1's first); checked at commit */
  int direct_io;        /* O_DIRECT data I/O where the file system allows */
  river_pcoll_hold hold; /* open: which copies' files the open holds (the
                           same on every rank); 0 =
                           RIVER_PCOLL_HOLD_SERVED */
  int exclusive;        /* create: 1 = never replace a collection of this
                           name: refused at create (RIVER_EEXIST, said) if
                           one exists then, and at commit (RIVER_EBUSY)
                           if another job committed one meanwhile. 0 (the
                           default) replaces it at the commit */
} river_pcoll_opts;

#define RIVER_PCOLL_OPTS_INIT {NULL, NULL, 0, 0, RIVER_LAYOUT_PARTITIONED, 0, 0, 0, \
                               RIVER_PCOLL_HOLD_SERVED, 0}

/* Facts about a collection (from its metadata). */
typedef struct river_pcoll_info {
  char name[RIVER_PCOLL_NAME_MAX + 1];
  uint64_t nrecords;
  size_t record_size;
  int npartitions;
  int ndisks;
  int replication;
  river_layout layout;
  int ordered;
  size_t block_size;
  char generation[17];  /* hex id of the write that made it */
} river_pcoll_info;

/* One partition's entry in the partition table. */
typedef struct river_pcoll_part {
  uint64_t nrecords;
  uint64_t bytes;       /* nrecords * record_size */
  uint64_t nblocks;
  uint32_t checksum;    /* CRC32C of the partition file's block-CRC table */
  int first_disk;       /* copy c is on disk (first_disk + c) mod ndisks */
  char path[RIVER_PCOLL_NAME_MAX + 64]; /* file name relative to its disk */
} river_pcoll_part;

/*
 * Start writing collection `name` (letters, digits, '.', '_', '-'; not
 * starting with '.' or '-', no ".."; at most RIVER_PCOLL_NAME_MAX bytes)
 * with the given schema. Collective over comm: rank i writes partition i. The
 * schema is copied. Disk directories are created as needed.
 */
RIVER_API int river_pcoll_create(MPI_Comm comm, const char *name,
                                 const river_schema *schema,
                                 const river_pcoll_opts *opts,
                                 river_pcoll **out);

/*
 * Write several partitions from one rank, or none (writers that take
 * whole units of work as they come, like the sort's writers taking
 * sorted runs): start a new partition of this rank's. The records
 * written from now on go to it, stored on this rank's disk (rank mod
 * ndisks) and, for mirrors, the next ones. At the commit the partitions
 * every rank began are numbered 0, 1, ... in ascending `order` (two with
 * the same order fail the commit); a rank that begins none adds none. A
 * rank that wrote records before its first call gets RIVER_ESTATE
 * (and the commit fails): a collection is written either one partition
 * per rank or all by this call. An empty partition is kept.
 */
RIVER_API int river_pcoll_begin_partition(river_pcoll *pc, uint64_t order);

/* Append nrecords records to this rank's partition (every copy). */
RIVER_API int river_pcoll_write(river_pcoll *pc, const void *records,
                                size_t nrecords);

/* river_pcoll_write of records whose size the caller states (sizeof of
 * its record type: RIVER_PCOLL_WRITE_TYPED): RIVER_EINVAL, said, naming
 * both sizes, if it is not the schema's record size, so that a type
 * that does not match the schema (a field more, other padding) cannot
 * write records that read back shifted. The Fortran module's
 * river_pcoll_write checks a derived type's size this way. */
RIVER_API int river_pcoll_write_sized(river_pcoll *pc, const void *records,
                                      size_t nrecords, size_t record_size);
#define RIVER_PCOLL_WRITE_TYPED(pc, records, n) \
  river_pcoll_write_sized((pc), (records), (n), sizeof *(records))

/*
 * Make the collection visible (see above) and free pc. Collective. If any
 * rank failed, no rank commits, every file of this write is removed, a
 * previous collection of the same name stays as it was, and every rank
 * returns the error.
 */
RIVER_API int river_pcoll_commit(river_pcoll *pc);

/*
 * Open collection `name` for reading: collective over comm; rank 0 reads
 * the metadata and broadcasts it, every rank checks it (a missing or
 * unreadable metadata file is reported by rank 0 alone), and each rank
 * opens the partition copies' files opts->hold names (by default those
 * on the disks it serves: RIVER_PCOLL_HOLD_SERVED), which it holds until
 * river_pcoll_close; should a commit or remove replace the metadata
 * meanwhile, the open starts again. Rank 0 holds the metadata file open
 * as long (one descriptor). RIVER_ENOTFOUND if there is none;
 * RIVER_EACCES if the caller may not read it; RIVER_ECORRUPT if it is not
 * a regular file (refused at once: a FIFO is never waited on), cannot be
 * read or contradicts itself; RIVER_EAGAIN if it changed during each of
 * a few tries. RIVER_EINVAL, *out untouched, for a NULL comm, name or
 * out (at once, not collective), and on every rank for a bad name or
 * disk pattern, opts->hold not a river_pcoll_hold, or ranks that passed
 * different hold values or disk patterns of different kinds (node-local
 * or shared).
 */
RIVER_API int river_pcoll_open(MPI_Comm comm, const char *name,
                               const river_pcoll_opts *opts,
                               river_pcoll **out);

/*
 * Hold the files of every copy of partitions parts[0..nparts) (copy 0
 * of each first, within the descriptor budget river_pcoll_open keeps),
 * as river_pcoll_open holds those it opens: for a reader that chooses
 * what it reads from the metadata (opened with RIVER_PCOLL_HOLD_NONE,
 * say; river valsort). Collective over the communicator pc was opened
 * on; each rank passes its own list (nparts 0: none; a partition listed
 * twice, or already held, is held once). Once every rank has opened its
 * files, rank 0 checks that the metadata is still the one it opened:
 * RIVER_SUCCESS, and every copy opened is held until river_pcoll_close;
 * RIVER_EAGAIN (not logged) if a commit or remove replaced it since the
 * open: the files the reader's metadata names may be gone, so close and
 * open again. A copy whose file cannot be opened is reported when first
 * read, as for river_pcoll_open. RIVER_EINVAL at once (not collective)
 * for a NULL pc; on every rank, logged, for a writer's handle, nparts <
 * 0, parts NULL with nparts > 0, or a partition out of range on any
 * rank.
 */
RIVER_API int river_pcoll_hold_partitions(river_pcoll *pc, const int *parts,
                                          int nparts);

/* Close a reader, or abandon a writer (collective then: its files are
 * removed). Frees pc; NULL is a no-op. */
RIVER_API int river_pcoll_close(river_pcoll *pc);

RIVER_API int river_pcoll_info_get(const river_pcoll *pc,
                                   river_pcoll_info *info);

/* The schema (borrowed: valid while pc lives). */
RIVER_API int river_pcoll_schema(const river_pcoll *pc,
                                 const river_schema **schema);

/* Partition p's table entry (reader). */
RIVER_API int river_pcoll_partition(const river_pcoll *pc, int p,
                                    river_pcoll_part *part);

/* The disk holding copy c (0 <= c < replication) of partition p
 * (reader): (first_disk + c) mod ndisks. */
RIVER_API int river_pcoll_copy_disk(const river_pcoll *pc, int p, int c,
                                    int *disk);

/* The directory of disk d under this collection's root and pattern, into
 * buf with the caller-buffer contract (see river_build_info). */
RIVER_API int river_pcoll_disk_path(const river_pcoll *pc, int d, char *buf,
                                    size_t *len);

/* *local = 1 if pc's disks are node-local (its disk pattern has %n: each
 * node sees only its own disks' files, so a rank can read only the
 * copies its node holds; read through GD, river_gd_open, to read them
 * all), else 0. */
RIVER_API int river_pcoll_node_local(const river_pcoll *pc, int *local);

/* Which rank of comm serves each disk (ranks: ndisks entries), for
 * readers that deal out work by disk (GD's servers, fsck). Collective
 * over comm; every rank passes its reader of the same collection. Disk d
 * goes to rank d mod size. Where the disks are node-local (a pattern
 * with %n: each node sees only its own disks' files), it goes to rank d
 * mod size if that rank holds a file of disk d, else to the next rank
 * (d mod size + 1, ...) that does; if none does (a lost node's disk),
 * to rank d mod size, whose reads then fail over to the mirrors. Over
 * the communicator of the open, these are the disks whose copies
 * RIVER_PCOLL_HOLD_SERVED held (which disks a node holds is decided at
 * such an open, else looked at now). O(ndisks) memory and one
 * reduction of ndisks integers.
 * RIVER_EINVAL for a NULL argument, a writer, or ranks whose
 * collections have different numbers of disks. */
RIVER_API int river_pcoll_disk_ranks(MPI_Comm comm, const river_pcoll *pc,
                                     int *ranks);

/*
 * Read block `block` of partition p into buf (at least records_per_block
 * * record_size bytes), verified. Tries the copies in order starting with
 * the first disk; a missing, damaged or mismatched copy is logged (warn)
 * and the next copy is tried. Only if every copy fails is the read an
 * error, logged naming the collection, partition and block:
 * RIVER_ENOTFOUND if no copy's file exists, RIVER_EACCES if some copy
 * could not be opened for lack of permission (its data may be intact),
 * else RIVER_ECORRUPT (a copy that failed to open keeps failing the same
 * way for this handle; a copy that is not a regular file, e.g. a FIFO,
 * fails at once).
 * *nrecords gets the block's record count. RIVER_EINVAL for p or block
 * out of range or a writer's handle; RIVER_ENOBUFS if bufsize is below
 * records_per_block * record_size (even for a short last block), before
 * any copy is read.
 */
RIVER_API int river_pcoll_read_block(river_pcoll *pc, int p, uint64_t block,
                                     void *buf, size_t bufsize,
                                     size_t *nrecords);

/*
 * Read block `block` of copy c (0 <= c < replication) of partition p only,
 * as river_pcoll_read_block but with no fallback to other copies (for
 * readers that choose the copy themselves, such as graduated
 * declustering, river/gd.h). Failures are logged naming partition,
 * disk and block (what is wrong with the copy's file as an error, then
 * a warning that the copy failed; river_pcoll_read_copy_level logs them
 * milder); RIVER_ENOTFOUND if the copy's file does not exist.
 */
RIVER_API int river_pcoll_read_copy(river_pcoll *pc, int p, int c,
                                    uint64_t block, void *buf, size_t bufsize,
                                    size_t *nrecords);

/*
 * river_pcoll_read_copy for a reader that recovers from a failed copy
 * itself (another mirror holds the block: graduated declustering,
 * river/gd.h): what river_pcoll_read_copy logs as an error is logged at
 * fail_level (RIVER_LOG_ERROR..RIVER_LOG_DEBUG), its warnings stay
 * warnings unless fail_level is milder. Once the arguments pass, *dead
 * (dead may be NULL) gets 1 if copy c is now known to be unusable for
 * every block (its file could not be opened or does not match the
 * metadata: every later read of it through pc fails the same way at
 * once, unlogged), 0 if not (the failure, if any, is this block's).
 * Not collective. RIVER_EINVAL, outputs untouched, for what
 * river_pcoll_read_copy refuses and for fail_level out of range;
 * RIVER_ENOBUFS as river_pcoll_read_copy's, *dead untouched.
 */
RIVER_API int river_pcoll_read_copy_level(river_pcoll *pc, int p, int c,
                                          uint64_t block, void *buf,
                                          size_t bufsize, size_t *nrecords,
                                          int fail_level, int *dead);

/*
 * Open copy c (0 <= c < replication) of partition p for reading now, as
 * its first read would, and compare its file with the metadata (record
 * size, record count, block size, the checksum of its block table); no
 * block is read (river_pcoll_verify_copy reads them all). For readers
 * that deal out work by copy and want to know the lost ones before they
 * start (graduated declustering). RIVER_SUCCESS if the copy is usable;
 * any other answer but RIVER_EINVAL means it is unusable for every block,
 * and says why (RIVER_ENOTFOUND if its file does not exist,
 * RIVER_EACCES, RIVER_ECORRUPT, RIVER_EIO, ...; RIVER_ENOMEM or a
 * process out of file descriptors, too: the copy is then unusable to pc,
 * though a new handle may open it), logged at fail_level
 * as river_pcoll_read_copy_level logs; later checks and reads of that
 * copy through pc fail the same way at once, unlogged. The file stays
 * open with pc (until river_pcoll_close). Not collective. RIVER_EINVAL
 * for a NULL or writer's handle, p, c or fail_level out of range.
 */
RIVER_API int river_pcoll_check_copy(river_pcoll *pc, int p, int c,
                                     int fail_level);

/*
 * Records lo..lo+n-1 (n >= 1, within the block) of block `block` of copy
 * c of partition p into buf as they lie in the file, not verified: for a
 * reader that fetches the pieces of one block from different copies and
 * checks the block once it has them all (graduated declustering). *crc
 * gets the block's stored checksum: the CRC32C (river_crc32c) of the
 * block's whole extent on disk, its records then its padding. The piece
 * that ends the block brings that padding after its records (*padlen
 * bytes; 0 for the other pieces), so the pieces laid end to end are the
 * extent: buf needs n x record_size + *padlen bytes, which the block
 * size (river_pcoll_info.block_size) always holds. With direct I/O
 * (river_pcoll_opts.direct_io) the whole block is read and verified.
 * A block holds records_per_block records (river_pcoll_blocks), the
 * last one of a partition what is left. Failures are logged and *dead
 * (dead may be NULL) set as river_pcoll_read_copy_level's. RIVER_ENOBUFS
 * if bufsize is short: the copy was opened (a copy that cannot be gives
 * its own error instead), *padlen says the padding the piece brings and
 * *dead is set, nothing is read. Not collective. RIVER_EINVAL, outputs
 * untouched, for a NULL or writer's handle, NULL buf, padlen or crc, and
 * p, c, block, lo, n or fail_level out of range.
 */
RIVER_API int river_pcoll_read_copy_range(river_pcoll *pc, int p, int c,
                                          uint64_t block, uint64_t lo,
                                          uint64_t n, void *buf,
                                          size_t bufsize, size_t *padlen,
                                          uint32_t *crc, int fail_level,
                                          int *dead);

/* The number of records per block and the block count of partition p. */
RIVER_API int river_pcoll_blocks(const river_pcoll *pc, int p,
                                 size_t *records_per_block, uint64_t *nblocks);

/*
 * Check copy c (0 <= c < replication) of partition p: the file exists,
 * matches the metadata (record size, count, checksum) and every block
 * verifies. RIVER_SUCCESS, or the error with *bad_block set to the first
 * damaged block (UINT64_MAX if the file as a whole is bad). Each problem
 * is logged naming partition, disk, file and block. bad_block may be NULL.
 */
RIVER_API int river_pcoll_verify_copy(river_pcoll *pc, int p, int c,
                                      uint64_t *bad_block);

/*
 * Check every block of copy c (0 <= c < replication) of partition p, as
 * river_pcoll_verify_copy does, without stopping at the first damage, so
 * that a caller can judge each block across the copies (river fsck).
 * bad[b] gets 1 for each block b that does not verify (unreadable, or its
 * checksum does not match) and 0 for each that does; a copy whose file is
 * missing, unreadable or not matching the metadata has every block bad.
 * nblocks is bad's length and must equal the partition's block count
 * (river_pcoll_blocks); bad may be NULL only when that is 0. *nbad (nbad
 * may be NULL) gets the number of bad blocks. Returns RIVER_SUCCESS if
 * the copy is intact, else the first failure: RIVER_ENOTFOUND if the
 * file does not exist, RIVER_ECORRUPT, RIVER_EIO, ... with bad and *nbad
 * filled in. Each problem is logged as a warning (whether it loses data
 * depends on the other copies) naming partition, disk and block. Not
 * collective; the copy's file is opened and closed by the call. On
 * RIVER_EINVAL (p, c or nblocks out of range, a writer's handle, bad NULL
 * with blocks to report) or RIVER_ENOMEM the outputs are untouched.
 */
RIVER_API int river_pcoll_verify_blocks(river_pcoll *pc, int p, int c,
                                        unsigned char *bad, uint64_t nblocks,
                                        uint64_t *nbad);

/*
 * Remove collection `name`: the metadata first (so the collection
 * disappears at once), then its data files. Not collective: call on one
 * rank. Takes the name's writers' lock: RIVER_EBUSY if a job is writing
 * or removing it. RIVER_ENOTFOUND if there is no such collection. If the
 * metadata cannot be read (damaged: RIVER_ECORRUPT; not permitted:
 * RIVER_EACCES; not a regular file) nothing is removed and the error is
 * returned: river_pcoll_purge removes such a collection. Nor is anything
 * removed (RIVER_EACCES, logged naming the file and its owner) if the
 * metadata file belongs to a user other than the caller's effective
 * user, root included: its seal has no secret, so it may name another
 * root's files (doc/collections.md, "What River believes of a metadata
 * file"). With node-local disks (a pattern with %n) only the files this
 * node sees go (river_pcoll_remove_all removes every node's).
 */
RIVER_API int river_pcoll_remove(const char *name,
                                 const river_pcoll_opts *opts);

/* river_pcoll_remove on rank 0 of comm, collectively: where the disks
 * are node-local (a pattern with %n), every node's ranks then remove the
 * files their node holds, so a job with a rank on each node removes the
 * collection whole. The same outcome on every rank. RIVER_EINVAL for a
 * NULL name or comm, or before MPI_Init. */
RIVER_API int river_pcoll_remove_all(MPI_Comm comm, const char *name,
                                     const river_pcoll_opts *opts);

/* One file river_pcoll_gc or river_pcoll_purge found (and removed, if
 * asked to). The strings live only during the report call. */
typedef struct river_pcoll_leftover {
  const char *path;     /* the file */
  const char *name;     /* the collection it is named for */
  const char *what;     /* what it is, e.g. "unfinished data file (a
                           write that never committed)" */
  uint64_t bytes;       /* its size */
  int removed;          /* 1: removed; 0: listed only, or removal failed
                           (a warning says why) */
} river_pcoll_leftover;

typedef void (*river_pcoll_leftover_fn)(const river_pcoll_leftover *l,
                                        void *arg);

/*
 * Find the files under the root opts selects that no collection needs:
 * data files still being written when their job died (*.rdat.tmp), data
 * files of no collection or of a generation the metadata no longer
 * names, temporary metadata and staged copy-in streams. (Empty lock
 * files of names without a collection are removed quietly, also when
 * only listing.) Disks searched: those of every readable
 * collection there, and opts->disks (else $RIVER_DISKS, else
 * RIVER_PCOLL_DEFAULT_DISKS) under the root. The files of a name whose metadata cannot be read are
 * left alone (river_pcoll_purge removes them); so are those of a name a
 * job is writing (its lock is held; the call takes each name's lock
 * while it judges that name's files, so a writer starting meanwhile
 * fails with RIVER_EBUSY) and staged streams still being staged.
 * Disk directories are judged after resolving links: one outside the
 * root (and not of opts->disks) may be another root's too, so there only
 * files of a generation this root's write records or temporary metadata
 * name are judged. A data file of a generation the metadata does not
 * name that looks newer than the metadata (none of the metadata's own
 * files found, or younger than the newest of them: a metadata file
 * restored from an older copy) is reported but kept, and not counted,
 * unless remove has RIVER_PCOLL_GC_FORCE.
 * report (may be NULL) is called once per file found, in name order;
 * remove: 0 list, 1 remove them too, 1 | RIVER_PCOLL_GC_FORCE remove
 * also those newer than their metadata.
 * *nfiles and *nbytes (either may be NULL) get the number and size of
 * the files found (not those kept). Not collective. RIVER_SUCCESS
 * also when nothing is found or the root does not exist.
 */
#define RIVER_PCOLL_GC_FORCE 2  /* river_pcoll_gc: also data files newer
                                   than their collection's metadata */

RIVER_API int river_pcoll_gc(const river_pcoll_opts *opts, int remove,
                             river_pcoll_leftover_fn report, void *arg,
                             uint64_t *nfiles, uint64_t *nbytes);

/*
 * Remove every file named for collection `name` under the root opts
 * selects, whatever its generation or state: the metadata (even if it
 * cannot be read; not if it is no regular file), every data file
 * NAME.pP.GEN.rdat[.tmp] on the disks river_pcoll_gc searches,
 * temporaries (and, unreported, the lock file). For a collection whose metadata is
 * damaged, after confirmation (`river rm --force`). In a disk directory
 * outside the root's own (as river_pcoll_gc decides) it removes only
 * files of a generation the root's write records claim, and those of
 * the metadata's generation if the caller's effective user owns the
 * metadata file (another user's may name another root's files). report, *nfiles and
 * *nbytes as for river_pcoll_gc. RIVER_ENOTFOUND (logged) if nothing
 * of that name exists; RIVER_EBUSY if a job is writing it. Not
 * collective.
 */
RIVER_API int river_pcoll_purge(const char *name,
                                const river_pcoll_opts *opts,
                                river_pcoll_leftover_fn report, void *arg,
                                uint64_t *nfiles, uint64_t *nbytes);

/*
 * A claim on a scratch collection: one a job makes and removes itself
 * (a two-pass sort's runs). Claim it before it is created and release
 * it after it is removed; should the process die in between, the claim
 * outlives it (a locked record under ROOT/.river-outside that no one
 * holds) and river_pcoll_gc of that root lists the collection as a
 * leftover, and removes it, data files and all, with remove set. Not
 * collective: one rank claims. RIVER_EINVAL for NULL or a bad name;
 * RIVER_EACCES or RIVER_EIO (logged) if the record cannot be made.
 */
typedef struct river_pcoll_scratch river_pcoll_scratch;

RIVER_API int river_pcoll_scratch_claim(const char *name,
                                        const river_pcoll_opts *opts,
                                        river_pcoll_scratch **out);

/* Drop a claim and free it (the collection itself is the caller's to
 * remove first). NULL is a no-op. */
RIVER_API void river_pcoll_scratch_release(river_pcoll_scratch *sc);

/* Check a collection name (see river_pcoll_create): RIVER_SUCCESS or
 * RIVER_EINVAL with a logged reason. */
RIVER_API int river_pcoll_check_name(const char *name);

/* ------------------------------------------------------------ where */

/*
 * The root directory opts selects (opts->root, else $RIVER_ROOT if set and
 * not empty, else RIVER_PCOLL_DEFAULT_ROOT; opts may be NULL), into buf
 * with the caller-buffer contract (see river_build_info). Not collective.
 */
RIVER_API int river_pcoll_root(const river_pcoll_opts *opts, char *buf,
                               size_t *len);

/*
 * The directory of disk d (>= 0) that a collection created with opts
 * would use: opts->disks (else $RIVER_DISKS if set and not empty, else
 * RIVER_PCOLL_DEFAULT_DISKS) expanded for d (and %n for this rank's
 * node), under the root opts selects (see river_pcoll_root) if relative;
 * opts may be NULL. Into buf with the caller-buffer contract (see
 * river_build_info). Not collective; touches no file (river topo shows
 * where each rank's disk is). RIVER_EINVAL (logged) for a bad pattern or
 * root.
 */
RIVER_API int river_pcoll_disk_dir(const river_pcoll_opts *opts, int d,
                                   char *buf, size_t *len);

/*
 * The collections under the root opts selects (see river_pcoll_root): the
 * names of the metadata files there that are valid collection names,
 * sorted (strcmp), each followed by '\n', into buf with the caller-buffer
 * contract (see river_build_info); *count gets their number on success.
 * A name listed may still fail to open (damaged metadata, or an entry
 * that is not a regular file, such as a FIFO: the listing opens no file,
 * so it cannot wait on one, and river_pcoll_open refuses it at once). Not
 * collective. RIVER_ENOTFOUND (not logged as an error) if the root does
 * not exist; RIVER_EIO if it cannot be read.
 */
RIVER_API int river_pcoll_list(const river_pcoll_opts *opts, char *buf,
                               size_t *len, int *count);

/* ----------------------------------------------------------- layout */

/*
 * Which of nrecords records (numbered 0..nrecords-1 in collection order)
 * partition p of npartitions holds when they are dealt out evenly under
 * layout: records *first, *first + *stride, ..., *count of them.
 * PARTITIONED: a contiguous run (*stride 1), partition sizes differing by
 * at most one; INTERLEAVED: records p, p + npartitions, ... The river
 * command's gen and copy-in write this way, with rank p writing
 * partition p; its fsck deals partitions to ranks as INTERLEAVED. Pure
 * arithmetic, not collective. RIVER_EINVAL for an unknown layout,
 * npartitions < 1, p outside 0..npartitions-1 or a NULL output.
 */
RIVER_API int river_pcoll_split(river_layout layout, uint64_t nrecords,
                                int npartitions, int p, uint64_t *first,
                                uint64_t *stride, uint64_t *count);

/*
 * Putting a collection's blocks back into record order. Feed it the
 * blocks in write order: a partitioned collection's partition by
 * partition (they pass straight through), an interleaved collection's
 * stripe by stripe: block b of every partition that has one, in any
 * partition order, then block b + 1 (the order river_gd_next delivers
 * in RIVER_GD_STREAM mode). For an interleaved collection the records of
 * stripe b come out, in record order, once every partition gave its
 * block b, or a block of a later stripe arrives, or at the flush.
 */
typedef struct river_pcoll_order river_pcoll_order;

/* A reorderer for pc's layout (it keeps no reference to pc). Free it
 * with river_pcoll_order_destroy. Memory: two stripes (2 * npartitions
 * * block_size bytes) for an interleaved collection. Not collective. */
RIVER_API int river_pcoll_order_create(const river_pcoll *pc,
                                       river_pcoll_order **out);

/*
 * Give block `block` of partition p: nrecords records (at most a block's)
 * at records. *ready and *nready get the records now in record order
 * (*nready may be 0, *ready then NULL); they are borrowed: records
 * itself for a partitioned collection, else valid until the next call
 * on o. RIVER_EINVAL for NULL arguments, p out of range, too many
 * records, or (interleaved) a block of a stripe already handed out or
 * a partition's block given twice in one stripe.
 */
RIVER_API int river_pcoll_order_add(river_pcoll_order *o, int p,
                                    uint64_t block, const void *records,
                                    size_t nrecords, const void **ready,
                                    size_t *nready);

/* At the end of the blocks: the records still held (the last stripe of
 * an interleaved collection), as river_pcoll_order_add gives them. */
RIVER_API int river_pcoll_order_flush(river_pcoll_order *o,
                                      const void **ready, size_t *nready);

/* Free o; NULL is a no-op. */
RIVER_API int river_pcoll_order_destroy(river_pcoll_order *o);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_PCOLL_H */
