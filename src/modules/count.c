/*
 * count.c - sinks. Module `count` counts the records of its inputs and
 * their order-independent content digest (modules.h), prints one line
 * per instance and, with `file`, writes it to FILE.INSTANCE, for tests
 * and validation. Module `null` reads and discards.
 */
#include "modules.h"

#include <inttypes.h>
#include <stdio.h>

void river__digest_add(struct river__digest *d, const void *records,
                       size_t n, size_t record_size)
{
  const unsigned char *r = records;
  uint32_t crc;
  size_t i;

  for (i = 0; i < n; i++, r += record_size) {
    crc = 0;
    river_crc32c(r, record_size, &crc);
    d->sum += crc;
    d->xor_ ^= river_hash64(crc + (uint64_t)record_size);
  }
  d->records += n;
}

/* Write the digest line to FILE.INSTANCE. */
static int write_digest(river_ctx *ctx, const char *file, int inst,
                        const char *line)
{
  char path[4096];
  FILE *f;

  snprintf(path, sizeof path, "%s.%d", file, inst);
  f = fopen(path, "w");
  if (f == NULL || fputs(line, f) == EOF || fclose(f) != 0) {
    river__error("stage %s: cannot write %s", river_ctx_stage(ctx), path);
    return RIVER_EIO;
  }
  return RIVER_SUCCESS;
}

static int count(river_ctx *ctx)
{
  struct river__digest d = {0, 0, 0};
  const river_schema *s;
  const void *recs;
  const char *file;
  char line[256];
  size_t n, rs = 0;
  int i, inst, rc;

  river_arg_str(ctx, "file", &file);
  river_ctx_instance(ctx, &inst, NULL);
  while ((rc = river_select(ctx, &i)) == RIVER_SUCCESS) {
    rc = river_try_get(ctx, i, &recs, &n);
    if (rc == RIVER_EOS)
      continue;
    if (rc != RIVER_SUCCESS)
      return rc;
    river_input_schema(ctx, i, &s);
    river_schema_record_size(s, &rs);
    river__digest_add(&d, recs, n, rs);
  }
  if (rc != RIVER_EOS)
    return rc;
  snprintf(line, sizeof line, "%s %d %" PRIu64 " %016" PRIx64 " %016" PRIx64
           "\n", river_ctx_stage(ctx), inst, d.records, d.sum, d.xor_);
  fputs(line, stdout);
  fflush(stdout);
  return file[0] ? write_digest(ctx, file, inst, line) : RIVER_SUCCESS;
}

static int null_sink(river_ctx *ctx)
{
  const void *recs;
  size_t n;
  int i, rc;

  while ((rc = river_select(ctx, &i)) == RIVER_SUCCESS) {
    rc = river_try_get(ctx, i, &recs, &n);
    if (rc != RIVER_SUCCESS && rc != RIVER_EOS)
      return rc;
  }
  return rc == RIVER_EOS ? RIVER_SUCCESS : rc;
}

void river__module_count(void)
{
  river_module_decl d = RIVER_MODULE_DECL_INIT;

  d.min_inputs = 1;
  d.max_inputs = -1;
  d.shares_rank = 1;
  d.args = "file:str=";
  d.doc = "count records and their content digest: STAGE INSTANCE RECORDS "
          "SUM XOR, printed and written to FILE.INSTANCE";
  river_module_register("count", count, &d, NULL);
}

void river__module_null(void)
{
  river_module_decl d = RIVER_MODULE_DECL_INIT;

  d.min_inputs = 1;
  d.max_inputs = -1;
  d.shares_rank = 1;
  d.doc = "read and discard";
  river_module_register("null", null_sink, &d, NULL);
}
