/*
 * pcoll_open.c - what a reader of a parallel collection holds from its
 * open to its close: the metadata and an open descriptor per (partition,
 * copy) file (pc->rfiles), taken at open time so that a commit of a new
 * generation of the same name, or a remove, which unlink the files this
 * reader's metadata names, cannot pull them away (an open descriptor
 * keeps its file's data until it is closed).
 *
 * Rank 0 pins the metadata file (holds it open, so its inode number
 * cannot be reused), reads it and broadcasts its bytes: the shared file
 * system sees one read per open, not one per rank. Every rank parses
 * them and opens the copies' files; then rank 0 checks that the metadata
 * path still names the pinned file: if a commit renamed a new one into
 * place or a remove unlinked it meanwhile, the files opened may be the
 * wrong ones or missing, and every rank starts again.
 *
 * The descriptors are limited by a budget (eager_budget): copies beyond
 * it are opened when first read, as before, without the guarantee. A
 * copy whose file could not be opened keeps what went wrong
 * (river__file) and reports it, at the severity the read asks for, when
 * it is first read, so a reader with a mirror to try only warns.
 */
#include "pcoll_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The most copy files one reader holds open from its open; and how many
 * times an open starts again when the metadata keeps changing. */
#define EAGER_MAX 4096
#define OPEN_TRIES 6

/* The descriptors this process has open (not counting the one used to
 * count them). */
static long fds_in_use(long limit)
{
  DIR *d = opendir("/proc/self/fd");
  struct dirent *e;
  long n = 0, fd;

  if (d != NULL) {
    while ((e = readdir(d)) != NULL)
      n += e->d_name[0] != '.';
    closedir(d);
    return n - 1;
  }
  for (fd = 0; fd < limit && fd < 65536; fd++)  /* no /proc: probe */
    n += fcntl((int)fd, F_GETFD) != -1;
  return n;
}

/* How many copy files a reader may open up front: half the soft
 * RLIMIT_NOFILE less the descriptors already open, at most EAGER_MAX;
 * the other half stays free for the program. */
static size_t eager_budget(void)
{
  struct rlimit rl;
  long soft, b;

  if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
    return 0;
  soft = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (rlim_t)LONG_MAX / 2
             ? LONG_MAX / 2 : (long)rl.rlim_cur;
  b = soft / 2 - fds_in_use(soft);
  return b < 0 ? 0 : b > EAGER_MAX ? EAGER_MAX : (size_t)b;
}

/* Open the copies' files, copy 0 of every partition first (mirrors are
 * the fallbacks), while the budget lasts. The others stay lazy (fd -1,
 * nothing recorded); so does a copy whose open ran out of descriptors. */
static void open_eager(river_pcoll *pc)
{
  size_t budget = eager_budget(), n = 0, slot;
  char path[RIVER_PATH_MAX];
  river__file *f;
  int p, c, d;

  for (c = 0; c < pc->info.replication; c++)
    for (p = 0; p < pc->info.npartitions && n < budget; p++) {
      slot = (size_t)p * (size_t)pc->info.replication + (size_t)c;
      f = &pc->rfiles[slot];
      d = (pc->parts[p].first_disk + c) % pc->info.ndisks;
      if (river__pcoll_file_path(pc->root, pc->disks, d, pc->parts[p].path,
                                 path, sizeof path) != RIVER_SUCCESS)
        continue;  /* open_copy will say why */
      river__open_quiet(path, f);
      if (f->fd < 0 && (f->err == EMFILE || f->err == ENFILE)) {
        f->call = NULL;
        f->err = 0;
        return;
      }
      n += f->fd >= 0;
    }
}

static int alloc_reader(river_pcoll *pc)
{
  size_t n = (size_t)pc->info.npartitions * (size_t)pc->info.replication, i;

  pc->rcopies = calloc(n, sizeof *pc->rcopies);
  pc->rbad = calloc(n, 1);
  pc->rfiles = calloc(n, sizeof *pc->rfiles);
  if (pc->rcopies == NULL || pc->rbad == NULL || pc->rfiles == NULL)
    return RIVER_ENOMEM;
  for (i = 0; i < n; i++)
    pc->rfiles[i].fd = -1;
  pc->nslots = n;
  return RIVER_SUCCESS;
}

void river__pcoll_drop_reader(river_pcoll *pc)
{
  size_t i;

  /* The handles borrow the descriptors: close them first. */
  for (i = 0; pc->rcopies != NULL && i < pc->nslots; i++)
    river_coll_close(pc->rcopies[i]);
  for (i = 0; pc->rfiles != NULL && i < pc->nslots; i++)
    if (pc->rfiles[i].fd >= 0)
      close(pc->rfiles[i].fd);
  free(pc->rcopies);
  free(pc->rbad);
  free(pc->rfiles);
  pc->rcopies = NULL;
  pc->rbad = NULL;
  pc->rfiles = NULL;
  pc->nslots = 0;
}

