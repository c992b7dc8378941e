/*
 * valsort.c - validating a sort's output (river/valsort.h).
 *
 * A validator keeps the first and the last key it saw (normalized:
 * river_key_norm, so memcmp is the key order), its counts, and the
 * 128-bit sum of the records' CRC-32s. CRC-32 here is zlib's (the IEEE
 * polynomial, reflected, with the usual pre- and post-inversion), which
 * gensort and valsort use; ISA-L, which River already takes for CRC32C,
 * computes it (crc32_gzip_refl), so no other library is needed.
 *
 * Validators of consecutive pieces combine in order: the counts and sums
 * add, and one comparison at each seam (the last key of the left piece
 * against the first of the right) finds the disorder or repeat there.
 */
#include "river_internal.h"
#include "river/valsort.h"

#include <isa-l/crc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct river_valsort {
  river_key k;
  river_valsort_summary r;
  unsigned char *first, *last, *cur;   /* normalized keys (k.size each) */
};

int river_valsort_create(const river_schema *s, river_valsort **out)
{
  river_valsort *v;

  if (s == NULL || out == NULL)
    return RIVER_EINVAL;
  if ((v = calloc(1, sizeof *v)) == NULL)
    return RIVER_ENOMEM;
  if (river_key_of(s, -1, &v->k) != RIVER_SUCCESS) {
    free(v);
    return RIVER_EINVAL;
  }
  v->first = calloc(3, v->k.size + 1);  /* sent whole, even unused */
  if (v->first == NULL) {
    free(v);
    return RIVER_ENOMEM;
  }
  v->last = v->first + v->k.size;
  v->cur = v->last + v->k.size;
  v->r.first_unordered = UINT64_MAX;
  *out = v;
  return RIVER_SUCCESS;
}

static void add128(river_valsort_summary *r, uint64_t hi, uint64_t lo)
{
  r->checksum_lo += lo;
  r->checksum_hi += hi + (r->checksum_lo < lo);
}

/* The right piece b (its keys first..last) follows a (a's keys alast). */
static void follow(river_valsort_summary *a, unsigned char *afirst,
                   unsigned char *alast, const river_valsort_summary *b,
                   const unsigned char *bfirst, const unsigned char *blast,
                   size_t ksize)
{
  int c;

  if (b->records == 0)
    return;
  if (a->records == 0) {
    memcpy(afirst, bfirst, ksize);
  } else {
    c = memcmp(bfirst, alast, ksize);
    if (c < 0) {
      a->unordered++;
      if (a->first_unordered == UINT64_MAX)
        a->first_unordered = a->records;
    } else if (c == 0) {
      a->duplicates++;
    }
  }
  if (a->first_unordered == UINT64_MAX
      && b->first_unordered != UINT64_MAX)
    a->first_unordered = a->records + b->first_unordered;
  a->unordered += b->unordered;
  a->duplicates += b->duplicates;
  add128(a, b->checksum_hi, b->checksum_lo);
  a->records += b->records;
  memcpy(alast, blast, ksize);
}

int river_valsort_add(river_valsort *v, const void *records, size_t n)
{
  const unsigned char *rec = records;
  river_valsort_summary one;
  size_t i, rs;

  if (v == NULL || (records == NULL && n > 0))
    return RIVER_EINVAL;
  rs = v->k.record_size;
  memset(&one, 0, sizeof one);
  one.records = 1;
  one.first_unordered = UINT64_MAX;
  for (i = 0; i < n; i++, rec += rs) {
    one.checksum_lo = crc32_gzip_refl(0, rec, rs);
    river_key_norm(&v->k, rec + v->k.offset, v->cur);
    follow(&v->r, v->first, v->last, &one, v->cur, v->cur, v->k.size);
  }
  return RIVER_SUCCESS;
}

/* What a rank sends in the reduce: its result, the shape of its key
 * (all must agree), then its first and last keys. */
struct wire {
  river_valsort_summary r;
  uint64_t shape[4];
};

int river_valsort_reduce(river_valsort *v, MPI_Comm comm)
{
  size_t ks, one;
  unsigned char *all = NULL, *mine = NULL;
  struct wire w;
  int size = 0, i, rc = RIVER_SUCCESS, bad = 0;

  if (v == NULL || comm == MPI_COMM_NULL
      || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
    return RIVER_EINVAL;
  ks = v->k.size;
  one = sizeof w + 2 * ks;
  /* Every rank must send the same number of bytes: agree on ks first. */
  {
    uint64_t kmax = ks, kmin = ks;
    rc = river__allreduce(MPI_IN_PLACE, &kmax, 1, MPI_UINT64_T, MPI_MAX,
                          comm);
    if (rc == RIVER_SUCCESS)
      rc = river__allreduce(MPI_IN_PLACE, &kmin, 1, MPI_UINT64_T, MPI_MIN,
                            comm);
    if (rc != RIVER_SUCCESS)
      return rc;
    if (kmax != kmin)
      return RIVER_EINVAL;
  }
  mine = malloc(one);
  all = malloc(one * (size_t)size);
  rc = mine == NULL || all == NULL ? RIVER_ENOMEM : RIVER_SUCCESS;
  rc = river__agree(comm, rc);
  if (rc == RIVER_SUCCESS) {
    memset(&w, 0, sizeof w);
    w.r = v->r;
    w.shape[0] = v->k.record_size;
    w.shape[1] = (uint64_t)v->k.type;
    w.shape[2] = v->k.offset;
    w.shape[3] = ks;
    memcpy(mine, &w, sizeof w);
    memcpy(mine + sizeof w, v->first, ks);
    memcpy(mine + sizeof w + ks, v->last, ks);
    rc = river__allgather(mine, (int)one, MPI_BYTE, all, comm);
  }
  if (rc == RIVER_SUCCESS) {
    memset(&v->r, 0, sizeof v->r);
    v->r.first_unordered = UINT64_MAX;
    for (i = 0; i < size; i++) {
      const unsigned char *p = all + (size_t)i * one;
      memcpy(&w, p, sizeof w);
      bad |= memcmp(w.shape, ((const struct wire *)(const void *)all)->shape,
                    sizeof w.shape) != 0;
      follow(&v->r, v->first, v->last, &w.r, p + sizeof w,
             p + sizeof w + ks, ks);
    }
    if (bad)
      rc = RIVER_EINVAL;
  }
  free(mine);
  free(all);
  return rc;
}

int river_valsort_result(const river_valsort *v, river_valsort_summary *out)
{
  if (v == NULL || out == NULL)
    return RIVER_EINVAL;
  *out = v->r;
  return RIVER_SUCCESS;
}

int river_valsort_checksum_text(const river_valsort_summary *r, char *buf,
                                size_t len)
{
  int n;

  if (r == NULL || buf == NULL || len == 0)
    return RIVER_EINVAL;
  if (r->checksum_hi != 0)
    n = snprintf(buf, len, "%llx%016llx",
                 (unsigned long long)r->checksum_hi,
                 (unsigned long long)r->checksum_lo);
  else
    n = snprintf(buf, len, "%llx", (unsigned long long)r->checksum_lo);
  return n < 0 || (size_t)n >= len ? RIVER_ENOBUFS : RIVER_SUCCESS;
}

int river_valsort_destroy(river_valsort *v)
{
  if (v != NULL) {
    free(v->first);
    free(v);
  }
  return RIVER_SUCCESS;
}
