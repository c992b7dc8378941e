/*
 * test_collection_damage.c - single-disk collections that are not what
 * they should be: every flipped byte of a small file (and a sample of a
 * larger one) is found by open, verify, read_block or next, whichever
 * meets it, with a message naming the file and block; truncated and
 * extended files, a record size that does not match, files that are no
 * collection, a missing file, and headers with a valid CRC whose fields
 * lie are refused at open; a strange but true header reads.
 *
 * The helpers are in collection_test.h. Files live in a mkdtemp()
 * directory under $TMPDIR (or /tmp), removed at the end.
 */
#include "collection_test.h"

/* ---------------------------------------------------------- corruption */

/* With the byte at pos flipped, the damage must be found: by open for
 * the header and the trailer, by verify, read_block and next for block
 * `block` (UINT64_MAX: not in a block). */
static void expect_damage(const char *path, size_t rs, uint64_t block)
{
  river_coll *c = NULL;
  uint64_t bad = 999, b;
  const void *recs;
  unsigned char *buf;
  size_t k;
  int rc;

  log_clear();
  rc = river_coll_open(path, rs, NULL, &c);
  if (block == UINT64_MAX) {
    assert_int_equal(rc, RIVER_ECORRUPT);
    assert_null(c);
    assert_true(logcount > 0 && logged(path));
    return;
  }
  assert_int_equal(rc, RIVER_SUCCESS);
  assert_int_equal(river_coll_verify(c, &bad), RIVER_ECORRUPT);
  assert_int_equal(bad, block);
  assert_true(logged(path) && logged_block(block));
  assert_true(logged("checksum mismatch"));

  log_clear();
  buf = malloc(8192);
  assert_non_null(buf);
  assert_int_equal(river_coll_read_block(c, block, buf, 8192, &k),
                   RIVER_ECORRUPT);
  assert_true(logged(path) && logged_block(block));
  if (block > 0)
    assert_int_equal(river_coll_read_block(c, 0, buf, 8192, &k),
                     RIVER_SUCCESS);
  for (b = 0; b < block; b++)
    assert_int_equal(river_coll_next(c, &recs, &k), RIVER_SUCCESS);
  assert_int_equal(river_coll_next(c, &recs, &k), RIVER_ECORRUPT);
  free(buf);
  river_coll_close(c);
}

/* Which block the byte at pos lies in; UINT64_MAX for header/trailer. */
static uint64_t block_at(uint64_t pos, uint64_t trailer, size_t bs)
{
  if (pos < 4096 || pos >= trailer)
    return UINT64_MAX;
  return (pos - 4096) / bs;
}

/* Every byte of a small file: header, 2 blocks (data and padding),
 * trailer. */
static void test_coll_every_flipped_byte_is_found(void **state)
{
  const char *path = path_of("flip_all.coll");
  uint64_t size = size_of(50, 100, 4096), trailer = size - 8, pos;

  write_coll(path, 100, 50, 4096, "flip", 0);
  for (pos = 0; pos < size; pos++) {
    flip(path, (off_t)pos);
    expect_damage(path, 100, block_at(pos, trailer, 4096));
    flip(path, (off_t)pos);
  }
  check_coll(path, 100, 50, 4096, 0);
  unlink(path);
}

/* Chosen bytes of a file with 8 KiB blocks: each block's first, middle
 * and last data byte and its padding, the header and every trailer
 * byte. */
static void test_coll_flipped_byte_sample(void **state)
{
  const char *path = path_of("flip_some.coll");
  uint64_t n = 250, nb = 4, size = size_of(n, 100, 8192);
  uint64_t trailer = size - 4 * nb, b, start, data, pos[64];
  static const uint64_t hdr[] = {0, 7, 8, 12, 16, 24, 32, 40, 48, 56, 64,
                                 68, 72, 80, 327, 328, 2000, 4091, 4092,
                                 4095};
  size_t np = 0, i;

  write_coll(path, 100, n, 8192, "flip", 0);
  for (i = 0; i < sizeof hdr / sizeof *hdr; i++)
    pos[np++] = hdr[i];
  for (b = 0; b < nb; b++) {
    start = 4096 + b * 8192;
    data = (b + 1 < nb ? 81 : n - 3 * 81) * 100;
    pos[np++] = start;
    pos[np++] = start + data / 2;
    pos[np++] = start + data - 1;
    pos[np++] = start + data;                                     /* pad */
    pos[np++] = start + (b + 1 < nb ? 8192 : round4k(data)) - 1;  /* pad */
  }
  for (b = 0; b < 4 * nb; b++)
    pos[np++] = trailer + b;
  for (i = 0; i < np; i++) {
    flip(path, (off_t)pos[i]);
    expect_damage(path, 100, block_at(pos[i], trailer, 8192));
    flip(path, (off_t)pos[i]);
  }
  check_coll(path, 100, n, 8192, 0);
  unlink(path);
}

