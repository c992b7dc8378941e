/*
 * test_collection.c - single-disk collections written and read back:
 * round trips (exact bytes and an order-independent checksum) over
 * record sizes, counts and block sizes; stream and random access;
 * default options; appends cut any way give the same file; the header
 * layout; direct I/O; a writer's memory follows the data, not the block
 * size, and its growing buffer changes no byte; atomic commit; failing
 * writes; bad arguments.
 *
 * Damaged, truncated, extended and lying files are tested in
 * test_collection_damage.c; the helpers both use are in
 * collection_test.h. Files live in a mkdtemp() directory under $TMPDIR
 * (or /tmp), removed at the end. Log messages are captured to check what
 * errors say.
 */
#include "collection_test.h"

#include <signal.h>
#include <sys/resource.h>

/* -------------------------------------------------------- round trips */

static void test_coll_round_trip(void **state)
{
  static const size_t sizes[] = {1, 100, 4096, 5000};
  static const size_t blocks[] = {4096, 8192};
  const char *path = path_of("rt.coll");
  size_t s, b, i, rs, bs, rpb, counts[5];

  for (s = 0; s < 4; s++) {
    for (b = 0; b < 2; b++) {
      rs = sizes[s];
      bs = blocks[b];
      if (bs < rs)
        continue;
      rpb = bs / rs;
      counts[0] = 0;
      counts[1] = 1;
      counts[2] = rpb;
      counts[3] = rpb + 1;
      counts[4] = 3 * rpb + 7;
      for (i = 0; i < 5; i++) {
        write_coll(path, rs, counts[i], bs, "round trip", 0);
        check_coll(path, rs, counts[i], bs, 0);
      }
    }
  }
  /* The default block size (1 MiB), several blocks of 100-byte records. */
  write_coll(path, 100, 25000, RIVER_COLL_DEFAULT_BLOCK_SIZE, NULL, 0);
  check_coll(path, 100, 25000, RIVER_COLL_DEFAULT_BLOCK_SIZE, 0);
  unlink(path);
}

static void test_coll_default_options(void **state)
{
  const char *path = path_of("defaults.coll");
  river_coll *c = NULL;
  river_coll_info info;
  unsigned char rec[100] = {1, 2, 3};

  assert_int_equal(river_coll_create(path, 100, NULL, &c), RIVER_SUCCESS);
  assert_int_equal(river_coll_append(c, rec, 1), RIVER_SUCCESS);
  assert_int_equal(river_coll_commit(c), RIVER_SUCCESS);
  assert_int_equal(river_coll_open(path, 0, NULL, &c), RIVER_SUCCESS);
  assert_int_equal(river_coll_stat(c, &info), RIVER_SUCCESS);
  assert_int_equal(info.block_size, RIVER_COLL_DEFAULT_BLOCK_SIZE);
  assert_int_equal(info.records_per_block,
                   RIVER_COLL_DEFAULT_BLOCK_SIZE / 100);
  assert_string_equal(info.label, "");
  river_coll_close(c);
  unlink(path);
}

/* Any way of cutting the same records into appends gives the same file. */
static void test_coll_append_split_is_invisible(void **state)
{
  const char *a = path_of("split_a.coll"), *b = path_of("split_b.coll");
  river_coll_opts o = RIVER_COLL_OPTS_INIT;
  unsigned char *recs = make_records(0, 500, 100), *fa, *fb;
  river_coll *c = NULL;
  size_t la, lb, i;

  write_coll(a, 100, 500, 8192, "same", 0);
  o.block_size = 8192;
  o.label = "same";
  assert_int_equal(river_coll_create(b, 100, &o, &c), RIVER_SUCCESS);
  assert_int_equal(river_coll_append(c, recs, 0), RIVER_SUCCESS);
  assert_int_equal(river_coll_append(c, NULL, 0), RIVER_SUCCESS);
  for (i = 0; i < 500; i++)
    assert_int_equal(river_coll_append(c, recs + i * 100, 1), RIVER_SUCCESS);
  assert_int_equal(river_coll_commit(c), RIVER_SUCCESS);
  fa = slurp(a, &la);
  fb = slurp(b, &lb);
  assert_int_equal(la, lb);
  assert_memory_equal(fa, fb, la);
  free(fa);
  free(fb);
  free(recs);
  unlink(a);
  unlink(b);
}

