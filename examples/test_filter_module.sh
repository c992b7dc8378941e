#!/bin/bash
# test_filter_module - runs examples/filter_module on its spec under the
# launcher (ranks from examples/testlist); the program checks its own
# result and exits non-zero if it is wrong.
set -u
exec ${RIVER_MPIRUN:-mpirun} -n "${RIVER_TEST_RANKS:-3}" \
  "${top_builddir:-.}/examples/filter_module" \
  "${top_srcdir:-.}/examples/filter_module.yaml"
