/*
 * test_pcoll_mpi - parallel collections (river/pcoll.h) on 4 ranks, in a
 * mkdtemp() root that rank 0 makes under $TMPDIR (or /tmp) and removes
 * at the end:
 *
 *   roundtrip    uneven partitions (one empty), replication 1 and 2, both
 *                layouts, a non-default schema and small blocks; read
 *                back by 4, 3 and 1 ranks with an order-independent
 *                checksum of record contents (exactly-once delivery);
 *                info, partition table, blocks, disk paths, verify_copy
 *   ordered      ascending keys commit; out-of-order or overlapping
 *                partitions fail on every rank and keep the old one
 *   replace      a new commit swaps the collection and removes the old
 *                generation's files; an abandoned writer leaves nothing
 *   failover     damaged or missing copies: mirrors serve every block,
 *                verify_copy names the damage; without a mirror the read
 *                fails with a message naming collection, partition, block
 *   bad input    names, disk patterns, replication, missing and corrupt
 *                metadata, out-of-range reads, small buffers, remove
 *   layout       collections written by river_pcoll_split read back in
 *                record order through river_pcoll_order (and its misuse),
 *                river_pcoll_copy_disk, river_pcoll_root, river_pcoll_list
 *   wait         river_wait / river_waitall use little CPU while blocked
 *
 * Collective calls are made on every rank of their communicator whatever
 * the checks say, so a failing check never hangs the test.
 */
#define _GNU_SOURCE
#include <river.h>
#include "mpitest.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SCHEMA_TEXT "id:uint64,v:int32,tag:char[4]"
#define RECSZ 16
#define NR 4 /* the test's rank count */

static int rank, size;
static char root[2048];
static river_schema *schema;

/* ---------------------------------------------------------------- log */

/* ------------------------------------------------------------ records */

/* A 64-bit hash of a record's bytes (FNV-1a, then mixed). */
static uint64_t rec_hash(const unsigned char *r)
{
  uint64_t h = 0xcbf29ce484222325ULL;
  int i;

  for (i = 0; i < RECSZ; i++)
    h = (h ^ r[i]) * 0x100000001b3ULL;
  return river_hash64(h);
}

/* Order-independent digest of a multiset of records. */
struct sums {
  uint64_t count, x, sum;
};

static void sums_add(struct sums *s, const unsigned char *r)
{
  uint64_t h = rec_hash(r);

  s->count++;
  s->x ^= h;
  s->sum += h;
}

static void sums_reduce(MPI_Comm comm, const struct sums *in, struct sums *out)
{
  MPI_Allreduce(&in->count, &out->count, 1, MPI_UINT64_T, MPI_SUM, comm);
  MPI_Allreduce(&in->x, &out->x, 1, MPI_UINT64_T, MPI_BXOR, comm);
  MPI_Allreduce(&in->sum, &out->sum, 1, MPI_UINT64_T, MPI_SUM, comm);
}

static int sums_equal(const struct sums *a, const struct sums *b)
{
  return a->count == b->count && a->x == b->x && a->sum == b->sum;
}

/* Record i of writer w: id, a value depending on salt, tag "w<w><letter>"
 * (tag[1] names the writing rank, so a reader can check that a record
 * came back in the right partition). */
static void make_rec(unsigned char *r, uint64_t id, int w, size_t i,
                     uint64_t salt)
{
  int32_t v = (int32_t)(uint32_t)river_hash64(id ^ salt);

  memcpy(r, &id, 8);
  memcpy(r + 8, &v, 4);
  r[12] = 'w';
  r[13] = (unsigned char)('0' + w);
  r[14] = (unsigned char)('a' + i % 26);
  r[15] = (unsigned char)('A' + (salt + i) % 26);
}

/* Records of this rank: ids[i] = base + i * step (unless ids given). */
static unsigned char *make_recs(size_t n, uint64_t base, uint64_t step,
                                uint64_t salt, struct sums *s)
{
  unsigned char *buf = malloc(n ? n * RECSZ : 1);
  size_t i;

  for (i = 0; i < n; i++) {
    make_rec(buf + i * RECSZ, base + i * step, rank, i, salt);
    if (s)
      sums_add(s, buf + i * RECSZ);
  }
  return buf;
}

/* Create on comm, write recs (n records, in uneven chunks, including an
 * empty write), commit. Returns the commit's (or create's) code and the
 * writer's generation in gen. Collective over comm. */
static int write_coll(MPI_Comm comm, const char *name,
                      const river_pcoll_opts *o, const unsigned char *recs,
                      size_t n, char gen[17])
{
  static const size_t chunks[] = {1, 0, 97, 300, 5, 1000, 256};
  river_pcoll *pc = NULL;
  river_pcoll_info info;
  size_t done = 0, k = 0, c;
  int rc;

  rc = river_pcoll_create(comm, name, schema, o, &pc);
  if (rc != RIVER_SUCCESS)
    return rc;
  MT_CHECK_RC(river_pcoll_info_get(pc, &info), RIVER_SUCCESS);
  if (gen)
    memcpy(gen, info.generation, 17);
  while (done < n) {
    c = chunks[k++ % (sizeof chunks / sizeof chunks[0])];
    if (c > n - done)
      c = n - done;
    MT_CHECK_RC(river_pcoll_write(pc, recs + done * RECSZ, c), RIVER_SUCCESS);
    done += c;
  }
  MT_CHECK_RC(river_pcoll_write(pc, NULL, 0), RIVER_SUCCESS);
  return river_pcoll_commit(pc);
}

