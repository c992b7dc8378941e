#!/bin/bash
# Device run 6 (issue 13, sixth session): 8 x 8 overhead with the
# consumer's posted DATA receives capped (RIVER_AB_POST, a temporary A/B
# hook in src/dq.c) against uncapped (credits x producers = 16),
# interleaved, two rounds. RIVER_AB_WIDTH=8 (temporary hook in
# apps/bench/bench_dq.c) runs only the 8 x 8 rows.
# The hooks are not in the tree (results.md: not kept). RIVER_AB_POST=N
# set q->nrslots = min(credits x producers, N) for PUSH/STATIC in
# alloc_buffers (src/dq.c; the ring kept credits x producers places);
# RIVER_AB_WIDTH=8 skipped the other width in exp_overhead. The first
# call ran rounds 1 2 with post16, post3 and post6; the second (this
# file as it stands) rounds 3 4 5 with post16 and post3.
#   run-session6b.sh BUNDLE.tar.xz OUTDIR [smoke]
B=$(readlink -f "$1"); O=$2; mkdir -p "$O"
cd /tmp && rm -rf root && tar xJf "$B" && R=/tmp/root
for d in proc sys dev; do mount --bind /$d $R/$d || echo "mount $d failed"; done
rb() { # tag post ranks timelimit bench-args...
  local tag=$1 post=$2 n=$3 tl=$4; shift 4
  echo "== $tag post=$post -n $n $* ($(date +%T))"
  timeout $tl chroot $R /usr/bin/env RIVER_AB_WIDTH=8 RIVER_AB_POST=$post OMPI_MCA_plm_rsh_agent=/bin/false OMPI_ALLOW_RUN_AS_ROOT=1 TMPDIR=/tmp \
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mca_base_component_show_load_errors=0 LD_LIBRARY_PATH=/usr/local/lib \
    /usr/bin/mpirun --oversubscribe -n $n /usr/local/bin/river-bench "$@" --csv /out/$tag.csv 2>&1
  echo "rc=$? ($(date +%T))"; cp $R/out/$tag.csv "$O/" 2>/dev/null
}
mkdir -p $R/out
{
if [ "${3:-}" = smoke ]; then rb smoke 3 16 100 dq overhead --message-size 262144 --repeats 1; else
for round in 1 2; do
  rb post16-r$round 0 16 70 dq overhead --repeats 3
  rb post3-r$round 3 16 70 dq overhead --repeats 3
  rb post6-r$round 6 16 70 dq overhead --repeats 3
done
fi
} 2>&1 | tee "$O/run.log" | grep -E '^==|^rc=|median|rror|skipped'
for d in proc sys dev; do umount $R/$d; done
echo "done ($(date +%T))"
