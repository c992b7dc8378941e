/*
 * test_gensort.c - gensort-layout records (river/gensort.h): the exact
 * byte layout of binary and ASCII records, determinism (same inputs give
 * the same bytes, however the rows are split over calls), the key
 * distribution with and without RIVER_GENSORT_SKEW, and bad arguments.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <river.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RS RIVER_GENSORT_RECORD_SIZE
#define KS RIVER_GENSORT_KEY_SIZE

/* A row and the 32 hex digits its record must carry. */
struct row_case {
  uint64_t row;
  const char *hex;
};

static const struct row_case rows[] = {
  {0, "00000000000000000000000000000000"},
  {1, "00000000000000000000000000000001"},
  {255, "000000000000000000000000000000FF"},
  {0xABCDEFu, "00000000000000000000000000ABCDEF"},
  {((uint64_t)1 << 40) + 5, "00000000000000000000010000000005"},
  {UINT64_MAX, "0000000000000000FFFFFFFFFFFFFFFF"},
};
#define NROWS (sizeof rows / sizeof rows[0])

static int is_upper_hex(unsigned char c)
{
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F');
}

/* ngroups groups of 4 identical uppercase hex digits at p. */
static void check_filler(const unsigned char *p, int ngroups)
{
  int g, j;

  for (g = 0; g < ngroups; g++) {
    assert_true(is_upper_hex(p[4 * g]));
    for (j = 1; j < 4; j++)
      assert_int_equal(p[4 * g + j], p[4 * g]);
  }
}

static void test_gensort_binary_layout(void **state)
{
  static const unsigned char m1[] = {0x00, 0x11};
  static const unsigned char m2[] = {0x88, 0x99, 0xAA, 0xBB};
  static const unsigned char m3[] = {0xCC, 0xDD, 0xEE, 0xFF};
  unsigned char r[RS];
  size_t i;

  for (i = 0; i < NROWS; i++) {
    memset(r, 0x5a, sizeof r);
    assert_int_equal(river_gensort_fill(rows[i].row, 1, 0, 42, r),
                     RIVER_SUCCESS);
    assert_memory_equal(r + 10, m1, 2);
    assert_memory_equal(r + 12, rows[i].hex, 32);
    assert_memory_equal(r + 44, m2, 4);
    check_filler(r + 48, 12);
    assert_memory_equal(r + 96, m3, 4);
  }
  /* Several rows in one call: each record carries its own row id. */
  {
    unsigned char buf[3 * RS];
    assert_int_equal(river_gensort_fill(254, 3, 0, 42, buf), RIVER_SUCCESS);
    assert_memory_equal(buf + 0 * RS + 12, "000000000000000000000000000000FE",
                        32);
    assert_memory_equal(buf + 1 * RS + 12, "000000000000000000000000000000FF",
                        32);
    assert_memory_equal(buf + 2 * RS + 12, "00000000000000000000000000000100",
                        32);
  }
}

static void test_gensort_ascii_layout(void **state)
{
  unsigned char r[RS];
  size_t i;
  int k;

  for (i = 0; i < NROWS; i++) {
    memset(r, 0x00, sizeof r);
    assert_int_equal(river_gensort_fill(rows[i].row, 1, RIVER_GENSORT_ASCII,
                                        7, r),
                     RIVER_SUCCESS);
    for (k = 0; k < KS; k++) {
      assert_true(r[k] >= ' ');
      assert_true(r[k] <= '~');
    }
    assert_memory_equal(r + 10, "  ", 2);
    assert_memory_equal(r + 12, rows[i].hex, 32);
    assert_memory_equal(r + 44, "  ", 2);
    check_filler(r + 46, 13);
    assert_memory_equal(r + 98, "\r\n", 2);
  }
}

/* ASCII keys, with and without skew, stay printable over many rows and
 * use the whole printable range. */
static void test_gensort_ascii_keys_printable(void **state)
{
  enum { N = 5000 };
  unsigned char *buf = malloc((size_t)N * RS);
  unsigned flags[2] = {RIVER_GENSORT_ASCII,
                       RIVER_GENSORT_ASCII | RIVER_GENSORT_SKEW};
  int seen[256], f, i, k, distinct;

  assert_non_null(buf);
  for (f = 0; f < 2; f++) {
    memset(seen, 0, sizeof seen);
    assert_int_equal(river_gensort_fill(1000, N, flags[f], 3, buf),
                     RIVER_SUCCESS);
    for (i = 0; i < N; i++) {
      const unsigned char *r = buf + (size_t)i * RS;
      for (k = 0; k < KS; k++) {
        assert_true(r[k] >= ' ' && r[k] <= '~');
        seen[r[k]]++;
      }
      assert_memory_equal(r + 98, "\r\n", 2);
    }
    for (distinct = 0, i = 0; i < 256; i++)
      distinct += seen[i] > 0;
    assert_int_equal(distinct, 95); /* every printable character occurs */
  }
  free(buf);
}