/* --------------------------------------------------------------- files */

static void path_of(char *buf, size_t bufsize, const char *rel)
{
  snprintf(buf, bufsize, "%s/%s", root, rel);
}

/* Count files under dir (not recursive) whose name contains `has` (and
 * ends with `suffix` if non-NULL). */
static int count_files(const char *dir, const char *has, const char *suffix)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;

  if (d == NULL)
    return 0;
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name), sl = suffix ? strlen(suffix) : 0;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    if (has && strstr(e->d_name, has) == NULL)
      continue;
    if (suffix && (l < sl || strcmp(e->d_name + l - sl, suffix) != 0))
      continue;
    n++;
  }
  closedir(d);
  return n;
}

static int tmp_found;

static int find_tmp(const char *p, const struct stat *sb, int flag,
                    struct FTW *f)
{
  if (strstr(p + f->base, ".tmp") != NULL)
    tmp_found++;
  return 0;
}

/* Files or directories anywhere under root with ".tmp" in their name. */
static int count_tmp(void)
{
  tmp_found = 0;
  nftw(root, find_tmp, 16, FTW_PHYS);
  return tmp_found;
}

static int rm_one(const char *p, const struct stat *sb, int flag,
                  struct FTW *f)
{
  return remove(p);
}

/* Flip one byte of a file at offset. */
static int flip_byte(const char *path, off_t off)
{
  int fd = open(path, O_RDWR);
  unsigned char b;
  int ok;

  if (fd < 0)
    return -1;
  ok = pread(fd, &b, 1, off) == 1;
  b ^= 0x40;
  ok = ok && pwrite(fd, &b, 1, off) == 1;
  close(fd);
  return ok ? 0 : -1;
}

/* Copy file from over file to (replacing its contents). */
static int copy_file(const char *from, const char *to)
{
  char b[65536];
  FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
  size_t n;
  int ok = in && out;

  while (ok && (n = fread(b, 1, sizeof b, in)) > 0)
    ok = fwrite(b, 1, n, out) == n;
  if (in)
    fclose(in);
  if (out && fclose(out) != 0)
    ok = 0;
  return ok ? 0 : -1;
}

/* Path of copy c of partition p of an open collection. */
static void copy_path(river_pcoll *pc, int p, int c, char *buf,
                      size_t bufsize)
{
  river_pcoll_info info;
  river_pcoll_part part;
  char dir[2048];
  size_t len = sizeof dir;

  buf[0] = '\0';
  if (river_pcoll_info_get(pc, &info) != RIVER_SUCCESS
      || river_pcoll_partition(pc, p, &part) != RIVER_SUCCESS
      || river_pcoll_disk_path(pc, (part.first_disk + c) % info.ndisks, dir,
                               &len) != RIVER_SUCCESS)
    return;
  snprintf(buf, bufsize, "%s/%s", dir, part.path);
}

/* ---------------------------------------------------------- read side */

struct expect {
  const char *name;
  struct sums sums;           /* over every partition */
  uint64_t counts[NR];        /* records per partition */
  int replication, ndisks, ordered;
  river_layout layout;
  size_t block_size;
  int no_verify;              /* skip verify_copy (damaged copies) */
};

/* Open name on comm (every rank of comm calls this), read every block of
 * every partition (partition p by comm rank p mod comm size), check the
 * facts and the digest. */
