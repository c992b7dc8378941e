#!/bin/bash
# test_bench_net_2n - `river-bench net aggregate` (apps/bench/bench_net.c)
# on 2 emulated nodes of 4 ranks: a many-to-many exchange of two piece
# sizes, direct and combined per node, every piece checked on arrival
# (exit 0, no "DATA CHECK FAILED"); its CSV has a row per (size, way,
# repeat) with the node-crossing messages a round (direct: 4 x 4 x 2 =
# 32; aggregated: 2) and ok = 1. On one node it refuses, saying why, and
# exits non-zero. No timing is asserted: figures belong in
# doc/results.md.
set -u
run=${RIVER_MPIRUN:?run me through scripts/mpi-test-launch}
bench=${top_builddir:-.}/apps/river-bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

RIVER_NODES=2 "$run" -n 8 "$bench" net aggregate --repeats 2 --bytes 64,8192 \
  --csv "$tmp/n.csv" >"$tmp/out" 2>&1 || { fail "net aggregate failed"; cat "$tmp/out"; }
grep -q "DATA CHECK FAILED" "$tmp/out" && fail "a piece arrived wrong"
grep -q "^net aggregate: 2 nodes x 4 ranks" "$tmp/out" || { fail "layout line"; cat "$tmp/out"; }
head -n 1 "$tmp/n.csv" | grep -qx \
  "way,nodes,ranks_per_node,bytes,repeat,round_seconds,messages_across_nodes,ok" \
  || fail "CSV header"
[ "$(tail -n +2 "$tmp/n.csv" | wc -l)" -eq 8 ] || fail "expected 8 rows"
[ "$(grep -c '^direct,2,4,\(64\|8192\),[01],[0-9.e-]*,32,1$' "$tmp/n.csv")" -eq 4 ] \
  || { fail "direct rows"; cat "$tmp/n.csv"; }
[ "$(grep -c '^aggregated,2,4,\(64\|8192\),[01],[0-9.e-]*,2,1$' "$tmp/n.csv")" -eq 4 ] \
  || { fail "aggregated rows"; cat "$tmp/n.csv"; }
[ "$(grep -c '^m=\(64\|8192\): direct .* aggregated / direct [0-9.]*$' "$tmp/out")" -eq 2 ] \
  || fail "summary lines"

# One node: refused, said once, non-zero exit.
if RIVER_NODES=1 "$run" -n 2 "$bench" net aggregate --repeats 1 --bytes 64 >"$tmp/one" 2>&1; then
  fail "one node: expected a failure"
fi
[ "$(grep -c 'needs ranks on at least 2 nodes' "$tmp/one")" -eq 1 ] \
  || { fail "one node: the reason, once"; cat "$tmp/one"; }
# A bad size list: refused, naming the option.
if RIVER_NODES=2 "$run" -n 4 "$bench" net aggregate --bytes 64,x >"$tmp/bad" 2>&1; then
  fail "--bytes 64,x: expected a failure"
fi
grep -q -- "--bytes 64,x: expected a comma list" "$tmp/bad" || { fail "--bytes message"; cat "$tmp/bad"; }

[ $fails -eq 0 ] && echo "test_bench_net_2n: ok"
exit $((fails > 0))
