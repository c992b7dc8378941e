/*
 * merge.c - module `merge`: a k-way merge of sorted runs into one sorted
 * run on output 0 (ended with river_end_unit, so that merges compose over
 * pull edges); and module `coll_merge`, the second pass of a two-pass
 * sort, which merges the sorted runs stored as the partitions of a
 * collection, reading each a block at a time (below).
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
  const unsigned char *recs;   /* the current message, unit or block */
  size_t n, pos;
  int input;                   /* streamed from this input; -1: a unit
                                  or a partition */
  unsigned char *own;          /* a unit's buffer, or a block's */
  unsigned char *key;          /* normalized key of recs[pos] */
  uint64_t seen;               /* records taken from this run */
  river_pcoll *pc;             /* coll_merge: partition `part` of it, */
  int part;                    /* read block by block */
  uint64_t block, nblocks;
  size_t bufsize;
};

struct merge {
  river_ctx *ctx;
  river_key k;
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

/* Free what m holds (not m). */
static void free_merge(struct merge *m)
{
  int i;

  for (i = 0; i < m->nruns; i++) {
    free(m->runs[i].own);
    free(m->runs[i].key);
  }
  free(m->runs);
  free(m->heap);
}

/* Append n records to the unit being read (the last run). */
static int unit_add(struct merge *m, int input, const void *recs, size_t n)
{
  struct run *r = &m->runs[m->nruns - 1];
  size_t rs = m->k.record_size;
  unsigned char *p;

  m->held += n * rs;
  if (m->memory > 0 && m->held > m->memory) {
    river_ctx_log(m->ctx, RIVER_LOG_ERROR, "merge: the units of input %d do "
                  "not fit in memory=%" PRIu64 " bytes", input, m->memory);
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

/* Refill run r, whose records ran out: the next message of a stream,
 * or a partition's next block. 1 if it has records again, 0 if it
 * ended, or an error. */
static int refill(struct merge *m, struct run *r)
{
  int rc;

  if (r->pc != NULL) {
    if (++r->block >= r->nblocks)
      return 0;
    rc = river_pcoll_read_block(r->pc, r->part, r->block, r->own,
                                r->bufsize, &r->n);
    r->recs = r->own;
  } else if (r->input >= 0) {
    rc = river_get(m->ctx, r->input, (const void **)&r->recs, &r->n);
  } else {
    return 0;   /* a unit: all of it is held */
  }
  if (rc == RIVER_EOS)
    return 0;
  r->pos = 0;
  return rc != RIVER_SUCCESS ? rc : r->n > 0;
}

/* Move run r to its next record: 1 if it has one, 0 if it ended, or an
 * error. Checks its order. */
static int advance(struct merge *m, struct run *r)
{
  unsigned char prev[64], *pk = r->key;
  int rc, c;

  if (++r->pos == r->n && (rc = refill(m, r)) <= 0)
    return rc;
  if (m->k.size <= sizeof prev) {
    memcpy(prev, r->key, m->k.size);
    pk = prev;
  }
  river_key_norm(&m->k, r->recs + r->pos * m->k.record_size + m->k.offset,
                 r->key);
  c = pk == r->key ? 0 : memcmp(pk, r->key, m->k.size);
  r->seen++;
  if (c > 0) {
    if (r->pc != NULL)
      river_ctx_log(m->ctx, RIVER_LOG_ERROR, "coll_merge: partition %d is "
                    "not in key order: its record %" PRIu64 " is below the "
                    "one before it", r->part, r->seen);
    else if (r->input >= 0)
      river_ctx_log(m->ctx, RIVER_LOG_ERROR, "merge: input %d is not in key "
                    "order: its record %" PRIu64 " is below the one before it",
                    r->input, r->seen);
    else
      river_ctx_log(m->ctx, RIVER_LOG_ERROR, "merge: a unit is not in key "
                    "order: its record %" PRIu64 " is below the one before it",
                    r->seen);
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
    river_key_norm(&m->k, r->recs + m->k.offset, r->key);
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
  int rc;

  memset(&m, 0, sizeof m);
  m.ctx = ctx;
  river_arg_uint(ctx, "memory", &m.memory);
  river_input_schema(ctx, 0, &s);
  rc = river_key_of(s, -1, &m.k);
  if (rc == RIVER_SUCCESS)
    rc = open_inputs(&m);
  if (rc == RIVER_SUCCESS)
    rc = merge_runs(&m);
  free_merge(&m);
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
      river_ctx_log(ctx, RIVER_LOG_ERROR, "merge: input %d's schema differs "
                    "from input 0's", i);
      return RIVER_EINVAL;
    }
  }
  return river_schema_clone(s0, out);
}

/* ------------------------------------------------------- coll_merge */

/* A sorted run of the collection: partition `part`, its records, and
 * its first and last keys (normalized). */
struct crun {
  int part;
  uint64_t n;
  unsigned char *lo, *hi;
};

/* Fill c's bounds from its first and last blocks (buf: a block). */
static int run_bounds(river_pcoll *pc, const river_key *k,
                      struct crun *c, unsigned char *buf, size_t bs)
{
  river_pcoll_part part;
  size_t rpb = 0, got = 0, rs = k->record_size;
  uint64_t nb = 0;
  int rc;

  c->n = 0;
  if ((rc = river_pcoll_partition(pc, c->part, &part)) != RIVER_SUCCESS
      || part.nrecords == 0)
    return rc;
  c->n = part.nrecords;
  river_pcoll_blocks(pc, c->part, &rpb, &nb);
  rc = river_pcoll_read_block(pc, c->part, 0, buf, bs, &got);
  if (rc == RIVER_SUCCESS)
    river_key_norm(k, buf + k->offset, c->lo);
  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_read_block(pc, c->part, nb - 1, buf, bs, &got);
  if (rc == RIVER_SUCCESS && got > 0)
    river_key_norm(k, buf + (got - 1) * rs + k->offset, c->hi);
  return rc;
}

static size_t cmp_key_size;
static int by_lo(const void *a, const void *b)
{
  const struct crun *x = a, *y = b;
  int c = memcmp(x->lo, y->lo, cmp_key_size);

  return c != 0 ? c : (x->part > y->part) - (x->part < y->part);
}

static int by_part(const void *a, const void *b)
{
  const struct crun *x = a, *y = b;

  return (x->part > y->part) - (x->part < y->part);
}

/* Merge runs[0..n) (one group: their key ranges overlap) into one unit
 * on output 0, tagged `tag` (RIVER_DQ_NO_TAG: none) first. */
static int merge_group(river_ctx *ctx, river_pcoll *pc,
                       const river_key *k, struct crun *runs, int n,
                       uint64_t memory, uint64_t tag)
{
  struct merge m;
  size_t rpb = 0, bs;
  uint64_t nb = 0;
  int i, rc = RIVER_SUCCESS;

  memset(&m, 0, sizeof m);
  m.ctx = ctx;
  m.k = *k;
  qsort(runs, (size_t)n, sizeof *runs, by_part);   /* ties: run order */
  for (i = 0; rc == RIVER_SUCCESS && i < n; i++) {
    struct run *r;
    river_pcoll_blocks(pc, runs[i].part, &rpb, &nb);
    bs = rpb * k->record_size;
    m.held += bs;
    if (memory > 0 && m.held > memory) {
      river_ctx_log(ctx, RIVER_LOG_ERROR, "coll_merge: memory=%" PRIu64 " "
                    "bytes is too small to make progress: merging %d runs "
                    "takes a block of %zu bytes each", memory, n, bs);
      rc = RIVER_ENOMEM;
      break;
    }
    if ((r = new_run(&m)) == NULL || (r->own = malloc(bs)) == NULL) {
      rc = RIVER_ENOMEM;
      break;
    }
    r->input = -1;
    r->pc = pc;
    r->part = runs[i].part;
    r->nblocks = nb;
    r->bufsize = bs;
    rc = river_pcoll_read_block(pc, r->part, 0, r->own, bs, &r->n);
    r->recs = r->own;
  }
  if (rc == RIVER_SUCCESS && tag != RIVER_DQ_NO_TAG)
    rc = river_set_tag(ctx, 0, tag);
  if (rc == RIVER_SUCCESS)
    rc = merge_runs(&m);
  free_merge(&m);
  return rc;
}

/* Every run's bounds, sorted by first key: *out (n entries), their keys
 * in *keys (free both). */
static int load_runs(river_pcoll *pc, const river_key *k,
                     struct crun **out, unsigned char **keyblock, int *n)
{
  river_pcoll_info info;
  unsigned char *buf, *keys;
  struct crun *runs;
  int p, m = 0, rc = RIVER_SUCCESS;

  river_pcoll_info_get(pc, &info);
  runs = calloc((size_t)info.npartitions + 1, sizeof *runs);
  keys = malloc(((size_t)info.npartitions + 1) * 2 * k->size);
  buf = malloc(info.block_size);
  if (runs == NULL || keys == NULL || buf == NULL)
    rc = RIVER_ENOMEM;
  for (p = 0; rc == RIVER_SUCCESS && p < info.npartitions; p++) {
    runs[m].part = p;
    runs[m].lo = keys + (size_t)m * 2 * k->size;
    runs[m].hi = runs[m].lo + k->size;
    rc = run_bounds(pc, k, &runs[m], buf, info.block_size);
    m += runs[m].n > 0;
  }
  free(buf);
  if (rc != RIVER_SUCCESS) {
    free(runs);
    free(keys);
    return rc;
  }
  cmp_key_size = k->size;
  qsort(runs, (size_t)m, sizeof *runs, by_lo);
  *out = runs;
  *keyblock = keys;
  *n = m;
  return RIVER_SUCCESS;
}

/* Group the runs (sorted by first key) into the longest stretches whose
 * key ranges overlap: every key of a group is at most every key of the
 * next, so the groups merged one after the other are the sorted whole.
 * Instance i of n merges the groups whose first record's position p in
 * the output has floor(p n / N) = i (N records in all): contiguous,
 * balanced by records. Each group is a unit on output 0, tagged with its
 * position (on an edge without units, the first only). */
static int coll_merge_main(river_ctx *ctx)
{
  river_edge_opts e;
  int units = river_output_edge(ctx, 0, &e) == RIVER_SUCCESS
              && e.kind == RIVER_EDGE_DQ && e.policy == RIVER_DQ_PULL;
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  river_pcoll *pc = NULL;
  const river_schema *s;
  river_key k;
  struct crun *runs = NULL;
  unsigned char *keys = NULL;
  const char *name = "", *root = "";
  uint64_t memory = 0, total = 0, at = 0, start;
  int inst, ninst, n = 0, i, j, first = 1, rc;
  MPI_Comm comm;

  river_arg_str(ctx, "coll", &name);
  river_arg_str(ctx, "root", &root);
  river_arg_uint(ctx, "memory", &memory);
  river_ctx_instance(ctx, &inst, &ninst);
  river_ctx_comm(ctx, &comm);
  o.root = root[0] ? root : NULL;
  /* The runs are this job's own scratch collection, which no other job
   * writes (a writer of the name fails on its lock) and gc removes only
   * once this job is gone: nothing to hold against. Every merger reads
   * the first and last block of every run (load_runs), so it opens
   * every run's file anyway, as it reads it. */
  o.hold = RIVER_PCOLL_HOLD_NONE;
  rc = river_pcoll_open(comm, name, &o, &pc);   /* collective */
  if (rc != RIVER_SUCCESS)
    return rc;
  /* A merger reads runs any node may hold (river_pcoll_read_block): on
   * node-local disks only the run's node can. The same on every
   * instance (one pattern). */
  if (river_pcoll_node_local(pc, &j) == RIVER_SUCCESS && j) {
    if (inst == 0)
      river_ctx_log(ctx, RIVER_LOG_ERROR, "coll_merge: collection %s is on "
                    "node-local disks (its disk pattern has %%n), and a "
                    "merger reads runs that other nodes hold: write the runs "
                    "on shared disks (RIVER_DISKS without %%n)", name);
    river_pcoll_close(pc);
    return RIVER_ENOTSUP;
  }
  river_pcoll_schema(pc, &s);
  rc = river_key_of(s, -1, &k);
  if (rc == RIVER_SUCCESS)
    rc = load_runs(pc, &k, &runs, &keys, &n);
  for (i = 0; rc == RIVER_SUCCESS && i < n; i++)
    total += runs[i].n;
  for (i = 0; rc == RIVER_SUCCESS && i < n; i = j) {
    uint64_t recs = runs[i].n;
    unsigned char *gmax = runs[i].hi;
    for (j = i + 1; j < n && memcmp(runs[j].lo, gmax, k.size) <= 0; j++) {
      if (memcmp(runs[j].hi, gmax, k.size) > 0)
        gmax = runs[j].hi;
      recs += runs[j].n;
    }
    start = at;   /* the group's first record in the output */
    at += recs;
    if ((uint64_t)((unsigned __int128)start * (unsigned)ninst / total)
        != (uint64_t)inst)
      continue;
    rc = merge_group(ctx, pc, &k, runs + i, j - i, memory,
                     units || first ? start : RIVER_DQ_NO_TAG);
    first = 0;
  }
  free(keys);
  free(runs);
  river_pcoll_close(pc);
  return rc;
}

/* At check time: the collection's schema (read on MPI_COMM_SELF). */
static int coll_merge_schema(river_ctx *ctx, int output, river_schema **out)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  river_pcoll *pc = NULL;
  const river_schema *s;
  const char *name = "", *root = "";
  int rc;

  (void)output;
  river_arg_str(ctx, "coll", &name);
  river_arg_str(ctx, "root", &root);
  o.root = root[0] ? root : NULL;
  o.hold = RIVER_PCOLL_HOLD_NONE;   /* its schema only */
  rc = river_pcoll_open(MPI_COMM_SELF, name, &o, &pc);
  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_schema(pc, &s);
  if (rc == RIVER_SUCCESS)
    rc = river_schema_clone(s, out);
  river_pcoll_close(pc);
  return rc;
}

void river__module_coll_merge(void)
{
  river_module_decl d = RIVER_MODULE_DECL_INIT;

  d.min_outputs = d.max_outputs = 1;
  d.shares_rank = 1;
  d.args = "coll:str,root:str=,memory:size=0";
  d.schema = coll_merge_schema;
  d.doc = "merge a collection of sorted runs (a two-pass sort's first "
          "pass) into sorted units, a block of each run in memory";
  river_module_register("coll_merge", coll_merge_main, &d, NULL);
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
