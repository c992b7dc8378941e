/*
 * gd.c - graduated declustering (see river/gd.h): clients fetch their
 * partitions' blocks from every mirror, disk servers favour the client
 * that lags. This file holds the public entry points but river_gd_next
 * (src/gd_client.c): argument checks, the layout copied into the handle,
 * the client's slots and the server's streams set up and freed, close,
 * and the two read sources a server can use (gd_source_fn): the caller's
 * river_gd_read_fn, or a collection for river_gd_open. The handle (struct
 * river_gd) and the protocol are described in src/gd_internal.h; the
 * disk side is src/gd_server.c.
 */
#include "gd_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A block's message buffer (header and records), starting on a 4 KiB
 * boundary as the DQ's are (dq_internal.h, DQ_PAGE); freed with free.
 * Unthrottled (2 x 2 at 5 GB/s a disk on this 2-core VM), GD read at a
 * median 7.70 GB/s with them against 6.46 with malloc'd ones (issue 13,
 * doc/results/issue13-session6-local.txt section 8). */
static unsigned char *block_buffer(size_t n)
{
  void *p;

  return posix_memalign(&p, 4096, n) == 0 ? p : NULL;
}

static uint64_t gd_nblocks(const river_gd *gd, int p)
{
  return (gd->nrecords[p] + gd->rpb - 1) / gd->rpb;
}

int river_gd_stats_get(const river_gd *gd, river_gd_stats *stats)
{
  if (gd == NULL || stats == NULL)
    return RIVER_EINVAL;
  *stats = gd->stats;
  return RIVER_SUCCESS;
}

int river_gd_comm(const river_gd *gd, MPI_Comm *comm)
{
  if (gd == NULL || comm == NULL) {
    river__error("river_gd_comm: %s is NULL", gd == NULL ? "gd" : "comm");
    return RIVER_EINVAL;
  }
  *comm = gd->comm;
  return RIVER_SUCCESS;
}

int river_gd_served_get(const river_gd *gd, river_gd_served *rows,
                        size_t max, size_t *n)
{
  size_t k = 0;
  int i, j;

  if (gd == NULL || n == NULL || (rows == NULL && max > 0)) {
    river__error("river_gd_served_get: %s", gd == NULL ? "gd is NULL"
                 : n == NULL ? "n is NULL" : "rows is NULL");
    return RIVER_EINVAL;
  }
  for (i = 0; i < gd->nlocal; i++)
    for (j = 0; j < gd->disks[i].nstreams; j++, k++) {
      const struct gd_stream *st = &gd->disks[i].streams[j];
      if (k < max) {
        rows[k].disk = gd->disks[i].d;
        rows[k].partition = st->partition;
        rows[k].copy = st->copy;
        rows[k].client = gd->client_rank[st->partition];
        rows[k].blocks = st->served_blocks;
        rows[k].bytes = st->served_bytes;
      }
    }
  *n = k;
  return RIVER_SUCCESS;
}

