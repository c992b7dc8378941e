#!/bin/bash
# test_coll_memory - a write's memory follows the data written, not the
# block size: `river gen` of 100 records with 1 GiB blocks and two
# copies per partition (it used to take 2.1 GB per rank) peaks within a
# few MiB of the same write with 4 KiB blocks, on 2 and 3 ranks; and both
# read back the same records. The peak resident memory of every rank
# comes from the tests/peak_rss.c shim (VmHWM at exit).
# Run by scripts/mpi-test-launch.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"

shim=${top_builddir:-.}/tests/.libs/peak_rss.so
[ -f "$shim" ] || { echo "FAIL: $shim not built"; exit 1; }

# peak N OUT ARGS...: river ARGS on N ranks; OUT gets the largest VmHWM
# (KiB) of its ranks.
peak() {
  local n=$1 out=$2; shift 2
  rm -f "$tmp/hwm"
  LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$shim" RIVER_TEST_PEAK_RSS="$tmp/hwm" \
    r "$n" "$@" >/dev/null || fail "river $* on $n ranks"
  [ "$(wc -l <"$tmp/hwm")" -eq "$n" ] \
    || fail "$n ranks' peaks expected in $tmp/hwm: $(cat "$tmp/hwm")"
  sort -n "$tmp/hwm" | tail -n 1 | cut -d' ' -f1 >"$out"
}

for n in $(ranks 2 3 4); do
  peak $n "$tmp/small" gen --force small$n --records 100 --block-size 4Ki --mirror 2 \
    --disks "$root/d%d"
  peak $n "$tmp/big" gen --force big$n --records 100 --block-size 1Gi --mirror 2 \
    --disks "$root/d%d"
  small=$(cat "$tmp/small") big=$(cat "$tmp/big")
  echo "$n ranks: peak $small KiB with 4 KiB blocks, $big KiB with 1 GiB blocks"
  [ $((big - small)) -lt 16384 ] \
    || fail "$n ranks: 1 GiB blocks took $(((big - small) / 1024)) MiB more"
  r $n copy-out --force small$n -o "$tmp/small.out" --disks "$root/d%d" \
    || fail "copy-out small$n"
  r $n copy-out --force big$n -o "$tmp/big.out" --disks "$root/d%d" \
    || fail "copy-out big$n"
  cmp -s "$tmp/small.out" "$tmp/big.out" \
    || fail "$n ranks: the 1 GiB-block collection reads back differently"
  [ "$(stat -c %s "$tmp/big.out")" -eq 10000 ] || fail "copy-out big$n size"
done

clitest_end test_coll_memory
