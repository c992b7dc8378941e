/*
 * valsort.c - `river valsort COLL|file:PATH [--input COLL|file:PATH]`:
 * are the records in key order, how many, and their content checksum
 * (the sum of their CRC-32s, as `gensort -c` and the sortbenchmark's
 * valsort print it); with --input, are the count and checksum the
 * input's (river/valsort.h does the counting).
 *
 * Every rank validates a contiguous part of the record sequence: of a
 * collection, a run of its blocks in stream order (partition by
 * partition, or stripe by stripe if interleaved, put back in record
 * order by river_pcoll_order); of a flat file, a range of its records.
 * river_valsort_reduce joins the parts in rank order.
 */
#include "coll.h"

#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_PREFIX "file:"

/* This rank's share [*first, *first + *count) of n items. */
static void share(uint64_t n, uint64_t *first, uint64_t *count)
{
  uint64_t r = (uint64_t)cli_rank(), s = (uint64_t)cli_size();

  *first = n / s * r + (r < n % s ? r : n % s);
  *count = n / s + (r < n % s);
}

/* ---------------------------------------------------------- flat file */

/* Open path, a regular file of whole rs-byte records: the descriptor
 * into *fd and its size into *size, or an error (logged). */
static int open_file(const char *path, size_t rs, int *fd, uint64_t *size)
{
  struct stat st;
  int err;

  *fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (*fd < 0) {
    err = errno;
    river_log(RIVER_LOG_ERROR, "valsort: cannot read %s: %s", path,
              strerror(err));
    return err == ENOENT ? RIVER_ENOTFOUND
           : err == EACCES ? RIVER_EACCES : RIVER_EIO;
  }
  if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    river_log(RIVER_LOG_ERROR, "valsort: cannot read %s: not a regular file",
              path);
    return RIVER_EINVAL;
  }
  *size = (uint64_t)st.st_size;
  if (*size % rs != 0) {
    river_log(RIVER_LOG_ERROR, "valsort: %s: %llu bytes are not a whole "
              "number of %zu-byte records", path,
              (unsigned long long)*size, rs);
    return RIVER_EFORMAT;
  }
  return RIVER_SUCCESS;
}

/* Read len bytes at off, through short reads and interruptions. */
static int read_at(int fd, unsigned char *buf, size_t len, uint64_t off)
{
  ssize_t got;

  while (len > 0) {
    got = pread(fd, buf, len, (off_t)off);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return got < 0 ? errno : -1;
    buf += got;
    len -= (size_t)got;
    off += (uint64_t)got;
  }
  return 0;
}

/* The progress line of the check under way (validate), and its
 * records' size. */
static struct gd_progress vprog;
static size_t vrs;

/* Check n records in order, counting them for the progress line (their
 * bytes are this rank's work too, beside what GD moved). */
static int valsort_add(river_valsort *v, const void *recs, size_t n)
{
  vprog.records += n;
  vprog.bytes += n * vrs;
  vprog.base += n * vrs;
  river_progress_poll(vprog.p);   /* a round, if one is due */
  return river_valsort_add(v, recs, n);
}

/* Collective: rank 0's view of the file's size is every rank's, so the
 * ranks' parts tile it even if it is still growing. */
static int scan_file(const char *path, const river_schema *s,
                     river_valsort *v)
{
  size_t rs = 0, chunk, n;
  uint64_t size = 0, first, count, done = 0;
  unsigned char *buf = NULL;
  int fd = -1, rc, err;

  river_schema_record_size(s, &rs);
  rc = cli_agree(open_file(path, rs, &fd, &size));
  if (rc == RIVER_SUCCESS)
    rc = cli_bcast(&size, sizeof size);
  share(size / rs, &first, &count);
  chunk = (1u << 20) / rs + 1;
  if (rc == RIVER_SUCCESS && (buf = malloc(chunk * rs)) == NULL)
    rc = RIVER_ENOMEM;
  while (rc == RIVER_SUCCESS && done < count) {
    n = count - done < chunk ? (size_t)(count - done) : chunk;
    if ((err = read_at(fd, buf, n * rs, (first + done) * rs)) != 0) {
      river_log(RIVER_LOG_ERROR, "valsort: %s: read at record %llu: %s",
                path, (unsigned long long)(first + done),
                err > 0 ? strerror(err) : "the file is shorter than it was");
      rc = RIVER_EIO;
      break;
    }
    rc = valsort_add(v, buf, n);
    done += n;
  }
  free(buf);
  if (fd >= 0)
    close(fd);
  return rc;
}

/* --------------------------------------------------------- collection */

