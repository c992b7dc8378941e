/*
 * coll_rm.c - the river command's removal and cleanup: `rm` (with
 * --force for a collection whose metadata is damaged) and `gc`, which
 * lists and removes what crashed or failed writes left under a root.
 * Both run on rank 0 (the library calls are not collective); the other
 * ranks wait for the outcome, backing off (cli_agree). rm of a
 * collection on node-local disks then has every node's ranks remove
 * their node's files (river_pcoll_remove_all).
 */
#include "coll.h"

#include <inttypes.h>
#include <stdio.h>

/* Print one leftover: "  PATH  SIZE  WHAT[, removed]". */
static void print_leftover(const river_pcoll_leftover *l, void *arg)
{
  char size[APP_SIZE_TEXT];

  (void)arg;
  printf("  %s  %s  %s%s\n", l->path, app_size(l->bytes, size), l->what,
         l->removed ? ", removed" : "");
}

/* A total as every command prints a size (river_format_size). */
static void print_size(uint64_t bytes)
{
  char size[APP_SIZE_TEXT];

  printf("%s", app_size(bytes, size));
}

int cmd_rm(int argc, char **argv)
{
  struct args a;
  uint64_t n = 0, bytes = 0;
  int rc = cli_coll_args(argc, argv, OPT_COMMON | OPT_FORCE, 1, "COLL", &a);

  if (rc == RIVER_SUCCESS && !a.force) {
    /* Collective: with node-local disks each node's ranks remove what
     * their node holds. */
    rc = river_pcoll_remove_all(MPI_COMM_WORLD, a.pos[0], &a.opts);
    if (rc == RIVER_SUCCESS && cli_rank() == 0)
      printf("rm: removed %s\n", a.pos[0]);
    return rc;
  } else if (rc == RIVER_SUCCESS && cli_rank() == 0) {
    rc = river_pcoll_purge(a.pos[0], &a.opts, print_leftover, NULL, &n,
                           &bytes);
    if (rc == RIVER_SUCCESS) {
      printf("rm: removed %s: %" PRIu64 " file%s, ", a.pos[0], n,
             n == 1 ? "" : "s");
      print_size(bytes);
      printf("\n");
    }
  }
  return cli_agree(rc);
}

int cmd_gc(int argc, char **argv)
{
  struct args a;
  uint64_t n = 0, bytes = 0;
  int rc = cli_coll_args(argc, argv, OPT_COMMON | OPT_REMOVE | OPT_FORCE, 0,
                         "", &a);

  if (rc == RIVER_SUCCESS && cli_rank() == 0) {
    /* --force matters only when removing: a listing shows every file */
    int mode = a.remove ? 1 | (a.force ? RIVER_PCOLL_GC_FORCE : 0) : 0;
    rc = river_pcoll_gc(&a.opts, mode, print_leftover, NULL, &n, &bytes);
    if (rc == RIVER_SUCCESS && n == 0) {
      printf("gc: no leftovers\n");
    } else if (rc == RIVER_SUCCESS) {
      printf("gc: %" PRIu64 " leftover file%s, ", n, n == 1 ? "" : "s");
      print_size(bytes);
      printf(a.remove ? ", removed\n"
                      : " (river gc --remove removes them)\n");
    }
  }
  return cli_agree(rc);
}
