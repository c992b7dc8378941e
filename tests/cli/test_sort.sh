#!/bin/bash
# test_sort.sh - river sort (flows/sort.yaml) at 1..4 ranks, checked by
# river valsort --input (key order, same count, same checksum):
#  - uniform, skewed and ASCII gensort records, mirrored and not; the
#    skewed input's output partitions balanced (range splitters from a
#    sample); the ASCII output byte for byte what LC_ALL=C sort makes of
#    the same records;
#  - `river run flows/sort.yaml` is the same sort;
#  - OUT that exists is refused (and kept) unless --force; IN == OUT, a
#    missing IN, a bad --memory, a --memory too small for even a
#    two-pass sort and a one-pass sort over its memory cap fail on
#    every rank and leave no OUT and nothing for river gc.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
N=20000

# balanced COLL N RANKS: no partition of COLL holds over twice its share.
balanced() {
  local most
  most=$(r 1 info "$1" | awk '$1 ~ /^[0-9]+$/ && NF >= 6 { if ($2 > m) m = $2 }
                              END { print m + 0 }')
  [ "$most" -le $((2 * $2 / $3 + 1)) ]
}

for n in $(ranks 1 2 3 4); do
  for kind in uniform skew ascii; do
    flags=; mirror=1
    [ $kind = skew ] && flags=--skew
    [ $kind = ascii ] && flags=--ascii
    [ $n -ge 2 ] && [ $kind = uniform ] && mirror=2
    in=in$kind$n; out=out$kind$n
    r "$n" gen --force "$in" --records $N $flags --seed $n --mirror $mirror \
      >/dev/null 2>&1 || fail "$n ranks: gen $kind"
    if ! r "$n" sort "$in" "$out" --mirror $mirror >"$tmp/out" 2>&1; then
      fail "$n ranks, $kind: sort failed"; head -n 5 "$tmp/out"; continue
    fi
    r "$n" valsort "$out" --input "$in" >"$tmp/out" 2>&1 \
      || { fail "$n ranks, $kind: valsort"; head -n 3 "$tmp/out"; }
    balanced "$out" $N "$n" || fail "$n ranks, $kind: unbalanced output"
  done
  r 1 copy-out --force "inascii$n" -o "$tmp/in.dat" >/dev/null 2>&1
  r 1 copy-out --force "outascii$n" -o "$tmp/out.dat" >/dev/null 2>&1
  LC_ALL=C sort "$tmp/in.dat" >"$tmp/want.dat"
  cmp -s "$tmp/out.dat" "$tmp/want.dat" \
    || fail "$n ranks: ASCII sort differs from LC_ALL=C sort's"
done

# The shipped spec, through river run.
flows=${top_srcdir:-.}/flows
r 3 gen --force raw --records $N --skew >/dev/null 2>&1 || fail "gen raw"
r 3 run "$flows/sort.yaml" in=raw out=viarun >/dev/null 2>&1 \
  || fail "river run flows/sort.yaml"
r 2 valsort viarun --input raw >/dev/null 2>&1 || fail "river run: valsort"

# An existing OUT: refused and kept; --force replaces it.
before=$(r 1 info viarun | grep generation)
expect_fail 2 "sort: collection viarun exists \\(--force replaces it" \
  sort raw viarun
[ "$(grep -c "exists (--force" "$tmp/err")" -eq 1 ] || fail "exists: not said once"
[ "$(r 1 info viarun | grep generation)" = "$before" ] \
  || fail "a refused sort changed the existing OUT"
r 2 sort raw viarun --force >/dev/null 2>&1 || fail "sort --force"
[ "$(r 1 info viarun | grep generation)" != "$before" ] \
  || fail "sort --force did not replace OUT"
r 2 valsort viarun --input raw >/dev/null 2>&1 || fail "--force: valsort"

# Failures: clear, every rank, nothing left.
expect_fail 2 "IN and OUT are both 'raw'" sort raw raw
expect_fail 2 "collection nosuch not found" sort nosuch out9
expect_fail 2 "--memory lots: expected an integer" sort raw out9 --memory lots
expect_fail 3 "sort: --memory 1024 bytes is too small to make progress" \
  sort raw out9 --memory 1Ki
expect_fail 3 "stage 'sort' instance [0-9]+: sort: its input does not fit in memory=1024 bytes" \
  run "${top_srcdir:-.}/flows/sort.yaml" in=raw out=out9 memory=1Ki
expect_fail 1 "sort: missing OUT \\(COLL or file:PATH\\)" sort raw
expect_fail 1 "sort: missing IN and OUT \\(COLL or file:PATH\\)" sort
r 1 ls 2>/dev/null | grep -qw out9 && fail "a failed sort left collection out9"
r 1 gc >"$tmp/gc" 2>&1
grep -q "out9" "$tmp/gc" && { fail "a failed sort left files: $(cat "$tmp/gc")"; }

clitest_end test_sort
