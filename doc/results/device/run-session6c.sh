#!/bin/bash
# Device run 7 (issue 13, sixth session): where the DQ's time goes on
# real cores where it misses 90% of raw: 1 x 1 at 64 KiB and 8 x 8 at
# 256 KiB. doc/results/dq-stream.c (mode 0 River reserve/commit, mode 1
# raw-hot) interleaved, then perf (cpu-clock sampling; the VM has no
# hardware counters) of each. Bundle: BUNDLE_EXTRA="/usr/bin/perf
# dq-stream" scripts/bench-bundle.
#   run-session6c.sh BUNDLE.tar.xz OUTDIR [smoke]
B=$(readlink -f "$1"); O=$2; mkdir -p "$O"; Q=${3:-}
cd /tmp && rm -rf root && tar xJf "$B" && R=/tmp/root
for d in proc sys dev; do mount --bind /$d $R/$d || echo "mount $d failed"; done
echo "perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid)"
ch() { local tl=$1; shift; timeout $tl chroot $R /usr/bin/env OMPI_MCA_plm_rsh_agent=/bin/false OMPI_ALLOW_RUN_AS_ROOT=1 TMPDIR=/tmp \
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mca_base_component_show_load_errors=0 LD_LIBRARY_PATH=/usr/local/lib "$@"; }
G=4; [ "$Q" = smoke ] && G=0.25
st() { ch 60 /usr/bin/mpirun --oversubscribe -n $1 /usr/local/bin/dq-stream $2 $3 $G 2>&1; }
pf() { # ranks mode msg tag: perf record on every rank, reports of ranks 0 and n/2
  local n=$1 half=$(( $1 / 2 ))
  ch 90 /usr/bin/mpirun --oversubscribe -n $n /bin/sh -c \
    "exec /usr/local/bin/perf record -q -e cpu-clock -F 4000 -o /tmp/p.\$OMPI_COMM_WORLD_RANK.data /usr/local/bin/dq-stream $2 $3 $G" 2>&1 | grep -v '^\[' 
  for r in 0 $half; do
    echo "---- $4 rank $r ($([ $r = 0 ] && echo producer || echo consumer)): by shared object"
    ch 60 /usr/local/bin/perf report -i /tmp/p.$r.data --stdio --sort dso 2>/dev/null | grep -v '^#' | grep -v '^$' | head -12
    echo "---- $4 rank $r: by symbol"
    ch 60 /usr/local/bin/perf report -i /tmp/p.$r.data --stdio --sort dso,sym 2>/dev/null | grep -v '^#' | grep -v '^$' | head -30
  done
}
{
for i in 1 2 3; do st 2 0 65536; st 2 1 65536; st 16 0 262144; st 16 1 262144; done
pf 2 0 65536 river-1x1-64k; pf 2 1 65536 raw-hot-1x1-64k
pf 16 0 262144 river-8x8-256k; pf 16 1 262144 raw-hot-8x8-256k
} > "$O/profile.txt" 2>&1
grep -E "MB/s|----|rror" "$O/profile.txt" | head -40
for d in proc sys dev; do umount $R/$d; done
echo "done ($(date +%T))"
