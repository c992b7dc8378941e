#!/bin/bash
# Device run 3: DQ overhead with the 1 ms spin default, a core per rank.
D=$(cd "$(dirname "$0")" && pwd)
O=$1; mkdir -p "$O"; Q=$2
cd /tmp && rm -rf root && tar xJf $D/root.tar.xz && R=/tmp/root
{ nproc; lscpu | grep -E 'Model name|^CPU\(s\)'; uname -r; echo "yama ptrace_scope: $(cat /proc/sys/kernel/yama/ptrace_scope 2>&1)"; } > "$O/machine.txt" 2>&1
for d in proc sys dev; do mount --bind /$d $R/$d; done
rb() { # tag ranks timelimit env... -- bench args
  local tag=$1 n=$2 tl=$3; shift 3; local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  echo "== $tag -n $n ${envs[*]} $* ($(date +%T))"
  local xs=(); for e in "${envs[@]}"; do xs+=(-x "${e%%=*}"); done
  timeout $tl chroot $R /usr/bin/env "${envs[@]}" OMPI_MCA_plm_rsh_agent=/bin/false OMPI_ALLOW_RUN_AS_ROOT=1 \
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mca_base_component_show_load_errors=0 LD_LIBRARY_PATH=/usr/local/lib \
    /usr/bin/mpirun --oversubscribe "${xs[@]}" -n $n /usr/local/bin/river-bench dq overhead --csv /out/$tag.csv "$@" > $O/$tag.log 2>&1
  echo "rc=$? ($(date +%T))"; grep -E "median|rror" $O/$tag.log | head -20; cp $R/out/$tag.csv "$O/" 2>/dev/null
}
rb cma-probe 2 40 OMPI_MCA_btl_vader_single_copy_mechanism=cma -- --message-size 1048576 --repeats 1
cat "$O/machine.txt"
if [ "$Q" = quick ]; then rb q 2 60 X=1 -- --message-size 65536 --repeats 1; else
rb dq-overhead-16core 16 280 X=1 -- --repeats 5
rb dq-overhead-1x1-16core 2 150 X=1 -- --repeats 5
fi
for d in proc sys dev; do umount $R/$d; done
echo "done ($(date +%T))"
