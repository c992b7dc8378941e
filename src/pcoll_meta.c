/*
 * pcoll_meta.c - a parallel collection's metadata file, the one file of
 * River that speaks HDF5. Rank 0 writes it at commit; every reader reads
 * it itself (HDF5's default sec2 driver: small and independent).
 *
 * Layout (format 1, RIVER_PCOLL_FORMAT):
 *
 *   attributes on /: river_format=1, name, schema (text form),
 *     record_size, nrecords, npartitions, ndisks, replication, layout
 *     ("partitioned"|"interleaved"), ordered, block_size, generation,
 *     disks (the disk pattern), river_version
 *   /record      committed compound datatype: the schema's fields
 *   /partitions  dataset, one row per partition: partition, nrecords,
 *     bytes, nblocks, checksum, first_disk, disks[r], path, key_min[k],
 *     key_max[k] (k = key size; bytes as stored in the records)
 *
 * A /partitions row is built in memory with exactly the file's layout
 * (struct h5_row, then the variable members at offsets struct row_layout
 * gives), so one H5Dwrite/H5Dread moves the whole table.
 */
#include "pcoll_internal.h"

#include <fcntl.h>
#include <hdf5.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static int h5_get_str(hid_t loc, const char *name, char *buf, size_t size)
{
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  hid_t ft = a < 0 ? -1 : H5Aget_type(a);
  hid_t mt = -1;
  int bad = ft < 0 || H5Tget_class(ft) != H5T_STRING
            || H5Tis_variable_str(ft) != 0 || H5Tget_size(ft) > size;

  if (!bad) {
    mt = h5_str_type(H5Tget_size(ft));
    memset(buf, 0, size);
    bad = mt < 0 || H5Aread(a, mt, buf) < 0;
  }
  if (mt >= 0) H5Tclose(mt);
  if (ft >= 0) H5Tclose(ft);
  if (a >= 0) H5Aclose(a);
  if (!bad)
    buf[size - 1] = '\0';
  return bad ? RIVER_ECORRUPT : RIVER_SUCCESS;
}

static int h5_get_u64(hid_t loc, const char *name, uint64_t *val)
{
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  int bad = a < 0 || H5Aread(a, H5T_NATIVE_UINT64, val) < 0;

  if (a >= 0) H5Aclose(a);
  return bad ? RIVER_ECORRUPT : RIVER_SUCCESS;
}

static const char *layout_name(river_layout l)
{
  return l == RIVER_LAYOUT_INTERLEAVED ? "interleaved" : "partitioned";
}

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

/* The root attributes of pc's metadata; schema_text is pc's schema in
 * text form. */
static int put_attrs(const river_pcoll *pc, hid_t f, const char *schema_text)
{
  const river_pcoll_info *in = &pc->info;

  if (h5_put_u64(f, "river_format", RIVER_PCOLL_FORMAT)
      || h5_put_str(f, "name", in->name)
      || h5_put_str(f, "schema", schema_text)
      || h5_put_u64(f, "record_size", in->record_size)
      || h5_put_u64(f, "nrecords", in->nrecords)
      || h5_put_u64(f, "npartitions", (uint64_t)in->npartitions)
      || h5_put_u64(f, "ndisks", (uint64_t)in->ndisks)
      || h5_put_u64(f, "replication", (uint64_t)in->replication)
      || h5_put_str(f, "layout", layout_name(in->layout))
      || h5_put_u64(f, "ordered", (uint64_t)in->ordered)
      || h5_put_u64(f, "block_size", in->block_size)
      || h5_put_str(f, "generation", in->generation)
      || h5_put_str(f, "disks", pc->disks)
      || h5_put_str(f, "river_version", RIVER_VERSION_STRING))
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

int river__pcoll_meta_write(const river_pcoll *pc, const char *path,
                            const unsigned char *keys)
{
  char schema_text[4096];
  size_t len = sizeof schema_text;
  struct row_layout lay;
  unsigned char *rows;
  hid_t f;
  int rc, fd;

  if (river_schema_format(pc->schema, schema_text, &len) != RIVER_SUCCESS)
    return RIVER_EOVERFLOW;
  row_layout(pc->info.replication, pc->key_size, &lay);
  rows = calloc((size_t)pc->info.npartitions, lay.size);
  if (rows == NULL)
    return RIVER_ENOMEM;
  pack_rows(pc, keys, &lay, rows);
  f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) {
    river__error("cannot create metadata file %s", path);
    free(rows);
    return RIVER_EHDF5;
  }
  rc = put_attrs(pc, f, schema_text);
  if (rc == RIVER_SUCCESS)
    rc = put_tables(pc, f, rows, &lay);
  free(rows);
  if (H5Fclose(f) < 0)
    rc = RIVER_EHDF5;
  if (rc == RIVER_SUCCESS) {
    fd = open(path, O_RDONLY);
    if (fd < 0 || fsync(fd) != 0)
      rc = RIVER_EIO;
    if (fd >= 0)
      close(fd);
  }
  if (rc != RIVER_SUCCESS)
    river__error("cannot write metadata file %s", path);
  return rc;
}

