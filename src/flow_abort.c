/*
 * flow_abort.c - a running flow's abort notices: a rank whose instance
 * fails tells every other rank along a binomial tree rooted at it
 * (flow_run_internal.h, struct river__run's abort fields, says how and why).
 * Below the runner (flow_run.c opens and closes the channel) and the
 * module calls (flow_io.c asks river__flow_aborted): it calls neither.
 */
#include "flow_run_internal.h"

#include <stdlib.h>
#include <string.h>

enum { ABORT_NOTICE = 1, ABORT_ACK = 2, ABORT_TAG = 1 };

static void abort_tick(void *arg);

/* Open the abort channel (collective: the dup), its one receive posted,
 * room for RIVER__ABORT_POOL trees taken at once (so the usual failure,
 * one rank or a few, needs no memory while it is told). */
int river__flow_abort_open(river_flow *f, struct river__run *r)
{
  if (river__watchdog_fired())   /* nothing new starts (src/agree.c) */
    return RIVER_ETIMEDOUT;
  r->abort_rx = MPI_REQUEST_NULL;
  r->abort_msg = calloc(2, sizeof *r->abort_msg);
  r->pool = calloc(RIVER__ABORT_POOL, sizeof *r->pool);
  r->trees = calloc(RIVER__ABORT_POOL, sizeof *r->trees);
  if (r->abort_msg == NULL || r->pool == NULL || r->trees == NULL)
    return RIVER_ENOMEM;
  r->captrees = RIVER__ABORT_POOL;
  if (MPI_Comm_dup(f->comm, &r->abort_comm) != MPI_SUCCESS)
    return RIVER_EMPI;
  if (MPI_Irecv(r->abort_msg, 2, MPI_INT, MPI_ANY_SOURCE, ABORT_TAG,
                r->abort_comm, &r->abort_rx) != MPI_SUCCESS)
    return RIVER_EMPI;
  r->abort_hook.fn = abort_tick;
  r->abort_hook.arg = f;
  river__backoff_hook_add(&r->abort_hook);
  r->abort_hooked = 1;
  return RIVER_SUCCESS;
}

/* The tree of origin o at this rank: found, or added (NULL: no memory,
 * logged; beyond RIVER__ABORT_POOL trees, that is, ranks failing at
 * once, a tree is allocated as it comes, and without it the run can
 * only end by the watchdog, RIVER_TIMEOUT). */
static struct river__abort_tree *abort_tree(struct river__run *r, int o,
                                            int add)
{
  struct river__abort_tree *t, **tt;
  int i;

  for (i = 0; i < r->ntrees; i++)
    if (r->trees[i]->origin == o)
      return r->trees[i];
  if (!add)
    return NULL;
  if (r->ntrees == r->captrees) {
    tt = realloc(r->trees, 2 * (size_t)r->captrees * sizeof *tt);
    if (tt == NULL) {
      river__error("flow abort: no memory to take part in rank %d's notice",
                   o);
      return NULL;
    }
    r->trees = tt;
    r->captrees *= 2;
  }
  t = r->ntrees < RIVER__ABORT_POOL ? &r->pool[r->ntrees]
                                    : malloc(sizeof *t);
  if (t == NULL) {
    river__error("flow abort: no memory to take part in rank %d's notice", o);
    return NULL;
  }
  r->trees[r->ntrees++] = t;
  memset(t, 0, sizeof *t);
  t->origin = o;
  t->parent = -1;
  return t;
}

/* Send msg (kind, origin) to rank to in tree t. */
static int abort_send(river_flow *f, struct river__abort_tree *t,
                      int *msg, int to)
{
  struct river__run *r = f->run;

  if (river__watchdog_fired())   /* nothing new starts (src/agree.c) */
    return RIVER_ETIMEDOUT;
  if (MPI_Isend(msg, 2, MPI_INT, to, ABORT_TAG, r->abort_comm,
                &t->req[t->nreq]) != MPI_SUCCESS)
    return RIVER_EMPI;
  t->nreq++;
  return RIVER_SUCCESS;
}

