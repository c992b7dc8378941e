#!/bin/bash
# test_bench - river-bench runs and reports: a short read sweep on 4
# ranks writes one CSV row per (k, policy) with every column, the data
# check passes (exit 0), and ratios are numbers; the wait experiment and
# bad options. No timing is asserted here: figures belong in
# doc/results.md, not in tests.
set -u
run=${RIVER_MPIRUN:?run me through scripts/mpi-test-launch}
bench=${top_builddir:-.}/apps/river-bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$run" -n 4 "$bench" dq read --seconds 0.2 --rate 5 --csv "$tmp/r.csv" >"$tmp/out" 2>&1 \
  || { fail "dq read failed"; cat "$tmp/out"; }
head -n 1 "$tmp/r.csv" | grep -qx \
  "experiment,policy,n_producers,n_consumers,k_perturbed,factor,measured_MBps,ideal_MBps,ratio,seconds,records" \
  || fail "CSV header"
# 2 producers, 2 consumers: k = 0, 1, 2, two policies each.
[ "$(tail -n +2 "$tmp/r.csv" | wc -l)" -eq 6 ] || fail "expected 6 rows"
[ "$(grep -c '^read,river,2,2,' "$tmp/r.csv")" -eq 3 ] || fail "river rows"
[ "$(grep -c '^read,static,2,2,' "$tmp/r.csv")" -eq 3 ] || fail "static rows"
awk -F, 'NR > 1 && !($9 > 0 && $9 < 2 && $11 > 0) { bad = 1 } END { exit bad }' \
  "$tmp/r.csv" || fail "ratio or record count out of range"
grep -q "DATA CHECK FAILED" "$tmp/out" && fail "exactly-once check failed"
# One configuration with --perturb: two rows, k = 1.
"$run" -n 4 "$bench" dq write --seconds 0.2 --rate 5 --perturb 'disk:1=0.5' \
  --csv "$tmp/w.csv" >/dev/null 2>&1 || fail "dq write --perturb failed"
[ "$(grep -c '^write,\(river\|static\),2,2,1,' "$tmp/w.csv")" -eq 2 ] || fail "perturbed write rows"
# wait (6 s instead of 10) reports a CPU share.
"$run" -n 2 "$bench" dq wait --seconds 6 --csv "$tmp/wait.csv" >"$tmp/out" 2>&1 || fail "dq wait"
grep -q "^wait: a consumer blocked [0-9.]* s in river_dq_get used [0-9.]*% of a core" "$tmp/out" \
  || fail "wait line"
# Bad input.
"$run" -n 2 "$bench" dq nosuch >/dev/null 2>&1 && fail "unknown experiment accepted"
"$run" -n 2 "$bench" dq read --perturb 'gpu:1=2' >"$tmp/out" 2>&1 && fail "bad --perturb accepted"
grep -q 'unknown kind "gpu"' "$tmp/out" || fail "bad --perturb not named"

if [ "$fails" -eq 0 ]; then echo "PASS: test_bench"; exit 0; fi
echo "FAIL: test_bench ($fails failed checks)"; exit 1
