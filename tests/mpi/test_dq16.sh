#!/bin/bash
# test_dq16 - the distributed-queue tests (tests/mpi/test_dq_mpi.c,
# test_dq_pull_mpi.c, test_dq_bad_mpi.c, test_dq_coop_mpi.c) again on
# 16 ranks, so their rounds run with groups of up to 16 ranks (two
# copies of the 8-rank layout for test_dq_coop_mpi) and the suite covers
# 2..16 (8 ranks in the tests themselves, 16 here). Each runs even if
# one before it failed; the test fails if any did.
set -u
run=${RIVER_MPIRUN:?run me through scripts/mpi-test-launch}
status=0
for t in test_dq_mpi test_dq_pull_mpi test_dq_bad_mpi test_dq_coop_mpi; do
  "$run" -n 16 "${top_builddir:-.}/tests/mpi/$t.mpi" || status=1
done
exit $status
