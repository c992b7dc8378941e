/*
 * pcoll_ship.c - node-local disks: a disk pattern with %n (for example
 * /scratch/%n/d%d) names a directory on each node, and a node sees only
 * its own. Disk d of a write belongs to the node of rank d mod size of
 * the writing job (the rank that writes copy 0 there, and that a reader
 * of the same shape asks to serve it). A writer writes every copy of its
 * partition under its own node's expansion of the pattern, as without
 * %n; at the commit, once every file has its final name, each copy
 * whose disk belongs to another node is sent there, byte for byte (the
 * file already carries its checksums), to the disk's rank, which writes
 * it into its own node's directory (a fresh temporary name, O_EXCL,
 * fsynced, renamed) and the writer removes its own. So a rank touches
 * only directories of its node, and a mirrored partition's copies lie
 * on as many nodes as the ring of disks puts them on.
 *
 * The transfer is a sequence of rounds k = 1..size-1: in round k each
 * rank sends to rank + k and receives from rank - k (MPI_Isend/Irecv of
 * a header, then the file in chunks, waited for with river_waitall), so
 * no two ranks wait on each other. A receiving rank keeps the final
 * paths of what it received (pc->shipped), to remove them if the commit
 * fails after all.
 */
#include "pcoll_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SHIP_CHUNK (4u << 20)   /* bytes per message of a file */
#define SHIP_TAG 7301

/* What goes before a file: its partition and disk, its size, and 0, or
 * the sender's error (then no bytes follow). */
struct ship_head {
  int32_t part, disk, status, pad;
  uint64_t bytes;
};

/* A copy this rank sends: partition, disk, owner rank, local path. */
struct ship_item {
  int part, disk, to;
  char path[RIVER_PATH_MAX];
};

int river__gather_nodes(MPI_Comm comm, char **names)
{
  char mine[RIVER_PCOLL_NODE_LEN];
  int rc, size = 0;

  *names = NULL;
  MPI_Comm_size(comm, &size);
  memset(mine, 0, sizeof mine);
  rc = river__pcoll_this_node(mine, sizeof mine);
  *names = calloc((size_t)size, RIVER_PCOLL_NODE_LEN);
  if (*names == NULL && rc == RIVER_SUCCESS)
    rc = RIVER_ENOMEM;
  rc = river__agree(comm, rc);
  if (rc == RIVER_SUCCESS)
    rc = river__allgather(mine, RIVER_PCOLL_NODE_LEN, MPI_CHAR, *names,
                          comm);
  if (rc != RIVER_SUCCESS) {
    free(*names);
    *names = NULL;
  }
  return rc;
}

void river__node_slot(const char *names, int rank, int size, int *index,
                      int *count)
{
  const char *me = names + (size_t)rank * RIVER_PCOLL_NODE_LEN;
  int r;

  *index = *count = 0;
  for (r = 0; r < size; r++)
    if (strcmp(names + (size_t)r * RIVER_PCOLL_NODE_LEN, me) == 0) {
      *index += r < rank;
      (*count)++;
    }
}

int river__pcoll_gather_nodes(river_pcoll *pc)
{
  free(pc->nodes);
  return river__gather_nodes(pc->comm, &pc->nodes);
}

/* The node of rank r (after river__pcoll_gather_nodes). */
static const char *node_of(const river_pcoll *pc, int r)
{
  return pc->nodes + (size_t)r * RIVER_PCOLL_NODE_LEN;
}

/* Rank 0: warn when a mirrored partition's copies all lie on one node
 * (ranks placed in blocks: the ring of disks then stays on the node). */
static void warn_one_node(const river_pcoll *pc)
{
  int r, c, same, n = 0, first = -1;

  if (pc->info.replication < 2)
    return;
  for (r = 0; r < pc->size && r < pc->info.ndisks; r++) {
    for (c = 1, same = 1; c < pc->info.replication && same; c++)
      same = strcmp(node_of(pc, (r + c) % pc->info.ndisks % pc->size),
                    node_of(pc, r % pc->size)) == 0;
    if (same && n++ == 0)
      first = r;
  }
  if (n > 0)
    river__warn("collection %s: the %d copies of %d partition%s (the first: "
                "partition %d, on node %s) are all on one node: losing that "
                "node loses %s (place ranks round-robin over the nodes: "
                "mpirun --map-by node, srun --distribution=cyclic)",
                pc->info.name, pc->info.replication, n, n == 1 ? "" : "s",
                first, node_of(pc, first), n == 1 ? "it" : "them");
}

