#!/bin/bash
# test_flows_3n - every shipped flow on 3 emulated nodes (TCP between
# them; 4 ranks, so one node has two), each output validated:
# flows/sort.yaml (river sort), flows/sort_merge.yaml (river sort's
# second pass, --memory small), flows/sort_demo.yaml (river run: its
# checker stage's count and digest against gen -> count on one node),
# flows/join.yaml and flows/join_replicated.yaml (river join, --replicate:
# the output sorted and copied out byte for byte equal to a one-node
# --static join's). The same flows on 2 nodes: tests/nodes/test_*_2n.sh.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
flows=${top_srcdir:-.}/flows
tflows=${top_srcdir:-.}/tests/flows/run
n3() { RIVER_NODES=3 r "$@"; }
valid() { r 2 valsort "$1" --input "$2" 2>&1 | grep -q SUCCESS; }

r 2 gen --force in --records 40000 --skew --seed 3 >/dev/null 2>&1 || fail "gen in"
n3 4 sort in s1 >"$tmp/out" 2>&1 || { fail "sort.yaml on 3 nodes"; head -n 5 "$tmp/out"; }
valid s1 in || fail "sort.yaml on 3 nodes: valsort --input"
n3 4 sort in s2 --memory 1Mi >"$tmp/out" 2>&1 \
  || { fail "two-pass sort on 3 nodes"; head -n 5 "$tmp/out"; }
grep -q "^sort: two passes" "$tmp/out" || fail "3 nodes: not two passes"
valid s2 in || fail "sort_merge.yaml on 3 nodes: valsort --input"

# The main job's flow: its check stage's count and digest, as gen -> count
# (same rows: seed 5, uniform keys) on one node.
r 1 run "$tflows/gen_count.yaml" out="$tmp/ref" gen_ranks=0-0 count_ranks=0-0 \
  records=30000 seed=5 >/dev/null 2>&1 || fail "sort demo reference"
set -- $(cat "$tmp"/ref.* 2>/dev/null)   # STAGE INSTANCE RECORDS SUM XOR
want="${3:-} $((16#${4:-0})) $((16#${5:-0}))"
if n3 4 run "$flows/sort_demo.yaml" records=30000 seed=5 skew=false \
     >"$tmp/out" 2>&1; then
  set -- $(grep '^check 0 ' "$tmp/out")
  [ "${3:-} $((16#${4:-0})) $((16#${5:-0}))" = "$want" ] \
    || fail "sort_demo.yaml on 3 nodes: ${3:-} ${4:-} ${5:-}, want $want"
else
  fail "sort_demo.yaml on 3 nodes failed"; head -n 5 "$tmp/out"
fi

# Joins: the same records as a one-node static join (sorted, copied out).
r 2 gen --force r --records 3000 --seed 5 >/dev/null 2>&1 || fail "gen r"
r 3 gen --force s --records 2000 --seed 5 >/dev/null 2>&1 || fail "gen s"
r 1 join r s jref --key key --static >/dev/null 2>&1 || fail "reference join"
r 1 sort jref jref.s >/dev/null 2>&1 && r 1 copy-out --force jref.s -o "$tmp/jref" \
  >/dev/null 2>&1 || fail "reference join: sort, copy-out"
for v in "" --replicate; do
  out=j3${v#--}
  n3 4 join r s "$out" --key key $v >"$tmp/out" 2>&1 \
    || { fail "join $v on 3 nodes"; head -n 5 "$tmp/out"; continue; }
  r 1 sort "$out" "$out.s" >/dev/null 2>&1 \
    && r 1 copy-out --force "$out.s" -o "$tmp/$out" >/dev/null 2>&1 \
    || { fail "join $v on 3 nodes: sort, copy-out"; continue; }
  cmp -s "$tmp/$out" "$tmp/jref" || fail "join $v on 3 nodes: not the reference's records"
done

if [ "$fails" -eq 0 ]; then echo "PASS: test_flows_3n"; exit 0; fi
echo "FAIL: test_flows_3n ($fails failed checks)"; exit 1
