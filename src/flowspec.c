/*
 * flowspec.c - a YAML flow spec (doc/flowspec.md) into a flow, through
 * the public flow API only (river_flow_origin, place, arg, attach).
 *
 * libyaml loads the file (at most RIVER__SPEC_MAX bytes) into a
 * document tree; this file walks it once, top to bottom: params (with
 * the caller's key=value overrides), stages (whose ranks are resolved
 * in three passes: explicit lists and ranges, then counts, then
 * `rest`), then edges. Every scalar value goes through ${param}
 * substitution. Each node is visited at most once, so a YAML alias (a
 * second reference to a node) is refused rather than expanded. Every
 * message is "PATH:LINE:COLUMN: what is wrong" (libyaml's marks are
 * 0-based; people count from 1); messages from the flow API carry the
 * same prefix through river_flow_origin. Nothing here needs MPI.
 */
#include "flow_internal.h"
#include "file_internal.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#define RIVER__SPEC_MAX (1 << 20)       /* bytes of spec */
#define VALUE_MAX 4096                  /* bytes of a value, substituted */
#define DEPTH_MAX 64                    /* nesting of [ ] and { } */

struct param {
  char *name, *value;
};

/* A stage as read, before its ranks are resolved. */
struct stg {
  char *name, *module;
  yaml_node_t *node, *ranks, *args;
  int how;                /* RANKS_LIST, RANKS_COUNT or RANKS_REST */
  int *r, nr;             /* resolved ranks */
};
enum { RANKS_LIST, RANKS_COUNT, RANKS_REST };

struct spec {
  const char *path;
  yaml_document_t doc;
  unsigned char *seen;    /* per node: visited */
  int nnodes, nranks;
  struct param *params;
  int nparams;
  struct stg *stages;
  int nstages;
  river_flow *f;
};

/* Log "PATH:LINE:COLUMN: ..." at node n (no mark if n is NULL). */
static int err(const struct spec *sp, const yaml_node_t *n, const char *fmt,
               ...) RIVER_PRINTF(3, 4);
static int err(const struct spec *sp, const yaml_node_t *n, const char *fmt,
               ...)
{
  char msg[800];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (n != NULL)
    river__error("%s:%zu:%zu: %s", sp->path, n->start_mark.line + 1,
                 n->start_mark.column + 1, msg);
  else
    river__error("%s: %s", sp->path, msg);
  return RIVER_EFORMAT;
}

/* Set the flow's origin to node n's mark. */
static int origin(struct spec *sp, const yaml_node_t *n)
{
  char where[600];

  snprintf(where, sizeof where, "%s:%zu:%zu", sp->path,
           n->start_mark.line + 1, n->start_mark.column + 1);
  return river_flow_origin(sp->f, where);
}

static const char *kind_name(const yaml_node_t *n)
{
  return n->type == YAML_SCALAR_NODE ? "a scalar"
         : n->type == YAML_SEQUENCE_NODE ? "a list" : "a mapping";
}

/* Node id, visited once: a second visit is through an alias. */
static yaml_node_t *visit(struct spec *sp, int id)
{
  yaml_node_t *n = yaml_document_get_node(&sp->doc, id);

  if (n == NULL)
    return NULL;
  if (sp->seen[id - 1]) {
    err(sp, n, "YAML aliases are not supported in flow specs (this node "
        "is used a second time)");
    return NULL;
  }
  sp->seen[id - 1] = 1;
  return n;
}

static const char *raw(const yaml_node_t *n)
{
  return (const char *)n->data.scalar.value;
}

/* ------------------------------------------------------------ scalars */

/* in with each ${name} replaced by its param's value, into a new string. */
static int subst(struct spec *sp, const yaml_node_t *n, const char *in,
                 char **out)
{
  char buf[VALUE_MAX + 1];
  size_t len = 0, k;
  const char *p = in, *end;
  const char *piece;
  int i;

  while (*p != '\0') {
    if (p[0] == '$' && p[1] == '{') {
      if ((end = strchr(p + 2, '}')) == NULL)
        return err(sp, n, "'${' without its '}' in \"%.100s\"", in);
      for (i = 0; i < sp->nparams; i++)
        if (strlen(sp->params[i].name) == (size_t)(end - p - 2)
            && strncmp(sp->params[i].name, p + 2, (size_t)(end - p - 2)) == 0)
          break;
      if (i == sp->nparams)
        return err(sp, n, "unknown parameter '%.*s' (not in params)",
                   (int)(end - p - 2 > 64 ? 64 : end - p - 2), p + 2);
      piece = sp->params[i].value;
      k = strlen(piece);
      p = end + 1;
    } else {
      piece = p++;
      k = 1;
    }
    if (len + k > VALUE_MAX)
      return err(sp, n, "the value is longer than %d bytes", VALUE_MAX);
    memcpy(buf + len, piece, k);
    len += k;
  }
  buf[len] = '\0';
  return (*out = strdup(buf)) ? RIVER_SUCCESS : RIVER_ENOMEM;
}