/* Hold the metadata file at path open in *pin (-1 if it is not a
 * regular file this process can open: the metadata read says why) and
 * fstat it into *st. RIVER_ENOTFOUND, logged, if there is none. */
static int pin_meta(const char *name, const char *path, int *pin,
                    struct stat *st)
{
  river__file f;

  river__open_quiet(path, &f);
  if (f.fd < 0 && f.err == ENOENT) {
    river__error("collection %s not found (no %s)", name, path);
    return RIVER_ENOTFOUND;
  }
  if (f.fd >= 0 && fstat(f.fd, st) != 0) {
    close(f.fd);
    f.fd = -1;
  }
  *pin = f.fd;
  return RIVER_SUCCESS;
}

/* Rank 0: whether the metadata path still names the file pinned before
 * it was read. RIVER_EAGAIN (nothing logged) if not: a commit or remove
 * ran meanwhile (or the path was not a regular file this process could
 * open: the read said why, unless it found nothing wrong). */
static int still_pinned(const char *path, int pin, const struct stat *st)
{
  struct stat now;

  if (pin < 0 || stat(path, &now) != 0 || now.st_dev != st->st_dev
      || now.st_ino != st->st_ino)
    return RIVER_EAGAIN;
  return RIVER_SUCCESS;
}

/* Rank 0's part of a try: pin the metadata file (*pin, *st) and read it
 * unparsed (*img, *len). Errors are logged; a read that failed because a
 * commit or remove replaced the file after it was pinned is
 * RIVER_EAGAIN, tried again (out of memory never is). */
static int read_pinned(river_pcoll *pc, const char *path, int *pin,
                       struct stat *st, unsigned char **img, size_t *len)
{
  int rc = pin_meta(pc->info.name, path, pin, st);

  if (rc != RIVER_SUCCESS)
    return rc;
  rc = river__pcoll_meta_image(pc, path, img, len);
  if (rc != RIVER_SUCCESS && rc != RIVER_ENOMEM && *pin >= 0
      && still_pinned(path, *pin, st) != RIVER_SUCCESS)
    rc = RIVER_EAGAIN;
  return rc;
}

/* One try of the open, collective: rank 0 pins and reads the metadata
 * and broadcasts it (one read of the shared file system, not one per
 * rank); every rank parses it and opens the copies' files; then rank 0
 * checks that the metadata path still names the pinned file, so the
 * files every rank opened are the generation every rank parsed.
 * RIVER_EAGAIN (nothing logged) if it does not: a commit or remove ran
 * meanwhile. Every rank returns the same code. */
static int open_once(river_pcoll *pc, const char *path, int keep_disks)
{
  struct stat st;
  unsigned char *img = NULL;
  uint64_t head[3] = {0, 0, 0};   /* rank 0's code, the length, the owner */
  size_t len = 0;
  int pin = -1, rank = 0, rc = RIVER_SUCCESS;

  MPI_Comm_rank(pc->comm, &rank);
  if (rank == 0) {
    rc = read_pinned(pc, path, &pin, &st, &img, &len);
    head[0] = (uint64_t)(int64_t)rc;
    head[1] = len;
    head[2] = (uint64_t)pc->meta_uid;
  }
  if (river__bcast(head, 3, MPI_UINT64_T, 0, pc->comm) != RIVER_SUCCESS)
    rc = RIVER_EMPI;
  else if ((rc = (int)(int64_t)head[0]) == RIVER_SUCCESS && rank != 0) {
    /* Rank 0 read at most RIVER_PCOLL_META_MAX (1 GiB) bytes. */
    len = (size_t)head[1];
    pc->meta_uid = (uid_t)head[2];
    img = malloc(len ? len : 1);
  }
  if (rc == RIVER_SUCCESS)   /* every rank has room for the image */
    rc = river__agree(pc->comm, img == NULL ? RIVER_ENOMEM : RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS
      && river__bcast(img, (int)len, MPI_BYTE, 0, pc->comm) != RIVER_SUCCESS)
    rc = RIVER_EMPI;
  if (rc == RIVER_SUCCESS)
    rc = river__pcoll_meta_parse(pc, path, img, len, keep_disks);
  free(img);
  if (rc == RIVER_SUCCESS && (rc = alloc_reader(pc)) == RIVER_SUCCESS)
    open_eager(pc);
  if (head[0] == (uint64_t)(int64_t)RIVER_SUCCESS) {
    /* Every rank has opened its files: now the pin's check. */
    rc = river__agree(pc->comm, rc);
    head[0] = (uint64_t)(int64_t)(rank == 0 && rc == RIVER_SUCCESS
                                  ? still_pinned(path, pin, &st) : rc);
    if (river__bcast(head, 1, MPI_UINT64_T, 0, pc->comm) != RIVER_SUCCESS)
      rc = RIVER_EMPI;
    else if (rc == RIVER_SUCCESS)
      rc = (int)(int64_t)head[0];
  }
  if (pin >= 0)
    close(pin);
  return rc;
}