/* Join the tree of origin o (from: the parent, -1 at the origin): send
 * the notice on to this rank's children in it (binomial, on ranks
 * relative to o: rank rel's children are rel + m for each power of two
 * m below rel's lowest set bit, all of them at the origin). */
static int abort_join(river_flow *f, int o, int from)
{
  struct river__run *r = f->run;
  struct river__abort_tree *t;
  int rel = (f->rank - o + f->size) % f->size, m, rc;

  r->abort_seen = 1;
  if (abort_tree(r, o, 0) != NULL)
    return RIVER_SUCCESS;   /* joined already: never twice */
  if ((t = abort_tree(r, o, 1)) == NULL)
    return RIVER_ENOMEM;
  t->parent = from;
  if (o == f->rank)
    r->abort_sent = 1;   /* the tree exists: the others expect it */
  t->note[0] = ABORT_NOTICE;
  t->note[1] = o;
  for (m = 1; m < f->size && (rel == 0 || m < (rel & -rel)); m <<= 1) {
    if (rel + m >= f->size)
      break;
    if ((rc = abort_send(f, t, t->note, (o + rel + m) % f->size))
        != RIVER_SUCCESS)
      return rc;
    t->pending++;
  }
  return RIVER_SUCCESS;
}

/* The receive has completed (st): a notice joins its tree, an
 * acknowledgement counts; the receive is posted again. */
static void abort_take(river_flow *f, const MPI_Status *st)
{
  struct river__run *r = f->run;
  struct river__abort_tree *t;

  if (r->abort_msg[0] == ABORT_NOTICE)
    (void)abort_join(f, r->abort_msg[1], st->MPI_SOURCE);
  else if ((t = abort_tree(r, r->abort_msg[1], 0)) != NULL)
    t->pending--;
  if (MPI_Irecv(r->abort_msg, 2, MPI_INT, MPI_ANY_SOURCE, ABORT_TAG,
                r->abort_comm, &r->abort_rx) != MPI_SUCCESS)
    r->abort_rx = MPI_REQUEST_NULL;
}

/* What has come on the channel, handled; each tree whose children have
 * all acknowledged, acknowledged to its parent. Never waits. */
static void abort_poll(river_flow *f)
{
  struct river__run *r = f->run;
  struct river__abort_tree *t;
  MPI_Status st;
  int got = 0, i;

  while (r->abort_rx != MPI_REQUEST_NULL
         && MPI_Test(&r->abort_rx, &got, &st) == MPI_SUCCESS && got)
    abort_take(f, &st);
  for (i = 0; i < r->ntrees; i++) {
    t = r->trees[i];
    if (t->pending == 0 && !t->acked && t->parent >= 0) {
      t->ack[0] = ABORT_ACK;
      t->ack[1] = t->origin;
      t->acked = abort_send(f, t, t->ack, t->parent) == RIVER_SUCCESS;
    }
  }
}

static void abort_tick(void *arg)
{
  river_flow *f = arg;
  struct river__run *r = f->run;

  if (r != NULL && r->abort_comm != MPI_COMM_NULL)
    abort_poll(f);
}

void river__flow_abort(river_flow *f)
{
  struct river__run *r = f->run;
  struct river__abort_tree *t;
  long ns = RIVER_BACKOFF_START;

  if (r == NULL)
    return;
  r->abort_seen = 1;
  if (r->abort_comm == MPI_COMM_NULL)
    return;
  if (!r->abort_sent)
    (void)abort_join(f, f->rank, -1);
  if (!r->abort_sent)
    return;  /* no tree (no memory): the peers learn it from the outcome */
  /* Every instance that fails here waits, not only the first: each
   * closes its outputs after this returns. Every rank forwards while it
   * waits in River (abort_tick), so the acknowledgements come. */
  for (;;) {
    int y;
    abort_poll(f);
    if ((t = abort_tree(r, f->rank, 0)) == NULL || t->pending == 0)
      break;
    y = river__sched_yield(1);
    if (y == RIVER_ETIMEDOUT)
      break;   /* a rank is frozen: abort_close leaves the notices */
    if (y != RIVER_SUCCESS   /* not in a task */
        && river__backoff(&ns) == RIVER_ETIMEDOUT)
      break;
  }
}

