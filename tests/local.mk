# make check: CMocka unit tests (no MPI job; required unless configured
# with --disable-unit-tests), multi-rank MPI tests and Fortran tests. Everything with an MPI job runs through
# scripts/mpi-test-launch (ranks and time limit per test in
# tests/*/testlist).

TEST_EXTENSIONS = .mpi .sh
MPI_LOG_COMPILER = $(top_srcdir)/scripts/mpi-test-launch
SH_LOG_COMPILER = $(top_srcdir)/scripts/mpi-test-launch

AM_TESTS_ENVIRONMENT = \
	MPIEXEC='$(MPIEXEC)'; export MPIEXEC; \
	top_builddir='$(abs_top_builddir)'; export top_builddir; \
	top_srcdir='$(abs_top_srcdir)'; export top_srcdir; \
	OMPI_MCA_pml="$${OMPI_MCA_pml-^cm}"; export OMPI_MCA_pml; \
	OMPI_MCA_odls_base_sigkill_timeout="$${OMPI_MCA_odls_base_sigkill_timeout-0}"; \
	export OMPI_MCA_odls_base_sigkill_timeout;
# Two Open MPI settings that make the suite's hundreds of short jobs
# cheaper, each unless already set (doc/building.md, "Tests"):
# - every test runs on this one machine, where Open MPI picks the ob1
#   PML anyway: leaving out the cm PML saves each process start the
#   probing of cm's network libraries (OFI, PSM, PSM2), about 0.2 s of
#   the 0.4 s a one-rank job takes here;
# - a job with a rank that exits non-zero is torn down at once rather
#   than after Open MPI's two 1 s grace periods (SIGTERM, then SIGKILL):
#   River's processes do not catch SIGTERM, so the grace bought nothing,
#   and the suite runs a hundred or more jobs that are meant to fail
#   (2.3 s each before, 0.3 s now).
# Test-only LD_PRELOAD shims, built without the sanitizers: deny_open
# fails open() of chosen paths with EACCES (the tests run as root, who
# may read anything); tests/cli/test_coll_special.sh preloads it.
# fail_fsync fails fsync() of one chosen file or directory with EIO
# (tests/cli/test_coll_commit.sh).
# peak_rss reports a process's peak resident memory at exit;
# tests/cli/test_coll_memory.sh preloads it.
# no_locks makes fcntl's locks fail with ENOLCK (a file system without
# locks; tests/cli/test_coll_commit.sh).
check_LTLIBRARIES = tests/deny_open.la tests/fail_fsync.la tests/peak_rss.la \
	tests/no_locks.la
# flow_modules registers the flow tests' modules (tests/flow_modules.c)
# in the river command before main; tests/cli/test_flow_check.sh
# preloads it.
check_LTLIBRARIES += tests/flow_modules.la
tests_flow_modules_la_SOURCES = tests/flow_modules.c tests/flow_modules.h
tests_flow_modules_la_CPPFLAGS = $(AM_CPPFLAGS) -DRIVER_TEST_PRELOAD
tests_flow_modules_la_CFLAGS = $(RIVER_WARN_CFLAGS)
tests_flow_modules_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_flow_modules_la_LIBADD = -ldl
tests_deny_open_la_SOURCES = tests/deny_open.c
tests_deny_open_la_CFLAGS = $(RIVER_WARN_CFLAGS)
tests_deny_open_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_deny_open_la_LIBADD = -ldl
tests_fail_fsync_la_SOURCES = tests/fail_fsync.c
tests_fail_fsync_la_CFLAGS = $(RIVER_WARN_CFLAGS)
tests_fail_fsync_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_fail_fsync_la_LIBADD = -ldl
tests_no_locks_la_SOURCES = tests/no_locks.c
tests_no_locks_la_CFLAGS = $(RIVER_WARN_CFLAGS)
tests_no_locks_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_no_locks_la_LIBADD = -ldl
tests_peak_rss_la_SOURCES = tests/peak_rss.c
tests_peak_rss_la_CFLAGS = $(RIVER_WARN_CFLAGS)
tests_peak_rss_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_peak_rss_la_LIBADD = -ldl
# fail_write fails writes to files with chosen name endings with ENOSPC
# (a full disk); tests/cli/test_coll_meta.sh preloads it.
check_LTLIBRARIES += tests/fail_write.la
# Bad plugins for tests/cli/test_plugins.sh: no entry point, a module
# name a built-in has, an entry point that fails on one rank.
check_LTLIBRARIES += tests/plugins/noentry.la tests/plugins/clash.la \
	tests/plugins/fail_rank.la
