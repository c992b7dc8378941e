/*
 * number.c - integer option values for the river command and
 * river-bench, and the sizes and rates they print (number.h).
 */
#include "number.h"

#include <mpi.h>
#include <string.h>

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
  uint64_t v = 0;

  if (val == NULL) {
    if (says())
      river_log(RIVER_LOG_ERROR, "%s needs a value", opt);
    app_usage_error();
    return RIVER_EINVAL;
  }
  /* Digits alone unless suffixes are allowed; then the library's one
   * rule (river/units.h), as flow specs take it. */
  if ((!allow_suffix && (val[0] == '\0'
                         || val[strspn(val, "0123456789")] != '\0'))
      || river_parse_size(val, &v) != RIVER_SUCCESS || v < min || v > max) {
    if (says())
      river_log(RIVER_LOG_ERROR, "%s %s: expected an integer in %llu..%llu%s",
                opt, val, (unsigned long long)min, (unsigned long long)max,
                allow_suffix ? " (" RIVER_SIZE_SUFFIXES ")" : "");
    app_usage_error();
    return RIVER_EINVAL;
  }
  *out = v;
  return RIVER_SUCCESS;
}

const char *app_size(uint64_t bytes, char *buf)
{
  if (river_format_size(bytes, buf, APP_SIZE_TEXT) != RIVER_SUCCESS)
    buf[0] = '\0';   /* not with APP_SIZE_TEXT bytes */
  return buf;
}

const char *app_rate(double bytes_per_s, char *buf)
{
  /* NaN and below 0: 0; beyond uint64_t (a near-zero time): its most */
  uint64_t b = !(bytes_per_s > 0) ? 0
               : bytes_per_s >= 18446744073709549568.0 ? UINT64_MAX
               : (uint64_t)(bytes_per_s + 0.5);

  strcat((char *)app_size(b, buf), "/s");
  return buf;
}
