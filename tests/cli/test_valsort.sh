#!/bin/bash
# test_valsort.sh - river valsort on flat files and collections at 1..4
# ranks:
#  - its checksum is the sum of the records' CRC-32s (zlib's CRC), checked
#    against gzip's own CRC-32 (the last 8 bytes of a gzip stream hold the
#    CRC-32 of its data) record by record (the public gensort's own
#    vectors and checksums: test_gensort_vectors.sh);
#  - records sorted by LC_ALL=C sort (ASCII gensort records are lines
#    that start with their key) pass, as a file and as a partitioned or
#    interleaved collection, with --input the unsorted original;
#  - unsorted input fails, naming the first record out of order (found by
#    awk); a changed byte fails --input; a swap across two ranks' parts
#    fails; bad files (partial record, FIFO, missing) and names fail
#    cleanly on every rank.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
N=300

r 1 gen --force asc --records $N --ascii --seed 3 >/dev/null || fail "river gen --ascii"
r 1 copy-out --force asc -o "$tmp/asc.dat" >/dev/null || fail "copy-out"
r 1 gen --force bin --records $N --seed 5 >/dev/null || fail "river gen"
r 1 copy-out --force bin -o "$tmp/bin.dat" >/dev/null || fail "copy-out bin"

# crcsum FILE: the sum of the CRC-32s of its 100-byte records, in hex, by
# gzip (a gzip stream ends with its data's CRC-32, little-endian).
crcsum() {
  local d=$tmp/split s=0 f c
  rm -rf "$d"; mkdir "$d"
  split -b 100 -a 4 "$1" "$d/r."
  for f in "$d"/r.*; do
    c=$(gzip -c <"$f" | tail -c 8 | head -c 4 | od -An -tu4 | tr -d ' ')
    s=$((s + c))
  done
  printf '%x\n' "$s"
}
# sumof OUTPUT: the checksum valsort printed.
sumof() { sed -n 's/.*records, checksum \([0-9a-f]*\),.*/\1/p' "$1" | head -n 1; }

for f in asc bin; do
  want=$(crcsum "$tmp/$f.dat")
  r 2 valsort "file:$tmp/$f.dat" >"$tmp/out" 2>"$tmp/err"
  got=$(sumof "$tmp/out")
  [ "$got" = "$want" ] || fail "$f: checksum $got, gzip's CRC-32s sum to $want"
  grep -q "$N records" "$tmp/out" || fail "$f: not $N records"
done

# Sorted: every rank count, as a file and as collections.
LC_ALL=C sort "$tmp/asc.dat" >"$tmp/sorted.dat"
cmp -s "$tmp/sorted.dat" "$tmp/asc.dat" && fail "the input was already sorted"
for n in $(ranks 1 2 3 4); do
  r "$n" valsort "file:$tmp/sorted.dat" --input "file:$tmp/asc.dat" \
    >"$tmp/out" 2>"$tmp/err" || { fail "$n ranks: sorted file refused"; cat "$tmp/err"; }
  grep -q "SUCCESS - all records are in order" "$tmp/out" \
    || fail "$n ranks: no SUCCESS line"
  for layout in partitioned interleaved; do
    r "$n" copy-in --force "$tmp/sorted.dat" "s$layout$n" --layout $layout \
      --block-size 4096 >/dev/null 2>&1 || fail "$n ranks: copy-in $layout"
    r "$n" valsort "s$layout$n" --input "file:$tmp/asc.dat" >"$tmp/out" \
      2>"$tmp/err" || { fail "$n ranks: sorted $layout collection refused"; head -n 3 "$tmp/err"; }
  done
done

# Unsorted: the first record out of order, named.
first=$(LC_ALL=C awk '{ k = substr($0, 1, 10) } NR > 1 && k < prev {
  print NR - 1; exit } { prev = k }' "$tmp/asc.dat")
for n in $(ranks 1 4); do
  expect_fail "$n" "not in key order: record $first \\(counted from 0\\)" \
    valsort "file:$tmp/asc.dat"
done
r 2 copy-in --force "$tmp/asc.dat" unsorted >/dev/null 2>&1 || fail "copy-in unsorted"
expect_fail 2 "valsort unsorted: not in key order: record $first " \
  valsort unsorted

# The records of another input: one payload byte changed (order intact).
cp "$tmp/sorted.dat" "$tmp/changed.dat"
flip "$tmp/changed.dat" 150
expect_fail 3 "not the records of file:$tmp/asc.dat: $N records, checksum [0-9a-f]+; the input has $N, checksum" \
  valsort "file:$tmp/changed.dat" --input "file:$tmp/asc.dat"
# A swap across the seam of two ranks' parts (records 149 and 150 of 300).
head -c 14900 "$tmp/sorted.dat" >"$tmp/swap.dat"
tail -c +15001 "$tmp/sorted.dat" | head -c 100 >>"$tmp/swap.dat"
tail -c +14901 "$tmp/sorted.dat" | head -c 100 >>"$tmp/swap.dat"
tail -c +15101 "$tmp/sorted.dat" >>"$tmp/swap.dat"
[ "$(stat -c %s "$tmp/swap.dat")" -eq 30000 ] || fail "swap.dat's size"
expect_fail 2 "not in key order: record 150 \\(counted from 0\\) is below the one before it \\(1 records" \
  valsort "file:$tmp/swap.dat" --input "file:$tmp/asc.dat"

# Bad inputs: a message, every rank non-zero.
head -c 150 "$tmp/asc.dat" >"$tmp/odd.dat"
expect_fail 2 "odd.dat: 150 bytes are not a whole number of 100-byte records" \
  valsort "file:$tmp/odd.dat"
mkfifo "$tmp/fifo"
expect_fail 2 "cannot read $tmp/fifo: not a regular file" \
  valsort "file:$tmp/fifo"
expect_fail 2 "cannot read $tmp/nofile: No such file" \
  valsort "file:$tmp/nofile"
expect_fail 2 "collection nosuch not found" valsort nosuch
expect_fail 1 'schema "a:nosuch": field 1 "a": unknown type "nosuch"' \
  valsort "file:$tmp/asc.dat" --schema "a:nosuch"
expect_fail 2 "--schema is for file: inputs; collection unsorted has its own" \
  valsort unsorted --schema "k:uint64"
expect_fail 1 "missing COLL\\|file:PATH" valsort

clitest_end test_valsort
