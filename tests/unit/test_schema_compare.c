/*
 * test_schema_compare.c - river_schema_compare for every key type: signs,
 * large unsigned values, -0.0, infinities and NaN, unsigned bytes, char
 * keys, keys unaligned in records at odd addresses, and sorting records
 * by a key in the middle of the record. Each numeric test walks a table
 * of values in ascending order and compares every pair.
 * river_schema_compare_keys: bare keys order as their records do.
 */
#include "schema_test.h"

#include <math.h>

/* ---------------------------------------------------------- comparison */

/* Records of the schema "pad:bytes[1],k:TYPE,tail:bytes[3]": the key at
 * offset 1 (unaligned for every numeric type), placed at odd addresses. */
struct rec_pair {
  unsigned char raw[2 * 32 + 1];
  unsigned char *a, *b;
};

static void rec_pair_init(struct rec_pair *p, size_t record_size)
{
  memset(p->raw, 0xee, sizeof p->raw);
  p->a = p->raw + 1;             /* odd address */
  p->b = p->raw + 1 + record_size;
  if (((uintptr_t)p->b & 1) == 0)
    p->b++;
}

/* Store v (any numeric type) as the key of rec, at offset 1. */
#define SET_KEY(rec, v) memcpy((rec) + 1, &(v), sizeof(v))

static void test_schema_compare_int32(void **state)
{
  river_schema *s = parse_ok("pad:bytes[1],k:int32,tail:bytes[3];key=k");
  static const int32_t v[] = {INT32_MIN, -70000, -256, -1, 0, 1, 255,
                              65536, INT32_MAX};
  struct rec_pair p;
  size_t i, j;

  rec_pair_init(&p, record_size(s));
  for (i = 0; i < sizeof v / sizeof *v; i++) {
    for (j = 0; j < sizeof v / sizeof *v; j++) {
      SET_KEY(p.a, v[i]);
      SET_KEY(p.b, v[j]);
      p.a[0] = 0x00;
      p.b[0] = 0xff; /* non-key bytes do not matter */
      assert_int_equal(cmp(s, p.a, p.b), (i > j) - (i < j));
    }
  }
  river_schema_destroy(s);
}

static void test_schema_compare_int64(void **state)
{
  river_schema *s = parse_ok("pad:bytes[1],k:int64,tail:bytes[3];key=k");
  static const int64_t v[] = {INT64_MIN, -((int64_t)1 << 40), -4294967296LL,
                              -1, 0, 1, 4294967296LL, (int64_t)1 << 62,
                              INT64_MAX};
  struct rec_pair p;
  size_t i, j;

  rec_pair_init(&p, record_size(s));
  for (i = 0; i < sizeof v / sizeof *v; i++) {
    for (j = 0; j < sizeof v / sizeof *v; j++) {
      SET_KEY(p.a, v[i]);
      SET_KEY(p.b, v[j]);
      assert_int_equal(cmp(s, p.a, p.b), (i > j) - (i < j));
    }
  }
  river_schema_destroy(s);
}

static void test_schema_compare_uint32(void **state)
{
  river_schema *s = parse_ok("pad:bytes[1],k:uint32,tail:bytes[3];key=k");
  /* 0x80000000 and up would be negative as int32. */
  static const uint32_t v[] = {0, 1, 255, 256, 0x7fffffffu, 0x80000000u,
                               0xfffffffeu, UINT32_MAX};
  struct rec_pair p;
  size_t i, j;

  rec_pair_init(&p, record_size(s));
  for (i = 0; i < sizeof v / sizeof *v; i++) {
    for (j = 0; j < sizeof v / sizeof *v; j++) {
      SET_KEY(p.a, v[i]);
      SET_KEY(p.b, v[j]);
      assert_int_equal(cmp(s, p.a, p.b), (i > j) - (i < j));
    }
  }
  river_schema_destroy(s);
}

static void test_schema_compare_uint64(void **state)
{
  river_schema *s = parse_ok("pad:bytes[1],k:uint64,tail:bytes[3];key=k");
  /* Values above INT64_MAX sort after it, not before 0. */
  static const uint64_t v[] = {0, 1, 0xffffffffull, 0x100000000ull,
                               (uint64_t)INT64_MAX,
                               (uint64_t)INT64_MAX + 1,
                               0xfedcba9876543210ull, UINT64_MAX - 1,
                               UINT64_MAX};
  struct rec_pair p;
  size_t i, j;

  rec_pair_init(&p, record_size(s));
  for (i = 0; i < sizeof v / sizeof *v; i++) {
    for (j = 0; j < sizeof v / sizeof *v; j++) {
      SET_KEY(p.a, v[i]);
      SET_KEY(p.b, v[j]);
      assert_int_equal(cmp(s, p.a, p.b), (i > j) - (i < j));
    }
  }
  river_schema_destroy(s);
}