static void read_check(MPI_Comm comm, const struct expect *e,
                       const char *disks)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  river_pcoll *pc = NULL;
  river_pcoll_info info;
  struct sums mine = {0, 0, 0}, all;
  int crank, csize, p, c, rc, equal = 0;
  size_t rpb = 0, n, bufsize = e->block_size;
  unsigned char *buf = malloc(bufsize);

  MPI_Comm_rank(comm, &crank);
  MPI_Comm_size(comm, &csize);
  o.root = root;
  rc = river_pcoll_open(comm, e->name, &o, &pc);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS) {
    const river_schema *s = NULL;
    MT_CHECK_RC(river_pcoll_info_get(pc, &info), RIVER_SUCCESS);
    MT_CHECK(strcmp(info.name, e->name) == 0);
    MT_CHECK(info.nrecords == e->sums.count);
    MT_CHECK(info.npartitions == NR);
    MT_CHECK(info.ndisks == e->ndisks);
    MT_CHECK(info.replication == e->replication);
    MT_CHECK(info.layout == e->layout);
    MT_CHECK(info.ordered == e->ordered);
    MT_CHECK(info.record_size == RECSZ);
    MT_CHECK(info.block_size == e->block_size);
    MT_CHECK(strlen(info.generation) == 16
             && strspn(info.generation, "0123456789abcdef") == 16);
    MT_CHECK_RC(river_pcoll_schema(pc, &s), RIVER_SUCCESS);
    MT_CHECK_RC(river_schema_equal(s, schema, &equal), RIVER_SUCCESS);
    MT_CHECK(equal == 1);

    for (p = 0; p < NR; p++) {
      river_pcoll_part part;
      uint64_t nb = 0, b, got = 0;
      char expect_path[256];

      MT_CHECK_RC(river_pcoll_partition(pc, p, &part), RIVER_SUCCESS);
      MT_CHECK(part.nrecords == e->counts[p]);
      MT_CHECK(part.bytes == e->counts[p] * RECSZ);
      MT_CHECK(part.first_disk == p % e->ndisks);
      snprintf(expect_path, sizeof expect_path, "%s.p%d.%s.rdat", e->name, p,
               info.generation);
      MT_CHECK(strcmp(part.path, expect_path) == 0);
      MT_CHECK_RC(river_pcoll_blocks(pc, p, &rpb, &nb), RIVER_SUCCESS);
      MT_CHECK(rpb == e->block_size / RECSZ);
      MT_CHECK(rpb > 0 && nb == (e->counts[p] + rpb - 1) / rpb);
      MT_CHECK(part.nblocks == nb);
      if (p % csize != crank)
        continue;
      for (b = 0; b < nb; b++) {
        size_t i;
        n = 0;
        rc = river_pcoll_read_block(pc, p, b, buf, bufsize, &n);
        MT_CHECK_RC(rc, RIVER_SUCCESS);
        if (rc != RIVER_SUCCESS)
          continue;
        MT_CHECK(n == (b + 1 < nb ? rpb : e->counts[p] - b * rpb));
        for (i = 0; i < n; i++) {
          const unsigned char *r = buf + i * RECSZ;
          MT_CHECK(r[13] == '0' + p); /* written by rank p */
          sums_add(&mine, r);
        }
        got += n;
      }
      MT_CHECK(got == e->counts[p]);
    }
    /* Every copy verifies (the pairs spread over comm's ranks). */
    for (p = 0; p < NR && !e->no_verify; p++)
      for (c = 0; c < e->replication; c++)
        if ((p * e->replication + c) % csize == crank) {
          uint64_t bad = 99;
          MT_CHECK_RC(river_pcoll_verify_copy(pc, p, c, &bad), RIVER_SUCCESS);
        }
    /* Disk paths: ROOT/<pattern with d>. */
    for (c = 0; c < e->ndisks; c++) {
      char got[2048], want[2048];
      const char *pat = disks ? disks : "disk%d", *pd = strstr(pat, "%d");
      size_t len = sizeof got;
      snprintf(want, sizeof want, "%s/%.*s%d%s", root, (int)(pd - pat), pat,
               c, pd + 2);
      MT_CHECK_RC(river_pcoll_disk_path(pc, c, got, &len), RIVER_SUCCESS);
      MT_CHECK(strcmp(got, want) == 0 && len == strlen(want));
      /* Too small: ENOBUFS, the size needed, buffer untouched. */
      strcpy(got, "keep");
      len = 3;
      MT_CHECK_RC(river_pcoll_disk_path(pc, c, got, &len), RIVER_ENOBUFS);
      MT_CHECK(len == strlen(want) + 1);
      MT_CHECK(strcmp(got, "keep") == 0);
    }
    MT_CHECK_RC(river_pcoll_close(pc), RIVER_SUCCESS);
  }
  sums_reduce(comm, &mine, &all);
  MT_CHECK(sums_equal(&all, &e->sums));
  free(buf);
}

/* Read with all 4 ranks, with 3 (a split communicator) and with 1
 * (MPI_COMM_SELF on rank 0). Collective over MPI_COMM_WORLD. */
static void read_check_all_ways(const struct expect *e, const char *disks)
{
  MPI_Comm three = MPI_COMM_NULL;

  read_check(MPI_COMM_WORLD, e, disks);
  MPI_Comm_split(MPI_COMM_WORLD, rank < 3 ? 0 : MPI_UNDEFINED, rank, &three);
  if (three != MPI_COMM_NULL) {
    read_check(three, e, disks);
    MPI_Comm_free(&three);
  }
  if (rank == 0)
    read_check(MPI_COMM_SELF, e, disks);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Global digest of what the ranks wrote, and the per-partition counts. */
static void expect_from(struct expect *e, const struct sums *mine, size_t n)
{
  uint64_t my = n, counts[NR] = {0};
  int i;

  sums_reduce(MPI_COMM_WORLD, mine, &e->sums);
  MPI_Allgather(&my, 1, MPI_UINT64_T, counts, 1, MPI_UINT64_T,
                MPI_COMM_WORLD);
  for (i = 0; i < NR; i++)
    e->counts[i] = counts[i];
}

/* Uneven counts; rank 1 writes nothing. */
static const size_t counts[NR] = {1000, 0, 2345, 513};

/* ------------------------------------------------------------ tests */

static void test_roundtrip(void)
{
  struct cfg {
    int repl, ndisks;
    river_layout layout;
    size_t bs;
  } cfgs[] = {
    {1, 0, RIVER_LAYOUT_PARTITIONED, 4096},
    {1, 2, RIVER_LAYOUT_INTERLEAVED, 8192},
    {2, 3, RIVER_LAYOUT_PARTITIONED, 8192},
    {2, 0, RIVER_LAYOUT_INTERLEAVED, 4096},
  };
  size_t k;

  for (k = 0; k < sizeof cfgs / sizeof cfgs[0]; k++) {
    river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
    struct expect e;
    struct sums mine = {0, 0, 0};
    char name[64];
    size_t n = counts[rank];
    unsigned char *recs = make_recs(n, ((uint64_t)rank << 40) + 7, 3,
                                    100 + k, &mine);

    snprintf(name, sizeof name, "rt_%zu", k);
    o.root = root;
    o.replication = cfgs[k].repl;
    o.ndisks = cfgs[k].ndisks;
    o.layout = cfgs[k].layout;
    o.block_size = cfgs[k].bs;
    MT_CHECK_RC(write_coll(MPI_COMM_WORLD, name, &o, recs, n, NULL),
                RIVER_SUCCESS);
    memset(&e, 0, sizeof e);
    e.name = name;
    e.replication = cfgs[k].repl;
    e.ndisks = cfgs[k].ndisks ? cfgs[k].ndisks : NR;
    e.layout = cfgs[k].layout;
    e.block_size = cfgs[k].bs;
    expect_from(&e, &mine, n);
    MT_CHECK(e.sums.count == 1000 + 2345 + 513);
    read_check_all_ways(&e, NULL);
    free(recs);
  }
}

/* The ordered collection written by test_ordered, and its digest. */
static void write_ordered_ok(struct expect *e)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  struct sums mine = {0, 0, 0};
  size_t n = counts[rank];
  /* Rank 0: 0..999; rank 1: nothing; rank 2 starts at rank 0's last key
   * (equal keys at a boundary are in order); rank 3 above rank 2. */
  uint64_t base[NR] = {0, 0, 999, 1000000};
  unsigned char *recs = make_recs(n, base[rank], 1, 7, &mine);

  o.root = root;
  o.ordered = 1;
  o.replication = 2;
  o.block_size = 4096;
  MT_CHECK_RC(write_coll(MPI_COMM_WORLD, "ord", &o, recs, n, NULL),
              RIVER_SUCCESS);
  memset(e, 0, sizeof *e);
  e->name = "ord";
  e->replication = 2;
  e->ndisks = NR;
  e->ordered = 1;
  e->layout = RIVER_LAYOUT_PARTITIONED;
  e->block_size = 4096;
  expect_from(e, &mine, n);
  free(recs);
}

