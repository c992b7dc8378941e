/*
 * test_pcoll_parts_mpi - collections whose writers begin their own
 * partitions (river_pcoll_begin_partition), on 4 ranks:
 *
 *   numbering  ranks begin 0, 1, 2 or 3 partitions (one empty) with
 *              scattered orders; the commit numbers them by order, each
 *              partition holds exactly what was written to it (digest
 *              and ids), its first copy is on its writer's disk, every
 *              copy verifies, and the declared order holds; read by 4,
 *              3 and 1 ranks
 *   replacing  a second write of the name removes the first one's files
 *              (which are not where partition p's usually are); remove
 *              takes every file
 *   failures   two partitions of one order, records written outside a
 *              partition while other ranks begin them, a begin after
 *              records on the same rank, keys out of the declared order,
 *              injected faults before the files are final and before
 *              the metadata is: every rank gets the error, with its
 *              message, and nothing of the write is left (no data file,
 *              no temporary, no metadata), the collection it would have
 *              replaced intact
 *   bad calls  NULL, a reader
 */
#define _GNU_SOURCE
#include "pcolltest.h"

/* The plan: which orders each rank begins, and how many records each
 * partition gets (by order). Order k's records have ids k*100000 + i,
 * so ascending orders hold ascending keys. */
static const int nbegin[NR] = {2, 0, 1, 3};
static const uint64_t orders[NR][3] = {{5, 1}, {0}, {3}, {0, 4, 2}};
#define NPARTS 6
static const size_t part_recs[NPARTS] = {700, 1, 2500, 333, 0, 1200};

/* Write collection name with the plan, the orders shifted by `shift`
 * (a rank's orders may be replaced with `dup` to make two equal);
 * returns the commit's code. Collective. */
static int write_parts(const char *name, const river_pcoll_opts *o,
                       struct sums *mine, int dup_rank)
{
  river_pcoll *pc = NULL;
  int i, rc;

  rc = river_pcoll_create(MPI_COMM_WORLD, name, schema, o, &pc);
  if (rc != RIVER_SUCCESS)
    return rc;
  for (i = 0; i < nbegin[rank]; i++) {
    uint64_t k = orders[rank][i];
    size_t n = part_recs[k], done = 0, c;
    unsigned char *recs = make_recs(n, k * 100000, 1, k, mine);

    MT_CHECK_RC(river_pcoll_begin_partition(pc, rank == dup_rank ? 1 : k),
                RIVER_SUCCESS);
    while (done < n) {   /* uneven pieces */
      c = n - done < 97 + done ? n - done : 97 + done;
      MT_CHECK_RC(river_pcoll_write(pc, recs + done * RECSZ, c),
                  RIVER_SUCCESS);
      done += c;
    }
    free(recs);
  }
  return river_pcoll_commit(pc);
}

/* Every .rdat file and temporary of collection name under the root's
 * four disks. */
static int files_of(const char *name)
{
  char dir[2100], sub[16], has[64];
  int d, n = 0;

  snprintf(has, sizeof has, "%s.p", name);
  for (d = 0; d < NR; d++) {
    snprintf(sub, sizeof sub, "disk%d", d);
    path_of(dir, sizeof dir, sub);
    n += count_files(dir, has, NULL);
  }
  return n;
}

/* Open name and check it against the plan: partition p holds order p's
 * records, its first copy on the disk of the rank that wrote it. */
