/*
 * test_timing.c - river_wtime and the river_timer stopwatch.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <river.h>
#include <time.h>

static void sleep_ms(long ms)
{
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

  while (nanosleep(&ts, &ts) != 0)
    ;
}

static void test_wtime_is_monotonic_and_advances(void **state)
{
  double a = river_wtime(), b;

  sleep_ms(20);
  b = river_wtime();
  assert_true(b - a >= 0.019);
  assert_true(b - a < 5.0);
}

/* Two timed 20 ms sleeps around an untimed 30 ms one. Both bounds hold
 * under any load: a sleep never ends early (the lower), and the timer
 * counts at most the wall time from its first start to its last stop
 * less the untimed gap, which is at least 30 ms however late each call
 * runs (the upper; it fails a timer that counts the gap). */
static void test_timer_accumulates_start_stop_pairs(void **state)
{
  river_timer t = RIVER_TIMER_INIT;
  double s = -1, w0, w1;

  w0 = river_wtime();
  assert_int_equal(river_timer_start(&t), RIVER_SUCCESS);
  sleep_ms(20);
  assert_int_equal(river_timer_stop(&t), RIVER_SUCCESS);
  sleep_ms(30); /* not counted */
  assert_int_equal(river_timer_start(&t), RIVER_SUCCESS);
  sleep_ms(20);
  assert_int_equal(river_timer_stop(&t), RIVER_SUCCESS);
  w1 = river_wtime();
  assert_int_equal(river_timer_elapsed(&t, &s), RIVER_SUCCESS);
  assert_true(s >= 0.039);
  assert_true(s <= (w1 - w0) - 0.0299);
}

static void test_timer_elapsed_includes_running_part(void **state)
{
  river_timer t;
  double s1, s2;

  assert_int_equal(river_timer_reset(&t), RIVER_SUCCESS);
  assert_int_equal(river_timer_elapsed(&t, &s1), RIVER_SUCCESS);
  assert_true(s1 == 0.0);
  river_timer_start(&t);
  sleep_ms(10);
  assert_int_equal(river_timer_elapsed(&t, &s1), RIVER_SUCCESS);
  sleep_ms(10);
  assert_int_equal(river_timer_elapsed(&t, &s2), RIVER_SUCCESS);
  assert_true(s1 >= 0.009);
  assert_true(s2 > s1);
}

static void test_timer_misuse_is_a_state_error(void **state)
{
  river_timer t = RIVER_TIMER_INIT;

  assert_int_equal(river_timer_stop(&t), RIVER_ESTATE);
  assert_int_equal(river_timer_start(&t), RIVER_SUCCESS);
  assert_int_equal(river_timer_start(&t), RIVER_ESTATE);
  assert_int_equal(river_timer_stop(&t), RIVER_SUCCESS);
  assert_int_equal(river_timer_stop(&t), RIVER_ESTATE);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_wtime_is_monotonic_and_advances),
    cmocka_unit_test(test_timer_accumulates_start_stop_pairs),
    cmocka_unit_test(test_timer_elapsed_includes_running_part),
    cmocka_unit_test(test_timer_misuse_is_a_state_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
