/*
 * keys_internal.h - how River orders and tests fields of records
 * (src/keys.c): a key's normalized form, whose memcmp order is the
 * schema's key order, and predicates "FIELD OP VALUE" on a field. The
 * exchange edges, the edge filters, and the sort, merge, partition,
 * count and filter modules use them.
 */
#ifndef RIVER_KEYS_INTERNAL_H
#define RIVER_KEYS_INTERNAL_H

#include <river.h>

#include <stddef.h>

/* The size of a key of this type in normalized form (count: the N of
 * char[N] and bytes[N]), and the normalization: the key value at src
 * (as stored in a record) written to dst as bytes whose memcmp order is
 * the schema's key order. */
size_t river__key_norm_size(river_type type, size_t count);
void river__key_norm(river_type type, size_t size, const void *src,
                     unsigned char *dst);

/* Where a key lies in a record and how it orders: river_key and
 * river_key_of, river/schema.h. */

/* A predicate on one field of a record: FIELD OP VALUE, OP one of
 * == != < <= > >= prefix (river__pred_make says how VALUE is read). */
struct river__pred {
  int op;
  river_key k;         /* the field (as a key: its order) */
  unsigned char val[256];      /* raw value, then normalized */
  unsigned char *norm, *big;   /* normalized value; big: if > 128 bytes */
  size_t len;                  /* prefix: the value's length */
  unsigned char *tmp;          /* room for one normalized field */
};

/* Build p for records of schema s. VALUE is read as the field's type: a
 * decimal integer (range-checked) or a float (strtod: also inf, nan);
 * text for char[N] and bytes[N], with \xHH and \\ escapes, at most N
 * bytes, compared against the value padded with zero bytes to N
 * (prefix: the field's first bytes are the value). On RIVER_EINVAL *why
 * says what is wrong. river__pred_free(p) in every case. */
int river__pred_make(const river_schema *s, const char *field,
                     const char *op, const char *value,
                     struct river__pred *p, const char **why);

/* The same from one text "FIELD OP VALUE": the field and the op are the
 * first two words; the value is the rest after one blank (it may hold
 * blanks). */
int river__pred_parse(const river_schema *s, const char *text,
                      struct river__pred *p, const char **why);

/* Whether record rec passes p. */
int river__pred_pass(const struct river__pred *p, const void *rec);

/* Keep the records of recs[0..n) that pass p, in order, at the front of
 * dst (which may be recs itself); returns how many. */
size_t river__pred_keep(const struct river__pred *p, const void *recs,
                        size_t n, void *dst);

void river__pred_free(struct river__pred *p);

#endif /* RIVER_KEYS_INTERNAL_H */
