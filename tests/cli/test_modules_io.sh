#!/bin/bash
# test_modules_io.sh - the I/O built-in modules under `river run` at
# 1..4 ranks (doc/modules.md): coll_read (through GD, unordered and
# stream, mirrored or not) and coll_write (atomic, mirrored), file_read
# and file_write, stdin and stdout. Outcomes: content digests of the
# count module (summed over its instances) equal to the reference
# gen -> count flow's, and byte equality with `river gen` + copy-out;
# errors: one message, non-zero exit on every rank, no hang.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
flows=${top_srcdir:-.}/tests/flows/run

# total PREFIX: "RECORDS SUM XOR" over the count files PREFIX.* (lines
# "STAGE INSTANCE RECORDS SUM XOR", hex digests; 64-bit arithmetic).
total() {
  local n=0 s=0 x=0 stage inst recs sum xr f
  for f in "$1".*; do
    [ -e "$f" ] || { echo "none"; return; }
    read -r stage inst recs sum xr <"$f" || return
    n=$((n + recs)); s=$((s + 16#$sum)); x=$((x ^ 16#$xr))
  done
  echo "$n $s $x"
}

# The reference: gen -> count on one rank, and `river gen`'s records.
r 1 run "$flows/gen_count.yaml" out="$tmp/ref" gen_ranks=0-0 \
  count_ranks=0-0 >/dev/null || fail "the one-rank reference run"
want=$(total "$tmp/ref")
[ "${want%% *}" = 20000 ] || fail "the reference counted ${want%% *} records"
r 3 gen g --records 20000 --seed 1 --mirror 2 >/dev/null \
  && r 1 copy-out g -o "$tmp/g.dat" || fail "river gen + copy-out"
r 2 gen g1 --records 20000 --seed 1 >/dev/null || fail "river gen g1"

# ------------------------------------------------------------ coll_read
for n in 1 2 3 4; do
  for c in g g1; do
    for order in unordered stream; do
      rm -f "$tmp"/c.*
      r "$n" run "$flows/coll_count.yaml" coll=$c order=$order \
        out="$tmp/c" >"$tmp/out" 2>&1 || { fail "$n ranks: coll_read $c $order"
                                            head -n 5 "$tmp/out"; continue; }
      [ "$(total "$tmp/c")" = "$want" ] \
        || fail "$n ranks: coll_read $c $order: $(total "$tmp/c"), want $want"
    done
  done
  # Both stages on every rank, reader and counter sharing them.
  rm -f "$tmp"/c.*
  r "$n" run "$flows/coll_count.yaml" coll=g read_ranks=0-$((n - 1)) \
    count_ranks=0-$((n - 1)) out="$tmp/c" >/dev/null 2>&1 \
    && [ "$(total "$tmp/c")" = "$want" ] || fail "$n ranks: coll_read shared"
done

# ----------------------------------------------------------- coll_write
for n in 1 2 3 4; do
  m=$((n > 1 ? 2 : 1))
  # One-to-one from gen on the same ranks: instance i writes gen's rows
  # [20000 i/n, 20000 (i+1)/n) as partition i, as `river gen` does.
  r "$n" run "$flows/gen_coll.yaml" coll=w$n kind=one-to-one mirror=$m \
    >"$tmp/out" 2>&1 || { fail "$n ranks: gen -> coll_write"; head -n 5 "$tmp/out"; }
  r 2 copy-out w$n -o "$tmp/w.dat" && cmp -s "$tmp/w.dat" "$tmp/g.dat" \
    || fail "$n ranks: coll_write's copy-out differs from river gen's"
  r 1 info w$n 2>/dev/null | grep -Eq "^layout +partitioned, $n partitions.* $m cop" \
    || fail "$n ranks: coll_write's layout or mirror=$m not recorded"
  # Through a push edge the partitions differ; the content does not.
  r "$n" run "$flows/gen_coll.yaml" coll=p$n layout=interleaved block_size=16K \
    >/dev/null 2>&1 || fail "$n ranks: gen -> coll_write (push)"
  rm -f "$tmp"/c.*
  r 1 run "$flows/coll_count.yaml" coll=p$n order=stream out="$tmp/c" \
    >/dev/null 2>&1 && [ "$(total "$tmp/c")" = "$want" ] \
    || fail "$n ranks: coll_write (push, interleaved): $(total "$tmp/c")"
done
# Writing over an existing collection replaces it atomically.
r 2 run "$flows/gen_coll.yaml" coll=w1 records=500 >/dev/null 2>&1 \
  && r 1 copy-out w1 -o "$tmp/w.dat" && [ "$(stat -c %s "$tmp/w.dat")" = 50000 ] \
  || fail "coll_write over an existing collection"

# --------------------------------------------------------------- errors
expect_fail 3 "nosuch" run "$flows/coll_count.yaml" coll=nosuch out="$tmp/c"
[ "$(grep -c 'collection nosuch not found' "$tmp/err")" -eq 1 ] \
  || fail "missing collection: not one message"
expect_fail 3 "'bad' is neither" run "$flows/coll_count.yaml" order=bad coll=g
[ "$(grep -c "'bad' is neither" "$tmp/err")" -eq 1 ] \
  || fail "bad order: not one message"
expect_fail 3 "'bad' is neither 'partitioned'" run "$flows/gen_coll.yaml" \
  coll=x layout=bad
[ "$(grep -c "'bad' is neither" "$tmp/err")" -eq 1 ] \
  || fail "bad layout: not one message"
expect_fail 2 "3 copies need 1..2" run "$flows/gen_coll.yaml" coll=x mirror=3
r 1 ls 2>/dev/null | grep -qw x && fail "a failed coll_write left collection x"

clitest_end test_modules_io