tests_plugins_noentry_la_SOURCES = tests/plugins/noentry.c
tests_plugins_noentry_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_plugins_clash_la_SOURCES = tests/plugins/clash.c
tests_plugins_clash_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_plugins_clash_la_LIBADD = src/libriver.la
tests_plugins_fail_rank_la_SOURCES = tests/plugins/fail_rank.c
tests_plugins_fail_rank_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_plugins_fail_rank_la_LIBADD = src/libriver.la
tests_fail_write_la_SOURCES = tests/fail_write.c
tests_fail_write_la_CFLAGS = $(RIVER_WARN_CFLAGS)
tests_fail_write_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_fail_write_la_LIBADD = -ldl
# meta_forge rewrites a metadata file's generation or disk pattern and
# seals it again with River's sealing code (compiled in: it is internal),
# as anyone could; tests/cli/test_coll_forged.sh runs it.
check_PROGRAMS += tests/meta_forge
tests_meta_forge_SOURCES = tests/meta_forge.c src/pcoll_seal.c
tests_meta_forge_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src
tests_meta_forge_LDADD = src/libriver.la
if RIVER_SANITIZERS
# MPI and its plugins keep allocations to exit; LSan reports for them are
# suppressed by library name (tests/lsan.supp), never for libriver. The
# dlclose shim keeps plugins mapped so that LSan can name them. The
# suppressions need the slow unwinder (libc's frames have no frame
# pointer: a fast unwind stops at vasprintf, above MPI's frame), and
# the slow unwinder's cost grows with the frames kept: 8 frames
# (malloc_context_size; ASan's default is 30) name the library in every
# MPI allocation seen here, the dlclose shim kept (a test that preloads
# a shim of its own appends it to LD_PRELOAD, never replaces it: a
# plugin's frames are then named), and made test_coll_meta 3.2 times faster
# under the sanitizers (107 s to 33.5 s). Where an error happens is
# still unwound in full.
check_LTLIBRARIES += tests/dlclose_noop.la
tests_dlclose_noop_la_SOURCES = tests/dlclose_noop.c
tests_dlclose_noop_la_CFLAGS = $(RIVER_WARN_CFLAGS)
tests_dlclose_noop_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
AM_TESTS_ENVIRONMENT += \
	LD_PRELOAD='$(abs_top_builddir)/tests/.libs/dlclose_noop.so'; export LD_PRELOAD; \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=23:verify_asan_link_order=0:fast_unwind_on_malloc=0:malloc_context_size=8; export ASAN_OPTIONS; \
	LSAN_OPTIONS=suppressions='$(abs_top_srcdir)/tests/lsan.supp':print_suppressions=0; export LSAN_OPTIONS; \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1; export UBSAN_OPTIONS; \
	RIVER_TEST_TIMEOUT_SCALE=3; export RIVER_TEST_TIMEOUT_SCALE;
endif
EXTRA_DIST += tests/lsan.supp tests/dlclose_noop.c tests/mpi/testlist tests/fortran/testlist \
	tests/testlist

# ---------------------------------------------------------------- layout
# The source tree's rules (doc/design.md section 2): no include cycle,
# one file speaks HDF5, programs use only the public headers.
TESTS += tests/test_layout.sh
EXTRA_DIST += tests/test_layout.sh

