/*
 * sort.c - module `sort`: reads all of input 0 into memory, sorts it by
 * the schema's key with the stable radix sort of radix.c, and writes the
 * records in key order to output 0 as `runs` units (default 1) of
 * nearly equal size (river_end_unit: on a pull edge each sorted run goes
 * whole to one consumer, so with runs > 1 the runs spread over more
 * consumers, which take them as they are ready). Each run is tagged
 * (river_set_tag) with the position of its first record in the whole
 * sorted output, instance i holding key range i: the instances share
 * their counts once sorted, so a writer can place a run it gets in one
 * ordered file (coll_write to file:PATH). Argument
 * `memory` caps what an instance holds (the records plus the sort's
 * working space, 2 (K + 8) + 8 bytes a record for a K-byte key): over
 * it the instance fails with a message naming the stage, or, with
 * `spill`, sorts what it holds and writes it as one run (a unit) before
 * it reads on: the first pass of a two-pass sort, whose runs overlap in
 * key range and are merged by coll_merge (merge.c); they carry no tags.
 */
#include "modules.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Records read so far: one growing buffer. */
struct sortbuf {
  unsigned char *recs;
  size_t n, cap;              /* records */
};

/* Room for `more` records in b, doubling. */
static int grow(struct sortbuf *b, size_t more, size_t rs)
{
  size_t cap = b->cap ? b->cap : 4096;
  unsigned char *p;

  while (cap - b->n < more)
    cap *= 2;
  if (cap == b->cap)
    return RIVER_SUCCESS;
  p = realloc(b->recs, cap * rs);
  if (p == NULL)
    return RIVER_ENOMEM;
  b->recs = p;
  b->cap = cap;
  return RIVER_SUCCESS;
}

/* Sort the records of b and write them to output 0 as `runs` units
 * (write_sorted; base: the position of b's first record in the output,
 * for the tags, or RIVER_DQ_NO_TAG for none). */
static int sort_out(river_ctx *ctx, const river_key *k,
                    const struct sortbuf *b, uint64_t runs, uint64_t base);

/* Read all of input 0 into b, within the memory cap (0: none). With
 * spill, each time the next message would not fit, what b holds is
 * sorted and written as one run first (the first pass of a two-pass
 * sort: runs whose key ranges overlap, merged later by coll_merge). */
static int read_all(river_ctx *ctx, const river_key *k,
                    uint64_t cap, int spill, struct sortbuf *b)
{
  size_t per = k->record_size + 2 * (k->size + 8) + sizeof(size_t), n;
  const void *recs;
  int rc;

  while ((rc = river_get(ctx, 0, &recs, &n)) == RIVER_SUCCESS) {
    if (spill && cap > 0 && (uint64_t)(b->n + n) * per > cap && b->n > 0) {
      if ((rc = sort_out(ctx, k, b, 1, RIVER_DQ_NO_TAG)) != RIVER_SUCCESS)
        return rc;
      b->n = 0;
    }
    if (cap > 0 && (uint64_t)(b->n + n) * per > cap) {
      if (spill)
        river_ctx_log(ctx, RIVER_LOG_ERROR, "sort: memory=%" PRIu64 " bytes "
                      "is too small to make progress: one message of %zu "
                      "records needs %zu bytes with the sort's working space",
                      cap, n, n * per);
      else
        river_ctx_log(ctx, RIVER_LOG_ERROR, "sort: its input does not fit in "
                      "memory=%" PRIu64 " bytes (%zu records of %zu bytes "
                      "read, about %zu bytes each with the sort's working "
                      "space); give it more memory or more instances, or "
                      "sort in two passes", cap, b->n + n, k->record_size,
                      per);
      return RIVER_ENOMEM;
    }
    if ((rc = grow(b, n, k->record_size)) != RIVER_SUCCESS)
      return rc;
    memcpy(b->recs + b->n * k->record_size, recs, n * k->record_size);
    b->n += n;
  }
  return rc == RIVER_EOS ? RIVER_SUCCESS : rc;
}

/* *base: the position in the sorted output of this instance's first
 * record, the records of the instances before it (they hold the lower
 * key ranges): an exclusive prefix sum of the counts over the stage,
 * gathered without blocking the rank's other stages. */
static int output_base(river_ctx *ctx, uint64_t n, uint64_t *base)
{
  uint64_t *all;
  int inst, ninst, i, rc;

  river_ctx_instance(ctx, &inst, &ninst);
  if ((all = malloc((size_t)ninst * sizeof *all)) == NULL)
    return RIVER_ENOMEM;
  rc = river_ctx_allgather(ctx, &n, 1, all);
  for (*base = 0, i = 0; rc == RIVER_SUCCESS && i < inst; i++)
    *base += all[i];
  free(all);
  return rc;
}

