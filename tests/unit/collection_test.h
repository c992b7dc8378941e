/*
 * collection_test.h - what the single-disk collection unit tests
 * (test_collection.c, test_collection_damage.c) share: a log handler
 * that keeps every message (logged, logged_block), the CMocka group
 * setup and teardown of the mkdtemp() directory the files live in and
 * the per-test reset that installs the handler, file helpers (path_of,
 * exists, slurp, spew, flip), the test records (record i is a hash of
 * i, so misplaced records show) with an order-independent sum, the file
 * size the format promises (size_of), and write_coll and check_coll,
 * which write a collection in uneven appends and read it back every way
 * against what was written.
 *
 * Header-only: each test program is one file that includes it once.
 */
#ifndef RIVER_COLLECTION_TEST_H
#define RIVER_COLLECTION_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <river.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The directory the test files live in: setup makes it, teardown
 * empties and removes it. */
static char dir[4096];

/* ---------------------------------------------------------------- log */

/* Every logged message, one per line. */
static char logbuf[1 << 16];
static size_t loglen;
static int logcount;

static inline void capture(int level, int rank, const char *msg, void *ctx)
{
  int n = snprintf(logbuf + loglen, sizeof logbuf - loglen, "%s\n", msg);

  logcount++;
  if (n > 0 && (size_t)n < sizeof logbuf - loglen)
    loglen += (size_t)n;
}

static inline void log_clear(void)
{
  loglen = 0;
  logbuf[0] = '\0';
  logcount = 0;
}

static inline int logged(const char *text)
{
  return strstr(logbuf, text) != NULL;
}

/* Some message says "block B" (B not followed by another digit). */
static inline int logged_block(uint64_t b)
{
  char want[40];
  const char *p = logbuf;
  size_t n;

  n = (size_t)snprintf(want, sizeof want, "block %" PRIu64, b);
  while ((p = strstr(p, want)) != NULL) {
    if (p[n] < '0' || p[n] > '9')
      return 1;
    p += n;
  }
  return 0;
}

/* ------------------------------------------------- setup and teardown */

/* Group setup and teardown: the directory. */
static inline int setup(void **state)
{
  const char *tmp = getenv("TMPDIR");

  snprintf(dir, sizeof dir, "%s/river_coll_XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  if (mkdtemp(dir) == NULL)
    return -1;
  return 0;
}

static inline int teardown(void **state)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  char p[8192];

  if (d == NULL)
    return -1;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    unlink(p);
  }
  closedir(d);
  return rmdir(dir);
}

/* Before each test: warnings and errors go to the captured log,
 * emptied. */
static inline int reset(void **state)
{
  river_log_set_handler(capture, NULL);
  river_log_set_level(RIVER_LOG_WARN);
  log_clear();
  return 0;
}

/* ------------------------------------------------------------- files */

/* dir/name, in one of 8 rotating buffers. */
static inline const char *path_of(const char *name)
{
  static char p[8][8192];
  static int next;
  char *s = p[next++ % 8];

  snprintf(s, sizeof p[0], "%s/%s", dir, name);
  return s;
}

static inline int exists(const char *path)
{
  struct stat st;

  return stat(path, &st) == 0;
}

static inline unsigned char *slurp(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  unsigned char *buf;
  long n;

  assert_non_null(f);
  assert_int_equal(fseek(f, 0, SEEK_END), 0);
  n = ftell(f);
  assert_true(n >= 0);
  rewind(f);
  buf = malloc((size_t)n + 1);
  assert_non_null(buf);
  assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *len = (size_t)n;
  return buf;
}

static inline void spew(const char *path, const void *buf, size_t len)
{
  FILE *f = fopen(path, "wb");

  assert_non_null(f);
  assert_int_equal(fwrite(buf, 1, len, f), len);
  assert_int_equal(fclose(f), 0);
}

static inline void flip(const char *path, off_t pos)
{
  int fd = open(path, O_RDWR);
  unsigned char b;

  assert_true(fd >= 0);
  assert_int_equal(pread(fd, &b, 1, pos), 1);
  b ^= 0xFF;
  assert_int_equal(pwrite(fd, &b, 1, pos), 1);
  close(fd);
}

/* ----------------------------------------------------------- records */

/* Byte j of record i: a hash, so that misplaced records show. */
static inline unsigned char rec_byte(uint64_t i, size_t j)
{
  uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull + j;

  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  return (unsigned char)(x >> 56);
}

static inline unsigned char *make_records(uint64_t first, size_t n, size_t rs)
{
  unsigned char *buf = malloc(n * rs + 1);
  size_t i, j;

  assert_non_null(buf);
  for (i = 0; i < n; i++)
    for (j = 0; j < rs; j++)
      buf[i * rs + j] = rec_byte(first + i, j);
  return buf;
}

