#!/bin/bash
# test_coll_streams - river copy-in from streams and copy-out to special
# files, at 1 and 3 ranks: copy-in from a pipe (/dev/stdin, -) and from a
# FIFO holds exactly the records sent, replaces an existing collection only
# when the input is whole, and a directory as input is an error naming it;
# copy-out -o to a character device writes through it (it stays a device),
# to a symbolic link writes the link's target (the link stays a link), to
# a FIFO hands the bytes to its reader. Run by scripts/mpi-test-launch.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
# cp_bg FROM TO: copy FROM to TO in the background, opening both inside a
# time limit, so a FIFO's other end never waits forever if river fails.
cp_bg() { timeout 60 sh -c 'cat "$1" >"$2"' sh "$1" "$2" & }

# same NRANKS COLL FILE WHAT: COLL read back equals FILE byte for byte.
same() {
  rm -f "$tmp/back"
  r "$1" copy-out --force "$2" -o "$tmp/back" </dev/null || { fail "$4: copy-out $2"; return; }
  cmp -s "$3" "$tmp/back" || fail "$4: $2 differs from what was sent"
}

n=10007   # not a multiple of 3: uneven partitions
r 3 gen --force src --records $n </dev/null >/dev/null || fail "gen src"
r 3 copy-out --force src -o "$tmp/src.dat" </dev/null || fail "copy-out src"
r 2 gen --force other --records 77 --seed 5 </dev/null >/dev/null || fail "gen other"
r 1 copy-out --force other -o "$tmp/other.dat" </dev/null || fail "copy-out other"

for np in 1 3; do
  # ------------------------------------------------------------ copy-in
  # From a pipe, over an existing collection, in both layouts.
  for lay in partitioned interleaved; do
    c=pipe_${np}_$lay
    r 1 copy-in --force "$tmp/other.dat" "$c" </dev/null >/dev/null || fail "copy-in $c"
    r_in pipe $np "$tmp/src.dat" copy-in --force /dev/stdin "$c" --layout $lay >"$tmp/out" \
      || fail "copy-in /dev/stdin $c ($np ranks)"
    grep -q "$n records" "$tmp/out" || fail "copy-in /dev/stdin $c: not $n records"
    same $np "$c" "$tmp/src.dat" "pipe, $np ranks, $lay"
  done
  # "-" is standard input, even when that is a regular file.
  r_in file $np "$tmp/src.dat" copy-in - dash_$np >/dev/null || fail "copy-in - ($np ranks)"
  same $np dash_$np "$tmp/src.dat" "stdin from a file, $np ranks"
  r_in file $np "$tmp/src.dat" copy-in --force /dev/stdin devstdin_$np >/dev/null \
    || fail "copy-in /dev/stdin <file ($np ranks)"
  same $np devstdin_$np "$tmp/src.dat" "/dev/stdin from a file, $np ranks"
  # From a FIFO, written by another process.
  rm -f "$tmp/fifo"; mkfifo "$tmp/fifo"
  cp_bg "$tmp/src.dat" "$tmp/fifo"
  r $np copy-in --force "$tmp/fifo" fifo_$np </dev/null >/dev/null || fail "copy-in FIFO ($np ranks)"
  wait $!
  same $np fifo_$np "$tmp/src.dat" "FIFO, $np ranks"
  # A pipe that ends inside a record: an error naming the input, and the
  # collection it would replace is untouched.
  c=torn_$np
  r 1 copy-in --force "$tmp/other.dat" "$c" </dev/null >/dev/null || fail "copy-in $c"
  head -c 1050 "$tmp/src.dat" >"$tmp/torn.dat"
  if r_in pipe $np "$tmp/torn.dat" copy-in --force /dev/stdin "$c" >/dev/null 2>"$tmp/err"; then
    fail "copy-in of 10.5 records from a pipe succeeded ($np ranks)"
  else
    grep -q "/dev/stdin: 1050 bytes is not a whole number of 100-byte records" \
      "$tmp/err" || fail "copy-in torn pipe: no message naming /dev/stdin"
  fi
  same $np "$c" "$tmp/other.dat" "torn pipe left $c ($np ranks)"
  [ -z "$(ls -A "$root" | grep copy-in)" ] || fail "copy-in left its staged copy"
  # A directory: an error naming it; the collection is untouched.
  c=dir_$np
  r 1 copy-in --force "$tmp/other.dat" "$c" </dev/null >/dev/null || fail "copy-in $c"
  mkdir -p "$tmp/adir"
  expect_fail $np "copy-in: $tmp/adir is a directory" copy-in --force "$tmp/adir" "$c"
  same $np "$c" "$tmp/other.dat" "directory input left $c ($np ranks)"

  # ----------------------------------------------------------- copy-out
  # A character device stays one: /dev/null, and (as root) a private
  # node of it that a rename could replace without harm.
  r $np copy-out --force src -o /dev/null </dev/null || fail "copy-out -o /dev/null ($np ranks)"
  [ -c /dev/null ] || fail "copy-out -o /dev/null: no longer a character device"
  rm -f "$tmp/null"
  if mknod "$tmp/null" c 1 3 2>/dev/null; then
    r $np copy-out --force src -o "$tmp/null" </dev/null || fail "copy-out -o a device ($np ranks)"
    [ -c "$tmp/null" ] || fail "copy-out -o a device node: no longer a device ($np ranks)"
  fi
  # A symbolic link stays a link and its target gets the data: absolute,
  # relative (from another directory) and dangling links.
  rm -rf "$tmp/l"; mkdir -p "$tmp/l/sub"
  echo old >"$tmp/l/target"
  ln -s "$tmp/l/target" "$tmp/l/abs"
  ln -s ../target "$tmp/l/sub/rel"
  ln -s "$tmp/l/missing" "$tmp/l/dangling"
  for link in abs sub/rel dangling; do
    tgt=$tmp/l/target; [ $link = dangling ] && tgt=$tmp/l/missing
    echo old >"$tmp/l/target"
    r $np copy-out --force src -o "$tmp/l/$link" </dev/null || fail "copy-out -o link $link ($np ranks)"
    [ -L "$tmp/l/$link" ] || fail "copy-out -o link $link: no longer a link ($np ranks)"
    cmp -s "$tmp/src.dat" "$tgt" || fail "copy-out -o link $link: target lacks the data ($np ranks)"
  done
  [ -z "$(ls "$tmp/l" "$tmp/l/sub" | grep river-tmp)" ] || fail "copy-out left a temporary"
  # A FIFO: its reader gets the bytes; it stays a FIFO.
  rm -f "$tmp/ofifo" "$tmp/got"; mkfifo "$tmp/ofifo"
  cp_bg "$tmp/ofifo" "$tmp/got"
  reader=$!
  r $np copy-out --force src -o "$tmp/ofifo" </dev/null || fail "copy-out -o FIFO ($np ranks)"
  # The reader ends at the writer's close; stop one left waiting.
  for _ in $(seq 50); do kill -0 $reader 2>/dev/null || break; sleep 0.1; done
  kill $reader 2>/dev/null
  wait $reader
  [ -p "$tmp/ofifo" ] || fail "copy-out -o FIFO: no longer a FIFO ($np ranks)"
  cmp -s "$tmp/src.dat" "$tmp/got" || fail "copy-out -o FIFO: reader got other bytes ($np ranks)"
  # A directory is refused, naming it.
  expect_fail $np "copy-out: $tmp/adir is a directory" copy-out --force src -o "$tmp/adir"
