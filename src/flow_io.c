/*
 * flow_io.c - what a running module calls to move records
 * (river/module.h): get, try_get, select, put, reserve, commit,
 * end_unit, its stats, and what happens after it returns.
 *
 * Each call is a loop over the distributed queue's nonblocking form
 * (river_dq_try_get, try_put, ...): when the queue cannot serve it now,
 * the module's task yields (river__sched_yield(1)) so that the other
 * stages on this rank run, and the rank backs off when all are waiting.
 * Time spent so is counted as blocked time in the instance's stats.
 */
#include "flow_run_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The running instance behind ctx into *out: RIVER_EINVAL for no ctx
 * (one code for one misuse across the module API: a NULL argument),
 * RIVER_ESTATE (logged) if ctx is not a running module's (a context of
 * a schema callback, or of a flow that does not run). */
static int inst_of(river_ctx *ctx, const char *call, struct river__inst **out)
{
  *out = NULL;
  if (ctx == NULL)
    return RIVER_EINVAL;
  if (ctx->run == NULL || river__sched_current() == NULL) {
    river__error("%s: not called from a running module", call);
    return RIVER_ESTATE;
  }
  *out = ctx->run;
  return RIVER_SUCCESS;
}

static int in_port(river_ctx *ctx, const char *call, int i,
                   struct river__inst **out)
{
  struct river__inst *in;
  int rc = inst_of(ctx, call, &in);

  if (rc != RIVER_SUCCESS)
    return rc;
  if (i < 0 || i >= ctx->stage->ninputs) {
    river__error("%s: stage %s has no input %d", call, ctx->stage->name, i);
    return RIVER_EINVAL;
  }
  *out = in;
  return RIVER_SUCCESS;
}

static int out_port(river_ctx *ctx, const char *call, int o,
                    struct river__inst **out)
{
  struct river__inst *in;
  int rc = inst_of(ctx, call, &in);

  if (rc != RIVER_SUCCESS)
    return rc;
  if (o < 0 || o >= ctx->stage->noutputs) {
    river__error("%s: stage %s has no output %d", call, ctx->stage->name, o);
    return RIVER_EINVAL;
  }
  if (in->out[o].closed)
    return RIVER_ESTATE;
  *out = in;
  return RIVER_SUCCESS;
}

/* Yield as blocked, counting the time in *wait: RIVER_SUCCESS, or
 * RIVER_ETIMEDOUT once the watchdog has fired (src/sched.c). First,
 * forward the flow's abort notices that have come (src/flow_abort.c): a
 * rank whose tasks wait on their queues must pass them on, also under
 * river_flow_test, whose steps never nap through the backoff hooks. */
static int wait_a_turn(struct river__inst *in, double *wait)
{
  double t0 = river_wtime();
  int rc;

  (void)river__flow_aborted(in->ctx.flow);
  rc = river__sched_yield(1);

  *wait += river_wtime() - t0;
  river__series_tick(in);
  return rc;
}

/* The watchdog ended instance in's wait on queue q (NULL: none) for
 * `what`: log it, naming (the first 64 of) the ranks q waits for, ranks
 * of the flow's communicator, which q was created over. RIVER_ETIMEDOUT. */
static int timed_out(struct river__inst *in, river_dq *q, const char *what)
{
  char line[160];
  int ranks[64], n = 0;

  snprintf(line, sizeof line, "stage %s instance %d %s",
           in->ctx.stage->name, in->ctx.instance, what);
  if (q == NULL || river_dq_waiting_for(q, ranks, 64, &n) != RIVER_SUCCESS)
    return river__timeout_error(MPI_COMM_NULL, NULL, 0, line);
  return river__timeout_error(in->ctx.flow->comm, ranks, n < 64 ? n : 64,
                              line);
}

/* ------------------------------------------------------------- input */

/* The records of the message just taken from p's queue that pass p's
 * filter, copied to p->fbuf; the message goes back to the queue. */
static int sink_filter(struct river__in *p, const void **recs, size_t *n)
{
  if (*n > p->fcap) {
    unsigned char *b = realloc(p->fbuf, *n * p->record_size);
    if (b == NULL)
      return RIVER_ENOMEM;
    p->fbuf = b;
    p->fcap = *n;
  }
  /* Cannot fail: a filter, and room for the *n records. */
  river_pred_keep(p->pred, *recs, *n, p->fbuf, n);
  *recs = p->fbuf;
  river_dq_release(p->q);
  p->holding = 0;
  return RIVER_SUCCESS;
}

