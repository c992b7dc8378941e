/*
 * collection_write.c - the writer of a single-disk collection (format
 * and handle in collection_internal.h). A writer handle (c->tmp set)
 * streams each block's bytes through its aligned buffer c->buf to
 * "<path>.tmp" (or the temporary name its creator chose, which
 * parallel collections make unguessable), created O_EXCL|O_NOFOLLOW:
 * the buffer starts at WBUF_MIN bytes and doubles, each
 * time it has been filled and written, up to the block size or WBUF_MAX,
 * whichever is less; a block larger than the buffer is written in
 * pieces at its offset, its CRC carried from piece to piece (c->boff,
 * c->bcrc). Only a buffer full of records grows it, so a writer given
 * D bytes holds min(block size, WBUF_MAX, max(WBUF_MIN, 2 D)) bytes at
 * most (doc/collections.md, "Memory"). The block CRCs go to
 * the growing array c->crcs; commit writes the last block, the CRC table
 * and the header, fsyncs, renames over path and fsyncs the directory
 * (river__fsync_dir, src/file.c). A failed write
 * marks the writer failed: from then on it can only be abandoned.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1  /* O_DIRECT */
#endif
#include "collection_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define TMP_SUFFIX ".tmp"    /* a writer writes path TMP_SUFFIX */

/* The write buffer's first and largest sizes (multiples of 4096). */
#define WBUF_MIN ((size_t)64 << 10)
#define WBUF_MAX ((size_t)8 << 20)

/* ------------------------------------------------------------ helpers */

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

/* Switch O_DIRECT off for c->fd, before the unaligned trailer and header. */
static int direct_off(river_coll *c, const char *name)
{
  int fl = fcntl(c->fd, F_GETFL);

  if (fl < 0 || fcntl(c->fd, F_SETFL, fl & ~O_DIRECT) < 0)
    return river__syserr(RIVER_LOG_ERROR, name, "fcntl(~O_DIRECT)");
  c->direct = 0;
  return RIVER_SUCCESS;
}

/* ------------------------------------------------------ create, append */

/* Create the writer's temporary file c->tmp: O_EXCL|O_NOFOLLOW, so
 * that nothing already there (a planted link above all) is followed or
 * overwritten; such a file fails the write, naming it. */
static int create_tmp(river_coll *c)
{
  c->fd = open(c->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
               0666);
  if (c->fd >= 0)
    return RIVER_SUCCESS;
  if (errno == EEXIST || errno == ELOOP) {
    river__error("%s: cannot create it: a file or link River did not make "
                 "is there (it is not followed or replaced)", c->tmp);
    return RIVER_EIO;
  }
  return river__syserr(RIVER_LOG_ERROR, c->tmp, "open");
}

/* RIVER_SUCCESS if create's arguments make sense, else RIVER_EINVAL. */
static int check_create(const char *path, size_t record_size,
                        const river_coll_opts *opts, river_coll **out)
{
  size_t bs = opts && opts->block_size ? opts->block_size
                                       : RIVER_COLL_DEFAULT_BLOCK_SIZE;
  const char *label = opts ? opts->label : NULL;

  if (path == NULL || *path == '\0' || out == NULL || record_size == 0
      || bs % RIVER_COLL_ALIGN != 0 || bs < record_size)
    return RIVER_EINVAL;
  if (label && strnlen(label, RIVER_COLL_LABEL_MAX + 1) > RIVER_COLL_LABEL_MAX)
    return RIVER_EINVAL;
  return RIVER_SUCCESS;
}

int river__coll_create_at(const char *path, const char *tmp,
                          size_t record_size, const river_coll_opts *opts,
                          river_coll **out)
{
  size_t bs = opts && opts->block_size ? opts->block_size
                                       : RIVER_COLL_DEFAULT_BLOCK_SIZE;
  const char *label = opts ? opts->label : NULL;
  river_coll *c;
  int rc;

  if (check_create(path, record_size, opts, out) != RIVER_SUCCESS)
    return RIVER_EINVAL;

  rc = river__coll_new(path, &c);
  if (rc)
    return rc;
  c->record_size = record_size;
  c->block_size = bs;
  c->rpb = bs / record_size;
  if (label)
    strcpy(c->label, label);
  rc = RIVER_ENOMEM;
  c->tmp = tmp ? strdup(tmp) : malloc(strlen(path) + sizeof TMP_SUFFIX);
  if (c->tmp == NULL)
    goto fail;
  if (tmp == NULL)
    sprintf(c->tmp, "%s" TMP_SUFFIX, path);
  rc = river__coll_alloc_buf(c, bs < WBUF_MIN ? bs : WBUF_MIN,
                             RIVER_LOG_ERROR);
  if (rc)
    goto fail;
  rc = create_tmp(c);
  if (rc)
    goto fail;
  c->tmp_exists = 1;
  if (opts && opts->direct_io) {
    rc = river__coll_direct_on(c, c->tmp, RIVER_LOG_ERROR);
    if (rc)
      goto fail;
  }
  *out = c;
  return RIVER_SUCCESS;

fail:
  river__coll_free(c);
  return rc;
}

