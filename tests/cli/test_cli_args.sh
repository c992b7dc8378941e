#!/bin/bash
# test_cli_args - the river command refuses arguments it would otherwise
# misread, with a message naming the option, on every rank: numbers with
# a sign or leading blanks, an empty --root, a --root too long for River's
# paths (it used to be cut silently), and no collection is written.
# Run by scripts/mpi-test-launch.
set -u
run=${RIVER_MPIRUN:?run me through scripts/mpi-test-launch}
river=${top_builddir:-.}/apps/river
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export RIVER_ROOT=$tmp/root
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
r() { local n=$1; shift; "$run" -n "$n" "$river" "$@"; }

# expect_fail NRANKS PATTERN ARGS...: the command fails on every rank (the
# job's status is non-zero and each rank says so), with a message
# matching PATTERN (grep -E).
expect_fail() {
  local n=$1 pat=$2 cmd; shift 2
  cmd="river $*"; cmd=${cmd:0:100}
  if r "$n" "$@" >"$tmp/out" 2>"$tmp/err"; then
    fail "$cmd succeeded"
  elif ! grep -Eq -e "$pat" "$tmp/err"; then
    fail "$cmd: no message matching /$pat/"; cut -c1-200 "$tmp/err" | sed 's/^/    /' | head -n 8
  fi
}

long=$(printf 'r%.0s' $(seq 1 3000))
for n in 1 3; do
  expect_fail $n "--records  5: expected an integer" gen a --records " 5"
  expect_fail $n "--records \+5: expected an integer" gen a --records +5
  expect_fail $n "--mirror \+1: expected an integer" gen a --records 5 --mirror +1
  expect_fail $n "root: empty" gen a --records 5 --root ""
  expect_fail $n "root .* is [0-9]+ bytes; .*limited to" gen a --records 5 --root "$tmp/$long"
  expect_fail $n "root: empty" ls --root ""
done
[ -e "$tmp/root" ] && fail "a refused command created $tmp/root"
ls "$tmp" | grep -q rrrr && fail "a refused command created the long root"

# The same numbers without the sign are fine.
r 3 gen a --records 5 --mirror 1 >/dev/null || fail "gen --records 5"

if [ $fails -eq 0 ]; then
  echo "PASS: test_cli_args"
  exit 0
fi
echo "FAIL: test_cli_args ($fails failures)"
exit 1
