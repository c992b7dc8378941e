/*
 * flow_run.c - running a checked flow (river_flow_go, go_async, test,
 * wait) and its per-stage totals.
 *
 * Set-up is collective and the same on every rank: one distributed
 * queue per edge, created in edge order over the flow's communicator
 * (a rank is a producer of an edge if its source stage runs there, a
 * consumer if its destination stage does, both, or neither and only
 * takes part in the collective calls). Then every instance placed on
 * this rank becomes a task of one cooperative scheduler
 * (flow_run_internal.h). When every task has returned, each module's
 * outputs closed and inputs drained (flow_io.c), the queues are
 * destroyed, again in edge order, and the ranks agree on the outcome:
 * RIVER_SUCCESS everywhere, or the same error everywhere. Only then do
 * the modules' end steps (river_ctx_at_end) publish their outputs, or
 * discard them on failure; a failed publish is agreed again.
 */
#include "flow_run_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Edge e's partitioner (src/partition.c), saying what is wrong. */
static int find_key(const river_flow *f, const river__edge *e,
                    const river_schema *s, struct river__part *p)
{
  int rc = river__part_init(p, s, e->opts.key, e->opts.by);

  if (rc == RIVER_ENOTSUP)
    river__flow_log(RIVER_LOG_ERROR, e->origin, "edge %s -> %s: a range "
                    "exchange on a floating-point key is not supported yet "
                    "(use by: hash)", f->stages[e->from].name,
                    f->stages[e->to].name);
  return rc;
}

/* ----------------------------------------------------------- set-up */

/* This rank's instance number in stage s, or -1. */
static int instance_on(const river__stage *s, int rank)
{
  int i;

  for (i = 0; i < s->nranks; i++)
    if (s->ranks[i] == rank)
      return i;
  return -1;
}

/* Create edge i's queue (collective). */
static int make_queue(river_flow *f, struct river__run *r, int i)
{
  const river__edge *e = &f->edges[i];
  const river_schema *s = f->stages[e->from].out_schema[e->opts.from_output];
  river_dq_opts o = RIVER_DQ_OPTS_INIT;
  size_t rsize = 0;
  int role = 0, rc = RIVER_SUCCESS;

  river_schema_record_size(s, &rsize);
  o.credits = e->opts.credits;
  o.message_size = e->opts.message_size;
  o.pace = e->opts.pace;
  o.seed = (uint64_t)i * 0x9e3779b97f4a7c15u + 1;
  switch (e->opts.kind) {
  case RIVER_EDGE_DQ: o.policy = e->opts.policy; break;
  case RIVER_EDGE_ONE_TO_ONE: o.policy = RIVER_DQ_ONE_TO_ONE; break;
  case RIVER_EDGE_BROADCAST: o.policy = RIVER_DQ_BROADCAST; break;
  case RIVER_EDGE_EXCHANGE:
    o.policy = RIVER_DQ_EXCHANGE;
    rc = find_key(f, e, s, &r->parts[i]);
    o.partition = river__part_fn;
    o.partition_ctx = &r->parts[i];
    break;
  }
  rc = river__agree(f->comm, rc);
  if (rc != RIVER_SUCCESS)
    return rc;
  if (instance_on(&f->stages[e->from], f->rank) >= 0)
    role |= RIVER_DQ_PRODUCER;
  if (instance_on(&f->stages[e->to], f->rank) >= 0)
    role |= RIVER_DQ_CONSUMER;
  rc = river_dq_create(f->comm, role, rsize, &o, &r->dqs[i]);
  if (rc == RIVER_SUCCESS) {
    river_dq_stats st;
    if (river_dq_stats_get(r->dqs[i], &st) == RIVER_SUCCESS)
      r->edge_path[i] = st.credit_path;
  }
  return rc;
}

/* Edge e's filter, if it has one at `at`, into *pred. */
static int edge_pred(const river_flow *f, const river__edge *e,
                     river_filter_at at, struct river__pred **pred)
{
  const char *why = "";
  int rc;

  *pred = NULL;
  if (e->opts.filter == NULL || e->opts.filter_at != at)
    return RIVER_SUCCESS;
  if ((*pred = malloc(sizeof **pred)) == NULL)
    return RIVER_ENOMEM;
  rc = river__pred_parse(f->stages[e->from].out_schema[e->opts.from_output],
                         e->opts.filter, *pred, &why);
  return rc;  /* checked before: only RIVER_ENOMEM can fail here */
}

static void free_pred(struct river__pred *p)
{
  river__pred_free(p);
  free(p);
}

/* The ports of instance in of stage s, from the edges' queues. */
static int wire(river_flow *f, struct river__run *r, river__stage *s,
                struct river__inst *in)
{
  int p, rc;

