/*
 * filter.c - module `filter`: passes the records of input 0 whose field
 * `field` satisfies `OP value` to output 0 and drops the others; OP is
 * == != < <= > >= or prefix. The value is parsed as the field's type:
 * a decimal integer (range-checked) or a float (strtod: also inf, nan)
 * for numbers, compared in the schema's order (NaN equal to NaN and
 * above everything); text for char[N] and bytes[N], with \xHH and \\
 * escapes, at most N bytes, compared as unsigned bytes against the value
 * padded with zero bytes to N (prefix: the field's first bytes are the
 * value). The op and value are checked when the flow is checked. Its
 * stats count the records passed (out) and dropped (in - out).
 */
#include "modules.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum op { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_PREFIX };

struct pred {
  enum op op;
  struct river__key k;         /* the field (as a key: its order) */
  unsigned char val[256];      /* raw value, then normalized */
  unsigned char *norm, *big;   /* normalized value; big: if > 256 */
  size_t len;                  /* prefix: the value's length */
};

static int parse_op(const char *s, enum op *op)
{
  static const char *const names[] = {"==", "!=", "<", "<=", ">", ">=",
                                      "prefix"};
  int i;

  for (i = 0; i < 7; i++)
    if (strcmp(s, names[i]) == 0) {
      *op = (enum op)i;
      return RIVER_SUCCESS;
    }
  return RIVER_EINVAL;
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
      if (sscanf(s + 2, "%2x", &v) != 1 || !s[2] || !s[3]
          || strchr("0123456789abcdefABCDEF", s[3]) == NULL)
        return -1;
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

/* Build the predicate from the stage's arguments; *why says what is
 * wrong on RIVER_EINVAL. */
static int make_pred(river_ctx *ctx, struct pred *p, const char **why)
{
  const char *field, *op, *value;
  const river_schema *s;
  unsigned char *raw;
  int idx, rc;
  long len;

  memset(p, 0, sizeof p[0]);
  river_arg_str(ctx, "field", &field);
  river_arg_str(ctx, "op", &op);
  river_arg_str(ctx, "value", &value);
  river_input_schema(ctx, 0, &s);
  if (river_schema_find(s, field, &idx) != RIVER_SUCCESS
      || river__key_of(s, idx, &p->k) != RIVER_SUCCESS)
    return *why = "no such field in its records", RIVER_EINVAL;
  if (parse_op(op, &p->op) != RIVER_SUCCESS)
    return *why = "op is not one of == != < <= > >= prefix", RIVER_EINVAL;
  p->big = p->k.size > sizeof p->val / 2 ? calloc(2, p->k.size) : NULL;
  if (p->k.size > sizeof p->val / 2 && p->big == NULL)
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
  river__key_norm(p->k.type, p->k.size, raw, p->norm);
  return RIVER_SUCCESS;
}

static int pass(const struct pred *p, const unsigned char *rec,
                unsigned char *tmp)
{
  int c;

  if (p->op == OP_PREFIX)
    return memcmp(rec + p->k.off, p->norm, p->len) == 0;
  river__key_norm(p->k.type, p->k.size, rec + p->k.off, tmp);
  c = memcmp(tmp, p->norm, p->k.size);
  switch (p->op) {
  case OP_EQ: return c == 0;
  case OP_NE: return c != 0;
  case OP_LT: return c < 0;
  case OP_LE: return c <= 0;
  case OP_GT: return c > 0;
  default: return c >= 0;
  }
}

/* Filter one message into output 0, through reserved buffers. */
static int filter_msg(river_ctx *ctx, const struct pred *p,
                      const unsigned char *recs, size_t n, unsigned char *tmp)
{
  size_t rs = p->k.record_size, i, j = 0, max = 0;
  unsigned char *buf = NULL;
  int rc;

  for (i = 0; i < n; i++) {
    if (!pass(p, recs + i * rs, tmp))
      continue;
    if (j == max) {
      if (max > 0 && (rc = river_commit(ctx, 0, j)) != RIVER_SUCCESS)
        return rc;
      if ((rc = river_reserve(ctx, 0, (void **)&buf, &max)) != RIVER_SUCCESS)
        return rc;
      j = 0;
    }
    memcpy(buf + j++ * rs, recs + i * rs, rs);
  }
  return j > 0 ? river_commit(ctx, 0, j) : RIVER_SUCCESS;
}

static int filter(river_ctx *ctx)
{
  struct pred p;
  const char *why = "";
  const void *recs;
  unsigned char *tmp;
  size_t n;
  int rc = make_pred(ctx, &p, &why);

  if (rc != RIVER_SUCCESS) {
    free(p.big);
    return rc;  /* check has said why */
  }
  tmp = malloc(p.k.size + 1);
  rc = tmp == NULL ? RIVER_ENOMEM : RIVER_SUCCESS;
  while (rc == RIVER_SUCCESS
         && (rc = river_get(ctx, 0, &recs, &n)) == RIVER_SUCCESS)
    rc = filter_msg(ctx, &p, recs, n, tmp);
  free(tmp);
  free(p.big);
  return rc == RIVER_EOS ? RIVER_SUCCESS : rc;
}

/* Check the predicate while the flow is checked; output 0 carries input
 * 0's schema. */
static int filter_schema(river_ctx *ctx, int output, river_schema **out)
{
  const river_schema *s;
  const char *why = "";
  struct pred p;
  int rc = make_pred(ctx, &p, &why);

  (void)output;
  free(p.big);
  if (rc == RIVER_EINVAL) {
    const char *field, *op, *value;
    river_arg_str(ctx, "field", &field);
    river_arg_str(ctx, "op", &op);
    river_arg_str(ctx, "value", &value);
    river__flow_log(river__flow_check_level(ctx->flow), ctx->stage->origin,
                    "stage '%s': filter %s '%s' '%s': %s",
                    river_ctx_stage(ctx), field, op, value, why);
  }
  if (rc != RIVER_SUCCESS)
    return rc;
  river_input_schema(ctx, 0, &s);
  return river_schema_clone(s, out);
}

void river__module_filter(void)
{
  river_module_decl d = RIVER_MODULE_DECL_INIT;

  d.min_inputs = d.max_inputs = 1;
  d.min_outputs = d.max_outputs = 1;
  d.shares_rank = 1;
  d.args = "field:field,op:str,value:str";
  d.schema = filter_schema;
  d.doc = "pass the records whose field satisfies OP value (== != < <= > "
          ">= prefix)";
  river_module_register("filter", filter, &d, NULL);
}
