#!/bin/bash
# test_demo.sh - scripts/river-demo, the README's main job, at a small
# size: it exits 0, prints a row per policy with every column filled
# and both outputs validated, and removes its data; with --keep and its
# progress line on, the lines show and each sort's stats file passes
# tests/cli/check_stats.py; it leaves in --out DIR its log, both stats
# files and their plots (PNGs, the paths it prints: River and static side
# by side, then each run's), leaving a file of the user's there alone;
# an --out that is a file is refused; a bad
# -n is refused.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
demo=${top_srcdir:-.}/scripts/river-demo
export TMPDIR=$tmp RIVER=$river
cd "$tmp" || exit 1   # its default --out: river-demo-out, here
mkdir river-demo-out
echo mine >river-demo-out/plots.txt   # a user's file there: left alone
"$demo" -n 3 --records 20k >"$tmp/out" 2>&1 \
  || { fail "river-demo failed"; cat "$tmp/out"; }
for p in river static; do
  awk -v p=$p '$1 == p && NF == 7 && $2 == 20000 && $3 > 0 && $4 > 0 &&
               $5 ~ /^[kMG]?B\/s$/ && $6 ~ /%$/ && $7 == "OK" { found = 1 }
               END { exit !found }' \
    "$tmp/out" || { fail "no validated row for $p"; cat "$tmp/out"; }
done
grep -q "as fast as the static baseline" "$tmp/out" || fail "no speed-up line"
ls "$tmp" | grep -q 'river-demo\.' && fail "river-demo left its data"
# What it leaves: the log, the stats files, and the plots it names.
for f in demo.log stats-river.json stats-static.json; do
  [ -s "$tmp/river-demo-out/$f" ] || fail "river-demo-out/$f missing"
done
plots=$(sed -n 's/^  \(.*\.png\)$/\1/p' "$tmp/out")
for name in river-vs-static-throughput river-vs-static-timeline \
            stats-river-throughput stats-river-gd stats-static-edges; do
  echo "$plots" | grep -qx "$tmp/river-demo-out/$name.png" \
    || fail "river-demo: plot $name not named"
done
for png in $plots; do
  [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] \
    || fail "river-demo: $png is not a PNG"
done
[ "$(echo "$plots" | wc -l)" -ge 8 ] || fail "river-demo: fewer than 8 plots"
[ "$(cat "$tmp/river-demo-out/plots.txt")" = mine ] \
  || fail "river-demo: a file of the user's in --out changed"
echo x >"$tmp/afile"
"$demo" -n 2 --records 1k --out "$tmp/afile" >"$tmp/out2" 2>&1 \
  && fail "river-demo --out a file succeeded"
grep -q -- "--out .*afile: not a directory" "$tmp/out2" || fail "--out a file: no message"
# With its progress line on (tests turn it off) and --keep: the lines
# show as it runs, and each sort's stats file holds its flow whole.
RIVER_PROGRESS=1 RIVER_PROGRESS_EVERY=0.1 "$demo" -n 3 --records 20k --keep \
  >"$tmp/out" 2>&1 || { fail "river-demo --keep failed"; cat "$tmp/out"; }
grep -Eq '^sort: read [0-9]+, wrote [0-9]+ records of 20000' "$tmp/out" \
  || { fail "river-demo: no progress line"; cat "$tmp/out"; }
for p in river static; do
  f=$(sed -n 's/^Stats files (doc\/stats.md): //p' "$tmp/out" | tr ' ' '\n' \
      | grep "stats-$p.json")
  [ -n "$f" ] && python3 "${top_srcdir:-.}/tests/cli/check_stats.py" "$f" \
    "${top_srcdir:-.}/doc/stats.schema.json" --records 20000 --flows 1 \
    >"$tmp/check" 2>&1 || { fail "river-demo: $p's stats file"; cat "$tmp/check"; }
done
rm -rf "$tmp"/river-demo.*
"$demo" -n 1 >"$tmp/out" 2>&1 && fail "river-demo -n 1 succeeded"
grep -q "needs at least 2 ranks" "$tmp/out" || fail "-n 1: no message"
clitest_end test_demo
