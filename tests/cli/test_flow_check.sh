#!/bin/bash
# test_flow_check - `river flow check` at 1 and 3 ranks: a good spec
# prints its rank -> stage plan (for the job, or for --ranks N) or, with
# --dot, a graph whose edges are the spec's; a bad spec (loader errors,
# building errors, whole-graph errors, a bad override) makes every rank
# exit non-zero with the message printed once, never a hang (the
# launcher's time limit). The test modules (t_*) are registered by the
# preloaded shim tests/flow_modules.so. Run by scripts/mpi-test-launch.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"

flows=${top_srcdir:-.}/tests/flows
shim=${top_builddir:-.}/tests/.libs/flow_modules.so
[ -f "$shim" ] || { echo "FAIL: no $shim"; exit 1; }
export LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$shim"

# ok NRANKS ARGS...: flow check succeeds (output in $tmp/out, $tmp/err).
ok() {
  local n=$1; shift
  r "$n" flow check "$@" </dev/null >"$tmp/out" 2>"$tmp/err" \
    || { fail "flow check $* on $n ranks failed"; head -n 8 "$tmp/err"; }
}

# bad NRANKS MESSAGE ARGS...: flow check fails (exit 1 from every rank),
# and MESSAGE (a fixed string) and the closing line are printed exactly
# once.
bad() {
  local n=$1 msg=$2 c; shift 2
  expect_fail "$n" "flow failed" flow check "$@"
  c=$(grep -cF -e "$msg" "$tmp/err")
  [ "$c" -eq 1 ] || { fail "flow check $* on $n ranks: '$msg' printed $c times"; head -n 8 "$tmp/err"; }
  c=$(grep -c "flow failed" "$tmp/err")
  [ "$c" -eq 1 ] || fail "flow check $* on $n ranks: $c closing lines, not 1"
  [ ! -s "$tmp/out" ] || fail "flow check $* on $n ranks printed a plan"
}

p=$flows/good/pipeline.yaml
for n in 1 3; do
  # a plan for 5 ranks, printed once
  ok $n "$p" --ranks 5
  printf '%s\n' "$p: 3 stages on 5 ranks" "rank 0: read" "rank 1: read" \
    "rank 2: work" "rank 3: work" "rank 4: out" >"$tmp/want"
  cmp -s "$tmp/out" "$tmp/want" || { fail "plan of pipeline.yaml on $n ranks"; diff "$tmp/want" "$tmp/out"; }
  # an override changes it
  ok $n "$p" --ranks 4 workers=1
  grep -qx "rank 3: out" "$tmp/out" || fail "workers=1: rank 3 is not 'out'"
  # on the job itself
  ok $n "$flows/good/small.yaml" n=5
  { echo "$flows/good/small.yaml: 2 stages on $n rank$([ $n -gt 1 ] && echo s)"
    echo "rank 0: src, sink"
    for ((k = 1; k < n; k++)); do echo "rank $k: (idle)"; done; } >"$tmp/want"
  cmp -s "$tmp/out" "$tmp/want" || { fail "plan of small.yaml on $n ranks"; diff "$tmp/want" "$tmp/out"; }
  # --dot: the graph's edges, labelled with their kinds
  ok $n "$p" --ranks 5 --dot
  sed -n 's/^  "\([a-z]*\)" -> "\([a-z]*\)" \[label="\(.*\)"\];$/\1 \2 \3/p' "$tmp/out" >"$tmp/edges"
  printf '%s\n' "read work exchange range on k" "work out dq pull" >"$tmp/want"
  cmp -s "$tmp/edges" "$tmp/want" || { fail "--dot edges on $n ranks"; cat "$tmp/out"; }
  [ "$(head -n 1 "$tmp/out")" = "digraph flow {" ] || fail "--dot: not a digraph"
  [ "$(tail -n 1 "$tmp/out")" = "}" ] || fail "--dot: unterminated"

  # bad specs: found by the loader, by building, by the whole-graph check
  b=$flows/bad
  bad $n "$b/empty.yaml: the file is empty" "$b/empty.yaml" --ranks 4
  bad $n "$b/syntax.yaml:4:6: YAML syntax error" "$b/syntax.yaml" --ranks 4
  bad $n "$b/dup_key.yaml:5:5: a stage: duplicate key 'name'" "$b/dup_key.yaml" --ranks 4
  bad $n "$b/unknown_module.yaml:3:5: stage 'a': unknown module 'nope'" "$b/unknown_module.yaml" --ranks 4
  bad $n "$b/bad_size.yaml:3:56: stage 'a': argument 'records': expected a size (suffixes k, M, G, T: ×1000; Ki, Mi, Gi, Ti: ×1024), got 'lots'" "$b/bad_size.yaml" --ranks 4
  bad $n "$b/cycle.yaml:4:5: the flow has a cycle" "$b/cycle.yaml" --ranks 4
  bad $n "$b/schema_mismatch.yaml:6:5: edge a -> b: schema mismatch" "$b/schema_mismatch.yaml" --ranks 4
  bad $n "$b/missing_arg.yaml:3:5: stage 'a': missing required argument 'records'" "$b/missing_arg.yaml" --ranks 4
  # on the job: a loader error, and a check error (collective)
  bad $n "$b/rank_range.yaml:3:41: stage 'a': ranks: rank 9 is out of range (the flow has $n rank" "$b/rank_range.yaml"
  bad $n "$b/cycle.yaml:4:5: the flow has a cycle: 'b' <- 'c' <- 'b'" "$b/cycle.yaml"
  bad $n "parameter 'x' (given as x=1) is not in the spec's params" "$p" --ranks 5 x=1
  # usage errors: every rank says it, like the other commands' options
  expect_fail $n "flow check: no FLOW.yaml given" flow check --ranks 5
done
expect_fail 1 "flow: unknown subcommand 'bogus'" flow bogus
expect_fail 1 "flow check: unexpected argument 'extra'" flow check "$p" extra
expect_fail 1 "--ranks 0: expected an integer" flow check "$p" --ranks 0
r 1 flow --help >"$tmp/out" 2>&1 && grep -q "^usage: river flow check FLOW.yaml" "$tmp/out" \
  || fail "flow --help"
r 1 --help 2>&1 | grep -q "^  flow " || fail "river --help does not list flow"

clitest_end test_flow_check
