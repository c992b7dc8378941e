# libriverf and module river: the Fortran 2008 API over iso_c_binding.
#
# fortran/river.F90 declares module river (types, constants, generics)
# and includes each concept's interfaces (fortran/river_CONCEPT.inc); each
# concept's implementation is a submodule in its own file
# (fortran/river_CONCEPT.F90).
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
# gfortran drops every module (river.mod and the tests' own) and every
# submodule file (river.smod, river@river_dq_impl.smod, ...) in the build root.
CLEANFILES += fortran/river_constants.inc *.mod *.smod

fortran_libriverf_la_SOURCES = fortran/river.F90 fortran/river_core.F90 \
	fortran/river_coll.F90 fortran/river_pcoll.F90 fortran/river_dq.F90 \
	fortran/river_gd.F90 fortran/river_emul.F90 fortran/river_flow.F90 \
	fortran/river_module.F90 fortran/river_stats.F90 fortran/river_shim.c
fortran_libriverf_la_FCFLAGS = $(AM_FCFLAGS) -I$(top_builddir)/fortran
fortran_libriverf_la_CFLAGS = $(AM_CFLAGS) $(RIVER_VISIBILITY_CFLAGS)
fortran_libriverf_la_LIBADD = src/libriver.la
fortran_libriverf_la_LDFLAGS = $(AM_LDFLAGS) -version-info $(RIVER_LT_VERSION) \
	-no-undefined

# Compiling river.F90 writes river.mod (what `use river` reads) and
# river.smod (what its submodules read) into the directory gfortran runs
# in: the build root. Each submodule needs river.smod first; gfortran
# rewrites either file only when it changes, so a submodule is rebuilt
# exactly when what it sees of module river does. Only river.mod is
# installed: programs never read the .smod files.
fortran_river_submodule_objects = fortran/libriverf_la-river_core.lo \
	fortran/libriverf_la-river_coll.lo fortran/libriverf_la-river_pcoll.lo \
	fortran/libriverf_la-river_dq.lo fortran/libriverf_la-river_gd.lo \
	fortran/libriverf_la-river_emul.lo fortran/libriverf_la-river_flow.lo \
	fortran/libriverf_la-river_module.lo fortran/libriverf_la-river_stats.lo
$(fortran_libriverf_la_OBJECTS): fortran/river_constants.inc
# Each concept's interfaces, included by river.F90 (Automake does not
# scan Fortran includes).
fortran_river_interfaces = fortran/river_core.inc fortran/river_coll.inc \
	fortran/river_pcoll.inc fortran/river_dq.inc fortran/river_gd.inc \
	fortran/river_emul.inc fortran/river_flow.inc fortran/river_module.inc \
	fortran/river_stats.inc
EXTRA_DIST += $(fortran_river_interfaces)
# (Named through a variable: a rule that names an object Automake builds
# would replace Automake's own rule for it.)
fortran_river_module_object = fortran/libriverf_la-river.lo
$(fortran_river_module_object): $(fortran_river_interfaces)
river.mod river.smod: fortran/libriverf_la-river.lo
$(fortran_river_submodule_objects): river.mod river.smod

fmod_DATA = river.mod
endif
