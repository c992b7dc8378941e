#!/bin/bash
# A device session for issue 13's last missed point, GD lost >= 13/14 of
# the whole read in every one of 5 repeats (rewritten in the thirteenth
# session: the seventh session's split patch it used to carry landed as
# the lost disk's plan, f1cc135). On this 2-core VM every live disk is
# done at the fluid ideal and the last blocks' delivery tail (28 ranks
# on 2 cores) decides each repeat; the question is whether 28 ranks on
# 16 real cores meet it in every repeat. Three invocations of 5 repeats,
# then GD read with one disk at 10% once, as a check that nothing else
# moved. About 4 minutes of device time.
# Here, after a build of main:
#   scripts/bench-bundle .devb/bundle.tar.xz
#   (.devb in .git/info/exclude; the device call carries it)
# There: bash doc/results/device/run-next-gd.sh .devb $OUT
set -u
D=$(readlink -f "$1"); O=$2; mkdir -p "$O"
{ date; nproc; lscpu; uname -a; } > "$O/machine.txt" 2>&1
run() { local tag=$1; shift; echo "== $tag ($(date +%T))"
  RIVER_BENCH_VERBOSE=1 timeout 150 scripts/bench-chroot "$D/bundle.tar.xz" \
    "$O" "$@" --csv "/out/$tag.csv" > "$O/$tag.txt" 2>&1
  echo "rc=$? ($(date +%T))"; grep -E '^lost:|median' "$O/$tag.txt"; }
{
for i in 1 2 3; do
  run gd-lost-$i -n 28 gd lost --repeats 5
done
run gd-read-slow14 -n 28 gd read --perturb 'disk:0=0.1' --repeats 3
} 2>&1 | tee "$O/run.log"
echo "done ($(date +%T))"
