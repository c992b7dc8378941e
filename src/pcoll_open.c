/*
 * pcoll_open.c - what a reader of a parallel collection holds from its
 * open to its close: the metadata and an open descriptor for each
 * (partition, copy) file it will read (pc->rfiles), taken at open time
 * so that a commit of a new generation of the same name, or a remove,
 * which unlink the files this reader's metadata names, cannot pull them
 * away (an open descriptor keeps its file's data until it is closed).
 *
 * Rank 0 pins the metadata file (holds it open, so its inode number
 * cannot be reused), reads it and broadcasts its bytes: the shared file
 * system sees one read per open, not one per rank. Every rank parses
 * them and opens the copies' files it holds (pc->hold): by default only
 * those on the disks it serves (river_pcoll_disk_ranks over the open's
 * communicator: what GD's servers, copy-out and fsck read), so a
 * collection of F files read by n ranks costs about F opens in all, not
 * F x n; or every copy, or none. Then rank 0 checks that the metadata
 * path still names the pinned file: if a commit renamed a new one into
 * place or a remove unlinked it meanwhile, the files opened may be
 * missing, and every rank starts again. Rank 0 keeps the pin until the
 * close, so that a later hold (river_pcoll_hold_partitions, for a
 * reader that chooses its partitions from the metadata) can make the
 * same check.
 *
 * The descriptors are limited by a budget (eager_budget): copies beyond
 * it, and those not held, are opened when first read, without the
 * guarantee (their file names carry the generation, so such a read
 * finds this write's file or none). A copy whose file could not be
 * opened keeps what went wrong (river__file) and reports it, at the
 * severity the read asks for, when it is first read, so a reader with a
 * mirror to try only warns.
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

/* The disk of copy c of partition p, and its slot in the reader's
 * arrays. */
static int slot_disk(const river_pcoll *pc, int p, int c)
{
  return (pc->parts[p].first_disk + c) % pc->info.ndisks;
}

static size_t slot_of(const river_pcoll *pc, int p, int c)
{
  return (size_t)p * (size_t)pc->info.replication + (size_t)c;
}

/* Open copy c of partition p's file into its slot, unless it is open
 * already (held, or as the handle of a read) or known unusable: 1 if
 * it opened it, 0 if not (a failure is recorded in the slot, reported
 * when the copy is read), -1 if the process ran out of descriptors
 * (nothing recorded: the copy is opened when read). */
static int hold_slot(river_pcoll *pc, int p, int c)
{
  size_t slot = slot_of(pc, p, c);
  river__file *f = &pc->rfiles[slot];
  char path[RIVER_PATH_MAX];

  if (f->fd >= 0 || f->call != NULL || f->mode != 0
      || pc->rcopies[slot] != NULL || pc->rbad[slot] != 0)
    return 0;
  if (river__pcoll_file_path(pc->root, pc->disks, slot_disk(pc, p, c),
                             pc->parts[p].path, path, sizeof path)
      != RIVER_SUCCESS)
    return 0;  /* open_copy will say why */
  river__open_quiet(path, f);
  if (f->fd < 0 && (f->err == EMFILE || f->err == ENFILE)) {
    f->call = NULL;
    f->err = 0;
    return -1;
  }
  return f->fd >= 0;
}

/* Hold the copies of the disks ranks[d] gives this rank (ranks NULL:
 * every disk) and of the partitions parts marks (NULL: every
 * partition), copy 0 of every partition first (mirrors are the
 * fallbacks), while the descriptor budget lasts. The others stay to be
 * opened when read. */
static void hold_marked(river_pcoll *pc, const int *ranks,
                        const unsigned char *parts)
{
  size_t budget = eager_budget(), n = 0;
  int p, c, r;

  for (c = 0; c < pc->info.replication; c++)
    for (p = 0; p < pc->info.npartitions && n < budget; p++) {
      if ((ranks != NULL && ranks[slot_disk(pc, p, c)] != pc->rank)
          || (parts != NULL && !parts[p]))
        continue;
      if ((r = hold_slot(pc, p, c)) < 0)
        return;
      n += (size_t)r;
    }
}

/* Which disks this rank's node holds a file of, looked at now (held:
 * ndisks entries, 1 or 0): a copy's file open (held, or by a read), or
 * one that exists; a disk whose directory is missing holds none, and a
 * copy that failed to open says nothing. One pass over the copies. */
