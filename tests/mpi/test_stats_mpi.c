/*
 * test_stats_mpi - the stats file's API (river/stats.h), on any number
 * of ranks (4 in the suite). Every file it writes also passes
 * tests/cli/check_stats.py (the JSON Schema, and its totals):
 *
 *   args    NULL and nonsense refused with RIVER_EINVAL (and said):
 *           create with out NULL or comm MPI_COMM_NULL, add_flow of NULL
 *           or of a flow on other ranks, add_number with no key, a key of
 *           41 characters or with a '-', a NaN or an infinity, write with
 *           no path; add_flow of a flow that has not run: RIVER_ESTATE,
 *           on every rank; of a flow on other ranks, or on the same ranks
 *           in another order (its ranks would name others), or of NULL:
 *           RIVER_EINVAL on every rank, also where only the last rank
 *           passes NULL (no rank left waiting); a path rank 0 cannot
 *           write to,
 *           with NULL on the others: refused everywhere
 *   flow    gen (every rank, 1000 records in all) -> push DQ -> count (every
 *           rank): the document rank 0 writes (read back with jansson,
 *           which River links) has the format, the job's ranks, one flow
 *           with its label, the gen stage's records out and the count
 *           stage's records in both 1000, instance i on rank i, each
 *           producer's messages by consumer naming ranks 0..n-1 and
 *           adding up to what it sent, the edge's messages sent and got
 *           equal, and the number set; a second write replaces the file
 *           whole; each instance's series starts at t 0 with nothing
 *           counted and ends at its totals; a stage's arguments as given
 *   gd      a GD read of a mirrored source of 8 partitions x 60 records on
 *           every rank's disk (2 copies): river_gd_served_get's rows
 *           (NULL refused; max 0 sizes), river_stats_add_gd's entry:
 *           every partition's client received its 60 records' bytes once
 *           (480 records in all), each disk's blocks_served the sum of
 *           its rows and the rows' bytes at least what their clients
 *           received; add_gd with NULL, or of a read over other ranks
 *           (the world reversed), refused (said); river_gd_comm's
 *           NULLs refused; ranks that added
 *           different numbers of reads: write refuses on every rank,
 *           saying so, and writes nothing
 *   work    river_stats_add_work: each rank's records (100 + rank), bytes
 *           and seconds, in rank order, under its label; NULL s refused
 *           (said); seconds NaN or below 0 on one rank: RIVER_EINVAL on
 *           every rank
 */
#define _GNU_SOURCE
#include <river.h>
#include "mpitest.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;

/* Rank 0: path passes tests/cli/check_stats.py against the schema
 * doc/stats.schema.json (under $top_srcdir, which make check sets) with
 * opts; said where not. */
static void schema_ok(const char *path, const char *opts)
{
  const char *top = getenv("top_srcdir");
  char cmd[1024];
  int rc;

  if (top == NULL || *top == '\0')
    top = ".";
  snprintf(cmd, sizeof cmd, "python3 '%s/tests/cli/check_stats.py' '%s' "
           "'%s/doc/stats.schema.json' %s", top, path, top, opts);
  rc = system(cmd);
  MT_CHECK(rc == 0);
  if (rc != 0)
    printf("check_stats failed (%d) on %s\n", rc, path);
}

/* gen -> count on every rank, run. */
static river_flow *run_flow(MPI_Comm comm, int go)
{
  river_edge_opts e = RIVER_EDGE_OPTS_INIT;
  river_flow *f = NULL;
  int *all, i, n;

  MPI_Comm_size(comm, &n);
  all = malloc((size_t)n * sizeof *all);
  for (i = 0; all != NULL && i < n; i++)
    all[i] = i;
  MT_CHECK_RC(river_flow_create(comm, &f), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_place(f, "gen", "gen", all, n), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_arg(f, "gen", "records", "1000"), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_arg(f, "gen", "seed", "7"), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_place(f, "count", "count", all, n), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_attach(f, "gen", "count", &e), RIVER_SUCCESS);
  if (go)
    MT_CHECK_RC(river_flow_go(f), RIVER_SUCCESS);
  free(all);
  return f;
}