# --------------------------------------------------------------- launcher
# scripts/mpi-test-launch skips only when there is no MPI launcher at all;
# a launcher that cannot start a job fails (checked with a fake launcher).
TESTS += tests/test_launcher.sh
EXTRA_DIST += tests/test_launcher.sh

# ------------------------------------------------------------------ unit
if RIVER_HAVE_CMOCKA
unit_tests = \
	tests/unit/test_badparam \
	tests/unit/test_badparam_coll \
	tests/unit/test_badparam_dq_gd \
	tests/unit/test_checksum \
	tests/unit/test_collection \
	tests/unit/test_collection_damage \
	tests/unit/test_core \
	tests/unit/test_gd_alloc \
	tests/unit/test_partition \
	tests/unit/test_ideals \
	tests/unit/test_gensort \
	tests/unit/test_schema \
	tests/unit/test_schema_compare \
	tests/unit/test_schema_errors \
	tests/unit/test_valsort \
	tests/unit/test_throttle \
	tests/unit/test_log \
	tests/unit/test_pcoll_layout \
	tests/unit/test_outfile \
	tests/unit/test_pcoll_seal \
	tests/unit/test_pcoll_generation \
	tests/unit/test_sched \
	tests/unit/test_stage_throttle \
	tests/unit/test_sort \
	tests/unit/test_timing \
	tests/unit/test_units \
	tests/unit/test_topo \
	tests/unit/test_flowspec \
	tests/unit/test_badparam_flow
check_PROGRAMS += $(unit_tests)
TESTS += $(unit_tests)
check-local:
	@:
else
# ./configure --disable-unit-tests: one test stands in for the unit tests
# and is skipped, so the summary shows them missing (and .ci/run fails);
# a banner after the summary says it again.
TESTS += tests/unit_tests_disabled.sh
check-local: check-TESTS
	@echo "=================================================================="
	@echo "WARNING: the CMocka unit tests were NOT built or run"
	@echo "(configured with --disable-unit-tests). Install CMocka"
	@echo "(libcmocka-dev) and re-run ./configure to run them."
	@echo "=================================================================="
endif
EXTRA_DIST += tests/unit_tests_disabled.sh
# Each unit test is one file, tests/unit/NAME.c (Automake's default
# source), linked with the default LDADD below.
LDADD = src/libriver.la $(CMOCKA_LIBS)
AM_CPPFLAGS += $(CMOCKA_CFLAGS)
# The GD allocator is internal (not exported): its test compiles it in.
tests_unit_test_gd_alloc_SOURCES = tests/unit/test_gd_alloc.c src/gd_alloc.c
tests_unit_test_gd_alloc_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src
# The applications' fluid ideals live with the applications.
tests_unit_test_ideals_SOURCES = tests/unit/test_ideals.c \
	apps/common/ideal.c apps/common/ideal.h
tests_unit_test_ideals_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/apps/common
tests_unit_test_ideals_LDADD = $(LDADD) -lm
# So is the metadata file's seal.
tests_unit_test_pcoll_seal_SOURCES = tests/unit/test_pcoll_seal.c \
	src/pcoll_seal.c
tests_unit_test_pcoll_seal_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src
# So is the generation check (with the path code it lives in).
tests_unit_test_pcoll_generation_SOURCES = \
	tests/unit/test_pcoll_generation.c src/pcoll_path.c
tests_unit_test_pcoll_generation_CPPFLAGS = $(AM_CPPFLAGS) \
	-I$(top_srcdir)/src
# So is the scheduler, with the backoff it shares with river_wait.
tests_unit_test_sched_SOURCES = tests/unit/test_sched.c src/sched.c \
	src/wait.c src/backoff.c
tests_unit_test_sched_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src
# So is a flow stage's emulated bucket (with the scheduler its waits
# yield to).
tests_unit_test_stage_throttle_SOURCES = tests/unit/test_stage_throttle.c \
	src/throttle.c src/sched.c src/wait.c src/backoff.c
