/*
 * pcoll.c - parallel collections: partitions of single-disk collections
 * (river/collection.h) over disks, with mirrors, described by one
 * metadata file (pcoll_meta.c). This file holds their life: create,
 * write, commit, open, block reads with failover to mirrors and verify
 * (removal is pcoll_remove.c, a reader's open pcoll_open.c).
 *
 * The handle (struct river_pcoll, pcoll_internal.h) holds what the
 * metadata says plus, for a writer, this rank's open copies and running
 * key range and, for a reader, the (partition, copy) files it holds,
 * opened with the metadata (pcoll_open.c), a handle per copy made when
 * it is first read, and whether that copy is known to be unusable.
 *
 * Severity travels down the read path as an argument (fail_level), not
 * in the handle or a global: one reader handle serves calls whose
 * failures differ in weight (a copy with a mirror left to try, the last
 * copy, GD's single-copy reads that GD itself recovers from).
 */
#include "pcoll_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A 16-hex-digit id for one write: random (unique across time, hosts
 * and roots, and not to be guessed before the write's first file shows
 * it; gc takes a generation a root's write record names as that root's,
 * pcoll_record.c). */
static void new_generation(char out[17])
{
  river__pcoll_random_tag(out);
}


/* --------------------------------------------------------- lifecycle */

/* Free pc's finished partitions (a file not yet renamed is removed). */
static void free_wparts(river_pcoll *pc)
{
  int i, c;

  for (i = 0; i < pc->nwparts; i++) {
    for (c = 0; pc->wparts[i].copies && c < pc->info.replication; c++)
      river_coll_close(pc->wparts[i].copies[c]);  /* removes a tmp file */
    free(pc->wparts[i].copies);
    free(pc->wparts[i].keys);
  }
  free(pc->wparts);
  pc->wparts = NULL;
  pc->nwparts = pc->wparts_cap = 0;
}

void river__pcoll_free(river_pcoll *pc)
{
  int i;

  if (pc == NULL)
    return;
  river__pcoll_drop_reader(pc);
  if (pc->wcopies) {
    for (i = 0; i < pc->info.replication; i++)
      river_coll_close(pc->wcopies[i]);
  }
  free_wparts(pc);
  river__pcoll_record_remove(pc);  /* a write abandoned: its files went */
  if (pc->lock_fd >= 0) {
    /* A write that ends here without a collection of its name (a first
     * write abandoned) removes the lock file too. */
    char path[RIVER_PATH_MAX];
    int none = river__pcoll_meta_path(pc->root, pc->info.name, NULL, path,
                                      sizeof path) == RIVER_SUCCESS
               && access(path, F_OK) != 0;
    river__pcoll_unlock(pc->lock_fd, pc->root, pc->info.name, none);
  }
  river__pcoll_ship_free(pc);
  free(pc->wcopies);
  free(pc->parts);
  free(pc->key_min);
  river_schema_destroy(pc->schema);
  if (pc->comm != MPI_COMM_NULL)
    MPI_Comm_free(&pc->comm);
  free(pc);
}

static river_pcoll *pcoll_alloc(MPI_Comm comm, const char *name,
                                const river_pcoll_opts *opts, int *rc)
{
  river_pcoll *pc = calloc(1, sizeof *pc);

  *rc = RIVER_ENOMEM;
  if (pc == NULL)
    return NULL;
  pc->comm = MPI_COMM_NULL;
  pc->lock_fd = -1;
  pc->pin = -1;
  if ((*rc = river__comm_dup(comm, &pc->comm)) != RIVER_SUCCESS) {
    free(pc);
    return NULL;
  }
  MPI_Comm_rank(pc->comm, &pc->rank);
  MPI_Comm_size(pc->comm, &pc->size);
  snprintf(pc->info.name, sizeof pc->info.name, "%s", name);
  /* Every rank fails a bad root together (comm is already dup'ed). */
  *rc = river__agree(pc->comm,
                     river__pcoll_resolve_root(opts, pc->root,
                                               sizeof pc->root));
  if (*rc != RIVER_SUCCESS) {
    MPI_Comm_free(&pc->comm);
    free(pc);
    return NULL;
  }
  pc->direct_io = opts ? opts->direct_io : 0;
  pc->exclusive = opts ? opts->exclusive != 0 : 0;
  return pc;
}

