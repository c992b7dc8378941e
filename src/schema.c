/*
 * schema.c - record schemas: the parser of the text form, queries, the
 * canonical formatter and key comparison.
 *
 * A schema is one fixed-size block (at most RIVER_SCHEMA_MAX_FIELDS
 * fields, names stored inline), so a clone is one allocation and a copy.
 * The parser walks the text without copying it, as spans (pointer and
 * length); the first problem found is logged, quoting the whole text and
 * naming the field (counted from 1, as a person reads the text), and
 * returned as a code. Key comparison loads numbers with memcpy, as
 * fields may sit at any offset in a record.
 */
#include "river_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(float) == 4, "float32 fields need a 4-byte float");
_Static_assert(sizeof(double) == 8, "float64 fields need an 8-byte double");

/* The largest record a schema may describe. */
#define RIVER__MAX_RECORD ((size_t)1 << 30)

/* The longest canonical text: per field NAME ':' "bytes[1073741824]" ',',
 * then ";key=" NAME and the NUL. */
#define RIVER__MAX_TEXT                                                    \
  (RIVER_SCHEMA_MAX_FIELDS * (RIVER_SCHEMA_MAX_NAME + 1 + 17 + 1)          \
   + 5 + RIVER_SCHEMA_MAX_NAME + 1)

struct river__field {
  char name[RIVER_SCHEMA_MAX_NAME + 1];
  river_type type;
  size_t count;   /* N for char[N] and bytes[N], else 1 */
  size_t size;    /* bytes in the record */
  size_t offset;  /* from the start of the record */
};

struct river_schema {
  int nfields;
  int key;              /* index of the key field */
  size_t record_size;
  struct river__field field[RIVER_SCHEMA_MAX_FIELDS];
};

/* A piece of the schema text: not NUL-terminated. */
struct river__span {
  const char *p;
  size_t n;
};

static const char *const type_names[] = {
  "int32", "int64", "uint32", "uint64", "float32", "float64", "char", "bytes"
};

static const size_t type_sizes[] = {4, 8, 4, 8, 4, 8, 1, 1};

#define RIVER__NTYPES \
  ((int)(sizeof type_names / sizeof *type_names))

const char *river_type_name(int type)
{
  if (type < 0 || type >= RIVER__NTYPES)
    return "unknown";
  return type_names[type];
}

/* ------------------------------------------------------------ errors */

/* The most of the text an error message quotes: the rest of the message
 * (what is wrong) must fit in the logger's 1024 bytes too. */
#define RIVER__QUOTE_MAX 400

/* Log "schema "TEXT": DETAIL" at error level (a long TEXT cut to its
 * first RIVER__QUOTE_MAX characters and "..."); return rc. */
static int schema_error(const char *text, int rc, const char *fmt, ...)
    RIVER_PRINTF(3, 4);

static int schema_error(const char *text, int rc, const char *fmt, ...)
{
  char detail[512];
  int cut = strlen(text) > RIVER__QUOTE_MAX;
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  river__error("schema \"%.*s%s\": %s", RIVER__QUOTE_MAX, text,
               cut ? "..." : "", detail);
  return rc;
}

/* ------------------------------------------------------------- spans */

static int is_space(char c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v'
         || c == '\f';
}

static int is_name_char(char c)
{
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
         || (c >= '0' && c <= '9') || c == '_';
}

static struct river__span span_trim(const char *p, size_t n)
{
  struct river__span sp;

  while (n > 0 && is_space(*p)) {
    p++;
    n--;
  }
  while (n > 0 && is_space(p[n - 1]))
    n--;
  sp.p = p;
  sp.n = n;
  return sp;
}

static int span_is(struct river__span sp, const char *str)
{
  return sp.n == strlen(str) && memcmp(sp.p, str, sp.n) == 0;
}

static int find_span(const river_schema *s, struct river__span name)
{
  int i;

  for (i = 0; i < s->nfields; i++)
    if (span_is(name, s->field[i].name))
      return i;
  return -1;
}

/* ----------------------------------------------------------- parsing */

