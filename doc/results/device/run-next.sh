#!/bin/bash
# The next device session for issue 13 (prepared in the sixth session,
# updated in the tenth; not run yet): the DQ overhead with page-aligned
# message buffers (d9a9647) and 2 posted receives per consumer (8f706a0)
# on 16 cores, 5 repeats at -n 16 with 2 posted and with all posted
# (RIVER_DQ_POSTED=0, the code before 8f706a0) interleaved, 1 x 1 with a
# CPU per rank, and the pure harness beside it. About 7 minutes of
# device time (-n 16 with 5 repeats took 106 s there).
# Here, after a build:
#   mpicc -O2 -Iinclude doc/results/dq-stream.c -o .devb/dq-stream \
#     -Lsrc/.libs -lriver -Wl,-rpath,/usr/local/lib
#   BUNDLE_EXTRA="/usr/bin/perf .devb/dq-stream" scripts/bench-bundle .devb/bundle.tar.xz
#   (.devb in .git/info/exclude; the device call carries it)
# There: bash doc/results/device/run-next.sh .devb/bundle.tar.xz $OUT
B=$(readlink -f "$1"); O=$2; mkdir -p "$O"
cd /tmp && rm -rf root && tar xJf "$B" && R=/tmp/root
{ date; nproc; lscpu; uname -a; } > "$O/machine.txt" 2>&1
for d in proc sys dev; do mount --bind /$d $R/$d || echo "mount $d failed"; done
ch() { local tl=$1; shift; timeout $tl chroot $R /usr/bin/env OMPI_MCA_plm_rsh_agent=/bin/false OMPI_ALLOW_RUN_AS_ROOT=1 TMPDIR=/tmp \
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mca_base_component_show_load_errors=0 LD_LIBRARY_PATH=/usr/local/lib "$@"; }
rb() { local tag=$1 n=$2 tl=$3; shift 3; echo "== $tag -n $n $* RIVER_DQ_POSTED=${P-} ($(date +%T))"
  ch $tl /usr/bin/env RIVER_DQ_POSTED=${P-} /usr/bin/mpirun --oversubscribe -n $n /usr/local/bin/river-bench "$@" --csv /out/$tag.csv 2>&1
  echo "rc=$? ($(date +%T))"; cp $R/out/$tag.csv "$O/" 2>/dev/null; }
st() { echo "$(ch 60 /usr/bin/mpirun --oversubscribe -n $1 /usr/local/bin/dq-stream $2 $3 4 2>&1 | tail -1)"; }
mkdir -p $R/out
{
P= rb dq-overhead-16core-posted2-r1 16 200 dq overhead --repeats 5
P=0 rb dq-overhead-16core-posted0-r2 16 200 dq overhead --repeats 5
P= rb dq-overhead-1x1-16core 2 120 dq overhead --repeats 5
for i in 1 2 3; do st 2 0 65536; st 2 1 65536; st 16 0 262144; st 16 1 262144; done
} 2>&1 | tee "$O/run.log" | grep -E '^==|^rc=|median|MB/s|rror'
for d in proc sys dev; do umount $R/$d; done
echo "done ($(date +%T))"
