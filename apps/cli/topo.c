/*
 * topo.c - river topo: where the job runs. Each rank fills a struct
 * rank_topo (its node's name, the machine hwloc shows it, its binding and
 * who made it, the disk directory it would write to); rank 0 gathers them
 * and prints each node once, with the node's ranks under it in rank
 * order. river hello prints the same report (apps/cli/river.c).
 *
 *   4 ranks on 2 nodes; collections' metadata in /data/river
 *   node river-node1: packages=1 cores=2 pus=2 numa=1 ranks=0,2
 *     rank 0   node=river-node1 bound=pu:0 by=river disk=/data/river/disk0
 *     ...
 *
 * Every line is KEY=VALUE after its first words, for scripts.
 */
#include "coll.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOPO_FIELD 256
#define TOPO_DISK 4096

struct rank_topo {
  char node[TOPO_FIELD];      /* river_node_name */
  char machine[TOPO_FIELD];   /* "packages=P cores=C pus=U numa=N" */
  char bound[TOPO_FIELD];     /* "pu:LIST", or "none" (every PU) */
  char by[16];                /* river, launcher or none */
  char disk[TOPO_DISK];       /* the directory of disk `rank` */
};

int cli_bind_outcome = 0;

/* Split river_topo_describe's line into t's machine and bound. */
static void describe_machine(struct rank_topo *t)
{
  char line[640];
  size_t len = sizeof line;
  const char *m, *b;
  int rc = river_topo_describe(line, &len);

  snprintf(t->bound, sizeof t->bound, "unknown");
  if (rc != RIVER_SUCCESS) {
    snprintf(t->machine, sizeof t->machine, "(topology unavailable: %s)",
             river_strerror(rc));
    return;
  }
  m = strstr(line, " packages=");
  b = strstr(line, " bound=");
  if (m == NULL || b == NULL || b < m) {
    snprintf(t->machine, sizeof t->machine, "(%s)", line);
    return;
  }
  snprintf(t->machine, sizeof t->machine, "%.*s", (int)(b - m - 1), m + 1);
  snprintf(t->bound, sizeof t->bound, "%s", b + 7);
}

/* This rank's record. Fails (logged) only for a bad root or disk
 * pattern in opts. */
static int describe_rank(const river_pcoll_opts *opts, int rank,
                         struct rank_topo *t)
{
  size_t len = sizeof t->node;

  memset(t, 0, sizeof *t);
  if (river_node_name(t->node, &len) != RIVER_SUCCESS)
    snprintf(t->node, sizeof t->node, "unknown");
  describe_machine(t);
  /* Without --bind a bound rank was bound before River ran: by the
   * launcher (mpirun --bind-to, srun --cpu-bind), or taskset. */
  snprintf(t->by, sizeof t->by, "%s",
           cli_bind_outcome == RIVER_BIND_DONE ? "river"
           : strcmp(t->bound, "none") == 0 ? "none" : "launcher");
  /* A collection of this job has a disk per rank (its default), and rank
   * r writes its partition's first copy to disk r. */
  len = sizeof t->disk;
  return river_pcoll_disk_dir(opts, rank, t->disk, &len);
}

/* Rank 0's report from every rank's record (all[0..size)). */
static void print_report(const river_pcoll_opts *opts,
                         const struct rank_topo *all, int size)
{
  char root[TOPO_DISK];
  size_t len = sizeof root;
  int r, q, nodes = 0;

  for (r = 0; r < size; r++) {
    for (q = 0; q < r && strcmp(all[q].node, all[r].node) != 0; q++)
      ;
    nodes += q == r;
  }
  if (river_pcoll_root(opts, root, &len) != RIVER_SUCCESS)
    snprintf(root, sizeof root, "(unknown)");
  printf("%d rank%s on %d node%s; collections' metadata in %s\n", size,
         size == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s", root);
  for (r = 0; r < size; r++) {
    const char *sep = "";

    for (q = 0; q < r && strcmp(all[q].node, all[r].node) != 0; q++)
      ;
    if (q < r)
      continue;   /* printed under its node already */
    printf("node %s: %s ranks=", all[r].node, all[r].machine);
    for (q = r; q < size; q++)
      if (strcmp(all[q].node, all[r].node) == 0) {
        printf("%s%d", sep, q);
        sep = ",";
      }
    printf("\n");
    for (q = r; q < size; q++)
      if (strcmp(all[q].node, all[r].node) == 0)
        printf("  rank %-3d node=%s bound=%s by=%s disk=%s\n", q,
               all[q].node, all[q].bound, all[q].by, all[q].disk);
  }
}

int cli_topo_report(const river_pcoll_opts *opts)
{
  struct rank_topo *mine, *all = NULL;
  int rank = cli_rank(), size = cli_size(), rc;
  MPI_Request req;

  if ((mine = malloc(sizeof *mine)) == NULL)
    return cli_agree(RIVER_ENOMEM);
  rc = describe_rank(opts, rank, mine);
  if (rc == RIVER_SUCCESS && rank == 0
      && (all = malloc((size_t)size * sizeof *all)) == NULL)
    rc = RIVER_ENOMEM;
  rc = cli_agree(rc);
  if (rc == RIVER_SUCCESS) {
    /* Waited for backing off, like every wait of the command's. */
    if (MPI_Igather(mine, (int)sizeof *mine, MPI_BYTE, all,
                    (int)sizeof *mine, MPI_BYTE, 0, MPI_COMM_WORLD, &req)
            != MPI_SUCCESS
        || river_wait(&req, MPI_STATUS_IGNORE) != RIVER_SUCCESS)
      rc = RIVER_EMPI;
  }
  if (rc == RIVER_SUCCESS && rank == 0)
    print_report(opts, all, size);
  free(all);
  free(mine);
  return cli_agree(rc);
}

int cmd_topo(int argc, char **argv)
{
  struct args a;
  int rc = cli_coll_args(argc, argv, OPT_ROOT | OPT_DISKS, 0, "", &a);

  return rc == RIVER_SUCCESS ? cli_topo_report(&a.opts) : rc;
}
