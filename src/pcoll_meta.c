/*
 * pcoll_meta.c - a parallel collection's metadata file. Rank 0 writes it
 * at commit; every reader reads it itself (small and independent). It
 * is an HDF5 file, so that tools (h5dump, h5py) read it, but River
 * reads only its own record of the metadata, kept in the HDF5 user
 * block with a header that seals the whole file (pcoll_seal.c): HDF5
 * crashes on some damaged files, and a checksum cannot stop a file
 * made to pass it, so no reader hands HDF5 a byte.
 *
 * Layout (format 3, RIVER_PCOLL_FORMAT):
 *
 *   bytes 0..63  River's header (pcoll_seal.c): magic, format, the
 *     CRC32C of the whole file, its size, the user block's size, the
 *     record's length
 *   bytes 64..   River's record (below), then zeros to the end of the
 *     user block (512 bytes, or the next power of two that holds it)
 *   the HDF5 file proper (superblock at the user block's end), written
 *     from the same values:
 *     attributes on /: river_format=3, name, schema (text form),
 *       record_size, nrecords, npartitions, ndisks, replication, layout
 *       ("partitioned"|"interleaved"), ordered, block_size, generation,
 *       disks (the disk pattern), river_version, metadata_crc32c (the
 *       CRC32C of the record)
 *     /record      committed compound datatype: the schema's fields
 *     /partitions  dataset, one row per partition: partition, nrecords,
 *       bytes, nblocks, checksum, first_disk, disks[r], path,
 *       key_min[k], key_max[k] (k = key size; bytes as in the records)
 *
 * The record (uN: N-bit little-endian; str: u64 length, then the bytes,
 * no NUL):
 *
 *   u64 river_format, str name, str schema, u64 record_size,
 *   u64 nrecords, u64 npartitions, u64 ndisks, u64 replication,
 *   str layout, u64 ordered, u64 block_size, str generation, str disks,
 *   str river_version, then each partition in order: u32 partition,
 *   u64 nrecords, u64 bytes, u64 nblocks, u32 checksum, u32
 *   first_disk, u32 disks[r], str path, key_min, key_max (k bytes each)
 *
 * A reader reads the whole file once (a regular file of at most
 * RIVER_PCOLL_META_MAX bytes, no symbolic link followed), checks the
 * seal, then decodes the record with every length bounded and checks
 * what it says against itself and the schema. The seal is no signature
 * (anyone can compute a CRC), so every field that becomes part of a path
 * must be what River writes: the name asked for, a 16-hex-digit
 * generation, row paths built from both, a checked disk pattern; whose
 * word moves files is pcoll_remove.c's to say. A /partitions row is
 * built in memory with exactly the HDF5 file's layout (struct h5_row,
 * then the variable members at offsets struct row_layout gives), so one
 * H5Dwrite moves the whole table, and the decoder fills the same rows.
 * The writer builds the file in memory and writes it itself, so a write
 * error is one River error naming the file; HDF5's own error printing is
 * off around every HDF5 call.
 */
#include "pcoll_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* HDF5 prints its error stack by default; River reports errors itself. */
struct h5_quiet {
  H5E_auto2_t func;
  void *data;
};

static void h5_quiet_on(struct h5_quiet *q)
{
  H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void h5_quiet_off(const struct h5_quiet *q)
{
  H5Eset_auto2(H5E_DEFAULT, q->func, q->data);
}

static hid_t h5_str_type(size_t n)
{
  hid_t t = H5Tcopy(H5T_C_S1);

  if (t >= 0 && (H5Tset_size(t, n) < 0 || H5Tset_strpad(t, H5T_STR_NULLTERM) < 0)) {
    H5Tclose(t);
    return -1;
  }
  return t;
}

/* The HDF5 type of schema field i (caller closes it). */
static hid_t h5_field_type(river_type type, size_t count)
{
  hsize_t dim = count;

  switch (type) {
  case RIVER_TYPE_INT32: return H5Tcopy(H5T_NATIVE_INT32);
  case RIVER_TYPE_INT64: return H5Tcopy(H5T_NATIVE_INT64);
  case RIVER_TYPE_UINT32: return H5Tcopy(H5T_NATIVE_UINT32);
  case RIVER_TYPE_UINT64: return H5Tcopy(H5T_NATIVE_UINT64);
  case RIVER_TYPE_FLOAT32: return H5Tcopy(H5T_NATIVE_FLOAT);
  case RIVER_TYPE_FLOAT64: return H5Tcopy(H5T_NATIVE_DOUBLE);
  case RIVER_TYPE_CHAR: {
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t >= 0 && (H5Tset_size(t, count) < 0
                   || H5Tset_strpad(t, H5T_STR_NULLPAD) < 0)) {
      H5Tclose(t);
      return -1;
    }
    return t;
  }
  case RIVER_TYPE_BYTES: return H5Tarray_create2(H5T_NATIVE_UCHAR, 1, &dim);
  }
  return -1;
}

