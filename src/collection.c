/*
 * collection.c - single-disk collections (format and handle in
 * collection_internal.h): what a reader and a writer share, and the
 * reader. Shared: the handle's lifecycle (struct river_coll, made by
 * river__coll_new, freed by river__coll_free), the O_DIRECT switch (the
 * error mapping and the open that takes only regular files are the
 * base layer's, src/file.c), the aligned block buffer, the
 * file's geometry and the header's encoding and decoding, so that the
 * header's layout is spelled in one file. The reader checks the header,
 * the file's size and the block-CRC table before it allocates anything
 * the header sizes, then
 * reads blocks into the caller's buffer or c->buf and checks each
 * against the table (c->crcs). river_coll_stat and river_coll_close serve
 * both sides.
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
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

/* ---------------------------------------------------------- lifecycle */

int river__coll_new(const char *path, river_coll **out)
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

void river__coll_free(river_coll *c)
{
  if (c->fd >= 0 && !c->borrowed_fd)
    close(c->fd);
  if (c->tmp_exists && unlink(c->tmp) < 0)
    river__warn("%s: cannot remove: %s", c->tmp, strerror(errno));
  free(c->crcs);
  free(c->buf);
  free(c->tmp);
  free(c->path);
  free(c);
}

/* Close either side; an uncommitted writer's file is removed. */
int river_coll_close(river_coll *c)
{
  if (c != NULL)
    river__coll_free(c);
  return RIVER_SUCCESS;
}

/* What a reader's header says, or what a writer has so far. */
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

int river__coll_direct_on(river_coll *c, const char *name, int level)
{
  int fl = fcntl(c->fd, F_GETFL);

  if (fl < 0)
    return river__syserr(level, name, "fcntl(F_GETFL)");
  if (fcntl(c->fd, F_SETFL, fl | O_DIRECT) == 0) {
    c->direct = 1;
    return RIVER_SUCCESS;
  }
  if (errno != EINVAL)
    return river__syserr(level, name, "fcntl(O_DIRECT)");
  river__debug("%s: O_DIRECT refused by the file system; using buffered "
               "I/O", name);
  return RIVER_SUCCESS;
}

int river__coll_alloc_buf(river_coll *c, size_t size, int level)
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

/* ------------------------------------------------------------- format */

/* The block count, trailer offset and file size of n records (contract
 * in collection_internal.h); every step is overflow-checked. */
int river__coll_geometry(uint64_t n, uint64_t rs, uint64_t bs,
                         uint64_t *nblocks, uint64_t *trailer,
                         uint64_t *size)
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

/* The header's fields at the offsets the table in collection_internal.h
 * gives; decode_header below reads them back. */
void river__coll_encode_header(const river_coll *c, unsigned char *h)
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
  if (river__coll_geometry(n, rs, bs, &nb, &trailer, &size))
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

/* ------------------------------------------------------------- reader */

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

/* Read and check the header (magic, version, CRC, fields) into c; a
 * record_size other than 0 must match the file's. */
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
    return river__syserr(level, c->path, "fstat");
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

/* The reader's open once c->fd is open: header, size and trailer
 * decide what may be allocated. c is freed on failure. */
static int open_checked(river_coll *c, size_t record_size,
                        const river_coll_opts *opts, int level,
                        river_coll **out)
{
  int rc;

  if ((rc = read_header(c, record_size, level)) != RIVER_SUCCESS
      || (rc = check_size(c, level)) != RIVER_SUCCESS
      || (rc = read_trailer(c, level)) != RIVER_SUCCESS)
    goto fail;
  /* The largest block, which the file is known to hold. */
  rc = river__coll_alloc_buf(c, c->nblocks > 1 ? c->block_size
                             : c->nblocks ? block_extent(c, 0) : 0, level);
  if (rc)
    goto fail;
#ifdef HAVE_POSIX_FADVISE
  posix_fadvise(c->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  if (opts && opts->direct_io
      && (rc = river__coll_direct_on(c, c->path, level)) != RIVER_SUCCESS)
    goto fail;
  *out = c;
  return RIVER_SUCCESS;

fail:
  river__coll_free(c);
  return rc;
}

int river__coll_open_at(const char *path, size_t record_size,
                        const river_coll_opts *opts, int level,
                        river_coll **out)
{
  river_coll *c;
  int rc;

  if (path == NULL || *path == '\0' || out == NULL)
    return RIVER_EINVAL;
  rc = river__coll_new(path, &c);
  if (rc)
    return rc;
  rc = river__open_regular(path, "a collection", level, &c->fd);
  if (rc != RIVER_SUCCESS) {
    river__coll_free(c);
    return rc;
  }
  return open_checked(c, record_size, opts, level, out);
}

int river__coll_open_fd(const char *path, int fd, size_t record_size,
                        const river_coll_opts *opts, int level,
                        river_coll **out)
{
  river_coll *c;
  int rc;

  if (path == NULL || *path == '\0' || fd < 0 || out == NULL)
    return RIVER_EINVAL;
  rc = river__coll_new(path, &c);
  if (rc)
    return rc;
  c->fd = fd;
  c->borrowed_fd = 1;
  return open_checked(c, record_size, opts, level, out);
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

int river__coll_read_range(river_coll *c, uint64_t block, uint64_t lo,
                           uint64_t n, void *buf, size_t bufsize,
                           size_t *padlen, uint32_t *crc, int level)
{
  struct iovec iov;
  size_t data, ext, want, off;
  uint64_t nb;
  int rc;

  if (c == NULL || c->tmp != NULL || buf == NULL || padlen == NULL
      || crc == NULL || block >= c->nblocks)
    return RIVER_EINVAL;
  nb = block_records(c, block);
  if (n == 0 || lo >= nb || n > nb - lo)
    return RIVER_EINVAL;
  data = (size_t)n * c->record_size;
  ext = block_extent(c, block);
  off = (size_t)lo * c->record_size;
  /* The block's padding goes with the range that ends it, so the
   * reader can check the whole extent against the stored checksum. */
  *padlen = lo + n == nb ? ext - (size_t)nb * c->record_size : 0;
  want = data + *padlen;
  if (bufsize < want)
    return RIVER_ENOBUFS;
  if (c->direct) {
    /* O_DIRECT reads whole aligned blocks: read and verify it, then
     * copy the range out. */
    if ((rc = load_block(c, block, level)) != RIVER_SUCCESS)
      return rc;
    memcpy(buf, c->buf + off, want);
  } else {
    size_t got;
    int e;

    iov.iov_base = buf;
    iov.iov_len = want;
    e = preadv_full(c->fd, &iov, 1, block_offset(c, block) + (off_t)off,
                    &got);
    if (e || got != want) {
      river_log(level, "%s: block %" PRIu64 ": read of records %" PRIu64
                "..%" PRIu64 " failed: %s", c->path, block, lo, lo + n - 1,
                e ? strerror(e) : "short read (file changed?)");
      return RIVER_EIO;
    }
  }
  *crc = c->crcs[block];
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
