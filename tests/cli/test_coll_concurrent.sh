#!/bin/sh
# test_coll_concurrent - River's readers keep reading the collection they
# opened while another job replaces it (gen) or removes it (rm) (see
# doc/collections.md, "Readers and concurrent writers"), each rank
# holding only the files it reads.
#
# First a copy-out on 1 rank (so it reads partition after partition of
# a collection written by 4) writes into a FIFO whose reader takes the
# first 64 KiB, lets the other job run to its end, then reads the rest:
# the output must equal a copy-out made before, byte for byte.
#
# Then each reader on 4 ranks is held where every rank has opened what
# it reads (RIVER_TEST_FAULT=reader-held), the other job runs, and the
# reader goes on: copy-out (GD) gives the old bytes, fsck finds the old
# collection whole, sort (its input read by the flow's coll_read) sorts
# the old records, valsort (which holds the partitions of its share)
# counts the old ones.
set -u
. "${srcdir:-.}/tests/cli/clitest.sh"

# slow_copy_out WHAT N ARGS...: copy-out x through the FIFO, running
# `river ARGS` on N ranks once the copy-out is under way.
slow_copy_out() {
  local what=$1 n=$2 pid; shift 2
  rm -f "$tmp/fifo" "$tmp/got"
  mkfifo "$tmp/fifo"
  r 1 copy-out --force x -o "$tmp/fifo" </dev/null 2>"$tmp/co.err" &
  pid=$!
  exec 3<"$tmp/fifo"
  # Once 64 KiB came through, the copy-out has opened x.
  dd bs=65536 count=1 iflag=fullblock status=none <&3 >"$tmp/got"
  r "$n" "$@" </dev/null >/dev/null 2>"$tmp/other.err" \
    || { fail "$what: river $* failed"; cat "$tmp/other.err"; }
  cat <&3 >>"$tmp/got"
  exec 3<&-
  wait $pid || { fail "$what: copy-out failed"; head -n 5 "$tmp/co.err"; }
  cmp -s "$tmp/want" "$tmp/got" \
    || fail "$what: copy-out gave other bytes ($(wc -c <"$tmp/got") of $(wc -c <"$tmp/want"))"
}

for mirror in 1 2; do
  r 4 gen --force x --records 40000 --mirror $mirror --block-size 65536 </dev/null \
    >/dev/null || fail "gen x (mirror $mirror)"
  r 1 copy-out --force x -o "$tmp/want" </dev/null || fail "copy-out x"
  slow_copy_out "gen during copy-out (mirror $mirror)" 4 \
    gen --force x --records 80000 --seed 9 --mirror $mirror
  # Now x is the second write: take its bytes, then remove it meanwhile.
  r 1 copy-out --force x -o "$tmp/want" </dev/null || fail "copy-out x (2)"
  slow_copy_out "rm during copy-out (mirror $mirror)" 1 rm x
  [ ! -e "$root/x.river.h5" ] || fail "rm x left the metadata"
done