/* A failed ordered commit: every rank gets EINVAL, rank 0 logs why (the
 * collection and partition), no file of the failed write is left, and
 * the committed "ord" reads back as before. */
static void check_failed_ordered(unsigned char *recs, size_t n,
                                 const char *why_part, const struct expect *e)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  char gen[17] = "", dir[2100];
  int rc, d, left = 0;

  o.root = root;
  o.ordered = 1;
  o.replication = 2;
  o.block_size = 4096;
  mt_log_clear();
  rc = write_coll(MPI_COMM_WORLD, "ord", &o, recs, n, gen);
  MT_CHECK_RC(rc, RIVER_EINVAL);
  if (rank == 0) {
    MT_CHECK(mt_logged("error|", "collection ord", why_part));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    for (d = 0; d < NR; d++) {
      char sub[16];
      snprintf(sub, sizeof sub, "disk%d", d);
      path_of(dir, sizeof dir, sub);
      left += count_files(dir, gen, NULL);
    }
    MT_CHECK(gen[0] != '\0' && left == 0);
    MT_CHECK(count_tmp() == 0);
  }
  read_check_all_ways(e, NULL);
}

static void test_ordered(void)
{
  struct expect e;
  size_t n = counts[rank];
  unsigned char *recs;
  uint64_t base[NR] = {0, 0, 999, 1000000};

  write_ordered_ok(&e);
  read_check_all_ways(&e, NULL);

  /* Rank 2 swaps two records in the middle (the swap crosses a write
   * chunk boundary: chunks are 1, 0, 97, 300, ...). */
  recs = make_recs(n, base[rank], 1, 8, NULL);
  if (rank == 2) {
    unsigned char t[RECSZ];
    memcpy(t, recs + 397 * RECSZ, RECSZ);
    memcpy(recs + 397 * RECSZ, recs + 398 * RECSZ, RECSZ);
    memcpy(recs + 398 * RECSZ, t, RECSZ);
  }
  check_failed_ordered(recs, n, "partition 2", &e);
  free(recs);

  /* Each partition ascends, but partition 3 starts below partition 2's
   * last key. */
  {
    uint64_t over[NR] = {0, 0, 5000, 5000 + 2345 - 2};
    recs = make_recs(n, over[rank], 1, 9, NULL);
    check_failed_ordered(recs, n, "partition 3", &e);
    free(recs);
  }
  /* Rank 0's very first record is out of order with its second. */
  recs = make_recs(n, base[rank], 1, 10, NULL);
  if (rank == 0) {
    uint64_t big = 5;
    memcpy(recs, &big, 8);
  }
  check_failed_ordered(recs, n, "partition 0", &e);
  free(recs);
}

/* In disks rep0..rep3: the .rdat files, and the files of any kind
 * whose name carries gen. */
static void count_rdat(const char *gen, int *total, int *with_gen)
{
  char dir[2100], sub[16];
  int d;

  *total = *with_gen = 0;
  for (d = 0; d < NR; d++) {
    snprintf(sub, sizeof sub, "rep%d", d);
    path_of(dir, sizeof dir, sub);
    *total += count_files(dir, NULL, ".rdat");
    *with_gen += count_files(dir, gen, NULL);
  }
}

