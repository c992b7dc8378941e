/*
 * pcoll_layout.c - the arithmetic of a collection's layout, for writers
 * and readers outside the library's own loops (the river command, flow
 * modules): which records partition p holds when records are dealt out
 * evenly (river_pcoll_split), and the order that puts an interleaved
 * collection's blocks back into record order (river_pcoll_order).
 *
 * An interleaved collection keeps record j in partition j mod P, so
 * block b of every partition together (stripe b) holds a contiguous run
 * of the collection: record k of partition 0, of partition 1, ..., then
 * record k + 1. struct river_pcoll_order gathers one stripe's blocks and
 * hands out the run; a partitioned collection's blocks pass through.
 */
#include "pcoll_internal.h"

#include <stdlib.h>
#include <string.h>

int river_pcoll_split(river_layout layout, uint64_t nrecords, int npartitions,
                      int p, uint64_t *first, uint64_t *stride,
                      uint64_t *count)
{
  uint64_t np = (uint64_t)npartitions, r = (uint64_t)p, lo, hi;

  if (npartitions < 1 || p < 0 || p >= npartitions || first == NULL
      || stride == NULL || count == NULL)
    return RIVER_EINVAL;
  if (layout == RIVER_LAYOUT_INTERLEAVED) {
    *first = r;
    *stride = np;
    *count = nrecords > r ? (nrecords - r - 1) / np + 1 : 0;
    return RIVER_SUCCESS;
  }
  if (layout != RIVER_LAYOUT_PARTITIONED)
    return RIVER_EINVAL;
  /* An even split: partition p ends where p + 1 of np shares do. */
  lo = nrecords / np * r + nrecords % np * r / np;
  hi = nrecords / np * (r + 1) + nrecords % np * (r + 1) / np;
  *first = lo;
  *stride = 1;
  *count = hi - lo;
  return RIVER_SUCCESS;
}

struct river_pcoll_order {
  river_layout layout;
  int np;
  size_t rs, rpb;        /* record size, records per block */
  unsigned char *stripe; /* np blocks of rpb records: partition p's at
                            p * rpb records */
  size_t *n;             /* records partition p gave this stripe */
  unsigned char *have;   /* partition p gave its block of this stripe */
  unsigned char *out;    /* np * rpb records: the stripe in record order */
  int held;              /* partitions that gave a block of this stripe */
  uint64_t cur;          /* this stripe's block number (held > 0) */
  uint64_t min_block;    /* blocks below were handed out */
};

int river_pcoll_order_create(const river_pcoll *pc, river_pcoll_order **out)
{
  river_pcoll_order *o;
  size_t np, bytes;

  if (pc == NULL || out == NULL)
    return RIVER_EINVAL;
  o = calloc(1, sizeof *o);
  if (o == NULL)
    return RIVER_ENOMEM;
  o->layout = pc->info.layout;
  o->np = pc->info.npartitions;
  o->rs = pc->info.record_size;
  o->rpb = pc->info.block_size / pc->info.record_size;
  if (o->layout == RIVER_LAYOUT_INTERLEAVED) {
    np = (size_t)o->np;
    bytes = np * o->rpb * o->rs;
    o->stripe = malloc(bytes);
    o->out = malloc(bytes);
    o->n = calloc(np, sizeof *o->n);
    o->have = calloc(np, 1);
    if (o->stripe == NULL || o->out == NULL || o->n == NULL
        || o->have == NULL) {
      river_pcoll_order_destroy(o);
      return RIVER_ENOMEM;
    }
  }
  *out = o;
  return RIVER_SUCCESS;
}

/* Hand out the stripe held: its records in record order, into o->out. */
static void emit_stripe(river_pcoll_order *o, const void **ready,
                        size_t *nready)
{
  size_t k, m = 0;
  int p;

  for (k = 0; k < o->rpb; k++) {
    size_t before = m;
    for (p = 0; p < o->np; p++)
      if (o->have[p] && k < o->n[p])
        memcpy(o->out + (m++) * o->rs,
               o->stripe + ((size_t)p * o->rpb + k) * o->rs, o->rs);
    if (m == before)
      break;
  }
  memset(o->have, 0, (size_t)o->np);
  o->held = 0;
  o->min_block = o->cur + 1;
  *ready = m > 0 ? o->out : NULL;
  *nready = m;
}

int river_pcoll_order_add(river_pcoll_order *o, int p, uint64_t block,
                          const void *records, size_t nrecords,
                          const void **ready, size_t *nready)
{
  if (o == NULL || p < 0 || p >= o->np || nrecords > o->rpb
      || (records == NULL && nrecords > 0) || ready == NULL || nready == NULL)
    return RIVER_EINVAL;
  if (o->layout != RIVER_LAYOUT_INTERLEAVED) {
    *ready = nrecords > 0 ? records : NULL;
    *nready = nrecords;
    return RIVER_SUCCESS;
  }
  if (block < o->min_block || (o->held > 0 && block < o->cur)
      || (o->held > 0 && block == o->cur && o->have[p]))
    return RIVER_EINVAL;  /* a stripe handed out, or a block given twice */
  *ready = NULL;
  *nready = 0;
  if (o->held > 0 && block != o->cur)
    emit_stripe(o, ready, nready);  /* a new stripe: the last is whole */
  if (nrecords > 0)
    memcpy(o->stripe + (size_t)p * o->rpb * o->rs, records,
           nrecords * o->rs);
  o->n[p] = nrecords;
  o->have[p] = 1;
  o->cur = block;
  if (++o->held == o->np)
    emit_stripe(o, ready, nready);  /* every partition gave its block */
  return RIVER_SUCCESS;
}

int river_pcoll_order_flush(river_pcoll_order *o, const void **ready,
                            size_t *nready)
{
  if (o == NULL || ready == NULL || nready == NULL)
    return RIVER_EINVAL;
  *ready = NULL;
  *nready = 0;
  if (o->layout == RIVER_LAYOUT_INTERLEAVED && o->held > 0)
    emit_stripe(o, ready, nready);
  return RIVER_SUCCESS;
}

int river_pcoll_order_destroy(river_pcoll_order *o)
{
  if (o == NULL)
    return RIVER_SUCCESS;
  free(o->stripe);
  free(o->out);
  free(o->n);
  free(o->have);
  free(o);
  return RIVER_SUCCESS;
}
