/* fail_rank.c - a plugin whose entry point fails on one rank only (the
 * world rank in RIVER_TEST_PLUGIN_FAIL_RANK), as a library missing a
 * dependency on one node would: every rank exits non-zero, the failing
 * rank says why, once, and nothing hangs (tests/cli/test_plugins.sh). */
#include <mpi.h>
#include <river.h>
#include <stdlib.h>

int river_plugin_init(void);

int river_plugin_init(void)
{
  const char *v = getenv("RIVER_TEST_PLUGIN_FAIL_RANK");
  int rank = 0;

  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (v != NULL && atoi(v) == rank) {
    river_log(RIVER_LOG_ERROR, "fail_rank: failing on rank %d, as asked",
              rank);
    return RIVER_EIO;
  }
  return RIVER_SUCCESS;
}
