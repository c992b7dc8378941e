/*
 * flow_check.c - river_flow_check: the whole-graph checks that building
 * cannot make one call at a time, then agreement across the ranks.
 *
 * In order: the flow has stages; every required argument is given;
 * every port from 0 to the module's minimum, and every port below the
 * highest connected one, is connected; the graph has no cycle (Kahn's
 * algorithm gives the order, sources first, kept in f->topo); schemas
 * are derived along that order and checked across every edge; then,
 * on a real communicator, the ranks agree on the outcome and compare a
 * hash of the flow's canonical description, so a rank that built a
 * different flow fails the check everywhere instead of hanging a run.
 *
 * The schema rule (doc/flowspec.md): a stage's output schema is what
 * its module's schema callback says; without one, its input 0's schema;
 * without inputs, its `schema` argument. A stage given a `schema`
 * argument that also has inputs must receive exactly that schema on
 * every input. `field` arguments name a field of input 0's schema (of
 * output 0's without inputs); an exchange edge's key names a field of
 * the schema it carries.
 */
#include "flow_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG(f, origin, ...) \
  river__flow_log(river__flow_check_level(f), (origin), __VA_ARGS__)

/* A log handler that keeps the last message in ctx (a char[256]). */
/* The stage's argument `name` (str) and where it was given. */
static const river__arg *stage_arg(const river__stage *s, const char *name,
                                   const char **value)
{
  int k;

  for (k = 0; k < s->mod->nargs; k++)
    if (strcmp(s->mod->args[k].name, name) == 0) {
      *value = s->args[k].value ? s->args[k].value : s->mod->args[k].def;
      return &s->args[k];
    }
  *value = NULL;
  return NULL;
}

/* Stage s's emulated rate `name` (cpu_rate, which every stage takes, or
 * a module's disk_rate) into *v: 0 (real speed, or not declared) or at
 * least RIVER__MIN_RATE, else RIVER_EINVAL (logged). */
static int rate_ok(const river_flow *f, const river__stage *s,
                   const char *name, uint64_t *v)
{
  const char *rate = NULL;
  const river__arg *ra = stage_arg(s, name, &rate);

  *v = 0;
  if (rate == NULL || river__arg_parse(RIVER__ARG_SIZE, rate, NULL, v, NULL)
                          != RIVER_SUCCESS
      || *v == 0 || *v >= RIVER__MIN_RATE)
    return RIVER_SUCCESS;
  LOG(f, ra->origin ? ra->origin : s->origin, "stage '%s': argument '%s': "
      "%s bytes/s is below the least emulated rate, %d", s->name, name, rate,
      RIVER__MIN_RATE);
  return RIVER_EINVAL;
}

/* The emulation arguments (src/flow_emulate.c): the rates, and `perturb`
 * parses and, with a cpu_rate, its "cpu:I" clauses name instances the
 * stage has. (Disk clauses are the I/O modules' to check: they know
 * their disks.) */
static int emulation_ok(const river_flow *f, const river__stage *s)
{
  const char *spec = NULL;
  const river__arg *a = stage_arg(s, "perturb", &spec);
  uint64_t cpu = 0, disk = 0;
  river_perturb *p = NULL;
  char why[512] = "";
  int max = -1, rc;

  if (rate_ok(f, s, "cpu_rate", &cpu) != RIVER_SUCCESS
      || rate_ok(f, s, "disk_rate", &disk) != RIVER_SUCCESS)
    return RIVER_EINVAL;
  if (a == NULL || spec == NULL || spec[0] == '\0')
    return RIVER_SUCCESS;
  rc = river_perturb_parse_msg(spec, &p, why, sizeof why);
  if (rc != RIVER_SUCCESS && why[0] == '\0')   /* not its text: ENOMEM */
    snprintf(why, sizeof why, "%s", river_strerror(rc));
  if (rc != RIVER_SUCCESS) {
    LOG(f, a->origin ? a->origin : s->origin, "stage '%s': argument "
        "'perturb': %s", s->name, why);
    return rc;
  }
  river_perturb_max_index(p, RIVER_PERTURB_CPU, &max);
  river_perturb_destroy(p);
  if (cpu > 0 && max >= s->nranks) {
    LOG(f, a->origin ? a->origin : s->origin, "stage '%s': argument "
        "'perturb' names cpu %d; the stage has instances 0..%d", s->name,
        max, s->nranks - 1);
    return RIVER_EINVAL;
  }
  return RIVER_SUCCESS;
}

