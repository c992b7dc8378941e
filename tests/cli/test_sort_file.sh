#!/bin/bash
# test_sort_file.sh - river sort with file:PATH endpoints (a flat file of
# records in, one ordered file out):
#  - file -> file, collection -> file and file -> collection validate
#    (valsort --input) at 1..4 ranks, River and --static (each input
#    with each policy at two rank counts), uniform and --skew, binary
#    and ASCII; an ASCII sort's output has the same bytes
#    as `LC_ALL=C sort` of the input (cmp); a file sorts onto itself;
#  - emulated rates with a slow disk and a slow partitioner validate;
#  - an existing OUT is refused unless --force; a directory, FIFO or
#    symbolic link at OUT is never replaced, and a FIFO at IN is refused
#    without hanging; a file that is not whole records is refused;
#  - an I/O error writing a run or renaming leaves the old OUT and no
#    temporary file; a kill there leaves the old OUT and only a
#    temporary file named OUT.river-tmp.*;
#  - a failure upstream (a corrupt block of IN) or in another branch of
#    the flow (after the writers had all their input) leaves the old OUT
#    and no temporary; OUT keeps its mode; gc lists a killed sort's
#    temporary;
#  - one file from several writers needs tagged input: records that are
#    not tagged (gen -> coll_write file:) fail with that said.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
N=30000
d=$tmp/files
mkdir -p "$d"

# valid OUT IN: OUT validates against IN (either COLL or file:PATH).
valid() { r 2 valsort "$1" --input "$2" >/dev/null 2>&1; }

r 2 gen --force u --records $N --seed 1 >/dev/null 2>&1 || fail "gen u"
r 2 gen --force s --records $N --skew --seed 2 >/dev/null 2>&1 || fail "gen s"
r 2 gen --force a --records $N --ascii --seed 3 >/dev/null 2>&1 || fail "gen a"
for c in u s a; do
  r 2 copy-out --force $c -o "$d/$c.in" >/dev/null 2>&1 || fail "copy-out $c"
done
LC_ALL=C sort "$d/a.in" >"$d/a.gnu" || fail "GNU sort"

# Every input with both policies, spread over the rank counts (each
# pairing at two of them, in time for CI): u and a with River at odd n
# and static at even n, s the other way round.
for n in $(ranks 1 2 3 4); do
  for c in u s a; do
    policy=""
    if [ "$c" = s ]; then [ $((n % 2)) -eq 1 ] && policy=--static
    else [ $((n % 2)) -eq 0 ] && policy=--static; fi
    out=$d/$c.$n${policy:+s}
    r "$n" sort "file:$d/$c.in" "file:$out" $policy >"$tmp/out" 2>&1 \
      || { fail "$n ranks: sort file:$c.in $policy"; head -n 5 "$tmp/out"; }
    grep -q "^sort: .* $N records" "$tmp/out" \
      || fail "$n ranks: file:$c.in $policy: no report line"
    valid "file:$out" "file:$d/$c.in" \
      || fail "$n ranks: file:$c.in -> file: $policy does not validate"
    [ $c = a ] && { cmp -s "$out" "$d/a.gnu" \
      || fail "$n ranks $policy: not the bytes of LC_ALL=C sort"; }
  done
  r "$n" sort s "file:$d/cf.$n" >/dev/null 2>&1 || fail "$n ranks: coll -> file"
  valid "file:$d/cf.$n" s || fail "$n ranks: coll -> file does not validate"
  r "$n" sort "file:$d/s.in" "fc$n" >/dev/null 2>&1 || fail "$n ranks: file -> coll"
  valid "fc$n" s || fail "$n ranks: file -> coll does not validate"
done
ls "$d" | grep -q river-tmp && fail "a sort left a temporary file"

# Onto itself: OUT is renamed over the file after it was read.
cp "$d/a.in" "$d/self"
r 3 sort "file:$d/self" "file:$d/self" --force --sync >/dev/null 2>&1 \
  || fail "sort a file onto itself"
cmp -s "$d/self" "$d/a.gnu" || fail "sorted onto itself: wrong bytes"

# Emulated disks and partitioners, one of each slow.
for policy in "" --static; do
  r 3 sort "file:$d/s.in" "file:$d/em$policy" $policy --disk-rate 8Mi \
    --cpu-rate 8Mi --perturb "disk:1=0.5;cpu:2=0.25" >"$tmp/out" 2>&1 \
    || fail "emulated file sort $policy"
  grep -q "fluid ideal" "$tmp/out" || fail "emulated $policy: no fluid ideal"
  valid "file:$d/em$policy" "file:$d/s.in" \
    || fail "emulated file sort $policy does not validate"
done

# An existing OUT: refused unless --force, and left as it was.
cp "$d/u.in" "$d/exists"
expect_fail 2 "sort: .*/exists exists \\(--force replaces it" \
  sort "file:$d/s.in" "file:$d/exists"
cmp -s "$d/exists" "$d/u.in" || fail "a refused sort changed OUT"
r 2 sort "file:$d/s.in" "file:$d/exists" --force >/dev/null 2>&1 \
  || fail "--force"