/* The root attributes, as stored. */
struct meta_attrs {
  char schema_text[4096], layout[32], name[RIVER_PCOLL_NAME_MAX + 1];
  char disks[RIVER_PATH_MAX];
  uint64_t fmt, rs, nrec, np, nd, repl, ord, bs;
};

/* Read the root attributes of f into a and the generation into pc. */
static int get_attrs(hid_t f, const char *path, river_pcoll *pc,
                     struct meta_attrs *a)
{
  if (h5_get_u64(f, "river_format", &a->fmt) || a->fmt != RIVER_PCOLL_FORMAT
      || h5_get_str(f, "name", a->name, sizeof a->name)
      || h5_get_str(f, "schema", a->schema_text, sizeof a->schema_text)
      || h5_get_u64(f, "record_size", &a->rs)
      || h5_get_u64(f, "nrecords", &a->nrec)
      || h5_get_u64(f, "npartitions", &a->np)
      || h5_get_u64(f, "ndisks", &a->nd)
      || h5_get_u64(f, "replication", &a->repl)
      || h5_get_str(f, "layout", a->layout, sizeof a->layout)
      || h5_get_u64(f, "ordered", &a->ord)
      || h5_get_u64(f, "block_size", &a->bs)
      || h5_get_str(f, "generation", pc->info.generation,
                    sizeof pc->info.generation)
      || h5_get_str(f, "disks", a->disks, sizeof a->disks)) {
    river__error("%s: metadata attributes missing or malformed", path);
    return RIVER_ECORRUPT;
  }
  return RIVER_SUCCESS;
}

/* Check the attributes against each other and the schema they name;
 * fill pc (info, schema, key, and disks unless keep_disks) from them. */
static int check_attrs(river_pcoll *pc, const char *path,
                       const struct meta_attrs *a, int keep_disks)
{
  river_pcoll_info *in = &pc->info;

  if (strcmp(a->name, in->name) != 0 || a->np < 1 || a->np > INT_MAX
      || a->nd < 1 || a->nd > INT_MAX || a->repl < 1 || a->repl > a->nd
      || a->ord > 1 || a->bs == 0 || a->bs % RIVER_COLL_ALIGN != 0
      || (strcmp(a->layout, "partitioned")
          && strcmp(a->layout, "interleaved"))) {
    river__error("%s: metadata contradicts itself (name '%s', %llu "
                 "partitions, %llu disks, replication %llu, layout %s)",
                 path, a->name, (unsigned long long)a->np,
                 (unsigned long long)a->nd, (unsigned long long)a->repl,
                 a->layout);
    return RIVER_ECORRUPT;
  }
  if (river_schema_parse(a->schema_text, &pc->schema) != RIVER_SUCCESS) {
    river__error("%s: bad schema '%s'", path, a->schema_text);
    return RIVER_ECORRUPT;
  }
  river_schema_key(pc->schema, NULL, &pc->key_off, &pc->key_size);
  river_schema_record_size(pc->schema, &in->record_size);
  if (in->record_size != a->rs || a->rs > a->bs) {
    river__error("%s: record size %llu does not match the schema '%s' "
                 "(%zu bytes) or the block size", path,
                 (unsigned long long)a->rs, a->schema_text, in->record_size);
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
  if (!keep_disks) {
    if (river__pcoll_check_disks(a->disks) != RIVER_SUCCESS)
      return RIVER_ECORRUPT;
    snprintf(pc->disks, sizeof pc->disks, "%s", a->disks);
  }
  return RIVER_SUCCESS;
}

/* Check row p of the table (at row, laid out by lay) and fill
 * pc->parts[p] from it. */
static int unpack_row(river_pcoll *pc, const char *path, int p,
                      const unsigned char *row, const struct row_layout *lay)
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
  if (r.partition != (uint32_t)p || r.first_disk != (uint32_t)(p % in->ndisks)
      || r.nrecords > UINT64_MAX / rs || r.bytes != r.nrecords * rs
      || r.nblocks != (r.nrecords + rpb - 1) / rpb
      || strcmp(pp->path, expect) != 0) {
    river__error("%s: partition table row %d is inconsistent", path, p);
    return RIVER_ECORRUPT;
  }
  pp->nrecords = r.nrecords;
  pp->bytes = r.bytes;
  pp->nblocks = r.nblocks;
  pp->checksum = r.checksum;
  pp->first_disk = (int)r.first_disk;
  return RIVER_SUCCESS;
}