/* What is wrong with name, or NULL if it is a good field name. */
static const char *name_problem(struct river__span name)
{
  size_t i;

  if (name.n == 0)
    return "it is empty";
  if (name.n > RIVER_SCHEMA_MAX_NAME)
    return "it is longer than 31 characters";
  if (name.p[0] >= '0' && name.p[0] <= '9')
    return "it must start with a letter or '_'";
  for (i = 0; i < name.n; i++)
    if (!is_name_char(name.p[i]))
      return "it may hold only letters, digits and '_'";
  return NULL;
}

/*
 * Parse the N of char[N] or bytes[N]: digits between '[' and the final
 * ']', at least 1, at most the largest record. num is the text after '['
 * in type; where names the field in messages.
 */
static int parse_count(const char *text, const char *where,
                       struct river__span type, struct river__span num,
                       size_t *count)
{
  const char *close = memchr(num.p, ']', num.n);
  size_t i, n = 0, len;

  if (close == NULL)
    return schema_error(text, RIVER_EFORMAT,
                        "%s: type \"%.*s\" lacks the closing ']'", where,
                        (int)type.n, type.p);
  len = (size_t)(close - num.p);
  if (len + 1 != num.n)
    return schema_error(text, RIVER_EFORMAT,
                        "%s: junk \"%.*s\" after the ']' of type \"%.*s\"",
                        where, (int)(num.n - len - 1), close + 1,
                        (int)type.n, type.p);
  if (len == 0)
    return schema_error(text, RIVER_EFORMAT,
                        "%s: type \"%.*s\" has no length N", where,
                        (int)type.n, type.p);
  for (i = 0; i < len; i++) {
    if (num.p[i] < '0' || num.p[i] > '9')
      return schema_error(text, RIVER_EFORMAT,
                          "%s: length N \"%.*s\" of type \"%.*s\" is not a "
                          "number", where, (int)len, num.p, (int)type.n,
                          type.p);
    n = n * 10 + (size_t)(num.p[i] - '0');
    if (n > RIVER__MAX_RECORD)
      return schema_error(text, RIVER_EOVERFLOW,
                          "%s: length N %.*s of type \"%.*s\" is too large "
                          "(a record is at most 1 GiB)", where, (int)len,
                          num.p, (int)type.n, type.p);
  }
  if (n == 0)
    return schema_error(text, RIVER_EFORMAT,
                        "%s: length N of type \"%.*s\" must be at least 1",
                        where, (int)type.n, type.p);
  *count = n;
  return RIVER_SUCCESS;
}

/* Parse one trimmed TYPE into f's type and count. */
static int parse_type(const char *text, const char *where,
                      struct river__span type, struct river__field *f)
{
  struct river__span num;
  size_t plen;
  int t;

  if (type.n == 0)
    return schema_error(text, RIVER_EFORMAT, "%s: no type after ':'",
                        where);
  for (t = 0; t < RIVER_TYPE_CHAR; t++) {
    if (span_is(type, type_names[t])) {
      f->type = (river_type)t;
      f->count = 1;
      return RIVER_SUCCESS;
    }
  }
  for (t = RIVER_TYPE_CHAR; t <= RIVER_TYPE_BYTES; t++) {
    plen = strlen(type_names[t]);
    if (type.n < plen || memcmp(type.p, type_names[t], plen) != 0)
      continue;
    if (type.n == plen)
      return schema_error(text, RIVER_EFORMAT,
                          "%s: type \"%s\" needs a length, as in %s[N]",
                          where, type_names[t], type_names[t]);
    if (type.p[plen] != '[')
      break;
    num.p = type.p + plen + 1;
    num.n = type.n - plen - 1;
    f->type = (river_type)t;
    return parse_count(text, where, type, num, &f->count);
  }
  return schema_error(text, RIVER_EFORMAT,
                      "%s: unknown type \"%.*s\" (expected int32, int64, "
                      "uint32, uint64, float32, float64, char[N] or "
                      "bytes[N])", where, (int)type.n, type.p);
}