/* The substituted text of scalar node n (`what` names it in messages). */
static int scalar(struct spec *sp, const yaml_node_t *n, const char *what,
                  char **out)
{
  if (n->type != YAML_SCALAR_NODE)
    return err(sp, n, "%s must be a scalar, not %s", what, kind_name(n));
  return subst(sp, n, raw(n), out);
}

/* A non-negative integer <= max from scalar node n. */
static int number(struct spec *sp, const yaml_node_t *n, const char *what,
                  int size, uint64_t max, uint64_t *v)
{
  char *s;
  int rc = scalar(sp, n, what, &s);

  if (rc != RIVER_SUCCESS)
    return rc;
  if (river__arg_parse(size ? RIVER__ARG_SIZE : RIVER__ARG_UINT, s, NULL, v,
                       NULL) != RIVER_SUCCESS || *v > max)
    rc = err(sp, n, "%s: expected %s up to %llu, got '%.80s'", what,
             river__arg_expect(size ? RIVER__ARG_SIZE : RIVER__ARG_UINT),
             (unsigned long long)max, s);
  free(s);
  return rc;
}

/* ----------------------------------------------------------- mappings */

/* The values of mapping node map for keys[0..] (NULL-terminated) into
 * vals[] (NULL where absent). Unknown and duplicate keys are errors;
 * `what` names the mapping in messages. */
static int mapping(struct spec *sp, yaml_node_t *map, const char *what,
                   const char *const keys[], yaml_node_t *vals[])
{
  yaml_node_pair_t *pr;
  yaml_node_t *k, *v;
  int i;

  for (i = 0; keys[i] != NULL; i++)
    vals[i] = NULL;
  if (map->type != YAML_MAPPING_NODE)
    return err(sp, map, "%s must be a mapping, not %s", what, kind_name(map));
  for (pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
       pr++) {
    if ((k = visit(sp, pr->key)) == NULL
        || (v = visit(sp, pr->value)) == NULL)
      return RIVER_EFORMAT;
    if (k->type != YAML_SCALAR_NODE)
      return err(sp, k, "%s: a key must be a scalar, not %s", what,
                 kind_name(k));
    for (i = 0; keys[i] != NULL && strcmp(keys[i], raw(k)) != 0; i++)
      ;
    if (keys[i] == NULL)
      return err(sp, k, "%s: unknown key '%.80s'", what, raw(k));
    if (vals[i] != NULL)
      return err(sp, k, "%s: duplicate key '%s'", what, keys[i]);
    vals[i] = v;
  }
  return RIVER_SUCCESS;
}

/* The items of sequence node seq (NULL allowed: none); `what` names it. */
static int sequence(struct spec *sp, yaml_node_t *seq, const char *what,
                    yaml_node_t ***items, int *n)
{
  yaml_node_item_t *it;
  int k = 0;

  *items = NULL;
  *n = 0;
  if (seq == NULL)
    return RIVER_SUCCESS;
  if (seq->type != YAML_SEQUENCE_NODE)
    return err(sp, seq, "%s must be a list, not %s", what, kind_name(seq));
  *n = (int)(seq->data.sequence.items.top - seq->data.sequence.items.start);
  if (*n == 0)
    return RIVER_SUCCESS;
  if ((*items = calloc((size_t)*n, sizeof **items)) == NULL)
    return RIVER_ENOMEM;
  for (it = seq->data.sequence.items.start; it < seq->data.sequence.items.top;
       it++)
    if (((*items)[k++] = visit(sp, *it)) == NULL)
      return RIVER_EFORMAT;
  return RIVER_SUCCESS;
}

/* ------------------------------------------------------------- params */

