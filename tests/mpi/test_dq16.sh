#!/bin/bash
# test_dq16 - the distributed-queue test (tests/mpi/test_dq_mpi.c) again
# on 16 ranks, so its rounds run with groups of up to 16 ranks and the
# whole suite covers 2..16 (8 ranks in test_dq_mpi, 16 here).
set -u
run=${RIVER_MPIRUN:?run me through scripts/mpi-test-launch}
exec "$run" -n 16 "${top_builddir:-.}/tests/mpi/test_dq_mpi.mpi"
