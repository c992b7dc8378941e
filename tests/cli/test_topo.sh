#!/bin/bash
# test_topo - river topo, and river --bind, on emulated nodes and on one:
#  * 4 ranks on 2 emulated nodes (river-mpirun --nodes 2: rank r on
#    river-node(r mod 2 + 1), not bound by the launcher): "4 ranks on 2
#    nodes", each node's machine once with its ranks (0,2 and 1,3), each
#    rank once, under its node, in rank order, unbound (by=none), with
#    its disk directory (--root/--disks expanded for disk r);
#  * --bind there: every rank by=river, the two ranks of a node on
#    different PUs of that node, local index i on core i*C/L (where a
#    core is one PU: pu:0 and pu:1 on a 2-core machine), before or after
#    the command's name;
#  * a rank bound before River runs (the job under taskset -c 0, mpirun
#    --bind-to none, on one node) is kept: by=launcher, bound=pu:0, with
#    --bind too;
#  * one node: its name is the host name, or Slurm's $SLURMD_NODENAME
#    when set, and $RIVER_NODE_NAME over both; --bind there binds
#    (by=river) or keeps (by=launcher) as the plain run's binding says;
#  * a bad disk pattern fails, named.
# Run by scripts/mpi-test-launch.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"

# on NODES NRANKS ARGS...: river ARGS on NRANKS ranks over NODES emulated
# nodes, without the node names of whatever runs this test.
on() {
  local nodes=$1; shift
  env -u RIVER_NODE_NAME -u SLURMD_NODENAME RIVER_NODES="$nodes" \
    "$run" -n "$1" "$river" "${@:2}"
}

# rank_field R KEY: KEY's value on rank R's line of $tmp/out.
rank_field() {
  sed -n "s/^  rank $1 .* $2=\([^ ]*\).*/\1/p" "$tmp/out"
}

