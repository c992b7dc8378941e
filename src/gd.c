/*
 * gd.c - graduated declustering (see river/gd.h): clients fetch their
 * partitions' blocks from every mirror, disk servers favour the client
 * that lags.
 *
 * Messages, on a duplicate of the caller's communicator:
 *   REQ  (tag 1) client -> server: {partition, copy, block, tried,
 *        missing, progress}. `tried` and `missing` are bit sets of the
 *        copies that already failed for this block (missing: with
 *        RIVER_ENOTFOUND); the server echoes them, so the client keeps no
 *        table of what it asked. progress is the client's fraction of the
 *        partition received: the feedback the allocator works from.
 *        Two kinds ask for no block (copy < 0): PROGRESS, sent to each
 *        other live mirror whenever a block arrives, so that a disk that
 *        is not serving a client still knows how far it is (else it
 *        would see the progress of the client's last request to it, take
 *        a client that is ahead for a laggard, and serve it); and DONE,
 *        sent to every server rank once the client has every reply it
 *        will get. MPI keeps one sender's messages on one tag in order,
 *        so a server that has a client's DONE has all its messages.
 *   DATA (tag 2) server -> client: a 64-byte header {partition, copy,
 *        block, tried, missing, status, dead, nrecords} then the records.
 *
 * Client. Buffers ("slots") of header + one block: a slot is FREE, POSTED
 * (an MPI_Irecv from any server is waiting in it, for one request this
 * rank sent), READY (a block arrived, not yet delivered) or HELD (the
 * block river_gd_next returned last). A block is asked for only when a
 * free slot can take its reply, so memory is bounded by the slot count:
 * outstanding x r x (partitions, at most 4) + 1 in unordered mode,
 * window + 1 in stream mode (where a block may be asked for only within
 * `window` blocks of the next one to deliver, in the client's sequence:
 * the write order, its partitions whole in ascending order, or for an
 * interleaved collection stripe by stripe, block b of each of its
 * partitions before any block b + 1).
 * Each partition keeps at most `outstanding` requests at each live copy.
 * New blocks go in ascending order to the copy with the fewest requests
 * out (BALANCED), or to the first live copy (MIRROR_NOGD) or copy 0 only
 * (NOMIRROR). A failed block goes on the partition's retry list with the
 * failed copies marked, and is asked of a copy not yet tried; a copy the
 * server reports dead (file missing or unusable) gets no more requests.
 *
 * Server. One MPI_Irecv for tag 1 is kept posted.
 * Each local disk keeps a queue per stream (partition copy it stores);
 * the allocator (river__gd_pick_sticky, src/gd_alloc.c) picks the stream
 * to serve from the clients' latest reported progress: the laggard's,
 * but it stays with the stream it served last until that client leads
 * by GD_RUN blocks, so streams alternate in runs, not block by block
 * (fewer seeks on a spinning disk). A block is read
 * into a send slot, passes the disk's token bucket when rates are
 * emulated (plus a seek's worth of time when the disk switches streams),
 * and goes out with MPI_Isend. The server is done when every client rank
 * has said DONE and its sends have completed.
 *
 * Progress (river_gd_next) alternates server and client steps, testing
 * and never blocking in MPI; with nothing to do it backs off
 * (river__backoff).
 */
#include "river_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GD_TAG_REQ = 1, GD_TAG_DATA = 2 };
/* gd_req.copy of the messages that ask for no block */
enum { GD_MSG_PROGRESS = -1, GD_MSG_DONE = -2 };
enum { SLOT_FREE = 0, SLOT_POSTED, SLOT_READY, SLOT_HELD };

#define GD_HDR 64          /* bytes before a block's records */
#define GD_MAX_ACTIVE 4    /* unordered: partitions read at once */
#define GD_SEND_SLOTS 4    /* per local disk */
#define GD_PROG_SLOTS 32   /* progress reports a client has in flight */
#define GD_GAIN 0.01       /* allocator: integral gain per pick */
#define GD_BIAS_CAP 20.0   /* allocator: most blocks of bias */
#define GD_RUN 2           /* a disk stays with a client until it leads the
                              laggard by this many blocks */

struct gd_req {
  int32_t partition, copy;
  uint64_t block, tried, missing;
  double progress;
};

struct gd_hdr {
  int32_t partition, copy;
  uint64_t block, tried, missing;
  int32_t status, dead;
  uint64_t nrecords;
};

/* ----------------------------------------------------------- client side */

struct gd_retry {
  uint64_t block, tried, missing;
};

struct gd_part {
  int p;
  uint64_t nblocks;
  uint64_t seq0;           /* this partition's first block in the client's
                              sequence */
  uint64_t next;           /* next block never asked for */
  uint64_t received;
  int out[RIVER_GD_MAX_REPLICATION];
  unsigned char dead[RIVER_GD_MAX_REPLICATION];
  struct gd_retry *retry;
  size_t nretry, capretry;
  int rr;                  /* BALANCED: where ties between copies start */
};

struct gd_slot {
  unsigned char *buf;      /* GD_HDR + block bytes */
  MPI_Request rreq;        /* the reply's receive */
  MPI_Request sreq;        /* the request's send */
  struct gd_req msg;       /* the request sent from this slot */
  int state;
  uint64_t seq;            /* READY: place in the client's sequence */
  uint64_t arrival;        /* READY: order of arrival */
};

/* ----------------------------------------------------------- server side */

struct gd_stream {
  int partition, copy;
  struct gd_req *q;        /* ring of `outstanding` requests */
  int head, count;
};

struct gd_disk {
  int d;
  int nstreams;
  struct gd_stream *streams;
  int cursor;              /* allocator round-robin */
  int last;                /* partition served last (-1: none) */
  int last_stream;         /* stream served last (-1: none) */
  river_throttle *thr;     /* emulated rate, or NULL */
  double *prog;            /* scratch: progress per stream */
  int *pend;               /* scratch: pending per stream */
  double *bias;            /* allocator's integral term per stream */
  double bias_cap;         /* GD_BIAS_CAP blocks, as a fraction */
};

struct gd_send {
  unsigned char *buf;
  MPI_Request req;
  int busy;
};