/* This rank's copies whose disks belong to another node: partition
 * parts[i] was written by this rank, copy c on disk rank + c. */
static int list_items(const river_pcoll *pc, const int *parts, int nparts,
                      struct ship_item **out, int *count)
{
  int R = pc->info.replication, i, c, n = 0, rc = RIVER_SUCCESS;
  struct ship_item *it = calloc((size_t)(nparts * R + 1), sizeof *it);
  char file[RIVER_PCOLL_PATH_LEN];

  if (it == NULL)
    return RIVER_ENOMEM;
  for (i = 0; i < nparts && rc == RIVER_SUCCESS; i++)
    for (c = 0; c < R && rc == RIVER_SUCCESS; c++) {
      int d = (pc->rank + c) % pc->info.ndisks, to = d % pc->size;
      if (strcmp(node_of(pc, to), node_of(pc, pc->rank)) == 0)
        continue;
      rc = river__pcoll_data_name(pc->info.name, parts[i],
                                  pc->info.generation, file, sizeof file);
      if (rc == RIVER_SUCCESS)
        rc = river__pcoll_file_path(pc->root, pc->disks, d, file,
                                    it[n].path, sizeof it[n].path);
      it[n].part = parts[i];
      it[n].disk = d;
      it[n++].to = to;
    }
  *out = it;
  *count = n;
  return rc;
}

/* Remember a received file's final path (for a failed commit). */
static int keep_shipped(river_pcoll *pc, const char *path)
{
  char **grown = realloc(pc->shipped, (size_t)(pc->nshipped + 1)
                                          * sizeof *grown);

  if (grown == NULL)
    return RIVER_ENOMEM;
  pc->shipped = grown;
  if ((pc->shipped[pc->nshipped] = strdup(path)) == NULL)
    return RIVER_ENOMEM;
  pc->nshipped++;
  return RIVER_SUCCESS;
}

/* The receiving side of one file. */
struct inbound {
  int fd;
  uint64_t left;
  char tmp[RIVER_PATH_MAX], path[RIVER_PATH_MAX];
};

/* Start receiving the file h announces: create its temporary name in
 * this node's directory of disk h->disk. */
static int inbound_open(river_pcoll *pc, const struct ship_head *h,
                        struct inbound *in)
{
  char dir[RIVER_PATH_MAX], name[RIVER_PCOLL_PATH_LEN + 32];
  int rc;

  in->fd = -1;
  in->left = h->bytes;
  if (h->status != RIVER_SUCCESS || h->disk < 0
      || h->disk >= pc->info.ndisks || h->disk % pc->size != pc->rank)
    return h->status != RIVER_SUCCESS ? h->status : RIVER_EINVAL;
  rc = river__pcoll_disk_dir(pc->root, pc->disks, h->disk, dir, sizeof dir);
  if (rc == RIVER_SUCCESS)
    rc = river__pcoll_disk_ready(dir);
  if (rc == RIVER_SUCCESS)
    rc = river__pcoll_data_tmp_name(pc->info.name, h->part,
                                    pc->info.generation, name, sizeof name);
  if (rc == RIVER_SUCCESS)
    rc = river__pcoll_file_path(pc->root, pc->disks, h->disk, name, in->tmp,
                                sizeof in->tmp);
  if (rc == RIVER_SUCCESS)
    rc = river__pcoll_data_name(pc->info.name, h->part, pc->info.generation,
                                name, sizeof name);
  if (rc == RIVER_SUCCESS)
    rc = river__pcoll_file_path(pc->root, pc->disks, h->disk, name, in->path,
                                sizeof in->path);
  if (rc != RIVER_SUCCESS)
    return rc;
  in->fd = open(in->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                0666);
  if (in->fd < 0) {
    river__error("collection %s: cannot create %s for partition %d's copy "
                 "on disk %d: %s", pc->info.name, in->tmp, h->part, h->disk,
                 strerror(errno));
    return RIVER_EIO;
  }
  return RIVER_SUCCESS;
}