/* The schema as an HDF5 compound type with the record's exact layout. */
static hid_t h5_record_type(const river_schema *s)
{
  size_t size, count, offset;
  const char *name;
  river_type type;
  int i, n;
  hid_t t, ft;

  river_schema_record_size(s, &size);
  river_schema_nfields(s, &n);
  t = H5Tcreate(H5T_COMPOUND, size);
  if (t < 0)
    return -1;
  for (i = 0; i < n; i++) {
    river_schema_field(s, i, &name, &type, &count, &offset);
    ft = h5_field_type(type, count);
    if (ft < 0 || H5Tinsert(t, name, offset, ft) < 0) {
      if (ft >= 0)
        H5Tclose(ft);
      H5Tclose(t);
      return -1;
    }
    H5Tclose(ft);
  }
  return t;
}

/* In-memory row of /partitions, with variable parts after it. */
struct h5_row {
  uint32_t partition;
  uint64_t nrecords, bytes, nblocks;
  uint32_t checksum, first_disk;
};

/* Offsets of the variable members in a row buffer. */
struct row_layout {
  size_t disks_off, path_off, kmin_off, kmax_off, size;
};

static void row_layout(int repl, size_t key_size, struct row_layout *l)
{
  l->disks_off = sizeof(struct h5_row);
  l->path_off = l->disks_off + (size_t)repl * sizeof(uint32_t);
  l->kmin_off = l->path_off + RIVER_PCOLL_PATH_LEN;
  l->kmax_off = l->kmin_off + key_size;
  l->size = (l->kmax_off + key_size + 7) & ~(size_t)7;
}

/* The compound type of a /partitions row (memory layout = file layout). */
static hid_t h5_part_type(int repl, size_t key_size,
                          const struct row_layout *l)
{
  hsize_t rdim = (hsize_t)repl, kdim = key_size ? key_size : 1;
  hid_t t = H5Tcreate(H5T_COMPOUND, l->size);
  hid_t da = H5Tarray_create2(H5T_NATIVE_UINT32, 1, &rdim);
  hid_t ka = H5Tarray_create2(H5T_NATIVE_UCHAR, 1, &kdim);
  hid_t st = h5_str_type(RIVER_PCOLL_PATH_LEN);
  int bad = t < 0 || da < 0 || ka < 0 || st < 0;

  bad = bad
    || H5Tinsert(t, "partition", HOFFSET(struct h5_row, partition),
                 H5T_NATIVE_UINT32) < 0
    || H5Tinsert(t, "nrecords", HOFFSET(struct h5_row, nrecords),
                 H5T_NATIVE_UINT64) < 0
    || H5Tinsert(t, "bytes", HOFFSET(struct h5_row, bytes),
                 H5T_NATIVE_UINT64) < 0
    || H5Tinsert(t, "nblocks", HOFFSET(struct h5_row, nblocks),
                 H5T_NATIVE_UINT64) < 0
    || H5Tinsert(t, "checksum", HOFFSET(struct h5_row, checksum),
                 H5T_NATIVE_UINT32) < 0
    || H5Tinsert(t, "first_disk", HOFFSET(struct h5_row, first_disk),
                 H5T_NATIVE_UINT32) < 0
    || H5Tinsert(t, "disks", l->disks_off, da) < 0
    || H5Tinsert(t, "path", l->path_off, st) < 0
    || H5Tinsert(t, "key_min", l->kmin_off, ka) < 0
    || H5Tinsert(t, "key_max", l->kmax_off, ka) < 0;
  if (da >= 0) H5Tclose(da);
  if (ka >= 0) H5Tclose(ka);
  if (st >= 0) H5Tclose(st);
  if (bad) {
    if (t >= 0)
      H5Tclose(t);
    return -1;
  }
  return t;
}

static int h5_put_str(hid_t loc, const char *name, const char *val)
{
  hid_t t = h5_str_type(strlen(val) + 1);
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = -1;
  int bad = t < 0 || sp < 0;

  if (!bad)
    a = H5Acreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  bad = bad || a < 0 || H5Awrite(a, t, val) < 0;
  if (a >= 0) H5Aclose(a);
  if (sp >= 0) H5Sclose(sp);
  if (t >= 0) H5Tclose(t);
  return bad ? RIVER_EHDF5 : RIVER_SUCCESS;
}

static int h5_put_u64(hid_t loc, const char *name, uint64_t val)
{
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = sp < 0 ? -1 : H5Acreate2(loc, name, H5T_STD_U64LE, sp,
                                      H5P_DEFAULT, H5P_DEFAULT);
  int bad = a < 0 || H5Awrite(a, H5T_NATIVE_UINT64, &val) < 0;

  if (a >= 0) H5Aclose(a);
  if (sp >= 0) H5Sclose(sp);
  return bad ? RIVER_EHDF5 : RIVER_SUCCESS;
}

static const char *layout_name(river_layout l)
{
  return l == RIVER_LAYOUT_INTERLEAVED ? "interleaved" : "partitioned";
}

/* The root attributes, as stored: every one the reader uses. */
struct meta_attrs {
  char schema_text[4096], layout[32], name[RIVER_PCOLL_NAME_MAX + 1];
  char disks[RIVER_PATH_MAX], version[64];
  char generation[sizeof ((river_pcoll_info *)NULL)->generation];
  uint64_t fmt, rs, nrec, np, nd, repl, ord, bs;
  uint64_t crc;                 /* metadata_crc32c (written only) */
};