/* Read block b of partition p into the reorderer and v. */
static int feed(river_pcoll *pc, river_pcoll_order *order, int p, uint64_t b,
                unsigned char *buf, size_t bufsize, river_valsort *v)
{
  const void *ready;
  size_t n, nready;
  int rc = river_pcoll_read_block(pc, p, b, buf, bufsize, &n);

  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_order_add(order, p, b, buf, n, &ready, &nready);
  if (rc == RIVER_SUCCESS)
    rc = valsort_add(v, ready, nready);
  return rc;
}

/* The units of the stream order are blocks of a partitioned collection
 * (partition by partition) and stripes of an interleaved one (block b
 * of every partition that has one: the reorderer needs a stripe whole);
 * each rank reads a contiguous run of them: [first, first + count). */
struct scan {
  uint64_t *nblocks;   /* each partition's */
  uint64_t first, count;
  size_t most;         /* records per block, the most of any partition */
};

/* This rank's run of pc's units into sc (free sc->nblocks). */
static int scan_plan(river_pcoll *pc, struct scan *sc)
{
  river_pcoll_info info;
  uint64_t units = 0, maxb = 0;
  size_t rpb = 0;
  int p;

  river_pcoll_info_get(pc, &info);
  memset(sc, 0, sizeof *sc);
  sc->nblocks = calloc((size_t)info.npartitions + 1, sizeof *sc->nblocks);
  if (sc->nblocks == NULL)
    return RIVER_ENOMEM;
  for (p = 0; p < info.npartitions; p++) {
    river_pcoll_blocks(pc, p, &rpb, &sc->nblocks[p]);
    units += sc->nblocks[p];
    maxb = sc->nblocks[p] > maxb ? sc->nblocks[p] : maxb;
    sc->most = rpb > sc->most ? rpb : sc->most;
  }
  if (info.layout == RIVER_LAYOUT_INTERLEAVED)
    units = maxb;
  share(units, &sc->first, &sc->count);
  return RIVER_SUCCESS;
}

/* Hold the partitions this rank's run reads (river_pcoll_hold_partitions:
 * a commit or remove of the collection meanwhile takes nothing from the
 * check). Collective; RIVER_EAGAIN if the collection changed since pc
 * was opened. */
static int scan_hold(river_pcoll *pc, const struct scan *sc)
{
  river_pcoll_info info;
  uint64_t k = 0;
  int *parts, n = 0, p, rc;

  river_pcoll_info_get(pc, &info);
  parts = malloc(((size_t)info.npartitions + 1) * sizeof *parts);
  for (p = 0; parts != NULL && p < info.npartitions; p++) {
    if (info.layout == RIVER_LAYOUT_INTERLEAVED
        ? sc->count > 0 && sc->nblocks[p] > sc->first
        : k < sc->first + sc->count && k + sc->nblocks[p] > sc->first
          && sc->nblocks[p] > 0)
      parts[n++] = p;
    k += sc->nblocks[p];
  }
  /* A rank short of memory holds none, but takes part. */
  rc = river_pcoll_hold_partitions(pc, parts, parts != NULL ? n : 0);
  rc = cli_agree(parts == NULL ? RIVER_ENOMEM : rc);
  free(parts);
  return rc;
}

/* Read this rank's run (sc) of pc's units in stream order into v. */
static int scan_coll(river_pcoll *pc, const struct scan *sc,
                     river_valsort *v)
{
  river_pcoll_info info;
  river_pcoll_order *order = NULL;
  uint64_t u, b, k = 0, first = sc->first, count = sc->count;
  size_t nready, bufsize;
  const void *ready;
  unsigned char *buf = NULL;
  int p, rc;

  river_pcoll_info_get(pc, &info);
  bufsize = sc->most * info.record_size;
  rc = river_pcoll_order_create(pc, &order);
  if (rc == RIVER_SUCCESS && (buf = malloc(bufsize + 1)) == NULL)
    rc = RIVER_ENOMEM;
  if (info.layout == RIVER_LAYOUT_INTERLEAVED) {
    for (u = first; rc == RIVER_SUCCESS && u < first + count; u++)
      for (p = 0; rc == RIVER_SUCCESS && p < info.npartitions; p++)
        if (u < sc->nblocks[p])
          rc = feed(pc, order, p, u, buf, bufsize, v);
  } else {
    for (p = 0; rc == RIVER_SUCCESS && p < info.npartitions; p++)
      for (b = 0; rc == RIVER_SUCCESS && b < sc->nblocks[p]; b++, k++)
        if (k >= first && k < first + count)
          rc = feed(pc, order, p, b, buf, bufsize, v);
  }
  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_order_flush(order, &ready, &nready);
  if (rc == RIVER_SUCCESS)
    rc = valsort_add(v, ready, nready);
  river_pcoll_order_destroy(order);
  free(buf);
  return rc;
}

