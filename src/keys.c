/*
 * keys.c - the key order as bytes, and predicates on fields: the keys
 * part of river/schema.h (river_key_of, river_key_norm, river_pred_*).
 * The library's other files (the flow's exchange edges and edge
 * filters, valsort, the built-in modules) use these public calls.
 *
 * norm_value turns a key field's value into bytes whose unsigned
 * (memcmp) order is the schema's key order (river/schema.h): char and
 * bytes as they are; unsigned integers big-endian; signed integers
 * big-endian with the sign bit flipped; floats by the IEEE trick (every
 * bit of a negative flipped, the sign bit of a positive one), after
 * mapping -0 to +0 and every NaN to all ones, so that -0 and +0 are
 * equal and NaNs equal each other and follow everything, as
 * river_schema_compare has them.
 *
 * A predicate compares a record's field with a value in that order: the
 * value is parsed once as the field's type and normalized, and each
 * record's field is normalized and compared with memcmp.
 */
#include <river.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A predicate on one field of a record: FIELD OP VALUE, OP one of
 * == != < <= > >= prefix (pred_make says how VALUE is read). */
struct pred {
  int op;
  river_key k;         /* the field (as a key: its order) */
  unsigned char val[256];      /* raw value, then normalized */
  unsigned char *norm, *big;   /* normalized value; big: if > 128 bytes */
  size_t len;                  /* prefix: the value's length */
  unsigned char *tmp;          /* room for one normalized field */
};

