#!/bin/bash
# test_coll_symlink.sh - files River creates inside a root, and whose
# files gc may remove (issue 33, findings 2, 4 and part of 8;
# doc/collections.md, "Symbolic links"):
#   - links planted where a write creates its temporary metadata (during
#     `gen`, held at commit-meta) or a sort its later partitions (held at
#     its first begin-partition, the write's generation then visible):
#     every victim outside the root stays byte-identical, the write
#     succeeds and its output is exact;
#   - a disk directory that is another user's link is refused, by name;
#   - two roots whose diskN are links to one place: gc --remove in one
#     leaves the other's collection whole (fsck passes, same bytes), and still
#     removes what its own killed write left there;
#   - a first write with a non-default --disks, killed: gc lists its
#     files (its write record names the pattern) and removes them;
#   - a stale metadata backup restored: gc lists the newer data but keeps
#     it (the right metadata put back, fsck passes); --force removes it;
#   - the count module does not write its FILE.INSTANCE through a link.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
victims=$tmp/victims
mkdir -p "$victims" "$root"

# wait_for GLOB: wait (up to 30 s) until a file matches GLOB; prints it.
wait_for() {
  local i f
  for i in $(seq 1500); do
    for f in $1; do [ -e "$f" ] && { echo "$f"; return 0; }; done
    sleep 0.02
  done
  return 1
}

# victim N: a file outside every root with known bytes.
victim() { printf 'precious %s\n' "$1" >"$victims/v$1"; echo "$victims/v$1"; }

# intact N: victim N still holds its bytes.
intact() { printf 'precious %s\n' "$1" | cmp -s - "$victims/v$1"; }

# --- 1. temporary metadata: a link planted during `river gen X` --------
hold=$tmp/hold
touch "$hold"
RIVER_TEST_FAULT=commit-meta:wait=$hold "$run" -n 2 "$river" gen --force X \
  --records 5000 >"$tmp/gen.out" 2>"$tmp/gen.err" &