/* Order-independent: the sum of the records' CRCs. */
static inline uint64_t sum_records(const unsigned char *recs, size_t n,
                                   size_t rs)
{
  uint64_t sum = 0;
  uint32_t crc;
  size_t i;

  for (i = 0; i < n; i++) {
    crc = 0;
    assert_int_equal(river_crc32c(recs + i * rs, rs, &crc), RIVER_SUCCESS);
    sum += crc;
  }
  return sum;
}

static inline uint64_t nblocks_of(uint64_t n, size_t rs, size_t bs)
{
  size_t rpb = bs / rs;

  return n / rpb + (n % rpb != 0);
}

static inline uint64_t round4k(uint64_t n)
{
  return (n + 4095) / 4096 * 4096;
}

/* The file size the format promises. */
static inline uint64_t size_of(uint64_t n, size_t rs, size_t bs)
{
  uint64_t nb = nblocks_of(n, rs, bs), rpb = bs / rs;

  if (nb == 0)
    return 4096;
  return 4096 + (nb - 1) * bs + round4k((n - (nb - 1) * rpb) * rs) + 4 * nb;
}

/* Write n records (record i from rec_byte) in uneven appends. */
static inline void write_coll(const char *path, size_t rs, size_t n,
                              size_t bs, const char *label, int direct)
{
  river_coll_opts o = RIVER_COLL_OPTS_INIT;
  static const size_t chunks[] = {1, 3, 17, 1000, 2, 333};
  river_coll *c = NULL;
  unsigned char *recs = make_records(0, n, rs);
  size_t done = 0, k, i = 0;

  o.block_size = bs;
  o.label = label;
  o.direct_io = direct;
  assert_int_equal(river_coll_create(path, rs, &o, &c), RIVER_SUCCESS);
  assert_non_null(c);
  while (done < n) {
    k = chunks[i++ % 6];
    if (k > n - done)
      k = n - done;
    assert_int_equal(river_coll_append(c, recs + done * rs, k),
                     RIVER_SUCCESS);
    done += k;
  }
  assert_int_equal(river_coll_commit(c), RIVER_SUCCESS);
  free(recs);
}

static inline river_coll *open_ok(const char *path, size_t rs, int direct)
{
  river_coll_opts o = RIVER_COLL_OPTS_INIT;
  river_coll *c = NULL;

  o.direct_io = direct;
  assert_int_equal(river_coll_open(path, rs, &o, &c), RIVER_SUCCESS);
  assert_non_null(c);
  return c;
}

/* Read the collection at path both ways and compare with what
 * write_coll wrote. */
static inline void check_coll(const char *path, size_t rs, size_t n,
                              size_t bs, int direct)
{
  river_coll *c = open_ok(path, rs, direct);
  unsigned char *want = make_records(0, n, rs), *got, *blk;
  uint64_t nb = nblocks_of(n, rs, bs), b, bad = 777;
  river_coll_info info;
  const void *recs;
  size_t k, done = 0, rpb = bs / rs;
  struct stat st;
  int pass;

  assert_int_equal(stat(path, &st), 0);
  assert_int_equal((uint64_t)st.st_size, size_of(n, rs, bs));
  assert_int_equal(river_coll_stat(c, &info), RIVER_SUCCESS);
  assert_int_equal(info.record_size, rs);
  assert_int_equal(info.block_size, bs);
  assert_int_equal(info.records_per_block, rpb);
  assert_int_equal(info.nrecords, n);
  assert_int_equal(info.nblocks, nb);

  got = malloc(n * rs + 1);
  blk = malloc(rpb * rs);
  assert_non_null(got);
  assert_non_null(blk);
  /* Stream twice (rewind), then by block in reverse order. */
  for (pass = 0; pass < 2; pass++) {
    done = 0;
    while (river_coll_next(c, &recs, &k) == RIVER_SUCCESS) {
      assert_true(k > 0 && k <= rpb && done + k <= n);
      memcpy(got + done * rs, recs, k * rs);
      done += k;
    }
    assert_int_equal(done, n);
    assert_int_equal(river_coll_next(c, &recs, &k), RIVER_EOS);
    assert_int_equal(river_coll_next(c, &recs, &k), RIVER_EOS);
    assert_true(n == 0 || memcmp(got, want, n * rs) == 0);
    assert_int_equal(sum_records(got, n, rs), sum_records(want, n, rs));
    assert_int_equal(river_coll_rewind(c), RIVER_SUCCESS);
  }
  memset(got, 0, n * rs);
  for (b = nb; b-- > 0;) {
    assert_int_equal(river_coll_read_block(c, b, blk, rpb * rs, &k),
                     RIVER_SUCCESS);
    assert_int_equal(k, b + 1 < nb ? rpb : n - (nb - 1) * rpb);
    memcpy(got + b * rpb * rs, blk, k * rs);
  }
  assert_true(n == 0 || memcmp(got, want, n * rs) == 0);
  assert_int_equal(river_coll_verify(c, &bad), RIVER_SUCCESS);
  assert_int_equal(bad, 777);
  assert_int_equal(river_coll_close(c), RIVER_SUCCESS);
  free(blk);
  free(got);
  free(want);
}

#endif /* RIVER_COLLECTION_TEST_H */
