/*
 * test_join_mpi - the hash join (module join, flows/join.yaml and
 * flows/join_replicated.yaml) against a reference join computed here on
 * one rank (a nested loop over every R and S record), on 1..4 ranks:
 *
 *   dups       R (k:uint32, a:uint64) and S (x:char[4], k:uint32,
 *              a:int32): different schemas, the key at different
 *              offsets, S's `a` renamed a_s; keys from a small range, so
 *              duplicates on both sides and keys on one side only
 *   nomatch    R's keys even, S's odd: OUT is empty
 *   empty      S has no records: OUT is empty
 *   chars      a char[8] key, a float64 field
 *
 * Each case runs the River join building on R and on S, the static
 * baseline, and the replicated join; OUT's schema must be R's fields then
 * S's but the key, and its records (sorted) the reference's (sorted),
 * byte for byte.
 */
#define _GNU_SOURCE
#include <river.h>
#include <river/flow.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

#ifndef FLOWS_DIR
#define FLOWS_DIR "flows"
#endif

static char root[1024];

struct relation {
  const char *name, *schema;
  uint64_t n;                    /* records */
  void (*make)(uint64_t i, unsigned char *rec);
};

struct jcase {
  const char *name;
  struct relation r, s;
  const char *key, *out_schema;
};

/* --------------------------------------------------------- the records */

static void dups_r(uint64_t i, unsigned char *rec)
{
  uint32_t k = (uint32_t)(river_hash64(i + 1) % 40);   /* 0..39 */
  uint64_t a = i * 1000 + 7;

  memcpy(rec, &k, 4);
  memcpy(rec + 4, &a, 8);
}

static void dups_s(uint64_t i, unsigned char *rec)
{
  uint32_t k = (uint32_t)(river_hash64(i + 77) % 50) + 20;  /* 20..69 */
  int32_t a = -(int32_t)i;

  memcpy(rec, "s", 1);
  memset(rec + 1, 'a' + (int)(i % 26), 3);
  memcpy(rec + 4, &k, 4);
  memcpy(rec + 8, &a, 4);
}

static void even_r(uint64_t i, unsigned char *rec)
{
  uint32_t k = (uint32_t)(2 * i);
  uint64_t a = i;

  memcpy(rec, &k, 4);
  memcpy(rec + 4, &a, 8);
}

static void odd_s(uint64_t i, unsigned char *rec)
{
  uint32_t k = (uint32_t)(2 * i + 1);
  int32_t a = (int32_t)i;

  memcpy(rec, "odd!", 4);
  memcpy(rec + 4, &k, 4);
  memcpy(rec + 8, &a, 4);
}

static void chars_r(uint64_t i, unsigned char *rec)
{
  uint32_t v = (uint32_t)i;

  memset(rec, 0, 8);
  snprintf((char *)rec, 8, "n%u", (unsigned)(i % 23));
  memcpy(rec + 8, &v, 4);
}

static void chars_s(uint64_t i, unsigned char *rec)
{
  double w = (double)i / 4;

  memset(rec, 0, 8);
  snprintf((char *)rec, 8, "n%u", (unsigned)(i % 31));
  memcpy(rec + 8, &w, 8);
}

#define RS_DUP "k:uint32,a:uint64"
#define SS_DUP "x:char[4],k:uint32,a:int32"
#define RS_CH "name:char[8],v:uint32;key=name"
#define SS_CH "name:char[8],w:float64"

static const struct jcase cases[] = {
  {"dups", {"r_dups", RS_DUP, 300, dups_r}, {"s_dups", SS_DUP, 200, dups_s},
   "k", "k:uint32,a:uint64,x:char[4],a_s:int32;key=k"},
  {"nomatch", {"r_even", RS_DUP, 120, even_r},
   {"s_odd", SS_DUP, 90, odd_s}, "k",
   "k:uint32,a:uint64,x:char[4],a_s:int32;key=k"},
  {"empty", {"r_any", RS_DUP, 50, dups_r}, {"s_none", SS_DUP, 0, dups_s},
   "k", "k:uint32,a:uint64,x:char[4],a_s:int32;key=k"},
  {"chars", {"r_ch", RS_CH, 150, chars_r}, {"s_ch", SS_CH, 100, chars_s},
   "name", "name:char[8],v:uint32,w:float64;key=name"},
};

/* ------------------------------------------------------- collections */

