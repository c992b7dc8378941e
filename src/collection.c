/*
 * collection.c - single-disk collections: one file of fixed-size records
 * in large, checksummed, 4 KiB-aligned blocks.
 *
 * A handle (struct river_coll) is either a writer (tmp != NULL: it fills
 * one aligned block buffer and pwrite()s each full block to
 * "<path>.tmp", keeping the block CRCs in a growing array) or a reader
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
 * move, from the aligned buffer at aligned offsets; a writer switches
 * O_DIRECT off again before it writes the trailer and the header.
 *
 * Severity: the reader's failures are logged at a level its caller
 * passes down (river__coll_open_at, river__coll_read_block_at): an error
 * for the public calls, milder for a caller with another copy to try.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1  /* O_DIRECT */
#endif
#include "river_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define RIVER_COLL_MAGIC "RIVERCOL"
#define RIVER_COLL_VERSION 1
#define RIVER_COLL_HDR_SIZE 4096
#define TMP_SUFFIX ".tmp"    /* a writer writes path TMP_SUFFIX */

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
  int direct;             /* O_DIRECT is on for fd */
  int failed;             /* writer: a write failed; only abandon is left */
  size_t record_size;
  size_t block_size;
  size_t rpb;             /* records per block */
  uint64_t nrecords;      /* writer: appended so far */
  uint64_t nblocks;       /* writer: blocks written so far */
  uint64_t trailer_offset;
  uint32_t table_crc;
  uint32_t *crcs;         /* block CRCs in host order */
  size_t crcs_cap;        /* writer: entries allocated */
  unsigned char *buf;     /* RIVER_COLL_ALIGN-aligned block buffer */
  size_t bufsize;
  size_t fill;            /* writer: records in buf */
  uint64_t next;          /* reader: the block river_coll_next reads */
  char label[RIVER_COLL_LABEL_MAX + 1];
};

/* ------------------------------------------------------------ helpers */

static void put32(unsigned char *p, uint32_t v)
{
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
  p[2] = (unsigned char)(v >> 16);
  p[3] = (unsigned char)(v >> 24);
}

