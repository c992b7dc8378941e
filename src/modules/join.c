/*
 * join.c - module `join`: an in-memory hash join of input 0 (R) and
 * input 1 (S) on a key field named `key` in both. Input `build` (0 or 1)
 * is read whole into a hash table (chained by record index, so duplicate
 * keys are kept), then the other input is streamed through it: each
 * probe record meets every build record with an equal key, and each such
 * pair is one output record, R's fields followed by S's fields other than
 * the key (an inner join; S fields whose names R has too get "_s"
 * appended). Keys are equal when their stored bytes are (the exchange's
 * hash partitioning places by the same bytes); the key must have the same
 * type and size in R and S, which the flow's check verifies naming the
 * stage's file:line.
 *
 * In the River join (flows/join.yaml) both inputs come hash-partitioned
 * by the key through exchange edges, so instance i joins key bucket i;
 * in the replicated join (flows/join_replicated.yaml) the build input is
 * a broadcast edge (every instance holds all of it) and the probe input a
 * DQ, so a slow instance gets fewer probe records. `memory` caps the
 * build side (the records plus the table, record_size + 20 bytes a
 * record at most): over it the instance fails naming the stage.
 */
#include "modules.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_REC UINT32_MAX   /* the end of a chain */

/* Where the key is in R's and S's records, and S's other bytes. */
struct layout {
  size_t rsize, ssize, ksize;  /* record sizes, key bytes */
  size_t roff, soff;           /* the key's offsets */
};

/* The build side: its records and a chained hash table over them. */
struct table {
  unsigned char *recs;
  size_t n, cap;               /* records */
  uint32_t *head, *next;       /* nbuckets heads; n links */
  int shift;                   /* 64 - log2(nbuckets): a key's bucket is
                                  its hash's top bits (the exchange that
                                  brought it placed by the low ones) */
};

static uint64_t key_hash(const unsigned char *k, size_t size)
{
  uint64_t h = 0, w;
  size_t i, m;

  for (i = 0; i < size; i += 8) {
    m = size - i < 8 ? size - i : 8;
    w = 0;
    memcpy(&w, k + i, m);
    h = river_hash64(h ^ w ^ (uint64_t)i);
  }
  return h;
}

/* The key field `name` of schema s: its offset, size and type. */
static int key_field(const river_schema *s, const char *name, size_t *off,
                     size_t *size, int *type)
{
  size_t count = 1;
  river_type t = RIVER_TYPE_INT32;
  int f;

  if (river_schema_find(s, name, &f) != RIVER_SUCCESS)
    return RIVER_ENOTFOUND;
  river_schema_field(s, f, NULL, &t, &count, off);
  *type = (int)t;
  switch (*type) {
  case RIVER_TYPE_INT32: case RIVER_TYPE_UINT32: case RIVER_TYPE_FLOAT32:
    *size = 4; break;
  case RIVER_TYPE_INT64: case RIVER_TYPE_UINT64: case RIVER_TYPE_FLOAT64:
    *size = 8; break;
  default:
    *size = count;
  }
  return RIVER_SUCCESS;
}

/* "char[10]", "uint64", ... for messages. */
static void type_text(int type, size_t size, char *buf, size_t len)
{
  if (type == RIVER_TYPE_CHAR || type == RIVER_TYPE_BYTES)
    snprintf(buf, len, "%s[%zu]", river_type_name(type), size);
  else
    snprintf(buf, len, "%s", river_type_name(type));
}

/* The layout of R and S joined on `key`; RIVER_EINVAL, logged
 * (naming the stage and its origin), for a key missing or of different
 * types. */
