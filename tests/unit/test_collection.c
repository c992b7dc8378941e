/*
 * test_collection.c - single-disk collections: round trips (exact bytes
 * and an order-independent checksum) over record sizes, counts and block
 * sizes; stream and random access; atomic commit; the header layout;
 * detection of every flipped byte, truncation and extension; headers
 * that lie; direct I/O; failing writes; bad arguments.
 *
 * Files live in a mkdtemp() directory under $TMPDIR (or /tmp), removed at
 * the end. Log messages are captured to check what errors say.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <river.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[4096];

/* ------------------------------------------------------------ helpers */

/* Every logged message, one per line. */
static char logbuf[1 << 16];
static size_t loglen;
static int logcount;

static void capture(int level, int rank, const char *msg, void *ctx)
{
  int n = snprintf(logbuf + loglen, sizeof logbuf - loglen, "%s\n", msg);

  logcount++;
  if (n > 0 && (size_t)n < sizeof logbuf - loglen)
    loglen += (size_t)n;
}

static void log_clear(void)
{
  loglen = 0;
  logbuf[0] = '\0';
  logcount = 0;
}

static int logged(const char *text)
{
  return strstr(logbuf, text) != NULL;
}

/* Some message says "block B" (B not followed by another digit). */
static int logged_block(uint64_t b)
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

static int setup(void **state)
{
  const char *tmp = getenv("TMPDIR");

  snprintf(dir, sizeof dir, "%s/river_coll_XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  if (mkdtemp(dir) == NULL)
    return -1;
  return 0;
}

static int teardown(void **state)
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

static int reset(void **state)
{
  river_log_set_handler(capture, NULL);
  river_log_set_level(RIVER_LOG_WARN);
  log_clear();
  return 0;
}

static const char *path_of(const char *name)
{
  static char p[8][8192];
  static int next;
  char *s = p[next++ % 8];

  snprintf(s, sizeof p[0], "%s/%s", dir, name);
  return s;
}

static int exists(const char *path)
{
  struct stat st;

  return stat(path, &st) == 0;
}

static unsigned char *slurp(const char *path, size_t *len)
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

static void spew(const char *path, const void *buf, size_t len)
{
  FILE *f = fopen(path, "wb");

  assert_non_null(f);
  assert_int_equal(fwrite(buf, 1, len, f), len);
  assert_int_equal(fclose(f), 0);
}

static void flip(const char *path, off_t pos)
{
  int fd = open(path, O_RDWR);
  unsigned char b;

  assert_true(fd >= 0);
  assert_int_equal(pread(fd, &b, 1, pos), 1);
  b ^= 0xFF;
  assert_int_equal(pwrite(fd, &b, 1, pos), 1);
  close(fd);
}

/* Byte j of record i: a hash, so that misplaced records show. */
static unsigned char rec_byte(uint64_t i, size_t j)
{
  uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull + j;

  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  return (unsigned char)(x >> 56);
}

static unsigned char *make_records(uint64_t first, size_t n, size_t rs)
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
static uint64_t sum_records(const unsigned char *recs, size_t n, size_t rs)
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

static uint64_t nblocks_of(uint64_t n, size_t rs, size_t bs)
{
  size_t rpb = bs / rs;

  return n / rpb + (n % rpb != 0);
}

static uint64_t round4k(uint64_t n)
{
  return (n + 4095) / 4096 * 4096;
}

/* The file size the format promises. */
static uint64_t size_of(uint64_t n, size_t rs, size_t bs)
{
  uint64_t nb = nblocks_of(n, rs, bs), rpb = bs / rs;

  if (nb == 0)
    return 4096;
  return 4096 + (nb - 1) * bs + round4k((n - (nb - 1) * rpb) * rs) + 4 * nb;
}

/* Write n records (record i from rec_byte) in uneven appends. */
static void write_coll(const char *path, size_t rs, size_t n, size_t bs,
                       const char *label, int direct)
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

static river_coll *open_ok(const char *path, size_t rs, int direct)
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
static void check_coll(const char *path, size_t rs, size_t n, size_t bs,
                       int direct)
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

/* The header as documented at the top of src/collection.c. */
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
    cmocka_unit_test_setup(test_coll_commit_is_atomic, reset),
    cmocka_unit_test_setup(test_coll_existing_file_survives, reset),
    cmocka_unit_test_setup(test_coll_failed_writes, reset),
    cmocka_unit_test_setup(test_coll_every_flipped_byte_is_found, reset),
    cmocka_unit_test_setup(test_coll_flipped_byte_sample, reset),
    cmocka_unit_test_setup(test_coll_truncated, reset),
    cmocka_unit_test_setup(test_coll_extended, reset),
    cmocka_unit_test_setup(test_coll_record_size_mismatch, reset),
    cmocka_unit_test_setup(test_coll_not_a_collection, reset),
    cmocka_unit_test_setup(test_coll_missing_file, reset),
    cmocka_unit_test_setup(test_coll_lying_header, reset),
    cmocka_unit_test_setup(test_coll_huge_block_small_file, reset),
    cmocka_unit_test_setup(test_coll_bad_args, reset),
  };
  int rc = cmocka_run_group_tests(tests, setup, teardown);

  river_log_set_handler(NULL, NULL);
  return rc;
}
