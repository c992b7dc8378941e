/*
 * test_partition - where an exchange edge sends a record
 * (src/flow_partition.c), in the one key order (river_key_norm):
 *
 *   range     int32 keys over 4 consumers: consumer floor((k + 2^31) /
 *             2^30), so -2^31, -1, 0 and 2^31 - 1 go to 0, 1, 2 and 3;
 *             bytes keys by their first byte (b * 4 / 256)
 *   splitters int32 splitters -10, 0, 10: a key goes to the number of
 *             splitters <= it; splitters out of order are RIVER_EINVAL
 *             naming the first bad one
 *   hash      every record to one consumer in 0..n-1, the same key to
 *             the same one, and 1000 keys over 4 consumers each get some
 *   float     a range on a float64 key is RIVER_ENOTSUP, splitters on
 *             it place -0 and +0 alike
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "flow_run_internal.h"

static river_schema *schema(const char *text)
{
  river_schema *s = NULL;

  assert_int_equal(river_schema_parse(text, &s), RIVER_SUCCESS);
  return s;
}

/* A record of "k:int32,pad:bytes[4]" with key v. */
static void rec32(unsigned char *r, int32_t v)
{
  memset(r, 0, 8);
  memcpy(r, &v, 4);
}

static void test_range_int32(void **state)
{
  river_schema *s = schema("k:int32,pad:bytes[4];key=k");
  struct river__part p;
  const int32_t k[4] = {INT32_MIN, -1, 0, INT32_MAX};
  unsigned char r[8];
  int i;

  (void)state;
  assert_int_equal(river__part_init(&p, s, NULL, RIVER_BY_RANGE),
                   RIVER_SUCCESS);
  for (i = 0; i < 4; i++) {
    rec32(r, k[i]);
    assert_int_equal(river__part_fn(r, 4, &p), i);
  }
  rec32(r, -(1 << 30) - 1);            /* just below a quarter */
  assert_int_equal(river__part_fn(r, 4, &p), 0);
  rec32(r, -(1 << 30));
  assert_int_equal(river__part_fn(r, 4, &p), 1);
  river__part_free(&p);
  river_schema_destroy(s);
}

static void test_range_bytes(void **state)
{
  river_schema *s = schema("key:bytes[10],payload:bytes[90]");
  struct river__part p;
  unsigned char r[100];
  int b;

  (void)state;
  assert_int_equal(river__part_init(&p, s, NULL, RIVER_BY_RANGE),
                   RIVER_SUCCESS);
  memset(r, 0xff, sizeof r);
  for (b = 0; b < 256; b++) {
    r[0] = (unsigned char)b;
    assert_int_equal(river__part_fn(r, 4, &p), b * 4 / 256);
  }
  river__part_free(&p);
  river_schema_destroy(s);
}

static void test_splitters(void **state)
{
  river_schema *s = schema("k:int32,pad:bytes[4];key=k");
  struct river__part p;
  const int32_t split[3] = {-10, 0, 10}, bad[3] = {-10, 10, 0};
  const int32_t k[6] = {-11, -10, -1, 0, 10, 1000};
  const int want[6] = {0, 1, 1, 2, 3, 3};
  unsigned char r[8];
  size_t at = 0;
  int i;

  (void)state;
  assert_int_equal(river__part_init(&p, s, NULL, RIVER_BY_RANGE),
                   RIVER_SUCCESS);
  assert_int_equal(river__part_set_splitters(&p, bad, 3, &at), RIVER_EINVAL);
  assert_int_equal(at, 2);
  assert_int_equal(river__part_set_splitters(&p, split, 3, &at),
                   RIVER_SUCCESS);
  for (i = 0; i < 6; i++) {
    rec32(r, k[i]);
    assert_int_equal(river__part_fn(r, 4, &p), want[i]);
  }
  river__part_free(&p);
  river_schema_destroy(s);
}

static void test_hash(void **state)
{
  river_schema *s = schema("k:int32,pad:bytes[4];key=k");
  struct river__part p;
  unsigned char r[8];
  int got[4] = {0, 0, 0, 0}, i, c;

  (void)state;
  assert_int_equal(river__part_init(&p, s, "k", RIVER_BY_HASH),
                   RIVER_SUCCESS);
  for (i = 0; i < 1000; i++) {
    rec32(r, i);
    c = river__part_fn(r, 4, &p);
    assert_true(c >= 0 && c < 4);
    assert_int_equal(river__part_fn(r, 4, &p), c);
    got[c]++;
  }
  for (c = 0; c < 4; c++)
    assert_true(got[c] > 0);
  river__part_free(&p);
  assert_int_equal(river__part_init(&p, s, "nope", RIVER_BY_HASH),
                   RIVER_EINVAL);
  river__part_free(&p);
  river_schema_destroy(s);
}

static void test_float(void **state)
{
  river_schema *s = schema("x:float64;key=x");
  struct river__part p;
  const double split[1] = {0.0};
  double v;
  size_t at = 0;

  (void)state;
  assert_int_equal(river__part_init(&p, s, NULL, RIVER_BY_RANGE),
                   RIVER_ENOTSUP);
  river__part_free(&p);
  assert_int_equal(river__part_init(&p, s, NULL, RIVER_BY_HASH),
                   RIVER_SUCCESS);
  assert_int_equal(river__part_set_splitters(&p, split, 1, &at),
                   RIVER_SUCCESS);
  v = -0.0;
  assert_int_equal(river__part_fn(&v, 2, &p), 1);   /* -0 == +0 */
  v = -1e-300;
  assert_int_equal(river__part_fn(&v, 2, &p), 0);
  river__part_free(&p);
  river_schema_destroy(s);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_range_int32),
    cmocka_unit_test(test_range_bytes),
    cmocka_unit_test(test_splitters),
    cmocka_unit_test(test_hash),
    cmocka_unit_test(test_float),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