valid "file:$d/exists" "file:$d/s.in" || fail "--force: OUT does not validate"

# Not a regular file at OUT: never replaced, even with --force.
mkdir "$d/dir"
mkfifo "$d/fifo"
ln -s "$d/u.in" "$d/link"
for what in dir fifo link; do
  expect_fail 2 "$d/$what exists and is not a regular file" \
    sort "file:$d/s.in" "file:$d/$what" --force
done
[ -d "$d/dir" ] && [ -p "$d/fifo" ] && [ -L "$d/link" ] \
  && cmp -s "$d/link" "$d/u.in" || fail "a special OUT was replaced"

# Bad inputs: a FIFO (refused, no hang), a torn record, a missing file.
expect_fail 2 "cannot read $d/fifo: not a regular file" \
  sort "file:$d/fifo" "file:$d/o1"
head -c 1050 "$d/u.in" >"$d/torn"
expect_fail 2 "$d/torn: 1050 bytes are not a whole number of 100-byte records" \
  sort "file:$d/torn" "file:$d/o2"
expect_fail 2 "cannot read $d/absent: No such file or directory" \
  sort "file:$d/absent" "file:$d/o3"
expect_fail 2 "sort: --sync is for a file: OUT" sort s o4 --sync
expect_fail 2 "sort: --schema is for a file: IN" \
  sort s "file:$d/o5" --schema "key:char[10],rest:bytes[90]"
ls "$d" | grep -Eq '^o[0-9]' && fail "a failed sort left an OUT"

# Faults while the runs are written and at the rename: the old OUT
# stays; an error removes the temporary file, a kill leaves only it.
cp "$d/u.in" "$d/old"
for step in file-write file-rename; do
  env RIVER_TEST_FAULT=$step:fail "$run" -n 3 "$river" sort "file:$d/s.in" \
    "file:$d/old" --force >"$tmp/out" 2>&1 && fail "$step failing: succeeded"
  cmp -s "$d/old" "$d/u.in" || fail "$step failing: OUT changed"
  ls "$d" | grep -q "^old.river-tmp" && fail "$step failing: a temporary left"
  env RIVER_TEST_FAULT=$step:kill "$run" -n 3 "$river" sort "file:$d/s.in" \
    "file:$d/old" --force >/dev/null 2>&1 && fail "$step: not killed"
  cmp -s "$d/old" "$d/u.in" || fail "killed at $step: OUT changed"
  t=$(ls "$d"/old.river-tmp.* 2>/dev/null)
  [ -n "$t" ] || fail "killed at $step: no temporary"
  r 1 gc >"$tmp/out" 2>&1
  grep -qF "$t" "$tmp/out" || fail "killed at $step: gc does not list $t"
  r 1 gc --remove >/dev/null 2>&1
  [ -e "$t" ] && fail "killed at $step: gc --remove left $t"
  rm -f "$d"/old.river-tmp.*
done

# A failure upstream (a corrupt block of IN) leaves the old OUT byte for
# byte, with its mode, and no temporary; a sort that succeeds keeps the
# mode of the OUT it replaces.
r 2 gen --force bad --records $N --seed 4 >/dev/null 2>&1 || fail "gen bad"
f=$(part_file bad 1 1)
flip "$f" $(( $(stat -c %s "$f") / 2 ))
cp "$d/u.in" "$d/old"
chmod 600 "$d/old"
expect_fail 3 "no readable copy" sort bad "file:$d/old" --force
cmp -s "$d/old" "$d/u.in" || fail "a failed sort replaced its file: OUT"
ls "$d" | grep -q "^old.river-tmp" && fail "a failed sort left its temporary"
r 3 sort s "file:$d/old" --force >/dev/null 2>&1 && valid "file:$d/old" s \
  || fail "sort s over a mode-600 file: OUT"
[ "$(stat -c %a "$d/old")" = 600 ] \
  || fail "sort to file: turned mode 600 into $(stat -c %a "$d/old")"

# A failure in another branch of the flow, after the file writers have
# their whole input (a count that fails writing its digest a second
# later): neither coll_write file:, file_write nor coll_write to a
# collection publishes.
printf 'old A' >"$d/twoA"
r 2 gen --force twoC --records 500 >/dev/null 2>&1 && r 1 copy-out --force twoC -o "$tmp/twoC.ref" \
  || fail "gen twoC"
printf 'old B' >"$d/twoB"
cp "$d/twoA" "$tmp/twoA.ref"
cp "$d/twoB" "$tmp/twoB.ref"
printf '%s\n' 'stages:' \
  '  - {name: a, module: gen, ranks: 0-0, args: {records: 1000}}' \
  "  - {name: wa, module: coll_write, ranks: 0-0, args: {coll: \"file:$d/twoA\", replace: true}}" \
  '  - {name: b, module: gen, ranks: 0-0, args: {records: 1000}}' \
  "  - {name: wb, module: file_write, ranks: 0-0, args: {path: \"$d/twoB\", replace: true}}" \
  '  - {name: e, module: gen, ranks: 0-0, args: {records: 1000}}' \
  '  - {name: we, module: coll_write, ranks: 0-0, args: {coll: twoC, replace: true}}' \
  '  - {name: c, module: gen, ranks: rest, args: {records: 20000}}' \
  "  - {name: late, module: count, ranks: rest," \
  "     args: {file: \"$d/nodir/c\", cpu_rate: 2Mi}}" \
  'edges: [{from: a, to: wa}, {from: b, to: wb}, {from: e, to: we},' \
  '        {from: c, to: late}]' \
  >"$tmp/two.yaml"