  in->in = calloc((size_t)s->ninputs + 1, sizeof *in->in);
  in->out = calloc((size_t)s->noutputs + 1, sizeof *in->out);
  if (in->in == NULL || in->out == NULL)
    return RIVER_ENOMEM;
  for (p = 0; p < s->ninputs; p++) {
    const river__edge *e = &f->edges[s->in_edge[p]];
    in->in[p].q = r->dqs[s->in_edge[p]];
    river_schema_record_size(
        f->stages[e->from].out_schema[e->opts.from_output],
        &in->in[p].record_size);
    if ((rc = edge_pred(f, e, RIVER_FILTER_AT_SINK, &in->in[p].pred))
        != RIVER_SUCCESS)
      return rc;
  }
  for (p = 0; p < s->noutputs; p++) {
    const river__edge *e = &f->edges[s->out_edge[p]];
    size_t msg = e->opts.message_size ? e->opts.message_size
                                      : RIVER_DQ_DEFAULT_MESSAGE_SIZE;
    in->out[p].q = r->dqs[s->out_edge[p]];
    river_schema_record_size(s->out_schema[p], &in->out[p].record_size);
    in->out[p].chunk = msg / in->out[p].record_size;
    if (in->out[p].q != NULL
        && in->out[p].chunk > river__dq_put_max(in->out[p].q))
      in->out[p].chunk = river__dq_put_max(in->out[p].q);   /* EXCHANGE */
    if (in->out[p].chunk == 0)
      in->out[p].chunk = 1;
    in->out[p].copy = e->opts.kind == RIVER_EDGE_EXCHANGE
                      || (e->opts.kind == RIVER_EDGE_DQ
                          && e->opts.policy == RIVER_DQ_PULL);
    if ((rc = edge_pred(f, e, RIVER_FILTER_AT_SOURCE, &in->out[p].pred))
        != RIVER_SUCCESS)
      return rc;
    if (in->out[p].pred != NULL) {
      /* reserve lends a buffer of ours; commit filters it into fbuf */
      in->out[p].copy = 1;
      in->out[p].fbuf = malloc(in->out[p].chunk * in->out[p].record_size);
      if (in->out[p].fbuf == NULL)
        return RIVER_ENOMEM;
    }
  }
  return RIVER_SUCCESS;
}

/* A task: run the module, then close its outputs and drain its inputs. */
static int run_instance(void *arg)
{
  struct river__inst *in = arg;
  const river__stage *s = in->ctx.stage;
  double t0 = river_wtime();
  int rc, frc;

  rc = s->mod->fn(&in->ctx);
  if (rc == RIVER_EOS)
    rc = RIVER_SUCCESS;  /* an input's end passed on: done */
  if (rc != RIVER_SUCCESS) {
    river__error("stage %s instance %d (module %s) failed: %s", s->name,
                 in->ctx.instance, s->mod->name, river_strerror(rc));
    river__flow_abort(in->ctx.flow);  /* before its outputs close */
  }
  frc = river__inst_finish(in);
  in->st.run_seconds = river_wtime() - t0;
  in->status = rc != RIVER_SUCCESS ? rc : frc;
  return in->status;
}

/* This rank's instances: one per stage placed here, each a task. */
static int spawn_instances(river_flow *f, struct river__run *r)
{
  int i, k, rc = RIVER_SUCCESS;

  for (i = 0; i < f->nstages; i++)
    r->ninst += instance_on(&f->stages[i], f->rank) >= 0;
  r->inst = calloc((size_t)r->ninst + 1, sizeof *r->inst);
  if (r->inst == NULL)
    return RIVER_ENOMEM;
  for (i = 0, k = 0; i < f->nstages && rc == RIVER_SUCCESS; i++) {
    river__stage *s = &f->stages[i];
    struct river__inst *in = &r->inst[k];
    int idx = instance_on(s, f->rank);
    if (idx < 0)
      continue;
    k++;
    river__ctx_init(&in->ctx, f, s);
    in->ctx.instance = idx;
    in->ctx.ninstances = s->nranks;
    in->ctx.run = in;
    in->comm = r->stage_comm[i];
    rc = wire(f, r, s, in);
    if (rc == RIVER_SUCCESS)
      rc = river__emul_init(&in->emul, &in->ctx);
    if (rc == RIVER_SUCCESS)
      rc = river__sched_spawn(r->sched, run_instance, in, &in->task);
  }
  return rc;
}

static void abort_close(river_flow *f, struct river__run *r, int finished);