static int join_layout(river_ctx *ctx, const river_schema *r,
                       const river_schema *s, struct layout *l)
{
  const char *key = "";
  size_t rk = 0, sk = 0;
  int rt = 0, st = 0, i;
  char a[64], b[64];

  river_arg_str(ctx, "key", &key);
  for (i = 0; i < 2; i++)
    if (key_field(i ? s : r, key, i ? &l->soff : &l->roff, i ? &sk : &rk,
                  i ? &st : &rt) != RIVER_SUCCESS) {
      river_ctx_log(ctx, RIVER_LOG_ERROR, "join: %s (input %d) has no field "
                    "'%s'", i ? "S" : "R", i, key);
      return RIVER_EINVAL;
    }
  if (rt != st || rk != sk) {
    type_text(rt, rk, a, sizeof a);
    type_text(st, sk, b, sizeof b);
    river_ctx_log(ctx, RIVER_LOG_ERROR, "join: key '%s' is %s in R (input 0) "
                  "but %s in S (input 1): keys must have the same type", key, a,
                  b);
    return RIVER_EINVAL;
  }
  l->ksize = rk;
  river_schema_record_size(r, &l->rsize);
  river_schema_record_size(s, &l->ssize);
  return RIVER_SUCCESS;
}

/* Append field i of s to text, named `name`. */
static int add_field(char *text, size_t len, const river_schema *s, int i,
                     const char *name)
{
  size_t count = 1, used = strlen(text);
  river_type type = RIVER_TYPE_INT32;
  int k;

  river_schema_field(s, i, NULL, &type, &count, NULL);
  if (type == RIVER_TYPE_CHAR || type == RIVER_TYPE_BYTES)
    k = snprintf(text + used, len - used, "%s%s:%s[%zu]", used ? "," : "",
                 name, river_type_name(type), count);
  else
    k = snprintf(text + used, len - used, "%s%s:%s", used ? "," : "", name,
                 river_type_name(type));
  return k < 0 || (size_t)k >= len - used ? RIVER_EOVERFLOW : RIVER_SUCCESS;
}

/* Is `name` a field of the schema text so far ("a:T,b:T,...")? */
static int taken(const char *text, const char *name)
{
  size_t len = strlen(name);
  const char *p = text;

  while (*p) {
    if (strncmp(p, name, len) == 0 && p[len] == ':')
      return 1;
    p = strchr(p, ',');
    if (p == NULL)
      break;
    p++;
  }
  return 0;
}

/* The output schema: R's fields, then S's but the key (renamed NAME_s if
 * the output has a field NAME already; a clash after that is refused),
 * keyed on the join key. */
static int join_schema(river_ctx *ctx, int output, river_schema **out)
{
  const river_schema *r = NULL, *s = NULL;
  const char *key = "", *name;
  char text[8192] = "", renamed[64];
  struct layout l;
  int nr = 0, ns = 0, i, f, rc;
  int nout;
  uint64_t build = 0;

  (void)output;
  river_input_schema(ctx, 0, &r);
  river_input_schema(ctx, 1, &s);
  river_arg_str(ctx, "key", &key);
  river_arg_uint(ctx, "build", &build);
  if (build > 1) {
    river_ctx_log(ctx, RIVER_LOG_ERROR, "join: argument 'build' is %" PRIu64
                  ": "
                  "0 (R) or 1 (S)", build);
    return RIVER_EINVAL;
  }
  if ((rc = join_layout(ctx, r, s, &l)) != RIVER_SUCCESS)
    return rc;
  river_schema_nfields(r, &nr);
  river_schema_nfields(s, &ns);
  nout = nr;
  for (i = 0; rc == RIVER_SUCCESS && i < nr; i++) {
    river_schema_field(r, i, &name, NULL, NULL, NULL);
    rc = add_field(text, sizeof text, r, i, name);
  }
  for (i = 0; rc == RIVER_SUCCESS && i < ns; i++) {
    river_schema_field(s, i, &name, NULL, NULL, NULL);
    if (strcmp(name, key) == 0)
      continue;
    if (taken(text, name)) {   /* R has it (or an S field took it) */
      snprintf(renamed, sizeof renamed, "%.29s_s", name);
      if (taken(text, renamed) || river_schema_find(s, renamed, &f)
                                      == RIVER_SUCCESS) {
        river_ctx_log(ctx, RIVER_LOG_ERROR, "join: S's field '%s' clashes "
                      "with a field of the output, and so does '%s': rename "
                      "one", name, renamed);
        return RIVER_EINVAL;
      }
      name = renamed;
    }
    if (++nout > RIVER_SCHEMA_MAX_FIELDS) {
      river_ctx_log(ctx, RIVER_LOG_ERROR, "join: R's fields and S's but the "
                    "key are more than %d", RIVER_SCHEMA_MAX_FIELDS);
      return RIVER_EINVAL;
    }
    rc = add_field(text, sizeof text, s, i, name);
  }
  if (rc == RIVER_SUCCESS) {
    size_t used = strlen(text);
    if ((size_t)snprintf(text + used, sizeof text - used, ";key=%s", key)
        >= sizeof text - used)
      rc = RIVER_EOVERFLOW;
  }
  if (rc == RIVER_EOVERFLOW)
    river_ctx_log(ctx, RIVER_LOG_ERROR, "join: the joined schema is too long");
  return rc == RIVER_SUCCESS ? river_schema_parse(text, out) : rc;
}

