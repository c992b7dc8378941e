/*
 * test_sort.c - the radix sort of the sort, merge and partition modules
 * (src/modules/radix.c) against qsort with river_schema_compare, for
 * every key type: random records with many repeated keys (so stability
 * shows), the key in the middle of the record (unaligned), floats with
 * -0, +0, infinities, denormals and NaNs of both signs. qsort is made
 * stable by breaking ties on the record's index, so the two orders must
 * be the same permutation. Also: normalized keys memcmp-order as
 * river_schema_compare does, and empty and one-record inputs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "modules/modules.h"

/* qsort's view: a record's address and its index. */
struct item {
  const unsigned char *rec;
  size_t idx;
};

static const river_schema *g_schema;

static int item_cmp(const void *a, const void *b)
{
  const struct item *x = a, *y = b;
  int c = 0;

  river_schema_compare(g_schema, x->rec, y->rec, &c);
  if (c != 0)
    return c;
  return (x->idx > y->idx) - (x->idx < y->idx);
}

static uint64_t rng(uint64_t *s)
{
  uint64_t z = (*s += 0x9e3779b97f4a7c15u);

  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

/* A key value of type t from a small pool (repeats) or at random. */
static void random_key(river_type t, size_t size, uint64_t *s,
                       unsigned char *dst)
{
  static const double specials[] = {0.0, -0.0, 1.0, -1.0, INFINITY,
                                    -INFINITY, 1e-310, -1e-310, 1e300,
                                    -1e300, 0.5, -0.5};
  uint64_t r = rng(s), pick = r % 4;
  size_t i;

  if (t == RIVER_TYPE_FLOAT32 || t == RIVER_TYPE_FLOAT64) {
    double d;
    if (pick == 0)
      d = specials[(r >> 8) % (sizeof specials / sizeof *specials)];
    else if (pick == 1)
      d = (r >> 8) & 1 ? NAN : -NAN;
    else
      d = ((double)(int64_t)rng(s)) / (double)((r >> 8) % 1000 + 1);
    if (t == RIVER_TYPE_FLOAT32) {
      float f = (float)d;
      memcpy(dst, &f, 4);
    } else {
      memcpy(dst, &d, 8);
    }
    return;
  }
  if (pick == 0) {          /* repeats: few distinct values */
    r = rng(s) % 5;
    for (i = 0; i < size; i++)
      dst[i] = (unsigned char)(r * 37 + i);
    return;
  }
  for (i = 0; i < size; i += 8) {
    uint64_t w = rng(s);
    memcpy(dst + i, &w, size - i < 8 ? size - i : 8);
  }
  if (t == RIVER_TYPE_CHAR && pick == 1)
    for (i = 0; i < size; i++)
      dst[i] = (unsigned char)('a' + dst[i] % 3);  /* shared prefixes */
}

/* Sort n random records of schema text by radix and by qsort; the
 * orders must be equal. */
static void check_schema(const char *text, size_t n, uint64_t seed)
{
  river_schema *s = NULL;
  river_key k;
  struct item *items;
  unsigned char *recs;
  size_t *order, i, ksize;
  uint64_t st = seed;

  assert_int_equal(river_schema_parse(text, &s), RIVER_SUCCESS);
  assert_int_equal(river_key_of(s, -1, &k), RIVER_SUCCESS);
  river_schema_key(s, NULL, NULL, &ksize);
  recs = malloc(n * k.record_size + 1);
  items = malloc((n + 1) * sizeof *items);
  order = malloc((n + 1) * sizeof *order);
  assert_non_null(recs);
  assert_non_null(items);
  assert_non_null(order);
  for (i = 0; i < n * k.record_size; i++)
    recs[i] = (unsigned char)rng(&st);
  for (i = 0; i < n; i++) {
    random_key(k.type, ksize, &st, recs + i * k.record_size + k.offset);
    items[i].rec = recs + i * k.record_size;
    items[i].idx = i;
  }
  assert_int_equal(river__radix_order(&k, recs, n, order), RIVER_SUCCESS);
  g_schema = s;
  qsort(items, n, sizeof *items, item_cmp);
  for (i = 0; i < n; i++)
    if (order[i] != items[i].idx)
      fail_msg("%s: position %zu: radix has record %zu, qsort %zu", text, i,
               order[i], items[i].idx);
  free(recs);
  free(items);
  free(order);
  river_schema_destroy(s);
}

static const char *const schemas[] = {
  "a:bytes[3],k:int32,b:bytes[5];key=k",
  "a:bytes[1],k:int64,b:bytes[2];key=k",
  "a:bytes[3],k:uint32;key=k",
  "k:uint64,b:bytes[7]",
  "a:bytes[1],k:float32,b:bytes[1];key=k",
  "a:bytes[5],k:float64;key=k",
  "a:bytes[2],k:char[6],b:bytes[3];key=k",
  "key:bytes[10],payload:bytes[90]",
  "a:int32,k:bytes[1];key=k",
  "k:bytes[20]",
  "a:bytes[1],k:char[12];key=k",
};

static void test_sort_every_type(void **state)
{
  size_t i;

  (void)state;
  for (i = 0; i < sizeof schemas / sizeof *schemas; i++) {
    check_schema(schemas[i], 5000, 1 + i);
    check_schema(schemas[i], 37, 100 + i);
  }
}

static void test_sort_tiny(void **state)
{
  size_t i;

  (void)state;
  for (i = 0; i < sizeof schemas / sizeof *schemas; i++) {
    check_schema(schemas[i], 0, 7);
    check_schema(schemas[i], 1, 7);
    check_schema(schemas[i], 2, 9);
  }
}

/* memcmp of normalized keys has the sign of river_schema_compare. */
static void test_key_norm_order(void **state)
{
  size_t i, a, b, n = 300;
  uint64_t st = 5;

  (void)state;
  for (i = 0; i < sizeof schemas / sizeof *schemas; i++) {
    river_schema *s = NULL;
    river_key k;
    unsigned char *recs, na[32], nb[32];
    size_t ksize;
    assert_int_equal(river_schema_parse(schemas[i], &s), RIVER_SUCCESS);
    river_key_of(s, -1, &k);
    river_schema_key(s, NULL, NULL, &ksize);
    recs = calloc(n, k.record_size);
    assert_non_null(recs);
    for (a = 0; a < n; a++)
      random_key(k.type, ksize, &st, recs + a * k.record_size + k.offset);
    for (a = 0; a < n; a++) {
      for (b = 0; b < n; b += 7) {
        const unsigned char *ra = recs + a * k.record_size;
        const unsigned char *rb = recs + b * k.record_size;
        int c = 0, m;
        river_schema_compare(s, ra, rb, &c);
        river_key_norm(&k, ra + k.offset, na);
        river_key_norm(&k, rb + k.offset, nb);
        m = memcmp(na, nb, k.size);
        assert_int_equal((c > 0) - (c < 0), (m > 0) - (m < 0));
      }
    }
    free(recs);
    river_schema_destroy(s);
  }
}

/* Stability on equal keys: records keep their input order. */
static void test_sort_stable(void **state)
{
  river_schema *s = NULL;
  river_key k;
  uint32_t recs[2 * 6] = {5, 0, 3, 1, 5, 2, 3, 3, 5, 4, 1, 5};
  size_t order[6], want[6] = {5, 1, 3, 0, 2, 4};
  int i;

  (void)state;
  assert_int_equal(river_schema_parse("k:uint32,i:uint32", &s),
                   RIVER_SUCCESS);
  river_key_of(s, -1, &k);
  assert_int_equal(river__radix_order(&k, recs, 6, order), RIVER_SUCCESS);
  for (i = 0; i < 6; i++)
    assert_int_equal(order[i], want[i]);
  river_schema_destroy(s);
}

/* Keys that share their first 8 bytes ("customer" then 8 digits, some
 * repeated): one long stretch of equal prefixes, ordered by the rest of
 * the key and, for equal keys, by input order (against qsort). */
static void test_sort_long_prefix(void **state)
{
  river_schema *s = NULL;
  river_key k;
  struct item *items;
  unsigned char *recs;
  size_t *order, i, n = 3000;
  uint64_t st = 99;

  (void)state;
  assert_int_equal(river_schema_parse("k:char[16],v:uint32", &s),
                   RIVER_SUCCESS);
  river_key_of(s, -1, &k);
  recs = malloc(n * 20);
  items = malloc(n * sizeof *items);
  order = malloc(n * sizeof *order);
  assert_non_null(recs);
  assert_non_null(items);
  assert_non_null(order);
  for (i = 0; i < n; i++) {
    char key[17];
    uint32_t v = (uint32_t)i;
    snprintf(key, sizeof key, "customer%08u",
             (unsigned)(rng(&st) % (n / 2)));
    memcpy(recs + i * 20, key, 16);
    memcpy(recs + i * 20 + 16, &v, 4);
    items[i].rec = recs + i * 20;
    items[i].idx = i;
  }
  assert_int_equal(river__radix_order(&k, recs, n, order), RIVER_SUCCESS);
  g_schema = s;
  qsort(items, n, sizeof *items, item_cmp);
  for (i = 0; i < n; i++)
    assert_int_equal(order[i], items[i].idx);
  free(recs);
  free(items);
  free(order);
  river_schema_destroy(s);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_sort_long_prefix),
    cmocka_unit_test(test_sort_every_type),
    cmocka_unit_test(test_sort_tiny),
    cmocka_unit_test(test_key_norm_order),
    cmocka_unit_test(test_sort_stable),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