tests_unit_test_stage_throttle_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src
# So are the exchange partitioners.
tests_unit_test_partition_SOURCES = tests/unit/test_partition.c \
	src/flow_partition.c
tests_unit_test_partition_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src
# So is the modules' radix sort.
tests_unit_test_sort_SOURCES = tests/unit/test_sort.c src/modules/radix.c \
	src/keys.c
tests_unit_test_sort_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src
# The bad-argument tests share their log handlers.
tests_unit_test_badparam_SOURCES = tests/unit/test_badparam.c \
	tests/unit/badparam_util.c tests/unit/badparam.h
tests_unit_test_badparam_coll_SOURCES = tests/unit/test_badparam_coll.c \
	tests/unit/badparam_util.c tests/unit/badparam.h
tests_unit_test_badparam_dq_gd_SOURCES = tests/unit/test_badparam_dq_gd.c \
	tests/unit/badparam_util.c tests/unit/badparam.h
# The collection tests share their helpers in a header.
tests_unit_test_collection_SOURCES = tests/unit/test_collection.c \
	tests/unit/collection_test.h
tests_unit_test_collection_damage_SOURCES = \
	tests/unit/test_collection_damage.c tests/unit/collection_test.h
# The schema tests share their helpers in a header.
# The flow tests register test modules (tests/flow_modules.c) and read
# the specs under tests/flows.
tests_unit_test_flowspec_SOURCES = tests/unit/test_flowspec.c \
	tests/flow_modules.c tests/flow_modules.h
tests_unit_test_badparam_flow_SOURCES = tests/unit/test_badparam_flow.c \
	tests/unit/badparam_util.c tests/unit/badparam.h
EXTRA_DIST += tests/flows
tests_unit_test_schema_SOURCES = tests/unit/test_schema.c tests/unit/schema_test.h
tests_unit_test_schema_compare_SOURCES = tests/unit/test_schema_compare.c \
	tests/unit/schema_test.h
tests_unit_test_schema_errors_SOURCES = tests/unit/test_schema_errors.c \
	tests/unit/schema_test.h

# ------------------------------------------------------------------ MPI
# Programs are built as tests/mpi/NAME.mpi so the .mpi log compiler
# (the launcher) runs them.
mpi_tests = \
	tests/mpi/test_init_mpi.mpi \
	tests/mpi/test_init_owned_mpi.mpi \
	tests/mpi/test_pcoll_mpi.mpi \
	tests/mpi/test_pcoll_failover_mpi.mpi \
	tests/mpi/test_pcoll_api_mpi.mpi \
	tests/mpi/test_pcoll_parts_mpi.mpi \
	tests/mpi/test_pcoll_concurrent_mpi.mpi \
	tests/mpi/test_dq_mpi.mpi \
	tests/mpi/test_dq_pull_mpi.mpi \
	tests/mpi/test_dq_bad_mpi.mpi \
	tests/mpi/test_dq_coop_mpi.mpi \
	tests/mpi/test_dq_msg_mpi.mpi \
	tests/mpi/test_progress_mpi.mpi \
	tests/mpi/test_stats_mpi.mpi \
	tests/mpi/test_watchdog_mpi.mpi \
	tests/mpi/test_dq_bounds_mpi.mpi \
	tests/mpi/test_gd_mpi.mpi \
	tests/mpi/test_flow_mpi.mpi \
	tests/mpi/test_modules_api_mpi.mpi tests/mpi/test_join_mpi.mpi \
	tests/mpi/test_topo_bind_mpi.mpi
check_PROGRAMS += $(mpi_tests)
TESTS += $(mpi_tests) tests/mpi/test_dq16.sh tests/mpi/test_dq_winalloc.sh \
  tests/mpi/test_dq_posted.sh tests/mpi/test_dq_scale.sh \
  tests/mpi/test_dq_window.sh
