#!/bin/bash
# test_cli_args - the river command refuses arguments it would otherwise
# misread, with a message naming the option, on every rank: numbers with
# a sign or leading blanks, an empty --root, a --root too long for River's
# paths (it used to be cut silently), and no collection is written.
# Run by scripts/mpi-test-launch.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"

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

clitest_end test_cli_args
