#!/bin/bash
# test_modules_sort.sh - the modules sort, merge, partition and filter in
# `river run` flows at 1..4 ranks (every stage on every rank):
#  - gen -> partition (range, uniform and skewed keys; hash) -> exchange
#    -> sort -> count sorted: every sorter's output in key order, the
#    records and content digest equal to gen -> count's; by range the
#    partitions are in key order one after another (first and last keys)
#    and balanced even on skewed keys, which the edge's own evenly split
#    range is not;
#  - the partition's gathered sample cut to its cap (200,000 records at
#    2..4 ranks), with the records even and with the first instance
#    slow behind a push edge at 3..4 (each draws its share by its records: the
#    whole cap still), output ordered and complete (and balanced, even);
#  - gen -> sort (every rank) -> pull edge -> merge (one instance, then
#    two) -> count sorted: globally sorted, same digest;
#  - filter with each op on ASCII keys, against awk over the same records
#    (river gen --ascii, river copy-out) and at 1 and 3 ranks; the same
#    filter on an edge (at its source and its sink, dq and exchange),
#    against the filter stage's records and digest;
#  - count sorted=true fails, naming the record, on unsorted input; merge
#    of an unsorted input fails; bad filter and partition arguments.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
flows=${top_srcdir:-.}/tests/flows/run
N=20000


# largest PREFIX: the most records one count instance got.
largest() {
  local m=0 stage inst recs rest f
  for f in "$1".[0-9]*; do
    read -r stage inst recs rest <"$f"
    [ "$recs" -gt "$m" ] && m=$recs
  done
  echo "$m"
}

# in_order PREFIX N: the key files PREFIX.keys.0 .. N-1 ("FIRST LAST" in
# hex, "- -" if empty) follow each other in key order.
in_order() {
  local i prev="" first last
  for ((i = 0; i < $2; i++)); do
    read -r first last <"$1.keys.$i" || return 1
    [ "$first" = - ] && continue
    [[ -n "$prev" && "$first" < "$prev" ]] && return 1
    prev=$last
  done
  return 0
}

# References: gen -> count on one rank.
for skew in false true; do
  r 1 run "$flows/gen_plain.yaml" out="$tmp/ref$skew" skew=$skew >/dev/null \
    || fail "reference run, skew=$skew"
  eval "want_$skew=\"\$(total \"\$tmp/ref$skew\")\""
done
[ "${want_false%% *}" = $N ] || fail "the reference counted ${want_false%% *}"
[ "$want_false" != "$want_true" ] || fail "skewed data has the same digest"
# 200,000 skewed records, more than the gathered sample's cap (65,536).
r 1 run "$flows/gen_plain.yaml" out="$tmp/refbig" records=200000 skew=true \
  >/dev/null || fail "reference run, 200000 records"
want_big=$(total "$tmp/refbig")

# sample_cut OUT N: the debug line's "K sample keys in all, not W" of N
# instances; fails unless the cap (65,536 up to 1,024 partitions) held
# to within the instances' rounding: 65,536 <= K <= 65,536 + N.
sample_cut() {
  local k
  k=$(sed -n "s/.*partition: \([0-9]*\) sample keys in all, not [0-9]*: $2 instances gather at most 65536 for $2 partitions.*/\1/p" "$1" | head -n 1)
  [ -n "$k" ] && [ "$k" -ge 65536 ] && [ "$k" -le $((65536 + $2)) ]
}

