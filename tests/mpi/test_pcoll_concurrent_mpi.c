/*
 * test_pcoll_concurrent_mpi - a reader keeps the collection it opened
 * while another job replaces or removes it, holding only the files it
 * reads (doc/collections.md, "Readers and concurrent writers"). Run on 4
 * ranks; each case of the first three runs on 1 rank (MPI_COMM_SELF of
 * rank 0), 2 ranks and 4 ranks, with and without a mirror, in a
 * mkdtemp() root that rank 0 makes and removes. In each, X is written
 * (generation A) and opened for reading, then written again with other
 * records (the commit deletes A's files) or removed (river_pcoll_remove),
 * and the first handle is read:
 *
 *   all       opened with RIVER_PCOLL_HOLD_ALL: every block of every
 *             partition, and every copy, is A's, exactly (count and an
 *             order-independent digest); verify_copy passes
 *   served    opened by default (RIVER_PCOLL_HOLD_SERVED): a GD read
 *             over the communicator (each disk served by the rank
 *             river_pcoll_disk_ranks gives it) is A's exactly, and every
 *             copy on a disk this rank serves reads and verifies; a copy
 *             it does not serve, not held, is gone (RIVER_ENOTFOUND)
 *   parts     opened with RIVER_PCOLL_HOLD_NONE, then
 *             river_pcoll_hold_partitions of partitions p = rank mod
 *             size: every copy of them is A's; a hold after the change
 *             is RIVER_EAGAIN, and takes nothing held away
 *
 * And:
 *
 *   fds       the descriptors each rank holds while open are its share:
 *             with the default, the copies on the disks it serves (each
 *             copy held by one rank of the communicator, and with more
 *             than one rank, by fewer than all); every copy with _ALL;
 *             none with _NONE, and the copies of its partitions after a
 *             hold; plus the metadata file on rank 0; none after close
 *             (200 open/close rounds leak none). On 1, 2 and 4 ranks,
 *             with 2, 4 or 8 disks
 *   nodes     node-local disks (RIVER_NODE_NAME set per rank: 2 emulated
 *             nodes; the pattern has %n): on a communicator whose rank
 *             order puts rank d mod size on the wrong node for disk d,
 *             each rank holds only copies of disks of its own node,
 *             dealt as river_pcoll_disk_ranks deals them; a GD read
 *             after river_pcoll_remove_all is the collection's, whole
 *   budget    with RLIMIT_NOFILE lowered, _ALL opens only as many copies
 *             as the budget allows up front; the rest still read
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

/* Options for a collection on a comm of csize ranks, replication repl,
 * on ndisks disks (0: csize, at least 2, so that a mirror has a disk of
 * its own), opened with hold. */
