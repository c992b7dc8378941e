#!/bin/bash
# tests/cli/test_flow_run.sh with every job's ranks on 3 emulated nodes (river-mpirun
# --nodes: ranks round-robin over the nodes, TCP between them; see
# doc/building.md, "Emulated nodes").
RIVER_NODES=3 exec bash "${top_srcdir:-.}/tests/cli/test_flow_run.sh"
