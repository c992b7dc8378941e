#!/bin/bash
# test_demo.sh - scripts/river-demo, the README's main job, at a small
# size: it exits 0, prints a row per policy with every column filled
# and both outputs validated, and removes its data; a bad -n is refused.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
demo=${top_srcdir:-.}/scripts/river-demo
export TMPDIR=$tmp RIVER=$river
"$demo" -n 3 --records 20k >"$tmp/out" 2>&1 \
  || { fail "river-demo failed"; cat "$tmp/out"; }
for p in river static; do
  awk -v p=$p '$1 == p && NF == 6 && $2 == 20480 && $3 > 0 && $4 > 0 &&
               $5 ~ /%$/ && $6 == "OK" { found = 1 } END { exit !found }' \
    "$tmp/out" || { fail "no validated row for $p"; cat "$tmp/out"; }
done
grep -q "as fast as the static baseline" "$tmp/out" || fail "no speed-up line"
ls "$tmp" | grep -q river-demo && fail "river-demo left its data"
"$demo" -n 1 >"$tmp/out" 2>&1 && fail "river-demo -n 1 succeeded"
grep -q "needs at least 2 ranks" "$tmp/out" || fail "-n 1: no message"
clitest_end test_demo
