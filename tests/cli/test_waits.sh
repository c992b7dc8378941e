#!/bin/bash
# test_waits - waits River controls end, with a message saying what they
# waited for (issue 33, findings 6 and 7):
#  * the node's window lock (Open MPI < 5, src/rma.c): held by another
#    process (flock(1), as rma.c locks it), a 3-rank sort gives up after
#    RIVER_WIN_LOCK_TIMEOUT seconds on every rank, naming the lock file
#    and its holder; a symbolic link or a file others may write planted
#    at the lock's path is refused, and the link's target is unchanged.
#    The lock lives in RIVER_WIN_LOCK_DIR here, a directory of the
#    test's, so other jobs of this user on the node are not held up.
#  * the watchdog (river --timeout, RIVER_TIMEOUT): one rank of a 3-rank
#    sort SIGSTOPped mid-flow, the job ends within the timeout and a
#    margin, non-zero, with a message naming that rank; a bad
#    RIVER_TIMEOUT is refused.
# Each run is bounded (timeout(1)), so a hang fails the check rather
# than the whole test at the launcher's limit. Run by
# scripts/mpi-test-launch.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"

uid=$(id -u)
export OMPI_MCA_odls_base_sigkill_timeout=${OMPI_MCA_odls_base_sigkill_timeout:-0}

# bounded SECONDS NRANKS ARGS...: river ARGS on NRANKS ranks, killed
# after SECONDS; stdout in $tmp/out, stderr in $tmp/err, the status in
# $st and the time taken in $took (whole seconds).
bounded() {
  local s=$1 n=$2 t0; shift 2
  t0=$(date +%s)
  timeout -k 5 "$s" "$run" -n "$n" "$river" "$@" </dev/null \
    >"$tmp/out" 2>"$tmp/err"
  st=$?
  took=$(( $(date +%s) - t0 ))
}

N=200000
r 3 gen --force in --records $N --seed 7 >/dev/null 2>&1 || fail "gen in"

# ------------------------------------------------------ the window lock
ompi=$(ompi_info --version 2>/dev/null | sed -n 's/^Open MPI v\([0-9]*\).*/\1/p')
if [ -n "$ompi" ] && [ "$ompi" -lt 5 ]; then
  # Held by another process: every rank fails within the bound.
  lk=$tmp/lock-held
  mkdir -p "$lk"
  lock=$lk/river-win-$uid.lock
  flock "$lock" sleep 120 &
  holder=$!
  for _ in $(seq 50); do [ -e "$lock" ] && break; sleep 0.1; done
  sleep 0.3
  RIVER_WIN_LOCK_DIR=$lk RIVER_WIN_LOCK_TIMEOUT=2 bounded 60 3 sort in o1
  kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
  if [ "$st" -eq 0 ]; then
    fail "sort with the window lock held succeeded"
  elif [ "$st" -eq 124 ] || [ "$st" -eq 137 ]; then
    fail "sort with the window lock held hung (killed after 60 s)"
  else
    grep -q "gave up after [0-9.]* s waiting for the node's window lock $lock (held by pid [0-9]*" "$tmp/err" \
      || { fail "lock held: no message naming $lock and its holder"; head -n 5 "$tmp/err"; }
    c=$(grep -c "sort failed" "$tmp/err")
    [ "$c" -eq 1 ] || fail "lock held: $c closing lines, not 1"
    [ "$took" -le 30 ] || fail "lock held: took $took s (RIVER_WIN_LOCK_TIMEOUT=2)"
  fi

  # A symbolic link at the lock's path: refused, its target unchanged.
  lk=$tmp/lock-link
  mkdir -p "$lk"
  printf 'not yours\n' >"$tmp/victim"
  cp "$tmp/victim" "$tmp/victim.want"
  ln -s "$tmp/victim" "$lk/river-win-$uid.lock"
  RIVER_WIN_LOCK_DIR=$lk bounded 60 3 sort in o2
  [ "$st" -ne 0 ] || fail "sort with a link at the lock's path succeeded"
  grep -q "the lock file $lk/river-win-$uid.lock is a symbolic link: refusing it" "$tmp/err" \
    || { fail "lock link: no refusal naming the file"; head -n 5 "$tmp/err"; }
  c=$(grep -c "sort failed" "$tmp/err")
  [ "$c" -eq 1 ] || fail "lock link: $c closing lines, not 1"
  cmp -s "$tmp/victim" "$tmp/victim.want" || fail "lock link: the link's target changed"
  # ... and a dangling one: its target is not created.
  lk=$tmp/lock-dangling
  mkdir -p "$lk"
  ln -s "$tmp/victim-absent" "$lk/river-win-$uid.lock"
  RIVER_WIN_LOCK_DIR=$lk bounded 60 3 sort in o2b
  [ "$st" -ne 0 ] || fail "sort with a dangling link at the lock's path succeeded"
  [ ! -e "$tmp/victim-absent" ] || fail "lock link: the dangling link's target was created"

  # A lock file others may write: refused.
  lk=$tmp/lock-mode
  mkdir -p "$lk"
  : >"$lk/river-win-$uid.lock"
  chmod 666 "$lk/river-win-$uid.lock"
  RIVER_WIN_LOCK_DIR=$lk bounded 60 3 sort in o3
  [ "$st" -ne 0 ] || fail "sort with a world-writable lock file succeeded"
  grep -q "the lock file $lk/river-win-$uid.lock is not a regular file of this user's" "$tmp/err" \
    || { fail "lock mode: no refusal naming the file"; head -n 5 "$tmp/err"; }

  # A lock file of its own: the sort runs.
  lk=$tmp/lock-ok
  mkdir -p "$lk"
  RIVER_WIN_LOCK_DIR=$lk bounded 120 3 sort in o4
  [ "$st" -eq 0 ] || { fail "sort with a free lock failed"; head -n 5 "$tmp/err"; }
  [ -f "$lk/river-win-$uid.lock" ] || fail "no lock file in RIVER_WIN_LOCK_DIR"
  [ "$(stat -c %a "$lk/river-win-$uid.lock")" = 600 ] || fail "lock file not mode 600"
