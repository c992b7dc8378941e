/*
 * test_topo.c - river_topo_describe against what the OS reports, and
 * river_node_name's choice: $RIVER_NODE_NAME, else $SLURMD_NODENAME,
 * else the host name, with the caller-buffer contract.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <river.h>
#include <stdio.h>
#include <stdlib.h>
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

/* River's node-name variables unset (the tests below set them). */
static int unset_names(void **state)
{
  (void)state;
  unsetenv("RIVER_NODE_NAME");
  unsetenv("SLURMD_NODENAME");
  return 0;
}

static void test_node_name_order(void **state)
{
  char buf[256], host[256];
  size_t len = sizeof buf;

  assert_int_equal(gethostname(host, sizeof host), 0);
  host[sizeof host - 1] = '\0';
  assert_int_equal(river_node_name(buf, &len), RIVER_SUCCESS);
  assert_string_equal(buf, host);
  assert_int_equal(len, strlen(host));

  /* Slurm's name for the node, then River's own, which wins. */
  assert_int_equal(setenv("SLURMD_NODENAME", "slurm-n2", 1), 0);
  len = sizeof buf;
  assert_int_equal(river_node_name(buf, &len), RIVER_SUCCESS);
  assert_string_equal(buf, "slurm-n2");
  assert_int_equal(len, 8);
  assert_int_equal(setenv("RIVER_NODE_NAME", "river-node7", 1), 0);
  len = sizeof buf;
  assert_int_equal(river_node_name(buf, &len), RIVER_SUCCESS);
  assert_string_equal(buf, "river-node7");
  /* host= in river_topo_describe is the same name. */
  len = sizeof buf;
  assert_int_equal(river_topo_describe(buf, &len), RIVER_SUCCESS);
  assert_memory_equal(buf, "host=river-node7 ", 17);

  /* An empty variable counts as unset. */
  assert_int_equal(setenv("RIVER_NODE_NAME", "", 1), 0);
  len = sizeof buf;
  assert_int_equal(river_node_name(buf, &len), RIVER_SUCCESS);
  assert_string_equal(buf, "slurm-n2");
  assert_int_equal(setenv("SLURMD_NODENAME", "", 1), 0);
  len = sizeof buf;
  assert_int_equal(river_node_name(buf, &len), RIVER_SUCCESS);
  assert_string_equal(buf, host);
}

static void test_node_name_small_buffer(void **state)
{
  char buf[8] = "keep";
  size_t len = sizeof buf;

  assert_int_equal(setenv("RIVER_NODE_NAME", "river-node12", 1), 0);
  assert_int_equal(river_node_name(buf, &len), RIVER_ENOBUFS);
  assert_int_equal(len, 13);   /* the name and its NUL */
  assert_string_equal(buf, "keep");
  len = 12;                    /* no room for the NUL */
  assert_int_equal(river_node_name(buf, &len), RIVER_ENOBUFS);
  assert_int_equal(len, 13);
  assert_string_equal(buf, "keep");
  {
    char fits[13];
    len = sizeof fits;
    assert_int_equal(river_node_name(fits, &len), RIVER_SUCCESS);
    assert_int_equal(len, 12);
    assert_string_equal(fits, "river-node12");
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup(test_topo_describe_reports_host_and_pus,
                           unset_names),
    cmocka_unit_test_setup(test_topo_describe_small_buffer, unset_names),
    cmocka_unit_test_setup_teardown(test_node_name_order, unset_names,
                                    unset_names),
    cmocka_unit_test_setup_teardown(test_node_name_small_buffer,
                                    unset_names, unset_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