/* Write the records of b in the order `order` to output 0 as `runs`
 * units of (nearly) equal size, in key order (an empty one is none),
 * each tagged with the position of its first record in the sorted
 * output (on an edge without units, the whole stream with its first). */
static int write_sorted(river_ctx *ctx, const struct sortbuf *b,
                        const size_t *order, size_t rs, uint64_t runs,
                        uint64_t base)
{
  river_edge_opts e;
  int units = river_output_edge(ctx, 0, &e) == RIVER_SUCCESS
              && e.kind == RIVER_EDGE_DQ && e.policy == RIVER_DQ_PULL;
  size_t i = 0, j, max, end;
  uint64_t u;
  void *buf;
  int rc;

  for (u = 0; u < runs; u++) {
    end = (size_t)((unsigned __int128)b->n * (u + 1) / runs);
    if (base != RIVER_DQ_NO_TAG && (u == 0 || (units && i < end))
        && (rc = river_set_tag(ctx, 0, base + i)) != RIVER_SUCCESS)
      return rc;
    while (i < end) {
      rc = river_reserve(ctx, 0, &buf, &max);
      if (rc != RIVER_SUCCESS)
        return rc;
      for (j = 0; j < max && i < end; j++, i++) {
        if (i + 16 < b->n) {   /* random reads: ask for them early */
          __builtin_prefetch(b->recs + order[i + 16] * rs);
          if (rs > 64)
            __builtin_prefetch(b->recs + order[i + 16] * rs + 64);
        }
        memcpy((unsigned char *)buf + j * rs, b->recs + order[i] * rs, rs);
      }
      if ((rc = river_commit(ctx, 0, j)) != RIVER_SUCCESS)
        return rc;
    }
    if ((rc = river_end_unit(ctx, 0)) != RIVER_SUCCESS)
      return rc;
  }
  return RIVER_SUCCESS;
}

static int sort_out(river_ctx *ctx, const river_key *k,
                    const struct sortbuf *b, uint64_t runs, uint64_t base)
{
  size_t *order = NULL;
  int rc = RIVER_SUCCESS;

  if (b->n > 0) {
    order = malloc(b->n * sizeof *order);
    rc = order == NULL ? RIVER_ENOMEM
                       : river__radix_order(k, b->recs, b->n, order);
    if (rc == RIVER_ENOMEM)
      river_ctx_log(ctx, RIVER_LOG_ERROR, "sort: out of memory sorting %zu "
                    "records", b->n);
  }
  if (rc == RIVER_SUCCESS)
    rc = write_sorted(ctx, b, order, k->record_size, runs, base);
  free(order);
  return rc;
}

static int sort_run(river_ctx *ctx)
{
  struct sortbuf b = {NULL, 0, 0};
  const river_schema *s;
  river_key k;
  uint64_t cap, runs, base = 0;
  int spill = 0, rc;

  river_arg_uint(ctx, "memory", &cap);
  river_arg_uint(ctx, "runs", &runs);
  river_arg_bool(ctx, "spill", &spill);
  if (runs < 1 || runs > 1000000) {
    river_ctx_log(ctx, RIVER_LOG_ERROR, "sort: runs=%" PRIu64 ": expected "
                  "1..1000000", runs);
    return RIVER_EINVAL;
  }
  river_input_schema(ctx, 0, &s);
  rc = river_key_of(s, -1, &k);
  if (rc == RIVER_SUCCESS)
    rc = read_all(ctx, &k, cap, spill, &b);
  /* Spilled runs overlap: no place in the output to tag them with. */
  if (rc == RIVER_SUCCESS && !spill)
    rc = output_base(ctx, b.n, &base);
  if (rc == RIVER_SUCCESS)
    rc = sort_out(ctx, &k, &b, spill ? 1 : runs,
                  spill ? RIVER_DQ_NO_TAG : base);
  free(b.recs);
  return rc;
}

void river__module_sort(void)
{
  river_module_decl d = RIVER_MODULE_DECL_INIT;

  d.min_inputs = d.max_inputs = 1;
  d.min_outputs = d.max_outputs = 1;
  d.shares_rank = 1;
  d.args = "memory:size=0,runs:uint=1,spill:bool=false";
  d.doc = "sort input 0 in memory by the key (radix, stable); output 0 "
          "gets it as `runs` sorted units, in key order; memory caps it "
          "(0: no cap; spill: a sorted run each time it is full)";
  river_module_register("sort", sort_run, &d, NULL);
}
