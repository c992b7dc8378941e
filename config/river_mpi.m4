# River's MPI checks.

# RIVER_PROG_MPICC: unless CC is set, use the MPI C wrapper (mpicc).
AC_DEFUN([RIVER_PROG_MPICC], [
  AC_ARG_VAR([MPICC], [MPI C compiler wrapper (default: mpicc)])
  AS_IF([test -z "$CC"], [
    AS_IF([test -z "$MPICC"], [AC_CHECK_PROGS([MPICC], [mpicc])])
    AS_IF([test -n "$MPICC"], [CC=$MPICC],
      [AC_MSG_ERROR([no MPI C compiler found: install Open MPI (Debian:
       openmpi-bin libopenmpi-dev), `module load` your MPI, or set CC/MPICC])])
  ])
])

# RIVER_CHECK_MPI: mpi.h compiles, MPI-3 RMA links, mpirun is found.
AC_DEFUN([RIVER_CHECK_MPI], [
  AC_MSG_CHECKING([whether $CC compiles and links MPI-3 programs])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>
#if MPI_VERSION < 3
#error MPI-3 is required
#endif]],
      [[MPI_Win w; void *p; MPI_Init(0, 0);
        MPI_Win_allocate(8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &w);
        MPI_Finalize();]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     AC_MSG_ERROR([$CC cannot build MPI-3 programs: River needs an MPI-3
      library (Open MPI >= 2). Set CC to your MPI's mpicc.])])

  AC_MSG_CHECKING([which MPI library])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>
#ifndef OPEN_MPI
#error not Open MPI
#endif]], [])],
    [river_mpi_flavor="Open MPI"],
    [river_mpi_flavor="other MPI-3 (untested)"])
  AC_MSG_RESULT([$river_mpi_flavor])

  AC_ARG_VAR([MPIEXEC], [MPI launcher used by make check (default: mpirun)])
  AS_IF([test -z "$MPIEXEC"], [AC_PATH_PROGS([MPIEXEC], [mpirun mpiexec], [])])
  AS_IF([test -z "$MPIEXEC"],
    [AC_MSG_WARN([no mpirun found: multi-rank tests will be skipped])])
])

# RIVER_CHECK_PARALLEL_HDF5: find a parallel HDF5; refuse a serial one.
# Order: pkg-config hdf5-openmpi, hdf5-mpi, hdf5. HDF5_CFLAGS/HDF5_LIBS set
# by the user (e.g. from a Spack or module-provided HDF5) win over all.
AC_DEFUN([RIVER_CHECK_PARALLEL_HDF5], [
  AC_ARG_VAR([HDF5_CFLAGS], [C compiler flags for parallel HDF5])
  AC_ARG_VAR([HDF5_LIBS], [linker flags for parallel HDF5])
  river_hdf5_via="HDF5_CFLAGS/HDF5_LIBS"
  AS_IF([test -z "$HDF5_LIBS"], [
    PKG_CHECK_MODULES([HDF5], [hdf5-openmpi], [river_hdf5_via="pkg-config hdf5-openmpi"], [
      PKG_CHECK_MODULES([HDF5], [hdf5-mpi], [river_hdf5_via="pkg-config hdf5-mpi"], [
        PKG_CHECK_MODULES([HDF5], [hdf5], [river_hdf5_via="pkg-config hdf5"], [
          AC_MSG_ERROR([no HDF5 found: install libhdf5-openmpi-dev (Debian),
           or point PKG_CONFIG_PATH at a parallel HDF5, or set HDF5_CFLAGS
           and HDF5_LIBS (e.g. from h5pcc -show)])])])])
  ])
  river_save_CPPFLAGS=$CPPFLAGS
  river_save_LIBS=$LIBS
  CPPFLAGS="$CPPFLAGS $HDF5_CFLAGS"
  LIBS="$HDF5_LIBS $LIBS"
  AC_MSG_CHECKING([whether HDF5 is built with parallel (MPI-IO) support])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <hdf5.h>
#ifndef H5_HAVE_PARALLEL
#error serial HDF5
#endif]],
      [[hid_t p = H5Pcreate(H5P_FILE_ACCESS);
        H5Pset_fapl_mpio(p, MPI_COMM_WORLD, MPI_INFO_NULL); H5Pclose(p);]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     AC_MSG_ERROR([the HDF5 found ($river_hdf5_via) is serial or unusable:
      River needs parallel HDF5 built against the same MPI as $CC
      (Debian: libhdf5-openmpi-dev; Spack: hdf5+mpi)])])
  CPPFLAGS=$river_save_CPPFLAGS
  LIBS=$river_save_LIBS
])

# RIVER_PROG_MPIFC: unless FC is set, use the MPI Fortran wrapper.
AC_DEFUN([RIVER_PROG_MPIFC], [
  AC_ARG_VAR([MPIFC], [MPI Fortran compiler wrapper (default: mpifort)])
  AS_IF([test -z "$FC"], [
    AS_IF([test -z "$MPIFC"], [AC_CHECK_PROGS([MPIFC], [mpifort mpif90])])
    AS_IF([test -n "$MPIFC"], [FC=$MPIFC],
      [AC_MSG_ERROR([no MPI Fortran compiler (mpifort) found: install
       gfortran and Open MPI, set FC, or configure --disable-fortran])])
  ])
])

# RIVER_CHECK_FORTRAN: the Fortran compiler's MPI has mpi_f08.
AC_DEFUN([RIVER_CHECK_FORTRAN], [
  AS_IF([test -z "$FC"],
    [AC_MSG_ERROR([no Fortran compiler: set FC or configure --disable-fortran])])
  AC_LANG_PUSH([Fortran])
  AC_FC_SRCEXT([F90])
  AC_FC_FREEFORM
  AC_MSG_CHECKING([whether $FC provides the mpi_f08 module])
  AC_COMPILE_IFELSE([AC_LANG_SOURCE([[
      program t
      use mpi_f08
      use, intrinsic :: iso_c_binding
      type(MPI_Comm) :: c
      c = MPI_COMM_WORLD
      end program t]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     AC_MSG_ERROR([$FC lacks mpi_f08 (MPI-3 Fortran 2008 bindings): use an
      MPI built with them, or configure --disable-fortran])])
  AC_LANG_POP([Fortran])
])