/* Write relation x over comm: rank r its slice of the records. */
static void write_rel(MPI_Comm comm, const struct relation *x)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  river_schema *s = NULL;
  river_pcoll *pc = NULL;
  unsigned char rec[64];
  size_t rs = 0;
  uint64_t i;
  int r, n;

  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &n);
  o.root = root;
  MT_CHECK_RC(river_schema_parse(x->schema, &s), RIVER_SUCCESS);
  river_schema_record_size(s, &rs);
  MT_CHECK_RC(river_pcoll_create(comm, x->name, s, &o, &pc), RIVER_SUCCESS);
  for (i = x->n * (uint64_t)r / (uint64_t)n;
       pc != NULL && i < x->n * (uint64_t)(r + 1) / (uint64_t)n; i++) {
    memset(rec, 0, sizeof rec);
    x->make(i, rec);
    MT_CHECK_RC(river_pcoll_write(pc, rec, 1), RIVER_SUCCESS);
  }
  if (pc != NULL)
    MT_CHECK_RC(river_pcoll_commit(pc), RIVER_SUCCESS);
  river_schema_destroy(s);
}

/* Every record of collection name, read by rank 0 of comm (others get
 * NULL); *n its count, *rs its size, schema text into text. */
static unsigned char *read_all(MPI_Comm comm, const char *name, size_t *n,
                               size_t *rs, char *text, size_t tlen)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  river_pcoll *pc = NULL;
  river_pcoll_info info;
  const river_schema *s;
  unsigned char *all = NULL;
  int r, p;

  *n = 0;
  o.root = root;
  MPI_Comm_rank(comm, &r);
  MT_CHECK_RC(river_pcoll_open(comm, name, &o, &pc), RIVER_SUCCESS);
  if (pc == NULL)
    return NULL;
  river_pcoll_info_get(pc, &info);
  river_pcoll_schema(pc, &s);
  river_schema_format(s, text, &tlen);
  *rs = info.record_size;
  if (r == 0) {
    all = malloc(info.nrecords * info.record_size + 1);
    for (p = 0; all != NULL && p < info.npartitions; p++) {
      uint64_t b, nb = 0;
      size_t rpb, got;
      river_pcoll_blocks(pc, p, &rpb, &nb);
      for (b = 0; b < nb; b++) {
        MT_CHECK_RC(river_pcoll_read_block(pc, p, b, all + *n * *rs,
                                           info.block_size, &got),
                    RIVER_SUCCESS);
        *n += got;
      }
    }
    MT_CHECK(*n == info.nrecords);
  }
  river_pcoll_close(pc);
  return all;
}

/* -------------------------------------------------------- the reference */

static size_t cmp_size;
static int cmp_rec(const void *a, const void *b)
{
  return memcmp(a, b, cmp_size);
}

/* Offset and size of field `key` in schema text. */
static void field_at(const char *text, const char *key, size_t *off,
                     size_t *size)
{
  river_schema *s = NULL;
  size_t count = 1;
  river_type t = RIVER_TYPE_INT32;
  int f = 0;

  river_schema_parse(text, &s);
  river_schema_find(s, key, &f);
  river_schema_field(s, f, NULL, &t, &count, off);
  *size = t == RIVER_TYPE_CHAR || t == RIVER_TYPE_BYTES ? count
          : t == RIVER_TYPE_INT64 || t == RIVER_TYPE_UINT64
                || t == RIVER_TYPE_FLOAT64 ? 8 : 4;
  river_schema_destroy(s);
}

static size_t rec_size(const char *text)
{
  river_schema *s = NULL;
  size_t rs = 0;

  river_schema_parse(text, &s);
  river_schema_record_size(s, &rs);
  river_schema_destroy(s);
  return rs;
}

/* The nested-loop join of the case: every (R, S) pair with equal key
 * bytes, R's record then S's without the key; sorted. */
static unsigned char *reference(const struct jcase *c, size_t *n)
{
  size_t rrs = rec_size(c->r.schema), srs = rec_size(c->s.schema);
  size_t ro, so, ks, ks2, ors = rrs + 0, i, j;
  unsigned char rr[64], sr[64], *out;

  field_at(c->r.schema, c->key, &ro, &ks);
  field_at(c->s.schema, c->key, &so, &ks2);
  ors = rrs + srs - ks;
  out = malloc(c->r.n * c->s.n * ors + 1);
  *n = 0;
  for (i = 0; out != NULL && i < c->r.n; i++) {
    memset(rr, 0, sizeof rr);
    c->r.make(i, rr);
    for (j = 0; j < c->s.n; j++) {
      memset(sr, 0, sizeof sr);
      c->s.make(j, sr);
      if (memcmp(rr + ro, sr + so, ks) != 0)
        continue;
      memcpy(out + *n * ors, rr, rrs);
      memcpy(out + *n * ors + rrs, sr, so);
      memcpy(out + *n * ors + rrs + so, sr + so + ks, srs - so - ks);
      (*n)++;
    }
  }
  cmp_size = ors;
  qsort(out, *n, ors, cmp_rec);
  return out;
}

