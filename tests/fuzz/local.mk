# The flow spec loader's fuzzing harness (libFuzzer, clang). Not part of
# `make check`: `make fuzz` builds tests/fuzz/fuzz_flowspec from the
# library's sources with clang under ASan and UBSan and runs it for
# FUZZ_SECONDS over the seed corpus (tests/fuzz/corpus and the specs the
# tests use); a crash, leak or sanitizer report fails it, with the input
# saved as tests/fuzz/crash-*. .ci/run runs it.
CLANG = clang
FUZZ_SECONDS = 60
EXTRA_DIST += tests/fuzz/fuzz_flowspec.c tests/fuzz/corpus/pipeline.yaml \
	tests/fuzz/corpus/params.yaml
CLEANFILES += tests/fuzz/fuzz_flowspec
clean-local: clean-fuzz
clean-fuzz:
	-rm -rf tests/fuzz/work tests/fuzz/crash-* tests/fuzz/leak-* \
	  tests/fuzz/timeout-*

tests/fuzz/fuzz_flowspec: $(src_libriver_la_SOURCES) tests/flow_modules.c \
	  tests/fuzz/fuzz_flowspec.c
	srcs=; for f in $(src_libriver_la_SOURCES) tests/flow_modules.c \
	  tests/fuzz/fuzz_flowspec.c; do \
	  case $$f in *.c) srcs="$$srcs $(srcdir)/$$f";; esac; done; \
	OMPI_CC=$(CLANG) $(MPICC) -g -O1 -fsanitize=fuzzer,address,undefined \
	  -fno-sanitize-recover=undefined -DHAVE_CONFIG_H -I$(top_builddir) \
	  $(AM_CPPFLAGS) -I$(srcdir)/src $(HDF5_CFLAGS) $(HWLOC_CFLAGS) \
	  $(ISAL_CFLAGS) $(YAML_CFLAGS) $$srcs -o $@ $(HDF5_LIBS) \
	  $(HWLOC_LIBS) $(ISAL_LIBS) $(YAML_LIBS) -lpthread -ldl -lm

fuzz: tests/fuzz/fuzz_flowspec
	mkdir -p tests/fuzz/work
	ASAN_OPTIONS=detect_leaks=1 tests/fuzz/fuzz_flowspec \
	  -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	  -max_len=65536 -artifact_prefix=tests/fuzz/ -print_final_stats=1 \
	  tests/fuzz/work $(srcdir)/tests/fuzz/corpus \
	  $(srcdir)/tests/flows/good $(srcdir)/tests/flows/bad \
	  $(srcdir)/tests/flows/run

.PHONY: fuzz clean-fuzz
