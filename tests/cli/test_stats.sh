#!/bin/bash
# test_stats.sh - river --stats FILE: the run's stats file (river/stats.h,
# doc/stats.md), every one checked by tests/cli/check_stats.py against
# doc/stats.schema.json and against its own totals (on every edge what
# the producers sent is what the consumers got, records and messages;
# each producer's messages by consumer add up; an instance per rank of
# every stage):
#  - river sort on 2 ranks: one flow, N records from the first stage to
#    the last, its time in the numbers, and with emulated disks the
#    fluid ideal and the ratio, and its read stage's GD read (who served
#    whom, every byte once); the output still validates;
#  - a two-pass sort: two flows, each of N records;
#  - river run and river join: one flow each; a join on 2 emulated nodes
#    names 2 nodes and gives every rank's node;
#  - a replicated join: its broadcast edge (records to every joiner);
#  - a sort whose output fails to commit (RIVER_TEST_FAULT): the command
#    fails, and its stats file holds the flow with that outcome;
#  - river run records the spec's path and its params, and each stage's
#    arguments as given;
#  - gen, copy-in and fsck: a work entry each, every rank's records
#    adding up to what was written (fsck: every copy's);
#  - copy-out (a GD read): one "gd" entry, whose clients received the
#    collection's bytes in all, each disk's rows adding up (valsort of
#    node-local data, also GD: tests/cli/test_coll_nodes.sh); valsort of
#    shared data: no GD entry;
#  - an existing stats file is replaced whole, with the mode a new file
#    gets; --stats with no value, an empty one, twice, a path whose
#    directory does not exist, a symbolic link, a FIFO or a directory:
#    a clear error naming it before the command runs (no output made,
#    the link and what it names untouched) and a non-zero exit.
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

r 2 --stats "$tmp/gen.json" gen --force --records $N g >/dev/null 2>&1 || fail "gen g"
stats_ok "$tmp/gen.json" --flows 0 --work-records $N
grep -q '"label": "gen"' "$tmp/gen.json" || fail "gen: no work entry"

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
r 2 --stats "$tmp/emul.json" sort --disk-rate 4Mi g s2 >"$tmp/out" 2>&1 \
  || { fail "sort --disk-rate --stats"; cat "$tmp/out"; }
stats_ok "$tmp/emul.json" --records $N --flows 1
# The sort's read stage keeps its GD read (river_ctx_keep_gd): one entry
# named read, a disk a rank, every byte of g received once.
python3 - "$tmp/emul.json" $((N * 100)) <<'PY' || fail "sort: the read stage's GD entry"
import json, sys
f = json.load(open(sys.argv[1]))["flows"][0]
g = f["gd"]
sys.exit(not (len(g) == 1 and g[0]["label"] == "read"
              and sorted(d["rank"] for d in g[0]["disks"]) == [0, 1]
              and sum(c["bytes_received"] for c in g[0]["clients"])
                  == int(sys.argv[2])))
PY
awk -v t="$(number "$tmp/emul.json" fluid_ideal_ratio)" \
  'BEGIN { exit !(t > 0 && t <= 1.5) }' \
  || fail "sort --disk-rate: no fluid ideal ratio"

# --- a flow that failed once running: in the file, with its outcome
RIVER_TEST_FAULT=commit-files:fail r 2 --stats "$tmp/fail.json" sort g sf \
  >"$tmp/out" 2>&1 && fail "sort with its commit failing succeeded"
stats_ok "$tmp/fail.json" --flows 1
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d['flows'][0]['outcome'] != 'RIVER_EIO')" "$tmp/fail.json" \
  || fail "a failed sort's stats: not its outcome RIVER_EIO"

# --- two passes: two flows, and the file replaced whole
r 2 --stats "$tmp/sort.json" sort --memory 1Mi g s3 >"$tmp/out" 2>&1 \
  || { fail "two-pass sort --stats"; cat "$tmp/out"; }
stats_ok "$tmp/sort.json" --records $N --flows 2
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit([f['label'] for f in d['flows']] != ['sort, pass 1', 'sort, pass 2'])" "$tmp/sort.json" \
  || fail "two-pass sort: the flows' labels"

# --- run and join
r 2 --stats "$tmp/run.json" run "${top_srcdir:-.}/flows/sort.yaml" in=g \
  out=s4 >"$tmp/out" 2>&1 || { fail "run --stats"; cat "$tmp/out"; }
stats_ok "$tmp/run.json" --records $N --flows 1
python3 - "$tmp/run.json" "${top_srcdir:-.}/flows/sort.yaml" <<'PY' || fail "run --stats: the spec or the stages' arguments"
import json, os, sys
f = json.load(open(sys.argv[1]))["flows"][0]
args = {s["name"]: s["args"] for s in f["stages"]}
sys.exit(not (os.path.samefile(f["spec"]["path"], sys.argv[2])
              and "in=g" in f["spec"]["params"]
              and "out=s4" in f["spec"]["params"]
              and args["read"]["coll"] == "g" and args["write"]["coll"] == "s4"))
