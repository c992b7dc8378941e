#!/bin/bash
# test_sort16.sh - river sort's matrix at 8 and 16 ranks (the smaller
# rank counts are test_sort*.sh's): uniform and --skew, binary and
# ASCII, one pass and two passes, collection and file: endpoints, River
# and --static, and with an emulated slow disk and slow partitioner;
# every output validated (valsort --input), ASCII files against
# LC_ALL=C sort's bytes. Small inputs: the ranks share the machine's
# cores, so this is about correctness, not speed.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
N=24000     # one pass; two passes take M=150000 (15 MB) in 1Mi a rank
M=150000
d=$tmp/files
mkdir -p "$d"

valid() { r 4 valsort "$1" --input "$2" >/dev/null 2>&1; }

r 4 gen --force u --records $N --seed 21 >/dev/null 2>&1 || fail "gen u"
r 4 gen --force s --records $N --skew --seed 22 >/dev/null 2>&1 || fail "gen s"
r 4 gen --force a --records $N --ascii --seed 23 >/dev/null 2>&1 || fail "gen a"
r 4 gen --force big --records $M --skew --seed 24 >/dev/null 2>&1 || fail "gen big"
r 4 gen --force abig --records $M --ascii --seed 25 >/dev/null 2>&1 || fail "gen abig"
r 4 copy-out --force abig -o "$d/abig.in" >/dev/null 2>&1 || fail "copy-out abig"
LC_ALL=C sort "$d/abig.in" >"$d/abig.gnu" || fail "GNU sort abig"
r 4 copy-out --force a -o "$d/a.in" >/dev/null 2>&1 || fail "copy-out a"
LC_ALL=C sort "$d/a.in" >"$d/a.gnu" || fail "GNU sort"

# At each of 8 and 16 ranks: River and static on uniform and skewed
# collections (one each way), an ASCII file against GNU sort, a two-pass
# sort (collection -> collection at 16, ASCII file -> file at 8, and a
# collection -> file at both) and an emulated, perturbed sort.
for n in $(ranks 8 16); do
  for c in u s; do
    policy=""
    [ "$c" = s ] && [ "$n" = 8 ] && policy=--static
    [ "$c" = u ] && [ "$n" = 16 ] && policy=--static
    r "$n" sort $c "$c$n" $policy >"$tmp/out" 2>&1 \
      || { fail "$n ranks: sort $c $policy"; head -n 3 "$tmp/out"; }
    valid "$c$n" $c || fail "$n ranks: sort $c $policy does not validate"
  done
  r "$n" sort "file:$d/a.in" "file:$d/a$n" >/dev/null 2>&1 \
    || fail "$n ranks: sort file:a.in"
  cmp -s "$d/a$n" "$d/a.gnu" || fail "$n ranks: file sort: not GNU's bytes"
  if [ "$n" = 16 ]; then
    r "$n" sort big "b2p$n" --memory 1Mi >"$tmp/out" 2>&1 \
      || { fail "$n ranks: two-pass sort"; head -n 3 "$tmp/out"; }
    grep -q "^sort: two passes" "$tmp/out" || fail "$n ranks: not two passes"
    valid "b2p$n" big || fail "$n ranks: two-pass sort does not validate"
  else
    r "$n" sort "file:$d/abig.in" "file:$d/abig$n" --memory 1Mi >"$tmp/out" 2>&1 \
      || fail "$n ranks: two-pass file -> file"
    grep -q "^sort: two passes" "$tmp/out" || fail "$n ranks: not two passes"
    cmp -s "$d/abig$n" "$d/abig.gnu" || fail "$n ranks: two-pass file: not GNU's bytes"
  fi
  r "$n" sort big "file:$d/b$n" --memory 1Mi >/dev/null 2>&1 \
    || fail "$n ranks: two-pass coll -> file"
  valid "file:$d/b$n" big || fail "$n ranks: two-pass coll -> file"
  r "$n" sort s "em$n" --disk-rate 16Mi --cpu-rate 16Mi \
    --perturb "disk:1=0.5;cpu:$((n - 1))=0.25" >"$tmp/out" 2>&1 \
    || fail "$n ranks: emulated sort"
  grep -q "fluid ideal" "$tmp/out" || fail "$n ranks: no fluid ideal"
  valid "em$n" s || fail "$n ranks: emulated sort does not validate"
done
r 1 ls 2>/dev/null | grep -q '^sort-runs-' && fail "runs collections left"

clitest_end test_sort16
