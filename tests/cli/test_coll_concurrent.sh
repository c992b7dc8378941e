#!/bin/sh
# test_coll_concurrent - a copy-out keeps reading the collection it
# opened while another job replaces it (gen) or removes it (rm) (see
# doc/collections.md, "Readers and concurrent writers"). The copy-out
# (1 rank, so it reads partition after partition of a collection written
# by 4) writes into a FIFO whose reader takes the first 64 KiB, lets the
# other job run to its end, then reads the rest: the output must equal a
# copy-out made before, byte for byte.
set -u
. "${srcdir:-.}/tests/cli/clitest.sh"

# slow_copy_out WHAT N ARGS...: copy-out x through the FIFO, running
# `river ARGS` on N ranks once the copy-out is under way.
slow_copy_out() {
  local what=$1 n=$2 pid; shift 2
  rm -f "$tmp/fifo" "$tmp/got"
  mkfifo "$tmp/fifo"
  r 1 copy-out x -o "$tmp/fifo" </dev/null 2>"$tmp/co.err" &
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
  r 4 gen x --records 40000 --mirror $mirror --block-size 65536 </dev/null \
    >/dev/null || fail "gen x (mirror $mirror)"
  r 1 copy-out x -o "$tmp/want" </dev/null || fail "copy-out x"
  slow_copy_out "gen during copy-out (mirror $mirror)" 4 \
    gen x --records 80000 --seed 9 --mirror $mirror
  # Now x is the second write: take its bytes, then remove it meanwhile.
  r 1 copy-out x -o "$tmp/want" </dev/null || fail "copy-out x (2)"
  slow_copy_out "rm during copy-out (mirror $mirror)" 1 rm x
  [ ! -e "$root/x.river.h5" ] || fail "rm x left the metadata"
done
clitest_end test_coll_concurrent
