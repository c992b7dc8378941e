#!/bin/bash
# tests/mpi/test_pcoll_failover_mpi.mpi with its ranks on 3 emulated nodes (river-mpirun
# --nodes: ranks round-robin over the nodes, TCP between them; see
# doc/building.md, "Emulated nodes").
RIVER_NODES=3 exec "${RIVER_MPIRUN:?run me through scripts/mpi-test-launch}" \
  -n "${RIVER_TEST_RANKS:-4}" "${top_builddir:-.}/tests/mpi/test_pcoll_failover_mpi.mpi"