/* Open collection spec to validate it (collective): on node-local disks
 * (*local 1) read through GD, so each rank holds the copies of the disks
 * it serves (RIVER_PCOLL_HOLD_SERVED); else opened for its metadata,
 * then each rank holds the partitions of its run (sc, planned from that
 * metadata). Either way a commit or remove of the collection during
 * the check takes nothing from it. A collection replaced between the
 * open and the hold is opened again, a few times. */
static int open_scan(const struct args *a, const char *spec,
                     river_pcoll **out, int *local, struct scan *sc)
{
  river_pcoll_opts o = a->opts;
  river_pcoll *pc = NULL;
  int want_local = 0, tries, rc = RIVER_EAGAIN;

  memset(sc, 0, sizeof *sc);
  for (tries = 0; tries < 6 && rc == RIVER_EAGAIN; tries++) {
    o.hold = want_local ? RIVER_PCOLL_HOLD_SERVED : RIVER_PCOLL_HOLD_NONE;
    rc = river_pcoll_open(MPI_COMM_WORLD, spec, &o, &pc);
    if (rc != RIVER_SUCCESS)
      return rc;
    river_pcoll_node_local(pc, local);   /* one pattern: every rank alike */
    if (*local != want_local) {          /* opened the other way: again */
      want_local = *local;
      rc = RIVER_EAGAIN;
    } else if (!*local) {
      rc = cli_agree(scan_plan(pc, sc));
      if (rc == RIVER_SUCCESS)
        rc = scan_hold(pc, sc);
    }
    if (rc != RIVER_SUCCESS) {
      river_pcoll_close(pc);
      pc = NULL;
      free(sc->nblocks);
      sc->nblocks = NULL;
    }
  }
  if (rc == RIVER_EAGAIN && cli_rank() == 0)
    river_log(RIVER_LOG_ERROR, "valsort %s: the collection changed between "
              "its open and the hold of its partitions %d times (another "
              "job is writing or removing it)", spec, tries);
  if (rc == RIVER_SUCCESS)
    *out = pc;
  return rc;
}


/* A collection on node-local disks: a rank sees only its node's copies,
 * so it is read as copy-out reads, through GD (each disk served by a
 * rank of the node that holds it), with rank 0 the client of every
 * partition in stream mode: rank 0 checks the whole stream, in order. */
static int scan_coll_gd(river_pcoll *pc, river_valsort *v)
{
  river_gd_opts o = RIVER_GD_OPTS_INIT;
  river_pcoll_info info;
  river_pcoll_order *order = NULL;
  river_gd *gd = NULL;
  const void *recs, *ready;
  size_t n, nready;
  uint64_t b;
  int *clients, p, rc, crc, orc = RIVER_SUCCESS;

  river_pcoll_info_get(pc, &info);
  clients = calloc((size_t)info.npartitions + 1, sizeof *clients);
  rc = cli_agree(clients == NULL ? RIVER_ENOMEM : RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS && cli_rank() == 0)
    rc = river_pcoll_order_create(pc, &order);
  rc = cli_agree(rc);
  o.mode = RIVER_GD_STREAM;
  o.client_ranks = clients;  /* all 0 */
  if (rc == RIVER_SUCCESS)
    rc = river_gd_open(MPI_COMM_WORLD, pc, &o, &gd);
  free(clients);
  if (rc != RIVER_SUCCESS) {
    river_pcoll_order_destroy(order);
    return rc;
  }
  vprog.gd = gd;
  while ((rc = river_gd_next(gd, &recs, &n, &p, &b)) == RIVER_SUCCESS
         && orc == RIVER_SUCCESS) {
    orc = river_pcoll_order_add(order, p, b, recs, n, &ready, &nready);
    if (orc == RIVER_SUCCESS)
      orc = valsort_add(v, ready, nready);
  }
  if (rc == RIVER_EOS && order != NULL && orc == RIVER_SUCCESS) {
    orc = river_pcoll_order_flush(order, &ready, &nready);
    if (orc == RIVER_SUCCESS)
      orc = valsort_add(v, ready, nready);
  }
  if (rc == RIVER_EOS)
    rc = RIVER_SUCCESS;
  gd_progress_closing(&vprog);
  crc = river_gd_close(gd);   /* the same on every rank */
  if (crc != RIVER_SUCCESS && orc == RIVER_SUCCESS)
    orc = crc;
  river_pcoll_order_destroy(order);
  return rc != RIVER_SUCCESS ? rc : orc;
}

