/*
 * river/collection.h - single-disk collections: one file of fixed-size
 * records, read and written in large checksummed blocks.
 *
 * A parallel collection (river/pcoll.h) is made of these, one file per
 * partition copy. Each can be read as a stream (blocks in write order,
 * river_coll_next) or by block index in any order (river_coll_read_block,
 * used by unordered and mirrored readers).
 *
 * File format, version 1 (integers little-endian):
 *
 *   [0, 4096)            header (layout in src/collection_internal.h),
 *                        ending in the CRC32C of its first 4092 bytes
 *   4096 + i*block_size  block i: records [i*rpb, min((i+1)*rpb, n)) where
 *                        rpb = block_size / record_size, then zero padding
 *                        to block_size (the last block: to a multiple of
 *                        4096), so every block starts 4 KiB-aligned
 *   trailer_offset       nblocks CRC32C values, block i's covering its
 *                        whole padded extent; the header holds the CRC32C
 *                        of this table
 *
 * The file is exactly trailer_offset + 4 * nblocks bytes. Every byte is
 * covered by a checksum, so any flipped byte is detected.
 *
 * A writer writes "<path>.tmp"; river_coll_commit flushes, fsyncs and
 * renames it to path, so a file at path is always complete.
 *
 * Handles are not thread-safe; no call is collective; no MPI needed.
 * Errors are logged (RIVER_LOG_ERROR) with the path and, for data errors,
 * the block index, then returned as codes.
 *
 * Part of the River API; include <river.h> rather than this file.
 */
#ifndef RIVER_COLLECTION_H
#define RIVER_COLLECTION_H

#include <stddef.h>
#include <stdint.h>
#include "river/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RIVER_COLL_DEFAULT_BLOCK_SIZE ((size_t)1 << 20)
#define RIVER_COLL_ALIGN 4096
#define RIVER_COLL_LABEL_MAX 255

typedef struct river_coll river_coll;

/* Options for river_coll_create/open; NULL means all defaults. */
typedef struct river_coll_opts {
  size_t block_size;  /* bytes per block on disk: a multiple of 4096;
                         0 = RIVER_COLL_DEFAULT_BLOCK_SIZE. Ignored by
                         open (the file says). */
  int direct_io;      /* 1: open with O_DIRECT (bypass the page cache);
                         falls back to buffered I/O where refused */
  const char *label;  /* create only: text kept in the header (at most
                         RIVER_COLL_LABEL_MAX bytes), e.g. "sort p3 c1";
                         NULL for none */
} river_coll_opts;

#define RIVER_COLL_OPTS_INIT {0, 0, NULL}

/* What a collection's header says. */
typedef struct river_coll_info {
  size_t record_size;
  size_t block_size;        /* on-disk block stride in bytes */
  size_t records_per_block;
  uint64_t nrecords;
  uint64_t nblocks;
  uint32_t table_crc;       /* CRC32C of the block-CRC table: a digest of
                               the whole file's contents */
  char label[RIVER_COLL_LABEL_MAX + 1];
} river_coll_info;

/*
 * Start writing a new collection of record_size-byte records at path
 * (written as "<path>.tmp" until river_coll_commit). An existing file at
 * path is untouched until the commit replaces it. RIVER_EINVAL for
 * record_size 0, a block_size that is not a positive multiple of 4096 or
 * is smaller than record_size, or a label that is too long.
 */
RIVER_API int river_coll_create(const char *path, size_t record_size,
                                const river_coll_opts *opts, river_coll **out);

/* Append nrecords records (nrecords * record_size bytes at records).
 * After a failed write (RIVER_EIO) the writer is spent: further appends
 * and river_coll_commit return RIVER_ESTATE. */
RIVER_API int river_coll_append(river_coll *c, const void *records,
                                size_t nrecords);

/*
 * Finish a collection being written: write the last block, the trailer
 * and the header, fsync, rename "<path>.tmp" to path and fsync the
 * directory. Frees c whether or not it succeeds; on failure the temporary
 * file is removed and path is as it was. RIVER_EINVAL for a reader (which
 * is left open).
 */
RIVER_API int river_coll_commit(river_coll *c);

/*
 * Open the collection at path for reading and check its header, size and
 * block-CRC table. record_size 0 accepts any record size; otherwise a
 * different one is RIVER_EFORMAT. A missing file is RIVER_ENOTFOUND; one
 * the caller may not read, RIVER_EACCES. Only a regular file is opened: a
 * FIFO, directory or device is refused at once (never waited on) as
 * RIVER_ECORRUPT, naming path. A bad header, a wrong size (truncated or
 * extended; the message names the first block that is missing) or a
 * damaged table is RIVER_ECORRUPT.
 */
RIVER_API int river_coll_open(const char *path, size_t record_size,
                              const river_coll_opts *opts, river_coll **out);

/* Close a reader, or abandon a writer (its temporary file is removed and
 * path is untouched). Frees c; NULL is a no-op. */
RIVER_API int river_coll_close(river_coll *c);

/* The header's facts. For a writer: what has been appended so far. */
RIVER_API int river_coll_stat(const river_coll *c, river_coll_info *info);

/*
 * Read block `block` (0 <= block < nblocks) into buf (bufsize bytes, at
 * least records_per_block * record_size, else RIVER_ENOBUFS) and verify
 * its checksum. On success *nrecords is the number of records in the
 * block. A checksum mismatch is RIVER_ECORRUPT, logged with the path and
 * block index; a short read (file changed underneath) is RIVER_EIO. The
 * data is read straight into buf, so after a failure its contents are
 * undefined.
 */
RIVER_API int river_coll_read_block(river_coll *c, uint64_t block, void *buf,
                                    size_t bufsize, size_t *nrecords);

/*
 * Stream access: the next block's records in write order, verified.
 * *records is borrowed: valid until the next call on c. Returns RIVER_EOS
 * after the last block (and keeps returning it).
 */
RIVER_API int river_coll_next(river_coll *c, const void **records,
                              size_t *nrecords);

/* Restart stream access at block 0. */
RIVER_API int river_coll_rewind(river_coll *c);

/*
 * Read and verify every block. Returns RIVER_SUCCESS, or RIVER_ECORRUPT
 * with *bad_block set to the first damaged block (each damaged block is
 * logged). bad_block may be NULL.
 */
RIVER_API int river_coll_verify(river_coll *c, uint64_t *bad_block);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_COLLECTION_H */