/* Parse one trimmed "NAME:TYPE" and append it to s. */
static int parse_field(const char *text, struct river__span tok,
                       river_schema *s)
{
  struct river__field *f = &s->field[s->nfields];
  struct river__span name, type;
  int pos = s->nfields + 1, dup, rc;
  const char *colon, *why;
  char where[RIVER_SCHEMA_MAX_NAME + 32];

  if (tok.n == 0)
    return schema_error(text, RIVER_EFORMAT, "field %d is empty", pos);
  colon = memchr(tok.p, ':', tok.n);
  if (colon == NULL)
    return schema_error(text, RIVER_EFORMAT,
                        "field %d \"%.*s\": missing ':' between name and "
                        "type", pos, (int)tok.n, tok.p);
  name = span_trim(tok.p, (size_t)(colon - tok.p));
  type = span_trim(colon + 1, tok.n - (size_t)(colon - tok.p) - 1);
  why = name_problem(name);
  if (why != NULL)
    return schema_error(text, RIVER_EFORMAT,
                        "field %d: bad name \"%.*s\": %s", pos, (int)name.n,
                        name.p, why);
  dup = find_span(s, name);
  if (dup >= 0)
    return schema_error(text, RIVER_EFORMAT,
                        "field %d: duplicate name \"%.*s\" (also field %d)",
                        pos, (int)name.n, name.p, dup + 1);
  snprintf(where, sizeof where, "field %d \"%.*s\"", pos, (int)name.n,
           name.p);
  rc = parse_type(text, where, type, f);
  if (rc != RIVER_SUCCESS)
    return rc;
  f->size = f->count * type_sizes[f->type];
  if (f->size > RIVER__MAX_RECORD - s->record_size)
    return schema_error(text, RIVER_EOVERFLOW,
                        "%s: the record would exceed 1 GiB", where);
  memcpy(f->name, name.p, name.n);
  f->name[name.n] = '\0';
  f->offset = s->record_size;
  s->record_size += f->size;
  s->nfields++;
  return RIVER_SUCCESS;
}

/* Parse the comma-separated fields in text[0, n). */
static int parse_fields(const char *text, size_t n, river_schema *s)
{
  const char *p = text, *end = text + n, *comma;
  struct river__span tok;
  int rc;

  for (;;) {
    comma = memchr(p, ',', (size_t)(end - p));
    tok = span_trim(p, (size_t)((comma ? comma : end) - p));
    if (s->nfields == RIVER_SCHEMA_MAX_FIELDS)
      return schema_error(text, RIVER_EFORMAT,
                          "field %d \"%.*s\" is one too many (at most %d "
                          "fields)", s->nfields + 1, (int)tok.n, tok.p,
                          RIVER_SCHEMA_MAX_FIELDS);
    rc = parse_field(text, tok, s);
    if (rc != RIVER_SUCCESS || comma == NULL)
      return rc;
    p = comma + 1;
  }
}

/* Parse the clause after ';' ("key=NAME", untrimmed) into s->key. */
static int parse_key(const char *text, const char *clause, river_schema *s)
{
  struct river__span all = span_trim(clause, strlen(clause)), rest, name;
  size_t i = 0;
  int is_key, k;

  is_key = all.n >= 3 && memcmp(all.p, "key", 3) == 0;
  rest = is_key ? span_trim(all.p + 3, all.n - 3) : all;
  if (!is_key || rest.n == 0 || rest.p[0] != '=')
    return schema_error(text, RIVER_EFORMAT,
                        "expected \"key=NAME\" after ';', found \"%.*s\"",
                        (int)all.n, all.p);
  rest = span_trim(rest.p + 1, rest.n - 1);
  while (i < rest.n && is_name_char(rest.p[i]))
    i++;
  name.p = rest.p;
  name.n = i;
  if (name.n == 0)
    return schema_error(text, RIVER_EFORMAT,
                        "the key clause \"%.*s\" names no field",
                        (int)all.n, all.p);
  rest = span_trim(rest.p + i, rest.n - i);
  if (rest.n > 0)
    return schema_error(text, RIVER_EFORMAT,
                        "junk \"%.*s\" after the key clause \"key=%.*s\"",
                        (int)rest.n, rest.p, (int)name.n, name.p);
  k = find_span(s, name);
  if (k < 0)
    return schema_error(text, RIVER_EFORMAT,
                        "key \"%.*s\" is not one of the fields",
                        (int)name.n, name.p);
  s->key = k;
  return RIVER_SUCCESS;
}

