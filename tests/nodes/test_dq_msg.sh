#!/bin/bash
# The distributed-queue tests on one node with two-sided credits forced
# (RIVER_DQ_CREDITS=msg: the path queues take across nodes where MPI has
# no window; doc/design.md, "Credit paths"), so both credit paths pass
# every check (exactly-once, FIFO, bounded memory, pacing, dormant, PULL
# units) on one node too. Each test says itself which path it checked.
set -u
run=${RIVER_MPIRUN:?run me through scripts/mpi-test-launch}
fails=0
for t in test_dq_mpi test_dq_pull_mpi test_dq_coop_mpi test_dq_bad_mpi; do
  if ! RIVER_DQ_CREDITS=msg "$run" -n "${RIVER_TEST_RANKS:-8}" \
       "${top_builddir:-.}/tests/mpi/$t.mpi"; then
    echo "FAIL: $t with RIVER_DQ_CREDITS=msg"
    fails=$((fails + 1))
  fi
done
exit $((fails > 0))
