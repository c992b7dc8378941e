/*
 * test_pcoll_api_mpi - the edges of the parallel-collection API
 * (river/pcoll.h) on 4 ranks, in a mkdtemp() root that rank 0 makes
 * under $TMPDIR (or /tmp) and removes at the end:
 *
 *   bad input    names, disk patterns, replication, missing and corrupt
 *                metadata, out-of-range reads, small buffers, bad holds
 *                (river_pcoll_opts.hold, river_pcoll_hold_partitions),
 *                writer calls on a reader and reader calls on a writer,
 *                remove
 *   layout       collections written by river_pcoll_split read back in
 *                record order through river_pcoll_order (and its misuse,
 *                and blocks of no records),
 *                river_pcoll_copy_disk, river_pcoll_root, river_pcoll_list
 *
 * The records, write_coll and the file helpers are in pcolltest.h.
 */
#define _GNU_SOURCE
#include "pcolltest.h"

/* --------------------------------------------------------- bad input */

/* Every rank gets want from a collective call; rank 0 (or every rank, if
 * all) logged a line with text. */
static void bad_create(const char *name, const river_pcoll_opts *o, int want,
                       const char *text)
{
  river_pcoll *pc = NULL;
  int rc;

  mt_log_clear();
  rc = river_pcoll_create(MPI_COMM_WORLD, name, schema, o, &pc);
  MT_CHECK_RC(rc, want);
  MT_CHECK(pc == NULL);
  if (text)
    MT_CHECK(mt_logged("error|", text, NULL));
  if (rc == RIVER_SUCCESS)
    river_pcoll_close(pc);
}

/* Names and disk patterns that are refused, by create and open, with a
 * message quoting them; nothing is made outside the root. Replication
 * beyond the disks. o: the root only, on entry and on return. */