PY

# --- copy-in and fsck: their work, each rank's records (fsck: every
# copy's, 2 mirrors)
r 2 copy-out --force g -o "$tmp/g2.bin" >/dev/null 2>&1 || fail "copy-out g"
r 2 --stats "$tmp/ci.json" copy-in --force "$tmp/g2.bin" ci --mirror 2 >/dev/null 2>&1 \
  || fail "copy-in --stats"
stats_ok "$tmp/ci.json" --flows 0 --work-records $N
r 2 --stats "$tmp/fsck.json" fsck ci >/dev/null 2>&1 || fail "fsck --stats"
stats_ok "$tmp/fsck.json" --flows 0 --work-records $((2 * N))
grep -q '"label": "fsck"' "$tmp/fsck.json" || fail "fsck: no work entry"

# --- GD reads: copy-out; valsort of a collection on shared disks reads
# it without GD
r 2 --stats "$tmp/out.json" copy-out --force g -o "$tmp/g.bin" >"$tmp/out" 2>&1 \
  || { fail "copy-out --stats"; cat "$tmp/out"; }
stats_ok "$tmp/out.json" --flows 0 --gd-bytes $((N * 100))
r 2 --stats "$tmp/val.json" valsort s1 >"$tmp/out" 2>&1 \
  || { fail "valsort --stats"; cat "$tmp/out"; }
stats_ok "$tmp/val.json" --flows 0
grep -q '"gd"' "$tmp/val.json" && fail "valsort of shared data: a gd entry"
r 2 gen --force --records 2000 --seed 5 jr >/dev/null 2>&1 || fail "gen jr"
RIVER_NODES=2 r 4 --stats "$tmp/join.json" join jr g j1 --key key \
  >"$tmp/out" 2>&1 || { fail "join --stats on 2 nodes"; cat "$tmp/out"; }
stats_ok "$tmp/join.json" --flows 1 --nodes 2

# a replicated join: a broadcast edge (each record to every joiner)
r 2 --stats "$tmp/rep.json" join jr g j2 --key key --replicate \
  >"$tmp/out" 2>&1 || { fail "join --replicate --stats"; cat "$tmp/out"; }
stats_ok "$tmp/rep.json" --flows 1
grep -q '"kind": "broadcast"' "$tmp/rep.json" \
  || fail "join --replicate: no broadcast edge in its stats"

# --- where the file goes: checked before the command runs (a refused
# path leaves no output collection), named in the message; a file
# replaced keeps the mode a new one gets (0666 less the umask)
expect_fail 2 'stats file .*/no/such/dir/x.json: no directory' \
  --stats "$tmp/no/such/dir/x.json" sort g s5
ln -s "$tmp/elsewhere.json" "$tmp/link.json"
echo keep >"$tmp/elsewhere.json"
expect_fail 2 'stats file .*/link.json: a symbolic link, not a regular file' \
  --stats "$tmp/link.json" sort g s6
[ -L "$tmp/link.json" ] && [ "$(cat "$tmp/elsewhere.json")" = keep ] \
  || fail "a refused symbolic link or what it names was changed"
mkfifo "$tmp/fifo.json"
expect_fail 2 'stats file .*/fifo.json: a FIFO, not a regular file' \
  --stats "$tmp/fifo.json" sort g s7
mkdir "$tmp/adir"
expect_fail 2 'stats file .*/adir: a directory' --stats "$tmp/adir" sort g s8
expect_fail 2 '--stats: an empty path' --stats "" sort g s9
r 2 ls >"$tmp/out" 2>&1
grep -Eq '^s[5-9] ' "$tmp/out" && { fail "a refused --stats ran the command"; cat "$tmp/out"; }
"$run" -n 1 "$river" sort g s10 --stats >"$tmp/out" 2>&1 \
  && fail "--stats with no value succeeded"
grep -q -- '--stats needs a value' "$tmp/out" || fail "--stats with no value: no message"
"$run" -n 1 "$river" --stats --quiet sort g s10 >"$tmp/out" 2>&1 \
  && fail "--stats --quiet succeeded"
grep -q -- '--stats needs a value' "$tmp/out" || fail "--stats --quiet: no message"
"$run" -n 1 "$river" --stats "$tmp/a.json" --stats "$tmp/b.json" sort g s10 \
  >"$tmp/out" 2>&1 && fail "--stats twice succeeded"
grep -q -- '--stats given twice' "$tmp/out" || fail "--stats twice: no message"
(umask 022; r 2 --stats "$tmp/mode.json" ls >/dev/null 2>&1) \
  || fail "ls --stats"
[ "$(stat -c %a "$tmp/mode.json")" = 644 ] \
  || fail "a stats file with mode $(stat -c %a "$tmp/mode.json"), not 644"
stats_ok "$tmp/mode.json" --flows 0

clitest_end test_stats