/* -------------------------------------------------------------- record */

/* Where the record goes: out NULL only counts its length. */
struct enc {
  unsigned char *out;
  size_t len;
};

static void enc_bytes(struct enc *e, const void *p, size_t n)
{
  if (e->out != NULL && n > 0)
    memcpy(e->out + e->len, p, n);
  e->len += n;
}

static void enc_uint(struct enc *e, uint64_t v, int nbytes)
{
  unsigned char b[8];
  int i;

  for (i = 0; i < nbytes; i++)
    b[i] = (unsigned char)(v >> (8 * i));
  enc_bytes(e, b, (size_t)nbytes);
}

static void enc_str(struct enc *e, const char *s, size_t max)
{
  size_t n = strnlen(s, max);

  enc_uint(e, n, 8);
  enc_bytes(e, s, n);
}

/* River's record of attributes a and the a->np /partitions rows at rows
 * (laid out by lay, keys of key_size bytes), the serialisation described
 * at the top of this file, into out (NULL: none); its length. */
static size_t encode(const struct meta_attrs *a, const unsigned char *rows,
                     const struct row_layout *lay, size_t key_size,
                     unsigned char *out)
{
  struct enc e = {out, 0};
  uint64_t p, c;
  struct h5_row r;
  uint32_t d;

  enc_uint(&e, a->fmt, 8);
  enc_str(&e, a->name, sizeof a->name);
  enc_str(&e, a->schema_text, sizeof a->schema_text);
  enc_uint(&e, a->rs, 8);
  enc_uint(&e, a->nrec, 8);
  enc_uint(&e, a->np, 8);
  enc_uint(&e, a->nd, 8);
  enc_uint(&e, a->repl, 8);
  enc_str(&e, a->layout, sizeof a->layout);
  enc_uint(&e, a->ord, 8);
  enc_uint(&e, a->bs, 8);
  enc_str(&e, a->generation, sizeof a->generation);
  enc_str(&e, a->disks, sizeof a->disks);
  enc_str(&e, a->version, sizeof a->version);
  for (p = 0; p < a->np; p++) {
    const unsigned char *row = rows + p * lay->size;
    memcpy(&r, row, sizeof r);
    enc_uint(&e, r.partition, 4);
    enc_uint(&e, r.nrecords, 8);
    enc_uint(&e, r.bytes, 8);
    enc_uint(&e, r.nblocks, 8);
    enc_uint(&e, r.checksum, 4);
    enc_uint(&e, r.first_disk, 4);
    for (c = 0; c < a->repl; c++) {
      memcpy(&d, row + lay->disks_off + c * sizeof d, sizeof d);
      enc_uint(&e, d, 4);
    }
    enc_str(&e, (const char *)row + lay->path_off, RIVER_PCOLL_PATH_LEN);
    enc_bytes(&e, row + lay->kmin_off, key_size);
    enc_bytes(&e, row + lay->kmax_off, key_size);
  }
  return e.len;
}

/* Reading a record: what is left of it; bad once anything did not fit. */
struct dec {
  const unsigned char *p;
  size_t left;
  int bad;
};

static void dec_bytes(struct dec *d, void *out, size_t n)
{
  if (d->bad || n > d->left) {
    d->bad = 1;
    return;
  }
  if (n > 0)
    memcpy(out, d->p, n);
  d->p += n;
  d->left -= n;
}

static uint64_t dec_uint(struct dec *d, int nbytes)
{
  unsigned char b[8];
  uint64_t v = 0;
  int i;

  dec_bytes(d, b, (size_t)nbytes);
  for (i = nbytes - 1; !d->bad && i >= 0; i--)
    v = (v << 8) | b[i];
  return d->bad ? 0 : v;
}

/* A string into buf (size bytes, NUL-terminated); bad if it does not
 * fit or holds a NUL. */
static void dec_str(struct dec *d, char *buf, size_t size)
{
  uint64_t n = dec_uint(d, 8);

  buf[0] = '\0';
  if (d->bad || n >= size || n > d->left) {
    d->bad = 1;
    return;
  }
  dec_bytes(d, buf, (size_t)n);
  buf[n] = '\0';
  if (strlen(buf) != n)
    d->bad = 1;
}

/* The attributes of a record into a. */
static void decode_attrs(struct dec *d, struct meta_attrs *a)
{
  memset(a, 0, sizeof *a);
  a->fmt = dec_uint(d, 8);
  dec_str(d, a->name, sizeof a->name);
  dec_str(d, a->schema_text, sizeof a->schema_text);
  a->rs = dec_uint(d, 8);
  a->nrec = dec_uint(d, 8);
  a->np = dec_uint(d, 8);
  a->nd = dec_uint(d, 8);
  a->repl = dec_uint(d, 8);
  dec_str(d, a->layout, sizeof a->layout);
  a->ord = dec_uint(d, 8);
  a->bs = dec_uint(d, 8);
  dec_str(d, a->generation, sizeof a->generation);
  dec_str(d, a->disks, sizeof a->disks);
  dec_str(d, a->version, sizeof a->version);
}

/* The fixed part of a row in a record (its numbers and its path's
 * length); the disks and keys come on top. */