/* Emulation (a stage's cpu_rate): what a get hands over keeps the
 * stage's CPU busy for bytes / (cpu_rate x its perturb factor now), a
 * debt in its token bucket; the next get or select waits until it is
 * paid (yielding to the rank's other tasks) and a try_get says
 * RIVER_EAGAIN until then (unless select chose its message). What the
 * runtime drains after the module returns is not charged, and a failed
 * flow stops the waiting. */
static void charge_cpu(struct river__inst *inst, int input, size_t n)
{
  river__emul_charge_cpu(&inst->emul, inst->ctx.instance,
                         n * inst->in[input].record_size);
}

static int cpu_busy(const struct river__inst *inst)
{
  return inst->emul.cpu != NULL && river_wtime() < inst->emul.cpu_ready
         && !river__flow_aborted(inst->ctx.flow);
}

/* A PULL edge's message just taken: a unit's first counts one unit
 * taken from its producer (for the stats file). */
static void count_unit(struct river__in *p)
{
  uint64_t u, k;
  int first, last;

  if (p->units_from == NULL
      || river_dq_unit(p->q, &u, &first, &last) != RIVER_SUCCESS || !first)
    return;
  k = u >> RIVER_DQ_UNIT_SHIFT;
  if (k < (uint64_t)p->nproducers)
    p->units_from[k]++;
}

/* One try at input i's next message: a pending one from select, or the
 * queue's (releasing the message lent before). A message that the
 * edge's filter empties is skipped. */
static int fetch(struct river__inst *inst, int i, const void **recs,
                 size_t *n)
{
  struct river__in *p = &inst->in[i];
  int rc;

  if (p->pending) {
    p->pending = 0;
    *recs = p->recs;
    *n = p->n;
    return RIVER_SUCCESS;
  }
  if (p->ended)
    return RIVER_EOS;
  do {
    if (p->holding)
      river_dq_release(p->q);  /* the module is done with it */
    p->holding = 0;
    rc = river_dq_try_get(p->q, recs, n, NULL);
    if (rc == RIVER_SUCCESS) {
      p->holding = 1;
      count_unit(p);
    }
    if (rc == RIVER_SUCCESS && p->pred != NULL)
      rc = sink_filter(p, recs, n);
  } while (rc == RIVER_SUCCESS && p->pred != NULL && *n == 0);
  if (rc == RIVER_SUCCESS) {
    inst->st.records_in += *n;
    inst->st.bytes_in += *n * p->record_size;
    p->got = 1;
    river__progress_tick();
    river__series_tick(inst);
  } else if (rc == RIVER_EOS) {
    p->got = 0;
    p->ended = 1;
    river_dq_release(p->q);
  }
  return rc;
}

int river_try_get(river_ctx *ctx, int input, const void **records, size_t *n)
{
  struct river__inst *in;
  int rc;

  if (records == NULL || n == NULL)
    return RIVER_EINVAL;
  rc = in_port(ctx, "river_try_get", input, &in);
  /* A message river_select chose is handed over: select waited. */
  if (rc == RIVER_SUCCESS && !in->in[input].pending && cpu_busy(in))
    return RIVER_EAGAIN;
  if (rc == RIVER_SUCCESS && (rc = fetch(in, input, records, n))
                                 == RIVER_SUCCESS)
    charge_cpu(in, input, *n);
  return rc;
}

int river_get(river_ctx *ctx, int input, const void **records, size_t *n)
{
  struct river__inst *in;
  int rc;

  if (records == NULL || n == NULL)
    return RIVER_EINVAL;
  rc = in_port(ctx, "river_get", input, &in);
  while (rc == RIVER_SUCCESS && cpu_busy(in))
    rc = river__sched_yield(1);
  while (rc == RIVER_SUCCESS
         && (rc = fetch(in, input, records, n)) == RIVER_EAGAIN) {
    if ((rc = wait_a_turn(in, &in->st.get_wait_seconds)) != RIVER_SUCCESS)
      rc = timed_out(in, in->in[input].q, "waiting for its input");
  }
  if (rc == RIVER_SUCCESS)
    charge_cpu(in, input, *n);
  return rc;
}