/* Write n received bytes (a failed file keeps draining, unwritten). */
static int inbound_write(const river_pcoll *pc, struct inbound *in,
                         const char *buf, size_t n)
{
  size_t o = 0;
  ssize_t w;

  in->left -= n;
  while (in->fd >= 0 && o < n) {
    w = write(in->fd, buf + o, n - o);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      river__error("collection %s: cannot write %s: %s", pc->info.name,
                   in->tmp, w < 0 ? strerror(errno) : "no progress");
      close(in->fd);
      in->fd = -1;
      unlink(in->tmp);
      return RIVER_EIO;
    }
    o += (size_t)w;
  }
  return RIVER_SUCCESS;
}

/* The file is whole: fsync it, rename it to its final name. */
static int inbound_close(river_pcoll *pc, struct inbound *in)
{
  int rc = RIVER_SUCCESS;

  if (in->fd < 0)
    return RIVER_EIO;
  if (fsync(in->fd) != 0 || close(in->fd) != 0) {
    river__error("collection %s: cannot sync %s: %s", pc->info.name,
                 in->tmp, strerror(errno));
    rc = RIVER_EIO;
  } else if (rename(in->tmp, in->path) != 0) {
    river__error("collection %s: cannot rename %s to %s: %s", pc->info.name,
                 in->tmp, in->path, strerror(errno));
    rc = RIVER_EIO;
  }
  in->fd = -1;
  if (rc != RIVER_SUCCESS) {
    unlink(in->tmp);
    return rc;
  }
  if (river__fsync_dir(in->path) != RIVER_SUCCESS)
    rc = RIVER_EIO;
  return rc == RIVER_SUCCESS ? keep_shipped(pc, in->path) : rc;
}

/* The sending side of one file: open it and fill its header. */
static int outbound_open(const river_pcoll *pc, const struct ship_item *it,
                         struct ship_head *h, int *fd)
{
  off_t end;

  memset(h, 0, sizeof *h);
  h->part = it->part;
  h->disk = it->disk;
  *fd = open(it->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  end = *fd >= 0 ? lseek(*fd, 0, SEEK_END) : -1;
  if (end < 0) {
    river__error("collection %s: cannot read %s to send it to disk %d's "
                 "node: %s", pc->info.name, it->path, it->disk,
                 strerror(errno));
    if (*fd >= 0)
      close(*fd);
    *fd = -1;
    h->status = RIVER_EIO;
    return RIVER_EIO;
  }
  h->bytes = (uint64_t)end;
  return RIVER_SUCCESS;
}

/* Read the next n bytes of fd at off into buf (zeros after a failure:
 * the receiver drains them and the commit fails). */
static int outbound_read(const river_pcoll *pc, int fd, uint64_t off,
                         char *buf, size_t n, const char *path)
{
  size_t o = 0;
  ssize_t got;

  while (o < n) {
    got = pread(fd, buf + o, n - o, (off_t)(off + o));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0) {
      river__error("collection %s: cannot read %s: %s", pc->info.name, path,
                   got < 0 ? strerror(errno) : "it ended early");
      memset(buf + o, 0, n - o);
      return RIVER_EIO;
    }
    o += (size_t)got;
  }
  return RIVER_SUCCESS;
}

/* One pair's step state: which item, header sent or not, offset. */
struct side {
  int peer, n, i, head_done, fd;
  uint64_t off, bytes;
};

/* What a round's messages are sent from and received into, on the heap
 * with the chunk buffers: a wait the watchdog ends leaves them to MPI
 * (river__orphan), never a stack frame that is gone (src/agree.c). */
struct ship_wire {
  struct ship_head sh, rh;
  int sn, rn;
  char *sbuf, *rbuf;   /* SHIP_CHUNK each */
};

