/*
 * pcoll_commit.c - the commit of a parallel collection's write
 * (river_pcoll_commit; doc/collections.md states the protocol and what
 * a crash at each step leaves). Two ways to write share it: one
 * partition per rank (partition = rank, as river_pcoll_create sets up),
 * and partitions begun with river_pcoll_begin_partition (pcoll.c), any
 * number per rank, numbered at the commit by their order keys and
 * renamed then from provisional names to their final ones.
 */
#include "pcoll_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Per-partition facts a writer sends to rank 0 at commit. The two key
 * buffers follow the struct in the gathered message. */
struct part_report {
  uint64_t nrecords;
  uint64_t nblocks;
  uint32_t checksum;
  int32_t ordered_ok;   /* 1 if this partition's keys ascend */
  int32_t first_disk;   /* the disk of its first copy */
  int32_t pad;
};

/* ------------------------------------------------------------ commit */

/* Finish this rank's copies and report them: commit each file (fsync +
 * rename), then reopen copy 0 to learn its block count and checksum. */
static int finish_local(river_pcoll *pc, struct part_report *rep)
{
  char path[RIVER_PATH_MAX];
  river_coll *c = NULL;
  river_coll_info ci;
  int i, rc = RIVER_SUCCESS, r;

  for (i = 0; i < pc->info.replication; i++) {
    r = river_coll_commit(pc->wcopies[i]);
    pc->wcopies[i] = NULL;
    if (r != RIVER_SUCCESS && rc == RIVER_SUCCESS)
      rc = r;
  }
  if (rc != RIVER_SUCCESS)
    return rc;
  rc = river__pcoll_file_path(pc->root, pc->disks, pc->rank % pc->info.ndisks,
                              pc->wpath, path, sizeof path);
  if (rc == RIVER_SUCCESS)
    rc = river_coll_open(path, pc->info.record_size, NULL, &c);
  if (rc == RIVER_SUCCESS)
    rc = river_coll_stat(c, &ci);
  river_coll_close(c);
  if (rc != RIVER_SUCCESS)
    return rc;
  rep->nrecords = ci.nrecords;
  rep->nblocks = ci.nblocks;
  rep->checksum = ci.table_crc;
  rep->ordered_ok = pc->ordered_ok;
  rep->first_disk = pc->rank % pc->info.ndisks;
  return RIVER_SUCCESS;
}

/* What rank 0 learns of the collection being replaced, for cleanup. */
struct old_gen {
  int exists;
  struct river__pcoll_where where;
};

/* Rank 0: the partition table (pc->parts, pc->info.nrecords) and the
 * key ranges (keys: min then max per partition) from the writers'
 * reports; RIVER_EINVAL if a collection declared ordered is not. */
static int build_table(river_pcoll *pc, const unsigned char *reports,
                       size_t rep_size, unsigned char *keys)
{
  river_pcoll_info *in = &pc->info;
  const unsigned char *prev_max = NULL;
  int p;

  pc->parts = calloc((size_t)in->npartitions, sizeof *pc->parts);
  if (pc->parts == NULL)
    return RIVER_ENOMEM;
  in->nrecords = 0;
  for (p = 0; p < in->npartitions; p++) {
    const unsigned char *rep = reports + (size_t)p * rep_size;
    const unsigned char *kmin = rep + sizeof(struct part_report);
    const unsigned char *kmax = kmin + pc->key_size;
    river_pcoll_part *pp = &pc->parts[p];
    struct part_report r;
    int cmp = 0;

    memcpy(&r, rep, sizeof r);
    if (in->ordered && r.nrecords > 0) {
      if (prev_max)
        river_schema_compare_keys(pc->schema, prev_max, kmin, &cmp);
      if (!r.ordered_ok || cmp > 0) {
        river__error("collection %s: declared ordered, but partition %d %s",
                     in->name, p, r.ordered_ok ? "starts below the end of "
                     "the one before" : "is not in key order");
        return RIVER_EINVAL;
      }
      prev_max = kmax;
    }
    pp->nrecords = r.nrecords;
    pp->bytes = r.nrecords * in->record_size;
    pp->nblocks = r.nblocks;
    pp->checksum = r.checksum;
    pp->first_disk = r.first_disk;
    river__pcoll_data_name(in->name, p, in->generation, pp->path,
                           sizeof pp->path);
    memcpy(keys + (size_t)p * 2 * pc->key_size, kmin, 2 * pc->key_size);
    in->nrecords += r.nrecords;
  }
  return RIVER_SUCCESS;
}