int river_select(river_ctx *ctx, int *input)
{
  struct river__inst *in;
  int k, i, live, rc = inst_of(ctx, "river_select", &in);
  size_t ni;

  if (rc != RIVER_SUCCESS)
    return rc;
  if (input == NULL)
    return RIVER_EINVAL;
  while (cpu_busy(in))   /* the emulated CPU is busy: no input is ready */
    river__sched_yield(1);
  ni = (size_t)ctx->stage->ninputs;
  for (;;) {
    for (k = 0, live = 0; k < (int)ni; k++) {
      struct river__in *p;
      i = (in->next_select + k) % (int)ni;
      p = &in->in[i];
      if (p->ended && !p->pending)
        continue;
      live++;
      if (!p->pending) {
        rc = fetch(in, i, &p->recs, &p->n);
        if (rc == RIVER_EAGAIN)
          continue;
        if (rc != RIVER_SUCCESS && rc != RIVER_EOS)
          return rc;
        p->pending = rc == RIVER_SUCCESS;
      }
      in->next_select = (i + 1) % (int)ni;
      *input = i;
      return RIVER_SUCCESS;
    }
    if (live == 0)
      return RIVER_EOS;
    if (wait_a_turn(in, &in->st.get_wait_seconds) != RIVER_SUCCESS)
      return timed_out(in, in->in[in->next_select].q,
                       "waiting for any of its inputs");
  }
}

/* ------------------------------------------------------------ output */

int river_put(river_ctx *ctx, int output, const void *records, size_t n)
{
  struct river__inst *in;
  struct river__out *o;
  const unsigned char *r = records, *send;
  size_t k, m;
  int rc;

  if (records == NULL && n > 0)
    return RIVER_EINVAL;
  rc = out_port(ctx, "river_put", output, &in);
  if (rc != RIVER_SUCCESS)
    return rc;
  o = &in->out[output];
  o->used = 1;
  while (n > 0) {
    k = n < o->chunk ? n : o->chunk;
    send = r;
    m = k;
    if (o->pred != NULL) {  /* the edge's filter, at the source */
      river_pred_keep(o->pred, r, k, o->fbuf, &m);  /* room for a chunk */
      send = o->fbuf;
    }
    while (m > 0 && (rc = river_dq_try_put(o->q, send, m)) == RIVER_EAGAIN)
      if (wait_a_turn(in, &in->st.put_wait_seconds) != RIVER_SUCCESS)
        return timed_out(in, o->q, "waiting to put records");
    if (m > 0 && rc != RIVER_SUCCESS)
      return rc;
    in->st.records_out += m;
    in->st.bytes_out += m * o->record_size;
    river__progress_tick();
    river__series_tick(in);
    r += k * o->record_size;
    n -= k;
  }
  return RIVER_SUCCESS;
}

int river_reserve(river_ctx *ctx, int output, void **buf, size_t *max)
{
  struct river__inst *in;
  struct river__out *o;
  int rc;

  if (buf == NULL || max == NULL)
    return RIVER_EINVAL;
  rc = out_port(ctx, "river_reserve", output, &in);
  o = rc == RIVER_SUCCESS ? &in->out[output] : NULL;
  if (o != NULL)
    o->used = 1;
  if (o != NULL && o->copy) {
    /* The queue places each record itself: lend a buffer of ours. */
    if (o->buf == NULL && (o->buf = malloc(o->chunk * o->record_size))
                              == NULL)
      return RIVER_ENOMEM;
    *buf = o->buf;
    *max = o->chunk;
    return RIVER_SUCCESS;
  }
  while (rc == RIVER_SUCCESS
         && (rc = river_dq_try_reserve(in->out[output].q, buf, max))
                == RIVER_EAGAIN) {
    if ((rc = wait_a_turn(in, &in->st.put_wait_seconds)) != RIVER_SUCCESS)
      rc = timed_out(in, in->out[output].q, "waiting to reserve space");
  }
  return rc;
}

