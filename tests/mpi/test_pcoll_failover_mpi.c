/*
 * test_pcoll_failover_mpi - parallel collections (river/pcoll.h) with
 * damaged or missing copies, on 4 ranks, in a mkdtemp() root that rank 0
 * makes under $TMPDIR (or /tmp) and removes at the end. Rank 0 damages
 * the files of a committed collection (deletes a copy, flips a byte of a
 * block, puts another partition's valid file in a copy's place), then:
 *
 *   mirrored     with replication 2 the mirrors serve every block,
 *                correctly, whoever reads it; verify_copy names each
 *                damaged copy and passes the others; a reader that meets
 *                damage warns and goes on to the next copy, logging no
 *                error
 *   single       with replication 1 the same damage fails the read with
 *                an error naming collection, partition and block, and
 *                undamaged blocks still read; verify_copy agrees
 *   copy calls   on the mirrored collection, the calls of a reader that
 *                picks the copy itself (GD's): check_copy finds the lost
 *                copies, read_copy_level logs at the level asked and
 *                tells a lost copy from a bad block, read_copy_range's
 *                pieces make up a block and its stored checksum
 *
 * The records, read_check and the file helpers are in pcolltest.h.
 */
#define _GNU_SOURCE
#include "pcolltest.h"

/* ---------------------------------------------------- replication 2 */

/* Write "fo2" with the options o (set here: replication 2, disks
 * fo0..fo3, 4 KiB blocks) and say in e what it holds; verify_copy is
 * left to check_verify_mirrored. Collective. */
static void write_mirrored(river_pcoll_opts *o, struct expect *e)
{
  struct sums m = {0, 0, 0};
  size_t n = counts[rank];
  unsigned char *recs = make_recs(n, (uint64_t)rank << 36, 5, 31, &m);

  o->root = root;
  o->disks = "fo%d";
  o->replication = 2;
  o->block_size = 4096;
  MT_CHECK_RC(write_coll(MPI_COMM_WORLD, "fo2", o, recs, n, NULL),
              RIVER_SUCCESS);
  memset(e, 0, sizeof *e);
  e->name = "fo2";
  e->replication = 2;
  e->ndisks = NR;
  e->block_size = 4096;
  e->no_verify = 1; /* checked by check_verify_mirrored, copy by copy */
  expect_from(e, &m, n);
  free(recs);
}

/* Rank 0 damages "fo2": partition 0 copy 0 (disk 0) deleted; partition 2
 * copy 0 (disk 2) block 1 and copy 1 (disk 3) block 3 each get a
 * flipped byte (so every block of it has one good copy, but no copy is
 * whole); partition 3 copy 0 (disk 3) is replaced by a valid collection
 * file that does not match the metadata (partition 0's copy 1).
 * Collective. */
static void damage_mirrored(const river_pcoll_opts *o)
{
  river_pcoll *pc = NULL;
  int rc;

  rc = river_pcoll_open(MPI_COMM_WORLD, "fo2", o, &pc);
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
}

/* verify_blocks on copy c of partition p agrees with verify_copy (its
 * answer want, first bad block want_bad): the same code, that block
 * marked (every block when the whole file is bad, none when intact); and
 * refuses a wrong block count or copy, leaving its outputs alone. */
static void check_verify_blocks(river_pcoll *pc, int p, int c, int want,
                                uint64_t want_bad)
{
  unsigned char *marks;
  uint64_t nblocks = 0, nbad = 77, b, n = 0;
  size_t rpb;

  MT_CHECK_RC(river_pcoll_blocks(pc, p, &rpb, &nblocks), RIVER_SUCCESS);
  marks = malloc((size_t)nblocks + 1);
  MT_CHECK(marks != NULL);
  if (marks == NULL)
    return;
  memset(marks, 9, (size_t)nblocks + 1);
  MT_CHECK_RC(river_pcoll_verify_blocks(pc, p, c, marks, nblocks + 1, &nbad),
              RIVER_EINVAL);
  MT_CHECK_RC(river_pcoll_verify_blocks(pc, p, 2, marks, nblocks, &nbad),
              RIVER_EINVAL);
  MT_CHECK(nbad == 77 && marks[0] == 9);
  MT_CHECK_RC(river_pcoll_verify_blocks(pc, p, c, marks, nblocks, &nbad),
              want);
  for (b = 0; b < nblocks; b++)
    n += marks[b];
  MT_CHECK(n == nbad && marks[nblocks] == 9);
  if (want == RIVER_SUCCESS)
    MT_CHECK(nbad == 0);
  else if (want_bad == UINT64_MAX)
    MT_CHECK(nbad == nblocks);
  else
    MT_CHECK(nbad >= 1 && nbad < nblocks && marks[want_bad] == 1);
  free(marks);
}