/* Rank 0: learn what the metadata being replaced says, if it can be
 * read, so that its data files can be removed after the commit; not
 * if another user owns it (its word moves no file: river__pcoll_
 * foreign), then they stay. */
static void learn_old(const river_pcoll *pc, struct old_gen *old)
{
  const struct river__pcoll_where *w = &old->where;
  char path[RIVER_PATH_MAX], who[320];
  int rc = river__pcoll_where(pc->root, pc->info.name, &old->where);

  old->exists = rc == RIVER_SUCCESS;
  if (rc != RIVER_SUCCESS && rc != RIVER_ENOTFOUND)
    river__warn("collection %s: replacing unreadable metadata; its data "
                "files are left in place (`river gc` lists "
                "them)", pc->info.name);
  if (rc != RIVER_SUCCESS || !river__pcoll_foreign(w))
    return;
  old->exists = 0;
  if (river__pcoll_meta_path(pc->root, pc->info.name, NULL, path,
                             sizeof path) != RIVER_SUCCESS)
    path[0] = '\0';
  river__pcoll_owner_name(w->owner, who, sizeof who);
  river__warn("collection %s: the metadata this write replaces, %s, "
              "belongs to %s, not to you: the data files it names "
              "(disks '%s', generation %s) are left in place (River "
              "removes no data file on the word of another user's "
              "metadata; `river gc` lists those in this root's own disk "
              "directories)", pc->info.name, path, who, w->disks,
              w->generation);
}

/* Rank 0: is the metadata file still the one this write set out to
 * replace? Another job committed the name meanwhile if not (possible
 * only where the lock could not be taken). */
static int check_unchanged(const river_pcoll *pc, const char *path)
{
  struct river__file_id now = river__pcoll_file_id(path);

  if (now.exists == pc->prev.exists
      && (!now.exists || (now.dev == pc->prev.dev
                          && now.ino == pc->prev.ino)))
    return RIVER_SUCCESS;
  river__error("collection %s was replaced or removed by another job while "
               "this one wrote it; this write is abandoned", pc->info.name);
  return RIVER_EBUSY;
}

/* Rank 0: build the partition table from the reports, check ordering,
 * write the metadata under this write's own temporary name and rename it
 * into place. The rename is the commit: RIVER_SUCCESS from then on, a
 * failure after it (syncing the directory) only a warning. */
