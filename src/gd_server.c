/*
 * gd_server.c - graduated declustering's disk side (see gd_internal.h for
 * the protocol): requests are queued per stream (one partition copy a
 * local disk stores), the allocator (src/gd_alloc.c) picks which stream
 * each disk serves next, the block is read through the handle's source,
 * paced by the disk's emulated rate and seek, and sent from one of a few
 * send slots. Driven by struct gd_disk (the streams' request rings and
 * the allocator's scratch) and struct gd_send; nothing here knows where
 * the blocks come from.
 */
#include "gd_internal.h"

#include <string.h>

static int post_req(river_gd *gd)
{
  if (river__watchdog_fired())   /* nothing new starts (src/agree.c) */
    return RIVER_ETIMEDOUT;
  return MPI_Irecv(&gd->rmsg, (int)sizeof gd->rmsg, MPI_BYTE, MPI_ANY_SOURCE,
                   GD_TAG_REQ, gd->comm, &gd->rreq) == MPI_SUCCESS
             ? RIVER_SUCCESS : RIVER_EMPI;
}

/* Stop listening for requests: the receive posted last will never match.
 * The wait after MPI_Cancel is local (MPI completes a cancelled receive
 * without any other rank). */
static int stop_listening(river_gd *gd)
{
  if (MPI_Cancel(&gd->rreq) != MPI_SUCCESS
      || MPI_Wait(&gd->rreq, MPI_STATUS_IGNORE) != MPI_SUCCESS)
    return RIVER_EMPI;
  gd->server_done = 1;
  return RIVER_SUCCESS;
}

int river__gd_server_start(river_gd *gd)
{
  int rc;

  if (gd->nlocal == 0)
    return RIVER_SUCCESS;
  if ((rc = post_req(gd)) != RIVER_SUCCESS)
    return rc;
  if (gd->nclients == 0)
    return stop_listening(gd);
  return RIVER_SUCCESS;
}

/* The stream of copy c of partition p at one of this rank's disks, or
 * NULL if this rank does not serve it. */
static struct gd_stream *stream_of(river_gd *gd, int p, int c)
{
  struct gd_disk *dk;
  int d, i;

  if (p < 0 || p >= gd->npart || c < 0 || c >= gd->repl
      || (d = gd->disk_local[river__gd_disk_of(gd, p, c)]) < 0)
    return NULL;
  dk = &gd->disks[d];
  for (i = 0; i < dk->nstreams; i++)
    if (dk->streams[i].partition == p && dk->streams[i].copy == c)
      return &dk->streams[i];
  return NULL;
}

/* A CANCEL (m) from rank src: if the request it names still waits in its
 * stream's ring (no disk has started it), take it out and queue its
 * header-only GD_CANCELLED reply (send_cancelled); else do nothing, and
 * the block goes out as usual. Either way the request gets one reply.
 * MPI keeps one sender's messages on one tag in order, so the request
 * arrived before its CANCEL. */
static int withdraw(river_gd *gd, const struct gd_req *m, int src)
{
  struct gd_stream *st = stream_of(gd, m->partition, m->target);
  int i, j;

  if (st == NULL) {
    river__error("%s: rank %d cancelled a request for partition %d copy "
                 "%d, which this rank does not serve", gd->name, src,
                 (int)m->partition, (int)m->target);
    return RIVER_ESTATE;
  }
  for (i = 0; i < st->count; i++) {
    struct gd_req *q = &st->q[(st->head + i) % gd->k];
    if (q->block != m->block || q->lo != m->lo)
      continue;
    st->cq[st->ncq++] = *q;
    /* Close the gap: later requests move up one place, keeping order. */
    for (j = i; j + 1 < st->count; j++) {
      st->q[(st->head + j) % gd->k] = st->q[(st->head + j + 1) % gd->k];
      st->qt[(st->head + j) % gd->k] = st->qt[(st->head + j + 1) % gd->k];
    }
    st->count--;
    return RIVER_SUCCESS;
  }
  return RIVER_SUCCESS;   /* started or sent already */
}

/* A request has arrived: note the progress, queue it at its stream
 * with the time it was taken in (disk_take). */