static void expect_open_fails(const char *path, size_t rs, int code)
{
  river_coll *c = (river_coll *)&c;  /* must stay untouched */

  log_clear();
  assert_int_equal(river_coll_open(path, rs, NULL, &c), code);
  assert_ptr_equal(c, (river_coll *)&c);
  assert_true(logcount > 0);
}

static void test_coll_truncated(void **state)
{
  const char *src = path_of("whole.coll"), *cut = path_of("cut.coll");
  uint64_t n = 250, nb = 4, b, start, ext;
  unsigned char *f;
  size_t len;
  char sizes[64];

  write_coll(src, 100, n, 8192, NULL, 0);
  f = slurp(src, &len);
  for (b = 0; b < nb; b++) {
    start = 4096 + b * 8192;
    ext = b + 1 < nb ? 8192 : round4k((n - 3 * 81) * 100);
    /* In the middle of block b, and just before it. */
    spew(cut, f, (size_t)(start + ext / 2));
    expect_open_fails(cut, 100, RIVER_ECORRUPT);
    assert_true(logged(cut) && logged_block(b));
    snprintf(sizes, sizeof sizes, "%" PRIu64 " bytes, expected %zu",
             start + ext / 2, len);
    assert_true(logged(sizes));
    spew(cut, f, (size_t)start);
    expect_open_fails(cut, 100, RIVER_ECORRUPT);
    assert_true(logged(cut) && logged_block(b));
  }
  spew(cut, f, len - 1);   /* in the trailer */
  expect_open_fails(cut, 100, RIVER_ECORRUPT);
  assert_true(logged(cut));
  spew(cut, f, 4095);      /* not even a header */
  expect_open_fails(cut, 100, RIVER_ECORRUPT);
  spew(cut, f, 0);
  expect_open_fails(cut, 100, RIVER_ECORRUPT);
  free(f);
  unlink(src);
  unlink(cut);
}

static void test_coll_extended(void **state)
{
  const char *src = path_of("short.coll"), *ext = path_of("long.coll");
  unsigned char *f;
  size_t len;

  write_coll(src, 100, 250, 8192, NULL, 0);
  f = slurp(src, &len);
  f = realloc(f, len + 4096);
  assert_non_null(f);
  memset(f + len, 0, 4096);
  spew(ext, f, len + 1);
  expect_open_fails(ext, 100, RIVER_ECORRUPT);
  assert_true(logged(ext));
  spew(ext, f, len + 4096);
  expect_open_fails(ext, 100, RIVER_ECORRUPT);
  /* An empty collection with something after its header. */
  write_coll(src, 100, 0, 8192, NULL, 0);
  free(f);
  f = slurp(src, &len);
  assert_int_equal(len, 4096);
  f = realloc(f, len + 4);
  assert_non_null(f);
  memset(f + len, 0, 4);
  spew(ext, f, len + 4);
  expect_open_fails(ext, 100, RIVER_ECORRUPT);
  free(f);
  unlink(src);
  unlink(ext);
}

static void test_coll_record_size_mismatch(void **state)
{
  const char *path = path_of("rs.coll");

  write_coll(path, 100, 10, 8192, NULL, 0);
  expect_open_fails(path, 99, RIVER_EFORMAT);
  assert_true(logged(path) && logged("100") && logged("99"));
  river_coll_close(open_ok(path, 0, 0));
  river_coll_close(open_ok(path, 100, 0));
  unlink(path);
}