static int publish(river_pcoll *pc, const unsigned char *reports,
                   size_t rep_size, struct old_gen *old)
{
  char path[RIVER_PATH_MAX], tmp[RIVER_PATH_MAX];
  unsigned char *keys;
  int rc;

  keys = calloc((size_t)pc->info.npartitions, 2 * pc->key_size + 1);
  if (keys == NULL)
    return RIVER_ENOMEM;
  rc = build_table(pc, reports, rep_size, keys);
  if (rc == RIVER_SUCCESS)
    rc = river__pcoll_meta_path(pc->root, pc->info.name, NULL, path,
                                sizeof path);
  if (rc == RIVER_SUCCESS)
    rc = river__pcoll_meta_path(pc->root, pc->info.name,
                                pc->info.generation, tmp, sizeof tmp);
  if (rc == RIVER_SUCCESS)
    rc = river__pcoll_meta_write(pc, tmp, keys);
  free(keys);
  if (rc == RIVER_SUCCESS)
    rc = check_unchanged(pc, path);
  if (rc == RIVER_SUCCESS && pc->prev.exists)
    learn_old(pc, old);
  if (rc == RIVER_SUCCESS && river__test_fault("commit-rename") != 0) {
    river__error("cannot rename %s to %s: injected fault", tmp, path);
    rc = RIVER_EIO;
  } else if (rc == RIVER_SUCCESS && rename(tmp, path) != 0) {
    river__error("cannot rename %s to %s: %s", tmp, path, strerror(errno));
    rc = RIVER_EIO;
  }
  if (rc != RIVER_SUCCESS) {
    unlink(tmp);
    old->exists = 0;
    return rc;
  }
  /* Committed. */
  if (river__fsync_dir(path) != RIVER_SUCCESS)
    river__warn("collection %s is committed, but its directory could not "
                "be synced: the commit may not survive a power failure",
                pc->info.name);
  return RIVER_SUCCESS;
}

/* After the commit: remove the files of the generation it replaced.
 * Partition p's old files are removed by rank p mod size (node-local
 * disks: by a rank of each node); failures are warnings (the files
 * become orphans, see river_pcoll_gc). */
static void remove_old(river_pcoll *pc, const struct old_gen *old)
{
  const struct river__pcoll_where *w = &old->where;
  int p, index, count;

  if (!old->exists || strcmp(w->generation, pc->info.generation) == 0)
    return;
  /* Node-local disks: each node sees only its own, so its ranks share
   * every partition out among them and look on every disk (w is the
   * same on every rank, so is the gathering of the nodes' names). */
  if (river__pcoll_node_local(w->disks)
      && (pc->nodes != NULL || river__pcoll_gather_nodes(pc) == RIVER_SUCCESS)
      && river__pcoll_node_slot(pc, &index, &count) == RIVER_SUCCESS) {
    for (p = index; p < w->npartitions; p += count)
      river__pcoll_remove_files(pc->root, w->disks, pc->info.name, p,
                                w->generation, w->ndisks, w->replication, 1);
    return;
  }
  for (p = pc->rank; p < w->npartitions; p += pc->size)
    river__pcoll_remove_files(pc->root, w->disks, pc->info.name, p,
                              w->generation, w->ndisks, w->replication,
                              w->any_disk);
}

/* After rank 0's publish (rc, the same on every rank): not committed,
 * this write's own files go, nothing else (begun: partitions begun by
 * the writers, this rank's renamed ones; the others go with the handle);
 * committed, the generation it replaced goes. */
static void remove_renamed(river_pcoll *pc);

static void after_publish(river_pcoll *pc, int rc, struct old_gen *old,
                          int begun)
{
  if (rc != RIVER_SUCCESS)
    river__pcoll_ship_undo(pc);   /* copies received from other nodes */
  if (rc != RIVER_SUCCESS && begun) {
    remove_renamed(pc);
  } else if (rc != RIVER_SUCCESS) {
    river__pcoll_remove_files(pc->root, pc->disks, pc->info.name, pc->rank,
                              pc->info.generation, pc->info.ndisks,
                              pc->info.replication, 0);
  } else {
    river__bcast(old, sizeof *old, MPI_BYTE, 0, pc->comm);
    river__test_fault("commit-cleanup");
    remove_old(pc, old);
  }
}

/* Once every rank has committed or removed its files (and removed the
 * replaced generation's): rank 0 removes the write's record
 * (pcoll_record.c), which until then lets gc find what a killed write
 * left. */
static void forget_record(river_pcoll *pc)
{
  river__agree(pc->comm, RIVER_SUCCESS);
  if (pc->rank == 0)
    river__pcoll_record_remove(pc);
}

/* ----------------------------------- partitions begun by the writers */


/* Every rank ends its current partition; a rank that began none drops
 * its own (refusing records written outside a partition). */
