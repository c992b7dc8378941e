/*
 * river/units.h - one meaning for a number: the parser of sizes and
 * counts that every part of River takes (the river command, river-bench,
 * flow specs' size arguments, the Fortran module) and the one way River
 * prints a size.
 *
 * A size or count is decimal digits, then at most one suffix:
 *
 *   k (or K)  x 1000        Ki  x 1024
 *   M         x 1000^2      Mi  x 1024^2
 *   G         x 1000^3      Gi  x 1024^3
 *   T         x 1000^4      Ti  x 1024^4
 *
 * as numfmt(1) and dd(1) tell them apart: `1M` is 1,000,000, `1Mi` is
 * 1,048,576. Nothing else: no sign, blank, fraction, `B`, `m`, `ki` or
 * `KiB`. A rate is a size per second (`--disk-rate 40M`: 40,000,000
 * bytes/s).
 *
 * Part of the River API; include <river.h> rather than this file.
 */
#ifndef RIVER_UNITS_H
#define RIVER_UNITS_H

#include <stddef.h>
#include <stdint.h>
#include "river/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The rule in a few words, for messages that refuse a value: every
 * program says it the same way (UTF-8). */
#define RIVER_SIZE_SUFFIXES \
  "suffixes k, M, G, T: \xc3\x97" "1000; Ki, Mi, Gi, Ti: \xc3\x97" "1024"

/* A buffer of this many bytes holds any river_format_size text. */
#define RIVER_SIZE_TEXT_MAX 16

/*
 * IN text: a NUL-terminated size or count as above (all of it).
 * OUT value: its value.
 * Returns RIVER_SUCCESS, or RIVER_EINVAL if text is NULL, is not of
 * that form, or its value is over UINT64_MAX (*value then untouched).
 * Logs nothing: the caller says what was wrong, with
 * RIVER_SIZE_SUFFIXES. Not collective; works before river_init.
 */
RIVER_API int river_parse_size(const char *text, uint64_t *value);

/*
 * A byte count for a person: decimal SI units (B, kB, MB, GB, TB, PB,
 * EB) with three significant digits, rounded half up: `999 B`,
 * `1.00 kB`, `105 MB`, `1.05 GB`, `12.3 TB`. A rate prints as the size
 * of a second's bytes followed by "/s" (`105 MB/s`).
 *
 * OUT buf: the text, NUL-terminated, in len bytes (RIVER_SIZE_TEXT_MAX
 * always suffice). Returns RIVER_SUCCESS; RIVER_EINVAL if buf is NULL;
 * RIVER_ENOBUFS if the text and its NUL do not fit (buf untouched).
 * Not collective; works before river_init.
 */
RIVER_API int river_format_size(uint64_t bytes, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_UNITS_H */