static void test_replace(void)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  struct expect e1, e2;
  struct sums m1 = {0, 0, 0}, m2 = {0, 0, 0};
  char gen1[17] = "", gen2[17] = "", gen3[17] = "";
  size_t n = counts[rank], n2 = (size_t)(rank + 1) * 300;
  unsigned char *r1 = make_recs(n, (uint64_t)rank << 32, 1, 21, &m1);
  unsigned char *r2 = make_recs(n2, (uint64_t)rank << 32, 1, 22, &m2);
  river_pcoll *pc = NULL;
  int total, with, rc;

  /* Generation 1: replication 2 over 4 disks: 8 files. */
  o.root = root;
  o.disks = "rep%d";
  o.replication = 2;
  o.block_size = 4096;
  MT_CHECK_RC(write_coll(MPI_COMM_WORLD, "rep", &o, r1, n, gen1),
              RIVER_SUCCESS);
  memset(&e1, 0, sizeof e1);
  e1.name = "rep";
  e1.replication = 2;
  e1.ndisks = NR;
  e1.block_size = 4096;
  expect_from(&e1, &m1, n);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    count_rdat(gen1, &total, &with);
    MT_CHECK(total == 8 && with == 8);
  }
  read_check(MPI_COMM_WORLD, &e1, "rep%d");

  /* Generation 2 replaces it: replication 1 over 2 disks, other data.
   * Only its 4 files remain. */
  o.replication = 1;
  o.ndisks = 2;
  o.block_size = 8192;
  MT_CHECK_RC(write_coll(MPI_COMM_WORLD, "rep", &o, r2, n2, gen2),
              RIVER_SUCCESS);
  memset(&e2, 0, sizeof e2);
  e2.name = "rep";
  e2.replication = 1;
  e2.ndisks = 2;
  e2.block_size = 8192;
  expect_from(&e2, &m2, n2);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    MT_CHECK(strcmp(gen1, gen2) != 0);
    count_rdat(gen2, &total, &with);
    MT_CHECK(total == 4 && with == 4);
    count_rdat(gen1, &total, &with);
    MT_CHECK(with == 0);
    MT_CHECK(count_tmp() == 0);
  }
  read_check(MPI_COMM_WORLD, &e2, "rep%d");

  /* An abandoned writer (close instead of commit) leaves generation 2
   * as it was and no files of its own. */
  o.replication = 2;
  o.ndisks = 0;
  rc = river_pcoll_create(MPI_COMM_WORLD, "rep", schema, &o, &pc);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS) {
    river_pcoll_info info;
    MT_CHECK_RC(river_pcoll_info_get(pc, &info), RIVER_SUCCESS);
    memcpy(gen3, info.generation, 17);
    MT_CHECK_RC(river_pcoll_write(pc, r1, n), RIVER_SUCCESS);
    MT_CHECK_RC(river_pcoll_close(pc), RIVER_SUCCESS);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    count_rdat(gen3, &total, &with);
    MT_CHECK(gen3[0] != '\0' && with == 0);
    count_rdat(gen2, &total, &with);
    MT_CHECK(total == 4 && with == 4);
    MT_CHECK(count_tmp() == 0);
  }
  read_check(MPI_COMM_WORLD, &e2, "rep%d");
  free(r1);
  free(r2);
}

/* Replication 2: a missing copy and damaged blocks are covered by the
 * mirrors; verify_copy names each damage. */