static void test_args(void)
{
  static int sentinel;
  river_stats *s = (river_stats *)&sentinel;
  river_flow *f;
  MPI_Comm half;
  char key[48];

  mt_log_clear();
  MT_CHECK_RC(river_stats_create(MPI_COMM_WORLD, NULL, NULL), RIVER_EINVAL);
  MT_CHECK(mt_logged("river_stats_create", "out is NULL", NULL));
  MT_CHECK_RC(river_stats_create(MPI_COMM_NULL, NULL, &s), RIVER_EINVAL);
  MT_CHECK(s == NULL);
  MT_CHECK_RC(river_stats_create(MPI_COMM_WORLD, "args", &s), RIVER_SUCCESS);
  if (s == NULL)
    return;
  MT_CHECK_RC(river_stats_add_flow(NULL, NULL, NULL), RIVER_EINVAL);
  MT_CHECK_RC(river_stats_add_flow(s, NULL, NULL), RIVER_EINVAL);
  mt_log_clear();
  MT_CHECK_RC(river_stats_add_number(s, "", 1.0), RIVER_EINVAL);
  MT_CHECK(mt_logged("key must be 1 to 40 characters", NULL, NULL));
  memset(key, 'k', 41);
  key[41] = '\0';
  MT_CHECK_RC(river_stats_add_number(s, key, 1.0), RIVER_EINVAL);
  MT_CHECK_RC(river_stats_add_number(s, "a-b", 1.0), RIVER_EINVAL);
  MT_CHECK_RC(river_stats_add_number(s, "x", NAN), RIVER_EINVAL);
  MT_CHECK_RC(river_stats_add_number(s, "x", INFINITY), RIVER_EINVAL);
  MT_CHECK_RC(river_stats_add_number(NULL, "x", 1.0), RIVER_EINVAL);
  MT_CHECK_RC(river_stats_write(NULL, "x"), RIVER_EINVAL);
  MT_CHECK_RC(river_stats_write(s, NULL), RIVER_EINVAL);   /* agreed */
  /* A flow that has not run. */
  f = run_flow(MPI_COMM_WORLD, 0);
  mt_log_clear();
  MT_CHECK_RC(river_stats_add_flow(s, f, "not run"), RIVER_ESTATE);
  MT_CHECK(mt_logged("has not run", NULL, NULL));
  river_flow_destroy(f);
  /* A flow on other ranks than the stats' (half of them), and on the
   * same ranks in another order: its ranks would name others. */
  if (size > 1) {
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    f = run_flow(half, 1);
    MT_CHECK_RC(river_stats_add_flow(s, f, "half"), RIVER_EINVAL);
    river_flow_destroy(f);
    MPI_Comm_free(&half);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &half);
    f = run_flow(half, 1);
    mt_log_clear();
    MT_CHECK_RC(river_stats_add_flow(s, f, "reversed"), RIVER_EINVAL);
    MT_CHECK(mt_logged("does not run on the stats' communicator", NULL,
                       NULL));
    river_flow_destroy(f);
    MPI_Comm_free(&half);
  }
  MT_CHECK_RC(river_stats_add_flow(s, NULL, "none"), RIVER_EINVAL);
  /* NULL on one rank only, a flow that ran on the others: refused on
   * every rank, none left waiting for it. */
  f = run_flow(MPI_COMM_WORLD, 1);
  MT_CHECK_RC(river_stats_add_flow(s, rank == size - 1 ? NULL : f, "one"),
              RIVER_EINVAL);
  river_flow_destroy(f);
  /* rank 0's path is the one used: NULL elsewhere is fine (a path that
   * cannot be one, on rank 0, is refused everywhere) */
  MT_CHECK_RC(river_stats_check_path(s, rank == 0 ? "/nonexistent-dir/x"
                                                  : NULL), RIVER_EINVAL);
  MT_CHECK_RC(river_stats_destroy(s), RIVER_SUCCESS);
  MT_CHECK_RC(river_stats_destroy(NULL), RIVER_SUCCESS);
}

/* The sum of field over an array of objects. */
static long long sum_of(json_t *arr, const char *field)
{
  long long t = 0;
  size_t i;

  for (i = 0; i < json_array_size(arr); i++)
    t += json_integer_value(json_object_get(json_array_get(arr, i), field));
  return t;
}

