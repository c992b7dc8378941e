/*
 * test_stage_throttle - a flow stage's emulated CPU or disk
 * (river_throttle_create_stage, src/throttle.c, compiled in with the
 * scheduler and the backoff, whose river__sleep_until it uses):
 * it earns nothing before its first use, and while idle after it banks
 * at most 50 ms of its own work at its current rate, not the nominal
 * rate's bytes. (river_throttle_create's bucket is full at creation
 * and banks 50 ms at the nominal rate: with it, the waits below would
 * be 0.)
 *
 * Every bound is a lower bound on wall time (bytes the bucket must not
 * have had for free): a loaded machine only makes a wait longer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <river.h>
#include "river_internal.h"

#include <time.h>

#define RATE 4e6   /* bytes/s; the default burst is rate / 20: 200 kB */

static void pause_for(double s)
{
  river__sleep_until(river_wtime() + s);
}

/* Seconds a consume of `bytes` takes. */
static double timed_consume(river_throttle *t, double bytes)
{
  double t0 = river_wtime();

  assert_int_equal(river_throttle_consume(t, (size_t)bytes), RIVER_SUCCESS);
  return river_wtime() - t0;
}

/* Idle 100 ms after creation, then 50 ms of work: the stage's bucket
 * has earned nothing, so it waits the 50 ms. */
static void test_first_use(void **state)
{
  river_throttle *st = NULL;

  (void)state;
  assert_int_equal(river_throttle_create_stage(RATE, &st), RIVER_SUCCESS);
  pause_for(0.1);
  assert_true(timed_consume(st, RATE * 0.05) >= 0.0499);
  river_throttle_destroy(st);
}

/* At a quarter speed, after a first use and 300 ms idle: the stage's
 * bucket has banked 50 ms of its own work (RATE / 4 x 50 ms), so the
 * nominal burst's bytes (RATE x 50 ms) take >= 150 ms; banking the
 * nominal burst's bytes, they would take none. */
static void test_bank_follows_factor(void **state)
{
  river_throttle *st = NULL;

  (void)state;
  assert_int_equal(river_throttle_create_stage(RATE, &st), RIVER_SUCCESS);
  assert_int_equal(river_throttle_set_factor(st, 0.25), RIVER_SUCCESS);
  (void)timed_consume(st, 1000);    /* the first use */
  pause_for(0.3);
  assert_true(timed_consume(st, RATE * 0.05) >= 0.1499);
  /* At full speed again it banks 50 ms at the full rate. */
  assert_int_equal(river_throttle_set_factor(st, 1.0), RIVER_SUCCESS);
  pause_for(0.1);
  assert_true(timed_consume(st, RATE * 0.08) >= 0.0299);
  river_throttle_destroy(st);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_first_use),
    cmocka_unit_test(test_bank_follows_factor),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