/* Check create's options; fill pc->info and pc->disks from them. */
static int setup_create(river_pcoll *pc, const river_schema *schema,
                        const river_pcoll_opts *opts)
{
  river_pcoll_info *in = &pc->info;
  const char *disks = opts && opts->disks ? opts->disks
                                          : river__pcoll_default_disks();
  int rc;

  in->npartitions = pc->size;
  in->ndisks = opts && opts->ndisks ? opts->ndisks : pc->size;
  in->replication = opts && opts->replication ? opts->replication : 1;
  in->layout = opts ? opts->layout : RIVER_LAYOUT_PARTITIONED;
  in->ordered = opts ? opts->ordered : 0;
  in->block_size = opts && opts->block_size ? opts->block_size
                                            : RIVER_COLL_DEFAULT_BLOCK_SIZE;
  if (in->ndisks < 1 || in->replication < 1
      || in->replication > in->ndisks) {
    river__error("collection %s: replication %d needs 1..%d (the number of "
                 "disks)", in->name, in->replication, in->ndisks);
    return RIVER_EINVAL;
  }
  if (in->layout != RIVER_LAYOUT_PARTITIONED
      && in->layout != RIVER_LAYOUT_INTERLEAVED)
    return RIVER_EINVAL;
  if (in->ordered != 0 && in->ordered != 1)
    return RIVER_EINVAL;
  if ((rc = river__pcoll_check_disks(disks)) != RIVER_SUCCESS)
    return rc;
  snprintf(pc->disks, sizeof pc->disks, "%s", disks);
  if ((rc = river_schema_clone(schema, &pc->schema)) != RIVER_SUCCESS)
    return rc;
  river_schema_record_size(pc->schema, &in->record_size);
  river_schema_key(pc->schema, NULL, &pc->key_off, &pc->key_size);
  if (in->record_size > in->block_size) {
    river__error("collection %s: %zu-byte records do not fit %zu-byte "
                 "blocks", in->name, in->record_size, in->block_size);
    return RIVER_EINVAL;
  }
  return RIVER_SUCCESS;
}

/* Open the files of this rank's partition (named for partition `index`
 * of this write: the rank, or a provisional number for a partition
 * begun with river_pcoll_begin_partition), one per copy, on this rank's
 * disk and the next ones. */
static int open_copies(river_pcoll *pc, int index)
{
  river_coll_opts co = RIVER_COLL_OPTS_INIT;
  char path[RIVER_PATH_MAX], dir[RIVER_PATH_MAX], label[64];
  char tmp[RIVER_PATH_MAX], tmpname[RIVER_PCOLL_PATH_LEN + 32];
  int c, d, rc;

  pc->wcount = 0;
  pc->ordered_ok = 1;
  if (pc->key_min != NULL)   /* min, max, last: an empty one has none */
    memset(pc->key_min, 0, 3 * pc->key_size);
  rc = river__pcoll_data_name(pc->info.name, index, pc->info.generation,
                              pc->wpath, sizeof pc->wpath);
  if (rc != RIVER_SUCCESS)
    return rc;
  co.block_size = pc->info.block_size;
  co.direct_io = pc->direct_io;
  co.label = label;
  for (c = 0; c < pc->info.replication; c++) {
    d = (pc->rank + c) % pc->info.ndisks;
    if (pc->keyed)
      snprintf(label, sizeof label, "rank %d's partition %d copy %d disk %d",
               pc->rank, pc->nwparts, c, d);
    else
      snprintf(label, sizeof label, "partition %d copy %d disk %d", index, c,
               d);
    rc = river__pcoll_disk_dir(pc->root, pc->disks, d, dir, sizeof dir);
    if (rc == RIVER_SUCCESS)
      rc = river__pcoll_disk_ready(dir);
    if (rc == RIVER_SUCCESS)
      rc = river__pcoll_file_path(pc->root, pc->disks, d, pc->wpath, path,
                                  sizeof path);
    /* Written under a fresh unguessable name, created O_EXCL|O_NOFOLLOW
     * (river__coll_create_at), renamed to path at the commit. */
    if (rc == RIVER_SUCCESS)
      rc = river__pcoll_data_tmp_name(pc->info.name, index,
                                      pc->info.generation, tmpname,
                                      sizeof tmpname);
    if (rc == RIVER_SUCCESS)
      rc = river__pcoll_file_path(pc->root, pc->disks, d, tmpname, tmp,
                                  sizeof tmp);
    if (rc == RIVER_SUCCESS)
      rc = river__coll_create_at(path, tmp, pc->info.record_size, &co,
                                 &pc->wcopies[c]);
    if (rc != RIVER_SUCCESS)
      return rc;
  }
  return RIVER_SUCCESS;
}