static void opts_for(river_pcoll_opts *o, int csize, int repl, int ndisks,
                     river_pcoll_hold hold)
{
  *o = (river_pcoll_opts)RIVER_PCOLL_OPTS_INIT;
  o->root = root;
  o->disks = "cd%d";
  o->replication = repl;
  o->ndisks = ndisks ? ndisks : csize < 2 ? 2 : csize;
  o->block_size = 4096;
  o->hold = hold;
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

/* Read every block of partition p with river_pcoll_read_block into
 * *mine, and every copy with river_pcoll_read_copy into *cmine (the last
 * copy's records); verify every copy. */
static void read_part(river_pcoll *pc, int p, struct sums *mine,
                      struct sums *cmine)
{
  river_pcoll_info info;
  unsigned char buf[4096];
  size_t rpb = 0, n, i;
  uint64_t nb = 0, b;
  int c;

  MT_CHECK_RC(river_pcoll_info_get(pc, &info), RIVER_SUCCESS);
  MT_CHECK_RC(river_pcoll_blocks(pc, p, &rpb, &nb), RIVER_SUCCESS);
  for (b = 0; b < nb; b++) {
    n = 0;
    MT_CHECK_RC(river_pcoll_read_block(pc, p, b, buf, sizeof buf, &n),
                RIVER_SUCCESS);
    for (i = 0; i < n; i++)
      sums_add(mine, buf + i * RECSZ);
    /* Every copy, so that a mirror's file is known kept too. */
    for (c = 0; c < info.replication; c++) {
      n = 0;
      MT_CHECK_RC(river_pcoll_read_copy(pc, p, c, b, buf, sizeof buf, &n),
                  RIVER_SUCCESS);
      for (i = 0; i < n && c == info.replication - 1; i++)
        sums_add(cmine, buf + i * RECSZ);
    }
  }
  for (c = 0; c < info.replication; c++)
    MT_CHECK_RC(river_pcoll_verify_copy(pc, p, c, NULL), RIVER_SUCCESS);
}

/* Read partitions p = comm rank mod size of pc (read_part); the digests
 * over comm must be want. Collective over comm. */
static void read_mine(MPI_Comm comm, river_pcoll *pc, const struct sums *want)
{
  struct sums mine = {0, 0, 0}, all, cmine = {0, 0, 0}, call;
  river_pcoll_info info;
  int crank, csize, p;

  MPI_Comm_rank(comm, &crank);
  MPI_Comm_size(comm, &csize);
  MT_CHECK_RC(river_pcoll_info_get(pc, &info), RIVER_SUCCESS);
  for (p = crank; p < info.npartitions; p += csize)
    read_part(pc, p, &mine, &cmine);
  sums_reduce(comm, &mine, &all);
  sums_reduce(comm, &cmine, &call);
  MT_CHECK(sums_equal(&all, want));
  MT_CHECK(sums_equal(&call, want));
}

/* Read pc through GD over comm (each rank the client of its partitions,
 * each disk served by the rank river_pcoll_disk_ranks gives it); the
 * digest over comm in *all. Collective over comm. */
static void read_gd(MPI_Comm comm, river_pcoll *pc, struct sums *all)
{
  struct sums mine = {0, 0, 0};
  river_gd *gd = NULL;
  const void *recs;
  uint64_t b;
  size_t n, i;
  int p, rc;

  rc = river_gd_open(comm, pc, NULL, &gd);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS) {
    while ((rc = river_gd_next(gd, &recs, &n, &p, &b)) == RIVER_SUCCESS)
      for (i = 0; i < n; i++)
        sums_add(&mine, (const unsigned char *)recs + i * RECSZ);
    MT_CHECK_RC(rc, RIVER_EOS);
    MT_CHECK_RC(river_gd_close(gd), RIVER_SUCCESS);
  }
  sums_reduce(comm, &mine, all);
}

/* Which rank of comm serves each disk of pc (river_pcoll_disk_ranks;
 * malloc'd). Collective over comm. */
static int *disk_ranks(MPI_Comm comm, river_pcoll *pc)
{
  river_pcoll_info info;
  int *ranks;

  MT_CHECK_RC(river_pcoll_info_get(pc, &info), RIVER_SUCCESS);
  ranks = calloc((size_t)info.ndisks, sizeof *ranks);
  MT_CHECK_RC(river_pcoll_disk_ranks(comm, pc, ranks), RIVER_SUCCESS);
  return ranks;
}

/* Served case: a GD read over comm is want; every copy on a disk this
 * rank serves reads and verifies; a copy on a disk it does not serve is
 * gone (gone: the files were removed). Collective over comm. */
static void read_served(MPI_Comm comm, river_pcoll *pc,
                        const struct sums *want, int gone)
{
  river_pcoll_info info;
  unsigned char buf[4096];
  struct sums got;
  size_t n;
  int *ranks, crank, p, c, d, rc, unserved = 0;

  MPI_Comm_rank(comm, &crank);
  MT_CHECK_RC(river_pcoll_info_get(pc, &info), RIVER_SUCCESS);
  read_gd(comm, pc, &got);
  MT_CHECK(sums_equal(&got, want));
  ranks = disk_ranks(comm, pc);
  for (p = 0; p < info.npartitions; p++)
    for (c = 0; c < info.replication; c++) {
      MT_CHECK_RC(river_pcoll_copy_disk(pc, p, c, &d), RIVER_SUCCESS);
      if (ranks[d] == crank) {
        MT_CHECK_RC(river_pcoll_read_copy(pc, p, c, 0, buf, sizeof buf, &n),
                    RIVER_SUCCESS);
        MT_CHECK_RC(river_pcoll_verify_copy(pc, p, c, NULL), RIVER_SUCCESS);
      } else if (gone && !unserved++) {
        /* Not held: opened now, and A's file is gone. */
        rc = river_pcoll_read_copy_level(pc, p, c, 0, buf, sizeof buf, &n,
                                         RIVER_LOG_DEBUG, NULL);
        MT_CHECK_RC(rc, RIVER_ENOTFOUND);
      }
    }
  free(ranks);
}

/* Whether copy c of partition p of pc is still on disk. */
static int copy_exists(river_pcoll *pc, int p, int c)
{
  char path[4096];

  copy_path(pc, p, c, path, sizeof path);
  return path[0] != '\0' && access(path, F_OK) == 0;
}

