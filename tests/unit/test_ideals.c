/*
 * test_ideals - the fluid ideals the applications and benchmarks divide
 * by (apps/common/ideal.c: the sort's, the join's, the distributed
 * queue's) against cases worked by hand; GD's own is test_gd_alloc's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ideal.h"

#include <math.h>

#define MB 1e6

static void near(double got, double want)
{
  if (fabs(got - want) > 1e-9 * (fabs(want) > 1 ? fabs(want) : 1))
    fail_msg("got %.12g, want %.12g", got, want);
}

static river_perturb *perturb(const char *spec)
{
  river_perturb *p = NULL;

  assert_int_equal(river_perturb_parse(spec, &p), RIVER_SUCCESS);
  return p;
}

/* T* = bytes / min(R_read, R_cpu) + bytes x out_copies / R_write. */
static void test_sort_ideal(void **state)
{
  struct app_machine m = {10 * MB, 0, NULL};
  river_perturb *p;

  (void)state;
  /* 4 disks of 10 MB/s, 1 copy: GD's ideal is 4 x the slowest = 40;
   * writes 40: 40 MB read in 1 s, written in 1 s. */
  near(app_sort_ideal(&m, 40 * MB, 4, 4, 4, 1, 1), 2.0);
  /* Two copies out: the writes take twice as long. */
  near(app_sort_ideal(&m, 40 * MB, 4, 4, 4, 1, 2), 3.0);
  /* More partitions than disks: the disks' sum, no GD ring (40). */
  near(app_sort_ideal(&m, 40 * MB, 4, 4, 8, 1, 1), 2.0);
  /* Disk 1 at half speed: rates 10, 5, 10, 10. One copy: every
   * partition from its own disk, 4 x 5 = 20 MB/s read; writes 35. */
  p = perturb("disk:1=0.5");
  m.perturb = p;
  near(app_sort_ideal(&m, 40 * MB, 4, 4, 4, 1, 1), 40.0 / 35 + 40.0 / 20);
  /* Two copies in (chained): the ring binds, 35 / 4 a client, 35 in
   * all (a pair of disks holds 15 for one client, three 25 for two). */
  near(app_sort_ideal(&m, 40 * MB, 4, 4, 4, 2, 1), 40.0 / 35 + 40.0 / 35);
  river_perturb_destroy(p);
  /* Partitioners of 5 MB/s each (20 in all) below the disks' 40. */
  m.perturb = NULL;
  m.cpu = 5 * MB;
  near(app_sort_ideal(&m, 40 * MB, 4, 4, 4, 1, 1), 1.0 + 2.0);
  /* CPU only: no disk time at all. */
  m.disk = 0;
  m.cpu = 10 * MB;
  near(app_sort_ideal(&m, 40 * MB, 4, 4, 4, 1, 1), 1.0);
  /* Nothing modelled, or nonsense: 0. */
  m.cpu = 0;
  near(app_sort_ideal(&m, 40 * MB, 4, 4, 4, 1, 1), 0.0);
  m.disk = 10 * MB;
  near(app_sort_ideal(&m, 40 * MB, 0, 4, 4, 1, 1), 0.0);
  near(app_sort_ideal(&m, 40 * MB, 4, 0, 4, 1, 1), 0.0);
}

/* T* = (bytes of R + S) / the joiners' summed rates. */
static void test_join_ideal(void **state)
{
  struct app_machine m = {0, 10 * MB, NULL};
  river_perturb *p = perturb("cpu:0=0.25");

  (void)state;
  near(app_join_ideal(&m, 40 * MB, 4), 1.0);
  /* Joiner 0 at 25%: 2.5 + 3 x 10 = 32.5 MB/s. */
  m.perturb = p;
  near(app_join_ideal(&m, 65 * MB, 4), 2.0);
  river_perturb_destroy(p);
  m.perturb = NULL;
  m.cpu = 0;
  near(app_join_ideal(&m, 40 * MB, 4), 0.0);
  m.cpu = 10 * MB;
  near(app_join_ideal(&m, 40 * MB, 0), 0.0);
}

/* ideal = nprod bytes / max(max_p bytes / prod[p], nprod bytes /
 * sum_c cons[c]). */
static void test_dq_ideal(void **state)
{
  const double prod[2] = {10, 5}, fast[2] = {100, 100};
  const double cons[3] = {10, 10, 10}, slow[3] = {1, 1, 2},
               open[3] = {10, 0, 10};

  (void)state;
  /* The slow producer binds: 100 B at 5 B/s is 20 s for 200 B. */
  near(app_dq_ideal(100, 2, prod, 3, cons), 10.0);
  /* Unbounded producers: the consumers' 30 B/s. */
  near(app_dq_ideal(100, 2, NULL, 3, cons), 30.0);
  /* The consumers bind: 200 B at 4 B/s. */
  near(app_dq_ideal(100, 2, fast, 3, slow), 4.0);
  /* An unbounded consumer takes whatever comes: the producers bind. */
  near(app_dq_ideal(100, 2, prod, 3, open), 10.0);
  /* Neither side bounded: nothing to model. */
  near(app_dq_ideal(100, 2, NULL, 3, NULL), 0.0);
  near(app_dq_ideal(100, 2, NULL, 3, open), 0.0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_sort_ideal),
    cmocka_unit_test(test_join_ideal),
    cmocka_unit_test(test_dq_ideal),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