/* The spec's params (mapping node p, may be NULL), then the overrides. */
static int params(struct spec *sp, yaml_node_t *p, const char *const *kv,
                  int nkv)
{
  yaml_node_pair_t *pr;
  yaml_node_t *k, *v;
  int i, j;

  if (p != NULL && p->type != YAML_MAPPING_NODE)
    return err(sp, p, "params must be a mapping, not %s", kind_name(p));
  if (p != NULL) {
    i = (int)(p->data.mapping.pairs.top - p->data.mapping.pairs.start);
    if ((sp->params = calloc((size_t)i + 1, sizeof *sp->params)) == NULL)
      return RIVER_ENOMEM;
    for (pr = p->data.mapping.pairs.start; pr < p->data.mapping.pairs.top;
         pr++) {
      if ((k = visit(sp, pr->key)) == NULL
          || (v = visit(sp, pr->value)) == NULL)
        return RIVER_EFORMAT;
      if (k->type != YAML_SCALAR_NODE
          || !river__name_ok(raw(k), RIVER__ARG_NAME_MAX))
        return err(sp, k, "params: bad parameter name (1..%d letters, "
                   "digits, '_', '-')", RIVER__ARG_NAME_MAX);
      for (j = 0; j < sp->nparams; j++)
        if (strcmp(sp->params[j].name, raw(k)) == 0)
          return err(sp, k, "params: duplicate key '%s'", raw(k));
      if (v->type != YAML_SCALAR_NODE)
        return err(sp, v, "params: '%s' must be a scalar, not %s", raw(k),
                   kind_name(v));
      sp->params[sp->nparams].name = strdup(raw(k));
      sp->params[sp->nparams++].value = strdup(raw(v));
      if (!sp->params[sp->nparams - 1].name
          || !sp->params[sp->nparams - 1].value)
        return RIVER_ENOMEM;
    }
  }
  for (i = 0; i < nkv; i++) {
    const char *eq = kv[i] ? strchr(kv[i], '=') : NULL;
    if (eq == NULL)
      return err(sp, NULL, "parameter '%.80s': expected key=value",
                 kv[i] ? kv[i] : "(null)");
    for (j = 0; j < sp->nparams; j++)
      if (strlen(sp->params[j].name) == (size_t)(eq - kv[i])
          && strncmp(sp->params[j].name, kv[i], (size_t)(eq - kv[i])) == 0)
        break;
    if (j == sp->nparams)
      return err(sp, NULL, "parameter '%.*s' (given as %.80s) is not in the "
                 "spec's params", (int)(eq - kv[i] > 64 ? 64 : eq - kv[i]),
                 kv[i], kv[i]);
    free(sp->params[j].value);
    if ((sp->params[j].value = strdup(eq + 1)) == NULL)
      return RIVER_ENOMEM;
  }
  return RIVER_SUCCESS;
}

/* -------------------------------------------------------------- ranks */

/* Add rank r to st (deduplication is river_flow_place's). */
static int add_rank(struct stg *st, int r)
{
  int *p = realloc(st->r, (size_t)(st->nr + 1) * sizeof *p);

  if (p == NULL)
    return RIVER_ENOMEM;
  st->r = p;
  st->r[st->nr++] = r;
  return RIVER_SUCCESS;
}

/* One rank number of text s (node n), checked against the flow's size. */
static int rank_num(struct spec *sp, struct stg *st, const yaml_node_t *n,
                    const char *s, const char *end, int *r)
{
  char *e;
  long v;

  errno = 0;
  v = isdigit((unsigned char)*s) ? strtol(s, &e, 10) : -1;
  if (v < 0 || e != end || errno != 0)
    return err(sp, n, "stage '%s': ranks: '%.*s' is not a rank number",
               st->name, (int)(end - s > 40 ? 40 : end - s), s);
  if (v >= sp->nranks)
    return err(sp, n, "stage '%s': ranks: rank %ld is out of range (the flow "
               "has %d rank%s: 0..%d)", st->name, v, sp->nranks,
               sp->nranks == 1 ? "" : "s", sp->nranks - 1);
  *r = (int)v;
  return RIVER_SUCCESS;
}

/* A range list "0-3,6" into st. */
static int ranks_ranges(struct spec *sp, struct stg *st, const yaml_node_t *n,
                        const char *s)
{
  const char *p = s, *comma, *dash;
  int a, b, rc;

  if (*s == '\0')
    return err(sp, n, "stage '%s': ranks: empty", st->name);
  while (*p != '\0') {
    comma = strchr(p, ',');
    if (comma == NULL)
      comma = p + strlen(p);
    dash = memchr(p, '-', (size_t)(comma - p));
    if ((rc = rank_num(sp, st, n, p, dash ? dash : comma, &a)) != 0
        || (rc = rank_num(sp, st, n, dash ? dash + 1 : p, comma, &b)) != 0)
      return rc;
    if (b < a)
      return err(sp, n, "stage '%s': ranks: range %d-%d goes backwards",
                 st->name, a, b);
    for (; a <= b; a++)
      if ((rc = add_rank(st, a)) != RIVER_SUCCESS)
        return rc;
    p = *comma ? comma + 1 : comma;
  }
  return RIVER_SUCCESS;
}

/* Read st->ranks: a list, a range string, a count or "rest". Counts and
 * rest are resolved later (resolve_ranks). */
static int ranks_read(struct spec *sp, struct stg *st)
{
  yaml_node_t *n = st->ranks, **items = NULL;
  char *s = NULL;
  int i, k, r, rc;
  uint64_t c = 0;

  if (n->type == YAML_SEQUENCE_NODE) {
    rc = sequence(sp, n, "ranks", &items, &k);
    for (i = 0; rc == RIVER_SUCCESS && i < k; i++)
      if ((rc = scalar(sp, items[i], "a rank", &s)) == RIVER_SUCCESS) {
        rc = rank_num(sp, st, items[i], s, s + strlen(s), &r);
        if (rc == RIVER_SUCCESS)
          rc = add_rank(st, r);
        free(s);
      }
    free(items);
    return rc;
  }
  if ((rc = scalar(sp, n, "ranks", &s)) != RIVER_SUCCESS)
    return rc;
  if (strcmp(s, "rest") == 0) {
    st->how = RANKS_REST;
  } else if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE
             && s[0] != '\0' && strspn(s, "0123456789") == strlen(s)) {
    st->how = RANKS_COUNT;
    if ((rc = number(sp, n, "ranks", 0, INT_MAX, &c)) == RIVER_SUCCESS
        && c == 0)
      rc = err(sp, n, "stage '%s': ranks: a count must be at least 1",
               st->name);
    st->nr = (int)c;
  } else {
    rc = ranks_ranges(sp, st, n, s);
  }
  free(s);
  return rc;
}