/* The partitions p = comm rank mod size of pc into parts (room for
 * npartitions); their number. */
static int my_parts(MPI_Comm comm, river_pcoll *pc, int *parts)
{
  river_pcoll_info info;
  int crank, csize, p, n = 0;

  MPI_Comm_rank(comm, &crank);
  MPI_Comm_size(comm, &csize);
  MT_CHECK_RC(river_pcoll_info_get(pc, &info), RIVER_SUCCESS);
  for (p = crank; p < info.npartitions; p += csize)
    parts[n++] = p;
  return n;
}

/* One case on comm: write X, open it with hold (parts: with
 * RIVER_PCOLL_HOLD_NONE, then hold this rank's partitions), then
 * (remove == 0) write X again with other records or (remove == 1)
 * remove X, then read the first handle as that hold allows. Collective
 * over comm. */
static void one_case(MPI_Comm comm, int repl, int remove,
                     river_pcoll_hold hold)
{
  river_pcoll_opts o;
  river_pcoll *pc = NULL, *now = NULL;
  river_pcoll_info info, ninfo;
  struct sums a, b;
  char name[64];
  int crank, csize, rc, p, c, gone = 1, parts[8], n;

  MPI_Comm_rank(comm, &crank);
  MPI_Comm_size(comm, &csize);
  snprintf(name, sizeof name, "x%d_%d_%d_%d", csize, repl, remove, (int)hold);
  opts_for(&o, csize, repl, 0, hold);
  write_x(comm, name, &o, 7, &a);
  rc = river_pcoll_open(comm, name, &o, &pc);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc != RIVER_SUCCESS)
    return;
  MT_CHECK_RC(river_pcoll_info_get(pc, &info), RIVER_SUCCESS);
  if (hold == RIVER_PCOLL_HOLD_NONE) {
    n = my_parts(comm, pc, parts);
    MT_CHECK_RC(river_pcoll_hold_partitions(pc, parts, n), RIVER_SUCCESS);
  }
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
  if (hold == RIVER_PCOLL_HOLD_ALL)
    read_mine(comm, pc, &a);
  else if (hold == RIVER_PCOLL_HOLD_SERVED)
    read_served(comm, pc, &a, gone);
  else {
    /* Too late for another hold: it says so, and keeps what it held. */
    n = my_parts(comm, pc, parts);
    MT_CHECK_RC(river_pcoll_hold_partitions(pc, parts, n), RIVER_EAGAIN);
    read_mine(comm, pc, &a);
  }
  MT_CHECK_RC(river_pcoll_close(pc), RIVER_SUCCESS);
  /* What a new reader finds: the new records, or nothing. */
  rc = river_pcoll_open(comm, name, &o, &now);
  MT_CHECK_RC(rc, remove ? RIVER_ENOTFOUND : RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS) {
    MT_CHECK_RC(river_pcoll_info_get(now, &ninfo), RIVER_SUCCESS);
    MT_CHECK(strcmp(ninfo.generation, info.generation) != 0);
    read_mine(comm, now, &b);
    MT_CHECK_RC(river_pcoll_close(now), RIVER_SUCCESS);
  }
  if (!remove && crank == 0)
    MT_CHECK_RC(river_pcoll_remove(name, &o), RIVER_SUCCESS);
  MPI_Barrier(comm);
}

/* The copies of pc on the disks ranks[] gives comm rank crank. */
static int copies_served(river_pcoll *pc, const int *ranks, int crank)
{
  river_pcoll_info info;
  int p, c, d, n = 0;

  MT_CHECK_RC(river_pcoll_info_get(pc, &info), RIVER_SUCCESS);
  for (p = 0; p < info.npartitions; p++)
    for (c = 0; c < info.replication; c++) {
      MT_CHECK_RC(river_pcoll_copy_disk(pc, p, c, &d), RIVER_SUCCESS);
      n += ranks[d] == crank;
    }
  return n;
}

/* Open `name` on comm with o (its hold) and check that this rank holds
 * want descriptors more than before (the metadata file's on rank 0
 * besides); *pc is left open. Collective over comm. */
static void expect_open_fds(MPI_Comm comm, const char *name,
                            const river_pcoll_opts *o, int before, int want,
                            river_pcoll **pc, const char *what)
{
  int crank, got = -1, rc;

  MPI_Comm_rank(comm, &crank);
  want += crank == 0;
  rc = river_pcoll_open(comm, name, o, pc);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS)
    got = count_fds() - before;
  MT_CHECK(got == want);
  if (got != want)
    fprintf(stderr, "fds %s (%s): rank %d holds %d descriptors, not %d\n",
            name, what, rank, got, want);
}

