/*
 * collection_internal.h - what the files of single-disk collections share
 * and nothing else sees: the file format (below), the handle, the
 * byte-order and layout arithmetic both sides use, and the
 * river__coll_* functions one file provides to the other and to the
 * parallel collections' files.
 *
 *   collection.c        the handle's lifecycle, the header's encoding and
 *                       decoding, and the reader (open, read, verify, stat)
 *   collection_write.c  the writer (create, append, commit; finish and
 *                       commit_as)
 *
 * Each file includes this header and neither includes the other.
 * Single-disk and parallel collections are one concept, collections
 * (doc/collections.md: a parallel collection's partition copies are
 * single-disk collections): pcoll_internal.h includes this header, and
 * the pcoll*.c files use the river__coll_* calls at its end (a copy
 * written under a provisional name and renamed at the commit, opened
 * on a descriptor held since the metadata was read, read with the
 * failure level of a reader that has a mirror to try). No other file
 * includes it.
 *
 * Single-disk collections: one file of fixed-size records in large,
 * checksummed, 4 KiB-aligned blocks.
 *
 * A handle (struct river_coll) is either a writer (tmp != NULL: it
 * streams each block through an aligned buffer that starts small and
 * grows up to the block size or 8 MiB, pwrite()s it to "<path>.tmp" in
 * aligned pieces, and keeps the block CRCs in a growing array) or a reader
 * (the header's facts, the whole block-CRC table in memory, and an
 * aligned buffer that holds one block for river_coll_next). Every read
 * of a block is checked against the table.
 *
 * Header, version 1 (4096 bytes at offset 0, integers little-endian):
 *
 *   offset  size  field
 *        0     8  magic "RIVERCOL"
 *        8     4  version = 1
 *       12     4  header_size = 4096
 *       16     8  record_size
 *       24     8  block_size (a multiple of 4096, >= record_size)
 *       32     8  records_per_block = block_size / record_size
 *       40     8  nrecords
 *       48     8  nblocks = ceil(nrecords / records_per_block)
 *       56     8  trailer_offset = 4096 + (nblocks - 1) * block_size
 *                 + (the last block's records, in bytes, rounded up to a
 *                 multiple of 4096); 4096 when nblocks is 0
 *       64     4  table_crc: CRC32C of the trailer's 4 * nblocks bytes
 *       68     4  reserved, 0
 *       72   256  label, NUL-padded (at most 255 bytes of text)
 *      328  3764  zero
 *     4092     4  header_crc: CRC32C of bytes [0, 4092)
 *
 * The writer writes the blocks, then at commit the last block, the
 * trailer and the header (last), fsyncs, renames and fsyncs the
 * directory. The reader checks the header's fields with overflow-checked
 * arithmetic and the file's exact size before it allocates anything
 * sized by the header, so a header that lies costs nothing.
 *
 * direct_io: O_DIRECT is switched on with fcntl() once the file is open
 * (and, for a reader, once the header and trailer have been read with
 * buffered I/O); where the file system refuses it (EINVAL) River says so
 * at debug level and stays buffered. Under O_DIRECT only whole blocks
 * (a writer: pieces of blocks, multiples of 4096 bytes) move, from the
 * aligned buffer at aligned offsets; a writer switches O_DIRECT off
 * again before it writes the trailer and the header.
 *
 * Severity: the reader's failures are logged at a level its caller
 * passes down (river__coll_open_at, river__coll_read_block_at): an error
 * for the public calls, milder for a caller with another copy to try.
 */
#ifndef RIVER_COLLECTION_INTERNAL_H
#define RIVER_COLLECTION_INTERNAL_H

#include "river_internal.h"
#include "file_internal.h"

#include <stdint.h>
#include <sys/types.h>

#define RIVER_COLL_MAGIC "RIVERCOL"
#define RIVER_COLL_VERSION 1
#define RIVER_COLL_HDR_SIZE 4096