static void run_free(river_flow *f, struct river__run *r)
{
  int i;

  if (r == NULL)
    return;
  if (!r->finished)   /* a flow that never finished publishes nothing */
    river__run_ends(r, RIVER_ESTATE);
  for (i = 0; r->dqs != NULL && i < f->nedges; i++)
    if (r->dqs[i] != NULL)
      river_dq_destroy(r->dqs[i]);  /* collective, in edge order */
  for (i = 0; r->inst != NULL && i < r->ninst; i++) {
    const river__stage *s = r->inst[i].ctx.stage;
    int p;
    for (p = 0; r->inst[i].out != NULL && p < s->noutputs; p++) {
      free(r->inst[i].out[p].buf);
      free(r->inst[i].out[p].fbuf);
      free_pred(r->inst[i].out[p].pred);
    }
    for (p = 0; r->inst[i].in != NULL && p < s->ninputs; p++) {
      free(r->inst[i].in[p].fbuf);
      free_pred(r->inst[i].in[p].pred);
    }
    free(r->inst[i].in);
    free(r->inst[i].out);
    river__emul_free(&r->inst[i].emul);
  }
  abort_close(f, r, 0);
  for (i = 0; r->stage_comm != NULL && i < f->nstages; i++)
    if (r->stage_comm[i] != MPI_COMM_NULL)
      MPI_Comm_free(&r->stage_comm[i]);
  free(r->stage_comm);
  river__sched_destroy(r->sched);
  free(r->inst);
  for (i = 0; r->parts != NULL && i < f->nedges; i++) {
    river__part_free(&r->parts[i]);
  }
  free(r->parts);
  free(r->dqs);
  free(r->edge_path);
  free(r);
}

void river__flow_run_free(river_flow *f)
{
  if (f != NULL) {
    run_free(f, f->run);
    f->run = NULL;
  }
}

/* ----------------------------------------------------- abort notices */

enum { ABORT_NOTICE = 1, ABORT_ACK = 2, ABORT_TAG = 1 };

static void abort_tick(void *arg);

/* Open the abort channel (collective: the dup), its one receive posted,
 * room for RIVER__ABORT_POOL trees taken at once (so the usual failure,
 * one rank or a few, needs no memory while it is told). */
static int abort_open(river_flow *f, struct river__run *r)
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
static void abort_close(river_flow *f, struct river__run *r, int finished)
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

/* A communicator per stage, of its instances in instance order
 * (collective over the flow's communicator, stage by stage). */
static int stage_comms(river_flow *f, struct river__run *r)
{
  int i, k;

  r->stage_comm = malloc((size_t)(f->nstages + 1) * sizeof *r->stage_comm);
  if (r->stage_comm == NULL)
    return RIVER_ENOMEM;  /* agreed by the caller; no split started */
  for (i = 0; i < f->nstages; i++)
    r->stage_comm[i] = MPI_COMM_NULL;
  for (i = 0; i < f->nstages; i++) {
    k = instance_on(&f->stages[i], f->rank);
    if (river__watchdog_fired())   /* nothing new starts (src/agree.c) */
      return RIVER_ETIMEDOUT;
    if (MPI_Comm_split(f->comm, k >= 0 ? 0 : MPI_UNDEFINED, k,
                       &r->stage_comm[i]) != MPI_SUCCESS)
      return RIVER_EMPI;
  }
  return RIVER_SUCCESS;
}

/* ------------------------------------------------------------ the API */

int river_flow_go_async(river_flow *f)
{
  struct river__run *r;
  int i, rc;

  if (f == NULL)
    return RIVER_EINVAL;
  if (f->comm == MPI_COMM_NULL) {
    river__error("river_flow_go_async: a plan (a flow without a "
                 "communicator) cannot run");
    return RIVER_EINVAL;
  }
  if (f->state == RIVER__FLOW_RUNNING || f->state == RIVER__FLOW_DONE) {
    river__error("river_flow_go_async: a flow runs once");
    return RIVER_ESTATE;
  }
  rc = river_flow_check(f);
  if (rc != RIVER_SUCCESS)
    return rc;
  r = calloc(1, sizeof *r);
  rc = r == NULL ? RIVER_ENOMEM : RIVER_SUCCESS;
  if (rc == RIVER_SUCCESS) {
    f->run = r;
    f->run_free = river__flow_run_free;
    r->abort_comm = MPI_COMM_NULL;
    r->abort_rx = MPI_REQUEST_NULL;
    r->dqs = calloc((size_t)f->nedges + 1, sizeof *r->dqs);
    r->parts = calloc((size_t)f->nedges + 1, sizeof *r->parts);
    r->edge_path = calloc((size_t)f->nedges + 1, sizeof *r->edge_path);
    rc = r->dqs == NULL || r->parts == NULL || r->edge_path == NULL
         ? RIVER_ENOMEM
         : river__sched_create(0, &r->sched);
  }
  rc = river__agree(f->comm, rc);
  for (i = 0; i < f->nedges && rc == RIVER_SUCCESS; i++)
    rc = make_queue(f, r, i);
  if (rc == RIVER_SUCCESS)
    rc = stage_comms(f, r);
  if (rc == RIVER_SUCCESS)
    rc = abort_open(f, r);
  if (rc == RIVER_SUCCESS)
    rc = spawn_instances(f, r);
  rc = river__agree(f->comm, rc);
  if (rc != RIVER_SUCCESS) {
    river__flow_run_free(f);
    return rc;
  }
  f->state = RIVER__FLOW_RUNNING;
  return RIVER_SUCCESS;
}