/* Fill the empty s from text. */
static int parse_text(const char *text, river_schema *s)
{
  const char *semi = strchr(text, ';');
  size_t n = semi ? (size_t)(semi - text) : strlen(text);
  struct river__span key = {"key", 3};
  int rc, k;

  if (span_trim(text, strlen(text)).n == 0)
    return schema_error(text, RIVER_EFORMAT, "the text is empty");
  rc = parse_fields(text, n, s);
  if (rc != RIVER_SUCCESS)
    return rc;
  if (semi != NULL)
    return parse_key(text, semi + 1, s);
  k = find_span(s, key);
  s->key = k >= 0 ? k : 0;
  return RIVER_SUCCESS;
}

int river_schema_parse(const char *text, river_schema **out)
{
  river_schema *s;
  int rc;

  if (text == NULL || out == NULL)
    return RIVER_EINVAL;
  s = calloc(1, sizeof *s);
  if (s == NULL)
    return RIVER_ENOMEM;
  rc = parse_text(text, s);
  if (rc != RIVER_SUCCESS)
    goto fail;
  *out = s;
  return RIVER_SUCCESS;

fail:
  free(s);
  return rc;
}

int river_schema_create_default(river_schema **out)
{
  return river_schema_parse(RIVER_SCHEMA_DEFAULT, out);
}

int river_schema_clone(const river_schema *s, river_schema **out)
{
  river_schema *c;

  if (s == NULL || out == NULL)
    return RIVER_EINVAL;
  c = malloc(sizeof *c);
  if (c == NULL)
    return RIVER_ENOMEM;
  memcpy(c, s, sizeof *c);
  *out = c;
  return RIVER_SUCCESS;
}

void river_schema_destroy(river_schema *s)
{
  free(s);
}

/* ----------------------------------------------------------- queries */

int river_schema_record_size(const river_schema *s, size_t *size)
{
  if (s == NULL || size == NULL)
    return RIVER_EINVAL;
  *size = s->record_size;
  return RIVER_SUCCESS;
}

int river_schema_nfields(const river_schema *s, int *n)
{
  if (s == NULL || n == NULL)
    return RIVER_EINVAL;
  *n = s->nfields;
  return RIVER_SUCCESS;
}

int river_schema_field(const river_schema *s, int i, const char **name,
                       river_type *type, size_t *count, size_t *offset)
{
  const struct river__field *f;

  if (s == NULL || i < 0 || i >= s->nfields)
    return RIVER_EINVAL;
  f = &s->field[i];
  if (name != NULL)
    *name = f->name;
  if (type != NULL)
    *type = f->type;
  if (count != NULL)
    *count = f->count;
  if (offset != NULL)
    *offset = f->offset;
  return RIVER_SUCCESS;
}

int river_schema_key(const river_schema *s, int *field, size_t *offset,
                     size_t *size)
{
  if (s == NULL)
    return RIVER_EINVAL;
  if (field != NULL)
    *field = s->key;
  if (offset != NULL)
    *offset = s->field[s->key].offset;
  if (size != NULL)
    *size = s->field[s->key].size;
  return RIVER_SUCCESS;
}

int river_schema_find(const river_schema *s, const char *name, int *field)
{
  int i;

  if (s == NULL || name == NULL || field == NULL)
    return RIVER_EINVAL;
  for (i = 0; i < s->nfields; i++) {
    if (strcmp(s->field[i].name, name) == 0) {
      *field = i;
      return RIVER_SUCCESS;
    }
  }
  return RIVER_ENOTFOUND;
}

