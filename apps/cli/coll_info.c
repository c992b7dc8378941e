/*
 * coll_info.c - the river command's collection commands that look at or
 * remove a collection: ls, info, fsck, rm. Like coll.c's, they run on
 * every rank and agree on the outcome; the printing is rank 0's.
 */
#include "coll.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ ls, info, rm */

/* One line of `ls` for collection name. */
static void print_ls_line(const struct args *a, const char *name)
{
  river_pcoll_info in;
  river_pcoll *pc;

  if (river_pcoll_open(MPI_COMM_SELF, name, &a->opts, &pc) != RIVER_SUCCESS) {
    printf("%-24s (unreadable metadata: see river fsck %s)\n", name, name);
    return;
  }
  river_pcoll_info_get(pc, &in);
  printf("%-24s %14llu %14llu %6d %6d %s\n", name,
         (unsigned long long)in.nrecords,
         (unsigned long long)(in.nrecords * in.record_size), in.npartitions,
         in.replication,
         in.layout == RIVER_LAYOUT_INTERLEAVED ? "interleaved"
                                               : "partitioned");
  river_pcoll_close(pc);
}

static int print_ls(const struct args *a)
{
  char root[4200], *names = NULL, *name, *save = NULL;
  size_t len = sizeof root;
  int count = 0, rc, tries;

  rc = river_pcoll_root(&a->opts, root, &len);
  /* Ask, size the buffer, ask again: the listing may have grown in
   * between (another job creating a collection), so ask until it fits. */
  len = 1;
  names = malloc(len);
  rc = rc != RIVER_SUCCESS ? rc : names == NULL ? RIVER_ENOMEM
       : river_pcoll_list(&a->opts, names, &len, &count);
  for (tries = 0; rc == RIVER_ENOBUFS && tries < 8; tries++) {
    free(names);               /* len is the size needed now */
    names = malloc(len);
    rc = names ? river_pcoll_list(&a->opts, names, &len, &count)
               : RIVER_ENOMEM;
  }
  if (rc == RIVER_ENOTFOUND) {
    printf("no collections (no %s)\n", root);
    rc = RIVER_SUCCESS;
  } else if (rc == RIVER_SUCCESS) {
    printf("%-24s %14s %14s %6s %6s %s\n", "NAME", "RECORDS", "BYTES",
           "PARTS", "COPIES", "LAYOUT");
    for (name = strtok_r(names, "\n", &save); name != NULL;
         name = strtok_r(NULL, "\n", &save))
      print_ls_line(a, name);
    printf("%d collection%s in %s\n", count, count == 1 ? "" : "s", root);
  }
  free(names);
  return rc;
}

int cmd_ls(int argc, char **argv)
{
  struct args a;
  int rc = cli_coll_args(argc, argv, OPT_COMMON, 0, "", &a);

  if (rc == RIVER_SUCCESS && cli_rank() == 0)
    rc = print_ls(&a);
  return cli_agree(rc);
}

static void print_info(river_pcoll *pc)
{
  const river_schema *s;
  river_pcoll_info in;
  river_pcoll_part part;
  char text[4096], dir[4200];
  size_t len = sizeof text;
  int p, c, d;

  river_pcoll_info_get(pc, &in);
  river_pcoll_schema(pc, &s);
  river_schema_format(s, text, &len);
  len = sizeof dir;
  river_pcoll_disk_path(pc, 0, dir, &len);
  printf("collection  %s\n", in.name);
  printf("schema      %s (%zu-byte records)\n", text, in.record_size);
  printf("records     %llu (%llu bytes)\n", (unsigned long long)in.nrecords,
         (unsigned long long)(in.nrecords * in.record_size));
  printf("layout      %s%s, %d partitions on %d disks, %d cop%s each\n",
         in.layout == RIVER_LAYOUT_INTERLEAVED ? "interleaved" : "partitioned",
         in.ordered ? " (ordered by key)" : "", in.npartitions, in.ndisks,
         in.replication, in.replication == 1 ? "y" : "ies");
  printf("blocks      %zu bytes (%zu records)\n", in.block_size,
         in.block_size / in.record_size);
  printf("generation  %s\n", in.generation);
  printf("disk 0      %s\n", dir);
  printf("%9s %14s %14s %8s %8s  %-12s %s\n", "PARTITION", "RECORDS", "BYTES",
         "BLOCKS", "CHECKSUM", "DISKS", "FILE");
  for (p = 0; p < in.npartitions; p++) {
    char disks[64] = "";
    size_t o = 0;
    river_pcoll_partition(pc, p, &part);
    for (c = 0; c < in.replication && o < sizeof disks - 12; c++) {
      river_pcoll_copy_disk(pc, p, c, &d);
      o += (size_t)snprintf(disks + o, sizeof disks - o, "%s%d",
                            c ? "," : "", d);
    }
    printf("%9d %14llu %14llu %8llu %08x  %-12s %s\n", p,
           (unsigned long long)part.nrecords, (unsigned long long)part.bytes,
           (unsigned long long)part.nblocks, (unsigned)part.checksum, disks,
           part.path);
  }
}

