/*
 * gen.c - module `gen`: the records `river gen` writes (gensort rows:
 * 100 bytes, a 10-byte key), `records` of them over all instances,
 * instance i producing rows [records*i/n, records*(i+1)/n) straight into
 * its output's messages (river_reserve/river_commit: no copy).
 */
#include "modules.h"

#include "river/gensort.h"

static int gen_schema(river_ctx *ctx, int output, river_schema **schema)
{
  (void)ctx;
  (void)output;
  return river_schema_create_default(schema);
}

static int gen(river_ctx *ctx)
{
  uint64_t records, seed, first, end;
  int inst, n, skew, ascii, rc;
  unsigned flags;
  void *buf;
  size_t max, k;

  river_arg_uint(ctx, "records", &records);
  river_arg_uint(ctx, "seed", &seed);
  river_arg_bool(ctx, "skew", &skew);
  river_arg_bool(ctx, "ascii", &ascii);
  river_ctx_instance(ctx, &inst, &n);
  flags = (skew ? RIVER_GENSORT_SKEW : 0u) | (ascii ? RIVER_GENSORT_ASCII : 0u);
  first = (uint64_t)((unsigned __int128)records * (unsigned)inst / (unsigned)n);
  end = (uint64_t)((unsigned __int128)records * (unsigned)(inst + 1)
                   / (unsigned)n);
  while (first < end) {
    rc = river_reserve(ctx, 0, &buf, &max);
    if (rc != RIVER_SUCCESS)
      return rc;
    k = end - first < max ? (size_t)(end - first) : max;
    rc = river_gensort_fill(first, k, flags, seed, buf);
    if (rc == RIVER_SUCCESS)
      rc = river_commit(ctx, 0, k);
    if (rc != RIVER_SUCCESS)
      return rc;
    first += k;
  }
  return RIVER_SUCCESS;
}

void river__module_gen(void)
{
  river_module_decl d = RIVER_MODULE_DECL_INIT;

  d.min_outputs = d.max_outputs = 1;
  d.shares_rank = 1;
  d.args = "records:size,seed:uint=0,skew:bool=false,ascii:bool=false";
  d.schema = gen_schema;
  d.doc = "gensort records (as river gen): records, seed, skew, ascii";
  river_module_register("gen", gen, &d, NULL);
}
