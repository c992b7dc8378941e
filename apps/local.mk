# The river command-line tool and the benchmarks.

bin_PROGRAMS += apps/river apps/river-bench

apps_river_SOURCES = apps/cli/river.c apps/cli/cli.h apps/cli/cli.c \
	apps/cli/coll.h apps/cli/coll.c apps/cli/coll_info.c \
	apps/cli/coll_rm.c apps/cli/run.c apps/cli/flow.c apps/cli/valsort.c \
	apps/cli/sort.c apps/cli/app.h apps/cli/app.c apps/cli/join.c apps/cli/topo.c \
	apps/common/shipped.h apps/common/shipped.c \
	apps/common/ideal.h apps/common/ideal.c \
	apps/common/number.h apps/common/number.c
apps_river_LDADD = src/libriver.la -lm
# river sort and river-bench sort find flows/sort.yaml in the source tree
# when they run from the build tree, else installed (apps/common).
app_flows_cppflags = $(AM_CPPFLAGS) \
	-DRIVER_SRC_FLOWSDIR='"$(abs_top_srcdir)/flows"' \
	-DRIVER_BUILDDIR='"$(abs_top_builddir)"' \
	-DRIVER_FLOWSDIR='"$(flowsdir)"'
apps_river_CPPFLAGS = $(app_flows_cppflags)

apps_river_bench_SOURCES = apps/bench/bench.c apps/bench/bench.h \
	apps/bench/bench_dq.c apps/bench/bench_gd.c apps/bench/bench_sort.c apps/bench/bench_join.c \
	apps/bench/bench_scale.c apps/bench/bench_net.c \
	apps/bench/pmpi_count.c apps/bench/pmpi_count.h \
	apps/common/shipped.h apps/common/shipped.c \
	apps/common/ideal.h apps/common/ideal.c \
	apps/common/number.h apps/common/number.c
apps_river_bench_LDADD = src/libriver.la -lm
apps_river_bench_CPPFLAGS = $(app_flows_cppflags)