/* Every task here has returned: tear down (collective) and agree. */
static int finish(river_flow *f, int local)
{
  struct river__run *r = f->run;
  int i;

  for (i = 0; i < f->nedges; i++) {
    river_dq_destroy(r->dqs[i]);
    r->dqs[i] = NULL;
  }
  r->outcome = river__agree(f->comm, local);
  abort_close(f, r, 1);
  /* Outputs outside the queues appear only now, and only if the flow
   * succeeded everywhere; a publish that fails fails the flow everywhere
   * (the outcome is agreed again, only when there was one to publish). */
  local = river__run_ends(r, r->outcome);
  if (r->outcome == RIVER_SUCCESS)
    r->outcome = river__agree(f->comm, local);
  r->finished = 1;
  f->state = RIVER__FLOW_DONE;
  return r->outcome;
}

int river_flow_test(river_flow *f, int *done)
{
  struct river__run *r;
  int rc;

  if (f == NULL || done == NULL)
    return RIVER_EINVAL;
  r = f->run;
  if (r == NULL || (f->state != RIVER__FLOW_RUNNING
                    && f->state != RIVER__FLOW_DONE))
    return RIVER_ESTATE;
  if (r->finished) {
    *done = 1;
    return r->outcome;
  }
  rc = river__sched_step(r->sched, done);
  if (!*done)
    return RIVER_SUCCESS;
  return finish(f, rc);
}

int river_flow_wait(river_flow *f)
{
  struct river__run *r;

  if (f == NULL)
    return RIVER_EINVAL;
  r = f->run;
  if (r == NULL || (f->state != RIVER__FLOW_RUNNING
                    && f->state != RIVER__FLOW_DONE))
    return RIVER_ESTATE;
  if (r->finished)
    return r->outcome;
  return finish(f, river__sched_run(r->sched));
}

int river_flow_go(river_flow *f)
{
  int rc = river_flow_go_async(f);

  return rc == RIVER_SUCCESS ? river_flow_wait(f) : rc;
}

int river_flow_stage_stats(river_flow *f, const char *stage,
                           river_stage_stats *st)
{
  struct river__run *r;
  uint64_t sums[4] = {0, 0, 0, 0};
  struct { double t; int who; } mine = {-1.0, -1}, slowest;
  int s, i;

  if (f == NULL || stage == NULL || st == NULL)
    return RIVER_EINVAL;
  r = f->run;
  if (r == NULL || !r->finished)
    return RIVER_ESTATE;
  s = river__flow_stage_index(f, stage);
  if (s < 0) {
    river__error("river_flow_stage_stats: no stage '%s'", stage);
    return RIVER_ENOTFOUND;
  }
  for (i = 0; i < r->ninst; i++) {
    const struct river__inst *in = &r->inst[i];
    if (in->ctx.stage != &f->stages[s])
      continue;
    sums[0] = in->st.records_in;
    sums[1] = in->st.bytes_in;
    sums[2] = in->st.records_out;
    sums[3] = in->st.bytes_out;
    mine.t = in->st.run_seconds;
    mine.who = in->ctx.instance;
  }
  if (river__allreduce(MPI_IN_PLACE, sums, 4, MPI_UINT64_T, MPI_SUM,
                       f->comm) != RIVER_SUCCESS
      || river__allreduce(&mine, &slowest, 1, MPI_DOUBLE_INT, MPI_MAXLOC,
                          f->comm) != RIVER_SUCCESS)
    return RIVER_EMPI;
  st->ninstances = f->stages[s].nranks;
  st->records_in = sums[0];
  st->bytes_in = sums[1];
  st->records_out = sums[2];
  st->bytes_out = sums[3];
  st->seconds = slowest.t;
  st->slowest = slowest.who;
  st->in_credits = 0;
  for (i = 0; i < f->stages[s].ninputs; i++)
    if (f->stages[s].in_edge[i] >= 0)
      st->in_credits |= r->edge_path[f->stages[s].in_edge[i]];
  return RIVER_SUCCESS;
}