# held WHAT N READ... -- M CHANGE...: `river READ...` on N ranks, held
# once every rank has opened the files it holds (the step reader-held,
# at the end of the open that reads); meanwhile `river CHANGE...` on M
# ranks; then the reader goes on. Its output in $tmp/held.out.
held() {
  local what=$1 n=$2 pid i; shift 2
  local -a read=()
  while [ "$1" != -- ]; do read+=("$1"); shift; done
  shift
  local m=$1; shift
  rm -f "$tmp/at"
  : >"$tmp/hold"
  RIVER_TEST_FAULT="reader-held:touch=$tmp/at,reader-held:wait=$tmp/hold" \
    "$run" -n "$n" "$river" "${read[@]}" </dev/null >"$tmp/held.out" \
    2>"$tmp/held.err" &
  pid=$!
  for i in $(seq 1 2400); do
    [ -e "$tmp/at" ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.05
  done
  [ -e "$tmp/at" ] || fail "$what: river ${read[*]} never held its files"
  r "$m" "$@" </dev/null >/dev/null 2>"$tmp/other.err" \
    || { fail "$what: river $* failed"; head -n 5 "$tmp/other.err"; }
  rm -f "$tmp/hold"
  wait $pid || { fail "$what: river ${read[*]} failed"; head -n 5 "$tmp/held.err"; }
}

# gone WHAT NAME: no data file of NAME's generation GEN ($gen) is left.
gone() {
  [ -n "$gen" ] || fail "$1: no generation of $2 found"
  ! ls "$root"/disk*/"$2".p*."$gen".rdat >/dev/null 2>&1 \
    || fail "$1: the old files of $2 are still there (the test tests nothing)"
}

# gen_of NAME: the generation of NAME's data files.
gen_of() {
  ls "$root"/disk*/"$1".p*.rdat | head -n 1 \
    | sed 's/.*\.p[0-9]*\.\([0-9a-f]*\)\.rdat$/\1/'
}

for mirror in 1 2; do
  r 4 gen --force x --records 40000 --mirror $mirror --block-size 65536 </dev/null \
    >/dev/null || fail "gen x (mirror $mirror)"
  r 4 copy-out --force x -o "$tmp/want" </dev/null || fail "copy-out x (4 ranks)"
  gen=$(gen_of x)
  held "copy-out on 4 ranks during gen (mirror $mirror)" 4 \
    copy-out --force x -o "$tmp/got4" -- 4 gen --force x --records 30000 --seed 5 --mirror $mirror
  gone "copy-out during gen" x
  cmp -s "$tmp/want" "$tmp/got4" \
    || fail "copy-out on 4 ranks during gen (mirror $mirror) gave other bytes"
  r 4 copy-out --force x -o "$tmp/want" </dev/null || fail "copy-out x (4 ranks, 2)"
  gen=$(gen_of x)
  held "copy-out on 4 ranks during rm (mirror $mirror)" 4 \
    copy-out --force x -o "$tmp/got4" -- 1 rm x
  gone "copy-out during rm" x
  cmp -s "$tmp/want" "$tmp/got4" \
    || fail "copy-out on 4 ranks during rm (mirror $mirror) gave other bytes"
done

# fsck during rm: the copies it verifies are those it holds.
r 4 gen --force x --records 40000 --mirror 2 --block-size 65536 </dev/null >/dev/null \
  || fail "gen x (fsck)"
gen=$(gen_of x)
held "fsck during rm" 4 fsck x -- 1 rm x
gone "fsck during rm" x
grep -q "^fsck x: OK: 4 partitions, 8 copies, every block verified" \
  "$tmp/held.out" || fail "fsck during rm: $(tail -n 1 "$tmp/held.out")"

# sort during gen: it sorts the records it opened (the same as a sort
# of them made before); valsort during rm counts the records it opened.
r 4 gen --force x --records 40000 --mirror 2 --block-size 65536 </dev/null >/dev/null \
  || fail "gen x (sort)"
r 4 sort x ref </dev/null >/dev/null || fail "sort x ref"
r 4 copy-out --force ref -o "$tmp/want" </dev/null || fail "copy-out ref"
gen=$(gen_of x)
held "sort during gen" 4 sort x y -- 4 gen --force x --records 30000 --seed 7
gone "sort during gen" x
r 4 copy-out --force y -o "$tmp/got4" </dev/null || fail "copy-out y"
cmp -s "$tmp/want" "$tmp/got4" || fail "sort during gen sorted other records"
r 4 valsort y </dev/null >"$tmp/vs.want" || fail "valsort y"
gen=$(gen_of y)
held "valsort during rm" 4 valsort y -- 1 rm y
gone "valsort during rm" y
cmp -s "$tmp/vs.want" "$tmp/held.out" \
  || fail "valsort during rm: $(head -n 1 "$tmp/held.out"), not $(head -n 1 "$tmp/vs.want")"
clitest_end test_coll_concurrent