int river_commit(river_ctx *ctx, int output, size_t n)
{
  struct river__inst *in;
  int rc = out_port(ctx, "river_commit", output, &in);

  if (rc == RIVER_SUCCESS && in->out[output].copy) {
    if (n > in->out[output].chunk || in->out[output].buf == NULL)
      return RIVER_EINVAL;
    return river_put(ctx, output, in->out[output].buf, n);
  }
  if (rc == RIVER_SUCCESS)
    rc = river_dq_try_commit(in->out[output].q, n);
  if (rc == RIVER_SUCCESS) {
    in->st.records_out += n;
    in->st.bytes_out += n * in->out[output].record_size;
    river__progress_tick();
    river__series_tick(in);
  }
  return rc;
}

int river_end_unit(river_ctx *ctx, int output)
{
  struct river__inst *in;
  int rc = out_port(ctx, "river_end_unit", output, &in);
  const river__edge *e;

  if (rc != RIVER_SUCCESS)
    return rc;
  e = &ctx->flow->edges[ctx->stage->out_edge[output]];
  if (e->opts.kind != RIVER_EDGE_DQ || e->opts.policy != RIVER_DQ_PULL)
    return RIVER_SUCCESS;  /* units mean something on pull edges only */
  while ((rc = river_dq_try_end_unit(in->out[output].q)) == RIVER_EAGAIN)
    if (wait_a_turn(in, &in->st.put_wait_seconds) != RIVER_SUCCESS)
      return timed_out(in, in->out[output].q, "waiting to end a unit");
  return rc;
}

/* ------------------------------------------------------------ units */

int river_get_unit(river_ctx *ctx, int input, uint64_t *unit, int *first,
                   int *last)
{
  struct river__inst *in;
  const river__edge *e;
  uint64_t u;
  int f, l, rc = in_port(ctx, "river_get_unit", input, &in);

  if (rc != RIVER_SUCCESS)
    return rc;
  e = &ctx->flow->edges[ctx->stage->in_edge[input]];
  if (e->opts.kind != RIVER_EDGE_DQ || e->opts.policy != RIVER_DQ_PULL)
    return RIVER_ENOTSUP;
  if (!in->in[input].got)
    return RIVER_ESTATE;
  rc = river_dq_unit(in->in[input].q, &u, &f, &l);
  if (rc != RIVER_SUCCESS)
    return rc;
  if (unit != NULL)
    *unit = u;
  if (first != NULL)
    *first = f;
  if (last != NULL)
    *last = l;
  return RIVER_SUCCESS;
}

int river_set_tag(river_ctx *ctx, int output, uint64_t tag)
{
  struct river__inst *in;
  int rc = out_port(ctx, "river_set_tag", output, &in);

  if (rc != RIVER_SUCCESS)
    return rc;
  rc = river_dq_set_tag(in->out[output].q, tag);
  if (rc == RIVER_ESTATE)
    river__error("river_set_tag: stage %s output %d: records put under "
                 "the old tag are not sent yet (set a tag before the first "
                 "put, or on a pull edge between units)", ctx->stage->name,
                 output);
  return rc;
}

int river_get_tag(river_ctx *ctx, int input, uint64_t *tag)
{
  struct river__inst *in;
  int rc = in_port(ctx, "river_get_tag", input, &in);

  if (rc != RIVER_SUCCESS)
    return rc;
  if (tag == NULL)
    return RIVER_EINVAL;
  if (!in->in[input].got)
    return RIVER_ESTATE;
  return river_dq_tag(in->in[input].q, tag);
}

/* ------------------------------------------------------- partitions */

int river_output_consumers(const river_ctx *ctx, int output, int *n)
{
  const river__edge *e;

  if (ctx == NULL || n == NULL || output < 0
      || output >= ctx->stage->noutputs || ctx->stage->out_edge[output] < 0)
    return RIVER_EINVAL;
  e = &ctx->flow->edges[ctx->stage->out_edge[output]];
  *n = ctx->flow->stages[e->to].nranks;
  return RIVER_SUCCESS;
}

/* The edge on port `port` of ctx's stage, an input if `in`, or NULL. */
static const river__edge *port_edge(const river_ctx *ctx, int in, int port)
{
  const river__stage *s = ctx != NULL ? ctx->stage : NULL;
  int n = s == NULL ? 0 : in ? s->ninputs : s->noutputs, e;

  if (port < 0 || port >= n)
    return NULL;
  e = in ? s->in_edge[port] : s->out_edge[port];
  return e < 0 ? NULL : &ctx->flow->edges[e];
}