static void put64(unsigned char *p, uint64_t v)
{
  put32(p, (uint32_t)v);
  put32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t get32(const unsigned char *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
         | (uint32_t)p[3] << 24;
}

static uint64_t get64(const unsigned char *p)
{
  return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* a * b and a + b into *r; 1 (and *r untouched) if they overflow. */
static int mul_u64(uint64_t a, uint64_t b, uint64_t *r)
{
  if (b != 0 && a > UINT64_MAX / b)
    return 1;
  *r = a * b;
  return 0;
}

static int add_u64(uint64_t a, uint64_t b, uint64_t *r)
{
  if (a > UINT64_MAX - b)
    return 1;
  *r = a + b;
  return 0;
}

static uint64_t round_4k(uint64_t n)
{
  return (n + RIVER_COLL_ALIGN - 1) & ~(uint64_t)(RIVER_COLL_ALIGN - 1);
}

/* The layout of n records of rs bytes in blocks of bs bytes (bs a
 * multiple of 4096, rs <= bs): the block count, the trailer's offset and
 * the file size. 1 if the file would be larger than off_t can say. */
static int geometry(uint64_t n, uint64_t rs, uint64_t bs, uint64_t *nblocks,
                    uint64_t *trailer, uint64_t *size)
{
  uint64_t rpb = bs / rs, nb = n / rpb + (n % rpb != 0);
  uint64_t t = RIVER_COLL_HDR_SIZE, full, tbytes, s;

  if (nb > 0) {
    if (mul_u64(nb - 1, bs, &full) || add_u64(t, full, &t)
        || add_u64(t, round_4k((n - (nb - 1) * rpb) * rs), &t))
      return 1;
  }
  if (mul_u64(nb, 4, &tbytes) || add_u64(t, tbytes, &s)
      || s > RIVER_OFF_MAX)
    return 1;
  *nblocks = nb;
  *trailer = t;
  *size = s;
  return 0;
}

static uint64_t block_records(const river_coll *c, uint64_t b)
{
  uint64_t left = c->nrecords - b * c->rpb;

  return left < c->rpb ? left : c->rpb;
}

/* Bytes block b takes on disk: block_size, or for the last block its
 * records rounded up to a multiple of 4096. */
static size_t block_extent(const river_coll *c, uint64_t b)
{
  if (b + 1 < c->nblocks)
    return c->block_size;
  return (size_t)round_4k(block_records(c, b)
                                * c->record_size);
}

static off_t block_offset(const river_coll *c, uint64_t b)
{
  return (off_t)(RIVER_COLL_HDR_SIZE + b * c->block_size);
}

/* preadv() until iov is full or the file ends; *got is the bytes read.
 * Returns 0 or an errno value. iov is consumed. */
static int preadv_full(int fd, struct iovec *iov, int iovcnt, off_t off,
                       size_t *got)
{
  size_t total = 0, k;
  ssize_t n;

  while (iovcnt > 0) {
    n = preadv(fd, iov, iovcnt, off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errno;
    if (n == 0)
      break;
    total += (size_t)n;
    off += n;
    while (iovcnt > 0 && (n > 0 || iov->iov_len == 0)) {
      k = (size_t)n < iov->iov_len ? (size_t)n : iov->iov_len;
      iov->iov_base = (char *)iov->iov_base + k;
      iov->iov_len -= k;
      n -= (ssize_t)k;
      if (iov->iov_len == 0) {
        iov++;
        iovcnt--;
      }
    }
  }
  *got = total;
  return 0;
}

/* pwrite() all len bytes; returns 0 or an errno value. */
static int pwrite_full(int fd, const void *buf, size_t len, off_t off)
{
  const char *p = buf;
  ssize_t n;

  while (len > 0) {
    n = pwrite(fd, p, len, off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errno;
    if (n == 0)
      return EIO;
    p += n;
    len -= (size_t)n;
    off += n;
  }
  return 0;
}

/* Log at `level` that a system call on name failed (errno says why) and
 * map it:
 * a missing file is RIVER_ENOTFOUND, anything else RIVER_EIO. */
static int syserr(int level, const char *name, const char *what)
{
  int e = errno;

  river_log(level, "%s: %s failed: %s", name, what, strerror(e));
  return e == ENOENT ? RIVER_ENOTFOUND : RIVER_EIO;
}

/* Switch O_DIRECT on for c->fd; a file system that refuses (EINVAL)
 * leaves c buffered. */
static int direct_on(river_coll *c, const char *name, int level)
{
  int fl = fcntl(c->fd, F_GETFL);

  if (fl < 0)
    return syserr(level, name, "fcntl(F_GETFL)");
  if (fcntl(c->fd, F_SETFL, fl | O_DIRECT) == 0) {
    c->direct = 1;
    return RIVER_SUCCESS;
  }
  if (errno != EINVAL)
    return syserr(level, name, "fcntl(O_DIRECT)");
  river__debug("%s: O_DIRECT refused by the file system; using buffered "
               "I/O", name);
  return RIVER_SUCCESS;
}

static int direct_off(river_coll *c, const char *name)
{
  int fl = fcntl(c->fd, F_GETFL);

  if (fl < 0 || fcntl(c->fd, F_SETFL, fl & ~O_DIRECT) < 0)
    return syserr(RIVER_LOG_ERROR, name, "fcntl(~O_DIRECT)");
  c->direct = 0;
  return RIVER_SUCCESS;
}

static int alloc_buf(river_coll *c, size_t size, int level)
{
  void *p;

  if (size == 0)
    return RIVER_SUCCESS;
  if (posix_memalign(&p, RIVER_COLL_ALIGN, size) != 0) {
    river_log(level, "%s: cannot allocate a %zu-byte block buffer", c->path,
                 size);
    return RIVER_ENOMEM;
  }
  memset(p, 0, size);
  c->buf = p;
  c->bufsize = size;
  return RIVER_SUCCESS;
}

static int coll_new(const char *path, river_coll **out)
{
  river_coll *c = calloc(1, sizeof *c);

  if (c == NULL)
    return RIVER_ENOMEM;
  c->fd = -1;
  c->path = strdup(path);
  if (c->path == NULL) {
    free(c);
    return RIVER_ENOMEM;
  }
  *out = c;
  return RIVER_SUCCESS;
}

/* Free c; a writer's temporary file, if still there, is removed. */
static void coll_free(river_coll *c)
{
  if (c->fd >= 0)
    close(c->fd);
  if (c->tmp_exists && unlink(c->tmp) < 0)
    river__warn("%s: cannot remove: %s", c->tmp, strerror(errno));
  free(c->crcs);
  free(c->buf);
  free(c->tmp);
  free(c->path);
  free(c);
}

/* ------------------------------------------------------------- writer */

int river_coll_create(const char *path, size_t record_size,
                      const river_coll_opts *opts, river_coll **out)
{
  size_t bs = opts && opts->block_size ? opts->block_size
                                       : RIVER_COLL_DEFAULT_BLOCK_SIZE;
  const char *label = opts ? opts->label : NULL;
  river_coll *c;
  int rc;

  if (path == NULL || *path == '\0' || out == NULL || record_size == 0
      || bs % RIVER_COLL_ALIGN != 0 || bs < record_size)
    return RIVER_EINVAL;
  if (label && strnlen(label, RIVER_COLL_LABEL_MAX + 1) > RIVER_COLL_LABEL_MAX)
    return RIVER_EINVAL;

  rc = coll_new(path, &c);
  if (rc)
    return rc;
  c->record_size = record_size;
  c->block_size = bs;
  c->rpb = bs / record_size;
  if (label)
    strcpy(c->label, label);
  rc = RIVER_ENOMEM;
  c->tmp = malloc(strlen(path) + sizeof TMP_SUFFIX);
  if (c->tmp == NULL)
    goto fail;
  sprintf(c->tmp, "%s" TMP_SUFFIX, path);
  rc = alloc_buf(c, bs, RIVER_LOG_ERROR);
  if (rc)
    goto fail;

  c->fd = open(c->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (c->fd < 0) {
    rc = syserr(RIVER_LOG_ERROR, c->tmp, "open");
    goto fail;
  }
  c->tmp_exists = 1;
  if (opts && opts->direct_io) {
    rc = direct_on(c, c->tmp, RIVER_LOG_ERROR);
    if (rc)
      goto fail;
  }
  *out = c;
  return RIVER_SUCCESS;

fail:
  coll_free(c);
  return rc;
}

/* Write the block in c->buf (its first ext bytes) as the next block. */
static int flush_block(river_coll *c, size_t ext)
{
  uint32_t crc = 0, *p;
  size_t cap;
  int e;

  if (c->nblocks == c->crcs_cap) {
    cap = c->crcs_cap ? 2 * c->crcs_cap : 64;
    p = realloc(c->crcs, cap * sizeof *p);
    if (p == NULL) {
      river__error("%s: out of memory for the block-CRC table", c->tmp);
      return RIVER_ENOMEM;
    }
    c->crcs = p;
    c->crcs_cap = cap;
  }
  river_crc32c(c->buf, ext, &crc);
  e = pwrite_full(c->fd, c->buf, ext,
                        block_offset(c, c->nblocks));
  if (e) {
    river__error("%s: writing block %" PRIu64 " failed: %s", c->tmp,
                 c->nblocks, strerror(e));
    return RIVER_EIO;
  }
  c->crcs[c->nblocks++] = crc;
  c->fill = 0;
  return RIVER_SUCCESS;
}

int river_coll_append(river_coll *c, const void *records, size_t nrecords)
{
  const unsigned char *p = records;
  uint64_t total, nb, trailer, size;
  size_t k;
  int rc;

  if (c == NULL || c->tmp == NULL || (records == NULL && nrecords > 0))
    return RIVER_EINVAL;
  if (c->failed) {
    river__error("%s: a write failed earlier; the writer can only be "
                 "abandoned", c->tmp);
    return RIVER_ESTATE;
  }
  if (nrecords > SIZE_MAX / c->record_size
      || add_u64(c->nrecords, nrecords, &total)
      || geometry(total, c->record_size, c->block_size, &nb,
                             &trailer, &size)) {
    river__error("%s: %zu more records of %zu bytes would make the file "
                 "too large", c->tmp, nrecords, c->record_size);
    return RIVER_EOVERFLOW;
  }

  while (nrecords > 0) {
    k = c->rpb - c->fill;
    if (k > nrecords)
      k = nrecords;
    memcpy(c->buf + c->fill * c->record_size, p, k * c->record_size);
    p += k * c->record_size;
    c->fill += k;
    c->nrecords += k;
    nrecords -= k;
    if (c->fill == c->rpb) {
      rc = flush_block(c, c->block_size);
      if (rc) {
        c->failed = 1;
        return rc;
      }
    }
  }
  return RIVER_SUCCESS;
}

static void encode_header(const river_coll *c, unsigned char *h)
{
  uint32_t crc = 0;

  memset(h, 0, RIVER_COLL_HDR_SIZE);
  memcpy(h + RIVER_COLL_H_MAGIC, RIVER_COLL_MAGIC, 8);
  put32(h + RIVER_COLL_H_VERSION, RIVER_COLL_VERSION);
  put32(h + RIVER_COLL_H_HDRSIZE, RIVER_COLL_HDR_SIZE);
  put64(h + RIVER_COLL_H_RECSIZE, c->record_size);
  put64(h + RIVER_COLL_H_BLKSIZE, c->block_size);
  put64(h + RIVER_COLL_H_RPB, c->rpb);
  put64(h + RIVER_COLL_H_NRECORDS, c->nrecords);
  put64(h + RIVER_COLL_H_NBLOCKS, c->nblocks);
  put64(h + RIVER_COLL_H_TRAILER, c->trailer_offset);
  put32(h + RIVER_COLL_H_TABLECRC, c->table_crc);
  memcpy(h + RIVER_COLL_H_LABEL, c->label, strlen(c->label));
  river_crc32c(h, RIVER_COLL_H_CRC, &crc);
  put32(h + RIVER_COLL_H_CRC, crc);
}

/* Write the last block, the trailer and the header; fsync and close. */
static int finish_file(river_coll *c)
{
  unsigned char h[RIVER_COLL_HDR_SIZE];
  unsigned char *t;
  uint64_t nb, size, i;
  size_t ext;
  int rc, e;

  if (c->fill > 0) {
    ext = (size_t)round_4k(c->fill * c->record_size);
    memset(c->buf + c->fill * c->record_size, 0,
           ext - c->fill * c->record_size);
    rc = flush_block(c, ext);
    if (rc)
      return rc;
  }
  if (c->direct && (rc = direct_off(c, c->tmp)) != RIVER_SUCCESS)
    return rc;
  /* append() checked that this layout fits. */
  geometry(c->nrecords, c->record_size, c->block_size, &nb,
                      &c->trailer_offset, &size);

  t = (unsigned char *)c->crcs;
  for (i = 0; i < c->nblocks; i++)   /* to little-endian, in place */
    put32(t + 4 * i, c->crcs[i]);
  river_crc32c(t, 4 * c->nblocks, &c->table_crc);
  e = c->nblocks ? pwrite_full(c->fd, t, 4 * c->nblocks,
                                     (off_t)c->trailer_offset) : 0;
  if (e) {
    river__error("%s: writing the block-CRC table failed: %s", c->tmp,
                 strerror(e));
    return RIVER_EIO;
  }
  encode_header(c, h);
  e = pwrite_full(c->fd, h, sizeof h, 0);
  if (e) {
    river__error("%s: writing the header failed: %s", c->tmp, strerror(e));
    return RIVER_EIO;
  }
  if (fsync(c->fd) < 0)
    return syserr(RIVER_LOG_ERROR, c->tmp, "fsync");
  e = close(c->fd);
  c->fd = -1;
  if (e < 0)
    return syserr(RIVER_LOG_ERROR, c->tmp, "close");
  return RIVER_SUCCESS;
}

/* fsync the directory holding path, so that a rename in it is durable. */
int river__fsync_dir(const char *path)
{
  const char *slash = strrchr(path, '/');
  char *dir;
  int fd, rc = RIVER_SUCCESS;

  if (slash == NULL)
    dir = strdup(".");
  else
    dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));
  if (dir == NULL)
    return RIVER_ENOMEM;
  fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    rc = syserr(RIVER_LOG_ERROR, dir, "open (to fsync the directory)");
    goto out;
  }
  if (fsync(fd) < 0)
    rc = syserr(RIVER_LOG_ERROR, dir, "fsync of the directory");
  close(fd);
out:
  free(dir);
  return rc == RIVER_ENOTFOUND ? RIVER_EIO : rc;
}

int river_coll_commit(river_coll *c)
{
  int rc;

  if (c == NULL || c->tmp == NULL)
    return RIVER_EINVAL;
  if (c->failed) {
    river__error("%s: a write failed earlier; not committing", c->tmp);
    rc = RIVER_ESTATE;
    goto out;
  }
  rc = finish_file(c);
  if (rc)
    goto out;
  if (rename(c->tmp, c->path) < 0) {
    syserr(RIVER_LOG_ERROR, c->tmp, "rename");
    rc = RIVER_EIO;
    goto out;
  }
  c->tmp_exists = 0;
  /* path is replaced now; a failure here leaves its durability open. */
  rc = river__fsync_dir(c->path);
out:
  coll_free(c);
  return rc;
}

/* ------------------------------------------------------------- reader */

/* Why the decoded header h cannot be right, or NULL if it is
 * consistent; fills the reader's fields from it. */
static const char *decode_header(river_coll *c, const unsigned char *h)
{
  uint64_t rs = get64(h + RIVER_COLL_H_RECSIZE);
  uint64_t bs = get64(h + RIVER_COLL_H_BLKSIZE);
  uint64_t rpb = get64(h + RIVER_COLL_H_RPB);
  uint64_t n = get64(h + RIVER_COLL_H_NRECORDS);
  uint64_t nb, trailer, size;

  if (get32(h + RIVER_COLL_H_HDRSIZE) != RIVER_COLL_HDR_SIZE)
    return "header size is not 4096";
  if (rs == 0 || (size_t)rs != rs)
    return "bad record size";
  if (bs == 0 || bs % RIVER_COLL_ALIGN != 0 || bs < rs || (size_t)bs != bs)
    return "bad block size";
  if (rpb != bs / rs)
    return "records per block do not match the record and block sizes";
  if (geometry(n, rs, bs, &nb, &trailer, &size))
    return "record count too large";
  if (get64(h + RIVER_COLL_H_NBLOCKS) != nb)
    return "block count does not match the record count";
  if (get64(h + RIVER_COLL_H_TRAILER) != trailer)
    return "trailer offset does not match the block count";
  if (get32(h + RIVER_COLL_H_RESERVED) != 0)
    return "reserved field is not 0";
  if (h[RIVER_COLL_H_LABEL + RIVER_COLL_LABEL_MAX] != '\0')
    return "label is not NUL-terminated";

  c->record_size = (size_t)rs;
  c->block_size = (size_t)bs;
  c->rpb = (size_t)rpb;
  c->nrecords = n;
  c->nblocks = nb;
  c->trailer_offset = trailer;
  c->table_crc = get32(h + RIVER_COLL_H_TABLECRC);
  memcpy(c->label, h + RIVER_COLL_H_LABEL, RIVER_COLL_LABEL_MAX + 1);
  return NULL;
}

static int read_header(river_coll *c, size_t record_size, int level)
{
  unsigned char h[RIVER_COLL_HDR_SIZE];
  struct iovec iov = {h, sizeof h};
  uint32_t stored, crc = 0;
  const char *why;
  size_t got;
  int e;

  e = preadv_full(c->fd, &iov, 1, 0, &got);
  if (e) {
    river_log(level, "%s: reading the header failed: %s", c->path, strerror(e));
    return RIVER_EIO;
  }
  if (got < sizeof h || memcmp(h, RIVER_COLL_MAGIC, 8) != 0) {
    river_log(level, "%s: not a River collection (%s)", c->path,
                 got < sizeof h ? "shorter than a header" : "bad magic");
    return RIVER_ECORRUPT;
  }
  if (get32(h + RIVER_COLL_H_VERSION) != RIVER_COLL_VERSION) {
    river_log(level, "%s: collection format version %" PRIu32 "; this River "
                 "reads version %d", c->path,
                 get32(h + RIVER_COLL_H_VERSION), RIVER_COLL_VERSION);
    return RIVER_ECORRUPT;
  }
  stored = get32(h + RIVER_COLL_H_CRC);
  river_crc32c(h, RIVER_COLL_H_CRC, &crc);
  if (crc != stored) {
    river_log(level, "%s: header checksum mismatch (stored 0x%08" PRIx32
                 ", computed 0x%08" PRIx32 ")", c->path, stored, crc);
    return RIVER_ECORRUPT;
  }
  why = decode_header(c, h);
  if (why) {
    river_log(level, "%s: corrupt header: %s", c->path, why);
    return RIVER_ECORRUPT;
  }
  if (record_size != 0 && record_size != c->record_size) {
    river_log(level, "%s: records are %zu bytes, expected %zu", c->path,
                 c->record_size, record_size);
    return RIVER_EFORMAT;
  }
  return RIVER_SUCCESS;
}

/* The file must be exactly trailer_offset + 4 * nblocks bytes. */
static int check_size(river_coll *c, int level)
{
  uint64_t want = c->trailer_offset + 4 * c->nblocks, size, b;
  struct stat st;

  if (fstat(c->fd, &st) < 0)
    return syserr(level, c->path, "fstat");
  size = (uint64_t)st.st_size;
  if (size == want)
    return RIVER_SUCCESS;
  if (size > want) {
    river_log(level, "%s: file is %" PRIu64 " bytes, expected %" PRIu64
                 ": %" PRIu64 " extra bytes after the block-CRC table",
                 c->path, size, want, size - want);
  } else if (size < c->trailer_offset) {
    b = (size - RIVER_COLL_HDR_SIZE) / c->block_size;
    river_log(level, "%s: file is %" PRIu64 " bytes, expected %" PRIu64
                 ": truncated, block %" PRIu64 " of %" PRIu64
                 " is missing or incomplete", c->path, size, want, b,
                 c->nblocks);
  } else {
    river_log(level, "%s: file is %" PRIu64 " bytes, expected %" PRIu64
                 ": truncated in the block-CRC table", c->path, size, want);
  }
  return RIVER_ECORRUPT;
}

/* Read the trailer into c->crcs and check it against the header. */
static int read_trailer(river_coll *c, int level)
{
  size_t bytes = (size_t)(4 * c->nblocks), got, i;
  unsigned char *t;
  struct iovec iov;
  uint32_t crc = 0;
  int e;

  if ((uint64_t)bytes != 4 * c->nblocks) {
    river_log(level, "%s: %" PRIu64 " blocks are too many for this machine",
                 c->path, c->nblocks);
    return RIVER_EOVERFLOW;
  }
  if (bytes > 0) {
    c->crcs = malloc(bytes);
    if (c->crcs == NULL)
      return RIVER_ENOMEM;
    t = (unsigned char *)c->crcs;
    iov.iov_base = t;
    iov.iov_len = bytes;
    e = preadv_full(c->fd, &iov, 1, (off_t)c->trailer_offset, &got);
    if (e || got != bytes) {
      river_log(level, "%s: reading the block-CRC table failed: %s", c->path,
                   e ? strerror(e) : "short read");
      return RIVER_EIO;
    }
    river_crc32c(t, bytes, &crc);
    for (i = 0; i < c->nblocks; i++)   /* to host order, in place */
      c->crcs[i] = get32(t + 4 * i);
  }
  if (crc != c->table_crc) {
    river_log(level, "%s: block-CRC table checksum mismatch (stored 0x%08"
                 PRIx32 ", computed 0x%08" PRIx32 ")", c->path,
                 c->table_crc, crc);
    return RIVER_ECORRUPT;
  }
  return RIVER_SUCCESS;
}

int river_coll_open(const char *path, size_t record_size,
                    const river_coll_opts *opts, river_coll **out)
{
  return river__coll_open_at(path, record_size, opts, RIVER_LOG_ERROR, out);
}

int river__coll_open_at(const char *path, size_t record_size,
                        const river_coll_opts *opts, int level,
                        river_coll **out)
{
  river_coll *c;
  int rc;

  if (path == NULL || *path == '\0' || out == NULL)
    return RIVER_EINVAL;
  rc = coll_new(path, &c);
  if (rc)
    return rc;
  c->fd = open(path, O_RDONLY | O_CLOEXEC);
  if (c->fd < 0) {
    rc = syserr(level, path, "open");
    goto fail;
  }
  /* Header, size and trailer decide what may be allocated. */
  if ((rc = read_header(c, record_size, level)) != RIVER_SUCCESS
      || (rc = check_size(c, level)) != RIVER_SUCCESS
      || (rc = read_trailer(c, level)) != RIVER_SUCCESS)
    goto fail;
  /* The largest block, which the file is known to hold. */
  rc = alloc_buf(c, c->nblocks > 1 ? c->block_size
                       : c->nblocks ? block_extent(c, 0) : 0, level);
  if (rc)
    goto fail;
#ifdef HAVE_POSIX_FADVISE
  posix_fadvise(c->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  if (opts && opts->direct_io
      && (rc = direct_on(c, path, level)) != RIVER_SUCCESS)
    goto fail;
  *out = c;
  return RIVER_SUCCESS;

fail:
  coll_free(c);
  return rc;
}

int river_coll_close(river_coll *c)
{
  if (c != NULL)
    coll_free(c);
  return RIVER_SUCCESS;
}

int river_coll_stat(const river_coll *c, river_coll_info *info)
{
  if (c == NULL || info == NULL)
    return RIVER_EINVAL;
  info->record_size = c->record_size;
  info->block_size = c->block_size;
  info->records_per_block = c->rpb;
  info->nrecords = c->nrecords;
  /* A writer's blocks include the one being filled; its table CRC is
   * not known before the commit (0). */
  info->nblocks = c->tmp ? c->nrecords / c->rpb + (c->nrecords % c->rpb != 0)
                         : c->nblocks;
  info->table_crc = c->tmp ? 0 : c->table_crc;
  memcpy(info->label, c->label, sizeof info->label);
  return RIVER_SUCCESS;
}

/* Read exactly want bytes of block b into iov (preadv). */
static int pread_block(river_coll *c, uint64_t b, struct iovec *iov,
                       int iovcnt, size_t want, int level)
{
  size_t got;
  int e = preadv_full(c->fd, iov, iovcnt, block_offset(c, b),
                            &got);

  if (e || got != want) {
    river_log(level, "%s: block %" PRIu64 ": read failed: %s", c->path, b,
                 e ? strerror(e) : "short read (file changed?)");
    return RIVER_EIO;
  }
  return RIVER_SUCCESS;
}

static int check_crc(const river_coll *c, uint64_t b, uint32_t crc, int level)
{
  if (crc == c->crcs[b])
    return RIVER_SUCCESS;
  river_log(level, "%s: block %" PRIu64 ": checksum mismatch (stored 0x%08"
               PRIx32 ", computed 0x%08" PRIx32 ")", c->path, b,
               c->crcs[b], crc);
  return RIVER_ECORRUPT;
}

/* Read block b whole into c->buf and verify it. */
static int load_block(river_coll *c, uint64_t b, int level)
{
  size_t ext = block_extent(c, b);
  struct iovec iov = {c->buf, ext};
  uint32_t crc = 0;
  int rc = pread_block(c, b, &iov, 1, ext, level);

  if (rc)
    return rc;
  river_crc32c(c->buf, ext, &crc);
  return check_crc(c, b, crc, level);
}

int river_coll_read_block(river_coll *c, uint64_t block, void *buf,
                          size_t bufsize, size_t *nrecords)
{
  return river__coll_read_block_at(c, block, buf, bufsize, nrecords,
                                   RIVER_LOG_ERROR);
}

int river__coll_read_block_at(river_coll *c, uint64_t block, void *buf,
                              size_t bufsize, size_t *nrecords, int level)
{
  struct iovec iov[2];
  size_t n, data, ext;
  uint32_t crc = 0;
  int rc;

  if (c == NULL || c->tmp != NULL || buf == NULL || nrecords == NULL
      || block >= c->nblocks)
    return RIVER_EINVAL;
  if (bufsize < c->rpb * c->record_size)
    return RIVER_ENOBUFS;
  n = (size_t)block_records(c, block);
  data = n * c->record_size;
  if (c->direct) {
    /* O_DIRECT needs the aligned buffer: read there, then copy. */
    rc = load_block(c, block, level);
    if (rc)
      return rc;
    memcpy(buf, c->buf, data);
  } else {
    /* Records straight into buf, the padding into c->buf. */
    ext = block_extent(c, block);
    iov[0].iov_base = buf;
    iov[0].iov_len = data;
    iov[1].iov_base = c->buf;
    iov[1].iov_len = ext - data;
    rc = pread_block(c, block, iov, 2, ext, level);
    if (rc)
      return rc;
    river_crc32c(buf, data, &crc);
    river_crc32c(c->buf, ext - data, &crc);
    rc = check_crc(c, block, crc, level);
    if (rc)
      return rc;
  }
  *nrecords = n;
  return RIVER_SUCCESS;
}

int river_coll_next(river_coll *c, const void **records, size_t *nrecords)
{
  int rc;

  if (c == NULL || c->tmp != NULL || records == NULL || nrecords == NULL)
    return RIVER_EINVAL;
  if (c->next >= c->nblocks)
    return RIVER_EOS;
  rc = load_block(c, c->next, RIVER_LOG_ERROR);
  if (rc)
    return rc;
  *records = c->buf;
  *nrecords = (size_t)block_records(c, c->next);
  c->next++;
  return RIVER_SUCCESS;
}

int river_coll_rewind(river_coll *c)
{
  if (c == NULL || c->tmp != NULL)
    return RIVER_EINVAL;
  c->next = 0;
  return RIVER_SUCCESS;
}

int river_coll_verify(river_coll *c, uint64_t *bad_block)
{
  uint64_t b, first = 0, nbad = 0;
  int rc;

  if (c == NULL || c->tmp != NULL)
    return RIVER_EINVAL;
  for (b = 0; b < c->nblocks; b++) {
    rc = load_block(c, b, RIVER_LOG_ERROR);
    if (rc == RIVER_ECORRUPT && nbad++ == 0)
      first = b;
    else if (rc != RIVER_SUCCESS && rc != RIVER_ECORRUPT)
      return rc;
  }
  if (nbad == 0)
    return RIVER_SUCCESS;
  river__error("%s: %" PRIu64 " of %" PRIu64 " blocks damaged, the first "
               "is block %" PRIu64, c->path, nbad, c->nblocks, first);
  if (bad_block)
    *bad_block = first;
  return RIVER_ECORRUPT;
}