static int enqueue(river_gd *gd, const struct gd_req *m, int src)
{
  struct gd_stream *st;
  struct gd_disk *dk;

  if (m->copy == GD_MSG_DONE) {
    int i = river__gd_client_index(gd, src);
    if (i < 0 || gd->done_from[i]) {
      river__error("%s: rank %d said DONE %s", gd->name, src,
                   i < 0 ? "but reads no partition served here"
                         : "twice");
      return RIVER_ESTATE;
    }
    gd->done_from[i] = 1;
    gd->dones++;
    return RIVER_SUCCESS;
  }
  if (m->copy == GD_MSG_CANCEL)
    return withdraw(gd, m, src);
  if (m->copy == GD_MSG_PROGRESS && m->partition >= 0
      && m->partition < gd->npart) {
    if (m->progress > gd->progress[m->partition])
      gd->progress[m->partition] = m->progress;
    return RIVER_SUCCESS;
  }
  if ((st = stream_of(gd, m->partition, m->copy)) == NULL) {
    river__error("%s: rank %d sent a request for partition %d copy %d, "
                 "which this rank does not serve", gd->name, src,
                 (int)m->partition, (int)m->copy);
    return RIVER_ESTATE;
  }
  if (st->count + st->ncq >= gd->k) {
    river__error("%s: rank %d has more than %d requests out at partition "
                 "%d copy %d", gd->name, src, gd->k, (int)m->partition,
                 (int)m->copy);
    return RIVER_ESTATE;
  }
  dk = &gd->disks[gd->disk_local[river__gd_disk_of(gd, m->partition,
                                                   m->copy)]];
  st->q[(st->head + st->count) % gd->k] = *m;
  st->qt[(st->head + st->count) % gd->k] = river_wtime();
  st->count++;
  /* A woken partition reads here (a request neither a dormant or
   * planned partition's nor a probe): say so to the partitions that read
   * the disk by their plan, whom it slows, so that they wake too. (A
   * first copy's only such reader is its own partition, so for dormant
   * partitions this is as it was when only copies other than the first
   * counted.) */
  if (!(m->flags & (GD_REQ_PROBE | GD_REQ_PLANNED)))
    dk->shared = 1;
  if (m->progress > gd->progress[m->partition])
    gd->progress[m->partition] = m->progress;
  return RIVER_SUCCESS;
}

/* How many blocks partition p's client lags the client furthest ahead
 * of disk dk's others (by their latest reported progress; 0 if none is
 * ahead), in whole blocks with a margin for the fractions' rounding. */
static int client_lag(const river_gd *gd, const struct gd_disk *dk, int p)
{
  double nb = (double)gd->pnblocks[p], most = 0;
  int i;

  for (i = 0; i < dk->nstreams; i++) {
    double lag = (gd->progress[dk->streams[i].partition] - gd->progress[p])
                 * nb;
    if (lag > most)
      most = lag;
  }
  return most + 1e-9 >= (double)INT32_MAX ? INT32_MAX : (int)(most + 1e-9);
}

/* Send slot sl's block (its header and records) to its client, with
 * its disk's state as of now (gd_hdr.tserve, shared, lagging). */
static int send_block(river_gd *gd, struct gd_send *sl)
{
  const struct gd_disk *dk = &gd->disks[sl->disk];
  struct gd_hdr h;

  memcpy(&h, sl->buf, sizeof h);
  h.tserve = dk->tserve;
  h.shared = dk->shared;
  h.lagging = h.status == RIVER_SUCCESS && gd->policy == RIVER_GD_BALANCED
              ? client_lag(gd, dk, h.partition) : 0;
  memcpy(sl->buf, &h, sizeof h);
  sl->held = 0;
  if (river__watchdog_fired())   /* nothing new starts (src/agree.c) */
    return RIVER_ETIMEDOUT;
  if (MPI_Isend(sl->buf, sl->len, MPI_BYTE, sl->dest, GD_TAG_DATA, gd->comm,
                &sl->req) != MPI_SUCCESS)
    return RIVER_EMPI;
  return RIVER_SUCCESS;
}

/* Take in whatever requests and DONEs have arrived; send the held
 * blocks whose disks are done with them; finish sends. */