/* ------------------------------------------------------------ the runs */

/* Run spec with params over comm; then compare OUT with the reference. */
static void run_join(MPI_Comm comm, const struct jcase *c, const char *spec,
                     const char *variant, const char *const *extra, int nx)
{
  char kv[6][300], text[1024] = "";
  const char *params[13];
  river_flow *f = NULL;
  unsigned char *got, *want = NULL;
  size_t ngot = 0, nwant = 0, rs = 0;
  int r, np, i, rc;

  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &np);
  snprintf(kv[0], sizeof kv[0], "r=%s", c->r.name);
  snprintf(kv[1], sizeof kv[0], "s=%s", c->s.name);
  snprintf(kv[2], sizeof kv[0], "out=out");
  snprintf(kv[3], sizeof kv[0], "key=%s", c->key);
  snprintf(kv[4], sizeof kv[0], "root=%s", root);
  snprintf(kv[5], sizeof kv[0], "replace=true");   /* OUT of the last case */
  for (i = 0; i < 6; i++)
    params[i] = kv[i];
  for (i = 0; i < nx && i < 7; i++)
    params[6 + i] = extra[i];
  rc = river_flow_load(comm, spec, params, 6 + (nx < 7 ? nx : 7), &f);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS)
    MT_CHECK_RC(river_flow_go(f), RIVER_SUCCESS);
  river_flow_destroy(f);
  got = read_all(comm, "out", &ngot, &rs, text, sizeof text);
  if (r == 0) {
    want = reference(c, &nwant);
    cmp_size = rs;
    if (got != NULL)
      qsort(got, ngot, rs, cmp_rec);
    MT_CHECK(strcmp(text, c->out_schema) == 0);
    MT_CHECK(rs == cmp_size);
    MT_CHECK(ngot == nwant);
    MT_CHECK(got != NULL && want != NULL
             && (ngot == 0 || memcmp(got, want, ngot * rs) == 0));
    if (strcmp(text, c->out_schema) != 0 || ngot != nwant)
      printf("join %s %s on %d ranks: schema %s, %zu records; want %s, "
             "%zu\n", c->name, variant, np, text, ngot, c->out_schema,
             nwant);
  }
  free(got);
  free(want);
  MPI_Barrier(comm);
}

static void run_case(MPI_Comm comm, const struct jcase *c)
{
  static const char *b0[] = {"build=0"}, *b1[] = {"build=1"};
  static const char *st[] = {"build=0", "read_policy=mirror-nogd",
                             "spread=one-to-one"};
  static const char *rep0[] = {"build=0", "r_edge=broadcast", "s_edge=dq"};
  static const char *rep1[] = {"build=1", "r_edge=dq", "s_edge=broadcast"};
  const char *join = FLOWS_DIR "/join.yaml";
  const char *repl = FLOWS_DIR "/join_replicated.yaml";

  write_rel(comm, &c->r);
  write_rel(comm, &c->s);
  run_join(comm, c, join, "build R", b0, 1);
  run_join(comm, c, join, "build S", b1, 1);
  run_join(comm, c, join, "static", st, 3);
  run_join(comm, c, repl, "replicated R", rep0, 3);
  run_join(comm, c, repl, "replicated S", rep1, 3);
}

int main(int argc, char **argv)
{
  int rank, size, n;
  size_t i;

  if (river_init(&argc, &argv) != RIVER_SUCCESS)
    return 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    const char *t = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/river-join-XXXXXX", t && *t ? t : "/tmp");
    if (mkdtemp(root) == NULL)
      root[0] = '\0';
  }
  MPI_Bcast(root, sizeof root, MPI_CHAR, 0, MPI_COMM_WORLD);
  MT_CHECK(root[0] != '\0');
  for (n = 1; root[0] && n <= size && n <= 4; n++) {
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, rank < n ? 0 : MPI_UNDEFINED, rank, &sub);
    if (sub != MPI_COMM_NULL) {
      for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(sub, &cases[i]);
      MPI_Comm_free(&sub);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (rank == 0 && root[0]) {
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
      printf("could not remove %s\n", root);
  }
  n = mt_verdict(MPI_COMM_WORLD, "test_join_mpi");
  river_finalize();
  return n;
}