#define ROW_FIXED 44

/* The a->np rows of a record into rows (laid out by lay, keys of
 * key_size bytes). */
static void decode_rows(struct dec *d, const struct meta_attrs *a,
                        const struct row_layout *lay, size_t key_size,
                        unsigned char *rows)
{
  uint64_t p, c;
  struct h5_row r;
  uint32_t v;

  for (p = 0; !d->bad && p < a->np; p++) {
    unsigned char *row = rows + p * lay->size;
    memset(&r, 0, sizeof r);
    r.partition = (uint32_t)dec_uint(d, 4);
    r.nrecords = dec_uint(d, 8);
    r.bytes = dec_uint(d, 8);
    r.nblocks = dec_uint(d, 8);
    r.checksum = (uint32_t)dec_uint(d, 4);
    r.first_disk = (uint32_t)dec_uint(d, 4);
    memcpy(row, &r, sizeof r);
    for (c = 0; c < a->repl; c++) {
      v = (uint32_t)dec_uint(d, 4);
      memcpy(row + lay->disks_off + c * sizeof v, &v, sizeof v);
    }
    dec_str(d, (char *)row + lay->path_off, RIVER_PCOLL_PATH_LEN);
    dec_bytes(d, row + lay->kmin_off, key_size);
    dec_bytes(d, row + lay->kmax_off, key_size);
  }
}

/* --------------------------------------------------------------- write */

/* The /partitions rows of pc (parts and keys, see river__pcoll_meta_write)
 * into rows, laid out by lay. */
static void pack_rows(const river_pcoll *pc, const unsigned char *keys,
                      const struct row_layout *lay, unsigned char *rows)
{
  const river_pcoll_info *in = &pc->info;
  int p, c;

  for (p = 0; p < in->npartitions; p++) {
    const river_pcoll_part *pp = &pc->parts[p];
    const unsigned char *kmin = keys + (size_t)p * 2 * pc->key_size;
    unsigned char *out = rows + (size_t)p * lay->size;
    struct h5_row row = {0};

    row.partition = (uint32_t)p;
    row.nrecords = pp->nrecords;
    row.bytes = pp->bytes;
    row.nblocks = pp->nblocks;
    row.checksum = pp->checksum;
    row.first_disk = (uint32_t)pp->first_disk;
    memcpy(out, &row, sizeof row);
    for (c = 0; c < in->replication; c++) {
      uint32_t d = (uint32_t)((pp->first_disk + c) % in->ndisks);
      memcpy(out + lay->disks_off + (size_t)c * sizeof d, &d, sizeof d);
    }
    snprintf((char *)out + lay->path_off, RIVER_PCOLL_PATH_LEN, "%s",
             pp->path);
    memcpy(out + lay->kmin_off, kmin, pc->key_size);
    memcpy(out + lay->kmax_off, kmin + pc->key_size, pc->key_size);
  }
}

/* The root attributes of pc's metadata, as they will be stored (all but
 * the checksum). RIVER_EOVERFLOW if the schema's text is too long. */
static int fill_attrs(const river_pcoll *pc, struct meta_attrs *a)
{
  const river_pcoll_info *in = &pc->info;
  size_t len = sizeof a->schema_text;

  memset(a, 0, sizeof *a);
  if (river_schema_format(pc->schema, a->schema_text, &len) != RIVER_SUCCESS)
    return RIVER_EOVERFLOW;
  a->fmt = RIVER_PCOLL_FORMAT;
  snprintf(a->name, sizeof a->name, "%s", in->name);
  a->rs = in->record_size;
  a->nrec = in->nrecords;
  a->np = (uint64_t)in->npartitions;
  a->nd = (uint64_t)in->ndisks;
  a->repl = (uint64_t)in->replication;
  snprintf(a->layout, sizeof a->layout, "%s", layout_name(in->layout));
  a->ord = (uint64_t)in->ordered;
  a->bs = in->block_size;
  snprintf(a->generation, sizeof a->generation, "%s", in->generation);
  snprintf(a->disks, sizeof a->disks, "%s", pc->disks);
  snprintf(a->version, sizeof a->version, "%s", RIVER_VERSION_STRING);
  return RIVER_SUCCESS;
}

/* The root attributes a, the checksum included. */
static int put_attrs(hid_t f, const struct meta_attrs *a)
{
  if (h5_put_u64(f, "river_format", a->fmt)
      || h5_put_str(f, "name", a->name)
      || h5_put_str(f, "schema", a->schema_text)
      || h5_put_u64(f, "record_size", a->rs)
      || h5_put_u64(f, "nrecords", a->nrec)
      || h5_put_u64(f, "npartitions", a->np)
      || h5_put_u64(f, "ndisks", a->nd)
      || h5_put_u64(f, "replication", a->repl)
      || h5_put_str(f, "layout", a->layout)
      || h5_put_u64(f, "ordered", a->ord)
      || h5_put_u64(f, "block_size", a->bs)
      || h5_put_str(f, "generation", a->generation)
      || h5_put_str(f, "disks", a->disks)
      || h5_put_str(f, "river_version", a->version)
      || h5_put_u64(f, "metadata_crc32c", a->crc))
    return RIVER_EHDF5;
  return RIVER_SUCCESS;
}

