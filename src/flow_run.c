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

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Edge e's partitioner (src/flow_partition.c), saying what is wrong. */
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
                     river_filter_at at, river_pred **pred)
{
  const char *why = "";

  *pred = NULL;
  if (e->opts.filter == NULL || e->opts.filter_at != at)
    return RIVER_SUCCESS;
  /* checked before: only RIVER_ENOMEM can fail here */
  return river_pred_parse(f->stages[e->from].out_schema[e->opts.from_output],
                          e->opts.filter, pred, &why);
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
    if (e->opts.kind == RIVER_EDGE_DQ && e->opts.policy == RIVER_DQ_PULL) {
      in->in[p].nproducers = f->stages[e->from].nranks;
      in->in[p].units_from = calloc((size_t)in->in[p].nproducers,
                                    sizeof *in->in[p].units_from);
      if (in->in[p].units_from == NULL)
        return RIVER_ENOMEM;
    }
  }
  for (p = 0; p < s->noutputs; p++) {
    const river__edge *e = &f->edges[s->out_edge[p]];
    size_t msg = e->opts.message_size ? e->opts.message_size
                                      : RIVER_DQ_DEFAULT_MESSAGE_SIZE, max;
    in->out[p].q = r->dqs[s->out_edge[p]];
    river_schema_record_size(s->out_schema[p], &in->out[p].record_size);
    in->out[p].chunk = msg / in->out[p].record_size;
    /* No more than one try_put always takes (river_dq_put_max): an
     * EXCHANGE edge's records may all go to one consumer; a PULL edge's
     * unit is claimed only once it has records, so a chunk that opens
     * a unit must not fill a message; and a chunk counted without the
     * message's header (above) can be a record more than a message
     * holds: two messages, more than a credit of 1 carries. */
    if (in->out[p].q != NULL
        && river_dq_put_max(in->out[p].q, &max) == RIVER_SUCCESS
        && in->out[p].chunk > max)
      in->out[p].chunk = max;
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
  unsigned long said = river__log_errors();
  int rc, frc;

  rc = s->mod->fn(&in->ctx);
  if (rc == RIVER_EOS)
    rc = RIVER_SUCCESS;  /* an input's end passed on: done */
  if (rc != RIVER_SUCCESS) {
    /* After the flow failed elsewhere a failure is most likely that
     * one's consequence (a peer gone, an input cut short), and a module
     * (or River under it) that said what went wrong has said it: then
     * this line is for debugging only, so that a failure is said once,
     * where it happened. */
    struct river__run *run = in->ctx.flow->run;
    int after = river__flow_aborted(in->ctx.flow);
    char line[sizeof run->unsaid];

    snprintf(line, sizeof line, "stage %s instance %d (module %s) failed: "
             "%s", s->name, in->ctx.instance, s->mod->name,
             river_strerror(rc));
    river_log(RIVER_LOG_DEBUG, "%s%s", line,
              after ? " (after the flow failed elsewhere)" : "");
    /* Said at the end, by one rank, if no rank said why (finish). */
    if (!after && river__log_errors() == said && run->unsaid[0] == '\0')
      snprintf(run->unsaid, sizeof run->unsaid, "%s", line);
    river__flow_abort(in->ctx.flow);  /* before its outputs close */
  }
  frc = river__inst_finish(in);
  in->st.run_seconds = river_wtime() - t0;
  river__series_end(in);
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

static void run_free(river_flow *f, struct river__run *r)
{
  int i;

  if (r == NULL)
    return;
  if (!r->finished)   /* a flow that never finished publishes nothing */
    river__run_ends(r, RIVER_ESTATE);
  river__progress_drop(r->progress);
  r->progress = NULL;
  for (i = 0; r->dqs != NULL && i < f->nedges; i++)
    if (r->dqs[i] != NULL)
      river_dq_destroy(r->dqs[i]);  /* collective, in edge order */
  for (i = 0; r->inst != NULL && i < r->ninst; i++) {
    const river__stage *s = r->inst[i].ctx.stage;
    int p;
    for (p = 0; r->inst[i].out != NULL && p < s->noutputs; p++) {
      free(r->inst[i].out[p].buf);
      free(r->inst[i].out[p].fbuf);
      river_pred_destroy(r->inst[i].out[p].pred);
    }
    for (p = 0; r->inst[i].in != NULL && p < s->ninputs; p++) {
      free(r->inst[i].in[p].fbuf);
      free(r->inst[i].in[p].units_from);
      river_pred_destroy(r->inst[i].in[p].pred);
    }
    free(r->inst[i].in);
    free(r->inst[i].out);
    river__emul_free(&r->inst[i].emul);
    river__series_free(&r->inst[i]);
    free(r->inst[i].gd_words);
  }
  river__flow_abort_close(f, r, 0);
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
  for (i = 0; r->edge_st != NULL && i < f->nedges; i++) {
    free(r->edge_st[i].msgs_to);
    free(r->edge_st[i].units_from);
  }
  free(r->edge_st);
  free(r);
}

void river__flow_run_free(river_flow *f)
{
  if (f != NULL) {
    run_free(f, f->run);
    f->run = NULL;
  }
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

/* ------------------------------------------------------- the progress */

/* This rank's counts for the progress line: records its source
 * instances (no input) put out and its sink instances (no output) took
 * in, their bytes, and its work: what each instance took in, or put out
 * where it has no input. */
static void progress_sample(void *arg, uint64_t *cnt)
{
  const struct river__run *r = arg;
  int i;

  memset(cnt, 0, RIVER__PROGRESS_NCOUNT * sizeof *cnt);
  for (i = 0; i < r->ninst; i++) {
    const struct river__inst *in = &r->inst[i];
    const river__stage *s = in->ctx.stage;

    if (s->ninputs == 0) {
      cnt[0] += in->st.records_out;
      cnt[2] += in->st.bytes_out;
    }
    if (s->noutputs == 0) {
      cnt[1] += in->st.records_in;
      cnt[3] += in->st.bytes_in;
    }
    cnt[4] += s->ninputs > 0 ? in->st.bytes_in : in->st.bytes_out;
  }
}

/* Collective: the progress line, where asked (river_flow_progress) or
 * RIVER_PROGRESS=1 says so. */
static int progress_start(river_flow *f, struct river__run *r)
{
  int asked = f->progress_label[0] != '\0';

  return river__progress_create(f->comm, asked ? f->progress_label : "flow",
                                f->progress_records, 0, asked,
                                progress_sample, r, &r->progress);
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
  if (r != NULL)
    r->errors0 = river__log_errors();
  rc = r == NULL ? RIVER_ENOMEM : RIVER_SUCCESS;
  if (rc == RIVER_SUCCESS) {
    f->run = r;
    f->run_free = river__flow_run_free;
    r->abort_comm = MPI_COMM_NULL;
    r->abort_rx = MPI_REQUEST_NULL;
    r->dqs = calloc((size_t)f->nedges + 1, sizeof *r->dqs);
    r->parts = calloc((size_t)f->nedges + 1, sizeof *r->parts);
    r->edge_path = calloc((size_t)f->nedges + 1, sizeof *r->edge_path);
    r->edge_st = calloc((size_t)f->nedges + 1, sizeof *r->edge_st);
    rc = r->dqs == NULL || r->parts == NULL || r->edge_path == NULL
         || r->edge_st == NULL
         ? RIVER_ENOMEM
         : river__sched_create(0, &r->sched);
  }
  rc = river__agree(f->comm, rc);
  for (i = 0; i < f->nedges && rc == RIVER_SUCCESS; i++)
    rc = make_queue(f, r, i);
  if (rc == RIVER_SUCCESS)
    rc = stage_comms(f, r);
  if (rc == RIVER_SUCCESS)
    rc = river__flow_abort_open(f, r);
  if (rc == RIVER_SUCCESS)
    rc = spawn_instances(f, r);
  if (rc == RIVER_SUCCESS)
    river__series_start(r);
  rc = river__agree(f->comm, rc);
  if (rc == RIVER_SUCCESS)
    rc = progress_start(f, r);   /* collective; agreed within */
  if (rc != RIVER_SUCCESS) {
    river__flow_run_free(f);
    return rc;
  }
  f->state = RIVER__FLOW_RUNNING;
  return RIVER_SUCCESS;
}

/* Keep edge i's queue's counters on this rank (river__edge_stats);
 * without memory for its messages per consumer, those are left out. */
static void keep_edge_stats(const river_flow *f, struct river__run *r, int i)
{
  struct river__edge_stats *e = &r->edge_st[i];
  river_dq_stats st;
  int k, n;

  if (r->dqs[i] == NULL || river_dq_stats_get(r->dqs[i], &st)
                               != RIVER_SUCCESS)
    return;
  e->records_out = st.records_out;
  e->messages_out = st.messages_out;
  e->records_in = st.records_in;
  e->messages_in = st.messages_in;
  e->credit_stalls = st.credit_stalls;
  e->put_wait_seconds = st.put_wait_seconds;
  e->get_wait_seconds = st.get_wait_seconds;
  if (st.msgs_to != NULL && st.producer_index >= 0 && st.nconsumers > 0
      && (e->msgs_to = malloc((size_t)st.nconsumers * sizeof *e->msgs_to))
             != NULL) {
    memcpy(e->msgs_to, st.msgs_to, (size_t)st.nconsumers * sizeof *e->msgs_to);
    e->nconsumers = st.nconsumers;
  }
  /* The units this rank's instance took from each producer (a PULL
   * edge's consumer), counted by the flow as they came (flow_io.c). */
  for (k = 0; k < r->ninst; k++) {
    const struct river__inst *in = &r->inst[k];
    const river__edge *ed = &f->edges[i];
    if (in->ctx.stage != &f->stages[ed->to]
        || in->in[ed->opts.to_input].units_from == NULL)
      continue;
    n = in->in[ed->opts.to_input].nproducers;
    if ((e->units_from = malloc((size_t)n * sizeof *e->units_from))
        != NULL) {
      memcpy(e->units_from, in->in[ed->opts.to_input].units_from,
             (size_t)n * sizeof *e->units_from);
      e->nproducers = n;
    }
  }
}

/* The outcome, agreed; and if the flow failed with nothing said on any
 * rank about why, the lowest rank with a failure nothing said says its
 * first (run->unsaid): a failure is said once, where it happened, and
 * the failures it caused elsewhere are not (src/flow_run.c,
 * run_instance). */
static int agree_said(river_flow *f, struct river__run *r, int local)
{
  int v[3], rc;

  v[0] = local;
  v[1] = river__log_errors() == r->errors0;   /* 0: this rank said one */
  v[2] = r->unsaid[0] != '\0' ? f->rank : INT_MAX;
  rc = river__allreduce(MPI_IN_PLACE, v, 3, MPI_INT, MPI_MIN, f->comm);
  if (rc != RIVER_SUCCESS)
    return river__agree(f->comm, local);   /* says why; agrees */
  if (v[0] != RIVER_SUCCESS && v[1] && v[2] == f->rank)
    river__error("%s", r->unsaid);
  return v[0];
}

/* Every task here has returned: tear down (collective) and agree. */
static int finish(river_flow *f, int local)
{
  struct river__run *r = f->run;
  int i, rc;

  /* The closing line counts every record, where every rank succeeded;
   * collective. */
  rc = r->progress != NULL
       ? river_progress_end(r->progress, local == RIVER_SUCCESS)
       : RIVER_SUCCESS;
  r->progress = NULL;
  if (rc != RIVER_SUCCESS && local == RIVER_SUCCESS)
    local = rc;

  river__series_report(r);
  for (i = 0; i < f->nedges; i++) {
    keep_edge_stats(f, r, i);
    river_dq_destroy(r->dqs[i]);
    r->dqs[i] = NULL;
  }
  r->outcome = agree_said(f, r, local);
  river__flow_abort_close(f, r, 1);
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
