/*
 * cli.c - helpers shared by the river command's subcommands: rank and
 * size, and the agreement that makes every rank return
 * the same code.
 */
#include "cli.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
int cli_agree_min(int *v, int n)
{
  MPI_Request req;
  int w, fired = 0;

  /* After the watchdog nothing new may start (river_watchdog_fired). */
  if (river_watchdog_fired(&fired) == RIVER_SUCCESS && fired)
    return RIVER_ETIMEDOUT;
  if (MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_INT, MPI_MIN, MPI_COMM_WORLD,
                     &req) != MPI_SUCCESS)
    return RIVER_EMPI;
  if ((w = river_wait(&req, MPI_STATUS_IGNORE)) != RIVER_SUCCESS)
    return w == RIVER_ETIMEDOUT ? w : RIVER_EMPI;
  return RIVER_SUCCESS;
}

int cli_agree(int rc)
{
  int w = cli_agree_min(&rc, 1);

  return w != RIVER_SUCCESS ? w : rc;
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

/* ------------------------------------------------- said by one rank */

/* What a rank other than 0 logged between cli_hush_begin and
 * cli_hush_end: kept, and said only if no rank before it failed. */
static char hushed[8][1000];
static int hushed_level[8], nhushed;

static void keep_hushed(int level, int rank, const char *msg, void *ctx)
{
  (void)rank;
  (void)ctx;
  if (level <= RIVER_LOG_WARN && nhushed < 8) {
    hushed_level[nhushed] = level;
    snprintf(hushed[nhushed++], sizeof hushed[0], "%s", msg);
  }
}

void cli_hush_begin(void)
{
  nhushed = 0;
  if (cli_rank() != 0)
    river_log_set_handler(keep_hushed, NULL);
}

int cli_hush_end(int rc)
{
  int v[2], w, i;

  if (cli_rank() != 0)
    river_log_set_handler(NULL, NULL);
  v[0] = rc;
  v[1] = rc != RIVER_SUCCESS ? cli_rank() : cli_size();
  if ((w = cli_agree_min(v, 2)) != RIVER_SUCCESS)
    return w;
  /* Rank 0 said its own; a failure it did not have is said by the
   * lowest rank that had it. */
  if (v[1] > 0 && v[1] == cli_rank())
    for (i = 0; i < nhushed; i++)
      river_log(hushed_level[i], "%s", hushed[i]);
  return v[0];
}

int cli_plugins(char *const *paths, int n)
{
  int i, rc = RIVER_SUCCESS;

  cli_hush_begin();
  for (i = 0; i < n && rc == RIVER_SUCCESS; i++)
    rc = river_plugin_load(paths[i]);
  return cli_hush_end(rc);
}

int cli_take_plugins(int *argc, char **argv, char **paths, int max, int *n)
{
  int i, k = 1;

  *n = 0;
  for (i = 1; i < *argc; i++) {
    const char *v = NULL;
    if (strcmp(argv[i], "--plugin") == 0) {
      if (i + 1 >= *argc) {
        if (cli_rank() == 0)
          river_log(RIVER_LOG_ERROR, "%s: option --plugin needs a value "
                    "(a shared library of modules)", argv[0]);
        app_usage_error();
        return RIVER_EINVAL;
      }
      v = argv[++i];
    } else if (strncmp(argv[i], "--plugin=", 9) == 0) {
      v = argv[i] + 9;
    }
    if (v == NULL) {
      argv[k++] = argv[i];
      continue;
    }
    if (*n == max) {
      if (cli_rank() == 0)
        river_log(RIVER_LOG_ERROR, "%s: at most %d --plugin options",
                  argv[0], max);
      app_usage_error();
      return RIVER_EINVAL;
    }
    paths[(*n)++] = (char *)v;
  }
  argv[k] = NULL;
  *argc = k;
  return RIVER_SUCCESS;
}