static void test_coll_not_a_collection(void **state)
{
  const char *path = path_of("garbage");
  unsigned char junk[10000];
  size_t i;

  for (i = 0; i < sizeof junk; i++)
    junk[i] = rec_byte(7, i);
  spew(path, junk, sizeof junk);
  expect_open_fails(path, 0, RIVER_ECORRUPT);
  assert_true(logged(path));
  spew(path, "hello\n", 6);
  expect_open_fails(path, 0, RIVER_ECORRUPT);
  /* The right magic is not enough. */
  memcpy(junk, "RIVERCOL", 8);
  spew(path, junk, sizeof junk);
  expect_open_fails(path, 0, RIVER_ECORRUPT);
  unlink(path);
}

static void test_coll_missing_file(void **state)
{
  expect_open_fails(path_of("no-such-file"), 0, RIVER_ENOTFOUND);
  assert_true(logged("no-such-file"));
}

/* A header with a valid CRC whose fields lie. */
struct fake {
  uint32_t version, header_size;
  uint64_t rs, bs, rpb, n, nb, trailer;
  uint32_t table_crc, reserved;
  int unterminated_label;
};

static void put32(unsigned char *p, uint32_t v)
{
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
  p[2] = (unsigned char)(v >> 16);
  p[3] = (unsigned char)(v >> 24);
}

static void put64(unsigned char *p, uint64_t v)
{
  put32(p, (uint32_t)v);
  put32(p + 4, (uint32_t)(v >> 32));
}

static void make_header(unsigned char *h, const struct fake *f)
{
  uint32_t crc = 0;

  memset(h, 0, 4096);
  memcpy(h, "RIVERCOL", 8);
  put32(h + 8, f->version);
  put32(h + 12, f->header_size);
  put64(h + 16, f->rs);
  put64(h + 24, f->bs);
  put64(h + 32, f->rpb);
  put64(h + 40, f->n);
  put64(h + 48, f->nb);
  put64(h + 56, f->trailer);
  put32(h + 64, f->table_crc);
  put32(h + 68, f->reserved);
  if (f->unterminated_label)
    memset(h + 72, 'x', 256);
  river_crc32c(h, 4092, &crc);
  put32(h + 4092, crc);
}

/* A consistent header for n records of rs bytes in bs-byte blocks. */
static struct fake fake_for(uint64_t n, uint64_t rs, uint64_t bs)
{
  struct fake f = {1, 4096, rs, bs, bs / rs, n, 0, 0, 0, 0, 0};

  f.nb = n / f.rpb + (n % f.rpb != 0);
  f.trailer = f.nb ? 4096 + (f.nb - 1) * bs
                         + round4k((n - (f.nb - 1) * f.rpb) * rs)
                   : 4096;
  return f;
}

/* Write a file of len bytes starting with the header f (the rest zero);
 * open must refuse it. */
static void expect_header_refused(const struct fake *f, size_t len,
                                  const char *why)
{
  const char *path = path_of("liar.coll");
  unsigned char h[4096 + 8192];

  memset(h, 0, sizeof h);
  make_header(h, f);
  spew(path, h, len);
  expect_open_fails(path, 0, RIVER_ECORRUPT);
  if (!logged(path))
    fail_msg("%s: not refused with a message naming the file", why);
  unlink(path);
}