EXTRA_DIST += tests/mpi/mpitest.h tests/mpi/test_dq16.sh tests/mpi/test_dq_winalloc.sh \
  tests/mpi/test_dq_posted.sh tests/mpi/test_dq_scale.sh \
  tests/mpi/test_dq_window.sh \
  tests/fortran/test_errstop_f.sh
EXTRA_DIST += tests/fortran/test_pcoll_f_layout.inc
tests_mpi_test_init_mpi_mpi_SOURCES = tests/mpi/test_init_mpi.c tests/mpi/mpitest.h
tests_mpi_test_init_mpi_mpi_LDADD = src/libriver.la
# The binding test asks hwloc itself where each rank and thread runs.
tests_mpi_test_topo_bind_mpi_mpi_SOURCES = tests/mpi/test_topo_bind_mpi.c \
	tests/mpi/mpitest.h
tests_mpi_test_topo_bind_mpi_mpi_CPPFLAGS = $(AM_CPPFLAGS) $(HWLOC_CFLAGS)
tests_mpi_test_topo_bind_mpi_mpi_LDADD = src/libriver.la $(HWLOC_LIBS)
tests_mpi_test_init_owned_mpi_mpi_SOURCES = tests/mpi/test_init_owned_mpi.c tests/mpi/mpitest.h
tests_mpi_test_init_owned_mpi_mpi_LDADD = src/libriver.la
# The parallel-collection tests share tests/mpi/pcolltest.h.
tests_mpi_test_pcoll_mpi_mpi_SOURCES = tests/mpi/test_pcoll_mpi.c \
	tests/mpi/pcolltest.h tests/mpi/mpitest.h
tests_mpi_test_pcoll_mpi_mpi_LDADD = src/libriver.la
tests_mpi_test_pcoll_failover_mpi_mpi_SOURCES = \
	tests/mpi/test_pcoll_failover_mpi.c tests/mpi/pcolltest.h \
	tests/mpi/mpitest.h
tests_mpi_test_pcoll_failover_mpi_mpi_LDADD = src/libriver.la
tests_mpi_test_pcoll_api_mpi_mpi_SOURCES = tests/mpi/test_pcoll_api_mpi.c \
	tests/mpi/pcolltest.h tests/mpi/mpitest.h
tests_mpi_test_pcoll_api_mpi_mpi_LDADD = src/libriver.la
tests_mpi_test_pcoll_parts_mpi_mpi_SOURCES = tests/mpi/test_pcoll_parts_mpi.c \
	tests/mpi/pcolltest.h tests/mpi/mpitest.h
tests_mpi_test_pcoll_parts_mpi_mpi_LDADD = src/libriver.la
tests_mpi_test_pcoll_concurrent_mpi_mpi_SOURCES = \
	tests/mpi/test_pcoll_concurrent_mpi.c tests/mpi/pcolltest.h \
	tests/mpi/mpitest.h
tests_mpi_test_pcoll_concurrent_mpi_mpi_LDADD = src/libriver.la
# The distributed-queue tests share tests/mpi/dqtest.h.
tests_mpi_test_dq_mpi_mpi_SOURCES = tests/mpi/test_dq_mpi.c tests/mpi/dqtest.h \
	tests/mpi/mpitest.h
tests_mpi_test_dq_mpi_mpi_LDADD = src/libriver.la
# DQ_HDR_SIZE and DQ_PAGE: where message buffers must start.
tests_mpi_test_dq_mpi_mpi_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src
tests_mpi_test_dq_pull_mpi_mpi_SOURCES = tests/mpi/test_dq_pull_mpi.c \
	tests/mpi/dqtest.h tests/mpi/mpitest.h
tests_mpi_test_dq_pull_mpi_mpi_LDADD = src/libriver.la
tests_mpi_test_dq_bad_mpi_mpi_SOURCES = tests/mpi/test_dq_bad_mpi.c \
	tests/mpi/dqtest.h tests/mpi/mpitest.h