static void check_bad_names(river_pcoll_opts *o)
{
  char longname[RIVER_PCOLL_NAME_MAX + 2], up[2100];
  const char *names[] = {"a/b", "..", ".hidden", ""};
  const char *pats[] = {"nodisk", "d%d%d", "d%s", "../x%d", "a/../../x%d"};
  river_pcoll *pc = NULL;
  size_t i;

  memset(longname, 'x', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  for (i = 0; i < sizeof names / sizeof names[0]; i++) {
    char quoted[64];
    snprintf(quoted, sizeof quoted, "'%s'", names[i]);
    bad_create(names[i], o, RIVER_EINVAL, quoted);
    mt_log_clear();
    MT_CHECK_RC(river_pcoll_open(MPI_COMM_WORLD, names[i], o, &pc),
                RIVER_EINVAL);
    MT_CHECK(mt_logged("error|", quoted, NULL));
  }
  bad_create(longname, o, RIVER_EINVAL, "1..128 characters");

  for (i = 0; i < sizeof pats / sizeof pats[0]; i++) {
    char quoted[64];
    o->disks = pats[i];
    snprintf(quoted, sizeof quoted, "disk pattern '%s'", pats[i]);
    bad_create("pat", o, RIVER_EINVAL, quoted);
  }
  /* Nothing was made outside the root. */
  snprintf(up, sizeof up, "%s/../x0", root);
  MT_CHECK(access(up, F_OK) != 0);
  o->disks = NULL;

  o->replication = 3;
  o->ndisks = 2;
  bad_create("repl", o, RIVER_EINVAL, "replication 3");
  o->replication = 5; /* more than the default 4 disks */
  o->ndisks = 0;
  bad_create("repl", o, RIVER_EINVAL, "replication 5");
  o->replication = 0;
}

/* A missing collection: ENOTFOUND everywhere, named once (by rank 0,
 * which alone reads the metadata); remove says so. */
static void check_missing(const river_pcoll_opts *o)
{
  river_pcoll *pc = NULL;

  mt_log_clear();
  MT_CHECK_RC(river_pcoll_open(MPI_COMM_WORLD, "nosuch", o, &pc),
              RIVER_ENOTFOUND);
  MT_CHECK(mt_logged("error|", "nosuch", "not found") == (rank == 0));
  if (rank == 0)
    MT_CHECK_RC(river_pcoll_remove("nosuch", o), RIVER_ENOTFOUND);
}

/* Write "meta" (recs, n records on this rank) and open it: out-of-range
 * reads and a small buffer, out-of-range partitions, copies and disks,
 * NULL outputs, and writer calls on the reader. Collective. */
static void check_bad_reads(const river_pcoll_opts *o,
                            const unsigned char *recs, size_t n)
{
  river_pcoll *pc = NULL;
  unsigned char *buf = malloc(8192);
  size_t got = 0;
  int rc;

  MT_CHECK_RC(write_coll(MPI_COMM_WORLD, "meta", o, recs, n, NULL),
              RIVER_SUCCESS);
  rc = river_pcoll_open(MPI_COMM_WORLD, "meta", o, &pc);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS) {
    river_pcoll_part part;
    size_t rpb = 0;
    uint64_t nb = 0, bad = 0;
    river_pcoll_info info;

    MT_CHECK_RC(river_pcoll_read_block(pc, -1, 0, buf, 8192, &got),
                RIVER_EINVAL);
    MT_CHECK_RC(river_pcoll_read_block(pc, NR, 0, buf, 8192, &got),
                RIVER_EINVAL);
    MT_CHECK_RC(river_pcoll_read_block(pc, 1, 0, buf, 8192, &got),
                RIVER_EINVAL); /* partition 1 is empty: no block 0 */
    MT_CHECK_RC(river_pcoll_read_block(pc, 0, 2, buf, 8192, &got),
                RIVER_EINVAL); /* 1000 records: blocks 0 and 1 */
    MT_CHECK_RC(river_pcoll_read_block(pc, 0, UINT64_MAX, buf, 8192, &got),
                RIVER_EINVAL);
    MT_CHECK_RC(river_pcoll_read_block(pc, 0, 0, NULL, 8192, &got),
                RIVER_EINVAL);
    MT_CHECK_RC(river_pcoll_read_block(pc, 0, 0, buf, 8192, NULL),
                RIVER_EINVAL);
    /* A buffer smaller than a block: ENOBUFS (even for the short last
     * block), the data is not blamed, no error is logged. */
    mt_log_clear();
    got = 77;
    MT_CHECK_RC(river_pcoll_read_block(pc, 0, 0, buf, 8191, &got),
                RIVER_ENOBUFS);
    MT_CHECK_RC(river_pcoll_read_block(pc, 0, 1, buf, 16, &got),
                RIVER_ENOBUFS);
    MT_CHECK(got == 77);
    MT_CHECK(!mt_logged("error|", NULL, NULL));
    MT_CHECK(!mt_logged("warn|", NULL, NULL));
    /* ...and the copy is not given up on. */
    MT_CHECK_RC(river_pcoll_read_block(pc, 0, 1, buf, 8192, &got),
                RIVER_SUCCESS);
    MT_CHECK(got == 1000 - 512);
    MT_CHECK_RC(river_pcoll_partition(pc, -1, &part), RIVER_EINVAL);
    MT_CHECK_RC(river_pcoll_partition(pc, NR, &part), RIVER_EINVAL);
    MT_CHECK_RC(river_pcoll_partition(pc, 0, NULL), RIVER_EINVAL);
    MT_CHECK_RC(river_pcoll_blocks(pc, NR, &rpb, &nb), RIVER_EINVAL);
    MT_CHECK_RC(river_pcoll_blocks(pc, 0, NULL, &nb), RIVER_EINVAL);
    MT_CHECK_RC(river_pcoll_blocks(pc, 0, &rpb, NULL), RIVER_EINVAL);
    MT_CHECK_RC(river_pcoll_verify_copy(pc, NR, 0, &bad), RIVER_EINVAL);
    MT_CHECK_RC(river_pcoll_verify_copy(pc, 0, 1, &bad), RIVER_EINVAL);
    MT_CHECK_RC(river_pcoll_verify_copy(pc, 0, -1, &bad), RIVER_EINVAL);
    MT_CHECK_RC(river_pcoll_disk_path(pc, NR, (char *)buf, &got),
                RIVER_EINVAL);
    MT_CHECK_RC(river_pcoll_disk_path(pc, -1, (char *)buf, &got),
                RIVER_EINVAL);
    MT_CHECK_RC(river_pcoll_info_get(pc, NULL), RIVER_EINVAL);
    MT_CHECK_RC(river_pcoll_schema(pc, NULL), RIVER_EINVAL);
    /* Writer calls on a reader. */
    MT_CHECK_RC(river_pcoll_write(pc, recs, 1), RIVER_EINVAL);
    MT_CHECK_RC(river_pcoll_commit(pc), RIVER_EINVAL); /* pc stays open */
    MT_CHECK_RC(river_pcoll_info_get(pc, &info), RIVER_SUCCESS);
    river_pcoll_close(pc);
  }
  free(buf);
}