static void test_gensort_deterministic(void **state)
{
  enum { N = 1000 };
  unsigned flagsets[4] = {0, RIVER_GENSORT_ASCII, RIVER_GENSORT_SKEW,
                          RIVER_GENSORT_ASCII | RIVER_GENSORT_SKEW};
  unsigned char *a = malloc((size_t)N * RS), *b = malloc((size_t)N * RS);
  uint64_t first = ((uint64_t)1 << 33) + 17;
  size_t cuts[] = {0, 1, 2, 99, 100, 513, 999, N};
  size_t i;
  int f;

  assert_non_null(a);
  assert_non_null(b);
  for (f = 0; f < 4; f++) {
    /* Same seed and rows: same bytes. */
    memset(a, 1, (size_t)N * RS);
    memset(b, 2, (size_t)N * RS);
    assert_int_equal(river_gensort_fill(first, N, flagsets[f], 99, a),
                     RIVER_SUCCESS);
    assert_int_equal(river_gensort_fill(first, N, flagsets[f], 99, b),
                     RIVER_SUCCESS);
    assert_memory_equal(a, b, (size_t)N * RS);

    /* The same rows filled in uneven pieces (one of them empty). */
    memset(b, 3, (size_t)N * RS);
    for (i = 0; i + 1 < sizeof cuts / sizeof cuts[0]; i++)
      assert_int_equal(river_gensort_fill(first + cuts[i],
                                          cuts[i + 1] - cuts[i], flagsets[f],
                                          99, b + cuts[i] * RS),
                       RIVER_SUCCESS);
    assert_memory_equal(a, b, (size_t)N * RS);

    /* Row by row, backwards. */
    memset(b, 4, (size_t)N * RS);
    for (i = N; i-- > 0;)
      assert_int_equal(river_gensort_fill(first + i, 1, flagsets[f], 99,
                                          b + i * RS),
                       RIVER_SUCCESS);
    assert_memory_equal(a, b, (size_t)N * RS);
  }
  free(a);
  free(b);
}

/* Different seeds give different keys (each row's key changes); the row
 * ids are the same. */
static void test_gensort_seeds_differ(void **state)
{
  enum { N = 500 };
  unsigned char *a = malloc((size_t)N * RS), *b = malloc((size_t)N * RS);
  int i, same = 0;

  assert_non_null(a);
  assert_non_null(b);
  assert_int_equal(river_gensort_fill(0, N, 0, 1, a), RIVER_SUCCESS);
  assert_int_equal(river_gensort_fill(0, N, 0, 2, b), RIVER_SUCCESS);
  for (i = 0; i < N; i++) {
    same += memcmp(a + (size_t)i * RS, b + (size_t)i * RS, KS) == 0;
    assert_memory_equal(a + (size_t)i * RS + 12, b + (size_t)i * RS + 12, 32);
  }
  assert_int_equal(same, 0);
  /* Neighbouring rows under one seed differ too. */
  for (i = 1; i < N; i++)
    assert_memory_not_equal(a + (size_t)i * RS, a + (size_t)(i - 1) * RS, KS);
  free(a);
  free(b);
}

static int cmp_key(const void *x, const void *y)
{
  return memcmp(x, y, KS);
}

/* Fraction of N records (binary, from row 0) whose first key byte < 16;
 * hist gets the first-byte histogram. */
static double low_fraction(unsigned flags, uint64_t seed, int n, int *hist)
{
  unsigned char *buf = malloc((size_t)n * RS);
  int i, low = 0;

  assert_non_null(buf);
  memset(hist, 0, 256 * sizeof *hist);
  assert_int_equal(river_gensort_fill(0, (size_t)n, flags, seed, buf),
                   RIVER_SUCCESS);
  for (i = 0; i < n; i++) {
    hist[buf[(size_t)i * RS]]++;
    low += buf[(size_t)i * RS] < 16;
  }
  free(buf);
  return (double)low / n;
}