/* The /record type and the /partitions table (rows laid out by lay). */
static int put_tables(const river_pcoll *pc, hid_t f, const void *rows,
                      const struct row_layout *lay)
{
  hsize_t dim = (hsize_t)pc->info.npartitions;
  hid_t rt, pt = -1, sp = -1, ds = -1;
  int rc = RIVER_EHDF5;

  rt = h5_record_type(pc->schema);
  if (rt < 0 || H5Tcommit2(f, "record", rt, H5P_DEFAULT, H5P_DEFAULT,
                           H5P_DEFAULT) < 0)
    goto out;
  pt = h5_part_type(pc->info.replication, pc->key_size, lay);
  sp = H5Screate_simple(1, &dim, NULL);
  if (pt < 0 || sp < 0)
    goto out;
  ds = H5Dcreate2(f, "partitions", pt, sp, H5P_DEFAULT, H5P_DEFAULT,
                  H5P_DEFAULT);
  if (ds < 0 || (dim > 0 && H5Dwrite(ds, pt, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                                     rows) < 0))
    goto out;
  rc = RIVER_SUCCESS;
out:
  if (ds >= 0) H5Dclose(ds);
  if (sp >= 0) H5Sclose(sp);
  if (pt >= 0) H5Tclose(pt);
  if (rt >= 0) H5Tclose(rt);
  return rc;
}

/* The metadata file's bytes, attributes a and the table (rows laid out
 * by lay), into *img (the caller frees it) of *len bytes, the first ub
 * of them (the user block) zero. HDF5 builds the file in memory (the
 * core driver, no backing store), so it never writes to disk: a write
 * error is River's own to report, and no failed flush leaves a file
 * HDF5 cannot close (HDF5 1.10's file images of the checksummed 1.8+
 * superblock are wrong, so the file keeps HDF5's earliest format).
 * HDF5's image leaves the user block out: River puts it in front. On
 * failure *what is the step that failed. */
static int h5_image(const river_pcoll *pc, const char *path,
                    const struct meta_attrs *a, const unsigned char *rows,
                    const struct row_layout *lay, size_t ub,
                    unsigned char **img, size_t *len, const char **what)
{
  struct h5_quiet q;
  hid_t fapl, fcpl, f = -1;
  ssize_t n = 0;

  *img = NULL;
  *what = NULL;
  h5_quiet_on(&q);
  fapl = H5Pcreate(H5P_FILE_ACCESS);
  fcpl = H5Pcreate(H5P_FILE_CREATE);
  if (fapl < 0 || fcpl < 0 || H5Pset_fapl_core(fapl, 64 * 1024, 0) < 0
      || H5Pset_userblock(fcpl, (hsize_t)ub) < 0
      || (f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl)) < 0)
    *what = "creating it in memory";
  else if (put_attrs(f, a) != RIVER_SUCCESS)
    *what = "writing its attributes";
  else if (put_tables(pc, f, rows, lay) != RIVER_SUCCESS)
    *what = "writing its partition table";
  else if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0
           || (n = H5Fget_file_image(f, NULL, 0)) <= 0)
    *what = "building its image";
  else if ((uint64_t)n > RIVER_PCOLL_META_MAX - ub)
    *what = "building its image (over the size bound of a metadata file)";
  else if ((*img = calloc(1, ub + (size_t)n)) != NULL
           && H5Fget_file_image(f, *img + ub, (size_t)n) != n)
    *what = "building its image";
  if (f >= 0 && H5Fclose(f) < 0 && *what == NULL)
    *what = "closing it in memory";
  if (fcpl >= 0)
    H5Pclose(fcpl);
  if (fapl >= 0)
    H5Pclose(fapl);
  h5_quiet_off(&q);
  if (*what == NULL && *img == NULL)
    return RIVER_ENOMEM;
  if (*what != NULL) {
    free(*img);
    *img = NULL;
    return RIVER_EHDF5;
  }
  *len = ub + (size_t)n;
  return RIVER_SUCCESS;
}

/* Write len bytes at img to a new file at path, created O_EXCL|
 * O_NOFOLLOW (path is a fresh unguessable temporary name: anything
 * there was planted, and is neither followed nor replaced), and fsync
 * it. On failure *what is the step that failed and the
 * return value the errno. */
static int write_image(const char *path, const void *img, size_t len,
                       const char **what)
{
  const char *p = img;
  ssize_t n;
  int fd, err = 0;

  fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
            0666);
  if (fd < 0) {
    *what = errno == EEXIST || errno == ELOOP
                ? "open (a file or link River did not make is there; not "
                  "followed)" : "open";
    return errno;
  }
  while (len > 0 && err == 0) {
    n = write(fd, p, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      *what = "write";
      err = n < 0 ? errno : ENOSPC;
    } else {
      p += n;
      len -= (size_t)n;
    }
  }
  if (err == 0 && fsync(fd) != 0) {
    *what = "fsync";
    err = errno;
  }
  if (close(fd) != 0 && err == 0) {
    *what = "close";
    err = errno;
  }
  return err;
}