/* Byte offsets of the header's fields (see the table above). */
enum {
  RIVER_COLL_H_MAGIC = 0,
  RIVER_COLL_H_VERSION = 8,
  RIVER_COLL_H_HDRSIZE = 12,
  RIVER_COLL_H_RECSIZE = 16,
  RIVER_COLL_H_BLKSIZE = 24,
  RIVER_COLL_H_RPB = 32,
  RIVER_COLL_H_NRECORDS = 40,
  RIVER_COLL_H_NBLOCKS = 48,
  RIVER_COLL_H_TRAILER = 56,
  RIVER_COLL_H_TABLECRC = 64,
  RIVER_COLL_H_RESERVED = 68,
  RIVER_COLL_H_LABEL = 72,
  RIVER_COLL_H_CRC = 4092
};

/* The largest file offset off_t can hold. */
#define RIVER_OFF_MAX ((uint64_t)(sizeof(off_t) >= 8 ? INT64_MAX : INT32_MAX))

struct river_coll {
  char *path;
  char *tmp;              /* writer: "<path>.tmp"; NULL for a reader */
  int tmp_exists;         /* writer: tmp is ours to remove */
  int fd;                 /* -1 once closed */
  int borrowed_fd;        /* reader: fd is the caller's (river__coll_open_fd),
                             not closed with c */
  int direct;             /* O_DIRECT is on for fd */
  int failed;             /* writer: a write failed; only abandon is left */
  int finished;           /* writer: written out under tmp, fd closed
                             (river__coll_finish); only the rename or
                             abandon is left */
  size_t record_size;
  size_t block_size;
  size_t rpb;             /* records per block */
  uint64_t nrecords;      /* writer: appended so far */
  uint64_t nblocks;       /* writer: blocks written so far */
  uint64_t trailer_offset;
  uint32_t table_crc;
  uint32_t *crcs;         /* block CRCs in host order */
  size_t crcs_cap;        /* writer: entries allocated */
  unsigned char *buf;     /* RIVER_COLL_ALIGN-aligned buffer: a reader's
                             block, a writer's growing piece of one */
  size_t bufsize;
  size_t fill;            /* writer: bytes in buf */
  size_t boff;            /* writer: bytes of the current block written */
  uint32_t bcrc;          /* writer: CRC of those boff bytes */
  uint64_t next;          /* reader: the block river_coll_next reads */
  char label[RIVER_COLL_LABEL_MAX + 1];
};

/* ------------------------------------------------- byte order, sizes */

static inline void put32(unsigned char *p, uint32_t v)
{
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
  p[2] = (unsigned char)(v >> 16);
  p[3] = (unsigned char)(v >> 24);
}