static void test_failover_mirrored(void)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  struct expect e;
  struct sums m = {0, 0, 0};
  size_t n = counts[rank];
  unsigned char *recs = make_recs(n, (uint64_t)rank << 36, 5, 31, &m);
  river_pcoll *pc = NULL;
  int rc, p, c;

  o.root = root;
  o.disks = "fo%d";
  o.replication = 2;
  o.block_size = 4096;
  MT_CHECK_RC(write_coll(MPI_COMM_WORLD, "fo2", &o, recs, n, NULL),
              RIVER_SUCCESS);
  memset(&e, 0, sizeof e);
  e.name = "fo2";
  e.replication = 2;
  e.ndisks = NR;
  e.block_size = 4096;
  e.no_verify = 1; /* checked below, copy by copy */
  expect_from(&e, &m, n);
  free(recs);

  /* Rank 0 damages: partition 0 copy 0 (disk 0) deleted; partition 2
   * copy 0 (disk 2) block 1 and copy 1 (disk 3) block 3 each get a
   * flipped byte (so every block of it has one good copy, but no copy
   * is whole); partition 3 copy 0 (disk 3) is replaced by a valid
   * collection file that does not match the metadata (partition 0's
   * copy 1). */
  o.disks = NULL;
  rc = river_pcoll_open(MPI_COMM_WORLD, "fo2", &o, &pc);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS && rank == 0) {
    char path[4096], other[4096];
    copy_path(pc, 0, 0, path, sizeof path);
    MT_CHECK(unlink(path) == 0);
    copy_path(pc, 2, 0, path, sizeof path);
    MT_CHECK(flip_byte(path, 4096 + 1 * 4096 + 100) == 0);
    copy_path(pc, 2, 1, path, sizeof path);
    MT_CHECK(flip_byte(path, 4096 + 3 * 4096 + 7) == 0);
    copy_path(pc, 0, 1, other, sizeof other);
    copy_path(pc, 3, 0, path, sizeof path);
    MT_CHECK(copy_file(other, path) == 0);
  }
  if (rc == RIVER_SUCCESS)
    river_pcoll_close(pc);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Every block still reads, correctly, whoever reads it. */
  mt_log_clear();
  read_check_all_ways(&e, "fo%d");
  /* verify_copy reports each damaged copy and passes the others. */
  mt_log_clear();
  rc = river_pcoll_open(MPI_COMM_WORLD, "fo2", &o, &pc);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS) {
    for (p = 0; p < NR; p++)
      for (c = 0; c < 2; c++) {
        uint64_t bad = 12345;
        int want = RIVER_SUCCESS;
        uint64_t want_bad = 12345;
        if ((p * 2 + c) % NR != rank)
          continue;
        if (p == 0 && c == 0) {
          want = RIVER_ENOTFOUND;
          want_bad = UINT64_MAX;
        } else if (p == 2) {
          want = RIVER_ECORRUPT;
          want_bad = c == 0 ? 1 : 3;
        } else if (p == 3 && c == 0) {
          want = RIVER_ECORRUPT;
          want_bad = UINT64_MAX;
        }
        mt_log_clear();
        MT_CHECK_RC(river_pcoll_verify_copy(pc, p, c, &bad), want);
        MT_CHECK(bad == want_bad);
        if (p == 2 && c == 0)
          MT_CHECK(mt_logged("error|", "collection fo2: partition 2 copy on disk "
                          "2", "block 1 "));
        if (p == 2 && c == 1)
          MT_CHECK(mt_logged("error|", "collection fo2: partition 2 copy on disk "
                          "3", "block 3 "));
        if (p == 0 && c == 0)
          MT_CHECK(mt_logged("error|", "collection fo2: partition 0 copy on "
                          "disk 0", NULL));
        if (p == 3 && c == 0)
          MT_CHECK(mt_logged("warn|", "partition 3 copy on disk 3",
                          "does not match the metadata"));
        if (want == RIVER_SUCCESS)
          MT_CHECK(!mt_logged(NULL, "partition", NULL));
      }
    /* The reader of a damaged block warned and went on to the mirror;
     * the same for a mismatched copy. Neither is a failed read, so
     * nothing is logged as an error: the single-disk layer's checksum
     * message (naming the file and block) comes as a warning too. */
    {
      size_t got = 0;
      unsigned char buf[4096];
      mt_log_clear();
      MT_CHECK_RC(river_pcoll_read_block(pc, 2, 1, buf, sizeof buf, &got),
                  RIVER_SUCCESS);
      MT_CHECK(got == 256);
      MT_CHECK(mt_logged("warn|", "collection fo2: partition 2 block 1",
                      "trying the next copy"));
      MT_CHECK(mt_logged("warn|", "fo2.p2.", "block 1: checksum mismatch"));
      MT_CHECK(!mt_logged("error|", NULL, NULL));
      MT_CHECK(!mt_logged(NULL, "no readable copy", NULL));
      mt_log_clear();
      MT_CHECK_RC(river_pcoll_read_block(pc, 3, 2, buf, sizeof buf, &got),
                  RIVER_SUCCESS);
      MT_CHECK(got == 513 - 512);
      MT_CHECK(mt_logged("warn|", "partition 3 copy on disk 3",
                      "does not match the metadata"));
      MT_CHECK(!mt_logged("error|", NULL, NULL));
    }
    river_pcoll_close(pc);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Replication 1: the same damage is an error naming the collection,
 * partition and block; undamaged blocks still read. */
static void test_failover_single(void)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  size_t n = counts[rank], got;
  unsigned char *recs = make_recs(n, (uint64_t)rank << 36, 5, 41, NULL);
  unsigned char *buf = malloc(4096);
  river_pcoll *pc = NULL;
  int rc;

  o.root = root;
  o.disks = "fs%d";
  o.block_size = 4096;
  MT_CHECK_RC(write_coll(MPI_COMM_WORLD, "fo1", &o, recs, n, NULL),
              RIVER_SUCCESS);
  free(recs);
  o.disks = NULL;
  rc = river_pcoll_open(MPI_COMM_WORLD, "fo1", &o, &pc);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS && rank == 0) {
    char path[4096];
    copy_path(pc, 2, 0, path, sizeof path);
    MT_CHECK(flip_byte(path, 4096 + 1 * 4096 + 3) == 0);
    copy_path(pc, 3, 0, path, sizeof path);
    MT_CHECK(unlink(path) == 0);
    copy_path(pc, 0, 0, path, sizeof path);
    MT_CHECK(flip_byte(path, 17) == 0); /* the file header */
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rc == RIVER_SUCCESS) {
    uint64_t bad = 0;

    /* Damaged block: an error, named. Blocks 0 and 2 are fine. */
    mt_log_clear();
    MT_CHECK_RC(river_pcoll_read_block(pc, 2, 1, buf, 4096, &got),
                RIVER_ECORRUPT);
    MT_CHECK(mt_logged("error|", "collection fo1: partition 2 block 1", NULL));
    MT_CHECK_RC(river_pcoll_read_block(pc, 2, 0, buf, 4096, &got),
                RIVER_SUCCESS);
    MT_CHECK_RC(river_pcoll_read_block(pc, 2, 2, buf, 4096, &got),
                RIVER_SUCCESS);
    MT_CHECK(got == 256);
    /* Missing file: not found, named; and again on a second try. */
    mt_log_clear();
    MT_CHECK_RC(river_pcoll_read_block(pc, 3, 0, buf, 4096, &got),
                RIVER_ENOTFOUND);
    MT_CHECK(mt_logged("error|", "collection fo1: partition 3 block 0", NULL));
    mt_log_clear();
    MT_CHECK_RC(river_pcoll_read_block(pc, 3, 1, buf, 4096, &got),
                RIVER_ENOTFOUND);
    MT_CHECK(mt_logged("error|", "collection fo1: partition 3 block 1", NULL));
    /* Damaged header: corrupt, and the same answer on a second try. */
    mt_log_clear();
    MT_CHECK_RC(river_pcoll_read_block(pc, 0, 0, buf, 4096, &got),
                RIVER_ECORRUPT);
    MT_CHECK(mt_logged("error|", "collection fo1: partition 0 block 0", NULL));
    MT_CHECK_RC(river_pcoll_read_block(pc, 0, 1, buf, 4096, &got),
                RIVER_ECORRUPT);
    /* verify_copy agrees. */
    MT_CHECK_RC(river_pcoll_verify_copy(pc, 2, 0, &bad), RIVER_ECORRUPT);
    MT_CHECK(bad == 1);
    MT_CHECK_RC(river_pcoll_verify_copy(pc, 3, 0, &bad), RIVER_ENOTFOUND);
    MT_CHECK(bad == UINT64_MAX);
    bad = 0;
    MT_CHECK_RC(river_pcoll_verify_copy(pc, 0, 0, &bad), RIVER_ECORRUPT);
    MT_CHECK(bad == UINT64_MAX);
    MT_CHECK_RC(river_pcoll_verify_copy(pc, 1, 0, NULL), RIVER_SUCCESS);
    river_pcoll_close(pc);
  }
  free(buf);
  MPI_Barrier(MPI_COMM_WORLD);
}

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

