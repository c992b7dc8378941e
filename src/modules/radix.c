/*
 * radix.c - the key order as bytes, and a stable LSD radix sort on it,
 * for the sort, merge and partition modules (modules.h).
 *
 * river__key_norm turns a key field's value into bytes whose unsigned
 * (memcmp) order is the schema's key order (river/schema.h): char and
 * bytes as they are; unsigned integers big-endian; signed integers
 * big-endian with the sign bit flipped; floats by the IEEE trick (every
 * bit of a negative flipped, the sign bit of a positive one), after
 * mapping -0 to +0 and every NaN to all ones, so that -0 and +0 are
 * equal and NaNs equal each other and follow everything, as
 * river_schema_compare has them.
 *
 * river__radix_order sorts records by those bytes: it builds one entry
 * per record (the normalized key, then the record's index), counts every
 * byte position's histogram in one pass, and then moves the entries
 * once per key byte, last byte first, skipping a byte that is the same
 * in every record (common in skewed or ASCII keys). Each pass is a
 * stable counting sort, so the whole is stable.
 */
#include "modules.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void put_be(uint64_t v, unsigned char *dst, size_t n)
{
  size_t i;

  for (i = 0; i < n; i++)
    dst[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
}

void river__key_norm(river_type type, size_t size, const void *src,
                     unsigned char *dst)
{
  switch (type) {
  case RIVER_TYPE_INT32: { uint32_t v; memcpy(&v, src, 4);
    put_be(v ^ 0x80000000u, dst, 4); return; }
  case RIVER_TYPE_UINT32: { uint32_t v; memcpy(&v, src, 4);
    put_be(v, dst, 4); return; }
  case RIVER_TYPE_INT64: { uint64_t v; memcpy(&v, src, 8);
    put_be(v ^ ((uint64_t)1 << 63), dst, 8); return; }
  case RIVER_TYPE_UINT64: { uint64_t v; memcpy(&v, src, 8);
    put_be(v, dst, 8); return; }
  case RIVER_TYPE_FLOAT32: {
    float f; uint32_t v;
    memcpy(&f, src, 4);
    if (isnan(f)) { put_be(0xffffffffu, dst, 4); return; }
    if (f == 0.0f) f = 0.0f;  /* -0 is +0 */
    memcpy(&v, &f, 4);
    put_be(v & 0x80000000u ? ~v : v ^ 0x80000000u, dst, 4);
    return; }
  case RIVER_TYPE_FLOAT64: {
    double f; uint64_t v, sign = (uint64_t)1 << 63;
    memcpy(&f, src, 8);
    if (isnan(f)) { put_be(~(uint64_t)0, dst, 8); return; }
    if (f == 0.0) f = 0.0;
    memcpy(&v, &f, 8);
    put_be(v & sign ? ~v : v ^ sign, dst, 8);
    return; }
  default:
    memcpy(dst, src, size);
  }
}

size_t river__key_norm_size(river_type type, size_t count)
{
  switch (type) {
  case RIVER_TYPE_INT32: case RIVER_TYPE_UINT32: case RIVER_TYPE_FLOAT32:
    return 4;
  case RIVER_TYPE_INT64: case RIVER_TYPE_UINT64: case RIVER_TYPE_FLOAT64:
    return 8;
  default:
    return count;
  }
}

int river__key_of(const river_schema *s, int field, struct river__key *k)
{
  size_t count = 1;

  if (field < 0 && river_schema_key(s, &field, NULL, NULL) != RIVER_SUCCESS)
    return RIVER_EINVAL;
  if (river_schema_field(s, field, NULL, &k->type, &count, &k->off)
          != RIVER_SUCCESS
      || river_schema_record_size(s, &k->record_size) != RIVER_SUCCESS)
    return RIVER_EINVAL;
  k->size = river__key_norm_size(k->type, count);
  return RIVER_SUCCESS;
}

/* Fill entries: key bytes then a 64-bit index; count histograms. */
static void fill(const struct river__key *k, const unsigned char *recs,
                 size_t n, unsigned char *e, size_t es, size_t *hist)
{
  size_t i, d;
  uint64_t idx;

  for (i = 0; i < n; i++, e += es) {
    river__key_norm(k->type, k->size, recs + i * k->record_size + k->off, e);
    idx = i;
    memcpy(e + k->size, &idx, sizeof idx);
    for (d = 0; d < k->size; d++)
      hist[d * 256 + e[d]]++;
  }
}

int river__radix_order(const struct river__key *k, const void *recs,
                       size_t n, size_t *order)
{
  size_t es = k->size + sizeof(uint64_t), i, d, b, sum, *h, pos[256];
  unsigned char *a, *t, *tmp;
  uint64_t idx;

  if (n == 0)
    return RIVER_SUCCESS;
  if (n > SIZE_MAX / 2 / es)
    return RIVER_ENOMEM;
  a = malloc(n * es);
  t = malloc(n * es);
  h = calloc(k->size * 256 + 1, sizeof *h);
  if (a == NULL || t == NULL || h == NULL) {
    free(a); free(t); free(h);
    return RIVER_ENOMEM;
  }
  fill(k, recs, n, a, es, h);
  for (d = k->size; d-- > 0;) {
    const size_t *hd = h + d * 256;
    if (hd[a[d]] == n)
      continue;  /* one value at this byte: nothing moves */
    for (b = 0, sum = 0; b < 256; b++) {
      pos[b] = sum;
      sum += hd[b];
    }
    for (i = 0; i < n; i++) {
      const unsigned char *src = a + i * es;
      memcpy(t + pos[src[d]]++ * es, src, es);
    }
    tmp = a; a = t; t = tmp;
  }
  for (i = 0; i < n; i++) {
    memcpy(&idx, a + i * es + k->size, sizeof idx);
    order[i] = (size_t)idx;
  }
  free(a); free(t); free(h);
  return RIVER_SUCCESS;
}