static void test_coll_lying_header(void **state)
{
  const size_t L = 4096 + 8192;
  struct fake f;

  /* Consistent, but the file is far too short (no allocation of the
   * 1 GiB table or the data). */
  f = fake_for((uint64_t)1 << 40, 1, 4096);
  expect_header_refused(&f, L, "2^40 records");
  assert_true(logged_block(2));  /* blocks 0 and 1 are there (zeros) */
  f = fake_for((uint64_t)1 << 50, 1000, 1 << 20);
  expect_header_refused(&f, L, "2^50 records");
  /* Too large for any file. */
  f = fake_for((uint64_t)1 << 62, 1, 4096);
  expect_header_refused(&f, L, "2^62 records");
  f = fake_for(UINT64_MAX, 4096, 4096);
  expect_header_refused(&f, L, "2^64-1 records");
  f = fake_for(UINT64_MAX, 1, (uint64_t)1 << 62);
  expect_header_refused(&f, L, "2^64-1 records in 2^62-byte blocks");
  /* Fields that disagree with each other. */
  f = fake_for(100, 100, 8192);
  f.nb = 1;
  expect_header_refused(&f, L, "nblocks");
  f = fake_for(100, 100, 8192);
  f.nb = UINT64_MAX;
  expect_header_refused(&f, L, "nblocks huge");
  f = fake_for(100, 100, 8192);
  f.rpb = 82;
  expect_header_refused(&f, L, "records_per_block");
  f = fake_for(100, 100, 8192);
  f.trailer += 4096;
  expect_header_refused(&f, L, "trailer_offset");
  f = fake_for(100, 100, 8192);
  f.trailer = 4096 + 8192 + 4096 + 8192;
  expect_header_refused(&f, L, "trailer_offset 2");
  f = fake_for(1, 100, 8192);
  f.bs = 5000;
  f.rpb = 50;
  f.trailer = 8192;
  expect_header_refused(&f, L, "block_size not a multiple of 4096");
  f = fake_for(1, 100, 8192);
  f.rs = 0;
  f.rpb = 0;
  expect_header_refused(&f, L, "record_size 0");
  f = fake_for(0, 100, 8192);
  f.rs = 10000;
  f.rpb = 0;
  expect_header_refused(&f, L, "record_size > block_size");
  f = fake_for(0, 100, 8192);
  f.bs = 0;
  f.rpb = 0;
  expect_header_refused(&f, L, "block_size 0");
  f = fake_for(1, 100, 8192);
  f.version = 2;
  expect_header_refused(&f, L, "version");
  f = fake_for(1, 100, 8192);
  f.header_size = 8192;
  expect_header_refused(&f, L, "header_size");
  f = fake_for(1, 100, 8192);
  f.reserved = 1;
  expect_header_refused(&f, L, "reserved");
  f = fake_for(1, 100, 8192);
  f.unterminated_label = 1;
  expect_header_refused(&f, L, "label");
  f = fake_for(0, 100, 8192);
  f.table_crc = 1;  /* no blocks: the table's CRC is 0 */
  expect_header_refused(&f, 4096, "table_crc");
}

/* A strange but true header: one record in a 2^40-byte block. The file
 * is small, and so is what River allocates to read it. */
static void test_coll_huge_block_small_file(void **state)
{
  const char *path = path_of("bigblock.coll");
  unsigned char f[4096 + 4096 + 4];
  struct fake h = fake_for(1, 100, (uint64_t)1 << 40);
  uint32_t crc = 0, tcrc = 0;
  river_coll *c;
  const void *recs;
  unsigned char small[100];
  size_t k;

  memset(f, 0, sizeof f);
  memset(f + 4096, 0xAB, 100);
  river_crc32c(f + 4096, 4096, &crc);
  put32(f + 8192, crc);
  river_crc32c(f + 8192, 4, &tcrc);
  h.table_crc = tcrc;
  make_header(f, &h);
  spew(path, f, sizeof f);
  c = open_ok(path, 100, 0);
  assert_int_equal(river_coll_next(c, &recs, &k), RIVER_SUCCESS);
  assert_int_equal(k, 1);
  assert_memory_equal(recs, f + 4096, 100);
  assert_int_equal(river_coll_next(c, &recs, &k), RIVER_EOS);
  /* read_block wants room for a whole block, as documented. */
  assert_int_equal(river_coll_read_block(c, 0, small, sizeof small, &k),
                   RIVER_ENOBUFS);
  assert_int_equal(river_coll_verify(c, NULL), RIVER_SUCCESS);
  river_coll_close(c);
  unlink(path);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup(test_coll_every_flipped_byte_is_found, reset),
    cmocka_unit_test_setup(test_coll_flipped_byte_sample, reset),
    cmocka_unit_test_setup(test_coll_truncated, reset),
    cmocka_unit_test_setup(test_coll_extended, reset),
    cmocka_unit_test_setup(test_coll_record_size_mismatch, reset),
    cmocka_unit_test_setup(test_coll_not_a_collection, reset),
    cmocka_unit_test_setup(test_coll_missing_file, reset),
    cmocka_unit_test_setup(test_coll_lying_header, reset),
    cmocka_unit_test_setup(test_coll_huge_block_small_file, reset),
  };
  int rc = cmocka_run_group_tests(tests, setup, teardown);

  river_log_set_handler(NULL, NULL);
  return rc;
}
