/*
 * pcolltest.h - what the parallel-collection tests (test_pcoll_mpi.c,
 * test_pcoll_failover_mpi.c, test_pcoll_api_mpi.c) share, on top of the
 * generic harness in mpitest.h: the 16-byte test record of the schema
 * SCHEMA_TEXT (make_rec: its id, a value, a tag naming the writing rank)
 * with an order-independent digest of records (struct sums); write_coll,
 * which writes a collection in uneven chunks; struct expect, what a
 * collection should hold, and read_check, which opens it, checks every
 * fact and block against that, and verifies its copies; file helpers
 * for damaging copies and counting what is left on the disks; the
 * mkdtemp() root every collection lives under; and the start and end of
 * each program's main.
 *
 * Every program runs on NR (4) ranks. Collective calls are made on
 * every rank of their communicator whatever the checks say, so a failing
 * check never hangs a test.
 *
 * Header-only: each test program is one file that includes it once.
 * Define _GNU_SOURCE before including it.
 */
#ifndef RIVER_PCOLLTEST_H
#define RIVER_PCOLLTEST_H

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
#include <unistd.h>

#define SCHEMA_TEXT "id:uint64,v:int32,tag:char[4]"
#define RECSZ 16
#define NR 4 /* the test's rank count */

static int rank, size;
static char root[2048];
static river_schema *schema;

/* ------------------------------------------------------------ records */

/* A 64-bit hash of a record's bytes (FNV-1a, then mixed). */
static inline uint64_t rec_hash(const unsigned char *r)
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

static inline void sums_add(struct sums *s, const unsigned char *r)
{
  uint64_t h = rec_hash(r);

  s->count++;
  s->x ^= h;
  s->sum += h;
}

static inline void sums_reduce(MPI_Comm comm, const struct sums *in,
                               struct sums *out)
{
  MPI_Allreduce(&in->count, &out->count, 1, MPI_UINT64_T, MPI_SUM, comm);
  MPI_Allreduce(&in->x, &out->x, 1, MPI_UINT64_T, MPI_BXOR, comm);
  MPI_Allreduce(&in->sum, &out->sum, 1, MPI_UINT64_T, MPI_SUM, comm);
}

static inline int sums_equal(const struct sums *a, const struct sums *b)
{
  return a->count == b->count && a->x == b->x && a->sum == b->sum;
}

/* Record i of writer w: id, a value depending on salt, tag "w<w><letter>"
 * (tag[1] names the writing rank, so a reader can check that a record
 * came back in the right partition). */
static inline void make_rec(unsigned char *r, uint64_t id, int w, size_t i,
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

/* n records of this rank, record i with id base + i * step, each added
 * to s if s is not NULL. */
static inline unsigned char *make_recs(size_t n, uint64_t base, uint64_t step,
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
static inline int write_coll(MPI_Comm comm, const char *name,
                             const river_pcoll_opts *o,
                             const unsigned char *recs, size_t n,
                             char gen[17])
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

static inline void path_of(char *buf, size_t bufsize, const char *rel)
{
  snprintf(buf, bufsize, "%s/%s", root, rel);
}

/* Count files under dir (not recursive) whose name contains `has` (and
 * ends with `suffix` if non-NULL). */
static inline int count_files(const char *dir, const char *has,
                              const char *suffix)
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

static inline int find_tmp(const char *p, const struct stat *sb, int flag,
                           struct FTW *f)
{
  if (strstr(p + f->base, ".tmp") != NULL)
    tmp_found++;
  return 0;
}

/* Files or directories anywhere under root with ".tmp" in their name. */
static inline int count_tmp(void)
{
  tmp_found = 0;
  nftw(root, find_tmp, 16, FTW_PHYS);
  return tmp_found;
}

static inline int rm_one(const char *p, const struct stat *sb, int flag,
                         struct FTW *f)
{
  return remove(p);
}

/* Flip one byte of a file at offset. */
static inline int flip_byte(const char *path, off_t off)
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
static inline int copy_file(const char *from, const char *to)
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
static inline void copy_path(river_pcoll *pc, int p, int c, char *buf,
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
static inline void read_check(MPI_Comm comm, const struct expect *e,
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
static inline void read_check_all_ways(const struct expect *e,
                                       const char *disks)
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
static inline void expect_from(struct expect *e, const struct sums *mine,
                               size_t n)
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

/* ------------------------------------------------------------- main */

/* Rank 0 makes the root under $TMPDIR (or /tmp); every rank gets its
 * name (empty if mkdtemp failed). Collective. */
static inline void make_root(void)
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

/* MPI and River up, rank and size set, the log captured at warning
 * level, the schema parsed and the root made. 1: the job does not have
 * NR ranks (MPI is finalized again; main returns 1). 0: go on, and run
 * the tests if pcolltest_ready(). */
static inline int pcolltest_begin(int *argc, char ***argv, const char *name)
{
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != NR) {
    if (rank == 0)
      fprintf(stderr, "%s needs %d ranks, has %d\n", name, NR, size);
    MPI_Finalize();
    return 1;
  }
  MT_CHECK_RC(river_init(NULL, NULL), RIVER_SUCCESS);
  river_log_set_level(RIVER_LOG_WARN);
  river_log_set_handler(mt_log_capture, NULL);
  MT_CHECK_RC(river_schema_parse(SCHEMA_TEXT, &schema), RIVER_SUCCESS);
  make_root();
  MT_CHECK(root[0] != '\0');
  return 0;
}

/* The root and the schema are there: the tests can run. */
static inline int pcolltest_ready(void)
{
  return root[0] != '\0' && schema != NULL;
}

/* Waits for every rank, removes the root, ends River and MPI; prints the
 * time since t0 (with RIVER_TEST_VERBOSE) and the verdict. The exit
 * status for main. */
static inline int pcolltest_end(const char *name, double t0)
{
  int verdict;

  if (rank == 0 && pcolltest_ready() && getenv("RIVER_TEST_VERBOSE"))
    fprintf(stderr, "%s: %.1f s\n", name, river_wtime() - t0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0 && root[0] != '\0')
    nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
  river_schema_destroy(schema);
  river_log_set_handler(NULL, NULL);
  MT_CHECK_RC(river_finalize(), RIVER_SUCCESS);
  verdict = mt_verdict(MPI_COMM_WORLD, name);
  MPI_Finalize();
  return verdict;
}

#endif /* RIVER_PCOLLTEST_H */
