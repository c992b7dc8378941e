#!/bin/bash
# Device run 8 (issue 13, sixth session): the spin phase without
# sched_yield (RIVER_AB_NOYIELD=1, a temporary A/B hook in src/wait.c: B)
# against the yielding spin (A), interleaved: dq-stream (mode 0 River,
# mode 1 raw-hot) 1 x 1 64 KiB and 8 x 8 256 KiB, then river-bench dq
# overhead at 64 and 128 KiB (1 x 1, -n 2) and 256 KiB (8 x 8, -n 16).
# The hook is not in the tree (results.md: not kept): with it set,
# river__backoff's spin phase skipped sched_yield and read the clock
# every 16th call. dq-stream was built against that libriver.
#   run-session6d.sh BUNDLE.tar.xz OUTDIR [smoke]
B=$(readlink -f "$1"); O=$2; mkdir -p "$O"; Q=${3:-}
cd /tmp && rm -rf root && tar xJf "$B" && R=/tmp/root
for d in proc sys dev; do mount --bind /$d $R/$d || echo "mount $d failed"; done
ch() { local tl=$1; shift; timeout $tl chroot $R /usr/bin/env OMPI_MCA_plm_rsh_agent=/bin/false OMPI_ALLOW_RUN_AS_ROOT=1 TMPDIR=/tmp \
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mca_base_component_show_load_errors=0 LD_LIBRARY_PATH=/usr/local/lib "$@"; }
G=4; RP=3; [ "$Q" = smoke ] && G=0.25 && RP=1
st() { echo "$1 $(ch 60 $2 /usr/bin/mpirun --oversubscribe -n $3 /usr/local/bin/dq-stream $4 $5 $G 2>&1 | tail -1)"; }
ob() { echo "== overhead $1 -n $3 $4"; ch 90 $2 /usr/bin/mpirun --oversubscribe -n $3 /usr/local/bin/river-bench dq overhead --message-size $4 --repeats $RP --csv /out/ov-$1-$3-$4.csv 2>&1 | grep median; cp $R/out/ov-$1-$3-$4.csv "$O/" 2>/dev/null; }
mkdir -p $R/out
{
for i in 1 2 3 4; do
  st A X=1 2 0 65536; st B RIVER_AB_NOYIELD=1 2 0 65536; st raw X=1 2 1 65536
  st A X=1 16 0 262144; st B RIVER_AB_NOYIELD=1 16 0 262144; st raw X=1 16 1 262144
done
for s in 65536 131072; do ob A X=1 2 $s; ob B RIVER_AB_NOYIELD=1 2 $s; done
ob A X=1 16 262144; ob B RIVER_AB_NOYIELD=1 16 262144
} 2>&1 | tee "$O/run.log"
for d in proc sys dev; do umount $R/$d; done
echo "done ($(date +%T))"
