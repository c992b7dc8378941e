#!/bin/bash
# test_cli_args - the river command refuses arguments it would otherwise
# misread, with a message naming the option, on every rank: numbers with
# a sign or leading blanks, an empty --root, a --root too long for River's
# paths (it used to be cut silently), and no collection is written.
# Options a command does not take, unknown options (a near miss of one
# it takes named: "did you mean") and a missing value
# are each named as typed, with the value given (it used to name the
# value: "option 'a:int32' not accepted"); a collection name starting
# with '-' (after "--") is refused, naming the argument; a reader that
# loses the only copy of a partition says so (it used to say "its blocks
# go to the other mirrors" with no mirror).
# Run by scripts/mpi-test-launch.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"

long=$(printf 'r%.0s' $(seq 1 3000))
# One rank, and four (every rank refuses): the parsing is the same code
# at every count, and 2 and 3 ranks added a minute to CI.
for n in 1 4; do
  expect_fail $n "--records  5: expected an integer" gen a --records " 5"
  expect_fail $n "--records \+5: expected an integer" gen a --records +5
  expect_fail $n "--mirror \+1: expected an integer" gen a --records 5 --mirror +1
  expect_fail $n "root: empty" gen a --records 5 --root ""
  expect_fail $n "root .* is [0-9]+ bytes; .*limited to" gen a --records 5 --root "$tmp/$long"
  expect_fail $n "root: empty" ls --root ""
done
[ -e "$tmp/root" ] && fail "a refused command created $tmp/root"
ls "$tmp" | grep -q rrrr && fail "a refused command created the long root"

# expect_msg NRANKS MESSAGE ARGS...: the command exits 1 and every rank
# logs exactly "river[RANK] error: MESSAGE".
expect_msg() {
  local n=$1 msg=$2 rc k; shift 2
  r "$n" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" -eq 1 ] || fail "river $* on $n ranks: exit $rc, expected 1"
  for ((k = 0; k < n; k++)); do
    grep -Fxq "river[$k] error: $msg" "$tmp/err" \
      || { fail "river $* on $n ranks: rank $k did not say: $msg"
           grep '^river' "$tmp/err" | head -n 4 | sed 's/^/    /'; }
  done
}

for n in 1 2; do
  see="(see river gen --help)"
  expect_msg $n "gen: option --schema (value 'a:int32') is not accepted by gen $see" \
    gen a --records 5 --schema a:int32
  expect_msg $n "gen: option --schema (value 'a:int32') is not accepted by gen $see" \
    gen a --records 5 --schema=a:int32
  expect_msg $n "gen: option -o (value 'f') is not accepted by gen $see" \
    gen a --records 5 -o f
  expect_msg $n "copy-in: option --ascii is not accepted by copy-in (see river copy-in --help)" \
    copy-in f a --ascii
  expect_msg $n "gen: unknown option '--bogus' $see" gen a --records 5 --bogus
  expect_msg $n "gen: unknown option '--bogus=1' $see" gen a --records 5 --bogus=1
  expect_msg $n "gen: unknown option '-x' $see" gen a --records 5 -x
  # a near miss of an option the command takes: the one it meant (within
  # 2 edits), not one it does not take (--memory is sort's)
  expect_msg $n "gen: unknown option '--mirorr': did you mean '--mirror'? $see" \
    gen a --records 5 --mirorr 2
  expect_msg $n "sort: unknown option '--memroy=1G': did you mean '--memory'? (see river sort --help)" \
    sort a b --memroy=1G
  expect_msg $n "gen: unknown option '--memroy' $see" gen a --records 5 --memroy 1G
  expect_msg $n "gen: option --records needs a value $see" gen a --records
  expect_msg $n "copy-out: option -o needs a value (see river copy-out --help)" \
    copy-out a -o
  expect_msg $n "gen: option --direct-io takes no value (given '1') $see" \
    gen a --records 5 --direct-io=1
  # Names that read as options, after "--" or a lone "-".
  expect_msg $n "rm: argument '-x' was taken as COLL: a collection name may not start with '-'" \
    rm -- -x
  expect_msg $n "gen: argument '-' was taken as COLL: a collection name may not start with '-'" \
    gen --records 5 -
  expect_msg $n "copy-in: argument '-a' was taken as COLL: a collection name may not start with '-'" \
    copy-in - -- -a
done
[ -e "$tmp/root" ] && fail "a refused command created $tmp/root"

# Losing a partition's only copy is not "its blocks go to the other
# mirrors"; with a mirror it is.
for n in 1 2; do
  r $n gen one$n --records 100 >/dev/null || fail "gen one$n"
  rm -f $(part_file one$n 0 0)
  expect_fail $n "collection one$n: partition 0 block 0: no readable copy" \
    copy-out one$n -o "$tmp/one.out"
  grep -q "other mirrors" "$tmp/err" && fail "$n ranks: 'other mirrors' without a mirror"
  grep -Fq "warn: collection one$n: partition 0: the copy on disk 0 is unusable (not found); it is the only copy: the partition's data cannot be read" "$tmp/err" \
    || fail "$n ranks: the lost only copy is not named"
done
r 2 gen two --records 100 --mirror 2 >/dev/null || fail "gen two"
rm -f $(part_file two 0 0)
r 2 copy-out two -o "$tmp/two.out" 2>"$tmp/err" || fail "copy-out two"
grep -Fq "warn: collection two: partition 0: the copy on disk 0 is unusable (not found); its blocks go to the other mirrors" "$tmp/err" \
  || fail "mirrored: no failover warning"
rm -f $(part_file two 0 1)
expect_fail 2 "collection two: partition 0 block 0: no readable copy" \
  copy-out two -o "$tmp/two.out"
grep -Fq "unusable (not found); no other copy is usable: the partition's data cannot be read" "$tmp/err" \
  || fail "mirrored, both copies lost: not said"

# The same numbers without the sign are fine.
r 3 gen a --records 5 --mirror 1 >/dev/null || fail "gen --records 5"

clitest_end test_cli_args
