#!/bin/bash
# test_sort_twopass.sh - river sort in two passes (chosen when IN does not
# fit in --memory a rank: sorted runs into a temporary collection, then
# merged):
#  - at 1..4 ranks, uniform and --skew, binary and ASCII, collection and
#    file: endpoints: the output validates (valsort --input), an ASCII
#    file's is LC_ALL=C sort's bytes, the report says two passes, and no
#    temporary collection (sort-runs-*) is left;
#  - with an emulated slow disk and a slow partitioner it still validates;
#  - the same input with enough --memory sorts in one pass;
#  - a failure in the second pass (an I/O error at OUT's rename) or the
#    first (an I/O error writing the runs) leaves the old OUT and no
#    temporary collection; a kill leaves the old OUT, and the runs
#    collection is listed by river ls and by river gc, which removes it
#    with --remove; gc --remove leaves a live sort's runs alone;
#  - --memory too small to make progress, and --static when IN does not
#    fit, are refused naming why;
#  - sort --help says when it takes two passes.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
N=40000
d=$tmp/files
mkdir -p "$d"

valid() { r 2 valsort "$1" --input "$2" >/dev/null 2>&1; }
no_runs() { ! r 1 ls 2>/dev/null | grep -q '^sort-runs-'; }

r 2 gen --force u --records $N --seed 11 >/dev/null 2>&1 || fail "gen u"
r 3 gen --force s --records $N --skew --seed 12 >/dev/null 2>&1 || fail "gen s"
r 2 gen --force a --records $N --ascii --seed 13 >/dev/null 2>&1 || fail "gen a"
r 2 copy-out --force a -o "$d/a.in" >/dev/null 2>&1 || fail "copy-out a"
r 2 copy-out --force s -o "$d/s.in" >/dev/null 2>&1 || fail "copy-out s"
LC_ALL=C sort "$d/a.in" >"$d/a.gnu" || fail "GNU sort"

# 4 MB of input; 1 MB a rank holds a few runs
M=1Mi
for n in $(ranks 1 2 3 4); do
  c=u
  [ $((n % 2)) -eq 0 ] && c=s   # uniform at odd n, skewed at even n
  r "$n" sort $c "$c.2p$n" --memory $M >"$tmp/out" 2>&1 \
    || { fail "$n ranks: sort $c in two passes"; head -n 5 "$tmp/out"; }
  grep -q "^sort: two passes" "$tmp/out" || fail "$n ranks $c: not two passes"
  valid "$c.2p$n" $c || fail "$n ranks: two-pass $c does not validate"
  r "$n" sort "file:$d/a.in" "file:$d/a.$n" --memory $M >"$tmp/out" 2>&1 \
    || fail "$n ranks: file -> file in two passes"
  cmp -s "$d/a.$n" "$d/a.gnu" || fail "$n ranks: two-pass ASCII: not GNU's bytes"
  r "$n" sort s "file:$d/s.$n" --memory $M >/dev/null 2>&1 \
    || fail "$n ranks: coll -> file in two passes"
  valid "file:$d/s.$n" s || fail "$n ranks: two-pass coll -> file"
  r "$n" sort "file:$d/s.in" "fc$n" --memory $M >/dev/null 2>&1 \
    || fail "$n ranks: file -> coll in two passes"
  valid "fc$n" s || fail "$n ranks: two-pass file -> coll"
  no_runs || fail "$n ranks: a runs collection was left"
done

r 3 sort s emul --memory $M --disk-rate 20Mi --cpu-rate 20Mi \
  --perturb "disk:1=0.5;cpu:2=0.25" >"$tmp/out" 2>&1 \
  || fail "emulated two-pass sort"
grep -q "^sort: two passes" "$tmp/out" || fail "emulated: not two passes"
valid emul s || fail "emulated two-pass sort does not validate"
r 3 sort s onepass --memory 64Mi >"$tmp/out" 2>&1 || fail "sort with enough memory"
grep -q "^sort: two passes" "$tmp/out" && fail "enough memory: two passes"
valid onepass s || fail "one pass with --memory"

