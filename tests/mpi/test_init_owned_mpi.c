/*
 * test_init_owned_mpi - a program that leaves MPI to River: river_init
 * starts MPI (with at least the thread level River asks for) and the
 * last river_finalize shuts it down.
 */
#include <river.h>
#include "mpitest.h"

int main(int argc, char **argv)
{
  int up = 0, down = 1, rank = -1, size = 0, sum = 0, level = -1, rc;

  MPI_Initialized(&up);
  if (up) {
    fprintf(stderr, "MPI initialised before main?\n");
    return 1;
  }
  if (river_init(&argc, &argv) != RIVER_SUCCESS) {
    fprintf(stderr, "river_init failed\n");
    return 1;
  }
  MPI_Initialized(&up);
  MT_CHECK(up == 1);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Query_thread(&level);
  MT_CHECK(level >= MPI_THREAD_FUNNELED);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MT_CHECK(sum == size * (size - 1) / 2);
  MT_CHECK(size >= 2);

  /* Nested pair: MPI must survive the inner finalize. */
  MT_CHECK_RC(river_init(NULL, NULL), RIVER_SUCCESS);
  MT_CHECK_RC(river_finalize(), RIVER_SUCCESS);
  MPI_Finalized(&down);
  MT_CHECK(down == 0);

  rc = mt_verdict(MPI_COMM_WORLD, "test_init_owned_mpi");
  if (river_finalize() != RIVER_SUCCESS)
    rc = 1;
  MPI_Finalized(&down);
  if (!down) {
    fprintf(stderr, "rank %d: MPI still up after the last river_finalize\n",
            rank);
    rc = 1;
  }
  return rc;
}