int river_input_producers(const river_ctx *ctx, int input, int *n)
{
  const river__edge *e = port_edge(ctx, 1, input);

  if (e == NULL || n == NULL)
    return RIVER_EINVAL;
  *n = e->opts.kind == RIVER_EDGE_ONE_TO_ONE
           ? 1 : ctx->flow->stages[e->from].nranks;
  return RIVER_SUCCESS;
}

int river_input_edge(const river_ctx *ctx, int input, river_edge_opts *opts)
{
  const river__edge *e = port_edge(ctx, 1, input);

  if (e == NULL || opts == NULL)
    return RIVER_EINVAL;
  *opts = e->opts;
  return RIVER_SUCCESS;
}

int river_output_edge(const river_ctx *ctx, int output,
                      river_edge_opts *opts)
{
  const river__edge *e = port_edge(ctx, 0, output);

  if (e == NULL || opts == NULL)
    return RIVER_EINVAL;
  *opts = e->opts;
  return RIVER_SUCCESS;
}

int river_set_partitioner(river_ctx *ctx, int output, int by,
                          const void *splitters, size_t n)
{
  struct river__run *r;
  struct river__inst *in;
  struct river__part *p;
  const river__edge *e;
  const river_schema *s;
  size_t koff = 0, bad = 0;
  int ei, rc = out_port(ctx, "river_set_partitioner", output, &in);

  if (rc != RIVER_SUCCESS)
    return rc;
  ei = ctx->stage->out_edge[output];
  e = &ctx->flow->edges[ei];
  r = ctx->flow->run;
  p = &r->parts[ei];
  s = ctx->stage->out_schema[output];
  river_schema_key(s, NULL, &koff, NULL);
  /* (A hash places by the edge's field, whichever it is; ranges and
   * splitters are in the records' key.) */
  if (e->opts.kind != RIVER_EDGE_EXCHANGE
      || (p->k.offset != koff && by != RIVER_BY_HASH)
      || (by != RIVER_BY_HASH && by != RIVER_BY_RANGE)
      || (by == RIVER_BY_HASH && n != 0)
      || (n > 0 && (splitters == NULL
                    || n != (size_t)ctx->flow->stages[e->to].nranks - 1))) {
    river__error("river_set_partitioner: stage %s output %d: %s",
                 ctx->stage->name, output,
                 e->opts.kind != RIVER_EDGE_EXCHANGE
                     ? "not an exchange edge"
                 : p->k.offset != koff && by != RIVER_BY_HASH
                     ? "the edge exchanges on a field other than the "
                       "records' key"
                 : "bad arguments (by, or splitters: consumers - 1 keys)");
    return RIVER_EINVAL;
  }
  if (in->out[output].used) {
    river__error("river_set_partitioner: stage %s output %d: records have "
                 "been put already", ctx->stage->name, output);
    return RIVER_ESTATE;
  }
  if (by == RIVER_BY_HASH) {
    p->mode = RIVER__PART_HASH;
    return RIVER_SUCCESS;
  }
  if (n == 0) {
    if (river__part_is_float(p)) {
      river__error("river_set_partitioner: stage %s output %d: the evenly "
                   "split key space of a floating-point key is not "
                   "supported (give splitters)", ctx->stage->name, output);
      return RIVER_ENOTSUP;
    }
    p->mode = RIVER__PART_RANGE;
    return RIVER_SUCCESS;
  }
  rc = river__part_set_splitters(p, splitters, n, &bad);
  if (rc == RIVER_EINVAL)
    river__error("river_set_partitioner: stage %s: splitter %zu is below "
                 "splitter %zu (splitters go in key order)", ctx->stage->name,
                 bad, bad - 1);
  return rc;
}

int river_ctx_stats(const river_ctx *ctx, river_module_stats *st)
{
  if (ctx == NULL || st == NULL)
    return RIVER_EINVAL;
  if (ctx->run == NULL)
    return RIVER_ESTATE;   /* not a running module's context */
  *st = ((const struct river__inst *)ctx->run)->st;
  return RIVER_SUCCESS;
}