/* Bytes a build record may take at most: itself, its link, and up to
 * four bucket heads (the buckets are the next power of two of twice the
 * records). */
#define PER_RECORD(rs) ((rs) + 5 * sizeof(uint32_t))

/* Read input `in` whole into t (records of rs bytes), its array and
 * table within cap bytes (0: no cap): the array grows by doubling, but
 * never past what the cap leaves room for. */
static int read_build(river_ctx *ctx, int in, size_t rs, uint64_t cap,
                      struct table *t)
{
  uint64_t most = cap > 0 ? cap / PER_RECORD(rs) : UINT64_MAX;
  const void *recs;
  size_t n;
  int rc;

  if (most > NO_REC - 1)
    most = NO_REC - 1;   /* the table's links are 32-bit */
  while ((rc = river_get(ctx, in, &recs, &n)) == RIVER_SUCCESS) {
    if ((uint64_t)(t->n + n) > most) {
      if (most == NO_REC - 1 && (cap == 0 || cap / PER_RECORD(rs) >= most))
        river_ctx_log(ctx, RIVER_LOG_ERROR, "join: the build input (input "
                      "%d) has more than %u records on this instance: give "
                      "the join more instances", in, NO_REC - 1);
      else
        river_ctx_log(ctx, RIVER_LOG_ERROR, "join: the build input (input "
                      "%d) does not fit in memory=%" PRIu64 " bytes (%zu "
                      "records of %zu bytes read, %zu bytes each with the "
                      "hash table); give it more memory or more instances, "
                      "or build on the smaller relation", in, cap, t->n + n, rs,
                      (size_t)PER_RECORD(rs));
      return RIVER_ENOMEM;
    }
    if (t->n + n > t->cap) {
      size_t c = t->cap ? t->cap : 4096;
      unsigned char *p;
      while (c < t->n + n)
        c *= 2;
      if ((uint64_t)c > most)
        c = (size_t)most;
      if ((p = realloc(t->recs, c * rs)) == NULL)
        return RIVER_ENOMEM;
      t->recs = p;
      t->cap = c;
    }
    memcpy(t->recs + t->n * rs, recs, n * rs);
    t->n += n;
  }
  return rc == RIVER_EOS ? RIVER_SUCCESS : rc;
}

/* Chain every build record into its key's bucket. */
static int build_table(struct table *t, size_t rs, size_t koff,
                       size_t ksize)
{
  uint64_t nb = 16, h;
  size_t i;

  t->shift = 60;
  while (nb < 2 * (uint64_t)t->n) {
    nb *= 2;
    t->shift--;
  }
  t->head = malloc(nb * sizeof *t->head);
  t->next = malloc((t->n + 1) * sizeof *t->next);
  if (t->head == NULL || t->next == NULL)
    return RIVER_ENOMEM;
  memset(t->head, 0xff, nb * sizeof *t->head);   /* NO_REC */
  for (i = t->n; i-- > 0;) {   /* chains in record order */
    h = key_hash(t->recs + i * rs + koff, ksize) >> t->shift;
    t->next[i] = t->head[h];
    t->head[h] = (uint32_t)i;
  }
  return RIVER_SUCCESS;
}

