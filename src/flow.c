/*
 * flow.c - building a flow: create, place a stage, give it arguments,
 * attach edges, list the stages, draw the graph, destroy.
 *
 * The flow (struct river_flow, src/flow_internal.h) is two growable
 * arrays, stages and edges; each stage records which edge holds each of
 * its ports. Building is local and checks what it can at once (names,
 * ranks, argument values, port ranges); src/flow_check.c checks the
 * whole graph. Every message starts with the origin of the call (the
 * spec loader's "file:line:column") when one is set.
 */
#include "flow_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void river__flow_log(int level, const char *origin, const char *fmt, ...)
{
  char msg[900];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (origin != NULL)
    river_log(level, "%s: %s", origin, msg);
  else
    river_log(level, "%s", msg);
}

int river__flow_check_level(const river_flow *f)
{
  return f->rank == 0 ? RIVER_LOG_ERROR : RIVER_LOG_DEBUG;
}

#define ERR(f, ...) river__flow_log(RIVER_LOG_ERROR, (f)->origin, __VA_ARGS__)

void river__flow_uncheck(river_flow *f)
{
  int i, o;

  for (i = 0; i < f->nstages; i++) {
    river__stage *s = &f->stages[i];
    for (o = 0; s->out_schema != NULL && o < s->noutputs; o++)
      river_schema_destroy(s->out_schema[o]);
    free(s->out_schema);
    s->out_schema = NULL;
  }
  free(f->topo);
  f->topo = NULL;
  if (f->state == RIVER__FLOW_CHECKED)
    f->state = RIVER__FLOW_BUILDING;
}

static int flow_new(MPI_Comm comm, int size, river_flow **out)
{
  river_flow *f = calloc(1, sizeof *f);

  if (f == NULL)
    return RIVER_ENOMEM;
  f->comm = comm;
  f->size = size;
  *out = f;
  return RIVER_SUCCESS;
}