/* River's record of attributes a (their checksum set from it) and the
 * rows (laid out by lay) into *rec (the caller frees it), *reclen
 * bytes. */
static int make_record(const river_pcoll *pc, struct meta_attrs *a,
                       const unsigned char *rows,
                       const struct row_layout *lay, unsigned char **rec,
                       size_t *reclen)
{
  uint32_t crc = 0;

  *reclen = encode(a, rows, lay, pc->key_size, NULL);
  *rec = malloc(*reclen);
  if (*rec == NULL)
    return RIVER_ENOMEM;
  encode(a, rows, lay, pc->key_size, *rec);
  river_crc32c(*rec, *reclen, &crc);
  a->crc = crc;
  return RIVER_SUCCESS;
}

int river__pcoll_meta_write(const river_pcoll *pc, const char *path,
                            const unsigned char *keys)
{
  struct meta_attrs a;
  struct row_layout lay;
  unsigned char *rows, *rec = NULL, *img = NULL;
  const char *what = NULL;
  size_t len = 0, reclen = 0, ub;
  int rc, err;

  if (fill_attrs(pc, &a) != RIVER_SUCCESS) {
    river__error("cannot write metadata %s: schema text too long", path);
    return RIVER_EOVERFLOW;
  }
  row_layout(pc->info.replication, pc->key_size, &lay);
  rows = calloc((size_t)pc->info.npartitions, lay.size);
  if (rows == NULL)
    return RIVER_ENOMEM;
  pack_rows(pc, keys, &lay, rows);
  rc = make_record(pc, &a, rows, &lay, &rec, &reclen);
  ub = river__pcoll_seal_ub(reclen);
  if (rc == RIVER_SUCCESS && ub > RIVER_PCOLL_META_MAX) {
    river__error("cannot write metadata %s: its partition table (%d "
                 "partitions) is over the %llu-byte bound of a metadata "
                 "file", path, pc->info.npartitions, RIVER_PCOLL_META_MAX);
    rc = RIVER_EOVERFLOW;
  }
  if (rc == RIVER_SUCCESS)
    rc = h5_image(pc, path, &a, rows, &lay, ub, &img, &len, &what);
  free(rows);
  if (rc == RIVER_EHDF5)
    river__error("cannot write metadata %s: HDF5 failed %s", path, what);
  if (rc == RIVER_SUCCESS) {
    memcpy(img + RIVER_PCOLL_SEAL_HDR, rec, reclen);
    river__pcoll_seal(img, len, ub, reclen);
  }
  free(rec);
  if (rc != RIVER_SUCCESS)
    return rc;
  err = write_image(path, img, len, &what);
  free(img);
  if (err != 0) {
    river__error("cannot write metadata %s: %s failed: %s", path, what,
                 strerror(err));
    return RIVER_EIO;
  }
  return RIVER_SUCCESS;
}

/* ---------------------------------------------------------------- read */

/* What reading the table needs from a: sane counts, and the schema
 * (into pc) for the key's size. The row layout into lay. */
static int get_shape(river_pcoll *pc, const struct meta_attrs *a,
                     struct row_layout *lay, char *why, size_t n)
{
  if (a->np < 1 || a->np > INT_MAX || a->nd < 1 || a->nd > INT_MAX
      || a->repl < 1 || a->repl > a->nd) {
    snprintf(why, n, "%llu partitions, %llu disks, replication %llu",
             (unsigned long long)a->np, (unsigned long long)a->nd,
             (unsigned long long)a->repl);
    return RIVER_ECORRUPT;
  }
  if (river_schema_parse(a->schema_text, &pc->schema) != RIVER_SUCCESS) {
    snprintf(why, n, "bad schema '%.200s'", a->schema_text);
    return RIVER_ECORRUPT;
  }
  river_schema_key(pc->schema, NULL, &pc->key_off, &pc->key_size);
  row_layout((int)a->repl, pc->key_size, lay);
  return RIVER_SUCCESS;
}

/* Check the attributes against each other and the schema; fill pc
 * (info, and disks unless keep_disks) from them. */
static int check_attrs(river_pcoll *pc, const struct meta_attrs *a,
                       int keep_disks, char *why, size_t n)
{
  river_pcoll_info *in = &pc->info;

  if (strcmp(a->name, in->name) != 0 || a->ord > 1 || a->bs == 0
      || a->bs % RIVER_COLL_ALIGN != 0
      || (strcmp(a->layout, "partitioned")
          && strcmp(a->layout, "interleaved"))) {
    snprintf(why, n, "metadata contradicts itself (name '%s', layout %s, "
             "ordered %llu, block size %llu)", a->name, a->layout,
             (unsigned long long)a->ord, (unsigned long long)a->bs);
    return RIVER_ECORRUPT;
  }
  river_schema_record_size(pc->schema, &in->record_size);
  if (in->record_size != a->rs || a->rs > a->bs) {
    snprintf(why, n, "record size %llu does not match the schema '%.200s' "
             "(%zu bytes) or the block size", (unsigned long long)a->rs,
             a->schema_text, in->record_size);
    return RIVER_ECORRUPT;
  }
  in->nrecords = a->nrec;
  in->npartitions = (int)a->np;
  in->ndisks = (int)a->nd;
  in->replication = (int)a->repl;
  in->layout = strcmp(a->layout, "interleaved") ? RIVER_LAYOUT_PARTITIONED
                                                : RIVER_LAYOUT_INTERLEAVED;
  in->ordered = (int)a->ord;
  in->block_size = a->bs;
  /* Every data file's name carries the generation: only River's own
   * kind (a sealed file can still be forged, and "a/../../v" would name
   * a file outside the root). The name was compared above and the row
   * paths are compared with names built from both (unpack_row); the
   * disk pattern is checked below. */
  if (!river__pcoll_is_generation(a->generation)) {
    snprintf(why, n, "bad generation '%s' (River writes 16 lowercase hex "
             "digits)", a->generation);
    return RIVER_ECORRUPT;
  }
  memcpy(in->generation, a->generation, sizeof in->generation);
  if (!keep_disks) {
    if (river__pcoll_check_disks(a->disks) != RIVER_SUCCESS) {
      snprintf(why, n, "bad disk pattern '%.200s'", a->disks);
      return RIVER_ECORRUPT;
    }
    snprintf(pc->disks, sizeof pc->disks, "%s", a->disks);
  }
  return RIVER_SUCCESS;
}