int river__flow_aborted(river_flow *f)
{
  struct river__run *r = f != NULL ? f->run : NULL;

  if (r == NULL)
    return 0;
  if (r->abort_comm != MPI_COMM_NULL)
    abort_poll(f);   /* and forward what came */
  return r->abort_seen;
}

/* Whether this rank's part of the channel is done, S trees in all: it
 * is in every one, each acknowledged to its parent (or, the origin's,
 * by its children). */
static int abort_done(const river_flow *f, int ntrees)
{
  const struct river__run *r = f->run;
  int i;

  if (r->ntrees < ntrees)
    return 0;
  for (i = 0; i < r->ntrees; i++)
    if (r->trees[i]->pending > 0
        || (r->trees[i]->parent >= 0 && !r->trees[i]->acked))
      return 0;
  return 1;
}

/* The channel's memory: the trees and the receive's buffer, freed, or
 * (orphan) kept for the rest of the process, for the requests MPI may
 * still complete into them. */
static void drop(void *p, int orphan)
{
  if (orphan)
    river__orphan(p);
  else
    free(p);
}

static void abort_free(struct river__run *r, int orphan)
{
  int i;

  for (i = RIVER__ABORT_POOL; r->trees != NULL && i < r->ntrees; i++)
    drop(r->trees[i], orphan);
  drop(r->pool, orphan);
  drop(r->trees, orphan);
  drop(r->abort_msg, orphan);
  r->pool = NULL;
  r->trees = NULL;
  r->abort_msg = NULL;
  r->ntrees = r->captrees = 0;
}

/* Close the abort channel once every rank has finished (collective):
 * take part in every tree to its end, then free it all. Where the
 * watchdog ends that (a rank that never answers), the notices are left
 * pending, their requests and buffers to MPI. */
void river__flow_abort_close(river_flow *f, struct river__run *r,
                             int finished)
{
  int ntrees = r->abort_sent, i;
  long ns = RIVER_BACKOFF_START;

  if (r->abort_hooked) {
    river__backoff_hook_remove(&r->abort_hook);
    r->abort_hooked = 0;
  }
  if (r->abort_comm == MPI_COMM_NULL) {
    abort_free(r, 0);
    return;
  }
  /* Every rank is here once the allreduce is done: each waits for what
   * its part still needs (a notice from its parent, an acknowledgement
   * from a child), which comes, the ranks before it in the trees being
   * here too. Not finished (setup failed, no task ran): no notice went
   * anywhere, nothing to wait for. */
  if (river__watchdog_fired()
      || (finished
          && river__allreduce(MPI_IN_PLACE, &ntrees, 1, MPI_INT, MPI_SUM,
                              f->comm) != RIVER_SUCCESS))
    goto orphan;
  for (abort_poll(f); finished && !abort_done(f, ntrees); abort_poll(f))
    if (r->abort_rx == MPI_REQUEST_NULL
        || river__nap(&ns) != RIVER_SUCCESS)
      goto orphan;
  if (r->abort_rx != MPI_REQUEST_NULL) {
    MPI_Cancel(&r->abort_rx);
    MPI_Wait(&r->abort_rx, MPI_STATUS_IGNORE);
  }
  for (i = 0; i < r->ntrees; i++)
    MPI_Waitall(r->trees[i]->nreq, r->trees[i]->req, MPI_STATUSES_IGNORE);
  abort_free(r, 0);
  MPI_Comm_free(&r->abort_comm);
  return;
orphan:
  abort_free(r, 1);
  r->abort_comm = MPI_COMM_NULL;
}
