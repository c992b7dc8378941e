/*
 * pcoll.c - parallel collections: partitions of single-disk collections
 * over disks, with mirrors, described by one HDF5 metadata file.
 *
 * The handle (struct river_pcoll) holds what the metadata says (info,
 * schema, the partition table) plus, for a writer, this rank's open
 * copies and running key range, and, for a reader, a lazily opened
 * handle per (partition, copy). The metadata layout (format 1):
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
 * Only rank 0 touches HDF5 when writing; every reader reads the file
 * itself (HDF5's default sec2 driver: small and independent).
 */
#include "river_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RIVER_PCOLL_FORMAT 1
#define RIVER_PATH_MAX 4096
#define RIVER_PCOLL_PATH_LEN (RIVER_PCOLL_NAME_MAX + 64)

/* Per-partition facts a writer sends to rank 0 at commit. The two key
 * buffers follow the struct in the gathered message. */
struct river_part_report {
  uint64_t nrecords;
  uint64_t nblocks;
  uint32_t checksum;
  int32_t ordered_ok;   /* 1 if this partition's keys ascend */
};

struct river_pcoll {
  MPI_Comm comm;
  int rank, size;
  int writing;
  char root[RIVER_PATH_MAX];
  char disks[RIVER_PATH_MAX];   /* pattern as recorded (may be relative) */
  river_schema *schema;
  size_t key_off, key_size;
  river_pcoll_info info;
  river_pcoll_part *parts;      /* reader: npartitions entries */
  int direct_io;
  /* writer */
  river_coll **wcopies;         /* replication entries */
  char wpath[RIVER_PCOLL_PATH_LEN];
  uint64_t wcount;
  unsigned char *key_min, *key_max, *key_last; /* key_size bytes each */
  int ordered_ok;
  /* reader */
  river_coll **rcopies;         /* npartitions * replication, lazily opened */
  unsigned char *rbad;          /* nonzero: that copy failed to open or
                                   match; -(the error code) */
};

/* ------------------------------------------------------------- names */