/* Check row p of the table (at row, laid out by lay) and fill
 * pc->parts[p] from it. */
static int unpack_row(river_pcoll *pc, int p, const unsigned char *row,
                      const struct row_layout *lay, char *why, size_t n)
{
  const river_pcoll_info *in = &pc->info;
  uint64_t rs = in->record_size, rpb = in->block_size / rs;
  river_pcoll_part *pp = &pc->parts[p];
  char expect[RIVER_PCOLL_PATH_LEN];
  struct h5_row r;

  memcpy(&r, row, sizeof r);
  memcpy(pp->path, row + lay->path_off, RIVER_PCOLL_PATH_LEN);
  pp->path[sizeof pp->path - 1] = '\0';
  river__pcoll_data_name(in->name, p, in->generation, expect, sizeof expect);
  if (r.partition != (uint32_t)p || r.first_disk >= (uint32_t)in->ndisks
      || r.nrecords > UINT64_MAX / rs || r.bytes != r.nrecords * rs
      || r.nblocks != (r.nrecords + rpb - 1) / rpb
      || strcmp(pp->path, expect) != 0) {
    snprintf(why, n, "partition table row %d is inconsistent", p);
    return RIVER_ECORRUPT;
  }
  pp->nrecords = r.nrecords;
  pp->bytes = r.bytes;
  pp->nblocks = r.nblocks;
  pp->checksum = r.checksum;
  pp->first_disk = (int)r.first_disk;
  return RIVER_SUCCESS;
}

/* Check the table's rows (pc->info already filled) into pc->parts. */
static int unpack_rows(river_pcoll *pc, const unsigned char *rows,
                       const struct row_layout *lay, char *why, size_t n)
{
  uint64_t sum = 0;
  int p;

  pc->parts = calloc((size_t)pc->info.npartitions, sizeof *pc->parts);
  if (pc->parts == NULL)
    return RIVER_ENOMEM;
  for (p = 0; p < pc->info.npartitions; p++) {
    if (unpack_row(pc, p, rows + (size_t)p * lay->size, lay, why, n)
        != RIVER_SUCCESS)
      return RIVER_ECORRUPT;
    sum += pc->parts[p].nrecords;
  }
  if (sum != pc->info.nrecords) {
    snprintf(why, n, "partitions hold %llu records, metadata says %llu",
             (unsigned long long)sum,
             (unsigned long long)pc->info.nrecords);
    return RIVER_ECORRUPT;
  }
  return RIVER_SUCCESS;
}

/* River's record rec (reclen bytes, inside a sealed image) of the
 * metadata at path into pc. The seal vouches for its bytes, not for
 * its sense: every count and string is checked before it is used. */
static int read_meta(river_pcoll *pc, const char *path,
                     const unsigned char *rec, size_t reclen,
                     int keep_disks)
{
  struct meta_attrs *a = malloc(sizeof *a);
  struct dec d = {rec, reclen, 0};
  unsigned char *rows = NULL;
  struct row_layout lay;
  char why[512] = "";
  int rc = RIVER_SUCCESS;

  if (a == NULL)
    return RIVER_ENOMEM;
  decode_attrs(&d, a);
  if (d.bad || a->fmt != RIVER_PCOLL_FORMAT) {
    snprintf(why, sizeof why, "its River record is malformed (attributes)");
    rc = RIVER_ECORRUPT;
  }
  if (rc == RIVER_SUCCESS)
    rc = get_shape(pc, a, &lay, why, sizeof why);
  /* Nothing is allocated for rows the record cannot hold. */
  if (rc == RIVER_SUCCESS
      && (a->repl > d.left || pc->key_size > d.left
          || a->np > d.left / (ROW_FIXED + 4 * a->repl
                               + 2 * (uint64_t)pc->key_size))) {
    snprintf(why, sizeof why, "its River record is too short for %llu "
             "partitions", (unsigned long long)a->np);
    rc = RIVER_ECORRUPT;
  }
  if (rc == RIVER_SUCCESS && (rows = calloc(a->np, lay.size)) == NULL)
    rc = RIVER_ENOMEM;
  if (rc == RIVER_SUCCESS) {
    decode_rows(&d, a, &lay, pc->key_size, rows);
    if (d.bad || d.left != 0) {
      snprintf(why, sizeof why, "its River record is malformed (partition "
               "table)");
      rc = RIVER_ECORRUPT;
    }
  }
  if (rc == RIVER_SUCCESS)
    rc = check_attrs(pc, a, keep_disks, why, sizeof why);
  if (rc == RIVER_SUCCESS)
    rc = unpack_rows(pc, rows, &lay, why, sizeof why);
  if (rc == RIVER_ENOMEM)
    river_log(pc->meta_level, "collection %s: metadata %s: out of memory "
              "reading it", pc->info.name, path);
  else if (rc != RIVER_SUCCESS)
    river_log(pc->meta_level, "collection %s: metadata %s: %s", pc->info.name,
              path, why);
  free(rows);
  free(a);
  return rc;
}

