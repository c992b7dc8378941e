/*
 * pcoll_remove.c - removing a parallel collection (river_pcoll_remove),
 * and the two pieces the commit shares with it: removing one
 * partition's files of one generation, and reading where a collection's
 * files are (its metadata, by one process, without a communicator).
 * rm takes the name's writers' lock (pcoll_lock.c) so that it never
 * removes a collection while a job writes it.
 *
 * What a metadata file says is believed only as far as it can be
 * checked: its seal is a CRC, which anyone can compute, so the parser
 * (pcoll_meta.c) accepts only names River makes, and no data file is
 * removed on the word of a metadata file the caller's user does not own
 * (river__pcoll_foreign): in a root others can write to, such a file may
 * name another root's disk directory and generation. rm refuses it,
 * naming its owner; rm --force (pcoll_gc.c) and a replacing write
 * (pcoll_commit.c) leave the files it names.
 */
#include "pcoll_internal.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Remove this rank's files of write `gen` of partition p of collection
 * `name` (ndisks disks, repl copies) under root and disk pattern disks. */
void river__pcoll_remove_files(const char *root, const char *disks,
                               const char *name, int p, const char *gen,
                               int ndisks, int repl, int any_disk)
{
  char file[RIVER_PCOLL_PATH_LEN], path[RIVER_PATH_MAX];
  int c;

  if (river__pcoll_data_name(name, p, gen, file, sizeof file)
      != RIVER_SUCCESS)
    return;
  for (c = 0; c < (any_disk ? ndisks : repl); c++) {
    if (river__pcoll_file_path(root, disks, (p + c) % ndisks, file, path,
                               sizeof path) == RIVER_SUCCESS
        && unlink(path) != 0 && errno != ENOENT)
      river__warn("cannot remove %s: %s", path, strerror(errno));
  }
}

int river__pcoll_foreign(const struct river__pcoll_where *w)
{
  return w->owner != geteuid();
}

void river__pcoll_owner_name(uid_t uid, char *buf, size_t size)
{
  struct passwd pw, *res = NULL;
  char tmp[1024];

  if (getpwuid_r(uid, &pw, tmp, sizeof tmp, &res) == 0 && res != NULL)
    snprintf(buf, size, "user %s (uid %lu)", res->pw_name,
             (unsigned long)uid);
  else
    snprintf(buf, size, "uid %lu", (unsigned long)uid);
}

int river__pcoll_where(const char *root, const char *name,
                       struct river__pcoll_where *w)
{
  char path[RIVER_PATH_MAX];
  river_pcoll *pc;
  struct stat st;
  int rc, p;

  rc = river__pcoll_meta_path(root, name, NULL, path, sizeof path);
  if (rc != RIVER_SUCCESS)
    return rc;
  if (lstat(path, &st) != 0 && errno == ENOENT)
    return RIVER_ENOTFOUND;
  pc = calloc(1, sizeof *pc);
  if (pc == NULL)
    return RIVER_ENOMEM;
  pc->comm = MPI_COMM_NULL;
  pc->lock_fd = -1;
  pc->pin = -1;
  snprintf(pc->info.name, sizeof pc->info.name, "%s", name);
  snprintf(pc->root, sizeof pc->root, "%s", root);
  /* Its callers cope with damaged metadata (ls and gc list it, rm
   * --force and a replacing write remove it) or say their own error. */
  pc->meta_level = RIVER_LOG_WARN;
  rc = river__pcoll_meta_read(pc, path, 0);
  if (rc == RIVER_SUCCESS) {
    w->npartitions = pc->info.npartitions;
    w->ndisks = pc->info.ndisks;
    w->replication = pc->info.replication;
    memcpy(w->generation, pc->info.generation, sizeof w->generation);
    snprintf(w->disks, sizeof w->disks, "%s", pc->disks);
    w->owner = pc->meta_uid;
    w->any_disk = 0;
    for (p = 0; p < pc->info.npartitions; p++)
      w->any_disk |= pc->parts[p].first_disk != p % pc->info.ndisks;
  }
  river__pcoll_free(pc);
  return rc;
}

/* rm's refusal of metadata at path that the caller does not own. */
static int refuse_foreign(const char *name, const char *path,
                          const struct river__pcoll_where *w)
{
  char who[320];

  river__pcoll_owner_name(w->owner, who, sizeof who);
  river__error("collection %s: its metadata %s belongs to %s, not to "
               "you: River removes no data file on the word of another "
               "user's metadata (anyone who can write in the root can "
               "write one naming files elsewhere); nothing removed. Its "
               "owner can remove it (`river rm %s`); `river rm --force %s` "
               "removes that metadata file and only the files named %s "
               "in this root's own disk directories", name, path, who,
               name, name, name);
  return RIVER_EACCES;
}