/* Bad holds of "meta": an open whose hold is no river_pcoll_hold, or
 * whose hold or kind of disk pattern differs between ranks (RIVER_EINVAL
 * on every rank, *out untouched, said on every rank); a hold of
 * partitions out of range, a count below 0 or a NULL list on one rank
 * (RIVER_EINVAL on every rank, said by that rank), after which the
 * handle still holds. Collective. */
static void check_bad_hold(const river_pcoll_opts *o)
{
  river_pcoll_opts h = *o;
  river_pcoll *keep = (river_pcoll *)&h, *pc = keep;
  int parts[2] = {0, NR}, rc;

  mt_log_clear();
  h.hold = (river_pcoll_hold)7;
  MT_CHECK_RC(river_pcoll_open(MPI_COMM_WORLD, "meta", &h, &pc),
              RIVER_EINVAL);
  MT_CHECK(pc == keep);
  MT_CHECK(mt_logged("error|", "hold 7 is none of RIVER_PCOLL_HOLD_SERVED",
                     NULL));
  mt_log_clear();
  h.hold = rank == 1 ? RIVER_PCOLL_HOLD_ALL : RIVER_PCOLL_HOLD_SERVED;
  MT_CHECK_RC(river_pcoll_open(MPI_COMM_WORLD, "meta", &h, &pc),
              RIVER_EINVAL);
  MT_CHECK(pc == keep);
  MT_CHECK(mt_logged("error|", "river_pcoll_open: ranks passed different "
                     "hold (from 0 to 1)", NULL));
  mt_log_clear();
  h.hold = RIVER_PCOLL_HOLD_SERVED;
  h.disks = rank == 2 ? "disk%d" : NULL;
  MT_CHECK_RC(river_pcoll_open(MPI_COMM_WORLD, "meta", &h, &pc),
              RIVER_EINVAL);
  MT_CHECK(pc == keep);
  MT_CHECK(mt_logged("error|", "ranks passed different kinds of disk "
                     "pattern", NULL));
  h.disks = NULL;
  h.hold = RIVER_PCOLL_HOLD_NONE;
  rc = river_pcoll_open(MPI_COMM_WORLD, "meta", &h, &pc);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc != RIVER_SUCCESS)
    return;
  mt_log_clear();
  MT_CHECK_RC(river_pcoll_hold_partitions(pc, parts, rank == 2 ? 2 : 1),
              RIVER_EINVAL);
  MT_CHECK(mt_logged("error|", "river_pcoll_hold_partitions: collection "
                     "meta has no partition 4 (it has 4, numbered from 0)",
                     NULL) == (rank == 2));
  mt_log_clear();
  parts[1] = -1;
  MT_CHECK_RC(river_pcoll_hold_partitions(pc, parts + (rank == 3), 1),
              RIVER_EINVAL);
  MT_CHECK(mt_logged("error|", "has no partition -1", NULL) == (rank == 3));
  mt_log_clear();
  MT_CHECK_RC(river_pcoll_hold_partitions(pc, parts, rank == 0 ? -1 : 1),
              RIVER_EINVAL);
  MT_CHECK(mt_logged("error|", "meta: -1 partitions (a count below 0)",
                     NULL) == (rank == 0));
  mt_log_clear();
  MT_CHECK_RC(river_pcoll_hold_partitions(pc, rank == 1 ? NULL : parts, 1),
              RIVER_EINVAL);
  MT_CHECK(mt_logged("error|", "meta: 1 partitions listed at a NULL pointer",
                     NULL) == (rank == 1));
  MT_CHECK_RC(river_pcoll_hold_partitions(pc, parts, 1), RIVER_SUCCESS);
  MT_CHECK_RC(river_pcoll_close(pc), RIVER_SUCCESS);
}

