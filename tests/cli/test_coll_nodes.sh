#!/bin/bash
# test_coll_nodes.sh - collections on node-local disks (issue 34): a disk
# pattern with %n, written and read on emulated nodes (river-mpirun
# --nodes: rank r on river-node(r mod N + 1), each node's ranks with
# RIVER_NODE_NAME set). Checks that bad patterns are refused naming the
# pattern; that each copy lands in its disk's node's directory (disk d on
# the node of rank d mod size) and no other; that copy-out gives back the
# exact records (cmp with a collection written on shared disks) with 4 or
# 3 ranks on 2 nodes, on 3 nodes (one of them without disks), and with
# one node's directory removed (its disks lost: the mirrors serve);
# fsck's report on a lost node (OK with warnings, exit 0; DATA LOST,
# exit 1, when two of three nodes are gone); that rm on one node removes
# only what its node sees and gc --disks on the other node finds the
# rest, and rm on a rank per node removes all; a write failed once its
# copies are on their nodes (RIVER_TEST_FAULT=commit-ship:fail) leaves
# nothing, one killed there leaves what gc --disks on each node removes; that
# a replacing write removes the old files on every node; river sort
# across the nodes, mirrored and not, checked by valsort --input (through
# GD, with a node lost too), and a two-pass sort refused (node-local runs); RIVER_DISKS as the default pattern; and the
# warning when every copy of a partition is on one node.
set -u
. "$(dirname "$0")/clitest.sh"
unset RIVER_NODES RIVER_NODE_NAME RIVER_DISKS
nodes=$tmp/nodes
pat="$nodes/%n/d%d"
N=20000

# The reference: the same rows on shared disks, one rank.
r 1 gen --force ref --records $N >/dev/null || fail "gen ref"
r 1 copy-out --force ref -o "$tmp/ref.dat" || fail "copy-out ref"
[ "$(stat -c %s "$tmp/ref.dat")" = $((N * 100)) ] || fail "ref is not $N records"

# --- Bad patterns: refused before anything is written, naming the pattern.
expect_fail 1 "disk pattern 'd%d%n%n': %n \(the node's name\) may appear at most once" \
  gen --force bad --records 10 --disks 'd%d%n%n'
expect_fail 1 "disk pattern 'x%r/d%d': %r \(a rank\) is not allowed" \
  gen --force bad --records 10 --disks 'x%r/d%d'
expect_fail 1 "disk pattern 'x%q/d%d': only %d \(once\), %n \(at most once\) and %% are allowed" \
  gen --force bad --records 10 --disks 'x%q/d%d'
expect_fail 1 "disk pattern '%n/../d%d': '..' would escape the root" \
  gen --force bad --records 10 --disks '%n/../d%d'
expect_fail 1 "disk pattern '%n/disk': needs exactly one %d" \
  gen --force bad --records 10 --disks '%n/disk'
RIVER_DISKS='e%r%d' expect_fail 1 "disk pattern 'e%r%d': %r \(a rank\) is not allowed" \
  gen --force bad --records 10
RIVER_NODE_NAME='a/b' expect_fail 1 "node name 'a/b' .* cannot stand for %n in a disk pattern" \
  gen --force bad --records 10 --disks '%n/d%d'
RIVER_NODE_NAME='..' expect_fail 1 "node name '..' .* cannot stand for %n" \
  gen --force bad --records 10 --disks '%n/d%d'
[ -e "$root/bad.river.h5" ] && fail "a refused pattern left metadata"
[ -z "$(find "$root" -name 'bad.*.rdat*')" ] || fail "a refused pattern left data files"