/* Post a receive of rn bytes into rp (none if NULL) from `from` and a
 * send of sn bytes at sp (none if NULL) to `to`, and wait for both. */
static int ship_exchange(river_pcoll *pc, void *rp, int rn, int from,
                         const void *sp, int sn, int to)
{
  MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int w;

  if (river__watchdog_fired())   /* nothing new starts (src/agree.c) */
    return RIVER_ETIMEDOUT;
  if ((rp && MPI_Irecv(rp, rn, MPI_BYTE, from, SHIP_TAG, pc->comm, &req[0])
                 != MPI_SUCCESS)
      || (sp && MPI_Isend(sp, sn, MPI_BYTE, to, SHIP_TAG, pc->comm, &req[1])
                    != MPI_SUCCESS))
    return RIVER_EMPI;
  w = river_waitall(2, req);
  return w == RIVER_SUCCESS || w == RIVER_ETIMEDOUT ? w : RIVER_EMPI;
}

/* One round: send this rank's items for `to`, receive from `from`.
 * RIVER_EMPI or RIVER_ETIMEDOUT: the rounds cannot go on. */
static int ship_round(river_pcoll *pc, struct ship_item *items, int nitems,
                      int to, int from, struct ship_wire *w)
{
  struct side s = {to, 0, 0, 0, -1, 0, 0}, r = {from, 0, 0, 0, -1, 0, 0};
  struct inbound in = {-1, 0, "", ""};
  char *sbuf = w->sbuf, *rbuf = w->rbuf;
  int i, k, rc = RIVER_SUCCESS, e, sn, rn;

  for (i = 0; i < nitems; i++)
    s.n += items[i].to == to;
  w->sn = s.n;
  if ((e = ship_exchange(pc, &w->rn, (int)sizeof w->rn, from, &w->sn,
                         (int)sizeof w->sn, to)) != RIVER_SUCCESS)
    return e;
  r.n = w->rn;
  k = -1;   /* the current outgoing item's index in items */
  while (s.i < s.n || r.i < r.n) {
    const void *sp = NULL;
    void *rp = NULL;
    sn = rn = 0;
    if (s.i < s.n && !s.head_done) {
      for (k++; items[k].to != to; k++)
        ;
      e = outbound_open(pc, &items[k], &w->sh, &s.fd);
      rc = rc == RIVER_SUCCESS ? e : rc;
      s.off = 0;
      s.bytes = w->sh.bytes;
      sp = &w->sh;
      sn = (int)sizeof w->sh;
    } else if (s.i < s.n) {
      size_t n = s.bytes - s.off < SHIP_CHUNK ? (size_t)(s.bytes - s.off)
                                              : SHIP_CHUNK;
      e = outbound_read(pc, s.fd, s.off, sbuf, n, items[k].path);
      rc = rc == RIVER_SUCCESS ? e : rc;
      s.off += n;
      sp = sbuf;
      sn = (int)n;
    }
    if (r.i < r.n && !r.head_done) {
      rp = &w->rh;
      rn = (int)sizeof w->rh;
    } else if (r.i < r.n) {
      rp = rbuf;
      rn = (int)(r.bytes - r.off < SHIP_CHUNK ? r.bytes - r.off : SHIP_CHUNK);
    }
    if ((e = ship_exchange(pc, rp, rn, from, sp, sn, to)) != RIVER_SUCCESS) {
      rc = e;
      break;
    }
    /* The sending side moves on. */
    if (sp == &w->sh)
      s.head_done = 1;
    if (s.i < s.n && s.head_done && s.off >= s.bytes) {
      if (s.fd >= 0)
        close(s.fd);
      s.fd = -1;
      s.head_done = 0;
      s.i++;
    }
    /* The receiving side. */
    if (rp == &w->rh) {
      r.head_done = 1;
      r.off = 0;
      r.bytes = w->rh.bytes;
      e = inbound_open(pc, &w->rh, &in);
      rc = rc == RIVER_SUCCESS ? e : rc;
    } else if (rp) {
      e = inbound_write(pc, &in, rbuf, (size_t)rn);
      rc = rc == RIVER_SUCCESS ? e : rc;
      r.off += (uint64_t)rn;
    }
    if (r.i < r.n && r.head_done && r.off >= r.bytes) {
      if (w->rh.status == RIVER_SUCCESS) {
        e = inbound_close(pc, &in);
        rc = rc == RIVER_SUCCESS ? e : rc;
      }
      r.head_done = 0;
      r.i++;
    }
  }
  if (s.fd >= 0)
    close(s.fd);
  if (in.fd >= 0) {
    close(in.fd);
    unlink(in.tmp);
  }
  return rc;
}