static void test_bad_input(void)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  char longname[RIVER_PCOLL_NAME_MAX + 2], up[2100], metapath[2100];
  const char *names[] = {"a/b", "..", ".hidden", ""};
  const char *pats[] = {"nodisk", "d%d%d", "d%s", "../x%d", "a/../../x%d"};
  river_pcoll *pc = NULL;
  size_t i, n = counts[rank], got = 0;
  unsigned char *recs = make_recs(n, (uint64_t)rank << 32, 1, 51, NULL);
  unsigned char *buf = malloc(8192);
  int rc;

  o.root = root;
  memset(longname, 'x', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  for (i = 0; i < sizeof names / sizeof names[0]; i++) {
    char quoted[64];
    snprintf(quoted, sizeof quoted, "'%s'", names[i]);
    bad_create(names[i], &o, RIVER_EINVAL, quoted);
    mt_log_clear();
    MT_CHECK_RC(river_pcoll_open(MPI_COMM_WORLD, names[i], &o, &pc),
                RIVER_EINVAL);
    MT_CHECK(mt_logged("error|", quoted, NULL));
  }
  bad_create(longname, &o, RIVER_EINVAL, "1..128 characters");

  for (i = 0; i < sizeof pats / sizeof pats[0]; i++) {
    char quoted[64];
    o.disks = pats[i];
    snprintf(quoted, sizeof quoted, "disk pattern '%s'", pats[i]);
    bad_create("pat", &o, RIVER_EINVAL, quoted);
  }
  /* Nothing was made outside the root. */
  snprintf(up, sizeof up, "%s/../x0", root);
  MT_CHECK(access(up, F_OK) != 0);
  o.disks = NULL;

  o.replication = 3;
  o.ndisks = 2;
  bad_create("repl", &o, RIVER_EINVAL, "replication 3");
  o.replication = 5; /* more than the default 4 disks */
  o.ndisks = 0;
  bad_create("repl", &o, RIVER_EINVAL, "replication 5");
  o.replication = 0;

  /* A missing collection: ENOTFOUND everywhere, named; remove says so. */
  mt_log_clear();
  MT_CHECK_RC(river_pcoll_open(MPI_COMM_WORLD, "nosuch", &o, &pc),
              RIVER_ENOTFOUND);
  MT_CHECK(mt_logged("error|", "nosuch", "not found"));
  if (rank == 0)
    MT_CHECK_RC(river_pcoll_remove("nosuch", &o), RIVER_ENOTFOUND);

  /* Out-of-range reads and a small buffer. */
  o.block_size = 8192;
  MT_CHECK_RC(write_coll(MPI_COMM_WORLD, "meta", &o, recs, n, NULL),
              RIVER_SUCCESS);
  rc = river_pcoll_open(MPI_COMM_WORLD, "meta", &o, &pc);
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
  /* Reader calls on a writer. */
  pc = NULL;
  rc = river_pcoll_create(MPI_COMM_WORLD, "wr", schema, &o, &pc);
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
    river_pcoll_close(pc);
  }

  /* Corrupt metadata: ECORRUPT on every rank, each of three ways. */
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
    MT_CHECK_RC(river_pcoll_open(MPI_COMM_WORLD, "meta", &o, &pc),
                RIVER_ECORRUPT);
    MT_CHECK(pc == NULL);
    MT_CHECK(mt_logged("error|", "meta.river.h5", NULL));
  }
  /* remove frees the name even so; then it is gone. */
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    MT_CHECK_RC(river_pcoll_remove("meta", &o), RIVER_SUCCESS);
    MT_CHECK_RC(river_pcoll_remove("meta", &o), RIVER_ENOTFOUND);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MT_CHECK_RC(river_pcoll_open(MPI_COMM_WORLD, "meta", &o, &pc),
              RIVER_ENOTFOUND);

  /* remove of a good collection: the metadata and every data file. */
  o.disks = "rm%d";
  o.replication = 2;
  MT_CHECK_RC(write_coll(MPI_COMM_WORLD, "gone", &o, recs, n, NULL),
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
    MT_CHECK_RC(river_pcoll_remove("gone", &o), RIVER_SUCCESS);
    for (d = 0; d < NR; d++) {
      snprintf(sub, sizeof sub, "rm%d", d);
      path_of(dir, sizeof dir, sub);
      after += count_files(dir, NULL, NULL);
    }
    MT_CHECK(after == 0);
    MT_CHECK(count_files(root, "gone", NULL) == 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MT_CHECK_RC(river_pcoll_open(MPI_COMM_WORLD, "gone", &o, &pc),
              RIVER_ENOTFOUND);
  free(recs);
  free(buf);
}

static double cpu_now(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_s(double s)
{
  struct timespec ts;

  ts.tv_sec = (time_t)s;
  ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
  while (nanosleep(&ts, &ts) != 0)
    ;
}

/* Rank 0 sleeps ~1 s, then sends to rank 1, which waits with river_wait;
 * rank 3 does the same for rank 2, which waits for two messages with
 * river_waitall. The waiters' CPU time is a small part of their wait. */
static void test_wait(void)
{
  int val[2] = {-1, -1}, msg[2] = {4242, 4343};
  MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Status st;
  double w0, c0, wall, cpu;

  /* Trivial cases first: nothing to wait for. */
  MT_CHECK_RC(river_wait(&req[0], MPI_STATUS_IGNORE), RIVER_SUCCESS);
  MT_CHECK_RC(river_waitall(0, NULL), RIVER_SUCCESS);
  MT_CHECK_RC(river_waitall(2, req), RIVER_SUCCESS);

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0 || rank == 3) {
    sleep_s(1.0);
    MPI_Send(&msg[0], 1, MPI_INT, rank == 0 ? 1 : 2, 7, MPI_COMM_WORLD);
    if (rank == 3)
      MPI_Send(&msg[1], 1, MPI_INT, 2, 8, MPI_COMM_WORLD);
  } else {
    if (rank == 1) {
      MPI_Irecv(&val[0], 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &req[0]);
    } else {
      MPI_Irecv(&val[0], 1, MPI_INT, 3, 7, MPI_COMM_WORLD, &req[0]);
      MPI_Irecv(&val[1], 1, MPI_INT, 3, 8, MPI_COMM_WORLD, &req[1]);
    }
    w0 = river_wtime();
    c0 = cpu_now();
    if (rank == 1) {
      MT_CHECK_RC(river_wait(&req[0], &st), RIVER_SUCCESS);
      MT_CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 7);
      MT_CHECK(val[0] == 4242);
    } else {
      MT_CHECK_RC(river_waitall(2, req), RIVER_SUCCESS);
      MT_CHECK(val[0] == 4242 && val[1] == 4343);
    }
    cpu = cpu_now() - c0;
    wall = river_wtime() - w0;
    MT_CHECK(req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL);
    MT_CHECK(wall > 0.8); /* it did wait for the sleeping sender */
    MT_CHECK(cpu < 0.25 * wall);
    if (cpu >= 0.25 * wall || getenv("RIVER_TEST_VERBOSE"))
      fprintf(stderr, "rank %d: waited %.3f s using %.3f s of CPU (%.1f%%)\n",
              rank, wall, cpu, 100.0 * cpu / wall);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* ----------------------------------------------------------------- main */

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
      if (lays[k] == RIVER_LAYOUT_INTERLEAVED)
        check_order_misuse(pc);
    }
    river_pcoll_close(pc);
    pc = NULL;
  }
  if (rank == 0)
    check_list();
}