# Failures: the old OUT stays, the runs go.
cp "$d/s.in" "$d/old"
env RIVER_TEST_FAULT=file-rename:fail "$run" -n 3 "$river" sort \
  "file:$d/a.in" "file:$d/old" --force --memory $M >/dev/null 2>&1 \
  && fail "second pass failing: succeeded"
cmp -s "$d/old" "$d/s.in" || fail "second pass failing: OUT changed"
no_runs || fail "second pass failing: the runs were left"
r 2 sort u keep --memory $M >/dev/null 2>&1 || fail "sort u keep"
before=$(r 1 info keep | grep generation)
env RIVER_TEST_FAULT=commit-files:fail "$run" -n 3 "$river" sort s keep \
  --force --memory $M >/dev/null 2>&1 && fail "first pass failing: succeeded"
[ "$(r 1 info keep | grep generation)" = "$before" ] \
  || fail "first pass failing: OUT changed"
no_runs || fail "first pass failing: the runs were left"
env RIVER_TEST_FAULT=file-rename:kill "$run" -n 3 "$river" sort \
  "file:$d/a.in" "file:$d/old" --force --memory $M >/dev/null 2>&1 \
  && fail "killed in the second pass: succeeded"
cmp -s "$d/old" "$d/s.in" || fail "killed in the second pass: OUT changed"
left=$(r 1 ls 2>/dev/null | awk '/^sort-runs-/ { print $1 }')
[ -n "$left" ] || fail "killed: no runs collection to clean up"
# gc finds them (the sort's claim on its runs outlived it), and removes
# them with their data files; a live sort's runs are left alone.
r 1 gc >"$tmp/gc" 2>&1 || fail "gc after a killed two-pass sort"
for c in $left; do
  grep -q "/$c.river.h5 .*scratch collection whose job died" "$tmp/gc" \
    || { fail "gc does not list the killed sort's runs $c"; cat "$tmp/gc"; }
done
r 1 gc --remove >"$tmp/gc" 2>&1 || fail "gc --remove"
nrm=$(grep -c '^  .*, removed$' "$tmp/gc")
grep -q "^gc: $nrm leftover files, .*removed" "$tmp/gc" \
  || { fail "gc --remove: its total is not the $nrm files it listed"; cat "$tmp/gc"; }
for c in $left; do
  grep -q "/disk[0-9]*/$c\.p0\..*\.rdat .*removed" "$tmp/gc" \
    || fail "gc --remove did not remove the runs' data files"
  ls "$root"/disk*/"$c".* >/dev/null 2>&1 && fail "runs data left: $c"
done
no_runs || fail "gc --remove left the runs"
r 1 gc 2>&1 | grep -q "^gc: no leftovers" || fail "gc: not clean after"
env RIVER_TEST_FAULT=file-rename:wait=$tmp/hold "$run" -n 2 "$river" sort \
  u "file:$d/live" --memory $M >/dev/null 2>&1 &
live=$!
touch "$tmp/hold"
for i in $(seq 1 200); do   # until the second pass holds at the rename
  r 1 ls 2>/dev/null | grep -q '^sort-runs-' && break
  sleep 0.1
done
r 1 gc --remove >"$tmp/gc" 2>&1
grep -q "sort-runs-" "$tmp/gc" && fail "gc --remove touched a live sort's runs"
rm -f "$tmp/hold"
wait $live || fail "the live sort failed after gc"
valid "file:$d/live" u || fail "the live sort's output invalid"
no_runs || fail "the live sort left its runs"

# Refused.
expect_fail 2 "sort: --memory 4096 bytes is too small to make progress" \
  sort u bad1 --memory 4Ki
expect_fail 2 "sort: --memory 512000 bytes is too small to make progress: a sorter holds at least two messages of the exchange" \
  sort u bad3 --memory 500Ki
expect_fail 2 "sort: --static sorts in one pass, and u does not fit" \
  sort u bad2 --memory $M --static
r 1 ls 2>/dev/null | grep -q "^bad" && fail "a refused sort left OUT"

# --help says when it takes two passes
"$run" -n 1 "$river" sort --help >"$tmp/help" 2>&1 || fail "sort --help"
grep -q "in one pass when" "$tmp/help" && grep -q "else in two" "$tmp/help" \
  || { fail "sort --help does not say when it takes two passes"; cat "$tmp/help"; }

clitest_end test_sort_twopass