static int end_parts(river_pcoll *pc)
{
  if (pc->failed)
    return RIVER_ESTATE;
  if (pc->keyed)
    return river__pcoll_end_partition(pc, 1);
  if (pc->wcount > 0) {
    river__error("collection %s: rank %d wrote %llu records outside a "
                 "partition, while other ranks began partitions "
                 "(river_pcoll_begin_partition)", pc->info.name, pc->rank,
                 (unsigned long long)pc->wcount);
    return RIVER_ESTATE;
  }
  return river__pcoll_end_partition(pc, 0);
}

/* One partition's place in the numbering: its order and where it is. */
struct slot {
  uint64_t order;
  int rank, idx;
};

static int by_order(const void *a, const void *b)
{
  const struct slot *x = a, *y = b;

  if (x->order != y->order)
    return x->order < y->order ? -1 : 1;
  return x->rank != y->rank ? (x->rank < y->rank ? -1 : 1)
                            : (x->idx > y->idx) - (x->idx < y->idx);
}

/* Rank 0: the numbering from every rank's orders (counts[r] from rank
 * r, at displs[r] in orders): final[displs[r] + i] is rank r's partition
 * i's number. RIVER_EINVAL for two partitions of the same order. */
static int number_parts(const river_pcoll *pc, const uint64_t *orders,
                        const int *counts, const int *displs, int total,
                        int *final)
{
  struct slot *s = malloc((size_t)(total ? total : 1) * sizeof *s);
  int r, i, k = 0, rc = RIVER_SUCCESS;

  if (s == NULL)
    return RIVER_ENOMEM;
  for (r = 0; r < pc->size; r++)
    for (i = 0; i < counts[r]; i++, k++)
      s[k] = (struct slot){orders[displs[r] + i], r, i};
  qsort(s, (size_t)total, sizeof *s, by_order);
  for (k = 0; k < total && rc == RIVER_SUCCESS; k++) {
    if (k > 0 && s[k].order == s[k - 1].order) {
      river__error("collection %s: two partitions begun with order %llu "
                   "(ranks %d and %d)", pc->info.name,
                   (unsigned long long)s[k].order, s[k - 1].rank, s[k].rank);
      rc = RIVER_EINVAL;
    }
    final[displs[s[k].rank] + s[k].idx] = k;
  }
  free(s);
  return rc;
}

/* Number every rank's partitions (gathered at rank 0, the numbers sent
 * back into pc->wparts[i].final); pc->info.npartitions gets the total,
 * and rank 0's *numbers every partition's number in rank order (rank
 * 0's partitions, then rank 1's, ...; NULL elsewhere; the caller frees
 * it). Collective; the same outcome everywhere. */