/* Counts take the lowest ranks no list, range or earlier count holds;
 * `rest` stages take every rank no list, range or count holds. */
static int resolve_ranks(struct spec *sp)
{
  unsigned char *used = calloc((size_t)sp->nranks, 1);
  int i, r, want, rc = RIVER_SUCCESS, pass;

  if (used == NULL)
    return RIVER_ENOMEM;
  for (i = 0; i < sp->nstages; i++)
    for (r = 0; sp->stages[i].how == RANKS_LIST && r < sp->stages[i].nr; r++)
      used[sp->stages[i].r[r]] = 1;
  for (pass = RANKS_COUNT; pass <= RANKS_REST; pass++)
    for (i = 0; i < sp->nstages && rc == RIVER_SUCCESS; i++) {
      struct stg *st = &sp->stages[i];
      if (st->how != pass)
        continue;
      want = pass == RANKS_COUNT ? st->nr : sp->nranks;
      st->nr = 0;
      for (r = 0; r < sp->nranks && st->nr < want && rc == RIVER_SUCCESS; r++)
        if (!used[r] && (rc = add_rank(st, r)) == RIVER_SUCCESS)
          used[r] = pass == RANKS_COUNT;
      if (rc == RIVER_SUCCESS && pass == RANKS_COUNT && st->nr < want)
        rc = err(sp, st->ranks, "stage '%s': ranks: %d asked, only %d left "
                 "(the flow has %d)", st->name, want, st->nr, sp->nranks);
      if (rc == RIVER_SUCCESS && pass == RANKS_REST && st->nr == 0)
        rc = err(sp, st->ranks, "stage '%s': ranks: rest: no rank is left "
                 "(the flow has %d)", st->name, sp->nranks);
    }
  free(used);
  return rc;
}

/* ------------------------------------------------------------- stages */

static int read_stage(struct spec *sp, yaml_node_t *n, struct stg *st)
{
  static const char *const keys[] = {"name", "module", "ranks", "args",
                                     NULL};
  yaml_node_t *v[4];
  int rc;

  st->node = n;
  if ((rc = mapping(sp, n, "a stage", keys, v)) != RIVER_SUCCESS)
    return rc;
  if (v[0] == NULL)
    return err(sp, n, "a stage without a 'name'");
  if ((rc = scalar(sp, v[0], "a stage's name", &st->name)) != RIVER_SUCCESS)
    return rc;
  if (v[1] == NULL || v[2] == NULL)
    return err(sp, n, "stage '%s': missing '%s'", st->name,
               v[1] == NULL ? "module" : "ranks");
  if ((rc = scalar(sp, v[1], "module", &st->module)) != RIVER_SUCCESS)
    return rc;
  st->ranks = v[2];
  st->args = v[3];
  if (st->args != NULL && st->args->type != YAML_MAPPING_NODE)
    return err(sp, st->args, "stage '%s': args must be a mapping, not %s",
               st->name, kind_name(st->args));
  return ranks_read(sp, st);
}

/* Place st, then give it its arguments, each with its value's mark. */
static int place_stage(struct spec *sp, struct stg *st)
{
  yaml_node_pair_t *pr;
  yaml_node_t *k, *v, *m = st->args;
  char *val, what[160];
  int rc;

  if ((rc = origin(sp, st->node)) != RIVER_SUCCESS
      || (rc = river_flow_place(sp->f, st->name, st->module, st->r, st->nr))
             != RIVER_SUCCESS)
    return rc;
  for (pr = m ? m->data.mapping.pairs.start : NULL;
       m && pr < m->data.mapping.pairs.top; pr++) {
    if ((k = visit(sp, pr->key)) == NULL
        || (v = visit(sp, pr->value)) == NULL)
      return RIVER_EFORMAT;
    if (k->type != YAML_SCALAR_NODE)
      return err(sp, k, "stage '%s': args: a key must be a scalar, not %s",
                 st->name, kind_name(k));
    for (yaml_node_pair_t *q = m->data.mapping.pairs.start; q < pr; q++)
      if (strcmp(raw(yaml_document_get_node(&sp->doc, q->key)), raw(k)) == 0)
        return err(sp, k, "stage '%s': args: duplicate key '%.80s'",
                   st->name, raw(k));
    snprintf(what, sizeof what, "stage '%s': argument '%.80s'", st->name,
             raw(k));
    if ((rc = scalar(sp, v, what, &val)) != RIVER_SUCCESS)
      return rc;
    if ((rc = origin(sp, v)) == RIVER_SUCCESS)
      rc = river_flow_arg(sp->f, st->name, raw(k), val);
    free(val);
    if (rc != RIVER_SUCCESS)
      return rc;
  }
  return RIVER_SUCCESS;
}