/* Open this rank's partition files (partition = rank). */
static int open_writers(river_pcoll *pc)
{
  pc->wcopies = calloc((size_t)pc->info.replication, sizeof *pc->wcopies);
  pc->key_min = calloc(3, pc->key_size ? pc->key_size : 1);
  if (pc->wcopies == NULL || pc->key_min == NULL)
    return RIVER_ENOMEM;
  pc->key_max = pc->key_min + pc->key_size;
  pc->key_last = pc->key_max + pc->key_size;
  return open_copies(pc, pc->rank);
}

int river__pcoll_end_partition(river_pcoll *pc, int keep)
{
  struct river__wpart *w, *grown;
  int c, rc = RIVER_SUCCESS;

  if (!keep) {
    for (c = 0; c < pc->info.replication; c++) {
      river_coll_close(pc->wcopies[c]);
      pc->wcopies[c] = NULL;
    }
    return RIVER_SUCCESS;
  }
  if (pc->nwparts == pc->wparts_cap) {
    grown = realloc(pc->wparts, (size_t)(pc->wparts_cap * 2 + 4)
                                    * sizeof *grown);
    if (grown == NULL)
      return RIVER_ENOMEM;
    pc->wparts = grown;
    pc->wparts_cap = pc->wparts_cap * 2 + 4;
  }
  w = &pc->wparts[pc->nwparts];
  memset(w, 0, sizeof *w);
  w->final = -1;   /* not numbered: nothing of it is renamed */
  w->copies = pc->wcopies;
  w->keys = malloc(2 * pc->key_size + 1);
  pc->wcopies = calloc((size_t)pc->info.replication, sizeof *pc->wcopies);
  pc->nwparts++;   /* from here on its files are freed with the handle */
  if (w->keys == NULL || pc->wcopies == NULL)
    return RIVER_ENOMEM;
  memcpy(w->keys, pc->key_min, 2 * pc->key_size);  /* min, max */
  w->order = pc->worder;
  w->nrecords = pc->wcount;
  w->ordered_ok = pc->ordered_ok;
  w->final = -1;
  for (c = 0; c < pc->info.replication && rc == RIVER_SUCCESS; c++)
    rc = river__coll_finish(w->copies[c]);
  return rc;
}

int river_pcoll_begin_partition(river_pcoll *pc, uint64_t order)
{
  int rc;

  if (pc == NULL || !pc->writing || pc->wcopies == NULL)
    return RIVER_EINVAL;
  if (pc->failed)
    return RIVER_ESTATE;
  if (!pc->keyed && pc->wcount > 0) {
    river__error("collection %s: rank %d wrote %llu records before its "
                 "first river_pcoll_begin_partition", pc->info.name,
                 pc->rank, (unsigned long long)pc->wcount);
    pc->failed = 1;
    return RIVER_ESTATE;
  }
  river__test_fault("begin-partition");  /* tests: hold a writer here */
  rc = river__pcoll_end_partition(pc, pc->keyed);
  if (rc == RIVER_SUCCESS) {
    /* A provisional name, unique in this write: renamed at the commit. */
    int seq = pc->nwparts;
    pc->keyed = 1;
    pc->worder = order;
    if ((uint64_t)seq * (uint64_t)pc->size + (uint64_t)pc->rank > INT_MAX) {
      river__error("collection %s: too many partitions", pc->info.name);
      rc = RIVER_EOVERFLOW;
    } else {
      rc = open_copies(pc, pc->rank + pc->size * seq);
    }
  }
  if (rc != RIVER_SUCCESS)
    pc->failed = 1;
  return rc;
}

struct river__file_id river__pcoll_file_id(const char *path)
{
  struct river__file_id id = {0, 0, 0};
  struct stat st;

  if (lstat(path, &st) == 0) {
    id.exists = 1;
    id.dev = (unsigned long long)st.st_dev;
    id.ino = (unsigned long long)st.st_ino;
  }
  return id;
}

/* Rank 0 of a writer: make the root, take the name's lock and note which
 * metadata file the write replaces, for the check before the commit. */
static int lock_for_write(river_pcoll *pc)
{
  char path[RIVER_PATH_MAX];
  int rc = river__pcoll_mkdirs(pc->root);

  if (rc == RIVER_SUCCESS)
    rc = river__pcoll_lock(pc->root, pc->info.name, 0, &pc->lock_fd);
  if (rc == RIVER_SUCCESS)
    rc = river__pcoll_meta_path(pc->root, pc->info.name, NULL, path,
                                sizeof path);
  if (rc == RIVER_SUCCESS)
    pc->prev = river__pcoll_file_id(path);
  /* Never replace: refused before any work (under the lock, so that a
   * write of the name cannot commit between this look and ours; where
   * the lock cannot be taken, the commit's check refuses it). */
  if (rc == RIVER_SUCCESS && pc->exclusive && pc->prev.exists) {
    river__error("collection %s exists in %s: not replaced (a command's "
                 "--force, a stage's replace: true, or an API writer with "
                 "exclusive 0 replaces it)", pc->info.name, pc->root);
    rc = RIVER_EEXIST;
  }
  if (rc == RIVER_SUCCESS)
    rc = river__pcoll_record_create(pc);
  return rc;
}