/* Required arguments given; ports connected without holes. */
static int check_stage(const river_flow *f, const river__stage *s)
{
  const river_module_decl *d = &s->mod->decl;
  int k, i;

  if (emulation_ok(f, s) != RIVER_SUCCESS)
    return RIVER_EINVAL;
  for (k = 0; k < s->mod->nargs; k++)
    if (s->args[k].value == NULL && s->mod->args[k].def == NULL) {
      LOG(f, s->origin, "stage '%s': missing required argument '%s' "
          "(module '%s')", s->name, s->mod->args[k].name, s->mod->name);
      return RIVER_EINVAL;
    }
  for (i = 0; i < s->ninputs || i < d->min_inputs; i++)
    if (i >= s->ninputs || s->in_edge[i] < 0) {
      LOG(f, s->origin, "stage '%s': input %d is not connected (module '%s' "
          "needs %d input%s)", s->name, i, s->mod->name,
          d->min_inputs > i ? d->min_inputs : i + 1,
          (d->min_inputs > i ? d->min_inputs : i + 1) == 1 ? "" : "s");
      return RIVER_EINVAL;
    }
  for (i = 0; i < s->noutputs || i < d->min_outputs; i++)
    if (i >= s->noutputs || s->out_edge[i] < 0) {
      LOG(f, s->origin, "stage '%s': output %d is not connected (module "
          "'%s' needs %d output%s)", s->name, i, s->mod->name,
          d->min_outputs > i ? d->min_outputs : i + 1,
          (d->min_outputs > i ? d->min_outputs : i + 1) == 1 ? "" : "s");
      return RIVER_EINVAL;
    }
  return RIVER_SUCCESS;
}

/* Name a cycle among the stages left with indeg > 0 by Kahn's algorithm:
 * walk back along edges between such stages until a stage repeats. */
static void report_cycle(const river_flow *f, const int *indeg)
{
  char path[600] = "";
  int *seen = calloc((size_t)f->nstages, sizeof *seen);
  int s, e, start, step = 1;
  size_t n;

  for (s = 0; s < f->nstages && indeg[s] == 0; s++)
    ;
  while (seen != NULL && !seen[s]) {
    seen[s] = step++;
    for (e = 0; e < f->nedges; e++)
      if (f->edges[e].to == s && indeg[f->edges[e].from] > 0)
        break;
    s = f->edges[e].from;
  }
  start = s;   /* on the cycle; print it forwards from here */
  do {
    n = strlen(path);
    snprintf(path + n, sizeof path - n, "'%s' <- ", f->stages[s].name);
    for (e = 0; e < f->nedges; e++)
      if (f->edges[e].to == s && indeg[f->edges[e].from] > 0)
        break;
    s = f->edges[e].from;
  } while (s != start && strlen(path) < sizeof path - 80);
  n = strlen(path);
  snprintf(path + n, sizeof path - n, "'%s'", f->stages[start].name);
  LOG(f, f->stages[start].origin, "the flow has a cycle: %s", path);
  free(seen);
}

/* Fill f->topo, sources first; RIVER_EINVAL (logged) on a cycle. */
static int order(river_flow *f)
{
  int *indeg = calloc((size_t)f->nstages, sizeof *indeg);
  int n = 0, head = 0, e, s;

  f->topo = malloc((size_t)f->nstages * sizeof *f->topo);
  if (indeg == NULL || f->topo == NULL) {
    free(indeg);
    return RIVER_ENOMEM;
  }
  for (e = 0; e < f->nedges; e++)
    indeg[f->edges[e].to]++;
  for (s = 0; s < f->nstages; s++)
    if (indeg[s] == 0)
      f->topo[n++] = s;
  while (head < n) {
    s = f->topo[head++];
    for (e = 0; e < f->nedges; e++)
      if (f->edges[e].from == s && --indeg[f->edges[e].to] == 0)
        f->topo[n++] = f->edges[e].to;
  }
  if (n < f->nstages)
    report_cycle(f, indeg);
  free(indeg);
  return n < f->nstages ? RIVER_EINVAL : RIVER_SUCCESS;
}

