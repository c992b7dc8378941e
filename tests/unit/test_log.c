/*
 * test_log.c - the logger: levels, filtering, handler, default output
 * format (no MPI job: the rank is reported as unknown).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <river.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct captured {
  int calls;
  int level;
  int rank;
  char msg[256];
};

static void capture(int level, int rank, const char *msg, void *ctx)
{
  struct captured *c = ctx;

  c->calls++;
  c->level = level;
  c->rank = rank;
  snprintf(c->msg, sizeof c->msg, "%s", msg);
}

static int reset(void **state)
{
  river_log_set_handler(NULL, NULL);
  river_log_set_level(RIVER_LOG_WARN);
  return 0;
}

static void test_log_default_level_is_warn(void **state)
{
  int level = -1;

  assert_int_equal(river_log_get_level(&level), RIVER_SUCCESS);
  assert_int_equal(level, RIVER_LOG_WARN);
}

static void test_log_parse_level_names(void **state)
{
  int level = -1;

  assert_int_equal(river_log_parse_level("error", &level), RIVER_SUCCESS);
  assert_int_equal(level, RIVER_LOG_ERROR);
  assert_int_equal(river_log_parse_level("WARN", &level), RIVER_SUCCESS);
  assert_int_equal(level, RIVER_LOG_WARN);
  assert_int_equal(river_log_parse_level("Info", &level), RIVER_SUCCESS);
  assert_int_equal(level, RIVER_LOG_INFO);
  assert_int_equal(river_log_parse_level("debug", &level), RIVER_SUCCESS);
  assert_int_equal(level, RIVER_LOG_DEBUG);

  level = 99;
  assert_int_equal(river_log_parse_level("verbose", &level), RIVER_EINVAL);
  assert_int_equal(river_log_parse_level("", &level), RIVER_EINVAL);
  assert_int_equal(river_log_parse_level("debugx", &level), RIVER_EINVAL);
  assert_int_equal(level, 99); /* untouched on failure */
}

static void test_log_level_names_round_trip(void **state)
{
  int level, back;

  for (level = RIVER_LOG_ERROR; level <= RIVER_LOG_DEBUG; level++) {
    assert_int_equal(
        river_log_parse_level(river_log_level_name(level), &back),
        RIVER_SUCCESS);
    assert_int_equal(back, level);
  }
  assert_string_equal(river_log_level_name(-1), "unknown");
  assert_string_equal(river_log_level_name(4), "unknown");
}

static void test_log_filters_by_level(void **state)
{
  struct captured c = {0};

  river_log_set_handler(capture, &c);
  assert_int_equal(river_log_set_level(RIVER_LOG_INFO), RIVER_SUCCESS);
  assert_int_equal(river_log(RIVER_LOG_DEBUG, "dropped %d", 1), RIVER_SUCCESS);
  assert_int_equal(c.calls, 0);
  assert_int_equal(river_log(RIVER_LOG_INFO, "kept %d of %s", 2, "three"),
                   RIVER_SUCCESS);
  assert_int_equal(c.calls, 1);
  assert_int_equal(c.level, RIVER_LOG_INFO);
  assert_string_equal(c.msg, "kept 2 of three");
  assert_int_equal(c.rank, -1); /* no MPI in a unit test */
  assert_int_equal(river_log(RIVER_LOG_ERROR, "errors always pass"),
                   RIVER_SUCCESS);
  assert_int_equal(c.calls, 2);
  assert_int_equal(c.level, RIVER_LOG_ERROR);
}

static void test_log_truncates_long_messages(void **state)
{
  struct captured c = {0};
  char big[4000];

  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  river_log_set_handler(capture, &c);
  assert_int_equal(river_log(RIVER_LOG_ERROR, "%s", big), RIVER_SUCCESS);
  assert_int_equal(c.calls, 1);
  assert_true(strlen(c.msg) > 200);
}

/* Without a handler a message is one line on stderr:
 * "river[-] warn: text". Redirect stderr to a pipe to read it. */
static void test_log_default_writes_prefixed_line_to_stderr(void **state)
{
  int fds[2], saved;
  char out[256] = "";
  ssize_t n;

  assert_int_equal(pipe(fds), 0);
  saved = dup(STDERR_FILENO);
  assert_true(saved >= 0);
  assert_true(dup2(fds[1], STDERR_FILENO) >= 0);
  assert_int_equal(river_log(RIVER_LOG_WARN, "disk %d is slow", 3),
                   RIVER_SUCCESS);
  assert_int_equal(river_log(RIVER_LOG_INFO, "below the level"), RIVER_SUCCESS);
  assert_true(dup2(saved, STDERR_FILENO) >= 0);
  close(saved);
  close(fds[1]);
  n = read(fds[0], out, sizeof out - 1);
  close(fds[0]);
  assert_true(n > 0);
  out[n] = '\0';
  assert_string_equal(out, "river[-] warn: disk 3 is slow\n");
}

static void test_log_handler_reset_with_null(void **state)
{
  struct captured c = {0};

  river_log_set_handler(capture, &c);
  assert_int_equal(river_log_set_handler(NULL, &c), RIVER_SUCCESS);
  river_log_set_level(RIVER_LOG_ERROR);
  /* Goes to stderr now, not to c. */
  river_log(RIVER_LOG_ERROR, "test_log: expected line on stderr");
  assert_int_equal(c.calls, 0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(test_log_default_level_is_warn, reset),
    cmocka_unit_test_teardown(test_log_parse_level_names, reset),
    cmocka_unit_test_teardown(test_log_level_names_round_trip, reset),
    cmocka_unit_test_teardown(test_log_filters_by_level, reset),
    cmocka_unit_test_teardown(test_log_truncates_long_messages, reset),
    cmocka_unit_test_teardown(test_log_default_writes_prefixed_line_to_stderr,
                              reset),
    cmocka_unit_test_teardown(test_log_handler_reset_with_null, reset),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