/* An instance's series: from t 0 with nothing counted to its totals. */
static void check_series(json_t *inst)
{
  static const char *const col[] = {"records_in", "bytes_in",
                                    "records_out", "bytes_out"};
  json_t *se = json_object_get(inst, "series"), *t = json_object_get(se, "t");
  size_t n = json_array_size(t), c;

  MT_CHECK(n >= 2);
  if (n < 2)
    return;
  MT_CHECK(json_real_value(json_array_get(t, 0)) == 0.0);
  for (c = 0; c < 4; c++) {
    json_t *a = json_object_get(se, col[c]);
    MT_CHECK(json_array_size(a) == n);
    MT_CHECK(json_integer_value(json_array_get(a, 0)) == 0);
    MT_CHECK(json_integer_value(json_array_get(a, n - 1))
             == json_integer_value(json_object_get(inst, col[c])));
  }
}

/* Instances i on rank i, one a rank, each with its series. */
static void check_ranks(json_t *insts)
{
  size_t i;

  MT_CHECK(json_array_size(insts) == (size_t)size);
  for (i = 0; i < json_array_size(insts); i++) {
    json_t *o = json_array_get(insts, i);
    MT_CHECK(json_integer_value(json_object_get(o, "rank"))
             == json_integer_value(json_object_get(o, "instance")));
    check_series(o);
  }
}

/* Each producer's messages_to: ranks 0..size-1 in order, adding up to
 * its messages_out. */
static void check_sent(json_t *prods)
{
  size_t i, j;

  MT_CHECK(json_array_size(prods) == (size_t)size);
  for (i = 0; i < json_array_size(prods); i++) {
    json_t *p = json_array_get(prods, i), *to = json_object_get(p, "messages_to");
    long long t = 0;
    MT_CHECK(json_array_size(to) == (size_t)size);
    for (j = 0; j < json_array_size(to); j++) {
      json_t *m = json_array_get(to, j);
      MT_CHECK(json_integer_value(json_object_get(m, "rank")) == (long long)j);
      t += json_integer_value(json_object_get(m, "messages"));
    }
    MT_CHECK(t == json_integer_value(json_object_get(p, "messages_out")));
  }
}

static void test_flow(void)
{
  char path[64] = "/tmp/test_stats.XXXXXX";
  river_stats *s = NULL;
  river_flow *f;
  json_t *doc, *fl, *st, *e;
  json_error_t err;
  int fd = -1, round;

  if (rank == 0 && (fd = mkstemp(path)) >= 0)
    close(fd);
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  for (round = 0; round < 2; round++) {
    MT_CHECK_RC(river_stats_create(MPI_COMM_WORLD, "test_stats_mpi", &s),
                RIVER_SUCCESS);
    if (s == NULL)
      return;
    f = run_flow(MPI_COMM_WORLD, 1);
    MT_CHECK_RC(river_stats_add_flow(s, f, round ? "second" : "first"),
                RIVER_SUCCESS);
    MT_CHECK_RC(river_stats_add_number(s, "answer", 42.5), RIVER_SUCCESS);
    MT_CHECK_RC(river_stats_write(s, path), RIVER_SUCCESS);
    river_flow_destroy(f);
    river_stats_destroy(s);
    if (rank != 0)
      continue;
    doc = json_load_file(path, 0, &err);
    MT_CHECK(doc != NULL);
    if (doc == NULL) {
      printf("%s: %s at line %d\n", path, err.text, err.line);
      continue;
    }
    MT_CHECK(strcmp(json_string_value(json_object_get(doc, "format")),
                    "river-stats/1") == 0);
    MT_CHECK(json_integer_value(json_object_get(json_object_get(doc, "job"),
                                                "ranks")) == size);
    MT_CHECK(json_real_value(json_object_get(json_object_get(
                 json_object_get(doc, "job"), "numbers"), "answer")) == 42.5);
    MT_CHECK(json_array_size(json_object_get(doc, "flows")) == 1);
    fl = json_array_get(json_object_get(doc, "flows"), 0);
    MT_CHECK(strcmp(json_string_value(json_object_get(fl, "label")),
                    round ? "second" : "first") == 0);
    st = json_object_get(fl, "stages");
    MT_CHECK(sum_of(json_object_get(json_array_get(st, 0), "instances"),
                    "records_out") == 1000);
    MT_CHECK(sum_of(json_object_get(json_array_get(st, 1), "instances"),
                    "records_in") == 1000);
    /* Instance i on rank i (every rank, in order); each producer's
     * messages by consumer name the ranks 0..size-1, in order, and add
     * up to what it sent. */
    check_ranks(json_object_get(json_array_get(st, 0), "instances"));
    check_ranks(json_object_get(json_array_get(st, 1), "instances"));
    MT_CHECK(strcmp(json_string_value(json_object_get(json_object_get(
                        json_array_get(st, 0), "args"), "seed")), "7") == 0);
    e = json_array_get(json_object_get(fl, "edges"), 0);
    check_sent(json_object_get(e, "producers"));
    MT_CHECK(sum_of(json_object_get(e, "producers"), "messages_out")
             == sum_of(json_object_get(e, "consumers"), "messages_in"));
    MT_CHECK(sum_of(json_object_get(e, "producers"), "messages_out") > 0);
    json_decref(doc);
    schema_ok(path, "--records 1000 --flows 1");
  }
  if (rank == 0)
    unlink(path);
}

