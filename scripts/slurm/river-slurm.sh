# river-slurm.sh - what River's Slurm batch templates share; each
# river-*.sbatch beside it sources it. Not run on its own.
#
# It gives a template:
#   river_step ARGS...       run `river ARGS` on every task of the job,
#                            saying so; exits the job if it fails
#   river_bench_step ARGS... the same for river-bench
#   river_launch PROG ARGS...  PROG on every task, through $RIVER_LAUNCH
#   river_hello              the job's nodes, and each rank's node
#   river_job_root, river_job_disks, river_job_local
#                            this job's paths (below); the root and the
#                            node-local directories are removed at exit
#   river_forget COLL...     `river rm` these collections at exit
#
# Settings (environment variables; sbatch passes the submitter's
# environment on, so `RIVER_LAUNCH=mpirun sbatch river-main.sbatch`):
#   RIVER_LAUNCH  srun (default): `srun --mpi=pmix`, Slurm's PMIx starts
#                 the ranks (Debian's Open MPI speaks PMIx only:
#                 --mpi=pmi2 and --mpi=none fail); mpirun: Open MPI's
#                 mpirun inside the allocation, which takes its hosts and
#                 slots from Slurm (as root with Open MPI's run-as-root
#                 consent, OMPI_ALLOW_RUN_AS_ROOT[_CONFIRM], set here)
#   RIVER_SRUN_ARGS, RIVER_MPIRUN_ARGS  more options for that launcher
#   RIVER, RIVER_BENCH  the programs (default: river and river-bench on
#                 PATH, e.g. after `make install`)
#   RIVER_SHARED  a directory on the file system every node shares, for
#                 this job's root (metadata, results); default the
#                 directory sbatch was run from ($SLURM_SUBMIT_DIR)
#   RIVER_LOCAL   the node-local directory for this job's data: default
#                 $SLURM_TMPDIR, else $TMPDIR, else /tmp, as this script
#                 sees it on the job's first node; every node must have
#                 that path (or be able to make it), a disk of its own
#   RIVER_KEEP=1  keep this job's root and node-local data (debugging)
#   RIVER_HELLO=0 skip the placement report at the start
#
# Paths, all derived from $SLURM_JOB_ID so concurrent jobs never meet:
#   river_job_root   $RIVER_SHARED/river-job-$SLURM_JOB_ID  (shared)
#   river_job_local  $RIVER_LOCAL/river-$SLURM_JOB_ID       (each node's)
#   river_job_disks  the disk pattern (--disks, RIVER_DISKS) for data
#                    that stays on the nodes: river_job_local/%n/d%d.
#                    Each rank expands %n to its node's name
#                    ($SLURMD_NODENAME), so River knows the disks are
#                    node-local: disk d lives on the node of rank
#                    d mod (ranks) of the job that wrote it, mirror
#                    copies are sent to their disk's node, and readers
#                    find each copy where it is (doc/collections.md,
#                    "Node-local disks"). A two-pass sort (input beyond
#                    --memory) cannot keep its runs there: give it
#                    shared disks (a RIVER_DISKS without %n).
#
# Ranks are placed round-robin over the nodes (srun
# --distribution=cyclic, mpirun --map-by node), so that the copies of a
# mirrored partition (disks p and p+1) are on different nodes.
set -u

if [ -z "${SLURM_JOB_ID:-}" ]; then
  echo "river-slurm: not inside a Slurm job (submit the template with sbatch)" >&2
  exit 2
fi

RIVER=${RIVER:-river}
RIVER_BENCH=${RIVER_BENCH:-river-bench}
RIVER_LAUNCH=${RIVER_LAUNCH:-srun}
RIVER_SHARED=${RIVER_SHARED:-${SLURM_SUBMIT_DIR:-$PWD}}
RIVER_LOCAL=${RIVER_LOCAL:-${SLURM_TMPDIR:-${TMPDIR:-/tmp}}}
river_job_root=$RIVER_SHARED/river-job-$SLURM_JOB_ID
river_job_local=$RIVER_LOCAL/river-$SLURM_JOB_ID
river_job_disks=$river_job_local/%n/d%d

case $RIVER_LAUNCH in
  srun|mpirun) ;;
  *) echo "river-slurm: RIVER_LAUNCH=$RIVER_LAUNCH: expected srun or mpirun" >&2
     exit 2 ;;