/* verify_copy on the damaged "fo2" reports each damaged copy, naming
 * it, and passes the others (the copies spread over the ranks). */
static void check_verify_mirrored(river_pcoll *pc)
{
  int p, c;

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
      check_verify_blocks(pc, p, c, want, want_bad);
      if (p == 2 && c == 0)
        MT_CHECK(mt_logged("error|", "collection fo2: partition 2 copy on "
                           "disk 2", "block 1 "));
      if (p == 2 && c == 1)
        MT_CHECK(mt_logged("error|", "collection fo2: partition 2 copy on "
                           "disk 3", "block 3 "));
      if (p == 0 && c == 0)
        MT_CHECK(mt_logged("error|", "collection fo2: partition 0 copy on "
                           "disk 0", NULL));
      if (p == 3 && c == 0)
        MT_CHECK(mt_logged("warn|", "partition 3 copy on disk 3",
                           "does not match the metadata"));
      if (want == RIVER_SUCCESS)
        MT_CHECK(!mt_logged(NULL, "partition", NULL));
    }
}

/* The reader of a damaged block warned and went on to the mirror; the
 * same for a mismatched copy. Neither is a failed read, so nothing is
 * logged as an error: the single-disk layer's checksum message (naming
 * the file and block) comes as a warning too. */
static void check_read_warns(river_pcoll *pc)
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

/* The calls of a reader that picks the copy itself refuse bad
 * arguments without a word, outputs untouched. Block 9 of partition 2
 * is its last (2345 = 9 x 256 + 41 records). */