static int exchange_numbers(river_pcoll *pc, int **numbers)
{
  int *counts = NULL, *displs = NULL, *final = NULL, *mine, *bytes = NULL;
  int *boff = NULL, total = 0, r, i, rc = RIVER_SUCCESS, n = pc->nwparts;
  uint64_t *orders = NULL, *my_orders;

  my_orders = malloc((size_t)(n ? n : 1) * sizeof *my_orders);
  mine = malloc((size_t)(n ? n : 1) * sizeof *mine);
  if (pc->rank == 0) {
    counts = calloc((size_t)pc->size, sizeof *counts);
    displs = calloc((size_t)pc->size, sizeof *displs);
    bytes = calloc((size_t)pc->size, sizeof *bytes);
    boff = calloc((size_t)pc->size, sizeof *boff);
  }
  if (!my_orders || !mine
      || (pc->rank == 0 && (!counts || !displs || !bytes || !boff)))
    rc = RIVER_ENOMEM;
  rc = river__agree(pc->comm, rc);
  if (rc != RIVER_SUCCESS)
    goto out;
  for (i = 0; i < n; i++)
    my_orders[i] = pc->wparts[i].order;
  rc = river__gather(&n, 1, MPI_INT, counts, 0, pc->comm);
  if (pc->rank == 0 && rc == RIVER_SUCCESS) {
    /* The commit's gathers count bytes in ints: a report (the struct
     * and two keys) per partition must fit. */
    size_t most = (size_t)INT_MAX / (sizeof(struct part_report)
                                     + 2 * pc->key_size), sum = 0;
    for (r = 0; r < pc->size; r++)
      sum += (size_t)counts[r];
    if (sum > most) {
      river__error("collection %s: %zu partitions begun; at most %zu",
                   pc->info.name, sum, most);
      rc = RIVER_EOVERFLOW;
    }
    for (r = 0; rc == RIVER_SUCCESS && r < pc->size; r++) {
      displs[r] = total;
      boff[r] = total * (int)sizeof *orders;
      bytes[r] = counts[r] * (int)sizeof *orders;
      total += counts[r];
    }
    orders = malloc((size_t)(total ? total : 1) * sizeof *orders);
    final = malloc((size_t)(total ? total : 1) * sizeof *final);
    if (rc == RIVER_SUCCESS && (orders == NULL || final == NULL))
      rc = RIVER_ENOMEM;
  }
  rc = river__agree(pc->comm, rc);
  if (rc == RIVER_SUCCESS)
    rc = river__gatherv(my_orders, n * (int)sizeof *my_orders, orders, bytes,
                        boff, 0, pc->comm);
  if (rc == RIVER_SUCCESS && pc->rank == 0) {
    rc = number_parts(pc, orders, counts, displs, total, final);
    for (r = 0; r < pc->size; r++) {   /* now in bytes of ints */
      boff[r] = displs[r] * (int)sizeof *final;
      bytes[r] = counts[r] * (int)sizeof *final;
    }
  }
  river__bcast(&rc, 1, MPI_INT, 0, pc->comm);
  river__bcast(&total, 1, MPI_INT, 0, pc->comm);
  if (rc == RIVER_SUCCESS)
    rc = river__scatterv(final, bytes, boff, mine, n * (int)sizeof *mine, 0,
                         pc->comm);
  rc = river__agree(pc->comm, rc);
  for (i = 0; rc == RIVER_SUCCESS && i < n; i++)
    pc->wparts[i].final = mine[i];
  pc->info.npartitions = total;
out:
  free(my_orders);
  free(mine);
  free(counts);
  free(displs);
  free(bytes);
  free(boff);
  free(orders);
  if (rc == RIVER_SUCCESS && pc->rank == 0)
    *numbers = final;
  else
    free(final);
  return rc;
}

/* Rename partition w's files from their provisional names to those of
 * partition w->final, and fill its report (rep, then its keys). */
static int rename_part(river_pcoll *pc, struct river__wpart *w,
                       unsigned char *rep_buf)
{
  char name[RIVER_PCOLL_PATH_LEN], path[RIVER_PATH_MAX];
  struct part_report rep = {0};
  uint64_t nrec, nblk;
  uint32_t crc;
  int c, rc;

  rc = river__coll_written(w->copies[0], &nrec, &nblk, &crc);
  if (rc == RIVER_SUCCESS)
    rc = river__pcoll_data_name(pc->info.name, w->final, pc->info.generation,
                                name, sizeof name);
  for (c = 0; rc == RIVER_SUCCESS && c < pc->info.replication; c++) {
    rc = river__pcoll_file_path(pc->root, pc->disks,
                                (pc->rank + c) % pc->info.ndisks, name, path,
                                sizeof path);
    if (rc == RIVER_SUCCESS) {
      rc = river__coll_commit_as(w->copies[c], path);
      w->copies[c] = NULL;   /* renamed, or freed with its tmp file */
    }
  }
  rep.nrecords = nrec;
  rep.nblocks = nblk;
  rep.checksum = crc;
  rep.ordered_ok = w->ordered_ok;
  rep.first_disk = pc->rank % pc->info.ndisks;
  memcpy(rep_buf, &rep, sizeof rep);
  memcpy(rep_buf + sizeof rep, w->keys, 2 * pc->key_size);
  return rc;
}