int river__pcoll_ship(river_pcoll *pc, const int *parts, int nparts)
{
  struct ship_item *items = NULL;
  struct ship_wire *w;
  int nitems = 0, k, i, rc, e;

  if (!river__pcoll_node_local(pc->disks))
    return RIVER_SUCCESS;   /* every rank has the same pattern */
  rc = river__pcoll_gather_nodes(pc);
  if (rc != RIVER_SUCCESS)
    return rc;
  if (pc->rank == 0)
    warn_one_node(pc);
  rc = list_items(pc, parts, nparts, &items, &nitems);
  if ((w = calloc(1, sizeof *w)) != NULL) {
    w->sbuf = malloc(SHIP_CHUNK);
    w->rbuf = malloc(SHIP_CHUNK);
  }
  if (rc == RIVER_SUCCESS && (w == NULL || w->sbuf == NULL || w->rbuf == NULL))
    rc = RIVER_ENOMEM;
  rc = river__agree(pc->comm, rc);
  /* Every round runs on every rank: a file that failed is drained by
   * its receiver, and the outcome is agreed at the end. */
  for (k = 1, e = rc; e == RIVER_SUCCESS && k < pc->size; k++) {
    int got = ship_round(pc, items, nitems, (pc->rank + k) % pc->size,
                         (pc->rank - k + pc->size) % pc->size, w);
    if (got == RIVER_EMPI || got == RIVER_ETIMEDOUT)
      e = got;   /* the rounds cannot go on */
    rc = rc == RIVER_SUCCESS ? got : rc;
  }
  if (e == RIVER_ETIMEDOUT && w != NULL) {   /* MPI may still write them */
    river__orphan(w->sbuf);
    river__orphan(w->rbuf);
    river__orphan(w);
    free(items);
    return e;
  }
  /* Tests: fail or kill with every copy sent and received. */
  if (rc == RIVER_SUCCESS && river__test_fault("commit-ship") != 0)
    rc = RIVER_EIO;
  rc = river__agree(pc->comm, rc);
  /* Sent and kept where they belong: this node's copies go. */
  for (i = 0; rc == RIVER_SUCCESS && i < nitems; i++)
    if (unlink(items[i].path) != 0 && errno != ENOENT)
      river__warn("collection %s: cannot remove %s (sent to disk %d's "
                  "node): %s", pc->info.name, items[i].path, items[i].disk,
                  strerror(errno));
  free(items);
  if (w != NULL) {
    free(w->sbuf);
    free(w->rbuf);
  }
  free(w);
  return rc;
}

void river__pcoll_ship_undo(river_pcoll *pc)
{
  int i;

  for (i = 0; i < pc->nshipped; i++)
    if (unlink(pc->shipped[i]) != 0 && errno != ENOENT)
      river__warn("cannot remove %s: %s", pc->shipped[i], strerror(errno));
}

void river__pcoll_ship_free(river_pcoll *pc)
{
  int i;

  for (i = 0; i < pc->nshipped; i++)
    free(pc->shipped[i]);
  free(pc->shipped);
  pc->shipped = NULL;
  pc->nshipped = 0;
  free(pc->nodes);
  pc->nodes = NULL;
}

int river__pcoll_node_slot(const river_pcoll *pc, int *index, int *count)
{
  *index = *count = 0;
  if (pc->nodes == NULL)
    return RIVER_EINVAL;
  river__node_slot(pc->nodes, pc->rank, pc->size, index, count);
  return RIVER_SUCCESS;
}