static void gd_free(river_gd *gd)
{
  int i;

  if (gd == NULL)
    return;
  for (i = 0; i < gd->nmine; i++) {
    free(gd->mine[i].retry);
    free(gd->mine[i].asmbuf);
  }
  for (i = 0; gd->slots && i < gd->nslots; i++)
    free(gd->slots[i].buf);
  for (i = 0; gd->send && i < gd->nsend; i++)
    free(gd->send[i].buf);
  for (i = 0; gd->disks && i < gd->nlocal; i++) {
    struct gd_disk *dk = &gd->disks[i];
    int j;
    for (j = 0; dk->streams && j < dk->nstreams; j++) {
      free(dk->streams[j].q);
      free(dk->streams[j].qt);
      free(dk->streams[j].cq);
    }
    free(dk->streams);
    free(dk->prog);
    free(dk->pend);
    free(dk->bias);
  }
  free(gd->disks);
  free(gd->send);
  free(gd->slots);
  free(gd->rreqs);
  free(gd->idx);
  free(gd->asks);
  free(gd->mine);
  free(gd->local_of);
  free(gd->servers);
  free(gd->done_sreq);
  free(gd->done_msg);
  free(gd->done_from);
  free(gd->clients);
  free(gd->reports);
  free(gd->disk_local);
  free(gd->plan);
  free(gd->copy_status);
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
  river__gd_client_drain(gd);
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
  if (o->run_blocks < 0 || o->run_blocks > RIVER_GD_MAX_RUN_BLOCKS) {
    river__error("gd create: bad option run_blocks %d: must be 0..%d",
                 o->run_blocks, RIVER_GD_MAX_RUN_BLOCKS);
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

/* Whether partitions may start dormant (src/gd_internal.h): only where
 * reading every partition's first copy is balanced by construction, so
 * that dormancy has nothing to lose while the disks run at one speed:
 * every disk holds the first copy of exactly one partition, every
 * partition has one number of blocks, and every client reads all its
 * partitions at once (at most GD_MAX_ACTIVE of them). Else the
 * partitions start awake: with two first copies on a disk, partitions
 * of different sizes, or a client reading fewer partitions at once than
 * it has, the fixed mirror would leave disks idle that BALANCED uses.
 * Unordered mode only: in stream mode a probe that waits at its disk
 * holds up delivery, so the window fills and the first copy's disk
 * could idle (the rule was written when a disk served the lagging
 * client first; probes now go first, but a probe still waits for the
 * block in service, and stream mode is still not measured dormant), so
 * not done. 0 also when memory runs short (awake is always correct). */
static int dormant_ok(const river_gd *gd)
{
  int p, ok = gd->policy == RIVER_GD_BALANCED && gd->repl > 1
              && gd->mode == RIVER_GD_UNORDERED && gd->npart == gd->ndisks;
  int *firsts, *reads;

  if (!ok)
    return 0;
  firsts = calloc((size_t)gd->ndisks, sizeof *firsts);
  reads = calloc((size_t)gd->size, sizeof *reads);
  ok = firsts != NULL && reads != NULL;
  for (p = 0; p < gd->npart && ok; p++)
    ok = gd->pnblocks[p] == gd->pnblocks[0]
         && ++firsts[gd->first_disk[p]] == 1
         && ++reads[gd->client_rank[p]] <= GD_MAX_ACTIVE;
  free(firsts);
  free(reads);
  return ok;
}

/* Whether the layout suits a lost disk's plan (src/gd_alloc.c,
 * river__gd_plan): a dormant layout (dormant_ok) of two copies, read
 * through a source that can say before the read whether a copy can be
 * read and can read pieces of blocks (a collection's). */
static int plan_ok(const river_gd *gd)
{
  return gd->repl == 2 && gd->check != NULL && gd->range != NULL
         && gd->ndisks > 2 && dormant_ok(gd);
}

/* Collective. Where a plan may apply (plan_ok), every server checks the
 * copies its disks hold, and all ranks learn which cannot be read. If
 * the copies that cannot be read are exactly those of some disks (lost
 * disks, none next to another) the read follows a plan (gd->plan, every
 * copy's status in gd->copy_status); else nothing changes here, and a
 * client learns of a bad copy from its first failed read, as before.
 * Fails only for lack of memory or MPI (agreed by the caller). */
static int gd_find_lost(river_gd *gd)
{
  int n = gd->npart * gd->repl, p, c, d, rc = RIVER_SUCCESS, nbad = 0;
  int *st = calloc((size_t)n, sizeof *st);
  int *part_of = malloc((size_t)gd->ndisks * sizeof *part_of);
  unsigned char *lost = calloc((size_t)gd->ndisks, 1);
  uint64_t *plan = malloc((size_t)gd->npart * sizeof *plan);
  int ok = plan_ok(gd);

  /* Agreed: dormant_ok may say no on a rank short of memory. Like every
   * collective of River's, waiting yields (river__allreduce): a blocking
   * one hung a flow whose two stages on a rank each opened a GD read
   * (test_join_mpi: each rank waited in its own stage's collective, never
   * running the other stage's). */
  if (river__allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, gd->comm)
      != RIVER_SUCCESS) {
    ok = 0;
    rc = RIVER_EMPI;
  }
  if (!ok) {
    free(st);
    free(part_of);
    free(lost);
    free(plan);
    return rc;
  }
  if (st == NULL || part_of == NULL || lost == NULL || plan == NULL)
    rc = RIVER_ENOMEM;
  rc = river__agree(gd->comm, rc);
  for (p = 0; p < gd->npart && rc == RIVER_SUCCESS; p++)
    for (c = 0; c < gd->repl; c++) {
      int dead = 0, why;
      if (gd->disk_rank[river__gd_disk_of(gd, p, c)] != gd->rank)
        continue;
      why = gd->check(gd->source_ctx, p, c, &dead);
      st[(size_t)p * gd->repl + c] = why != RIVER_SUCCESS && dead ? why : 0;
    }
  /* Every copy's status on every rank: what the disks' servers found
   * (each copy is checked by one rank; the others give 0). */
  if (rc == RIVER_SUCCESS
      && river__allreduce(MPI_IN_PLACE, st, n, MPI_INT, MPI_MIN, gd->comm)
             != RIVER_SUCCESS)
    rc = RIVER_EMPI;
  if (rc == RIVER_SUCCESS) {
    for (p = 0; p < gd->npart; p++)
      part_of[gd->first_disk[p]] = p;
    /* A disk is lost when neither copy on it can be read; a lone bad
     * copy on a disk that is up is left to the reads. */
    for (d = 0; d < gd->ndisks; d++) {
      int here = part_of[d], prev = part_of[(d + gd->ndisks - 1)
                                           % gd->ndisks];
      int b0 = st[(size_t)here * 2] != 0, b1 = st[(size_t)prev * 2 + 1] != 0;
      lost[d] = b0 && b1;
      nbad += b0 + b1;
      if (b0 != b1)
        nbad = -gd->ndisks * 2;  /* not whole disks: no plan */
    }
  }
  if (rc == RIVER_SUCCESS && nbad > 0
      && river__gd_plan(gd->ndisks, part_of, gd->nrecords, lost, plan) == 0) {
    gd->plan = plan;
    gd->copy_status = st;
    plan = NULL;
    st = NULL;
  }
  free(st);
  free(part_of);
  free(lost);
  free(plan);
  return rc;
}

static int cmp_int(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;

  return (x > y) - (x < y);
}

/* Sort v[0..n-1] and keep each value once; the number kept. */
static int sorted_unique(int *v, int n)
{
  int i, k = 0;

  qsort(v, (size_t)n, sizeof *v, cmp_int);
  for (i = 0; i < n; i++)
    if (k == 0 || v[i] != v[k - 1])
      v[k++] = v[i];
  return k;
}


static int gd_setup_client(river_gd *gd)
{
  int dormant = dormant_ok(gd);
  int p, c, i, n = 0;
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
      mp->cancelling = -1;
      mp->csreq = MPI_REQUEST_NULL;
      mp->dormant = dormant;
      mp->probe_at = 1;
      mp->top = mp->nblocks;
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
  gd->asks = calloc(want, sizeof *gd->asks);
  if (!gd->slots || !gd->rreqs || !gd->idx || !gd->asks)
    return RIVER_ENOMEM;
  for (i = 0; i < gd->nslots; i++) {
    gd->asks[i].partition = -1;
    gd->slots[i].rreq = gd->slots[i].sreq = MPI_REQUEST_NULL;
    if ((gd->slots[i].buf = block_buffer(GD_HDR + gd->msg_bytes)) == NULL)
      return RIVER_ENOMEM;
  }
  for (i = 0; gd->plan && i < gd->nmine; i++) {
    struct gd_part *mp = &gd->mine[i];
    int rc = river__gd_client_plan(gd, mp);
    if (rc != RIVER_SUCCESS)
      return rc;
    if (mp->has_split
        && (mp->asmbuf = block_buffer(GD_HDR + gd->msg_bytes)) == NULL)
      return RIVER_ENOMEM;
  }
  /* A client's DONE goes to the servers of its partitions' copies, the
   * only ranks it ever asks (gd_setup_server counts the same pairs). */
  gd->servers = malloc((size_t)gd->nmine * (size_t)gd->repl
                       * sizeof *gd->servers + 1);
  if (gd->servers == NULL)
    return RIVER_ENOMEM;
  for (i = 0; i < gd->nmine; i++)
    for (c = 0; c < gd->repl; c++)
      gd->servers[gd->nservers++] =
          gd->disk_rank[river__gd_disk_of(gd, gd->mine[i].p, c)];
  gd->nservers = sorted_unique(gd->servers, gd->nservers);
  gd->done_sreq = malloc((size_t)gd->nservers * sizeof *gd->done_sreq + 1);
  gd->done_msg = malloc((size_t)gd->nservers * sizeof *gd->done_msg + 1);
  /* One PROGRESS report buffer per partition copy. */
  gd->reports = calloc(gd->nmine ? (size_t)gd->nmine * (size_t)gd->repl : 1,
                       sizeof *gd->reports);
  if (gd->done_sreq == NULL || gd->done_msg == NULL || gd->reports == NULL)
    return RIVER_ENOMEM;
  for (i = 0; i < gd->nmine * gd->repl; i++)
    gd->reports[i].sreq = MPI_REQUEST_NULL;
  /* A rank with no partitions is done at once (gd_start). */
  return RIVER_SUCCESS;
}

static int gd_setup_server(river_gd *gd)
{
  int d, p, c, n = 0, i;
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
        dk->nstreams += river__gd_disk_of(gd, p, c) == d;
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
        if (river__gd_disk_of(gd, p, c) == d) {
          struct gd_stream *st = &dk->streams[dk->nstreams++];
          st->partition = p;
          st->copy = c;
          st->q = calloc((size_t)gd->k, sizeof *st->q);
          st->qt = calloc((size_t)gd->k, sizeof *st->qt);
          st->cq = calloc((size_t)gd->k, sizeof *st->cq);
          if (st->q == NULL || st->qt == NULL || st->cq == NULL)
            return RIVER_ENOMEM;
          if ((double)gd->pnblocks[p] > maxnb)
            maxnb = (double)gd->pnblocks[p];
        }
    dk->bias_cap = GD_BIAS_CAP / maxnb;
    dk->emulated = gd->rate > 0;   /* its clock starts in gd_create */
  }
  if (n == 0)
    return RIVER_SUCCESS;
  gd->nsend = GD_SEND_SLOTS * n;
  gd->send = calloc((size_t)gd->nsend, sizeof *gd->send);
  if (gd->send == NULL)
    return RIVER_ENOMEM;
  for (i = 0; i < gd->nsend; i++) {
    gd->send[i].req = MPI_REQUEST_NULL;
    if ((gd->send[i].buf = block_buffer(GD_HDR + gd->msg_bytes)) == NULL)
      return RIVER_ENOMEM;
  }
  /* The clients of the partitions with a copy here: the ranks whose
   * DONE this server waits for (send_dones in gd_client.c). */
  gd->clients = malloc((size_t)gd->npart * sizeof *gd->clients + 1);
  if (gd->clients == NULL)
    return RIVER_ENOMEM;
  for (p = 0; p < gd->npart; p++)
    for (c = 0; c < gd->repl; c++)
      if (gd->disk_local[river__gd_disk_of(gd, p, c)] >= 0) {
        gd->clients[gd->nclients++] = gd->client_rank[p];
        break;
      }
  gd->nclients = sorted_unique(gd->clients, gd->nclients);
  gd->done_from = calloc((size_t)gd->nclients + 1, 1);
  if (gd->done_from == NULL)
    return RIVER_ENOMEM;
  return RIVER_SUCCESS;
}