/* A failed commit: remove this rank's files that were renamed (the
 * others go with the handle). */
static void remove_renamed(river_pcoll *pc)
{
  int i;

  for (i = 0; i < pc->nwparts; i++)
    if (pc->wparts[i].final >= 0)
      river__pcoll_remove_files(pc->root, pc->disks, pc->info.name,
                                pc->wparts[i].final, pc->info.generation,
                                pc->info.ndisks, pc->info.replication, 1);
}

/* Node-local disks: send this rank's renamed partitions' copies to
 * their disks' nodes (river__pcoll_ship). Collective. */
static int ship_parts(river_pcoll *pc)
{
  int *parts = malloc((size_t)(pc->nwparts + 1) * sizeof *parts), i, n = 0;
  int rc = parts == NULL ? RIVER_ENOMEM : RIVER_SUCCESS;

  for (i = 0; parts != NULL && i < pc->nwparts; i++)
    if (pc->wparts[i].final >= 0)
      parts[n++] = pc->wparts[i].final;
  rc = river__agree(pc->comm, rc);
  if (rc == RIVER_SUCCESS)
    rc = river__pcoll_ship(pc, parts, n);
  free(parts);
  return rc;
}

/* The commit of a write whose ranks began their partitions: end them,
 * number them by order, rename each rank's files to their numbers and
 * report them to rank 0, which publishes the metadata; then as for one
 * partition per rank. `rc`: the caller's outcome so far. */
static int commit_parts(river_pcoll *pc, int rc)
{
  struct old_gen old = {0};
  unsigned char *mine = NULL, *all = NULL, *by_rank = NULL;
  size_t rep_size = sizeof(struct part_report) + 2 * pc->key_size;
  int *bytes = NULL, *boff = NULL, *counts = NULL, *numbers = NULL;
  int np, i, r, n;

  if (rc == RIVER_SUCCESS)
    rc = end_parts(pc);
  rc = river__agree(pc->comm, rc);
  if (rc == RIVER_SUCCESS)
    rc = exchange_numbers(pc, &numbers);
  n = rc == RIVER_SUCCESS ? pc->nwparts : 0;
  np = pc->info.npartitions ? pc->info.npartitions : 1;
  mine = malloc((size_t)(n ? n : 1) * rep_size);
  if (pc->rank == 0) {
    all = malloc((size_t)np * rep_size);
    by_rank = malloc((size_t)np * rep_size);
    counts = calloc((size_t)pc->size, sizeof *counts);
    bytes = calloc((size_t)pc->size, sizeof *bytes);
    boff = calloc((size_t)pc->size, sizeof *boff);
    if (!all || !by_rank || !counts || !bytes || !boff)
      rc = rc == RIVER_SUCCESS ? RIVER_ENOMEM : rc;
  }
  if (mine == NULL && rc == RIVER_SUCCESS)
    rc = RIVER_ENOMEM;
  if (rc == RIVER_SUCCESS && river__test_fault("commit-files") != 0)
    rc = RIVER_EIO;
  for (i = 0; rc == RIVER_SUCCESS && i < n; i++)
    rc = rename_part(pc, &pc->wparts[i], mine + (size_t)i * rep_size);
  rc = river__agree(pc->comm, rc);
  if (rc == RIVER_SUCCESS)
    rc = ship_parts(pc);
  /* The reports, gathered in rank order, placed by number. */
  if (rc == RIVER_SUCCESS)
    rc = river__gather(&n, 1, MPI_INT, counts, 0, pc->comm);
  if (rc == RIVER_SUCCESS && pc->rank == 0)
    for (r = 0, i = 0; r < pc->size; i += counts[r], r++) {
      boff[r] = i * (int)rep_size;
      bytes[r] = counts[r] * (int)rep_size;
    }
  if (rc == RIVER_SUCCESS)
    rc = river__gatherv(mine, n * (int)rep_size, by_rank, bytes, boff, 0,
                        pc->comm);
  if (rc == RIVER_SUCCESS && pc->rank == 0) {
    for (i = 0; i < pc->info.npartitions; i++)
      memcpy(all + (size_t)numbers[i] * rep_size,
             by_rank + (size_t)i * rep_size, rep_size);
    if (river__test_fault("commit-meta") != 0)
      rc = RIVER_EIO;
    if (rc == RIVER_SUCCESS)
      rc = publish(pc, all, rep_size, &old);
  }
  if (river__bcast(&rc, 1, MPI_INT, 0, pc->comm) != RIVER_SUCCESS)
    rc = RIVER_EMPI;
  after_publish(pc, rc, &old, 1);
  forget_record(pc);
  free(mine);
  free(all);
  free(by_rank);
  free(numbers);
  free(counts);
  free(bytes);
  free(boff);
  river__pcoll_free(pc);
  return rc;
}