else
  echo "SKIP: the window lock checks (Open MPI ${ompi:-?} has no window lock)"
fi

# ------------------------------------------------------------ the watchdog
# pid_of RANK: the pid of this test's river process of world rank RANK
# (found by the marker in its environment), or nothing.
mark=RIVER_TEST_MARK=$tmp
pid_of() {
  local p
  for p in $(pgrep -x river); do
    { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null >"$tmp/env" || continue
    grep -qx "$mark" "$tmp/env" && grep -qx "OMPI_COMM_WORLD_RANK=$1" "$tmp/env" \
      && { echo "$p"; return; }
  done
}

# frozen HOW OUT ARGS...: river ARGS (a 3-rank sort into OUT, about 7 s
# with these emulated disks) with rank 1 SIGSTOPped mid-flow (its write
# stage has made its file for OUT, then 1 s more): the job ends about the
# timeout (3 s) after, non-zero, naming rank 1. HOW names the run.
frozen() {
  local how=$1 out=$2 job pid= t0 took; shift 2
  rm -f "$tmp/st"
  ( env "$mark" "$run" -n 3 "$river" "$@" </dev/null >"$tmp/out" \
      2>"$tmp/err"; echo $? >"$tmp/st" ) &
  job=$!
  for _ in $(seq 100); do
    pid=$(pid_of 1)
    [ -n "$pid" ] && break
    sleep 0.1
  done
  if [ -z "$pid" ]; then
    fail "watchdog ($how): rank 1's process not found"
  else
    for _ in $(seq 300); do
      [ -n "$(find "$root" -name "$out.p*" 2>/dev/null)" ] && break
      sleep 0.1
    done
    sleep 1
    kill -STOP "$pid"
    t0=$(date +%s)
    while [ ! -s "$tmp/st" ] && [ $(( $(date +%s) - t0 )) -lt 40 ]; do
      sleep 0.2
    done
    took=$(( $(date +%s) - t0 ))
    if [ ! -s "$tmp/st" ]; then
      fail "watchdog ($how): the job with rank 1 stopped still runs after $took s"
      kill -KILL "$pid" 2>/dev/null
    else
      [ "$(cat "$tmp/st")" = 124 ] || fail "watchdog ($how): the job exited $(cat "$tmp/st"), not 124"
      [ "$took" -le 15 ] || fail "watchdog ($how): ended $took s after the stop (timeout 3 s)"
      grep -Eq "no progress for 3 s \(RIVER_TIMEOUT, river --timeout\): .*, from world ranks? ([0-9]+, )*1(, [0-9]+)*; giving up" "$tmp/err" \
        || { fail "watchdog ($how): no message naming rank 1"; head -n 8 "$tmp/err"; }
      grep -q "aborting the job" "$tmp/err" || fail "watchdog ($how): the job was not aborted"
      # Each rank named once, never the one that says it.
      grep -E "^river\[[0-9]+\] error: no progress for" "$tmp/err" \
        | sed -E 's/^river\[([0-9]+)\].*from world ranks? ([0-9, .]*);.*/\1 \2/' \
        | while read -r me others; do
            dup=$(echo "$others" | tr -d ' .' | tr ',' '\n' | sed '/^$/d' | sort | uniq -d)
            echo "$others" | tr -d ' .' | tr ',' '\n' | grep -qx "$me" \
              && echo "rank $me names itself: $others"
            [ -n "$dup" ] && echo "rank $me names a rank twice: $others"
          done >"$tmp/names"
      [ -s "$tmp/names" ] && fail "watchdog ($how): $(head -n 1 "$tmp/names")"
    fi
  fi
  kill -CONT "$pid" 2>/dev/null
  wait "$job" 2>/dev/null
}
RIVER_TIMEOUT=3 frozen RIVER_TIMEOUT fa sort in fa --disk-rate 2Mi
frozen --timeout fb --timeout 3 sort in fb --disk-rate 2Mi

# The same job with no rank stopped and the watchdog on: it succeeds.
bounded 120 3 sort in o6 --timeout 3 --disk-rate 2Mi
[ "$st" -eq 0 ] || { fail "watchdog: a healthy sort with --timeout 3 failed"; head -n 5 "$tmp/err"; }

# A bad value is refused by every rank, before anything runs.
RIVER_TIMEOUT=soon bounded 60 2 ls
[ "$st" -ne 0 ] || fail "RIVER_TIMEOUT=soon accepted"
grep -q "RIVER_TIMEOUT=soon: expected seconds" "$tmp/err" || fail "RIVER_TIMEOUT=soon: no message"

clitest_end test_waits
