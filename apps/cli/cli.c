/*
 * cli.c - helpers shared by the river command's subcommands: rank and
 * size, integer options, and the agreement that makes every rank return
 * the same code.
 */
#include "cli.h"

#include <errno.h>
#include <mpi.h>
#include <stdlib.h>

int cli_rank(void)
{
  int rank = 0;

  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int cli_size(void)
{
  int size = 1;

  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

int cli_parse_u64(const char *opt, const char *val, uint64_t min,
                        uint64_t max, int allow_suffix, uint64_t *out)
{
  unsigned long long v;
  char *end;
  int shift = 0;

  if (val == NULL) {
    river_log(RIVER_LOG_ERROR, "%s needs a value", opt);
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
    river_log(RIVER_LOG_ERROR, "%s %s: expected an integer in %llu..%llu%s",
              opt, val, (unsigned long long)min, (unsigned long long)max,
              allow_suffix ? " (suffixes k, M, G allowed)" : "");
    return RIVER_EINVAL;
  }
  *out = (uint64_t)v << shift;
  return RIVER_SUCCESS;
}

/* The command's collectives wait like the library's: nonblocking, then
 * river_wait, which backs off, so ranks waiting for rank 0 (reading a
 * stream, printing a listing) do not spin. */
int cli_agree(int rc)
{
  MPI_Request req;
  int all = rc, w, fired = 0;

  /* After the watchdog nothing new may start (river_watchdog_fired). */
  if (river_watchdog_fired(&fired) == RIVER_SUCCESS && fired)
    return RIVER_ETIMEDOUT;
  if (MPI_Iallreduce(&rc, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &req)
          != MPI_SUCCESS)
    return RIVER_EMPI;
  if ((w = river_wait(&req, MPI_STATUS_IGNORE)) != RIVER_SUCCESS)
    return w == RIVER_ETIMEDOUT ? w : RIVER_EMPI;
  return all;
}

int cli_bcast(void *buf, int bytes)
{
  MPI_Request req;
  int w, fired = 0;

  if (river_watchdog_fired(&fired) == RIVER_SUCCESS && fired)
    return RIVER_ETIMEDOUT;
  if (MPI_Ibcast(buf, bytes, MPI_BYTE, 0, MPI_COMM_WORLD, &req)
          != MPI_SUCCESS)
    return RIVER_EMPI;
  w = river_wait(&req, MPI_STATUS_IGNORE);
  return w == RIVER_SUCCESS || w == RIVER_ETIMEDOUT ? w : RIVER_EMPI;
}
