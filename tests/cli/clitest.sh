# clitest.sh - what the shell tests of the river command share. Sourced
# by tests/cli/test_*.sh (after `set -u`); they are run by
# scripts/mpi-test-launch, which sets $RIVER_MPIRUN. Gives: $run (the
# launcher), $river (the program), $tmp (a directory removed at exit),
# $root (exported as RIVER_ROOT, under $tmp), and the helpers below.
run=${RIVER_MPIRUN:?run me through scripts/mpi-test-launch}
river=${top_builddir:-.}/apps/river
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
export RIVER_ROOT=$root
fails=0

# ranks N...: the rank counts to loop over: all of them, or with
# RIVER_TEST_QUICK=1 (.ci/run's sanitizer pass, where every job is several
# times slower) only the first and the last.
ranks() {
  if [ "${RIVER_TEST_QUICK:-0}" = 1 ] && [ $# -gt 2 ]; then
    echo "$1 ${@: -1}"
  else
    echo "$@"
  fi
}

# total PREFIX: "RECORDS SUM XOR" over the files the count module wrote,
# PREFIX.0, PREFIX.1, ... (lines "STAGE INSTANCE RECORDS SUM XOR", hex
# digests; 64-bit arithmetic), or "none" if there is none.
total() {
  local n=0 s=0 x=0 stage inst recs sum xr f
  for f in "$1".[0-9]*; do
    [ -e "$f" ] || { echo "none"; return; }
    read -r stage inst recs sum xr <"$f" || return
    n=$((n + recs)); s=$((s + 16#$sum)); x=$((x ^ 16#$xr))
  done
  echo "$n $s $x"
}

# fail WHAT: count a failed check and say what failed.
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# r NRANKS ARGS...: river ARGS on NRANKS ranks, its stderr passed on
# (after it ends). A run that succeeds must not log an error: one that
# does is noted in $tmp/said_error (r may run in a pipeline's subshell)
# and fails the test at clitest_end, unless the call is marked
# CLITEST_ALLOW_ERROR=1 (a command that succeeds while it reports what
# it could not read, as ls does of damaged metadata).
r() {
  local n=$1 rc e; shift
  e=$(mktemp "$tmp/r_err.XXXXXX")
  "$run" -n "$n" "$river" "$@" 2>"$e"; rc=$?
  cat "$e" >&2
  if [ $rc -eq 0 ] && [ "${CLITEST_ALLOW_ERROR:-0}" != 1 ] \
     && grep -q '^river\[[0-9-]*\] error:' "$e"; then
    { echo "river $* succeeded, but logged an error:"
      grep -m 2 '^river\[[0-9-]*\] error:' "$e"; } >>"$tmp/said_error"
  fi
  rm -f "$e"
  return $rc
}

# r_in pipe|file NRANKS FILE ARGS...: river ARGS on NRANKS ranks with
# FILE on its standard input, through a pipe (cat FILE |) or redirected
# (<FILE); the launcher forwards it to rank 0. Open MPI 4.1's mpirun can
# itself crash while forwarding standard input (SIGSEGV in
# orte_iof_hnp_read_local_handler, open-mpi/ompi#7483; once in a .ci/run
# under load): such a job, and only such a job, runs once more, with a
# NOTE saying so. Its stderr is passed on.
r_in() {
  local how=$1 n=$2 f=$3 try rc=0; shift 3
  for try in 1 2; do
    if [ "$how" = pipe ]; then
      cat "$f" | r "$n" "$@" 2>"$tmp/r_in.err"; rc=$?
    else
      r "$n" "$@" <"$f" 2>"$tmp/r_in.err"; rc=$?
    fi
    [ $rc -ne 0 ] && grep -q orte_iof_hnp_read_local_handler "$tmp/r_in.err" \
      || break
    echo "NOTE: mpirun crashed forwarding standard input (open-mpi/ompi#7483); try $try of 2"
  done
  cat "$tmp/r_in.err" >&2
  return $rc
}

# expect_fail NRANKS PATTERN ARGS...: the command fails, and its stderr
# matches PATTERN (grep -E). Its stdin is /dev/null, its output in
# $tmp/out and $tmp/err.
expect_fail() {
  local n=$1 pat=$2 cmd; shift 2
  cmd="river $*"; cmd=${cmd:0:100}
  if r "$n" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"; then
    fail "$cmd succeeded"
  elif ! grep -Eq -e "$pat" "$tmp/err"; then
    fail "$cmd: no message matching /$pat/"
    cut -c1-200 "$tmp/err" | sed 's/^/    /' | head -n 8
  fi
}

# flip FILE OFFSET: xor the byte at OFFSET of FILE with 0xff.
flip() {
  local b
  b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "\\$(printf '%03o' $((b ^ 255)))" \
    | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# part_file COLL PARTITION DISK: the path of that partition's copy on disk
# DISK (default disk pattern).
part_file() {
  ls "$root/disk$3/$1.p$2."*.rdat
}

# clitest_end NAME: the verdict, and the exit status that goes with it.
clitest_end() {
  if [ -s "$tmp/said_error" ]; then
    sed 's/^/FAIL: /' "$tmp/said_error" | head -n 20
    fails=$((fails + $(grep -c ' succeeded, but logged an error:' "$tmp/said_error")))
  fi
  if [ "$fails" -eq 0 ]; then echo "PASS: $1"; exit 0; fi
  echo "FAIL: $1 ($fails failed checks)"; exit 1
}
