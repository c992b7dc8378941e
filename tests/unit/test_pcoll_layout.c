/*
 * test_pcoll_layout - river_pcoll_split, the arithmetic of which records
 * partition p of P holds (no MPI job needed): for every layout, record
 * count and partition count tried, the partitions' shares cover every
 * record exactly once; partitioned shares are contiguous runs in
 * partition order whose sizes differ by at most one; interleaved shares
 * are records p, p + P, ...; the results do not overflow near
 * UINT64_MAX. And river_pcoll_disk_dir, where disk d of a collection
 * created with given options lives.
 */
#include <river.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* Check the shares of n records over np partitions under layout. */
static void check_cover(river_layout layout, uint64_t n, int np)
{
  unsigned char *seen = calloc(n ? n : 1, 1);
  uint64_t first, stride, count, i, next = 0, min = UINT64_MAX, max = 0;
  int p;

  assert_non_null(seen);
  for (p = 0; p < np; p++) {
    assert_int_equal(river_pcoll_split(layout, n, np, p, &first, &stride,
                                       &count), RIVER_SUCCESS);
    if (layout == RIVER_LAYOUT_PARTITIONED) {
      assert_int_equal(stride, 1);
      assert_int_equal(first, next);   /* contiguous, in partition order */
      next = first + count;
      min = count < min ? count : min;
      max = count > max ? count : max;
    } else {
      assert_int_equal(first, (uint64_t)p);
      assert_int_equal(stride, (uint64_t)np);
    }
    for (i = 0; i < count; i++) {
      uint64_t r = first + i * stride;
      assert_true(r < n);
      assert_int_equal(seen[r], 0);    /* no record twice */
      seen[r] = 1;
    }
  }
  for (i = 0; i < n; i++)
    assert_int_equal(seen[i], 1);      /* every record once */
  if (layout == RIVER_LAYOUT_PARTITIONED)
    assert_true(max - min <= 1);
  free(seen);
}

static void test_split_covers_once(void **state)
{
  static const uint64_t ns[] = {0, 1, 2, 3, 7, 64, 100, 1000, 20011};
  size_t k;
  int np;

  (void)state;
  for (k = 0; k < sizeof ns / sizeof ns[0]; k++)
    for (np = 1; np <= 17; np++) {
      check_cover(RIVER_LAYOUT_PARTITIONED, ns[k], np);
      check_cover(RIVER_LAYOUT_INTERLEAVED, ns[k], np);
    }
}

/* The even split that gen and copy-in have always used (records of
 * partition 1 of 4 for 20011 records: 5002..10004). */
static void test_split_partitioned_known(void **state)
{
  uint64_t first, stride, count;

  (void)state;
  assert_int_equal(river_pcoll_split(RIVER_LAYOUT_PARTITIONED, 20011, 4, 1,
                                     &first, &stride, &count), RIVER_SUCCESS);
  assert_int_equal(first, 5002);
  assert_int_equal(count, 5003);
  assert_int_equal(river_pcoll_split(RIVER_LAYOUT_INTERLEAVED, 3, 4, 3,
                                     &first, &stride, &count), RIVER_SUCCESS);
  assert_int_equal(count, 0);          /* more partitions than records */
}

static void test_split_huge(void **state)
{
  uint64_t first, stride, count, total = 0;
  int p, np = 1000;

  (void)state;
  for (p = 0; p < np; p++) {
    assert_int_equal(river_pcoll_split(RIVER_LAYOUT_INTERLEAVED, UINT64_MAX,
                                       np, p, &first, &stride, &count),
                     RIVER_SUCCESS);
    total += count;
  }
  assert_true(total == UINT64_MAX);
  for (p = 0, total = 0; p < np; p++) {
    assert_int_equal(river_pcoll_split(RIVER_LAYOUT_PARTITIONED, UINT64_MAX,
                                       np, p, &first, &stride, &count),
                     RIVER_SUCCESS);
    assert_true(first == total);
    total += count;
  }
  assert_true(total == UINT64_MAX);
}

static void test_disk_dir(void **state)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  char buf[256], tiny[8] = "keep";
  size_t len = sizeof buf;

  /* The default pattern (disk%d), under the root. */
  o.root = "/data/river";
  assert_int_equal(river_pcoll_disk_dir(&o, 3, buf, &len), RIVER_SUCCESS);
  assert_string_equal(buf, "/data/river/disk3");
  assert_int_equal(len, strlen(buf));
  /* A relative pattern goes under the root, an absolute one does not;
   * %% is a '%'. */
  o.disks = "local/d%d";
  len = sizeof buf;
  assert_int_equal(river_pcoll_disk_dir(&o, 12, buf, &len), RIVER_SUCCESS);
  assert_string_equal(buf, "/data/river/local/d12");
  o.disks = "/scratch/100%%/disk%d";
  len = sizeof buf;
  assert_int_equal(river_pcoll_disk_dir(&o, 0, buf, &len), RIVER_SUCCESS);
  assert_string_equal(buf, "/scratch/100%/disk0");
  /* Too small: the size needed, the buffer untouched. */
  len = sizeof tiny;
  assert_int_equal(river_pcoll_disk_dir(&o, 0, tiny, &len), RIVER_ENOBUFS);
  assert_int_equal(len, strlen("/scratch/100%/disk0") + 1);
  assert_string_equal(tiny, "keep");
  /* No options: $RIVER_ROOT. */
  assert_int_equal(setenv("RIVER_ROOT", "/env/root", 1), 0);
  len = sizeof buf;
  assert_int_equal(river_pcoll_disk_dir(NULL, 1, buf, &len), RIVER_SUCCESS);
  assert_string_equal(buf, "/env/root/disk1");
  /* ... and $RIVER_DISKS, as a collection created without opts->disks
   * would use it (%n: this rank's node). */
  assert_int_equal(setenv("RIVER_DISKS", "/local/%n/d%d", 1), 0);
  assert_int_equal(setenv("RIVER_NODE_NAME", "nodeA", 1), 0);
  len = sizeof buf;
  assert_int_equal(river_pcoll_disk_dir(NULL, 2, buf, &len), RIVER_SUCCESS);
  assert_string_equal(buf, "/local/nodeA/d2");
  o.disks = "d%d";   /* opts->disks first */
  len = sizeof buf;
  assert_int_equal(river_pcoll_disk_dir(&o, 2, buf, &len), RIVER_SUCCESS);
  assert_string_equal(buf, "/data/river/d2");
  unsetenv("RIVER_DISKS");
  unsetenv("RIVER_NODE_NAME");
  unsetenv("RIVER_ROOT");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_split_covers_once),
    cmocka_unit_test(test_split_partitioned_known),
    cmocka_unit_test(test_split_huge),
    cmocka_unit_test(test_disk_dir),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
