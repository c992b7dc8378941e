#!/bin/bash
# Device run 5 (issue 13, sixth session, at f623e77: dormant PUSH):
# DQ read at k = 0 and k = 15 (River against static on real cores), the
# DQ overhead with raw-wide at 8 x 8 (does raw MPI with the queue's
# working set lose what the queue loses?), 8 x 8 with one credit, and
# 1 x 1 with a CPU per rank. Bundle from scripts/bench-bundle.
#   run-session6.sh BUNDLE.tar.xz OUTDIR [smoke]
B=$(readlink -f "$1"); O=$2; mkdir -p "$O"
cd /tmp && rm -rf root && tar xJf "$B" && R=/tmp/root
{ date; nproc; lscpu; uname -a; free -g; } > "$O/machine.txt" 2>&1
grep -E 'Model name|^CPU\(s\)|L2|L3|Hypervisor' "$O/machine.txt"; uname -r
for d in proc sys dev; do mount --bind /$d $R/$d || echo "mount $d failed"; done
rb() { # tag ranks timelimit bench-args...
  local tag=$1 n=$2 tl=$3; shift 3
  echo "== $tag -n $n $* ($(date +%T))"
  timeout $tl chroot $R /usr/bin/env OMPI_MCA_plm_rsh_agent=/bin/false OMPI_ALLOW_RUN_AS_ROOT=1 TMPDIR=/tmp \
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mca_base_component_show_load_errors=0 LD_LIBRARY_PATH=/usr/local/lib \
    /usr/bin/mpirun --oversubscribe -n $n /usr/local/bin/river-bench "$@" --csv /out/$tag.csv 2>&1
  echo "rc=$? ($(date +%T))"; cp $R/out/$tag.csv "$O/" 2>/dev/null
}
mkdir -p $R/out
{
if [ "${3:-}" = smoke ]; then rb smoke 2 60 dq overhead --message-size 65536 --repeats 1; else
rb dq-overhead-16core 16 200 dq overhead --repeats 5
rb dq-read-k0 30 50 dq read --perturb 'cpu:0=1.0' --repeats 5
rb dq-read-k15 30 75 dq read --perturb 'cpu:0-14=0.25' --repeats 5
rb dq-overhead-c1-256k 16 50 dq overhead --credits 1 --message-size 262144 --repeats 5
rb dq-overhead-1x1-16core 2 90 dq overhead --repeats 5
fi
} 2>&1 | tee "$O/run.log" | grep -E '^==|^rc=|median|rror|skipped'
for d in proc sys dev; do umount $R/$d; done
echo "done ($(date +%T))"
