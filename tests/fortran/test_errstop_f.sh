#!/bin/bash
# test_errstop_f - without ierr, a failing River call stops a Fortran
# program: non-zero exit, the message names the procedure and the error,
# and nothing after the call runs.
set -u
prog=${top_builddir:-.}/tests/fortran/test_errstop_f
run=${RIVER_MPIRUN:?run me through scripts/mpi-test-launch}
out=$("$run" -n 1 "$prog" 2>&1)
rc=$?
echo "$out"
if [ "$rc" -eq 0 ]; then echo "FAIL: exited 0"; exit 1; fi
if ! grep -q "river: river_log_set_level: invalid argument" <<<"$out"; then
  echo "FAIL: no message naming river_log_set_level and the error"; exit 1
fi
if grep -q "NOT REACHED" <<<"$out"; then echo "FAIL: ran past the error"; exit 1; fi
echo "PASS: test_errstop_f (exit $rc)"
