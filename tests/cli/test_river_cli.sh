#!/bin/bash
# test_river_cli - the river command under mpirun: `river hello` reports
# the build, river topo's report (every rank once, under its node) and a
# ring measurement; bad arguments fail on every rank with
# a message naming the argument; a mistyped command gets the one it
# probably meant; ls of a missing root fails; info names every disk. Run by scripts/mpi-test-launch, which
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
grep -Eq "^ring: a 1.05 MB token went 5 times round $n ranks in [0-9.]+ s: [0-9.]+ us and [0-9.]+ [kMG]?B/s per hop$" \
  "$tmp/out" || fail "hello: no ring measurement"

# Bad option value: non-zero exit, message names the option and value,
# said once (every rank parses the same arguments: rank 0 says it).
if "$run" -n "$n" "$river" hello --laps zero >"$tmp/out" 2>"$tmp/err"; then
  fail "hello --laps zero succeeded"
fi
[ "$(grep -c "river\[[0-9]*\] error: --laps zero: expected an integer" "$tmp/err")" -eq 1 ] \
  || { fail "hello --laps zero: not said once"; cat "$tmp/err"; }

# Unknown command: exit 2, named, said once; a near miss gets the
# command it probably meant (within 2 edits), a far one none.
"$run" -n "$n" "$river" frobnicate >"$tmp/out" 2>"$tmp/err"; rc=$?
[ "$rc" -ne 0 ] || fail "unknown command succeeded"
[ "$(grep -c "unknown command 'frobnicate' (try river --help)" "$tmp/err")" -eq 1 ] \
  || { fail "unknown command not named once, or a guess for it"; cat "$tmp/err"; }
for typo in sortt srot valsrot copyout; do
  "$run" -n "$n" "$river" $typo >"$tmp/out" 2>"$tmp/err" && fail "$typo succeeded"
  [ "$(grep -c "unknown command '$typo': did you mean '[a-z-]*'?" "$tmp/err")" -eq 1 ] \
    || { fail "$typo: no guess, or more than one line"; cat "$tmp/err"; }
done
grep -q "did you mean 'copy-out'" "$tmp/err" || fail "copyout: not copy-out"
"$run" -n 1 "$river" srot >"$tmp/out" 2>"$tmp/err"
grep -q "did you mean 'sort'" "$tmp/err" || fail "srot: not sort"

# ls of a root that is not there: an error naming it (a mistyped --root),
# not an empty listing; info names every disk's directory, in words of
# the right number.
"$run" -n "$n" "$river" ls --root "$tmp/nowhere" >"$tmp/out" 2>"$tmp/err" \
  && fail "ls of a missing root succeeded"
[ "$(grep -c "ls: no root $tmp/nowhere" "$tmp/err")" -eq 1 ] \
  || { fail "ls of a missing root: not said once"; cat "$tmp/err"; }
"$run" -n 3 "$river" gen --force --root "$tmp/r" three --records 30 --mirror 2 \
  >/dev/null 2>&1 || fail "gen three"
"$run" -n 1 "$river" gen --force --root "$tmp/r" one --records 1 >"$tmp/out" 2>&1 \
  || fail "gen one"
grep -q "^gen: one: 1 record on 1 partition$" "$tmp/out" \
  || { fail "gen of 1 record on 1 rank: not in the singular"; cat "$tmp/out"; }
"$run" -n 1 "$river" fsck --root "$tmp/r" one >"$tmp/out" 2>&1 || fail "fsck one"
grep -q "^fsck one: OK: 1 partition, 1 copy, every block verified$" "$tmp/out" \
  || { fail "fsck one: not in the singular"; cat "$tmp/out"; }
"$run" -n 1 "$river" info --root "$tmp/r" three >"$tmp/out" 2>&1 || fail "info three"
for d in 0 1 2; do
  grep -q "^disk $d  *$tmp/r/disk$d\$" "$tmp/out" || fail "info: disk $d's directory not shown"
done
grep -q "^layout .* 3 partitions on 3 disks, 2 copies each" "$tmp/out" \
  || fail "info three: layout line"
"$run" -n 1 "$river" info --root "$tmp/r" one >"$tmp/out" 2>&1 || fail "info one"
grep -q "^layout .* 1 partition on 1 disk, 1 copy each" "$tmp/out" \
  || { fail "info one: layout line in the singular"; grep layout "$tmp/out"; }

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
