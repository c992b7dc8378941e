/*
 * shipped.c - running the flows shipped with River, for `river sort`,
 * `river join` and their benchmarks (shipped.h): finding a spec, the
 * sort's static baseline and emulation settings, the two-pass sort's
 * run blocks.
 */
#include "shipped.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const app_sort_static[APP_SORT_NSTATIC] = {
  "read_policy=mirror-nogd", "spread=one-to-one", "gather=one-to-one",
  "gather_policy=", "runs=1"};

#ifndef RIVER_SRC_FLOWSDIR
#define RIVER_SRC_FLOWSDIR "flows"
#endif
#ifndef RIVER_FLOWSDIR
#define RIVER_FLOWSDIR "/usr/local/share/river/flows"
#endif
#ifndef RIVER_BUILDDIR
#define RIVER_BUILDDIR "."
#endif

/* Whether this program is one of the build tree (apps/NAME, or
 * libtool's apps/.libs/ copy), not an installed one. */
static int in_build_tree(void)
{
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  size_t len = strlen(RIVER_BUILDDIR);

  if (n <= 0)
    return 0;
  exe[n] = '\0';
  return strncmp(exe, RIVER_BUILDDIR, len) == 0 && exe[len] == '/';
}

int app_find_flow(const char *who, const char *name, char *buf, size_t len)
{
  const char *env = getenv("RIVER_FLOWS");
  const char *dirs[] = {env && *env ? env : NULL,
                        in_build_tree() ? RIVER_SRC_FLOWSDIR : NULL,
                        RIVER_FLOWSDIR};
  int rank = 0;
  size_t i;

  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
    if (dirs[i] == NULL)
      continue;
    if (snprintf(buf, len, "%s/%s", dirs[i], name) < (int)len
        && access(buf, R_OK) == 0)
      return RIVER_SUCCESS;
    if (i == 0) {   /* RIVER_FLOWS given: it must hold the spec */
      river_log(RIVER_LOG_ERROR, "%s: no %s in RIVER_FLOWS=%s (rank %d)",
                who, name, env, rank);
      return RIVER_ENOTFOUND;
    }
  }
  river_log(RIVER_LOG_ERROR, "%s: cannot find %s in %s (rank %d; set "
            "RIVER_FLOWS to the folder that holds it)", who, name,
            RIVER_FLOWSDIR, rank);
  return RIVER_ENOTFOUND;
}

uint64_t app_sort_run_block(size_t record_size, size_t key_size,
                            uint64_t nrecords, int nranks, uint64_t mem,
                            double *nruns)
{
  double per = (double)record_size + 2.0 * ((double)key_size + 8) + 8;
  double run = (double)mem / per * (double)record_size;
  double share = (double)nrecords * (double)record_size / nranks;
  uint64_t b;

  *nruns = share / (run > 1 ? run : 1) * 1.25 + 1;
  b = (uint64_t)((double)mem / 2 / *nruns);
  b = b / RIVER_COLL_ALIGN * RIVER_COLL_ALIGN;
  if (b > ((uint64_t)1 << 20))
    b = (uint64_t)1 << 20;
  return b < RIVER_COLL_ALIGN || b < 2 * record_size ? 0 : b;
}