static void test_schema_compare_float64(void **state)
{
  river_schema *s = parse_ok("pad:bytes[1],k:float64,tail:bytes[3];key=k");
  /* In order; v[k] and v[k + 1] marked equal where eq[k]. */
  const double v[] = {-INFINITY, -1e300, -1.5, -0.0, 0.0, 4.9e-324, 1.0,
                      1e300, INFINITY, NAN, -NAN};
  const int rank[] = {0, 1, 2, 3, 3, 4, 5, 6, 7, 8, 8};
  struct rec_pair p;
  size_t i, j;

  rec_pair_init(&p, record_size(s));
  for (i = 0; i < sizeof v / sizeof *v; i++) {
    for (j = 0; j < sizeof v / sizeof *v; j++) {
      SET_KEY(p.a, v[i]);
      SET_KEY(p.b, v[j]);
      if (cmp(s, p.a, p.b) != (rank[i] > rank[j]) - (rank[i] < rank[j]))
        fail_msg("float64 %g vs %g: got %d", v[i], v[j], cmp(s, p.a, p.b));
    }
  }
  river_schema_destroy(s);
}

static void test_schema_compare_float32(void **state)
{
  river_schema *s = parse_ok("pad:bytes[1],k:float32,tail:bytes[3];key=k");
  const float v[] = {-INFINITY, -3.4e38f, -1.5f, -0.0f, 0.0f, 1.4e-45f,
                     1.0f, 3.4e38f, INFINITY, NAN, -NAN};
  const int rank[] = {0, 1, 2, 3, 3, 4, 5, 6, 7, 8, 8};
  struct rec_pair p;
  size_t i, j;

  rec_pair_init(&p, record_size(s));
  for (i = 0; i < sizeof v / sizeof *v; i++) {
    for (j = 0; j < sizeof v / sizeof *v; j++) {
      SET_KEY(p.a, v[i]);
      SET_KEY(p.b, v[j]);
      if (cmp(s, p.a, p.b) != (rank[i] > rank[j]) - (rank[i] < rank[j]))
        fail_msg("float32 %g vs %g: got %d", (double)v[i], (double)v[j],
                 cmp(s, p.a, p.b));
    }
  }
  river_schema_destroy(s);
}

static void test_schema_compare_bytes_unsigned(void **state)
{
  river_schema *s = NULL;
  unsigned char a[100], b[100];

  assert_int_equal(river_schema_create_default(&s), RIVER_SUCCESS);
  memset(a, 0, sizeof a);
  memset(b, 0, sizeof b);
  assert_int_equal(cmp(s, a, b), 0);

  /* Only the 10 key bytes count. */
  memset(b + 10, 0xff, 90);
  assert_int_equal(cmp(s, a, b), 0);

  /* Bytes compare unsigned: 0x80 and 0xff are above 0x7f. */
  a[0] = 0x7f;
  b[0] = 0x80;
  assert_less(s, a, b);
  b[0] = 0xff;
  assert_less(s, a, b);

  /* The first difference decides, wherever it is. */
  memset(a, 0x41, 10);
  memset(b, 0x41, 10);
  a[9] = 0x00;
  b[9] = 0x01;
  assert_less(s, a, b);
  a[3] = 0x42;
  assert_less(s, b, a);

  /* Zero bytes are data, not terminators. */
  memset(a, 0, 10);
  memset(b, 0, 10);
  b[8] = 0x01;
  assert_less(s, a, b);
  river_schema_destroy(s);
}

static void test_schema_compare_char_unaligned(void **state)
{
  river_schema *s = parse_ok("n:int32,name:char[5],x:uint64;key=name");
  unsigned char a[17], b[17];

  memset(a, 0, sizeof a);
  memset(b, 0, sizeof b);
  memcpy(a + 4, "apple", 5);
  memcpy(b + 4, "apply", 5);
  assert_less(s, a, b);
  memcpy(b + 4, "Zebra", 5); /* 'Z' < 'a' in byte order */
  assert_less(s, b, a);
  memcpy(b + 4, "appl\xe9", 5); /* high byte: after 'e' */
  assert_less(s, a, b);
  memcpy(b + 4, "apple", 5);
  b[0] = 9;
  b[16] = 9;
  assert_int_equal(cmp(s, a, b), 0);
  river_schema_destroy(s);
}

/* A key field after a char[3]: offset 3 in a record at an odd address,
 * for each numeric type the key is misaligned for its type. */
