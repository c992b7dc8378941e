# libriver: the C library, and its public headers.

lib_LTLIBRARIES += src/libriver.la

src_libriver_la_SOURCES = \
	src/river_internal.h \
	src/file_internal.h \
	src/file.c \
	src/core.c \
	src/units.c \
	src/agree.c \
	src/log.c \
	src/timing.c \
	src/topo.c \
	src/checksum.c \
	src/schema.c \
	src/collection_internal.h \
	src/collection.c \
	src/collection_write.c \
	src/pcoll_internal.h \
	src/pcoll.c \
	src/pcoll_commit.c \
	src/pcoll_open.c \
	src/pcoll_meta.c \
	src/pcoll_seal.c \
	src/pcoll_path.c \
	src/pcoll_ship.c \
	src/pcoll_remove.c \
	src/pcoll_lock.c \
	src/pcoll_gc.c \
	src/pcoll_record.c \
	src/pcoll_outside.c \
	src/outfile.c \
	src/fault.c \
	src/pcoll_layout.c \
	src/gensort.c \
	src/wait.c src/backoff.c \
	src/sched_internal.h \
	src/sched.c \
	src/rma.h \
	src/rma.c \
	src/dq_internal.h \
	src/dq_mem.c \
	src/dq_recv.c \
	src/dq.c \
	src/dq_producer.c \
	src/dq_consumer.c \
	src/dq_credit.c \
	src/throttle.c \
	src/perturb.c \
	src/cpu_hog.c \
	src/gd_internal.h \
	src/gd_alloc_internal.h \
	src/gd.c \
	src/gd_client.c \
	src/gd_server.c \
	src/gd_alloc.c \
	src/keys.c \
	src/valsort.c \
	src/progress_internal.h \
	src/progress.c \
	src/flow_internal.h \
	src/module.c src/plugin.c \
	src/flow.c \
	src/flow_check.c \
	src/flow_run_internal.h \
	src/flow_abort.c \
	src/flow_run.c \
	src/flow_emulate.c \
	src/flow_partition.c \
	src/flow_io.c \
	src/flow_series.c \
	src/flow_stats.c \
	src/flowspec.c \
	src/modules/modules.h \
	src/modules/builtin.c \
	src/modules/gen.c \
	src/modules/count.c \
	src/modules/coll.c \
	src/modules/file.c \
	src/modules/stdio.c \
	src/modules/radix.c \
	src/modules/sort.c \
	src/modules/merge.c \
	src/modules/partition.c \
	src/modules/filter.c \
	src/modules/join.c
src_libriver_la_CPPFLAGS = $(AM_CPPFLAGS) -DRIVER_BUILDING_LIBRARY \
	$(HDF5_CFLAGS) $(HWLOC_CFLAGS) $(ISAL_CFLAGS) $(YAML_CFLAGS) \
	$(JANSSON_CFLAGS)
src_libriver_la_CFLAGS = $(AM_CFLAGS) $(RIVER_VISIBILITY_CFLAGS)
src_libriver_la_LIBADD = $(HDF5_LIBS) $(HWLOC_LIBS) $(ISAL_LIBS) $(YAML_LIBS) \
	$(JANSSON_LIBS) \
	-lpthread
src_libriver_la_LDFLAGS = $(AM_LDFLAGS) -version-info $(RIVER_LT_VERSION) \
	-no-undefined

include_HEADERS = include/river.h
riverincdir = $(includedir)/river
riverinc_HEADERS = \
	include/river/core.h \
	include/river/units.h \
	include/river/topo.h \
	include/river/checksum.h \
	include/river/schema.h \
	include/river/collection.h \
	include/river/pcoll.h \
	include/river/outfile.h \
	include/river/gensort.h \
	include/river/wait.h \
	include/river/dq.h \
	include/river/throttle.h include/river/perturb.h include/river/cpu_hog.h \
	include/river/gd.h \
	include/river/module.h \
	include/river/flow.h \
	include/river/progress.h \
	include/river/stats.h \
	include/river/valsort.h
nodist_riverinc_HEADERS = include/river/version.h