/* Reader calls on a writer. Collective. */
static void check_writer_refuses_reads(const river_pcoll_opts *o)
{
  river_pcoll *pc = NULL;
  unsigned char *buf = malloc(8192);
  size_t got = 0;
  int rc;

  rc = river_pcoll_create(MPI_COMM_WORLD, "wr", schema, o, &pc);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS) {
    river_pcoll_part part;
    size_t rpb;
    uint64_t nb, bad;
    MT_CHECK_RC(river_pcoll_partition(pc, 0, &part), RIVER_EINVAL);
    MT_CHECK_RC(river_pcoll_blocks(pc, 0, &rpb, &nb), RIVER_EINVAL);
    MT_CHECK_RC(river_pcoll_read_block(pc, 0, 0, buf, 8192, &got),
                RIVER_EINVAL);
    MT_CHECK_RC(river_pcoll_verify_copy(pc, 0, 0, &bad), RIVER_EINVAL);
    MT_CHECK_RC(river_pcoll_write(pc, NULL, 1), RIVER_EINVAL);
    {   /* a record type that is not the schema's 16 bytes (issue 37) */
      struct wide { uint64_t a, b, c; } w[2] = {{1, 2, 3}, {4, 5, 6}};
      mt_log_clear();
      MT_CHECK_RC(RIVER_PCOLL_WRITE_TYPED(pc, w, 2), RIVER_EINVAL);
      MT_CHECK(mt_logged("error|", "collection wr: records of 24 bytes "
                         "given, its schema's are 16 bytes", NULL));
    }
    mt_log_clear();
    MT_CHECK_RC(river_pcoll_hold_partitions(pc, NULL, 0), RIVER_EINVAL);
    MT_CHECK(mt_logged("error|", "river_pcoll_hold_partitions: collection "
                       "wr is not open for reading", NULL));
    river_pcoll_close(pc);
  }
  free(buf);
}

/* Corrupt metadata of "meta": ECORRUPT on every rank, each of three
 * ways; remove frees the name even so. Collective. */
static void check_corrupt_metadata(const river_pcoll_opts *o)
{
  char metapath[2100];
  river_pcoll *pc = NULL;
  int i;

  path_of(metapath, sizeof metapath, "meta.river.h5");
  for (i = 0; i < 3; i++) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      struct stat st;
      if (i == 0) {
        MT_CHECK(stat(metapath, &st) == 0);
        MT_CHECK(truncate(metapath, st.st_size / 2) == 0);
      } else if (i == 1) {
        FILE *f = fopen(metapath, "w");
        MT_CHECK(f != NULL);
        if (f) {
          fputs("this is not an HDF5 file, just some garbage text\n", f);
          fclose(f);
        }
      } else {
        MT_CHECK(truncate(metapath, 0) == 0);
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mt_log_clear();
    pc = NULL;
    MT_CHECK_RC(river_pcoll_open(MPI_COMM_WORLD, "meta", o, &pc),
                RIVER_ECORRUPT);
    MT_CHECK(pc == NULL);
    /* The same image on every rank: said once, by rank 0 */
    MT_CHECK(mt_logged("error|", "meta.river.h5", NULL) == (rank == 0));
  }
  /* remove refuses, naming the way out; purge removes the metadata,
   * the NR data files and the lock file; then it is gone. */
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    uint64_t nf = 0, nb = 0;
    mt_log_clear();
    MT_CHECK_RC(river_pcoll_remove("meta", o), RIVER_ECORRUPT);
    MT_CHECK(mt_logged("error|", "nothing removed", "river rm --force meta"));
    MT_CHECK_RC(river_pcoll_purge("meta", o, NULL, NULL, &nf, &nb),
                RIVER_SUCCESS);
    MT_CHECK(nf == NR + 1);
    MT_CHECK(count_files(root, "meta", NULL) == 0);
    MT_CHECK_RC(river_pcoll_remove("meta", o), RIVER_ENOTFOUND);
    MT_CHECK_RC(river_pcoll_purge("meta", o, NULL, NULL, &nf, &nb),
                RIVER_ENOTFOUND);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MT_CHECK_RC(river_pcoll_open(MPI_COMM_WORLD, "meta", o, &pc),
              RIVER_ENOTFOUND);
}