/* Stage s's `schema` argument parsed into *out (NULL if none given, or
 * given empty: the module's own default). The parser's own message is
 * let through only where check's are printed, so a job says it once. */
static int schema_arg(const river_flow *f, const river__stage *s,
                      river_schema **out)
{
  int k = river__arg_index(s->mod, "schema");
  const char *text;
  int rc, loud = river__flow_check_level(f) == RIVER_LOG_ERROR;

  *out = NULL;
  if (k < 0 || (text = s->args[k].value ? s->args[k].value
                                         : s->mod->args[k].def) == NULL
      || text[0] == '\0')
    return RIVER_SUCCESS;
  if (!loud)
    river__log_hush(1);
  rc = river_schema_parse(text, out);
  if (!loud)
    river__log_hush(0);
  if (rc != RIVER_SUCCESS) {
    LOG(f, s->args[k].origin ? s->args[k].origin : s->origin,
        "stage '%s': argument 'schema': '%.200s' is not a schema", s->name,
        text);
    return RIVER_EINVAL;
  }
  return RIVER_SUCCESS;
}

/* Every input of s carries `want`. */
static int inputs_match(river_flow *f, river__stage *s,
                        const river_schema *want, river_ctx *ctx)
{
  const river_schema *in;
  char a[512], b[512];
  size_t la = sizeof a, lb = sizeof b;
  int i, eq = 0;

  for (i = 0; i < s->ninputs; i++) {
    river_input_schema(ctx, i, &in);
    river_schema_equal(in, want, &eq);
    if (!eq) {
      const river__edge *e = &f->edges[s->in_edge[i]];
      river_schema_format(in, a, &la);
      river_schema_format(want, b, &lb);
      LOG(f, e->origin, "edge %s -> %s: schema mismatch: stage '%s' sends "
          "\"%s\", stage '%s' takes \"%s\" (its schema argument)",
          f->stages[e->from].name, s->name, f->stages[e->from].name, a,
          s->name, b);
      return RIVER_EINVAL;
    }
  }
  return RIVER_SUCCESS;
}

/* Each `field` argument of s names a field of schema sc. */
static int fields_ok(const river_flow *f, const river__stage *s,
                     const river_schema *sc)
{
  int k, idx;

  for (k = 0; k < s->mod->nargs; k++) {
    const char *v = s->args[k].value ? s->args[k].value : s->mod->args[k].def;
    if (s->mod->args[k].type != RIVER__ARG_FIELD || v == NULL)
      continue;
    if (sc == NULL || river_schema_find(sc, v, &idx) != RIVER_SUCCESS) {
      LOG(f, s->args[k].origin ? s->args[k].origin : s->origin,
          "stage '%s': argument '%s': no field '%s' in the records it gets",
          s->name, s->mod->args[k].name, v);
      return RIVER_EINVAL;
    }
  }
  return RIVER_SUCCESS;
}