int river_pcoll_check_name(const char *name)
{
  size_t i, n;

  if (name == NULL)
    return RIVER_EINVAL;
  n = strlen(name);
  if (n == 0 || n > RIVER_PCOLL_NAME_MAX) {
    river__error("collection name '%s': must be 1..%d characters", name,
                 RIVER_PCOLL_NAME_MAX);
    return RIVER_EINVAL;
  }
  if (name[0] == '.') {
    river__error("collection name '%s': may not start with '.'", name);
    return RIVER_EINVAL;
  }
  for (i = 0; i < n; i++) {
    char ch = name[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')
          || (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-')) {
      river__error("collection name '%s': character '%c' not allowed (use "
                   "letters, digits, '.', '_', '-'; no '/')", name, ch);
      return RIVER_EINVAL;
    }
  }
  if (strstr(name, "..") != NULL) {
    river__error("collection name '%s': may not contain '..'", name);
    return RIVER_EINVAL;
  }
  return RIVER_SUCCESS;
}

/* Check a disk pattern: exactly one %d, otherwise only %%, and no ".."
 * path component (so a relative pattern cannot climb out of its root). */
static int river_check_disks(const char *pat)
{
  const char *p;
  int nd = 0;
  size_t n = strlen(pat);

  if (n == 0 || n >= RIVER_PATH_MAX / 2) {
    river__error("disk pattern '%s': empty or too long", pat);
    return RIVER_EINVAL;
  }
  for (p = pat; *p; p++) {
    if (*p != '%')
      continue;
    if (p[1] == 'd')
      nd++;
    else if (p[1] != '%') {
      river__error("disk pattern '%s': only %%d (once) and %%%% are allowed",
                   pat);
      return RIVER_EINVAL;
    }
    p++;
  }
  if (nd != 1) {
    river__error("disk pattern '%s': needs exactly one %%d for the disk "
                 "number", pat);
    return RIVER_EINVAL;
  }
  for (p = pat; (p = strstr(p, "..")) != NULL; p += 2) {
    int starts = p == pat || p[-1] == '/';
    int ends = p[2] == '\0' || p[2] == '/';
    if (starts && ends) {
      river__error("disk pattern '%s': '..' would escape the root", pat);
      return RIVER_EINVAL;
    }
  }
  return RIVER_SUCCESS;
}

/* Expand pattern pat for disk d under root into buf (size bytes). */
static int river_disk_dir(const char *root, const char *pat, int d, char *buf,
                          size_t size)
{
  char num[16];
  size_t o = 0;
  const char *p;

  if (pat[0] != '/') {
    int n = snprintf(buf, size, "%s/", root);
    if (n < 0 || (size_t)n >= size)
      return RIVER_EOVERFLOW;
    o = (size_t)n;
  }
  snprintf(num, sizeof num, "%d", d);
  for (p = pat; *p; p++) {
    const char *piece = p;
    size_t len = 1;
    if (p[0] == '%' && p[1] == 'd') {
      piece = num;
      len = strlen(num);
      p++;
    } else if (p[0] == '%' && p[1] == '%') {
      p++;
    }
    if (o + len >= size)
      return RIVER_EOVERFLOW;
    memcpy(buf + o, piece, len);
    o += len;
  }
  buf[o] = '\0';
  return RIVER_SUCCESS;
}

/* mkdir -p path (mode 0777 & ~umask). */
static int river_mkdirs(const char *path)
{
  char tmp[RIVER_PATH_MAX];
  char *p;

  if (strlen(path) >= sizeof tmp)
    return RIVER_EOVERFLOW;
  strcpy(tmp, path);
  for (p = tmp + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
      goto fail;
    *p = '/';
  }
  if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
    goto fail;
  return RIVER_SUCCESS;
fail:
  river__error("cannot create directory %s: %s", tmp, strerror(errno));
  return RIVER_EIO;
}

static void river_resolve_root(const river_pcoll_opts *opts, char *root,
                               size_t size)
{
  const char *r = opts && opts->root ? opts->root : getenv("RIVER_ROOT");

  snprintf(root, size, "%s", r && *r ? r : RIVER_PCOLL_DEFAULT_ROOT);
}

static int river_meta_path(const char *root, const char *name, const char *tag,
                           char *buf, size_t size)
{
  int n = snprintf(buf, size, "%s/%s%s.river.h5", root, tag, name);

  return n < 0 || (size_t)n >= size ? RIVER_EOVERFLOW : RIVER_SUCCESS;
}

/* Full path of partition p's copy c. */
static int river_copy_path(const river_pcoll *pc, const char *file, int disk,
                           char *buf, size_t size)
{
  char dir[RIVER_PATH_MAX];
  int rc = river_disk_dir(pc->root, pc->disks, disk, dir, sizeof dir);
  int n;

  if (rc != RIVER_SUCCESS)
    return rc;
  n = snprintf(buf, size, "%s/%s", dir, file);
  return n < 0 || (size_t)n >= size ? RIVER_EOVERFLOW : RIVER_SUCCESS;
}

/* ------------------------------------------------------ collectives */

/* A 16-hex-digit id for one write, unique enough across time and hosts. */
static void river_new_generation(char out[17])
{
  struct timespec ts;
  uint64_t x;

  clock_gettime(CLOCK_REALTIME, &ts);
  x = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  x ^= (uint64_t)getpid() << 40;
  x = river__mix64(x + RIVER_MIX64_STEP);  /* spread the bits */
  snprintf(out, 17, "%016llx", (unsigned long long)x);
}

/* ------------------------------------------------------------- HDF5 */

/* HDF5 prints its error stack by default; River reports errors itself. */
struct river_h5_quiet {
  H5E_auto2_t func;
  void *data;
};

static void river_h5_quiet_on(struct river_h5_quiet *q)
{
  H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void river_h5_quiet_off(const struct river_h5_quiet *q)
{
  H5Eset_auto2(H5E_DEFAULT, q->func, q->data);
}

static hid_t river_h5_str_type(size_t n)
{
  hid_t t = H5Tcopy(H5T_C_S1);

  if (t >= 0 && (H5Tset_size(t, n) < 0 || H5Tset_strpad(t, H5T_STR_NULLTERM) < 0)) {
    H5Tclose(t);
    return -1;
  }
  return t;
}

/* The HDF5 type of schema field i (caller closes it). */
static hid_t river_h5_field_type(river_type type, size_t count)
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
static hid_t river_h5_record_type(const river_schema *s)
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
    ft = river_h5_field_type(type, count);
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
struct river_h5_row {
  uint32_t partition;
  uint64_t nrecords, bytes, nblocks;
  uint32_t checksum, first_disk;
};

/* Offsets of the variable members in a row buffer. */
struct river_row_layout {
  size_t disks_off, path_off, kmin_off, kmax_off, size;
};

static void river_row_layout(int repl, size_t key_size,
                             struct river_row_layout *l)
{
  l->disks_off = sizeof(struct river_h5_row);
  l->path_off = l->disks_off + (size_t)repl * sizeof(uint32_t);
  l->kmin_off = l->path_off + RIVER_PCOLL_PATH_LEN;
  l->kmax_off = l->kmin_off + key_size;
  l->size = (l->kmax_off + key_size + 7) & ~(size_t)7;
}

/* The compound type of a /partitions row (memory layout = file layout). */
static hid_t river_h5_part_type(int repl, size_t key_size,
                                const struct river_row_layout *l)
{
  hsize_t rdim = (hsize_t)repl, kdim = key_size ? key_size : 1;
  hid_t t = H5Tcreate(H5T_COMPOUND, l->size);
  hid_t da = H5Tarray_create2(H5T_NATIVE_UINT32, 1, &rdim);
  hid_t ka = H5Tarray_create2(H5T_NATIVE_UCHAR, 1, &kdim);
  hid_t st = river_h5_str_type(RIVER_PCOLL_PATH_LEN);
  int bad = t < 0 || da < 0 || ka < 0 || st < 0;

  bad = bad
    || H5Tinsert(t, "partition", HOFFSET(struct river_h5_row, partition),
                 H5T_NATIVE_UINT32) < 0
    || H5Tinsert(t, "nrecords", HOFFSET(struct river_h5_row, nrecords),
                 H5T_NATIVE_UINT64) < 0
    || H5Tinsert(t, "bytes", HOFFSET(struct river_h5_row, bytes),
                 H5T_NATIVE_UINT64) < 0
    || H5Tinsert(t, "nblocks", HOFFSET(struct river_h5_row, nblocks),
                 H5T_NATIVE_UINT64) < 0
    || H5Tinsert(t, "checksum", HOFFSET(struct river_h5_row, checksum),
                 H5T_NATIVE_UINT32) < 0
    || H5Tinsert(t, "first_disk", HOFFSET(struct river_h5_row, first_disk),
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

static int river_h5_put_str(hid_t loc, const char *name, const char *val)
{
  hid_t t = river_h5_str_type(strlen(val) + 1);
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

static int river_h5_put_u64(hid_t loc, const char *name, uint64_t val)
{
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = sp < 0 ? -1 : H5Acreate2(loc, name, H5T_STD_U64LE, sp,
                                      H5P_DEFAULT, H5P_DEFAULT);
  int bad = a < 0 || H5Awrite(a, H5T_NATIVE_UINT64, &val) < 0;

  if (a >= 0) H5Aclose(a);
  if (sp >= 0) H5Sclose(sp);
  return bad ? RIVER_EHDF5 : RIVER_SUCCESS;
}

static int river_h5_get_str(hid_t loc, const char *name, char *buf,
                            size_t size)
{
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  hid_t ft = a < 0 ? -1 : H5Aget_type(a);
  hid_t mt = -1;
  int bad = ft < 0 || H5Tget_class(ft) != H5T_STRING
            || H5Tis_variable_str(ft) != 0 || H5Tget_size(ft) > size;

  if (!bad) {
    mt = river_h5_str_type(H5Tget_size(ft));
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

static int river_h5_get_u64(hid_t loc, const char *name, uint64_t *val)
{
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  int bad = a < 0 || H5Aread(a, H5T_NATIVE_UINT64, val) < 0;

  if (a >= 0) H5Aclose(a);
  return bad ? RIVER_ECORRUPT : RIVER_SUCCESS;
}

static const char *river_layout_name(river_layout l)
{
  return l == RIVER_LAYOUT_INTERLEAVED ? "interleaved" : "partitioned";
}

/* Write the metadata file at path (rank 0 at commit). rows holds
 * npartitions rows laid out by lay. */
static int river_meta_write(const river_pcoll *pc, const char *path,
                            const void *rows,
                            const struct river_row_layout *lay)
{
  const river_pcoll_info *in = &pc->info;
  char schema_text[4096];
  size_t len = sizeof schema_text;
  hsize_t dim = (hsize_t)in->npartitions;
  hid_t f, rt = -1, pt = -1, sp = -1, ds = -1;
  int rc = RIVER_EHDF5, fd;

  if (river_schema_format(pc->schema, schema_text, &len) != RIVER_SUCCESS)
    return RIVER_EOVERFLOW;
  f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) {
    river__error("cannot create metadata file %s", path);
    return RIVER_EHDF5;
  }
  if (river_h5_put_u64(f, "river_format", RIVER_PCOLL_FORMAT)
      || river_h5_put_str(f, "name", in->name)
      || river_h5_put_str(f, "schema", schema_text)
      || river_h5_put_u64(f, "record_size", in->record_size)
      || river_h5_put_u64(f, "nrecords", in->nrecords)
      || river_h5_put_u64(f, "npartitions", (uint64_t)in->npartitions)
      || river_h5_put_u64(f, "ndisks", (uint64_t)in->ndisks)
      || river_h5_put_u64(f, "replication", (uint64_t)in->replication)
      || river_h5_put_str(f, "layout", river_layout_name(in->layout))
      || river_h5_put_u64(f, "ordered", (uint64_t)in->ordered)
      || river_h5_put_u64(f, "block_size", in->block_size)
      || river_h5_put_str(f, "generation", in->generation)
      || river_h5_put_str(f, "disks", pc->disks)
      || river_h5_put_str(f, "river_version", RIVER_VERSION_STRING))
    goto out;
  rt = river_h5_record_type(pc->schema);
  if (rt < 0 || H5Tcommit2(f, "record", rt, H5P_DEFAULT, H5P_DEFAULT,
                           H5P_DEFAULT) < 0)
    goto out;
  pt = river_h5_part_type(in->replication, pc->key_size, lay);
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

/* Read and check the metadata file of pc->info.name under pc->root into
 * pc (info, schema, disks unless given, parts). */
static int river_meta_read(river_pcoll *pc, const char *path, int keep_disks)
{
  river_pcoll_info *in = &pc->info;
  char schema_text[4096], layout[32], name[RIVER_PCOLL_NAME_MAX + 1];
  char disks[RIVER_PATH_MAX];
  uint64_t fmt, rs, nrec, np, nd, repl, ord, bs, sum = 0;
  struct river_row_layout lay;
  hid_t f, ds = -1, pt = -1, sp = -1;
  hssize_t npts;
  unsigned char *rows = NULL;
  int rc = RIVER_ECORRUPT, p;
  size_t rpb;

  f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) {
    river__error("%s: not a readable HDF5 file (corrupt or truncated "
                 "metadata)", path);
    return RIVER_ECORRUPT;
  }
  if (river_h5_get_u64(f, "river_format", &fmt) || fmt != RIVER_PCOLL_FORMAT
      || river_h5_get_str(f, "name", name, sizeof name)
      || river_h5_get_str(f, "schema", schema_text, sizeof schema_text)
      || river_h5_get_u64(f, "record_size", &rs)
      || river_h5_get_u64(f, "nrecords", &nrec)
      || river_h5_get_u64(f, "npartitions", &np)
      || river_h5_get_u64(f, "ndisks", &nd)
      || river_h5_get_u64(f, "replication", &repl)
      || river_h5_get_str(f, "layout", layout, sizeof layout)
      || river_h5_get_u64(f, "ordered", &ord)
      || river_h5_get_u64(f, "block_size", &bs)
      || river_h5_get_str(f, "generation", in->generation,
                          sizeof in->generation)
      || river_h5_get_str(f, "disks", disks, sizeof disks)) {
    river__error("%s: metadata attributes missing or malformed", path);
    goto out;
  }
  if (strcmp(name, in->name) != 0 || np < 1 || np > INT_MAX || nd < 1
      || nd > INT_MAX || repl < 1 || repl > nd || ord > 1 || bs == 0
      || bs % RIVER_COLL_ALIGN != 0
      || (strcmp(layout, "partitioned") && strcmp(layout, "interleaved"))) {
    river__error("%s: metadata contradicts itself (name '%s', %llu "
                 "partitions, %llu disks, replication %llu, layout %s)",
                 path, name, (unsigned long long)np, (unsigned long long)nd,
                 (unsigned long long)repl, layout);
    goto out;
  }
  rc = river_schema_parse(schema_text, &pc->schema);
  if (rc != RIVER_SUCCESS) {
    river__error("%s: bad schema '%s'", path, schema_text);
    rc = RIVER_ECORRUPT;
    goto out;
  }
  rc = RIVER_ECORRUPT;
  river_schema_key(pc->schema, NULL, &pc->key_off, &pc->key_size);
  river_schema_record_size(pc->schema, &in->record_size);
  if (in->record_size != rs || rs > bs) {
    river__error("%s: record size %llu does not match the schema '%s' "
                 "(%zu bytes) or the block size", path,
                 (unsigned long long)rs, schema_text, in->record_size);
    goto out;
  }
  in->nrecords = nrec;
  in->npartitions = (int)np;
  in->ndisks = (int)nd;
  in->replication = (int)repl;
  in->layout = strcmp(layout, "interleaved") ? RIVER_LAYOUT_PARTITIONED
                                             : RIVER_LAYOUT_INTERLEAVED;
  in->ordered = (int)ord;
  in->block_size = bs;
  if (!keep_disks) {
    if (river_check_disks(disks) != RIVER_SUCCESS)
      goto out;
    snprintf(pc->disks, sizeof pc->disks, "%s", disks);
  }

  river_row_layout(in->replication, pc->key_size, &lay);
  ds = H5Dopen2(f, "partitions", H5P_DEFAULT);
  sp = ds < 0 ? -1 : H5Dget_space(ds);
  npts = sp < 0 ? -1 : H5Sget_simple_extent_npoints(sp);
  if (npts != (hssize_t)np) {
    river__error("%s: partition table missing or not %llu rows", path,
                 (unsigned long long)np);
    goto out;
  }
  pt = river_h5_part_type(in->replication, pc->key_size, &lay);
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
  rpb = bs / rs;
  for (p = 0; p < in->npartitions; p++) {
    const unsigned char *row = rows + (size_t)p * lay.size;
    struct river_h5_row r;
    river_pcoll_part *pp = &pc->parts[p];
    char expect[RIVER_PCOLL_PATH_LEN];

    memcpy(&r, row, sizeof r);
    memcpy(pp->path, row + lay.path_off, RIVER_PCOLL_PATH_LEN);
    pp->path[sizeof pp->path - 1] = '\0';
    snprintf(expect, sizeof expect, "%s.p%d.%s.rdat", in->name, p,
             in->generation);
    if (r.partition != (uint32_t)p || r.first_disk != (uint32_t)(p % in->ndisks)
        || r.nrecords > UINT64_MAX / rs || r.bytes != r.nrecords * rs
        || r.nblocks != (r.nrecords + rpb - 1) / rpb
        || strcmp(pp->path, expect) != 0) {
      river__error("%s: partition table row %d is inconsistent", path, p);
      goto out;
    }
    pp->nrecords = r.nrecords;
    pp->bytes = r.bytes;
    pp->nblocks = r.nblocks;
    pp->checksum = r.checksum;
    pp->first_disk = (int)r.first_disk;
    sum += r.nrecords;
  }
  if (sum != nrec) {
    river__error("%s: partitions hold %llu records, metadata says %llu", path,
                 (unsigned long long)sum, (unsigned long long)nrec);
    goto out;
  }
  rc = RIVER_SUCCESS;
out:
  free(rows);
  if (pt >= 0) H5Tclose(pt);
  if (sp >= 0) H5Sclose(sp);
  if (ds >= 0) H5Dclose(ds);
  H5Fclose(f);
  return rc;
}

/* --------------------------------------------------------- lifecycle */

static void river_pcoll_free(river_pcoll *pc)
{
  int i;

  if (pc == NULL)
    return;
  if (pc->rcopies) {
    for (i = 0; i < pc->info.npartitions * pc->info.replication; i++)
      river_coll_close(pc->rcopies[i]);
  }
  if (pc->wcopies) {
    for (i = 0; i < pc->info.replication; i++)
      river_coll_close(pc->wcopies[i]);
  }
  free(pc->rcopies);
  free(pc->rbad);
  free(pc->wcopies);
  free(pc->parts);
  free(pc->key_min);
  river_schema_destroy(pc->schema);
  if (pc->comm != MPI_COMM_NULL)
    MPI_Comm_free(&pc->comm);
  free(pc);
}

static river_pcoll *river_pcoll_alloc(MPI_Comm comm, const char *name,
                                      const river_pcoll_opts *opts, int *rc)
{
  river_pcoll *pc = calloc(1, sizeof *pc);

  *rc = RIVER_ENOMEM;
  if (pc == NULL)
    return NULL;
  pc->comm = MPI_COMM_NULL;
  if (MPI_Comm_dup(comm, &pc->comm) != MPI_SUCCESS) {
    *rc = RIVER_EMPI;
    free(pc);
    return NULL;
  }
  MPI_Comm_rank(pc->comm, &pc->rank);
  MPI_Comm_size(pc->comm, &pc->size);
  snprintf(pc->info.name, sizeof pc->info.name, "%s", name);
  river_resolve_root(opts, pc->root, sizeof pc->root);
  pc->direct_io = opts ? opts->direct_io : 0;
  *rc = RIVER_SUCCESS;
  return pc;
}

/* Check create's options; fill pc->info and pc->disks from them. */
static int river_pcoll_setup_create(river_pcoll *pc,
                                    const river_schema *schema,
                                    const river_pcoll_opts *opts)
{
  river_pcoll_info *in = &pc->info;
  const char *disks = opts && opts->disks ? opts->disks
                                          : RIVER_PCOLL_DEFAULT_DISKS;
  int rc;

  in->npartitions = pc->size;
  in->ndisks = opts && opts->ndisks ? opts->ndisks : pc->size;
  in->replication = opts && opts->replication ? opts->replication : 1;
  in->layout = opts ? opts->layout : RIVER_LAYOUT_PARTITIONED;
  in->ordered = opts ? opts->ordered : 0;
  in->block_size = opts && opts->block_size ? opts->block_size
                                            : RIVER_COLL_DEFAULT_BLOCK_SIZE;
  if (in->ndisks < 1 || in->replication < 1
      || in->replication > in->ndisks) {
    river__error("collection %s: replication %d needs 1..%d (the number of "
                 "disks)", in->name, in->replication, in->ndisks);
    return RIVER_EINVAL;
  }
  if (in->layout != RIVER_LAYOUT_PARTITIONED
      && in->layout != RIVER_LAYOUT_INTERLEAVED)
    return RIVER_EINVAL;
  if (in->ordered != 0 && in->ordered != 1)
    return RIVER_EINVAL;
  if ((rc = river_check_disks(disks)) != RIVER_SUCCESS)
    return rc;
  snprintf(pc->disks, sizeof pc->disks, "%s", disks);
  if ((rc = river_schema_clone(schema, &pc->schema)) != RIVER_SUCCESS)
    return rc;
  river_schema_record_size(pc->schema, &in->record_size);
  river_schema_key(pc->schema, NULL, &pc->key_off, &pc->key_size);
  if (in->record_size > in->block_size) {
    river__error("collection %s: %zu-byte records do not fit %zu-byte "
                 "blocks", in->name, in->record_size, in->block_size);
    return RIVER_EINVAL;
  }
  return RIVER_SUCCESS;
}

/* Open this rank's partition files, one per copy. */
static int river_pcoll_open_writers(river_pcoll *pc)
{
  river_coll_opts co = RIVER_COLL_OPTS_INIT;
  char path[RIVER_PATH_MAX], dir[RIVER_PATH_MAX], label[64];
  int c, d, rc;

  pc->wcopies = calloc((size_t)pc->info.replication, sizeof *pc->wcopies);
  pc->key_min = calloc(3, pc->key_size ? pc->key_size : 1);
  if (pc->wcopies == NULL || pc->key_min == NULL)
    return RIVER_ENOMEM;
  pc->key_max = pc->key_min + pc->key_size;
  pc->key_last = pc->key_max + pc->key_size;
  pc->ordered_ok = 1;
  snprintf(pc->wpath, sizeof pc->wpath, "%s.p%d.%s.rdat", pc->info.name,
           pc->rank, pc->info.generation);
  co.block_size = pc->info.block_size;
  co.direct_io = pc->direct_io;
  co.label = label;
  for (c = 0; c < pc->info.replication; c++) {
    d = (pc->rank + c) % pc->info.ndisks;
    snprintf(label, sizeof label, "partition %d copy %d disk %d", pc->rank, c,
             d);
    rc = river_disk_dir(pc->root, pc->disks, d, dir, sizeof dir);
    if (rc == RIVER_SUCCESS)
      rc = river_mkdirs(dir);
    if (rc == RIVER_SUCCESS)
      rc = river_copy_path(pc, pc->wpath, d, path, sizeof path);
    if (rc == RIVER_SUCCESS)
      rc = river_coll_create(path, pc->info.record_size, &co,
                             &pc->wcopies[c]);
    if (rc != RIVER_SUCCESS)
      return rc;
  }
  return RIVER_SUCCESS;
}

int river_pcoll_create(MPI_Comm comm, const char *name,
                       const river_schema *schema,
                       const river_pcoll_opts *opts, river_pcoll **out)
{
  river_pcoll *pc;
  int rc;

  if (comm == MPI_COMM_NULL || name == NULL || schema == NULL || out == NULL)
    return RIVER_EINVAL;
  rc = river_pcoll_check_name(name);
  pc = rc == RIVER_SUCCESS ? river_pcoll_alloc(comm, name, opts, &rc) : NULL;
  if (pc == NULL)
    return rc;  /* every rank sees the same name: no agreement needed */
  pc->writing = 1;
  if (pc->rank == 0)
    river_new_generation(pc->info.generation);
  MPI_Bcast(pc->info.generation, sizeof pc->info.generation, MPI_CHAR, 0,
            pc->comm);
  rc = river_pcoll_setup_create(pc, schema, opts);
  if (rc == RIVER_SUCCESS && pc->rank == 0)
    rc = river_mkdirs(pc->root);
  rc = river__agree(pc->comm, rc);
  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_open_writers(pc);
  rc = river__agree(pc->comm, rc);
  if (rc != RIVER_SUCCESS) {
    river_pcoll_free(pc); /* closing writers removes their temp files */
    return rc;
  }
  *out = pc;
  return RIVER_SUCCESS;
}

int river_pcoll_write(river_pcoll *pc, const void *records, size_t nrecords)
{
  const unsigned char *r = records;
  size_t i, rs;
  int c, rc;

  if (pc == NULL || !pc->writing || (records == NULL && nrecords > 0))
    return RIVER_EINVAL;
  if (nrecords == 0)
    return RIVER_SUCCESS;
  rs = pc->info.record_size;
  for (c = 0; c < pc->info.replication; c++) {
    rc = river_coll_append(pc->wcopies[c], records, nrecords);
    if (rc != RIVER_SUCCESS)
      return rc;
  }
  /* Track the key range (and order, if promised) with a fake record:
   * compare through the schema on buffers holding only the key. */
  for (i = 0; i < nrecords; i++, r += rs) {
    const unsigned char *k = r + pc->key_off;
    if (pc->wcount == 0 && i == 0) {
      memcpy(pc->key_min, k, pc->key_size);
      memcpy(pc->key_max, k, pc->key_size);
    } else {
      if (river__schema_key_bytes_cmp(pc->schema, k, pc->key_min) < 0)
        memcpy(pc->key_min, k, pc->key_size);
      if (river__schema_key_bytes_cmp(pc->schema, k, pc->key_max) > 0)
        memcpy(pc->key_max, k, pc->key_size);
      if (pc->info.ordered && river__schema_key_bytes_cmp(pc->schema, k,
                                                   pc->key_last) < 0)
        pc->ordered_ok = 0;
    }
    memcpy(pc->key_last, k, pc->key_size);
  }
  pc->wcount += nrecords;
  return RIVER_SUCCESS;
}

/* ------------------------------------------------------------ commit */

/* Finish this rank's copies and report them: commit each file (fsync +
 * rename), then reopen copy 0 to learn its block count and checksum. */
static int river_pcoll_finish_local(river_pcoll *pc,
                                    struct river_part_report *rep)
{
  char path[RIVER_PATH_MAX];
  river_coll *c = NULL;
  river_coll_info ci;
  int i, rc = RIVER_SUCCESS, r;

  for (i = 0; i < pc->info.replication; i++) {
    r = river_coll_commit(pc->wcopies[i]);
    pc->wcopies[i] = NULL;
    if (r != RIVER_SUCCESS && rc == RIVER_SUCCESS)
      rc = r;
  }
  if (rc != RIVER_SUCCESS)
    return rc;
  rc = river_copy_path(pc, pc->wpath, pc->rank % pc->info.ndisks, path,
                       sizeof path);
  if (rc == RIVER_SUCCESS)
    rc = river_coll_open(path, pc->info.record_size, NULL, &c);
  if (rc == RIVER_SUCCESS)
    rc = river_coll_stat(c, &ci);
  river_coll_close(c);
  if (rc != RIVER_SUCCESS)
    return rc;
  rep->nrecords = ci.nrecords;
  rep->nblocks = ci.nblocks;
  rep->checksum = ci.table_crc;
  rep->ordered_ok = pc->ordered_ok;
  return RIVER_SUCCESS;
}

/* Remove this rank's files of generation gen for partition p. */
static void river_remove_partition(const river_pcoll *pc, const char *name,
                                   int p, const char *gen, int ndisks,
                                   int repl)
{
  char file[RIVER_PCOLL_PATH_LEN], path[RIVER_PATH_MAX];
  int c;

  snprintf(file, sizeof file, "%s.p%d.%s.rdat", name, p, gen);
  for (c = 0; c < repl; c++) {
    if (river_copy_path(pc, file, (p + c) % ndisks, path, sizeof path)
        == RIVER_SUCCESS && unlink(path) != 0 && errno != ENOENT)
      river__warn("cannot remove %s: %s", path, strerror(errno));
  }
}

/* What rank 0 learns of the collection being replaced, for cleanup. */
struct river_old_gen {
  int exists, npartitions, ndisks, replication;
  char generation[17];
  char disks[RIVER_PATH_MAX];
};

/* Rank 0: build the partition table from the reports, check ordering,
 * write the metadata under a temporary name and rename it into place. */
static int river_pcoll_publish(river_pcoll *pc, const unsigned char *reports,
                               size_t rep_size, struct river_old_gen *old)
{
  river_pcoll_info *in = &pc->info;
  struct river_row_layout lay;
  char path[RIVER_PATH_MAX], tmp[RIVER_PATH_MAX];
  unsigned char *rows, *prev_max = NULL;
  int p, c, rc;
  river_pcoll *prev;

  river_row_layout(in->replication, pc->key_size, &lay);
  rows = calloc((size_t)in->npartitions, lay.size);
  if (rows == NULL)
    return RIVER_ENOMEM;
  in->nrecords = 0;
  for (p = 0; p < in->npartitions; p++) {
    const unsigned char *rep = reports + (size_t)p * rep_size;
    struct river_part_report r;
    struct river_h5_row row = {0};
    unsigned char *out = rows + (size_t)p * lay.size;
    const unsigned char *kmin = rep + sizeof r, *kmax = kmin + pc->key_size;

    memcpy(&r, rep, sizeof r);
    if (in->ordered && r.nrecords > 0) {
      if (!r.ordered_ok || (prev_max && river__schema_key_bytes_cmp(
                                pc->schema, prev_max, kmin) > 0)) {
        river__error("collection %s: declared ordered, but partition %d %s",
                     in->name, p, r.ordered_ok ? "starts below the end of "
                     "the one before" : "is not in key order");
        free(rows);
        return RIVER_EINVAL;
      }
      prev_max = (unsigned char *)kmax;
    }
    row.partition = (uint32_t)p;
    row.nrecords = r.nrecords;
    row.bytes = r.nrecords * in->record_size;
    row.nblocks = r.nblocks;
    row.checksum = r.checksum;
    row.first_disk = (uint32_t)(p % in->ndisks);
    memcpy(out, &row, sizeof row);
    for (c = 0; c < in->replication; c++) {
      uint32_t d = (uint32_t)((p + c) % in->ndisks);
      memcpy(out + lay.disks_off + (size_t)c * sizeof d, &d, sizeof d);
    }
    snprintf((char *)out + lay.path_off, RIVER_PCOLL_PATH_LEN,
             "%s.p%d.%s.rdat", in->name, p, in->generation);
    memcpy(out + lay.kmin_off, kmin, pc->key_size);
    memcpy(out + lay.kmax_off, kmax, pc->key_size);
    in->nrecords += r.nrecords;
  }

  river_meta_path(pc->root, in->name, "", path, sizeof path);
  rc = river_meta_path(pc->root, in->name, ".tmp.", tmp, sizeof tmp);
  /* Learn what this replaces (if it can be read) before replacing it. */
  if (rc == RIVER_SUCCESS && access(path, F_OK) == 0) {
    river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
    o.root = pc->root;
    if (river_pcoll_open(MPI_COMM_SELF, in->name, &o, &prev)
        == RIVER_SUCCESS) {
      old->exists = 1;
      old->npartitions = prev->info.npartitions;
      old->ndisks = prev->info.ndisks;
      old->replication = prev->info.replication;
      memcpy(old->generation, prev->info.generation, sizeof old->generation);
      snprintf(old->disks, sizeof old->disks, "%s", prev->disks);
      river_pcoll_close(prev);
    } else {
      river__warn("collection %s: replacing unreadable metadata; its data "
                  "files are left in place", in->name);
    }
  }
  if (rc == RIVER_SUCCESS)
    rc = river_meta_write(pc, tmp, rows, &lay);
  if (rc == RIVER_SUCCESS && rename(tmp, path) != 0) {
    river__error("cannot rename %s to %s: %s", tmp, path, strerror(errno));
    rc = RIVER_EIO;
  }
  if (rc == RIVER_SUCCESS)
    rc = river__fsync_dir(path);
  if (rc != RIVER_SUCCESS)
    unlink(tmp);
  free(rows);
  return rc;
}

int river_pcoll_commit(river_pcoll *pc)
{
  struct river_part_report rep = {0};
  struct river_old_gen old = {0};
  unsigned char *mine = NULL, *all = NULL;
  size_t rep_size;
  int rc, p;
  river_pcoll *oldpc = NULL;

  if (pc == NULL || !pc->writing)
    return RIVER_EINVAL;
  rep_size = sizeof rep + 2 * pc->key_size;
  mine = calloc(1, rep_size);
  if (pc->rank == 0)
    all = calloc((size_t)pc->size, rep_size);
  rc = mine == NULL || (pc->rank == 0 && all == NULL) ? RIVER_ENOMEM
                                                      : RIVER_SUCCESS;
  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_finish_local(pc, &rep);
  rc = river__agree(pc->comm, rc);
  if (rc == RIVER_SUCCESS) {
    memcpy(mine, &rep, sizeof rep);
    memcpy(mine + sizeof rep, pc->key_min, pc->key_size);
    memcpy(mine + sizeof rep + pc->key_size, pc->key_max, pc->key_size);
    MPI_Gather(mine, (int)rep_size, MPI_BYTE, all, (int)rep_size, MPI_BYTE, 0,
               pc->comm);
    if (pc->rank == 0)
      rc = river_pcoll_publish(pc, all, rep_size, &old);
    MPI_Bcast(&rc, 1, MPI_INT, 0, pc->comm);
  }
  if (rc != RIVER_SUCCESS) {
    river_remove_partition(pc, pc->info.name, pc->rank, pc->info.generation,
                           pc->info.ndisks, pc->info.replication);
  } else {
    /* The new collection is in place: remove the files it replaced.
     * Partition p's old files are removed by rank p mod size. */
    MPI_Bcast(&old, sizeof old, MPI_BYTE, 0, pc->comm);
    if (old.exists && strcmp(old.generation, pc->info.generation) != 0) {
      oldpc = calloc(1, sizeof *oldpc);
      if (oldpc != NULL) {
        memcpy(oldpc->root, pc->root, sizeof oldpc->root);
        memcpy(oldpc->disks, old.disks, sizeof oldpc->disks);
        for (p = pc->rank; p < old.npartitions; p += pc->size)
          river_remove_partition(oldpc, pc->info.name, p, old.generation,
                                 old.ndisks, old.replication);
        free(oldpc);
      }
    }
  }
  free(mine);
  free(all);
  river_pcoll_free(pc);
  return rc;
}

/* -------------------------------------------------------------- open */

int river_pcoll_open(MPI_Comm comm, const char *name,
                     const river_pcoll_opts *opts, river_pcoll **out)
{
  char path[RIVER_PATH_MAX];
  struct river_h5_quiet q;
  river_pcoll *pc;
  size_t ncopies;
  int rc;

  if (comm == MPI_COMM_NULL || name == NULL || out == NULL)
    return RIVER_EINVAL;
  rc = river_pcoll_check_name(name);
  if (rc == RIVER_SUCCESS && opts && opts->disks)
    rc = river_check_disks(opts->disks);
  pc = rc == RIVER_SUCCESS ? river_pcoll_alloc(comm, name, opts, &rc) : NULL;
  if (pc == NULL)
    return rc;
  if (opts && opts->disks)
    snprintf(pc->disks, sizeof pc->disks, "%s", opts->disks);
  rc = river_meta_path(pc->root, name, "", path, sizeof path);
  if (rc == RIVER_SUCCESS && access(path, F_OK) != 0) {
    river__error("collection %s not found (no %s)", name, path);
    rc = RIVER_ENOTFOUND;
  }
  if (rc == RIVER_SUCCESS) {
    river_h5_quiet_on(&q);
    rc = river_meta_read(pc, path, opts && opts->disks);
    river_h5_quiet_off(&q);
  }
  if (rc == RIVER_SUCCESS) {
    ncopies = (size_t)pc->info.npartitions * (size_t)pc->info.replication;
    pc->rcopies = calloc(ncopies, sizeof *pc->rcopies);
    pc->rbad = calloc(ncopies, 1);
    if (pc->rcopies == NULL || pc->rbad == NULL)
      rc = RIVER_ENOMEM;
  }
  rc = river__agree(pc->comm, rc);
  if (rc != RIVER_SUCCESS) {
    river_pcoll_free(pc);
    return rc;
  }
  *out = pc;
  return RIVER_SUCCESS;
}

int river_pcoll_close(river_pcoll *pc)
{
  if (pc == NULL)
    return RIVER_SUCCESS;
  if (pc->writing) {
    river_pcoll_free(pc);  /* abandoning writers removes their temp files */
    return RIVER_SUCCESS;
  }
  river_pcoll_free(pc);
  return RIVER_SUCCESS;
}

int river_pcoll_info_get(const river_pcoll *pc, river_pcoll_info *info)
{
  if (pc == NULL || info == NULL)
    return RIVER_EINVAL;
  *info = pc->info;
  return RIVER_SUCCESS;
}

int river_pcoll_schema(const river_pcoll *pc, const river_schema **schema)
{
  if (pc == NULL || schema == NULL)
    return RIVER_EINVAL;
  *schema = pc->schema;
  return RIVER_SUCCESS;
}

static int river_pcoll_valid_part(const river_pcoll *pc, int p)
{
  return pc != NULL && !pc->writing && p >= 0 && p < pc->info.npartitions;
}

int river_pcoll_partition(const river_pcoll *pc, int p, river_pcoll_part *part)
{
  if (!river_pcoll_valid_part(pc, p) || part == NULL)
    return RIVER_EINVAL;
  *part = pc->parts[p];
  return RIVER_SUCCESS;
}

int river_pcoll_disk_path(const river_pcoll *pc, int d, char *buf,
                          size_t *len)
{
  char dir[RIVER_PATH_MAX];
  int rc;

  if (pc == NULL || d < 0 || d >= pc->info.ndisks || buf == NULL
      || len == NULL)
    return RIVER_EINVAL;
  rc = river_disk_dir(pc->root, pc->disks, d, dir, sizeof dir);
  return rc == RIVER_SUCCESS ? river__copy_out(dir, buf, len) : rc;
}

int river_pcoll_blocks(const river_pcoll *pc, int p,
                       size_t *records_per_block, uint64_t *nblocks)
{
  if (!river_pcoll_valid_part(pc, p) || records_per_block == NULL
      || nblocks == NULL)
    return RIVER_EINVAL;
  *records_per_block = pc->info.block_size / pc->info.record_size;
  *nblocks = pc->parts[p].nblocks;
  return RIVER_SUCCESS;
}

/* Open copy c of partition p and check it matches the metadata.
 * On failure logs why (warn: a mirror may still serve the data). */
static int river_pcoll_open_copy(river_pcoll *pc, int p, int c,
                                 river_coll **out)
{
  const river_pcoll_part *pp = &pc->parts[p];
  river_coll_opts co = RIVER_COLL_OPTS_INIT;
  char path[RIVER_PATH_MAX];
  river_coll_info ci;
  river_coll *coll = NULL;
  int d = (pp->first_disk + c) % pc->info.ndisks, rc;

  co.direct_io = pc->direct_io;
  rc = river_copy_path(pc, pp->path, d, path, sizeof path);
  if (rc == RIVER_SUCCESS)
    rc = river_coll_open(path, pc->info.record_size, &co, &coll);
  if (rc == RIVER_SUCCESS && (rc = river_coll_stat(coll, &ci)) == RIVER_SUCCESS
      && (ci.nrecords != pp->nrecords || ci.table_crc != pp->checksum
          || ci.block_size != pc->info.block_size)) {
    river__warn("collection %s: partition %d copy on disk %d (%s) does not "
                "match the metadata (%llu records, checksum %08x; metadata "
                "says %llu, %08x)", pc->info.name, p, d, path,
                (unsigned long long)ci.nrecords, (unsigned)ci.table_crc,
                (unsigned long long)pp->nrecords, (unsigned)pp->checksum);
    rc = RIVER_ECORRUPT;
  }
  if (rc != RIVER_SUCCESS) {
    river__warn("collection %s: partition %d: copy on disk %d unusable "
                "(%s)", pc->info.name, p, d, river_strerror(rc));
    river_coll_close(coll);
    return rc;
  }
  *out = coll;
  return RIVER_SUCCESS;
}

/* Read `block` of copy c of partition p (arguments checked). A copy that
 * failed to open keeps failing the same way (pc->rbad). *opened tells
 * whether the copy's file could be opened; `more`, whether the caller
 * will try another copy (said in the warning). */
static int river_pcoll_read_one(river_pcoll *pc, int p, int c, uint64_t block,
                                void *buf, size_t bufsize, size_t *nrecords,
                                int more, int *opened)
{
  size_t slot = (size_t)p * (size_t)pc->info.replication + (size_t)c;
  int rc;

  *opened = 0;
  if (pc->rbad[slot])
    return -(int)pc->rbad[slot];  /* why it failed before */
  if (pc->rcopies[slot] == NULL) {
    rc = river_pcoll_open_copy(pc, p, c, &pc->rcopies[slot]);
    if (rc != RIVER_SUCCESS) {
      pc->rbad[slot] = (unsigned char)(rc < 0 && rc > -256
                                       ? -rc : -RIVER_ECORRUPT);
      return rc;
    }
  }
  *opened = 1;
  rc = river_coll_read_block(pc->rcopies[slot], block, buf, bufsize,
                             nrecords);
  if (rc != RIVER_SUCCESS && rc != RIVER_EINVAL && rc != RIVER_ENOBUFS)
    river__warn("collection %s: partition %d block %llu: copy on disk %d "
                "failed (%s)%s", pc->info.name, p, (unsigned long long)block,
                (pc->parts[p].first_disk + c) % pc->info.ndisks,
                river_strerror(rc), more ? "; trying the next copy" : "");
  return rc;
}

/* Argument checks shared by the block readers. */
static int river_pcoll_check_read(const river_pcoll *pc, int p, uint64_t block,
                                  const void *buf, size_t bufsize,
                                  const size_t *nrecords)
{
  if (!river_pcoll_valid_part(pc, p) || buf == NULL || nrecords == NULL
      || block >= pc->parts[p].nblocks)
    return RIVER_EINVAL;
  /* The caller's buffer, not the data: refuse before blaming any copy. */
  if (bufsize < pc->info.block_size / pc->info.record_size
                    * pc->info.record_size)
    return RIVER_ENOBUFS;
  return RIVER_SUCCESS;
}

int river_pcoll_read_copy(river_pcoll *pc, int p, int c, uint64_t block,
                          void *buf, size_t bufsize, size_t *nrecords)
{
  int rc, opened;

  if (pc != NULL && (c < 0 || c >= pc->info.replication))
    return RIVER_EINVAL;
  rc = river_pcoll_check_read(pc, p, block, buf, bufsize, nrecords);
  if (rc != RIVER_SUCCESS)
    return rc;
  return river_pcoll_read_one(pc, p, c, block, buf, bufsize, nrecords, 0,
                              &opened);
}

int river_pcoll_read_block(river_pcoll *pc, int p, uint64_t block, void *buf,
                           size_t bufsize, size_t *nrecords)
{
  int c, rc = river_pcoll_check_read(pc, p, block, buf, bufsize, nrecords),
      tried = 0, all_missing = 1, opened, demoted;

  if (rc != RIVER_SUCCESS)
    return rc;
  for (c = 0; c < pc->info.replication; c++) {
    /* While another copy remains, this copy's failures are warnings. */
    int more = c + 1 < pc->info.replication;
    demoted = river__log_demote(more);
    rc = river_pcoll_read_one(pc, p, c, block, buf, bufsize, nrecords, more,
                              &opened);
    river__log_demote(demoted);
    tried += opened;
    if (rc == RIVER_SUCCESS)
      return RIVER_SUCCESS;
    if (rc == RIVER_EINVAL || rc == RIVER_ENOBUFS)
      return rc;  /* the caller's buffer, not the data */
    all_missing = all_missing && rc == RIVER_ENOTFOUND;
  }
  river__error("collection %s: partition %d block %llu: no readable copy "
               "(%d of %d copies could be opened)", pc->info.name, p,
               (unsigned long long)block, tried, pc->info.replication);
  return all_missing ? RIVER_ENOTFOUND : RIVER_ECORRUPT;
}

/* Whether copy c of partition p is known to be unusable (its file could
 * not be opened or did not match the metadata). For GD's failover. */
int river__pcoll_copy_dead(const river_pcoll *pc, int p, int c)
{
  return pc->rbad[(size_t)p * (size_t)pc->info.replication + (size_t)c] != 0;
}

int river_pcoll_verify_copy(river_pcoll *pc, int p, int c,
                            uint64_t *bad_block)
{
  river_coll *coll = NULL;
  uint64_t bad = UINT64_MAX;
  int rc, d;

  if (!river_pcoll_valid_part(pc, p) || c < 0 || c >= pc->info.replication)
    return RIVER_EINVAL;
  d = (pc->parts[p].first_disk + c) % pc->info.ndisks;
  rc = river_pcoll_open_copy(pc, p, c, &coll);
  if (rc == RIVER_SUCCESS) {
    rc = river_coll_verify(coll, &bad);
    if (rc != RIVER_SUCCESS)
      river__error("collection %s: partition %d copy on disk %d: block %llu "
                   "is damaged", pc->info.name, p, d,
                   (unsigned long long)bad);
  } else {
    river__error("collection %s: partition %d copy on disk %d: file "
                 "missing, unreadable or not matching the metadata",
                 pc->info.name, p, d);
  }
  river_coll_close(coll);
  if (rc != RIVER_SUCCESS && bad_block != NULL)
    *bad_block = bad;
  return rc;
}

int river_pcoll_remove(const char *name, const river_pcoll_opts *opts)
{
  char path[RIVER_PATH_MAX];
  river_pcoll *pc = NULL;
  int rc, p;

  if (name == NULL)
    return RIVER_EINVAL;
  rc = river_pcoll_open(MPI_COMM_SELF, name, opts, &pc);
  if (rc == RIVER_ENOTFOUND || rc == RIVER_EINVAL)
    return rc;
  if (rc != RIVER_SUCCESS) {
    /* Unreadable metadata: remove it so the name is free again. */
    char root[RIVER_PATH_MAX];
    river_resolve_root(opts, root, sizeof root);
    river_meta_path(root, name, "", path, sizeof path);
    if (unlink(path) != 0)
      return RIVER_EIO;
    river__warn("collection %s: metadata was unreadable; removed it, data "
                "files (if any) are left in place", name);
    return RIVER_SUCCESS;
  }
  river_meta_path(pc->root, name, "", path, sizeof path);
  if (unlink(path) != 0) {
    river__error("cannot remove %s: %s", path, strerror(errno));
    river_pcoll_close(pc);
    return RIVER_EIO;
  }
  river__fsync_dir(path);
  for (p = 0; p < pc->info.npartitions; p++)
    river_remove_partition(pc, name, p, pc->info.generation, pc->info.ndisks,
                           pc->info.replication);
  river_pcoll_close(pc);
  return RIVER_SUCCESS;
}