static void test_schema_compare_unaligned_numeric_key(void **state)
{
  river_schema *s = parse_ok("c:char[3],k:int64,d:float32;key=k");
  unsigned char buf[2 * 15 + 2];
  unsigned char *a = buf + 1, *b = buf + 1 + 15;
  int64_t x = -5, y = 3;

  assert_key(s, 1, 3, 8);
  memset(buf, 0, sizeof buf);
  memcpy(a + 3, &x, sizeof x);
  memcpy(b + 3, &y, sizeof y);
  assert_less(s, a, b);
  river_schema_destroy(s);

  s = parse_ok("c:char[3],k:float64;key=k");
  {
    double dx = -2.5, dy = NAN;

    memcpy(a + 3, &dx, sizeof dx);
    memcpy(b + 3, &dy, sizeof dy);
    assert_less(s, a, b);
  }
  river_schema_destroy(s);
}

/* The key is found by offset: with a key in the middle, sorting by it
 * orders records by that field alone. */
static const river_schema *sort_schema;

static int sort_cmp(const void *a, const void *b)
{
  int c = 0;

  assert_int_equal(river_schema_compare(sort_schema, a, b, &c),
                   RIVER_SUCCESS);
  return c;
}

static void test_schema_compare_sorts_records(void **state)
{
  river_schema *s = parse_ok("tag:char[1],v:int32,w:bytes[2];key=v");
  enum { N = 257, R = 7 };
  unsigned char recs[N * R];
  int32_t prev = INT32_MIN, v;
  int i;

  srand(7);
  for (i = 0; i < N; i++) {
    v = (int32_t)((rand() % 2001) - 1000) * 1000003;
    recs[i * R] = (unsigned char)i;
    memcpy(recs + i * R + 1, &v, sizeof v);
    recs[i * R + 5] = (unsigned char)(255 - i);
    recs[i * R + 6] = 0;
  }
  sort_schema = s;
  qsort(recs, N, R, sort_cmp);
  for (i = 0; i < N; i++) {
    memcpy(&v, recs + i * R + 1, sizeof v);
    assert_true(prev <= v);
    prev = v;
  }
  river_schema_destroy(s);
}

/* river_schema_compare_keys on bare keys copied out of records, at odd
 * addresses, gives river_schema_compare's answer for every pair: float64
 * (-0 equal to +0, NaNs equal and last) and an unsigned bytes key. */
static void test_schema_compare_keys_as_records(void **state)
{
  static const char *const texts[] = {
    "pad:bytes[1],k:float64,tail:bytes[3];key=k",
    "pad:bytes[1],k:bytes[3],tail:bytes[3];key=k"};
  const double d[] = {-INFINITY, -1.5, -0.0, 0.0, 1.0, INFINITY, NAN};
  const unsigned char b[][3] = {{0, 0, 0}, {0, 0, 1}, {0x7f, 0, 0},
                                {0x80, 0, 0}, {0xff, 0xff, 0xff}};
  unsigned char ka[9], kb[9];
  struct rec_pair p;
  size_t t, i, j, n, size;
  int c;

  for (t = 0; t < 2; t++) {
    river_schema *s = parse_ok(texts[t]);

    assert_int_equal(river_schema_key(s, NULL, NULL, &size), RIVER_SUCCESS);
    n = t == 0 ? sizeof d / sizeof *d : sizeof b / sizeof *b;
    rec_pair_init(&p, record_size(s));
    for (i = 0; i < n; i++)
      for (j = 0; j < n; j++) {
        if (t == 0) {
          SET_KEY(p.a, d[i]);
          SET_KEY(p.b, d[j]);
        } else {
          memcpy(p.a + 1, b[i], 3);
          memcpy(p.b + 1, b[j], 3);
        }
        memcpy(ka + 1, p.a + 1, size);   /* odd addresses */
        memcpy(kb + 1, p.b + 1, size);
        c = 7;
        assert_int_equal(river_schema_compare_keys(s, ka + 1, kb + 1, &c),
                         RIVER_SUCCESS);
        assert_int_equal((c > 0) - (c < 0), cmp(s, p.a, p.b));
      }
    river_schema_destroy(s);
  }
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
  const struct CMUnitTest tests[] = {
    T(test_schema_compare_int32),
    T(test_schema_compare_int64),
    T(test_schema_compare_uint32),
    T(test_schema_compare_uint64),
    T(test_schema_compare_float64),
    T(test_schema_compare_float32),
    T(test_schema_compare_bytes_unsigned),
    T(test_schema_compare_char_unaligned),
    T(test_schema_compare_unaligned_numeric_key),
    T(test_schema_compare_sorts_records),
    T(test_schema_compare_keys_as_records),
  };
#undef T
  return cmocka_run_group_tests(tests, NULL, NULL);
}