/* ------------------------------------------------------------------ gd */

#define GD_PARTS 8
#define GD_RECS 60         /* a partition's records */
#define GD_RPB 16          /* records a block */
#define GD_RS 24           /* a record's bytes */

static int gd_read(void *ctx, int p, int c, int disk, uint64_t block,
                   void *buf, size_t bufsize, size_t *nrecords)
{
  uint64_t first = block * GD_RPB, n;

  (void)ctx;
  (void)c;
  (void)disk;
  if (bufsize < GD_RPB * GD_RS || first >= GD_RECS)
    return RIVER_EINVAL;
  n = GD_RECS - first < GD_RPB ? GD_RECS - first : GD_RPB;
  memset(buf, p, (size_t)n * GD_RS);
  *nrecords = (size_t)n;
  return RIVER_SUCCESS;
}

/* A GD read of every partition to its end; *gd left open. */
static void gd_read_all(river_gd **gd)
{
  static const uint64_t nrec[GD_PARTS] = {
    GD_RECS, GD_RECS, GD_RECS, GD_RECS, GD_RECS, GD_RECS, GD_RECS, GD_RECS};
  river_gd_layout l = {0};
  const void *recs;
  size_t n;
  int rc;

  l.npartitions = GD_PARTS;
  l.ndisks = size;
  l.replication = size > 1 ? 2 : 1;
  l.record_size = GD_RS;
  l.records_per_block = GD_RPB;
  l.nrecords = nrec;
  *gd = NULL;
  MT_CHECK_RC(river_gd_create(MPI_COMM_WORLD, &l, gd_read, NULL, NULL, gd),
              RIVER_SUCCESS);
  if (*gd == NULL)
    return;
  while ((rc = river_gd_next(*gd, &recs, &n, NULL, NULL)) == RIVER_SUCCESS)
    ;
  MT_CHECK_RC(rc, RIVER_EOS);
}

/* Rank 0: the gd entry of the document at path. */
static void check_gd_doc(const char *path)
{
  json_error_t err;
  json_t *doc = json_load_file(path, 0, &err), *g, *disks, *clients, *d;
  long long served[64] = {0}, got = 0;
  size_t i, j;

  MT_CHECK(doc != NULL);
  if (doc == NULL)
    return;
  MT_CHECK(json_array_size(json_object_get(doc, "gd")) == 1);
  g = json_array_get(json_object_get(doc, "gd"), 0);
  MT_CHECK(strcmp(json_string_value(json_object_get(g, "label")), "read")
           == 0);
  disks = json_object_get(g, "disks");
  clients = json_object_get(g, "clients");
  MT_CHECK(json_array_size(disks) == (size_t)size);
  MT_CHECK(json_array_size(clients) == (size_t)size);
  for (i = 0; i < json_array_size(disks); i++) {
    json_t *rows = json_object_get(json_array_get(disks, i), "served");
    d = json_array_get(disks, i);
    MT_CHECK(sum_of(rows, "blocks")
             == json_integer_value(json_object_get(d, "blocks_served")));
    for (j = 0; j < json_array_size(rows); j++) {
      json_t *row = json_array_get(rows, j);
      long long c = json_integer_value(json_object_get(row, "client"));
      MT_CHECK(c >= 0 && c < size);
      if (c >= 0 && c < 64)
        served[c] += json_integer_value(json_object_get(row, "bytes"));
    }
  }
  for (i = 0; i < json_array_size(clients); i++) {
    json_t *c = json_array_get(clients, i);
    long long b = json_integer_value(json_object_get(c, "bytes_received"));
    MT_CHECK(i >= 64 || served[i] >= b);
    got += b;
  }
  MT_CHECK(got == (long long)GD_PARTS * GD_RECS * GD_RS);
  json_decref(doc);
}