done

# Ranks waiting while rank 0 reads a slow stream back off: the writer
# opens the FIFO (which waits for rank 0 to open it, so every rank has
# started) and holds it 2 s before sending. Each rank's CPU time (user +
# sys, from bash's `time`) is compared with the most any rank used for
# the same copy-in from a regular file (start-up, MPI and sanitizer
# set-up included): the 2 s of waiting may add at most a quarter of its
# length. Load cannot shorten the wait (it starts once rank 0 has the
# FIFO open) nor add CPU time to a rank that sleeps, but the two jobs'
# start-ups can differ (ranks in MPI_Init wait for a late one): a
# comparison that fails is measured again, both jobs, up to 3 times. A
# rank that spins through the 2 s fails every time.
timed() { # RANKS ARGS...: river ARGS on RANKS ranks; "cpu U S wall R" lines in $tmp/err
  local n=$1; shift
  "$run" -n "$n" bash -c 'TIMEFORMAT="cpu %U %S wall %R"; time "$0" "$@" >/dev/null' \
    "$river" "$@" </dev/null 2>"$tmp/err"
}
for attempt in 1 2 3; do
  timed 3 copy-in --force "$tmp/src.dat" quick$attempt || fail "copy-in quick"
  base=$(awk '/^cpu / { c = $2 + $3; if (c > m) m = c } END { print m + 0 }' "$tmp/err")
  rm -f "$tmp/fifo"; mkfifo "$tmp/fifo"
  timeout 60 sh -c 'exec 3>"$2"; sleep 2; cat "$1" >&3' sh "$tmp/src.dat" "$tmp/fifo" &
  timed 3 copy-in --force "$tmp/fifo" slow$attempt || fail "copy-in slow FIFO"
  wait $!
  ntimes=0 over=
  while read -r _ u s _ w; do
    ntimes=$((ntimes + 1))
    awk -v u="$u" -v s="$s" -v w="$w" -v b="$base" \
      'BEGIN { exit !(w > 1.5 && u + s - b < 0.25 * 2.0) }' \
      || over="$over; a rank waiting 2 s for a slow stream used ${u}+${s} s of CPU in ${w} s (${base} s without the wait)"
  done < <(grep '^cpu ' "$tmp/err")
  [ $ntimes -eq 3 ] || fail "slow FIFO: $ntimes of 3 ranks reported their times"
  same 3 slow$attempt "$tmp/src.dat" "slow FIFO, 3 ranks"
  [ -z "$over" ] && break
  if [ $attempt -lt 3 ]; then
    echo "NOTE: attempt $attempt${over}: measuring again"
  else
    fail "in 3 attempts${over}"
  fi
done

clitest_end test_coll_streams