/* Read the whole metadata file at path into *img (*len bytes; the
 * caller frees it), with one open that follows no symbolic link and
 * does not block (a FIFO is refused at once): only a regular file of at
 * most RIVER_PCOLL_META_MAX bytes is read; *uid gets the owner of the
 * very file read. Errors are logged. */
static int read_image(const river_pcoll *pc, const char *path,
                      unsigned char **img, size_t *len, uid_t *uid)
{
  river__file f = {-1, 0, NULL, 0};
  struct stat st;
  size_t got = 0;
  ssize_t n;
  int rc = RIVER_SUCCESS;

  *img = NULL;
  f.fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (f.fd < 0 && errno == ELOOP) {
    river_log(pc->meta_level, "collection %s: metadata %s is a symbolic "
              "link; not read (River's metadata is a regular file)",
              pc->info.name, path);
    return RIVER_ECORRUPT;
  }
  if (f.fd < 0) {
    f.err = errno;
    f.call = "open";
  } else if (fstat(f.fd, &st) != 0) {
    f.err = errno;
    f.call = "fstat";
  } else if (!S_ISREG(st.st_mode)) {
    f.mode = (unsigned)st.st_mode;
  }
  if (f.call != NULL || f.mode != 0) {
    if (f.fd >= 0)
      close(f.fd);
    f.fd = -1;
    return river__open_report(path, "metadata", pc->meta_level, &f);
  }
  if ((uint64_t)st.st_size > RIVER_PCOLL_META_MAX) {
    river_log(pc->meta_level, "collection %s: metadata %s is %llu bytes, "
              "over the %llu-byte bound of a metadata file; not read "
              "(corrupt, or not River's)", pc->info.name, path,
              (unsigned long long)st.st_size, RIVER_PCOLL_META_MAX);
    close(f.fd);
    return RIVER_ECORRUPT;
  }
  *img = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
  if (*img == NULL)
    rc = RIVER_ENOMEM;
  while (rc == RIVER_SUCCESS && got < (size_t)st.st_size) {
    n = pread(f.fd, *img + got, (size_t)st.st_size - got, (off_t)got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      river_log(pc->meta_level, "collection %s: cannot read metadata %s: %s",
                pc->info.name, path, strerror(errno));
      rc = RIVER_EIO;
    } else if (n == 0) {
      break;  /* it shrank meanwhile: the seal's length says so */
    }
    got += n > 0 ? (size_t)n : 0;
  }
  close(f.fd);
  if (rc != RIVER_SUCCESS) {
    free(*img);
    *img = NULL;
    return rc;
  }
  *len = got;
  *uid = st.st_uid;
  return RIVER_SUCCESS;
}

int river__pcoll_meta_parse(river_pcoll *pc, const char *path,
                            const void *img, size_t len, int keep_disks)
{
  size_t reclen = 0;
  char why[256];
  int rc;

  rc = river__pcoll_seal_check(img, len, &reclen, why, sizeof why);
  if (rc == RIVER_EFORMAT) {
    river_log(pc->meta_level, "collection %s: metadata %s %s (copy it out "
              "with the River that wrote it, or remove it: `river rm --force "
              "%s`)", pc->info.name, path, why, pc->info.name);
    return RIVER_ECORRUPT;
  }
  if (rc != RIVER_SUCCESS) {
    river_log(pc->meta_level, "collection %s: metadata %s %s", pc->info.name,
              path, why);
    return RIVER_ECORRUPT;
  }
  return read_meta(pc, path, (const unsigned char *)img
                   + RIVER_PCOLL_SEAL_HDR, reclen, keep_disks);
}

int river__pcoll_meta_image(river_pcoll *pc, const char *path,
                            unsigned char **img, size_t *len)
{
  return read_image(pc, path, img, len, &pc->meta_uid);
}

int river__pcoll_meta_read(river_pcoll *pc, const char *path, int keep_disks)
{
  unsigned char *img;
  size_t len = 0;
  int rc = read_image(pc, path, &img, &len, &pc->meta_uid);

  if (rc != RIVER_SUCCESS)
    return rc;
  rc = river__pcoll_meta_parse(pc, path, img, len, keep_disks);
  free(img);
  return rc;
}
