/*
 * core.c - River's lifecycle, error table and version queries.
 *
 * River's global state is two numbers: how many river_init() calls are
 * not yet matched by river_finalize(), and whether River initialised MPI
 * itself (and so must finalise it). Everything else River keeps lives in
 * the handles users create.
 */
#include "river_internal.h"

#include <mpi.h>
#include <hdf5.h>
#include <hwloc.h>
#include <stdio.h>
#include <string.h>

static int init_count;  /* unmatched river_init() calls */
static int owns_mpi;    /* 1 if river_init() called MPI_Init_thread */

/* ------------------------------------------------------------------ errors */

const char *river_strerror(int err)
{
  switch (err) {
#define RIVER__ERRNO_MSG(name, code, msg) case RIVER_##name: return msg;
    RIVER_ERRNO_MAP(RIVER__ERRNO_MSG)
#undef RIVER__ERRNO_MSG
  }
  return "unknown error code";
}

const char *river_err_name(int err)
{
  switch (err) {
#define RIVER__ERRNO_NAME(name, code, msg) case RIVER_##name: return "RIVER_" #name;
    RIVER_ERRNO_MAP(RIVER__ERRNO_NAME)
#undef RIVER__ERRNO_NAME
  }
  return "RIVER_EUNKNOWN";
}

/* --------------------------------------------------------------- lifecycle */

int river_init(int *argc, char ***argv)
{
  int initialized, finalized, provided;

  if ((argc == NULL) != (argv == NULL))
    return RIVER_EINVAL;
  if (MPI_Finalized(&finalized) != MPI_SUCCESS || finalized) {
    river__error("river_init: MPI has already been finalized");
    return RIVER_ESTATE;
  }
  if (MPI_Initialized(&initialized) != MPI_SUCCESS)
    return RIVER_EMPI;

  if (init_count == 0) {
    if (!initialized) {
      if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided)
          != MPI_SUCCESS)
        return RIVER_EMPI;
      owns_mpi = 1;
    }
    river__log_init_from_env();
    if (river__watchdog_init() != RIVER_SUCCESS) {
      if (owns_mpi) {
        MPI_Finalize();
        owns_mpi = 0;
      }
      return RIVER_EINVAL;
    }
    river__debug("river_init: River %s, %s MPI", RIVER_VERSION_STRING,
                 owns_mpi ? "initialised" : "found an initialised");
  }
  init_count++;
  return RIVER_SUCCESS;
}

int river_finalize(void)
{
  int finalized;

  if (init_count == 0)
    return RIVER_ESTATE;
  if (--init_count > 0)
    return RIVER_SUCCESS;

  river__debug("river_finalize: %s", owns_mpi ? "finalising MPI"
                                                    : "leaving MPI up");
  if (owns_mpi) {
    owns_mpi = 0;
    if (MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized
        && MPI_Finalize() != MPI_SUCCESS)
      return RIVER_EMPI;
  }
  return RIVER_SUCCESS;
}

int river_initialized(int *flag)
{
  if (flag == NULL)
    return RIVER_EINVAL;
  *flag = init_count > 0;
  return RIVER_SUCCESS;
}

/* ----------------------------------------------------------------- helpers */

/* splitmix64 (Steele, Lea, Flood 2014) is written here rather than taken
 * from libc: River needs counter-based, seedable values that are the same
 * on every platform (gensort rows must not depend on the rank count), and
 * libc's generators are sequential and implementation-defined. */
uint64_t river__mix64(uint64_t x)
{
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* ----------------------------------------------------------------- version */

int river_get_version(int *major, int *minor, int *release)
{
  if (major == NULL || minor == NULL || release == NULL)
    return RIVER_EINVAL;
  *major = RIVER_VERSION_MAJOR;
  *minor = RIVER_VERSION_MINOR;
  *release = RIVER_VERSION_RELEASE;
  return RIVER_SUCCESS;
}

int river__copy_out(const char *str, char *buf, size_t *len)
{
  size_t n = strlen(str);

  if (n + 1 > *len) {
    *len = n + 1;
    return RIVER_ENOBUFS;
  }
  memcpy(buf, str, n + 1);
  *len = n;
  return RIVER_SUCCESS;
}

int river_build_info(char *buf, size_t *len)
{
  char mpi[MPI_MAX_LIBRARY_VERSION_STRING];
  char line[MPI_MAX_LIBRARY_VERSION_STRING + 128];
  int mpilen = 0, std_major = 0, std_minor = 0;
  unsigned h5maj = 0, h5min = 0, h5rel = 0, hw;

  if (buf == NULL || len == NULL)
    return RIVER_EINVAL;

  /* Both MPI calls are allowed before MPI_Init and after MPI_Finalize. */
  if (MPI_Get_library_version(mpi, &mpilen) != MPI_SUCCESS
      || MPI_Get_version(&std_major, &std_minor) != MPI_SUCCESS)
    return RIVER_EMPI;
  mpi[strcspn(mpi, ",\n")] = '\0';  /* "Open MPI v4.1.4, package: ..." */
  if (H5get_libversion(&h5maj, &h5min, &h5rel) < 0)
    return RIVER_EHDF5;
  hw = hwloc_get_api_version();

  snprintf(line, sizeof line,
           "River %s; MPI %d.%d (%s); HDF5 %u.%u.%u; hwloc API %u.%u.%u",
           RIVER_VERSION_STRING, std_major, std_minor, mpi, h5maj, h5min,
           h5rel, hw >> 16, (hw >> 8) & 0xff, hw & 0xff);
  return river__copy_out(line, buf, len);
}
