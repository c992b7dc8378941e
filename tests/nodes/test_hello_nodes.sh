#!/bin/bash
# test_hello_nodes - what a user sees of nodes and credit paths:
# `river hello` on one node (queue credits by rma), on 2 and 3 emulated
# nodes (each rank's node named, round-robin; credits by msg, as Debian's
# Open MPI has no one-sided path between nodes over TCP), with
# RIVER_DQ_CREDITS forcing either path, and with Open MPI's osc/pt2pt
# allowed (`OMPI_MCA_osc=pt2pt`: a window spans the nodes, credits by
# rma, and a sort across the two nodes is valid: doc/design.md, "Credit
# paths", on why pt2pt had looked like hanging). `river run`'s stage
# lines name their queues' path.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"

# hello NODES RANKS EXPECTED-PATH [ENV...]: one run, checked.
hello() {
  local nodes=$1 n=$2 want=$3 r node; shift 3
  if ! env "$@" RIVER_NODES="$nodes" "$run" -n "$n" "$river" hello --laps 2 \
       >"$tmp/out" 2>"$tmp/err"; then
    fail "hello on $nodes node(s) ($*) exited non-zero"; cat "$tmp/err"; return
  fi
  grep -q "^queue: credits by $want " "$tmp/out" \
    || { fail "hello on $nodes node(s) ($*): not 'credits by $want'"; cat "$tmp/out"; }
  [ "$nodes" -gt 1 ] || return 0
  for ((r = 0; r < n; r++)); do
    node=river-node$((r % nodes + 1))
    grep -Eq "^  rank $r +node=$node " "$tmp/out" \
      || fail "hello on $nodes nodes: rank $r not on $node"
  done
}

hello 1 4 rma
hello 1 4 msg RIVER_DQ_CREDITS=msg
hello 2 4 msg
hello 3 4 msg
hello 2 4 msg RIVER_DQ_CREDITS=msg
# Forcing a window where none can be made fails, on every rank, once.
if RIVER_DQ_CREDITS=rma RIVER_NODES=2 "$run" -n 4 "$river" hello --laps 2 \
     >"$tmp/out" 2>"$tmp/err"; then
  fail "RIVER_DQ_CREDITS=rma across 2 nodes (no window) succeeded"
fi
grep -q "window: MPI_Win_allocate of [0-9]* bytes failed" "$tmp/err" \
  || { fail "RIVER_DQ_CREDITS=rma across nodes: no message naming the window"; cat "$tmp/err"; }
# A bad value is named.
if RIVER_DQ_CREDITS=fast "$run" -n 2 "$river" hello >"$tmp/out" 2>"$tmp/err"; then
  fail "RIVER_DQ_CREDITS=fast succeeded"
fi
grep -q "RIVER_DQ_CREDITS=fast: expected auto, rma or msg" "$tmp/err" \
  || { fail "RIVER_DQ_CREDITS=fast: not named"; cat "$tmp/err"; }

# osc/pt2pt allowed: a window across the nodes, and a valid sort on it.
hello 2 4 rma OMPI_MCA_osc=pt2pt
r 4 gen --force in --records 40000 >/dev/null || fail "gen failed"
if ! OMPI_MCA_osc=pt2pt RIVER_NODES=2 r 4 sort in out >"$tmp/out" 2>&1; then
  fail "sort across 2 nodes with osc/pt2pt failed"; cat "$tmp/out"
fi
grep -q "^run: stage write .* credits rma$" "$tmp/out" \
  || { fail "sort with osc/pt2pt: the writers' queue not 'credits rma'"; cat "$tmp/out"; }
r 4 valsort out --input in | grep -q "SUCCESS" || fail "pt2pt sort: valsort"
# The default across nodes: credits by msg, in the run's report.
if ! RIVER_NODES=2 r 4 sort in out2 >"$tmp/out" 2>&1; then
  fail "sort across 2 nodes failed"; cat "$tmp/out"
fi
grep -q "^run: stage write .* credits msg$" "$tmp/out" \
  || { fail "sort across 2 nodes: the writers' queue not 'credits msg'"; cat "$tmp/out"; }
r 4 valsort out2 --input in | grep -q "SUCCESS" || fail "sort across 2 nodes: valsort"

if [ "$fails" -eq 0 ]; then echo "PASS: test_hello_nodes"; exit 0; fi
echo "FAIL: test_hello_nodes ($fails failed checks)"; exit 1