static void look_held(const river_pcoll *pc, unsigned char *held)
{
  enum { UNSEEN, DIR_THERE, NO_DIR, HELD };
  char path[RIVER_PATH_MAX];
  const river__file *f;
  size_t slot;
  int p, c, d;

  memset(held, UNSEEN, (size_t)pc->info.ndisks);
  for (p = 0; p < pc->info.npartitions; p++)
    for (c = 0; c < pc->info.replication; c++) {
      d = slot_disk(pc, p, c);
      slot = slot_of(pc, p, c);
      f = &pc->rfiles[slot];
      if (held[d] == HELD || held[d] == NO_DIR)
        continue;
      if (f->fd >= 0 || pc->rcopies[slot] != NULL) {
        held[d] = HELD;
        continue;
      }
      if (f->call != NULL || f->mode != 0)
        continue;
      if (held[d] == UNSEEN) {
        held[d] = river__pcoll_disk_dir(pc->root, pc->disks, d, path,
                                        sizeof path) == RIVER_SUCCESS
                  && access(path, F_OK) == 0 ? DIR_THERE : NO_DIR;
        if (held[d] == NO_DIR)
          continue;
      }
      if (river__pcoll_file_path(pc->root, pc->disks, d, pc->parts[p].path,
                                 path, sizeof path) == RIVER_SUCCESS
          && access(path, F_OK) == 0)
        held[d] = HELD;
    }
  for (d = 0; d < pc->info.ndisks; d++)
    held[d] = held[d] == HELD;
}

/* Which rank of comm serves each of nd disks (ranks: nd entries): disk
 * d goes to rank d mod size; with node-local disks (held: whether this
 * rank holds each disk; NULL for shared disks, which every rank sees),
 * to rank d mod size if it holds d, else to the next rank that does,
 * else to d mod size. Shared disks need no communication; node-local
 * ones one MIN reduction, over comm, of each rank's distance past
 * d mod size (size where it does not hold d). */
static int deal_disks(MPI_Comm comm, int nd, const unsigned char *held,
                      int *ranks)
{
  int size = 1, rank = 0, d, rc;

  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  for (d = 0; d < nd; d++)
    ranks[d] = held == NULL ? d % size
               : held[d] ? (rank - d % size + size) % size : size;
  if (held == NULL)
    return RIVER_SUCCESS;
  rc = river__allreduce(MPI_IN_PLACE, ranks, nd, MPI_INT, MPI_MIN, comm);
  for (d = 0; d < nd; d++)
    ranks[d] = (d % size + (ranks[d] < size ? ranks[d] : 0)) % size;
  return rc == RIVER_SUCCESS ? RIVER_SUCCESS : RIVER_EMPI;
}

/* Hold, at the open, what pc->hold names; ranks: room for ndisks
 * entries (RIVER_PCOLL_HOLD_SERVED). Collective over pc->comm for
 * RIVER_PCOLL_HOLD_SERVED with node-local disks (every rank calls it
 * then: the caller has agreed that every rank parsed the metadata, and
 * river_pcoll_open that every rank passed the same hold and the same
 * kind of disk pattern); pc->held records what this rank's node held. */
static int hold_at_open(river_pcoll *pc, int *ranks)
{
  int local, rc;

  if (pc->hold == RIVER_PCOLL_HOLD_NONE)
    return RIVER_SUCCESS;
  if (pc->hold == RIVER_PCOLL_HOLD_ALL) {
    hold_marked(pc, NULL, NULL);
    return RIVER_SUCCESS;
  }
  local = river__pcoll_node_local(pc->disks);
  if (local)
    look_held(pc, pc->held);
  rc = deal_disks(pc->comm, pc->info.ndisks, local ? pc->held : NULL,
                  ranks);
  if (rc == RIVER_SUCCESS)
    hold_marked(pc, ranks, NULL);
  return rc;
}

/* The reader's arrays, and for RIVER_PCOLL_HOLD_SERVED of node-local
 * disks pc->held. */
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
  if (pc->hold == RIVER_PCOLL_HOLD_SERVED
      && river__pcoll_node_local(pc->disks)
      && (pc->held = malloc((size_t)pc->info.ndisks)) == NULL)
    return RIVER_ENOMEM;
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
  free(pc->held);
  pc->rcopies = NULL;
  pc->rbad = NULL;
  pc->rfiles = NULL;
  pc->held = NULL;
  pc->nslots = 0;
  if (pc->pin >= 0)
    close(pc->pin);
  pc->pin = -1;
}

/* Hold the metadata file at path open in pc->pin (-1 if it is not a
 * regular file this process can open: the metadata read says why) and
 * note which file it is. RIVER_ENOTFOUND, logged, if there is none. */
