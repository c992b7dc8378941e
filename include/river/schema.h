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

/* As river_schema_compare, but ka and kb point at bare keys: the key
 * field's bytes alone (river_schema_key's size), as copied out of
 * records, at any alignment. RIVER_EINVAL for any NULL argument (*cmp
 * untouched). */
RIVER_API int river_schema_compare_keys(const river_schema *s,
                                        const void *ka, const void *kb,
                                        int *cmp);

/* The type's name as in the text form ("int32", ..., "char", "bytes");
 * "unknown" for other values. Never NULL. */
RIVER_API const char *river_type_name(int type);

/* -------------------------------------------------------------- keys */

/*
 * A key: a field of a schema's records and how it orders. Normalized
 * (river_key_norm), its value is bytes whose unsigned (memcmp) order is
 * river_schema_compare's: char and bytes as stored, integers big-endian
 * (signed ones with the sign bit flipped), floats with -0 equal to +0
 * and every NaN equal to the others and after every number. Sorting,
 * merging, range partitioning and checking order in River all compare
 * keys this way.
 */
typedef struct river_key {
  river_type type;
  size_t offset;        /* of the field in a record */
  size_t size;          /* in the record, and normalized: 4 or 8 for
                           numbers, N for char[N] and bytes[N] */
  size_t record_size;
} river_key;

/* The key of s: its field `field`, or s's key field if field < 0.
 * RIVER_EINVAL for a NULL s or k, or a field out of range. */
RIVER_API int river_key_of(const river_schema *s, int field, river_key *k);

/* Write the key value at `value` (as stored: a record's bytes at
 * k->offset, or a bare key) normalized into out (k->size bytes). No
 * argument checks: it is for loops over records. */
RIVER_API void river_key_norm(const river_key *k, const void *value,
                              unsigned char *out);

/*
 * A predicate on one field: FIELD OP VALUE, OP one of == != < <= > >=
 * prefix, in the key order above. VALUE is read as the field's type: a
 * decimal integer (range-checked) or a float (strtod: also inf, nan);
 * text for char[N] and bytes[N], with \xHH and \\ escapes, at most N
 * bytes, compared against the value padded with zero bytes to N (prefix:
 * the field's first bytes are the value). RIVER_EINVAL with *why (a
 * static string) saying what is wrong; RIVER_ENOMEM.
 */
typedef struct river_pred river_pred;
RIVER_API int river_pred_create(const river_schema *s, const char *field,
                                const char *op, const char *value,
                                river_pred **out, const char **why);
/*
 * The same from one text "FIELD OP VALUE" (an edge's filter in a flow
 * spec): the field and the op are the first two words (blanks before
 * and between them are skipped), the value is the rest after one blank
 * (it may hold blanks). *out gets the predicate, the caller's to
 * destroy (river_pred_destroy), or NULL on failure. RIVER_EINVAL with
 * *why for a NULL s, text or out, text that is not FIELD OP VALUE, or
 * as river_pred_create; RIVER_ENOMEM.
 */
RIVER_API int river_pred_parse(const river_schema *s, const char *text,
                               river_pred **out, const char **why);
/* 1 if record passes p, else 0 (0 for a NULL p or record). */
RIVER_API int river_pred_pass(const river_pred *p, const void *record);
/*
 * Keep the records of recs[0..n) (records of p's schema) that pass p,
 * in their order, at the front of dst, and set *kept to their number.
 * dst is recs itself (filtering in place) or room for n records that
 * does not overlap recs. RIVER_EINVAL, with dst and *kept untouched, for
 * a NULL p or kept, or a NULL recs or dst with n > 0.
 */
RIVER_API int river_pred_keep(const river_pred *p, const void *recs,
                              size_t n, void *dst, size_t *kept);
RIVER_API void river_pred_destroy(river_pred *p);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_SCHEMA_H */