# rn NODES NRANKS ARGS...: river ARGS on NRANKS ranks over NODES emulated
# nodes. Open MPI 4.1's daemons of two jobs can collide on a session
# directory (`orte_session_dir failed`, "mkdir ... /tmp/ompi.HOST.0/jf.N/0:
# File exists": seen once in this test's first runs, with other jobs on
# the machine): such a launch, and only such a launch, runs once more,
# with a NOTE. Its stderr is passed on.
rn() {
  local nodes=$1 n=$2 try rc=0; shift 2
  for try in 1 2; do
    RIVER_NODES=$nodes r "$n" "$@" 2>"$tmp/rn.err"; rc=$?
    [ $rc -ne 0 ] && grep -q "orte_session_dir failed" "$tmp/rn.err" || break
    echo "NOTE: Open MPI's daemons collided on a session directory; try $try of 2"
  done
  cat "$tmp/rn.err" >&2
  return $rc
}

# copies DIR: the number of X data files under DIR (0 if none).
copies() { find "$1" -name "$2.p*.rdat" 2>/dev/null | wc -l; }

# --- Write on 2 nodes, 4 ranks, 2 copies: disk d on river-node(d mod 2 + 1).
rn 2 4 gen --force X --records $N --mirror 2 --disks "$pat" >/dev/null \
  || fail "gen X on 2 nodes"
for d in 0 1 2 3; do
  own=river-node$((d % 2 + 1)) other=river-node$(((d + 1) % 2 + 1))
  [ "$(copies "$nodes/$own/d$d" X)" = 2 ] \
    || fail "disk $d on $own holds $(copies "$nodes/$own/d$d" X) copies, not 2"
  [ "$(copies "$nodes/$other/d$d" X)" = 0 ] \
    || fail "disk $d has copies on $other too"
done
[ "$(copies "$nodes" X)" = 8 ] || fail "X has $(copies "$nodes" X) copy files, not 8"
find "$nodes" -name '*.tmp' | grep -q . && fail "temporary files left"
# The metadata keeps the pattern: each node's job expands it with its name.
for n in 1 2; do
  RIVER_NODE_NAME=river-node$n r 1 info X >"$tmp/info" || fail "info X on river-node$n"
  grep -q "^disk 0 *$nodes/river-node$n/d0\$" "$tmp/info" \
    || fail "info X on river-node$n: $(grep '^disk 0' "$tmp/info")"
done

