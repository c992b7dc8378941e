#!/bin/bash
# test_fsck - river fsck judges each block across the copies of its
# partition: a mirrored collection whose copies are damaged at different
# blocks (or whose copy is lost whole) still has every block, so fsck
# exits 0 with a WARN line per damaged copy naming it, its blocks and the
# copy to repair it from, and copy-out is byte-identical; a block damaged
# on every copy is data lost: fsck names partition and block and exits
# non-zero on every rank. At 1 and 3 ranks. Run by scripts/mpi-test-launch.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"

bs=4096     # 40 records a block: 1000-record partitions have 25 blocks
blk() { echo $((4096 + $1 * bs + 10)); } # an offset inside block $1's records

# fsck_ok NRANKS COLL: fsck exits 0 (output in $tmp/out, $tmp/err).
fsck_ok() {
  r "$1" fsck "$2" >"$tmp/out" 2>"$tmp/err" \
    || { fail "fsck $2 on $1 ranks failed"; sed 's/^/    /' "$tmp/out" "$tmp/err" | head -n 12; }
}
# has PATTERN WHAT: $tmp/out has a line matching PATTERN (grep -E).
has() {
  grep -Eq -e "$1" "$tmp/out" \
    || { fail "$2: no line matching /$1/"; sed 's/^/    /' "$tmp/out" | head -n 12; }
}
# same NRANKS COLL: copy-out on NRANKS ranks gives the original bytes.
same() {
  rm -f "$tmp/back"
  r "$1" copy-out --force "$2" -o "$tmp/back" 2>/dev/null && cmp -s "$tmp/back" "$tmp/orig" \
    || fail "copy-out of $2 on $1 ranks differs from the original"
}

r 3 gen --force fk --records 3000 --mirror 2 --block-size 4Ki >/dev/null || fail "gen fk"
r 1 copy-out --force fk -o "$tmp/orig" || fail "copy-out fk"
for n in $(ranks 1 2 3 4); do
  fsck_ok $n fk
  has "^fsck fk: OK: 3 partitions, 6 copies, every block verified" "intact fk ($n)"
done

# Partition 1: copy 0 on disk 1, copy 1 on disk 2. Block 5 bad on copy
# 0, block 9 bad on copy 1: every block still has an intact copy.
flip "$(part_file fk 1 1)" "$(blk 5)"
flip "$(part_file fk 1 2)" "$(blk 9)"
for n in $(ranks 1 2 3 4); do
  fsck_ok $n fk
  has "^fsck fk: WARN: partition 1 copy 0 \(disk 1\): block 5 damaged \(1 of 25\); repair from copy 1 \(disk 2\)" \
    "copy 0 of partition 1 ($n ranks)"
  has "^fsck fk: WARN: partition 1 copy 1 \(disk 2\): block 9 damaged \(1 of 25\); repair from copy 0 \(disk 1\)" \
    "copy 1 of partition 1 ($n ranks)"
  has "^fsck fk: OK with warnings: 2 of 6 copies damaged, every block has an intact copy" \
    "summary ($n ranks)"
  grep -q "DATA LOST" "$tmp/out" && fail "data lost reported with every block intact ($n ranks)"
  same $n fk
done

# A copy lost whole (partition 2's copy 1, on disk 0), and a bad block
# on partition 0's copy 1 (disk 1): still every block intact.
rm -f "$(part_file fk 2 0)"
flip "$(part_file fk 0 1)" "$(blk 24)"
for n in $(ranks 1 2 3 4); do
  fsck_ok $n fk
  has "^fsck fk: WARN: partition 2 copy 1 \(disk 0\): file missing \(all 25 blocks\); repair from copy 0 \(disk 2\)" \
    "lost copy of partition 2 ($n ranks)"
  has "^fsck fk: WARN: partition 0 copy 1 \(disk 1\): block 24 damaged \(1 of 25\); repair from copy 0 \(disk 0\)" \
    "damaged copy of partition 0 ($n ranks)"
  has "^fsck fk: OK with warnings: 4 of 6 copies damaged" "summary with a lost copy ($n ranks)"
  same $n fk
done

# The same block (5 of partition 1) bad on both copies: data lost.
flip "$(part_file fk 1 2)" "$(blk 5)"
for n in $(ranks 1 2 3 4); do
  if r $n fsck fk >"$tmp/out" 2>"$tmp/err"; then
    fail "fsck passed with block 5 of partition 1 bad on both copies ($n ranks)"
  fi
  has "^fsck fk: DATA LOST: partition 1 block 5: no intact copy \(disks 1, 2\)" "lost block ($n ranks)"
  has "^fsck fk: DAMAGED: 4 of 6 copies damaged; 1 block in 1 partition with no intact copy \(data lost\)" \
    "data-lost summary ($n ranks)"
  has "^fsck fk: WARN: partition 1 copy 1 \(disk 2\): blocks 5, 9 damaged \(2 of 25\); repair from copy 0 \(disk 1\)" \
    "copy 1 with two bad blocks ($n ranks)"
  [ "$(grep -c 'fsck failed' "$tmp/err")" -eq 1 ] || fail "$n ranks: not one closing line"
done

clitest_end test_fsck