/* ------------------------------------------------------------- driver */

/* Validate what `spec` names (a collection, or file:PATH of records of
 * schema `schema`, default gensort's) into *out (collective). */
static int validate(const struct args *a, const char *spec,
                    river_valsort_summary *out)
{
  river_schema *fs = NULL;
  const river_schema *s = NULL;
  river_pcoll *pc = NULL;
  river_valsort *v = NULL;
  struct scan sc = {NULL, 0, 0, 0};
  river_pcoll_info info;
  int rc, local = 0;
  int file = strncmp(spec, FILE_PREFIX, strlen(FILE_PREFIX)) == 0;

  if (file) {
    rc = a->schema ? river_schema_parse(a->schema, &fs)
                   : river_schema_create_default(&fs);
    s = fs;
  } else if (a->schema != NULL) {
    if (cli_rank() == 0)
      river_log(RIVER_LOG_ERROR, "valsort: --schema is for file: inputs; "
                "collection %s has its own", spec);
    return RIVER_EINVAL;
  } else {
    rc = open_scan(a, spec, &pc, &local, &sc);
    if (rc == RIVER_SUCCESS)
      rc = river_pcoll_schema(pc, &s);
  }
  if (rc == RIVER_SUCCESS && (rc = river_valsort_create(s, &v))
      == RIVER_EINVAL && cli_rank() == 0)
    river_log(RIVER_LOG_ERROR, "valsort %s: its schema has no key", spec);
  /* The progress line: of the collection's records; a file's count is
   * not known here (no share or ETA). Collective; agreed within. */
  memset(&info, 0, sizeof info);
  if (pc != NULL)
    river_pcoll_info_get(pc, &info);
  if (s != NULL)
    river_schema_record_size(s, &vrs);
  rc = gd_progress_begin(&vprog, "valsort", &info, rc);
  if (rc == RIVER_SUCCESS)
    rc = file ? scan_file(spec + strlen(FILE_PREFIX), s, v)
         : local ? scan_coll_gd(pc, v) : scan_coll(pc, &sc, v);
  rc = gd_progress_finish(&vprog, cli_agree(rc));
  if (rc == RIVER_SUCCESS)
    rc = river_valsort_reduce(v, MPI_COMM_WORLD);
  if (rc == RIVER_SUCCESS)
    rc = river_valsort_result(v, out);
  river_valsort_destroy(v);
  river_pcoll_close(pc);
  free(sc.nblocks);
  river_schema_destroy(fs);
  return rc;
}

int cmd_valsort(int argc, char **argv)
{
  struct args a;
  river_valsort_summary got, in;
  char sum[40], isum[40];
  int rank = cli_rank(), rc;

  rc = cli_coll_args(argc, argv, OPT_COMMON | OPT_INPUT | OPT_SCHEMA, 1,
                     "COLL|file:PATH", &a);
  if (rc == RIVER_SUCCESS)
    rc = validate(&a, a.pos[0], &got);
  if (rc != RIVER_SUCCESS)
    return rc;
  river_valsort_checksum_text(&got, sum, sizeof sum);
  if (rank == 0)
    printf("%s: %llu records, checksum %s, %llu duplicate keys\n", a.pos[0],
           (unsigned long long)got.records, sum,
           (unsigned long long)got.duplicates);
  if (got.unordered > 0) {
    if (rank == 0)
      river_log(RIVER_LOG_ERROR, "valsort %s: not in key order: record %llu "
                "(counted from 0) is below the one before it (%llu records in "
                "all are)", a.pos[0], (unsigned long long)got.first_unordered,
                (unsigned long long)got.unordered);
    return RIVER_EVALIDATE;
  }
  if (a.input != NULL) {
    rc = validate(&a, a.input, &in);
    if (rc != RIVER_SUCCESS)
      return rc;
    river_valsort_checksum_text(&in, isum, sizeof isum);
    if (in.records != got.records || in.checksum_hi != got.checksum_hi
        || in.checksum_lo != got.checksum_lo) {
      if (rank == 0)
        river_log(RIVER_LOG_ERROR, "valsort %s: not the records of %s: %llu "
                  "records, checksum %s; the input has %llu, checksum %s",
                  a.pos[0], a.input, (unsigned long long)got.records, sum,
                  (unsigned long long)in.records, isum);
      return RIVER_EVALIDATE;
    }
  }
  if (rank == 0)
    printf("%s: SUCCESS - all records are in order%s%s\n", a.pos[0],
           a.input ? ", the records of " : "", a.input ? a.input : "");
  return RIVER_SUCCESS;
}
