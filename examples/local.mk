# examples/: programs a new user copies, compiled and run by make check
# through the launcher (ranks and time limit in examples/testlist), so
# they never rot:
#   hello.c, hello_f.F90  the README's C example and its Fortran twin;
#                         test_readme.sh checks that the README shows
#                         hello.c as it is
#   filter_module.c       a C user module in a flow spec
#                         (filter_module.yaml), run on that spec by
#                         test_filter_module.sh
#   particles_f.F90       a Fortran code: particles computed, written to
#                         a parallel collection, read back and checked
#   plugin_c.c,           plugins: shared libraries of user modules (C
#   plugin_f.F90          and Fortran) that river run --plugin loads on
#                         every rank (plugin.yaml); run by
#                         tests/cli/test_plugins.sh

example_programs = examples/hello.mpi
examples_hello_mpi_SOURCES = examples/hello.c
examples_hello_mpi_LDADD = src/libriver.la
check_PROGRAMS += examples/filter_module
examples_filter_module_SOURCES = examples/filter_module.c
examples_filter_module_LDADD = src/libriver.la
if RIVER_FORTRAN
example_programs += examples/hello_f.mpi examples/particles_f.mpi
examples_hello_f_mpi_SOURCES = examples/hello_f.F90
examples_hello_f_mpi_LDADD = fortran/libriverf.la src/libriver.la
examples_particles_f_mpi_SOURCES = examples/particles_f.F90
examples_particles_f_mpi_LDADD = fortran/libriverf.la src/libriver.la
# gfortran finds river.mod in the build root: build it first.
$(examples_hello_f_mpi_OBJECTS) $(examples_particles_f_mpi_OBJECTS): river.mod
endif
check_PROGRAMS += $(example_programs)
# The plugins, built as a user builds one (a shared library linked with
# River), as libtool modules for the tests.
check_LTLIBRARIES += examples/plugin_c.la
examples_plugin_c_la_SOURCES = examples/plugin_c.c
examples_plugin_c_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
examples_plugin_c_la_LIBADD = src/libriver.la
if RIVER_FORTRAN
check_LTLIBRARIES += examples/plugin_f.la
examples_plugin_f_la_SOURCES = examples/plugin_f.F90
examples_plugin_f_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
examples_plugin_f_la_LIBADD = fortran/libriverf.la src/libriver.la
$(examples_plugin_f_la_OBJECTS): river.mod
endif
TESTS += $(example_programs) examples/test_filter_module.sh \
	examples/test_readme.sh
EXTRA_DIST += examples/testlist examples/test_readme.sh \
	examples/test_filter_module.sh examples/filter_module.yaml \
	examples/plugin.yaml

# Installed too, to $(docdir)/examples: the sources and a Makefile that
# builds them against the installed River with pkg-config, as a program
# of your own is built, and runs them (`make check` there; the file is
# examples/Makefile.installed). make installcheck (run by distcheck)
# builds and runs them so from a copy of that directory, without
# LD_LIBRARY_PATH: river.pc's rpath must be enough.
riverexamplesdir = $(docdir)/examples
dist_riverexamples_DATA = examples/hello.c examples/filter_module.c \
	examples/filter_module.yaml examples/plugin_c.c examples/plugin.yaml
if RIVER_FORTRAN
dist_riverexamples_DATA += examples/hello_f.F90 examples/particles_f.F90 \
	examples/plugin_f.F90 examples/plugin_f.yaml
endif
EXTRA_DIST += examples/Makefile.installed

install-data-local: install-examples-makefile
install-examples-makefile:
	$(MKDIR_P) '$(DESTDIR)$(riverexamplesdir)'
	$(INSTALL_DATA) $(srcdir)/examples/Makefile.installed \
	  '$(DESTDIR)$(riverexamplesdir)/Makefile'
uninstall-local: uninstall-examples-makefile
uninstall-examples-makefile:
	rm -f '$(DESTDIR)$(riverexamplesdir)/Makefile'

# The programs must find libriver through the rpath alone, so River's
# libdir is taken out of LD_LIBRARY_PATH (the rest stays: a site's MPI or
# HDF5 may need it). With a DESTDIR the libraries are not where the
# rpath points: then pkg-config's paths get the DESTDIR
# (PKG_CONFIG_SYSROOT_DIR) and so does LD_LIBRARY_PATH. The scratch copy
# is removed when both steps pass, kept (and named) when one fails.
installcheck-local: installcheck-examples
installcheck-examples:
	@src='$(DESTDIR)$(riverexamplesdir)'; \
	test -f "$$src/Makefile" || { echo "installcheck: $$src/Makefile not installed" >&2; exit 1; }; \
	dir=`mktemp -d "$${TMPDIR:-/tmp}/river-examples.XXXXXX"` || exit 1; \
	cp -R "$$src/." "$$dir" && chmod -R u+w "$$dir" || exit 1; \
	ld=`printf '%s\n' "$${LD_LIBRARY_PATH-}" | tr ':' '\n' | \
	    grep -vx -e '' -e '$(libdir)' -e '$(libdir)/' | paste -sd: -`; \
	sysroot=; \
	if test -n '$(DESTDIR)'; then \
	  sysroot='$(DESTDIR)'; ld='$(DESTDIR)$(libdir)'$${ld:+:$$ld}; \
	fi; \
	echo "installcheck: the installed examples, built and run in $$dir"; \
	if env -u LD_LIBRARY_PATH $${ld:+LD_LIBRARY_PATH="$$ld"} \
	     $${sysroot:+PKG_CONFIG_SYSROOT_DIR="$$sysroot"} \
	     PKG_CONFIG_PATH='$(DESTDIR)$(libdir)/pkgconfig' \
	     PATH='$(DESTDIR)$(bindir)':"$$PATH" \
	     sh -c 'cd "$$1" && $(MAKE) && $(MAKE) check' sh "$$dir"; then \
	  rm -rf "$$dir"; \
	else \
	  echo "installcheck: the installed examples failed (kept in $$dir)" >&2; \
	  exit 1; \
	fi
.PHONY: install-examples-makefile uninstall-examples-makefile \
	installcheck-examples