struct river_gd {
  MPI_Comm comm;
  int rank, size;
  char name[RIVER_PCOLL_NAME_MAX + 16];
  /* layout */
  int npart, ndisks, repl;
  size_t record_size, rpb, block_bytes;
  uint64_t *nrecords;      /* [npart] */
  int *first_disk;         /* [npart] */
  int *disk_rank;          /* [ndisks] */
  int *client_rank;        /* [npart] */
  river_gd_read_fn read;
  void *ctx;
  river_pcoll *pc;         /* river_gd_open's collection, else NULL */
  /* options */
  river_gd_policy policy;
  river_gd_mode mode;
  int striped;             /* stream order is stripe by stripe */
  int k;
  uint64_t window;
  double rate, seek;
  const river_perturb *perturb;
  double t0;
  /* client */
  int nmine;
  struct gd_part *mine;
  int *local_of;           /* [npart] index into mine, or -1 */
  int nslots;
  struct gd_slot *slots;
  MPI_Request *rreqs;      /* [nslots] copies for MPI_Testsome */
  int *idx;                /* [nslots] scratch */
  uint64_t dseq;           /* stream: next place in the sequence to deliver */
  uint64_t arrivals;
  int posted;
  int client_rc;
  int fail_part;           /* the lowest block with no copy left, or -1 */
  uint64_t fail_block, fail_tried, fail_missing;
  int client_done;         /* every partition finished or failed, nothing
                              posted */
  int nservers;
  int *servers;            /* ranks that serve some disk */
  struct gd_req *done_msg; /* [nservers] */
  MPI_Request *done_sreq;  /* [nservers] */
  struct gd_req prog_msg[GD_PROG_SLOTS]; /* progress reports in flight */
  MPI_Request prog_sreq[GD_PROG_SLOTS];
  int prog_next;
  int done_sent;
  /* server */
  int nlocal;
  struct gd_disk *disks;
  int *disk_local;         /* [ndisks] index into disks, or -1 */
  double *progress;        /* [npart] latest reported */
  uint64_t *pnblocks;      /* [npart] */
  struct gd_req rmsg;
  MPI_Request rreq;
  int nclients;            /* distinct client ranks */
  int dones;
  int nsend;
  struct gd_send *send;
  int server_done;
  river_gd_stats stats;
  int fatal;               /* an MPI call failed */
};

static uint64_t gd_nblocks(const river_gd *gd, int p)
{
  return (gd->nrecords[p] + gd->rpb - 1) / gd->rpb;
}

static int gd_disk_of(const river_gd *gd, int p, int c)
{
  return (gd->first_disk[p] + c) % gd->ndisks;
}

/* ------------------------------------------------------------ server */

static int gd_post_req(river_gd *gd)
{
  return MPI_Irecv(&gd->rmsg, (int)sizeof gd->rmsg, MPI_BYTE, MPI_ANY_SOURCE,
                   GD_TAG_REQ, gd->comm, &gd->rreq) == MPI_SUCCESS
             ? RIVER_SUCCESS : RIVER_EMPI;
}


/* A request has arrived: note the progress, queue it at its stream. */
static int gd_enqueue(river_gd *gd, const struct gd_req *m, int src)
{
  struct gd_disk *dk;
  struct gd_stream *st = NULL;
  int d, i;

  if (m->copy == GD_MSG_DONE) {
    gd->dones++;
    return RIVER_SUCCESS;
  }
  if (m->copy == GD_MSG_PROGRESS && m->partition >= 0
      && m->partition < gd->npart) {
    if (m->progress > gd->progress[m->partition])
      gd->progress[m->partition] = m->progress;
    return RIVER_SUCCESS;
  }
  if (m->partition < 0 || m->partition >= gd->npart || m->copy < 0
      || m->copy >= gd->repl
      || (d = gd->disk_local[gd_disk_of(gd, m->partition, m->copy)]) < 0) {
    river__error("%s: rank %d sent a request for partition %d copy %d, "
                 "which this rank does not serve", gd->name, src,
                 (int)m->partition, (int)m->copy);
    return RIVER_ESTATE;
  }
  dk = &gd->disks[d];
  for (i = 0; i < dk->nstreams; i++)
    if (dk->streams[i].partition == m->partition
        && dk->streams[i].copy == m->copy)
      st = &dk->streams[i];
  if (st == NULL || st->count >= gd->k) {
    river__error("%s: rank %d has more than %d requests out at partition "
                 "%d copy %d", gd->name, src, gd->k, (int)m->partition,
                 (int)m->copy);
    return RIVER_ESTATE;
  }
  st->q[(st->head + st->count) % gd->k] = *m;
  st->count++;
  if (m->progress > gd->progress[m->partition])
    gd->progress[m->partition] = m->progress;
  return RIVER_SUCCESS;
}

/* Take in whatever requests and DONEs have arrived; finish sends. */
static int gd_server_poll(river_gd *gd, int *busy)
{
  MPI_Status st;
  int flag, rc, i;

  for (;;) {
    if (MPI_Test(&gd->rreq, &flag, &st) != MPI_SUCCESS)
      return RIVER_EMPI;
    if (!flag)
      break;
    *busy = 1;
    if ((rc = gd_enqueue(gd, &gd->rmsg, st.MPI_SOURCE)) != RIVER_SUCCESS)
      return rc;
    if ((rc = gd_post_req(gd)) != RIVER_SUCCESS)
      return rc;
  }
  for (i = 0; i < gd->nsend; i++)
    if (gd->send[i].busy) {
      if (MPI_Test(&gd->send[i].req, &flag, MPI_STATUS_IGNORE)
          != MPI_SUCCESS)
        return RIVER_EMPI;
      if (flag)
        gd->send[i].busy = 0;
    }
  return RIVER_SUCCESS;
}

/* Pass n bytes (and a seek, if the disk switches streams) through the
 * disk's emulated rate. */
static void gd_throttle(river_gd *gd, struct gd_disk *dk, int partition,
                        size_t n)
{
  double f = 1.0, extra = 0;

  if (dk->last >= 0 && dk->last != partition) {
    gd->stats.seeks++;
    extra = gd->seek;
  }
  dk->last = partition;
  if (dk->thr == NULL)
    return;
  if (gd->perturb)
    river_perturb_factor(gd->perturb, RIVER_PERTURB_DISK, dk->d,
                         river_wtime() - gd->t0, &f);
  river_throttle_set_factor(dk->thr, f);
  river_throttle_consume(dk->thr, n + (size_t)(extra * gd->rate * f));
}

/* Serve one block at local disk dk, if it has a request and a send slot
 * is free. */
