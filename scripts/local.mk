# Scripts: the launcher users run River apps with, the demo and the
# plots of a stats file or a benchmark CSV go to bin; the dependency
# installer, the MPI test launcher and the benchmark tools (a chroot
# bundle for a machine without Open MPI) to $(pkgdatadir)/scripts.

dist_bin_SCRIPTS = scripts/river-mpirun scripts/river-node-agent \
	scripts/river-demo scripts/river-plot
riverscriptsdir = $(pkgdatadir)/scripts
dist_riverscripts_SCRIPTS = \
	scripts/install-deps \
	scripts/mpi-test-launch \
	scripts/scale-fit \
	scripts/bench-bundle \
	scripts/bench-chroot

# Slurm batch templates (what a cluster user copies; doc/building.md,
# "Slurm") and the functions they share, to $(pkgdatadir)/scripts/slurm.
riverslurmdir = $(pkgdatadir)/scripts/slurm
dist_riverslurm_SCRIPTS = \
	scripts/slurm/river-main.sbatch \
	scripts/slurm/river-sort.sbatch \
	scripts/slurm/river-bench.sbatch \
	scripts/slurm/river-flow.sbatch
dist_riverslurm_DATA = scripts/slurm/river-slurm.sh

# The experiments' runner (doc/results.md's report): it works in a
# source tree (apps/river-bench, doc/results/), so it ships in the
# tarball, not installed.
EXTRA_DIST += scripts/run-experiments