tests_mpi_test_dq_bad_mpi_mpi_LDADD = src/libriver.la
tests_mpi_test_dq_coop_mpi_mpi_SOURCES = tests/mpi/test_dq_coop_mpi.c \
	tests/mpi/dqtest.h tests/mpi/mpitest.h
tests_mpi_test_dq_coop_mpi_mpi_LDADD = src/libriver.la
tests_mpi_test_dq_msg_mpi_mpi_SOURCES = tests/mpi/test_dq_msg_mpi.c \
	tests/mpi/mpitest.h
tests_mpi_test_dq_msg_mpi_mpi_LDADD = src/libriver.la
tests_mpi_test_progress_mpi_mpi_SOURCES = tests/mpi/test_progress_mpi.c \
	tests/mpi/mpitest.h
tests_mpi_test_progress_mpi_mpi_LDADD = src/libriver.la
tests_mpi_test_stats_mpi_mpi_SOURCES = tests/mpi/test_stats_mpi.c \
	tests/mpi/mpitest.h
tests_mpi_test_stats_mpi_mpi_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_mpi_test_stats_mpi_mpi_LDADD = src/libriver.la $(JANSSON_LIBS) -lm
tests_mpi_test_watchdog_mpi_mpi_SOURCES = tests/mpi/test_watchdog_mpi.c \
	tests/mpi/mpitest.h
tests_mpi_test_watchdog_mpi_mpi_LDADD = src/libriver.la
tests_mpi_test_dq_bounds_mpi_mpi_SOURCES = tests/mpi/test_dq_bounds_mpi.c \
	tests/mpi/mpitest.h
tests_mpi_test_dq_bounds_mpi_mpi_LDADD = src/libriver.la
tests_mpi_test_gd_mpi_mpi_SOURCES = tests/mpi/test_gd_mpi.c tests/mpi/mpitest.h \
	src/gd_alloc.c
tests_mpi_test_gd_mpi_mpi_LDADD = src/libriver.la
tests_mpi_test_gd_mpi_mpi_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src
tests_mpi_test_flow_mpi_mpi_SOURCES = tests/mpi/test_flow_mpi.c tests/mpi/mpitest.h
tests_mpi_test_flow_mpi_mpi_LDADD = src/libriver.la
tests_mpi_test_modules_api_mpi_mpi_SOURCES = tests/mpi/test_modules_api_mpi.c \
	tests/mpi/mpitest.h
tests_mpi_test_modules_api_mpi_mpi_LDADD = src/libriver.la
tests_mpi_test_join_mpi_mpi_SOURCES = tests/mpi/test_join_mpi.c \
	tests/mpi/mpitest.h
tests_mpi_test_join_mpi_mpi_CPPFLAGS = $(AM_CPPFLAGS) \
	-DFLOWS_DIR='"$(abs_top_srcdir)/flows"'
tests_mpi_test_join_mpi_mpi_LDADD = src/libriver.la

