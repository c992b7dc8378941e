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

#include <string.h>

/* The predicate of the stage's arguments; *why says what is wrong on
 * RIVER_EINVAL. river_pred_destroy(*p) in every case. */
static int make_pred(river_ctx *ctx, river_pred **p, const char **why)
{
  const char *field = NULL, *op = NULL, *value = NULL;
  const river_schema *s = NULL;

  river_arg_str(ctx, "field", &field);
  river_arg_str(ctx, "op", &op);
  river_arg_str(ctx, "value", &value);
  river_input_schema(ctx, 0, &s);
  return river_pred_create(s, field, op, value, p, why);
}

/* Filter one message into output 0, through reserved buffers. */
static int filter_msg(river_ctx *ctx, const river_pred *p,
                      const unsigned char *recs, size_t n, size_t rs)
{
  size_t i, j = 0, max = 0;
  unsigned char *buf = NULL;
  int rc;

  for (i = 0; i < n; i++) {
    if (!river_pred_pass(p, recs + i * rs))
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
  river_pred *p = NULL;
  const river_schema *s = NULL;
  const char *why = "";
  const void *recs;
  size_t n, rs = 0;
  int rc = make_pred(ctx, &p, &why);  /* if bad, check has said why */

  river_input_schema(ctx, 0, &s);
  river_schema_record_size(s, &rs);
  while (rc == RIVER_SUCCESS
         && (rc = river_get(ctx, 0, &recs, &n)) == RIVER_SUCCESS)
    rc = filter_msg(ctx, p, recs, n, rs);
  river_pred_destroy(p);
  return rc == RIVER_EOS ? RIVER_SUCCESS : rc;
}

/* Check the predicate while the flow is checked; output 0 carries input
 * 0's schema. */
static int filter_schema(river_ctx *ctx, int output, river_schema **out)
{
  const river_schema *s;
  const char *why = "";
  river_pred *p = NULL;
  int rc = make_pred(ctx, &p, &why);

  (void)output;
  river_pred_destroy(p);
  if (rc == RIVER_EINVAL) {
    const char *field, *op, *value;
    river_arg_str(ctx, "field", &field);
    river_arg_str(ctx, "op", &op);
    river_arg_str(ctx, "value", &value);
    river_ctx_log(ctx, RIVER_LOG_ERROR, "filter %s '%s' '%s': %s", field, op,
                  value, why);
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