/* -------------------------------------------------------------- edges */

/* The index of text s in names[] (NULL-terminated), or an error. */
static int choice(struct spec *sp, yaml_node_t *n, const char *what,
                  const char *const names[], const char *list, int *out)
{
  char *s;
  int i, rc = scalar(sp, n, what, &s);

  if (rc != RIVER_SUCCESS)
    return rc;
  for (i = 0; names[i] != NULL && strcmp(names[i], s) != 0; i++)
    ;
  if (names[i] == NULL)
    rc = err(sp, n, "%s: unknown value '%.80s' (%s)", what, s, list);
  free(s);
  *out = i;
  return rc;
}

/* An edge's pace: seconds, plain or with a unit (0.02, 20ms, 500us,
 * 0.02s), > 0; "off" (or a negative number) turns pacing off. 0 is
 * refused: in the API it means the default, which a spec gets by leaving
 * the key out, and a reader would take it for off. Decimal only (no hex,
 * no inf or nan). A pace > 0 is for push dq edges only; off fits any
 * edge (a template can pass it to whatever the edge becomes). */
static int pace(struct spec *sp, const yaml_node_t *n, river_edge_opts *o)
{
  char *s, *end;
  double x = -1.0, unit = 1.0;
  size_t num;
  int rc = scalar(sp, n, "pace", &s);

  if (rc != RIVER_SUCCESS)
    return rc;
  if (strcmp(s, "off") != 0) {
    num = strspn(s, "0123456789.eE+-");
    end = s + num;
    if (strcmp(end, "ms") == 0)
      unit = 1e-3;
    else if (strcmp(end, "us") == 0)
      unit = 1e-6;
    else if (strcmp(end, "s") != 0 && *end != '\0')
      num = 0;   /* not a duration */
    errno = 0;
    if (num > 0)
      x = strtod(s, &end) * unit;
    if (num == 0 || end != s + num || errno == ERANGE
        || !(x >= -1e6 && x <= 1e6) || x == 0)
      rc = err(sp, n, "pace: expected seconds > 0 (e.g. 0.02, 20ms) or "
               "off, got '%.80s'", s);
  }
  if (rc == RIVER_SUCCESS && x > 0
      && (o->kind != RIVER_EDGE_DQ || o->policy != RIVER_DQ_PUSH))
    rc = err(sp, n, "pace is for push dq edges only (off fits any)");
  if (rc == RIVER_SUCCESS)
    o->pace = x;
  free(s);
  return rc;
}

/* Edge options from v[] (the keys of read_edge) into o. */
static int edge_opts(struct spec *sp, yaml_node_t *const v[],
                     river_edge_opts *o, char **key, char **filter)
{
  static const char *const ats[] = {"source", "sink", NULL};
  static const char *const kinds[] = {"dq", "exchange", "one-to-one",
                                      "broadcast", NULL};
  static const char *const pols[] = {"push", "pull", "static", NULL};
  static const char *const bys[] = {"hash", "range", NULL};
  static const river_dq_policy pol[] = {RIVER_DQ_PUSH, RIVER_DQ_PULL,
                                        RIVER_DQ_STATIC};
  uint64_t x;
  int i = 0, rc = RIVER_SUCCESS;

  if (v[2] && (rc = choice(sp, v[2], "kind", kinds, "dq, exchange, "
                           "one-to-one or broadcast", &i)) != RIVER_SUCCESS)
    return rc;
  o->kind = (river_edge_kind)i;
  if (v[3] && o->kind != RIVER_EDGE_DQ)
    return err(sp, v[3], "policy is for dq edges only");
  if ((v[4] || v[5]) && o->kind != RIVER_EDGE_EXCHANGE)
    return err(sp, v[4] ? v[4] : v[5], "'%s' is for exchange edges only",
               v[4] ? "by" : "key");
  if (v[3] && (rc = choice(sp, v[3], "policy", pols, "push, pull or static",
                           &i)) == RIVER_SUCCESS)
    o->policy = pol[i];
  if (rc == RIVER_SUCCESS && v[4]
      && (rc = choice(sp, v[4], "by", bys, "hash or range", &i)) == 0)
    o->by = (river_exchange_by)i;
  if (rc == RIVER_SUCCESS && v[5]
      && (rc = scalar(sp, v[5], "key", key)) == RIVER_SUCCESS)
    o->key = *key;
  if (rc == RIVER_SUCCESS && v[6]
      && (rc = number(sp, v[6], "credits", 0, INT_MAX, &x)) == 0)
    o->credits = (int)x;
  if (rc == RIVER_SUCCESS && v[7]
      && (rc = number(sp, v[7], "message_size", 1, SIZE_MAX, &x)) == 0)
    o->message_size = (size_t)x;
  if (rc == RIVER_SUCCESS && v[8] && (rc = number(sp, v[8], "from_output", 0,
                                      RIVER__PORTS_MAX - 1, &x)) == 0)
    o->from_output = (int)x;
  if (rc == RIVER_SUCCESS && v[9] && (rc = number(sp, v[9], "to_input", 0,
                                      RIVER__PORTS_MAX - 1, &x)) == 0)
    o->to_input = (int)x;
  if (rc == RIVER_SUCCESS && v[10]
      && (rc = scalar(sp, v[10], "filter", filter)) == RIVER_SUCCESS)
    o->filter = *filter;
  if (rc == RIVER_SUCCESS && v[11] && v[10] == NULL)
    return err(sp, v[11], "filter_at without a filter");
  if (rc == RIVER_SUCCESS && v[11]
      && (rc = choice(sp, v[11], "filter_at", ats, "source or sink", &i))
             == RIVER_SUCCESS)
    o->filter_at = (river_filter_at)i;
  if (rc == RIVER_SUCCESS && v[12])
    rc = pace(sp, v[12], o);
  return rc;
}