static int gd_start(river_gd *gd)
{
  if (gd->nmine == 0)
    gd->client_done = 1;  /* servers count only client ranks: nothing to
                             tell them either */
  return river__gd_server_start(gd);
}

/* river_gd_create's source: the caller's callback. A copy is dead when
 * a block of it is missing. */
static int gd_read_user(void *ctx, int partition, int copy, int disk,
                        uint64_t block, void *buf, size_t bufsize,
                        size_t *nrecords, int *dead)
{
  river_gd *gd = ctx;
  int rc;

  rc = gd->read(gd->ctx, partition, copy, disk, block, buf, bufsize,
                nrecords);
  *dead = rc == RIVER_ENOTFOUND;
  return rc;
}

/* The sources of a handle: river_gd_create's callback, or (read NULL)
 * river_gd_open's collection, which can also check copies and read
 * pieces of blocks whose records and padding take up to extent bytes. */
struct gd_sources {
  river_gd_read_fn read;
  void *ctx;
  gd_source_fn source;
  gd_check_fn check;
  gd_range_fn range;
  void *source_ctx;
  size_t extent;
};

/* Create a handle that reads through `read` (river_gd_create: the
 * server calls it through gd_read_user) or, when read is NULL, through
 * source with source_ctx (river_gd_open). */
