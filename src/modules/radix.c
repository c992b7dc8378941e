/*
 * radix.c - a stable LSD radix sort on the key order as bytes
 * (river__key_norm, src/keys.c), for the sort module (modules.h).
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