static void check_copy_calls_refuse(river_pcoll *pc)
{
  unsigned char a[4096];
  size_t got = 77, pad = 77;
  uint32_t crc = 77;
  int dead = 77;

  mt_log_clear();
  MT_CHECK_RC(river_pcoll_check_copy(pc, 0, 2, RIVER_LOG_WARN), RIVER_EINVAL);
  MT_CHECK_RC(river_pcoll_check_copy(pc, 1, -1, RIVER_LOG_WARN),
              RIVER_EINVAL);
  MT_CHECK_RC(river_pcoll_check_copy(pc, NR, 0, RIVER_LOG_WARN),
              RIVER_EINVAL);
  MT_CHECK_RC(river_pcoll_check_copy(pc, 1, 0, RIVER_LOG_DEBUG + 1),
              RIVER_EINVAL);
  MT_CHECK_RC(river_pcoll_read_copy_level(pc, 2, 0, 0, a, sizeof a, &got,
                                          RIVER_LOG_ERROR - 1, &dead),
              RIVER_EINVAL);
  MT_CHECK_RC(river_pcoll_read_copy_level(pc, 2, 2, 0, a, sizeof a, &got,
                                          RIVER_LOG_WARN, &dead),
              RIVER_EINVAL);
  MT_CHECK_RC(river_pcoll_read_copy_level(pc, 2, 0, 10, a, sizeof a, &got,
                                          RIVER_LOG_WARN, &dead),
              RIVER_EINVAL);
  MT_CHECK_RC(river_pcoll_read_copy_level(pc, 2, 0, 0, NULL, sizeof a, &got,
                                          RIVER_LOG_WARN, &dead),
              RIVER_EINVAL);
  MT_CHECK_RC(river_pcoll_read_copy_level(pc, 2, 0, 0, a, sizeof a, NULL,
                                          RIVER_LOG_WARN, &dead),
              RIVER_EINVAL);
  MT_CHECK_RC(river_pcoll_read_copy_level(pc, 2, 0, 0, a, sizeof a - 1, &got,
                                          RIVER_LOG_WARN, &dead),
              RIVER_ENOBUFS);
  MT_CHECK(got == 77 && dead == 77);
  MT_CHECK_RC(river_pcoll_read_copy_range(pc, 2, 1, 9, 41, 1, a, sizeof a,
                                          &pad, &crc, RIVER_LOG_WARN, &dead),
              RIVER_EINVAL);
  MT_CHECK_RC(river_pcoll_read_copy_range(pc, 2, 1, 9, 0, 0, a, sizeof a,
                                          &pad, &crc, RIVER_LOG_WARN, &dead),
              RIVER_EINVAL);
  MT_CHECK_RC(river_pcoll_read_copy_range(pc, 2, 1, 9, 0, 42, a, sizeof a,
                                          &pad, &crc, RIVER_LOG_WARN, &dead),
              RIVER_EINVAL);
  MT_CHECK_RC(river_pcoll_read_copy_range(pc, 2, 1, 9, 1, UINT64_MAX, a,
                                          sizeof a, &pad, &crc,
                                          RIVER_LOG_WARN, &dead),
              RIVER_EINVAL);
  MT_CHECK_RC(river_pcoll_read_copy_range(pc, 2, 1, 10, 0, 1, a, sizeof a,
                                          &pad, &crc, RIVER_LOG_WARN, &dead),
              RIVER_EINVAL);
  MT_CHECK_RC(river_pcoll_read_copy_range(pc, 2, 2, 0, 0, 1, a, sizeof a,
                                          &pad, &crc, RIVER_LOG_WARN, &dead),
              RIVER_EINVAL);
  MT_CHECK_RC(river_pcoll_read_copy_range(pc, 2, 1, 0, 0, 1, NULL, sizeof a,
                                          &pad, &crc, RIVER_LOG_WARN, &dead),
              RIVER_EINVAL);
  MT_CHECK_RC(river_pcoll_read_copy_range(pc, 2, 1, 0, 0, 1, a, sizeof a,
                                          NULL, &crc, RIVER_LOG_WARN, &dead),
              RIVER_EINVAL);
  MT_CHECK_RC(river_pcoll_read_copy_range(pc, 2, 1, 0, 0, 1, a, sizeof a,
                                          &pad, NULL, RIVER_LOG_WARN, &dead),
              RIVER_EINVAL);
  MT_CHECK_RC(river_pcoll_read_copy_range(pc, 2, 1, 0, 0, 1, a, sizeof a,
                                          &pad, &crc, RIVER_LOG_DEBUG + 1,
                                          &dead),
              RIVER_EINVAL);
  MT_CHECK(pad == 77 && crc == 77 && dead == 77);
  MT_CHECK(!mt_logged(NULL, NULL, NULL));
}

/* check_copy on the damaged "fo2": the missing copy and the one that
 * does not match the metadata are lost, said once at the level asked;
 * every other copy (a damaged block is no lost copy) passes. */
static void check_copy_check(river_pcoll *pc)
{
  int p, c;

  mt_log_clear();
  MT_CHECK_RC(river_pcoll_check_copy(pc, 0, 0, RIVER_LOG_WARN),
              RIVER_ENOTFOUND);
  MT_CHECK_RC(river_pcoll_check_copy(pc, 3, 0, RIVER_LOG_WARN),
              RIVER_ECORRUPT);
  MT_CHECK(mt_logged("warn|", "partition 0: copy on disk 0 unusable", NULL));
  MT_CHECK(mt_logged("warn|", "partition 3 copy on disk 3",
                     "does not match the metadata"));
  MT_CHECK(!mt_logged("error|", NULL, NULL));
  for (p = 0; p < NR; p++)
    for (c = 0; c < 2; c++)
      if (!(c == 0 && (p == 0 || p == 3)))
        MT_CHECK_RC(river_pcoll_check_copy(pc, p, c, RIVER_LOG_WARN),
                    RIVER_SUCCESS);
  /* Lost for good: the same answer, unlogged, whatever the level. */
  mt_log_clear();
  MT_CHECK_RC(river_pcoll_check_copy(pc, 0, 0, RIVER_LOG_ERROR),
              RIVER_ENOTFOUND);
  MT_CHECK_RC(river_pcoll_check_copy(pc, 3, 0, RIVER_LOG_ERROR),
              RIVER_ECORRUPT);
  MT_CHECK(!mt_logged(NULL, NULL, NULL));
}

