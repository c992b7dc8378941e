#!/bin/bash
# test_slurm - River under a real Slurm with two nodes on this machine
# (issue 34): a slurmctld and two slurmd (nodes n1 and n2, 4 CPUs
# declared each, whatever this machine has), with munge, all of their
# state under one scratch directory and on random ports. Then:
#  * each batch template of scripts/slurm/ (the main job, a sort of a
#    user's collection, the DQ/GD experiments, a user's flow), submitted
#    with sbatch once with RIVER_LAUNCH=srun (srun --mpi=pmix) and once
#    with RIVER_LAUNCH=mpirun: the job completes with exit 0, its ranks
#    ran on both nodes (river hello's report: "4 ranks on 2 nodes", a
#    line for node n1 and one for n2, ranks with node=n1 and node=n2;
#    its queues' credits by two-sided messages), its outputs
#    validated (valsort's SUCCESS lines with the exact record count, the
#    flow's check line, the benchmarks' CSV rows and data checks), and
#    it removed its per-job root and node-local directory; one main job
#    keeps its data: every file of its collections (two copies, on
#    node-local disks RIVER_LOCAL/river-JOB/%n/d%d) is in the directory
#    of the node that ran its disk's rank, both nodes hold some, and
#    river hello's disk= names the same; the sort's output on a user's
#    node-local disks likewise;
#  * a main job sent SIGUSR1 mid-step (what the templates ask Slurm to
#    send before the time limit): it stops, cleans up and fails (138);
#  * a blocked rank does not spin where Slurm declares more CPUs than
#    the machine has: 8 ranks (4 a node) of `river copy-out` into a FIFO
#    nobody reads, so rank 0 blocks writing and the others wait in
#    River's waits; each rank's CPU time over 3 s (from /proc/PID/stat)
#    must stay under 20% of a core.
# Jobs are polled with `scontrol show job ID -o` every 0.1 s, all of
# them within one bound; every daemon started here is stopped by its PID
# at exit (failure and timeout included).
#
# Skips (77) only when Slurm or munge is missing and cannot be
# installed (as root with apt-get it installs slurm-wlm, slurmctld,
# slurmd, slurm-client and munge: about 15 s; .ci/run installs them
# first), or when a daemon cannot be started (not root, or the nodes
# are not idle 20 s after the start, three times on fresh ports).
# Emulating two nodes on one machine needs, for the jobs only:
# OMPI_MCA_btl=self,tcp (vader's segments of the two nodes collide),
# for mpirun's daemons PMIX_MCA_gds=hash and
# OMPI_MCA_rtc_hwloc_vmhole=none, as scripts/river-mpirun --nodes sets,
# and a TMPDIR per node (a TaskProlog). doc/building.md ("Slurm") has
# the settings and why.
# Run by scripts/mpi-test-launch (the testlist's limit bounds it).
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
src=${top_srcdir:-.}
bench=${top_builddir:-.}/apps/river-bench

