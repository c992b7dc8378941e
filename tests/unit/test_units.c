/*
 * test_units.c - river_parse_size's table (k and K x 1000, Ki x 1024, up
 * to T and Ti, the edges of uint64_t, and every spelling it refuses) and
 * river_format_size's three significant digits (units, rounding, the
 * carry into the next unit, the largest value, a short buffer).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <river.h>
#include <string.h>

static uint64_t parsed(const char *text)
{
  uint64_t v = 12345;

  assert_int_equal(river_parse_size(text, &v), RIVER_SUCCESS);
  return v;
}

/* text is refused and leaves the value alone. */
static void refused(const char *text)
{
  uint64_t v = 12345;

  if (river_parse_size(text, &v) != RIVER_EINVAL)
    fail_msg("'%s' was taken, as %llu", text, (unsigned long long)v);
  assert_int_equal(v, 12345);
}

static void test_parse_size_suffixes(void **state)
{
  (void)state;
  assert_int_equal(parsed("1k"), 1000);
  assert_int_equal(parsed("1K"), 1000);
  assert_int_equal(parsed("1Ki"), 1024);
  assert_int_equal(parsed("1M"), 1000000);
  assert_int_equal(parsed("1Mi"), 1048576);
  assert_int_equal(parsed("1G"), UINT64_C(1000000000));
  assert_int_equal(parsed("1Gi"), UINT64_C(1073741824));
  assert_int_equal(parsed("1T"), UINT64_C(1000000000000));
  assert_int_equal(parsed("1Ti"), UINT64_C(1099511627776));
  assert_int_equal(parsed("64Ki"), 65536);
  assert_int_equal(parsed("2k"), 2000);
  assert_int_equal(parsed("2Ki"), 2048);
}

static void test_parse_size_plain(void **state)
{
  (void)state;
  assert_int_equal(parsed("0"), 0);
  assert_int_equal(parsed("0k"), 0);
  assert_int_equal(parsed("007"), 7);
  assert_int_equal(parsed("4096"), 4096);
}

static void test_parse_size_edges(void **state)
{
  (void)state;
  assert_int_equal(parsed("18446744073709551615"), UINT64_MAX);
  refused("18446744073709551616");
  refused("99999999999999999999999");
  assert_int_equal(parsed("17Ti"), UINT64_C(17) << 40);
  /* 2^24 Ti is 2^64 */
  assert_int_equal(parsed("16777215Ti"), UINT64_C(16777215) << 40);
  refused("16777216Ti");
  assert_int_equal(parsed("18446744T"), UINT64_C(18446744000000000000));
  refused("18446745T");
  assert_int_equal(parsed("18446744073k"), UINT64_C(18446744073000));
}

static void test_parse_size_bad(void **state)
{
  static const char *const bad[] = {
    "", "k", "Ki", "-1", "+1", " 1", "1 ", "1.5M", "1.0", "1MB", "1B",
    "1b", "1m", "1ki", "1KI", "1KiB", "1kB", "1P", "1Pi", "1E", "0x10",
    "1e6", "1,000", "1_000", "1kk", "1Kik", "1i", "1\n",
    "\xef\xbc\x91" /* a fullwidth 1 */,
  };
  size_t i;

  (void)state;
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
    refused(bad[i]);
}

static void test_parse_size_null(void **state)
{
  uint64_t v = 5;

  (void)state;
  assert_int_equal(river_parse_size(NULL, &v), RIVER_EINVAL);
  assert_int_equal(river_parse_size("1", NULL), RIVER_EINVAL);
  assert_int_equal(v, 5);
}

/* bytes as river_format_size writes it. */
static void formats(uint64_t bytes, const char *want)
{
  char buf[RIVER_SIZE_TEXT_MAX];

  assert_int_equal(river_format_size(bytes, buf, sizeof buf), RIVER_SUCCESS);
  if (strcmp(buf, want) != 0)
    fail_msg("%llu: '%s', expected '%s'", (unsigned long long)bytes, buf,
             want);
}

static void test_format_size_units(void **state)
{
  (void)state;
  formats(0, "0 B");
  formats(1, "1 B");
  formats(999, "999 B");
  formats(1000, "1.00 kB");
  formats(1024, "1.02 kB");
  formats(65536, "65.5 kB");
  formats(105000000, "105 MB");
  formats(1048576, "1.05 MB");
  formats(UINT64_C(1050000000), "1.05 GB");
  formats(UINT64_C(12300000000000), "12.3 TB");
  formats(UINT64_C(1000000000000000), "1.00 PB");
  formats(UINT64_MAX, "18.4 EB");
}

/* Half up, and a value that rounds to 1000 of a unit is the next. */
static void test_format_size_rounding(void **state)
{
  (void)state;
  formats(1004, "1.00 kB");
  formats(1005, "1.01 kB");   /* exactly half: up */
  formats(9994, "9.99 kB");
  formats(9995, "10.0 kB");
  formats(99949, "99.9 kB");
  formats(99950, "100 kB");
  formats(999499, "999 kB");
  formats(999500, "1.00 MB");
  formats(UINT64_C(999500000000), "1.00 TB");
  formats(209715200, "210 MB");
}

static void test_format_size_buffer(void **state)
{
  char buf[8] = "keep";

  (void)state;
  assert_int_equal(river_format_size(1, NULL, 8), RIVER_EINVAL);
  /* "1.05 MB" is 7 characters: 7 bytes cannot hold its NUL */
  assert_int_equal(river_format_size(1048576, buf, 7), RIVER_ENOBUFS);
  assert_string_equal(buf, "keep");
  assert_int_equal(river_format_size(1048576, buf, 0), RIVER_ENOBUFS);
  assert_int_equal(river_format_size(1048576, buf, 8), RIVER_SUCCESS);
  assert_string_equal(buf, "1.05 MB");
}

/* Every size prints in the least buffer RIVER_SIZE_TEXT_MAX promises. */
static void test_format_size_fits(void **state)
{
  char buf[RIVER_SIZE_TEXT_MAX];
  uint64_t b;

  (void)state;
  for (b = 1; b < UINT64_MAX / 7; b = b * 7 + 3)
    assert_int_equal(river_format_size(b, buf, sizeof buf), RIVER_SUCCESS);
  assert_int_equal(river_format_size(UINT64_MAX, buf, sizeof buf),
                   RIVER_SUCCESS);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_parse_size_suffixes),
    cmocka_unit_test(test_parse_size_plain),
    cmocka_unit_test(test_parse_size_edges),
    cmocka_unit_test(test_parse_size_bad),
    cmocka_unit_test(test_parse_size_null),
    cmocka_unit_test(test_format_size_units),
    cmocka_unit_test(test_format_size_rounding),
    cmocka_unit_test(test_format_size_buffer),
    cmocka_unit_test(test_format_size_fits),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
