#!/bin/bash
# test_flow_run.sh - `river run FLOW.yaml [key=value ...]` at 1..4 ranks:
# gen -> count through each kind of edge, sources and sinks on separate
# or shared ranks; the records counted (summed over the count instances,
# with their content digest) equal those of the same flow on one rank;
# per-stage totals on rank 0; a bad spec or parameter: one message,
# non-zero exit on every rank.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
flows=${top_srcdir:-.}/tests/flows/run


# The reference: the whole flow on one rank.
r 1 run "$flows/gen_count.yaml" out="$tmp/ref" gen_ranks=0-0 count_ranks=0-0 >/dev/null \
  || fail "the one-rank reference run"
want=$(total "$tmp/ref")
[ "${want%% *}" = 20000 ] || fail "the reference counted ${want%% *} records"

for n in $(ranks 2 3 4); do
  for k in policy=push policy=static policy=pull kind=exchange \
           kind=broadcast; do
    spec=$flows/gen_count.yaml
    [ "${k#kind=}" != "$k" ] && spec=$flows/gen_kind.yaml
    rm -f "$tmp"/c.*
    if ! r "$n" run "$spec" out="$tmp/c" $k >"$tmp/out" 2>&1
    then
      fail "$n ranks, $k: run failed"; head -n 5 "$tmp/out"; continue
    fi
    got=$(total "$tmp/c")
    if [ "${k#kind=broadcast}" != "$k" ]; then
      [ "${got%% *}" = $((20000 * (n - 1))) ] \
        || fail "$n ranks, broadcast: ${got%% *} records"
    else
      [ "$got" = "$want" ] || fail "$n ranks, $k: $got, want $want"
    fi
    [ "$(grep -c '^run: stage ' "$tmp/out")" -eq 2 ] \
      || fail "$n ranks, $k: per-stage totals"
    grep -q '^run: stage src .* 20000 out' "$tmp/out" \
      || fail "$n ranks, $k: src totals"
  done
  # Every stage on every rank.
  rm -f "$tmp"/c.*
  r "$n" run "$flows/shared.yaml" out="$tmp/c" >/dev/null 2>&1 \
    || fail "$n ranks: shared run failed"
  [ "$(total "$tmp/c")" = "$want" ] || fail "$n ranks: shared: $(total "$tmp/c")"
done

# A pull edge of small messages, 1 and 4 credits: the flow's chunks fit
# one try_put (river_dq_put_max), or the first unit's put waited for a
# claim for ever (the run hung until the launcher's limit).
for c in 1 4; do
  rm -f "$tmp"/c.*
  if r 3 run "$flows/gen_pull_small.yaml" out="$tmp/c" credits=$c >"$tmp/out" 2>&1
  then
    [ "$(total "$tmp/c")" = "$want" ] \
      || fail "pull, small messages, $c credits: $(total "$tmp/c"), want $want"
  else
    fail "pull, small messages, $c credits: run failed"; head -n 5 "$tmp/out"
  fi
done

# The README's main job (flows/sort_demo.yaml), small, at 2..4 ranks:
# sorted (count sorted: true fails otherwise), and the same records as
# gen -> count (skewed rows, seed 5).
r 1 run "$flows/gen_count.yaml" out="$tmp/sref" gen_ranks=0-0 count_ranks=0-0 \
  records=30000 seed=5 >/dev/null 2>&1 || fail "sort demo reference"
gen_kind=$(total "$tmp/sref")
for n in $(ranks 2 3 4); do
  if r "$n" run "${top_srcdir:-.}/flows/sort_demo.yaml" records=30000 seed=5 \
      skew=false >"$tmp/out" 2>&1; then
    line=$(grep '^check 0 ' "$tmp/out")
    set -- $line
    [ "$3 $((16#$4)) $((16#$5))" = "$gen_kind" ] \
      || fail "sort demo on $n ranks: $3 $4 $5, want $gen_kind"
    [ "$(grep -c '^run: stage ' "$tmp/out")" -eq 5 ] || fail "sort demo: totals"
  else
    fail "sort demo on $n ranks failed"; head -n 5 "$tmp/out"
  fi
done
r 3 run "${top_srcdir:-.}/flows/sort_demo.yaml" records=30000 >/dev/null 2>&1 \
  || fail "sort demo with skewed keys failed"

# A bad parameter and a missing spec: one message, every rank non-zero.
expect_fail 3 "nosuch" run "$flows/gen_count.yaml" nosuch=1
[ "$(grep -c 'nosuch' "$tmp/err")" -eq 1 ] || fail "bad parameter: not one message"
expect_fail 2 "missing.yaml" run "$tmp/missing.yaml"
[ "$(grep -c 'missing.yaml' "$tmp/err")" -eq 1 ] || fail "missing spec: not one message"
expect_fail 2 "not key=value" run "$flows/gen_count.yaml" records
expect_fail 1 "missing FLOW.yaml" run

clitest_end test_flow_run
