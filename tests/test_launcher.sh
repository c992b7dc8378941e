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

# 6. river-mpirun gives each Open MPI job a session directory of its own
#    (two jobs starting at once in one TMPDIR/ompi.HOST.UID can fail,
#    open-mpi/ompi#8510; test_coll_commit starts two at once): the job
#    sees OMPI_MCA_orte_tmpdir_base under TMPDIR/river-mpirun.HOST.PID.*,
#    the directory is gone when it ends, a dead job's of this host is
#    swept, a live one's and another host's (a shared TMPDIR) kept, and
#    one the user set is left alone.
cat >"$tmp/fake-ompi" <<'EOF2'
#!/bin/bash
case ${1:-} in --version) echo "mpirun (Open MPI) 4.1.4"; exit 0 ;; esac
while [ "${1:-}" != "${1#-}" ]; do
  case $1 in -n|-np|-x) shift 2 ;; *) shift ;; esac
done
exec "$@"
EOF2
cat >"$tmp/show-base" <<EOF2
#!/bin/sh
echo "\$OMPI_MCA_orte_tmpdir_base" >"$tmp/base"
[ -d "\$OMPI_MCA_orte_tmpdir_base" ] && echo yes >"$tmp/existed"
exit 0
EOF2
chmod +x "$tmp/fake-ompi" "$tmp/show-base"
mkdir "$tmp/t"
host=$(uname -n)
mkdir "$tmp/t/river-mpirun.$host.999999999.dead1" \
      "$tmp/t/river-mpirun.$host.$$.live1" \
      "$tmp/t/river-mpirun.elsewhere.999999999.theirs"
rm -f "$tmp/existed"
out=$(env -u OMPI_MCA_orte_tmpdir_base -u SLURM_JOB_ID -u PBS_JOBID -u LSB_JOBID \
      TMPDIR=$tmp/t MPIEXEC=$tmp/fake-ompi \
      "$top/scripts/river-mpirun" -n 1 "$tmp/show-base" 2>&1)
rc=$?
base=$(cat "$tmp/base" 2>/dev/null)
[ "$rc" -eq 0 ] || bad "session dir: exit $rc: $out"
case $base in
  "$tmp/t/river-mpirun.$host."*) ;;
  *) bad "session dir: the job's orte_tmpdir_base is '$base', not under $tmp/t/river-mpirun.$host.*" ;;
esac
[ "$(cat "$tmp/existed" 2>/dev/null)" = yes ] || bad "session dir: '$base' did not exist while the job ran"
[ -n "$base" ] && [ -e "$base" ] && bad "session dir: '$base' left behind"
[ -e "$tmp/t/river-mpirun.$host.999999999.dead1" ] && bad "session dir: a dead job's directory was not swept"
[ -d "$tmp/t/river-mpirun.$host.$$.live1" ] || bad "session dir: a live job's directory was removed"
[ -d "$tmp/t/river-mpirun.elsewhere.999999999.theirs" ] || bad "session dir: another host's directory was removed"
mkdir "$tmp/mine"
OMPI_MCA_orte_tmpdir_base=$tmp/mine TMPDIR=$tmp/t MPIEXEC=$tmp/fake-ompi \
  "$top/scripts/river-mpirun" -n 1 "$tmp/show-base" >/dev/null 2>&1 \
  || bad "session dir: a job with the user's orte_tmpdir_base failed"
[ "$(cat "$tmp/base")" = "$tmp/mine" ] || bad "session dir: the user's orte_tmpdir_base was replaced by '$(cat "$tmp/base")'"
[ -d "$tmp/mine" ] || bad "session dir: the user's directory was removed"
# With emulated nodes each node's daemon gets its own from
# river-node-agent: mpirun's would be passed to every daemon (they then
# shared one, and no job started), so none is set.
cat >"$tmp/fake-ompi-last" <<'EOF2'
#!/bin/bash
case ${1:-} in --version) echo "mpirun (Open MPI) 4.1.4"; exit 0 ;; esac
exec "${@: -1}"
EOF2
chmod +x "$tmp/fake-ompi-last"
echo unset >"$tmp/base"
env -u OMPI_MCA_orte_tmpdir_base TMPDIR=$tmp/t MPIEXEC=$tmp/fake-ompi-last \
  "$top/scripts/river-mpirun" --nodes 2 -n 2 "$tmp/show-base" >/dev/null 2>&1 \
  || bad "session dir: a job on 2 emulated nodes failed"
[ -z "$(cat "$tmp/base")" ] \
  || bad "session dir: emulated nodes: mpirun's orte_tmpdir_base set to '$(cat "$tmp/base")'"
# Nor on hosts of their own: a path of this node would be made on every
# other one.
echo unset >"$tmp/base"
env -u OMPI_MCA_orte_tmpdir_base TMPDIR=$tmp/t MPIEXEC=$tmp/fake-ompi-last \
  "$top/scripts/river-mpirun" --host a,b -n 2 "$tmp/show-base" >/dev/null 2>&1 \
  || bad "session dir: a job with --host failed"
[ -z "$(cat "$tmp/base")" ] \
  || bad "session dir: --host: mpirun's orte_tmpdir_base set to '$(cat "$tmp/base")'"

[ "$fail" -eq 0 ] && echo "PASS: test_launcher"
exit "$fail"
