/*
 * river/schema.h - record schemas: named, typed, fixed-size fields and a
 * key.
 *
 * A record is a fixed number of bytes; its schema names the fields in
 * order (no padding: each field starts where the previous ends) and says
 * which field is the key. Numeric fields are stored in host byte order.
 * Keys compare as unsigned bytes (memcmp order) for char[n] and bytes[n],
 * numerically for numbers (signed or unsigned integers; floats with NaN
 * after every other value).
 *
 * Text form (CLI, flow specs, HDF5 metadata):
 *     NAME:TYPE[,NAME:TYPE...][;key=NAME]
 * TYPE is int32 int64 uint32 uint64 float32 float64 char[N] bytes[N],
 * N >= 1 (decimal digits). Whitespace around names, types and the
 * separators , : ; = is ignored; a type has none inside ("char[16]").
 * Without ";key=", the key is the field named "key" if there is one, else
 * the first field. Names are 1..31 characters [A-Za-z0-9_], starting with
 * a letter or '_', unique within the schema. The default schema is the
 * sort benchmark's "key:bytes[10],payload:bytes[90]" (100-byte records).
 *
 * Part of the River API; include <river.h> rather than this file.
 */
#ifndef RIVER_SCHEMA_H
#define RIVER_SCHEMA_H

#include <stddef.h>
#include "river/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum river_type {
  RIVER_TYPE_INT32 = 0,
  RIVER_TYPE_INT64 = 1,
  RIVER_TYPE_UINT32 = 2,
  RIVER_TYPE_UINT64 = 3,
  RIVER_TYPE_FLOAT32 = 4,
  RIVER_TYPE_FLOAT64 = 5,
  RIVER_TYPE_CHAR = 6,  /* char[N]: text, compared as unsigned bytes */
  RIVER_TYPE_BYTES = 7  /* bytes[N]: opaque, compared as unsigned bytes */
} river_type;

#define RIVER_SCHEMA_MAX_FIELDS 64
#define RIVER_SCHEMA_MAX_NAME 31
#define RIVER_SCHEMA_DEFAULT "key:bytes[10],payload:bytes[90]"

/* An immutable-once-built record schema. Owned by its creator; freed with
 * river_schema_destroy. Not collective; no MPI needed. */
typedef struct river_schema river_schema;

/*
 * Parse the text form into a new schema (*out, caller frees). On bad text
 * returns RIVER_EFORMAT and logs (RIVER_LOG_ERROR) a message that quotes
 * the text and names the offending field and what is wrong; *out is left
 * untouched. Record sizes above 1 GiB give RIVER_EOVERFLOW.
 */
RIVER_API int river_schema_parse(const char *text, river_schema **out);

/* The default sort-benchmark schema (RIVER_SCHEMA_DEFAULT). */
RIVER_API int river_schema_create_default(river_schema **out);

/* A deep copy of s. */
RIVER_API int river_schema_clone(const river_schema *s, river_schema **out);

/* Free s; NULL is a no-op. */
RIVER_API void river_schema_destroy(river_schema *s);

/* The record size in bytes (sum of the field sizes). */
RIVER_API int river_schema_record_size(const river_schema *s, size_t *size);

/* The number of fields. */
RIVER_API int river_schema_nfields(const river_schema *s, int *n);

/*
 * Field i (0-based): its name (borrowed: valid while s lives), type,
 * element count N for char[N]/bytes[N] (1 for numbers), and byte offset
 * in the record. Any output pointer may be NULL if not wanted; s NULL or
 * i out of range gives RIVER_EINVAL.
 */
RIVER_API int river_schema_field(const river_schema *s, int i,
                                 const char **name, river_type *type,
                                 size_t *count, size_t *offset);

/* The key field's index, and the key's offset and size in the record.
 * As for river_schema_field, any output pointer may be NULL. */
RIVER_API int river_schema_key(const river_schema *s, int *field,
                               size_t *offset, size_t *size);

/* The index of the field called name; RIVER_ENOTFOUND if none. */
RIVER_API int river_schema_find(const river_schema *s, const char *name,
                                int *field);

/*
 * The canonical text form of s (always with ";key=NAME"), parseable by
 * river_schema_parse, into buf with the caller-buffer contract: *len is
 * the size of buf in, the string length out; RIVER_ENOBUFS sets *len to
 * the size needed (with the NUL) and leaves buf untouched.
 */
RIVER_API int river_schema_format(const river_schema *s, char *buf,
                                  size_t *len);

/* *equal = 1 if a and b have the same fields (names, types, sizes, order)
 * and the same key. */
RIVER_API int river_schema_equal(const river_schema *a, const river_schema *b,
                                 int *equal);

/* Compare the keys of records a and b: *cmp < 0, 0 or > 0. */
RIVER_API int river_schema_compare(const river_schema *s, const void *a,
                                   const void *b, int *cmp);

/* The type's name as in the text form ("int32", ..., "char", "bytes");
 * "unknown" for other values. Never NULL. */
RIVER_API const char *river_type_name(int type);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_SCHEMA_H */
