# The river command-line tool and the benchmarks.

bin_PROGRAMS += apps/river apps/river-bench

apps_river_SOURCES = apps/river.c apps/river_cli.h apps/river_cli.c \
	apps/river_coll.c
apps_river_LDADD = src/libriver.la

apps_river_bench_SOURCES = apps/bench/bench.c apps/bench/bench.h \
	apps/bench/bench_dq.c apps/bench/bench_gd.c
apps_river_bench_LDADD = src/libriver.la -lm