int river_pcoll_create(MPI_Comm comm, const char *name,
                       const river_schema *schema,
                       const river_pcoll_opts *opts, river_pcoll **out)
{
  river_pcoll *pc;
  int rc;

  if (comm == MPI_COMM_NULL || name == NULL || schema == NULL || out == NULL)
    return RIVER_EINVAL;
  rc = river_pcoll_check_name(name);
  pc = rc == RIVER_SUCCESS ? pcoll_alloc(comm, name, opts, &rc) : NULL;
  if (pc == NULL)
    return rc;  /* every rank sees the same name: no agreement needed */
  pc->writing = 1;
  if (pc->rank == 0)
    new_generation(pc->info.generation);
  river__bcast(pc->info.generation, sizeof pc->info.generation, MPI_CHAR, 0,
               pc->comm);
  rc = setup_create(pc, schema, opts);
  if (rc == RIVER_SUCCESS && pc->rank == 0)
    rc = lock_for_write(pc);
  rc = river__agree(pc->comm, rc);
  if (rc == RIVER_SUCCESS)
    rc = open_writers(pc);
  rc = river__agree(pc->comm, rc);
  if (rc != RIVER_SUCCESS) {
    river__pcoll_free(pc); /* closing writers removes their temp files */
    return rc;
  }
  *out = pc;
  return RIVER_SUCCESS;
}

/* The order of bare keys ka and kb (key_size bytes each) under pc's
 * schema: < 0, 0 or > 0. */
static int key_order(const river_pcoll *pc, const void *ka, const void *kb)
{
  int c = 0;

  river_schema_compare_keys(pc->schema, ka, kb, &c);
  return c;
}

int river_pcoll_write(river_pcoll *pc, const void *records, size_t nrecords)
{
  const unsigned char *r = records;
  size_t i, rs;
  int c, rc;

  if (pc == NULL || !pc->writing || (records == NULL && nrecords > 0))
    return RIVER_EINVAL;
  if (pc->failed)
    return RIVER_ESTATE;
  if (nrecords == 0)
    return RIVER_SUCCESS;
  rs = pc->info.record_size;
  for (c = 0; c < pc->info.replication; c++) {
    rc = river_coll_append(pc->wcopies[c], records, nrecords);
    if (rc != RIVER_SUCCESS)
      return rc;
  }
  /* Track the key range (and order, if promised) with a fake record:
   * compare through the schema on buffers holding only the key. */
  for (i = 0; i < nrecords; i++, r += rs) {
    const unsigned char *k = r + pc->key_off;
    if (pc->wcount == 0 && i == 0) {
      memcpy(pc->key_min, k, pc->key_size);
      memcpy(pc->key_max, k, pc->key_size);
    } else {
      if (key_order(pc, k, pc->key_min) < 0)
        memcpy(pc->key_min, k, pc->key_size);
      if (key_order(pc, k, pc->key_max) > 0)
        memcpy(pc->key_max, k, pc->key_size);
      if (pc->info.ordered && key_order(pc, k, pc->key_last) < 0)
        pc->ordered_ok = 0;
    }
    memcpy(pc->key_last, k, pc->key_size);
  }
  pc->wcount += nrecords;
  return RIVER_SUCCESS;
}

/* -------------------------------------------------------------- open */

/* Check opts->hold (pc->hold, set from it) on this rank (logged), then
 * agree over pc->comm that every rank passed a good one, the same, and
 * the same kind of disk pattern, if any: which copies a rank holds may
 * take every rank (pcoll_open.c, hold_at_open). */