/* read_copy_level on the damaged "fo2": a copy's damaged block fails at
 * the level asked (warn, debug: unsaid at warn, error: as read_copy),
 * *dead 0; its good blocks read as the mirror holds them; a lost copy
 * fails with *dead 1. */
static void check_copy_level(river_pcoll *pc)
{
  unsigned char a[4096], b[4096];
  size_t got = 0;
  int dead = 77;

  mt_log_clear();
  MT_CHECK_RC(river_pcoll_read_copy_level(pc, 2, 0, 1, a, sizeof a, &got,
                                          RIVER_LOG_WARN, &dead),
              RIVER_ECORRUPT);
  MT_CHECK(dead == 0);
  MT_CHECK(mt_logged("warn|", "fo2.p2.", "block 1: checksum mismatch"));
  MT_CHECK(mt_logged("warn|", "collection fo2: partition 2 block 1",
                     "copy on disk 2 failed"));
  MT_CHECK(!mt_logged("error|", NULL, NULL));
  dead = 77;
  MT_CHECK_RC(river_pcoll_read_copy_level(pc, 2, 0, 2, a, sizeof a, &got,
                                          RIVER_LOG_WARN, &dead),
              RIVER_SUCCESS);
  MT_CHECK(dead == 0 && got == 256);
  MT_CHECK_RC(river_pcoll_read_copy_level(pc, 2, 1, 2, b, sizeof b, &got,
                                          RIVER_LOG_WARN, NULL),
              RIVER_SUCCESS);
  MT_CHECK(got == 256 && memcmp(a, b, 256 * RECSZ) == 0);
  mt_log_clear();
  MT_CHECK_RC(river_pcoll_read_copy_level(pc, 2, 1, 3, a, sizeof a, &got,
                                          RIVER_LOG_DEBUG, &dead),
              RIVER_ECORRUPT);
  MT_CHECK(!mt_logged(NULL, NULL, NULL));
  MT_CHECK_RC(river_pcoll_read_copy_level(pc, 2, 1, 3, a, sizeof a, &got,
                                          RIVER_LOG_ERROR, &dead),
              RIVER_ECORRUPT);
  MT_CHECK(mt_logged("error|", "fo2.p2.", "block 3: checksum mismatch"));
  dead = 0;
  MT_CHECK_RC(river_pcoll_read_copy_level(pc, 0, 0, 0, a, sizeof a, &got,
                                          RIVER_LOG_WARN, &dead),
              RIVER_ENOTFOUND);
  MT_CHECK(dead == 1);
  dead = 0;
  MT_CHECK_RC(river_pcoll_read_copy_level(pc, 3, 0, 0, a, sizeof a, &got,
                                          RIVER_LOG_WARN, &dead),
              RIVER_ECORRUPT);
  MT_CHECK(dead == 1);
}

/* read_copy_range on the damaged "fo2": two pieces of partition 2's last
 * block (41 records in a 4 KiB extent), laid end to end, are its records
 * then its padding, and their CRC32C is the stored checksum both give;
 * the damaged block 1 of copy 0 comes unverified, and its checksum does
 * not match; a short buffer is refused once the padding is known; a lost
 * copy fails with *dead 1. */
