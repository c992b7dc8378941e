# The river command-line tool.

bin_PROGRAMS += apps/river

apps_river_SOURCES = apps/river.c apps/river_cli.h apps/river_cli.c \
	apps/river_coll.c
apps_river_LDADD = src/libriver.la
