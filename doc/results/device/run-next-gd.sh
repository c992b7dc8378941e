#!/bin/bash
# A device session for issue 13's GD lost target (prepared in the
# seventh session, not run yet): is the lost run's end imbalance (its
# 13 coupled disks ending 1-2 blocks of load apart, a fixed ~8 ms on
# the 2-core VM) smaller on 16 real cores, and do record-granular end
# pieces (doc/results/issue13-session7-split.patch, not landed) then
# meet lost / whole >= 13/14 in 5 of 5 repeats? Interleaved: today's
# library, the patched one with its last 8 blocks in pieces (GDS=8),
# twice each, 5 repeats a run. About 2-3 minutes of device time.
# Here, after a build of main:
#   git worktree add /tmp/splitwt HEAD && cd /tmp/splitwt &&
#     git apply doc/results/issue13-session7-split.patch &&
#     ./autogen.sh && ./configure && make -j2 src/libriver.la
#   mkdir -p .devb/split && cp -a /tmp/splitwt/src/.libs/libriver.so* .devb/split/
#   scripts/bench-bundle .devb/bundle.tar.xz
#   (.devb in .git/info/exclude; the device call carries it)
# There: bash doc/results/device/run-next-gd.sh .devb $OUT
D=$(readlink -f "$1"); O=$2; mkdir -p "$O"
cd /tmp && rm -rf root && tar xJf "$D/bundle.tar.xz" && R=/tmp/root
mkdir -p $R/usr/local/lib-split && cp -a "$D"/split/libriver.so* $R/usr/local/lib-split/
{ date; nproc; lscpu; uname -a; } > "$O/machine.txt" 2>&1
for d in proc sys dev; do mount --bind /$d $R/$d || echo "mount $d failed"; done
# ch LIBDIR GDS TIMEOUT cmd...: run in the root with that library first.
ch() { local lib=$1 gds=$2 tl=$3; shift 3; timeout $tl chroot $R /usr/bin/env \
    OMPI_MCA_plm_rsh_agent=/bin/false OMPI_ALLOW_RUN_AS_ROOT=1 TMPDIR=/tmp \
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mca_base_component_show_load_errors=0 \
    RIVER_BENCH_VERBOSE=1 GDS=$gds LD_LIBRARY_PATH=$lib:/usr/local/lib "$@"; }
rb() { local tag=$1 lib=$2 gds=$3; echo "== $tag ($(date +%T))"
  ch $lib $gds 150 /usr/bin/mpirun --oversubscribe -n 28 -x GDS -x LD_LIBRARY_PATH \
    -x RIVER_BENCH_VERBOSE /usr/local/bin/river-bench gd lost --repeats 5 \
    --csv /out/$tag.csv 2>&1
  echo "rc=$? ($(date +%T))"; cp $R/out/$tag.csv "$O/" 2>/dev/null; }
mkdir -p $R/out
{
for i in 1 2; do
  rb gd-lost-base-$i /usr/local/lib 0
  rb gd-lost-split8-$i /usr/local/lib-split 8
done
} 2>&1 | tee "$O/run.log" | grep -E '^==|^rc=|^lost|rror'
for d in proc sys dev; do umount $R/$d; done
echo "done ($(date +%T))"