/* *n becomes NULL if its value, substituted, is empty: an edge option
 * left to a param that is "" is as if not given. */
static int drop_if_empty(struct spec *sp, yaml_node_t **n, const char *what)
{
  char *s = NULL;
  int rc = scalar(sp, *n, what, &s);

  if (rc == RIVER_SUCCESS && s[0] == '\0')
    *n = NULL;
  free(s);
  return rc;
}

static int read_edge(struct spec *sp, yaml_node_t *n)
{
  static const char *const keys[] = {"from", "to", "kind", "policy", "by",
                                     "key", "credits", "message_size",
                                     "from_output", "to_input", "filter",
                                     "filter_at", "pace", NULL};
  river_edge_opts o = RIVER_EDGE_OPTS_INIT;
  yaml_node_t *v[13];
  char *from = NULL, *to = NULL, *key = NULL, *filter = NULL;
  int rc, i;

  if ((rc = mapping(sp, n, "an edge", keys, v)) != RIVER_SUCCESS)
    return rc;
  for (i = 2; i < 13; i++)   /* an empty option is one not given */
    if (v[i] && (rc = drop_if_empty(sp, &v[i], keys[i])) != RIVER_SUCCESS)
      return rc;
  if (v[0] == NULL || v[1] == NULL)
    return err(sp, n, "an edge without '%s'", v[0] == NULL ? "from" : "to");
  if ((rc = scalar(sp, v[0], "from", &from)) == RIVER_SUCCESS
      && (rc = scalar(sp, v[1], "to", &to)) == RIVER_SUCCESS
      && (rc = edge_opts(sp, v, &o, &key, &filter)) == RIVER_SUCCESS
      && (rc = origin(sp, n)) == RIVER_SUCCESS)
    rc = river_flow_attach(sp->f, from, to, &o);
  free(from);
  free(to);
  free(key);
  free(filter);
  return rc;
}

/* --------------------------------------------------------------- load */

/* The spec's `plugins:` (a list of paths; a relative one is taken
 * from the spec's directory), each loaded on this rank
 * (river_plugin_load) before any stage names a module. */
static int plugins(struct spec *sp, yaml_node_t *list)
{
  yaml_node_t **items = NULL;
  const char *slash = strrchr(sp->path, '/');
  char *p = NULL, file[4200];
  int i, n = 0, rc;

  if (list == NULL)
    return RIVER_SUCCESS;
  rc = sequence(sp, list, "plugins", &items, &n);
  for (i = 0; rc == RIVER_SUCCESS && i < n; i++) {
    if ((rc = scalar(sp, items[i], "a plugin", &p)) != RIVER_SUCCESS)
      break;
    if (p[0] == '/' || slash == NULL)
      snprintf(file, sizeof file, "%s", p);
    else
      snprintf(file, sizeof file, "%.*s/%s", (int)(slash - sp->path),
               sp->path, p);
    if (river_plugin_load(file) != RIVER_SUCCESS)
      rc = err(sp, items[i], "plugin %s could not be loaded (see above)",
               file);
    free(p);
    p = NULL;
  }
  free(items);
  return rc;
}

