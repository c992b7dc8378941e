/*
 * test_init_mpi - River inside a program that owns MPI: river_init and
 * river_finalize leave MPI as they found it, nest, read RIVER_LOG, and
 * the logger prefixes each rank's messages with its rank.
 */
#include <river.h>
#include "mpitest.h"

#include <stdlib.h>
#include <string.h>

struct seen {
  int calls, level, rank;
  char msg[256];
};

static void capture(int level, int rank, const char *msg, void *ctx)
{
  struct seen *s = ctx;

  s->calls++;
  s->level = level;
  s->rank = rank;
  snprintf(s->msg, sizeof s->msg, "%s", msg);
}

int main(int argc, char **argv)
{
  int rank, size, flag, level = -1, up, down, sum;
  struct seen seen = {0};

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* RIVER_LOG is read by river_init. */
  setenv("RIVER_LOG", "debug", 1);
  MT_CHECK_RC(river_initialized(&flag), RIVER_SUCCESS);
  MT_CHECK(flag == 0);
  MT_CHECK_RC(river_init(&argc, &argv), RIVER_SUCCESS);
  MT_CHECK_RC(river_initialized(&flag), RIVER_SUCCESS);
  MT_CHECK(flag == 1);
  MT_CHECK_RC(river_log_get_level(&level), RIVER_SUCCESS);
  MT_CHECK(level == RIVER_LOG_DEBUG);

  /* The logger knows each rank. */
  river_log_set_handler(capture, &seen);
  MT_CHECK_RC(river_log(RIVER_LOG_INFO, "hello from %d of %d", rank, size),
              RIVER_SUCCESS);
  MT_CHECK(seen.calls == 1);
  MT_CHECK(seen.rank == rank);
  MT_CHECK(seen.level == RIVER_LOG_INFO);
  {
    char expect[64];
    snprintf(expect, sizeof expect, "hello from %d of %d", rank, size);
    MT_CHECK(strcmp(seen.msg, expect) == 0);
  }

  /* Nested init/finalize: only the outermost pair matters. */
  MT_CHECK_RC(river_init(NULL, NULL), RIVER_SUCCESS);
  MT_CHECK_RC(river_finalize(), RIVER_SUCCESS);
  MT_CHECK_RC(river_initialized(&flag), RIVER_SUCCESS);
  MT_CHECK(flag == 1);

  /* An unparsable RIVER_LOG warns (through the handler) and keeps the
   * level. Needs a fresh init: finalize River completely first. */
  MT_CHECK_RC(river_finalize(), RIVER_SUCCESS);
  MT_CHECK_RC(river_finalize(), RIVER_ESTATE);
  setenv("RIVER_LOG", "chatty", 1);
  river_log_set_level(RIVER_LOG_WARN);
  seen.calls = 0;
  MT_CHECK_RC(river_init(NULL, NULL), RIVER_SUCCESS);
  MT_CHECK(seen.calls == 1);
  MT_CHECK(seen.level == RIVER_LOG_WARN);
  MT_CHECK(strstr(seen.msg, "RIVER_LOG=chatty") != NULL);
  MT_CHECK_RC(river_log_get_level(&level), RIVER_SUCCESS);
  MT_CHECK(level == RIVER_LOG_WARN);
  river_log_set_handler(NULL, NULL);
  MT_CHECK_RC(river_finalize(), RIVER_SUCCESS);

  /* River left MPI up, as it found it: collectives still work. */
  MPI_Initialized(&up);
  MPI_Finalized(&down);
  MT_CHECK(up == 1 && down == 0);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MT_CHECK(sum == size * (size - 1) / 2);

  int rc = mt_verdict(MPI_COMM_WORLD, "test_init_mpi");
  MPI_Finalize();

  /* After MPI is gone, River cannot start. */
  if (river_init(NULL, NULL) != RIVER_ESTATE) {
    fprintf(stderr, "rank %d: river_init after MPI_Finalize did not "
                    "return RIVER_ESTATE\n", rank);
    rc = 1;
  }
  return rc;
}