static int agree_hold(river_pcoll *pc, const river_pcoll_opts *opts)
{
  static const char *const names[2] = {
      "hold", "kinds of disk pattern (0 shared, 1 node-local, 2 none)"};
  uint64_t v[2];
  int rc = RIVER_SUCCESS;

  pc->hold = opts ? (int)opts->hold : RIVER_PCOLL_HOLD_SERVED;
  if (pc->hold != RIVER_PCOLL_HOLD_SERVED && pc->hold != RIVER_PCOLL_HOLD_ALL
      && pc->hold != RIVER_PCOLL_HOLD_NONE) {
    river__error("river_pcoll_open: collection %s: hold %d is none of "
                 "RIVER_PCOLL_HOLD_SERVED (0), _ALL (1) and _NONE (2)",
                 pc->info.name, pc->hold);
    rc = RIVER_EINVAL;
  }
  v[0] = (uint64_t)(int64_t)pc->hold;
  v[1] = opts && opts->disks ? (uint64_t)river__pcoll_node_local(opts->disks)
                             : 2;
  return river__agree_same(pc->comm, "river_pcoll_open", rc, 2, names, v);
}

int river_pcoll_open(MPI_Comm comm, const char *name,
                     const river_pcoll_opts *opts, river_pcoll **out)
{
  char path[RIVER_PATH_MAX];
  river_pcoll *pc;
  int rc;

  if (comm == MPI_COMM_NULL || name == NULL || out == NULL)
    return RIVER_EINVAL;
  rc = river_pcoll_check_name(name);
  if (rc == RIVER_SUCCESS && opts && opts->disks)
    rc = river__pcoll_check_disks(opts->disks);
  pc = rc == RIVER_SUCCESS ? pcoll_alloc(comm, name, opts, &rc) : NULL;
  if (pc == NULL)
    return rc;
  if (opts && opts->disks)
    snprintf(pc->disks, sizeof pc->disks, "%s", opts->disks);
  /* The metadata and the copies' files pc->hold names, opened together
   * (pcoll_open.c). */
  rc = agree_hold(pc, opts);
  if (rc == RIVER_SUCCESS)
    rc = river__agree(pc->comm, river__pcoll_meta_path(pc->root, name, NULL,
                                                       path, sizeof path));
  if (rc == RIVER_SUCCESS)
    rc = river__pcoll_open_reader(pc, path, opts && opts->disks);
  if (rc != RIVER_SUCCESS) {
    river__pcoll_free(pc);
    return rc;
  }
  *out = pc;
  return RIVER_SUCCESS;
}

int river_pcoll_close(river_pcoll *pc)
{
  if (pc == NULL)
    return RIVER_SUCCESS;
  if (pc->writing) {
    river__pcoll_free(pc);  /* abandoning writers removes their temp files */
    return RIVER_SUCCESS;
  }
  river__pcoll_free(pc);
  return RIVER_SUCCESS;
}

int river_pcoll_info_get(const river_pcoll *pc, river_pcoll_info *info)
{
  if (pc == NULL || info == NULL)
    return RIVER_EINVAL;
  *info = pc->info;
  return RIVER_SUCCESS;
}

int river_pcoll_schema(const river_pcoll *pc, const river_schema **schema)
{
  if (pc == NULL || schema == NULL)
    return RIVER_EINVAL;
  *schema = pc->schema;
  return RIVER_SUCCESS;
}

/* The disk of copy c of partition p (chained declustering). */
static int copy_disk(const river_pcoll *pc, int p, int c)
{
  return (pc->parts[p].first_disk + c) % pc->info.ndisks;
}

static int valid_part(const river_pcoll *pc, int p)
{
  return pc != NULL && !pc->writing && p >= 0 && p < pc->info.npartitions;
}

int river_pcoll_partition(const river_pcoll *pc, int p, river_pcoll_part *part)
{
  if (!valid_part(pc, p) || part == NULL)
    return RIVER_EINVAL;
  *part = pc->parts[p];
  return RIVER_SUCCESS;
}

int river_pcoll_copy_disk(const river_pcoll *pc, int p, int c, int *disk)
{
  if (!valid_part(pc, p) || c < 0 || c >= pc->info.replication
      || disk == NULL)
    return RIVER_EINVAL;
  *disk = copy_disk(pc, p, c);
  return RIVER_SUCCESS;
}

int river_pcoll_blocks(const river_pcoll *pc, int p,
                       size_t *records_per_block, uint64_t *nblocks)
{
  if (!valid_part(pc, p) || records_per_block == NULL
      || nblocks == NULL)
    return RIVER_EINVAL;
  *records_per_block = pc->info.block_size / pc->info.record_size;
  *nblocks = pc->parts[p].nblocks;
  return RIVER_SUCCESS;
}

/* The level of a read-path message that is a warning when failures are
 * errors: a warning, or milder if fail_level is. */
static int soft_level(int fail_level)
{
  return fail_level > RIVER_LOG_WARN ? fail_level : RIVER_LOG_WARN;
}

