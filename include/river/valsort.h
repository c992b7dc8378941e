/*
 * river/valsort.h - validating a sort's output, as the sortbenchmark's
 * valsort does: records in key order, their count, the keys that repeat
 * the one before, and the order-independent content checksum that
 * `gensort -c` and `valsort` print (the sum of the records' CRC-32s,
 * zlib's/IEEE's CRC, over 128 bits), so that an output can be checked
 * against its input: same count, same checksum.
 *
 * Records are fed in their order, in pieces, to a validator; validators
 * of consecutive pieces of one sequence combine, in order, across the
 * ranks of a communicator (river_valsort_reduce), so every rank can
 * check its own part of a collection or file in parallel.
 *
 *   river_valsort *v;
 *   river_valsort_create(schema, &v);
 *   while (more) river_valsort_add(v, records, n);   (this rank's part)
 *   river_valsort_reduce(v, MPI_COMM_WORLD);  (collective, rank order)
 *   river_valsort_result(v, &r);              (the whole, on every rank)
 *   river_valsort_destroy(v);
 *
 * Keys compare in the schema's key order (river/schema.h): for the
 * gensort record its 10-byte key as unsigned bytes.
 *
 * Part of the River API; include <river.h> rather than this file.
 */
#ifndef RIVER_VALSORT_H
#define RIVER_VALSORT_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>
#include "river/core.h"
#include "river/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct river_valsort river_valsort;

typedef struct river_valsort_summary {
  uint64_t records;
  uint64_t unordered;        /* records whose key is below the one before */
  uint64_t first_unordered;  /* the first such record's index (from 0);
                                UINT64_MAX if none */
  uint64_t duplicates;       /* records whose key equals the one before */
  uint64_t checksum_hi;      /* the sum of the records' CRC-32s: high */
  uint64_t checksum_lo;      /* and low 64 bits */
} river_valsort_summary;

/* A validator for records of schema s (it keeps a copy of what it needs
 * of s). RIVER_EINVAL for NULL arguments. */
RIVER_API int river_valsort_create(const river_schema *s,
                                   river_valsort **out);

/* Add n records at records, which follow those added before. */
RIVER_API int river_valsort_add(river_valsort *v, const void *records,
                                size_t n);

/* Collective over comm: rank r's records follow rank r-1's; afterwards
 * every rank's v holds the whole sequence (so reduce once, and add
 * nothing after: the result would count records twice). Every rank's v must have the
 * same schema (RIVER_EINVAL on every rank otherwise). Waits back off. */
RIVER_API int river_valsort_reduce(river_valsort *v, MPI_Comm comm);

RIVER_API int river_valsort_result(const river_valsort *v,
                                   river_valsort_summary *out);

/* The checksum as `gensort -c` and valsort print it: lower-case hex,
 * no leading zeros (buf: at least 33 bytes). */
RIVER_API int river_valsort_checksum_text(const river_valsort_summary *r,
                                          char *buf, size_t len);

/* Free v; NULL is a no-op. */
RIVER_API int river_valsort_destroy(river_valsort *v);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_VALSORT_H */
