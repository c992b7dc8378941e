#!/bin/bash
# test_coll_meta - the metadata file ROOT/NAME.river.h5 is checked and
# written safely:
#   - the whole file carries a CRC32C (the River header in its user
#     block, checked before River reads its own record there; HDF5
#     never parses the file on a read): the layout string changed in place
#     in River's record (partitioned -> interleaved), a partition's
#     record count changed there, the HDF5 part's checksum attribute
#     renamed, or a partition's row zeroed (a torn write) make fsck and
#     copy-out fail on every rank with
#     "collection X: metadata PATH fails its checksum (altered or torn
#     write)"; fsck's report says the metadata is damaged; copy-out
#     writes nothing. A truncated file is a one-line error too, giving
#     both sizes. At 1 to 4 ranks. (test_coll_meta_damaged: a file that
#     crashes HDF5.)
#   - a write error while writing the metadata (a full disk, made by
#     tests/fail_write.c through LD_PRELOAD) is one River line naming the
#     file and what failed, never HDF5's error stack; the command fails
#     on every rank, and the collection of that name is untouched.
# Run by scripts/mpi-test-launch.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
shim=${top_builddir:-.}/tests/.libs/fail_write.so

# offsets FILE B0 .. B7: the offsets in FILE where these 8 bytes (decimal)
# start, one a line.
offsets() {
  local f=$1; shift
  od -An -v -tu1 -w1 "$f" | awk -v want="$*" '
    BEGIN { n = split(want, w, " ") }
    { b[NR - 1] = $1 + 0 }
    END { for (i = 0; i + n <= NR; i++) {
            for (k = 1; k <= n && b[i + k - 1] == w[k]; k++) ;
            if (k > n) print i } }'
}
# le64 N: N's 8 little-endian bytes, in decimal.
le64() {
  local n=$1 i
  for i in 0 1 2 3 4 5 6 7; do printf '%d ' $(((n >> (8 * i)) & 255)); done
}
# put FILE OFFSET BYTE: set the byte at OFFSET of FILE to BYTE (decimal).
put() {
  printf "\\$(printf '%03o' "$3")" \
    | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
# replace FILE OLD NEW: replace the first occurrence of the string OLD
# in FILE by NEW (same length), in place (the first: River's record, in
# the user block, before the HDF5 part).
replace() {
  local at
  at=$(LC_ALL=C grep -obaF -e "$2" "$1" | head -n 1 | cut -d: -f1)
  if [ -z "$at" ]; then
    fail "'$2' is not in $1"
    return
  fi
  printf '%s' "$3" | dd of="$1" bs=1 seek="$at" conv=notrunc status=none
}

meta=$root/mi.river.h5
bad="collection mi: metadata $meta fails its checksum \\(altered or torn write\\)"

# damaged WHAT PATTERN: fsck and copy-out of mi fail on every rank of 1
# and 3 with one stderr line matching PATTERN (said once), and no HDF5
# error stack; fsck's report says the metadata is damaged; copy-out
# leaves no output.
damaged() {
  local n
  for n in $(ranks 1 2 3 4); do
    expect_fail $n "$2" fsck mi
    [ "$(grep -Ec -e "$2" "$tmp/err")" -eq 1 ] \
      || fail "$1: fsck on $n ranks: not said once"
    grep -Eq "^fsck mi: DAMAGED: metadata $meta cannot be trusted" "$tmp/out" \
      || fail "$1: fsck on $n ranks does not report damaged metadata"
    grep -Eq "HDF5-DIAG|HDF5:|^ *#[0-9]" "$tmp/err" && fail "$1: fsck on $n ranks printed HDF5's stack"
    rm -f "$tmp/mi.out"
    expect_fail $n "$2" copy-out --force mi -o "$tmp/mi.out"
    [ "$(grep -Ec -e "$2" "$tmp/err")" -eq 1 ] \
      || fail "$1: copy-out on $n ranks: not said once"
    [ "$(grep -c 'copy-out failed' "$tmp/err")" -eq 1 ] \
      || fail "$1: copy-out on $n ranks: not one closing line"
    grep -Eq "HDF5-DIAG|HDF5:|^ *#[0-9]" "$tmp/err" && fail "$1: copy-out on $n ranks printed HDF5's stack"
    [ -e "$tmp/mi.out" ] && fail "$1: copy-out on $n ranks wrote output"
  done
  cp "$tmp/mi.h5" "$meta"
}

# --------------------------------------------------------- the checksum
# 3 partitions of 4567, 4567 and 4568 records: 4568 is in the table only.
r 3 gen --force mi --records 13702 >/dev/null || fail "gen mi"
r 1 info mi >"$tmp/info" || fail "info mi"
grep -Eq "^ +2 +4568 " "$tmp/info" || fail "partition 2 of mi does not hold 4568 records"
r 1 copy-out --force mi -o "$tmp/orig" || fail "copy-out mi"
cp "$meta" "$tmp/mi.h5"
r 3 fsck mi >"$tmp/out" 2>&1 || fail "fsck of intact mi"

replace "$meta" partitioned interleaved
damaged "layout changed" "$bad"

at=$(offsets "$meta" $(le64 4568) | head -n 1) row=
if [ -z "$at" ]; then
  fail "partition 2's record count is not in $meta"
else
  row=$((at - 4))                   # partition 2's row starts here
  put "$meta" "$at" $((0xd8 ^ 1))   # 4568 -> 4569
  damaged "record count changed" "$bad"
fi

replace "$meta" metadata_crc32c metadata_crc32x
damaged "checksum missing" "$bad"

# A torn write: partition 2's row of the table never reached the disk
# (zeros; the file's size is right).
if [ -n "$row" ]; then
  dd if=/dev/zero of="$meta" bs=1 seek=$row count=64 conv=notrunc status=none
  damaged "table row zeroed" "$bad"
fi
# ... or the file cut short.
size=$(stat -c %s "$meta")
truncate -s $((size / 2)) "$meta"
damaged "truncated" "collection mi: metadata $meta is $((size / 2)) bytes, its header says $size \\(truncated or torn write\\)"

# Intact again: fsck passes, copy-out is byte-identical.
r 3 fsck mi >"$tmp/out" 2>&1 || fail "fsck of restored mi"
r 3 copy-out --force mi -o "$tmp/back" && cmp -s "$tmp/back" "$tmp/orig" \
  || fail "copy-out of restored mi differs"

# ------------------------------------------------------- a full disk
r 1 gen --force keep --records 1000 >/dev/null || fail "gen keep"
r 1 copy-out --force keep -o "$tmp/keep" || fail "copy-out keep"
if LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$shim" RIVER_TEST_FAIL_WRITE=.river.h5 \
   dd if="$tmp/mi.h5" of="$tmp/x.river.h5" status=none 2>/dev/null; then
  fail "the fail_write shim does not fail writes"
fi
for n in $(ranks 1 2 3 4); do
  LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$shim" RIVER_TEST_FAIL_WRITE=.river.h5 \
    expect_fail $n "error: cannot write metadata $root/[^ ]*keep[^ ]*\\.river\\.h5: write failed: No space left on device\$" \
    gen --force keep --records 500
  [ "$(grep -c 'cannot write metadata' "$tmp/err")" -eq 1 ] \
    || fail "full disk, $n ranks: not one line about the metadata"
  [ "$(grep -c '^river\[[0-9]*\] error:' "$tmp/err")" -eq 2 ] \
    || fail "full disk, $n ranks: more than the metadata line and one closing line"
  [ "$(grep -c 'gen failed' "$tmp/err")" -eq 1 ] \
    || fail "full disk, $n ranks: not one closing line"
  grep -Eq "HDF5-DIAG|HDF5:|^ *#[0-9]" "$tmp/err" && fail "full disk, $n ranks: HDF5's error stack printed"
  r 1 copy-out --force keep -o "$tmp/keep2" && cmp -s "$tmp/keep" "$tmp/keep2" \
    || fail "full disk, $n ranks: keep changed"
  ls -A "$root" | grep '\.h5$' | grep -vx 'keep.river.h5\|mi.river.h5' \
    && fail "full disk, $n ranks: temporary metadata left"
done

clitest_end test_coll_meta