/* What each rank of comm holds, on ndisks disks (0: as opts_for), 2
 * copies: its share with the default (each copy once over comm; with
 * more than one rank, no rank all), every copy with _ALL, none with
 * _NONE and the copies of its partitions after a hold; nothing after
 * close; 200 default rounds leave the count as it was. Collective. */
static void check_fds(MPI_Comm comm, int ndisks)
{
  river_pcoll_opts o;
  river_pcoll *pc = NULL;
  river_pcoll_info info;
  struct sums a;
  char name[32];
  int crank, csize, before, open_n = -1, i, rc, same = 1, mine, total;
  int *ranks, parts[8], n;

  MPI_Comm_rank(comm, &crank);
  MPI_Comm_size(comm, &csize);
  snprintf(name, sizeof name, "fds%d_%d", csize, ndisks);
  opts_for(&o, csize, 2, ndisks, RIVER_PCOLL_HOLD_SERVED);
  write_x(comm, name, &o, 3, &a);
  before = count_fds();

  /* The default: the copies on the disks this rank serves. */
  rc = river_pcoll_open(comm, name, &o, &pc);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc != RIVER_SUCCESS)
    return;
  MT_CHECK_RC(river_pcoll_info_get(pc, &info), RIVER_SUCCESS);
  total = info.npartitions * info.replication;
  ranks = disk_ranks(comm, pc);
  for (i = 0; i < info.ndisks; i++)
    MT_CHECK(ranks[i] == i % csize);   /* shared disks */
  mine = copies_served(pc, ranks, crank);
  river_pcoll_close(pc);
  free(ranks);
  expect_open_fds(comm, name, &o, before, mine, &pc, "served");
  MPI_Allreduce(MPI_IN_PLACE, &mine, 1, MPI_INT, MPI_SUM, comm);
  MT_CHECK(mine == total);   /* each copy held by one rank */
  if (csize > 1)
    MT_CHECK(count_fds() - before - (crank == 0) < total);
  read_served(comm, pc, &a, 0);
  river_pcoll_close(pc);
  MT_CHECK(count_fds() == before);

  /* Every copy; none. */
  o.hold = RIVER_PCOLL_HOLD_ALL;
  expect_open_fds(comm, name, &o, before, total, &pc, "all");
  river_pcoll_close(pc);
  o.hold = RIVER_PCOLL_HOLD_NONE;
  expect_open_fds(comm, name, &o, before, 0, &pc, "none");
  /* Then this rank's partitions: every copy of each. */
  n = my_parts(comm, pc, parts);
  MT_CHECK_RC(river_pcoll_hold_partitions(pc, parts, n), RIVER_SUCCESS);
  MT_CHECK(count_fds() - before == n * info.replication + (crank == 0));
  /* Again, or with no partition: nothing more. */
  MT_CHECK_RC(river_pcoll_hold_partitions(pc, parts, n), RIVER_SUCCESS);
  MT_CHECK_RC(river_pcoll_hold_partitions(pc, NULL, 0), RIVER_SUCCESS);
  MT_CHECK(count_fds() - before == n * info.replication + (crank == 0));
  read_mine(comm, pc, &a);
  river_pcoll_close(pc);
  MT_CHECK(count_fds() == before);

  o.hold = RIVER_PCOLL_HOLD_SERVED;
  for (i = 0; i < 200; i++) {
    rc = river_pcoll_open(comm, name, &o, &pc);
    MT_CHECK_RC(rc, RIVER_SUCCESS);
    if (rc != RIVER_SUCCESS)
      break;
    if (i == 0)
      open_n = count_fds();
    same = same && count_fds() == open_n;
    river_pcoll_close(pc);
  }
  MT_CHECK(same);
  MT_CHECK(count_fds() == before);
  MPI_Barrier(comm);
}

/* Node-local disks on 2 emulated nodes (RIVER_NODE_NAME "na" on even
 * ranks, "nb" on odd ones): X written on MPI_COMM_WORLD (disk d on the
 * node of rank d), read on a communicator in reverse rank order, where
 * rank d mod 4 is on the other node than disk d: each rank holds the
 * copies of the disks river_pcoll_disk_ranks gives it, all of its own
 * node; after river_pcoll_remove_all a GD read still gives X whole.
 * Collective over MPI_COMM_WORLD. */