static int pin_meta(river_pcoll *pc, const char *path)
{
  struct stat st;
  river__file f;

  river__open_quiet(path, &f);
  if (f.fd < 0 && f.err == ENOENT) {
    river__error("collection %s not found (no %s)", pc->info.name, path);
    return RIVER_ENOTFOUND;
  }
  if (f.fd >= 0 && fstat(f.fd, &st) != 0) {
    close(f.fd);
    f.fd = -1;
  }
  if (f.fd >= 0) {
    pc->pin_dev = (unsigned long long)st.st_dev;
    pc->pin_ino = (unsigned long long)st.st_ino;
  }
  pc->pin = f.fd;
  return RIVER_SUCCESS;
}

/* Rank 0: whether the metadata path still names the file pinned before
 * it was read. RIVER_EAGAIN (nothing logged) if not: a commit or remove
 * ran meanwhile (or the path was not a regular file this process could
 * open: the read said why, unless it found nothing wrong). */
static int still_pinned(const river_pcoll *pc, const char *path)
{
  struct stat now;

  if (pc->pin < 0 || stat(path, &now) != 0
      || (unsigned long long)now.st_dev != pc->pin_dev
      || (unsigned long long)now.st_ino != pc->pin_ino)
    return RIVER_EAGAIN;
  return RIVER_SUCCESS;
}

/* Rank 0's part of a try: pin the metadata file (pc->pin) and read it
 * unparsed (*img, *len). Errors are logged; a read that failed because a
 * commit or remove replaced the file after it was pinned is
 * RIVER_EAGAIN, tried again (out of memory never is). */
static int read_pinned(river_pcoll *pc, const char *path,
                       unsigned char **img, size_t *len)
{
  int rc = pin_meta(pc, path);

  if (rc != RIVER_SUCCESS)
    return rc;
  rc = river__pcoll_meta_image(pc, path, img, len);
  if (rc != RIVER_SUCCESS && rc != RIVER_ENOMEM && pc->pin >= 0
      && still_pinned(pc, path) != RIVER_SUCCESS)
    rc = RIVER_EAGAIN;
  return rc;
}

/* Collective over pc->comm, once this rank has opened its files (rc:
 * its outcome): rank 0 checks, after every rank has, that the metadata
 * path still names the pinned file, so the files every rank opened are
 * those of the generation every rank parsed. The agreed code, or
 * RIVER_EAGAIN (nothing logged) if a commit or remove replaced it. */
static int check_pin(river_pcoll *pc, const char *path, int rc)
{
  uint64_t v;

  rc = river__agree(pc->comm, rc);
  v = (uint64_t)(int64_t)(pc->rank == 0 && rc == RIVER_SUCCESS
                          ? still_pinned(pc, path) : rc);
  if (river__bcast(&v, 1, MPI_UINT64_T, 0, pc->comm) != RIVER_SUCCESS)
    return RIVER_EMPI;
  return rc == RIVER_SUCCESS ? (int)(int64_t)v : rc;
}

/* One try of the open, collective: rank 0 pins and reads the metadata
 * and broadcasts it (one read of the shared file system, not one per
 * rank); every rank parses it and opens the copies' files it holds;
 * then rank 0 checks the pin (check_pin). RIVER_EAGAIN (nothing logged)
 * if a commit or remove ran meanwhile. Every rank returns the same
 * code. */
