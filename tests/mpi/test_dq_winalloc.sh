#!/bin/bash
# test_dq_winalloc - the distributed-queue tests that use credit and
# claim windows (tests/mpi/test_dq_mpi.c, test_dq_pull_mpi.c) with
# RIVER_WIN_SHARED=0, so their windows are made with MPI_Win_allocate,
# as a queue spanning nodes gets them (src/rma.c): every other test runs
# on one node, where windows are shared (MPI_Win_allocate_shared).
# test_dq_mpi checks which kind it got. Each runs even if the one before
# failed; the test fails if either did.
set -u
run=${RIVER_MPIRUN:?run me through scripts/mpi-test-launch}
status=0
for t in test_dq_mpi test_dq_pull_mpi; do
  RIVER_WIN_SHARED=0 "$run" -n 8 "${top_builddir:-.}/tests/mpi/$t.mpi" \
    || status=1
done
exit $status
