/*
 * merge.c - module `merge`: a k-way merge of sorted runs into one sorted
 * run on output 0 (ended with river_end_unit, so that merges compose over
 * pull edges).
 *
 * A run is either a whole input whose records come in key order (a
 * one-to-one or single-producer edge from a sort: the merge streams it,
 * holding one message of it at a time), or one unit of a pull input (a
 * sorted run from one of many producers: river_get_unit tells where
 * units begin and end). A pull edge delivers one unit at a time, whole,
 * so the merge must hold every unit of a pull input but the one it is
 * reading: it reads those inputs first, each unit into a buffer of its
 * own, within `memory` (0: no cap). Then a binary heap of the runs'
 * current records, ordered by normalized key (radix.c) and, for equal
 * keys, by run (input order, then unit arrival), yields the output:
 * stable for runs given in input order. A run found out of order fails
 * the instance, naming the input and the record.
 */
#include "modules.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct run {
  const unsigned char *recs;   /* the current message or unit */
  size_t n, pos;
  int input;                   /* streamed from this input; -1: a unit */
  unsigned char *own;          /* a unit's buffer */
  unsigned char *key;          /* normalized key of recs[pos] */
  uint64_t seen;               /* records taken from this run */
};

struct merge {
  river_ctx *ctx;
  struct river__key k;
  struct run *runs;
  int nruns, cap;
  int *heap, nheap;
  uint64_t held, memory;       /* bytes of units held, cap */
};

static struct run *new_run(struct merge *m)
{
  struct run *r;

  if (m->nruns == m->cap) {
    int cap = m->cap ? 2 * m->cap : 16;
    r = realloc(m->runs, (size_t)cap * sizeof *r);
    if (r == NULL)
      return NULL;
    m->runs = r;
    m->cap = cap;
  }
  r = &m->runs[m->nruns];
  memset(r, 0, sizeof *r);
  r->key = malloc(m->k.size + 1);
  if (r->key == NULL)
    return NULL;
  m->nruns++;
  return r;
}

/* Append n records to the unit being read (the last run). */
static int unit_add(struct merge *m, int input, const void *recs, size_t n)
{
  struct run *r = &m->runs[m->nruns - 1];
  size_t rs = m->k.record_size;
  unsigned char *p;

  m->held += n * rs;
  if (m->memory > 0 && m->held > m->memory) {
    river__error("stage %s: merge: the units of input %d do not fit in "
                 "memory=%" PRIu64 " bytes", river_ctx_stage(m->ctx), input,
                 m->memory);
    return RIVER_ENOMEM;
  }
  p = realloc(r->own, (r->n + n) * rs);
  if (p == NULL)
    return RIVER_ENOMEM;
  memcpy(p + r->n * rs, recs, n * rs);
  r->own = p;
  r->recs = p;
  r->n += n;
  return RIVER_SUCCESS;
}

/* Read all of pull input i (its first message at recs) unit by unit. */
static int read_units(struct merge *m, int i, const void *recs, size_t n)
{
  int rc, first, last, open = 0;

  do {
    rc = river_get_unit(m->ctx, i, NULL, &first, &last);
    if (rc != RIVER_SUCCESS)
      return rc;
    if ((first || !open) && new_run(m) == NULL)
      return RIVER_ENOMEM;
    m->runs[m->nruns - 1].input = -1;
    if ((rc = unit_add(m, i, recs, n)) != RIVER_SUCCESS)
      return rc;
    open = !last;
  } while ((rc = river_get(m->ctx, i, &recs, &n)) == RIVER_SUCCESS);
  return rc == RIVER_EOS ? RIVER_SUCCESS : rc;
}

/* Open every input: a stream run, or all its units. */
static int open_inputs(struct merge *m)
{
  const void *recs;
  struct run *r;
  size_t n;
  int i, nin, rc;

  river_ctx_ports(m->ctx, &nin, NULL);
  for (i = 0; i < nin; i++) {
    rc = river_get(m->ctx, i, &recs, &n);
    if (rc == RIVER_EOS)
      continue;
    if (rc != RIVER_SUCCESS)
      return rc;
    rc = river_get_unit(m->ctx, i, NULL, NULL, NULL);
    if (rc == RIVER_SUCCESS) {
      if ((rc = read_units(m, i, recs, n)) != RIVER_SUCCESS)
        return rc;
      continue;
    }
    if (rc != RIVER_ENOTSUP || (r = new_run(m)) == NULL)
      return rc != RIVER_ENOTSUP ? rc : RIVER_ENOMEM;
    r->input = i;
    r->recs = recs;
    r->n = n;
  }
  return RIVER_SUCCESS;
}

/* Run a before run b? */
static int before(const struct merge *m, int a, int b)
{
  int c = memcmp(m->runs[a].key, m->runs[b].key, m->k.size);

  return c < 0 || (c == 0 && a < b);
}

static void sift_down(struct merge *m, int i)
{
  int c, t;

  for (;;) {
    c = 2 * i + 1;
    if (c >= m->nheap)
      return;
    if (c + 1 < m->nheap && before(m, m->heap[c + 1], m->heap[c]))
      c++;
    if (!before(m, m->heap[c], m->heap[i]))
      return;
    t = m->heap[c]; m->heap[c] = m->heap[i]; m->heap[i] = t;
    i = c;
  }
}