int river_coll_create(const char *path, size_t record_size,
                      const river_coll_opts *opts, river_coll **out)
{
  char *tmp;

  if (check_create(path, record_size, opts, out) != RIVER_SUCCESS)
    return RIVER_EINVAL;
  /* PATH.tmp is this writer's by name (the caller chose path): what an
   * earlier writer left there, or a link, goes first (unlink does not
   * follow it); then it is created afresh, O_EXCL. */
  tmp = malloc(strlen(path) + sizeof TMP_SUFFIX);
  if (tmp == NULL)
    return RIVER_ENOMEM;
  sprintf(tmp, "%s" TMP_SUFFIX, path);
  unlink(tmp);
  free(tmp);
  return river__coll_create_at(path, NULL, record_size, opts, out);
}

/* The empty buffer, written out full, doubles (up to the block size or
 * WBUF_MAX). The old one is freed first, so the two never coexist; if
 * the larger one cannot be had, the old size is kept. */
static int grow_buf(river_coll *c)
{
  size_t max = c->block_size < WBUF_MAX ? c->block_size : WBUF_MAX;
  size_t want = 2 * c->bufsize < max ? 2 * c->bufsize : max;
  void *p;

  if (want <= c->bufsize)
    return RIVER_SUCCESS;
  free(c->buf);
  c->buf = NULL;
  if (posix_memalign(&p, RIVER_COLL_ALIGN, want) != 0) {
    want = c->bufsize;
    if (posix_memalign(&p, RIVER_COLL_ALIGN, want) != 0) {
      river__error("%s: cannot allocate a %zu-byte write buffer", c->tmp,
                   want);
      return RIVER_ENOMEM;
    }
  }
  c->buf = p;
  c->bufsize = want;
  return RIVER_SUCCESS;
}

/* Write the c->fill bytes in c->buf as the next piece of the current
 * block (a multiple of 4096 bytes at a 4096-aligned offset: the buffer
 * is full, or the block ends here), extending the block's CRC; then, if
 * `grow` and the buffer was full (of records: padding never grows it),
 * grow it. */
static int write_piece(river_coll *c, int grow)
{
  int full = c->fill == c->bufsize, e;

  river_crc32c(c->buf, c->fill, &c->bcrc);
  e = pwrite_full(c->fd, c->buf, c->fill,
                  block_offset(c, c->nblocks) + (off_t)c->boff);
  if (e) {
    river__error("%s: writing block %" PRIu64 " failed: %s", c->tmp,
                 c->nblocks, strerror(e));
    return RIVER_EIO;
  }
  c->boff += c->fill;
  c->fill = 0;
  return grow && full ? grow_buf(c) : RIVER_SUCCESS;
}

/* End the current block at ext bytes (block_size, or for the last block
 * its records rounded up to 4096): zero padding up to ext, the rest
 * written, and its CRC added to the table. */
static int end_block(river_coll *c, size_t ext)
{
  uint32_t *p;
  size_t cap, z;
  int rc;

  while (c->boff + c->fill < ext) {
    if (c->fill == c->bufsize && (rc = write_piece(c, 0)) != RIVER_SUCCESS)
      return rc;
    z = c->bufsize - c->fill;
    if (z > ext - c->boff - c->fill)
      z = ext - c->boff - c->fill;
    memset(c->buf + c->fill, 0, z);
    c->fill += z;
  }
  if (c->fill > 0 && (rc = write_piece(c, 0)) != RIVER_SUCCESS)
    return rc;
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
  c->crcs[c->nblocks++] = c->bcrc;
  c->bcrc = 0;
  c->boff = 0;
  return RIVER_SUCCESS;
}

/* Copy len bytes of records into the current block, writing pieces as
 * the buffer fills and ending each block when its records are in. */
static int put_bytes(river_coll *c, const unsigned char *p, size_t len)
{
  size_t data = c->rpb * c->record_size, k;
  int rc;

  while (len > 0) {
    if (c->fill == c->bufsize && (rc = write_piece(c, 1)) != RIVER_SUCCESS)
      return rc;
    k = c->bufsize - c->fill;
    if (k > data - c->boff - c->fill)
      k = data - c->boff - c->fill;
    if (k > len)
      k = len;
    memcpy(c->buf + c->fill, p, k);
    c->fill += k;
    p += k;
    len -= k;
    if (c->boff + c->fill == data
        && (rc = end_block(c, c->block_size)) != RIVER_SUCCESS)
      return rc;
  }
  return RIVER_SUCCESS;
}