static void check_nodes(void)
{
  river_pcoll_opts o;
  river_pcoll *pc = NULL;
  river_pcoll_info info;
  MPI_Comm rev;
  struct sums a, got;
  int crank, before, mine, d, *ranks, rc;

  MT_CHECK(setenv("RIVER_NODE_NAME", rank % 2 ? "nb" : "na", 1) == 0);
  opts_for(&o, NR, 2, 0, RIVER_PCOLL_HOLD_SERVED);
  o.disks = "nodes-%n/d%d";
  write_x(MPI_COMM_WORLD, "nl", &o, 13, &a);
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &rev);
  MPI_Comm_rank(rev, &crank);
  o.disks = NULL;   /* the recorded pattern */
  before = count_fds();
  rc = river_pcoll_open(rev, "nl", &o, &pc);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS) {
    MT_CHECK_RC(river_pcoll_info_get(pc, &info), RIVER_SUCCESS);
    ranks = disk_ranks(rev, pc);
    /* Disk d's node is that of world rank d, comm rank size - 1 - d:
     * its node's ranks are those of that parity. */
    for (d = 0; d < info.ndisks; d++)
      MT_CHECK(ranks[d] % 2 == (size - 1 - d) % 2);
    mine = copies_served(pc, ranks, crank);
    MT_CHECK(mine == 2);
    MT_CHECK(count_fds() - before == mine + (crank == 0));
    free(ranks);
    MPI_Barrier(MPI_COMM_WORLD);
    MT_CHECK_RC(river_pcoll_remove_all(MPI_COMM_WORLD, "nl", &o),
                RIVER_SUCCESS);
    read_gd(rev, pc, &got);
    MT_CHECK(sums_equal(&got, &a));
    river_pcoll_close(pc);
  }
  MT_CHECK(count_fds() == before);
  MPI_Comm_free(&rev);
  MT_CHECK(unsetenv("RIVER_NODE_NAME") == 0);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* With the soft RLIMIT_NOFILE at 2 * (open + 1 + budget), a reader with
 * RIVER_PCOLL_HOLD_ALL opens `budget` copies up front on rank 0 (which
 * holds the metadata file: the 1) and budget + 1 on the others (the
 * metadata comes to them by broadcast), copy 0 of every partition
 * first; the rest open when read, and every block still reads.
 * Collective over MPI_COMM_WORLD. */
static void check_budget(void)
{
  river_pcoll_opts o;
  river_pcoll *pc = NULL;
  struct rlimit old, low;
  struct sums a;
  int before, during = -1, rc, budget = NR / 2;

  opts_for(&o, NR, 2, 0, RIVER_PCOLL_HOLD_ALL);
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
  budget++;   /* rank 0: its copies and the metadata; the others: copies */
  MT_CHECK(during - before == budget);
  if (during - before != budget)
    fprintf(stderr, "budget: rank %d: %d open before, %d while open\n",
            rank, before, during);
  if (rc == RIVER_SUCCESS) {
    read_mine(MPI_COMM_WORLD, pc, &a);
    river_pcoll_close(pc);
  }
  MT_CHECK(count_fds() - 1 == before);
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
  static const river_pcoll_hold holds[3] = {
      RIVER_PCOLL_HOLD_ALL, RIVER_PCOLL_HOLD_SERVED, RIVER_PCOLL_HOLD_NONE};
  MPI_Comm two = MPI_COMM_NULL;
  double t0;
  int repl, remove, h;

  if (pcolltest_begin(&argc, &argv, "test_pcoll_concurrent_mpi"))
    return 1;
  t0 = river_wtime();
  MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &two);
  for (h = 0; pcolltest_ready() && h < 3; h++)
    for (remove = 0; remove <= 1; remove++)
      for (repl = 1; repl <= 2; repl++) {
        if (rank == 0)
          one_case(MPI_COMM_SELF, repl, remove, holds[h]);
        if (two != MPI_COMM_NULL)
          one_case(two, repl, remove, holds[h]);
        one_case(MPI_COMM_WORLD, repl, remove, holds[h]);
      }
  if (pcolltest_ready()) {
    if (rank == 0)
      check_fds(MPI_COMM_SELF, 0);
    if (two != MPI_COMM_NULL)
      check_fds(two, 0);
    check_fds(MPI_COMM_WORLD, 0);
    check_fds(MPI_COMM_WORLD, 8);
    check_nodes();
    check_budget();
  }
  if (two != MPI_COMM_NULL)
    MPI_Comm_free(&two);
  return pcolltest_end("test_pcoll_concurrent_mpi", t0);
}