static uint32_t get32(const unsigned char *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
         | (uint32_t)p[3] << 24;
}

static uint64_t get64(const unsigned char *p)
{
  return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* The header as documented at the top of src/collection_internal.h. */
static void test_coll_header_layout(void **state)
{
  const char *path = path_of("layout.coll");
  unsigned char *f;
  uint32_t crc = 0, tcrc = 0;
  river_coll *c;
  river_coll_info info;
  size_t len, i;

  write_coll(path, 100, 250, 8192, "sort p3 c1", 0);
  f = slurp(path, &len);
  assert_int_equal(len, 4096 + 3 * 8192 + 4096 + 16);
  assert_memory_equal(f, "RIVERCOL", 8);
  assert_int_equal(get32(f + 8), 1);
  assert_int_equal(get32(f + 12), 4096);
  assert_int_equal(get64(f + 16), 100);
  assert_int_equal(get64(f + 24), 8192);
  assert_int_equal(get64(f + 32), 81);
  assert_int_equal(get64(f + 40), 250);
  assert_int_equal(get64(f + 48), 4);
  assert_int_equal(get64(f + 56), 4096 + 3 * 8192 + 4096);
  assert_int_equal(get32(f + 68), 0);
  assert_string_equal((const char *)f + 72, "sort p3 c1");
  for (i = 72 + strlen("sort p3 c1"); i < 4092; i++)
    assert_int_equal(f[i], 0);
  river_crc32c(f, 4092, &crc);
  assert_int_equal(get32(f + 4092), crc);
  river_crc32c(f + len - 16, 16, &tcrc);
  assert_int_equal(get32(f + 64), tcrc);
  /* Block 1's CRC covers its whole padded extent. */
  crc = 0;
  river_crc32c(f + 4096 + 8192, 8192, &crc);
  assert_int_equal(get32(f + len - 16 + 4), crc);
  /* The records sit at the start of each block, padding is zero. */
  for (i = 81 * 100; i < 8192; i++)
    assert_int_equal(f[4096 + i], 0);
  assert_int_equal(f[4096 + 8192], rec_byte(81, 0));

  c = open_ok(path, 100, 0);
  assert_int_equal(river_coll_stat(c, &info), RIVER_SUCCESS);
  assert_string_equal(info.label, "sort p3 c1");
  assert_int_equal(info.table_crc, tcrc);
  river_coll_close(c);
  free(f);
  unlink(path);
}

static void test_coll_direct_io(void **state)
{
  const char *path = path_of("direct.coll");
  static const size_t sizes[] = {1, 100, 4096, 5000};
  size_t s, n;

  river_log_set_level(RIVER_LOG_DEBUG);  /* shows a fallback, if any */
  for (s = 0; s < 4; s++) {
    n = 3 * (8192 / sizes[s]) + 5;
    write_coll(path, sizes[s], n, 8192, "direct", 1);
    check_coll(path, sizes[s], n, 8192, 1);  /* direct reader */
    check_coll(path, sizes[s], n, 8192, 0);  /* buffered reader */
  }
  write_coll(path, 100, 0, 8192, "direct", 1);
  check_coll(path, 100, 0, 8192, 1);
  /* A file written buffered reads the same with O_DIRECT. */
  write_coll(path, 100, 1000, 8192, NULL, 0);
  check_coll(path, 100, 1000, 8192, 1);
  unlink(path);
}

/* ------------------------------------------------------- write memory */

/* This process's peak resident memory (VmHWM) in KiB; -1 if unknown. */
static long peak_kib(void)
{
  char line[256];
  long kib = -1;
  FILE *f = fopen("/proc/self/status", "r");

  if (f == NULL)
    return -1;
  while (fgets(line, sizeof line, f) != NULL)
    if (strncmp(line, "VmHWM:", 6) == 0)
      kib = strtol(line + 6, NULL, 10);
  fclose(f);
  return kib;
}

/* A writer's memory follows the data it holds, not its block size: two
 * writers (two copies, as a mirrored collection's rank has) of 100
 * records in 1 GiB blocks raise the peak by a few MiB, not 2 GiB. The
 * peak is reset first where Linux allows (5 to /proc/self/clear_refs);
 * elsewhere the earlier tests' small peak stays in the baseline. */
static void test_coll_write_memory_follows_data(void **state)
{
  const char *path[2] = {path_of("mem0.coll"), path_of("mem1.coll")};
  unsigned char *recs = make_records(0, 100, 100);
  river_coll_opts o = RIVER_COLL_OPTS_INIT;
  river_coll *c[2] = {NULL, NULL};
  long before, after;
  FILE *f;
  int i;

  f = fopen("/proc/self/clear_refs", "w");
  if (f != NULL) {
    fputs("5", f);
    fclose(f);
  }
  before = peak_kib();
  assert_true(before > 0);
  o.block_size = (size_t)1 << 30;
  for (i = 0; i < 2; i++) {
    assert_int_equal(river_coll_create(path[i], 100, &o, &c[i]),
                     RIVER_SUCCESS);
    assert_int_equal(river_coll_append(c[i], recs, 40), RIVER_SUCCESS);
    assert_int_equal(river_coll_append(c[i], recs + 4000, 60),
                     RIVER_SUCCESS);
  }
  for (i = 0; i < 2; i++)
    assert_int_equal(river_coll_commit(c[i]), RIVER_SUCCESS);
  after = peak_kib();
  printf("peak resident memory: %ld KiB before, %ld KiB after writing\n",
         before, after);
  assert_true(after - before < 8 * 1024);
  for (i = 0; i < 2; i++) {
    check_coll(path[i], 100, 100, (size_t)1 << 30, 0);
    unlink(path[i]);
  }
  free(recs);
}

/* The writer's buffer starts small and grows: records of odd sizes (some
 * larger than the first buffer) straddle its pieces, at block sizes that
 * take several growths, one that is not a power of two, and ones larger
 * than the largest buffer (blocks written in pieces). Every file reads
 * back exactly, and one append of everything gives the same bytes as the
 * uneven appends. */
static void test_coll_round_trip_growing_buffer(void **state)
{
  static const size_t blocks[] = {16384, (size_t)1 << 20, 3 << 20,
                                   (size_t)12 << 20, (size_t)16 << 20};
  static const size_t sizes[] = {100, 4095, 65537};
  const char *a = path_of("grow_a.coll"), *b = path_of("grow_b.coll");
  river_coll_opts o = RIVER_COLL_OPTS_INIT;
  unsigned char *recs, *fa, *fb;
  size_t s, k, n, rpb, la, lb;
  river_coll *c = NULL;

  for (k = 0; k < sizeof blocks / sizeof *blocks; k++) {
    for (s = 0; s < 3; s++) {
      if (sizes[s] > blocks[k])
        continue;
      rpb = blocks[k] / sizes[s];
      n = 2 * rpb + rpb / 2 + 1;
      write_coll(a, sizes[s], n, blocks[k], "grow", k == 3);
      check_coll(a, sizes[s], n, blocks[k], 0);
      recs = make_records(0, n, sizes[s]);
      o.block_size = blocks[k];
      o.label = "grow";
      assert_int_equal(river_coll_create(b, sizes[s], &o, &c), RIVER_SUCCESS);
      assert_int_equal(river_coll_append(c, recs, n), RIVER_SUCCESS);
      assert_int_equal(river_coll_commit(c), RIVER_SUCCESS);
      fa = slurp(a, &la);
      fb = slurp(b, &lb);
      assert_int_equal(la, lb);
      assert_memory_equal(fa, fb, la);
      free(fa);
      free(fb);
      free(recs);
    }
  }
  unlink(a);
  unlink(b);
}

/* ------------------------------------------------------------- commit */

static void test_coll_commit_is_atomic(void **state)
{
  const char *path = path_of("atomic.coll"), *tmp = path_of("atomic.coll.tmp");
  unsigned char *recs = make_records(0, 300, 100);
  river_coll_opts o = RIVER_COLL_OPTS_INIT;
  river_coll *c = NULL;

  o.block_size = 4096;
  assert_int_equal(river_coll_create(path, 100, &o, &c), RIVER_SUCCESS);
  assert_false(exists(path));
  assert_true(exists(tmp));
  assert_int_equal(river_coll_append(c, recs, 300), RIVER_SUCCESS);
  assert_false(exists(path));
  assert_true(exists(tmp));
  assert_int_equal(river_coll_commit(c), RIVER_SUCCESS);
  assert_true(exists(path));
  assert_false(exists(tmp));
  check_coll(path, 100, 300, 4096, 0);
  free(recs);
  unlink(path);
}

/* A link planted at PATH.tmp (to a file outside) is not written
 * through: the victim keeps its bytes, the collection is written. */
static void test_coll_create_planted_tmp_link(void **state)
{
  const char *path = path_of("planted.coll"), *tmp = path_of("planted.coll.tmp");
  const char *victim = path_of("victim");
  unsigned char *recs = make_records(0, 50, 100), *after;
  river_coll_opts o = RIVER_COLL_OPTS_INIT;
  river_coll *c = NULL;
  FILE *f = fopen(victim, "w");
  size_t n;

  (void)state;
  assert_non_null(f);
  fputs("precious\n", f);
  fclose(f);
  assert_int_equal(symlink(victim, tmp), 0);
  o.block_size = 4096;
  assert_int_equal(river_coll_create(path, 100, &o, &c), RIVER_SUCCESS);
  assert_int_equal(river_coll_append(c, recs, 50), RIVER_SUCCESS);
  assert_int_equal(river_coll_commit(c), RIVER_SUCCESS);
  after = slurp(victim, &n);
  assert_int_equal(n, 9);
  assert_memory_equal(after, "precious\n", 9);
  check_coll(path, 100, 50, 4096, 0);
  free(after);
  free(recs);
  unlink(path);
  unlink(victim);
}

static void test_coll_existing_file_survives(void **state)
{
  const char *path = path_of("keep.coll"), *tmp = path_of("keep.coll.tmp");
  unsigned char *before, *during, *recs = make_records(1000, 700, 100);
  river_coll_opts o = RIVER_COLL_OPTS_INIT;
  river_coll *c = NULL;
  size_t lb, ld;

  write_coll(path, 100, 400, 8192, "old", 0);
  before = slurp(path, &lb);

  /* A writer on the same path: the old file is untouched... */
  o.block_size = 8192;
  o.label = "new";
  assert_int_equal(river_coll_create(path, 100, &o, &c), RIVER_SUCCESS);
  assert_int_equal(river_coll_append(c, recs, 700), RIVER_SUCCESS);
  during = slurp(path, &ld);
  assert_int_equal(ld, lb);
  assert_memory_equal(before, during, lb);
  free(during);
  /* ...and stays when the writer is abandoned. */
  assert_int_equal(river_coll_close(c), RIVER_SUCCESS);
  assert_false(exists(tmp));
  during = slurp(path, &ld);
  assert_int_equal(ld, lb);
  assert_memory_equal(before, during, lb);
  free(during);
  check_coll(path, 100, 400, 8192, 0);

  /* A writer that commits replaces it. */
  write_coll(path, 100, 900, 8192, "new", 0);
  check_coll(path, 100, 900, 8192, 0);
  free(before);
  free(recs);
  unlink(path);
}

/* Writes that fail (RLIMIT_FSIZE makes the kernel refuse them): the error
 * is reported, the writer refuses to go on, nothing is left behind and an
 * existing file at path is untouched. */
static void test_coll_failed_writes(void **state)
{
  const char *path = path_of("full.coll"), *tmp = path_of("full.coll.tmp");
  unsigned char *recs = make_records(0, 400, 100), *before, *after;
  river_coll_opts o = RIVER_COLL_OPTS_INIT;
  struct rlimit old, lim;
  river_coll *c = NULL;
  river_coll_info info;
  void (*oldsig)(int);
  size_t lb, la;

  write_coll(path, 100, 50, 8192, "old", 0);
  before = slurp(path, &lb);
  o.block_size = 8192;
  oldsig = signal(SIGXFSZ, SIG_IGN);
  assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
  lim = old;
  lim.rlim_cur = 4096 + 8192 + 100;  /* block 0 fits, block 1 does not */
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);

  /* Failing in append (block 1 is full at record 162). */
  assert_int_equal(river_coll_create(path, 100, &o, &c), RIVER_SUCCESS);
  log_clear();
  assert_int_equal(river_coll_append(c, recs, 400), RIVER_EIO);
  assert_true(logged("full.coll.tmp"));
  assert_true(logged_block(1));
  assert_int_equal(river_coll_append(c, recs, 1), RIVER_ESTATE);
  assert_int_equal(river_coll_stat(c, &info), RIVER_SUCCESS);
  assert_int_equal(river_coll_commit(c), RIVER_ESTATE);
  assert_false(exists(tmp));

  /* Failing in commit (the last, partial block). */
  assert_int_equal(river_coll_create(path, 100, &o, &c), RIVER_SUCCESS);
  assert_int_equal(river_coll_append(c, recs, 81 + 10), RIVER_SUCCESS);
  assert_int_equal(river_coll_commit(c), RIVER_EIO);
  assert_false(exists(tmp));

  assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
  signal(SIGXFSZ, oldsig);
  after = slurp(path, &la);
  assert_int_equal(la, lb);
  assert_memory_equal(before, after, lb);
  check_coll(path, 100, 50, 8192, 0);
  free(before);
  free(after);
  free(recs);
  unlink(path);
}