for n in $(ranks 1 2 3 4); do
  for skew in false true; do
    eval "want=\$want_$skew"
    for by in range hash; do
      rm -f "$tmp"/c.*
      if ! r "$n" run "$flows/sort_part.yaml" out="$tmp/c" skew=$skew by=$by \
           >"$tmp/out" 2>&1; then
        fail "$n ranks, partition $by, skew $skew: run failed"
        head -n 5 "$tmp/out"; continue
      fi
      got=$(total "$tmp/c")
      [ "$got" = "$want" ] \
        || fail "$n ranks, partition $by, skew $skew: $got, want $want"
      [ "$by" = range ] || continue
      in_order "$tmp/c" "$n" \
        || fail "$n ranks, partition range, skew $skew: partitions overlap"
      # Balanced: no partition over 1.3 times its share.
      [ $((10 * $(largest "$tmp/c") * n)) -le $((13 * N)) ] \
        || fail "$n ranks, skew $skew: largest partition $(largest "$tmp/c")"
    done
  done
  # The gathered sample is capped (65,536 keys up to 1,024 partitions):
  # 100,000 an instance of 200,000 records are cut to the cap, each
  # instance drawing its share by its records, said at debug level, and
  # the skewed keys still come out ordered and balanced.
  if [ "$n" -ge 2 ]; then
    rm -f "$tmp"/c.*
    RIVER_LOG=debug r "$n" run "$flows/sort_part.yaml" out="$tmp/c" \
      records=200000 skew=true sample=100000 >"$tmp/out" 2>&1 \
      || fail "$n ranks, sample 100000: run failed"
    sample_cut "$tmp/out" "$n" \
      || { fail "$n ranks: the sample was not cut to the cap"; grep partition "$tmp/out" | head -3; }
    [ "$(total "$tmp/c")" = "$want_big" ] || fail "$n ranks, capped sample: digest"
    in_order "$tmp/c" "$n" || fail "$n ranks, capped sample: partitions overlap"
    [ $((10 * $(largest "$tmp/c") * n)) -le $((13 * 200000)) ] \
      || fail "$n ranks, capped sample: largest partition $(largest "$tmp/c")"
  fi
  # The records unevenly spread over the partition's instances (on ranks
  # 1.., the first at 5% of the others' CPU behind a push edge): the
  # instances still draw the whole cap between them (an even share each
  # had drawn only what the slow one held of its share).
  if [ "$n" -ge 3 ]; then
    rm -f "$tmp"/c.*
    RIVER_LOG=debug r "$n" run "$flows/sort_part_uneven.yaml" out="$tmp/c" \
      >"$tmp/out" 2>&1 || fail "$n ranks, uneven partition input: run failed"
    sample_cut "$tmp/out" $((n - 1)) \
      || { fail "$n ranks, uneven input: the sample was not the whole cap"; grep partition "$tmp/out" | head -3; }
    [ "$(total "$tmp/c")" = "$want_big" ] || fail "$n ranks, uneven input: digest"
    in_order "$tmp/c" $((n - 1)) || fail "$n ranks, uneven input: partitions overlap"
  fi
  # The edge's evenly split key space: ordered, but skew unbalances it.
  if [ "$n" -ge 2 ]; then
    rm -f "$tmp"/c.*
    r "$n" run "$flows/sort_range.yaml" out="$tmp/c" skew=true >/dev/null 2>&1 \
      || fail "$n ranks: sort_range failed"
    [ "$(total "$tmp/c")" = "$want_true" ] || fail "$n ranks: sort_range digest"
    in_order "$tmp/c" "$n" || fail "$n ranks: sort_range partitions overlap"
    [ $((10 * $(largest "$tmp/c") * n)) -gt $((13 * N)) ] \
      || fail "$n ranks: skewed keys balanced without a sample?"
  fi
  # Sorted runs through a pull edge to one merge, then to two.
  for skew in false true; do
    eval "want=\$want_$skew"
    rm -f "$tmp"/m.*
    r "$n" run "$flows/sort_merge.yaml" out="$tmp/m" skew=$skew \
      ranks=0-$((n - 1)) >"$tmp/out" 2>&1 \
      || { fail "$n ranks, merge, skew $skew: run failed"; head -n 5 "$tmp/out"; }
    [ "$(total "$tmp/m")" = "$want" ] \
      || fail "$n ranks, merge, skew $skew: $(total "$tmp/m"), want $want"
    [ "$(ls "$tmp"/m.* | wc -l)" -eq 1 ] || fail "$n ranks: not one merge"
  done
  if [ "$n" -ge 2 ]; then
    rm -f "$tmp"/m.*
    r "$n" run "$flows/sort_merge.yaml" out="$tmp/m" merge_rank=0-1 \
      ranks=0-$((n - 1)) \
      >/dev/null 2>&1 || fail "$n ranks, two merges: run failed"
    [ "$(total "$tmp/m")" = "$want_false" ] || fail "$n ranks, two merges"
  fi
done