# ------------------------------------------------------------ packages
need="slurmctld slurmd sbatch scontrol sinfo srun munged mungekey"
missing() {
  local c m=
  for c in $need; do command -v "$c" >/dev/null 2>&1 || m="$m $c"; done
  echo "$m"
}
if [ -n "$(missing)" ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "NOTE: installing Slurm and munge (missing:$(missing))"
    pkgs="slurm-wlm slurmctld slurmd slurm-client munge"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q $pkgs >"$tmp/apt.log" 2>&1 \
      || { apt-get update -q >>"$tmp/apt.log" 2>&1 \
           && apt-get install -y -q $pkgs >>"$tmp/apt.log" 2>&1; } \
      || tail -n 5 "$tmp/apt.log"
  fi
  if [ -n "$(missing)" ]; then
    echo "SKIP: Slurm/munge not found and not installable here (missing:$(missing))"
    exit 77
  fi
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: slurmd runs jobs as their users and must be started as root"
  exit 77
fi

# ------------------------------------------------------------- daemons
lab=$tmp/slurm
pids=()      # every daemon started here
stop_daemons() {
  local p i alive
  [ ${#pids[@]} -gt 0 ] || return 0
  kill -TERM "${pids[@]}" 2>/dev/null
  for i in $(seq 100); do
    alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive -eq 0 ] && break
    sleep 0.1
  done
  [ $alive -eq 0 ] || kill -KILL "${pids[@]}" 2>/dev/null
  wait "${pids[@]}" 2>/dev/null
  pids=()
  up=0
}
# stop_jobs: cancel whatever jobs are left (a failure or a timeout
# here), and wait up to 15 s for them to go, so that no slurmstepd or
# rank outlives the daemons.
up=0
stop_jobs() {
  local ids i
  [ $up -eq 1 ] || return 0
  ids=$(timeout 5 squeue -h -o %i 2>/dev/null)
  [ -n "$ids" ] || return 0
  # shellcheck disable=SC2086
  scancel $ids 2>/dev/null
  for i in $(seq 150); do
    [ -z "$(timeout 5 squeue -h -o %i 2>/dev/null)" ] && return 0
    sleep 0.1
  done
  echo "slurm: jobs still there after 15 s: $(squeue -h -o '%i %T' | tr '\n' ' ')"
}
trap 'stop_jobs; stop_daemons; rm -rf "$tmp"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# start_lab: munge and Slurm on fresh random ports; 0 once n1 and n2 are
# idle (within 20 s), else 1 with the daemons stopped.
start_lab() {
  local host base i st t0
  stop_daemons
  rm -rf "$lab"
  mkdir -p "$lab/munge" "$lab/state" "$lab/spool/n1" "$lab/spool/n2" \
    "$lab/log" "$lab/run" "$lab/tmp/n1" "$lab/tmp/n2"
  # munged refuses a socket whose directories others cannot search.
  chmod go+x "$tmp" && chmod 755 "$lab" "$lab/munge" || return 1
  mungekey -c -k "$lab/munge/key" >"$lab/log/mungekey.out" 2>&1 || return 1
  munged -F --socket="$lab/munge/socket" --key-file="$lab/munge/key" \
    --pid-file="$lab/run/munged.pid" --log-file="$lab/log/munged.log" \
    --seed-file="$lab/munge/seed" >"$lab/log/munged.out" 2>&1 &
  pids+=($!)
  # Each node's tasks get a TMPDIR of their own, as sites do: Open MPI's
  # session directories (under TMPDIR) of the two nodes stay apart.
  printf '#!/bin/sh\necho "export TMPDIR=%s/tmp/$SLURMD_NODENAME"\n' "$lab" \
    >"$lab/task-prolog"
  chmod 755 "$lab/task-prolog"
  host=$(hostname)
  base=$((20000 + RANDOM % 40000))
  cat >"$lab/slurm.conf" <<EOF
ClusterName=riverlab
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$base
SlurmdPort=$((base + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$lab/munge/socket
StateSaveLocation=$lab/state
SlurmdSpoolDir=$lab/spool/%n
SlurmctldPidFile=$lab/run/slurmctld.pid
SlurmdPidFile=$lab/run/slurmd.%n.pid
SlurmctldLogFile=$lab/log/slurmctld.log
SlurmdLogFile=$lab/log/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=pmix
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
SlurmdParameters=config_overrides
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MailProg=/bin/true
TmpFS=$lab/tmp/%n
TaskProlog=$lab/task-prolog
NodeName=n1 NodeHostname=$host NodeAddr=127.0.0.1 Port=$((base + 1)) CPUs=4 State=UNKNOWN
NodeName=n2 NodeHostname=$host NodeAddr=127.0.0.1 Port=$((base + 2)) CPUs=4 State=UNKNOWN
PartitionName=lab Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$lab/slurm.conf
  for i in $(seq 50); do [ -S "$lab/munge/socket" ] && break; sleep 0.1; done
  if [ ! -S "$lab/munge/socket" ]; then
    echo "munge: no socket after 5 s: $(tail -n 1 "$lab/log/munged.out")"
    stop_daemons
    return 1
  fi
  slurmctld -D -i -f "$SLURM_CONF" >"$lab/log/slurmctld.out" 2>&1 &
  pids+=($!)
  slurmd -D -N n1 -f "$SLURM_CONF" >"$lab/log/slurmd.n1.out" 2>&1 &
  pids+=($!)
  slurmd -D -N n2 -f "$SLURM_CONF" >"$lab/log/slurmd.n2.out" 2>&1 &
  pids+=($!)
  t0=$(date +%s)
  while [ $(( $(date +%s) - t0 )) -lt 20 ]; do
    st=$(timeout 5 sinfo -h -N -o '%N=%T' 2>/dev/null | sort | tr '\n' ' ')
    [ "$st" = "n1=idle n2=idle " ] && return 0
    sleep 0.1
  done
  echo "slurm: nodes not idle after 20 s (ports $base..$((base + 2))): ${st:-no answer}"
  stop_daemons
  return 1
}
for attempt in 1 2 3; do
  start_lab && { up=1; break; }
done
if [ $up -ne 1 ]; then
  for f in "$lab"/log/*; do echo "== $f"; tail -n 5 "$f"; done
  echo "SKIP: the Slurm daemons could not be started (3 attempts)"
  exit 77
fi
echo "slurm: controller and nodes n1, n2 up (slurm.conf in $lab)"

# ------------------------------------------------------------ the jobs
# What every job gets (sbatch passes the environment on): the programs
# of this build, the templates' directory, and the emulation's settings.
export RIVER=$river RIVER_BENCH=$bench RIVER_SLURM_DIR=$src/scripts/slurm
export RIVER_SHARED=$tmp/shared RIVER_LOCAL=$tmp/local
export OMPI_MCA_btl=self,tcp PMIX_MCA_gds=hash OMPI_MCA_rtc_hwloc_vmhole=none
mkdir -p "$RIVER_SHARED" "$RIVER_LOCAL"
out=$tmp/jobs
mkdir -p "$out"
jobs_ids=() jobs_names=()

# submit NAME TEMPLATE [VAR=VALUE...]: sbatch the template with those
# variables set, its output in $out/NAME.out.
submit() {
  local name=$1 tpl=$2 id; shift 2
  id=$(env "$@" sbatch --parsable -o "$out/$name.out" -J "$name" \
         "$src/scripts/slurm/$tpl" 2>"$out/$name.sbatch") \
    || { fail "$name: sbatch failed: $(head -n 2 "$out/$name.sbatch")"; return; }
  jobs_ids+=("${id%%;*}")
  jobs_names+=("$name")
}

# wait_jobs SECONDS: poll every job until each has ended, within SECONDS
# (times RIVER_TEST_TIMEOUT_SCALE) in all; $out/NAME.state gets its JobState and ExitCode. Jobs still
# running then are cancelled and fail.
wait_jobs() {
  local limit t0 i left line st
  # Under the sanitizers (RIVER_TEST_TIMEOUT_SCALE=3) every job is slower.
  limit=$(awk -v l="$1" -v s="${RIVER_TEST_TIMEOUT_SCALE:-1}" \
          'BEGIN { printf "%d", l * s + 0.5 }')
  t0=$(date +%s)
  while :; do
    left=0
    for i in "${!jobs_ids[@]}"; do
      [ -s "$out/${jobs_names[$i]}.state" ] && continue
      line=$(scontrol show job "${jobs_ids[$i]}" -o 2>/dev/null)
      st=$(echo "$line" | grep -o 'JobState=[A-Z_]*')
      case $st in
        JobState=PENDING|JobState=CONFIGURING|JobState=RUNNING|JobState=COMPLETING|"")
          left=$((left + 1)) ;;
        *) echo "$st $(echo "$line" | grep -o 'ExitCode=[0-9:]*')" \
             "$(echo "$line" | grep -o 'RunTime=[0-9:-]*')" \
             >"$out/${jobs_names[$i]}.state"
           echo "slurm: ${jobs_names[$i]}: $(cat "$out/${jobs_names[$i]}.state")" ;;
      esac
    done
    [ $left -eq 0 ] && return 0
    if [ $(( $(date +%s) - t0 )) -ge "$limit" ]; then
      for i in "${!jobs_ids[@]}"; do
        [ -s "$out/${jobs_names[$i]}.state" ] && continue
        fail "${jobs_names[$i]}: still running after ${limit}s: cancelled"
        scancel "${jobs_ids[$i]}" 2>/dev/null
        echo "JobState=TIMEOUT-TEST" >"$out/${jobs_names[$i]}.state"
      done
      return 1
    fi
    sleep 0.1
  done
}

# check_job NAME [kept]: it completed with exit 0, its ranks ran on n1
# and n2, and it left neither its shared root nor its node-local
# directory (unless "kept": RIVER_KEEP=1). $id: its job id.
check_job() {
  local name=$1 o=$out/$1.out
  if ! grep -q "^JobState=COMPLETED ExitCode=0:0 " "$out/$name.state"; then
    fail "$name: $(cat "$out/$name.state")"
    sed 's/^/    /' "$o" | grep -v '^    -*$' | tail -n 15
    return
  fi
  grep -q "^4 ranks on 2 nodes;" "$o" && grep -q "^node n1: " "$o" \
    && grep -q "^node n2: " "$o" && grep -q " node=n1 " "$o" && grep -q " node=n2 " "$o" \
    || fail "$name: ranks not on both nodes: $(grep -E ' on [0-9]+ nodes?;|node=[^ ]*' "$o" | tr '\n' ' ')"
  # Over TCP between the nodes no RMA window spans the ranks: a queue's
  # credits go by two-sided messages.
  grep -q "^queue: credits by msg " "$o" \
    || fail "$name: $(grep '^queue:' "$o" || echo 'no queue line') (expected msg)"
  id=$(sed -n 's/^river-slurm: job \([0-9]*\) .*/\1/p' "$o")
  [ -n "$id" ] || { fail "$name: no job line"; return; }
  [ "${2:-}" = kept ] && return
  [ ! -e "$RIVER_SHARED/river-job-$id" ] || fail "$name: left $RIVER_SHARED/river-job-$id"
  [ ! -e "$RIVER_LOCAL/river-$id" ] || fail "$name: left $RIVER_LOCAL/river-$id"
}

# check_local NAME DIR COLL: COLL's data files, written by job NAME on
# node-local disks DIR/%n/d%d, are each in the directory of the node
# that ran the disk's rank (disk d: rank d mod 4, as NAME's river hello
# placed it), and both nodes hold some.
check_local() {
  local name=$1 dir=$2 coll=$3 f node disk want
  awk '$1 == "rank" && $3 ~ /^node=/ { print $2, substr($3, 6) }' \
    "$out/$name.out" | sort -u >"$tmp/placed"
  find "$dir" -name "$coll.p*.rdat" >"$tmp/files"
  [ -s "$tmp/files" ] || { fail "$name: no files of $coll under $dir"; return; }
  while read -r f; do
    disk=${f%/*}; disk=${disk##*/d}
    node=${f%/d*/*}; node=${node##*/}
    want=$(awk -v r=$((disk % 4)) '$1 == r { print $2 }' "$tmp/placed")
    [ "$node" = "$want" ] \
      || echo "$f: disk $disk on node $node, its rank $((disk % 4)) on ${want:-?}"
  done <"$tmp/files" >"$tmp/misplaced"
  [ -s "$tmp/misplaced" ] && fail "$name: $(head -n 1 "$tmp/misplaced")"
  grep -q "/n1/d" "$tmp/files" && grep -q "/n2/d" "$tmp/files" \
    || fail "$name: $coll's files not on both nodes"
}

N=20000
# A user's collection for the sort and flow templates, on their root.
uroot=$tmp/user
RIVER_ROOT=$uroot r 4 gen --force events --records $N --skew --seed 3 >/dev/null \
  || fail "gen events"

# main-mpirun keeps its data (RIVER_KEEP=1) for a look at where it
# went; sort-srun writes its output on node-local disks of the user's.
submit main-srun river-main.sbatch RIVER_LAUNCH=srun RECORDS=$N
submit main-mpirun river-main.sbatch RIVER_LAUNCH=mpirun RECORDS=$N RIVER_KEEP=1
submit sort-srun river-sort.sbatch RIVER_LAUNCH=srun RIVER_ROOT="$uroot" \
  IN=events OUT=events_srun RIVER_DISKS="$tmp/scratch/%n/d%d"
submit sort-mpirun river-sort.sbatch RIVER_LAUNCH=mpirun RIVER_ROOT="$uroot" \
  IN=events OUT=events_mpirun
for l in srun mpirun; do
  submit "flow-$l" river-flow.sbatch RIVER_LAUNCH=$l RIVER_ROOT="$uroot" \
    FLOW="$src/flows/sort.yaml" PARAMS="in=events out=flow_$l" \
    VALSORT="flow_$l events"
done
submit bench-srun river-bench.sbatch RIVER_LAUNCH=srun \
  EXPERIMENTS="gd:read dq:read" RESULTS="$tmp/bench-srun" \
  BENCH_ARGS="--seconds 0.2 --rate 5 --repeats 1"
submit bench-mpirun river-bench.sbatch RIVER_LAUNCH=mpirun \
  EXPERIMENTS="gd:lost dq:write" RESULTS="$tmp/bench-mpirun" \
  BENCH_ARGS="--seconds 0.2 --rate 5 --repeats 1"
submit demo-srun river-flow.sbatch RIVER_LAUNCH=srun \
  FLOW="$src/flows/sort_demo.yaml" PARAMS="records=$N"
wait_jobs 420

for l in srun mpirun; do
  check_job "main-$l" $([ $l = mpirun ] && echo kept)
  for c in main_river main_static; do
    grep -q "^$c: $N records, checksum [0-9a-f]*, " "$out/main-$l.out" \
      && grep -q "^$c: SUCCESS" "$out/main-$l.out" \
      || fail "main-$l: $c not validated ($N records)"
  done
  check_job "sort-$l"
  grep -q "^events_$l: $N records, checksum " "$out/sort-$l.out" \
    && grep -q "^events_$l: SUCCESS" "$out/sort-$l.out" \
    || fail "sort-$l: events_$l not validated ($N records)"
  check_job "flow-$l"
  grep -q "^flow_$l: $N records, checksum " "$out/flow-$l.out" \
    && grep -q "^flow_$l: SUCCESS" "$out/flow-$l.out" \
    || fail "flow-$l: flow_$l not validated ($N records)"
done
# Node-local data went to the nodes that hold its disks: the main job's
# input and outputs (kept), and the sort's output on the user's disks.
id=$(sed -n 's/^river-slurm: job \([0-9]*\) .*/\1/p' "$out/main-mpirun.out")
for c in main_in main_river main_static; do
  check_local main-mpirun "$RIVER_LOCAL/river-$id" $c
done
grep -q "^river-slurm: kept " "$out/main-mpirun.out" || fail "main-mpirun: not kept"
# ... where river hello (river topo's report) said each rank's disk is.
awk -v base="$RIVER_LOCAL/river-$id" '$1 == "rank" && $3 ~ /^node=/ {
       n++; want = "disk=" base "/" substr($3, 6) "/d" $2
       if ($6 != want) { print "rank " $2 ": " $6 ", expected " want; bad = 1 } }
     END { if (n != 4) print n + 0 " rank lines"; exit bad || n != 4 }' \
  "$out/main-mpirun.out" >"$tmp/hello_disks" \
  || fail "main-mpirun: river hello's disks: $(head -n 1 "$tmp/hello_disks")"
check_local sort-srun "$tmp/scratch" events_srun
# The sorted collections on shared disks stay on the user's root, whole.
for c in events_mpirun flow_srun flow_mpirun; do
  [ -e "$uroot/$c.river.h5" ] || continue
  RIVER_ROOT=$uroot r 2 valsort "$c" --input events >"$tmp/v" 2>&1 \
    && grep -q "^$c: $N records" "$tmp/v" || fail "$c: valsort after the job"
done
check_job demo-srun
grep -q "^check 0 $N " "$out/demo-srun.out" || fail "demo-srun: no check line for $N records"
check_job bench-srun
check_job bench-mpirun
for c in bench-srun/dq-read bench-srun/gd-read bench-mpirun/dq-write bench-mpirun/gd-lost; do
  [ "$(tail -n +2 "$tmp/$c.csv" 2>/dev/null | wc -l)" -gt 0 ] || fail "$c.csv: no rows"
done
grep -q "DATA CHECK FAILED" "$out"/bench-*.out && fail "bench: a data check failed"
grep -q "every record delivered once and verified" "$out/bench-mpirun.out" \
  || fail "bench-mpirun: gd lost did not verify its records"
# gd lost's collection (its lost disk's files, named in the warnings)
# was under the job's shared root, not a node's TMPDIR.
grep -o "[^ ]*/river-bench-lost-[^ ]*" "$out/bench-mpirun.out" >"$tmp/lostpaths"
[ -s "$tmp/lostpaths" ] && ! grep -qv "^$RIVER_SHARED/river-job-[0-9]*/" "$tmp/lostpaths" \
  || fail "bench-mpirun: gd lost's collection not under the job root: $(head -n 1 "$tmp/lostpaths")"

# ------------------------ near the time limit: stop, clean up, fail
# Slurm signals the batch script (--signal=B:USR1@120 in the templates)
# a while before the limit; scancel -b -s USR1 does the same now. The
# running step is stopped, the cleanup's own steps still run (the root
# and node-local directory gone), and the job fails with 138.
jobs_ids=() jobs_names=()
submit usr1 river-main.sbatch RIVER_LAUNCH=srun RECORDS=1M
for _ in $(seq 600); do
  grep -q '^+ srun river gen' "$out/usr1.out" 2>/dev/null && break
  sleep 0.1
done
grep -q '^+ srun river gen' "$out/usr1.out" 2>/dev/null \
  || fail "usr1: the job did not start its gen within 60 s"
scancel -b -s USR1 "${jobs_ids[0]}" || fail "usr1: scancel -s USR1 failed"
wait_jobs 120
grep -q "^JobState=FAILED ExitCode=138:0 " "$out/usr1.state" \
  || fail "usr1: $(cat "$out/usr1.state") (expected FAILED, 138)"
grep -q "^river-slurm: time limit near (SIGUSR1): stopping" "$out/usr1.out" \
  || fail "usr1: no message saying why it stopped"
grep -E "could not reach every node|'river rm .*' failed" "$out/usr1.out" \
  && fail "usr1: the cleanup failed"
id=$(sed -n 's/^river-slurm: job \([0-9]*\) .*/\1/p' "$out/usr1.out")
[ -n "$id" ] && [ ! -e "$RIVER_SHARED/river-job-$id" ] && [ ! -e "$RIVER_LOCAL/river-$id" ] \
  || fail "usr1: left its root or node-local directory (job ${id:-?})"

# ------------------------------------- a blocked rank does not spin
# 8 ranks, 4 on each node (4 CPUs declared, fewer present): copy-out
# into a FIFO whose reader holds it open without reading. Once the
# pipe is full rank 0 blocks in write() and the others wait in River's
# waits; the job script measures each rank's CPU over 3 s, then drains.
cat >"$tmp/spin.sbatch" <<'EOF'
#!/bin/bash
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
set -u
fifo=$SPIN_DIR/fifo
mkfifo "$fifo" || exit 1
exec 3<>"$fifo"          # hold it open, never read: the pipe fills
export SPIN_MARK=$SLURM_JOB_ID
srun --mpi=pmix "$RIVER" copy-out --force events -o "$fifo" 3<&- &
step=$!
# ticks PID: its user + system CPU time in clock ticks.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }
ranks=() rank0=
for _ in $(seq 300); do
  ranks=()
  for p in $(ls /proc | grep -E '^[0-9]+$'); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null >"$SPIN_DIR/env" || continue
    grep -qx "SPIN_MARK=$SLURM_JOB_ID" "$SPIN_DIR/env" || continue
    case $(cat "/proc/$p/comm" 2>/dev/null) in river|lt-river) ranks+=("$p") ;; *) continue ;; esac
    grep -qx "SLURM_PROCID=0" "$SPIN_DIR/env" && rank0=$p
  done
  [ ${#ranks[@]} -eq 8 ] && break
  sleep 0.2
done
echo "spin: ${#ranks[@]} ranks found"
# Rank 0 blocks once the pipe is full (in the kernel's pipe_write, or
# anon_pipe_write); then the others soon wait on it.
for _ in $(seq 600); do
  grep -q "pipe_write" "/proc/$rank0/wchan" 2>/dev/null && break
  sleep 0.1
done
echo "spin: rank 0 in $(cat "/proc/$rank0/wchan" 2>/dev/null)"
sleep 1
declare -A t0
for p in "${ranks[@]}"; do t0[$p]=$(ticks "$p"); done
s0=$(date +%s.%N)
sleep 3
s1=$(date +%s.%N)
hz=$(getconf CLK_TCK)
for p in "${ranks[@]}"; do
  e=$(tr '\0' '\n' <"/proc/$p/environ")
  rank=$(echo "$e" | sed -n 's/^SLURM_PROCID=//p')
  node=$(echo "$e" | sed -n 's/^SLURMD_NODENAME=//p')
  awk -v r="$rank" -v n="$node" -v a="${t0[$p]}" -v b="$(ticks "$p")" \
      -v s0="$s0" -v s1="$s1" -v hz="$hz" \
      -v w="$(cat "/proc/$p/wchan" 2>/dev/null)" \
      'BEGIN { printf "spin: rank %s on %s used %.1f%% of a core over %.1f s (in %s)\n",
               r, n, 100 * (b - a) / hz / (s1 - s0), s1 - s0, w }'
done
# Drain it: open a reader first (never without one, or rank 0's write
# fails with EPIPE), then drop the holder: EOF once copy-out ends.
exec 4<"$fifo"
cat <&4 >"$SPIN_DIR/out.dat" 3<&- &
reader=$!
exec 3<&- 4<&-
wait "$step"; rc=$?
wait "$reader"
echo "spin: copy-out exit $rc, $(stat -c %s "$SPIN_DIR/out.dat") bytes"
exit $rc
EOF
mkdir -p "$tmp/spin"
jobs_ids=() jobs_names=()
id=$(SPIN_DIR=$tmp/spin RIVER_ROOT=$uroot sbatch --parsable -o "$out/spin.out" \
       -J spin "$tmp/spin.sbatch" 2>&1) || fail "spin: sbatch failed: $id"
jobs_ids=("${id%%;*}") jobs_names=(spin)
wait_jobs 180
grep -q "^JobState=COMPLETED ExitCode=0:0 " "$out/spin.state" \
  || { fail "spin: $(cat "$out/spin.state")"; tail -n 15 "$out/spin.out"; }
grep "^spin: " "$out/spin.out"
grep -q "^spin: 8 ranks found" "$out/spin.out" || fail "spin: not 8 ranks found"
grep -q "^spin: rank 0 in .*pipe_write" "$out/spin.out" \
  || fail "spin: rank 0 never blocked writing the FIFO"
[ "$(grep -c '^spin: rank [0-7] on n1 ' "$out/spin.out")" -eq 4 ] \
  && [ "$(grep -c '^spin: rank [0-7] on n2 ' "$out/spin.out")" -eq 4 ] \
  || fail "spin: not 4 ranks on each node"
awk '/^spin: rank / { if ($7 + 0 >= 20) bad = bad " " $3 "(" $7 ")" }
     END { if (bad != "") { print "spinning ranks:" bad; exit 1 } }' \
  "$out/spin.out" || fail "spin: a blocked rank used 20% of a core or more"
[ "$(stat -c %s "$tmp/spin/out.dat" 2>/dev/null)" = $((N * 100)) ] \
  || fail "spin: copy-out did not deliver $N records"
RIVER_ROOT=$uroot r 2 copy-out --force events -o "$tmp/spin/want.dat" >/dev/null 2>&1 \
  && cmp -s "$tmp/spin/want.dat" "$tmp/spin/out.dat" \
  || fail "spin: the FIFO's bytes differ from copy-out's"

stop_daemons
clitest_end test_slurm
