#!/bin/bash
# test_said_once.sh - a failure is said once, not once per rank
# (doc/guide.md, "Errors and exit codes"): at 1, 4 and 16 ranks, each
# failure below prints its message once and one closing line, both from
# one rank, and exits with the documented code on every rank (the
# launcher's exit status: 1 failure, 2 usage). The failures: a missing
# collection (info, copy-out, sort), a wrong command line (an unknown
# option, a missing argument, a bad value, an unknown flow subcommand),
# an existing target (gen, and a flow's coll_write, refused by the
# flow's check), and a flow stage failing mid-run (a damaged block
# without a mirror), whose other stages' failures follow from it and
# are not said.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
flows=${top_srcdir:-.}/flows

# once NRANKS CODE MSG CLOSING ARGS...: river ARGS on NRANKS ranks exits
# CODE; its stderr has exactly two error lines (river[R] error: ...),
# from one rank, one matching MSG and the next CLOSING (grep -E).
once() {
  local n=$1 code=$2 msg=$3 closing=$4 rc what; shift 4
  what="$n ranks: river $*"; what=${what:0:110}
  r "$n" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"; rc=$?
  [ "$rc" = "$code" ] || fail "$what: exit $rc, not $code"
  grep '^river\[[0-9]*\] error:' "$tmp/err" >"$tmp/lines"
  [ "$(wc -l <"$tmp/lines")" = 2 ] \
    || { fail "$what: $(wc -l <"$tmp/lines") error lines, not 2"; sed 's/^/    /' "$tmp/lines"; return; }
  [ "$(cut -d' ' -f1 "$tmp/lines" | sort -u | wc -l)" = 1 ] \
    || fail "$what: the lines come from several ranks"
  sed -n 1p "$tmp/lines" | grep -Eq -e "$msg" || fail "$what: first line not /$msg/: $(sed -n 1p "$tmp/lines")"
  sed -n 2p "$tmp/lines" | grep -Eq -e "$closing" \
    || fail "$what: closing line not /$closing/: $(sed -n 2p "$tmp/lines")"
}

r 2 gen have --records 2000 >/dev/null || fail "gen have"
r 1 gen dmg --records 200000 >/dev/null || fail "gen dmg"
f=$(ls "$root"/disk0/*dmg* | head -n 1)
printf 'XXXXXXXX' | dd of="$f" bs=1 seek=$(( $(stat -c %s "$f") / 2 )) conv=notrunc 2>/dev/null

# 16 ranks only outside the sanitizer pass (RIVER_TEST_QUICK: 1 and 4).
counts="1 4 16"
[ "${RIVER_TEST_QUICK:-0}" = 1 ] && counts="1 4"
for n in $counts; do
  once "$n" 1 "collection nosuch not found" "info failed: not found" \
    info nosuch
  once "$n" 1 "collection nosuch not found" "copy-out failed: not found" \
    copy-out nosuch -o "$tmp/x"
  once "$n" 1 "collection nosuch not found" "sort failed: not found" \
    sort nosuch out
  once "$n" 2 "gen: unknown option '--bogus'" "gen failed" \
    gen x --records 5 --bogus
  once "$n" 2 "sort: missing OUT" "sort failed" sort have
  once "$n" 2 "--records 5x: expected an integer" "gen failed" \
    gen x --records 5x
  once "$n" 2 "flow: unknown subcommand 'chek'" "flow failed" \
    flow chek "$flows/sort.yaml"
  r "$n" info have --stats </dev/null >"$tmp/out" 2>"$tmp/err"; rc=$?
  [ "$rc" = 2 ] || fail "$n ranks: --stats without a value: exit $rc, not 2"
  [ "$(grep -c 'error:' "$tmp/err")" = 1 ] && grep -q "^river\[0\] error: --stats needs a value" "$tmp/err" \
    || { fail "$n ranks: --stats without a value: not said once"; cat "$tmp/err"; }
  once "$n" 1 "gen: collection have exists" "gen failed: already exists" \
    gen have --records 5
  once "$n" 1 "stage 'write': collection have exists" "run failed: already exists" \
    run "$flows/sort.yaml" in=have out=have
  # A damaged block mid-run: said once by the rank that read it, and
  # the failures of the other stages it caused are not.
  r "$n" run "$flows/sort.yaml" in=dmg out=dmg$n </dev/null >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" = 1 ] || fail "$n ranks: damaged block: exit $rc, not 1"
  grep -c "run failed" "$tmp/err" | grep -qx 1 || fail "$n ranks: damaged block: not one closing line"
  grep -E "error:" "$tmp/err" | grep -Ev "dmg|run failed" >"$tmp/other"
  [ -s "$tmp/other" ] && { fail "$n ranks: damaged block: other errors said"; sed 's/^/    /' "$tmp/other"; }
  [ "$(grep -c 'error:' "$tmp/err")" -le 3 ] \
    || { fail "$n ranks: damaged block: $(grep -c 'error:' "$tmp/err") error lines"; sed 's/^/    /' "$tmp/err"; }
done

clitest_end test_said_once
