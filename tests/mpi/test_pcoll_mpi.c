/*
 * test_pcoll_mpi - parallel collections (river/pcoll.h) on 4 ranks:
 * writing, committing and reading back, in a mkdtemp() root that rank 0
 * makes under $TMPDIR (or /tmp) and removes at the end:
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
 *   wait         river_wait / river_waitall use little CPU while blocked,
 *                and so do ranks waiting in a commit's or an open's
 *                collectives for a late rank
 *
 * Damaged copies are tested in test_pcoll_failover_mpi, bad input and
 * the layout helpers in test_pcoll_api_mpi; the records, read_check and
 * the file helpers are in pcolltest.h.
 */
#define _GNU_SOURCE
#include "pcolltest.h"

#include <time.h>

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

/* -------------------------------------------------------------- wait */

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
 * river_waitall. The waiters' CPU time is a small part of their wait.
 * Here and in test_wait_collective, "it did wait" is a wall time over
 * 0.5 s: a waiter's clock starts when it leaves the barrier, which on a
 * loaded machine can be well after the sleeper left it (0.8 s left
 * 0.2 s for that); a wait that did not wait returns in microseconds.
 * CPU time cannot grow with load, so its bound needs no margin. */
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
    MT_CHECK(wall > 0.5); /* it did wait for the sleeping sender */
    MT_CHECK(cpu < 0.25 * wall);
    if (cpu >= 0.25 * wall || getenv("RIVER_TEST_VERBOSE"))
      fprintf(stderr, "rank %d: waited %.3f s using %.3f s of CPU (%.1f%%)\n",
              rank, wall, cpu, 100.0 * cpu / wall);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Rank 0 is held ~1 s before it commits; the others are in the commit's
 * collectives meanwhile, and must back off there, not spin: their CPU
 * time is a small part of their wait (issue 10: waiting ranks of a held
 * commit used most of the machine). The same for opening a collection,
 * whose outcome is agreed. */
static void test_wait_collective(void)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  struct sums m = {0, 0, 0};
  unsigned char *r = make_recs(10, (uint64_t)rank << 32, 1, 23, &m);
  river_pcoll *pc = NULL;
  double w0, c0, wall, cpu;
  int step;

  o.root = root;
  for (step = 0; step < 2; step++) {
    if (step == 0) {
      MT_CHECK_RC(river_pcoll_create(MPI_COMM_WORLD, "held", schema, &o,
                                     &pc), RIVER_SUCCESS);
      MT_CHECK_RC(river_pcoll_write(pc, r, 10), RIVER_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
      sleep_s(1.0);
    w0 = river_wtime();
    c0 = cpu_now();
    if (step == 0)
      MT_CHECK_RC(river_pcoll_commit(pc), RIVER_SUCCESS);
    else
      MT_CHECK_RC(river_pcoll_open(MPI_COMM_WORLD, "held", &o, &pc),
                  RIVER_SUCCESS);
    cpu = cpu_now() - c0;
    wall = river_wtime() - w0;
    if (rank != 0) {
      MT_CHECK(wall > 0.5); /* it did wait for rank 0 */
      MT_CHECK(cpu < 0.25 * wall);
      if (cpu >= 0.25 * wall || getenv("RIVER_TEST_VERBOSE"))
        fprintf(stderr, "rank %d: %s waited %.3f s using %.3f s of CPU "
                "(%.1f%%)\n", rank, step == 0 ? "commit" : "open", wall,
                cpu, 100.0 * cpu / wall);
    }
  }
  MT_CHECK_RC(river_pcoll_close(pc), RIVER_SUCCESS);
  free(r);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* ----------------------------------------------------------------- main */

int main(int argc, char **argv)
{
  double t0 = 0;

  if (pcolltest_begin(&argc, &argv, "test_pcoll_mpi") != 0)
    return 1;
  if (pcolltest_ready()) {
    t0 = river_wtime();
    test_roundtrip();
    test_ordered();
    test_replace();
    test_wait();
    test_wait_collective();
  }
  return pcolltest_end("test_pcoll_mpi", t0);
}
