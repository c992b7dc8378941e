/*
 * coll_info.c - the river command's collection commands that look at or
 * remove a collection: ls, info, fsck, rm. Like coll.c's, they run on
 * every rank and agree on the outcome; the printing is rank 0's.
 */
#include "coll.h"

#include <limits.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ ls, info, rm */

/* One line of `ls` for collection name. */
static void print_ls_line(const struct args *a, const char *name)
{
  river_pcoll_opts o = a->opts;
  river_pcoll_info in;
  river_pcoll *pc;
  char size[APP_SIZE_TEXT];

  o.hold = RIVER_PCOLL_HOLD_NONE;   /* its facts only */
  if (river_pcoll_open(MPI_COMM_SELF, name, &o, &pc) != RIVER_SUCCESS) {
    printf("%-24s (unreadable metadata: see river fsck %s)\n", name, name);
    return;
  }
  river_pcoll_info_get(pc, &in);
  printf("%-24s %14llu %9s %6d %6d %s\n", name,
         (unsigned long long)in.nrecords,
         app_size(in.nrecords * in.record_size, size), in.npartitions,
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
    /* A root that is not there is a mistyped --root or $RIVER_ROOT
     * more often than an empty one: said, and a failure. */
    river_log(RIVER_LOG_ERROR, "ls: no root %s (--root DIR, $RIVER_ROOT "
              "or ./river-data)", root);
  } else if (rc == RIVER_SUCCESS) {
    printf("%-24s %14s %9s %6s %6s %s\n", "NAME", "RECORDS", "SIZE",
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
  char text[4096], dir[4200], size[APP_SIZE_TEXT];
  size_t len = sizeof text;
  int p, c, d;

  river_pcoll_info_get(pc, &in);
  river_pcoll_schema(pc, &s);
  river_schema_format(s, text, &len);
  len = sizeof dir;
  river_pcoll_disk_path(pc, 0, dir, &len);
  printf("collection  %s\n", in.name);
  printf("schema      %s (%zu-byte records)\n", text, in.record_size);
  printf("records     %llu (%llu bytes, %s)\n",
         (unsigned long long)in.nrecords,
         (unsigned long long)(in.nrecords * in.record_size),
         app_size(in.nrecords * in.record_size, size));
  printf("layout      %s%s, %d partition%s on %d disk%s, %d cop%s each\n",
         in.layout == RIVER_LAYOUT_INTERLEAVED ? "interleaved" : "partitioned",
         in.ordered ? " (ordered by key)" : "", in.npartitions,
         in.npartitions == 1 ? "" : "s", in.ndisks, in.ndisks == 1 ? "" : "s",
         in.replication, in.replication == 1 ? "y" : "ies");
  printf("blocks      %zu bytes (%s, %zu records)\n", in.block_size,
         app_size(in.block_size, size), in.block_size / in.record_size);
  printf("generation  %s\n", in.generation);
  /* Every disk's directory, as this rank's node sees it (a node-local
   * pattern expands with the node's name). */
  for (d = 0; d < in.ndisks; d++) {
    len = sizeof dir;
    if (river_pcoll_disk_path(pc, d, dir, &len) != RIVER_SUCCESS)
      snprintf(dir, sizeof dir, "?");
    printf("disk %-6d %s\n", d, dir);
  }
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
  a.opts.hold = RIVER_PCOLL_HOLD_NONE;   /* its facts only */
  rc = river_pcoll_open(MPI_COMM_WORLD, a.pos[0], &a.opts, &pc);
  if (rc == RIVER_SUCCESS && cli_rank() == 0)
    print_info(pc);
  river_pcoll_close(pc);
  return rc;
}

/* ----------------------------------------------------------------- fsck */

/*
 * fsck judges each block across the copies of its partition: a copy with
 * bad blocks is a warning (with the copies to repair it from) as long as
 * every block has an intact copy somewhere; a block with none is data
 * lost. Each copy is verified by the rank that serves its disk
 * (river_pcoll_disk_ranks: with node-local disks, a rank of the node
 * that holds it); partition p is judged by rank p mod size, which gets
 * its copies' verdicts and writes its part of the report as one
 * '\0'-terminated chunk per partition, which rank 0 gathers and prints in
 * partition order.
 */
/* F_DENIED_BLOCKS: blocks with no intact copy where some copy was refused
 * for lack of permission: unreadable here, not known to be lost. */
enum { F_COPIES, F_DAMAGED, F_LOST_BLOCKS, F_LOST_PARTS, F_DENIED_BLOCKS,
       F_N };

struct report {
  char *text;
  size_t len, cap;
  int failed;            /* RIVER_ENOMEM while writing the report */
};

static void say(struct report *r, const char *fmt, ...)
{
  va_list ap;
  char *t;
  int n;

  for (;;) {
    va_start(ap, fmt);
    n = vsnprintf(r->text ? r->text + r->len : NULL,
                  r->text ? r->cap - r->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0 || r->failed)
      return;
    if (r->text != NULL && r->len + (size_t)n < r->cap) {
      r->len += (size_t)n;
      return;
    }
    t = realloc(r->text, r->cap * 2 + (size_t)n + 64);
    if (t == NULL) {
      r->failed = 1;
      return;
    }
    r->text = t;
    r->cap = r->cap * 2 + (size_t)n + 64;
  }
}

/* The blocks b < n with mark[b] set, as "5, 9-12, 20" (the first few
 * runs, then how many more). */
static void say_blocks(struct report *r, const unsigned char *mark, uint64_t n)
{
  uint64_t b = 0, e, runs = 0, more = 0;

  while (b < n) {
    if (!mark[b]) {
      b++;
      continue;
    }
    for (e = b; e + 1 < n && mark[e + 1]; e++)
      ;
    if (runs++ < 8) {
      say(r, "%s%llu", runs > 1 ? ", " : "", (unsigned long long)b);
      if (e > b)
        say(r, "-%llu", (unsigned long long)e);
    } else {
      more += e - b + 1;
    }
    b = e + 1;
  }
  if (more)
    say(r, " and %llu more", (unsigned long long)more);
}

/* The WARN line of copy c (disk d) of a partition of nblocks blocks,
 * with bad[k * nblocks + b] set for bad block b of copy k. */
static void say_copy(struct report *r, const river_pcoll_info *in, int p,
                     int c, int d, int rc, const unsigned char *bad,
                     uint64_t nblocks, uint64_t nbad, const int *disks)
{
  const unsigned char *mine = bad + (size_t)c * nblocks;
  uint64_t b;
  int k, from = 0;

  say(r, "fsck %s: WARN: partition %d copy %d (disk %d): ", in->name, p, c,
      d);
  if (rc == RIVER_ENOTFOUND)
    say(r, "file missing (all %llu blocks)", (unsigned long long)nblocks);
  else if (rc == RIVER_EACCES)
    say(r, "unreadable: permission denied (all %llu blocks)",
        (unsigned long long)nblocks);
  else if (nblocks == 0 || nbad == nblocks)
    say(r, "unusable (all %llu blocks)", (unsigned long long)nblocks);
  else {
    say(r, "block%s ", nbad == 1 ? "" : "s");
    say_blocks(r, mine, nblocks);
    say(r, " damaged (%llu of %llu)", (unsigned long long)nbad,
        (unsigned long long)nblocks);
  }
  /* Repair sources: the copies intact where this one is not. */
  for (k = 0; k < in->replication; k++) {
    const unsigned char *other = bad + (size_t)k * nblocks;
    for (b = 0; k != c && b < nblocks && !(mine[b] && !other[b]); b++)
      ;
    if (k == c || b == nblocks)
      continue;
    say(r, "%s copy %d (disk %d)", from++ ? "," : "; repair from", k,
        disks[k]);
  }
  if (from == 0 && nblocks > 0)
    say(r, "; no other copy can repair it");
  say(r, "\n");
}

/* What the copies of one partition hold after verification: each copy's
 * outcome, its count of bad blocks and which (rcs, nbad, then bad[c *
 * nblocks + b]), filled by the rank that serves the copy's disk and
 * summed at the partition's judge (zeros from every other rank). */
struct verdicts {
  uint64_t nblocks;
  int *rcs;
  uint64_t *nbad;
  unsigned char *bad;   /* (R + 1) x nblocks: the last row, no copy */
};

static void free_verdicts(struct verdicts *v, int n)
{
  int i;

  for (i = 0; v != NULL && i < n; i++) {
    free(v[i].rcs);
    free(v[i].nbad);
    free(v[i].bad);
  }
  free(v);
}

/* Every partition's verdicts, zeroed. */
static int alloc_verdicts(river_pcoll *pc, const river_pcoll_info *in,
                          struct verdicts **out)
{
  struct verdicts *v = calloc((size_t)in->npartitions + 1, sizeof *v);
  size_t rpb;
  int p, R = in->replication;

  *out = v;
  for (p = 0; v != NULL && p < in->npartitions; p++) {
    river_pcoll_blocks(pc, p, &rpb, &v[p].nblocks);
    v[p].rcs = calloc((size_t)R, sizeof *v[p].rcs);
    v[p].nbad = calloc((size_t)R, sizeof *v[p].nbad);
    v[p].bad = calloc((size_t)(R + 1) * (size_t)v[p].nblocks + 1, 1);
    if (v[p].rcs == NULL || v[p].nbad == NULL || v[p].bad == NULL)
      return RIVER_ENOMEM;
  }
  return v == NULL ? RIVER_ENOMEM : RIVER_SUCCESS;
}

/* Verify, block by block, every copy on the disks this rank serves
 * (ranks[d], river_pcoll_disk_ranks: with node-local disks a rank of
 * the node that holds them). RIVER_SUCCESS unless the check itself
 * could not run. */
static int verify_mine(river_pcoll *pc, const river_pcoll_info *in,
                       const int *ranks, struct verdicts *v,
                       river_progress *pr, uint64_t *verified)
{
  river_pcoll_part part;
  int p, c, d, rc;

  for (p = 0; p < in->npartitions; p++)
    for (c = 0; c < in->replication; c++) {
      river_pcoll_copy_disk(pc, p, c, &d);
      if (ranks[d] != cli_rank())
        continue;
      rc = river_pcoll_verify_blocks(pc, p, c,
                                     v[p].bad + (size_t)c * v[p].nblocks,
                                     v[p].nblocks, &v[p].nbad[c]);
      if (rc == RIVER_ENOMEM || rc == RIVER_EINVAL)
        return rc;
      v[p].rcs[c] = rc;
      if (river_pcoll_partition(pc, p, &part) == RIVER_SUCCESS) {
        *verified += part.nrecords;
        river_progress_add(pr, part.nrecords,
                           part.nrecords * in->record_size);
      }
    }
  return RIVER_SUCCESS;
}

/* Sum partition p's verdicts at its judge, rank p mod size. Collective. */
static int gather_verdicts(const river_pcoll_info *in, int p,
                           struct verdicts *v)
{
  int judge = p % cli_size(), me = judge == cli_rank(), R = in->replication;
  int n = R * (int)v->nblocks;

  if ((uint64_t)R * v->nblocks > (uint64_t)INT_MAX)
    return RIVER_EOVERFLOW;
  if (MPI_Reduce(me ? MPI_IN_PLACE : v->rcs, v->rcs, R, MPI_INT, MPI_SUM,
                 judge, MPI_COMM_WORLD) != MPI_SUCCESS
      || MPI_Reduce(me ? MPI_IN_PLACE : v->nbad, v->nbad, R, MPI_UINT64_T,
                    MPI_SUM, judge, MPI_COMM_WORLD) != MPI_SUCCESS
      || MPI_Reduce(me ? MPI_IN_PLACE : v->bad, v->bad, n, MPI_UNSIGNED_CHAR,
                    MPI_MAX, judge, MPI_COMM_WORLD) != MPI_SUCCESS)
    return RIVER_EMPI;
  return RIVER_SUCCESS;
}

/* Judge partition p from its copies' verdicts; add to counts and to the
 * report. */
static int judge_partition(river_pcoll *pc, const river_pcoll_info *in,
                           int p, const struct verdicts *v,
                           uint64_t counts[F_N], struct report *r)
{
  int R = in->replication, c, *disks, denied = 0;
  uint64_t nblocks = v->nblocks, b, lost = 0;
  unsigned char *bad = v->bad, *nocopy = bad + (size_t)R * nblocks;

  disks = calloc((size_t)R, sizeof *disks);
  if (disks == NULL)
    return RIVER_ENOMEM;
  for (c = 0; c < R; c++)
    river_pcoll_copy_disk(pc, p, c, &disks[c]);
  for (b = 0; b < nblocks; b++) {
    nocopy[b] = 1;
    for (c = 0; c < R; c++)
      nocopy[b] = nocopy[b] && bad[(size_t)c * nblocks + b];
    lost += nocopy[b];
  }
  for (c = 0; c < R; c++) {
    counts[F_COPIES]++;
    if (v->rcs[c] == RIVER_SUCCESS)
      continue;
    counts[F_DAMAGED]++;
    denied = denied || v->rcs[c] == RIVER_EACCES;
    say_copy(r, in, p, c, disks[c], v->rcs[c], bad, nblocks, v->nbad[c],
             disks);
  }
  if (lost && denied) {
    /* A copy this user may not read may be intact: not data lost. */
    counts[F_DENIED_BLOCKS] += lost;
    say(r, "fsck %s: UNREADABLE: partition %d block%s ", in->name, p,
        lost == 1 ? "" : "s");
    say_blocks(r, nocopy, nblocks);
    say(r, ": no copy that can be read (permission denied)\n");
  } else if (lost) {
    counts[F_LOST_BLOCKS] += lost;
    counts[F_LOST_PARTS]++;
    say(r, "fsck %s: DATA LOST: partition %d block%s ", in->name, p,
        lost == 1 ? "" : "s");
    say_blocks(r, nocopy, nblocks);
    say(r, ": no intact copy (disk%s", R == 1 ? "" : "s");
    for (c = 0; c < R; c++)
      say(r, "%s %d", c ? "," : "", disks[c]);
    say(r, ")\n");
  }
  say(r, "%c", '\0');  /* end of this partition's chunk */
  free(disks);
  return r->failed ? RIVER_ENOMEM : RIVER_SUCCESS;
}

/* Check every copy of every partition: each rank verifies the copies on
 * the disks it serves, then each partition's judge (rank p mod size)
 * gets their verdicts and writes its part of the report. Collective. */
static int check_all(river_pcoll *pc, const river_pcoll_info *in,
                     uint64_t counts[F_N], struct report *r)
{
  struct verdicts *v = NULL;
  river_progress *pr = NULL;
  int *ranks = malloc((size_t)in->ndisks * sizeof *ranks + 1), p, rc;

  rc = cli_agree(ranks == NULL ? RIVER_ENOMEM : RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_disk_ranks(MPI_COMM_WORLD, pc, ranks);
  if (rc == RIVER_SUCCESS)
    rc = cli_agree(alloc_verdicts(pc, in, &v));
  /* The progress line, copy by copy (collective; agreed within). */
  if (rc == RIVER_SUCCESS)
    rc = river_progress_create(MPI_COMM_WORLD, "fsck",
                               in->nrecords * (uint64_t)in->replication,
                               in->nrecords * (uint64_t)in->replication
                                   * in->record_size, &pr);
  if (rc == RIVER_SUCCESS) {
    uint64_t verified = 0;
    double t0 = river_wtime();
    int prc;

    rc = cli_agree(verify_mine(pc, in, ranks, v, pr, &verified));
    prc = river_progress_end(pr, rc == RIVER_SUCCESS);   /* collective */
    rc = rc == RIVER_SUCCESS ? prc : rc;
    /* With --stats: the copies' records each rank verified. */
    rc = cli_stats_work("fsck", verified, verified * in->record_size, t0,
                        rc);
  }
  for (p = 0; rc == RIVER_SUCCESS && p < in->npartitions; p++) {
    rc = cli_agree(gather_verdicts(in, p, &v[p]));
    if (rc == RIVER_SUCCESS && p % cli_size() == cli_rank())
      rc = judge_partition(pc, in, p, &v[p], counts, r);
  }
  free_verdicts(v, in->npartitions);
  free(ranks);
  return rc;
}

/* Rank 0 prints every rank's chunks in partition order (partition p was
 * rank p mod size's). Collective. */
static int print_report(const struct report *r, int npartitions)
{
  int rank = cli_rank(), size = cli_size(), len = (int)r->len, i, p, rc;
  int *lens = NULL, *offs = NULL, total = 0;
  char *all = NULL;

  if (rank == 0) {
    lens = calloc((size_t)size, sizeof *lens);
    offs = calloc((size_t)size, sizeof *offs);
  }
  rc = cli_agree(rank == 0 && (lens == NULL || offs == NULL) ? RIVER_ENOMEM
                                                             : RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS)
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (i = 0; rank == 0 && rc == RIVER_SUCCESS && i < size; i++) {
    offs[i] = total;
    total += lens[i];
  }
  if (rank == 0 && rc == RIVER_SUCCESS)
    all = malloc((size_t)total + 1);
  if (rc == RIVER_SUCCESS)
    rc = cli_agree(rank == 0 && all == NULL ? RIVER_ENOMEM : RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS)
    MPI_Gatherv(r->text, len, MPI_CHAR, all, lens, offs, MPI_CHAR, 0,
                MPI_COMM_WORLD);
  for (p = 0; rank == 0 && rc == RIVER_SUCCESS && p < npartitions; p++) {
    i = p % size;
    if (offs[i] < (i + 1 < size ? offs[i + 1] : total)) {
      fputs(all + offs[i], stdout);
      offs[i] += (int)strlen(all + offs[i]) + 1;
    }
  }
  free(all);
  free(lens);
  free(offs);
  return rc;
}

/* The verdict on a collection whose metadata could not be read: altered,
 * torn or unreadable metadata leaves no partition table to check the data
 * against (the reason is the error line above it). */
static void say_bad_meta(const struct args *a)
{
  char root[4200];
  size_t len = sizeof root;

  if (river_pcoll_root(&a->opts, root, &len) != RIVER_SUCCESS)
    snprintf(root, sizeof root, "ROOT");
  printf("fsck %s: DAMAGED: metadata %s/%s%s cannot be trusted (see the "
         "error above); no data checked\n", a->pos[0], root, a->pos[0],
         RIVER_PCOLL_META_SUFFIX);
  fflush(stdout);
}

int cmd_fsck(int argc, char **argv)
{
  struct args a;
  river_pcoll *pc = NULL;
  river_pcoll_info in;
  struct report rep = {NULL, 0, 0, 0};
  uint64_t counts[F_N] = {0};
  int rc;

  rc = cli_coll_args(argc, argv, OPT_COMMON, 1, "COLL", &a);
  if (rc != RIVER_SUCCESS)
    return rc;
  /* Each rank holds the copies of the disks it serves, which are those
   * it verifies (check_all: river_pcoll_disk_ranks over the same
   * communicator). */
  rc = river_pcoll_open(MPI_COMM_WORLD, a.pos[0], &a.opts, &pc);
  if (rc == RIVER_ECORRUPT && cli_rank() == 0)
    say_bad_meta(&a);
  if (rc != RIVER_SUCCESS)
    return rc;
  river_pcoll_info_get(pc, &in);
  rc = check_all(pc, &in, counts, &rep);
  rc = cli_agree(rc);
  if (rc == RIVER_SUCCESS) {
    MPI_Allreduce(MPI_IN_PLACE, counts, F_N, MPI_UINT64_T, MPI_SUM,
                  MPI_COMM_WORLD);
    rc = print_report(&rep, in.npartitions);
  }
  if (rc == RIVER_SUCCESS && cli_rank() == 0) {
    if (counts[F_DAMAGED] == 0)
      printf("fsck %s: OK: %d partition%s, %llu cop%s, every block "
             "verified\n", in.name, in.npartitions, CLI_S(in.npartitions),
             (unsigned long long)counts[F_COPIES],
             counts[F_COPIES] == 1 ? "y" : "ies");
    else if (counts[F_LOST_BLOCKS] == 0 && counts[F_DENIED_BLOCKS] > 0)
      printf("fsck %s: UNREADABLE: %llu block%s could not be read for lack "
             "of permission (not known to be damaged)\n", in.name,
             (unsigned long long)counts[F_DENIED_BLOCKS],
             counts[F_DENIED_BLOCKS] == 1 ? "" : "s");
    else if (counts[F_LOST_BLOCKS] == 0)
      printf("fsck %s: OK with warnings: %llu of %llu copies damaged, "
             "every block has an intact copy; repair the copies named "
             "above\n", in.name, (unsigned long long)counts[F_DAMAGED],
             (unsigned long long)counts[F_COPIES]);
    else
      printf("fsck %s: DAMAGED: %llu of %llu copies damaged; %llu block%s "
             "in %llu partition%s with no intact copy (data lost)\n",
             in.name, (unsigned long long)counts[F_DAMAGED],
             (unsigned long long)counts[F_COPIES],
             (unsigned long long)counts[F_LOST_BLOCKS],
             counts[F_LOST_BLOCKS] == 1 ? "" : "s",
             (unsigned long long)counts[F_LOST_PARTS],
             counts[F_LOST_PARTS] == 1 ? "" : "s");
  }
  free(rep.text);
  river_pcoll_close(pc);
  if (rc == RIVER_SUCCESS && counts[F_LOST_BLOCKS] > 0)
    rc = RIVER_ECORRUPT;
  else if (rc == RIVER_SUCCESS && counts[F_DENIED_BLOCKS] > 0)
    rc = RIVER_EACCES;
  return rc;
}
