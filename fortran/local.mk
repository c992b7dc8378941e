# libriverf and module river: the Fortran 2008 API over iso_c_binding.
#
# river_constants.inc is generated from the C headers by a small program
# so that error codes come from the one table in include/river/core.h.
# Automake does not track Fortran module dependencies: the rules at the
# end declare them.

if RIVER_FORTRAN
lib_LTLIBRARIES += fortran/libriverf.la
noinst_PROGRAMS += fortran/river_gen_constants
pkgconfig_DATA += river-fortran.pc

fortran_river_gen_constants_SOURCES = fortran/river_gen_constants.c
fortran_river_gen_constants_CFLAGS = $(AM_CFLAGS)

fortran/river_constants.inc: fortran/river_gen_constants$(EXEEXT)
	$(AM_V_GEN)fortran/river_gen_constants$(EXEEXT) > $@.tmp && mv $@.tmp $@
BUILT_SOURCES += fortran/river_constants.inc
# gfortran drops every module (river.mod and the tests' own) in the build root.
CLEANFILES += fortran/river_constants.inc *.mod

fortran_libriverf_la_SOURCES = fortran/river.F90 fortran/river_shim.c
fortran_libriverf_la_FCFLAGS = $(AM_FCFLAGS) -I$(top_builddir)/fortran
fortran_libriverf_la_CFLAGS = $(AM_CFLAGS) $(RIVER_VISIBILITY_CFLAGS)
fortran_libriverf_la_LIBADD = src/libriver.la
fortran_libriverf_la_LDFLAGS = $(AM_LDFLAGS) -version-info $(RIVER_LT_VERSION) \
	-no-undefined

# gfortran writes river.mod into the directory it runs in: the build root.
$(fortran_libriverf_la_OBJECTS): fortran/river_constants.inc
river.mod: $(fortran_libriverf_la_OBJECTS)

fmod_DATA = river.mod
endif
