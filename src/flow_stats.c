/*
 * flow_stats.c - a run's stats file (river/stats.h; the document is
 * described in doc/stats.md, its JSON Schema in doc/stats.schema.json).
 *
 * Rank 0 builds the document with jansson, a well-kept JSON library
 * that refuses NaN and infinities and keeps 64-bit integers exact (so a
 * record count never turns into a rounded double). What a flow did is
 * kept by the runtime when the run finishes (each instance's
 * river_module_stats, each edge's queue counters: flow_run.c,
 * keep_edge_stats); river_stats_add_flow gathers every rank's as one
 * array of 64-bit words (doubles copied bit for bit) to rank 0, which
 * names them: stages by name and module, instances by rank, edges by
 * their stages, kind and credit path, and the messages each producer
 * rank sent each consumer rank.
 */
#include "flow_run_internal.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NODE_MAX 64        /* a node's name, as gathered */
#define KEY_MAX 40
#define INST_WORDS 9       /* stage, instance, 4 counts, 3 times */
#define EDGE_WORDS 8       /* 5 counts, 2 times, consumers (then those,
                              then producers and a PULL consumer's units
                              from each) */

/* A GD read's words on this rank (river_stats_add_gd), gathered when
 * the document is written. */
struct stats_gd {
  char label[KEY_MAX + 1];
  uint64_t *words;
  int nwords;
};

struct river_stats {
  MPI_Comm comm;           /* a duplicate of the job's */
  int rank, size;
  json_t *doc;             /* rank 0: the document */
  struct stats_gd *gd;     /* GD reads not yet gathered */
  int ngd;
};

/* ------------------------------------------------------------- helpers */

static uint64_t dword(double d)
{
  uint64_t w;

  memcpy(&w, &d, sizeof w);
  return w;
}

static double wdouble(uint64_t w)
{
  double d;

  memcpy(&d, &w, sizeof d);
  return isfinite(d) ? d : 0.0;
}

/* A JSON string of s, which jansson takes only as UTF-8: a text that
 * is not (a command line naming a Latin-1 file) has its bytes above
 * 0x7f written as '?' instead. NULL without memory. */
static json_t *text(const char *s)
{
  json_t *v = json_string(s);
  char *copy, *c;

  if (v != NULL || s == NULL || (copy = strdup(s)) == NULL)
    return v;
  for (c = copy; *c; c++)
    if ((unsigned char)*c > 0x7f)
      *c = '?';
  v = json_string(copy);
  free(copy);
  return v;
}

/* Set obj[key] to v (which it takes); 0 if jansson refused. */
static int put(json_t *obj, const char *key, json_t *v)
{
  return v != NULL && json_object_set_new(obj, key, v) == 0;
}

static json_t *count(uint64_t v)
{
  /* json_int_t is long long: River's counts stay below 2^63. */
  return json_integer((json_int_t)v);
}

/* ----------------------------------------------------------------- job */

