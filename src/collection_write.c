/*
 * collection_write.c - the writer of a single-disk collection (format
 * and handle in collection_internal.h). A writer handle (c->tmp set)
 * gathers records in its aligned block buffer c->buf, pwrite()s each full
 * block to "<path>.tmp" and keeps the block CRCs in the growing array
 * c->crcs; commit writes the last block, the CRC table and the header,
 * fsyncs, renames over path and fsyncs the directory
 * (river__fsync_dir, which parallel collections use too). A failed write
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
    return river__coll_syserr(RIVER_LOG_ERROR, name, "fcntl(~O_DIRECT)");
  c->direct = 0;
  return RIVER_SUCCESS;
}

/* ------------------------------------------------------ create, append */

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

  rc = river__coll_new(path, &c);
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
  rc = river__coll_alloc_buf(c, bs, RIVER_LOG_ERROR);
  if (rc)
    goto fail;

  c->fd = open(c->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (c->fd < 0) {
    rc = river__coll_syserr(RIVER_LOG_ERROR, c->tmp, "open");
    goto fail;
  }
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
  e = pwrite_full(c->fd, c->buf, ext, block_offset(c, c->nblocks));
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
      || river__coll_geometry(total, c->record_size, c->block_size, &nb,
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

/* ------------------------------------------------------------- commit */

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
    return river__coll_syserr(RIVER_LOG_ERROR, c->tmp, "fsync");
  e = close(c->fd);
  c->fd = -1;
  if (e < 0)
    return river__coll_syserr(RIVER_LOG_ERROR, c->tmp, "close");
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
    rc = river__coll_syserr(RIVER_LOG_ERROR, dir,
                            "open (to fsync the directory)");
    goto out;
  }
  if (fsync(fd) < 0)
    rc = river__coll_syserr(RIVER_LOG_ERROR, dir, "fsync of the directory");
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
    river__coll_syserr(RIVER_LOG_ERROR, c->tmp, "rename");
    rc = RIVER_EIO;
    goto out;
  }
  c->tmp_exists = 0;
  /* path is replaced now; a failure here leaves its durability open. */
  rc = river__fsync_dir(c->path);
out:
  river__coll_free(c);
  return rc;
}
