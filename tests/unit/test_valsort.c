/*
 * test_valsort.c - the validator of river/valsort.h without MPI: order,
 * repeats, the position of the first record out of order, records fed in
 * pieces, the checksum (the sum of zlib CRC-32s: the CRC-32 check value
 * of "123456789" is 0xCBF43926) and its text, keys of a numeric type in
 * the schema's order, and bad arguments.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <river.h>
#include <string.h>

/* A validator of records "k:uint32,tag:char[9];key=k", fed keys. */
static river_valsort *numeric(void)
{
  river_schema *s = NULL;
  river_valsort *v = NULL;

  assert_int_equal(river_schema_parse("k:uint32,tag:char[9];key=k", &s),
                   RIVER_SUCCESS);
  assert_int_equal(river_valsort_create(s, &v), RIVER_SUCCESS);
  river_schema_destroy(s);
  return v;
}

static void add_keys(river_valsort *v, const uint32_t *keys, size_t n)
{
  unsigned char rec[13];
  size_t i;

  for (i = 0; i < n; i++) {
    memcpy(rec, &keys[i], 4);
    memcpy(rec + 4, "123456789", 9);
    assert_int_equal(river_valsort_add(v, rec, 1), RIVER_SUCCESS);
  }
}

static void test_valsort_order(void **state)
{
  /* 256 > 255 as numbers though not as little-endian bytes. */
  static const uint32_t keys[] = {1, 255, 256, 256, 7, 300, 300, 2};
  river_valsort *v = numeric();
  river_valsort_summary r;

  (void)state;
  add_keys(v, keys, 4);
  assert_int_equal(river_valsort_result(v, &r), RIVER_SUCCESS);
  assert_int_equal(r.records, 4);
  assert_int_equal(r.unordered, 0);
  assert_true(r.first_unordered == UINT64_MAX);
  assert_int_equal(r.duplicates, 1);
  add_keys(v, keys + 4, 4);   /* a second piece */
  assert_int_equal(river_valsort_result(v, &r), RIVER_SUCCESS);
  assert_int_equal(r.records, 8);
  assert_int_equal(r.unordered, 2);       /* 7 after 256, 2 after 300 */
  assert_int_equal(r.first_unordered, 4);
  assert_int_equal(r.duplicates, 2);
  river_valsort_destroy(v);
}

static void test_valsort_checksum(void **state)
{
  unsigned char rec[9];
  river_schema *s = NULL;
  river_valsort *v = NULL;
  river_valsort_summary r;
  char text[40];
  int i;

  (void)state;
  assert_int_equal(river_schema_parse("t:char[9]", &s), RIVER_SUCCESS);
  assert_int_equal(river_valsort_create(s, &v), RIVER_SUCCESS);
  memcpy(rec, "123456789", 9);
  assert_int_equal(river_valsort_add(v, rec, 1), RIVER_SUCCESS);
  river_valsort_result(v, &r);
  assert_true(r.checksum_lo == 0xCBF43926u && r.checksum_hi == 0);
  assert_int_equal(river_valsort_checksum_text(&r, text, sizeof text),
                   RIVER_SUCCESS);
  assert_string_equal(text, "cbf43926");
  for (i = 1; i < 5; i++)
    assert_int_equal(river_valsort_add(v, rec, 1), RIVER_SUCCESS);
  river_valsort_result(v, &r);
  assert_true(r.checksum_lo == 5 * (uint64_t)0xCBF43926u);
  assert_int_equal(r.duplicates, 4);
  /* 128 bits: the text carries the high word. */
  r.checksum_hi = 1;
  r.checksum_lo = 2;
  assert_int_equal(river_valsort_checksum_text(&r, text, sizeof text),
                   RIVER_SUCCESS);
  assert_string_equal(text, "10000000000000002");
  assert_int_equal(river_valsort_checksum_text(&r, text, 8), RIVER_ENOBUFS);
  river_valsort_destroy(v);
  river_schema_destroy(s);
}

static void test_valsort_badparam(void **state)
{
  river_valsort *v = numeric(), *keep = v, *out = keep;
  river_valsort_summary r;
  char text[40];

  (void)state;
  assert_int_equal(river_valsort_create(NULL, &out), RIVER_EINVAL);
  assert_ptr_equal(out, keep);
  assert_int_equal(river_valsort_add(NULL, text, 1), RIVER_EINVAL);
  assert_int_equal(river_valsort_add(v, NULL, 1), RIVER_EINVAL);
  assert_int_equal(river_valsort_add(v, NULL, 0), RIVER_SUCCESS);
  assert_int_equal(river_valsort_result(NULL, &r), RIVER_EINVAL);
  assert_int_equal(river_valsort_result(v, NULL), RIVER_EINVAL);
  assert_int_equal(river_valsort_checksum_text(NULL, text, 40), RIVER_EINVAL);
  assert_int_equal(river_valsort_checksum_text(&r, NULL, 40), RIVER_EINVAL);
  assert_int_equal(river_valsort_reduce(NULL, MPI_COMM_WORLD), RIVER_EINVAL);
  assert_int_equal(river_valsort_reduce(v, MPI_COMM_NULL), RIVER_EINVAL);
  assert_int_equal(river_valsort_destroy(NULL), RIVER_SUCCESS);
  river_valsort_destroy(v);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_valsort_order),
    cmocka_unit_test(test_valsort_checksum),
    cmocka_unit_test(test_valsort_badparam),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