static int gd_serve_one(river_gd *gd, struct gd_disk *dk, int *busy)
{
  struct gd_send *sl = NULL;
  struct gd_stream *st;
  struct gd_req m;
  struct gd_hdr h;
  size_t nrec = 0;
  int i, s, demoted, dest;

  for (i = 0; i < gd->nsend && sl == NULL; i++)
    if (!gd->send[i].busy)
      sl = &gd->send[i];
  if (sl == NULL)
    return RIVER_SUCCESS;
  for (i = 0; i < dk->nstreams; i++) {
    dk->pend[i] = dk->streams[i].count;
    dk->prog[i] = gd->progress[dk->streams[i].partition];
  }
  {
    /* Stay with the last stream for up to GD_RUN blocks of lead. */
    int last = dk->last_stream;
    double margin = last >= 0 ? (double)GD_RUN
                                    / (double)(gd->pnblocks[dk->streams[last]
                                                   .partition] + 1)
                              : 0.0;
    if (gd->policy == RIVER_GD_BALANCED)
      s = river__gd_pick_balanced(dk->prog, dk->pend, dk->nstreams,
                                  &dk->cursor, last, margin, dk->bias,
                                  GD_GAIN, dk->bias_cap);
    else
      s = river__gd_pick(NULL, dk->pend, dk->nstreams, &dk->cursor);
  }
  if (s < 0)
    return RIVER_SUCCESS;
  st = &dk->streams[s];
  dk->last_stream = s;
  m = st->q[st->head];
  st->head = (st->head + 1) % gd->k;
  st->count--;
  *busy = 1;
  memset(&h, 0, sizeof h);
  h.partition = m.partition;
  h.copy = m.copy;
  h.block = m.block;
  h.tried = m.tried;
  h.missing = m.missing;
  /* The client decides whether a failure is an error (no mirror left). */
  demoted = river__log_demote(1);
  if (m.block >= gd->pnblocks[m.partition])
    h.status = RIVER_EINVAL;
  else
    h.status = gd->read(gd->ctx, m.partition, m.copy, dk->d, m.block,
                        sl->buf + GD_HDR, gd->block_bytes, &nrec);
  river__log_demote(demoted);
  if (h.status == RIVER_SUCCESS && nrec > gd->rpb)
    h.status = RIVER_ECORRUPT;
  if (h.status != RIVER_SUCCESS) {
    nrec = 0;
    h.dead = h.status == RIVER_ENOTFOUND
             || (gd->pc && river__pcoll_copy_dead(gd->pc, m.partition,
                                                  m.copy));
  }
  h.nrecords = nrec;
  memcpy(sl->buf, &h, sizeof h);
  gd_throttle(gd, dk, m.partition, nrec * gd->record_size);
  dest = gd->client_rank[m.partition];
  if (MPI_Isend(sl->buf, (int)(GD_HDR + nrec * gd->record_size), MPI_BYTE,
                dest, GD_TAG_DATA, gd->comm, &sl->req) != MPI_SUCCESS)
    return RIVER_EMPI;
  sl->busy = 1;
  if (h.status == RIVER_SUCCESS) {
    gd->stats.blocks_served++;
    gd->stats.bytes_served += nrec * gd->record_size;
  }
  return RIVER_SUCCESS;
}