int river_flow_create(MPI_Comm comm, river_flow **out)
{
  int init = 0, size, rank, rc;
  MPI_Comm dup;

  if (out == NULL || comm == MPI_COMM_NULL
      || MPI_Initialized(&init) != MPI_SUCCESS || !init) {
    river__error("river_flow_create: %s", out == NULL ? "out is NULL"
                 : comm == MPI_COMM_NULL ? "no communicator"
                 : "MPI is not initialised");
    return RIVER_EINVAL;
  }
  if (MPI_Comm_size(comm, &size) != MPI_SUCCESS
      || MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
    return RIVER_EMPI;
  if ((rc = river__comm_dup(comm, &dup)) != RIVER_SUCCESS)
    return rc;
  if ((rc = flow_new(dup, size, out)) != RIVER_SUCCESS) {
    MPI_Comm_free(&dup);
    return rc;
  }
  (*out)->rank = rank;
  return RIVER_SUCCESS;
}

int river__flow_create_plan(int nranks, river_flow **out)
{
  if (out == NULL || nranks < 1) {
    river__error("flow plan: %s", out == NULL ? "out is NULL"
                 : "the number of ranks must be at least 1");
    return RIVER_EINVAL;
  }
  return flow_new(MPI_COMM_NULL, nranks, out);
}

int river_flow_origin(river_flow *f, const char *where)
{
  char *copy = NULL;

  if (f == NULL)
    return RIVER_EINVAL;
  if (where != NULL && (copy = strdup(where)) == NULL)
    return RIVER_ENOMEM;
  free(f->origin);
  f->origin = copy;
  return RIVER_SUCCESS;
}

int river_flow_progress(river_flow *f, const char *label,
                        uint64_t total_records)
{
  size_t i, n = label != NULL ? strlen(label) : 0;

  if (f == NULL || label == NULL || n == 0
      || n >= sizeof f->progress_label) {
    river__error("river_flow_progress: %s", f == NULL ? "f is NULL"
                 : "label must be 1 to 40 characters");
    return RIVER_EINVAL;
  }
  for (i = 0; i < n; i++)
    if (iscntrl((unsigned char)label[i])) {
      river__error("river_flow_progress: label has a control character");
      return RIVER_EINVAL;
    }
  if (f->state == RIVER__FLOW_RUNNING || f->state == RIVER__FLOW_DONE) {
    river__error("river_flow_progress: the flow has started");
    return RIVER_ESTATE;
  }
  memcpy(f->progress_label, label, n + 1);
  f->progress_records = total_records;
  return RIVER_SUCCESS;
}

int river__flow_stage_index(const river_flow *f, const char *name)
{
  int i;

  for (i = 0; name != NULL && i < f->nstages; i++)
    if (strcmp(f->stages[i].name, name) == 0)
      return i;
  return -1;
}

/* Building is allowed before a run; it undoes a previous check. */
static int building(river_flow *f, const char *call)
{
  if (f->state == RIVER__FLOW_RUNNING || f->state == RIVER__FLOW_DONE) {
    ERR(f, "%s: the flow has already run", call);
    return RIVER_ESTATE;
  }
  river__flow_uncheck(f);
  return RIVER_SUCCESS;
}

/* Grow *arr (of *cap elements of size sz) to hold n. */
static int grow(void *arr, int *cap, int n, size_t sz)
{
  void *p;
  int c;

  if (n <= *cap)
    return RIVER_SUCCESS;
  c = *cap * 2 > n ? *cap * 2 : n + 4;
  if ((p = realloc(*(void **)arr, (size_t)c * sz)) == NULL)
    return RIVER_ENOMEM;
  *(void **)arr = p;
  *cap = c;
  return RIVER_SUCCESS;
}

static int cmp_int(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;

  return (x > y) - (x < y);
}

/* Check that ranks[0..n-1] are in range and distinct; sorted into s. */
static int place_ranks(river_flow *f, const char *stage, const int *ranks,
                       int n, int *s)
{
  int i;

  if (n < 1 || ranks == NULL) {
    ERR(f, "stage '%s': no ranks", stage);
    return RIVER_EINVAL;
  }
  for (i = 0; i < n; i++)
    if (ranks[i] < 0 || ranks[i] >= f->size) {
      ERR(f, "stage '%s': rank %d is out of range (the flow has %d rank%s: "
          "0..%d)", stage, ranks[i], f->size, f->size == 1 ? "" : "s",
          f->size - 1);
      return RIVER_EINVAL;
    }
  memcpy(s, ranks, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, cmp_int);
  for (i = 1; i < n; i++)
    if (s[i] == s[i - 1]) {
      ERR(f, "stage '%s': rank %d is given twice", stage, s[i]);
      return RIVER_EINVAL;
    }
  return RIVER_SUCCESS;
}

/* A rank of s (sorted, n) already held by a stage that cannot share it
 * with module m, or -1: *other gets that stage. */
static int shared_rank(const river_flow *f, const river__module *m,
                       const int *s, int n, int *other)
{
  int i, j, k;

  for (i = 0; i < f->nstages; i++) {
    const river__stage *t = &f->stages[i];
    if (m->decl.shares_rank && t->mod->decl.shares_rank)
      continue;
    for (j = 0, k = 0; j < n && k < t->nranks;) {
      if (s[j] == t->ranks[k]) {
        *other = i;
        return s[j];
      }
      if (s[j] < t->ranks[k])
        j++;
      else
        k++;
    }
  }
  return -1;
}

int river_flow_place(river_flow *f, const char *stage, const char *module,
                     const int *ranks, int nranks)
{
  const river__module *m;
  river__stage *st;
  int rc, *s = NULL, r, other = -1;

  if (f == NULL || stage == NULL || module == NULL)
    return RIVER_EINVAL;
  if ((rc = building(f, "river_flow_place")) != RIVER_SUCCESS)
    return rc;
  if (!river__name_ok(stage, RIVER__NAME_MAX)) {
    ERR(f, "bad stage name '%.80s' (1..%d letters, digits, '_', '-')", stage,
        RIVER__NAME_MAX);
    return RIVER_EINVAL;
  }
  if (river__flow_stage_index(f, stage) >= 0) {
    ERR(f, "stage '%s' is placed twice", stage);
    return RIVER_EINVAL;
  }
  if (f->nstages == RIVER__STAGES_MAX) {
    ERR(f, "stage '%s': a flow has at most %d stages", stage,
        RIVER__STAGES_MAX);
    return RIVER_EINVAL;
  }
  if ((m = river__module_find(module)) == NULL) {
    ERR(f, "stage '%s': unknown module '%.80s'", stage, module);
    return RIVER_ENOTFOUND;
  }
  if (nranks > 0 && ranks != NULL
      && (s = malloc((size_t)nranks * sizeof *s)) == NULL)
    return RIVER_ENOMEM;
  if ((rc = place_ranks(f, stage, ranks, nranks, s)) != RIVER_SUCCESS)
    goto fail;
  if ((r = shared_rank(f, m, s, nranks, &other)) >= 0) {
    ERR(f, "stage '%s': rank %d already runs stage '%s', and module '%s' "
        "does not share ranks", stage, r, f->stages[other].name,
        m->decl.shares_rank ? f->stages[other].mod->name : m->name);
    rc = RIVER_EBUSY;
    goto fail;
  }
  if ((rc = grow(&f->stages, &f->stage_cap, f->nstages + 1,
                 sizeof *f->stages)) != RIVER_SUCCESS)
    goto fail;
  st = &f->stages[f->nstages];
  memset(st, 0, sizeof *st);
  if ((m->nargs > 0 && (st->args = calloc((size_t)m->nargs,
                                          sizeof *st->args)) == NULL)
      || (f->origin && (st->origin = strdup(f->origin)) == NULL)) {
    free(st->args);
    rc = RIVER_ENOMEM;
    goto fail;
  }
  snprintf(st->name, sizeof st->name, "%s", stage);
  st->mod = m;
  st->ranks = s;
  st->nranks = nranks;
  f->nstages++;
  return RIVER_SUCCESS;
fail:
  free(s);
  return rc;
}

int river_flow_arg(river_flow *f, const char *stage, const char *name,
                   const char *value)
{
  river__stage *s;
  river__arg a = {NULL, NULL};
  int i, k, rc;

  if (f == NULL || stage == NULL || name == NULL || value == NULL)
    return RIVER_EINVAL;
  if ((rc = building(f, "river_flow_arg")) != RIVER_SUCCESS)
    return rc;
  if ((i = river__flow_stage_index(f, stage)) < 0) {
    ERR(f, "argument '%.40s': unknown stage '%.80s'", name, stage);
    return RIVER_ENOTFOUND;
  }
  s = &f->stages[i];
  if ((k = river__arg_index(s->mod, name)) < 0) {
    ERR(f, "stage '%s': unknown argument '%.80s' (module '%s' takes %s)",
        stage, name, s->mod->name,
        s->mod->decl.args && s->mod->nargs ? s->mod->decl.args : "none");
    return RIVER_ENOTFOUND;
  }
  if (river__arg_parse(s->mod->args[k].type, value, NULL, NULL, NULL)
      != RIVER_SUCCESS) {
    ERR(f, "stage '%s': argument '%s': expected %s, got '%.80s'", stage,
        name, river__arg_expect(s->mod->args[k].type), value);
    return RIVER_EINVAL;
  }
  if ((a.value = strdup(value)) == NULL
      || (f->origin && (a.origin = strdup(f->origin)) == NULL)) {
    free(a.value);
    return RIVER_ENOMEM;
  }
  free(s->args[k].value);
  free(s->args[k].origin);
  s->args[k] = a;
  return RIVER_SUCCESS;
}

void river__edge_describe(const river_edge_opts *o, char *buf, size_t len)
{
  switch (o->kind) {
  case RIVER_EDGE_DQ:
    if (o->policy == RIVER_DQ_PUSH && o->pace < 0)
      snprintf(buf, len, "dq push, no pacing");
    else if (o->policy == RIVER_DQ_PUSH && o->pace > 0)
      snprintf(buf, len, "dq push, pace %g ms", o->pace * 1e3);
    else
      snprintf(buf, len, "dq %s", o->policy == RIVER_DQ_PULL ? "pull"
               : o->policy == RIVER_DQ_STATIC ? "static" : "push");
    break;
  case RIVER_EDGE_EXCHANGE:
    snprintf(buf, len, "exchange %s on %.40s",
             o->by == RIVER_BY_RANGE ? "range" : "hash",
             o->key ? o->key : "the key");
    break;
  case RIVER_EDGE_ONE_TO_ONE: snprintf(buf, len, "one-to-one"); break;
  default: snprintf(buf, len, "broadcast"); break;
  }
}

/* Options that make sense for their kind; logged otherwise. */
static int opts_ok(river_flow *f, const char *edge, const river_edge_opts *o)
{
  const char *bad = NULL;

  if ((int)o->kind < RIVER_EDGE_DQ || (int)o->kind > RIVER_EDGE_BROADCAST)
    bad = "unknown kind";
  else if (o->kind == RIVER_EDGE_DQ && o->policy != RIVER_DQ_PUSH
           && o->policy != RIVER_DQ_PULL && o->policy != RIVER_DQ_STATIC)
    bad = "a dq edge's policy is push, pull or static";
  else if (o->kind == RIVER_EDGE_EXCHANGE && o->by != RIVER_BY_HASH
           && o->by != RIVER_BY_RANGE)
    bad = "an exchange edge is by hash or range";
  else if (o->kind != RIVER_EDGE_EXCHANGE && o->key != NULL)
    bad = "only an exchange edge has a key";
  else if (o->key != NULL && !river__name_ok(o->key, RIVER_SCHEMA_MAX_NAME))
    bad = "the key is not a field name";
  else if (o->credits < 0)
    bad = "credits must not be negative";
  else if (!(o->pace >= -1e6 && o->pace <= 1e6)) /* NaN too */
    bad = "pace must be a number of seconds";
  else if (o->pace > 0
           && (o->kind != RIVER_EDGE_DQ || o->policy != RIVER_DQ_PUSH))
    bad = "pace is for push dq edges only (off, < 0, fits any)";
  else if (o->from_output < -1 || o->to_input < -1)
    bad = "a port index must be -1 (the next free) or at least 0";
  else if (o->filter_at != RIVER_FILTER_AT_SOURCE
           && o->filter_at != RIVER_FILTER_AT_SINK)
    bad = "a filter is at the source or the sink";
  else if (o->filter != NULL && o->filter[0] == '\0')
    bad = "the filter is empty";
  else if (o->filter != NULL && o->filter_at == RIVER_FILTER_AT_SINK
           && o->kind == RIVER_EDGE_DQ && o->policy == RIVER_DQ_PULL)
    bad = "a pull edge filters at its source (at the sink, a unit's "
          "last message could be dropped)";
  if (bad != NULL)
    ERR(f, "edge %s: %s", edge, bad);
  return bad == NULL;
}

/* Resolve port *idx (-1: the next free) of a stage with slots[n] and the
 * module's maximum max; RIVER_EINVAL (logged) if taken or out of range. */
static int port(river_flow *f, const char *edge, const river__stage *s,
                const char *what, int *slots, int n, int max, int *idx)
{
  int i = *idx;

  if (i < 0)
    for (i = 0; i < n && slots[i] >= 0; i++)
      ;
  if ((max >= 0 && i >= max) || i >= RIVER__PORTS_MAX) {
    if (*idx < 0)
      ERR(f, "edge %s: stage '%s' has no free %s (module '%s' has %d)", edge,
          s->name, what, s->mod->name, max);
    else
      ERR(f, "edge %s: stage '%s' has no %s %d (module '%s' has %d)", edge,
          s->name, what, i, s->mod->name, max < 0 ? RIVER__PORTS_MAX : max);
    return RIVER_EINVAL;
  }
  if (i < n && slots[i] >= 0) {
    ERR(f, "edge %s: %s %d of stage '%s' is connected twice", edge, what, i,
        s->name);
    return RIVER_EINVAL;
  }
  *idx = i;
  return RIVER_SUCCESS;
}

/* Give port i of a stage (slots, n, cap) to edge e. */
static int connect(int **slots, int *n, int *cap, int i, int e)
{
  int k, rc = grow(slots, cap, i + 1, sizeof **slots);

  if (rc != RIVER_SUCCESS)
    return rc;
  for (k = *n; k <= i; k++)
    (*slots)[k] = -1;
  if (i >= *n)
    *n = i + 1;
  (*slots)[i] = e;
  return RIVER_SUCCESS;
}

int river_flow_attach(river_flow *f, const char *from, const char *to,
                      const river_edge_opts *opts)
{
  river_edge_opts o = RIVER_EDGE_OPTS_INIT;
  river__stage *a, *b;
  river__edge *e;
  char edge[160], *key = NULL, *filter = NULL, *origin = NULL;
  int ia, ib, rc;

  if (f == NULL || from == NULL || to == NULL)
    return RIVER_EINVAL;
  if ((rc = building(f, "river_flow_attach")) != RIVER_SUCCESS)
    return rc;
  if (opts != NULL)
    o = *opts;
  snprintf(edge, sizeof edge, "%.70s -> %.70s", from, to);
  ia = river__flow_stage_index(f, from);
  ib = river__flow_stage_index(f, to);
  if (ia < 0 || ib < 0) {
    ERR(f, "edge %s: unknown stage '%.80s'", edge, ia < 0 ? from : to);
    return RIVER_ENOTFOUND;
  }
  if (f->nedges == RIVER__EDGES_MAX) {
    ERR(f, "edge %s: a flow has at most %d edges", edge, RIVER__EDGES_MAX);
    return RIVER_EINVAL;
  }
  if (ia == ib) {
    ERR(f, "edge %s: a stage cannot feed itself", edge);
    return RIVER_EINVAL;
  }
  a = &f->stages[ia];
  b = &f->stages[ib];
  if (!opts_ok(f, edge, &o))
    return RIVER_EINVAL;
  if (o.kind == RIVER_EDGE_ONE_TO_ONE && a->nranks != b->nranks) {
    ERR(f, "edge %s: one-to-one needs stages of the same size ('%s' has %d "
        "instances, '%s' %d)", edge, from, a->nranks, to, b->nranks);
    return RIVER_EINVAL;
  }
  if ((rc = port(f, edge, a, "output", a->out_edge, a->noutputs,
                 a->mod->decl.max_outputs, &o.from_output)) != RIVER_SUCCESS
      || (rc = port(f, edge, b, "input", b->in_edge, b->ninputs,
                    b->mod->decl.max_inputs, &o.to_input)) != RIVER_SUCCESS)
    return rc;
  if ((o.key && (key = strdup(o.key)) == NULL)
      || (o.filter && (filter = strdup(o.filter)) == NULL)
      || (f->origin && (origin = strdup(f->origin)) == NULL)
      || grow(&f->edges, &f->edge_cap, f->nedges + 1, sizeof *f->edges)
      || connect(&a->out_edge, &a->noutputs, &a->out_cap, o.from_output,
                 f->nedges)
      || connect(&b->in_edge, &b->ninputs, &b->in_cap, o.to_input,
                 f->nedges)) {
    /* a connected output (if any) is dropped with the count unchanged */
    if (o.from_output < a->noutputs && a->out_edge
        && a->out_edge[o.from_output] == f->nedges)
      a->out_edge[o.from_output] = -1;
    free(key);
    free(filter);
    free(origin);
    return RIVER_ENOMEM;
  }
  e = &f->edges[f->nedges++];
  e->from = ia;
  e->to = ib;
  e->opts = o;
  e->opts.key = key;
  e->opts.filter = filter;
  e->origin = origin;
  return RIVER_SUCCESS;
}

int river_flow_nstages(const river_flow *f, int *n)
{
  if (f == NULL || n == NULL)
    return RIVER_EINVAL;
  *n = f->nstages;
  return RIVER_SUCCESS;
}

int river_flow_stage(const river_flow *f, int i, const char **name,
                     const char **module, const int **ranks, int *nranks)
{
  if (f == NULL || i < 0 || i >= f->nstages)
    return RIVER_EINVAL;
  if (name != NULL)
    *name = f->stages[i].name;
  if (module != NULL)
    *module = f->stages[i].mod->name;
  if (ranks != NULL)
    *ranks = f->stages[i].ranks;
  if (nranks != NULL)
    *nranks = f->stages[i].nranks;
  return RIVER_SUCCESS;
}

/* Append to a growing string; *ok 0 once memory ran out. */
static void cat(char **s, size_t *len, size_t *cap, int *ok,
                const char *fmt, ...) RIVER_PRINTF(5, 6);
static void cat(char **s, size_t *len, size_t *cap, int *ok,
                const char *fmt, ...)
{
  va_list ap;
  char piece[400];
  size_t n;
  char *p;

  va_start(ap, fmt);
  vsnprintf(piece, sizeof piece, fmt, ap);
  va_end(ap);
  n = strlen(piece);
  if (!*ok)
    return;
  if (*len + n + 1 > *cap) {
    if ((p = realloc(*s, *cap * 2 + n + 64)) == NULL) {
      *ok = 0;
      return;
    }
    *s = p;
    *cap = *cap * 2 + n + 64;
  }
  memcpy(*s + *len, piece, n + 1);
  *len += n;
}

int river_flow_dot(const river_flow *f, char *buf, size_t *len)
{
  char *s = NULL, kind[128];
  size_t n = 0, cap = 0;
  int ok = 1, i, rc;

  if (f == NULL || len == NULL)
    return RIVER_EINVAL;
  cat(&s, &n, &cap, &ok, "digraph flow {\n  rankdir=LR;\n"
      "  node [shape=box];\n");
  for (i = 0; i < f->nstages; i++)
    cat(&s, &n, &cap, &ok, "  \"%s\" [label=\"%s\\n%s x%d\"];\n",
        f->stages[i].name, f->stages[i].name, f->stages[i].mod->name,
        f->stages[i].nranks);
  for (i = 0; i < f->nedges; i++) {
    const river__edge *e = &f->edges[i];
    river__edge_describe(&e->opts, kind, sizeof kind);
    cat(&s, &n, &cap, &ok, "  \"%s\" -> \"%s\" [label=\"%s\"];\n",
        f->stages[e->from].name, f->stages[e->to].name, kind);
  }
  cat(&s, &n, &cap, &ok, "}\n");
  rc = ok ? river__copy_out(s, buf, len) : RIVER_ENOMEM;
  free(s);
  return rc;
}

int river_flow_destroy(river_flow *f)
{
  int i, k;

  if (f == NULL)
    return RIVER_SUCCESS;
  if (f->state == RIVER__FLOW_RUNNING) {
    river__error("river_flow_destroy: the flow is running");
    return RIVER_ESTATE;
  }
  if (f->run != NULL && f->run_free != NULL)
    f->run_free(f);   /* the runtime's state (src/flow_run.c) */
  river__flow_uncheck(f);
  for (i = 0; i < f->nstages; i++) {
    river__stage *s = &f->stages[i];
    for (k = 0; k < s->mod->nargs; k++) {
      free(s->args[k].value);
      free(s->args[k].origin);
    }
    free(s->args);
    free(s->ranks);
    free(s->in_edge);
    free(s->out_edge);
    free(s->origin);
  }
  for (i = 0; i < f->nedges; i++) {
    free((char *)f->edges[i].opts.key);
    free((char *)f->edges[i].opts.filter);
    free(f->edges[i].origin);
  }
  free(f->stages);
  free(f->edges);
  free(f->origin);
  for (i = 0; i < f->nspec_params; i++)
    free(f->spec_params[i]);
  free(f->spec_params);
  free(f->spec_path);
  if (f->comm != MPI_COMM_NULL)
    MPI_Comm_free(&f->comm);
  free(f);
  return RIVER_SUCCESS;
}