/* remove of a good collection ("gone", written with o): the metadata and
 * every data file. Collective. */
static void check_remove(const river_pcoll_opts *o,
                         const unsigned char *recs, size_t n)
{
  river_pcoll *pc = NULL;

  MT_CHECK_RC(write_coll(MPI_COMM_WORLD, "gone", o, recs, n, NULL),
              RIVER_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    char dir[2100], sub[16];
    int d, before = 0, after = 0;
    for (d = 0; d < NR; d++) {
      snprintf(sub, sizeof sub, "rm%d", d);
      path_of(dir, sizeof dir, sub);
      before += count_files(dir, "gone.p", ".rdat");
    }
    MT_CHECK(before == 8);
    MT_CHECK_RC(river_pcoll_remove("gone", o), RIVER_SUCCESS);
    for (d = 0; d < NR; d++) {
      snprintf(sub, sizeof sub, "rm%d", d);
      path_of(dir, sizeof dir, sub);
      after += count_files(dir, NULL, NULL);
    }
    MT_CHECK(after == 0);
    MT_CHECK(count_files(root, "gone", NULL) == 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MT_CHECK_RC(river_pcoll_open(MPI_COMM_WORLD, "gone", o, &pc),
              RIVER_ENOTFOUND);
}

/* What a gc report collects: the files and whether each was removed. */
struct gc_seen {
  int n, removed;
  uint64_t bytes;
  char paths[1024];
};

static void gc_report(const river_pcoll_leftover *l, void *arg)
{
  struct gc_seen *g = arg;
  size_t o = strlen(g->paths);

  g->n++;
  g->removed += l->removed;
  g->bytes += l->bytes;
  snprintf(g->paths + o, sizeof g->paths - o, "%s|%s\n",
           strrchr(l->path, '/') + 1, l->what);
}

/* Rank 0: make a file rel under the root holding len bytes. */
static void plant(const char *rel, size_t len)
{
  char path[2100];
  FILE *f;

  path_of(path, sizeof path, rel);
  f = fopen(path, "w");
  MT_CHECK(f != NULL);
  if (f) {
    while (len--)
      fputc('x', f);
    fclose(f);
  }
}

/* The writers' lock: while "held" is being written, a second writer and
 * remove get RIVER_EBUSY (every rank, named); gc lists only what no
 * collection needs (planted leftovers, not the running write's files,
 * not a file that is not River's), removes them, and the write then
 * commits. Collective. */
static void check_lock_and_gc(const river_pcoll_opts *o,
                              const unsigned char *recs, size_t n)
{
  river_pcoll *pc = NULL, *pc2 = NULL;
  struct gc_seen g;
  uint64_t nf = 9, nb = 9;

  MT_CHECK_RC(river_pcoll_create(MPI_COMM_WORLD, "held", schema, o, &pc),
              RIVER_SUCCESS);
  mt_log_clear();
  MT_CHECK_RC(river_pcoll_create(MPI_COMM_WORLD, "held", schema, o, &pc2),
              RIVER_EBUSY);
  MT_CHECK(pc2 == NULL);
  if (rank == 0) {
    MT_CHECK(mt_logged("error|", "collection held is in use", NULL));
    mt_log_clear();
    MT_CHECK_RC(river_pcoll_remove("held", o), RIVER_EBUSY);
    MT_CHECK(mt_logged("error|", "collection held is in use", NULL));
    plant("disk0/ghost.p0.0123456789abcdef.rdat", 100);
    plant("disk1/ghost.p3.0123456789abcdef.rdat.tmp", 20);
    plant(".tmp.ghost.0123456789abcdef.river.h5", 3);
    plant("disk0/notours.p0.rdat", 7);  /* no generation: not River's */
    memset(&g, 0, sizeof g);
    MT_CHECK_RC(river_pcoll_gc(o, 0, gc_report, &g, &nf, &nb),
                RIVER_SUCCESS);
    MT_CHECK(g.n == 3 && nf == 3 && nb == 123 && g.bytes == 123
             && g.removed == 0);
    MT_CHECK(strstr(g.paths, "ghost.p0.0123456789abcdef.rdat|data file of "
                             "no collection") != NULL);
    MT_CHECK(strstr(g.paths, "held") == NULL);
    memset(&g, 0, sizeof g);
    MT_CHECK_RC(river_pcoll_gc(o, 1, gc_report, &g, &nf, &nb),
                RIVER_SUCCESS);
    MT_CHECK(g.n == 3 && g.removed == 3);
    MT_CHECK_RC(river_pcoll_gc(o, 1, NULL, NULL, &nf, NULL), RIVER_SUCCESS);
    MT_CHECK(nf == 0);
    MT_CHECK(count_files(root, "ghost", NULL) == 0);
  }
  MT_CHECK_RC(river_pcoll_write(pc, recs, n), RIVER_SUCCESS);
  MT_CHECK_RC(river_pcoll_commit(pc), RIVER_SUCCESS);
  MT_CHECK_RC(river_pcoll_open(MPI_COMM_WORLD, "held", o, &pc), RIVER_SUCCESS);
  river_pcoll_close(pc);
  if (rank == 0) {
    char notours[2100];
    path_of(notours, sizeof notours, "disk0/notours.p0.rdat");
    MT_CHECK(access(notours, F_OK) == 0);
    MT_CHECK_RC(river_pcoll_gc(o, 0, NULL, NULL, &nf, NULL), RIVER_SUCCESS);
    MT_CHECK(nf == 0);
    unlink(notours);
    MT_CHECK_RC(river_pcoll_remove("held", o), RIVER_SUCCESS);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Refusals, in order: bad names and patterns, a missing collection,
 * bad reads of "meta", reads on a writer, "meta" with its metadata
 * corrupted, then remove. */
static void test_bad_input(void)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  size_t n = counts[rank];
  unsigned char *recs = make_recs(n, (uint64_t)rank << 32, 1, 51, NULL);

  o.root = root;
  check_bad_names(&o);
  check_missing(&o);
  o.block_size = 8192;
  check_bad_reads(&o, recs, n);
  check_bad_hold(&o);
  check_writer_refuses_reads(&o);
  check_corrupt_metadata(&o);
  check_lock_and_gc(&o, recs, n);
  o.disks = "rm%d";
  o.replication = 2;
  check_remove(&o, recs, n);
  free(recs);
}

/* -------------------------------------------------------------- layout */

#define LAYOUT_N 10007   /* records: not a multiple of the rank count */

/* Write LAYOUT_N records whose ids are their record numbers, rank r
 * writing the share river_pcoll_split gives partition r. Collective. */
static int write_split(const char *name, river_layout layout)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  uint64_t first = 0, stride = 0, count = 0;
  unsigned char *recs;
  int rc;

  o.root = root;
  o.layout = layout;
  o.block_size = 4096;   /* 256 records a block: many stripes */
  o.replication = 2;
  MT_CHECK_RC(river_pcoll_split(layout, LAYOUT_N, size, rank, &first,
                                &stride, &count), RIVER_SUCCESS);
  recs = make_recs((size_t)count, first, stride, 5, NULL);
  rc = write_coll(MPI_COMM_WORLD, name, &o, recs, (size_t)count, NULL);
  free(recs);
  return rc;
}

/* Rank 0: read every block of pc in write order (stripe by stripe, the
 * partitions of a stripe in reverse, for an interleaved collection),
 * through a river_pcoll_order; the ids that come out must be 0, 1, ... */
static void check_order(river_pcoll *pc)
{
  river_pcoll_info in;
  river_pcoll_order *ord = NULL;
  unsigned char blk[4096];
  const void *ready;
  size_t rpb, n, nready, j;
  uint64_t nb[NR], maxb = 0, b, next = 0, id;
  int p, q, bad = 0;

  MT_CHECK_RC(river_pcoll_info_get(pc, &in), RIVER_SUCCESS);
  for (p = 0; p < in.npartitions; p++) {
    MT_CHECK_RC(river_pcoll_blocks(pc, p, &rpb, &nb[p]), RIVER_SUCCESS);
    maxb = nb[p] > maxb ? nb[p] : maxb;
  }
  MT_CHECK_RC(river_pcoll_order_create(pc, &ord), RIVER_SUCCESS);
  if (ord == NULL)
    return;
  for (q = 0; q < in.npartitions * (int)maxb; q++) {
    /* interleaved: stripe q / P, partitions P-1 .. 0; else p by p */
    int il = in.layout == RIVER_LAYOUT_INTERLEAVED;
    p = il ? in.npartitions - 1 - q % in.npartitions : q / (int)maxb;
    b = il ? (uint64_t)(q / in.npartitions) : (uint64_t)(q % (int)maxb);
    if (b >= nb[p])
      continue;
    MT_CHECK_RC(river_pcoll_read_block(pc, p, b, blk, sizeof blk, &n),
                RIVER_SUCCESS);
    MT_CHECK_RC(river_pcoll_order_add(ord, p, b, blk, n, &ready, &nready),
                RIVER_SUCCESS);
    for (j = 0; j < nready; j++, next++) {
      memcpy(&id, (const unsigned char *)ready + j * RECSZ, 8);
      bad += id != next;
    }
  }
  MT_CHECK_RC(river_pcoll_order_flush(ord, &ready, &nready), RIVER_SUCCESS);
  for (j = 0; j < nready; j++, next++) {
    memcpy(&id, (const unsigned char *)ready + j * RECSZ, 8);
    bad += id != next;
  }
  MT_CHECK(bad == 0);
  MT_CHECK(next == LAYOUT_N);
  river_pcoll_order_destroy(ord);
}

/* Rank 0: misuse of a reorderer for an interleaved collection. */
static void check_order_misuse(river_pcoll *pc)
{
  river_pcoll_order *ord = NULL;
  unsigned char blk[4096 * 2] = {0};
  const void *ready = NULL;
  size_t nready = 0;

  MT_CHECK_RC(river_pcoll_order_create(pc, &ord), RIVER_SUCCESS);
  MT_CHECK_RC(river_pcoll_order_add(ord, NR, 0, blk, 1, &ready, &nready),
              RIVER_EINVAL);
  MT_CHECK_RC(river_pcoll_order_add(ord, 0, 0, blk, 257, &ready, &nready),
              RIVER_EINVAL);
  MT_CHECK_RC(river_pcoll_order_add(ord, 0, 0, NULL, 1, &ready, &nready),
              RIVER_EINVAL);
  MT_CHECK_RC(river_pcoll_order_add(ord, 1, 3, blk, 256, &ready, &nready),
              RIVER_SUCCESS);
  MT_CHECK(nready == 0);
  MT_CHECK_RC(river_pcoll_order_add(ord, 1, 3, blk, 256, &ready, &nready),
              RIVER_EINVAL);            /* partition 1 twice in stripe 3 */
  MT_CHECK_RC(river_pcoll_order_add(ord, 0, 2, blk, 256, &ready, &nready),
              RIVER_EINVAL);            /* back to stripe 2 */
  MT_CHECK_RC(river_pcoll_order_add(ord, 0, 4, blk, 256, &ready, &nready),
              RIVER_SUCCESS);           /* stripe 4 completes stripe 3 */
  MT_CHECK(nready == 256 && ready != NULL);
  MT_CHECK_RC(river_pcoll_order_add(ord, 2, 3, blk, 256, &ready, &nready),
              RIVER_EINVAL);            /* stripe 3 was handed out */
  MT_CHECK_RC(river_pcoll_order_flush(ord, &ready, &nready), RIVER_SUCCESS);
  MT_CHECK(nready == 256);
  MT_CHECK_RC(river_pcoll_order_flush(ord, &ready, &nready), RIVER_SUCCESS);
  MT_CHECK(nready == 0 && ready == NULL);
  river_pcoll_order_destroy(ord);
}

/* Rank 0: blocks of no records (NULL or not) give nothing, and nothing
 * ready is always a NULL pointer, as the header says: for a partitioned
 * collection, and for an interleaved stripe whose every block is empty. */
static void check_order_empty(river_pcoll *pc)
{
  river_pcoll_order *ord = NULL;
  unsigned char blk[16] = {0};
  const void *ready = blk;
  size_t nready = 7;
  int p;

  MT_CHECK_RC(river_pcoll_order_create(pc, &ord), RIVER_SUCCESS);
  for (p = 0; p < NR; p++) {
    MT_CHECK_RC(river_pcoll_order_add(ord, p, 9, p % 2 ? NULL : blk, 0,
                                      &ready, &nready), RIVER_SUCCESS);
    MT_CHECK(nready == 0 && ready == NULL);
    ready = blk;
    nready = 7;
  }
  MT_CHECK_RC(river_pcoll_order_flush(ord, &ready, &nready), RIVER_SUCCESS);
  MT_CHECK(nready == 0 && ready == NULL);
  river_pcoll_order_destroy(ord);
}

/* Rank 0: river_pcoll_root and river_pcoll_list under the test's root. */
static void check_list(void)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  char buf[4096], small[4];
  size_t len = sizeof buf, slen = sizeof small;
  int n = -1, n2 = -1;

  o.root = root;
  MT_CHECK_RC(river_pcoll_root(&o, buf, &len), RIVER_SUCCESS);
  MT_CHECK(strcmp(buf, root) == 0 && len == strlen(root));
  len = sizeof buf;
  MT_CHECK_RC(river_pcoll_list(&o, buf, &len, &n), RIVER_SUCCESS);
  MT_CHECK(strstr(buf, "lay_il\nlay_pt\n") != NULL);  /* sorted */
  MT_CHECK(n >= 2 && len == strlen(buf));
  MT_CHECK_RC(river_pcoll_list(&o, small, &slen, &n2), RIVER_ENOBUFS);
  MT_CHECK(slen == len + 1 && n2 == -1);
  path_of(buf, sizeof buf, "nothing-here");
  o.root = buf;
  MT_CHECK_RC(river_pcoll_list(&o, small, &slen, &n2), RIVER_ENOTFOUND);
}

/* Splits cover the records once (tests/unit/test_pcoll_layout.c checks
 * that exhaustively); here, that a collection written by splits reads
 * back in record order through river_pcoll_order, for both layouts, and
 * that listing finds what was written. */
static void test_layout(void)
{
  const char *names[] = {"lay_pt", "lay_il"};
  river_layout lays[] = {RIVER_LAYOUT_PARTITIONED, RIVER_LAYOUT_INTERLEAVED};
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  river_pcoll *pc = NULL;
  river_pcoll_part part;
  int k, p, c, d;

  o.root = root;
  for (k = 0; k < 2; k++) {
    MT_CHECK_RC(write_split(names[k], lays[k]), RIVER_SUCCESS);
    MT_CHECK_RC(river_pcoll_open(MPI_COMM_WORLD, names[k], &o, &pc),
                RIVER_SUCCESS);
    if (pc == NULL)
      continue;
    for (p = 0; p < NR; p++)
      for (c = 0; c < 2; c++) {
        MT_CHECK_RC(river_pcoll_partition(pc, p, &part), RIVER_SUCCESS);
        MT_CHECK_RC(river_pcoll_copy_disk(pc, p, c, &d), RIVER_SUCCESS);
        MT_CHECK(d == (part.first_disk + c) % NR);
      }
    MT_CHECK_RC(river_pcoll_copy_disk(pc, 0, 2, &d), RIVER_EINVAL);
    if (rank == 0) {
      check_order(pc);
      check_order_empty(pc);
      if (lays[k] == RIVER_LAYOUT_INTERLEAVED)
        check_order_misuse(pc);
    }
    river_pcoll_close(pc);
    pc = NULL;
  }
  if (rank == 0)
    check_list();
}

/* ----------------------------------------------------------------- main */

int main(int argc, char **argv)
{
  double t0 = 0;

  if (pcolltest_begin(&argc, &argv, "test_pcoll_api_mpi") != 0)
    return 1;
  if (pcolltest_ready()) {
    t0 = river_wtime();
    test_bad_input();
    test_layout();
  }
  return pcolltest_end("test_pcoll_api_mpi", t0);
}