static int server_poll(river_gd *gd, int *busy)
{
  MPI_Status st;
  double now;
  int flag, rc, i;

  for (;;) {
    if (MPI_Test(&gd->rreq, &flag, &st) != MPI_SUCCESS)
      return RIVER_EMPI;
    if (!flag)
      break;
    *busy = 1;
    river__progress();   /* for the watchdog: a request came */
    if ((rc = enqueue(gd, &gd->rmsg, st.MPI_SOURCE)) != RIVER_SUCCESS)
      return rc;
    if ((rc = post_req(gd)) != RIVER_SUCCESS)
      return rc;
  }
  now = river_wtime();
  gd->next_due = 0;
  for (i = 0; i < gd->nsend; i++) {
    struct gd_send *sl = &gd->send[i];
    if (sl->held && now >= sl->send_at) {
      if ((rc = send_block(gd, sl)) != RIVER_SUCCESS)
        return rc;
      *busy = 1;
    } else if (sl->held) {
      if (gd->next_due == 0 || sl->send_at < gd->next_due)
        gd->next_due = sl->send_at;
    } else if (sl->busy) {
      if (MPI_Test(&sl->req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return RIVER_EMPI;
      if (flag) {
        sl->busy = 0;
        sl->free_at = now;
      }
    }
  }
  return RIVER_SUCCESS;
}

/* Count a seek if the disk switches streams, and charge n bytes (and
 * the seek) to the disk's emulated rate: returns when the disk is done
 * with them (river_wtime; now at real speed). The disk is busy until
 * then; the rank is not (the caller holds the block until then).
 *
 * When the disk starts is river__gd_disk_start's (src/gd_alloc.c): when
 * it is free and either had this request (`queued`, when the rank took
 * it in) and the send slot (`since`, when the rank saw it free), or a
 * block's time ago at most. The first is what a device with a queue
 * does while its rank waits for the CPU: on a shared node (28 ranks on
 * 2 cores) the rank may sleep through the moment its disk became free
 * with the request waiting, and with only the second (the token bucket
 * a block deep used before) that time was lost for good beyond a block:
 * in issue 13's twelfth session, in four of the five lost-disk runs
 * that missed their target, disks were done 6-10 ms after the fluid
 * ideal. The block is charged at the factor now. */
static double disk_take(river_gd *gd, struct gd_disk *dk, int partition,
                        size_t n, double queued, double since)
{
  double f = 1.0, f0 = 1.0, extra = 0, t, now = river_wtime(), start;

  if (dk->last >= 0 && dk->last != partition) {
    gd->stats.seeks++;
    extra = gd->seek;
  }
  dk->last = partition;
  if (!dk->emulated)
    return now;
  if (gd->perturb)
    river_perturb_factor(gd->perturb, RIVER_PERTURB_DISK, dk->d,
                         now - gd->t0, &f);
  /* The disk's time for a whole block at its emulated rate: its speed,
   * so neither the seek (a cost of switching streams, not of the disk)
   * nor a short last block counts. */
  t = (double)gd->block_bytes / (gd->rate * f);
  if (n > 0)
    dk->tserve = dk->tserve > 0 ? 0.75 * dk->tserve + 0.25 * t : t;
  /* The factor where the queue's credit would start the block. */
  start = queued > since ? queued : since;
  if (dk->ready_at > start)
    start = dk->ready_at;
  if (gd->perturb)
    river_perturb_factor(gd->perturb, RIVER_PERTURB_DISK, dk->d,
                         start - gd->t0, &f0);
  else
    f0 = f;
  start = river__gd_disk_start(dk->ready_at, queued, since, now, t, f0 == f);
  return start + extra + (double)n / (gd->rate * f);
}

/* The stream disk dk serves next, by the policy, or -1 if none has a
 * request. BALANCED stays with the last stream for up to run_blocks
 * blocks of lead (river_gd_opts; 0 by default); the baselines take
 * turns. */
static int pick_stream(river_gd *gd, struct gd_disk *dk)
{
  int i, last = dk->last_stream;
  double margin;

  for (i = 0; i < dk->nstreams; i++) {
    dk->pend[i] = dk->streams[i].count;
    dk->prog[i] = gd->progress[dk->streams[i].partition];
  }
  if (gd->policy != RIVER_GD_BALANCED)
    return river__gd_pick(NULL, dk->pend, dk->nstreams, &dk->cursor);
  /* A dormant partition's probe first. Served by lag, it waited while
   * its client led this disk's own by any fraction of a block (at equal
   * speeds, after a late start, as long as the read lasted), until the
   * end game moved it back (a block more at the first copy's disk, one
   * less here) and woke the ring. Served at once, every disk still
   * serves exactly its share; a client that really falls behind is told
   * so instead (gd_hdr.lagging) and wakes. */
  for (i = 0; i < dk->nstreams; i++)
    if (dk->streams[i].count > 0
        && (dk->streams[i].q[dk->streams[i].head].flags & GD_REQ_PROBE))
      return i;
  margin = last >= 0 ? (double)gd->run_blocks
                           / (double)(gd->pnblocks[dk->streams[last]
                                          .partition] + 1)
                     : 0.0;
  return river__gd_pick_balanced(dk->prog, dk->pend, dk->nstreams,
                                 &dk->cursor, last, margin, dk->bias,
                                 GD_GAIN, dk->bias_cap);
}

/* Read the block, or the piece of it, m asks for into buf + GD_HDR and
 * fill in its header h (status, dead, nrecords; a piece's lo, crc and
 * padlen). */
static void read_block(river_gd *gd, const struct gd_disk *dk,
                       const struct gd_req *m, unsigned char *buf,
                       struct gd_hdr *h)
{
  size_t nrec = 0, padlen = 0;
  uint64_t inblock = 0;
  uint32_t crc = 0;
  int dead = 0;

  memset(h, 0, sizeof *h);
  h->partition = m->partition;
  h->copy = m->copy;
  h->block = m->block;
  h->tried = m->tried;
  h->missing = m->missing;
  h->lo = m->lo;
  if (m->block < gd->pnblocks[m->partition]) {
    inblock = gd->nrecords[m->partition] - m->block * gd->rpb;
    if (inblock > gd->rpb)
      inblock = gd->rpb;
  }
  /* No client asks these: nothing to read. */
  if (inblock == 0 || (m->n > 0 && (gd->range == NULL || m->lo >= inblock
                                    || m->n > inblock - m->lo))) {
    h->status = RIVER_EINVAL;
  } else if (m->n > 0) {
    h->status = gd->range(gd->source_ctx, m->partition, m->copy, m->block,
                          m->lo, m->n, buf + GD_HDR, gd->msg_bytes, &padlen,
                          &crc, &dead);
    nrec = (size_t)m->n;
  } else {
    h->status = gd->source(gd->source_ctx, m->partition, m->copy, dk->d,
                           m->block, buf + GD_HDR, gd->block_bytes, &nrec,
                           &dead);
  }
  if (h->status == RIVER_SUCCESS
      && (nrec > gd->rpb
          || padlen > gd->msg_bytes - nrec * gd->record_size))
    h->status = RIVER_ECORRUPT;
  if (h->status != RIVER_SUCCESS) {
    nrec = 0;
    padlen = 0;
    h->dead = dead != 0;
  }
  h->nrecords = nrec;
  h->padlen = (int32_t)padlen;
  h->crc = crc;
}

/* Serve one block at local disk dk, if it has a request and a send slot
 * is free. */
static int serve_one(river_gd *gd, struct gd_disk *dk, int *busy)
{
  struct gd_send *sl = NULL;
  struct gd_stream *st;
  struct gd_req m;
  struct gd_hdr h;
  size_t bytes;
  double start = river_wtime(), took, queued;
  int i, s;

  if (dk->emulated && start < dk->ready_at)
    return RIVER_SUCCESS;   /* the emulated disk is still at work */
  for (i = 0; i < gd->nsend && sl == NULL; i++)
    if (!gd->send[i].busy)
      sl = &gd->send[i];
  if (sl == NULL || (s = pick_stream(gd, dk)) < 0)
    return RIVER_SUCCESS;
  st = &dk->streams[s];
  dk->last_stream = s;
  m = st->q[st->head];
  queued = st->qt[st->head];
  st->head = (st->head + 1) % gd->k;
  st->count--;
  *busy = 1;
  read_block(gd, dk, &m, sl->buf, &h);
  memcpy(sl->buf, &h, sizeof h);
  bytes = (size_t)h.nrecords * gd->record_size;
  sl->busy = 1;
  sl->dest = gd->client_rank[m.partition];
  sl->len = (int)(GD_HDR + bytes + (size_t)h.padlen);
  sl->disk = (int)(dk - gd->disks);
  sl->send_at = dk->ready_at = disk_take(gd, dk, m.partition, bytes,
                                         queued, sl->free_at);
  /* A real disk's time for a whole block: its read's, scaled up for a
   * short last block (disk_take times an emulated one). */
  if (!dk->emulated && h.status == RIVER_SUCCESS && bytes > 0
      && m.n == 0 && (took = sl->send_at - start) > 0) {
    /* (Not from a piece: scaled up from a few records, its time would
     * make the disk look slow and wake every plan that reads it.) */
    took *= (double)gd->block_bytes / (double)bytes;
    dk->tserve = dk->tserve > 0 ? 0.75 * dk->tserve + 0.25 * took : took;
  }
  if (dk->emulated) {
    sl->held = 1;   /* sent by server_poll once the disk is done */
    if (gd->next_due == 0 || sl->send_at < gd->next_due)
      gd->next_due = sl->send_at;
  } else if (send_block(gd, sl) != RIVER_SUCCESS) {
    return RIVER_EMPI;
  }
  if (h.status == RIVER_SUCCESS) {
    gd->stats.blocks_served++;
    gd->stats.bytes_served += bytes;
    st->served_blocks++;
    st->served_bytes += bytes;
    if (sl->send_at - gd->t0 > gd->stats.served_seconds)
      gd->stats.served_seconds = sl->send_at - gd->t0;
  }
  return RIVER_SUCCESS;
}

/* Reply GD_CANCELLED (a header, no records, no disk time) to the
 * requests withdrawn at dk's streams, while send slots are free. */
static int send_cancelled(river_gd *gd, struct gd_disk *dk, int *busy)
{
  struct gd_hdr h;
  int i, j = 0;

  for (i = 0; i < dk->nstreams; i++) {
    struct gd_stream *st = &dk->streams[i];
    while (st->ncq > 0) {
      const struct gd_req *m = &st->cq[st->ncq - 1];
      struct gd_send *sl = NULL;
      for (; j < gd->nsend && sl == NULL; j++)
        if (!gd->send[j].busy)
          sl = &gd->send[j];
      if (sl == NULL)
        return RIVER_SUCCESS;
      memset(&h, 0, sizeof h);
      h.partition = m->partition;
      h.copy = m->copy;
      h.block = m->block;
      h.tried = m->tried;
      h.missing = m->missing;
      h.lo = m->lo;
      h.status = GD_CANCELLED;
      memcpy(sl->buf, &h, sizeof h);
      sl->busy = 1;
      sl->dest = gd->client_rank[m->partition];
      sl->len = GD_HDR;
      sl->disk = (int)(dk - gd->disks);
      st->ncq--;
      *busy = 1;
      if (send_block(gd, sl) != RIVER_SUCCESS)
        return RIVER_EMPI;
    }
  }
  return RIVER_SUCCESS;
}

/* Every client of this rank's partitions has said DONE: with no send
 * left in flight and no request left queued (a client asks nothing
 * after DONE), stop. */
static int server_finish(river_gd *gd)
{
  int i, j;

  for (i = 0; i < gd->nsend; i++)
    if (gd->send[i].busy)
      return RIVER_SUCCESS;
  for (i = 0; i < gd->nlocal; i++)
    for (j = 0; j < gd->disks[i].nstreams; j++)
      if (gd->disks[i].streams[j].count || gd->disks[i].streams[j].ncq) {
        river__error("%s: requests left at disk %d after every client "
                     "finished", gd->name, gd->disks[i].d);
        return RIVER_ESTATE;
      }
  return stop_listening(gd);
}

int river__gd_server_step(river_gd *gd, int *busy)
{
  int rc, i;

  if (gd->server_done || gd->nlocal == 0)
    return RIVER_SUCCESS;
  if ((rc = server_poll(gd, busy)) != RIVER_SUCCESS)
    return rc;
  for (i = 0; i < gd->nlocal; i++)
    if ((rc = send_cancelled(gd, &gd->disks[i], busy)) != RIVER_SUCCESS
        || (rc = serve_one(gd, &gd->disks[i], busy)) != RIVER_SUCCESS)
      return rc;
  if (gd->dones == gd->nclients)
    return server_finish(gd);
  return RIVER_SUCCESS;
}