/* ------------------------------------------------------------ peers */

int river_ctx_comm(const river_ctx *ctx, MPI_Comm *comm)
{
  const struct river__inst *in;

  if (ctx == NULL || comm == NULL)
    return RIVER_EINVAL;
  if (ctx->run == NULL)
    return RIVER_ESTATE;   /* not a running module's context */
  in = ctx->run;
  *comm = in->comm;
  return RIVER_SUCCESS;
}

int river_ctx_wait(river_ctx *ctx, MPI_Request *req, MPI_Status *status)
{
  struct river__inst *in;
  int done = 0, rc = inst_of(ctx, "river_ctx_wait", &in);

  if (rc != RIVER_SUCCESS)
    return rc;
  if (req == NULL)
    return RIVER_EINVAL;
  for (;;) {
    if (MPI_Test(req, &done, status) != MPI_SUCCESS)
      return RIVER_EMPI;
    if (done)
      return RIVER_SUCCESS;
    if (river__flow_aborted(ctx->flow)) {
      /* A peer may never join: leave the request (its buffers must
       * outlive the flow's run, as the module's own do). */
      river_log(RIVER_LOG_DEBUG, "stage %s instance %d: the flow failed "
                "elsewhere; not waiting for the stage's peers",
                ctx->stage->name, ctx->instance);
      return RIVER_ESTATE;
    }
    if (river__sched_yield(1) != RIVER_SUCCESS)
      return timed_out(in, NULL, "waiting for the stage's peers");
  }
}

/* Wait for req on buffers a and b of the call's own: on failure (the
 * request left pending) they stay MPI's, else they are the caller's. */
static int wait_own(river_ctx *ctx, MPI_Request *req, void *a, void *b)
{
  int rc = river_ctx_wait(ctx, req, MPI_STATUS_IGNORE);

  if (rc != RIVER_SUCCESS) {
    river__orphan(a);
    river__orphan(b);
  }
  return rc;
}

int river_ctx_allgather(river_ctx *ctx, const uint64_t *mine, int k,
                        uint64_t *all)
{
  struct river__inst *in;
  uint64_t *send, *recv;
  int ninst, rc;
  MPI_Request req;
  MPI_Comm comm;

  if (ctx == NULL || mine == NULL || all == NULL || k < 1 || k > 65536)
    return RIVER_EINVAL;
  if ((rc = inst_of(ctx, "river_ctx_allgather", &in)) != RIVER_SUCCESS)
    return rc;
  (void)in;
  ninst = ctx->ninstances;
  send = malloc((size_t)k * sizeof *send);
  recv = malloc((size_t)k * (size_t)ninst * sizeof *recv);
  if (send == NULL || recv == NULL) {
    free(send);
    free(recv);
    return RIVER_ENOMEM;
  }
  memcpy(send, mine, (size_t)k * sizeof *send);
  if (river_ctx_comm(ctx, &comm) != RIVER_SUCCESS
      || MPI_Iallgather(send, k, MPI_UINT64_T, recv, k, MPI_UINT64_T, comm,
                        &req) != MPI_SUCCESS) {
    free(send);
    free(recv);
    return RIVER_EMPI;
  }
  if ((rc = wait_own(ctx, &req, send, recv)) != RIVER_SUCCESS)
    return rc;
  memcpy(all, recv, (size_t)k * (size_t)ninst * sizeof *all);
  free(send);
  free(recv);
  return RIVER_SUCCESS;
}

int river_ctx_agree(river_ctx *ctx, int rc)
{
  struct river__inst *in;
  MPI_Request req;
  int *v, r;

  if ((r = inst_of(ctx, "river_ctx_agree", &in)) != RIVER_SUCCESS)
    return r;
  if ((v = malloc(sizeof *v)) == NULL)
    return RIVER_ENOMEM;
  *v = rc;
  if (MPI_Iallreduce(MPI_IN_PLACE, v, 1, MPI_INT, MPI_MIN, in->comm, &req)
      != MPI_SUCCESS) {
    free(v);
    return RIVER_EMPI;
  }
  if ((r = wait_own(ctx, &req, v, NULL)) != RIVER_SUCCESS)
    return r;
  r = *v;
  free(v);
  return r;
}

