#!/bin/bash
# tests/cli/test_modules_sort.sh with every job's ranks on 2 emulated nodes (river-mpirun
# --nodes: ranks round-robin over the nodes, TCP between them; see
# doc/building.md, "Emulated nodes").
RIVER_NODES=2 exec bash "${top_srcdir:-.}/tests/cli/test_modules_sort.sh"