pid=$!
f=$(wait_for "$root/disk0/X.p0.*.rdat") || fail "gen X: no data file"
gen=${f##*/X.p0.}; gen=${gen%%.*}
v=$(victim meta)
ln -s "$v" "$root/.tmp.X.$gen.river.h5"
rm -f "$hold"
wait $pid || fail "gen X with a planted .tmp.X.$gen.river.h5: failed"
intact meta || fail "the victim of .tmp.X.GEN.river.h5 was written"
[ -L "$root/X.river.h5" ] && fail "X.river.h5 is the planted link"
r 2 fsck X >/dev/null 2>&1 || fail "fsck X after the planted link"

# --- 2. a 3-rank sort's later partitions: links planted ----------------
r 3 gen --force IN --records 200000 >/dev/null 2>&1 || fail "gen IN"
touch "$hold"
RIVER_TEST_FAULT=begin-partition:wait=$hold "$run" -n 3 "$river" sort IN \
  OUT >"$tmp/sort.out" 2>"$tmp/sort.err" &
pid=$!
f=$(wait_for "$root/disk0/OUT.p0.*.rdat.tmp") || fail "sort: no data file"
gen=${f##*/OUT.p0.}; gen=${gen%%.*}
for q in $(seq 0 60); do
  v=$(victim "s$q")
  for d in 0 1 2; do
    ln -s "$v" "$root/disk$d/OUT.p$q.$gen.rdat.tmp" 2>/dev/null
  done
done
rm -f "$hold"
wait $pid || fail "sort with planted OUT.pQ.GEN.rdat.tmp links: failed"
changed=0
for q in $(seq 0 60); do intact "s$q" || changed=$((changed + 1)); done
[ "$changed" -eq 0 ] || fail "sort wrote $changed victims through links"
r 3 valsort OUT >"$tmp/vs" 2>&1 || fail "valsort OUT after the plant"
grep -q '200000 records' "$tmp/vs" || fail "OUT lost records"
find "$root" -type l -name 'OUT.*' -delete

# --- 3. a disk directory that is another user's link is not followed ---
if id nobody >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
  mkdir -p "$tmp/elsewhere"
  ln -s "$tmp/elsewhere" "$root/ln0"
  chown -h nobody "$root/ln0"
  expect_fail 1 "disk directory $root/ln0 is a symbolic link owned by another user" \
    gen --force L --records 100 --disks 'ln%d'
  [ -z "$(ls -A "$tmp/elsewhere")" ] || fail "a file was made through ln0"
  rm -f "$root/ln0"
fi

# --- 4. two roots sharing their disk directories through links ---------
A=$tmp/rootA B=$tmp/rootB
mkdir -p "$A" "$B" "$tmp/shared/disk0" "$tmp/shared/disk1"
for d in 0 1; do
  ln -s "$tmp/shared/disk$d" "$A/disk$d"
  ln -s "$tmp/shared/disk$d" "$B/disk$d"
done
r 2 gen --force Y --root "$B" --records 20000 >/dev/null 2>&1 || fail "gen Y in B"
f=$(ls "$B"/disk0/Y.p0.*.rdat); genB=${f##*/Y.p0.}; genB=${genB%%.*}
r 2 gen --force W --root "$A" --records 1000 >/dev/null 2>&1 || fail "gen W in A"
# A's own write of Y, killed: files of A's generation in the shared dirs
RIVER_TEST_FAULT=commit-meta:kill "$run" -n 2 "$river" gen --force Y --root "$A" \
  --records 3000 >/dev/null 2>&1 && fail "killed gen Y in A succeeded"
sum_before=$(r 1 copy-out Y --root "$B" 2>/dev/null | cksum)
# A record another user planted in A, naming B's generation of Y, claims
# nothing (else A's gc would take B's files for its own).
if id nobody >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
  printf 'river-write 1\ngeneration %s\nndisks 2\ndisks disk%%d\n' \
    "$genB" >"$A/.Y.$genB.write"
  chown nobody "$A/.Y.$genB.write"
fi
r 1 gc --root "$A" >"$tmp/gcA" 2>&1 || fail "gc in A"
r 1 gc --root "$A" --remove >"$tmp/gcA" 2>&1 || fail "gc --remove in A"
ls "$B"/disk*/Y.*.rdat >/dev/null 2>&1 || fail "gc in A removed B's Y"
[ "$(r 1 copy-out Y --root "$B" 2>/dev/null | cksum)" = "$sum_before" ] \
  || fail "B's Y changed"
r 2 fsck Y --root "$B" >/dev/null 2>&1 || fail "fsck Y in B after gc in A"
grep -Eq "$A/disk./Y\.p.*data file of no collection, removed" \
  "$tmp/gcA" \
  || fail "gc in A did not remove its own killed write's data"
grep -q 'record of a write that never finished, removed' "$tmp/gcA" \
  || fail "gc in A did not remove its killed write's record"
grep -q 'were not judged' "$tmp/gcA" \
  || fail "gc in A did not say it left files in the shared directories"
r 2 fsck W --root "$A" >/dev/null 2>&1 || fail "fsck W in A after gc"
r 2 fsck Y --root "$A" >/dev/null 2>&1 && fail "A has a Y after the kill"
r 1 rm --force Y --root "$A" >/dev/null 2>&1
r 2 fsck Y --root "$B" >/dev/null 2>&1 || fail "rm --force Y in A hurt B"

# --- 5. a first write with a non-default --disks, killed ---------------
RIVER_TEST_FAULT=commit-meta:kill "$run" -n 2 "$river" gen --force Z \
  --disks 'zd%d' --records 3000 >/dev/null 2>&1 && fail "killed gen Z"
ls "$root"/zd0/Z.p0.*.rdat >/dev/null 2>&1 || fail "no data of the killed Z"
r 1 gc >"$tmp/gc5" 2>&1 || fail "gc after the killed Z"
grep -q "zd0/Z.p0\..*\.rdat" "$tmp/gc5" \
  || fail "gc does not list the killed --disks write's data"
r 1 gc --remove >/dev/null 2>&1 || fail "gc --remove after the killed Z"
ls "$root"/zd*/Z.* "$root"/.Z.*.write >/dev/null 2>&1 \
  && fail "gc --remove left the killed Z's files"

# --- 6. a stale metadata backup restored --------------------------------
r 2 gen --force S --records 4000 --seed 1 >/dev/null 2>&1 || fail "gen S v1"
cp -p "$root/S.river.h5" "$tmp/S.v1"
sleep 0.05
r 2 gen --force S --records 4000 --seed 2 >/dev/null 2>&1 || fail "gen S v2"
cp "$root/S.river.h5" "$tmp/S.v2"
cp "$tmp/S.v1" "$root/S.river.h5"     # the stale backup, restored
r 1 gc --remove >"$tmp/gc6" 2>&1 || fail "gc --remove, stale metadata"
grep -q 'newer than its collection.s metadata' "$tmp/gc6" \
  || fail "gc gives no note for data newer than the metadata"
cp "$tmp/S.v2" "$root/S.river.h5"
r 2 fsck S >/dev/null 2>&1 || fail "gc removed the newest data of S"
cp "$tmp/S.v1" "$root/S.river.h5"
r 1 gc --remove --force >/dev/null 2>&1 || fail "gc --remove --force"
ls "$root"/disk*/S.*.rdat >/dev/null 2>&1 \
  && fail "gc --remove --force kept the unnamed data"

# --- 7. the count module's FILE.INSTANCE is not written through a link -
v=$(victim count)
ln -s "$v" "$tmp/cnt.0"
expect_fail 1 "cannot write $tmp/cnt.0" run \
  "${top_srcdir:-.}/tests/flows/run/gen_count.yaml" out="$tmp/cnt" \
  gen_ranks=0-0 count_ranks=0-0
intact count || fail "count wrote its digest through cnt.0's link"

clitest_end test_coll_symlink