esac
if [ "$RIVER_LAUNCH" = mpirun ] && [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# river_launch PROG ARGS...: PROG on every task of the allocation, rank
# r on node r mod (nodes). srun ends the whole step if a task fails
# (--kill-on-bad-exit), as mpirun does.
river_launch() {
  if [ "$RIVER_LAUNCH" = srun ]; then
    # shellcheck disable=SC2086
    srun --mpi=pmix --kill-on-bad-exit=1 --distribution=cyclic \
      ${RIVER_SRUN_ARGS:-} "$@"
  else
    # shellcheck disable=SC2086
    mpirun --map-by node ${RIVER_MPIRUN_ARGS:-} "$@"
  fi
}

# river_on_nodes CMD...: CMD once on each node of the job (not an MPI
# program: srun without MPI, whichever launcher the ranks use).
river_on_nodes() {
  srun --mpi=none --ntasks-per-node=1 --nodes="${SLURM_JOB_NUM_NODES:-1}" \
    --ntasks="${SLURM_JOB_NUM_NODES:-1}" "$@"
}

# run_step LABEL CMD...: CMD on every task, shown as LABEL; a failure
# ends the job with its status. The step runs in the background so that
# a signal to this script (below) is handled at once, not after it.
river_step_pid=
run_step() {
  local label=$1 rc; shift
  echo "+ $RIVER_LAUNCH $label"
  river_launch "$@" &
  river_step_pid=$!
  wait "$river_step_pid"
  rc=$?
  river_step_pid=
  if [ $rc -ne 0 ]; then
    echo "river-slurm: '$label' failed (exit $rc)" >&2
    exit $rc
  fi
}
river_step() { run_step "river $*" "$RIVER" "$@"; }
# river-bench makes its scratch collections under $TMPDIR, on one rank
# for all: the job's shared root, set through env(1) in the task itself
# (a site's TaskProlog may set a node-local TMPDIR for every task).
river_bench_step() {
  run_step "river-bench $*" env TMPDIR="$river_job_root" "$RIVER_BENCH" "$@"
}

# river_hello: the job's nodes and ranks (river topo's report: each
# node's machine, each rank's node, binding and disk), a one-lap ring to
# show the ranks reach each other, and how its queues pass credits.
river_hello() {
  [ "${RIVER_HELLO:-1}" = 0 ] || river_step hello --laps 1 --bytes 1024
}

# Collections to remove at exit, and the cleanup itself: run once, on
# success, failure or a signal. The templates ask for SIGUSR1 a while
# before their time limit (#SBATCH --signal=B:USR1@120): the running
# step is stopped and the cleanup's own steps still run. After scancel
# or the limit itself (SIGTERM) Slurm starts no more steps: this node's
# directory is removed, the other nodes' are left (named) for the
# site's epilog or tmp cleaning.
river_forgotten=()
river_forget() { river_forgotten+=("$@"); }
river_cleanup() {
  local c
  trap - EXIT INT TERM
  trap "" USR1            # the signal that asked for it, again
  if [ "${RIVER_KEEP:-0}" = 1 ]; then
    echo "river-slurm: kept $river_job_root and $river_job_local on each node"
    return
  fi
  # river rm with a rank on every node removes every node's files.
  for c in ${river_forgotten[@]+"${river_forgotten[@]}"}; do
    [ -e "$RIVER_ROOT/$c.river.h5" ] || continue
    river_launch "$RIVER" rm "$c" >/dev/null \
      || echo "river-slurm: 'river rm $c' failed" >&2
  done
  if ! river_on_nodes rm -rf "$river_job_local" 2>/dev/null; then
    rm -rf "$river_job_local"
    echo "river-slurm: could not reach every node: $river_job_local is" \
         "left on the others" >&2
  fi
  # The job root: gone if the collections went (rm leaves the disk
  # directories and lock files of the default layout, hence -r).
  rm -rf "$river_job_root"
}
# river_stop WHY STATUS: stop the running step (its launcher passes the
# signal on to the ranks), then leave through the EXIT trap.
river_stop() {
  echo "river-slurm: $1: stopping" >&2
  if [ -n "$river_step_pid" ]; then
    kill -TERM "$river_step_pid" 2>/dev/null
    wait "$river_step_pid"
  fi
  exit "$2"
}
trap river_cleanup EXIT
trap 'river_stop "time limit near (SIGUSR1)" 138' USR1
trap 'river_stop SIGTERM 143' TERM
trap 'river_stop SIGINT 130' INT

mkdir -p "$river_job_root" || exit 1
echo "river-slurm: job $SLURM_JOB_ID on ${SLURM_JOB_NODELIST:-?}," \
     "${SLURM_NTASKS:-?} tasks, launcher $RIVER_LAUNCH"
echo "river-slurm: shared root $river_job_root, node-local $river_job_local"