static void test_gensort_skew(void **state)
{
  enum { N = 20000 };
  int hist[256], i, distinct;
  double f;

  f = low_fraction(RIVER_GENSORT_SKEW, 5, N, hist);
  assert_true(f > 0.4);
  assert_true(f < 0.6); /* documented: about half */
  f = low_fraction(0, 5, N, hist);
  assert_true(f < 0.1);
  assert_true(f > 0.03); /* uniform: about 1/16 */
  for (distinct = 0, i = 0; i < 256; i++)
    distinct += hist[i] > 0;
  assert_int_equal(distinct, 256);
}

/* Without skew, keys are well spread: every first byte occurs, no first
 * byte is grossly over-represented, every key byte position varies, and
 * no two of 20000 keys are equal. */
static void test_gensort_spread(void **state)
{
  enum { N = 20000 };
  unsigned char *buf = malloc((size_t)N * RS);
  unsigned char *keys = malloc((size_t)N * KS);
  int hist[KS][256], i, k, b, distinct, max;

  assert_non_null(buf);
  assert_non_null(keys);
  memset(hist, 0, sizeof hist);
  assert_int_equal(river_gensort_fill(123456789, N, 0, 77, buf),
                   RIVER_SUCCESS);
  for (i = 0; i < N; i++) {
    memcpy(keys + (size_t)i * KS, buf + (size_t)i * RS, KS);
    for (k = 0; k < KS; k++)
      hist[k][buf[(size_t)i * RS + k]]++;
  }
  for (k = 0; k < KS; k++) {
    for (distinct = 0, max = 0, b = 0; b < 256; b++) {
      distinct += hist[k][b] > 0;
      if (hist[k][b] > max)
        max = hist[k][b];
    }
    assert_int_equal(distinct, 256);
    assert_true(max < 3 * N / 256); /* expected ~78 each */
  }
  qsort(keys, N, KS, cmp_key);
  for (i = 1; i < N; i++)
    assert_true(memcmp(keys + (size_t)(i - 1) * KS, keys + (size_t)i * KS,
                       KS) != 0);
  free(buf);
  free(keys);
}

static void test_gensort_bad_args(void **state)
{
  unsigned char buf[3 * RS], keep[3 * RS];

  memset(buf, 0x5a, sizeof buf);
  memcpy(keep, buf, sizeof buf);
  assert_int_equal(river_gensort_fill(0, 1, 0, 1, NULL), RIVER_EINVAL);
  assert_int_equal(river_gensort_fill(0, 3, 4u, 1, buf), RIVER_EINVAL);
  assert_int_equal(river_gensort_fill(0, 3, 0x80000000u, 1, buf),
                   RIVER_EINVAL);
  assert_int_equal(river_gensort_fill(0, 3, ~0u, 1, buf), RIVER_EINVAL);
  /* Rows past UINT64_MAX: first + count - 1 would wrap. */
  assert_int_equal(river_gensort_fill(UINT64_MAX, 2, 0, 1, buf),
                   RIVER_EINVAL);
  assert_int_equal(river_gensort_fill(UINT64_MAX - 1, 3, 0, 1, buf),
                   RIVER_EINVAL);
  assert_int_equal(river_gensort_fill(2, SIZE_MAX, 0, 1, buf), RIVER_EINVAL);
  assert_memory_equal(buf, keep, sizeof buf);

  /* No records: buf may be NULL, whatever first is. */
  assert_int_equal(river_gensort_fill(0, 0, 0, 1, NULL), RIVER_SUCCESS);
  assert_int_equal(river_gensort_fill(UINT64_MAX, 0, RIVER_GENSORT_ASCII, 1,
                                      NULL),
                   RIVER_SUCCESS);
  assert_int_equal(river_gensort_fill(5, 0, 0, 1, buf), RIVER_SUCCESS);
  assert_memory_equal(buf, keep, sizeof buf);

  /* The last rows that fit are fine. */
  assert_int_equal(river_gensort_fill(UINT64_MAX - 2, 3, 0, 1, buf),
                   RIVER_SUCCESS);
  assert_memory_equal(buf + 2 * RS + 12, "0000000000000000FFFFFFFFFFFFFFFF",
                      32);
  assert_memory_equal(buf + 12, "0000000000000000FFFFFFFFFFFFFFFD", 32);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_gensort_binary_layout),
    cmocka_unit_test(test_gensort_ascii_layout),
    cmocka_unit_test(test_gensort_ascii_keys_printable),
    cmocka_unit_test(test_gensort_deterministic),
    cmocka_unit_test(test_gensort_seeds_differ),
    cmocka_unit_test(test_gensort_skew),
    cmocka_unit_test(test_gensort_spread),
    cmocka_unit_test(test_gensort_bad_args),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