# ------------------------------------------------------------------ CLI
# Shell tests of the programs apps/river and apps/river-bench, each
# run through the launcher like the multi-rank tests.
cli_tests = tests/cli/test_river_cli.sh tests/cli/test_coll_cli.sh \
	tests/cli/test_cli_args.sh tests/cli/test_fsck.sh \
	tests/cli/test_coll_special.sh tests/cli/test_coll_streams.sh \
	tests/cli/test_bench.sh tests/cli/test_coll_commit.sh \
	tests/cli/test_coll_memory.sh tests/cli/test_coll_meta.sh \
	tests/cli/test_coll_meta_damaged.sh \
	tests/cli/test_coll_concurrent.sh tests/cli/test_flow_run.sh \
	tests/cli/test_flow_check.sh tests/cli/test_modules_io.sh \
	tests/cli/test_modules_sort.sh tests/cli/test_valsort.sh \
	tests/cli/test_gensort_vectors.sh \
	tests/cli/test_sort.sh tests/cli/test_sort_static.sh \
	tests/cli/test_demo.sh tests/cli/test_sort_file.sh tests/cli/test_join.sh \
	tests/cli/test_sort_twopass.sh tests/cli/test_sort16.sh \
	tests/cli/test_coll_symlink.sh tests/cli/test_waits.sh \
	tests/cli/test_outfile_target.sh tests/cli/test_coll_forged.sh \
	tests/cli/test_topo.sh tests/cli/test_coll_nodes.sh \
	tests/cli/test_slurm.sh tests/cli/test_progress.sh tests/cli/test_stats.sh \
	tests/cli/test_plot.sh tests/cli/test_noreplace.sh \
	tests/cli/test_said_once.sh tests/cli/test_plugins.sh \
	tests/cli/test_units.sh
TESTS += $(cli_tests)

# ---------------------------------------------------------------- docs
# doc/guide.md's Fortran reference against module river's sources
# (tests/doc/check_fortran_ref.py; python3, no MPI job), through the
# launcher like every shell test (tests/doc/testlist).
doc_tests = tests/doc/test_fortran_ref.sh
TESTS += $(doc_tests)
EXTRA_DIST += $(doc_tests) tests/doc/testlist tests/doc/check_fortran_ref.py
EXTRA_DIST += $(cli_tests) tests/cli/testlist tests/cli/clitest.sh \
	tests/cli/check_stats.py tests/cli/stats-example.json \
	tests/cli/meta_crash.river.h5 \
	tests/flows/run/gen_count.yaml tests/flows/run/gen_kind.yaml \
	tests/flows/run/gen_pull_small.yaml \
	tests/flows/run/shared.yaml tests/flows/run/coll_count.yaml \
	tests/flows/run/gen_coll.yaml tests/flows/run/file_copy.yaml \
	tests/flows/run/file_count.yaml tests/flows/run/stdin_count.yaml \
	tests/flows/run/gen_stdout.yaml tests/flows/run/gen_plain.yaml \
	tests/flows/run/sort_part.yaml tests/flows/run/sort_range.yaml \
	tests/flows/run/sort_part_uneven.yaml \
	tests/flows/run/sort_merge.yaml tests/flows/run/filter.yaml \
	tests/flows/run/filter_edge.yaml

# ------------------------------------------------------ emulated nodes
# The DQ, GD, flow, sort, join and collection tests again, with their
# ranks on 2 or 3 emulated nodes (river-mpirun --nodes; TCP between the
# nodes, which share nothing but this machine's files), and the DQ tests
# with two-sided credits forced on one node: tests/nodes/*.sh, each a
# line that runs the one-node test that way (ranks and limits in
# tests/nodes/testlist).
nodes_tests = tests/nodes/test_hello_nodes.sh tests/nodes/test_dq_msg.sh \
	tests/nodes/test_dq_2n.sh \
	tests/nodes/test_dq_pull_3n.sh tests/nodes/test_dq_coop_2n.sh \
	tests/nodes/test_gd_2n.sh tests/nodes/test_flow_2n.sh \
	tests/nodes/test_join_mpi_2n.sh tests/nodes/test_pcoll_2n.sh \
	tests/nodes/test_pcoll_failover_3n.sh tests/nodes/test_sort_2n.sh \
	tests/nodes/test_sort_twopass_2n.sh tests/nodes/test_join_2n.sh \
	tests/nodes/test_flow_run_3n.sh tests/nodes/test_modules_sort_2n.sh \
	tests/nodes/test_coll_cli_2n.sh tests/nodes/test_flows_3n.sh \
	tests/nodes/test_bench_net_2n.sh
TESTS += $(nodes_tests)
EXTRA_DIST += $(nodes_tests) tests/nodes/testlist