/* ------------------------------------------------------------ arguments */

static void test_coll_bad_args(void **state)
{
  const char *path = path_of("args.coll");
  river_coll_opts o = RIVER_COLL_OPTS_INIT;
  river_coll *w = NULL, *r = NULL, *keep = (river_coll *)&keep;
  river_coll_info info;
  unsigned char rec[100] = {0}, buf[8192];
  char label[RIVER_COLL_LABEL_MAX + 2];
  uint64_t bad = 5;
  const void *recs = rec;
  size_t k = 42;

  /* create */
  assert_int_equal(river_coll_create(path, 0, NULL, &keep), RIVER_EINVAL);
  o.block_size = 1000;
  assert_int_equal(river_coll_create(path, 100, &o, &keep), RIVER_EINVAL);
  o.block_size = 4096;
  assert_int_equal(river_coll_create(path, 5000, &o, &keep), RIVER_EINVAL);
  o.block_size = 0;  /* default 1 MiB: smaller than the record */
  assert_int_equal(river_coll_create(path, (1 << 20) + 1, &o, &keep),
                   RIVER_EINVAL);
  memset(label, 'l', sizeof label - 1);
  label[sizeof label - 1] = '\0';
  o.label = label;   /* 256 characters */
  assert_int_equal(river_coll_create(path, 100, &o, &keep), RIVER_EINVAL);
  assert_int_equal(river_coll_create(NULL, 100, NULL, &keep), RIVER_EINVAL);
  assert_int_equal(river_coll_create("", 100, NULL, &keep), RIVER_EINVAL);
  assert_int_equal(river_coll_create(path, 100, NULL, NULL), RIVER_EINVAL);
  assert_ptr_equal(keep, (river_coll *)&keep);
  assert_false(exists(path_of("args.coll.tmp")));

  /* A 255-character label is fine. */
  label[RIVER_COLL_LABEL_MAX] = '\0';
  o.block_size = 8192;
  assert_int_equal(river_coll_create(path, 100, &o, &w), RIVER_SUCCESS);
  assert_int_equal(river_coll_append(NULL, rec, 1), RIVER_EINVAL);
  assert_int_equal(river_coll_append(w, NULL, 1), RIVER_EINVAL);
  assert_int_equal(river_coll_append(w, rec, SIZE_MAX / 50), RIVER_EOVERFLOW);
  assert_int_equal(river_coll_append(w, rec, 1), RIVER_SUCCESS);
  assert_int_equal(river_coll_stat(w, &info), RIVER_SUCCESS);
  assert_int_equal(info.nrecords, 1);
  assert_int_equal(info.nblocks, 1);
  assert_int_equal(info.records_per_block, 81);
  assert_string_equal(info.label, label);
  /* Reader calls on a writer. */
  assert_int_equal(river_coll_read_block(w, 0, buf, sizeof buf, &k),
                   RIVER_EINVAL);
  assert_int_equal(river_coll_next(w, &recs, &k), RIVER_EINVAL);
  assert_int_equal(river_coll_rewind(w), RIVER_EINVAL);
  assert_int_equal(river_coll_verify(w, &bad), RIVER_EINVAL);
  assert_int_equal(river_coll_commit(w), RIVER_SUCCESS);

  r = open_ok(path, 100, 0);
  assert_int_equal(river_coll_stat(r, &info), RIVER_SUCCESS);
  assert_string_equal(info.label, label);
  /* Writer calls on a reader: refused, the reader stays usable. */
  assert_int_equal(river_coll_append(r, rec, 1), RIVER_EINVAL);
  assert_int_equal(river_coll_commit(r), RIVER_EINVAL);
  /* Out of range, too small, NULL. */
  assert_int_equal(river_coll_read_block(r, 1, buf, sizeof buf, &k),
                   RIVER_EINVAL);
  assert_int_equal(river_coll_read_block(r, UINT64_MAX, buf, sizeof buf, &k),
                   RIVER_EINVAL);
  assert_int_equal(river_coll_read_block(r, 0, buf, 81 * 100 - 1, &k),
                   RIVER_ENOBUFS);
  assert_int_equal(river_coll_read_block(r, 0, NULL, sizeof buf, &k),
                   RIVER_EINVAL);
  assert_int_equal(river_coll_read_block(r, 0, buf, sizeof buf, NULL),
                   RIVER_EINVAL);
  assert_int_equal(k, 42);
  assert_int_equal(river_coll_next(r, NULL, &k), RIVER_EINVAL);
  assert_int_equal(river_coll_next(r, &recs, NULL), RIVER_EINVAL);
  assert_ptr_equal(recs, rec);
  assert_int_equal(river_coll_read_block(r, 0, buf, 81 * 100, &k),
                   RIVER_SUCCESS);
  assert_int_equal(k, 1);
  assert_int_equal(river_coll_verify(r, NULL), RIVER_SUCCESS);
  assert_int_equal(river_coll_close(r), RIVER_SUCCESS);
  assert_int_equal(river_coll_close(NULL), RIVER_SUCCESS);
  unlink(path);

  /* A directory that does not exist. */
  assert_true(river_coll_create(path_of("no/such/dir/x.coll"), 100, NULL,
                                &keep) < 0);
  assert_ptr_equal(keep, (river_coll *)&keep);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup(test_coll_round_trip, reset),
    cmocka_unit_test_setup(test_coll_default_options, reset),
    cmocka_unit_test_setup(test_coll_append_split_is_invisible, reset),
    cmocka_unit_test_setup(test_coll_header_layout, reset),
    cmocka_unit_test_setup(test_coll_direct_io, reset),
    cmocka_unit_test_setup(test_coll_write_memory_follows_data, reset),
    cmocka_unit_test_setup(test_coll_round_trip_growing_buffer, reset),
    cmocka_unit_test_setup(test_coll_commit_is_atomic, reset),
    cmocka_unit_test_setup(test_coll_existing_file_survives, reset),
    cmocka_unit_test_setup(test_coll_create_planted_tmp_link, reset),
    cmocka_unit_test_setup(test_coll_failed_writes, reset),
    cmocka_unit_test_setup(test_coll_bad_args, reset),
  };
  int rc = cmocka_run_group_tests(tests, setup, teardown);

  river_log_set_handler(NULL, NULL);
  return rc;
}
