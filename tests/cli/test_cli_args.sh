#!/bin/bash
# test_cli_args - the river command refuses arguments it would otherwise
# misread, with a message naming the option, said once, exit 2: numbers with
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
  expect_fail $n "--records  5: expected an integer" gen --force a --records " 5"
  expect_fail $n "--records \+5: expected an integer" gen --force a --records +5
  expect_fail $n "--mirror \+1: expected an integer" gen --force a --records 5 --mirror +1
  expect_fail $n "root: empty" gen --force a --records 5 --root ""
  expect_fail $n "root .* is [0-9]+ bytes; .*limited to" gen --force a --records 5 --root "$tmp/$long"
  expect_fail $n "root: empty" ls --root ""
done
[ -e "$tmp/root" ] && fail "a refused command created $tmp/root"
ls "$tmp" | grep -q rrrr && fail "a refused command created the long root"

# expect_msg NRANKS MESSAGE ARGS...: the command exits 2 (usage), rank 0
# alone logs exactly "river[0] error: MESSAGE" (every rank parses the
# same arguments: said once), and one closing line follows.
expect_msg() {
  local n=$1 msg=$2 rc; shift 2
  r "$n" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" -eq 2 ] || fail "river $* on $n ranks: exit $rc, expected 2"
  grep -Fxq "river[0] error: $msg" "$tmp/err" \
    || { fail "river $* on $n ranks: rank 0 did not say: $msg"
         grep '^river' "$tmp/err" | head -n 4 | sed 's/^/    /'; }
  [ "$(grep -c '^river\[[0-9]*\] error:' "$tmp/err")" -eq 2 ] \
    || { fail "river $* on $n ranks: not said once (message and closing line)"
         grep '^river' "$tmp/err" | head -n 6 | sed 's/^/    /'; }
}

for n in 1 2; do
  see="(see river gen --help)"
  expect_msg $n "gen: option --schema (value 'a:int32') is not accepted by gen $see" \
    gen --force a --records 5 --schema a:int32
  expect_msg $n "gen: option --schema (value 'a:int32') is not accepted by gen $see" \
    gen --force a --records 5 --schema=a:int32
  expect_msg $n "gen: option -o (value 'f') is not accepted by gen $see" \
    gen --force a --records 5 -o f
  expect_msg $n "copy-in: option --ascii is not accepted by copy-in (see river copy-in --help)" \
    copy-in --force f a --ascii
  expect_msg $n "gen: unknown option '--bogus' $see" gen --force a --records 5 --bogus
  expect_msg $n "gen: unknown option '--bogus=1' $see" gen --force a --records 5 --bogus=1
  expect_msg $n "gen: unknown option '-x' $see" gen --force a --records 5 -x
  # a near miss of an option the command takes: the one it meant (within
  # 2 edits), not one it does not take (--memory is sort's)
  expect_msg $n "gen: unknown option '--mirorr': did you mean '--mirror'? $see" \
    gen --force a --records 5 --mirorr 2
  expect_msg $n "sort: unknown option '--memroy=1G': did you mean '--memory'? (see river sort --help)" \
    sort a b --memroy=1G
  expect_msg $n "gen: unknown option '--memroy' $see" gen --force a --records 5 --memroy 1G
  expect_msg $n "gen: option --records needs a value $see" gen --force a --records
  expect_msg $n "copy-out: option -o needs a value (see river copy-out --help)" \
    copy-out --force a -o
  expect_msg $n "gen: option --direct-io takes no value (given '1') $see" \
    gen --force a --records 5 --direct-io=1
  # Names that read as options, after "--" or a lone "-".
  expect_msg $n "rm: argument '-x' was taken as COLL: a collection name may not start with '-'" \
    rm -- -x
  expect_msg $n "gen: argument '-' was taken as COLL: a collection name may not start with '-'" \
    gen --force --records 5 -
  expect_msg $n "copy-in: argument '-a' was taken as COLL: a collection name may not start with '-'" \
    copy-in --force - -- -a
done
[ -e "$tmp/root" ] && fail "a refused command created $tmp/root"

# Losing a partition's only copy is not "its blocks go to the other
# mirrors"; with a mirror it is.
for n in 1 2; do
  r $n gen --force one$n --records 100 >/dev/null || fail "gen one$n"
  rm -f $(part_file one$n 0 0)
  expect_fail $n "collection one$n: partition 0 block 0: no readable copy" \
    copy-out --force one$n -o "$tmp/one.out"
  grep -q "other mirrors" "$tmp/err" && fail "$n ranks: 'other mirrors' without a mirror"
  grep -Fq "warn: collection one$n: partition 0: the copy on disk 0 is unusable (not found); it is the only copy: the partition's data cannot be read" "$tmp/err" \
    || fail "$n ranks: the lost only copy is not named"
done
r 2 gen --force two --records 100 --mirror 2 >/dev/null || fail "gen two"
rm -f $(part_file two 0 0)
r 2 copy-out --force two -o "$tmp/two.out" 2>"$tmp/err" || fail "copy-out two"
grep -Fq "warn: collection two: partition 0: the copy on disk 0 is unusable (not found); its blocks go to the other mirrors" "$tmp/err" \
  || fail "mirrored: no failover warning"
rm -f $(part_file two 0 1)
expect_fail 2 "collection two: partition 0 block 0: no readable copy" \
  copy-out --force two -o "$tmp/two.out"
grep -Fq "unusable (not found); no other copy is usable: the partition's data cannot be read" "$tmp/err" \
  || fail "mirrored, both copies lost: not said"

# The same numbers without the sign are fine.
r 3 gen --force a --records 5 --mirror 1 >/dev/null || fail "gen --records 5"

clitest_end test_cli_args