/* Forget what a try read, for the next one. */
static void forget(river_pcoll *pc)
{
  river__pcoll_drop_reader(pc);
  free(pc->parts);
  pc->parts = NULL;
  river_schema_destroy(pc->schema);
  pc->schema = NULL;
}

int river__pcoll_open_reader(river_pcoll *pc, const char *path,
                             int keep_disks)
{
  struct timespec ts = {0, 1000000};  /* 1 ms, doubling */
  int tries, rc;

  for (tries = 1;; tries++) {
    rc = open_once(pc, path, keep_disks);
    if (rc != RIVER_EAGAIN || tries == OPEN_TRIES)
      break;
    forget(pc);
    nanosleep(&ts, NULL);  /* let the commit or remove finish */
    ts.tv_nsec *= 2;
  }
  if (rc == RIVER_EAGAIN)
    river__error("collection %s: its metadata %s changed during each of %d "
                 "attempts to open it (another job is writing or removing "
                 "it)", pc->info.name, path, OPEN_TRIES);
  return rc;
}

int river__pcoll_open_slot(river_pcoll *pc, int p, int c, const char *path,
                           const river_coll_opts *co, int level,
                           river_coll **out)
{
  const river__file *f;

  f = &pc->rfiles[(size_t)p * (size_t)pc->info.replication + (size_t)c];
  if (f->fd >= 0)
    return river__coll_open_fd(path, f->fd, pc->info.record_size, co, level,
                               out);
  if (f->call != NULL || f->mode != 0)
    return river__open_report(path, "a collection", level, f);
  return river__coll_open_at(path, pc->info.record_size, co, level, out);
}

/* Whether this rank holds a file of disk d: a copy's file opened with
 * the metadata, or, for one left to open when read, one that exists. */
static int holds_disk(const river_pcoll *pc, int d)
{
  char path[RIVER_PATH_MAX];
  const river__file *f;
  size_t slot;
  int p, c;

  for (p = 0; p < pc->info.npartitions; p++)
    for (c = 0; c < pc->info.replication; c++) {
      if ((pc->parts[p].first_disk + c) % pc->info.ndisks != d)
        continue;
      slot = (size_t)p * (size_t)pc->info.replication + (size_t)c;
      f = &pc->rfiles[slot];
      if (f->fd >= 0)
        return 1;
      if (f->call == NULL && f->mode == 0
          && river__pcoll_file_path(pc->root, pc->disks, d,
                                    pc->parts[p].path, path, sizeof path)
                 == RIVER_SUCCESS
          && access(path, F_OK) == 0)
        return 1;
    }
  return 0;
}

int river_pcoll_disk_ranks(MPI_Comm comm, const river_pcoll *pc, int *ranks)
{
  static const char *const names[1] = {"number of disks"};
  int size = 0, rank = 0, d, r, nd, rc = RIVER_SUCCESS, *held = NULL;
  uint64_t v[1] = {0};

  int init = 0;

  /* NULL arguments are refused at once, as river_pcoll_open does. */
  if (comm == MPI_COMM_NULL || pc == NULL || ranks == NULL
      || MPI_Initialized(&init) != MPI_SUCCESS || !init
      || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
    return RIVER_EINVAL;
  MPI_Comm_rank(comm, &rank);
  if (pc->writing || pc->rfiles == NULL) {
    river__error("river_pcoll_disk_ranks: collection %s is not open for "
                 "reading", pc->info.name);
    rc = RIVER_EINVAL;
  }
  nd = rc == RIVER_SUCCESS ? pc->info.ndisks : 0;
  v[0] = (uint64_t)nd;
  rc = river__agree_same(comm, "river_pcoll_disk_ranks", rc, 1, names, v);
  if (rc != RIVER_SUCCESS)
    return rc;
  for (d = 0; d < nd; d++)
    ranks[d] = d % size;
  /* Shared disks: every rank sees every disk (the same pattern and so
   * the same branch on every rank). */
  if (!river__pcoll_node_local(pc->disks))
    return RIVER_SUCCESS;
  held = malloc((size_t)size * (size_t)nd * sizeof *held + 1);
  rc = river__agree(comm, held == NULL ? RIVER_ENOMEM : RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS) {
    for (d = 0; d < nd; d++)
      held[(size_t)rank * (size_t)nd + (size_t)d] = holds_disk(pc, d);
    rc = river__allgather(MPI_IN_PLACE, nd, MPI_INT, held, comm);
  }
  /* Rank d mod size if it holds disk d, else the next one that does. */
  for (d = 0; rc == RIVER_SUCCESS && d < nd; d++)
    for (r = 0; r < size; r++)
      if (held[(size_t)((d + r) % size) * (size_t)nd + (size_t)d]) {
        ranks[d] = (d + r) % size;
        break;
      }
  free(held);
  return rc;
}

int river_pcoll_node_local(const river_pcoll *pc, int *local)
{
  if (pc == NULL || local == NULL)
    return RIVER_EINVAL;
  *local = river__pcoll_node_local(pc->disks);
  return RIVER_SUCCESS;
}
