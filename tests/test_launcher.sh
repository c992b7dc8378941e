#!/bin/bash
# test_launcher - scripts/mpi-test-launch skips a test only when there is
# no MPI launcher at all; a launcher (or river-mpirun) that cannot start a
# job fails the test after a few tries, and a transient failure is retried.
# Each case runs the launcher script with MPIEXEC pointing at a fake
# launcher that fails its first FAKE_FAILS jobs, then runs the program.
set -u
# Its fake launchers are not Open MPI: emulated nodes do not apply.
unset RIVER_NODES
top=${top_srcdir:-.}
launch=$top/scripts/mpi-test-launch
tmp=$(mktemp -d "${TMPDIR:-/tmp}/river-launcher.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# The fake launcher counts its job starts in $FAKE_STATE.
cat >"$tmp/fake-mpirun" <<'EOF'
#!/bin/bash
case ${1:-} in --version) echo "fake launcher 1.0"; exit 0 ;; esac
n=$(cat "$FAKE_STATE" 2>/dev/null || echo 0)
echo $((n + 1)) >"$FAKE_STATE"
if [ "$n" -lt "$FAKE_FAILS" ]; then
  echo "fake launcher: cannot start job $((n + 1))" >&2
  exit 1
fi
[ "${1:-}" = -n ] && shift 2
exec "$@"
EOF
# The program under test leaves a mark when it runs.
cat >"$tmp/prog" <<EOF
#!/bin/sh
: >"$tmp/ran"
exit \${PROG_RC:-0}
EOF
chmod +x "$tmp/fake-mpirun" "$tmp/prog"

# run FAILS [LAUNCH]: run LAUNCH (default the real script) with the fake
# launcher failing FAILS times; sets rc, out, starts, ran.
run() {
  rm -f "$tmp/state" "$tmp/ran"
  out=$(FAKE_FAILS=$1 FAKE_STATE=$tmp/state MPIEXEC=$tmp/fake-mpirun \
        RIVER_PROBE_TRIES=3 RIVER_PROBE_PAUSE=1 \
        "${2:-$launch}" -n 1 -t 60 "$tmp/prog" 2>&1)
  rc=$?
  starts=$(cat "$tmp/state" 2>/dev/null || echo 0)
  ran=no
  [ -e "$tmp/ran" ] && ran=yes
}

# 1. No launcher at all: the one skip.
out=$(MPIEXEC=/nonexistent/mpirun "$launch" -n 1 -t 60 "$tmp/prog" 2>&1)
rc=$?
[ "$rc" -eq 77 ] || bad "no launcher: exit $rc, want 77: $out"
grep -q "SKIP: no MPI launcher" <<<"$out" || bad "no launcher: no SKIP line: $out"

# 2. A launcher that never starts a job: a hard error, not a skip, with
#    the probe's output, after 3 tries; the test is not run.
run 1000
{ [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; } || bad "broken launcher: exit $rc, want a failure: $out"
grep -q "fake launcher: cannot start job 3" <<<"$out" \
  || bad "broken launcher: probe output not shown: $out"
[ "$starts" -eq 3 ] || bad "broken launcher: $starts tries, want 3"
[ "$ran" = no ] || bad "broken launcher: the test ran"

# 3. A launcher that fails once, then works: retried, and the test runs.
run 1
[ "$rc" -eq 0 ] || bad "transient failure: exit $rc, want 0: $out"
grep -q "retrying" <<<"$out" || bad "transient failure: retry not said: $out"
[ "$starts" -eq 3 ] || bad "transient failure: $starts job starts, want 3 (2 probes, the test)"
[ "$ran" = yes ] || bad "transient failure: the test did not run"

# 4. A working launcher: the test's own exit status comes through.
PROG_RC=3 run 0
[ "$rc" -eq 3 ] || bad "failing test: exit $rc, want 3: $out"
[ "$ran" = yes ] || bad "failing test: it did not run"

# 5. A broken river-mpirun (River's own code) with a working launcher:
#    a failure too. The launcher script uses the river-mpirun beside it.
mkdir "$tmp/bin"
cp "$launch" "$tmp/bin/mpi-test-launch"
printf '#!/bin/sh\necho "river-mpirun: broken" >&2\nexit 1\n' >"$tmp/bin/river-mpirun"
chmod +x "$tmp/bin/mpi-test-launch" "$tmp/bin/river-mpirun"
run 0 "$tmp/bin/mpi-test-launch"
{ [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; } || bad "broken river-mpirun: exit $rc, want a failure: $out"
grep -q "river-mpirun: broken" <<<"$out" || bad "broken river-mpirun: output not shown: $out"
[ "$ran" = no ] || bad "broken river-mpirun: the test ran"

[ "$fail" -eq 0 ] && echo "PASS: test_launcher"
exit "$fail"