static void check_copy_range(river_pcoll *pc)
{
  unsigned char a[4096], b[4096];
  size_t got = 0, pad = 77, pad2 = 77;
  uint32_t crc = 1, crc2 = 2, sum = 0;
  int dead = 77;

  MT_CHECK_RC(river_pcoll_read_copy_range(pc, 2, 1, 9, 0, 20, a, sizeof a,
                                          &pad, &crc, RIVER_LOG_WARN, &dead),
              RIVER_SUCCESS);
  MT_CHECK(pad == 0 && dead == 0);
  MT_CHECK_RC(river_pcoll_read_copy_range(pc, 2, 1, 9, 20, 21, a + 20 * RECSZ,
                                          sizeof a - 20 * RECSZ, &pad2, &crc2,
                                          RIVER_LOG_WARN, NULL),
              RIVER_SUCCESS);
  MT_CHECK(pad2 == 4096 - 41 * RECSZ && crc2 == crc);
  MT_CHECK(river_crc32c(a, 4096, &sum) == RIVER_SUCCESS && sum == crc);
  MT_CHECK_RC(river_pcoll_read_copy_level(pc, 2, 1, 9, b, sizeof b, &got,
                                          RIVER_LOG_WARN, NULL),
              RIVER_SUCCESS);
  MT_CHECK(got == 41 && memcmp(a, b, 41 * RECSZ) == 0);
  pad = 77;
  MT_CHECK_RC(river_pcoll_read_copy_range(pc, 2, 0, 1, 0, 256, a, sizeof a,
                                          &pad, &crc, RIVER_LOG_WARN, &dead),
              RIVER_SUCCESS);
  sum = 0;
  MT_CHECK(pad == 0 && dead == 0);
  MT_CHECK(river_crc32c(a, 4096, &sum) == RIVER_SUCCESS && sum != crc);
  pad = 77;
  MT_CHECK_RC(river_pcoll_read_copy_range(pc, 2, 1, 9, 20, 21, a, 21 * RECSZ,
                                          &pad, &crc, RIVER_LOG_WARN, &dead),
              RIVER_ENOBUFS);
  MT_CHECK(pad == 4096 - 41 * RECSZ);
  dead = 0;
  MT_CHECK_RC(river_pcoll_read_copy_range(pc, 0, 0, 0, 0, 1, a, sizeof a,
                                          &pad, &crc, RIVER_LOG_WARN, &dead),
              RIVER_ENOTFOUND);
  MT_CHECK(dead == 1);
}

/* The copy calls on a fresh reader of the damaged "fo2" (nothing known
 * lost yet), by rank 0. Collective. */
static void test_failover_copy_calls(const river_pcoll_opts *o)
{
  river_pcoll *pc = NULL;
  int rc = river_pcoll_open(MPI_COMM_WORLD, "fo2", o, &pc);

  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS && rank == 0) {
    check_copy_calls_refuse(pc);
    check_copy_check(pc);
    check_copy_level(pc);
    check_copy_range(pc);
  }
  if (rc == RIVER_SUCCESS)
    river_pcoll_close(pc);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Replication 2: a missing copy and damaged blocks are covered by the
 * mirrors; verify_copy names each damage. */
static void test_failover_mirrored(void)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  struct expect e;
  river_pcoll *pc = NULL;
  int rc;

  write_mirrored(&o, &e);
  o.disks = NULL;
  damage_mirrored(&o);

  /* Every block still reads, correctly, whoever reads it. */
  mt_log_clear();
  read_check_all_ways(&e, "fo%d");
  /* verify_copy names each damaged copy; readers warn, never fail. */
  mt_log_clear();
  rc = river_pcoll_open(MPI_COMM_WORLD, "fo2", &o, &pc);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS) {
    check_verify_mirrored(pc);
    check_read_warns(pc);
    river_pcoll_close(pc);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  test_failover_copy_calls(&o);
}

/* ---------------------------------------------------- replication 1 */

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
  /* A reader keeps the files it opened (the unlinked one too): a new
   * reader meets the damage. */
  if (rc == RIVER_SUCCESS) {
    river_pcoll_close(pc);
    rc = river_pcoll_open(MPI_COMM_WORLD, "fo1", &o, &pc);
    MT_CHECK_RC(rc, RIVER_SUCCESS);
  }
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

/* ----------------------------------------------------------------- main */

int main(int argc, char **argv)
{
  double t0 = 0;

  if (pcolltest_begin(&argc, &argv, "test_pcoll_failover_mpi") != 0)
    return 1;
  if (pcolltest_ready()) {
    t0 = river_wtime();
    test_failover_mirrored();
    test_failover_single();
  }
  return pcolltest_end("test_pcoll_failover_mpi", t0);
}
