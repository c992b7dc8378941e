/*
 * schema_internal.h - what src/schema.c gives the library's other files without the
 * public calls' argument checks: key comparisons and the record size for
 * hot loops (the key order as bytes is river_key_norm, src/keys.c).
 */
#ifndef RIVER_SCHEMA_INTERNAL_H
#define RIVER_SCHEMA_INTERNAL_H

#include <river.h>

#include <stddef.h>

/* Compare the keys of records a and b under schema s: <0, 0 or >0, as
 * river_schema_compare but without argument checks (for hot loops). */
int river__schema_key_cmp(const river_schema *s, const void *a, const void *b);

/* As river__schema_key_cmp, but ka and kb point at bare keys (the key
 * field's bytes alone, as copied out of records), not at records. */
int river__schema_key_bytes_cmp(const river_schema *s, const void *ka,
                                const void *kb);

/* s's record size in bytes, without argument checks. */
size_t river__schema_record_size(const river_schema *s);

#endif /* RIVER_SCHEMA_INTERNAL_H */