/* Open copy c of partition p and check it matches the metadata. On
 * failure logs why: collection.c's errors at fail_level, then a warning
 * here (a mirror may still serve the data). */
static int open_copy(river_pcoll *pc, int p, int c, int fail_level,
                     river_coll **out)
{
  const river_pcoll_part *pp = &pc->parts[p];
  river_coll_opts co = RIVER_COLL_OPTS_INIT;
  char path[RIVER_PATH_MAX];
  river_coll_info ci;
  river_coll *coll = NULL;
  int d = copy_disk(pc, p, c), rc;

  co.direct_io = pc->direct_io;
  rc = river__pcoll_file_path(pc->root, pc->disks, d, pp->path, path,
                              sizeof path);
  if (rc == RIVER_SUCCESS)
    rc = river__pcoll_open_slot(pc, p, c, path, &co, fail_level, &coll);
  if (rc == RIVER_SUCCESS && (rc = river_coll_stat(coll, &ci)) == RIVER_SUCCESS
      && (ci.nrecords != pp->nrecords || ci.table_crc != pp->checksum
          || ci.block_size != pc->info.block_size)) {
    river_log(soft_level(fail_level), "collection %s: partition %d copy on "
              "disk %d (%s) does not match the metadata (%llu records, "
              "checksum %08x; metadata says %llu, %08x)", pc->info.name, p, d,
              path, (unsigned long long)ci.nrecords, (unsigned)ci.table_crc,
              (unsigned long long)pp->nrecords, (unsigned)pp->checksum);
    rc = RIVER_ECORRUPT;
  }
  if (rc != RIVER_SUCCESS) {
    river_log(soft_level(fail_level), "collection %s: partition %d: copy on "
              "disk %d unusable (%s)", pc->info.name, p, d,
              river_strerror(rc));
    river_coll_close(coll);
    return rc;
  }
  *out = coll;
  return RIVER_SUCCESS;
}

/* Copy c of partition p's open reader in *coll, opened on first use; a
 * copy that could not be opened fails again at once, for the same
 * reason, without another try. */
static int reader_of(river_pcoll *pc, int p, int c, int fail_level,
                     river_coll **coll)
{
  size_t slot = (size_t)p * (size_t)pc->info.replication + (size_t)c;
  int rc;

  *coll = NULL;
  if (pc->rbad[slot])
    return -(int)pc->rbad[slot];  /* why it failed before */
  if (pc->rcopies[slot] == NULL) {
    rc = open_copy(pc, p, c, fail_level, &pc->rcopies[slot]);
    if (rc != RIVER_SUCCESS) {
      pc->rbad[slot] = (unsigned char)(rc < 0 && rc > -256
                                       ? -rc : -RIVER_ECORRUPT);
      return rc;
    }
  }
  *coll = pc->rcopies[slot];
  return RIVER_SUCCESS;
}

/* Read `block` of copy c of partition p (arguments checked), logging
 * failures at fail_level (see open_copy). A copy that failed to open
 * keeps failing the same way (pc->rbad). *opened tells whether the
 * copy's file could be opened; `more`, whether the caller will try
 * another copy (said in the warning). */
static int read_one(river_pcoll *pc, int p, int c, uint64_t block, void *buf,
                    size_t bufsize, size_t *nrecords, int more,
                    int fail_level, int *opened)
{
  river_coll *coll;
  int rc = reader_of(pc, p, c, fail_level, &coll);

  *opened = rc == RIVER_SUCCESS;
  if (rc != RIVER_SUCCESS)
    return rc;
  rc = river__coll_read_block_at(coll, block, buf, bufsize, nrecords,
                                 fail_level);
  if (rc != RIVER_SUCCESS && rc != RIVER_EINVAL && rc != RIVER_ENOBUFS)
    river_log(soft_level(fail_level), "collection %s: partition %d block "
              "%llu: copy on disk %d failed (%s)%s", pc->info.name, p,
              (unsigned long long)block,
              copy_disk(pc, p, c),
              river_strerror(rc), more ? "; trying the next copy" : "");
  return rc;
}

/* Argument checks shared by the block readers. */
static int check_read(const river_pcoll *pc, int p, uint64_t block,
                      const void *buf, size_t bufsize, const size_t *nrecords)
{
  if (!valid_part(pc, p) || buf == NULL || nrecords == NULL
      || block >= pc->parts[p].nblocks)
    return RIVER_EINVAL;
  /* The caller's buffer, not the data: refuse before blaming any copy. */
  if (bufsize < pc->info.block_size / pc->info.record_size
                    * pc->info.record_size)
    return RIVER_ENOBUFS;
  return RIVER_SUCCESS;
}

