# examples/: the README's C example (hello.c) and its Fortran twin,
# compiled and run by make check through the launcher (ranks and time
# limit in examples/testlist), so they never rot; test_readme.sh checks
# that the README shows hello.c as it is.

example_tests = examples/hello.mpi
examples_hello_mpi_SOURCES = examples/hello.c
examples_hello_mpi_LDADD = src/libriver.la
if RIVER_FORTRAN
example_tests += examples/hello_f.mpi
examples_hello_f_mpi_SOURCES = examples/hello_f.F90
examples_hello_f_mpi_LDADD = fortran/libriverf.la src/libriver.la
# gfortran finds river.mod in the build root: build it first.
$(examples_hello_f_mpi_OBJECTS): river.mod
endif
check_PROGRAMS += $(example_tests)
TESTS += $(example_tests) examples/test_readme.sh
EXTRA_DIST += examples/testlist examples/test_readme.sh
