#!/bin/bash
# Device run 4: the uniform-speed and lost-disk points of DQ read and GD on 16 cores.
D=$(cd "$(dirname "$0")" && pwd)
O=$1; mkdir -p "$O"; Q=$2
cd /tmp && rm -rf root && tar xJf $D/root.tar.xz && R=/tmp/root
{ nproc; lscpu | grep -E 'Model name|^CPU\(s\)'; uname -r; df -h /tmp | tail -1; } > "$O/machine.txt" 2>&1
cat "$O/machine.txt"
for d in proc sys dev; do mount --bind /$d $R/$d; done
rb() { # tag ranks timelimit bench-args...
  local tag=$1 n=$2 tl=$3; shift 3
  echo "== $tag -n $n $* ($(date +%T))"
  timeout $tl chroot $R /usr/bin/env OMPI_MCA_plm_rsh_agent=/bin/false OMPI_ALLOW_RUN_AS_ROOT=1 TMPDIR=/tmp \
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mca_base_component_show_load_errors=0 LD_LIBRARY_PATH=/usr/local/lib \
    /usr/bin/mpirun --oversubscribe -n $n /usr/local/bin/river-bench "$@" --csv /out/$tag.csv > $O/$tag.log 2>&1
  echo "rc=$? ($(date +%T))"; grep -E "median|rror" $O/$tag.log | tail -4; cp $R/out/$tag.csv "$O/" 2>/dev/null
}
if [ "$Q" = quick ]; then rb q 4 60 gd lost --repeats 1 --seconds 0.3; else
rb gd-lost 28 70 gd lost --repeats 5
rb gd-read-k0 28 40 gd read --perturb 'disk:0=1.0' --repeats 5
rb gd-read-k14 28 60 gd read --perturb 'disk:0-13=0.5' --repeats 5
rb dq-read-k0 30 35 dq read --perturb 'cpu:0=1.0' --repeats 5
rb dq-read-k15 30 60 dq read --perturb 'cpu:0-14=0.25' --repeats 5
fi
for d in proc sys dev; do umount $R/$d; done
echo "done ($(date +%T))"