/* The spec's top level: description, params, plugins, stages, edges. */
static int walk(struct spec *sp, const char *const *kv, int nkv)
{
  static const char *const keys[] = {"description", "params", "stages",
                                     "edges", "plugins", NULL};
  yaml_node_t *root = visit(sp, 1), *v[5], **items = NULL;
  int i, n, rc;

  if (root == NULL)
    return RIVER_EFORMAT;
  if ((rc = mapping(sp, root, "the flow spec", keys, v)) != RIVER_SUCCESS)
    return rc;
  if (v[0] != NULL && v[0]->type != YAML_SCALAR_NODE)
    return err(sp, v[0], "description must be a scalar, not %s",
               kind_name(v[0]));
  if ((rc = params(sp, v[1], kv, nkv)) != RIVER_SUCCESS)
    return rc;
  if ((rc = plugins(sp, v[4])) != RIVER_SUCCESS)
    return rc;
  if (v[2] == NULL)
    return err(sp, root, "no 'stages': a flow needs at least one stage");
  if ((rc = sequence(sp, v[2], "stages", &items, &n)) == RIVER_SUCCESS
      && n == 0)
    rc = err(sp, v[2], "stages: a flow needs at least one stage");
  if (rc == RIVER_SUCCESS
      && (sp->stages = calloc((size_t)n, sizeof *sp->stages)) == NULL)
    rc = RIVER_ENOMEM;
  for (i = 0; rc == RIVER_SUCCESS && i < n; i++, sp->nstages++)
    rc = read_stage(sp, items[i], &sp->stages[i]);
  if (rc == RIVER_SUCCESS)
    rc = resolve_ranks(sp);
  for (i = 0; rc == RIVER_SUCCESS && i < sp->nstages; i++)
    rc = place_stage(sp, &sp->stages[i]);
  free(items);
  items = NULL;
  if (rc == RIVER_SUCCESS)
    rc = sequence(sp, v[3], "edges", &items, &n);
  for (i = 0; rc == RIVER_SUCCESS && i < n; i++)
    rc = read_edge(sp, items[i]);
  free(items);
  return rc;
}

/* The whole file at path (a regular file of at most RIVER__SPEC_MAX). */
static int read_spec(const char *path, unsigned char **buf, size_t *len)
{
  struct stat st;
  ssize_t got;
  size_t n = 0;
  int fd, rc = river__open_regular(path, "flow spec", RIVER_LOG_ERROR, &fd);

  if (rc != RIVER_SUCCESS)
    return rc;
  if (fstat(fd, &st) != 0 || st.st_size > RIVER__SPEC_MAX) {
    river__error("%s: the file is too large (%lld bytes; a flow spec has at "
                 "most %d)", path, (long long)st.st_size, RIVER__SPEC_MAX);
    close(fd);
    return RIVER_EFORMAT;
  }
  if ((*buf = malloc((size_t)st.st_size + 1)) == NULL) {
    close(fd);
    return RIVER_ENOMEM;
  }
  while (n < (size_t)st.st_size
         && (got = read(fd, *buf + n, (size_t)st.st_size - n)) > 0)
    n += (size_t)got;
  close(fd);
  *len = n;
  return RIVER_SUCCESS;
}

/* libyaml's complaint about the text, as PATH:LINE:COLUMN: ... */
static int yaml_err(const struct spec *sp, const yaml_parser_t *p)
{
  const yaml_mark_t *m = p->context ? &p->context_mark : &p->problem_mark;

  if (p->error == YAML_READER_ERROR)
    river__error("%s: YAML: %s (at byte %zu)", sp->path,
                 p->problem ? p->problem : "cannot read", p->problem_offset);
  else if (p->context)
    river__error("%s:%zu:%zu: YAML syntax error: %s %s (line %zu, column "
                 "%zu)", sp->path, p->problem_mark.line + 1,
                 p->problem_mark.column + 1, p->problem ? p->problem : "",
                 p->context, m->line + 1, m->column + 1);
  else
    river__error("%s:%zu:%zu: YAML syntax error: %s", sp->path,
                 m->line + 1, m->column + 1,
                 p->problem ? p->problem : "unknown");
  return RIVER_EFORMAT;
}

/* Refuse [ and { nested deeper than DEPTH_MAX before libyaml sees them:
 * its scanner revisits every open flow level at each token, so deep
 * nesting costs it quadratic time (a 1 MiB spec of '[' takes minutes).
 * A rough scan (quotes and comments skipped) is enough for a guard. */
static int depth_ok(const struct spec *sp, const unsigned char *b, size_t n)
{
  size_t i, line = 1, col = 1;
  int depth = 0;
  unsigned char q = 0;

  for (i = 0; i < n; i++, col++) {
    if (b[i] == '\n') {
      line++;
      col = 0;
      if (q == 0)
        continue;
    }
    if (q != 0) {
      q = b[i] == q ? 0 : q;
    } else if (b[i] == '\'' || b[i] == '"') {
      q = b[i];
    } else if (b[i] == '#' && (i == 0 || isspace(b[i - 1]))) {
      while (i + 1 < n && b[i + 1] != '\n')
        i++;
    } else if ((b[i] == '[' || b[i] == '{') && ++depth > DEPTH_MAX) {
      river__error("%s:%zu:%zu: lists and mappings nested more than %d "
                   "deep", sp->path, line, col, DEPTH_MAX);
      return 0;
    } else if ((b[i] == ']' || b[i] == '}') && depth > 0) {
      depth--;
    }
  }
  return 1;
}