expect_fail 2 "cannot write $d/nodir/c" run "$tmp/two.yaml"
cmp -s "$d/twoA" "$tmp/twoA.ref" || fail "a failed flow replaced coll_write's file:"
cmp -s "$d/twoB" "$tmp/twoB.ref" || fail "a failed flow replaced file_write's file"
ls "$d" | grep -q "^two.\.river-tmp" && fail "a failed flow left a temporary"
r 1 copy-out --force twoC -o "$tmp/twoC.now" && cmp -s "$tmp/twoC.now" "$tmp/twoC.ref" \
  || fail "a failed flow committed coll_write's collection"

# One file from several writers needs records tagged with their place.
printf '%s\n' 'stages:' \
  '  - {name: src, module: gen, ranks: rest, args: {records: 1000}}' \
  '  - {name: out, module: coll_write, ranks: rest,' \
  "     args: {coll: \"file:$d/untagged\"}}" \
  'edges: [{from: src, to: out}]' >"$tmp/w.yaml"
expect_fail 2 "one file from 2 instances needs records tagged" run "$tmp/w.yaml"
[ -e "$d/untagged" ] && fail "untagged records left a file"
r 1 run "$tmp/w.yaml" >/dev/null 2>&1 || fail "one writer, untagged"
[ "$(stat -c %s "$d/untagged")" = 100000 ] || fail "one writer: wrong size"

# A sink filter before the file writer: the tags still read.
printf '%s\n' 'stages:' \
  '  - {name: src, module: gen, ranks: rest, args: {records: 2000}}' \
  '  - {name: out, module: coll_write, ranks: rest,' \
  "     args: {coll: \"file:$d/filtered\"}}" \
  "edges: [{from: src, to: out, filter: 'key < \\x80', filter_at: sink}]" \
  >"$tmp/f.yaml"
r 1 run "$tmp/f.yaml" >/dev/null 2>&1 || fail "a sink filter before file:"
[ -s "$d/filtered" ] || fail "a sink filter before file: wrote nothing"

# Tagged runs from several producers on a push edge would interleave:
# refused, nothing published.
expect_fail 3 "reach this instance from 3 producers on an edge that interleaves" \
  run "${top_srcdir:-.}/flows/sort.yaml" in=file:$d/u.in out=file:$d/pushed \
  gather=dq gather_policy=push
[ -e "$d/pushed" ] && fail "interleaved runs were published"

# replace=false (river sort without --force) refuses a file already
# there before any work, and keeps one that appears while the job
# writes (made once the job's temporary is there: the check is past);
# a file sorted onto itself keeps its permissions; --mirror is refused.
cp "$d/u.in" "$d/kept"
expect_fail 2 "stage 'write': $d/kept exists \\(replace: true replaces it" \
  run "${top_srcdir:-.}/flows/sort.yaml" in=file:$d/s.in out=file:$d/kept \
  replace=false
cmp -s "$d/kept" "$d/u.in" || fail "replace=false: the file changed"
rm -f "$d/kept"
( r 2 run "${top_srcdir:-.}/flows/sort.yaml" in=file:$d/s.in \
    out=file:$d/kept disk_rate=1Mi >/dev/null 2>"$tmp/race.err"
  echo $? >"$tmp/race.rc" ) </dev/null &
for i in $(seq 1 600); do
  ls "$d" | grep -q "^kept.river-tmp" && break
  sleep 0.1
done
cp "$d/u.in" "$d/kept"
wait
[ "$(cat "$tmp/race.rc")" != 0 ] || fail "replace=false: a file made meanwhile was replaced"
grep -q "$d/kept appeared while this job wrote it: not replacing it" \
  "$tmp/race.err" || { fail "replace=false: the race is not said"; cat "$tmp/race.err"; }
cmp -s "$d/kept" "$d/u.in" || fail "replace=false: the file made meanwhile changed"
ls "$d" | grep -q "^kept.river-tmp" && fail "replace=false left a temporary"
cp "$d/a.in" "$d/private"
chmod 600 "$d/private"
r 2 sort "file:$d/private" "file:$d/private" --force >/dev/null 2>&1 \
  || fail "sort a private file onto itself"
[ "$(stat -c %a "$d/private")" = 600 ] || fail "sorting onto itself widened permissions"
expect_fail 2 "sort: --mirror is for a collection OUT" \
  sort "file:$d/s.in" "file:$d/o6" --mirror 2

clitest_end test_sort_file
