/*
 * gd_client.c - graduated declustering's reading side (see gd_internal.h
 * for the protocol) and river_gd_next, the engine that steps both sides.
 * A client asks its partitions' blocks of their copies' disks, fails a
 * block over to another copy, reorders arrivals into its sequence in
 * stream mode, and reports its progress to the mirrors it is not reading
 * from. Driven by struct gd_slot (one reply buffer per block in flight:
 * the memory bound) and struct gd_part (per partition: blocks asked,
 * received, requests out per copy, dead copies, blocks to retry).
 */
#include "gd_internal.h"
#include "sched_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Block b of the client's partition i: its place in the client's
 * sequence (the write order). */
static uint64_t block_seq(const river_gd *gd, int i, uint64_t b)
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

/* A slot that can carry a new request, in *s (-1 if none now): FREE, and
 * the request it sent last has completed. Its reply may have landed in
 * another slot, so the send may still be in flight; MPI_Test it rather
 * than wait, since the server that must receive it may be busy (even
 * waiting for this rank), and the engine keeps stepping meanwhile. */
static int free_slot(river_gd *gd, int *s)
{
  int i, flag;

  *s = -1;
  for (i = 0; i < gd->nslots; i++) {
    struct gd_slot *sl = &gd->slots[i];
    if (sl->state != SLOT_FREE)
      continue;
    if (sl->sreq != MPI_REQUEST_NULL) {
      if (MPI_Test(&sl->sreq, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return RIVER_EMPI;
      if (!flag)
        continue;
    }
    *s = i;
    return RIVER_SUCCESS;
  }
  return RIVER_SUCCESS;
}

/* Note a request sent (m) in the table of requests out (a free entry
 * exists: there are no more requests out than posted slots). moved: it
 * may not be withdrawn (it was once, or it is a piece). */
static void note_ask(river_gd *gd, const struct gd_req *m, int moved)
{
  int a;

  for (a = 0; a < gd->nslots; a++)
    if (gd->asks[a].partition < 0)
      break;
  gd->asks[a].partition = m->partition;
  gd->asks[a].copy = m->copy;
  gd->asks[a].block = m->block;
  gd->asks[a].tried = m->tried;
  gd->asks[a].missing = m->missing;
  gd->asks[a].order = gd->nasked++;
  gd->asks[a].at = river_wtime();
  gd->asks[a].moved = moved || m->n > 0;
  gd->asks[a].probe = (m->flags & GD_REQ_PROBE) != 0;
  gd->asks[a].lo = m->lo;
  gd->asks[a].n = m->n;
}

/* Ask copy c of partition mp for block b from slot s (the caller found
 * the slot with free_slot and checked the copy may take another
 * request). moved: the block was withdrawn from another copy; flags:
 * GD_REQ_PROBE, a dormant partition's probe, or GD_REQ_PLANNED, a block
 * its plan reads there. n > 0: records lo..lo+n-1 only (a piece). */
static int ask_piece(river_gd *gd, struct gd_part *mp, int s, int c,
                     uint64_t b, uint64_t tried, uint64_t missing, int moved,
                     int flags, uint64_t lo, uint64_t n)
{
  struct gd_slot *sl = &gd->slots[s];
  int server = gd->disk_rank[river__gd_disk_of(gd, mp->p, c)];

  memset(&sl->msg, 0, sizeof sl->msg);
  sl->msg.partition = mp->p;
  sl->msg.copy = c;
  sl->msg.block = b;
  sl->msg.tried = tried;
  sl->msg.missing = missing;
  sl->msg.progress = mp->nblocks ? (double)mp->received / (double)mp->nblocks
                                 : 1.0;
  sl->msg.flags = flags;
  sl->msg.lo = lo;
  sl->msg.n = n;
  if (flags & GD_REQ_PROBE) {
    mp->probe_at = b + GD_PROBE_EVERY;
    mp->probes++;
  }
  if (river__watchdog_fired())   /* nothing new starts (src/agree.c) */
    return RIVER_ETIMEDOUT;
  if (MPI_Irecv(sl->buf, (int)(GD_HDR + gd->msg_bytes), MPI_BYTE,
                MPI_ANY_SOURCE, GD_TAG_DATA, gd->comm, &sl->rreq)
          != MPI_SUCCESS
      || MPI_Isend(&sl->msg, (int)sizeof sl->msg, MPI_BYTE, server,
                   GD_TAG_REQ, gd->comm, &sl->sreq) != MPI_SUCCESS)
    return RIVER_EMPI;
  sl->state = SLOT_POSTED;
  gd->rreqs[s] = sl->rreq;
  gd->posted++;
  mp->out[c]++;
  note_ask(gd, &sl->msg, moved);
  return RIVER_SUCCESS;
}

/* ask_piece for a whole block. */
static int ask(river_gd *gd, struct gd_part *mp, int s, int c, uint64_t b,
               uint64_t tried, uint64_t missing, int moved, int flags)
{
  return ask_piece(gd, mp, s, c, b, tried, missing, moved, flags, 0, 0);
}

/* How long copy c of mp has been silent: since its last block, or since
 * the first request out after it; 0 with nothing out. */
static double silent_for(const river_gd *gd, const struct gd_part *mp, int c,
                         double now)
{
  double from = now;
  int j;

  for (j = 0; j < gd->nslots; j++) {
    const struct gd_ask *a = &gd->asks[j];
    if (a->partition == mp->p && a->copy == c) {
      double since = a->at > mp->tlast[c] ? a->at : mp->tlast[c];
      if (since < from)
        from = since;
    }
  }
  return now - from;
}

/* Copy c's block time for mp as of now: the measured average, or, if
 * the copy has requests out and has delivered none for longer than
 * that, the time it has been silent (so a copy that stalls stops
 * counting as fast before its next block comes); 0: not measured. */
static double block_time(const river_gd *gd, const struct gd_part *mp,
                         int c, double now)
{
  double t = mp->tblock[c], silent;

  if (t <= 0 || mp->out[c] == 0)
    return t;
  silent = silent_for(gd, mp, c, now);
  return silent > t ? silent : t;
}

/* BALANCED: each copy's block time as of now (block_time, into t[]: a
 * copy that stalls stops being the fastest) and whether it may serve a
 * block whose failed copies are `tried` (usable[]); returns the usable
 * copy with the shortest, -1 if none is measured. */
static int fastest_copy(const river_gd *gd, const struct gd_part *mp,
                        uint64_t tried, double *t, unsigned char *usable)
{
  double now = river_wtime();
  int c;

  for (c = 0; c < gd->repl; c++) {
    t[c] = block_time(gd, mp, c, now);
    usable[c] = !((tried >> c) & 1) && !mp->dead[c];
  }
  return river__gd_fastest(gd->repl, usable, t);
}

/* Whether the n-th block out at copy c of mp would come after the
 * fastest copy `fast` could deliver all the rest (river__gd_too_late):
 * c at its average block time (its silence is not counted against it,
 * so copies of one speed are never refused), the fastest at t[fast]
 * (block_time: silence counts, the safe way). */
static int too_late(const struct gd_part *mp, const double *t, int c, int n,
                    int fast)
{
  return fast >= 0 && c != fast
         && river__gd_too_late(n, mp->tblock[c], mp->nblocks - mp->received,
                               t[fast], GD_SLOWER);
}

/* A dormant partition (river__gd_first_slower in src/gd_alloc.c says
 * why) wakes, and is BALANCED from then on. The other copies' block
 * times so far are its probes', each measured from its ask and so
 * counting the wait at a disk that served its own client first: they
 * would make those copies look slow to BALANCED (too_late, the end
 * game), so they start again unmeasured. */
static void wake(river_gd *gd, struct gd_part *mp)
{
  int c;

  /* A planned partition's block times are its regular reads': kept. */
  if (mp->planned) {
    /* Its block times were the plan's shares of its disks (a copy
     * with a small share looks slow): BALANCED measures them anew. */
    mp->planned = 0;
    gd->plan_woken++;
    for (c = 0; c < gd->repl; c++)
      mp->tblock[c] = 0;
  }
  if (!mp->dormant)
    return;
  mp->dormant = 0;
  for (c = 1; c < gd->repl; c++)
    mp->tblock[c] = 0;
}

/* Wake mp if its first copy's disk is slower than another's, or (with
 * `silence`), before that copy has delivered anything (so before its
 * disk's time is known), has been silent too long. Silence is not
 * counted later: replies wait in MPI while the application works
 * between river_gd_next calls, and a disk that slows says so in every
 * reply. */
static void check_wake(river_gd *gd, struct gd_part *mp, int silence)
{
  double silent = 0, quiet[RIVER_GD_MAX_REPLICATION];
  int c;

  if (mp->planned) {
    /* Silence counted in this partition's block times at each copy: a
     * copy that serves it a small share of its disk is heard from
     * seldom. */
    for (c = 0; c < gd->repl; c++)
      quiet[c] = silence && mp->tlast[c] <= 0 && mp->out[c] > 0
                     ? silent_for(gd, mp, c, river_wtime()) / mp->expect[c]
                     : 0;
    if (river__gd_plan_slower(gd->repl, mp->tserve, mp->dead, quiet,
                              GD_WAKE_SLOWER, GD_WAKE_SILENT))
      wake(gd, mp);
    return;
  }
  if (!mp->dormant)
    return;
  if (silence && mp->tlast[0] <= 0)
    silent = silent_for(gd, mp, 0, river_wtime());
  if (river__gd_first_slower(gd->repl, mp->tserve, mp->dead, silent,
                             GD_WAKE_SLOWER, GD_WAKE_SILENT))
    wake(gd, mp);
}

/* A copy that may take one more request for a block whose failed copies
 * are `tried`, by the policy; -1 if none now. `prefer` (-1: none): the
 * copy a withdrawn block goes to, waited for while it may still take
 * the block (so the block never returns to the copy it left). *left:
 * whether some copy could take it later (not tried, not dead). */
static int choose_copy(river_gd *gd, struct gd_part *mp,
                       uint64_t tried, int prefer, int *left)
{
  double t[RIVER_GD_MAX_REPLICATION];
  unsigned char usable[RIVER_GD_MAX_REPLICATION];
  int c, best, j;

  if (prefer >= 0 && !((tried >> prefer) & 1) && !mp->dead[prefer]) {
    *left = 1;
    return mp->out[prefer] < gd->k ? prefer : -1;
  }
  check_wake(gd, mp, 1);
  if (mp->planned)
    wake(gd, mp);   /* only a retry comes here (ask_new asks the plan) */
  if (mp->dormant && tried == 0 && !mp->dead[0]) {
    *left = 1;
    return river__gd_choose_dormant(gd->repl, gd->k, mp->out, mp->dead,
                                    mp->next, mp->probe_at, mp->probes);
  }
  if (mp->dormant)
    wake(gd, mp);   /* a retry, or the first copy died */
  if (gd->policy == RIVER_GD_BALANCED) {
    /* The fewest out, passing over a copy whose block would come only
     * after the fastest could deliver the rest (it may later: *left). */
    (void)fastest_copy(gd, mp, tried, t, usable);
    best = river__gd_choose_copy(gd->repl, gd->k, mp->out, usable,
                                 mp->tblock, t, mp->nblocks - mp->received,
                                 mp->rr, GD_SLOWER, left);
    if (best >= 0)
      mp->rr = (best + 1) % gd->repl;
    return best;
  }
  /* One fixed mirror: the first usable copy, and wait for it. */
  *left = 0;
  for (j = 0; j < gd->repl; j++) {
    c = (mp->rr + j) % gd->repl;
    if ((tried >> c) & 1 || mp->dead[c]
        || (gd->policy == RIVER_GD_NOMIRROR && c != 0))
      continue;
    *left = 1;
    return mp->out[c] < gd->k ? c : -1;
  }
  return -1;
}

/* Block `block` of mp has no copy left. The first such failure stops the
 * client asking for more (client_rc is set, always); the error is logged
 * once the replies still out have come (log_failure), naming the lowest
 * failed block, and the read fails with that block's verdict, so
 * neither depends on which reply MPI completed first. */
static int fail_block(river_gd *gd, struct gd_part *mp, uint64_t block,
                      uint64_t tried, uint64_t missing)
{
  int c;

  /* A copy that died before this block was asked there failed it too
   * (missing if it died missing): the verdict and the disks named do not
   * depend on whether the block was asked before or after the copy
   * died, nor on whether it was whole or split (which counts dead
   * copies as tried). */
  for (c = 0; c < gd->repl; c++)
    if (mp->dead[c]) {
      tried |= (uint64_t)1 << c;
      missing |= mp->gone & ((uint64_t)1 << c);
    }
  if (gd->fail_part < 0 || mp->p < gd->fail_part
      || (mp->p == gd->fail_part && block < gd->fail_block)) {
    gd->fail_part = mp->p;
    gd->fail_block = block;
    gd->fail_tried = tried;
    gd->fail_missing = missing;
    gd->fail_denied = mp->denied & tried;
    /* A copy refused for lack of permission may be intact: that, not
     * corruption, is the verdict. */
    gd->fail_rc = missing == tried ? RIVER_ENOTFOUND
                  : gd->fail_denied ? RIVER_EACCES : RIVER_ECORRUPT;
  }
  if (gd->client_rc == RIVER_SUCCESS)
    gd->client_rc = gd->fail_rc;
  return RIVER_SUCCESS;
}

static void log_failure(river_gd *gd)
{
  char disks[256] = "";
  size_t at = 0;
  int c, p = gd->fail_part,
      missing = gd->fail_missing == gd->fail_tried;

  if (p < 0)
    return;
  gd->client_rc = gd->fail_rc;   /* the named block's verdict */
  for (c = 0; c < gd->repl && at < sizeof disks - 16; c++)
    if ((gd->fail_tried >> c) & 1)
      at += (size_t)snprintf(disks + at, sizeof disks - at, "%s%d",
                             at ? ", " : "", river__gd_disk_of(gd, p, c));
  river__error("%s: partition %d block %llu: no readable copy (%s on disk%s "
               "%s%s)", gd->name, p, (unsigned long long)gd->fail_block,
               missing ? "missing" : gd->fail_denied ? "permission denied"
                                                     : "failed",
               strchr(disks, ',') ? "s" : "", disks,
               gd->policy == RIVER_GD_NOMIRROR ? "; other mirrors not tried: "
                                                 "nomirror policy" : "");
}

/* ------------------------------------------------------ progress reports */

/* Send mp's progress now to copy c from its report buffer rp (free). */
static int send_report(river_gd *gd, const struct gd_part *mp,
                       struct gd_report *rp, int c)
{
  memset(&rp->msg, 0, sizeof rp->msg);
  rp->msg.partition = mp->p;
  rp->msg.copy = GD_MSG_PROGRESS;
  rp->msg.progress = (double)mp->received / (double)mp->nblocks;
  if (river__watchdog_fired())   /* nothing new starts (src/agree.c) */
    return RIVER_ETIMEDOUT;
  return MPI_Isend(&rp->msg, (int)sizeof rp->msg, MPI_BYTE,
                   gd->disk_rank[river__gd_disk_of(gd, mp->p, c)],
                   GD_TAG_REQ, gd->comm, &rp->sreq) == MPI_SUCCESS
             ? RIVER_SUCCESS : RIVER_EMPI;
}

/* Whether rp's last send has completed (tested, not waited for). */
static int report_free(struct gd_report *rp, int *flag)
{
  *flag = 1;
  if (rp->sreq == MPI_REQUEST_NULL)
    return RIVER_SUCCESS;
  return MPI_Test(&rp->sreq, flag, MPI_STATUS_IGNORE) == MPI_SUCCESS
             ? RIVER_SUCCESS : RIVER_EMPI;
}

/* Tell every live mirror of mine[i] (but `except`) how far its client
 * is, so a disk that is not serving this client still knows whether it
 * lags (requests carry progress too, but only to the disk they go to).
 * A copy whose last report is still in flight gets this one later
 * (flush_reports). */
static int report(river_gd *gd, int i, int except)
{
  struct gd_part *mp = &gd->mine[i];
  int c, flag, rc;

  if (gd->policy != RIVER_GD_BALANCED)
    return RIVER_SUCCESS;
  for (c = 0; c < gd->repl; c++) {
    struct gd_report *rp = &gd->reports[(size_t)i * gd->repl + c];
    if (c == except || mp->dead[c] || rp->due)
      continue;
    if ((rc = report_free(rp, &flag)) != RIVER_SUCCESS)
      return rc;
    if (!flag) {
      rp->due = 1;
      gd->reports_due++;
    } else if ((rc = send_report(gd, mp, rp, c)) != RIVER_SUCCESS) {
      return rc;
    }
  }
  return RIVER_SUCCESS;
}

/* Send the reports that waited for their buffer, with today's progress,
 * once the buffer is free; drop those to copies that died meanwhile. */
static int flush_reports(river_gd *gd)
{
  int i, c, flag, rc;

  for (i = 0; gd->reports_due > 0 && i < gd->nmine; i++)
    for (c = 0; c < gd->repl; c++) {
      struct gd_report *rp = &gd->reports[(size_t)i * gd->repl + c];
      if (!rp->due)
        continue;
      if (!gd->mine[i].dead[c]) {
        if ((rc = report_free(rp, &flag)) != RIVER_SUCCESS)
          return rc;
        if (!flag)
          continue;
        if ((rc = send_report(gd, &gd->mine[i], rp, c)) != RIVER_SUCCESS)
          return rc;
      }
      rp->due = 0;
      gd->reports_due--;
    }
  return RIVER_SUCCESS;
}

/* ------------------------------------------------------------- replies */

/* Say that copy c of mp (just marked dead) is unusable, and where its
 * blocks go: the other mirrors only if one may still be read. */
static void warn_dead(const river_gd *gd, const struct gd_part *mp, int c,
                      int status)
{
  const char *next = "its blocks go to the other mirrors";
  int j, others = 0;

  for (j = 0; j < gd->repl; j++)
    others += j != c && !mp->dead[j]
              && (gd->policy != RIVER_GD_NOMIRROR || j == 0);
  if (gd->repl == 1)
    next = "it is the only copy: the partition's data cannot be read";
  else if (others == 0 && gd->policy == RIVER_GD_NOMIRROR)
    next = "the other mirrors are not read (nomirror policy): the "
           "partition's data cannot be read";
  else if (others == 0)
    next = "no other copy is usable: the partition's data cannot be read";
  river__warn("%s: partition %d: the copy on disk %d is unusable (%s); %s",
              gd->name, mp->p, river__gd_disk_of(gd, mp->p, c),
              river_strerror(status), next);
}

/* Start mp on the lost disk's plan: its copies that cannot be read are
 * dead from the outset (said here, as a failed read would), copy 0
 * reads records [0, x) and copy 1 the rest, x = gd->plan[p]; a block
 * that x falls inside is split in two pieces. */
int river__gd_client_plan(river_gd *gd, struct gd_part *mp)
{
  uint64_t x = gd->plan[mp->p], all = gd->nrecords[mp->p];
  int c;

  mp->dormant = 0;
  mp->planned = 1;
  for (c = 0; c < gd->repl; c++) {
    int st = gd->copy_status[(size_t)mp->p * gd->repl + c];
    if (st == RIVER_SUCCESS)
      continue;
    mp->dead[c] = 1;
    if (st == RIVER_EACCES)
      mp->denied |= (uint64_t)1 << c;
    if (st == RIVER_ENOTFOUND)
      mp->gone |= (uint64_t)1 << c;
    warn_dead(gd, mp, c, st);
  }
  /* Each copy's disk load (its share of its two partitions) over this
   * partition's share of it. */
  for (c = 0; c < 2; c++) {
    int d = river__gd_disk_of(gd, mp->p, c), q, j;
    double load = 0, mine = (double)(c == 0 ? x : all - x);
    for (q = 0; q < gd->npart; q++)
      for (j = 0; j < 2; j++)
        if (river__gd_disk_of(gd, q, j) == d)
          load += (double)(j == 0 ? gd->plan[q]
                                  : gd->nrecords[q] - gd->plan[q]);
    mp->expect[c] = mine > 0 ? load / mine : 1.0;
  }
  mp->top = mp->nblocks;
  mp->lim0 = x >= all ? mp->nblocks : x / gd->rpb;
  mp->lim1 = x >= all ? mp->nblocks : (x + gd->rpb - 1) / gd->rpb;
  mp->has_split = mp->lim0 < mp->lim1;
  mp->split_lo = x - mp->lim0 * gd->rpb;
  return RIVER_SUCCESS;
}

/* Put a block on mp's list of blocks to ask again (prefer: as
 * choose_copy's). The list holds at most the blocks that were out. */
static int push_retry(struct gd_part *mp, uint64_t block, uint64_t tried,
                      uint64_t missing, int prefer, int moved)
{
  if (mp->nretry == mp->capretry) {
    size_t cap = mp->capretry ? 2 * mp->capretry : 8;
    struct gd_retry *r = realloc(mp->retry, cap * sizeof *r);
    if (r == NULL)
      return RIVER_ENOMEM;
    mp->retry = r;
    mp->capretry = cap;
  }
  mp->retry[mp->nretry].block = block;
  mp->retry[mp->nretry].tried = tried;
  mp->retry[mp->nretry].missing = missing;
  mp->retry[mp->nretry].prefer = prefer;
  mp->retry[mp->nretry].moved = moved;
  mp->nretry++;
  return RIVER_SUCCESS;
}

/* A block failed at copy h->copy of mine[i]: mark the copy dead if the
 * server says so, and retry the block elsewhere or fail it (moved: it
 * had been withdrawn once; it stays so). */
static int failed(river_gd *gd, struct gd_part *mp, struct gd_hdr *h,
                  int moved)
{
  int left;

  h->tried |= (uint64_t)1 << h->copy;
  if (h->status == RIVER_ENOTFOUND)
    h->missing |= (uint64_t)1 << h->copy;
  if (h->status == RIVER_EACCES)
    mp->denied |= (uint64_t)1 << h->copy;
  if (h->dead && !mp->dead[h->copy]) {
    mp->dead[h->copy] = 1;
    if (h->status == RIVER_ENOTFOUND)
      mp->gone |= (uint64_t)1 << h->copy;
    warn_dead(gd, mp, h->copy, h->status);
  }
  gd->stats.failovers++;
  (void)choose_copy(gd, mp, h->tried, -1, &left);
  if (!left)
    return fail_block(gd, mp, h->block, h->tried, h->missing);
  if (gd->client_rc != RIVER_SUCCESS)
    return RIVER_SUCCESS;  /* failing already: ask nothing more */
  return push_retry(mp, h->block, h->tried, h->missing, -1, moved);
}

/* Whether copy c of planned partition mp has blocks of its plan still
 * to ask (its pieces are asked first). */
static int plan_left(const struct gd_part *mp, int c)
{
  return c == 0 ? mp->next < mp->lim0 : mp->top > mp->lim1;
}

/* The reply h (to mp) has come: take its request off the table of
 * requests out (*moved: whether it had been withdrawn once; *n: the
 * records it asked for, 0: the whole block), end the CANCEL that named
 * it, and time its copy. */
static int answered(river_gd *gd, struct gd_part *mp, const struct gd_hdr *h,
                    int *moved, uint64_t *n)
{
  struct gd_ask *a = NULL;
  double now, from, t;
  int j;

  for (j = 0; j < gd->nslots && a == NULL; j++)
    if (gd->asks[j].partition == mp->p && gd->asks[j].copy == h->copy
        && gd->asks[j].block == h->block && gd->asks[j].lo == h->lo)
      a = &gd->asks[j];
  if (a == NULL) {
    river__error("%s: a reply for partition %d copy %d block %llu, which "
                 "this rank did not ask for", gd->name, mp->p, (int)h->copy,
                 (unsigned long long)h->block);
    return RIVER_ESTATE;
  }
  if (mp->cancelling == (int)(a - gd->asks))
    mp->cancelling = -1;
  a->partition = -1;
  *moved = a->moved;
  *n = a->n;
  if (h->tserve > 0)
    mp->tserve[h->copy] = h->tserve;
  /* Dormant: a read failed, or the first copy's disk is shared with a
   * woken partition (it will serve this one less), or its client lags
   * another of that disk's while blocks are still to be asked (after
   * the last ask the disk hears no more of this client's progress, so
   * its figure is stale by the requests out, and there is nothing left
   * to spread), or the disk is slower (silence is choose_copy's to
   * judge). */
  if ((h->status != RIVER_SUCCESS && h->status != GD_CANCELLED)
      || (mp->dormant && h->copy == 0
          && (h->shared
              || (h->lagging >= GD_WAKE_LAG && mp->next < mp->nblocks))))
    wake(gd, mp);
  /* Planned: the same of every copy it reads by its plan. */
  if (mp->planned
      && (h->shared || (h->lagging >= GD_PLAN_LAG && plan_left(mp, h->copy))))
    wake(gd, mp);
  check_wake(gd, mp, 0);
  if (h->status != RIVER_SUCCESS)
    return RIVER_SUCCESS;
  if (a->n > 0) {   /* a piece: not a block's time */
    mp->tlast[h->copy] = river_wtime();
    return RIVER_SUCCESS;
  }
  /* A block's time at this copy: from when the copy last delivered, or
   * from the ask if it was idle since; a moving average. */
  now = river_wtime();
  from = a->at > mp->tlast[h->copy] ? a->at : mp->tlast[h->copy];
  t = now - from;
  mp->tlast[h->copy] = now;
  mp->tblock[h->copy] = mp->tblock[h->copy] > 0
                            ? 0.75 * mp->tblock[h->copy] + 0.25 * t : t;
  return RIVER_SUCCESS;
}

/* The split block's pieces can no longer make it whole (one failed or
 * the assembled block did not match its checksum): once none is out,
 * read it whole instead, of the copies its pieces did not fail at
 * first, through the retry list (the disks verify whole blocks and
 * fail over as for any other). */
static int piece_retry(river_gd *gd, struct gd_part *mp)
{
  int c;

  for (c = 0; c < 2; c++)
    if (mp->piece[c] == PIECE_OUT)
      return RIVER_SUCCESS;
  mp->piece[0] = mp->piece[1] = PIECE_FAILED;
  if (mp->asmbuf == NULL)
    return RIVER_SUCCESS;   /* done already */
  free(mp->asmbuf);
  mp->asmbuf = NULL;
  wake(gd, mp);
  if (gd->client_rc != RIVER_SUCCESS)
    return RIVER_SUCCESS;   /* failing already: ask nothing more */
  /* Whole, of every copy not dead: a piece's failure (a transient read
   * error) does not fail the block before a whole read has. */
  for (c = 0; c < 2; c++)
    if (!mp->dead[c])
      mp->piece_tried &= ~((uint64_t)1 << c);
  mp->piece_missing &= mp->piece_tried;
  if (mp->piece_tried == 3)
    return fail_block(gd, mp, mp->lim0, mp->piece_tried, mp->piece_missing);
  return push_retry(mp, mp->lim0, mp->piece_tried, mp->piece_missing, -1, 0);
}

/* A piece of mp's split block has come in slot s (header h; its ask
 * wanted n records). Copy it into the block being assembled; once both
 * are in and the block's checksum matches, slot s holds the whole block,
 * READY (*whole set). */
static int piece_arrived(river_gd *gd, struct gd_part *mp, int s,
                         struct gd_hdr *h, uint64_t n, int *whole)
{
  struct gd_slot *sl = &gd->slots[s];
  uint64_t inblock = gd->nrecords[mp->p] - mp->lim0 * gd->rpb;
  size_t data, off;
  uint32_t crc = 0;
  int c = h->copy;
  unsigned char *tmp;

  *whole = 0;
  if (inblock > gd->rpb)
    inblock = gd->rpb;
  if (!mp->has_split || h->block != mp->lim0 || c > 1
      || mp->piece[c] != PIECE_OUT || mp->asmbuf == NULL) {
    river__error("%s: partition %d: a piece of block %llu this rank did "
                 "not ask for", gd->name, mp->p,
                 (unsigned long long)h->block);
    return RIVER_ESTATE;
  }
  if (h->status != RIVER_SUCCESS) {
    mp->piece[c] = PIECE_FAILED;
    if (h->status != GD_CANCELLED) {
      mp->piece_tried |= (uint64_t)1 << c;
      if (h->status == RIVER_ENOTFOUND)
        mp->piece_missing |= (uint64_t)1 << c;
      if (h->status == RIVER_EACCES)
        mp->denied |= (uint64_t)1 << c;
      if (h->dead && !mp->dead[c]) {
        mp->dead[c] = 1;
        if (h->status == RIVER_ENOTFOUND)
          mp->gone |= (uint64_t)1 << c;
        warn_dead(gd, mp, c, h->status);
      }
      gd->stats.failovers++;
    }
    return piece_retry(gd, mp);
  }
  if (h->nrecords != n || h->lo != (c == 0 ? 0 : mp->split_lo)
      || (c == 0 && h->padlen != 0) || h->padlen < 0
      || (size_t)h->padlen > gd->msg_bytes - inblock * gd->record_size) {
    river__error("%s: partition %d block %llu: a piece came with records "
                 "%llu+%llu and %d bytes of padding, not as asked",
                 gd->name, mp->p, (unsigned long long)h->block,
                 (unsigned long long)h->lo, (unsigned long long)h->nrecords,
                 (int)h->padlen);
    return RIVER_ESTATE;
  }
  off = (size_t)h->lo * gd->record_size;
  data = (size_t)n * gd->record_size;
  memcpy(mp->asmbuf + GD_HDR + off, sl->buf + GD_HDR, data + (size_t)h->padlen);
  if (c == 1)
    mp->padlen = (size_t)h->padlen;
  if (mp->piece[0] == PIECE_GOT || mp->piece[1] == PIECE_GOT)
    mp->crc_differs |= h->crc != mp->piece_crc;
  mp->piece_crc = h->crc;
  mp->piece[c] = PIECE_GOT;
  if (mp->piece[1 - c] != PIECE_GOT)
    return mp->piece[1 - c] == PIECE_FAILED ? piece_retry(gd, mp)
                                            : RIVER_SUCCESS;
  /* Both in: the block's whole extent against its stored checksum. */
  data = (size_t)inblock * gd->record_size;
  river_crc32c(mp->asmbuf + GD_HDR, data + mp->padlen, &crc);
  if (mp->crc_differs || crc != mp->piece_crc) {
    river__warn("%s: partition %d block %llu: the block assembled from its "
                "pieces on disks %d and %d does not match its checksum; "
                "reading it whole", gd->name, mp->p,
                (unsigned long long)mp->lim0, river__gd_disk_of(gd, mp->p, 0),
                river__gd_disk_of(gd, mp->p, 1));
    return piece_retry(gd, mp);
  }
  /* Slot s takes the assembled buffer (and gives its own, same size). */
  tmp = sl->buf;
  sl->buf = mp->asmbuf;
  free(tmp);
  mp->asmbuf = NULL;
  h->lo = 0;
  h->nrecords = inblock;
  memcpy(sl->buf, h, sizeof *h);
  gd->pieces++;
  *whole = 1;
  return RIVER_SUCCESS;
}

/* A reply has arrived in slot s. */
static int arrived(river_gd *gd, int s)
{
  struct gd_slot *sl = &gd->slots[s];
  struct gd_hdr h;
  struct gd_part *mp;
  uint64_t want, n;
  int i, rc, moved, whole;

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
  if ((rc = answered(gd, mp, &h, &moved, &n)) != RIVER_SUCCESS)
    return rc;
  if (n > 0) {
    if ((rc = piece_arrived(gd, mp, s, &h, n, &whole)) != RIVER_SUCCESS)
      return rc;
    if (!whole) {
      sl->state = SLOT_FREE;
      return RIVER_SUCCESS;
    }
  }
  if (h.status == GD_CANCELLED) {
    sl->state = SLOT_FREE;
    gd->stats.cancelled++;
    if (gd->client_rc != RIVER_SUCCESS)
      return RIVER_SUCCESS;  /* failing already: ask nothing more */
    return push_retry(mp, h.block, h.tried, h.missing, mp->cancel_to, 1);
  }
  if (h.status != RIVER_SUCCESS) {
    sl->state = SLOT_FREE;
    return failed(gd, mp, &h, moved);
  }
  want = h.block + 1 < mp->nblocks ? gd->rpb
                                   : gd->nrecords[mp->p] - h.block * gd->rpb;
  if (h.nrecords != want) {
    river__error("%s: partition %d block %llu came with %llu records, "
                 "expected %llu", gd->name, mp->p,
                 (unsigned long long)h.block,
                 (unsigned long long)h.nrecords, (unsigned long long)want);
    return RIVER_ESTATE;
  }
  mp->received++;
  if (mp->received < mp->nblocks
      && (rc = report(gd, i, h.copy)) != RIVER_SUCCESS)
    return rc;
  gd->stats.blocks_received++;
  gd->stats.bytes_received += h.nrecords * gd->record_size;
  if (mp->received == mp->nblocks)
    gd->stats.seconds = river_wtime() - gd->t0;
  sl->state = SLOT_READY;
  sl->seq = block_seq(gd, i, h.block);
  sl->arrival = gd->arrivals++;
  return RIVER_SUCCESS;
}

/* ------------------------------------------------------------- asking */

/* Ask again for mp's failed blocks, of copies not yet tried. */
static int ask_retries(river_gd *gd, struct gd_part *mp, int *busy)
{
  size_t r = 0;
  int s, c, left, rc;

  while (r < mp->nretry) {
    struct gd_retry *rt = &mp->retry[r];
    if ((rc = free_slot(gd, &s)) != RIVER_SUCCESS)
      return rc;
    if (s < 0)
      break;
    c = choose_copy(gd, mp, rt->tried, rt->prefer, &left);
    if (!left)  /* its last copies died since it failed */
      return fail_block(gd, mp, rt->block, rt->tried, rt->missing);
    if (c < 0) {
      r++;
      continue;
    }
    if ((rc = ask(gd, mp, s, c, rt->block, rt->tried, rt->missing,
                  rt->moved, 0)) != RIVER_SUCCESS)
      return rc;
    *busy = 1;
    mp->retry[r] = mp->retry[--mp->nretry];
  }
  return RIVER_SUCCESS;
}

/* Ask for mine[i]'s blocks never asked for, in ascending order (in
 * stream mode only within the window). */
/* Ask for the pieces of mp's split block not yet asked, each of the
 * copy its plan gives it (whether or not mp has woken since: a piece
 * is a fixed range), before any other block. */
static int ask_pieces(river_gd *gd, struct gd_part *mp, int *busy)
{
  uint64_t inblock = gd->nrecords[mp->p] - mp->lim0 * gd->rpb;
  int c, s, rc;

  if (!mp->has_split || mp->asmbuf == NULL)
    return RIVER_SUCCESS;
  if (inblock > gd->rpb)
    inblock = gd->rpb;
  for (c = 0; c < 2; c++) {
    if (mp->piece[c] != PIECE_NONE || mp->out[c] >= gd->k)
      continue;
    if (mp->dead[c]) {   /* died since the plan was made */
      mp->piece[c] = PIECE_FAILED;
      mp->piece_tried |= (uint64_t)1 << c;
      mp->piece_missing |= mp->gone & ((uint64_t)1 << c);
      return piece_retry(gd, mp);
    }
    if ((rc = free_slot(gd, &s)) != RIVER_SUCCESS || s < 0)
      return rc;
    if ((rc = ask_piece(gd, mp, s, c, mp->lim0, 0, 0, 1, GD_REQ_PLANNED,
                        c == 0 ? 0 : mp->split_lo,
                        c == 0 ? mp->split_lo : inblock - mp->split_lo))
        != RIVER_SUCCESS)
      return rc;
    mp->piece[c] = PIECE_OUT;
    *busy = 1;
  }
  return RIVER_SUCCESS;
}

/* A planned partition's new blocks: copy 0 its share from the bottom
 * up, copy 1 its share from the top down, up to k out at each. */
static int ask_planned(river_gd *gd, struct gd_part *mp, int *busy)
{
  int s, rc, more = 1;

  while (more) {
    more = 0;
    if (mp->next < mp->lim0 && mp->out[0] < gd->k && !mp->dead[0]) {
      if ((rc = free_slot(gd, &s)) != RIVER_SUCCESS || s < 0)
        return rc;
      if ((rc = ask(gd, mp, s, 0, mp->next, 0, 0, 0, GD_REQ_PLANNED))
          != RIVER_SUCCESS)
        return rc;
      mp->next++;
      more = *busy = 1;
    }
    if (mp->top > mp->lim1 && mp->out[1] < gd->k && !mp->dead[1]) {
      if ((rc = free_slot(gd, &s)) != RIVER_SUCCESS || s < 0)
        return rc;
      if ((rc = ask(gd, mp, s, 1, mp->top - 1, 0, 0, 0, GD_REQ_PLANNED))
          != RIVER_SUCCESS)
        return rc;
      mp->top--;
      more = *busy = 1;
    }
  }
  return RIVER_SUCCESS;
}

/* Whether every block of mp has been asked for (the split block is its
 * pieces', or the retry list's). */
static int all_asked(struct gd_part *mp)
{
  if (mp->has_split && mp->next == mp->lim0)
    mp->next++;
  return mp->next >= mp->top;
}

/* Ask for mine[i]'s blocks never asked for, in ascending order (in
 * stream mode only within the window); a planned partition's by its
 * plan, its pieces first. */
static int ask_new(river_gd *gd, int i, int *busy)
{
  struct gd_part *mp = &gd->mine[i];
  int s, c, left, rc;

  if ((rc = ask_pieces(gd, mp, busy)) != RIVER_SUCCESS
      || gd->client_rc != RIVER_SUCCESS)
    return rc;
  if (mp->planned)
    check_wake(gd, mp, 1);
  if (mp->planned)
    return ask_planned(gd, mp, busy);
  while (!all_asked(mp)
         && (gd->mode == RIVER_GD_UNORDERED
             || block_seq(gd, i, mp->next) < gd->dseq + gd->window)) {
    if ((rc = free_slot(gd, &s)) != RIVER_SUCCESS)
      return rc;
    if (s < 0)
      break;
    c = choose_copy(gd, mp, 0, -1, &left);
    if (!left)
      return fail_block(gd, mp, mp->next, 0, 0);
    if (c < 0)
      break;
    /* choose_copy may have woken it: flags as of now. */
    if ((rc = ask(gd, mp, s, c, mp->next, 0, 0, 0,
                  !mp->dormant ? 0 : c == 0 ? GD_REQ_PLANNED
                                            : GD_REQ_PROBE))
        != RIVER_SUCCESS)
      return rc;
    *busy = 1;
    mp->next++;
  }
  return RIVER_SUCCESS;
}

/* The request of mp asked last at a copy other than `to`, not withdrawn
 * before and never failed at `to`; NULL if none. c >= 0: at copy c
 * only. */
static const struct gd_ask *last_ask(const river_gd *gd,
                                     const struct gd_part *mp, int to, int c)
{
  const struct gd_ask *best = NULL;
  int j;

  for (j = 0; j < gd->nslots; j++) {
    const struct gd_ask *a = &gd->asks[j];
    if (a->partition == mp->p && a->copy != to && (c < 0 || a->copy == c)
        && !a->moved && !((a->tried >> to) & 1)
        && (best == NULL || a->order > best->order))
      best = a;
  }
  return best;
}

/* The end game (BALANCED), two cases, with no block of mp to ask again:
 * (1) mp has asked for every block, so a copy with nothing out stays
 * idle while another copy's queue finishes the partition: withdraw the
 * block asked last at the busy copy when it would wait there, behind
 * out[b] blocks, longer than GD_MOVE_GAIN block times of the idle copy,
 * and the busy copy is slower than the idle one by GD_SLOWER, not merely
 * busier (river__gd_worth_moving); (2) at any time, a copy's last block
 * would come only after the fastest copy could deliver all the rest
 * (too_late): withdraw it. A CANCEL goes to the busy copy's server; the
 * reply (GD_CANCELLED, or the block if the disk had started it) ends
 * the CANCEL, and a withdrawn block is asked of the copy it was moved
 * to (push_retry with prefer), waiting for it if it is full. One CANCEL
 * per partition at a time, and each block is withdrawn at most once
 * (moved, kept across a failure). */
static int end_game(river_gd *gd, struct gd_part *mp, int *busy)
{
  const struct gd_ask *best = NULL;
  double t[RIVER_GD_MAX_REPLICATION];
  unsigned char usable[RIVER_GD_MAX_REPLICATION];
  int c, idle = -1, flag, server;

  /* Not while planned: a copy's block time there is the share of its
   * disk the plan gives this partition (a small share looks slow), and
   * a disk that is slow says so in tserve, which wakes the partition. */
  if (gd->policy != RIVER_GD_BALANCED || mp->nretry > 0
      || mp->cancelling >= 0 || mp->planned)
    return RIVER_SUCCESS;
  /* Every block asked, a copy idle, a slower copy's queue finishing the
   * partition: move the last block queued there. */
  if (all_asked(mp)) {
    for (c = 0; c < gd->repl; c++)
      if (!mp->dead[c] && mp->out[c] == 0
          && (idle < 0 || (mp->tblock[c] > 0
                           && (mp->tblock[idle] <= 0
                               || mp->tblock[c] < mp->tblock[idle]))))
        idle = c;
    if (idle >= 0 && (best = last_ask(gd, mp, idle, -1)) != NULL
        && !river__gd_worth_moving(mp->out[best->copy],
                                   mp->tblock[best->copy], mp->tblock[idle],
                                   GD_MOVE_GAIN, GD_SLOWER))
      best = NULL;
  }
  /* Or, at any time, a slower copy's last block would come only after
   * the fastest copy could deliver all the rest: move it there. */
  if (best == NULL && (idle = fastest_copy(gd, mp, 0, t, usable)) >= 0)
    for (c = 0; c < gd->repl && best == NULL; c++)
      if (mp->out[c] > 0 && too_late(mp, t, c, mp->out[c], idle))
        best = last_ask(gd, mp, idle, c);
  if (best == NULL)
    return RIVER_SUCCESS;
  if (mp->csreq != MPI_REQUEST_NULL) {
    if (MPI_Test(&mp->csreq, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return RIVER_EMPI;
    if (!flag)
      return RIVER_SUCCESS;
  }
  memset(&mp->cmsg, 0, sizeof mp->cmsg);
  mp->cmsg.partition = mp->p;
  mp->cmsg.copy = GD_MSG_CANCEL;
  mp->cmsg.target = best->copy;
  mp->cmsg.block = best->block;
  server = gd->disk_rank[river__gd_disk_of(gd, mp->p, best->copy)];
  if (river__watchdog_fired())   /* nothing new starts (src/agree.c) */
    return RIVER_ETIMEDOUT;
  if (MPI_Isend(&mp->cmsg, (int)sizeof mp->cmsg, MPI_BYTE, server,
                GD_TAG_REQ, gd->comm, &mp->csreq) != MPI_SUCCESS)
    return RIVER_EMPI;
  mp->cancelling = (int)(best - gd->asks);
  mp->cancel_to = idle;
  gd->probes_moved += best->probe != 0;
  wake(gd, mp);   /* moving blocks: awake from now on */
  gd->stats.cancels++;
  *busy = 1;
  return RIVER_SUCCESS;
}

/* Ask for what may be asked: failed blocks first, then new ones, then
 * the end game's CANCEL. Once a block has failed for good (client_rc
 * set), nothing more. */
static int issue(river_gd *gd, int *busy)
{
  int i, rc, active = 0;

  for (i = 0; i < gd->nmine && gd->client_rc == RIVER_SUCCESS; i++) {
    struct gd_part *mp = &gd->mine[i];
    if (mp->received == mp->nblocks)
      continue;
    if (gd->mode == RIVER_GD_UNORDERED && active++ >= GD_MAX_ACTIVE)
      break;
    if ((rc = ask_retries(gd, mp, busy)) != RIVER_SUCCESS)
      return rc;
    if (gd->client_rc == RIVER_SUCCESS
        && (rc = ask_new(gd, i, busy)) != RIVER_SUCCESS)
      return rc;
    if (gd->client_rc == RIVER_SUCCESS
        && (rc = end_game(gd, mp, busy)) != RIVER_SUCCESS)
      return rc;
  }
  return RIVER_SUCCESS;
}

static int send_dones(river_gd *gd)
{
  int i;

  /* On the request tag: MPI keeps one sender's messages on one tag in
   * order, so a server has all of this client's messages once it has
   * its DONE. No report may follow: drop those still waiting (the
   * servers need no progress of a client that is done). */
  for (i = 0; i < gd->nmine * gd->repl; i++)
    gd->reports[i].due = 0;
  gd->reports_due = 0;
  if (river__watchdog_fired())   /* nothing new starts (src/agree.c) */
    return RIVER_ETIMEDOUT;
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

static int client_step(river_gd *gd, int *busy)
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
      if ((rc = arrived(gd, gd->idx[i])) != RIVER_SUCCESS)
        return rc;
      *busy = 1;
      river__progress();   /* for the watchdog: a block came */
    }
  }
  if ((rc = flush_reports(gd)) != RIVER_SUCCESS
      || (rc = issue(gd, busy)) != RIVER_SUCCESS)
    return rc;
  for (i = 0; i < gd->nmine; i++)
    all = all && gd->mine[i].received == gd->mine[i].nblocks;
  if ((all || gd->client_rc != RIVER_SUCCESS) && gd->posted == 0) {
    log_failure(gd);
    gd->client_done = 1;
    *busy = 1;
    return send_dones(gd);
  }
  return RIVER_SUCCESS;
}

/* The next READY slot to deliver, or -1. */
static int deliverable(const river_gd *gd)
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

/* Hand slot s's block to the caller; it stays HELD until the next call. */
static void deliver(river_gd *gd, int s, const void **records,
                    size_t *nrecords, int *partition, uint64_t *block)
{
  struct gd_slot *sl = &gd->slots[s];
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
}

/* The watchdog ended river_gd_next's wait: log it, naming the server
 * ranks this client's posted requests wait for, or, with none posted,
 * the ranks whose DONE this rank's server waits for. RIVER_ETIMEDOUT. */
static int gd_timeout(river_gd *gd)
{
  int ranks[64], n = 0, i, j, r;

  for (i = 0; i < gd->nslots && n < 64; i++) {
    const struct gd_slot *sl = &gd->slots[i];
    if (sl->state != SLOT_POSTED)
      continue;
    r = gd->disk_rank[river__gd_disk_of(gd, sl->msg.partition,
                                        sl->msg.copy)];
    for (j = 0; j < n && ranks[j] != r; j++)
      ;
    if (j == n)
      ranks[n++] = r;
  }
  if (n > 0)
    return river__timeout_error(gd->comm, ranks, n, "graduated "
                                "declustering waiting for blocks it asked "
                                "for");
  for (i = 0; gd->nlocal > 0 && !gd->server_done && i < gd->nclients
              && n < 64; i++)
    if (!gd->done_from[i])
      ranks[n++] = gd->clients[i];
  return river__timeout_error(gd->comm, ranks, n, "graduated declustering "
                              "waiting for its readers to finish");
}

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
    rc = river__gd_server_step(gd, &busy);
    if (rc == RIVER_SUCCESS)
      rc = client_step(gd, &busy);
    if (rc != RIVER_SUCCESS) {
      gd->fatal = rc;
      return rc;
    }
    if (gd->client_rc == RIVER_SUCCESS && (i = deliverable(gd)) >= 0) {
      deliver(gd, i, records, nrecords, partition, block);
      return RIVER_SUCCESS;
    }
    if (gd->client_done && (gd->server_done || gd->nlocal == 0)) {
      *records = NULL;
      *nrecords = 0;
      return gd->client_rc != RIVER_SUCCESS ? gd->client_rc : RIVER_EOS;
    }
    if (busy)
      ns = RIVER_BACKOFF_START;
    else if (gd->next_due > 0 && river__sched_current() == NULL
             && gd->next_due - river_wtime() < 1e-3)
      river__sleep_until(gd->next_due);   /* a held block is due: on time */
    else if (river__backoff(&ns) != RIVER_SUCCESS) {
      gd->fatal = gd_timeout(gd);
      return gd->fatal;
    }
  }
}