int river_coll_append(river_coll *c, const void *records, size_t nrecords)
{
  uint64_t total, nb, trailer, size;
  int rc;

  if (c == NULL || c->tmp == NULL || (records == NULL && nrecords > 0))
    return RIVER_EINVAL;
  if (c->failed || c->finished) {
    river__error("%s: %s; the writer can only be %s", c->tmp, c->failed
                 ? "a write failed earlier" : "the file is written out",
                 c->failed ? "abandoned" : "committed or abandoned");
    return RIVER_ESTATE;
  }
  if (nrecords > SIZE_MAX / c->record_size
      || add_u64(c->nrecords, nrecords, &total)
      || river__coll_geometry(total, c->record_size, c->block_size, &nb,
                              &trailer, &size)) {
    river__error("%s: %zu more records of %zu bytes would make the file "
                 "too large", c->tmp, nrecords, c->record_size);
    return RIVER_EOVERFLOW;
  }
  rc = put_bytes(c, records, nrecords * c->record_size);
  if (rc != RIVER_SUCCESS) {
    c->failed = 1;
    return rc;
  }
  c->nrecords = total;
  return RIVER_SUCCESS;
}

/* ------------------------------------------------------------- commit */

/* Write the last block, the trailer and the header; fsync and close. */
static int finish_file(river_coll *c)
{
  unsigned char h[RIVER_COLL_HDR_SIZE];
  unsigned char *t;
  uint64_t nb, size, i;
  size_t ext;
  int rc, e;

  if (c->boff + c->fill > 0) {
    ext = (size_t)round_4k(c->boff + c->fill);
    rc = end_block(c, ext);
    if (rc)
      return rc;
  }
  if (c->direct && (rc = direct_off(c, c->tmp)) != RIVER_SUCCESS)
    return rc;
  /* append() checked that this layout fits. */
  river__coll_geometry(c->nrecords, c->record_size, c->block_size, &nb,
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
  river__coll_encode_header(c, h);
  e = pwrite_full(c->fd, h, sizeof h, 0);
  if (e) {
    river__error("%s: writing the header failed: %s", c->tmp, strerror(e));
    return RIVER_EIO;
  }
  if (fsync(c->fd) < 0)
    return river__syserr(RIVER_LOG_ERROR, c->tmp, "fsync");
  e = close(c->fd);
  c->fd = -1;
  if (e < 0)
    return river__syserr(RIVER_LOG_ERROR, c->tmp, "close");
  return RIVER_SUCCESS;
}

int river__coll_finish(river_coll *c)
{
  int rc;

  if (c == NULL || c->tmp == NULL)
    return RIVER_EINVAL;
  if (c->finished)
    return RIVER_SUCCESS;
  if (c->failed) {
    river__error("%s: a write failed earlier; not committing", c->tmp);
    return RIVER_ESTATE;
  }
  rc = finish_file(c);
  if (rc != RIVER_SUCCESS) {
    c->failed = 1;
    return rc;
  }
  c->finished = 1;
  free(c->buf);       /* what is left to do needs neither */
  c->buf = NULL;
  c->bufsize = 0;
  free(c->crcs);
  c->crcs = NULL;
  c->crcs_cap = 0;
  return RIVER_SUCCESS;
}

int river__coll_written(const river_coll *c, uint64_t *nrecords,
                        uint64_t *nblocks, uint32_t *table_crc)
{
  if (c == NULL || c->tmp == NULL || !c->finished || nrecords == NULL
      || nblocks == NULL || table_crc == NULL)
    return RIVER_EINVAL;
  *nrecords = c->nrecords;
  *nblocks = c->nblocks;
  *table_crc = c->table_crc;
  return RIVER_SUCCESS;
}

int river__coll_commit_as(river_coll *c, const char *path)
{
  int rc;

  if (c == NULL || c->tmp == NULL || path == NULL)
    return RIVER_EINVAL;
  rc = river__coll_finish(c);
  if (rc)
    goto out;
  if (rename(c->tmp, path) < 0) {
    river__syserr(RIVER_LOG_ERROR, c->tmp, "rename");
    rc = RIVER_EIO;
    goto out;
  }
  c->tmp_exists = 0;
  /* path is replaced now; a failure here leaves its durability open. */
  rc = river__fsync_dir(path);
out:
  river__coll_free(c);
  return rc;
}

int river_coll_commit(river_coll *c)
{
  if (c == NULL || c->tmp == NULL)
    return RIVER_EINVAL;
  return river__coll_commit_as(c, c->path);
}