/* Move run r to its next record (getting the next message of a stream):
 * 1 if it has one, 0 if it ended, or an error. Checks its order. */
static int advance(struct merge *m, struct run *r)
{
  unsigned char prev[64], *pk = r->key;
  int rc, c;

  if (++r->pos == r->n) {
    if (r->input < 0)
      return 0;
    rc = river_get(m->ctx, r->input, (const void **)&r->recs, &r->n);
    if (rc == RIVER_EOS)
      return 0;
    if (rc != RIVER_SUCCESS)
      return rc;
    r->pos = 0;
  }
  if (m->k.size <= sizeof prev) {
    memcpy(prev, r->key, m->k.size);
    pk = prev;
  }
  river__key_norm(m->k.type, m->k.size,
                  r->recs + r->pos * m->k.record_size + m->k.off, r->key);
  c = pk == r->key ? 0 : memcmp(pk, r->key, m->k.size);
  r->seen++;
  if (c > 0) {
    if (r->input >= 0)
      river__error("stage %s: merge: input %d is not in key order: its "
                   "record %" PRIu64 " is below the one before it",
                   river_ctx_stage(m->ctx), r->input, r->seen);
    else
      river__error("stage %s: merge: a unit is not in key order: its "
                   "record %" PRIu64 " is below the one before it",
                   river_ctx_stage(m->ctx), r->seen);
    return RIVER_ECORRUPT;
  }
  return 1;
}

/* The merge proper: heap of runs -> output 0. */
static int merge_runs(struct merge *m)
{
  size_t rs = m->k.record_size, j = 0, max = 0;
  unsigned char *buf = NULL;
  int i, rc;

  m->heap = malloc(((size_t)m->nruns + 1) * sizeof *m->heap);
  if (m->heap == NULL)
    return RIVER_ENOMEM;
  for (i = 0; i < m->nruns; i++) {
    struct run *r = &m->runs[i];
    river__key_norm(m->k.type, m->k.size, r->recs + m->k.off, r->key);
    m->heap[m->nheap++] = i;
  }
  for (i = m->nheap / 2 - 1; i >= 0; i--)
    sift_down(m, i);
  while (m->nheap > 0) {
    struct run *r = &m->runs[m->heap[0]];
    if (j == max) {
      if (max > 0 && (rc = river_commit(m->ctx, 0, j)) != RIVER_SUCCESS)
        return rc;
      rc = river_reserve(m->ctx, 0, (void **)&buf, &max);
      if (rc != RIVER_SUCCESS)
        return rc;
      j = 0;
    }
    memcpy(buf + j++ * rs, r->recs + r->pos * rs, rs);
    rc = advance(m, r);
    if (rc < 0)
      return rc;
    if (rc == 0)
      m->heap[0] = m->heap[--m->nheap];
    sift_down(m, 0);
  }
  if (j > 0 && (rc = river_commit(m->ctx, 0, j)) != RIVER_SUCCESS)
    return rc;
  return river_end_unit(m->ctx, 0);
}

static int merge_main(river_ctx *ctx)
{
  struct merge m;
  const river_schema *s;
  int i, rc;

  memset(&m, 0, sizeof m);
  m.ctx = ctx;
  river_arg_uint(ctx, "memory", &m.memory);
  river_input_schema(ctx, 0, &s);
  rc = river__key_of(s, -1, &m.k);
  if (rc == RIVER_SUCCESS)
    rc = open_inputs(&m);
  if (rc == RIVER_SUCCESS)
    rc = merge_runs(&m);
  for (i = 0; i < m.nruns; i++) {
    free(m.runs[i].own);
    free(m.runs[i].key);
  }
  free(m.runs);
  free(m.heap);
  return rc;
}

/* Output 0 carries the inputs' schema, which they must share. */
static int merge_schema(river_ctx *ctx, int output, river_schema **out)
{
  const river_schema *s0, *si;
  int i, nin, eq = 0;

  (void)output;
  river_ctx_ports(ctx, &nin, NULL);
  river_input_schema(ctx, 0, &s0);
  for (i = 1; i < nin; i++) {
    river_input_schema(ctx, i, &si);
    river_schema_equal(s0, si, &eq);
    if (!eq) {
      river__flow_log(river__flow_check_level(ctx->flow), ctx->stage->origin,
                      "stage '%s': merge: input %d's schema differs from "
                      "input 0's", river_ctx_stage(ctx), i);
      return RIVER_EINVAL;
    }
  }
  return river_schema_clone(s0, out);
}

void river__module_merge(void)
{
  river_module_decl d = RIVER_MODULE_DECL_INIT;

  d.min_inputs = 1;
  d.max_inputs = -1;
  d.min_outputs = d.max_outputs = 1;
  d.shares_rank = 1;
  d.args = "memory:size=0";
  d.schema = merge_schema;
  d.doc = "k-way merge of sorted inputs, or of the sorted units of pull "
          "inputs, into one sorted run on output 0";
  river_module_register("merge", merge_main, &d, NULL);
}
