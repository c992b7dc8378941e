/*
 * rma.c - RMA windows for River's components (see rma.h): one way to make
 * a window, MPI_Win_allocate (MPI_Win_allocate_shared when the
 * communicator is on one node, one_node below) plus the setup every
 * River window wants
 * (errors returned, memory zeroed, MPI_Win_lock_all once), with the Open
 * MPI < 5 workaround below around the allocation. Nothing here is kept
 * between calls: a node-wide lock file is held only during an allocation.
 *
 * Open MPI before 5.0 names a window's shared-memory segment after the
 * communicator's context id, which disjoint groups (say, the parts of one
 * MPI_Comm_split) can share: two windows created at once on one node then
 * collide, failing or silently sharing one segment (open-mpi/ompi#9492,
 * seen here as ENOENT when two queues were created at once). So with
 * those versions the rank that creates the segment, the communicator's
 * lowest rank on each node, holds a node-wide file lock around
 * MPI_Win_allocate(_shared). Every window of the library must be made
 * here, or it could collide with one that was. The lock file sits in a
 * world-writable directory, so it is opened without following links and
 * used only if it is this user's own (open_lock); its wait is bounded
 * and says what it waits for (take_lock, RIVER_WIN_LOCK_TIMEOUT), and
 * its outcome is agreed over the communicator before anyone allocates
 * (issue 33: a process holding it used to hang every queue of the user
 * on the node, silently).
 */
#include "river_internal.h"
#include "rma.h"

#include <stdlib.h>
#include <string.h>

#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define LOCK_WARN_S 5.0          /* say what it waits for after this */
#define LOCK_TIMEOUT_DEFAULT 60  /* RIVER_WIN_LOCK_TIMEOUT's default */

/* RIVER_WIN_LOCK_TIMEOUT: seconds >= 0 (0: wait for ever), default 60. */
static double lock_timeout(void)
{
  const char *v = getenv("RIVER_WIN_LOCK_TIMEOUT");
  char *end;
  double s;

  if (v == NULL || *v == '\0')
    return LOCK_TIMEOUT_DEFAULT;
  s = strtod(v, &end);
  if (*end != '\0' || !(s >= 0.0)) {
    river__warn("RIVER_WIN_LOCK_TIMEOUT=%s: expected seconds >= 0; "
                "using %d", v, LOCK_TIMEOUT_DEFAULT);
    return LOCK_TIMEOUT_DEFAULT;
  }
  return s;
}

/* Open the lock file path without following a link and without
 * blocking (a FIFO planted there), creating it (0600) if absent; then
 * make sure it is ours: a regular file owned by this user that nobody
 * else may write. The descriptor, -1 with errno set where it cannot be
 * opened, or -2 (logged, naming it) where what is there is not safe. */
static int open_lock(const char *path)
{
  const int flags = O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
  struct stat st;
  int fd = -1, tries;

  for (tries = 0; fd < 0 && tries < 3; tries++) {
    fd = open(path, flags | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno == EEXIST)
      fd = open(path, flags);   /* ENOENT: removed meanwhile, try again */
    if (fd < 0 && errno != ENOENT && errno != EEXIST)
      break;
  }
  if (fd < 0 && errno == ELOOP) {
    river__error("window: the lock file %s is a symbolic link: refusing "
                 "it (remove it; River creates its own)", path);
    return -2;
  }
  if (fd < 0)
    return -1;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)
      || st.st_uid != getuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
    river__error("window: the lock file %s is not a regular file of this "
                 "user's (uid %u) that only it may write: refusing it "
                 "(remove it; River creates its own)", path,
                 (unsigned)getuid());
    close(fd);
    return -2;
  }
  return fd;
}

/* Who holds a flock on the file behind fd: the pid from /proc/locks (a
 * FLOCK line with its device and inode), or 0 if not found. */
static long lock_holder(int fd)
{
  struct stat st;
  char line[256], kind[16];
  unsigned maj, min;
  unsigned long ino;
  long pid, found = 0;
  FILE *f;

  if (fstat(fd, &st) != 0 || (f = fopen("/proc/locks", "re")) == NULL)
    return 0;
  while (found == 0 && fgets(line, sizeof line, f) != NULL)
    if (sscanf(line, "%*[^:]: %15s %*s %*s %ld %x:%x:%lu", kind, &pid,
               &maj, &min, &ino) == 5
        && strcmp(kind, "FLOCK") == 0 && ino == (unsigned long)st.st_ino
        && maj == major(st.st_dev) && min == minor(st.st_dev))
      found = pid;
  fclose(f);
  return found;
}