/*
 * Wait for this rank's sends, at close. They all end, provided no rank
 * hit a fatal error and every rank calls river_gd_close (after a fatal
 * error nothing is promised: other ranks may wait for this one forever,
 * and this one for them). Here this rank's client is done and so is its
 * server (close finishes both first), so:
 *  - each request of a slot was answered (the client is done only with
 *    no reply outstanding), hence received: its send has completed;
 *  - PROGRESS, CANCEL and DONE messages went, in that order on the request tag,
 *    to server ranks that keep a receive posted on that tag until they
 *    have every client's DONE, and keep stepping (in river_gd_next or in
 *    their own close) until then. A server rank that is itself waiting
 *    here has had every DONE, this rank's included, so it has already
 *    received all of this rank's messages; and no rank needs this one
 *    any more (its server has had every client's DONE), so no rank waits
 *    on a rank that waits on it.
 */
void river__gd_client_drain(river_gd *gd)
{
  int i;

  for (i = 0; gd->done_sent && i < gd->nservers; i++)
    river_wait(&gd->done_sreq[i], MPI_STATUS_IGNORE);
  for (i = 0; gd->reports && i < gd->nmine * gd->repl; i++)
    if (gd->reports[i].sreq != MPI_REQUEST_NULL)
      river_wait(&gd->reports[i].sreq, MPI_STATUS_IGNORE);
  for (i = 0; gd->mine && i < gd->nmine; i++)
    if (gd->mine[i].csreq != MPI_REQUEST_NULL)
      river_wait(&gd->mine[i].csreq, MPI_STATUS_IGNORE);
  for (i = 0; i < gd->nslots; i++)
    if (gd->slots[i].sreq != MPI_REQUEST_NULL)
      river_wait(&gd->slots[i].sreq, MPI_STATUS_IGNORE);
}