/* Derive stage s's output schemas (the rule in the opening comment). */
static int stage_schemas(river_flow *f, river__stage *s)
{
  river_schema *arg = NULL;
  const river_schema *in0 = NULL;
  river_ctx ctx;
  int o, rc;

  river__ctx_init(&ctx, f, s);
  if ((rc = schema_arg(f, s, &arg)) != RIVER_SUCCESS)
    return rc;
  if (s->ninputs > 0)
    river_input_schema(&ctx, 0, &in0);
  if (arg != NULL && s->ninputs > 0
      && (rc = inputs_match(f, s, arg, &ctx)) != RIVER_SUCCESS)
    goto out;
  if (s->noutputs > 0
      && (s->out_schema = calloc((size_t)s->noutputs, sizeof *s->out_schema))
             == NULL) {
    rc = RIVER_ENOMEM;
    goto out;
  }
  for (o = 0; o < s->noutputs && rc == RIVER_SUCCESS; o++) {
    if (s->mod->decl.schema != NULL) {
      /* Every rank checks; the module's messages are said once. */
      int hush = river__flow_check_level(f) != RIVER_LOG_ERROR;
      if (hush)
        river__log_hush(1);
      rc = s->mod->decl.schema(&ctx, o, &s->out_schema[o]);
      if (hush)
        river__log_hush(0);
      if (rc == RIVER_SUCCESS && s->out_schema[o] == NULL)
        rc = RIVER_EINVAL;
      if (rc != RIVER_SUCCESS)
        LOG(f, s->origin, "stage '%s': module '%s' gives no schema for "
            "output %d (%s)", s->name, s->mod->name, o, river_strerror(rc));
    } else if (in0 != NULL || arg != NULL) {
      rc = river_schema_clone(in0 ? in0 : arg, &s->out_schema[o]);
    } else {
      LOG(f, s->origin, "stage '%s': the schema of its output is unknown "
          "(module '%s' has no input and no schema function: give it a "
          "'schema' argument)", s->name, s->mod->name);
      rc = RIVER_EINVAL;
    }
  }
  if (rc == RIVER_SUCCESS)
    rc = fields_ok(f, s, in0 ? in0 : s->noutputs ? s->out_schema[0] : arg);
out:
  river_schema_destroy(arg);
  return rc;
}

/* An exchange edge's key is a field of the schema it carries, and its
 * filter is a predicate on that schema. */
static int edge_ok(const river_flow *f, const river__edge *e)
{
  const river_schema *sc =
      f->stages[e->from].out_schema[e->opts.from_output];
  river_pred *p = NULL;
  const char *why = "";
  int idx, rc;

  if (e->opts.kind == RIVER_EDGE_EXCHANGE && e->opts.key != NULL
      && river_schema_find(sc, e->opts.key, &idx) != RIVER_SUCCESS) {
    LOG(f, e->origin, "edge %s -> %s: exchange key '%s' is not a field of "
        "the records it carries", f->stages[e->from].name,
        f->stages[e->to].name, e->opts.key);
    return RIVER_EINVAL;
  }
  if (e->opts.filter == NULL)
    return RIVER_SUCCESS;
  rc = river_pred_parse(sc, e->opts.filter, &p, &why);
  river_pred_destroy(p);
  if (rc == RIVER_EINVAL)
    LOG(f, e->origin, "edge %s -> %s: filter '%.200s': %s",
        f->stages[e->from].name, f->stages[e->to].name, e->opts.filter, why);
  return rc;
}

/* Stage s's module check (river_check_fn), if it has one: rank 0's
 * messages said, the other ranks' hushed. */
static int stage_check(river_flow *f, river__stage *s)
{
  int hush = river__flow_check_level(f) != RIVER_LOG_ERROR, rc;
  river_ctx ctx;

  if (s->mod->decl.check == NULL)
    return RIVER_SUCCESS;
  river__ctx_init(&ctx, f, s);
  if (hush)
    river__log_hush(1);
  rc = s->mod->decl.check(&ctx);
  if (hush)
    river__log_hush(0);
  return rc;
}

static int check_local(river_flow *f)
{
  int i, rc = RIVER_SUCCESS;

  if (f->nstages == 0) {
    LOG(f, NULL, "the flow has no stages");
    return RIVER_EINVAL;
  }
  for (i = 0; i < f->nstages && rc == RIVER_SUCCESS; i++)
    rc = check_stage(f, &f->stages[i]);
  if (rc == RIVER_SUCCESS)
    rc = order(f);
  for (i = 0; i < f->nstages && rc == RIVER_SUCCESS; i++)
    rc = stage_schemas(f, &f->stages[f->topo[i]]);
  for (i = 0; i < f->nedges && rc == RIVER_SUCCESS; i++)
    rc = edge_ok(f, &f->edges[i]);
  for (i = 0; i < f->nstages && rc == RIVER_SUCCESS; i++)
    rc = stage_check(f, &f->stages[f->topo[i]]);
  return rc;
}

