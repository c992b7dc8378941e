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

static void test_badparam_schema(void **state)
{
  river_schema *s = NULL, *out;
  const char *name = "keep";
  river_type type = RIVER_TYPE_FLOAT64;
  size_t count = 7, offset = 7, size = 7, len;
  int n = 7, field = 7, eq = 7, cmp = 7;
  unsigned char rec[100] = {0};
  char buf[8] = "keep";

  assert_int_equal(river_schema_create_default(&s), RIVER_SUCCESS);
  out = s; /* a failed call leaves *out as it was */

  assert_int_equal(river_schema_parse(NULL, &out), RIVER_EINVAL);
  assert_int_equal(river_schema_parse("a:int32", NULL), RIVER_EINVAL);
  assert_int_equal(river_schema_create_default(NULL), RIVER_EINVAL);
  assert_int_equal(river_schema_clone(NULL, &out), RIVER_EINVAL);
  assert_int_equal(river_schema_clone(s, NULL), RIVER_EINVAL);
  assert_ptr_equal(out, s);
  river_schema_destroy(NULL); /* documented no-op */

  assert_int_equal(river_schema_record_size(NULL, &size), RIVER_EINVAL);
  assert_int_equal(river_schema_record_size(s, NULL), RIVER_EINVAL);
  assert_int_equal(river_schema_nfields(NULL, &n), RIVER_EINVAL);
  assert_int_equal(river_schema_nfields(s, NULL), RIVER_EINVAL);

  /* Field outputs are optional; s and the index are not. */
  assert_int_equal(river_schema_field(NULL, 0, &name, &type, &count, &offset),
                   RIVER_EINVAL);
  assert_int_equal(river_schema_field(s, -1, &name, &type, &count, &offset),
                   RIVER_EINVAL);
  assert_int_equal(river_schema_field(s, 2, &name, &type, &count, &offset),
                   RIVER_EINVAL);
  assert_int_equal(river_schema_field(s, 1 << 30, &name, &type, &count,
                                      &offset), RIVER_EINVAL);

  /* Key outputs are optional too; s is not. */
  assert_int_equal(river_schema_key(NULL, &field, &offset, &size),
                   RIVER_EINVAL);

  assert_int_equal(river_schema_find(NULL, "key", &field), RIVER_EINVAL);
  assert_int_equal(river_schema_find(s, NULL, &field), RIVER_EINVAL);
  assert_int_equal(river_schema_find(s, "key", NULL), RIVER_EINVAL);

  len = sizeof buf;
  assert_int_equal(river_schema_format(NULL, buf, &len), RIVER_EINVAL);
  assert_int_equal(river_schema_format(s, NULL, &len), RIVER_EINVAL);
  assert_int_equal(river_schema_format(s, buf, NULL), RIVER_EINVAL);
  assert_int_equal(len, sizeof buf);
  assert_string_equal(buf, "keep");

  assert_int_equal(river_schema_equal(NULL, s, &eq), RIVER_EINVAL);
  assert_int_equal(river_schema_equal(s, NULL, &eq), RIVER_EINVAL);
  assert_int_equal(river_schema_equal(s, s, NULL), RIVER_EINVAL);

  assert_int_equal(river_schema_compare(NULL, rec, rec, &cmp), RIVER_EINVAL);
  assert_int_equal(river_schema_compare(s, NULL, rec, &cmp), RIVER_EINVAL);
  assert_int_equal(river_schema_compare(s, rec, NULL, &cmp), RIVER_EINVAL);
  assert_int_equal(river_schema_compare(s, rec, rec, NULL), RIVER_EINVAL);

  /* None of the refused calls wrote an output. */
  assert_string_equal(name, "keep");
  assert_int_equal(type, RIVER_TYPE_FLOAT64);
  assert_int_equal(count + offset + size, 21);
  assert_int_equal(n + field + eq + cmp, 28);

  /* Types are any int: no input makes river_type_name return NULL. */
  assert_string_equal(river_type_name(-1), "unknown");
  assert_string_equal(river_type_name(RIVER_TYPE_BYTES + 1), "unknown");
  river_schema_destroy(s);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_badparam_core),
    cmocka_unit_test(test_badparam_log),
    cmocka_unit_test(test_badparam_vlog),
    cmocka_unit_test(test_badparam_timing),
    cmocka_unit_test(test_badparam_topo),
    cmocka_unit_test(test_badparam_schema),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