static inline void put64(unsigned char *p, uint64_t v)
{
  put32(p, (uint32_t)v);
  put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t get32(const unsigned char *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
         | (uint32_t)p[3] << 24;
}

static inline uint64_t get64(const unsigned char *p)
{
  return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* a * b and a + b into *r; 1 (and *r untouched) if they overflow. */
static inline int mul_u64(uint64_t a, uint64_t b, uint64_t *r)
{
  if (b != 0 && a > UINT64_MAX / b)
    return 1;
  *r = a * b;
  return 0;
}

static inline int add_u64(uint64_t a, uint64_t b, uint64_t *r)
{
  if (a > UINT64_MAX - b)
    return 1;
  *r = a + b;
  return 0;
}

static inline uint64_t round_4k(uint64_t n)
{
  return (n + RIVER_COLL_ALIGN - 1) & ~(uint64_t)(RIVER_COLL_ALIGN - 1);
}

/* ------------------------------------------------------------ layout */

/* The records block b holds: rpb, or fewer in the last block. */
static inline uint64_t block_records(const river_coll *c, uint64_t b)
{
  uint64_t left = c->nrecords - b * c->rpb;

  return left < c->rpb ? left : c->rpb;
}

/* Bytes block b takes on disk: block_size, or for the last block its
 * records rounded up to a multiple of 4096. */
static inline size_t block_extent(const river_coll *c, uint64_t b)
{
  if (b + 1 < c->nblocks)
    return c->block_size;
  return (size_t)round_4k(block_records(c, b) * c->record_size);
}

/* Where block b starts in the file. */
static inline off_t block_offset(const river_coll *c, uint64_t b)
{
  return (off_t)(RIVER_COLL_HDR_SIZE + b * c->block_size);
}

/* The layout of n records of rs bytes in blocks of bs bytes (bs a
 * multiple of 4096, rs <= bs): the block count, the trailer's offset and
 * the file size. 1 if the file would be larger than off_t can say. */
int river__coll_geometry(uint64_t n, uint64_t rs, uint64_t bs,
                         uint64_t *nblocks, uint64_t *trailer,
                         uint64_t *size);

/* ------------------------------------- provided by collection.c */

/* A zeroed handle for path (fd -1) into *out; RIVER_ENOMEM if not. */
int river__coll_new(const char *path, river_coll **out);

/* Free c; a writer's temporary file, if still there, is removed. */
void river__coll_free(river_coll *c);

/* Switch O_DIRECT on for c->fd; a file system that refuses (EINVAL)
 * leaves c buffered. Failures are logged at level under name. */
int river__coll_direct_on(river_coll *c, const char *name, int level);

/* Give c a zeroed, RIVER_COLL_ALIGN-aligned buffer of size bytes (none
 * for 0); RIVER_ENOMEM, logged at level, if it cannot. */
int river__coll_alloc_buf(river_coll *c, size_t size, int level);

/* Encode c's facts as the header h (RIVER_COLL_HDR_SIZE bytes), its CRC
 * included. */
void river__coll_encode_header(const river_coll *c, unsigned char *h);

/* --------------- for parallel collections (pcoll.c, pcoll_open.c,
 * pcoll_commit.c): a copy's file beyond river/collection.h */

/* collection_write.c: a writer in two steps, for writers that learn a
 * file's final name only later (a partition begun by its writer is
 * numbered at the commit): river__coll_finish writes the file out under
 * its temporary name (last block, table, header; fsync; close) and frees
 * its buffers, keeping the handle; river__coll_commit_as renames it to
 * `path` (not the name it was created with), syncs the directory and
 * frees the handle. River_coll_close on a finished handle removes the
 * temporary file. river__coll_written gives a finished writer's record
 * and block counts and table CRC. */
int river__coll_finish(river_coll *c);
int river__coll_commit_as(river_coll *c, const char *path);

/* collection_write.c: river_coll_create writing under temporary name
 * tmp (NULL: "PATH.tmp") instead of "PATH.tmp", created
 * O_EXCL|O_NOFOLLOW: a file or link already at tmp fails it (logged,
 * naming tmp), nothing is followed. */
int river__coll_create_at(const char *path, const char *tmp,
                          size_t record_size, const river_coll_opts *opts,
                          river_coll **out);
int river__coll_written(const river_coll *c, uint64_t *nrecords,
                        uint64_t *nblocks, uint32_t *table_crc);

/* collection.c: river__coll_open_at on a file the caller has already
 * opened (fd, with river__open_quiet; path names it in messages). The
 * handle borrows fd: closing the handle leaves fd open, and the caller
 * keeps fd open until the handle is closed. Handles may share one fd
 * (reads are pread). */
int river__coll_open_fd(const char *path, int fd, size_t record_size,
                        const river_coll_opts *opts, int level,
                        river_coll **out);

/* collection.c: river_coll_open and river_coll_read_block logging their
 * failures at `level` instead of RIVER_LOG_ERROR: for callers that may
 * recover (another mirror holds the block) and so decide how severe a
 * failure is. */
int river__coll_open_at(const char *path, size_t record_size,
                        const river_coll_opts *opts, int level,
                        river_coll **out);
int river__coll_read_block_at(river_coll *c, uint64_t block, void *buf,
                              size_t bufsize, size_t *nrecords, int level);

/* collection.c: records lo..lo+n-1 of block `block` (n >= 1, within the
 * block) into buf, not verified: the block's stored checksum (CRC32C of
 * its whole extent, records then padding) goes to *crc for the reader to
 * check once it has every piece. A range that ends the block brings the
 * block's padding after its records (*padlen bytes; else 0), so
 * bufsize >= n x record_size + *padlen. Direct I/O reads and verifies
 * the whole block. Errors as river__coll_read_block_at. */
int river__coll_read_range(river_coll *c, uint64_t block, uint64_t lo,
                           uint64_t n, void *buf, size_t bufsize,
                           size_t *padlen, uint32_t *crc, int level);

#endif /* RIVER_COLLECTION_INTERNAL_H */
