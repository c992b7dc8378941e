/*
 * test_core.c - error table, version queries and build info (no MPI job:
 * none of these needs MPI initialised).
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

static const int all_codes[] = {
#define CODE(name, code, msg) RIVER_##name,
  RIVER_ERRNO_MAP(CODE)
#undef CODE
};
#define NCODES (sizeof all_codes / sizeof all_codes[0])

static void test_strerror_every_code_has_distinct_message(void **state)
{
  size_t i, j;

  for (i = 0; i < NCODES; i++) {
    const char *m = river_strerror(all_codes[i]);
    assert_non_null(m);
    assert_true(strlen(m) > 0);
    assert_string_not_equal(m, "unknown error code");
    for (j = 0; j < i; j++)
      assert_string_not_equal(m, river_strerror(all_codes[j]));
  }
  assert_string_equal(river_strerror(RIVER_SUCCESS), "success");
  assert_string_equal(river_strerror(RIVER_EINVAL), "invalid argument");
}

static void test_strerror_unknown_code(void **state)
{
  assert_string_equal(river_strerror(2), "unknown error code");
  assert_string_equal(river_strerror(-9999), "unknown error code");
  assert_string_equal(river_strerror(INT32_MIN), "unknown error code");
}

static void test_err_name_every_code(void **state)
{
  size_t i;

  for (i = 0; i < NCODES; i++) {
    const char *n = river_err_name(all_codes[i]);
    assert_non_null(n);
    assert_memory_equal(n, "RIVER_", 6);
    assert_string_not_equal(n, "RIVER_EUNKNOWN");
  }
  assert_string_equal(river_err_name(RIVER_EINVAL), "RIVER_EINVAL");
  assert_string_equal(river_err_name(RIVER_ENOBUFS), "RIVER_ENOBUFS");
  assert_string_equal(river_err_name(42), "RIVER_EUNKNOWN");
}

static void test_codes_are_negative_and_distinct(void **state)
{
  size_t i, j;

  assert_int_equal(RIVER_SUCCESS, 0);
  assert_true(RIVER_EOS > 0); /* a status, not an error */
  for (i = 1; i < NCODES; i++) {
    assert_true(all_codes[i] < 0 || all_codes[i] == RIVER_EOS);
    for (j = 0; j < i; j++)
      assert_int_not_equal(all_codes[i], all_codes[j]);
  }
}

static void test_get_version_matches_header(void **state)
{
  int major = -1, minor = -1, release = -1;
  char expect[64];

  assert_int_equal(river_get_version(&major, &minor, &release), RIVER_SUCCESS);
  assert_int_equal(major, RIVER_VERSION_MAJOR);
  assert_int_equal(minor, RIVER_VERSION_MINOR);
  assert_int_equal(release, RIVER_VERSION_RELEASE);
  snprintf(expect, sizeof expect, "%d.%d.%d", major, minor, release);
  assert_string_equal(expect, RIVER_VERSION_STRING);
}

static void test_build_info_names_every_library(void **state)
{
  char buf[512];
  size_t len = sizeof buf;

  assert_int_equal(river_build_info(buf, &len), RIVER_SUCCESS);
  assert_int_equal(len, strlen(buf));
  assert_non_null(strstr(buf, "River " RIVER_VERSION_STRING));
  assert_non_null(strstr(buf, "MPI "));
  assert_non_null(strstr(buf, "HDF5 "));
  assert_non_null(strstr(buf, "hwloc API 2."));
}

static void test_build_info_small_buffer_reports_size(void **state)
{
  char buf[512], small[8];
  size_t len = sizeof buf, need = sizeof small;

  assert_int_equal(river_build_info(buf, &len), RIVER_SUCCESS);
  memset(small, 'x', sizeof small);
  assert_int_equal(river_build_info(small, &need), RIVER_ENOBUFS);
  assert_int_equal(need, len + 1);
  assert_memory_equal(small, "xxxxxxxx", sizeof small); /* untouched */

  /* Exactly the size asked for is enough. */
  char *exact = malloc(need);
  assert_non_null(exact);
  assert_int_equal(river_build_info(exact, &need), RIVER_SUCCESS);
  assert_string_equal(exact, buf);
  free(exact);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_strerror_every_code_has_distinct_message),
    cmocka_unit_test(test_strerror_unknown_code),
    cmocka_unit_test(test_err_name_every_code),
    cmocka_unit_test(test_codes_are_negative_and_distinct),
    cmocka_unit_test(test_get_version_matches_header),
    cmocka_unit_test(test_build_info_names_every_library),
    cmocka_unit_test(test_build_info_small_buffer_reports_size),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