# --- Read back: 4 and 3 ranks on 2 nodes, 3 ranks on 3 nodes (river-node3
# holds no disk: its rank serves none).
for spec in 2:4 2:3 3:3 2:2; do
  rn ${spec%:*} ${spec#*:} copy-out --force X -o "$tmp/out" \
    || fail "copy-out X on ${spec%:*} nodes, ${spec#*:} ranks"
  cmp -s "$tmp/out" "$tmp/ref.dat" \
    || fail "copy-out X on ${spec%:*} nodes, ${spec#*:} ranks differs from the reference"
done
rn 2 3 fsck X >"$tmp/fsck" 2>&1 || fail "fsck X (whole)"
grep -q "fsck X: OK: 4 partitions, 8 copies, every block verified" "$tmp/fsck" \
  || fail "fsck X (whole) is not OK: $(tail -n 1 "$tmp/fsck")"

# --- river-node2 is gone: its disks (1 and 3) are lost; the mirrors on
# river-node1 hold every partition.
mv "$nodes/river-node2" "$tmp/saved-node2"
for spec in 2:4 2:3; do
  rn ${spec%:*} ${spec#*:} copy-out --force X -o "$tmp/out" 2>"$tmp/err" \
    || fail "copy-out X with river-node2 lost (${spec#*:} ranks)"
  cmp -s "$tmp/out" "$tmp/ref.dat" \
    || fail "copy-out X with river-node2 lost (${spec#*:} ranks) differs from the reference"
done
grep -q "copy on disk [13] unusable (not found)" "$tmp/err" \
  || fail "copy-out did not warn about the lost disks"
# Only river-node1 left, as a job of its own.
RIVER_NODE_NAME=river-node1 r 2 copy-out --force X -o "$tmp/out" 2>/dev/null \
  || fail "copy-out X on river-node1 alone"
cmp -s "$tmp/out" "$tmp/ref.dat" || fail "copy-out X on river-node1 alone differs"
rn 2 4 fsck X >"$tmp/fsck" 2>/dev/null
rc=$?
[ $rc = 0 ] || fail "fsck X with river-node2 lost: exit $rc, not 0"
for line in "WARN: partition 0 copy 1 (disk 1): file missing (all 1 blocks); repair from copy 0 (disk 0)" \
            "WARN: partition 1 copy 0 (disk 1): file missing (all 1 blocks); repair from copy 1 (disk 2)" \
            "WARN: partition 2 copy 1 (disk 3): file missing (all 1 blocks); repair from copy 0 (disk 2)" \
            "WARN: partition 3 copy 0 (disk 3): file missing (all 1 blocks); repair from copy 1 (disk 0)" \
            "OK with warnings: 4 of 8 copies damaged, every block has an intact copy"; do
  grep -qF "fsck X: $line" "$tmp/fsck" || fail "fsck X with river-node2 lost: no '$line'"
done
mv "$tmp/saved-node2" "$nodes/river-node2"

# --- 3 nodes, 3 ranks, 2 copies: one node lost reads back, two do not.
rn 3 3 gen --force T --records $N --mirror 2 --disks "$pat" >/dev/null \
  || fail "gen T on 3 nodes"
for d in 0 1 2; do
  [ "$(copies "$nodes/river-node$((d + 1))/d$d" T)" = 2 ] || fail "T: disk $d misplaced"
done
mv "$nodes/river-node3" "$tmp/saved-node3"
rn 3 3 copy-out --force T -o "$tmp/out" 2>/dev/null || fail "copy-out T, river-node3 lost"
cmp -s "$tmp/out" "$tmp/ref.dat" || fail "copy-out T, river-node3 lost, differs"
mv "$nodes/river-node2" "$tmp/saved-node2"
rn 3 3 fsck T >"$tmp/fsck" 2>/dev/null
rc=$?
[ $rc = 1 ] || fail "fsck T with 2 of 3 nodes lost: exit $rc, not 1"
grep -q "fsck T: DATA LOST: partition 1 blocks\? 0: no intact copy (disks 1, 2)" "$tmp/fsck" \
  || fail "fsck T: no DATA LOST line for partition 1"
grep -q "fsck T: DAMAGED: 4 of 6 copies damaged" "$tmp/fsck" || fail "fsck T: not DAMAGED"
RIVER_NODES=3 expect_fail 3 "collection T: partition 1 block 0: no readable copy" \
  copy-out --force T -o "$tmp/out"
mv "$tmp/saved-node2" "$nodes/river-node2"
mv "$tmp/saved-node3" "$nodes/river-node3"

# --- river sort across the nodes (partitions begun by the writers, sent
# to their disks' nodes at the commit), mirrored and not; valsort reads
# node-local collections through GD: every record once, in order, with a
# node lost too while a mirror is left.
RIVER_DISKS="$pat" rn 2 4 sort X S --mirror 2 >/dev/null || fail "sort X S on 2 nodes"
RIVER_DISKS="$pat" rn 2 4 sort X U >/dev/null || fail "sort X U on 2 nodes"
for d in 0 1 2 3; do
  other=river-node$(((d + 1) % 2 + 1))
  [ "$(copies "$nodes/$other/d$d" S)" = 0 ] && [ "$(copies "$nodes/$other/d$d" U)" = 0 ] \
    || fail "sort: disk $d has files on $other"
done
ns=$(find "$nodes" -name 'S.p*.rdat' | wc -l) nu=$(find "$nodes" -name 'U.p*.rdat' | wc -l)
[ "$ns" -gt 0 ] && [ "$ns" = $((2 * nu)) ] || fail "sort: $ns files of S for $nu of U"
# valsort's stats file: its GD read, each client's bytes served to it
rn 2 3 --stats "$tmp/vs.json" valsort S >"$tmp/vs" 2>&1 \
  || fail "valsort S --stats on 2 nodes: $(tail -n 1 "$tmp/vs")"
python3 "${top_srcdir:-.}/tests/cli/check_stats.py" "$tmp/vs.json" \
  "${top_srcdir:-.}/doc/stats.schema.json" --flows 0 --nodes 2 \
  --gd-bytes $((N * 100)) >"$tmp/check" 2>&1 \
  || fail "valsort S --stats: $(head -n 3 "$tmp/check")"
grep -q '"label": "valsort"' "$tmp/vs.json" || fail "valsort S: no gd entry"
for c in S U; do
  rn 2 3 valsort $c --input X >"$tmp/vs" 2>&1 || fail "valsort $c --input X on 2 nodes"
  grep -q "^$c: SUCCESS - all records are in order, the records of X" "$tmp/vs" \
    || fail "valsort $c: $(tail -n 1 "$tmp/vs")"
done
mv "$nodes/river-node2" "$tmp/saved-node2"
rn 2 3 valsort S --input X >"$tmp/vs" 2>/dev/null || fail "valsort S, river-node2 lost"
grep -q "^S: SUCCESS - all records are in order, the records of X" "$tmp/vs" \
  || fail "valsort S, river-node2 lost: $(tail -n 1 "$tmp/vs")"
RIVER_NODES=2 expect_fail 3 "collection U: partition [0-9]+ block 0: no readable copy \(missing on disk [13]\)" \
  valsort U
mv "$tmp/saved-node2" "$nodes/river-node2"
# rm on a job with a rank on each node removes every node's files.
rn 2 2 rm S >/dev/null || fail "rm S on 2 nodes"
[ "$(copies "$nodes" S)" = 0 ] || fail "rm S on 2 nodes left $(copies "$nodes" S) files"
# A two-pass sort's mergers read runs any node may hold: node-local runs
# are refused, clearly, and the runs are removed from both nodes.
RIVER_DISKS="$pat" RIVER_NODES=2 expect_fail 2 \
  "coll_merge: collection sort-runs-[0-9a-f-]+ is on node-local disks \(its disk pattern has %n\)" \
  sort X S2 --memory 800Ki
[ -z "$(find "$nodes" "$root" -name 'sort-runs-*')" ] || fail "two-pass sort left its runs"

# --- A write that fails once its copies are on their nodes leaves
# nothing on any node; one killed there leaves files that gc --disks on
# each node removes (the write's record claims their generation).
RIVER_TEST_FAULT=commit-ship:fail RIVER_NODES=2 expect_fail 4 "gen failed" \
  gen --force F --records $N --mirror 2 --disks "$pat"
[ -e "$root/F.river.h5" ] && fail "a failed write of F left metadata"
[ "$(copies "$nodes" F)" = 0 ] && [ -z "$(find "$nodes" -name 'F.*')" ] \
  || fail "a failed write of F left files: $(find "$nodes" -name 'F.*' | head -n 3)"
RIVER_TEST_FAULT=commit-ship:kill rn 2 4 gen --force F --records $N --mirror 2 \
  --disks "$pat" >/dev/null 2>&1 && fail "gen F killed at commit-ship succeeded"
[ -e "$root/F.river.h5" ] && fail "a killed write of F left metadata"
[ -n "$(find "$nodes" -name 'F.*')" ] || fail "a write killed at commit-ship left no files (was it killed there?)"
for n in 2 1; do
  RIVER_NODE_NAME=river-node$n r 1 gc --remove --disks "$pat" >/dev/null 2>&1 \
    || fail "gc --remove on river-node$n after the kill"
done
[ -z "$(find "$nodes" "$root" -name 'F.*' -o -name '.F.*.write')" ] \
  || fail "gc left F's files: $(find "$nodes" "$root" -name 'F.*' -o -name '.F.*.write' | head -n 3)"

# --- A replacing write removes the old generation on every node.
old=$(find "$nodes" -name 'X.p0.*.rdat' | head -n 1 | sed 's/.*X\.p0\.\(.*\)\.rdat/\1/')
rn 2 4 gen --force X --records $N --mirror 2 --disks "$pat" >/dev/null \
  || fail "gen X again"
[ -z "$(find "$nodes" -name "X.*.$old.rdat")" ] \
  || fail "the old generation's files stay: $(find "$nodes" -name "X.*.$old.rdat" | head -n 2)"
[ "$(copies "$nodes" X)" = 8 ] || fail "X has $(copies "$nodes" X) files after the rewrite"

# A node-local collection replaced by one on the root's own disks: the
# old files go from both nodes.
rn 2 4 gen --force V --records 1000 --mirror 2 --disks "$pat" >/dev/null || fail "gen V node-local"
[ "$(copies "$nodes" V)" = 8 ] || fail "V has $(copies "$nodes" V) files, not 8"
rn 2 4 gen --force V --records 1000 --mirror 2 >/dev/null || fail "gen V shared"
[ "$(copies "$nodes" V)" = 0 ] || fail "V's node-local files stay after a shared rewrite"

# --- rm runs on one node and removes what it sees; gc --disks on the
# other node finds the rest as leftovers.
RIVER_NODE_NAME=river-node1 r 1 rm X >/dev/null 2>&1 || fail "rm X on river-node1"
[ -e "$root/X.river.h5" ] && fail "rm X left the metadata"
[ "$(copies "$nodes/river-node1" X)" = 0 ] || fail "rm X left files on river-node1"
[ "$(copies "$nodes/river-node2" X)" = 4 ] || fail "rm X on river-node1 touched river-node2"
RIVER_NODE_NAME=river-node2 r 1 gc --disks "$pat" >"$tmp/gc" 2>&1 || fail "gc on river-node2"
[ "$(grep -c 'X\.p[0-9]*\..*\.rdat .*data file' "$tmp/gc")" = 4 ] \
  || { fail "gc on river-node2 does not list X's 4 files"; cat "$tmp/gc"; }
RIVER_NODE_NAME=river-node2 r 1 gc --remove --disks "$pat" >/dev/null 2>&1 \
  || fail "gc --remove on river-node2"
[ "$(copies "$nodes" X)" = 0 ] || fail "X's files stay after gc --remove on river-node2"

# --- RIVER_DISKS is the default pattern; readers take it from the metadata.
RIVER_DISKS="$tmp/envd/%n/e%d" rn 2 2 gen --force Z --records 1000 >/dev/null \
  || fail "gen Z with RIVER_DISKS"
[ "$(copies "$tmp/envd/river-node1/e0" Z)" = 1 ] && [ "$(copies "$tmp/envd/river-node2/e1" Z)" = 1 ] \
  || fail "RIVER_DISKS: Z's files are not on their nodes"
rn 2 2 copy-out --force Z -o "$tmp/z.dat" || fail "copy-out Z"
cmp -s "$tmp/z.dat" <(head -c 100000 "$tmp/ref.dat") || fail "copy-out Z differs"

# --- Every copy of a partition on one node: written, with a warning.
RIVER_NODE_NAME=solo r 2 gen --force W --records 1000 --mirror 2 --disks '%n/w%d' \
  >/dev/null 2>"$tmp/err" || fail "gen W on one node"
grep -q "collection W: the 2 copies of 2 partitions (the first: partition 0, on node solo) are all on one node" \
  "$tmp/err" || fail "no warning that W's copies share a node"
[ "$(copies "$root/solo" W)" = 4 ] || fail "W has $(copies "$root/solo" W) files under ROOT/solo, not 4"

[ $fails -eq 0 ] && echo "PASS test_coll_nodes" || echo "$fails check(s) failed"
exit $((fails > 0))