static int gd_create(MPI_Comm comm, const river_gd_layout *layout,
                     const struct gd_sources *src, const river_gd_opts *opts,
                     river_gd **out)
{
  static const char *const names[] = {
    "npartitions", "ndisks", "replication", "record_size",
    "records_per_block", "policy", "mode", "outstanding", "window",
    "disk_rate", "seek_seconds", "run_blocks", "layout and rank arrays",
    "source (river_gd_create or river_gd_open)"};
  river_gd_opts o = RIVER_GD_OPTS_INIT;
  river_gd *gd = NULL;
  river_gd_read_fn read = src->read;
  gd_source_fn source = src->source;
  uint64_t v[14];
  int rc = RIVER_SUCCESS, size = 0, init = 0, fin = 0, i;

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
  if (layout == NULL || (read == NULL && source == NULL) || out == NULL) {
    river__error("gd create: %s is NULL",
                 layout == NULL ? "layout"
                 : read == NULL && source == NULL ? "read" : "out");
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
    gd->run_blocks = o.run_blocks;
    gd->perturb = o.perturb;
    gd->read = read;
    gd->ctx = src->ctx;
    gd->source = read ? gd_read_user : source;
    gd->source_ctx = read ? (void *)gd : src->source_ctx;
    gd->check = read ? NULL : src->check;
    gd->range = read ? NULL : src->range;
    snprintf(gd->name, sizeof gd->name, "%s", "gd source");
    rc = gd_copy_layout(gd, layout, &o);
    gd->msg_bytes = src->extent > gd->block_bytes ? src->extent
                                                   : gd->block_bytes;
    if (rc == RIVER_SUCCESS && gd->msg_bytes > (size_t)INT_MAX - GD_HDR) {
      river__error("gd create: a block of %zu bytes does not fit one MPI "
                   "message", gd->msg_bytes);
      rc = RIVER_EINVAL;
    }
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
    v[11] = (uint64_t)o.run_blocks;
    v[12] = gd_hash(gd) ^ (uint64_t)layout->order;
    v[13] = read != NULL;
  }
  rc = river__agree_same(comm, "gd create", rc, 14, names, v);
  if (rc == RIVER_SUCCESS && river__comm_dup(comm, &gd->comm) != RIVER_SUCCESS)
    rc = RIVER_EMPI;
  if (rc == RIVER_SUCCESS)
    rc = river__agree(comm, gd_find_lost(gd));
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
  river__barrier(gd->comm);
  /* Every emulated disk starts the read idle now, after the creating
   * barrier: started at setup, it was free during the agreements and
   * the barrier (ms on a busy node), and its first request would have
   * found it done with work the fluid ideal does not count (issue 13:
   * it favoured the shorter of two runs compared). */
  gd->t0 = river_wtime();
  for (i = 0; i < gd->nlocal; i++)
    gd->disks[i].ready_at = gd->t0;
  *out = gd;
  return RIVER_SUCCESS;
}

