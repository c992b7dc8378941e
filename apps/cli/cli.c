/*
 * cli.c - helpers shared by the river command's subcommands: rank and
 * size, and the agreement that makes every rank return
 * the same code.
 */
#include "cli.h"

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