static int open_once(river_pcoll *pc, const char *path, int keep_disks)
{
  unsigned char *img = NULL;
  uint64_t head[3] = {0, 0, 0};   /* rank 0's code, the length, the owner */
  size_t len = 0;
  int *ranks = NULL, rc = RIVER_SUCCESS;

  if (pc->rank == 0) {
    rc = read_pinned(pc, path, &img, &len);
    head[0] = (uint64_t)(int64_t)rc;
    head[1] = len;
    head[2] = (uint64_t)pc->meta_uid;
  }
  if (river__bcast(head, 3, MPI_UINT64_T, 0, pc->comm) != RIVER_SUCCESS)
    rc = RIVER_EMPI;
  else if ((rc = (int)(int64_t)head[0]) == RIVER_SUCCESS && pc->rank != 0) {
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
  if (rc == RIVER_SUCCESS) {
    /* The same image everywhere: what is wrong with it is said once */
    if (pc->rank != 0)
      river__log_hush(1);
    rc = river__pcoll_meta_parse(pc, path, img, len, keep_disks);
    if (pc->rank != 0)
      river__log_hush(0);
  }
  free(img);
  if (rc == RIVER_SUCCESS)
    rc = alloc_reader(pc);
  if (rc == RIVER_SUCCESS && pc->hold == RIVER_PCOLL_HOLD_SERVED
      && (ranks = malloc((size_t)pc->info.ndisks * sizeof *ranks)) == NULL)
    rc = RIVER_ENOMEM;
  if (head[0] == (uint64_t)(int64_t)RIVER_SUCCESS) {
    /* Which disks a rank serves may take every rank (hold_at_open). */
    if (pc->hold == RIVER_PCOLL_HOLD_SERVED)
      rc = river__agree(pc->comm, rc);
    if (rc == RIVER_SUCCESS)
      rc = hold_at_open(pc, ranks);
    rc = check_pin(pc, path, rc);
  }
  free(ranks);
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
  if (rc == RIVER_SUCCESS && pc->hold != RIVER_PCOLL_HOLD_NONE)
    river__test_fault("reader-held");  /* tests: hold a reader here */
  return rc;
}

/* river_pcoll_hold_partitions' checks of this rank's arguments (logged),
 * and its marks of the partitions listed (*want, npartitions bytes). */
static int check_hold_args(const river_pcoll *pc, const int *parts,
                           int nparts, unsigned char **want)
{
  static const char *const fn = "river_pcoll_hold_partitions";
  int i;

  *want = NULL;
  if (pc->writing || pc->rfiles == NULL) {
    river__error("%s: collection %s is not open for reading", fn,
                 pc->info.name);
    return RIVER_EINVAL;
  }
  if (nparts < 0 || (parts == NULL && nparts > 0)) {
    river__error("%s: collection %s: %d partitions %s", fn, pc->info.name,
                 nparts, nparts < 0 ? "(a count below 0)"
                                    : "listed at a NULL pointer");
    return RIVER_EINVAL;
  }
  for (i = 0; i < nparts; i++)
    if (parts[i] < 0 || parts[i] >= pc->info.npartitions) {
      river__error("%s: collection %s has no partition %d (it has %d, "
                   "numbered from 0)", fn, pc->info.name, parts[i],
                   pc->info.npartitions);
      return RIVER_EINVAL;
    }
  if ((*want = calloc((size_t)pc->info.npartitions + 1, 1)) == NULL)
    return RIVER_ENOMEM;
  for (i = 0; i < nparts; i++)
    (*want)[parts[i]] = 1;
  return RIVER_SUCCESS;
}

int river_pcoll_hold_partitions(river_pcoll *pc, const int *parts,
                                int nparts)
{
  char path[RIVER_PATH_MAX] = "";
  unsigned char *want = NULL;
  int rc;

  if (pc == NULL)
    return RIVER_EINVAL;
  rc = check_hold_args(pc, parts, nparts, &want);
  if (rc == RIVER_SUCCESS && pc->rank == 0)
    rc = river__pcoll_meta_path(pc->root, pc->info.name, NULL, path,
                                sizeof path);
  rc = river__agree(pc->comm, rc);
  if (rc == RIVER_SUCCESS) {
    hold_marked(pc, NULL, want);
    rc = check_pin(pc, path, RIVER_SUCCESS);
  }
  free(want);
  if (rc == RIVER_SUCCESS)
    river__test_fault("reader-held");
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

int river_pcoll_disk_ranks(MPI_Comm comm, const river_pcoll *pc, int *ranks)
{
  static const char *const names[1] = {"number of disks"};
  int size = 0, nd, init = 0, rc = RIVER_SUCCESS;
  unsigned char *held = NULL;
  uint64_t v[1] = {0};

  /* NULL arguments are refused at once, as river_pcoll_open does. */
  if (comm == MPI_COMM_NULL || pc == NULL || ranks == NULL
      || MPI_Initialized(&init) != MPI_SUCCESS || !init
      || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
    return RIVER_EINVAL;
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
  /* Shared disks: every rank sees every disk (the same pattern and so
   * the same branch on every rank). */
  if (!river__pcoll_node_local(pc->disks))
    return deal_disks(comm, nd, NULL, ranks);
  /* What this rank's node held at a RIVER_PCOLL_HOLD_SERVED open (so
   * the disks dealt are those it held), else what it holds now. */
  held = pc->held != NULL ? pc->held : malloc((size_t)nd + 1);
  rc = river__agree(comm, held == NULL ? RIVER_ENOMEM : RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS && held != pc->held)
    look_held(pc, held);
  if (rc == RIVER_SUCCESS)
    rc = deal_disks(comm, nd, held, ranks);
  if (held != pc->held)
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
