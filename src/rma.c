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
 * here, or it could collide with one that was.
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
#include <unistd.h>

/* Collective over comm: on the lowest rank of comm on each node, wait
 * (backing off) for the node's window lock and return its descriptor;
 * elsewhere, or if the lock file cannot be used (warned), -1. */
static int node_lock(MPI_Comm comm)
{
  static const char *const dirs[] = {"/dev/shm", "/tmp"};
  long ns = RIVER_BACKOFF_START;
  MPI_Comm node;
  char path[64];
  int lrank = -1, fd = -1, i;

  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                          &node) != MPI_SUCCESS)
    return -1;
  MPI_Comm_rank(node, &lrank);
  MPI_Comm_free(&node);
  if (lrank != 0)
    return -1;
  for (i = 0; i < 2 && fd < 0; i++) {
    snprintf(path, sizeof path, "%s/river-win-%u.lock", dirs[i],
             (unsigned)getuid());
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  }
  if (fd < 0) {
    river__warn("window: no lock file (%s): creating the window "
                "unserialised; Open MPI < 5 may collide (ompi#9492)",
                strerror(errno));
    return -1;
  }
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      river__warn("window: cannot lock %s: %s", path, strerror(errno));
      close(fd);
      return -1;
    }
    river__backoff(&ns);
  }
  return fd;
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
static int node_lock(MPI_Comm comm)
{
  (void)comm;
  return -1;
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
static int one_node(MPI_Comm comm)
{
  const char *env = getenv("RIVER_WIN_SHARED");
  MPI_Comm node;
  int size = 0, nsize = -1, mine, ok = 0;

  MPI_Comm_size(comm, &size);
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                          &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
  }
  mine = nsize == size && !(env != NULL && strcmp(env, "0") == 0);
  /* Where the reduction fails (an MPI error, which the allocation after
   * it will meet too and river__win_allocate's agreement reports), this
   * rank takes the plain MPI_Win_allocate. */
  if (river__allreduce(&mine, &ok, 1, MPI_INT, MPI_MIN, comm)
      != RIVER_SUCCESS)
    ok = 0;
  return ok;
}

int river__win_allocate(MPI_Comm comm, size_t bytes, int disp_unit,
                        void *base_out, MPI_Win *win)
{
  MPI_Aint size = (MPI_Aint)bytes;
  MPI_Win w = MPI_WIN_NULL;
  void *base = NULL;
  int rc = RIVER_SUCCESS, locked = 0, lock, shared, mrc;

  if (size < 0 || (size_t)size != bytes) {
    river__error("window: %zu bytes are too many", bytes);
    rc = RIVER_EINVAL;
    size = 0; /* still take part: allocation is collective */
  }
  shared = one_node(comm);
  lock = node_lock(comm);
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
    river__error("window: %s of %zu bytes failed%s",
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
  if (*win == MPI_WIN_NULL)
    return;
  MPI_Win_unlock_all(*win);
  MPI_Win_free(win);
  *win = MPI_WIN_NULL;
}