# filter: each op on the ASCII keys, against awk over the same records.
r 1 gen --force asc --records $N --ascii --seed 1 >/dev/null || fail "river gen --ascii"
r 1 copy-out --force asc -o "$tmp/asc.dat" >/dev/null || fail "copy-out"
# expect OP VALUE: the records whose 10-byte key satisfies OP VALUE.
expect() {
  LC_ALL=C awk -v op="$1" -v v="$2" '
    { k = substr($0, 1, 10) }
    op == "<" && k < v { n++ } op == "<=" && k <= v { n++ }
    op == ">" && k > v { n++ } op == ">=" && k >= v { n++ }
    op == "==" && k == v { n++ } op == "!=" && k != v { n++ }
    op == "prefix" && substr(k, 1, length(v)) == v { n++ }
    END { print n + 0 }' "$tmp/asc.dat"
}
# The first record's key, as \xHH escapes (every byte, quotes and all).
key0=$(head -c 10 "$tmp/asc.dat")
esc0=$(head -c 10 "$tmp/asc.dat" | od -An -tx1 | tr -d ' \n' | sed 's/../\\x&/g')
[ "$(expect == "$key0")" -ge 1 ] || fail "the first key is not found by awk"
for n in 1 3; do
  for case in "<|@" "<=|@" ">|a" ">=|a" "prefix|A" "prefix|" "==|KEY0" \
              "!=|KEY0" "<|KEY0" ">=|KEY0"; do
    op=${case%%|*}; v=${case#*|}; fv=$v
    [ "$v" = KEY0 ] && { v=$key0; fv=$esc0; }
    rm -f "$tmp"/f.*
    if ! r "$n" run "$flows/filter.yaml" out="$tmp/f" op="$op" value="$fv" \
         ranks=0-$((n - 1)) \
         >"$tmp/out" 2>&1; then
      fail "$n ranks, filter $op $v: run failed"; head -n 5 "$tmp/out"; continue
    fi
    got=$(total "$tmp/f"); got=${got%% *}
    want=$(expect "$op" "$v")
    [ "$got" = "$want" ] || fail "$n ranks, filter $op '$v': $got, want $want"
  done
done
# The same filter on an edge, at its source or its sink, on a dq and an
# exchange edge: the records and digest that the filter stage passes
# (3 ranks: every instance both sends and receives).
for n in 3; do
  for case in "<|@" "prefix|A" "!=|KEY0"; do
    op=${case%%|*}; v=${case#*|}; fv=$v
    [ "$v" = KEY0 ] && fv=$esc0
    rm -f "$tmp"/f.*
    r "$n" run "$flows/filter.yaml" out="$tmp/f" op="$op" value="$fv" \
      ranks=0-$((n - 1)) >/dev/null 2>&1 || fail "$n ranks, filter stage $op"
    want=$(total "$tmp/f")
    for at in source sink; do
      for kind in dq exchange; do
        rm -f "$tmp"/e.*
        if ! r "$n" run "$flows/filter_edge.yaml" out="$tmp/e" kind=$kind \
             filter="key $op $fv" at=$at ranks=0-$((n - 1)) \
             sink_ranks=0-$((n - 1)) >"$tmp/out" 2>&1; then
          fail "$n ranks, $kind edge filter $op $v at $at: run failed"
          head -n 5 "$tmp/out"; continue
        fi
        got=$(total "$tmp/e")
        [ "$got" = "$want" ] \
          || fail "$n ranks, $kind edge filter $op '$v' at $at: $got, want $want"
      done
    done
  done
done
# At the source the records that fail never cross the edge: the
# producing stage's totals count only what passed.
r 2 run "$flows/filter_edge.yaml" out="$tmp/e" filter="key prefix A" \
  ranks=0-1 sink_ranks=0-1 >"$tmp/out" 2>&1 || fail "edge filter totals: run"
want=$(expect prefix A)
grep -E "stage src +gen +x2 +0 records in +$want out" "$tmp/out" >/dev/null \
  || { fail "edge filter at source: src's totals are not $want records"; cat "$tmp/out"; }

# Hand-checked: the 6 records of seed 1 have the keys
#   >"Y5(la~0?  <Cb>4.<CG[  \IRIn*+/U6  v]Py>BzcWm  yI@D^2.zFc  S/:%N8z9mj
for case in "<|S|2" ">=|v|2" "prefix|S/|1" 'prefix|\x5cIRI|1' \
            "==|S/:%N8z9mj|1" "!=|S/:%N8z9mj|5" "<=|<Cb>4.<CG[|1" ">|~|0"; do
  IFS='|' read -r op v want <<<"$case"
  rm -f "$tmp"/h.*
  r 2 run "$flows/filter.yaml" out="$tmp/h" records=6 op="$op" value="$v" \
    ranks=0-1 \
    >/dev/null 2>&1 || fail "6 records, filter $op '$v': run failed"
  got=$(total "$tmp/h")
  [ "${got%% *}" = "$want" ] || fail "6 records, filter $op '$v': ${got%% *}, want $want"
done

# Unsorted input: count sorted=true names the record; merge refuses it.
sed 's/module: count, ranks: rest, args: {file: "${out}"}/module: count, ranks: rest, args: {file: "${out}", sorted: true}/' \
  "$flows/gen_plain.yaml" >"$tmp/unsorted.yaml"
expect_fail 2 "stage 'sink' instance [01]: input 0 is not in key order: record [0-9]+ \(counted from 0\)" \
  run "$tmp/unsorted.yaml" out="$tmp/u"
# merge of an unsorted stream (gen straight into merge).
cat >"$tmp/badmerge.yaml" <<'EOF'
stages:
  - {name: src, module: gen, ranks: 0-0, args: {records: 1000}}
  - {name: m, module: merge, ranks: 0-0}
  - {name: sink, module: count, ranks: 0-0}
edges:
  - {from: src, to: m, kind: one-to-one}
  - {from: m, to: sink, kind: one-to-one}
EOF
expect_fail 2 "stage 'm' instance [0-9]+: merge: input 0 is not in key order: its record [0-9]+" \
  run "$tmp/badmerge.yaml"
# Bad arguments: one message, at check time, every rank non-zero.
expect_fail 3 "filter.yaml:[0-9]+:[0-9]+: stage 'keep': filter key '=~' '@': op is not one of" \
  run "$flows/filter.yaml" op="=~" ranks=0-2
[ "$(grep -c 'op is not one of' "$tmp/err")" -eq 1 ] || fail "bad op: not one message"
expect_fail 2 "value is longer than the field" run "$flows/filter.yaml" \
  value=ABCDEFGHIJK
expect_fail 2 "bad escape" run "$flows/filter.yaml" 'value=\xZZ'
expect_fail 2 "bad escape" run "$flows/filter.yaml" 'value=\x-1'
expect_fail 2 "bad escape" run "$flows/filter.yaml" 'value=\x 12'
expect_fail 2 "filter nosuch '<' '@': no such field" run "$flows/filter.yaml" \
  field=nosuch
# Bad edge filters: named with the edge's file:line:column.
expect_fail 2 "filter_edge.yaml:[0-9]+:[0-9]+: edge src -> sink: filter 'nosuch < 5': no such field" \
  run "$flows/filter_edge.yaml" filter="nosuch < 5"
expect_fail 2 "edge src -> sink: filter 'key': it is not FIELD OP VALUE" \
  run "$flows/filter_edge.yaml" filter="key"
expect_fail 2 "edge src -> sink: filter 'key ~ 5': op is not one of" \
  run "$flows/filter_edge.yaml" filter="key ~ 5"
expect_fail 2 "filter_edge.yaml:[0-9]+:[0-9]+: filter_at: unknown value 'middle'" \
  run "$flows/filter_edge.yaml" at=middle
sed 's/kind: "${kind}"/kind: dq, policy: pull/' "$flows/filter_edge.yaml" \
  >"$tmp/pullsink.yaml"
expect_fail 2 "a pull edge filters at its source" run "$tmp/pullsink.yaml" \
  at=sink
expect_fail 2 "partition: argument 'by' is 'sideways'" \
  run "$flows/sort_part.yaml" by=sideways
# partition into a dq edge (not an exchange): a clear error.
sed 's/{from: part, to: sorter, kind: exchange, by: hash}/{from: part, to: sorter}/' \
  "$flows/sort_part.yaml" >"$tmp/partdq.yaml"
expect_fail 2 "river_set_partitioner: stage part output 0: not an exchange edge" \
  run "$tmp/partdq.yaml" out="$tmp/p"
# sort over its memory cap.
sed 's/{name: sorter, module: sort, ranks: "${ranks}"}/{name: sorter, module: sort, ranks: "${ranks}", args: {memory: 100Ki}}/' \
  "$flows/sort_merge.yaml" >"$tmp/sortcap.yaml"
expect_fail 2 "stage 'sorter' instance [0-9]+: sort: its input does not fit in memory=102400 bytes" \
  run "$tmp/sortcap.yaml" out="$tmp/s" ranks=0-1

clitest_end test_modules_sort
