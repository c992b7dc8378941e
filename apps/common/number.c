/*
 * number.c - integer option values for the river command and
 * river-bench (number.h).
 */
#include "number.h"

#include <errno.h>
#include <mpi.h>
#include <stdlib.h>

/* Every rank parses the same arguments and fails alike: rank 0 says so
 * (all of them, before MPI is up). */
static int says(void)
{
  int up = 0, rank = 0;

  MPI_Initialized(&up);
  if (up)
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank == 0;
}

static int usage_seen;

void app_usage_error(void)
{
  usage_seen = 1;
}

int app_usage_seen(void)
{
  return usage_seen;
}

int app_parse_u64(const char *opt, const char *val, uint64_t min,
                  uint64_t max, int allow_suffix, uint64_t *out)
{
  unsigned long long v;
  char *end;
  int shift = 0;

  if (val == NULL) {
    if (says())
      river_log(RIVER_LOG_ERROR, "%s needs a value", opt);
    app_usage_error();
    return RIVER_EINVAL;
  }
  errno = 0;
  v = strtoull(val, &end, 10);
  if (allow_suffix && end != val && end[0] != '\0' && end[1] == '\0') {
    shift = end[0] == 'k' || end[0] == 'K' ? 10
          : end[0] == 'M' ? 20 : end[0] == 'G' ? 30 : -1;
    if (shift > 0)
      end++;
  }
  /* strtoull would take blanks and a sign: a number starts with a digit. */
  if (val[0] < '0' || val[0] > '9' || end == val || *end != '\0'
      || errno != 0 || shift < 0 || (shift > 0 && v > (max >> shift))
      || (v << shift) < min || (v << shift) > max) {
    if (says())
      river_log(RIVER_LOG_ERROR, "%s %s: expected an integer in %llu..%llu%s",
                opt, val, (unsigned long long)min, (unsigned long long)max,
                allow_suffix ? " (suffixes k, M, G allowed)" : "");
    app_usage_error();
    return RIVER_EINVAL;
  }
  *out = (uint64_t)v << shift;
  return RIVER_SUCCESS;
}
