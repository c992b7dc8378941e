/*
 * flow_partition.c - a part of the flow runtime: where an exchange edge
 * sends each record (river__part_fn, its queue's partition function):
 * by a hash of its key field, by range over the evenly split key space,
 * or by the splitters its producing module sets (river_set_partitioner,
 * src/flow_io.c). Every
 * order here is river_key_norm's (src/keys.c), the one key order of
 * River: a splitter is a key normalized, and a range is the first 8
 * bytes of the normalized key read as a big-endian number.
 */
#include "flow_run_internal.h"

#include <stdlib.h>
#include <string.h>

int river__part_init(struct river__part *p, const river_schema *s,
                     const char *field, river_exchange_by by)
{
  int idx;

  memset(p, 0, sizeof *p);
  if (field == NULL)
    river_schema_key(s, &idx, NULL, NULL);
  else if (river_schema_find(s, field, &idx) != RIVER_SUCCESS)
    return RIVER_EINVAL;   /* the flow's check has said so */
  if (river_key_of(s, idx, &p->k) != RIVER_SUCCESS)
    return RIVER_EINVAL;
  p->norm = malloc(p->k.size + 8);   /* 8: room to read a short key */
  if (p->norm == NULL)
    return RIVER_ENOMEM;
  p->mode = by == RIVER_BY_RANGE ? RIVER__PART_RANGE : RIVER__PART_HASH;
  if (p->mode == RIVER__PART_RANGE && river__part_is_float(p))
    return RIVER_ENOTSUP;
  return RIVER_SUCCESS;
}

int river__part_is_float(const struct river__part *p)
{
  return p->k.type == RIVER_TYPE_FLOAT32 || p->k.type == RIVER_TYPE_FLOAT64;
}

void river__part_free(struct river__part *p)
{
  free(p->split);
  free(p->norm);
  p->split = p->norm = NULL;
}

/* The record's normalized key in p->norm. */
static const unsigned char *norm_of(const struct river__part *p,
                                    const void *record)
{
  river_key_norm(&p->k, (const unsigned char *)record + p->k.offset,
                 p->norm);
  return p->norm;
}

static int part_range(const struct river__part *p, const void *record,
                      int n)
{
  const unsigned char *k = norm_of(p, record);
  uint64_t x = 0;
  size_t i;

  for (i = 0; i < 8; i++)
    x = (x << 8) | (i < p->k.size ? k[i] : 0);
  return (int)(((unsigned __int128)x * (unsigned)n) >> 64);
}

/* By splitters: the number of splitters <= the record's key. */
static int part_split(const struct river__part *p, const void *record)
{
  const unsigned char *k = norm_of(p, record);
  size_t lo = 0, hi = p->nsplit, mid;

  while (lo < hi) {
    mid = lo + (hi - lo) / 2;
    if (memcmp(p->split + mid * p->k.size, k, p->k.size) <= 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return (int)lo;
}

/* By hash of the field's bytes as stored. */
static int part_hash(const struct river__part *p, const void *record, int n)
{
  const unsigned char *k = (const unsigned char *)record + p->k.offset;
  uint64_t h = 0, w;
  size_t i, m;

  for (i = 0; i < p->k.size; i += 8) {
    m = p->k.size - i < 8 ? p->k.size - i : 8;
    w = 0;
    memcpy(&w, k + i, m);
    h = river_hash64(h ^ w ^ (uint64_t)i);
  }
  return (int)(h % (uint64_t)n);
}

int river__part_fn(const void *record, int n, void *ctx)
{
  const struct river__part *p = ctx;

  if (p->mode == RIVER__PART_SPLIT)
    return part_split(p, record);
  return p->mode == RIVER__PART_RANGE ? part_range(p, record, n)
                                      : part_hash(p, record, n);
}

int river__part_set_splitters(struct river__part *p, const void *keys,
                              size_t n, size_t *bad)
{
  const unsigned char *kb = keys;
  size_t i, ks = p->k.size;
  river_key bare = p->k;   /* splitters are bare keys */

  bare.offset = 0;
  bare.record_size = ks;
  free(p->split);
  if ((p->split = malloc(n * ks + 1)) == NULL)
    return RIVER_ENOMEM;
  for (i = 0; i < n; i++) {
    river_key_norm(&bare, kb + i * ks, p->split + i * ks);
    if (i > 0 && memcmp(p->split + (i - 1) * ks, p->split + i * ks, ks) > 0) {
      *bad = i;
      return RIVER_EINVAL;
    }
  }
  p->nsplit = n;
  p->mode = RIVER__PART_SPLIT;
  return RIVER_SUCCESS;
}
