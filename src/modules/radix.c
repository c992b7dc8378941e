/*
 * radix.c - a stable radix sort on the key order as bytes
 * (river_key_norm, src/keys.c), for the sort module (modules.h).
 *
 * river__radix_order sorts records by those bytes. Below 2^32 records
 * (prefix_order) each record gets a 16-byte entry: the first 8 bytes of
 * its normalized key as a big-endian integer, and its index. One
 * counting pass on the first byte spreads the entries into 256 buckets
 * (most of a sorter's records: buckets of a few tens of thousands, which
 * fit in the cache); each bucket is then sorted by the other 7 bytes with
 * an LSD counting sort, a pass per byte, skipping a byte that is the same
 * in every entry of the bucket; last, entries whose 8-byte prefixes are
 * equal are ordered by the rest of the key (keys longer than 8 bytes:
 * char[N] and bytes[N]) with an insertion sort on (rest, index). Every
 * step keeps equal keys in index order: the sort is stable. It moves 16
 * bytes an entry instead of the whole normalized key and index, and only
 * the first pass scatters over the whole input: about three times faster
 * on gensort keys than the plain LSD sort (key_order), which remains for
 * larger inputs: an entry per record (normalized key, then index), every
 * byte position's histogram counted in one pass, then the entries moved
 * once per key byte, last byte first, skipping constant bytes.
 */
#define _GNU_SOURCE   /* qsort_r */
#include "modules.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Fill entries: key bytes then a 64-bit index; count histograms. */
static void fill(const river_key *k, const unsigned char *recs,
                 size_t n, unsigned char *e, size_t es, size_t *hist)
{
  size_t i, d;
  uint64_t idx;

  for (i = 0; i < n; i++, e += es) {
    river_key_norm(k, recs + i * k->record_size + k->offset, e);
    idx = i;
    memcpy(e + k->size, &idx, sizeof idx);
    for (d = 0; d < k->size; d++)
      hist[d * 256 + e[d]]++;
  }
}

/* The first 8 normalized key bytes of rec as a big-endian integer
 * (zero-padded), into *pre; the whole normalized key into norm. */
static uint64_t prefix_of(const river_key *k, const unsigned char *rec,
                          unsigned char *norm)
{
  uint64_t v = 0;
  size_t i, m = k->size < 8 ? k->size : 8;

  river_key_norm(k, rec + k->offset, norm);
  for (i = 0; i < m; i++)
    v |= (uint64_t)norm[i] << (56 - 8 * i);
  return v;
}

struct pentry {
  uint64_t pre;
  uint64_t idx;
};

/* LSD counting sort of e[0..n) by prefix bytes 1..7 (byte 0 is equal in
 * the bucket), t scratch of n entries; the result in e. */
static void sort_bucket(struct pentry *e, struct pentry *t, size_t n)
{
  size_t h[256], i, sum, c;
  struct pentry *a = e, *b = t, *x;
  int d, shift;

  for (d = 7; d >= 1 && n > 1; d--) {
    shift = 56 - 8 * d;
    memset(h, 0, sizeof h);
    for (i = 0; i < n; i++)
      h[(a[i].pre >> shift) & 0xff]++;
    if (h[(a[0].pre >> shift) & 0xff] == n)
      continue;   /* one value at this byte: nothing moves */
    for (i = 0, sum = 0; i < 256; i++) {
      c = h[i];
      h[i] = sum;
      sum += c;
    }
    for (i = 0; i < n; i++)
      b[h[(a[i].pre >> shift) & 0xff]++] = a[i];
    x = a; a = b; b = x;
  }
  if (a != e)
    memcpy(e, a, n * sizeof *e);
}

/* Entries a, b with equal prefixes: a before b? By the key's bytes after
 * the 8th, then by index. */
static int rest_before(const river_key *k, const unsigned char *recs,
                       const struct pentry *a, const struct pentry *b,
                       unsigned char *na, unsigned char *nb)
{
  int c;

  river_key_norm(k, recs + a->idx * k->record_size + k->offset,
                 na);
  river_key_norm(k, recs + b->idx * k->record_size + k->offset,
                 nb);
  c = memcmp(na + 8, nb + 8, k->size - 8);
  return c < 0 || (c == 0 && a->idx < b->idx);
}

