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
TESTS += $(example_programs) examples/test_filter_module.sh \
	examples/test_readme.sh
EXTRA_DIST += examples/testlist examples/test_readme.sh \
	examples/test_filter_module.sh examples/filter_module.yaml
