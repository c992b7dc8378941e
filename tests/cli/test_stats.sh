#!/bin/bash
# test_stats.sh - river --stats FILE: the run's stats file (river/stats.h,
# doc/stats.md), every one checked by tests/cli/check_stats.py against
# doc/stats.schema.json and against its own totals (on every edge what
# the producers sent is what the consumers got, records and messages;
# each producer's messages by consumer add up; an instance per rank of
# every stage):
#  - river sort on 2 ranks: one flow, N records from the first stage to
#    the last, its time in the numbers, and with emulated disks the
#    fluid ideal and the ratio; the output still validates;
#  - a two-pass sort: two flows, each of N records;
#  - river run and river join: one flow each; a join on 2 emulated nodes
#    names 2 nodes and gives every rank's node;
#  - an existing stats file is replaced whole; --stats with no value, an
#    empty one, or a path whose directory does not exist: a clear error,
#    a non-zero exit, and nothing left beside the target.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
check="python3 ${top_srcdir:-.}/tests/cli/check_stats.py"
schema=${top_srcdir:-.}/doc/stats.schema.json
N=30000

# stats_ok FILE ARGS...: FILE passes check_stats.py with ARGS.
stats_ok() {
  local f=$1; shift
  $check "$f" "$schema" "$@" >"$tmp/check" 2>&1 \
    || { fail "$f: $(head -n 3 "$tmp/check")"; }
}

# number FILE KEY: the job's number KEY in FILE, or "none".
number() {
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['job']['numbers'].get(sys.argv[2], 'none'))" "$1" "$2"
}

r 2 gen --records $N g >/dev/null 2>&1 || fail "gen g"

# --- sort: one flow
r 2 --stats "$tmp/sort.json" sort g s1 >"$tmp/out" 2>&1 \
  || { fail "sort --stats"; cat "$tmp/out"; }
stats_ok "$tmp/sort.json" --records $N --flows 1 --nodes 1
awk -v t="$(number "$tmp/sort.json" seconds)" 'BEGIN { exit !(t > 0) }' \
  || fail "sort: no seconds in the numbers"
[ "$(number "$tmp/sort.json" fluid_ideal_seconds)" = none ] \
  || fail "sort without emulated rates: a fluid ideal"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not d['job']['command'].endswith('sort g s1'))" "$tmp/sort.json" \
  || fail "sort: the command line is not recorded"
r 2 valsort s1 --input g >"$tmp/out" 2>&1 || { fail "valsort s1"; cat "$tmp/out"; }
r 2 --stats "$tmp/emul.json" sort --disk-rate 4M g s2 >"$tmp/out" 2>&1 \
  || { fail "sort --disk-rate --stats"; cat "$tmp/out"; }
stats_ok "$tmp/emul.json" --records $N --flows 1
awk -v t="$(number "$tmp/emul.json" fluid_ideal_ratio)" \
  'BEGIN { exit !(t > 0 && t <= 1.5) }' \
  || fail "sort --disk-rate: no fluid ideal ratio"

# --- two passes: two flows, and the file replaced whole
r 2 --stats "$tmp/sort.json" sort --memory 1M g s3 >"$tmp/out" 2>&1 \
  || { fail "two-pass sort --stats"; cat "$tmp/out"; }
stats_ok "$tmp/sort.json" --records $N --flows 2
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit([f['label'] for f in d['flows']] != ['sort, pass 1', 'sort, pass 2'])" "$tmp/sort.json" \
  || fail "two-pass sort: the flows' labels"

# --- run and join
r 2 --stats "$tmp/run.json" run "${top_srcdir:-.}/flows/sort.yaml" in=g \
  out=s4 >"$tmp/out" 2>&1 || { fail "run --stats"; cat "$tmp/out"; }
stats_ok "$tmp/run.json" --records $N --flows 1
r 2 gen --records 2000 --seed 5 jr >/dev/null 2>&1 || fail "gen jr"
RIVER_NODES=2 r 4 --stats "$tmp/join.json" join jr g j1 --key key \
  >"$tmp/out" 2>&1 || { fail "join --stats on 2 nodes"; cat "$tmp/out"; }
stats_ok "$tmp/join.json" --flows 1 --nodes 2

# --- bad paths and values
ls "$tmp" >"$tmp/before"
expect_fail 2 'stats file .*/no/such/dir/x.json' --stats "$tmp/no/such/dir/x.json" sort g s5
expect_fail 2 '--stats: an empty path' --stats "" sort g s6
"$run" -n 1 "$river" sort g s7 --stats >"$tmp/out" 2>&1 \
  && fail "--stats with no value succeeded"
grep -q -- '--stats needs a value' "$tmp/out" || fail "--stats with no value: no message"
ls "$tmp" | grep -q '\.tmp\.' && fail "a temporary stats file was left"

clitest_end test_stats
