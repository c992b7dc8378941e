/*
 * test_topo.c - river_topo_describe against what the OS reports.
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

static void test_topo_describe_reports_host_and_pus(void **state)
{
  char buf[1024], host[256];
  size_t len = sizeof buf;
  int pus = -1;
  const char *p;

  assert_int_equal(river_topo_describe(buf, &len), RIVER_SUCCESS);
  assert_int_equal(len, strlen(buf));
  assert_int_equal(gethostname(host, sizeof host), 0);
  assert_memory_equal(buf, "host=", 5);
  assert_memory_equal(buf + 5, host, strlen(host));
  p = strstr(buf, " pus=");
  assert_non_null(p);
  assert_int_equal(sscanf(p, " pus=%d", &pus), 1);
  /* hwloc sees at least the PUs this process can use. */
  assert_true(pus >= 1);
  assert_true(pus >= (int)sysconf(_SC_NPROCESSORS_ONLN));
  assert_non_null(strstr(buf, " bound="));
}

static void test_topo_describe_small_buffer(void **state)
{
  char buf[1024], tiny[4] = "abc";
  size_t len = sizeof buf, need = sizeof tiny;

  assert_int_equal(river_topo_describe(buf, &len), RIVER_SUCCESS);
  assert_int_equal(river_topo_describe(tiny, &need), RIVER_ENOBUFS);
  assert_int_equal(need, len + 1);
  assert_string_equal(tiny, "abc");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_topo_describe_reports_host_and_pus),
    cmocka_unit_test(test_topo_describe_small_buffer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
