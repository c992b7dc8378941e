#!/bin/bash
# tests/mpi/test_dq_coop_mpi.mpi with its ranks on 2 emulated nodes (river-mpirun
# --nodes: ranks round-robin over the nodes, TCP between them; see
# doc/building.md, "Emulated nodes"). Its no-progress abort waits 3 times
# its 30 s at least (RIVER_TEST_TIMEOUT_SCALE): over TCP, with two
# daemons and 8 ranks on 2 cores beside another test, a rank went 30 s
# without progress in CI's step 1 and in the sanitizer pass (a hang still
# ends in the abort, at 90 s).
scale=${RIVER_TEST_TIMEOUT_SCALE:-1}
awk -v s="$scale" 'BEGIN { exit !(s + 0 < 3) }' && scale=3
RIVER_TEST_TIMEOUT_SCALE=$scale RIVER_NODES=2 \
  exec "${RIVER_MPIRUN:?run me through scripts/mpi-test-launch}" \
  -n "${RIVER_TEST_RANKS:-4}" "${top_builddir:-.}/tests/mpi/test_dq_coop_mpi.mpi"
