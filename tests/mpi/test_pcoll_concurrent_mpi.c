/*
 * test_pcoll_concurrent_mpi - a reader keeps the collection it opened
 * while another job replaces or removes it (doc/collections.md,
 * "Readers and concurrent writers"). Run on 4 ranks; each case runs on
 * 1 rank (MPI_COMM_SELF of rank 0), 2 ranks and 4 ranks, with and
 * without a mirror, in a mkdtemp() root that rank 0 makes and removes:
 *
 *   rewrite   X is written (generation A), opened for reading, then
 *             written again with other records (the commit deletes A's
 *             files); every block of every partition, and every copy,
 *             read through the first handle is A's, exactly (count and
 *             an order-independent digest); verify_copy passes
 *   remove    the same, with river_pcoll_remove of X instead
 *   fds       a reader holds exactly one descriptor per copy while open
 *             and none after close (200 open/close rounds leak none)
 *   budget    with RLIMIT_NOFILE lowered, only as many copies as the
 *             budget allows are opened up front; the rest still read
 *
 * The records and file helpers are in pcolltest.h.
 */
#define _GNU_SOURCE
#include "pcolltest.h"

#include <sys/resource.h>

/* Entries in /proc/self/fd (this process's open descriptors, plus the
 * one opendir holds while counting). */
static int count_fds(void)
{
  return count_files("/proc/self/fd", NULL, NULL);
}

/* Options for collection `name` on a comm of csize ranks, replication
 * repl (ndisks at least 2, so that a mirror has a disk of its own). */
static void opts_for(river_pcoll_opts *o, int csize, int repl)
{
  *o = (river_pcoll_opts)RIVER_PCOLL_OPTS_INIT;
  o->root = root;
  o->disks = "cd%d";
  o->replication = repl;
  o->ndisks = csize < 2 ? 2 : csize;
  o->block_size = 4096;
}

/* Write name on comm with records of salt (crank writes
 * 300 + 700 * crank + salt % 50 records); the digest over comm in s.
 * Collective over comm. */
static void write_x(MPI_Comm comm, const char *name, const river_pcoll_opts *o,
                    uint64_t salt, struct sums *s)
{
  struct sums m = {0, 0, 0};
  int crank;
  size_t n;
  unsigned char *recs;

  MPI_Comm_rank(comm, &crank);
  n = 300 + 700 * (size_t)crank + (size_t)(salt % 50);
  recs = make_recs(n, salt << 40 | (uint64_t)crank << 32, 3, salt, &m);
  MT_CHECK_RC(write_coll(comm, name, o, recs, n, NULL), RIVER_SUCCESS);
  sums_reduce(comm, &m, s);
  free(recs);
}

/* Read every block of every partition of pc (partition p by comm rank
 * p mod size) with river_pcoll_read_block and, with a mirror, every copy
 * with river_pcoll_read_copy; check each copy with verify_copy; the
 * digest over comm must be want. Collective over comm. */
static void read_all(MPI_Comm comm, river_pcoll *pc, const struct sums *want)
{
  struct sums mine = {0, 0, 0}, all, cmine = {0, 0, 0}, call;
  river_pcoll_info info;
  unsigned char *buf = malloc(4096);
  int crank, csize, p, c;

  MPI_Comm_rank(comm, &crank);
  MPI_Comm_size(comm, &csize);
  MT_CHECK_RC(river_pcoll_info_get(pc, &info), RIVER_SUCCESS);
  for (p = crank; p < info.npartitions; p += csize) {
    size_t rpb = 0, n, i;
    uint64_t nb = 0, b;
    MT_CHECK_RC(river_pcoll_blocks(pc, p, &rpb, &nb), RIVER_SUCCESS);
    for (b = 0; b < nb; b++) {
      n = 0;
      MT_CHECK_RC(river_pcoll_read_block(pc, p, b, buf, 4096, &n),
                  RIVER_SUCCESS);
      for (i = 0; i < n; i++)
        sums_add(&mine, buf + i * RECSZ);
      /* Every copy, so that a mirror's file is known kept too. */
      for (c = 0; c < info.replication; c++) {
        n = 0;
        MT_CHECK_RC(river_pcoll_read_copy(pc, p, c, b, buf, 4096, &n),
                    RIVER_SUCCESS);
        for (i = 0; i < n && c == info.replication - 1; i++)
          sums_add(&cmine, buf + i * RECSZ);
      }
    }
    for (c = 0; c < info.replication; c++)
      MT_CHECK_RC(river_pcoll_verify_copy(pc, p, c, NULL), RIVER_SUCCESS);
  }
  sums_reduce(comm, &mine, &all);
  sums_reduce(comm, &cmine, &call);
  MT_CHECK(sums_equal(&all, want));
  MT_CHECK(sums_equal(&call, want));
  free(buf);
}

/* Whether copy c of partition p of pc is still on disk. */
static int copy_exists(river_pcoll *pc, int p, int c)
{
  char path[4096];

  copy_path(pc, p, c, path, sizeof path);
  return path[0] != '\0' && access(path, F_OK) == 0;
}

/* One case on comm: write X, open it, then (remove == 0) write X again
 * with other records or (remove == 1) remove X, then read the first
 * handle. Collective over comm. */