/* The holder, for messages: " (held by pid P: CMD)" or "". */
static void holder_text(int fd, char *buf, size_t len)
{
  char path[64], cmd[64] = "";
  long pid = lock_holder(fd);
  FILE *f;

  buf[0] = '\0';
  if (pid <= 0)
    return;
  snprintf(path, sizeof path, "/proc/%ld/comm", pid);
  if ((f = fopen(path, "re")) != NULL) {
    if (fgets(cmd, sizeof cmd, f) != NULL)
      cmd[strcspn(cmd, "\n")] = '\0';
    fclose(f);
  }
  snprintf(buf, len, " (held by pid %ld%s%s)", pid, cmd[0] ? ": " : "",
           cmd);
}

/* One try at the lock on fd (-1: no lock file: nothing to take): 1 if
 * this rank holds it now (or has none to take), else 0. A lock call that
 * fails for another reason than contention is warned and counts as
 * held: the window is then made unserialised. */
static int try_lock(int fd, const char *path)
{
  if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) == 0)
    return 1;
  if (errno == EWOULDBLOCK || errno == EINTR)
    return 0;
  river__warn("window: cannot lock %s: %s: creating the window "
              "unserialised", path, strerror(errno));
  return 1;
}

/* Collective over comm: take the node window locks of all of comm's
 * node leaders (fd >= 0 on them, -1 elsewhere) at once, or none. Each
 * round every leader tries its lock without waiting and the ranks agree
 * (MIN) whether all got theirs; if not, those that did let go, and all
 * back off and try again. Holding one lock while waiting for another
 * could deadlock: two leaders of one communicator whose nodes share the
 * lock directory (emulated nodes on one machine share /dev/shm) each
 * waited for the lock the other held inside the collective window
 * creation, and River's sort across two such nodes hung (until issue
 * 33's bound gave up after 60 s), which had looked like osc/pt2pt
 * hanging (issue 34, doc/design.md). After LOCK_WARN_S seconds a
 * leader says once what it waits for; after RIVER_WIN_LOCK_TIMEOUT
 * seconds (or when the watchdog fires) it gives up, and with it every
 * rank. RIVER_SUCCESS, or the same failure on every rank (logged where
 * it happened). */
static int take_locks(MPI_Comm comm, int fd, const char *path)
{
  double t0 = river_wtime(), limit = lock_timeout(), waited;
  long ns = RIVER_BACKOFF_START;
  char holder[128];
  int warned = 0, fired = 0, mine[2], all[2], r;

  for (;;) {
    mine[0] = try_lock(fd, path);
    mine[1] = RIVER_SUCCESS;
    waited = river_wtime() - t0;
    if (!mine[0] && !warned && waited >= LOCK_WARN_S) {
      holder_text(fd, holder, sizeof holder);
      river__warn("window: waiting for the node's window lock %s%s, "
                  "which another process of this user holds while it "
                  "creates an MPI window (gives up after "
                  "RIVER_WIN_LOCK_TIMEOUT=%g s)", path, holder, limit);
      warned = 1;
    }
    if (!mine[0] && limit > 0.0 && waited >= limit) {
      holder_text(fd, holder, sizeof holder);
      river__error("window: gave up after %g s waiting for the node's "
                   "window lock %s%s: end the process that holds it, or "
                   "remove the file if that process is not River's "
                   "(RIVER_WIN_LOCK_TIMEOUT sets the wait)", waited, path,
                   holder);
      mine[1] = RIVER_EBUSY;
    }
    if (fired) {
      river__error("window: waiting for the node window locks of the "
                   "communicator's nodes");
      mine[1] = RIVER_ETIMEDOUT;
    }
    r = river__allreduce(mine, all, 2, MPI_INT, MPI_MIN, comm);
    if (r != RIVER_SUCCESS)
      all[1] = r;
    if (all[1] == RIVER_SUCCESS && all[0] == 1)
      return RIVER_SUCCESS;
    if (mine[0] && fd >= 0)
      flock(fd, LOCK_UN);
    if (all[1] != RIVER_SUCCESS)
      return all[1];
    fired = river__backoff(&ns) != RIVER_SUCCESS;
  }
}

/* This machine's identity for lock files: its boot id (the kernel's,
 * random per boot), or 0 where it cannot be read. */
static uint64_t boot_id(void)
{
  char line[64] = "";
  uint64_t h = 0;
  size_t i;
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

  if (f == NULL)
    return 0;
  if (fgets(line, sizeof line, f) == NULL)
    line[0] = '\0';
  fclose(f);
  for (i = 0; line[i] != '\0' && line[i] != '\n'; i++)
    h = river__mix64(h ^ (unsigned char)line[i]);
  return h;
}

/* Collective over comm: of comm's node leaders that would take the same
 * lock file (the same file on the same machine: emulated nodes, which
 * MPI tells apart, run on one machine and share /dev/shm), only the
 * lowest-ranked keeps its descriptor (*fd); the others close theirs.
 * One process holding the lock serialises the machine, and two leaders
 * of one communicator cannot both hold it. RIVER_SUCCESS or RIVER_EMPI
 * (the allgather failed; agreed), RIVER_ENOMEM. */