/* out <- R record r, then S record s without its key. */
static void joined(unsigned char *out, const unsigned char *r,
                   const unsigned char *s, const struct layout *l)
{
  memcpy(out, r, l->rsize);
  out += l->rsize;
  memcpy(out, s, l->soff);
  memcpy(out + l->soff, s + l->soff + l->ksize,
         l->ssize - l->soff - l->ksize);
}

/* Stream input `in` through the table; each match goes to output 0. */
static int probe(river_ctx *ctx, int in, const struct table *t,
                 const struct layout *l, int build)
{
  size_t brs = build ? l->ssize : l->rsize, prs = build ? l->rsize : l->ssize;
  size_t bkoff = build ? l->soff : l->roff, pkoff = build ? l->roff : l->soff;
  size_t ors = l->rsize + l->ssize - l->ksize, n, i, room = 0, used = 0;
  const unsigned char *p, *b;
  unsigned char *out = NULL;
  const void *recs;
  void *buf;
  uint32_t j;
  int rc, wrc = RIVER_SUCCESS;

  while ((rc = river_get(ctx, in, &recs, &n)) == RIVER_SUCCESS) {
    for (i = 0, p = recs; wrc == RIVER_SUCCESS && i < n; i++, p += prs) {
      if (t->n == 0)
        break;
      j = t->head[key_hash(p + pkoff, l->ksize) >> t->shift];
      for (; j != NO_REC && wrc == RIVER_SUCCESS; j = t->next[j]) {
        b = t->recs + (size_t)j * brs;
        if (memcmp(b + bkoff, p + pkoff, l->ksize) != 0)
          continue;
        if (used == room) {
          if (used > 0 && (wrc = river_commit(ctx, 0, used)) != RIVER_SUCCESS)
            break;
          if ((wrc = river_reserve(ctx, 0, &buf, &room)) != RIVER_SUCCESS)
            break;
          out = buf;
          used = 0;
        }
        joined(out + used * ors, build ? p : b, build ? b : p, l);
        used++;
      }
    }
    if (wrc != RIVER_SUCCESS)
      return wrc;
  }
  if (rc == RIVER_EOS && used > 0)
    rc = river_commit(ctx, 0, used);
  return rc == RIVER_EOS ? RIVER_SUCCESS : rc;
}

static int join_run(river_ctx *ctx)
{
  const river_schema *r = NULL, *s = NULL;
  struct table t = {NULL, 0, 0, NULL, NULL, 60};
  struct layout l;
  uint64_t cap = 0, build = 0;
  int rc;

  river_input_schema(ctx, 0, &r);
  river_input_schema(ctx, 1, &s);
  river_arg_uint(ctx, "memory", &cap);
  river_arg_uint(ctx, "build", &build);
  rc = join_layout(ctx, r, s, &l);   /* checked already */
  if (rc == RIVER_SUCCESS)
    rc = read_build(ctx, (int)build, build ? l.ssize : l.rsize, cap, &t);
  if (rc == RIVER_SUCCESS
      && (rc = build_table(&t, build ? l.ssize : l.rsize,
                           build ? l.soff : l.roff, l.ksize)) != RIVER_SUCCESS)
    river_ctx_log(ctx, RIVER_LOG_ERROR, "join: out of memory building the "
                  "hash table of %zu records", t.n);
  if (rc == RIVER_SUCCESS)
    rc = probe(ctx, 1 - (int)build, &t, &l, (int)build);
  free(t.recs);
  free(t.head);
  free(t.next);
  return rc;
}

void river__module_join(void)
{
  river_module_decl d = RIVER_MODULE_DECL_INIT;

  d.min_inputs = d.max_inputs = 2;
  d.min_outputs = d.max_outputs = 1;
  d.shares_rank = 1;
  d.args = "key:str,build:uint=1,memory:size=0";
  d.schema = join_schema;
  d.doc = "hash join of input 0 (R) and input 1 (S) on field `key`: input "
          "`build` held in a hash table, the other streamed through it; "
          "output R's fields then S's but the key";
  river_module_register("join", join_run, &d, NULL);
}
