/*
 * river/gensort.h - records in the sort benchmark's gensort layout.
 *
 * 100-byte records whose byte layout follows gensort's (so valsort-style
 * tools and River's sort agree on what a record is):
 *
 *   binary: key[10] (random bytes) | 00 11 | row id as 32 hex digits |
 *           88 99 AA BB | 48 filler bytes (12 hex digits, each x4) |
 *           CC DD EE FF
 *   ASCII:  key[10] (printable ' '..'~') | 2 spaces | row id as 32 hex
 *           digits | 2 spaces | 52 filler bytes (13 hex digits, each x4) |
 *           \r\n
 *
 * Keys come from River's own counter-based generator (splitmix64 of the
 * seed and row id), not gensort's, so the bytes differ from gensort's
 * output for the same row; every record depends only on (seed, row,
 * flags), so any number of ranks can generate disjoint slices of the same
 * data set. With RIVER_GENSORT_SKEW the first key byte is drawn as
 * floor(256 u^4) for uniform u: about half the keys start with a byte
 * below 16, which unbalances naive range partitioning (the point of a
 * skewed sort input).
 *
 * Part of the River API; include <river.h> rather than this file.
 */
#ifndef RIVER_GENSORT_H
#define RIVER_GENSORT_H

#include <stddef.h>
#include <stdint.h>
#include "river/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RIVER_GENSORT_RECORD_SIZE 100
#define RIVER_GENSORT_KEY_SIZE 10

#define RIVER_GENSORT_ASCII 1u  /* printable records ending in \r\n */
#define RIVER_GENSORT_SKEW 2u   /* skewed key distribution */

/* Fill buf with count records, rows first..first+count-1. flags is a set
 * of RIVER_GENSORT_* bits (others: RIVER_EINVAL). */
RIVER_API int river_gensort_fill(uint64_t first, size_t count, unsigned flags,
                                 uint64_t seed, void *buf);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_GENSORT_H */
