#!/bin/bash
# test_dq_posted - the distributed-queue tests (tests/mpi/test_dq_mpi.c,
# test_dq_bad_mpi.c, test_dq_coop_mpi.c) at both ends of how many DATA
# receives a consumer keeps posted (src/dq_internal.h, "Consumer"):
# RIVER_DQ_POSTED=1, the fewest (every message but one waits at its
# producer until the consumer gets), and 0, all of them (credits x
# producers: every message in flight has a receive, as PULL always
# has). The other tests run with the default, DQ_POSTED. Each runs even
# if one before it failed; the test fails if any did.
set -u
run=${RIVER_MPIRUN:?run me through scripts/mpi-test-launch}
status=0
for posted in 1 0; do
  for t in test_dq_mpi test_dq_bad_mpi test_dq_coop_mpi; do
    echo "RIVER_DQ_POSTED=$posted $t"
    RIVER_DQ_POSTED=$posted "$run" -n 8 "${top_builddir:-.}/tests/mpi/$t.mpi" \
      || status=1
  done
done
exit $status
