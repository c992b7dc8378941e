#!/bin/bash
# test_river_cli - the river command under mpirun: `river hello` reports
# the build, river topo's report (every rank once, under its node) and a
# ring measurement; bad arguments fail on every rank with
# a message naming the argument. Run by scripts/mpi-test-launch, which
# sets RIVER_MPIRUN and RIVER_TEST_RANKS.
set -u
n=${RIVER_TEST_RANKS:-4}
river=${top_builddir:-.}/apps/river
run=${RIVER_MPIRUN:?run me through scripts/mpi-test-launch}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# hello: one line per rank, rank numbers 0..n-1 each exactly once.
if ! "$run" -n "$n" "$river" hello --laps 5 >"$tmp/out" 2>"$tmp/err"; then
  fail "river hello exited non-zero"; cat "$tmp/err"
fi
cat "$tmp/out"
grep -q "^River [0-9]*\.[0-9]*\.[0-9]*; MPI .*; HDF5 .*; hwloc API 2\." "$tmp/out" \
  || fail "hello: no build line"
grep -q "^$n ranks on [1-9][0-9]* nodes*; collections' metadata in " "$tmp/out" \
  || fail "hello: no '$n ranks on ... nodes' line"
grep -Eq "^node [^ ]+: packages=[0-9]+ cores=[1-9][0-9]* pus=[1-9][0-9]* numa=[0-9]+ ranks=[0-9,]+$" \
  "$tmp/out" || fail "hello: no node line with its machine"
for ((r = 0; r < n; r++)); do
  c=$(grep -Ec "^  rank $r +node=[^ ]+ bound=(none|pu:[0-9,-]+) by=(none|launcher) disk=[^ ]+$" "$tmp/out")
  [ "$c" -eq 1 ] || fail "hello: rank $r reported $c times"
done
[ "$(grep -c '^  rank ' "$tmp/out")" -eq "$n" ] || fail "hello: wrong rank count"
grep -Eq "^ring: a 1048576-byte token went 5 times round $n ranks in [0-9.]+ s: [0-9.]+ us and [0-9.]+ GB/s per hop$" \
  "$tmp/out" || fail "hello: no ring measurement"

# Bad option value: non-zero exit, message names the option and value,
# said once (every rank parses the same arguments: rank 0 says it).
if "$run" -n "$n" "$river" hello --laps zero >"$tmp/out" 2>"$tmp/err"; then
  fail "hello --laps zero succeeded"
fi
[ "$(grep -c "river\[[0-9]*\] error: --laps zero: expected an integer" "$tmp/err")" -eq 1 ] \
  || { fail "hello --laps zero: not said once"; cat "$tmp/err"; }

# Unknown command: exit 2, named.
"$run" -n "$n" "$river" frobnicate >"$tmp/out" 2>"$tmp/err"; rc=$?
[ "$rc" -ne 0 ] || fail "unknown command succeeded"
grep -q "unknown command 'frobnicate'" "$tmp/err" || fail "unknown command not named"

# --help on the tool and on each subcommand.
"$run" -n 1 "$river" --help >"$tmp/out" 2>&1 || fail "river --help failed"
grep -q "^  hello " "$tmp/out" || fail "--help does not list hello"
grep -q "^  topo " "$tmp/out" || fail "--help does not list topo"
grep -q "^  --bind " "$tmp/out" || fail "--help does not describe --bind"
for cmd in hello version topo; do
  "$run" -n 1 "$river" "$cmd" --help >"$tmp/out" 2>&1 || fail "$cmd --help failed"
  grep -q "^usage: river $cmd" "$tmp/out" || fail "$cmd --help: no usage line"
done
"$run" -n 2 "$river" version >"$tmp/out" 2>&1 || fail "river version failed"
[ "$(grep -c '^River ' "$tmp/out")" -eq 1 ] || fail "version: not printed once"

if [ "$fails" -eq 0 ]; then echo "PASS: test_river_cli"; exit 0; fi
echo "FAIL: test_river_cli ($fails failed checks)"; exit 1
