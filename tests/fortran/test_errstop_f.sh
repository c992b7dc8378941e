#!/bin/bash
# test_errstop_f - without ierr, a failing River call ends a Fortran
# job: non-zero exit, the message (naming the procedure and the error)
# said once, not on every rank, no ERROR STOP or backtrace, and nothing
# after the call runs. Every rank failing (1 and 4 ranks), and one rank
# of 4 failing alone (its message names it).
set -u
prog=${top_builddir:-.}/tests/fortran/test_errstop_f
run=${RIVER_MPIRUN:?run me through scripts/mpi-test-launch}
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# check NRANKS ONLY WANT_RANK: run, judge the output.
check() {
  local n=$1 only=$2 want=$3 out rc lines
  out=$("$run" -n "$n" "$prog" $only 2>&1); rc=$?
  echo "$out" | sed "s/^/  [$n ranks${only:+, rank $only fails}] /"
  [ "$rc" -ne 0 ] || fail "$n ranks${only:+ ($only)}: exited 0"
  lines=$(grep -c "river_log_set_level failed: invalid argument (RIVER_EINVAL); stopping the job" <<<"$out")
  [ "$lines" = 1 ] || fail "$n ranks${only:+ ($only)}: the message said $lines times, not once"
  grep -q "^river\[$want\] error: river_log_set_level failed" <<<"$out" \
    || fail "$n ranks${only:+ ($only)}: not said by rank $want"
  grep -Eq "ERROR STOP|Backtrace|^#[0-9]" <<<"$out" \
    && fail "$n ranks${only:+ ($only)}: ERROR STOP or a backtrace"
  grep -q "NOT REACHED" <<<"$out" && fail "$n ranks${only:+ ($only)}: ran past the error"
}
check 1 "" 0
check 4 "" 0
check 4 2 2
[ "$fails" -eq 0 ] || { echo "FAIL: test_errstop_f ($fails failed checks)"; exit 1; }
echo "PASS: test_errstop_f"