static int one_taker(MPI_Comm comm, int *fd)
{
  struct stat st;
  uint64_t key = 0, *all;
  int size = 0, rank = 0, i, rc;

  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  if (*fd >= 0 && fstat(*fd, &st) == 0)
    key = river__mix64(boot_id() ^ river__mix64((uint64_t)st.st_dev)
                       ^ ((uint64_t)st.st_ino << 1)) | 1;
  all = malloc((size_t)size * sizeof *all);
  rc = river__agree(comm, all != NULL ? RIVER_SUCCESS : RIVER_ENOMEM);
  if (rc == RIVER_SUCCESS)
    rc = river__allgather(&key, 1, MPI_UINT64_T, all, comm);
  for (i = 0; rc == RIVER_SUCCESS && key != 0 && i < rank; i++)
    if (all[i] == key) {
      close(*fd);
      *fd = -1;
      break;
    }
  free(all);
  return rc;
}

/* Collective over comm: on the lowest rank of comm on each node, open
 * the node's window lock file; then take every node's lock at once
 * (take_locks). *fd is the descriptor on those ranks, -1 elsewhere or
 * where no lock file can be opened (warned). RIVER_SUCCESS, or the same
 * failure on every rank (an unsafe lock file, a wait that gave up). The
 * lock file lives in $RIVER_WIN_LOCK_DIR if set, else /dev/shm, else
 * /tmp. */
static int node_lock(MPI_Comm comm, int *fd)
{
  const char *dirs[3] = {getenv("RIVER_WIN_LOCK_DIR"), "/dev/shm", "/tmp"};
  MPI_Comm node;
  char path[4096] = "";
  int lrank = -1, i, rc = RIVER_SUCCESS;

  *fd = -1;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                          &node) == MPI_SUCCESS) {
    MPI_Comm_rank(node, &lrank);
    MPI_Comm_free(&node);
  }
  for (i = dirs[0] != NULL && dirs[0][0] ? 0 : 1;
       lrank == 0 && i < 3 && *fd == -1; i++) {
    snprintf(path, sizeof path, "%s/river-win-%u.lock", dirs[i],
             (unsigned)getuid());
    *fd = open_lock(path);
    if (i == 0)
      break;   /* the directory asked for, or nothing */
  }
  if (*fd == -2) {
    *fd = -1;
    rc = RIVER_EACCES;
  } else if (lrank == 0 && *fd < 0) {
    river__warn("window: no lock file (%s: %s): creating the window "
                "unserialised; Open MPI < 5 may collide (ompi#9492)",
                path, strerror(errno));
  }
  if ((rc = river__agree(comm, rc)) == RIVER_SUCCESS)
    rc = one_taker(comm, fd);
  if (rc == RIVER_SUCCESS)
    rc = take_locks(comm, *fd, path);
  if (rc != RIVER_SUCCESS && *fd >= 0) {
    close(*fd);
    *fd = -1;
  }
  return rc;
}

/* Release node_lock's lock (fd -1: none was taken). */
static void node_unlock(int fd)
{
  if (fd >= 0) {
    flock(fd, LOCK_UN);
    close(fd);
  }
}
#else
static int node_lock(MPI_Comm comm, int *fd)
{
  (void)comm;
  *fd = -1;
  return RIVER_SUCCESS;
}

static void node_unlock(int fd)
{
  (void)fd;
}
#endif

/* Collective over comm: 1 on every rank if all of comm's ranks share one
 * node and RIVER_WIN_SHARED is not "0" on any rank, else 0 on every
 * rank. Such a window is made with MPI_Win_allocate_shared, which Open
 * MPI serves with osc/sm (loads, stores and atomics in shared memory):
 * given a plain MPI_Win_allocate it picked osc/rdma wherever the vader
 * BTL has its single-copy (CMA) path, and every credit operation and
 * flush then went through the kernel (issue 13: a queue's 8 x 8 64 KiB
 * stream on this 2-core VM ran at 11.7 GB/s with osc/rdma against 14.3
 * with osc/sm). */
static int one_node(MPI_Comm comm, int *lock_rc)
{
  const char *env = getenv("RIVER_WIN_SHARED");
  MPI_Comm node;
  int size = 0, nsize = -1, mine[2], ok[2] = {0, 0}, r;

  MPI_Comm_size(comm, &size);
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                          &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
  }
  mine[0] = nsize == size && !(env != NULL && strcmp(env, "0") == 0);
  mine[1] = *lock_rc;  /* the lock's outcome rides along: the minimum */
  /* Where the reduction fails (an MPI error, which the allocation after
   * it will meet too and river__win_allocate's agreement reports), this
   * rank takes the plain MPI_Win_allocate. */
  r = river__allreduce(mine, ok, 2, MPI_INT, MPI_MIN, comm);
  if (r != RIVER_SUCCESS) {
    ok[0] = 0;
    ok[1] = r == RIVER_ETIMEDOUT ? r : *lock_rc;
  }
  *lock_rc = ok[1];
  return ok[0];
}