/* Read /partitions of f into pc->parts (pc->info already filled). */
static int get_table(hid_t f, const char *path, river_pcoll *pc)
{
  river_pcoll_info *in = &pc->info;
  uint64_t np = (uint64_t)in->npartitions, sum = 0;
  struct row_layout lay;
  hid_t ds, pt = -1, sp = -1;
  hssize_t npts;
  unsigned char *rows = NULL;
  int rc = RIVER_ECORRUPT, p;

  row_layout(in->replication, pc->key_size, &lay);
  ds = H5Dopen2(f, "partitions", H5P_DEFAULT);
  sp = ds < 0 ? -1 : H5Dget_space(ds);
  npts = sp < 0 ? -1 : H5Sget_simple_extent_npoints(sp);
  if (npts != (hssize_t)np) {
    river__error("%s: partition table missing or not %llu rows", path,
                 (unsigned long long)np);
    goto out;
  }
  pt = h5_part_type(in->replication, pc->key_size, &lay);
  rows = calloc(np, lay.size);
  pc->parts = calloc(np, sizeof *pc->parts);
  if (pt < 0 || rows == NULL || pc->parts == NULL) {
    rc = RIVER_ENOMEM;
    goto out;
  }
  if (H5Dread(ds, pt, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0) {
    river__error("%s: cannot read the partition table", path);
    goto out;
  }
  for (p = 0; p < in->npartitions; p++) {
    if (unpack_row(pc, path, p, rows + (size_t)p * lay.size, &lay)
        != RIVER_SUCCESS)
      goto out;
    sum += pc->parts[p].nrecords;
  }
  if (sum != in->nrecords) {
    river__error("%s: partitions hold %llu records, metadata says %llu", path,
                 (unsigned long long)sum, (unsigned long long)in->nrecords);
    goto out;
  }
  rc = RIVER_SUCCESS;
out:
  free(rows);
  if (pt >= 0) H5Tclose(pt);
  if (sp >= 0) H5Sclose(sp);
  if (ds >= 0) H5Dclose(ds);
  return rc;
}

int river__pcoll_meta_read(river_pcoll *pc, const char *path, int keep_disks)
{
  struct meta_attrs a;
  struct h5_quiet q;
  hid_t f;
  int rc, fd;

  /* HDF5 opens the file itself, and would wait forever on a FIFO and
   * call a file it may not read corrupt: look first. */
  rc = river__open_regular(path, "metadata", RIVER_LOG_ERROR, &fd);
  if (rc != RIVER_SUCCESS)
    return rc;
  close(fd);
  h5_quiet_on(&q);
  f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) {
    river__error("%s: not a readable HDF5 file (corrupt or truncated "
                 "metadata)", path);
    rc = RIVER_ECORRUPT;
  } else {
    rc = get_attrs(f, path, pc, &a);
    if (rc == RIVER_SUCCESS)
      rc = check_attrs(pc, path, &a, keep_disks);
    if (rc == RIVER_SUCCESS)
      rc = get_table(f, path, pc);
    H5Fclose(f);
  }
  h5_quiet_off(&q);
  return rc;
}