static void test_gd(void)
{
  char path[64] = "/tmp/test_stats_gd.XXXXXX";
  river_gd_served rows[GD_PARTS * 2];
  river_stats *s = NULL;
  river_gd *gd;
  size_t n = 99, k;
  uint64_t blocks = 0;
  river_gd_stats st;
  int fd = -1;

  if (rank == 0 && (fd = mkstemp(path)) >= 0)
    close(fd);
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  MT_CHECK_RC(river_stats_create(MPI_COMM_WORLD, "gd", &s), RIVER_SUCCESS);
  if (s == NULL)
    return;
  gd_read_all(&gd);
  if (gd != NULL) {
    mt_log_clear();
    MT_CHECK_RC(river_gd_served_get(NULL, rows, 1, &n), RIVER_EINVAL);
    MT_CHECK(mt_logged("river_gd_served_get", "gd is NULL", NULL));
    MT_CHECK_RC(river_gd_served_get(gd, NULL, 1, &n), RIVER_EINVAL);
    MT_CHECK_RC(river_gd_served_get(gd, rows, 1, NULL), RIVER_EINVAL);
    MT_CHECK_RC(river_gd_served_get(gd, NULL, 0, &n), RIVER_SUCCESS);
    MT_CHECK(n <= GD_PARTS * 2);
    MT_CHECK_RC(river_gd_served_get(gd, rows, GD_PARTS * 2, &n),
                RIVER_SUCCESS);
    for (k = 0; k < n && k < GD_PARTS * 2; k++) {
      blocks += rows[k].blocks;
      MT_CHECK(rows[k].partition >= 0 && rows[k].partition < GD_PARTS);
      MT_CHECK(rows[k].client == rows[k].partition % size);
    }
    MT_CHECK_RC(river_gd_stats_get(gd, &st), RIVER_SUCCESS);
    MT_CHECK(blocks == st.blocks_served);
    mt_log_clear();
    MT_CHECK_RC(river_stats_add_gd(NULL, gd, "x"), RIVER_EINVAL);
    MT_CHECK(mt_logged("river_stats_add_gd", "s is NULL", NULL));
    MT_CHECK_RC(river_stats_add_gd(s, NULL, "x"), RIVER_EINVAL);
    MT_CHECK_RC(river_stats_add_gd(s, gd, "read"), RIVER_SUCCESS);
    MT_CHECK_RC(river_gd_close(gd), RIVER_SUCCESS);
  }
  MT_CHECK_RC(river_stats_write(s, path), RIVER_SUCCESS);
  if (rank == 0) {
    char opts[64];
    check_gd_doc(path);
    snprintf(opts, sizeof opts, "--flows 0 --gd-bytes %d",
             GD_PARTS * GD_RECS * GD_RS);
    schema_ok(path, opts);
  }
  river_stats_destroy(s);

  /* A read over another communicator than the stats' (the same ranks
   * reversed; or half of them): refused, said, never gathered. */
  if (size > 1) {
    MPI_Comm other;
    river_stats *so = NULL;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &other);
    MT_CHECK_RC(river_stats_create(other, "other", &so), RIVER_SUCCESS);
    gd_read_all(&gd);
    if (gd != NULL && so != NULL) {
      MPI_Comm c = MPI_COMM_NULL;
      MT_CHECK_RC(river_gd_comm(NULL, &c), RIVER_EINVAL);
      MT_CHECK_RC(river_gd_comm(gd, NULL), RIVER_EINVAL);
      MT_CHECK_RC(river_gd_comm(gd, &c), RIVER_SUCCESS);
      MT_CHECK(c != MPI_COMM_NULL);
      mt_log_clear();
      MT_CHECK_RC(river_stats_add_gd(so, gd, "reversed"), RIVER_EINVAL);
      MT_CHECK(mt_logged("river_stats_add_gd", "not over the stats' "
                         "communicator", NULL));
      MT_CHECK_RC(river_gd_close(gd), RIVER_SUCCESS);
    }
    river_stats_destroy(so);
    MPI_Comm_free(&other);
  }

  /* Rank 0 adds the read twice, the others once: refused everywhere,
   * and the file from before stays as it was. */
  MT_CHECK_RC(river_stats_create(MPI_COMM_WORLD, "gd twice", &s),
              RIVER_SUCCESS);
  if (s == NULL)
    return;
  gd_read_all(&gd);
  if (gd != NULL) {
    MT_CHECK_RC(river_stats_add_gd(s, gd, "read"), RIVER_SUCCESS);
    if (rank == 0)
      MT_CHECK_RC(river_stats_add_gd(s, gd, "again"), RIVER_SUCCESS);
    MT_CHECK_RC(river_gd_close(gd), RIVER_SUCCESS);
  }
  mt_log_clear();
  MT_CHECK_RC(river_stats_write(s, path),
              size > 1 ? RIVER_EINVAL : RIVER_SUCCESS);
  if (size > 1 && rank == 0)
    MT_CHECK(mt_logged("river_stats_write", "added 1 to 2 GD reads", NULL));
  river_stats_destroy(s);
  if (size > 1 && rank == 0)
    check_gd_doc(path);   /* the first file, untouched */
  if (rank == 0)
    unlink(path);
}

