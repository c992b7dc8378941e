/*
 * test_badparam.c - every public function, given NULL or nonsense
 * arguments, returns RIVER_EINVAL (or its documented answer) and does
 * not crash or touch its outputs. One test per public header; when a
 * function is added to a header, it gets a line here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <river.h>
#include <string.h>

static void test_badparam_core(void **state)
{
  int argc = 1, a = 7, b = 7, c = 7;
  char *args[] = {"x", NULL}, **argv = args;
  char buf[8] = "keep";
  size_t len = sizeof buf;

  /* argc and argv go together: one NULL without the other is nonsense. */
  assert_int_equal(river_init(&argc, NULL), RIVER_EINVAL);
  assert_int_equal(river_init(NULL, &argv), RIVER_EINVAL);
  assert_int_equal(river_initialized(NULL), RIVER_EINVAL);
  /* Finalize without init is a state error, not a crash. */
  assert_int_equal(river_finalize(), RIVER_ESTATE);

  assert_int_equal(river_get_version(NULL, &b, &c), RIVER_EINVAL);
  assert_int_equal(river_get_version(&a, NULL, &c), RIVER_EINVAL);
  assert_int_equal(river_get_version(&a, &b, NULL), RIVER_EINVAL);
  assert_int_equal(a + b + c, 21);

  assert_int_equal(river_build_info(NULL, &len), RIVER_EINVAL);
  assert_int_equal(river_build_info(buf, NULL), RIVER_EINVAL);
  assert_int_equal(len, sizeof buf);
  len = 0; /* a zero-sized buffer cannot hold even the NUL */
  assert_int_equal(river_build_info(buf, &len), RIVER_ENOBUFS);
  assert_true(len > 1);
  assert_string_equal(buf, "keep");

  /* Codes are any int: no input makes these return NULL. */
  assert_non_null(river_strerror(12345));
  assert_non_null(river_err_name(-12345));
}

static void test_badparam_log(void **state)
{
  int level = 2;

  assert_int_equal(river_log(-1, "x"), RIVER_EINVAL);
  assert_int_equal(river_log(RIVER_LOG_DEBUG + 1, "x"), RIVER_EINVAL);
  assert_int_equal(river_log(RIVER_LOG_ERROR, NULL), RIVER_EINVAL);
  assert_int_equal(river_log_set_level(-1), RIVER_EINVAL);
  assert_int_equal(river_log_set_level(4), RIVER_EINVAL);
  assert_int_equal(river_log_get_level(NULL), RIVER_EINVAL);
  assert_int_equal(river_log_parse_level(NULL, &level), RIVER_EINVAL);
  assert_int_equal(river_log_parse_level("info", NULL), RIVER_EINVAL);
  assert_int_equal(river_log_parse_level("loud", &level), RIVER_EINVAL);
  assert_int_equal(level, 2);
  assert_string_equal(river_log_level_name(1000), "unknown");
  /* A NULL handler is the documented way back to stderr. */
  assert_int_equal(river_log_set_handler(NULL, NULL), RIVER_SUCCESS);
  /* The level is unchanged by all the refused calls above. */
  assert_int_equal(river_log_get_level(&level), RIVER_SUCCESS);
  assert_int_equal(level, RIVER_LOG_WARN);
}

/* river_vlog with a NULL format, through a va_list. */
static int call_vlog(int level, const char *fmt, ...)
{
  va_list ap;
  int rc;

  va_start(ap, fmt);
  rc = river_vlog(level, fmt, ap);
  va_end(ap);
  return rc;
}

static void test_badparam_vlog(void **state)
{
  assert_int_equal(call_vlog(RIVER_LOG_ERROR, NULL), RIVER_EINVAL);
  assert_int_equal(call_vlog(17, "x"), RIVER_EINVAL);
}

static void test_badparam_timing(void **state)
{
  double s = 3.5;
  river_timer t = RIVER_TIMER_INIT;

  assert_int_equal(river_timer_reset(NULL), RIVER_EINVAL);
  assert_int_equal(river_timer_start(NULL), RIVER_EINVAL);
  assert_int_equal(river_timer_stop(NULL), RIVER_EINVAL);
  assert_int_equal(river_timer_elapsed(NULL, &s), RIVER_EINVAL);
  assert_int_equal(river_timer_elapsed(&t, NULL), RIVER_EINVAL);
  assert_true(s == 3.5);
}

static void test_badparam_topo(void **state)
{
  char buf[8] = "keep";
  size_t len = sizeof buf;

  assert_int_equal(river_topo_describe(NULL, &len), RIVER_EINVAL);
  assert_int_equal(river_topo_describe(buf, NULL), RIVER_EINVAL);
  assert_int_equal(len, sizeof buf);
  assert_string_equal(buf, "keep");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_badparam_core),
    cmocka_unit_test(test_badparam_log),
    cmocka_unit_test(test_badparam_vlog),
    cmocka_unit_test(test_badparam_timing),
    cmocka_unit_test(test_badparam_topo),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
