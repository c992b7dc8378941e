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

static int river_init_count;  /* unmatched river_init() calls */
static int river_owns_mpi;    /* 1 if river_init() called MPI_Init_thread */

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

  if (river_init_count == 0) {
    if (!initialized) {
      if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided)
          != MPI_SUCCESS)
        return RIVER_EMPI;
      river_owns_mpi = 1;
    }
    river__log_init_from_env();
    river__debug("river_init: River %s, %s MPI", RIVER_VERSION_STRING,
                 river_owns_mpi ? "initialised" : "found an initialised");
  }
  river_init_count++;
  return RIVER_SUCCESS;
}

int river_finalize(void)
{
  int finalized;

  if (river_init_count == 0)
    return RIVER_ESTATE;
  if (--river_init_count > 0)
    return RIVER_SUCCESS;

  river__debug("river_finalize: %s", river_owns_mpi ? "finalising MPI"
                                                    : "leaving MPI up");
  if (river_owns_mpi) {
    river_owns_mpi = 0;
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
  *flag = river_init_count > 0;
  return RIVER_SUCCESS;
}

/* ----------------------------------------------------------------- helpers */

int river__agree(MPI_Comm comm, int rc)
{
  int all = rc;

  if (MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
    return RIVER_EMPI;
  return all;
}

int river__agree_same(MPI_Comm comm, const char *what, int local_rc, int n,
                      const char *const names[], const uint64_t values[])
{
  uint64_t v[1 + 2 * RIVER_AGREE_SAME_MAX], r[1 + 2 * RIVER_AGREE_SAME_MAX];
  int i;

  if (n < 0 || n > RIVER_AGREE_SAME_MAX)
    return RIVER_EINVAL;
  v[0] = local_rc != RIVER_SUCCESS;
  for (i = 0; i < n; i++) {
    v[1 + 2 * i] = values[i];
    v[2 + 2 * i] = ~values[i];    /* max of ~x is ~(min of x) */
  }
  if (MPI_Allreduce(v, r, 1 + 2 * n, MPI_UINT64_T, MPI_MAX, comm)
      != MPI_SUCCESS)
    return RIVER_EMPI;
  if (r[0]) {
    if (local_rc == RIVER_SUCCESS)
      river__error("%s: another rank passed invalid arguments", what);
    return RIVER_EINVAL;
  }
  for (i = 0; i < n; i++)
    if (r[1 + 2 * i] != ~r[2 + 2 * i]) {
      river__error("%s: ranks passed different %s (from %llu to %llu); "
                   "every rank must pass the same", what, names[i],
                   (unsigned long long)~r[2 + 2 * i],
                   (unsigned long long)r[1 + 2 * i]);
      return RIVER_EINVAL;
    }
  return RIVER_SUCCESS;
}

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