# in_range LIST MAX: every PU of LIST ("pu:0-1,3") is in 0..MAX-1.
in_range() {
  local part lo hi
  for part in $(echo "${1#pu:}" | tr ',' ' '); do
    lo=${part%-*}; hi=${part#*-}
    [ "$lo" -ge 0 ] && [ "$hi" -lt "$2" ] && [ "$lo" -le "$hi" ] || return 1
  done
}

# --- two emulated nodes, unbound
if ! on 2 4 topo --root "$root" --disks 'local/d%d' >"$tmp/out" 2>"$tmp/err"; then
  fail "topo on 2 nodes exited non-zero"; cat "$tmp/err"
fi
cat "$tmp/out"
grep -qx "4 ranks on 2 nodes; collections' metadata in $root" "$tmp/out" \
  || fail "2 nodes: no '4 ranks on 2 nodes' line"
[ "$(grep -c '^node ' "$tmp/out")" -eq 2 ] || fail "2 nodes: not two node lines"
grep -Eq '^node river-node1: packages=[0-9]+ cores=[1-9][0-9]* pus=[1-9][0-9]* numa=[0-9]+ ranks=0,2$' \
  "$tmp/out" || fail "2 nodes: river-node1 is not ranks 0,2 with its machine"
grep -Eq '^node river-node2: packages=[0-9]+ cores=[1-9][0-9]* pus=[1-9][0-9]* numa=[0-9]+ ranks=1,3$' \
  "$tmp/out" || fail "2 nodes: river-node2 is not ranks 1,3 with its machine"
# Grouped by node, in rank order within each.
order=$(sed -n 's/^node \([^:]*\):.*/\1/p; s/^  rank \([0-9]*\) .*/\1/p' "$tmp/out" | tr '\n' ' ')
[ "$order" = "river-node1 0 2 river-node2 1 3 " ] \
  || fail "2 nodes: lines in the order '$order'"
for r in 0 1 2 3; do
  [ "$(grep -c "^  rank $r " "$tmp/out")" -eq 1 ] || fail "2 nodes: rank $r not once"
  [ "$(rank_field $r node)" = "river-node$((r % 2 + 1))" ] \
    || fail "2 nodes: rank $r on '$(rank_field $r node)'"
  [ "$(rank_field $r bound)" = none ] && [ "$(rank_field $r by)" = none ] \
    || fail "2 nodes: rank $r bound without --bind"
  [ "$(rank_field $r disk)" = "$root/local/d$r" ] \
    || fail "2 nodes: rank $r's disk is '$(rank_field $r disk)'"
done
cores=$(sed -n 's/^node river-node1: .*cores=\([0-9]*\).*/\1/p' "$tmp/out")
pus=$(sed -n 's/^node river-node1: .*pus=\([0-9]*\).*/\1/p' "$tmp/out")

# --- two emulated nodes, --bind (after the command's name, and before)
for form in "topo --bind" "--bind topo"; do
  # shellcheck disable=SC2086 # the words of $form are the arguments
  if ! on 2 4 $form >"$tmp/out" 2>"$tmp/err"; then
    fail "river $form on 2 nodes exited non-zero"; cat "$tmp/err"
  fi
  cat "$tmp/out"
  for node in 1 2; do
    first=$((node - 1)) second=$((node + 1))   # ranks node-1 and node+1
    b1=$(rank_field $first bound) b2=$(rank_field $second bound)
    [ "$(rank_field $first by)" = river ] && [ "$(rank_field $second by)" = river ] \
      || fail "$form: river-node$node's ranks not by=river"
    in_range "$b1" "$pus" && in_range "$b2" "$pus" \
      || fail "$form: river-node$node's bindings $b1, $b2 not within its $pus PUs"
    [ "$b1" != "$b2" ] || fail "$form: river-node$node's ranks share $b1"
    # One PU a core: local index i of 2 on core (and PU) i*C/2.
    if [ "$cores" = "$pus" ] && [ "$cores" -ge 2 ]; then
      [ "$b1" = pu:0 ] && [ "$b2" = "pu:$((cores / 2))" ] \
        || fail "$form: river-node$node's ranks on $b1, $b2, not pu:0, pu:$((cores / 2))"
    fi
  done
done

# --- a binding the launcher made is kept
if ! command -v taskset >/dev/null; then
  fail "taskset (util-linux) is missing: cannot bind the job first"
else
  # Under the sanitizers, LeakSanitizer's exit-time scan crashes in these
  # two runs most of the time ("Tracer caught signal 11", exit 23, after
  # River's output is complete): it reads a dynamic-TLS entry of an
  # Open MPI or hwloc plugin whose bounds are garbage ("DTLS 10 at
  # 0x1eb2-0x400002fb4" with LSAN_OPTIONS=verbosity=1). Seen only with
  # the whole job on one CPU. ASan then stops tracking dynamic TLS for
  # these two runs alone; the leak check itself still runs.
  asan_here=${ASAN_OPTIONS:+$ASAN_OPTIONS:intercept_tls_get_addr=0}
  for args in "topo" "topo --bind"; do
    # shellcheck disable=SC2086
    if ! taskset -c 0 env -u RIVER_NODE_NAME RIVER_NODES=1 \
           ${asan_here:+ASAN_OPTIONS=$asan_here} \
           "$run" -n 2 --bind-to none "$river" $args >"$tmp/out" 2>"$tmp/err"; then
      fail "taskset -c 0 river $args exited non-zero"; cat "$tmp/err"
    fi
    for r in 0 1; do
      [ "$(rank_field $r bound)" = pu:0 ] && [ "$(rank_field $r by)" = launcher ] \
        || { fail "taskset -c 0 river $args: rank $r not kept on pu:0"; cat "$tmp/out"; }
    done
  done
fi

# --- one node: the host's name, Slurm's, River's
host=$(hostname)
if ! on 1 2 topo >"$tmp/out" 2>"$tmp/err"; then
  fail "topo on 1 node exited non-zero"; cat "$tmp/err"
fi
cat "$tmp/out"
grep -q "^2 ranks on 1 node; " "$tmp/out" || fail "1 node: no '2 ranks on 1 node'"
grep -Eq "^node $host: .* ranks=0,1$" "$tmp/out" || fail "1 node: not node $host with ranks 0,1"
plain0=$(rank_field 0 bound) plain1=$(rank_field 1 bound)
env -u RIVER_NODE_NAME SLURMD_NODENAME=slurm-a RIVER_NODES=1 \
  "$run" -n 2 "$river" topo >"$tmp/out" 2>&1
grep -Eq '^node slurm-a: .* ranks=0,1$' "$tmp/out" \
  || { fail "1 node: SLURMD_NODENAME not the node's name"; cat "$tmp/out"; }
env SLURMD_NODENAME=slurm-a RIVER_NODE_NAME=mine RIVER_NODES=1 \
  "$run" -n 2 "$river" topo >"$tmp/out" 2>&1
grep -Eq '^node mine: .* ranks=0,1$' "$tmp/out" \
  || { fail "1 node: RIVER_NODE_NAME does not win over SLURMD_NODENAME"; cat "$tmp/out"; }
if ! on 1 2 topo --bind >"$tmp/out" 2>"$tmp/err"; then
  fail "topo --bind on 1 node exited non-zero"; cat "$tmp/err"
fi
cat "$tmp/out"
for r in 0 1; do
  eval "plain=\$plain$r"
  if [ "$plain" = none ]; then
    [ "$(rank_field $r by)" = river ] || fail "1 node --bind: unbound rank $r not bound"
  else
    [ "$(rank_field $r by)" = launcher ] && [ "$(rank_field $r bound)" = "$plain" ] \
      || fail "1 node --bind: rank $r's launcher binding $plain not kept"
  fi
done

# --- a bad disk pattern
expect_fail 2 "disk pattern 'nonum': needs exactly one %d" topo --disks nonum

clitest_end test_topo