int river_gd_create(MPI_Comm comm, const river_gd_layout *layout,
                    river_gd_read_fn read, void *ctx,
                    const river_gd_opts *opts, river_gd **out)
{
  struct gd_sources src;

  memset(&src, 0, sizeof src);
  src.read = read;
  src.ctx = ctx;
  return gd_create(comm, layout, &src, opts, out);
}

/* river_gd_open's source: the collection's copies. A copy is dead when a
 * block of it is missing or the collection found the copy unusable. */
static int gd_read_pcoll(void *ctx, int partition, int copy, int disk,
                         uint64_t block, void *buf, size_t bufsize,
                         size_t *nrecords, int *dead)
{
  int rc;

  (void)disk;
  *dead = 0;
  /* The client decides whether a failure is an error (no mirror left):
   * the collection logs this copy's failures as warnings. */
  rc = river_pcoll_read_copy_level(ctx, partition, copy, block, buf,
                                   bufsize, nrecords, RIVER_LOG_WARN, dead);
  *dead = *dead || rc == RIVER_ENOTFOUND;
  return rc;
}

/* river_gd_open's check of a copy before the read (gd_find_lost): past
 * the argument checks, a copy that fails it is unusable. */
static int gd_check_pcoll(void *ctx, int partition, int copy, int *dead)
{
  int rc = river_pcoll_check_copy(ctx, partition, copy, RIVER_LOG_WARN);

  *dead = rc != RIVER_SUCCESS && rc != RIVER_EINVAL;
  return rc;
}