int river_schema_format(const river_schema *s, char *buf, size_t *len)
{
  char text[RIVER__MAX_TEXT];
  const struct river__field *f;
  size_t n = 0;
  int i;

  if (s == NULL || buf == NULL || len == NULL)
    return RIVER_EINVAL;
  for (i = 0; i < s->nfields; i++) {
    f = &s->field[i];
    n += (size_t)snprintf(text + n, sizeof text - n, "%s%s:%s",
                          i ? "," : "", f->name, type_names[f->type]);
    if (f->type == RIVER_TYPE_CHAR || f->type == RIVER_TYPE_BYTES)
      n += (size_t)snprintf(text + n, sizeof text - n, "[%zu]", f->count);
  }
  snprintf(text + n, sizeof text - n, ";key=%s", s->field[s->key].name);
  return river__copy_out(text, buf, len);
}

int river_schema_equal(const river_schema *a, const river_schema *b,
                       int *equal)
{
  int i, same;

  if (a == NULL || b == NULL || equal == NULL)
    return RIVER_EINVAL;
  same = a->nfields == b->nfields && a->key == b->key;
  for (i = 0; same && i < a->nfields; i++)
    same = strcmp(a->field[i].name, b->field[i].name) == 0
           && a->field[i].type == b->field[i].type
           && a->field[i].count == b->field[i].count;
  *equal = same;
  return RIVER_SUCCESS;
}

/* -------------------------------------------------------- comparison */

#define RIVER__CMP(x, y) (((x) > (y)) - ((x) < (y)))

/* Floats in total order: NaNs equal each other and follow everything. */
static int cmp_double(double x, double y)
{
  int xn = isnan(x), yn = isnan(y);

  if (xn || yn)
    return (xn != 0) - (yn != 0);
  return RIVER__CMP(x, y);
}

#define RIVER__LOAD_CMP(ctype, a, b, cmp)                                  \
  do {                                                                     \
    ctype x_, y_;                                                          \
    memcpy(&x_, (a), sizeof x_);                                           \
    memcpy(&y_, (b), sizeof y_);                                           \
    cmp;                                                                   \
  } while (0)

/* Compare the key fields at pa and pb (each k->size bytes). */
static int key_cmp_at(const struct river__field *k,
                      const unsigned char *pa, const unsigned char *pb)
{
  int r = 0;

  switch (k->type) {
  case RIVER_TYPE_INT32:
    RIVER__LOAD_CMP(int32_t, pa, pb, r = RIVER__CMP(x_, y_));
    break;
  case RIVER_TYPE_INT64:
    RIVER__LOAD_CMP(int64_t, pa, pb, r = RIVER__CMP(x_, y_));
    break;
  case RIVER_TYPE_UINT32:
    RIVER__LOAD_CMP(uint32_t, pa, pb, r = RIVER__CMP(x_, y_));
    break;
  case RIVER_TYPE_UINT64:
    RIVER__LOAD_CMP(uint64_t, pa, pb, r = RIVER__CMP(x_, y_));
    break;
  case RIVER_TYPE_FLOAT32:
    RIVER__LOAD_CMP(float, pa, pb, r = cmp_double(x_, y_));
    break;
  case RIVER_TYPE_FLOAT64:
    RIVER__LOAD_CMP(double, pa, pb, r = cmp_double(x_, y_));
    break;
  case RIVER_TYPE_CHAR:
  case RIVER_TYPE_BYTES:
    r = memcmp(pa, pb, k->size);
    break;
  }
  return r;
}

int river_schema_compare(const river_schema *s, const void *a, const void *b,
                         int *cmp)
{
  const struct river__field *k;

  if (s == NULL || a == NULL || b == NULL || cmp == NULL)
    return RIVER_EINVAL;
  k = &s->field[s->key];
  *cmp = key_cmp_at(k, (const unsigned char *)a + k->offset,
                    (const unsigned char *)b + k->offset);
  return RIVER_SUCCESS;
}

int river_schema_compare_keys(const river_schema *s, const void *ka,
                              const void *kb, int *cmp)
{
  if (s == NULL || ka == NULL || kb == NULL || cmp == NULL)
    return RIVER_EINVAL;
  *cmp = key_cmp_at(&s->field[s->key], ka, kb);
  return RIVER_SUCCESS;
}