# --------------------------------------------------------------- Fortran
if RIVER_FORTRAN
fortran_tests = \
	tests/fortran/test_core_f.mpi \
	tests/fortran/test_pcoll_f.mpi \
	tests/fortran/test_dq_f.mpi \
	tests/fortran/test_gd_f.mpi \
	tests/fortran/test_flow_f.mpi
# test_errstop_f is run by test_errstop_f.sh, which checks that it fails
# and how.
check_PROGRAMS += $(fortran_tests) tests/fortran/test_errstop_f
TESTS += $(fortran_tests) tests/fortran/test_errstop_f.sh
# Module ftest (tests/fortran/ftest.F90: check, ftest_finish, the log
# capture, a temporary directory, libc helpers) is in the _SOURCES of the
# tests that use it. Without per-target flags Automake compiles it once,
# to tests/fortran/ftest.$(OBJEXT), which the tests share; being in
# _SOURCES it is distributed. (A convenience library would be built by
# `make all`; check_LTLIBRARIES holds the test shims, built without
# the sanitizers.)
tests_fortran_test_core_f_mpi_SOURCES = tests/fortran/ftest.F90 tests/fortran/test_core_f.F90
tests_fortran_test_core_f_mpi_LDADD = fortran/libriverf.la src/libriver.la
tests_fortran_test_pcoll_f_mpi_SOURCES = tests/fortran/ftest.F90 tests/fortran/test_pcoll_f.F90
tests_fortran_test_pcoll_f_mpi_LDADD = fortran/libriverf.la src/libriver.la
tests_fortran_test_dq_f_mpi_SOURCES = tests/fortran/ftest.F90 tests/fortran/test_dq_f.F90
tests_fortran_test_dq_f_mpi_LDADD = fortran/libriverf.la src/libriver.la
tests_fortran_test_gd_f_mpi_SOURCES = tests/fortran/ftest.F90 tests/fortran/test_gd_f.F90
tests_fortran_test_gd_f_mpi_LDADD = fortran/libriverf.la src/libriver.la
tests_fortran_test_flow_f_mpi_SOURCES = tests/fortran/ftest.F90 tests/fortran/test_flow_f.F90
tests_fortran_test_flow_f_mpi_LDADD = fortran/libriverf.la src/libriver.la
# test_errstop_f has no checks to count: it stops at its first call.
tests_fortran_test_errstop_f_SOURCES = tests/fortran/test_errstop_f.F90
tests_fortran_test_errstop_f_LDADD = fortran/libriverf.la src/libriver.la
# Module dependencies Automake does not see. gfortran writes ftest.mod,
# like river.mod, into the build root, where every compile runs. The
# tests' own objects are named: their _OBJECTS hold ftest's object too,
# which must not depend on its own .mod.
$(tests_fortran_test_core_f_mpi_OBJECTS) $(tests_fortran_test_errstop_f_OBJECTS) \
$(tests_fortran_test_pcoll_f_mpi_OBJECTS) $(tests_fortran_test_dq_f_mpi_OBJECTS) \
$(tests_fortran_test_gd_f_mpi_OBJECTS) $(tests_fortran_test_flow_f_mpi_OBJECTS): river.mod
ftest.mod: tests/fortran/ftest.$(OBJEXT)
tests/fortran/test_core_f.$(OBJEXT) tests/fortran/test_pcoll_f.$(OBJEXT) \
tests/fortran/test_dq_f.$(OBJEXT) tests/fortran/test_gd_f.$(OBJEXT) \
tests/fortran/test_flow_f.$(OBJEXT): ftest.mod
# test_pcoll_f includes its layout checks (Automake does not scan Fortran
# includes).
tests/fortran/test_pcoll_f.$(OBJEXT): tests/fortran/test_pcoll_f_layout.inc
endif

# The tests `make check` runs, one line (.ci/run picks its sanitizer
# pass from it).
print-tests:
	@echo $(TESTS)
.PHONY: print-tests