static void test_work(void)
{
  char path[64] = "/tmp/test_stats_work.XXXXXX";
  river_stats *s = NULL;
  json_error_t err;
  json_t *doc, *ranks;
  size_t i;
  int fd = -1;

  if (rank == 0 && (fd = mkstemp(path)) >= 0)
    close(fd);
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  mt_log_clear();
  MT_CHECK_RC(river_stats_add_work(NULL, "x", 1, 1, 1.0), RIVER_EINVAL);
  MT_CHECK(mt_logged("river_stats_add_work", "s is NULL", NULL));
  MT_CHECK_RC(river_stats_create(MPI_COMM_WORLD, "work", &s), RIVER_SUCCESS);
  if (s == NULL)
    return;
  MT_CHECK_RC(river_stats_add_work(s, "bad", 1, 1, rank == size - 1 ? NAN
                                                                   : 1.0),
              RIVER_EINVAL);
  MT_CHECK_RC(river_stats_add_work(s, "bad", 1, 1, rank == 0 ? -1.0 : 1.0),
              RIVER_EINVAL);
  MT_CHECK_RC(river_stats_add_work(s, "gen", 100 + (uint64_t)rank,
                                   100 * (100 + (uint64_t)rank), 0.5),
              RIVER_SUCCESS);
  MT_CHECK_RC(river_stats_write(s, path), RIVER_SUCCESS);
  river_stats_destroy(s);
  if (rank != 0)
    return;
  {
    char opts[64];
    snprintf(opts, sizeof opts, "--flows 0 --work-records %d",
             100 * size + size * (size - 1) / 2);
    schema_ok(path, opts);
  }
  doc = json_load_file(path, 0, &err);
  unlink(path);
  MT_CHECK(doc != NULL);
  if (doc == NULL)
    return;
  MT_CHECK(json_array_size(json_object_get(doc, "work")) == 1);
  ranks = json_object_get(json_array_get(json_object_get(doc, "work"), 0),
                          "ranks");
  MT_CHECK(strcmp(json_string_value(json_object_get(json_array_get(
                      json_object_get(doc, "work"), 0), "label")), "gen")
           == 0);
  MT_CHECK(json_array_size(ranks) == (size_t)size);
  for (i = 0; i < json_array_size(ranks); i++) {
    json_t *r = json_array_get(ranks, i);
    MT_CHECK(json_integer_value(json_object_get(r, "rank")) == (long long)i);
    MT_CHECK(json_integer_value(json_object_get(r, "records"))
             == 100 + (long long)i);
    MT_CHECK(json_integer_value(json_object_get(r, "bytes"))
             == 100 * (100 + (long long)i));
    MT_CHECK(json_real_value(json_object_get(r, "seconds")) == 0.5);
  }
  json_decref(doc);
}

int main(int argc, char **argv)
{
  int rc;

  if (river_init(&argc, &argv) != RIVER_SUCCESS) {
    fprintf(stderr, "river_init failed\n");
    return 1;
  }
  river_log_set_handler(mt_log_capture, NULL);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  test_args();
  test_flow();
  test_gd();
  test_work();
  rc = mt_verdict(MPI_COMM_WORLD, "test_stats_mpi");
  river_finalize();
  return rc;
}