int river_ctx_bcast(river_ctx *ctx, void *buf, size_t bytes, int root)
{
  struct river__inst *in;
  MPI_Request req;
  void *own;
  int rc;

  if ((rc = inst_of(ctx, "river_ctx_bcast", &in)) != RIVER_SUCCESS)
    return rc;
  if ((buf == NULL && bytes > 0) || bytes > INT_MAX || root < 0
      || root >= ctx->ninstances)
    return RIVER_EINVAL;
  if ((own = malloc(bytes ? bytes : 1)) == NULL)
    return RIVER_ENOMEM;
  if (ctx->instance == root && bytes > 0)
    memcpy(own, buf, bytes);
  if (MPI_Ibcast(own, (int)bytes, MPI_BYTE, root, in->comm, &req)
      != MPI_SUCCESS) {
    free(own);
    return RIVER_EMPI;
  }
  if ((rc = wait_own(ctx, &req, own, NULL)) != RIVER_SUCCESS)
    return rc;
  if (bytes > 0)
    memcpy(buf, own, bytes);
  free(own);
  return RIVER_SUCCESS;
}

int river_ctx_allgatherv(river_ctx *ctx, const void *mine, size_t bytes,
                         void **all, size_t *sizes)
{
  struct river__inst *in;
  uint64_t me, *each = NULL, total = 0;
  int *cnt = NULL, *dsp = NULL, n, i, rc;
  unsigned char *send = NULL, *recv = NULL;
  MPI_Request req;

  if ((rc = inst_of(ctx, "river_ctx_allgatherv", &in)) != RIVER_SUCCESS)
    return rc;
  if (all == NULL || sizes == NULL || (mine == NULL && bytes > 0))
    return RIVER_EINVAL;
  *all = NULL;
  n = ctx->ninstances;
  me = bytes;
  if ((each = malloc((size_t)n * sizeof *each)) == NULL)
    return RIVER_ENOMEM;
  if ((rc = river_ctx_allgather(ctx, &me, 1, each)) != RIVER_SUCCESS) {
    free(each);
    return rc;
  }
  for (i = 0; i < n; i++) {
    sizes[i] = (size_t)each[i];
    total += each[i] > INT_MAX ? (uint64_t)INT_MAX + 1 : each[i];
  }
  free(each);
  if (total > INT_MAX)   /* every instance knows the same total */
    return RIVER_EINVAL;
  cnt = malloc((size_t)n * sizeof *cnt);
  dsp = malloc((size_t)n * sizeof *dsp);
  send = malloc(bytes ? bytes : 1);
  recv = malloc(total ? (size_t)total : 1);
  if (cnt == NULL || dsp == NULL || send == NULL || recv == NULL) {
    free(cnt);
    free(dsp);
    free(send);
    free(recv);
    return RIVER_ENOMEM;
  }
  for (i = 0, total = 0; i < n; i++) {
    cnt[i] = (int)sizes[i];
    dsp[i] = (int)total;
    total += sizes[i];
  }
  if (bytes > 0)
    memcpy(send, mine, bytes);
  rc = MPI_Iallgatherv(send, (int)bytes, MPI_BYTE, recv, cnt, dsp, MPI_BYTE,
                       in->comm, &req) != MPI_SUCCESS ? RIVER_EMPI : RIVER_SUCCESS;
  if (rc == RIVER_SUCCESS) {
    if ((rc = river_ctx_wait(ctx, &req, MPI_STATUS_IGNORE)) != RIVER_SUCCESS) {
      river__orphan(send);   /* left pending: MPI may still use them */
      river__orphan(recv);
      river__orphan(cnt);
      river__orphan(dsp);
      return rc;
    }
    *all = recv;
    recv = NULL;
  }
  free(cnt);
  free(dsp);
  free(send);
  free(recv);
  return rc;
}

int river_ctx_yield(river_ctx *ctx)
{
  struct river__inst *in;
  int rc;

  if ((rc = inst_of(ctx, "river_ctx_yield", &in)) != RIVER_SUCCESS)
    return rc;
  if (river__flow_aborted(ctx->flow))
    return RIVER_ESTATE;
  return river__sched_yield(1) == RIVER_ETIMEDOUT ? RIVER_ETIMEDOUT
                                                   : RIVER_SUCCESS;
}