/* Whether copy c of partition p is known to be unusable (its file could
 * not be opened or did not match the metadata). */
static int copy_dead(const river_pcoll *pc, int p, int c)
{
  return pc->rbad[(size_t)p * (size_t)pc->info.replication + (size_t)c] != 0;
}

/* Whether fail_level is a level a failure may be logged at. */
static int level_ok(int fail_level)
{
  return fail_level >= RIVER_LOG_ERROR && fail_level <= RIVER_LOG_DEBUG;
}

/* The records block `block` (< nblocks) of partition p holds, by the
 * metadata: records_per_block, or what is left in the last block. */
static uint64_t block_nrecords(const river_pcoll *pc, int p, uint64_t block)
{
  uint64_t rpb = pc->info.block_size / pc->info.record_size;
  uint64_t first = block * rpb, all = pc->parts[p].nrecords;

  if (first >= all)
    return 0;
  return all - first < rpb ? all - first : rpb;
}

int river_pcoll_read_copy_level(river_pcoll *pc, int p, int c,
                                uint64_t block, void *buf, size_t bufsize,
                                size_t *nrecords, int fail_level, int *dead)
{
  int rc, opened;

  if (!level_ok(fail_level))
    return RIVER_EINVAL;
  if (pc != NULL && (c < 0 || c >= pc->info.replication))
    return RIVER_EINVAL;
  rc = check_read(pc, p, block, buf, bufsize, nrecords);
  if (rc != RIVER_SUCCESS)
    return rc;
  rc = read_one(pc, p, c, block, buf, bufsize, nrecords, 0, fail_level,
                &opened);
  if (dead != NULL)
    *dead = copy_dead(pc, p, c);
  return rc;
}

int river_pcoll_check_copy(river_pcoll *pc, int p, int c, int fail_level)
{
  river_coll *coll;

  if (!level_ok(fail_level) || !valid_part(pc, p) || c < 0
      || c >= pc->info.replication)
    return RIVER_EINVAL;
  return reader_of(pc, p, c, fail_level, &coll);
}

int river_pcoll_read_copy_range(river_pcoll *pc, int p, int c,
                                uint64_t block, uint64_t lo, uint64_t n,
                                void *buf, size_t bufsize, size_t *padlen,
                                uint32_t *crc, int fail_level, int *dead)
{
  river_coll *coll;
  uint64_t nb;
  int rc;

  if (!level_ok(fail_level) || !valid_part(pc, p) || c < 0
      || c >= pc->info.replication || buf == NULL || padlen == NULL
      || crc == NULL || block >= pc->parts[p].nblocks)
    return RIVER_EINVAL;
  /* The range, by the metadata, before the copy is opened (the copy's
   * file, once open, matches it: open_copy). */
  nb = block_nrecords(pc, p, block);
  if (n == 0 || lo >= nb || n > nb - lo)
    return RIVER_EINVAL;
  rc = reader_of(pc, p, c, fail_level, &coll);
  if (rc == RIVER_SUCCESS) {
    rc = river__coll_read_range(coll, block, lo, n, buf, bufsize, padlen,
                                crc, fail_level);
    if (rc != RIVER_SUCCESS && rc != RIVER_EINVAL && rc != RIVER_ENOBUFS)
      river_log(soft_level(fail_level), "collection %s: partition %d block "
                "%llu: copy on disk %d failed (%s)", pc->info.name, p,
                (unsigned long long)block, copy_disk(pc, p, c),
                river_strerror(rc));
  }
  if (dead != NULL)
    *dead = copy_dead(pc, p, c);
  return rc;
}

int river_pcoll_read_copy(river_pcoll *pc, int p, int c, uint64_t block,
                          void *buf, size_t bufsize, size_t *nrecords)
{
  return river_pcoll_read_copy_level(pc, p, c, block, buf, bufsize,
                                     nrecords, RIVER_LOG_ERROR, NULL);
}

