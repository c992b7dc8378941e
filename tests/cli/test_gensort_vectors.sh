#!/bin/bash
# test_gensort_vectors.sh - River against the public gensort's own output
# (../shared/gensort-vectors beside the source tree, or
# $RIVER_GENSORT_VECTORS; GPL data, not copied into this project): valsort
# prints the checksums gensort -c printed for the same records
# (1ea6370b955 for binary records 0..999; the records are unsorted, so
# it also fails naming the first out of order), and River reads each vector as
# records in order: copy-in of each file, copy-out, the same bytes;
# River's sort of the binary and skewed vectors passes valsort with
# --input the original. Without the vectors it says so and exits 77
# (SKIP, named in the tally; .ci/run says why), never passing silently.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"

vec=${RIVER_GENSORT_VECTORS:-${top_srcdir:-.}/../shared/gensort-vectors}
for f in bin-0-1000 bin-1000000-1000 ascii-0-1000 ascii-1000000-1000 skew-0-1000; do
  if [ ! -r "$vec/$f.dat" ]; then
    echo "SKIP: no gensort vector $vec/$f.dat (set RIVER_GENSORT_VECTORS to their folder)"
    exit 77
  fi
done

sumof() { sed -n 's/.*records, checksum \([0-9a-f]*\),.*/\1/p' "$1" | head -n 1; }

# gensort's published checksum (the vectors' README: gensort -c 1000).
# The records are gensort's order, not sorted: valsort says so (and
# fails), and prints the checksum all the same.
if r 3 valsort "file:$vec/bin-0-1000.dat" >"$tmp/out" 2>"$tmp/err"; then
  fail "valsort passed gensort's unsorted bin-0-1000"
fi
grep -q "not in key order" "$tmp/err" || { fail "bin-0-1000: no order error"; cat "$tmp/err"; }
[ "$(sumof "$tmp/out")" = 1ea6370b955 ] \
  || fail "bin-0-1000: checksum $(sumof "$tmp/out"), gensort's 1ea6370b955"
grep -q "1000 records" "$tmp/out" || fail "bin-0-1000: not 1000 records"

# Each vector in and out again, byte for byte, at 1 and 3 ranks.
for f in bin-0-1000 bin-1000000-1000 ascii-0-1000 ascii-1000000-1000 skew-0-1000; do
  for n in $(ranks 1 3); do
    r "$n" copy-in --force "$vec/$f.dat" "v$n$f" >/dev/null 2>"$tmp/err" \
      || { fail "$n ranks: copy-in $f"; cat "$tmp/err"; continue; }
    r "$n" copy-out --force "v$n$f" -o "$tmp/$f.out" >/dev/null 2>"$tmp/err" \
      || { fail "$n ranks: copy-out $f"; cat "$tmp/err"; continue; }
    cmp -s "$vec/$f.dat" "$tmp/$f.out" || fail "$n ranks: $f changed in and out"
  done
done

# River's sort of gensort's records: sorted, the same records.
for f in bin-0-1000 skew-0-1000; do
  r 3 sort "v3$f" "s$f" >/dev/null 2>"$tmp/err" \
    || { fail "sort of $f failed"; cat "$tmp/err"; continue; }
  r 3 valsort "s$f" --input "file:$vec/$f.dat" >"$tmp/out" 2>"$tmp/err" \
    || { fail "valsort of sorted $f failed"; cat "$tmp/err"; }
  grep -q "SUCCESS - all records are in order" "$tmp/out" \
    || fail "sorted $f: no SUCCESS line"
done
clitest_end test_gensort_vectors