static void make_root(void)
{
  const char *tmp = getenv("TMPDIR");

  if (rank == 0) {
    snprintf(root, sizeof root, "%s/river_pcoll_XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(root) == NULL) {
      perror("mkdtemp");
      root[0] = '\0';
    }
  }
  MPI_Bcast(root, sizeof root, MPI_CHAR, 0, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
  double t0;
  int verdict;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != NR) {
    if (rank == 0)
      fprintf(stderr, "test_pcoll_mpi needs %d ranks, has %d\n", NR, size);
    MPI_Finalize();
    return 1;
  }
  MT_CHECK_RC(river_init(NULL, NULL), RIVER_SUCCESS);
  river_log_set_level(RIVER_LOG_WARN);
  river_log_set_handler(mt_log_capture, NULL);
  MT_CHECK_RC(river_schema_parse(SCHEMA_TEXT, &schema), RIVER_SUCCESS);
  make_root();
  MT_CHECK(root[0] != '\0');
  if (root[0] != '\0' && schema != NULL) {
    t0 = river_wtime();
    test_roundtrip();
    test_ordered();
    test_replace();
    test_failover_mirrored();
    test_failover_single();
    test_bad_input();
    test_layout();
    test_wait();
    if (rank == 0 && getenv("RIVER_TEST_VERBOSE"))
      fprintf(stderr, "test_pcoll_mpi: %.1f s\n", river_wtime() - t0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0 && root[0] != '\0')
    nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
  river_schema_destroy(schema);
  river_log_set_handler(NULL, NULL);
  MT_CHECK_RC(river_finalize(), RIVER_SUCCESS);
  verdict = mt_verdict(MPI_COMM_WORLD, "test_pcoll_mpi");
  MPI_Finalize();
  return verdict;
}