static void put_be(uint64_t v, unsigned char *dst, size_t n)
{
  size_t i;

  for (i = 0; i < n; i++)
    dst[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
}

/* The key value at src (as stored in a record), of this type and
 * normalized size, written to dst in normalized form. */
static void norm_value(river_type type, size_t size, const void *src,
                     unsigned char *dst)
{
  switch (type) {
  case RIVER_TYPE_INT32: { uint32_t v; memcpy(&v, src, 4);
    put_be(v ^ 0x80000000u, dst, 4); return; }
  case RIVER_TYPE_UINT32: { uint32_t v; memcpy(&v, src, 4);
    put_be(v, dst, 4); return; }
  case RIVER_TYPE_INT64: { uint64_t v; memcpy(&v, src, 8);
    put_be(v ^ ((uint64_t)1 << 63), dst, 8); return; }
  case RIVER_TYPE_UINT64: { uint64_t v; memcpy(&v, src, 8);
    put_be(v, dst, 8); return; }
  case RIVER_TYPE_FLOAT32: {
    float f; uint32_t v;
    memcpy(&f, src, 4);
    if (isnan(f)) { put_be(0xffffffffu, dst, 4); return; }
    if (f == 0.0f) f = 0.0f;  /* -0 is +0 */
    memcpy(&v, &f, 4);
    put_be(v & 0x80000000u ? ~v : v ^ 0x80000000u, dst, 4);
    return; }
  case RIVER_TYPE_FLOAT64: {
    double f; uint64_t v, sign = (uint64_t)1 << 63;
    memcpy(&f, src, 8);
    if (isnan(f)) { put_be(~(uint64_t)0, dst, 8); return; }
    if (f == 0.0) f = 0.0;
    memcpy(&v, &f, 8);
    put_be(v & sign ? ~v : v ^ sign, dst, 8);
    return; }
  default:
    memcpy(dst, src, size);
  }
}

/* The size of a key of this type in normalized form (count: the N of
 * char[N] and bytes[N]). */
static size_t norm_size(river_type type, size_t count)
{
  switch (type) {
  case RIVER_TYPE_INT32: case RIVER_TYPE_UINT32: case RIVER_TYPE_FLOAT32:
    return 4;
  case RIVER_TYPE_INT64: case RIVER_TYPE_UINT64: case RIVER_TYPE_FLOAT64:
    return 8;
  default:
    return count;
  }
}

void river_key_norm(const river_key *k, const void *value,
                    unsigned char *out)
{
  norm_value(k->type, k->size, value, out);
}

int river_key_of(const river_schema *s, int field, river_key *k)
{
  size_t count = 1;

  if (s == NULL || k == NULL)
    return RIVER_EINVAL;
  if (field < 0 && river_schema_key(s, &field, NULL, NULL) != RIVER_SUCCESS)
    return RIVER_EINVAL;
  if (river_schema_field(s, field, NULL, &k->type, &count, &k->offset)
          != RIVER_SUCCESS
      || river_schema_record_size(s, &k->record_size) != RIVER_SUCCESS)
    return RIVER_EINVAL;
  k->size = norm_size(k->type, count);
  return RIVER_SUCCESS;
}

enum op { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_PREFIX };

static int parse_op(const char *s, int *op)
{
  static const char *const names[] = {"==", "!=", "<", "<=", ">", ">=",
                                      "prefix"};
  int i;

  for (i = 0; i < 7; i++)
    if (strcmp(s, names[i]) == 0) {
      *op = i;
      return RIVER_SUCCESS;
    }
  return RIVER_EINVAL;
}

static int hexval(char c)
{
  return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* Text with \xHH and \\ escapes into out (at most max bytes): length, or
 * -1 if malformed or too long. */
static long unescape(const char *s, unsigned char *out, size_t max)
{
  size_t n = 0;
  unsigned v;

  while (*s) {
    if (n == max)
      return -1;
    if (s[0] == '\\' && s[1] == '\\') {
      out[n++] = '\\';
      s += 2;
    } else if (s[0] == '\\' && s[1] == 'x') {
      if (!isxdigit((unsigned char)s[2]) || !isxdigit((unsigned char)s[3]))
        return -1;  /* exactly two hex digits: no sign, no blank */
      v = (unsigned)(hexval(s[2]) << 4 | hexval(s[3]));
      out[n++] = (unsigned char)v;
      s += 4;
    } else {
      out[n++] = (unsigned char)*s++;
    }
  }
  return (long)n;
}

/* A number of type t from text into raw (as stored in a record). */
static int parse_number(river_type t, const char *s, unsigned char *raw)
{
  char *end;
  long long i;
  unsigned long long u;
  double d;

  errno = 0;
  switch (t) {
  case RIVER_TYPE_INT32: case RIVER_TYPE_INT64:
    i = strtoll(s, &end, 10);
    if (t == RIVER_TYPE_INT32 && (i < INT32_MIN || i > INT32_MAX))
      return RIVER_EINVAL;
    if (t == RIVER_TYPE_INT32) { int32_t v = (int32_t)i; memcpy(raw, &v, 4); }
    else { int64_t v = i; memcpy(raw, &v, 8); }
    break;
  case RIVER_TYPE_UINT32: case RIVER_TYPE_UINT64:
    if (strchr(s, '-') != NULL)
      return RIVER_EINVAL;
    u = strtoull(s, &end, 10);
    if (t == RIVER_TYPE_UINT32 && u > UINT32_MAX)
      return RIVER_EINVAL;
    if (t == RIVER_TYPE_UINT32) {
      uint32_t v = (uint32_t)u;
      memcpy(raw, &v, 4);
    } else {
      uint64_t v = u;
      memcpy(raw, &v, 8);
    }
    break;
  default:
    d = strtod(s, &end);
    if (t == RIVER_TYPE_FLOAT32) { float v = (float)d; memcpy(raw, &v, 4); }
    else memcpy(raw, &d, 8);
  }
  return errno != 0 || end == s || *end != '\0' ? RIVER_EINVAL
                                                : RIVER_SUCCESS;
}

/* Build p for records of schema s (river_pred_create says how VALUE is
 * read); on RIVER_EINVAL *why says what is wrong. pred_free(p) in every
 * case. */
static int pred_make(const river_schema *s, const char *field,
                     const char *op, const char *value,
                     struct pred *p, const char **why)
{
  unsigned char *raw;
  int idx, rc;
  long len;

  memset(p, 0, sizeof p[0]);
  *why = "";
  if (s == NULL || field == NULL || op == NULL || value == NULL)
    return *why = "a field, an op and a value are needed", RIVER_EINVAL;
  if (river_schema_find(s, field, &idx) != RIVER_SUCCESS
      || river_key_of(s, idx, &p->k) != RIVER_SUCCESS)
    return *why = "no such field in its records", RIVER_EINVAL;
  if (parse_op(op, &p->op) != RIVER_SUCCESS)
    return *why = "op is not one of == != < <= > >= prefix", RIVER_EINVAL;
  p->big = p->k.size > sizeof p->val / 2 ? calloc(2, p->k.size) : NULL;
  p->tmp = malloc(p->k.size + 1);
  if ((p->k.size > sizeof p->val / 2 && p->big == NULL) || p->tmp == NULL)
    return RIVER_ENOMEM;
  raw = p->big ? p->big : p->val;
  p->norm = raw + p->k.size;
  if (p->k.type == RIVER_TYPE_CHAR || p->k.type == RIVER_TYPE_BYTES) {
    memset(raw, 0, p->k.size);
    len = unescape(value, raw, p->k.size);
    if (len < 0)
      return *why = "value is longer than the field or has a bad escape "
                    "(\\xHH, \\\\)", RIVER_EINVAL;
    p->len = (size_t)len;
  } else {
    if (p->op == OP_PREFIX)
      return *why = "prefix needs a char or bytes field", RIVER_EINVAL;
    rc = parse_number(p->k.type, value, raw);
    if (rc != RIVER_SUCCESS)
      return *why = "value is not a number of the field's type", rc;
  }
  norm_value(p->k.type, p->k.size, raw, p->norm);
  return RIVER_SUCCESS;
}

/* pred_make from one text "FIELD OP VALUE" (river_pred_parse). */
static int pred_parse(const river_schema *s, const char *text,
                      struct pred *p, const char **why)
{
  char field[RIVER_SCHEMA_MAX_NAME + 2], op[8];
  size_t a, b;

  memset(p, 0, sizeof p[0]);
  *why = "";
  if (text == NULL)
    return *why = "no filter", RIVER_EINVAL;
  text += strspn(text, " \t");
  a = strcspn(text, " \t");
  if (a == 0 || a >= sizeof field)
    return *why = "it is not FIELD OP VALUE", RIVER_EINVAL;
  memcpy(field, text, a);
  field[a] = '\0';
  text += a;
  text += strspn(text, " \t");
  b = strcspn(text, " \t");
  if (b == 0 || b >= sizeof op || text[b] == '\0')
    return *why = "it is not FIELD OP VALUE", RIVER_EINVAL;
  memcpy(op, text, b);
  op[b] = '\0';
  return pred_make(s, field, op, text + b + 1, p, why);
}

static int pred_pass(const struct pred *p, const void *record)
{
  const unsigned char *rec = record;
  int c;

  if (p->op == OP_PREFIX)
    return memcmp(rec + p->k.offset, p->norm, p->len) == 0;
  norm_value(p->k.type, p->k.size, rec + p->k.offset, p->tmp);
  c = memcmp(p->tmp, p->norm, p->k.size);
  switch (p->op) {
  case OP_EQ: return c == 0;
  case OP_NE: return c != 0;
  case OP_LT: return c < 0;
  case OP_LE: return c <= 0;
  case OP_GT: return c > 0;
  default: return c >= 0;
  }
}

/* The records of recs[0..n) that pass p, moved to the front of dst in
 * order; returns how many. */
static size_t pred_keep(const struct pred *p, const void *recs,
                        size_t n, void *dst)
{
  const unsigned char *r = recs;
  unsigned char *d = dst;
  size_t rs = p->k.record_size, i, j = 0;

  for (i = 0; i < n; i++, r += rs)
    if (pred_pass(p, r)) {
      if (d + j * rs != r)
        memmove(d + j * rs, r, rs);
      j++;
    }
  return j;
}

static void pred_free(struct pred *p)
{
  if (p == NULL)
    return;
  free(p->big);
  free(p->tmp);
  p->big = p->tmp = NULL;
}

/* The public predicate: the internal one, on the heap. */
struct river_pred {
  struct pred p;
};

/* A new public predicate into *out (NULL on failure): from
 * fov = {field, op, value} (pred_make), or from text (pred_parse) if
 * fov is NULL. */
static int pred_new(const river_schema *s, const char *text,
                    const char *const *fov, river_pred **out,
                    const char **why)
{
  const char *dummy;
  river_pred *p;
  int rc;

  if (why == NULL)
    why = &dummy;
  *why = "";
  if (out == NULL)
    return *why = "nowhere to put it", RIVER_EINVAL;
  *out = NULL;
  if ((p = malloc(sizeof *p)) == NULL)
    return RIVER_ENOMEM;
  rc = fov == NULL ? pred_parse(s, text, &p->p, why)
                   : pred_make(s, fov[0], fov[1], fov[2], &p->p, why);
  if (rc != RIVER_SUCCESS) {
    pred_free(&p->p);
    free(p);
    return rc;
  }
  *out = p;
  return RIVER_SUCCESS;
}

int river_pred_create(const river_schema *s, const char *field,
                      const char *op, const char *value, river_pred **out,
                      const char **why)
{
  const char *fov[3] = {field, op, value};

  return pred_new(s, NULL, fov, out, why);
}

int river_pred_parse(const river_schema *s, const char *text,
                     river_pred **out, const char **why)
{
  return pred_new(s, text, NULL, out, why);
}

int river_pred_pass(const river_pred *p, const void *record)
{
  return p != NULL && record != NULL && pred_pass(&p->p, record);
}

int river_pred_keep(const river_pred *p, const void *recs, size_t n,
                    void *dst, size_t *kept)
{
  if (p == NULL || kept == NULL || (n > 0 && (recs == NULL || dst == NULL)))
    return RIVER_EINVAL;
  *kept = pred_keep(&p->p, recs, n, dst);
  return RIVER_SUCCESS;
}

void river_pred_destroy(river_pred *p)
{
  if (p == NULL)
    return;
  pred_free(&p->p);
  free(p);
}