/* ------------------------------------------------------- emulation */

int river_ctx_charge_disk(river_ctx *ctx, int disk, size_t bytes)
{
  struct river__inst *in;
  int rc;

  if (ctx == NULL || disk < 0)
    return RIVER_EINVAL;
  if ((rc = inst_of(ctx, "river_ctx_charge_disk", &in)) != RIVER_SUCCESS)
    return rc;
  return river__emul_charge_disk(&in->emul, disk, bytes);
}

int river_ctx_perturb(const river_ctx *ctx, const river_perturb **p)
{
  if (ctx == NULL || p == NULL)
    return RIVER_EINVAL;
  if (ctx->run == NULL)
    return RIVER_ESTATE;
  *p = ((const struct river__inst *)ctx->run)->emul.perturb;
  return RIVER_SUCCESS;
}

int river_ctx_failed(river_ctx *ctx, int *failed)
{
  if (ctx == NULL || failed == NULL)
    return RIVER_EINVAL;
  if (ctx->run == NULL)
    return RIVER_ESTATE;   /* a schema callback: nothing runs yet */
  *failed = river__flow_aborted(ctx->flow);
  return RIVER_SUCCESS;
}

/* ------------------------------------------------------- end steps */

int river_ctx_at_end(river_ctx *ctx, river_end_fn fn, void *arg)
{
  struct river__inst *in;
  int rc;

  if (ctx == NULL || fn == NULL)
    return RIVER_EINVAL;
  if ((rc = inst_of(ctx, "river_ctx_at_end", &in)) != RIVER_SUCCESS)
    return rc;
  if (in->nends == in->ends_cap) {
    int cap = in->ends_cap ? 2 * in->ends_cap : 4;
    struct river__end *e = realloc(in->ends, (size_t)cap * sizeof *e);
    if (e == NULL)
      return RIVER_ENOMEM;
    in->ends = e;
    in->ends_cap = cap;
  }
  in->ends[in->nends].fn = fn;
  in->ends[in->nends].arg = arg;
  in->nends++;
  return RIVER_SUCCESS;
}

int river__run_ends(struct river__run *r, int outcome)
{
  int i, k, rc, first = RIVER_SUCCESS;

  for (i = 0; r->inst != NULL && i < r->ninst; i++) {
    struct river__inst *in = &r->inst[i];
    for (k = 0; k < in->nends; k++) {
      rc = in->ends[k].fn(in->ends[k].arg, outcome);
      if (outcome == RIVER_SUCCESS && rc != RIVER_SUCCESS) {
        river__error("stage %s instance %d: publishing its output failed: "
                     "%s", in->ctx.stage->name, in->ctx.instance,
                     river_strerror(rc));
        if (first == RIVER_SUCCESS)
          first = rc;
      }
    }
    free(in->ends);   /* each step runs once */
    in->ends = NULL;
    in->nends = in->ends_cap = 0;
  }
  return first;
}

/* ------------------------------------------------------- the finish */

int river__inst_finish(struct river__inst *in)
{
  const river__stage *s = in->ctx.stage;
  const void *recs;
  size_t n;
  int i, rc, first = RIVER_SUCCESS;

  for (i = 0; i < s->noutputs; i++) {
    while ((rc = river_dq_try_close(in->out[i].q)) == RIVER_EAGAIN)
      if (wait_a_turn(in, &in->st.put_wait_seconds) != RIVER_SUCCESS) {
        rc = timed_out(in, in->out[i].q, "closing its output");
        break;
      }
    if (rc != RIVER_SUCCESS && first == RIVER_SUCCESS)
      first = rc;
    in->out[i].closed = 1;
  }
  for (i = 0; i < s->ninputs; i++) {
    in->in[i].pending = 0;
    while ((rc = fetch(in, i, &recs, &n)) != RIVER_EOS) {
      if (rc == RIVER_EAGAIN && river__sched_yield(1) != RIVER_SUCCESS)
        rc = timed_out(in, in->in[i].q, "draining its input");
      if (rc != RIVER_SUCCESS && rc != RIVER_EAGAIN) {
        if (first == RIVER_SUCCESS)
          first = rc;
        break;
      }
    }
  }
  return first;
}