static void check_parts(MPI_Comm comm, const char *name,
                        const river_pcoll_opts *o, const struct sums *want)
{
  river_pcoll *pc = NULL;
  river_pcoll_info info;
  struct sums mine = {0, 0, 0}, all;
  unsigned char *buf = malloc(RIVER_COLL_DEFAULT_BLOCK_SIZE);
  int crank, csize, p, c, r, i, rc;

  MPI_Comm_rank(comm, &crank);
  MPI_Comm_size(comm, &csize);
  rc = river_pcoll_open(comm, name, o, &pc);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc != RIVER_SUCCESS) {
    free(buf);
    return;
  }
  MT_CHECK_RC(river_pcoll_info_get(pc, &info), RIVER_SUCCESS);
  MT_CHECK(info.npartitions == NPARTS);
  MT_CHECK(info.ordered == 1);
  for (p = 0; p < NPARTS && p < info.npartitions; p++) {
    river_pcoll_part part;
    uint64_t b, nb = 0, next = (uint64_t)p * 100000;
    size_t rpb = 0, n;
    int writer = -1;

    for (r = 0; r < NR; r++)
      for (i = 0; i < nbegin[r]; i++)
        if (orders[r][i] == (uint64_t)p)
          writer = r;
    MT_CHECK_RC(river_pcoll_partition(pc, p, &part), RIVER_SUCCESS);
    MT_CHECK(part.nrecords == part_recs[p]);
    MT_CHECK(part.first_disk == writer % info.ndisks);
    MT_CHECK_RC(river_pcoll_blocks(pc, p, &rpb, &nb), RIVER_SUCCESS);
    if (p % csize != crank)
      continue;
    for (b = 0; b < nb; b++) {
      n = 0;
      MT_CHECK_RC(river_pcoll_read_block(pc, p, b, buf,
                                         RIVER_COLL_DEFAULT_BLOCK_SIZE, &n),
                  RIVER_SUCCESS);
      for (i = 0; i < (int)n; i++) {
        uint64_t id;
        memcpy(&id, buf + (size_t)i * RECSZ, 8);
        MT_CHECK(id == next++);   /* its own records, in order */
        MT_CHECK(buf[(size_t)i * RECSZ + 13] == '0' + writer);
        sums_add(&mine, buf + (size_t)i * RECSZ);
      }
    }
    for (c = 0; c < info.replication; c++) {
      uint64_t bad = 99;
      MT_CHECK_RC(river_pcoll_verify_copy(pc, p, c, &bad), RIVER_SUCCESS);
    }
  }
  MT_CHECK_RC(river_pcoll_close(pc), RIVER_SUCCESS);
  sums_reduce(comm, &mine, &all);
  MT_CHECK(sums_equal(&all, want));
  free(buf);
}

static void test_numbering(river_pcoll_opts *o)
{
  struct sums mine = {0, 0, 0}, want;
  MPI_Comm three = MPI_COMM_NULL;

  MT_CHECK_RC(write_parts("runs", o, &mine, -1), RIVER_SUCCESS);
  sums_reduce(MPI_COMM_WORLD, &mine, &want);
  check_parts(MPI_COMM_WORLD, "runs", o, &want);
  MPI_Comm_split(MPI_COMM_WORLD, rank < 3 ? 0 : MPI_UNDEFINED, rank, &three);
  if (three != MPI_COMM_NULL) {
    check_parts(three, "runs", o, &want);
    MPI_Comm_free(&three);
  }
  if (rank == 0)
    check_parts(MPI_COMM_SELF, "runs", o, &want);
  MPI_Barrier(MPI_COMM_WORLD);
  MT_CHECK(files_of("runs") == NPARTS * o->replication);
  MT_CHECK(count_tmp() == 0);
}

/* A second write of the name replaces the first and removes its files;
 * remove then takes everything. */