/* The job part (rank 0 builds it from every rank's node name). */
static int job_part(river_stats *s, const char *command)
{
  char mine[NODE_MAX] = {0}, lib[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  char info[512] = {0}, *all = NULL, *nl;
  size_t len = sizeof mine - 1;
  json_t *job = NULL, *nodes = NULL, *where = NULL;
  int i, k, n, rc, ok = 1;

  if (river_node_name(mine, &len) != RIVER_SUCCESS)
    snprintf(mine, sizeof mine, "?");
  if (s->rank == 0)
    all = calloc((size_t)s->size, NODE_MAX);
  rc = river__agree(s->comm, s->rank == 0 && all == NULL ? RIVER_ENOMEM
                                                         : RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS)
    rc = river__gather(mine, NODE_MAX, MPI_CHAR, all, 0, s->comm);
  if (rc != RIVER_SUCCESS || s->rank != 0) {
    free(all);
    return rc;
  }
  len = sizeof info;
  river_build_info(info, &len);
  MPI_Get_library_version(lib, &n);
  if ((nl = strchr(lib, '\n')) != NULL)
    *nl = '\0';   /* its first line names it */
  job = json_object();
  nodes = json_array();
  where = json_array();
  ok = job != NULL && nodes != NULL && where != NULL;
  /* Nodes in the order of their first rank; each rank's node by index. */
  for (i = 0; ok && i < s->size; i++) {
    const char *name = all + (size_t)i * NODE_MAX;
    for (k = 0; k < (int)json_array_size(nodes); k++)
      if (strcmp(json_string_value(json_array_get(nodes, (size_t)k)),
                 name) == 0)
        break;
    if (k == (int)json_array_size(nodes))
      ok = json_array_append_new(nodes, text(name)) == 0;
    ok = ok && json_array_append_new(where, json_integer(k)) == 0;
  }
  free(all);
  ok = ok && put(job, "river", text(info))
       && put(job, "mpi", text(lib))
       && put(job, "ranks", json_integer(s->size))
       && put(job, "nodes", json_incref(nodes))
       && put(job, "rank_node", json_incref(where))
       && (command == NULL || put(job, "command", text(command)))
       && put(job, "numbers", json_object())
       && put(s->doc, "job", json_incref(job));
  json_decref(nodes);
  json_decref(where);
  json_decref(job);
  return ok ? RIVER_SUCCESS : RIVER_ENOMEM;
}

int river_stats_create(MPI_Comm comm, const char *command,
                       river_stats **out)
{
  river_stats *s = NULL;
  int rc = RIVER_SUCCESS;

  if (out != NULL)
    *out = NULL;
  if (out == NULL || comm == MPI_COMM_NULL) {
    river__error("river_stats_create: %s", out == NULL ? "out is NULL"
                 : "comm is MPI_COMM_NULL");
    if (comm == MPI_COMM_NULL)
      return RIVER_EINVAL;
    rc = RIVER_EINVAL;
  }
  if (rc == RIVER_SUCCESS && (s = calloc(1, sizeof *s)) == NULL)
    rc = RIVER_ENOMEM;
  if (s != NULL) {
    s->comm = MPI_COMM_NULL;
    MPI_Comm_rank(comm, &s->rank);
    MPI_Comm_size(comm, &s->size);
    if (s->rank == 0
        && ((s->doc = json_object()) == NULL
            || !put(s->doc, "format", json_string("river-stats/1"))))
      rc = RIVER_ENOMEM;
  }
  rc = river__agree(comm, rc);
  if (rc == RIVER_SUCCESS)
    rc = river__comm_dup(comm, &s->comm);
  rc = river__agree(comm, rc);
  if (rc == RIVER_SUCCESS)
    rc = job_part(s, command);
  if (rc == RIVER_SUCCESS && s->rank == 0
      && !put(s->doc, "flows", json_array()))
    rc = RIVER_ENOMEM;
  rc = river__agree(comm, rc);
  if (rc != RIVER_SUCCESS) {
    river_stats_destroy(s);
    return rc;
  }
  *out = s;
  return RIVER_SUCCESS;
}

int river_stats_destroy(river_stats *s)
{
  if (s == NULL)
    return RIVER_SUCCESS;
  if (s->comm != MPI_COMM_NULL)
    MPI_Comm_free(&s->comm);
  while (s->ngd > 0)
    free(s->gd[--s->ngd].words);
  free(s->gd);
  json_decref(s->doc);
  free(s);
  return RIVER_SUCCESS;
}

int river_stats_add_number(river_stats *s, const char *key, double value)
{
  size_t i, n = key != NULL ? strlen(key) : 0;
  json_t *nums;

  if (s == NULL || n == 0 || n > KEY_MAX || !isfinite(value)) {
    river__error("river_stats_add_number: %s", s == NULL ? "s is NULL"
                 : n == 0 || n > KEY_MAX ? "key must be 1 to 40 characters"
                 : "value is not finite");
    return RIVER_EINVAL;
  }
  for (i = 0; i < n; i++)
    if (!(key[i] == '_' || (key[i] >= 'a' && key[i] <= 'z')
          || (key[i] >= 'A' && key[i] <= 'Z')
          || (key[i] >= '0' && key[i] <= '9'))) {
      river__error("river_stats_add_number: key '%s': letters, digits "
                   "and '_' only", key);
      return RIVER_EINVAL;
    }
  if (s->rank != 0)
    return RIVER_SUCCESS;
  nums = json_object_get(json_object_get(s->doc, "job"), "numbers");
  return nums != NULL && put(nums, key, json_real(value)) ? RIVER_SUCCESS
                                                          : RIVER_ENOMEM;
}

/* --------------------------------------------------------------- a flow */

/* This rank's words: the instances' (INST_WORDS, then their series:
 * a count of rows and the rows, doubles bit for bit; then the words of
 * the GD read each kept, river_ctx_keep_gd: a count and gd_words'),
 * then the edges' (river__edge_stats). */
/* How many of an instance's n rows the file holds (a job of size ranks:
 * at most SERIES_JOB_ROWS / size, at least SERIES_MIN_ROWS, so that rank
 * 0's memory for them stays bounded at any scale), and which: rows
 * spread evenly from the first to the last (the totals). An instance
 * with none (no memory for them) gives one, of its totals. */
#define SERIES_JOB_ROWS 262144
#define SERIES_MIN_ROWS 16
static int series_kept(int n, int size)
{
  int cap = SERIES_JOB_ROWS / (size > 0 ? size : 1);

  if (cap < SERIES_MIN_ROWS)
    cap = SERIES_MIN_ROWS;
  return n == 0 ? 1 : n < cap ? n : cap;
}

/* Row j of the m kept of in's: its values into row[]. */
static void series_row(const struct river__inst *in, int m, int j,
                       double *row)
{
  const struct river__series *se = &in->series;
  long long k;

  if (se->n == 0) {   /* the totals, at the instance's run time */
    river__series_fill(in, in->st.run_seconds, row);
    return;
  }
  k = m > 1 ? (long long)j * (se->n - 1) / (m - 1) : se->n - 1;
  memcpy(row, se->v + (size_t)k * RIVER__SERIES_COLS,
         RIVER__SERIES_COLS * sizeof *row);
}

static uint64_t *flow_words(const river_flow *f, const struct river__run *r,
                            int *nwords)
{
  size_t n = 2, k = 0, c;
  uint64_t *w;
  double row[RIVER__SERIES_COLS];
  int i, j, m;

  for (i = 0; i < r->ninst; i++)
    n += INST_WORDS + 2
         + (size_t)series_kept(r->inst[i].series.n, f->size)
               * RIVER__SERIES_COLS
         + (size_t)r->inst[i].gd_nwords;
  for (i = 0; i < f->nedges; i++)
    n += EDGE_WORDS + 1 + (size_t)r->edge_st[i].nconsumers
         + (size_t)r->edge_st[i].nproducers;
  if (n > (size_t)(INT32_MAX / 8) || (w = calloc(n, sizeof *w)) == NULL)
    return NULL;
  w[k++] = (uint64_t)r->ninst;
  w[k++] = (uint64_t)f->nedges;
  for (i = 0; i < r->ninst; i++) {
    const struct river__inst *in = &r->inst[i];
    w[k++] = (uint64_t)(in->ctx.stage - f->stages);
    w[k++] = (uint64_t)in->ctx.instance;
    w[k++] = in->st.records_in;
    w[k++] = in->st.bytes_in;
    w[k++] = in->st.records_out;
    w[k++] = in->st.bytes_out;
    w[k++] = dword(in->st.run_seconds);
    w[k++] = dword(in->st.get_wait_seconds);
    w[k++] = dword(in->st.put_wait_seconds);
    m = series_kept(in->series.n, f->size);
    w[k++] = (uint64_t)m;
    for (j = 0; j < m; j++) {
      series_row(in, m, j, row);
      for (c = 0; c < RIVER__SERIES_COLS; c++)
        w[k++] = dword(row[c]);
    }
    w[k++] = (uint64_t)in->gd_nwords;
    if (in->gd_nwords > 0)
      memcpy(w + k, in->gd_words, (size_t)in->gd_nwords * sizeof *w);
    k += (size_t)in->gd_nwords;
  }
  for (i = 0; i < f->nedges; i++) {
    const struct river__edge_stats *e = &r->edge_st[i];
    w[k++] = e->records_out;
    w[k++] = e->messages_out;
    w[k++] = e->records_in;
    w[k++] = e->messages_in;
    w[k++] = e->credit_stalls;
    w[k++] = dword(e->put_wait_seconds);
    w[k++] = dword(e->get_wait_seconds);
    w[k++] = (uint64_t)e->nconsumers;
    if (e->nconsumers > 0)
      memcpy(w + k, e->msgs_to, (size_t)e->nconsumers * sizeof *w);
    k += (size_t)e->nconsumers;
    w[k++] = (uint64_t)e->nproducers;
    if (e->nproducers > 0)
      memcpy(w + k, e->units_from, (size_t)e->nproducers * sizeof *w);
    k += (size_t)e->nproducers;
  }
  *nwords = (int)n;
  return w;
}

/* Instance x's GD words (a count, then the words). */
static const uint64_t *inst_gd(const uint64_t *x)
{
  return x + INST_WORDS + 1 + (size_t)x[INST_WORDS] * RIVER__SERIES_COLS;
}

/* The instance after x's words. */
static const uint64_t *next_inst(const uint64_t *x)
{
  const uint64_t *g = inst_gd(x);

  return g + 1 + g[0];
}

/* An instance's series from its words x: one array a column, counts as
 * integers (exact below 2^53, as the doubles held them). */
static json_t *series_part(const uint64_t *x)
{
  static const char *const col[RIVER__SERIES_COLS] = {
    "t", "records_in", "bytes_in", "records_out", "bytes_out",
    "get_wait_seconds", "put_wait_seconds"};
  const uint64_t *rows = x + INST_WORDS + 1;
  size_t n = (size_t)x[INST_WORDS], i;
  json_t *o = json_object(), *a;
  int c, ok = o != NULL;

  for (c = 0; ok && c < RIVER__SERIES_COLS; c++) {
    ok = (a = json_array()) != NULL && put(o, col[c], a);
    for (i = 0; ok && i < n; i++) {
      double v = wdouble(rows[i * RIVER__SERIES_COLS + (size_t)c]);
      ok = json_array_append_new(a, c == 0 || c >= 5
                                    ? json_real(v)
                                    : count((uint64_t)(v > 0 ? v : 0)))
           == 0;
    }
  }
  if (!ok) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* The arguments given to stage st, as given (text), by name. */
static json_t *args_part(const river__stage *st)
{
  json_t *o = json_object();
  int k, ok = o != NULL;

  for (k = 0; ok && k < st->mod->nargs; k++)
    if (st->args[k].value != NULL)
      ok = put(o, st->mod->args[k].name, text(st->args[k].value));
  if (!ok) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* The stages, each with its instances from every rank's words. */
static json_t *stages_part(const river_flow *f, uint64_t *const *words,
                           int size)
{
  json_t *stages = json_array(), *st, *ranks, *insts, *o;
  int s, q, i, k, ok = stages != NULL;

  for (s = 0; ok && s < f->nstages; s++) {
    st = json_object();
    ranks = json_array();
    insts = json_array();
    ok = st != NULL && ranks != NULL && insts != NULL;
    for (k = 0; ok && k < f->stages[s].nranks; k++)
      ok = json_array_append_new(ranks, json_integer(f->stages[s].ranks[k]))
           == 0;
    for (q = 0; ok && q < size; q++) {
      const uint64_t *w = words[q], *x = w + 2;
      for (i = 0; ok && i < (int)w[0]; i++, x = next_inst(x)) {
        if ((int)x[0] != s)
          continue;
        o = json_object();
        ok = o != NULL && put(o, "instance", json_integer((json_int_t)x[1]))
             && put(o, "rank", json_integer(q))
             && put(o, "records_in", count(x[2]))
             && put(o, "bytes_in", count(x[3]))
             && put(o, "records_out", count(x[4]))
             && put(o, "bytes_out", count(x[5]))
             && put(o, "run_seconds", json_real(wdouble(x[6])))
             && put(o, "get_wait_seconds", json_real(wdouble(x[7])))
             && put(o, "put_wait_seconds", json_real(wdouble(x[8])))
             && put(o, "series", series_part(x))
             && json_array_append_new(insts, o) == 0;
      }
    }
    ok = ok && put(st, "name", json_string(f->stages[s].name))
         && put(st, "module", json_string(f->stages[s].mod->name))
         && put(st, "args", args_part(&f->stages[s]))
         && put(st, "ranks", json_incref(ranks))
         && put(st, "instances", json_incref(insts))
         && json_array_append(stages, st) == 0;
    json_decref(ranks);
    json_decref(insts);
    json_decref(st);
  }
  if (!ok) {
    json_decref(stages);
    return NULL;
  }
  return stages;
}

/* Rank q's words for edge e (after its instances and the edges
 * before). */
static const uint64_t *edge_words(const uint64_t *w, int e)
{
  const uint64_t *x = w + 2;
  int i;

  for (i = 0; i < (int)w[0]; i++)
    x = next_inst(x);
  for (i = 0; i < e; i++)
    x += EDGE_WORDS + x[7] + 1 + x[EDGE_WORDS + x[7]];
  return x;
}

/* A PULL edge's consumer's units taken from each producer (u: a count,
 * then the units by producer index, the from stage's instance). */
static json_t *units_part(const river__stage *from, const uint64_t *u)
{
  json_t *a = json_array(), *o;
  uint64_t j;
  int ok = a != NULL;

  for (j = 0; ok && j < u[0] && j < (uint64_t)from->nranks; j++)
    ok = (o = json_object()) != NULL
         && put(o, "rank", json_integer(from->ranks[j]))
         && put(o, "units", count(u[1 + j]))
         && json_array_append_new(a, o) == 0;
  if (!ok) {
    json_decref(a);
    return NULL;
  }
  return a;
}

/* One edge: its stages, kind, credit path, producers and consumers. */
static json_t *edge_part(const river_flow *f, const struct river__run *r,
                         uint64_t *const *words, int e)
{
  const river__edge *ed = &f->edges[e];
  const river__stage *from = &f->stages[ed->from], *to = &f->stages[ed->to];
  json_t *o = json_object(), *prods = json_array(), *cons = json_array();
  json_t *p, *c, *sent;
  char kind[160];
  int k, j, ok = o != NULL && prods != NULL && cons != NULL;

  river__edge_describe(&ed->opts, kind, sizeof kind);
  for (k = 0; ok && k < from->nranks; k++) {
    const uint64_t *x = edge_words(words[from->ranks[k]], e);
    p = json_object();
    sent = json_array();
    ok = p != NULL && sent != NULL;
    for (j = 0; ok && j < (int)x[7] && j < to->nranks; j++) {
      c = json_object();
      ok = c != NULL && put(c, "rank", json_integer(to->ranks[j]))
           && put(c, "messages", count(x[EDGE_WORDS + j]))
           && json_array_append_new(sent, c) == 0;
    }
    ok = ok && put(p, "rank", json_integer(from->ranks[k]))
         && put(p, "records_out", count(x[0]))
         && put(p, "messages_out", count(x[1]))
         && put(p, "credit_stalls", count(x[4]))
         && put(p, "put_wait_seconds", json_real(wdouble(x[5])))
         && put(p, "messages_to", json_incref(sent))
         && json_array_append(prods, p) == 0;
    json_decref(sent);
    json_decref(p);
  }
  for (k = 0; ok && k < to->nranks; k++) {
    const uint64_t *x = edge_words(words[to->ranks[k]], e);
    const uint64_t *u = x + EDGE_WORDS + x[7];   /* count, units_from */
    c = json_object();
    ok = c != NULL && put(c, "rank", json_integer(to->ranks[k]))
         && put(c, "records_in", count(x[2]))
         && put(c, "messages_in", count(x[3]))
         && put(c, "get_wait_seconds", json_real(wdouble(x[6])));
    if (ok && u[0] > 0)   /* a PULL edge: the units it took, by producer */
      ok = put(c, "units_from", units_part(from, u));
    ok = ok && json_array_append_new(cons, c) == 0;
  }
  ok = ok && put(o, "from", json_string(from->name))
       && put(o, "to", json_string(to->name))
       && put(o, "kind", text(kind))
       && put(o, "credit_path", json_string(
              r->edge_path[e] == RIVER_DQ_CREDITS_MSG ? "msg" : "rma"))
       && put(o, "producers", json_incref(prods))
       && put(o, "consumers", json_incref(cons));
  json_decref(prods);
  json_decref(cons);
  if (!ok) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* Where a flow loaded from a spec came from: its path and params. */
static json_t *spec_part(const river_flow *f)
{
  json_t *o = json_object(), *params = json_array();
  int i, ok = o != NULL && params != NULL && put(o, "path", text(f->spec_path))
              && put(o, "params", json_incref(params));

  for (i = 0; ok && i < f->nspec_params; i++)
    ok = json_array_append_new(params, text(f->spec_params[i])) == 0;
  json_decref(params);
  if (!ok) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* Rank 0: the flow's entry from every rank's words. */
static json_t *gd_entry(const char *label, const uint64_t *const *words,
                        int n, const int *ranks);

/* The GD reads the flow's stages kept (river_ctx_keep_gd), one entry
 * each, named by its stage: an array, empty where none did. */
static json_t *flow_gd_part(const river_flow *f, uint64_t *const *words,
                            int size)
{
  json_t *all = json_array(), *g;
  const uint64_t **mine = NULL;
  int st, q, i, k, kept, ok = all != NULL;

  for (st = 0; ok && st < f->nstages; st++) {
    const river__stage *stage = &f->stages[st];
    free(mine);
    if ((mine = calloc((size_t)stage->nranks + 1, sizeof *mine)) == NULL) {
      ok = 0;
      break;
    }
    kept = 0;
    for (k = 0; k < stage->nranks; k++) {
      const uint64_t *w, *x;
      q = stage->ranks[k];
      if (q < 0 || q >= size)
        continue;
      w = words[q];
      for (i = 0, x = w + 2; i < (int)w[0]; i++, x = next_inst(x))
        if ((int)x[0] == st && inst_gd(x)[0] > 0) {
          mine[k] = inst_gd(x) + 1;
          kept++;
        }
    }
    if (kept == 0)
      continue;
    if (kept != stage->nranks) {   /* an instance that kept none: none */
      river__error("stats: stage %s: %d of its %d instances kept their "
                   "GD read (river_ctx_keep_gd); left out", stage->name,
                   kept, stage->nranks);
      continue;
    }
    ok = (g = gd_entry(stage->name, mine, stage->nranks, stage->ranks))
             != NULL
         && json_array_append_new(all, g) == 0;
  }
  free(mine);
  if (!ok) {
    json_decref(all);
    return NULL;
  }
  return all;
}

static int flow_part(river_stats *s, const river_flow *f,
                     const struct river__run *r, const char *label,
                     uint64_t *const *words)
{
  json_t *fl = json_object(), *edges = json_array(), *stages, *e, *gd;
  int i, ok = fl != NULL && edges != NULL;

  stages = ok ? stages_part(f, words, s->size) : NULL;
  ok = ok && stages != NULL;
  for (i = 0; ok && i < f->nedges; i++)
    ok = (e = edge_part(f, r, words, i)) != NULL
         && json_array_append_new(edges, e) == 0;
  gd = ok ? flow_gd_part(f, words, s->size) : NULL;
  ok = ok && gd != NULL;
  if (ok && json_array_size(gd) > 0)
    ok = put(fl, "gd", json_incref(gd));
  json_decref(gd);
  ok = ok && (label == NULL || put(fl, "label", text(label)))
       && (f->spec_path == NULL || put(fl, "spec", spec_part(f)))
       && put(fl, "outcome", json_string(river_err_name(r->outcome)))
       && put(fl, "stages", json_incref(stages))
       && put(fl, "edges", json_incref(edges))
       && json_array_append(json_object_get(s->doc, "flows"), fl) == 0;
  json_decref(stages);
  json_decref(edges);
  json_decref(fl);
  return ok ? RIVER_SUCCESS : RIVER_ENOMEM;
}

/* Collective: every rank's words (mine, n of them; mine NULL where
 * the rank failed: rc says so) to rank 0, as words[q] for rank q
 * (*all holds them; the caller frees *all and *words). Agreed. */
static int gather_words(river_stats *s, int rc, const uint64_t *mine, int n,
                        uint64_t **all_out, uint64_t ***words_out)
{
  uint64_t *all = NULL, **words = NULL;
  int q, *counts = NULL, *displs;
  size_t total = 0;

  *all_out = NULL;
  *words_out = NULL;
  if (s->rank == 0 && (counts = calloc((size_t)s->size * 2, sizeof *counts))
                          == NULL)
    rc = RIVER_ENOMEM;
  rc = river__agree(s->comm, rc);
  if (rc == RIVER_SUCCESS)
    rc = river__gather(&n, 1, MPI_INT, counts, 0, s->comm);
  if (rc == RIVER_SUCCESS && s->rank == 0) {
    displs = counts + s->size;
    for (q = 0; q < s->size; q++) {
      displs[q] = (int)(total * sizeof *all);
      total += (size_t)counts[q];
      counts[q] *= (int)sizeof *all;
    }
    if (total > (size_t)(INT32_MAX / 8)
        || (all = malloc(total * sizeof *all + 1)) == NULL
        || (words = malloc((size_t)s->size * sizeof *words)) == NULL)
      rc = RIVER_ENOMEM;
  }
  rc = river__agree(s->comm, rc);
  if (rc == RIVER_SUCCESS)
    rc = river__gatherv(mine, n * (int)sizeof *mine, all, counts,
                        counts != NULL ? counts + s->size : NULL, 0,
                        s->comm);
  if (rc == RIVER_SUCCESS && s->rank == 0)
    for (q = 0; q < s->size; q++)
      words[q] = all + (size_t)counts[s->size + q] / sizeof *all;
  free(counts);
  if (rc != RIVER_SUCCESS) {
    free(all);
    free(words);
    return rc;
  }
  *all_out = all;
  *words_out = words;
  return RIVER_SUCCESS;
}

int river_stats_add_flow(river_stats *s, river_flow *f, const char *label)
{
  struct river__run *r;
  uint64_t *mine = NULL, *all = NULL, **words = NULL;
  int n = 0, rc = RIVER_SUCCESS, cmp = MPI_UNEQUAL;
  double t0;

  if (s == NULL) {   /* no communicator to tell the others on */
    river__error("river_stats_add_flow: s is NULL");
    return RIVER_EINVAL;
  }
  /* The gathered words are in s's rank order, the flow's stages name
   * ranks of its own communicator: they must be the same ranks in the
   * same order. A rank that fails here still takes part in the gather
   * below (its failure agreed there), so no rank waits for it. */
  if (f == NULL) {
    river__error("river_stats_add_flow: f is NULL");
    rc = RIVER_EINVAL;
  } else if (f->comm == MPI_COMM_NULL
             || MPI_Comm_compare(f->comm, s->comm, &cmp) != MPI_SUCCESS
             || (cmp != MPI_IDENT && cmp != MPI_CONGRUENT)) {
    river__error("river_stats_add_flow: the flow does not run on the "
                 "stats' communicator (the same ranks in the same order)");
    rc = RIVER_EINVAL;
  }
  r = f != NULL ? f->run : NULL;
  if (rc == RIVER_SUCCESS && (r == NULL || !r->finished)) {
    river__error("river_stats_add_flow: the flow has not run");
    rc = RIVER_ESTATE;
  }
  t0 = river_wtime();
  if (rc == RIVER_SUCCESS && (mine = flow_words(f, r, &n)) == NULL)
    rc = RIVER_ENOMEM;
  rc = gather_words(s, rc, mine, n, &all, &words);
  if (rc == RIVER_SUCCESS && s->rank == 0)
    rc = flow_part(s, f, r, label, words);
  rc = river__agree(s->comm, rc);
  river_log(RIVER_LOG_DEBUG, "stats: flow %s added in %.3f ms (%d words "
            "here)", label != NULL ? label : "", 1e3 * (river_wtime() - t0),
            n);
  free(words);
  free(all);
  free(mine);
  return rc;
}

/* ------------------------------------------------------------------ GD */

#define GD_WORDS 6         /* river_gd_stats' client counts, then rows */
#define GD_ROW 6           /* disk, partition, copy, client, blocks, bytes */

/* This rank's words of gd: its client counters and its disks' rows. */
static uint64_t *gd_words(const river_gd *gd, int *nwords)
{
  river_gd_stats st;
  river_gd_served *rows = NULL;
  uint64_t *w = NULL;
  size_t nrows = 0, i, k = 0;

  if (river_gd_stats_get(gd, &st) != RIVER_SUCCESS
      || river_gd_served_get(gd, NULL, 0, &nrows) != RIVER_SUCCESS
      || nrows > (size_t)(INT32_MAX / 8 / GD_ROW) - GD_WORDS
      || (rows = calloc(nrows + 1, sizeof *rows)) == NULL
      || river_gd_served_get(gd, rows, nrows, &nrows) != RIVER_SUCCESS
      || (w = calloc(GD_WORDS + nrows * GD_ROW, sizeof *w)) == NULL) {
    free(rows);
    return NULL;
  }
  w[k++] = st.blocks_received;
  w[k++] = st.bytes_received;
  w[k++] = st.failovers;
  w[k++] = dword(st.seconds);
  w[k++] = st.seeks;
  w[k++] = (uint64_t)nrows;
  for (i = 0; i < nrows; i++) {
    w[k++] = (uint64_t)rows[i].disk;
    w[k++] = (uint64_t)rows[i].partition;
    w[k++] = (uint64_t)rows[i].copy;
    w[k++] = (uint64_t)rows[i].client;
    w[k++] = rows[i].blocks;
    w[k++] = rows[i].bytes;
  }
  free(rows);
  *nwords = (int)k;
  return w;
}

/* GD's entry from n ranks' words (words[q]: rank q of the read's
 * communicator, ranks[q] of the job's; ranks NULL: the same), named
 * label. A disk's rows are one after another in its rank's words
 * (river_gd_served_get's order); a client is a rank of the read's
 * communicator (a row naming none is left out). NULL without memory. */
#define RANK(q) (ranks != NULL ? ranks[q] : (q))
static json_t *gd_entry(const char *label, const uint64_t *const *words,
                        int n, const int *ranks)
{
  json_t *g = json_object(), *disks = json_array(), *clients = json_array();
  json_t *dk = NULL, *served = NULL, *o;
  int q, ok = g != NULL && disks != NULL && clients != NULL;
  uint64_t i, blocks = 0, bytes = 0;

  for (q = 0; ok && q < n; q++) {
    const uint64_t *w = words[q];
    o = json_object();
    ok = o != NULL && put(o, "rank", json_integer(RANK(q)))
         && put(o, "blocks_received", count(w[0]))
         && put(o, "bytes_received", count(w[1]))
         && put(o, "failovers", count(w[2]))
         && put(o, "seconds", json_real(wdouble(w[3])))
         && json_array_append_new(clients, o) == 0;
    for (i = 0; ok && i < w[5]; i++) {
      const uint64_t *x = w + GD_WORDS + i * GD_ROW;
      if (i == 0 || x[0] != x[-GD_ROW]) {   /* a disk's first row */
        dk = json_object();
        served = json_array();
        blocks = bytes = 0;
        ok = dk != NULL && served != NULL
             && put(dk, "disk", count(x[0]))
             && put(dk, "rank", json_integer(RANK(q)))
             && put(dk, "served", served)
             && put(dk, "blocks_served", count(0))
             && put(dk, "bytes_served", count(0))
             && json_array_append_new(disks, dk) == 0;
        if (!ok)
          break;
      }
      if (x[3] >= (uint64_t)n)   /* no rank of the read (cannot be,
                                    once gd_over held): left out */
        continue;
      blocks += x[4];
      bytes += x[5];
      o = json_object();
      ok = o != NULL && put(o, "partition", count(x[1]))
           && put(o, "copy", count(x[2]))
           && put(o, "client", json_integer(RANK((int)x[3])))
           && put(o, "blocks", count(x[4])) && put(o, "bytes", count(x[5]))
           && json_array_append_new(served, o) == 0
           && put(dk, "blocks_served", count(blocks))
           && put(dk, "bytes_served", count(bytes));
    }
  }
  ok = ok && (label == NULL || put(g, "label", text(label)))
       && put(g, "disks", json_incref(disks))
       && put(g, "clients", json_incref(clients));
  json_decref(disks);
  json_decref(clients);
  if (!ok) {
    json_decref(g);
    return NULL;
  }
  return g;
}

/* Rank 0: a GD read of the whole job as an entry of the document's
 * "gd". */
static int gd_part(river_stats *s, const char *label, uint64_t *const *words)
{
  json_t *g = gd_entry(label, (const uint64_t *const *)words, s->size, NULL);
  int ok = g != NULL;

  if (ok && json_object_get(s->doc, "gd") == NULL)
    ok = put(s->doc, "gd", json_array());
  ok = ok && json_array_append(json_object_get(s->doc, "gd"), g) == 0;
  json_decref(g);
  return ok ? RIVER_SUCCESS : RIVER_ENOMEM;
}

/* 1 if gd reads over comm's ranks, in comm's order (its clients and
 * disks are named by rank of comm); else said, naming who. */
static int gd_over(const river_gd *gd, MPI_Comm comm, const char *who)
{
  MPI_Comm gc = MPI_COMM_NULL;
  int cmp = MPI_UNEQUAL;

  if (river_gd_comm(gd, &gc) != RIVER_SUCCESS || comm == MPI_COMM_NULL
      || MPI_Comm_compare(gc, comm, &cmp) != MPI_SUCCESS
      || (cmp != MPI_IDENT && cmp != MPI_CONGRUENT)) {
    river__error("%s: the GD read is not over %s (the same ranks in the "
                 "same order)", who, strcmp(who, "river_ctx_keep_gd") == 0
                 ? "the stage's communicator" : "the stats' communicator");
    return 0;
  }
  return 1;
}

int river_ctx_keep_gd(river_ctx *ctx, river_gd *gd)
{
  struct river__inst *in;
  uint64_t *w;
  int n = 0;

  if (ctx == NULL || gd == NULL || ctx->run == NULL) {
    river__error("river_ctx_keep_gd: %s", ctx == NULL ? "ctx is NULL"
                 : gd == NULL ? "gd is NULL" : "not in a running flow");
    return RIVER_EINVAL;
  }
  in = ctx->run;
  if (!gd_over(gd, in->comm, "river_ctx_keep_gd"))
    return RIVER_EINVAL;
  if ((w = gd_words(gd, &n)) == NULL)
    return RIVER_ENOMEM;
  free(in->gd_words);
  in->gd_words = w;
  in->gd_nwords = n;
  return RIVER_SUCCESS;
}

int river_stats_add_gd(river_stats *s, river_gd *gd, const char *label)
{
  struct stats_gd *g;
  int n = 0;

  if (s == NULL || gd == NULL) {
    river__error("river_stats_add_gd: %s is NULL", s == NULL ? "s" : "gd");
    return RIVER_EINVAL;
  }
  if (!gd_over(gd, s->comm, "river_stats_add_gd"))
    return RIVER_EINVAL;
  g = realloc(s->gd, ((size_t)s->ngd + 1) * sizeof *g);
  if (g == NULL)
    return RIVER_ENOMEM;
  s->gd = g;
  g += s->ngd;
  memset(g, 0, sizeof *g);
  snprintf(g->label, sizeof g->label, "%s", label != NULL ? label : "");
  if ((g->words = gd_words(gd, &n)) == NULL)
    return RIVER_ENOMEM;
  g->nwords = n;
  s->ngd++;
  return RIVER_SUCCESS;
}

/* Collective: the GD entries every rank kept, gathered into the
 * document; every rank must have kept as many. */
static int gather_gd(river_stats *s)
{
  uint64_t *all = NULL, **words = NULL;
  int i, mine[2] = {s->ngd, -s->ngd}, both[2] = {0, 0}, lo, hi, rc;

  /* The fewest and (negated) the most any rank added, in one reduction
   * that the watchdog can end (RIVER_TIMEOUT). */
  rc = river__allreduce(mine, both, 2, MPI_INT, MPI_MIN, s->comm);
  lo = both[0];
  hi = -both[1];
  if (rc == RIVER_SUCCESS && lo != hi) {
    if (s->rank == 0)
      river__error("river_stats_write: the ranks added %d to %d GD "
                   "reads (river_stats_add_gd): every rank adds each", lo,
                   hi);
    return RIVER_EINVAL;
  }
  for (i = 0; rc == RIVER_SUCCESS && i < s->ngd; i++) {
    rc = gather_words(s, RIVER_SUCCESS, s->gd[i].words, s->gd[i].nwords,
                      &all, &words);
    if (rc == RIVER_SUCCESS && s->rank == 0)
      rc = gd_part(s, s->gd[i].label[0] ? s->gd[i].label : NULL, words);
    rc = river__agree(s->comm, rc);
    free(words);
    free(all);
  }
  for (i = 0; i < s->ngd; i++)
    free(s->gd[i].words);
  free(s->gd);
  s->gd = NULL;
  s->ngd = 0;
  return rc;
}

/* ---------------------------------------------------------------- work */

int river_stats_add_work(river_stats *s, const char *label, uint64_t records,
                         uint64_t bytes, double seconds)
{
  uint64_t mine[3], *all = NULL, **words = NULL;
  json_t *w = NULL, *ranks = NULL, *o;
  int q, ok, rc = RIVER_SUCCESS;

  if (s == NULL) {   /* no communicator to tell the others on */
    river__error("river_stats_add_work: s is NULL");
    return RIVER_EINVAL;
  }
  if (!isfinite(seconds) || seconds < 0) {
    river__error("river_stats_add_work: seconds is not a finite number "
                 ">= 0");
    rc = RIVER_EINVAL;
  }
  mine[0] = records;
  mine[1] = bytes;
  mine[2] = dword(seconds);
  rc = gather_words(s, rc, mine, 3, &all, &words);
  if (rc == RIVER_SUCCESS && s->rank == 0) {
    w = json_object();
    ranks = json_array();
    ok = w != NULL && ranks != NULL;
    for (q = 0; ok && q < s->size; q++)
      ok = (o = json_object()) != NULL && put(o, "rank", json_integer(q))
           && put(o, "records", count(words[q][0]))
           && put(o, "bytes", count(words[q][1]))
           && put(o, "seconds", json_real(wdouble(words[q][2])))
           && json_array_append_new(ranks, o) == 0;
    ok = ok && (label == NULL || put(w, "label", text(label)))
         && put(w, "ranks", json_incref(ranks));
    if (ok && json_object_get(s->doc, "work") == NULL)
      ok = put(s->doc, "work", json_array());
    ok = ok && json_array_append(json_object_get(s->doc, "work"), w) == 0;
    rc = ok ? RIVER_SUCCESS : RIVER_ENOMEM;
    json_decref(ranks);
    json_decref(w);
  }
  rc = river__agree(s->comm, rc);
  free(words);
  free(all);
  return rc;
}

/* ---------------------------------------------------------------- write */

/* Where a stats file may go (rank 0): a path whose directory exists
 * and that names nothing but a regular file, so that a temporary beside
 * it can be renamed over it. A symbolic link, a FIFO, a device or a
 * directory there is refused, naming it: the file would replace the
 * link (not what it names), and /dev/stdout has no directory to hold a
 * temporary. RIVER_SUCCESS or RIVER_EINVAL (said). */
static int path_ok(const char *path)
{
  struct stat st;
  char *dir = strdup(path), *slash;
  int rc = RIVER_SUCCESS;

  if (dir == NULL)
    return RIVER_ENOMEM;
  if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    river__error("stats file %s: %s, not a regular file", path,
                 S_ISLNK(st.st_mode) ? "a symbolic link"
                 : S_ISDIR(st.st_mode) ? "a directory"
                 : S_ISFIFO(st.st_mode) ? "a FIFO" : "a special file");
    rc = RIVER_EINVAL;
  }
  slash = strrchr(dir, '/');
  if (slash == dir)
    slash[1] = '\0';          /* "/x": the root */
  else if (slash != NULL)
    *slash = '\0';
  if (rc == RIVER_SUCCESS
      && (stat(slash != NULL ? dir : ".", &st) != 0 || !S_ISDIR(st.st_mode))) {
    river__error("stats file %s: no directory %s", path,
                 slash != NULL ? dir : ".");
    rc = RIVER_EINVAL;
  }
  free(dir);
  return rc;
}

/* Rank 0: the document into a temporary beside path (mode 0666 less
 * the umask, as a file the user made), then renamed over it: a reader
 * never sees half a document. */
static int write_doc(const river_stats *s, const char *path)
{
  char *tmp = malloc(strlen(path) + 16);
  const char *step = "creating a temporary beside it";
  mode_t mask;
  int fd = -1, ok = 0, err = 0;

  if (tmp == NULL)
    return RIVER_ENOMEM;
  sprintf(tmp, "%s.tmp.XXXXXX", path);
  mask = umask(0);
  umask(mask);
  if ((fd = mkstemp(tmp)) >= 0) {
    step = "writing it";
    ok = fchmod(fd, 0666 & ~mask) == 0
         && json_dumpfd(s->doc, fd, JSON_INDENT(1) | JSON_ENSURE_ASCII) == 0
         && write(fd, "\n", 1) == 1 && fsync(fd) == 0;
    err = ok ? 0 : errno;
    if (close(fd) != 0 && ok) {
      ok = 0;
      err = errno;
    }
    if (ok && rename(tmp, path) != 0) {
      ok = 0;
      err = errno;
      step = "renaming it into place";
    }
    if (!ok)
      unlink(tmp);
  } else {
    err = errno;
  }
  if (!ok)
    river__error("stats file %s: %s failed: %s", path, step,
                 err != 0 ? strerror(err) : "an error jansson did not name");
  free(tmp);
  return ok ? RIVER_SUCCESS : RIVER_EIO;
}

int river_stats_check_path(river_stats *s, const char *path)
{
  int rc = RIVER_SUCCESS;

  if (s == NULL) {
    river__error("river_stats_check_path: s is NULL");
    return RIVER_EINVAL;
  }
  if (s->rank == 0) {
    rc = path == NULL || *path == '\0' ? RIVER_EINVAL : path_ok(path);
    if (path == NULL || *path == '\0')
      river__error("river_stats_check_path: no path");
  }
  return river__agree(s->comm, rc);
}

int river_stats_write(river_stats *s, const char *path)
{
  double t0;
  int rc;

  if (s == NULL) {   /* no communicator to tell the others on */
    river__error("river_stats_write: s is NULL");
    return RIVER_EINVAL;
  }
  /* Rank 0's path is the one used; the others may pass NULL. */
  t0 = river_wtime();
  rc = gather_gd(s);
  if (rc == RIVER_SUCCESS)
    rc = river_stats_check_path(s, path);
  if (rc == RIVER_SUCCESS && s->rank == 0)
    rc = write_doc(s, path);
  rc = river__agree(s->comm, rc);
  river_log(RIVER_LOG_DEBUG, "stats: written in %.3f ms",
            1e3 * (river_wtime() - t0));
  return rc;
}
