# The fuzzing harnesses (libFuzzer, clang): the flow spec loader
# (fuzz_flowspec) and the collection metadata loader (fuzz_meta). Not
# part of `make check`: `make fuzz` builds tests/fuzz/fuzz_flowspec and
# tests/fuzz/fuzz_meta from the library's sources with clang under ASan
# and UBSan and runs each for FUZZ_SECONDS over its seed corpus (the
# spec loader: tests/fuzz/corpus and the specs the tests use; the
# metadata loader: tests/fuzz/corpus_meta, metadata files written by
# `river gen`); a crash, leak or sanitizer report fails it, with the
# input saved as tests/fuzz/crash-*. .ci/run runs it.
CLANG = clang
FUZZ_SECONDS = 60
FUZZ_META_SEEDS = tests/fuzz/corpus_meta/one.river.h5 \
	tests/fuzz/corpus_meta/mirror.river.h5 \
	tests/fuzz/corpus_meta/interleaved.river.h5 \
	tests/fuzz/corpus_meta/sorted.river.h5
EXTRA_DIST += tests/fuzz/fuzz_flowspec.c tests/fuzz/corpus/pipeline.yaml \
	tests/fuzz/corpus/params.yaml tests/fuzz/fuzz_meta.c $(FUZZ_META_SEEDS)
CLEANFILES += tests/fuzz/fuzz_flowspec tests/fuzz/fuzz_meta
clean-local: clean-fuzz
clean-fuzz:
	-rm -rf tests/fuzz/work tests/fuzz/work_meta tests/fuzz/crash-* \
	  tests/fuzz/leak-* tests/fuzz/timeout-*

# FUZZ_BUILD: compile the library's sources and the harness's (the
# shell variable harness) into $@ with clang under libFuzzer, ASan and
# UBSan.
FUZZ_BUILD = srcs=; for f in $(src_libriver_la_SOURCES) $$harness; do \
	  case $$f in *.c) srcs="$$srcs $(srcdir)/$$f";; esac; done; \
	OMPI_CC=$(CLANG) $(MPICC) -g -O1 -fsanitize=fuzzer,address,undefined \
	  -fno-sanitize-recover=undefined -DHAVE_CONFIG_H -I$(top_builddir) \
	  $(AM_CPPFLAGS) -I$(srcdir)/src $(HDF5_CFLAGS) $(HWLOC_CFLAGS) \
	  $(ISAL_CFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS) $$srcs -o $@ \
	  $(HDF5_LIBS) $(HWLOC_LIBS) $(ISAL_LIBS) $(YAML_LIBS) $(JANSSON_LIBS) \
	  -lpthread -ldl -lm

tests/fuzz/fuzz_flowspec: $(src_libriver_la_SOURCES) tests/flow_modules.c \
	  tests/fuzz/fuzz_flowspec.c
	harness="tests/flow_modules.c tests/fuzz/fuzz_flowspec.c"; $(FUZZ_BUILD)

tests/fuzz/fuzz_meta: $(src_libriver_la_SOURCES) tests/fuzz/fuzz_meta.c
	harness=tests/fuzz/fuzz_meta.c; $(FUZZ_BUILD)

FUZZ_RUN = -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	-artifact_prefix=tests/fuzz/ -print_final_stats=1

fuzz: tests/fuzz/fuzz_flowspec tests/fuzz/fuzz_meta
	mkdir -p tests/fuzz/work tests/fuzz/work_meta
	ASAN_OPTIONS=detect_leaks=1 tests/fuzz/fuzz_flowspec $(FUZZ_RUN) \
	  -max_len=65536 tests/fuzz/work $(srcdir)/tests/fuzz/corpus \
	  $(srcdir)/tests/flows/good $(srcdir)/tests/flows/bad \
	  $(srcdir)/tests/flows/run
	ASAN_OPTIONS=detect_leaks=1 tests/fuzz/fuzz_meta $(FUZZ_RUN) \
	  -max_len=65536 tests/fuzz/work_meta $(srcdir)/tests/fuzz/corpus_meta

.PHONY: fuzz clean-fuzz