static void one_case(MPI_Comm comm, int repl, int remove)
{
  river_pcoll_opts o;
  river_pcoll *pc = NULL, *now = NULL;
  river_pcoll_info info, ninfo;
  struct sums a, b;
  char name[64];
  int crank, csize, rc, p, c, gone = 1;

  MPI_Comm_rank(comm, &crank);
  MPI_Comm_size(comm, &csize);
  snprintf(name, sizeof name, "x%d_%d_%d", csize, repl, remove);
  opts_for(&o, csize, repl);
  write_x(comm, name, &o, 7, &a);
  rc = river_pcoll_open(comm, name, &o, &pc);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc != RIVER_SUCCESS)
    return;
  MT_CHECK_RC(river_pcoll_info_get(pc, &info), RIVER_SUCCESS);
  if (remove) {
    if (crank == 0)
      MT_CHECK_RC(river_pcoll_remove(name, &o), RIVER_SUCCESS);
  } else {
    write_x(comm, name, &o, 11, &b);
    MT_CHECK(!sums_equal(&a, &b));
  }
  MPI_Barrier(comm);
  /* The test means something only if A's files are really gone. */
  for (p = 0; p < info.npartitions; p++)
    for (c = 0; c < info.replication; c++)
      gone = gone && !copy_exists(pc, p, c);
  MT_CHECK(gone);
  read_all(comm, pc, &a);
  MT_CHECK_RC(river_pcoll_close(pc), RIVER_SUCCESS);
  /* What a new reader finds: the new records, or nothing. */
  rc = river_pcoll_open(comm, name, &o, &now);
  MT_CHECK_RC(rc, remove ? RIVER_ENOTFOUND : RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS) {
    MT_CHECK_RC(river_pcoll_info_get(now, &ninfo), RIVER_SUCCESS);
    MT_CHECK(strcmp(ninfo.generation, info.generation) != 0);
    read_all(comm, now, &b);
    MT_CHECK_RC(river_pcoll_close(now), RIVER_SUCCESS);
  }
  if (!remove && crank == 0)
    MT_CHECK_RC(river_pcoll_remove(name, &o), RIVER_SUCCESS);
  MPI_Barrier(comm);
}

/* A reader holds one descriptor per (partition, copy) while open, none
 * after close: 200 rounds leave the count as it was. Collective. */
static void check_fds(MPI_Comm comm)
{
  river_pcoll_opts o;
  river_pcoll *pc = NULL;
  struct sums a;
  int csize, before, open_n = -1, i, rc, same = 1;

  MPI_Comm_size(comm, &csize);
  opts_for(&o, csize, 2);
  write_x(comm, "fds", &o, 3, &a);
  before = count_fds();
  for (i = 0; i < 200; i++) {
    rc = river_pcoll_open(comm, "fds", &o, &pc);
    MT_CHECK_RC(rc, RIVER_SUCCESS);
    if (rc != RIVER_SUCCESS)
      break;
    if (i == 0)
      open_n = count_fds();
    same = same && count_fds() == open_n;
    if (i == 0)
      read_all(comm, pc, &a);
    river_pcoll_close(pc);
  }
  MT_CHECK(same);
  MT_CHECK(open_n - before == csize * 2);
  MT_CHECK(count_fds() == before);
  if (rank == 0 && open_n - before != csize * 2)
    fprintf(stderr, "fds: %d open before, %d while open (%d copies)\n",
            before, open_n, csize * 2);
  MPI_Barrier(comm);
}

/* With the soft RLIMIT_NOFILE at 2 * (open + 1 + budget), a reader opens
 * `budget` copies up front on rank 0 (which holds the metadata file
 * meanwhile: the 1) and budget + 1 on the others (the metadata comes to
 * them by broadcast), copy 0 of every partition first; the rest open
 * when read, and every block still reads. Collective over
 * MPI_COMM_WORLD. */
static void check_budget(void)
{
  river_pcoll_opts o;
  river_pcoll *pc = NULL;
  struct rlimit old, low;
  struct sums a;
  int before, during = -1, rc, budget = NR / 2;

  opts_for(&o, NR, 2);
  write_x(MPI_COMM_WORLD, "budget", &o, 5, &a);
  MT_CHECK(getrlimit(RLIMIT_NOFILE, &old) == 0);
  before = count_fds() - 1; /* without the counter's own */
  low = old;
  low.rlim_cur = (rlim_t)(2 * (before + 1 + budget));
  MT_CHECK(low.rlim_cur <= old.rlim_max);
  MT_CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
  rc = river_pcoll_open(MPI_COMM_WORLD, "budget", &o, &pc);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS)
    during = count_fds() - 1;
  MT_CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0);
  if (rank != 0)
    budget++;
  MT_CHECK(during - before == budget);
  if (during - before != budget)
    fprintf(stderr, "budget: rank %d: %d open before, %d while open\n",
            rank, before, during);
  if (rc == RIVER_SUCCESS) {
    read_all(MPI_COMM_WORLD, pc, &a);
    river_pcoll_close(pc);
  }
  MT_CHECK(count_fds() - 1 == before);
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
  MPI_Comm two = MPI_COMM_NULL;
  double t0;
  int repl, remove;

  if (pcolltest_begin(&argc, &argv, "test_pcoll_concurrent_mpi"))
    return 1;
  t0 = river_wtime();
  MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &two);
  for (remove = 0; pcolltest_ready() && remove <= 1; remove++)
    for (repl = 1; repl <= 2; repl++) {
      if (rank == 0)
        one_case(MPI_COMM_SELF, repl, remove);
      if (two != MPI_COMM_NULL)
        one_case(two, repl, remove);
      one_case(MPI_COMM_WORLD, repl, remove);
    }
  if (pcolltest_ready()) {
    if (rank == 0)
      check_fds(MPI_COMM_SELF);
    check_fds(MPI_COMM_WORLD);
    check_budget();
  }
  if (two != MPI_COMM_NULL)
    MPI_Comm_free(&two);
  return pcolltest_end("test_pcoll_concurrent_mpi", t0);
}
