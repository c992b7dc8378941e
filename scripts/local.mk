# Scripts: the launcher users run River apps with goes to bin; the
# dependency installer and the MPI test launcher to $(pkgdatadir)/scripts.

dist_bin_SCRIPTS = scripts/river-mpirun scripts/river-demo
riverscriptsdir = $(pkgdatadir)/scripts
dist_riverscripts_SCRIPTS = \
	scripts/install-deps \
	scripts/mpi-test-launch \
	scripts/plot-bench.py