/* FNV-1a over s and its NUL. */
static uint64_t hash_str(uint64_t h, const char *s)
{
  do {
    h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
  } while (*s++ != '\0');
  return h;
}

static uint64_t hash_int(uint64_t h, int64_t v)
{
  char buf[24];

  snprintf(buf, sizeof buf, "%lld", (long long)v);
  return hash_str(h, buf);
}

/* A hash of what the flow is: modules (name and declaration), stages,
 * ranks, arguments, edges. Origins are not part of it. */
static uint64_t flow_hash(const river_flow *f)
{
  uint64_t h = 0xcbf29ce484222325ULL;
  int64_t bits;
  double pace;
  int i, k;

  for (i = 0; i < f->nstages; i++) {
    const river__stage *s = &f->stages[i];
    const river_module_decl *d = &s->mod->decl;
    h = hash_str(hash_str(h, s->name), s->mod->name);
    h = hash_int(hash_int(h, d->min_inputs), d->max_inputs);
    h = hash_int(hash_int(h, d->min_outputs), d->max_outputs);
    h = hash_str(hash_int(h, d->shares_rank), d->args ? d->args : "");
    for (k = 0; k < s->nranks; k++)
      h = hash_int(h, s->ranks[k]);
    for (k = 0; k < s->mod->nargs; k++)
      h = hash_str(h, s->args[k].value ? s->args[k].value : "\001");
  }
  for (i = 0; i < f->nedges; i++) {
    const river_edge_opts *o = &f->edges[i].opts;
    h = hash_int(hash_int(h, f->edges[i].from), f->edges[i].to);
    h = hash_int(hash_int(hash_int(h, o->kind), o->policy), o->by);
    h = hash_str(hash_int(h, o->credits), o->key ? o->key : "");
    h = hash_int(hash_int(h, (int64_t)o->message_size), o->from_output);
    h = hash_int(hash_int(h, o->to_input), o->filter_at);
    h = hash_str(h, o->filter ? o->filter : "\001");
    /* every pace < 0 is off, and -0.0 is 0 (the default) */
    pace = o->pace < 0 ? -1.0 : o->pace > 0 ? o->pace : 0.0;
    memcpy(&bits, &pace, sizeof bits);
    h = hash_int(h, bits);
  }
  return h;
}

/* The ranks compare their flows' hashes, then agree on the outcome:
 * RIVER_EINVAL everywhere if the flows differ (said once, by rank 0),
 * else every rank gets the most negative rc of any rank. */
static int agree(river_flow *f, int rc)
{
  uint64_t v[2], r[2];
  int all;

  v[0] = flow_hash(f);
  v[1] = ~v[0];
  if (river__allreduce(v, r, 2, MPI_UINT64_T, MPI_MAX, f->comm)
      != RIVER_SUCCESS)
    return RIVER_EMPI;
  all = river__agree(f->comm, rc);
  if (r[0] != ~r[1]) {
    LOG(f, NULL, "the ranks built different flows (stages, modules, ranks, "
        "arguments or edges differ): every rank must build the same flow");
    return RIVER_EINVAL;
  }
  return all;
}

int river_flow_check(river_flow *f)
{
  int rc;

  if (f == NULL)
    return RIVER_EINVAL;
  if (f->state == RIVER__FLOW_RUNNING || f->state == RIVER__FLOW_DONE) {
    river__error("river_flow_check: the flow has already run");
    return RIVER_ESTATE;
  }
  river__flow_uncheck(f);
  rc = check_local(f);
  if (f->comm != MPI_COMM_NULL)
    rc = agree(f, rc);
  if (rc != RIVER_SUCCESS)
    river__flow_uncheck(f);
  else
    f->state = RIVER__FLOW_CHECKED;
  return rc;
}