/*
 * The commit protocol (doc/collections.md): every rank finishes its
 * files (data written, fsynced, renamed from .rdat.tmp to .rdat); rank 0
 * gathers their reports, writes the metadata under this write's own
 * temporary name, checks that nobody replaced the name meanwhile and
 * renames the metadata into place: that rename is the commit. Then the
 * old generation's files go. Rank 0 holds the name's lock throughout.
 */
int river_pcoll_commit(river_pcoll *pc)
{
  struct part_report rep = {0};
  struct old_gen old = {0};
  unsigned char *mine = NULL, *all = NULL;
  size_t rep_size;
  int rc, keyed = 0;

  if (pc == NULL || !pc->writing)
    return RIVER_EINVAL;
  if (river__allreduce(&pc->keyed, &keyed, 1, MPI_INT, MPI_MAX, pc->comm)
      != RIVER_SUCCESS)
    keyed = -1;
  if (keyed != 0)
    return commit_parts(pc, keyed < 0 ? RIVER_EMPI : RIVER_SUCCESS);
  rep_size = sizeof rep + 2 * pc->key_size;
  mine = calloc(1, rep_size);
  if (pc->rank == 0)
    all = calloc((size_t)pc->size, rep_size);
  rc = mine == NULL || (pc->rank == 0 && all == NULL) ? RIVER_ENOMEM
       : pc->failed ? RIVER_ESTATE : RIVER_SUCCESS;
  if (rc == RIVER_SUCCESS && river__test_fault("commit-files") != 0)
    rc = RIVER_EIO;
  if (rc == RIVER_SUCCESS)
    rc = finish_local(pc, &rep);
  rc = river__agree(pc->comm, rc);
  if (rc == RIVER_SUCCESS)   /* node-local disks: copies to their nodes */
    rc = river__pcoll_ship(pc, &pc->rank, 1);
  if (rc == RIVER_SUCCESS) {
    memcpy(mine, &rep, sizeof rep);
    memcpy(mine + sizeof rep, pc->key_min, pc->key_size);
    memcpy(mine + sizeof rep + pc->key_size, pc->key_max, pc->key_size);
    river__gather(mine, (int)rep_size, MPI_BYTE, all, 0, pc->comm);
    if (pc->rank == 0 && river__test_fault("commit-meta") != 0)
      rc = RIVER_EIO;
    if (pc->rank == 0 && rc == RIVER_SUCCESS)
      rc = publish(pc, all, rep_size, &old);
    river__bcast(&rc, 1, MPI_INT, 0, pc->comm);
  }
  after_publish(pc, rc, &old, 0);
  forget_record(pc);
  free(mine);
  free(all);
  river__pcoll_free(pc);
  return rc;
}