/* Parse buf into sp->doc: exactly one document, not empty. */
static int parse(struct spec *sp, const unsigned char *buf, size_t len)
{
  yaml_parser_t p;
  yaml_document_t more;
  yaml_node_t *n;
  int rc = RIVER_SUCCESS;

  if (!depth_ok(sp, buf, len))
    return RIVER_EFORMAT;
  if (!yaml_parser_initialize(&p))
    return RIVER_ENOMEM;
  yaml_parser_set_input_string(&p, buf, len);
  if (!yaml_parser_load(&p, &sp->doc)) {
    rc = yaml_err(sp, &p);
    memset(&sp->doc, 0, sizeof sp->doc);
  } else if (yaml_document_get_root_node(&sp->doc) == NULL) {
    rc = err(sp, NULL, "the file is empty (a flow spec is a mapping with "
             "'stages')");
  } else if (!yaml_parser_load(&p, &more)) {
    rc = yaml_err(sp, &p);
  } else {
    if ((n = yaml_document_get_root_node(&more)) != NULL)
      rc = err(sp, n, "a second YAML document (a flow spec is one)");
    yaml_document_delete(&more);
  }
  yaml_parser_delete(&p);
  if (rc == RIVER_SUCCESS) {
    sp->nnodes = (int)(sp->doc.nodes.top - sp->doc.nodes.start);
    if ((sp->seen = calloc((size_t)sp->nnodes, 1)) == NULL)
      rc = RIVER_ENOMEM;
  }
  return rc;
}

static void spec_free(struct spec *sp)
{
  int i;

  for (i = 0; i < sp->nparams; i++) {
    free(sp->params[i].name);
    free(sp->params[i].value);
  }
  for (i = 0; i < sp->nstages; i++) {
    free(sp->stages[i].name);
    free(sp->stages[i].module);
    free(sp->stages[i].r);
  }
  free(sp->params);
  free(sp->stages);
  free(sp->seen);
  yaml_document_delete(&sp->doc);
}

/* Keep the spec's path and the params given with it in f (for the
 * stats file). */
static int keep_source(river_flow *f, const char *path,
                       const char *const *kv, int nkv)
{
  int i;

  if ((f->spec_path = strdup(path)) == NULL
      || (nkv > 0
          && (f->spec_params = calloc((size_t)nkv, sizeof *f->spec_params))
                 == NULL))
    return RIVER_ENOMEM;
  for (i = 0; i < nkv; i++) {
    if ((f->spec_params[i] = strdup(kv[i])) == NULL)
      return RIVER_ENOMEM;
    f->nspec_params = i + 1;
  }
  return RIVER_SUCCESS;
}

/* Load path into the new flow f for nranks ranks; f is destroyed on
 * failure. */
static int load(river_flow *f, int nranks, const char *path,
                const char *const *kv, int nkv, river_flow **out)
{
  struct spec sp;
  unsigned char *buf = NULL;
  size_t len = 0;
  int rc;

  memset(&sp, 0, sizeof sp);
  sp.path = path;
  sp.nranks = nranks;
  sp.f = f;
  rc = read_spec(path, &buf, &len);
  if (rc == RIVER_SUCCESS && (rc = parse(&sp, buf, len)) == RIVER_SUCCESS)
    rc = walk(&sp, kv, nkv);
  spec_free(&sp);
  free(buf);
  if (rc == RIVER_SUCCESS)
    rc = river_flow_origin(f, NULL);
  if (rc == RIVER_SUCCESS)
    rc = keep_source(f, path, kv, nkv);
  if (rc != RIVER_SUCCESS) {
    river_flow_destroy(f);
    return rc;
  }
  *out = f;
  return RIVER_SUCCESS;
}

static int args_ok(const char *path, const char *const *kv, int nkv,
                   river_flow **out)
{
  if (path == NULL || out == NULL || nkv < 0 || (nkv > 0 && kv == NULL)) {
    river__error("river_flow_load: %s", path == NULL ? "path is NULL"
                 : out == NULL ? "out is NULL" : "bad params");
    return 0;
  }
  return 1;
}

int river_flow_load(MPI_Comm comm, const char *path,
                    const char *const *params, int nparams, river_flow **out)
{
  river_flow *f;
  int rc, size;

  if (!args_ok(path, params, nparams, out))
    return RIVER_EINVAL;
  if ((rc = river_flow_create(comm, &f)) != RIVER_SUCCESS)
    return rc;
  MPI_Comm_size(comm, &size);
  return load(f, size, path, params, nparams, out);
}

int river_flow_load_plan(const char *path, int nranks,
                         const char *const *params, int nparams,
                         river_flow **out)
{
  river_flow *f;
  int rc;

  if (!args_ok(path, params, nparams, out))
    return RIVER_EINVAL;
  if ((rc = river__flow_create_plan(nranks, &f)) != RIVER_SUCCESS)
    return rc;
  return load(f, nranks, path, params, nparams, out);
}
