/*
 * count.c - sinks. Module `count` counts the records of its inputs and
 * their order-independent content digest (modules.h), prints one line
 * per instance and, with `file`, writes it to FILE.INSTANCE (published
 * when the flow has succeeded, river_ctx_at_end), for tests
 * and validation; with `sorted`, it also fails, naming the first record
 * out of key order, if an input's records are not in key order. Module
 * `null` reads and discards.
 */
#include "modules.h"
#include "river/outfile.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The end step of a digest file: published if the flow succeeded. */
static int end_digest(void *arg, int outcome)
{
  if (outcome != RIVER_SUCCESS) {
    river_outfile_discard(arg);
    return RIVER_SUCCESS;
  }
  return river_outfile_publish(arg);
}

/* Write a line to FILE.INSTANCE: like every file a module writes, under
 * a temporary name, renamed into place only if the whole flow succeeds
 * (a digest, for tests: not fsynced). */
static int write_digest(river_ctx *ctx, const char *file, int inst,
                        const char *line)
{
  river_outfile *of = NULL;
  char path[4096];
  size_t n = strlen(line);
  int fd = -1, rc;

  snprintf(path, sizeof path, "%s.%d", file, inst);
  rc = river_outfile_create(path, NULL, RIVER_OUTFILE_NOSYNC, &of);
  if (rc == RIVER_SUCCESS) {
    river_outfile_fd(of, &fd);
    if (write(fd, line, n) != (ssize_t)n)
      rc = RIVER_EIO;
  }
  if (rc == RIVER_SUCCESS)
    rc = river_ctx_at_end(ctx, end_digest, of);
  if (rc != RIVER_SUCCESS) {
    river_ctx_log(ctx, RIVER_LOG_ERROR, "cannot write %s", path);
    river_outfile_discard(of);
  }
  return rc;
}

/* With sorted=true: each input's records in key order. Per input: its
 * key k[i], the normalized key of its last record at last + i * kmax,
 * and seen, its records so far; tmp is room for one key. */
struct order {
  unsigned char *last, *tmp, *first;  /* first: input 0's first key */
  uint64_t *seen;
  river_key *k;
  size_t kmax;
};

static int order_init(river_ctx *ctx, struct order *o)
{
  const river_schema *s;
  int i, nin;

  river_ctx_ports(ctx, &nin, NULL);
  o->k = calloc((size_t)nin + 1, sizeof *o->k);
  o->seen = calloc((size_t)nin + 1, sizeof *o->seen);
  if (o->k == NULL || o->seen == NULL)
    return RIVER_ENOMEM;
  for (i = 0; i < nin; i++) {
    river_input_schema(ctx, i, &s);
    river_key_of(s, -1, &o->k[i]);
    if (o->k[i].size > o->kmax)
      o->kmax = o->k[i].size;
  }
  o->last = malloc(((size_t)nin + 1) * o->kmax);
  o->tmp = malloc(o->kmax + 1);
  o->first = malloc(o->kmax + 1);
  return o->last == NULL || o->tmp == NULL || o->first == NULL
             ? RIVER_ENOMEM : RIVER_SUCCESS;
}

/* Check that n records of input i continue it in key order. */
static int order_check(river_ctx *ctx, struct order *o, int i,
                       const unsigned char *recs, size_t n)
{
  const river_key *k = &o->k[i];
  unsigned char *last = o->last + (size_t)i * o->kmax;
  size_t j;

  for (j = 0; j < n; j++, o->seen[i]++) {
    river_key_norm(k, recs + j * k->record_size + k->offset,
                   o->tmp);
    if (o->seen[i] > 0 && memcmp(last, o->tmp, k->size) > 0) {
      river_ctx_log(ctx, RIVER_LOG_ERROR, "input %d is not in key order: "
                    "record %" PRIu64 " (counted from 0) is below the one "
                    "before it", i, o->seen[i]);
      return RIVER_ECORRUPT;
    }
    memcpy(last, o->tmp, k->size);
    if (i == 0 && o->seen[0] == 0)
      memcpy(o->first, o->tmp, k->size);
  }
  return RIVER_SUCCESS;
}

/* keys=PATH: write PATH.INSTANCE: input 0's first and last key
 * (normalized, in hex), or "- -" if it had no records. */
static int write_keys(river_ctx *ctx, const char *path, int inst,
                      const struct order *o)
{
  char line[4096], *p = line;
  size_t j, n = o->k[0].size;
  int w;

  if (o->seen[0] == 0 || 4 * n + 3 > sizeof line)
    strcpy(line, "- -\n");
  else {
    for (w = 0; w < 2; w++) {
      const unsigned char *key = w == 0 ? o->first : o->last;
      for (j = 0; j < n; j++, p += 2)
        snprintf(p, 3, "%02x", key[j]);
      *p++ = w == 0 ? ' ' : '\n';
    }
    *p = '\0';
  }
  return write_digest(ctx, path, inst, line);
}

/* Count (and with o, check the order of) every input. */
static int count_inputs(river_ctx *ctx, struct river__digest *d,
                        struct order *o)
{
  const river_schema *s;
  const void *recs;
  size_t n, rs = 0;
  int i, rc;

  while ((rc = river_select(ctx, &i)) == RIVER_SUCCESS) {
    rc = river_try_get(ctx, i, &recs, &n);
    if (rc == RIVER_EOS)
      continue;
    if (rc != RIVER_SUCCESS)
      return rc;
    river_input_schema(ctx, i, &s);
    river_schema_record_size(s, &rs);
    river__digest_add(d, recs, n, rs);
    if (o != NULL && (rc = order_check(ctx, o, i, recs, n)) != RIVER_SUCCESS)
      return rc;
  }
  return rc;
}

static int count(river_ctx *ctx)
{
  struct river__digest d = {0, 0, 0};
  struct order o;
  const char *file, *keys;
  char line[256];
  int inst, sorted, rc = RIVER_SUCCESS;

  river_arg_str(ctx, "file", &file);
  river_arg_str(ctx, "keys", &keys);
  river_arg_bool(ctx, "sorted", &sorted);
  river_ctx_instance(ctx, &inst, NULL);
  memset(&o, 0, sizeof o);
  if (sorted)
    rc = order_init(ctx, &o);
  if (rc == RIVER_SUCCESS)
    rc = count_inputs(ctx, &d, sorted ? &o : NULL);
  if (rc == RIVER_EOS && sorted && keys[0])
    rc = write_keys(ctx, keys, inst, &o) == RIVER_SUCCESS ? RIVER_EOS
                                                          : RIVER_EIO;
  free(o.last);
  free(o.first);
  free(o.tmp);
  free(o.seen);
  free(o.k);
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
  d.args = "file:str=,sorted:bool=false,keys:str=";
  d.doc = "count records and their content digest: STAGE INSTANCE RECORDS "
          "SUM XOR, printed and written to FILE.INSTANCE; sorted: fail if "
          "an input is not in key order; keys (with sorted): input 0's first "
          "and last key to KEYS.INSTANCE";
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