int river__win_allocate(MPI_Comm comm, size_t bytes, int disp_unit,
                        int try_only, void *base_out, MPI_Win *win)
{
  MPI_Aint size = (MPI_Aint)bytes;
  MPI_Win w = MPI_WIN_NULL;
  void *base = NULL;
  int rc = RIVER_SUCCESS, locked = 0, lock, lrc, shared, mrc;

  if (river__watchdog_fired())   /* nothing new starts (src/agree.c) */
    return RIVER_ETIMEDOUT;
  if (size < 0 || (size_t)size != bytes) {
    river__error("window: %zu bytes are too many", bytes);
    rc = RIVER_EINVAL;
    size = 0; /* still take part: allocation is collective */
  }
  /* The lock first, its outcome agreed with one_node's: where a node's
   * lock was refused or its wait gave up, no rank allocates. */
  lrc = node_lock(comm, &lock);
  shared = one_node(comm, &lrc);
  if (lrc != RIVER_SUCCESS) {
    node_unlock(lock);
    return lrc;   /* logged on the rank where it failed */
  }
  if (shared) {
    /* Each rank's part padded to whole pages (noncontiguous): no false
     * sharing between the ranks' credit words. Without the hint (its
     * object could not be made) the parts are contiguous: still correct. */
    MPI_Info info = MPI_INFO_NULL;
    if (MPI_Info_create(&info) != MPI_SUCCESS)
      info = MPI_INFO_NULL;
    else if (MPI_Info_set(info, "alloc_shared_noncontig", "true")
             != MPI_SUCCESS)
      MPI_Info_free(&info);   /* sets info to MPI_INFO_NULL */
    mrc = MPI_Win_allocate_shared(size, disp_unit, info, comm, &base, &w);
    if (info != MPI_INFO_NULL)
      MPI_Info_free(&info);
  } else {
    mrc = MPI_Win_allocate(size, disp_unit, MPI_INFO_NULL, comm, &base, &w);
  }
  if (mrc != MPI_SUCCESS) {
    w = MPI_WIN_NULL;
    river_log(try_only ? RIVER_LOG_DEBUG : RIVER_LOG_ERROR,
              "window: %s of %zu bytes failed%s",
              shared ? "MPI_Win_allocate_shared" : "MPI_Win_allocate",
              bytes, shared ? " (RIVER_WIN_SHARED=0 makes such windows "
                              "with MPI_Win_allocate)" : "");
    rc = RIVER_EMPI;
  }
  node_unlock(lock);
  /* Freeing is collective: if some rank has no window, those that have
   * one leave it (warned) rather than wait in MPI_Win_free forever. */
  if (river__agree(comm, w == MPI_WIN_NULL ? RIVER_EMPI : RIVER_SUCCESS)
      != RIVER_SUCCESS) {
    if (w != MPI_WIN_NULL)
      river__warn("window: left allocated: some rank could not make its "
                  "part, so freeing it would wait forever");
    return RIVER_EMPI;
  }
  MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
  if (MPI_Win_lock_all(MPI_MODE_NOCHECK, w) != MPI_SUCCESS) {
    river__error("window: MPI_Win_lock_all failed");
    rc = RIVER_EMPI;
  } else {
    locked = 1;
  }
  /* Zero the memory and make that visible to RMA. */
  if (size > 0)
    memset(base, 0, (size_t)size);
  if (locked && MPI_Win_sync(w) != MPI_SUCCESS) {
    river__error("window: MPI_Win_sync failed");
    rc = RIVER_EMPI;
  }
  if ((rc = river__agree(comm, rc)) != RIVER_SUCCESS) {
    if (rc == RIVER_ETIMEDOUT)
      return rc;   /* left to MPI: freeing it would wait for ever */
    if (locked)
      MPI_Win_unlock_all(w);
    MPI_Win_free(&w);
    return rc;
  }
  memcpy(base_out, &base, sizeof base);
  *win = w;
  return RIVER_SUCCESS;
}

void river__win_free(MPI_Win *win)
{
  if (*win == MPI_WIN_NULL || river__watchdog_fired())
    return;   /* after the watchdog: collective, it would wait for ever */
  MPI_Win_unlock_all(*win);
  MPI_Win_free(win);
  *win = MPI_WIN_NULL;
}
