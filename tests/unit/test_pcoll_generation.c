/*
 * test_pcoll_generation - the generation check every reader of a
 * metadata file or write record applies (river__pcoll_is_generation,
 * src/pcoll_path.c, compiled in: it is internal): what the writer makes
 * (river__pcoll_random_tag, 1000 draws) passes; anything else, a
 * traversal ("a/../../../v", what a forged but sealed metadata file
 * carried to make rm unlink a file outside the root) first, fails.
 * pcoll_path.c's two other internal needs, from core.c, are stood in for
 * here (neither is reached by the functions tested but the fallback of
 * random_tag, where getrandom and /dev/urandom both fail).
 */
#include "pcoll_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

uint64_t river__mix64(uint64_t x)
{
  return x * 0x9e3779b97f4a7c15ull;
}

int river__copy_out(const char *str, char *buf, size_t *len)
{
  (void)str;
  (void)buf;
  (void)len;
  return RIVER_EINVAL;
}

static void test_generation_writer(void **state)
{
  char tag[17];
  int i;

  (void)state;
  for (i = 0; i < 1000; i++) {
    memset(tag, 'x', sizeof tag);
    river__pcoll_random_tag(tag);
    assert_int_equal(strlen(tag), 16);
    assert_true(river__pcoll_is_generation(tag));
  }
  assert_true(river__pcoll_is_generation("0123456789abcdef"));
  assert_true(river__pcoll_is_generation("0000000000000000"));
}

static void test_generation_refused(void **state)
{
  static const char *const bad[] = {
    "a/../../../v",        /* the forged file's traversal */
    "../../../../../etc",  /* 16 characters */
    "0123456789abcde/",
    "0123456789ABCDEF",    /* River writes lowercase */
    "0123456789abcdeg",
    "0123456789abcde",     /* 15 */
    "0123456789abcdef0",   /* 17 */
    "0123456789abcde.",
    " 123456789abcdef",
    "",
  };
  size_t i;

  (void)state;
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_false(river__pcoll_is_generation(bad[i]));
  assert_false(river__pcoll_is_generation(NULL));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_generation_writer),
    cmocka_unit_test(test_generation_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