int cmd_info(int argc, char **argv)
{
  struct args a;
  river_pcoll *pc = NULL;
  int rc = cli_coll_args(argc, argv, OPT_COMMON, 1, "COLL", &a);

  if (rc != RIVER_SUCCESS)
    return rc;
  rc = river_pcoll_open(MPI_COMM_WORLD, a.pos[0], &a.opts, &pc);
  if (rc == RIVER_SUCCESS && cli_rank() == 0)
    print_info(pc);
  river_pcoll_close(pc);
  return rc;
}

int cmd_rm(int argc, char **argv)
{
  struct args a;
  int rc = cli_coll_args(argc, argv, OPT_COMMON, 1, "COLL", &a);

  if (rc == RIVER_SUCCESS && cli_rank() == 0) {
    rc = river_pcoll_remove(a.pos[0], &a.opts);
    if (rc == RIVER_SUCCESS)
      printf("rm: removed %s\n", a.pos[0]);
  }
  return cli_agree(rc);
}

/* ----------------------------------------------------------------- fsck */

int cmd_fsck(int argc, char **argv)
{
  struct args a;
  river_pcoll *pc = NULL;
  river_pcoll_info in;
  int rank = cli_rank(), size = cli_size(), c, rc;
  uint64_t p, first = 0, stride = 1, count = 0, i;
  int counts[3] = {0, 0, 0}; /* copies checked, copies damaged, partitions
                                with no intact copy */

  rc = cli_coll_args(argc, argv, OPT_COMMON, 1, "COLL", &a);
  if (rc != RIVER_SUCCESS)
    return rc;
  rc = river_pcoll_open(MPI_COMM_WORLD, a.pos[0], &a.opts, &pc);
  if (rc != RIVER_SUCCESS)
    return rc;
  river_pcoll_info_get(pc, &in);
  /* Partitions dealt to ranks round-robin. */
  river_pcoll_split(RIVER_LAYOUT_INTERLEAVED, (uint64_t)in.npartitions, size,
                    rank, &first, &stride, &count);
  for (i = 0, p = first; i < count; i++, p += stride) {
    int intact = 0;
    for (c = 0; c < in.replication; c++) {
      counts[0]++;
      if (river_pcoll_verify_copy(pc, (int)p, c, NULL) == RIVER_SUCCESS)
        intact++;
      else
        counts[1]++;
    }
    if (intact == 0)
      counts[2]++;
  }
  MPI_Allreduce(MPI_IN_PLACE, counts, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (counts[1] == 0)
      printf("fsck %s: OK: %d partitions, %d copies, every block verified\n",
             in.name, in.npartitions, counts[0]);
    else
      printf("fsck %s: DAMAGED: %d of %d copies; %d partition%s with no "
             "intact copy%s\n", in.name, counts[1], counts[0], counts[2],
             counts[2] == 1 ? "" : "s",
             counts[2] ? " (data lost)" : " (every block still has a good "
             "mirror)");
  }
  river_pcoll_close(pc);
  return counts[1] ? RIVER_ECORRUPT : RIVER_SUCCESS;
}