static void test_replace(river_pcoll_opts *o)
{
  struct sums mine = {0, 0, 0}, want;

  MT_CHECK_RC(write_parts("runs", o, &mine, -1), RIVER_SUCCESS);
  sums_reduce(MPI_COMM_WORLD, &mine, &want);
  MPI_Barrier(MPI_COMM_WORLD);
  MT_CHECK(files_of("runs") == NPARTS * o->replication);
  check_parts(MPI_COMM_WORLD, "runs", o, &want);
  if (rank == 0) {
    MT_CHECK_RC(river_pcoll_remove("runs", o), RIVER_SUCCESS);
    MT_CHECK(files_of("runs") == 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* A write that must fail with want on every rank (the log holding
 * text), leaving nothing of itself and the collection "keep" intact. */
static void expect_failed(river_pcoll_opts *o, const char *fault, int dup,
                          int want, const char *text,
                          const struct sums *keep)
{
  struct sums mine = {0, 0, 0};

  mt_log_clear();
  if (fault)
    setenv("RIVER_TEST_FAULT", fault, 1);
  MT_CHECK_RC(write_parts("keep", o, &mine, dup), want);
  unsetenv("RIVER_TEST_FAULT");
  if (text)
    MT_CHECK(mt_logged("error|", text, NULL) || rank != 0);
  MPI_Barrier(MPI_COMM_WORLD);
  MT_CHECK(files_of("keep") == NPARTS * o->replication);
  MT_CHECK(count_tmp() == 0);
  check_parts(MPI_COMM_WORLD, "keep", o, keep);
}

static void test_failures(river_pcoll_opts *o)
{
  struct sums mine = {0, 0, 0}, keep;
  river_pcoll *pc = NULL;
  unsigned char *recs = make_recs(10, 0, 1, 0, NULL);
  int rc;

  MT_CHECK_RC(write_parts("keep", o, &mine, -1), RIVER_SUCCESS);
  sums_reduce(MPI_COMM_WORLD, &mine, &keep);

  /* Rank 3 begins its three partitions all with order 1, as rank 0. */
  expect_failed(o, NULL, 3, RIVER_EINVAL,
                "two partitions begun with order 1", &keep);
  expect_failed(o, "commit-files:fail", -1, RIVER_EIO, NULL, &keep);
  expect_failed(o, "commit-meta:fail", -1, RIVER_EIO, NULL, &keep);
  expect_failed(o, "commit-rename:fail", -1, RIVER_EIO, "injected fault",
                &keep);

  /* Rank 1 writes records without a partition while others begin. */
  mt_log_clear();
  rc = river_pcoll_create(MPI_COMM_WORLD, "keep", schema, o, &pc);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS) {
    if (rank == 1)
      MT_CHECK_RC(river_pcoll_write(pc, recs, 10), RIVER_SUCCESS);
    else
      MT_CHECK_RC(river_pcoll_begin_partition(pc, (uint64_t)rank),
                  RIVER_SUCCESS);
    MT_CHECK_RC(river_pcoll_commit(pc), RIVER_ESTATE);
    MT_CHECK(rank != 1 || mt_logged("error|", "outside a partition", NULL));
  }
  /* Rank 2 writes, then begins: refused there, the commit fails. */
  rc = river_pcoll_create(MPI_COMM_WORLD, "keep", schema, o, &pc);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS) {
    if (rank == 2) {
      MT_CHECK_RC(river_pcoll_write(pc, recs, 10), RIVER_SUCCESS);
      MT_CHECK_RC(river_pcoll_begin_partition(pc, 7), RIVER_ESTATE);
      MT_CHECK(mt_logged("error|", "before its first", NULL));
      MT_CHECK_RC(river_pcoll_write(pc, recs, 10), RIVER_ESTATE);
    } else {
      MT_CHECK_RC(river_pcoll_begin_partition(pc, (uint64_t)rank),
                  RIVER_SUCCESS);
    }
    MT_CHECK_RC(river_pcoll_commit(pc), RIVER_ESTATE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MT_CHECK(files_of("keep") == NPARTS * o->replication);
  MT_CHECK(count_tmp() == 0);
  check_parts(MPI_COMM_WORLD, "keep", o, &keep);

  /* Keys out of the declared order: order 0 gets the largest ids. */
  mt_log_clear();
  rc = river_pcoll_create(MPI_COMM_WORLD, "unordered", schema, o, &pc);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS) {
    unsigned char *r = make_recs(5, (uint64_t)(NR - rank) * 1000, 1, 0,
                                 NULL);
    MT_CHECK_RC(river_pcoll_begin_partition(pc, (uint64_t)rank),
                RIVER_SUCCESS);
    MT_CHECK_RC(river_pcoll_write(pc, r, 5), RIVER_SUCCESS);
    MT_CHECK_RC(river_pcoll_commit(pc), RIVER_EINVAL);
    MT_CHECK(rank != 0 || mt_logged("error|", "declared ordered", NULL));
    free(r);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MT_CHECK(files_of("unordered") == 0);
  MT_CHECK(count_tmp() == 0);
  free(recs);
}

static void test_bad_calls(river_pcoll_opts *o)
{
  river_pcoll *pc = NULL;

  MT_CHECK_RC(river_pcoll_begin_partition(NULL, 0), RIVER_EINVAL);
  if (river_pcoll_open(MPI_COMM_WORLD, "keep", o, &pc) == RIVER_SUCCESS) {
    MT_CHECK_RC(river_pcoll_begin_partition(pc, 0), RIVER_EINVAL);
    river_pcoll_close(pc);
  } else {
    MT_CHECK(0);
  }
}

int main(int argc, char **argv)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  double t0 = 0;

  if (pcolltest_begin(&argc, &argv, "test_pcoll_parts_mpi") != 0)
    return 1;
  if (pcolltest_ready()) {
    t0 = river_wtime();
    o.root = root;
    o.replication = 2;
    o.ordered = 1;
    o.block_size = 4096;   /* several blocks per partition */
    test_numbering(&o);
    test_replace(&o);
    test_failures(&o);
    test_bad_calls(&o);
  }
  return pcolltest_end("test_pcoll_parts_mpi", t0);
}
