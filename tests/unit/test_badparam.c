/*
 * test_badparam.c - bad arguments to the core, logging, timing, units,
 * topology, schema, checksum, gensort, wait and emulation functions
 * (badparam.h says what every test_badparam* program checks).
 */
#include "badparam.h"

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
  assert_int_equal(river_watchdog_fired(NULL), RIVER_EINVAL);
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

static void test_badparam_units(void **state)
{
  uint64_t v = 7;
  char buf[8] = "keep";

  (void)state;
  assert_int_equal(river_parse_size(NULL, &v), RIVER_EINVAL);
  assert_int_equal(river_parse_size("1", NULL), RIVER_EINVAL);
  assert_int_equal(river_parse_size("1x", &v), RIVER_EINVAL);
  assert_int_equal(v, 7);
  assert_int_equal(river_format_size(1, NULL, 8), RIVER_EINVAL);
  assert_int_equal(river_format_size(1, buf, 0), RIVER_ENOBUFS);
  assert_int_equal(river_format_size(1000, buf, 7), RIVER_ENOBUFS);
  assert_string_equal(buf, "keep");
}

static void test_badparam_topo(void **state)
{
  char buf[8] = "keep";
  size_t len = sizeof buf;

  int outcome = 7;

  assert_int_equal(river_topo_describe(NULL, &len), RIVER_EINVAL);
  assert_int_equal(river_topo_describe(buf, NULL), RIVER_EINVAL);
  assert_int_equal(len, sizeof buf);
  assert_string_equal(buf, "keep");

  assert_int_equal(river_node_name(NULL, &len), RIVER_EINVAL);
  assert_int_equal(river_node_name(buf, NULL), RIVER_EINVAL);
  assert_int_equal(len, sizeof buf);
  assert_string_equal(buf, "keep");
  /* Too small: the size needed, the buffer untouched. */
  assert_int_equal(setenv("RIVER_NODE_NAME", "node-with-a-long-name", 1), 0);
  assert_int_equal(river_node_name(buf, &len), RIVER_ENOBUFS);
  assert_int_equal(len, strlen("node-with-a-long-name") + 1);
  assert_string_equal(buf, "keep");
  len = 0;
  assert_int_equal(river_node_name(buf, &len), RIVER_ENOBUFS);
  assert_int_equal(len, strlen("node-with-a-long-name") + 1);
  assert_int_equal(unsetenv("RIVER_NODE_NAME"), 0);

  /* river_topo_bind is collective: no communicator, no outcome, or no
   * MPI (this program never starts it) are refused, outcome untouched. */
  river_log_set_handler(collect, NULL);
  msgs[0] = '\0';
  assert_int_equal(river_topo_bind(MPI_COMM_NULL, &outcome), RIVER_EINVAL);
  assert_int_equal(river_topo_bind(MPI_COMM_WORLD, NULL), RIVER_EINVAL);
  assert_int_equal(river_topo_bind(MPI_COMM_WORLD, &outcome), RIVER_EINVAL);
  assert_non_null(strstr(msgs, "River needs MPI"));
  river_log_set_handler(NULL, NULL);
  assert_int_equal(outcome, 7);
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
  assert_int_equal(river_schema_compare_keys(NULL, rec, rec, &cmp),
                   RIVER_EINVAL);
  assert_int_equal(river_schema_compare_keys(s, NULL, rec, &cmp),
                   RIVER_EINVAL);
  assert_int_equal(river_schema_compare_keys(s, rec, NULL, &cmp),
                   RIVER_EINVAL);
  assert_int_equal(river_schema_compare_keys(s, rec, rec, NULL),
                   RIVER_EINVAL);

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

static void test_badparam_checksum(void **state)
{
  uint32_t crc = 0x5a5a5a5a;

  assert_int_equal(river_crc32c("x", 1, NULL), RIVER_EINVAL);
  assert_int_equal(river_crc32c(NULL, 1, &crc), RIVER_EINVAL);
  assert_int_equal(river_crc32c(NULL, SIZE_MAX, &crc), RIVER_EINVAL);
  assert_int_equal(crc, 0x5a5a5a5a);
  /* No bytes: buf may be NULL and the CRC stays as it was. */
  assert_int_equal(river_crc32c(NULL, 0, &crc), RIVER_SUCCESS);
  assert_int_equal(crc, 0x5a5a5a5a);
}

static void test_badparam_gensort(void **state)
{
  unsigned char buf[200];

  memset(buf, 0x5a, sizeof buf);
  assert_int_equal(river_gensort_fill(0, 1, 0, 0, NULL), RIVER_EINVAL);
  assert_int_equal(river_gensort_fill(0, 2, 8u, 0, buf), RIVER_EINVAL);
  assert_int_equal(river_gensort_fill(UINT64_MAX, 2, 0, 0, buf),
                   RIVER_EINVAL);
  assert_int_equal(buf[0], 0x5a);
  assert_int_equal(buf[199], 0x5a);
  assert_int_equal(river_gensort_fill(0, 0, 0, 0, NULL), RIVER_SUCCESS);
}

/* Waits, without MPI: only refusals that come before any MPI call. */
static void test_badparam_wait(void **state)
{
  MPI_Request reqs[2];

  assert_int_equal(river_wait(NULL, MPI_STATUS_IGNORE), RIVER_EINVAL);
  assert_int_equal(river_waitall(-1, reqs), RIVER_EINVAL);
  assert_int_equal(river_waitall(1, NULL), RIVER_EINVAL);
  assert_int_equal(river_waitall(2, NULL), RIVER_EINVAL);
}

/* Throttles, perturbation specs and the CPU hog: NULL handles and
 * outputs, rates, bursts, factors and fractions that are not finite
 * numbers in range, kinds that do not exist, text that is no spec.
 * Outputs stay as they were. */
static void test_badparam_throttle(void **state)
{
  river_throttle *tkeep = (river_throttle *)&tkeep, *t = tkeep;
  river_perturb *pkeep = (river_perturb *)&pkeep, *p = pkeep;
  river_cpu_hog *hkeep = (river_cpu_hog *)&hkeep, *h = hkeep;
  double d = 7, inf = strtod("inf", NULL), nan = strtod("nan", NULL);
  int k = 7, m = 7;

  river_log_set_handler(collect, NULL);
  msgs[0] = '\0';
  assert_int_equal(river_throttle_create(1e6, 0, NULL), RIVER_EINVAL);
  assert_int_equal(river_throttle_create(0, 0, &t), RIVER_EINVAL);
  assert_int_equal(river_throttle_create(-1, 0, &t), RIVER_EINVAL);
  assert_int_equal(river_throttle_create(nan, 0, &t), RIVER_EINVAL);
  assert_int_equal(river_throttle_create(inf, 0, &t), RIVER_EINVAL);
  assert_non_null(strstr(msgs, "rate"));
  assert_int_equal(river_throttle_create(1e6, -1, &t), RIVER_EINVAL);
  assert_int_equal(river_throttle_create(1e6, nan, &t), RIVER_EINVAL);
  assert_int_equal(river_throttle_create(1e6, inf, &t), RIVER_EINVAL);
  assert_non_null(strstr(msgs, "burst"));
  assert_int_equal(river_throttle_create_stage(1e6, NULL), RIVER_EINVAL);
  assert_int_equal(river_throttle_create_stage(0, &t), RIVER_EINVAL);
  assert_int_equal(river_throttle_create_stage(nan, &t), RIVER_EINVAL);
  assert_int_equal(river_throttle_create_stage(inf, &t), RIVER_EINVAL);
  assert_ptr_equal(t, tkeep);
  assert_int_equal(river_throttle_consume(NULL, 1), RIVER_EINVAL);
  assert_int_equal(river_throttle_take(NULL, 1, &d), RIVER_EINVAL);
  assert_int_equal(river_throttle_set_factor(NULL, 1), RIVER_EINVAL);
  assert_int_equal(river_throttle_rate(NULL, &d), RIVER_EINVAL);
  assert_int_equal(river_throttle_slept(NULL, &d), RIVER_EINVAL);
  assert_int_equal(river_throttle_create(1e6, 0, &t), RIVER_SUCCESS);
  assert_int_equal(river_throttle_set_factor(t, 0), RIVER_EINVAL);
  assert_int_equal(river_throttle_set_factor(t, -0.5), RIVER_EINVAL);
  assert_int_equal(river_throttle_set_factor(t, nan), RIVER_EINVAL);
  assert_int_equal(river_throttle_set_factor(t, inf), RIVER_EINVAL);
  assert_non_null(strstr(msgs, "factor"));
  assert_int_equal(river_throttle_rate(t, NULL), RIVER_EINVAL);
  assert_int_equal(river_throttle_slept(t, NULL), RIVER_EINVAL);
  assert_int_equal(river_throttle_take(t, 1, NULL), RIVER_EINVAL);
  assert_true(d == 7);     /* no refusal wrote an output */
  assert_int_equal(river_throttle_rate(t, &d), RIVER_SUCCESS);
  assert_true(d == 1e6);   /* the refused factors changed nothing */
  river_throttle_destroy(t);
  river_throttle_destroy(NULL);

  d = 7;
  msgs[0] = '\0';
  assert_int_equal(river_perturb_parse(NULL, &p), RIVER_EINVAL);
  assert_int_equal(river_perturb_parse("disk:1=0.5", NULL), RIVER_EINVAL);
  assert_int_equal(river_perturb_parse("disk:1=0", &p), RIVER_EFORMAT);
  assert_int_equal(river_perturb_parse("tape:1=0.5", &p), RIVER_EFORMAT);
  assert_non_null(strstr(msgs, "clause 1"));
  assert_ptr_equal(p, pkeep);
  assert_int_equal(river_perturb_parse("disk:1=0.5", &p), RIVER_SUCCESS);
  assert_int_equal(river_perturb_factor(NULL, RIVER_PERTURB_DISK, 1, 0, &d),
                   RIVER_EINVAL);
  assert_int_equal(river_perturb_factor(p, 2, 1, 0, &d), RIVER_EINVAL);
  assert_int_equal(river_perturb_factor(p, RIVER_PERTURB_DISK, -1, 0, &d),
                   RIVER_EINVAL);
  assert_int_equal(river_perturb_factor(p, RIVER_PERTURB_DISK, 1, nan, &d),
                   RIVER_EINVAL);
  assert_int_equal(river_perturb_factor(p, RIVER_PERTURB_DISK, 1, 0, NULL),
                   RIVER_EINVAL);
  assert_int_equal(river_perturb_count(NULL, RIVER_PERTURB_CPU, &k),
                   RIVER_EINVAL);
  assert_int_equal(river_perturb_count(p, -1, &k), RIVER_EINVAL);
  assert_int_equal(river_perturb_count(p, RIVER_PERTURB_CPU, NULL),
                   RIVER_EINVAL);
  assert_int_equal(river_perturb_max_index(NULL, RIVER_PERTURB_CPU, &m),
                   RIVER_EINVAL);
  assert_int_equal(river_perturb_max_index(p, 2, &m), RIVER_EINVAL);
  assert_int_equal(river_perturb_max_index(p, RIVER_PERTURB_CPU, NULL),
                   RIVER_EINVAL);
  assert_true(d == 7);
  assert_int_equal(k + m, 14);
  river_perturb_destroy(p);
  river_perturb_destroy(NULL);

  assert_int_equal(river_cpu_hog_start(0.5, NULL), RIVER_EINVAL);
  assert_int_equal(river_cpu_hog_start(0, &h), RIVER_EINVAL);
  assert_int_equal(river_cpu_hog_start(1, &h), RIVER_EINVAL);
  assert_int_equal(river_cpu_hog_start(-1, &h), RIVER_EINVAL);
  assert_int_equal(river_cpu_hog_start(nan, &h), RIVER_EINVAL);
  assert_non_null(strstr(msgs, "fraction"));
  assert_ptr_equal(h, hkeep);
  assert_int_equal(river_cpu_hog_stop(NULL), RIVER_SUCCESS);
  river_log_set_handler(NULL, NULL);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_badparam_core),
    cmocka_unit_test(test_badparam_log),
    cmocka_unit_test(test_badparam_vlog),
    cmocka_unit_test(test_badparam_timing),
    cmocka_unit_test(test_badparam_units),
    cmocka_unit_test(test_badparam_topo),
    cmocka_unit_test(test_badparam_schema),
    cmocka_unit_test(test_badparam_checksum),
    cmocka_unit_test(test_badparam_gensort),
    cmocka_unit_test(test_badparam_wait),
    cmocka_unit_test(test_badparam_throttle),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