/* river_gd_open's pieces of blocks (gd_range_fn). */
static int gd_range_pcoll(void *ctx, int partition, int copy, uint64_t block,
                          uint64_t lo, uint64_t n, void *buf, size_t bufsize,
                          size_t *padlen, uint32_t *crc, int *dead)
{
  int rc;

  *dead = 0;
  rc = river_pcoll_read_copy_range(ctx, partition, copy, block, lo, n, buf,
                                   bufsize, padlen, crc, RIVER_LOG_WARN,
                                   dead);
  *dead = *dead || rc == RIVER_ENOTFOUND;
  return rc;
}

int river_gd_open(MPI_Comm comm, river_pcoll *pc, const river_gd_opts *opts,
                  river_gd **out)
{
  struct gd_sources src;
  river_gd_layout l;
  river_pcoll_info info;
  river_pcoll_part part;
  river_gd_opts o;
  uint64_t *nrec = NULL;
  int *first = NULL, *ranks = NULL, p, rc = RIVER_SUCCESS, up = 0, down = 0;

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
  /* Node-local disks: each disk served by a rank of the node that holds
   * it (river_pcoll_disk_ranks), unless the caller chose. Collective:
   * only with MPI up and a communicator (else river_gd_create below
   * refuses the call, as it must without MPI). */
  if (MPI_Initialized(&up) != MPI_SUCCESS || MPI_Finalized(&down)
                                                 != MPI_SUCCESS)
    up = 0;
  up = up && !down && comm != MPI_COMM_NULL;
  if (up)
    rc = river__agree(comm, rc);
  if (up && rc == RIVER_SUCCESS
      && (opts == NULL || opts->disk_ranks == NULL)) {
    o = opts ? *opts : (river_gd_opts)RIVER_GD_OPTS_INIT;
    ranks = malloc((size_t)info.ndisks * sizeof *ranks + 1);
    rc = river__agree(comm, ranks == NULL ? RIVER_ENOMEM : RIVER_SUCCESS);
    if (rc == RIVER_SUCCESS)
      rc = river_pcoll_disk_ranks(comm, pc, ranks);
    o.disk_ranks = ranks;
    opts = &o;
  }
  /* A bad rank passes a NULL layout so create fails everywhere. */
  memset(&src, 0, sizeof src);
  src.source = gd_read_pcoll;
  src.check = gd_check_pcoll;
  src.range = gd_range_pcoll;
  src.source_ctx = pc;
  src.extent = rc == RIVER_SUCCESS ? info.block_size : 0;
  rc = gd_create(comm, rc == RIVER_SUCCESS ? &l : NULL, &src, opts, out);
  if (rc == RIVER_SUCCESS)
    snprintf((*out)->name, sizeof (*out)->name, "collection %s", info.name);
  free(nrec);
  free(first);
  free(ranks);
  return rc;
}