/* Remove what w says is collection name's (metadata at path first, so
 * that the collection disappears at once). */
static int remove_all(const char *root, const char *name, const char *path,
                      const struct river__pcoll_where *w)
{
  int p;

  if (unlink(path) != 0) {
    river__error("cannot remove %s: %s", path, strerror(errno));
    return errno == EACCES || errno == EPERM ? RIVER_EACCES : RIVER_EIO;
  }
  river__fsync_dir(path);
  for (p = 0; p < w->npartitions; p++)
    river__pcoll_remove_files(root, w->disks, name, p, w->generation,
                              w->ndisks, w->replication, w->any_disk);
  return RIVER_SUCCESS;
}

/* river_pcoll_remove, telling what it removed in *w (when it returns
 * RIVER_SUCCESS) and the root in root (RIVER_PATH_MAX bytes). */
static int remove_one(const char *name, const river_pcoll_opts *opts,
                      char *root, struct river__pcoll_where *out)
{
  char path[RIVER_PATH_MAX];
  struct river__pcoll_where w;
  int rc, fd = -1;

  if (name == NULL)
    return RIVER_EINVAL;
  rc = river_pcoll_check_name(name);
  if (rc == RIVER_SUCCESS && opts && opts->disks)
    rc = river__pcoll_check_disks(opts->disks);
  if (rc == RIVER_SUCCESS)
    rc = river__pcoll_resolve_root(opts, root, RIVER_PATH_MAX);
  if (rc == RIVER_SUCCESS)
    rc = river__pcoll_meta_path(root, name, NULL, path, sizeof path);
  if (rc != RIVER_SUCCESS)
    return RIVER_EINVAL;
  if (access(root, F_OK) == 0)
    rc = river__pcoll_lock(root, name, 0, &fd);
  if (rc != RIVER_SUCCESS)
    return rc;
  rc = river__pcoll_where(root, name, &w);
  if (rc == RIVER_ENOTFOUND) {
    river__error("collection %s not found (no %s)", name, path);
  } else if (rc != RIVER_SUCCESS) {
    struct stat st;
    int regular = lstat(path, &st) == 0 && S_ISREG(st.st_mode);
    river__error("collection %s: its metadata %s cannot be read (%s); "
                 "nothing removed%s%s%s", name, path, river_strerror(rc),
                 regular ? " (`river rm --force " : "", regular ? name : "",
                 regular ? "` removes it and every file named for it)" : "");
  } else if (river__pcoll_foreign(&w)) {
    rc = refuse_foreign(name, path, &w);
  } else {
    if (opts && opts->disks)
      snprintf(w.disks, sizeof w.disks, "%s", opts->disks);
    rc = remove_all(root, name, path, &w);
    *out = w;
  }
  river__pcoll_unlock(fd, root, name,
                      rc == RIVER_SUCCESS || rc == RIVER_ENOTFOUND);
  return rc;
}

int river_pcoll_remove(const char *name, const river_pcoll_opts *opts)
{
  char root[RIVER_PATH_MAX];
  struct river__pcoll_where w;

  return remove_one(name, opts, root, &w);
}

int river_pcoll_remove_all(MPI_Comm comm, const char *name,
                           const river_pcoll_opts *opts)
{
  char root[RIVER_PATH_MAX], *nodes = NULL;
  struct river__pcoll_where w;
  int rank, size, rc = RIVER_SUCCESS, index, count, p, init = 0;

  if (comm == MPI_COMM_NULL || name == NULL
      || MPI_Initialized(&init) != MPI_SUCCESS || !init)
    return RIVER_EINVAL;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  memset(&w, 0, sizeof w);
  if (rank == 0)
    rc = remove_one(name, opts, root, &w);
  if (river__bcast(&rc, 1, MPI_INT, 0, comm) != RIVER_SUCCESS)
    return RIVER_EMPI;
  if (rc != RIVER_SUCCESS)
    return rc;
  if (river__bcast(&w, (int)sizeof w, MPI_BYTE, 0, comm) != RIVER_SUCCESS)
    return RIVER_EMPI;
  if (!river__pcoll_node_local(w.disks))
    return RIVER_SUCCESS;   /* rank 0 saw every file */
  /* Node-local disks: the ranks of each node share the partitions out
   * and look on every disk their node has. */
  rc = river__gather_nodes(comm, &nodes);
  if (rc == RIVER_SUCCESS)
    rc = river__pcoll_resolve_root(opts, root, sizeof root);
  if (rc == RIVER_SUCCESS) {
    river__node_slot(nodes, rank, size, &index, &count);
    for (p = index; p < w.npartitions; p += count)
      river__pcoll_remove_files(root, w.disks, name, p, w.generation,
                                w.ndisks, w.replication, 1);
  }
  free(nodes);
  return river__agree(comm, rc);
}
