#!/bin/bash
# test_units - one meaning for a number (river/units.h): the river
# command's options, river-bench's and a flow spec's size arguments
# (literal in the spec, and as a key=value param) read `2k` as 2000 and
# `2Ki` as 2048, refuse `1m`, `1.5M`, `1KiB`, `1ki` and `-1` with the
# same words for the rule, and print sizes in one form (`200 kB`).
# tests/unit/test_units.c has the parser's whole table.
# Run by scripts/mpi-test-launch.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
bench=${top_builddir:-.}/apps/river-bench
flows=${top_srcdir:-.}/tests/flows/run
rule='(suffixes k, M, G, T: ×1000; Ki, Mi, Gi, Ti: ×1024)'

# records COLL: the records `river info` counts in COLL.
records() { r 1 info "$1" 2>/dev/null | awk '/^records/ { print $2 }'; }

# refused WHAT STATUS MESSAGE CMD...: CMD exits STATUS (2: a wrong
# command line; 1: a wrong spec) and says MESSAGE (grep -F) once.
refused() {
  local what=$1 want=$2 msg=$3 c rc; shift 3
  "$@" </dev/null >"$tmp/out" 2>"$tmp/err"; rc=$?
  [ "$rc" -eq "$want" ] || fail "$what: exit $rc, expected $want"
  c=$(grep -cF -e "$msg" "$tmp/err")
  [ "$c" -eq 1 ] || { fail "$what: '$msg' said $c times, not once"
                      head -n 4 "$tmp/err" | sed 's/^/    /'; }
}

# --- the river command: k is 1000, Ki 1024
r 2 gen k2 --records 2k >/dev/null || fail "gen --records 2k"
[ "$(records k2)" = 2000 ] || fail "--records 2k: $(records k2) records, not 2000"
r 2 gen ki2 --records 2Ki >/dev/null || fail "gen --records 2Ki"
[ "$(records ki2)" = 2048 ] || fail "--records 2Ki: $(records ki2) records, not 2048"
r 2 gen K2 --records 2K >/dev/null || fail "gen --records 2K"
[ "$(records K2)" = 2000 ] || fail "--records 2K: $(records K2) records, not 2000"
for bad in 1m 1.5M 1KiB 1ki 1MB 1P -1 0x10; do
  refused "gen --records $bad" 2 \
    "--records $bad: expected an integer in 0..144115188075855871 $rule" \
    "$run" -n 2 "$river" gen bad --records "$bad"
done
# a block size is a multiple of 4 KiB: 64Ki is, 64k is not
r 2 gen b64 --records 1000 --block-size 64Ki >/dev/null || fail "--block-size 64Ki"
r 1 info b64 >"$tmp/info" || fail "info b64"
grep -q '^blocks *65536 bytes (65.5 kB, 655 records)$' "$tmp/info" \
  || { fail "--block-size 64Ki: not 65536 bytes"; grep blocks "$tmp/info"; }
refused "--block-size 64k" 2 "--block-size 64k: must be a multiple of 4096" \
  "$run" -n 2 "$river" gen bad --records 1000 --block-size 64k
[ -e "$root/bad.river.h5" ] && fail "a refused gen wrote collection bad"

# --- sizes print one way: exact where it matters, and for a person
r 1 info k2 >"$tmp/info" || fail "info k2"
grep -q '^records *2000 (200000 bytes, 200 kB)$' "$tmp/info" \
  || { fail "info: records line"; grep records "$tmp/info"; }
r 1 ls >"$tmp/ls" || fail "ls"
grep -Eq '^ki2 +2048 +205 kB ' "$tmp/ls" || { fail "ls: ki2's size"; cat "$tmp/ls"; }

# --- a flow spec: a literal size argument, and a param
spec() {
  printf '%s\n' "stages:" \
    "  - {name: src, module: gen, ranks: 1, args: {records: $1}}" \
    "  - {name: sink, module: count, ranks: 1, args: {file: $tmp/c}}" \
    "edges: [{from: src, to: sink}]" >"$tmp/s.yaml"
}
# the gen stage's records out, from the totals `river run` prints
made() { awk '$2 == "stage" && $3 == "src" { print $9 }' "$tmp/run"; }
for v in 2k:2000 2Ki:2048 2K:2000; do
  spec "${v%%:*}"
  r 2 run "$tmp/s.yaml" >"$tmp/run" 2>&1 || fail "run with records: ${v%%:*}"
  [ "$(made)" = "${v##*:}" ] || { fail "records: ${v%%:*}: $(made) made"; cat "$tmp/run"; }
  r 2 run "$flows/gen_count.yaml" records="${v%%:*}" out="$tmp/c" >"$tmp/run" 2>&1 \
    || fail "run records=${v%%:*}"
  [ "$(made)" = "${v##*:}" ] || { fail "records=${v%%:*}: $(made) made"; cat "$tmp/run"; }
done
for bad in 1m 1.5M 1KiB 1ki; do
  spec "$bad"
  refused "spec records: $bad" 1 \
    "stage 'src': argument 'records': expected a size $rule, got '$bad'" \
    "$run" -n 2 "$river" flow check "$tmp/s.yaml"
  refused "param records=$bad" 1 \
    "stage 'src': argument 'records': expected a size $rule, got '$bad'" \
    "$run" -n 2 "$river" run "$flows/gen_count.yaml" records="$bad" out="$tmp/c"
done

# --- river-bench: its sizes the same way
TMPDIR=$tmp "$run" -n 2 "$bench" sort real --records 20k --repeats 1 \
  --quiet >"$tmp/out" 2>&1 || { fail "river-bench --records 20k"; cat "$tmp/out"; }
grep -q ', 20000 records)' "$tmp/out" \
  || { fail "river-bench --records 20k: not 20000 records"; cat "$tmp/out"; }
grep -q '^real n=2 2.00 MB, median of 1' "$tmp/out" \
  || { fail "river-bench: the size is not printed as 2.00 MB"; cat "$tmp/out"; }
for bad in 1m 1KiB; do
  refused "river-bench --records $bad" 2 \
    "--records $bad: expected an integer in 1..1099511627776 $rule" \
    "$run" -n 2 "$bench" sort real --records "$bad"
done
"$run" -n 1 "$bench" dq read --message-size 64Ki --help >"$tmp/out" 2>&1 \
  || fail "river-bench --message-size 64Ki refused"
grep -qF 'BYTES, N and LIST: digits, then k, M, G, T (×1000) or' "$tmp/out" \
  || fail "river-bench --help does not say the rule"

# --- every help that takes a size says the rule
for cmd in gen copy-in sort join run; do
  r 1 "$cmd" --help >"$tmp/out" 2>&1 || fail "$cmd --help"
  grep -qF 'digits, then k, M, G, T (×1000) or Ki, Mi, Gi, Ti' "$tmp/out" \
    || fail "river $cmd --help does not say the rule"
done

clitest_end test_units