int river_pcoll_read_block(river_pcoll *pc, int p, uint64_t block, void *buf,
                           size_t bufsize, size_t *nrecords)
{
  int c, rc = check_read(pc, p, block, buf, bufsize, nrecords),
      tried = 0, all_missing = 1, denied = 0, opened;

  if (rc != RIVER_SUCCESS)
    return rc;
  for (c = 0; c < pc->info.replication; c++) {
    /* While another copy remains, this copy's failures are warnings. */
    int more = c + 1 < pc->info.replication;
    rc = read_one(pc, p, c, block, buf, bufsize, nrecords, more,
                  more ? RIVER_LOG_WARN : RIVER_LOG_ERROR, &opened);
    tried += opened;
    if (rc == RIVER_SUCCESS)
      return RIVER_SUCCESS;
    if (rc == RIVER_EINVAL || rc == RIVER_ENOBUFS)
      return rc;  /* the caller's buffer, not the data */
    all_missing = all_missing && rc == RIVER_ENOTFOUND;
    denied += rc == RIVER_EACCES;
  }
  river__error("collection %s: partition %d block %llu: no readable copy "
               "(%d of %d copies could be opened%s)", pc->info.name, p,
               (unsigned long long)block, tried, pc->info.replication,
               denied ? "; permission denied" : "");
  /* A copy that could not be opened for lack of permission may be
   * intact: that, not corruption, is the verdict. */
  if (denied)
    return RIVER_EACCES;
  return all_missing ? RIVER_ENOTFOUND : RIVER_ECORRUPT;
}

int river_pcoll_verify_copy(river_pcoll *pc, int p, int c,
                            uint64_t *bad_block)
{
  river_coll *coll = NULL;
  uint64_t bad = UINT64_MAX;
  int rc, d;

  if (!valid_part(pc, p) || c < 0 || c >= pc->info.replication)
    return RIVER_EINVAL;
  d = copy_disk(pc, p, c);
  rc = open_copy(pc, p, c, RIVER_LOG_ERROR, &coll);
  if (rc == RIVER_SUCCESS) {
    rc = river_coll_verify(coll, &bad);
    if (rc != RIVER_SUCCESS)
      river__error("collection %s: partition %d copy on disk %d: block %llu "
                   "is damaged", pc->info.name, p, d,
                   (unsigned long long)bad);
  } else {
    river__error("collection %s: partition %d copy on disk %d: file "
                 "missing, unreadable or not matching the metadata",
                 pc->info.name, p, d);
  }
  river_coll_close(coll);
  if (rc != RIVER_SUCCESS && bad_block != NULL)
    *bad_block = bad;
  return rc;
}

int river_pcoll_verify_blocks(river_pcoll *pc, int p, int c,
                              unsigned char *bad, uint64_t nblocks,
                              uint64_t *nbad)
{
  river_coll *coll = NULL;
  unsigned char *buf;
  uint64_t b, n = 0;
  size_t bufsize, got;
  int rc, r, d;

  if (!valid_part(pc, p) || c < 0 || c >= pc->info.replication
      || nblocks != pc->parts[p].nblocks || (bad == NULL && nblocks > 0))
    return RIVER_EINVAL;
  bufsize = pc->info.block_size / pc->info.record_size * pc->info.record_size;
  if ((buf = malloc(bufsize)) == NULL)
    return RIVER_ENOMEM;
  d = copy_disk(pc, p, c);
  /* Warnings, not errors: another copy may hold what this one lost. */
  rc = open_copy(pc, p, c, RIVER_LOG_WARN, &coll);
  if (rc != RIVER_SUCCESS) {
    river__warn("collection %s: partition %d copy on disk %d: file "
                "missing, unreadable or not matching the metadata: all "
                "%llu blocks unusable", pc->info.name, p, d,
                (unsigned long long)nblocks);
    if (nblocks > 0)
      memset(bad, 1, (size_t)nblocks);
    n = nblocks;
  }
  for (b = 0; coll != NULL && b < nblocks; b++) {
    r = river__coll_read_block_at(coll, b, buf, bufsize, &got,
                                  RIVER_LOG_WARN);
    bad[b] = r != RIVER_SUCCESS;
    if (r == RIVER_SUCCESS)
      continue;
    river__warn("collection %s: partition %d copy on disk %d: block %llu "
                "is damaged (%s)", pc->info.name, p, d,
                (unsigned long long)b, river_strerror(r));
    if (n++ == 0)
      rc = r;
  }
  river_coll_close(coll);
  free(buf);
  if (nbad != NULL)
    *nbad = n;
  return rc;
}

int river_pcoll_write_sized(river_pcoll *pc, const void *records,
                            size_t nrecords, size_t record_size)
{
  if (pc == NULL || !pc->writing)
    return RIVER_EINVAL;
  if (record_size != pc->info.record_size) {
    river__error("collection %s: records of %zu bytes given, its schema's "
                 "are %zu bytes: the record type does not match the schema "
                 "(a field more or less, other types, or padding); nothing "
                 "written", pc->info.name, record_size,
                 pc->info.record_size);
    return RIVER_EINVAL;
  }
  return river_pcoll_write(pc, records, nrecords);
}