/* What the comparator of a long stretch needs. */
struct tiectx {
  const river_key *k;
  const unsigned char *recs;
  unsigned char *na, *nb;
};

static int tie_cmp(const void *x, const void *y, void *arg)
{
  const struct pentry *a = x, *b = y;
  struct tiectx *c = arg;

  if (rest_before(c->k, c->recs, a, b, c->na, c->nb))
    return -1;
  return a->idx == b->idx ? 0 : 1;
}

/* Order each stretch of equal prefixes by the rest of the key (keys
 * longer than 8 bytes): a short stretch (the usual case) by insertion,
 * a long one (keys sharing their first 8 bytes, "customer0001") by
 * qsort on (rest, index), a total order, so stable too. */
static int fix_ties(const river_key *k, const unsigned char *recs,
                    struct pentry *e, size_t n)
{
  unsigned char *na, *nb;
  size_t i, j, end;

  if (k->size <= 8)
    return RIVER_SUCCESS;
  na = malloc(2 * k->size);
  if (na == NULL)
    return RIVER_ENOMEM;
  nb = na + k->size;
  for (i = 0; i < n; i = end) {
    for (end = i + 1; end < n && e[end].pre == e[i].pre; end++)
      ;
    if (end - i > 16) {
      struct tiectx c = {k, recs, na, nb};
      qsort_r(e + i, end - i, sizeof *e, tie_cmp, &c);
      continue;
    }
    for (j = i + 1; j < end; j++) {   /* insertion sort: stable */
      struct pentry v = e[j];
      size_t m = j;
      while (m > i && rest_before(k, recs, &v, &e[m - 1], na, nb)) {
        e[m] = e[m - 1];
        m--;
      }
      e[m] = v;
    }
  }
  free(na);
  return RIVER_SUCCESS;
}

/* The prefix sort (above) of n < 2^32 records. */
static int prefix_order(const river_key *k, const unsigned char *recs,
                        size_t n, size_t *order)
{
  struct pentry *e = malloc(n * sizeof *e), *t = malloc(n * sizeof *t);
  unsigned char *norm = malloc(k->size + 1);
  size_t h[257], i, sum, c;
  int rc = RIVER_SUCCESS;

  if (e == NULL || t == NULL || norm == NULL) {
    free(e); free(t); free(norm);
    return RIVER_ENOMEM;
  }
  memset(h, 0, sizeof h);
  for (i = 0; i < n; i++) {
    t[i].pre = prefix_of(k, recs + i * k->record_size, norm);
    t[i].idx = i;
    h[t[i].pre >> 56]++;
  }
  for (i = 0, sum = 0; i < 256; i++) {
    c = h[i];
    h[i] = sum;
    sum += c;
  }
  h[256] = n;
  for (i = 0; i < n; i++)   /* stable: index order within a bucket */
    e[h[t[i].pre >> 56]++] = t[i];
  for (i = 0, sum = 0; i < 256; i++) {   /* h[i]: bucket i's end */
    sort_bucket(e + sum, t, h[i] - sum);
    sum = h[i];
  }
  rc = fix_ties(k, recs, e, n);
  for (i = 0; rc == RIVER_SUCCESS && i < n; i++)
    order[i] = (size_t)e[i].idx;
  free(e);
  free(t);
  free(norm);
  return rc;
}

/* The plain LSD sort on whole normalized keys (header comment). */
static int key_order(const river_key *k, const void *recs,
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

int river__radix_order(const river_key *k, const void *recs,
                       size_t n, size_t *order)
{
  if (n == 0)
    return RIVER_SUCCESS;
  if (n < ((size_t)1 << 32) && n <= SIZE_MAX / (2 * sizeof(struct pentry)))
    return prefix_order(k, recs, n, order);
  return key_order(k, recs, n, order);
}