static int gd_server_step(river_gd *gd, int *busy)
{
  int rc, i;

  if (gd->server_done || gd->nlocal == 0)
    return RIVER_SUCCESS;
  if ((rc = gd_server_poll(gd, busy)) != RIVER_SUCCESS)
    return rc;
  for (i = 0; i < gd->nlocal; i++)
    if ((rc = gd_serve_one(gd, &gd->disks[i], busy)) != RIVER_SUCCESS)
      return rc;
  if (gd->dones == gd->nclients) {
    for (i = 0; i < gd->nsend; i++)
      if (gd->send[i].busy)
        return RIVER_SUCCESS;
    for (i = 0; i < gd->nlocal; i++) {
      int j;
      for (j = 0; j < gd->disks[i].nstreams; j++)
        if (gd->disks[i].streams[j].count) {
          river__error("%s: requests left at disk %d after every client "
                       "finished", gd->name, gd->disks[i].d);
          return RIVER_ESTATE;
        }
    }
    /* The last receive posted for requests will never match. */
    if (MPI_Cancel(&gd->rreq) != MPI_SUCCESS
        || MPI_Wait(&gd->rreq, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return RIVER_EMPI;
    gd->server_done = 1;
  }
  return RIVER_SUCCESS;
}

/* ------------------------------------------------------------ client */

/* Block b of the client's partition i: its place in the write order. */
static uint64_t gd_seq(const river_gd *gd, int i, uint64_t b)
{
  uint64_t seq = 0;
  int j;

  if (!gd->striped)
    return gd->mine[i].seq0 + b;
  /* Blocks of earlier stripes, then block b of earlier partitions. */
  for (j = 0; j < gd->nmine; j++) {
    uint64_t nb = gd->mine[j].nblocks;
    seq += nb < b ? nb : b;
    if (j < i && nb > b)
      seq++;
  }
  return seq;
}

static int gd_free_slot(river_gd *gd)
{
  int i;

  for (i = 0; i < gd->nslots; i++)
    if (gd->slots[i].state == SLOT_FREE)
      return i;
  return -1;
}

/* Ask copy c of partition mp for block b (the caller checked a slot is
 * free and the copy may take another request). */
static int gd_ask(river_gd *gd, struct gd_part *mp, int c, uint64_t b,
                  uint64_t tried, uint64_t missing)
{
  int s = gd_free_slot(gd);
  struct gd_slot *sl = &gd->slots[s];
  int server = gd->disk_rank[gd_disk_of(gd, mp->p, c)];

  /* The slot's previous request was answered: its send is done, but
   * MPI must be told before the request message is reused. */
  if (sl->sreq != MPI_REQUEST_NULL
      && MPI_Wait(&sl->sreq, MPI_STATUS_IGNORE) != MPI_SUCCESS)
    return RIVER_EMPI;
  sl->msg.partition = mp->p;
  sl->msg.copy = c;
  sl->msg.block = b;
  sl->msg.tried = tried;
  sl->msg.missing = missing;
  sl->msg.progress = mp->nblocks ? (double)mp->received / (double)mp->nblocks
                                 : 1.0;
  if (MPI_Irecv(sl->buf, (int)(GD_HDR + gd->block_bytes), MPI_BYTE,
                MPI_ANY_SOURCE, GD_TAG_DATA, gd->comm, &sl->rreq)
          != MPI_SUCCESS
      || MPI_Isend(&sl->msg, (int)sizeof sl->msg, MPI_BYTE, server,
                   GD_TAG_REQ, gd->comm, &sl->sreq) != MPI_SUCCESS)
    return RIVER_EMPI;
  sl->state = SLOT_POSTED;
  gd->rreqs[s] = sl->rreq;
  gd->posted++;
  mp->out[c]++;
  return RIVER_SUCCESS;
}

/* A copy that may take one more request for a block whose failed copies
 * are `tried`, by the policy; -1 if none now. *left: whether some copy
 * could take it later (not tried, not dead). */
static int gd_choose_copy(const river_gd *gd, struct gd_part *mp,
                          uint64_t tried, int *left)
{
  int c, best = -1, j;

  *left = 0;
  for (j = 0; j < gd->repl; j++) {
    c = (mp->rr + j) % gd->repl;
    if ((tried >> c) & 1 || mp->dead[c])
      continue;
    if (gd->policy == RIVER_GD_NOMIRROR && c != 0)
      continue;
    *left = 1;
    if (gd->policy != RIVER_GD_BALANCED) {
      /* One fixed mirror: the first usable copy, and wait for it. */
      return mp->out[c] < gd->k ? c : -1;
    }
    if (mp->out[c] < gd->k && (best < 0 || mp->out[c] < mp->out[best]))
      best = c;
  }
  if (best >= 0)
    mp->rr = (best + 1) % gd->repl;
  return best;
}

/* Block `block` of mp has no copy left. The first such failure stops the
 * client asking for more; the error is logged once the replies still
 * out have come (gd_log_failure), naming the lowest failed block, so
 * the message does not depend on which reply MPI completed first. */
static int gd_fail_block(river_gd *gd, struct gd_part *mp, uint64_t block,
                         uint64_t tried, uint64_t missing)
{
  if (gd->fail_part < 0 || mp->p < gd->fail_part
      || (mp->p == gd->fail_part && block < gd->fail_block)) {
    gd->fail_part = mp->p;
    gd->fail_block = block;
    gd->fail_tried = tried;
    gd->fail_missing = missing;
  }
  if (gd->client_rc == RIVER_SUCCESS)
    gd->client_rc = missing == tried ? RIVER_ENOTFOUND : RIVER_ECORRUPT;
  return RIVER_SUCCESS;
}

static void gd_log_failure(river_gd *gd)
{
  char disks[256] = "";
  size_t at = 0;
  int c, p = gd->fail_part,
      missing = gd->fail_missing == gd->fail_tried;

  if (p < 0)
    return;
  for (c = 0; c < gd->repl && at < sizeof disks - 16; c++)
    if ((gd->fail_tried >> c) & 1)
      at += (size_t)snprintf(disks + at, sizeof disks - at, "%s%d",
                             at ? ", " : "", gd_disk_of(gd, p, c));
  river__error("%s: partition %d block %llu: no readable copy (%s on disk%s "
               "%s%s)", gd->name, p, (unsigned long long)gd->fail_block,
               missing ? "missing" : "failed",
               strchr(disks, ',') ? "s" : "", disks,
               gd->policy == RIVER_GD_NOMIRROR ? "; other mirrors not tried: "
                                                 "nomirror policy" : "");
}

/* Tell every live mirror of mp (but `except`) how far its client is, so
 * a disk that is not serving this client still knows whether it lags
 * (requests carry progress too, but only to the disk they go to). */
static int gd_report(river_gd *gd, struct gd_part *mp, int except)
{
  int c, s;

  if (gd->policy != RIVER_GD_BALANCED)
    return RIVER_SUCCESS;
  for (c = 0; c < gd->repl; c++) {
    if (c == except || mp->dead[c])
      continue;
    s = gd->prog_next;
    gd->prog_next = (s + 1) % GD_PROG_SLOTS;
    if (gd->prog_sreq[s] != MPI_REQUEST_NULL
        && MPI_Wait(&gd->prog_sreq[s], MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return RIVER_EMPI;
    memset(&gd->prog_msg[s], 0, sizeof gd->prog_msg[s]);
    gd->prog_msg[s].partition = mp->p;
    gd->prog_msg[s].copy = GD_MSG_PROGRESS;
    gd->prog_msg[s].progress = (double)mp->received / (double)mp->nblocks;
    if (MPI_Isend(&gd->prog_msg[s], (int)sizeof gd->prog_msg[s], MPI_BYTE,
                  gd->disk_rank[gd_disk_of(gd, mp->p, c)], GD_TAG_REQ,
                  gd->comm, &gd->prog_sreq[s]) != MPI_SUCCESS)
      return RIVER_EMPI;
  }
  return RIVER_SUCCESS;
}

/* A reply has arrived in slot s. */
static int gd_arrived(river_gd *gd, int s)
{
  struct gd_slot *sl = &gd->slots[s];
  struct gd_hdr h;
  struct gd_part *mp;
  int i, left;

  memcpy(&h, sl->buf, sizeof h);
  gd->posted--;
  if (h.partition < 0 || h.partition >= gd->npart
      || (i = gd->local_of[h.partition]) < 0 || h.copy < 0
      || h.copy >= gd->repl) {
    river__error("%s: a reply for partition %d copy %d, which this rank "
                 "does not read", gd->name, (int)h.partition, (int)h.copy);
    return RIVER_ESTATE;
  }
  mp = &gd->mine[i];
  mp->out[h.copy]--;
  if (h.status == RIVER_SUCCESS) {
    uint64_t want = h.block + 1 < mp->nblocks
                        ? gd->rpb : gd->nrecords[mp->p] - h.block * gd->rpb;
    if (h.nrecords != want) {
      river__error("%s: partition %d block %llu came with %llu records, "
                   "expected %llu", gd->name, mp->p,
                   (unsigned long long)h.block,
                   (unsigned long long)h.nrecords, (unsigned long long)want);
      return RIVER_ESTATE;
    }
    mp->received++;
    if (mp->received < mp->nblocks) {
      int rc = gd_report(gd, mp, h.copy);
      if (rc != RIVER_SUCCESS)
        return rc;
    }
    gd->stats.blocks_received++;
    gd->stats.bytes_received += h.nrecords * gd->record_size;
    if (mp->received == mp->nblocks)
      gd->stats.seconds = river_wtime() - gd->t0;
    sl->state = SLOT_READY;
    sl->seq = gd_seq(gd, i, h.block);
    sl->arrival = gd->arrivals++;
    return RIVER_SUCCESS;
  }
  sl->state = SLOT_FREE;
  h.tried |= (uint64_t)1 << h.copy;
  if (h.status == RIVER_ENOTFOUND)
    h.missing |= (uint64_t)1 << h.copy;
  if (h.dead && !mp->dead[h.copy]) {
    mp->dead[h.copy] = 1;
    river__warn("%s: partition %d: the copy on disk %d is unusable (%s); "
                "its blocks go to the other mirrors", gd->name, mp->p,
                gd_disk_of(gd, mp->p, h.copy), river_strerror(h.status));
  }
  gd->stats.failovers++;
  (void)gd_choose_copy(gd, mp, h.tried, &left);
  if (!left)
    return gd_fail_block(gd, mp, h.block, h.tried, h.missing);
  if (gd->client_rc != RIVER_SUCCESS)
    return RIVER_SUCCESS;  /* failing already: ask nothing more */
  if (mp->nretry == mp->capretry) {
    size_t cap = mp->capretry ? 2 * mp->capretry : 8;
    struct gd_retry *r = realloc(mp->retry, cap * sizeof *r);
    if (r == NULL)
      return RIVER_ENOMEM;
    mp->retry = r;
    mp->capretry = cap;
  }
  mp->retry[mp->nretry].block = h.block;
  mp->retry[mp->nretry].tried = h.tried;
  mp->retry[mp->nretry].missing = h.missing;
  mp->nretry++;
  return RIVER_SUCCESS;
}

/* Ask for what may be asked: failed blocks first, then new ones. */
static int gd_issue(river_gd *gd, int *busy)
{
  int i, c, left, rc, active = 0;

  if (gd->client_rc != RIVER_SUCCESS)
    return RIVER_SUCCESS;
  for (i = 0; i < gd->nmine; i++) {
    struct gd_part *mp = &gd->mine[i];
    size_t r = 0;
    if (mp->received == mp->nblocks)
      continue;
    if (gd->mode == RIVER_GD_UNORDERED && active++ >= GD_MAX_ACTIVE)
      break;
    while (r < mp->nretry && gd_free_slot(gd) >= 0) {
      struct gd_retry *rt = &mp->retry[r];
      c = gd_choose_copy(gd, mp, rt->tried, &left);
      if (!left) {  /* its last copies died since it failed */
        return gd_fail_block(gd, mp, rt->block, rt->tried, rt->missing);
      }
      if (c < 0) {
        r++;
        continue;
      }
      if ((rc = gd_ask(gd, mp, c, rt->block, rt->tried, rt->missing))
          != RIVER_SUCCESS)
        return rc;
      *busy = 1;
      mp->retry[r] = mp->retry[--mp->nretry];
    }
    while (mp->next < mp->nblocks && gd_free_slot(gd) >= 0
           && (gd->mode == RIVER_GD_UNORDERED
               || gd_seq(gd, i, mp->next) < gd->dseq + gd->window)) {
      c = gd_choose_copy(gd, mp, 0, &left);
      if (!left)
        return gd_fail_block(gd, mp, mp->next, 0, 0);
      if (c < 0)
        break;
      if ((rc = gd_ask(gd, mp, c, mp->next, 0, 0)) != RIVER_SUCCESS)
        return rc;
      *busy = 1;
      mp->next++;
    }
  }
  return RIVER_SUCCESS;
}

static int gd_send_dones(river_gd *gd)
{
  int i;

  /* On the request tag: MPI keeps one sender's messages on one tag in
   * order, so a server has all of this client's messages once it has
   * its DONE. */
  for (i = 0; i < gd->nservers; i++) {
    memset(&gd->done_msg[i], 0, sizeof gd->done_msg[i]);
    gd->done_msg[i].partition = -1;
    gd->done_msg[i].copy = GD_MSG_DONE;
    if (MPI_Isend(&gd->done_msg[i], (int)sizeof gd->done_msg[i], MPI_BYTE,
                  gd->servers[i], GD_TAG_REQ, gd->comm, &gd->done_sreq[i])
        != MPI_SUCCESS)
      return RIVER_EMPI;
  }
  gd->done_sent = 1;
  return RIVER_SUCCESS;
}


static int gd_client_step(river_gd *gd, int *busy)
{
  int n = 0, i, rc, all = 1;

  if (gd->client_done)
    return RIVER_SUCCESS;
  if (gd->posted > 0) {
    for (i = 0; i < gd->nslots; i++)
      if (gd->slots[i].state != SLOT_POSTED)
        gd->rreqs[i] = MPI_REQUEST_NULL;
    if (MPI_Testsome(gd->nslots, gd->rreqs, &n, gd->idx,
                     MPI_STATUSES_IGNORE) != MPI_SUCCESS)
      return RIVER_EMPI;
    for (i = 0; i < n && n != MPI_UNDEFINED; i++) {
      gd->slots[gd->idx[i]].rreq = MPI_REQUEST_NULL;
      if ((rc = gd_arrived(gd, gd->idx[i])) != RIVER_SUCCESS)
        return rc;
      *busy = 1;
    }
  }
  if ((rc = gd_issue(gd, busy)) != RIVER_SUCCESS)
    return rc;
  for (i = 0; i < gd->nmine; i++)
    all = all && gd->mine[i].received == gd->mine[i].nblocks;
  if ((all || gd->client_rc != RIVER_SUCCESS) && gd->posted == 0) {
    gd_log_failure(gd);
    gd->client_done = 1;
    *busy = 1;
    return gd_send_dones(gd);
  }
  return RIVER_SUCCESS;
}

/* The next READY slot to deliver, or -1. */
static int gd_deliverable(const river_gd *gd)
{
  int i, best = -1;

  for (i = 0; i < gd->nslots; i++) {
    const struct gd_slot *sl = &gd->slots[i];
    if (sl->state != SLOT_READY)
      continue;
    if (gd->mode == RIVER_GD_STREAM) {
      if (sl->seq == gd->dseq)
        return i;
    } else if (best < 0 || sl->arrival < gd->slots[best].arrival) {
      best = i;
    }
  }
  return best;
}

/* ------------------------------------------------------------- the API */

int river_gd_next(river_gd *gd, const void **records, size_t *nrecords,
                  int *partition, uint64_t *block)
{
  long ns = RIVER_BACKOFF_START;
  int i, rc, busy;

  if (gd == NULL || records == NULL || nrecords == NULL)
    return RIVER_EINVAL;
  if (gd->fatal)
    return gd->fatal;
  for (i = 0; i < gd->nslots; i++)
    if (gd->slots[i].state == SLOT_HELD)
      gd->slots[i].state = SLOT_FREE;
  for (;;) {
    busy = 0;
    rc = gd_server_step(gd, &busy);
    if (rc == RIVER_SUCCESS)
      rc = gd_client_step(gd, &busy);
    if (rc != RIVER_SUCCESS) {
      gd->fatal = rc;
      return rc;
    }
    if (gd->client_rc == RIVER_SUCCESS && (i = gd_deliverable(gd)) >= 0) {
      struct gd_slot *sl = &gd->slots[i];
      struct gd_hdr h;
      memcpy(&h, sl->buf, sizeof h);
      sl->state = SLOT_HELD;
      if (gd->mode == RIVER_GD_STREAM)
        gd->dseq++;
      *records = sl->buf + GD_HDR;
      *nrecords = (size_t)h.nrecords;
      if (partition)
        *partition = h.partition;
      if (block)
        *block = h.block;
      return RIVER_SUCCESS;
    }
    if (gd->client_done && (gd->server_done || gd->nlocal == 0)) {
      *records = NULL;
      *nrecords = 0;
      return gd->client_rc != RIVER_SUCCESS ? gd->client_rc : RIVER_EOS;
    }
    if (busy)
      ns = RIVER_BACKOFF_START;
    else
      river__backoff(&ns);
  }
}

int river_gd_stats_get(const river_gd *gd, river_gd_stats *stats)
{
  if (gd == NULL || stats == NULL)
    return RIVER_EINVAL;
  *stats = gd->stats;
  return RIVER_SUCCESS;
}

static void gd_free(river_gd *gd)
{
  int i;

  if (gd == NULL)
    return;
  for (i = 0; i < gd->nmine; i++)
    free(gd->mine[i].retry);
  for (i = 0; gd->slots && i < gd->nslots; i++)
    free(gd->slots[i].buf);
  for (i = 0; gd->send && i < gd->nsend; i++)
    free(gd->send[i].buf);
  for (i = 0; gd->disks && i < gd->nlocal; i++) {
    struct gd_disk *dk = &gd->disks[i];
    int j;
    for (j = 0; dk->streams && j < dk->nstreams; j++)
      free(dk->streams[j].q);
    free(dk->streams);
    free(dk->prog);
    free(dk->pend);
    free(dk->bias);
    river_throttle_destroy(dk->thr);
  }
  free(gd->disks);
  free(gd->send);
  free(gd->slots);
  free(gd->rreqs);
  free(gd->idx);
  free(gd->mine);
  free(gd->local_of);
  free(gd->servers);
  free(gd->done_sreq);
  free(gd->done_msg);
  free(gd->disk_local);
  free(gd->progress);
  free(gd->pnblocks);
  free(gd->nrecords);
  free(gd->first_disk);
  free(gd->disk_rank);
  free(gd->client_rank);
  if (gd->comm != MPI_COMM_NULL)
    MPI_Comm_free(&gd->comm);
  free(gd);
}

int river_gd_close(river_gd *gd)
{
  int rc, i, ok;

  if (gd == NULL)
    return RIVER_SUCCESS;
  rc = gd->fatal ? gd->fatal : gd->client_rc;
  /* A rank that stopped early: finish its part so no rank waits for it
   * (its client asks nothing more). */
  if (rc == RIVER_SUCCESS && !(gd->client_done
                               && (gd->server_done || gd->nlocal == 0))) {
    const void *r;
    size_t n;
    int undelivered = !gd->client_done;
    for (i = 0; i < gd->nslots; i++)
      undelivered |= gd->slots[i].state == SLOT_READY;
    /* Ask nothing more, but serve until every client is done. */
    gd->client_rc = RIVER_ESTATE;
    while (river_gd_next(gd, &r, &n, NULL, NULL) == RIVER_SUCCESS)
      ;
    if (gd->fatal)
      rc = gd->fatal;
    if (undelivered)
      river__warn("%s: closed before every block was delivered", gd->name);
    gd->client_rc = RIVER_SUCCESS;
  }
  for (i = 0; gd->done_sent && i < gd->nservers; i++)
    MPI_Wait(&gd->done_sreq[i], MPI_STATUS_IGNORE);
  for (i = 0; i < GD_PROG_SLOTS; i++)
    if (gd->prog_sreq[i] != MPI_REQUEST_NULL)
      MPI_Wait(&gd->prog_sreq[i], MPI_STATUS_IGNORE);
  for (i = 0; i < gd->nslots; i++)
    if (gd->slots[i].sreq != MPI_REQUEST_NULL)
      MPI_Wait(&gd->slots[i].sreq, MPI_STATUS_IGNORE);
  ok = river__agree(gd->comm, rc);
  gd_free(gd);
  return ok;
}

/* -------------------------------------------------------------- setup */

static int gd_check_layout(const river_gd_layout *l)
{
  int p;

  if (l->npartitions < 1 || l->ndisks < 1 || l->replication < 1
      || l->replication > l->ndisks
      || l->replication > RIVER_GD_MAX_REPLICATION || l->record_size == 0
      || l->records_per_block == 0 || l->nrecords == NULL
      || (unsigned)l->order > RIVER_LAYOUT_INTERLEAVED) {
    river__error("gd create: bad layout (%d partitions, %d disks, "
                 "replication %d, record size %zu, %zu records per block%s)",
                 l->npartitions, l->ndisks, l->replication, l->record_size,
                 l->records_per_block,
                 l->nrecords == NULL ? ", no record counts" : "");
    return RIVER_EINVAL;
  }
  if (l->records_per_block > ((size_t)INT_MAX - GD_HDR) / l->record_size) {
    river__error("gd create: a block of %zu records of %zu bytes does not "
                 "fit one MPI message", l->records_per_block,
                 l->record_size);
    return RIVER_EINVAL;
  }
  for (p = 0; l->first_disk && p < l->npartitions; p++)
    if (l->first_disk[p] < 0 || l->first_disk[p] >= l->ndisks) {
      river__error("gd create: partition %d's first disk %d is not one of "
                   "the %d disks", p, l->first_disk[p], l->ndisks);
      return RIVER_EINVAL;
    }
  return RIVER_SUCCESS;
}

static int gd_check_opts(const river_gd_opts *o, const river_gd_layout *l,
                         int size)
{
  int i, max = -1;

  if ((unsigned)o->policy > RIVER_GD_NOMIRROR
      || (unsigned)o->mode > RIVER_GD_STREAM || o->outstanding < 0
      || o->window < 0 || !(o->disk_rate >= 0) || !(o->seek_seconds >= 0)
      || (o->seek_seconds > 0 && o->disk_rate == 0)) {
    river__error("gd create: bad options (policy %d, mode %d, outstanding "
                 "%d, window %d, disk rate %g, seek %g s%s)",
                 (int)o->policy, (int)o->mode, o->outstanding, o->window,
                 o->disk_rate, o->seek_seconds,
                 o->seek_seconds > 0 && o->disk_rate == 0
                     ? ": a seek cost needs an emulated disk rate" : "");
    return RIVER_EINVAL;
  }
  for (i = 0; o->disk_ranks && i < l->ndisks; i++)
    if (o->disk_ranks[i] < 0 || o->disk_ranks[i] >= size) {
      river__error("gd create: disk %d's rank %d is not in the "
                   "communicator (size %d)", i, o->disk_ranks[i], size);
      return RIVER_EINVAL;
    }
  for (i = 0; o->client_ranks && i < l->npartitions; i++)
    if (o->client_ranks[i] < 0 || o->client_ranks[i] >= size) {
      river__error("gd create: partition %d's client rank %d is not in the "
                   "communicator (size %d)", i, o->client_ranks[i], size);
      return RIVER_EINVAL;
    }
  if (o->perturb
      && river_perturb_max_index(o->perturb, RIVER_PERTURB_DISK, &max)
             == RIVER_SUCCESS
      && max >= l->ndisks) {
    river__error("gd create: the perturbation names disk %d, but there are "
                 "only %d disks", max, l->ndisks);
    return RIVER_EINVAL;
  }
  return RIVER_SUCCESS;
}

/* A hash of the per-partition and per-rank arrays, to check every rank
 * passed the same. */
static uint64_t gd_hash(const river_gd *gd)
{
  uint64_t h = 0x52495645ULL;
  int i;

  for (i = 0; i < gd->npart; i++) {
    h = river__mix64(h ^ gd->nrecords[i]);
    h = river__mix64(h ^ (uint64_t)gd->first_disk[i]);
    h = river__mix64(h ^ (uint64_t)gd->client_rank[i]);
  }
  for (i = 0; i < gd->ndisks; i++)
    h = river__mix64(h ^ (uint64_t)gd->disk_rank[i]);
  return h;
}

static int gd_copy_layout(river_gd *gd, const river_gd_layout *l,
                          const river_gd_opts *o)
{
  int p, d;

  gd->npart = l->npartitions;
  gd->ndisks = l->ndisks;
  gd->repl = l->replication;
  gd->record_size = l->record_size;
  gd->rpb = l->records_per_block;
  gd->block_bytes = l->records_per_block * l->record_size;
  gd->nrecords = malloc((size_t)gd->npart * sizeof *gd->nrecords);
  gd->first_disk = malloc((size_t)gd->npart * sizeof *gd->first_disk);
  gd->client_rank = malloc((size_t)gd->npart * sizeof *gd->client_rank);
  gd->disk_rank = malloc((size_t)gd->ndisks * sizeof *gd->disk_rank);
  gd->pnblocks = malloc((size_t)gd->npart * sizeof *gd->pnblocks);
  gd->progress = calloc((size_t)gd->npart, sizeof *gd->progress);
  if (!gd->nrecords || !gd->first_disk || !gd->client_rank
      || !gd->disk_rank || !gd->pnblocks || !gd->progress)
    return RIVER_ENOMEM;
  for (p = 0; p < gd->npart; p++) {
    gd->nrecords[p] = l->nrecords[p];
    gd->first_disk[p] = l->first_disk ? l->first_disk[p] : p % gd->ndisks;
    gd->client_rank[p] = o->client_ranks ? o->client_ranks[p]
                                         : p % gd->size;
    gd->pnblocks[p] = gd_nblocks(gd, p);
  }
  for (d = 0; d < gd->ndisks; d++)
    gd->disk_rank[d] = o->disk_ranks ? o->disk_ranks[d] : d % gd->size;
  return RIVER_SUCCESS;
}

static int gd_setup_client(river_gd *gd)
{
  int p, i, n = 0, r, *isserver;
  uint64_t seq = 0;
  size_t want;

  gd->local_of = malloc((size_t)gd->npart * sizeof *gd->local_of);
  if (gd->local_of == NULL)
    return RIVER_ENOMEM;
  for (p = 0; p < gd->npart; p++) {
    gd->local_of[p] = gd->client_rank[p] == gd->rank ? n++ : -1;
  }
  gd->nmine = n;
  gd->mine = calloc(n ? (size_t)n : 1, sizeof *gd->mine);
  if (gd->mine == NULL)
    return RIVER_ENOMEM;
  for (p = 0; p < gd->npart; p++)
    if ((i = gd->local_of[p]) >= 0) {
      struct gd_part *mp = &gd->mine[i];
      mp->p = p;
      mp->nblocks = gd->pnblocks[p];
      mp->seq0 = seq;
      seq += mp->nblocks;
    }
  if (gd->mode == RIVER_GD_STREAM)
    want = (size_t)gd->window + 1;
  else
    want = (size_t)gd->k * (size_t)gd->repl
               * (size_t)(n < GD_MAX_ACTIVE ? n : GD_MAX_ACTIVE) + 1;
  gd->nslots = n ? (int)want : 0;
  gd->slots = calloc(want, sizeof *gd->slots);
  gd->rreqs = calloc(want, sizeof *gd->rreqs);
  gd->idx = calloc(want, sizeof *gd->idx);
  if (!gd->slots || !gd->rreqs || !gd->idx)
    return RIVER_ENOMEM;
  for (i = 0; i < gd->nslots; i++) {
    gd->slots[i].rreq = gd->slots[i].sreq = MPI_REQUEST_NULL;
    if ((gd->slots[i].buf = malloc(GD_HDR + gd->block_bytes)) == NULL)
      return RIVER_ENOMEM;
  }
  /* Every rank that serves a disk hears DONE from every client rank. */
  isserver = calloc((size_t)gd->size, sizeof *isserver);
  if (isserver == NULL)
    return RIVER_ENOMEM;
  for (p = 0; p < gd->ndisks; p++)
    isserver[gd->disk_rank[p]] = 1;
  for (r = 0; r < gd->size; r++)
    gd->nservers += isserver[r];
  gd->servers = malloc((size_t)gd->nservers * sizeof *gd->servers + 1);
  gd->done_sreq = malloc((size_t)gd->nservers * sizeof *gd->done_sreq + 1);
  gd->done_msg = malloc((size_t)gd->nservers * sizeof *gd->done_msg + 1);
  for (i = 0; i < GD_PROG_SLOTS; i++)
    gd->prog_sreq[i] = MPI_REQUEST_NULL;
  if (gd->servers == NULL || gd->done_sreq == NULL || gd->done_msg == NULL) {
    free(isserver);
    return RIVER_ENOMEM;
  }
  for (n = 0, r = 0; r < gd->size; r++)
    if (isserver[r])
      gd->servers[n++] = r;
  free(isserver);
  /* A rank with no partitions is done at once (but still says so). */
  return RIVER_SUCCESS;
}

static int gd_setup_server(river_gd *gd)
{
  int d, p, c, n = 0, i, *isclient;
  double maxnb;

  gd->disk_local = malloc((size_t)gd->ndisks * sizeof *gd->disk_local);
  if (gd->disk_local == NULL)
    return RIVER_ENOMEM;
  for (d = 0; d < gd->ndisks; d++)
    gd->disk_local[d] = gd->disk_rank[d] == gd->rank ? n++ : -1;
  gd->nlocal = n;
  gd->disks = calloc(n ? (size_t)n : 1, sizeof *gd->disks);
  if (gd->disks == NULL)
    return RIVER_ENOMEM;
  for (d = 0; d < gd->ndisks; d++) {
    struct gd_disk *dk;
    if ((i = gd->disk_local[d]) < 0)
      continue;
    dk = &gd->disks[i];
    dk->d = d;
    dk->last = dk->last_stream = -1;
    for (p = 0; p < gd->npart; p++)
      for (c = 0; c < gd->repl; c++)
        dk->nstreams += gd_disk_of(gd, p, c) == d;
    dk->streams = calloc(dk->nstreams ? (size_t)dk->nstreams : 1,
                         sizeof *dk->streams);
    dk->prog = calloc(dk->nstreams ? (size_t)dk->nstreams : 1,
                      sizeof *dk->prog);
    dk->pend = calloc(dk->nstreams ? (size_t)dk->nstreams : 1,
                      sizeof *dk->pend);
    dk->bias = calloc(dk->nstreams ? (size_t)dk->nstreams : 1,
                      sizeof *dk->bias);
    if (!dk->streams || !dk->prog || !dk->pend || !dk->bias)
      return RIVER_ENOMEM;
    dk->nstreams = 0;
    maxnb = 1;
    for (p = 0; p < gd->npart; p++)
      for (c = 0; c < gd->repl; c++)
        if (gd_disk_of(gd, p, c) == d) {
          struct gd_stream *st = &dk->streams[dk->nstreams++];
          st->partition = p;
          st->copy = c;
          if ((st->q = calloc((size_t)gd->k, sizeof *st->q)) == NULL)
            return RIVER_ENOMEM;
          if ((double)gd->pnblocks[p] > maxnb)
            maxnb = (double)gd->pnblocks[p];
        }
    dk->bias_cap = GD_BIAS_CAP / maxnb;
    if (gd->rate > 0) {
      int rc = river_throttle_create(gd->rate, (double)gd->block_bytes,
                                     &dk->thr);
      if (rc != RIVER_SUCCESS)
        return rc;
      /* Start empty: no disk gets a free head start over the ideal. */
      river_throttle_consume(dk->thr, gd->block_bytes);
    }
  }
  if (n == 0)
    return RIVER_SUCCESS;
  gd->nsend = GD_SEND_SLOTS * n;
  gd->send = calloc((size_t)gd->nsend, sizeof *gd->send);
  if (gd->send == NULL)
    return RIVER_ENOMEM;
  for (i = 0; i < gd->nsend; i++) {
    gd->send[i].req = MPI_REQUEST_NULL;
    if ((gd->send[i].buf = malloc(GD_HDR + gd->block_bytes)) == NULL)
      return RIVER_ENOMEM;
  }
  isclient = calloc((size_t)gd->size, sizeof *isclient);
  if (isclient == NULL)
    return RIVER_ENOMEM;
  for (p = 0; p < gd->npart; p++)
    isclient[gd->client_rank[p]] = 1;
  for (i = 0; i < gd->size; i++)
    gd->nclients += isclient[i];
  free(isclient);
  return RIVER_SUCCESS;
}

static int gd_start(river_gd *gd)
{
  int rc;

  if (gd->nlocal > 0) {
    if ((rc = gd_post_req(gd)) != RIVER_SUCCESS)
      return rc;
    if (gd->nclients == 0) {
      MPI_Cancel(&gd->rreq);
      MPI_Wait(&gd->rreq, MPI_STATUS_IGNORE);
      gd->server_done = 1;
    }
  }
  if (gd->nmine == 0)
    gd->client_done = 1;  /* servers count only client ranks: nothing to
                             tell them either */
  return RIVER_SUCCESS;
}

int river_gd_create(MPI_Comm comm, const river_gd_layout *layout,
                    river_gd_read_fn read, void *ctx,
                    const river_gd_opts *opts, river_gd **out)
{
  static const char *const names[] = {
    "npartitions", "ndisks", "replication", "record_size",
    "records_per_block", "policy", "mode", "outstanding", "window",
    "disk_rate", "seek_seconds", "layout and rank arrays"};
  river_gd_opts o = RIVER_GD_OPTS_INIT;
  river_gd *gd = NULL;
  uint64_t v[12];
  int rc = RIVER_SUCCESS, size = 0, init = 0, fin = 0;

  if (out)
    *out = NULL;
  if (MPI_Initialized(&init) != MPI_SUCCESS || !init
      || MPI_Finalized(&fin) != MPI_SUCCESS || fin || comm == MPI_COMM_NULL)
    return RIVER_EINVAL;
  if (MPI_Comm_size(comm, &size) != MPI_SUCCESS)
    return RIVER_EINVAL;
  if (opts)
    o = *opts;
  /* Check what this rank can, then agree, so one bad rank cannot hang
   * the others. */
  if (layout == NULL || read == NULL || out == NULL) {
    river__error("gd create: %s is NULL", layout == NULL ? "layout"
                                          : read == NULL ? "read" : "out");
    rc = RIVER_EINVAL;
  }
  if (rc == RIVER_SUCCESS)
    rc = gd_check_layout(layout);
  if (rc == RIVER_SUCCESS)
    rc = gd_check_opts(&o, layout, size);
  if (rc == RIVER_SUCCESS && (gd = calloc(1, sizeof *gd)) == NULL)
    rc = RIVER_ENOMEM;
  if (gd) {
    gd->comm = MPI_COMM_NULL;
    gd->fail_part = -1;
    gd->size = size;
    MPI_Comm_rank(comm, &gd->rank);
    gd->policy = o.policy;
    gd->mode = o.mode;
    gd->striped = layout->order == RIVER_LAYOUT_INTERLEAVED;
    gd->k = o.outstanding ? o.outstanding : RIVER_GD_DEFAULT_OUTSTANDING;
    gd->rate = o.disk_rate;
    gd->seek = o.seek_seconds;
    gd->perturb = o.perturb;
    gd->read = read;
    gd->ctx = ctx;
    snprintf(gd->name, sizeof gd->name, "%s", "gd source");
    rc = gd_copy_layout(gd, layout, &o);
    gd->window = o.window ? (uint64_t)o.window
                          : (uint64_t)8 * (uint64_t)gd->k
                                * (uint64_t)layout->replication;
  }
  memset(v, 0, sizeof v);
  if (rc == RIVER_SUCCESS) {
    double rate = o.disk_rate, seek = o.seek_seconds;
    v[0] = (uint64_t)layout->npartitions;
    v[1] = (uint64_t)layout->ndisks;
    v[2] = (uint64_t)layout->replication;
    v[3] = layout->record_size;
    v[4] = layout->records_per_block;
    v[5] = (uint64_t)o.policy;
    v[6] = (uint64_t)o.mode;
    v[7] = (uint64_t)gd->k;
    v[8] = gd->window;
    memcpy(&v[9], &rate, sizeof rate);
    memcpy(&v[10], &seek, sizeof seek);
    v[11] = gd_hash(gd) ^ (uint64_t)layout->order;
  }
  rc = river__agree_same(comm, "gd create", rc, 12, names, v);
  if (rc == RIVER_SUCCESS && MPI_Comm_dup(comm, &gd->comm) != MPI_SUCCESS)
    rc = RIVER_EMPI;
  if (rc == RIVER_SUCCESS)
    rc = gd_setup_client(gd);
  if (rc == RIVER_SUCCESS)
    rc = gd_setup_server(gd);
  rc = river__agree(comm, rc);
  if (rc == RIVER_SUCCESS)
    rc = river__agree(comm, gd_start(gd));
  if (rc != RIVER_SUCCESS) {
    gd_free(gd);
    return rc;
  }
  MPI_Barrier(gd->comm);
  gd->t0 = river_wtime();
  *out = gd;
  return RIVER_SUCCESS;
}

/* river_gd_open's source: the collection's copies. */
static int gd_read_pcoll(void *ctx, int partition, int copy, int disk,
                         uint64_t block, void *buf, size_t bufsize,
                         size_t *nrecords)
{
  (void)disk;
  return river_pcoll_read_copy((river_pcoll *)ctx, partition, copy, block,
                               buf, bufsize, nrecords);
}

int river_gd_open(MPI_Comm comm, river_pcoll *pc, const river_gd_opts *opts,
                  river_gd **out)
{
  river_gd_layout l;
  river_pcoll_info info;
  river_pcoll_part part;
  uint64_t *nrec = NULL;
  int *first = NULL, p, rc = RIVER_SUCCESS;

  memset(&l, 0, sizeof l);
  if (pc == NULL || river_pcoll_info_get(pc, &info) != RIVER_SUCCESS) {
    river__error("gd open: %s", pc == NULL ? "the collection is NULL"
                                           : "not a collection reader");
    rc = RIVER_EINVAL;
  }
  if (rc == RIVER_SUCCESS) {
    nrec = malloc((size_t)info.npartitions * sizeof *nrec);
    first = malloc((size_t)info.npartitions * sizeof *first);
    if (nrec == NULL || first == NULL)
      rc = RIVER_ENOMEM;
  }
  for (p = 0; rc == RIVER_SUCCESS && p < info.npartitions; p++) {
    if ((rc = river_pcoll_partition(pc, p, &part)) != RIVER_SUCCESS) {
      river__error("gd open: collection %s is open for writing, not "
                   "reading", info.name);
      break;
    }
    nrec[p] = part.nrecords;
    first[p] = part.first_disk;
  }
  if (rc == RIVER_SUCCESS) {
    l.npartitions = info.npartitions;
    l.ndisks = info.ndisks;
    l.replication = info.replication;
    l.record_size = info.record_size;
    l.records_per_block = info.block_size / info.record_size;
    l.nrecords = nrec;
    l.first_disk = first;
    l.order = info.layout;
  }
  /* A bad rank passes a NULL layout so create fails everywhere. */
  rc = river_gd_create(comm, rc == RIVER_SUCCESS ? &l : NULL, gd_read_pcoll,
                       pc, opts, out);
  if (rc == RIVER_SUCCESS) {
    (*out)->pc = pc;
    snprintf((*out)->name, sizeof (*out)->name, "collection %s", info.name);
  }
  free(nrec);
  free(first);
  return rc;
}
