/*
 * test_flowspec.c - flow specs loaded as plans (no MPI job): the good
 * specs under tests/flows/good give the stages, ranks and edges they
 * say; every spec under tests/flows/bad fails with the message its first
 * line expects ("# expect: LINE:COLUMN: text", or text without a mark),
 * whether the loader or river_flow_check finds it; params and their
 * overrides; files that are not specs; the flow API on a loaded plan;
 * typed arguments as a module reads them (through a schema callback,
 * the one place a context exists before the runtime).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <river.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../flow_modules.h"

static char logbuf[16384];

static void collect(int level, int rank, const char *msg, void *ctx)
{
  size_t n = strlen(logbuf);

  (void)level;
  (void)rank;
  (void)ctx;
  snprintf(logbuf + n, sizeof logbuf - n, "%s\n", msg);
}

static int setup(void **state)
{
  (void)state;
  logbuf[0] = '\0';
  river_log_set_handler(collect, NULL);
  return 0;
}

static int teardown(void **state)
{
  (void)state;
  river_log_set_handler(NULL, NULL);
  return 0;
}

static const char *srcdir(void)
{
  const char *d = getenv("top_srcdir");

  return d != NULL ? d : ".";
}

static void spec_path(char *buf, size_t len, const char *rel)
{
  snprintf(buf, len, "%s/tests/flows/%s", srcdir(), rel);
}

/* Assert that stage i is name/module on ranks want[0..n-1]. */
static void assert_stage(const river_flow *f, int i, const char *name,
                         const char *module, const int *want, int n)
{
  const char *s, *m;
  const int *r;
  int nr, k;

  assert_int_equal(river_flow_stage(f, i, &s, &m, &r, &nr), RIVER_SUCCESS);
  assert_string_equal(s, name);
  assert_string_equal(m, module);
  assert_int_equal(nr, n);
  for (k = 0; k < n; k++)
    assert_int_equal(r[k], want[k]);
}

static char *dot(const river_flow *f)
{
  static char buf[4096];
  size_t len = sizeof buf;

  assert_int_equal(river_flow_dot(f, buf, &len), RIVER_SUCCESS);
  return buf;
}

static void test_flowspec_good_pipeline(void **state)
{
  static const int r01[] = {0, 1}, r23[] = {2, 3}, r4[] = {4}, r2[] = {2},
                   r34[] = {3, 4};
  const char *kv[] = {"workers=1"};
  char path[512];
  river_flow *f = NULL;
  int n;

  (void)state;
  spec_path(path, sizeof path, "good/pipeline.yaml");
  assert_int_equal(river_flow_load_plan(path, 5, NULL, 0, &f), RIVER_SUCCESS);
  assert_int_equal(river_flow_check(f), RIVER_SUCCESS);
  assert_int_equal(river_flow_nstages(f, &n), RIVER_SUCCESS);
  assert_int_equal(n, 3);
  assert_stage(f, 0, "read", "t_gen", r01, 2);
  assert_stage(f, 1, "work", "t_pass", r23, 2);
  assert_stage(f, 2, "out", "t_sink", r4, 1);
  assert_non_null(strstr(dot(f), "\"read\" -> \"work\" [label=\"exchange "
                                 "range on k\"];"));
  assert_non_null(strstr(dot(f), "\"work\" -> \"out\" [label=\"dq pull\"];"));
  assert_non_null(strstr(dot(f), "\"work\" [label=\"work\\nt_pass x2\"];"));
  assert_int_equal(river_flow_destroy(f), RIVER_SUCCESS);
  /* an override: one worker, so `rest` gets two ranks */
  assert_int_equal(river_flow_load_plan(path, 5, kv, 1, &f), RIVER_SUCCESS);
  assert_int_equal(river_flow_check(f), RIVER_SUCCESS);
  assert_stage(f, 1, "work", "t_pass", r2, 1);
  assert_stage(f, 2, "out", "t_sink", r34, 2);
  river_flow_destroy(f);
  assert_string_equal(logbuf, "");
}

/* An edge's pace reaches its options (the dot labels show it): a
 * duration with a unit, "off", an empty value (the default), and off on
 * a pull edge (accepted, nothing to turn off). */
static void test_flowspec_good_paced(void **state)
{
  char path[512];
  river_flow *f = NULL;

  (void)state;
  spec_path(path, sizeof path, "good/paced.yaml");
  assert_int_equal(river_flow_load_plan(path, 5, NULL, 0, &f), RIVER_SUCCESS);
  assert_int_equal(river_flow_check(f), RIVER_SUCCESS);
  assert_non_null(strstr(dot(f), "\"a\" -> \"b\" [label=\"dq push, pace 5 "
                                 "ms\"]"));
  assert_non_null(strstr(dot(f), "\"b\" -> \"c\" [label=\"dq push, no "
                                 "pacing\"]"));
  assert_non_null(strstr(dot(f), "\"c\" -> \"d\" [label=\"dq push\"]"));
  assert_non_null(strstr(dot(f), "\"d\" -> \"e\" [label=\"dq pull\"]"));
  river_flow_destroy(f);
  assert_string_equal(logbuf, "");
}

static void test_flowspec_good_shared(void **state)
{
  static const int r01[] = {0, 1}, r23[] = {2, 3};
  char path[512];
  river_flow *f = NULL;

  (void)state;
  spec_path(path, sizeof path, "good/shared.yaml");
  assert_int_equal(river_flow_load_plan(path, 4, NULL, 0, &f), RIVER_SUCCESS);
  assert_int_equal(river_flow_check(f), RIVER_SUCCESS);
  assert_stage(f, 0, "src", "t_gen", r01, 2);
  assert_stage(f, 2, "left", "t_sink", r01, 2);
  assert_stage(f, 3, "right", "t_expect", r23, 2);
  assert_non_null(strstr(dot(f), "\"src\" -> \"fork\" [label=\"one-to-one\"]"));
  assert_non_null(strstr(dot(f), "\"fork\" -> \"left\" [label=\"dq static\"]"));
  assert_non_null(strstr(dot(f),
                         "\"fork\" -> \"right\" [label=\"broadcast\"]"));
  river_flow_destroy(f);
  assert_string_equal(logbuf, "");
}

/* Load (then check) tests/flows/bad/name as a plan of 4 ranks: it must
 * fail, and the log must hold "PATH:" + its expectation. */
static int bad_one(const char *name)
{
  char path[512], line[512], want[1100], *expect;
  river_flow *f = NULL;
  FILE *fp;
  int rc;

  snprintf(line, sizeof line, "bad/%s", name);
  spec_path(path, sizeof path, line);
  fp = fopen(path, "r");
  assert_non_null(fp);
  if (fgets(line, sizeof line, fp) == NULL)
    line[0] = '\0';
  fclose(fp);
  line[strcspn(line, "\n")] = '\0';
  expect = strstr(line, "# expect: ");
  assert_non_null(expect);
  expect += strlen("# expect: ");
  snprintf(want, sizeof want, "%s:%s%s", path,
           expect[0] >= '0' && expect[0] <= '9' ? "" : " ", expect);
  logbuf[0] = '\0';
  rc = river_flow_load_plan(path, 4, NULL, 0, &f);
  if (rc == RIVER_SUCCESS) {
    rc = river_flow_check(f);
    river_flow_destroy(f);
  }
  if (rc == RIVER_SUCCESS || strstr(logbuf, want) == NULL) {
    printf("%s: rc %d, wanted \"%s\" in the log:\n%s", name, rc, want,
           logbuf);
    return 1;
  }
  return 0;
}

static void test_flowspec_bad_files(void **state)
{
  char dir[512];
  struct dirent **ents;
  int n, i, bad = 0, seen = 0;

  (void)state;
  spec_path(dir, sizeof dir, "bad");
  n = scandir(dir, &ents, NULL, alphasort);
  assert_true(n > 0);
  for (i = 0; i < n; i++) {
    size_t len = strlen(ents[i]->d_name);
    if (len > 5 && strcmp(ents[i]->d_name + len - 5, ".yaml") == 0) {
      bad += bad_one(ents[i]->d_name);
      seen++;
    }
    free(ents[i]);
  }
  free(ents);
  assert_int_equal(bad, 0);
  assert_true(seen >= 20);
}

/* A spec written to a temporary file; returns its path. */
static const char *tmp_spec(const char *text)
{
  static char path[256];
  FILE *fp;
  int fd;

  snprintf(path, sizeof path, "%s/flowspec-XXXXXX",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  fd = mkstemp(path);
  assert_true(fd >= 0);
  fp = fdopen(fd, "w");
  assert_non_null(fp);
  fputs(text, fp);
  fclose(fp);
  return path;
}

static void test_flowspec_params(void **state)
{
  const char *spec = "params: {n: 5, m: '0-1'}\n"
                     "stages:\n"
                     "  - {name: a, module: t_gen, ranks: '${m}',"
                     " args: {records: '${n}${n}K'}}\n"
                     "  - {name: b, module: t_sink, ranks: rest}\n"
                     "edges: [{from: a, to: b}]\n";
  const char *path = tmp_spec(spec);
  const char *bad1[] = {"x=1"}, *bad2[] = {"n"}, *ok[] = {"m=2", "n=lots"};
  river_flow *f = NULL, *keep = (river_flow *)&spec;
  char want[512];

  (void)state;
  f = keep;
  assert_int_equal(river_flow_load_plan(path, 3, bad1, 1, &f), RIVER_EFORMAT);
  snprintf(want, sizeof want, "%s: parameter 'x' (given as x=1) is not in "
           "the spec's params", path);
  assert_non_null(strstr(logbuf, want));
  assert_ptr_equal(f, keep);
  assert_int_equal(river_flow_load_plan(path, 3, bad2, 1, &f), RIVER_EFORMAT);
  assert_non_null(strstr(logbuf, "parameter 'n': expected key=value"));
  /* m=2 makes a's ranks the range "2"; n=lots makes records "lotslotsK" */
  logbuf[0] = '\0';
  assert_int_equal(river_flow_load_plan(path, 3, ok, 2, &f), RIVER_EINVAL);
  snprintf(want, sizeof want, "%s:3:61: stage 'a': argument 'records': "
           "expected a size (" RIVER_SIZE_SUFFIXES "), got 'lotslotsK'",
           path);
  assert_non_null(strstr(logbuf, want));
  assert_int_equal(river_flow_load_plan(path, 3, ok, 1, &f), RIVER_SUCCESS);
  assert_int_equal(river_flow_check(f), RIVER_SUCCESS);
  {
    static const int r2[] = {2}, r01[] = {0, 1};
    assert_stage(f, 0, "a", "t_gen", r2, 1);
    assert_stage(f, 1, "b", "t_sink", r01, 2);
  }
  river_flow_destroy(f);
  unlink(path);
}

/* Files that are not specs: missing, a directory, too large. */
static void test_flowspec_files(void **state)
{
  river_flow *f = NULL;
  const char *path;
  char *big;

  (void)state;
  assert_int_equal(river_flow_load_plan("/nonexistent/x.yaml", 2, NULL, 0,
                                        &f), RIVER_ENOTFOUND);
  assert_non_null(strstr(logbuf, "/nonexistent/x.yaml"));
  assert_int_equal(river_flow_load_plan("/", 2, NULL, 0, &f),
                   RIVER_ECORRUPT);
  big = malloc((2 << 20) + 1);
  assert_non_null(big);
  memset(big, '#', 2 << 20);
  big[2 << 20] = '\0';
  path = tmp_spec(big);
  free(big);
  logbuf[0] = '\0';
  assert_int_equal(river_flow_load_plan(path, 2, NULL, 0, &f), RIVER_EFORMAT);
  assert_non_null(strstr(logbuf, "the file is too large (2097152 bytes; a "
                                 "flow spec has at most 1048576)"));
  unlink(path);
  /* deep nesting is refused before libyaml, whose scanner would take
   * quadratic time over it: a megabyte of '[' is refused at once */
  big = malloc(1000001);
  assert_non_null(big);
  memset(big, '[', 1000000);
  big[1000000] = '\0';
  path = tmp_spec(big);
  free(big);
  logbuf[0] = '\0';
  assert_int_equal(river_flow_load_plan(path, 2, NULL, 0, &f), RIVER_EFORMAT);
  assert_non_null(strstr(logbuf, ":1:65: lists and mappings nested more "
                                 "than 64 deep"));
  unlink(path);
  /* more stages than a flow may have: refused at the first one too many */
  big = malloc(4200 * 64);
  assert_non_null(big);
  {
    size_t at = (size_t)sprintf(big, "stages:\n");
    for (int i = 0; i <= 4096; i++)
      at += (size_t)sprintf(big + at, "- {name: s%d, module: t_shape, "
                            "ranks: [0]}\n", i);
  }
  path = tmp_spec(big);
  free(big);
  logbuf[0] = '\0';
  assert_int_equal(river_flow_load_plan(path, 2, NULL, 0, &f), RIVER_EINVAL);
  assert_non_null(strstr(logbuf, ":4098:3: stage 's4096': a flow has at most "
                                 "4096 stages"));
  unlink(path);
}

/* The flow API on a loaded plan: each refusal and its message, then a
 * flow completed by hand that checks. */
static void test_flow_api_build(void **state)
{
  const char *path = tmp_spec(
      "stages:\n"
      "  - {name: a, module: t_gen, ranks: 1, args: {records: 1}}\n"
      "  - {name: b, module: t_sink, ranks: 1}\n"
      "edges: [{from: a, to: b}]\n");
  river_edge_opts o = RIVER_EDGE_OPTS_INIT;
  static const int r1[] = {1}, r0[] = {0}, r4[] = {4}, r22[] = {2, 2};
  river_flow *f = NULL;
  int n;

  (void)state;
  assert_int_equal(river_flow_load_plan(path, 4, NULL, 0, &f), RIVER_SUCCESS);
  unlink(path);
  assert_int_equal(river_flow_origin(f, "here:1:2"), RIVER_SUCCESS);
  assert_int_equal(river_flow_place(f, "a", "t_pass", r1, 1), RIVER_EINVAL);
  assert_non_null(strstr(logbuf, "here:1:2: stage 'a' is placed twice"));
  assert_int_equal(river_flow_place(f, "c", "nope", r1, 1), RIVER_ENOTFOUND);
  assert_non_null(strstr(logbuf, "here:1:2: stage 'c': unknown module 'nope'"));
  assert_int_equal(river_flow_place(f, "c", "t_pass", r4, 1), RIVER_EINVAL);
  assert_non_null(strstr(logbuf, "stage 'c': rank 4 is out of range (the "
                                 "flow has 4 ranks: 0..3)"));
  assert_int_equal(river_flow_place(f, "c", "t_pass", r22, 2), RIVER_EINVAL);
  assert_non_null(strstr(logbuf, "stage 'c': rank 2 is given twice"));
  assert_int_equal(river_flow_place(f, "c", "t_pass", NULL, 0), RIVER_EINVAL);
  assert_non_null(strstr(logbuf, "stage 'c': no ranks"));
  assert_int_equal(river_flow_place(f, "c", "t_solo", r0, 1), RIVER_EBUSY);
  assert_non_null(strstr(logbuf, "stage 'c': rank 0 already runs stage 'a', "
                                 "and module 't_solo' does not share ranks"));
  assert_int_equal(river_flow_place(f, "c/d", "t_pass", r1, 1), RIVER_EINVAL);
  assert_int_equal(river_flow_nstages(f, &n), RIVER_SUCCESS);
  assert_int_equal(n, 2);
  assert_int_equal(river_flow_origin(f, NULL), RIVER_SUCCESS);
  assert_int_equal(river_flow_place(f, "c", "t_pass", r1, 1), RIVER_SUCCESS);
  assert_int_equal(river_flow_arg(f, "x", "verbose", "1"), RIVER_ENOTFOUND);
  assert_int_equal(river_flow_arg(f, "c", "loud", "1"), RIVER_ENOTFOUND);
  assert_non_null(strstr(logbuf, "stage 'c': unknown argument 'loud' (module "
                                 "'t_pass' takes verbose:bool=false,"));
  assert_int_equal(river_flow_arg(f, "c", "ratio", "half"), RIVER_EINVAL);
  assert_non_null(strstr(logbuf, "stage 'c': argument 'ratio': expected a "
                                 "number, got 'half'"));
  assert_int_equal(river_flow_arg(f, "c", "ratio", "0.5"), RIVER_SUCCESS);
  logbuf[0] = '\0';
  assert_int_equal(river_flow_check(f), RIVER_EINVAL);
  assert_non_null(strstr(logbuf, "stage 'c': input 0 is not connected"));
  assert_int_equal(river_flow_attach(f, "a", "c", NULL), RIVER_EINVAL);
  assert_non_null(strstr(logbuf, "edge a -> c: stage 'a' has no free output "
                                 "(module 't_gen' has 1)"));
  assert_int_equal(river_flow_attach(f, "c", "zz", NULL), RIVER_ENOTFOUND);
  o.kind = RIVER_EDGE_DQ;
  o.policy = RIVER_DQ_EXCHANGE;
  assert_int_equal(river_flow_attach(f, "c", "b", &o), RIVER_EINVAL);
  assert_non_null(strstr(logbuf, "edge c -> b: a dq edge's policy is push, "
                                 "pull or static"));
  o = (river_edge_opts)RIVER_EDGE_OPTS_INIT;
  o.key = "k";
  assert_int_equal(river_flow_attach(f, "c", "b", &o), RIVER_EINVAL);
  assert_non_null(strstr(logbuf, "only an exchange edge has a key"));
  o.credits = -1;
  o.key = NULL;
  assert_int_equal(river_flow_attach(f, "c", "b", &o), RIVER_EINVAL);
  o = (river_edge_opts)RIVER_EDGE_OPTS_INIT;
  o.pace = NAN;
  assert_int_equal(river_flow_attach(f, "c", "b", &o), RIVER_EINVAL);
  assert_non_null(strstr(logbuf, "edge c -> b: pace must be a number of "
                                 "seconds"));
  o.pace = INFINITY;
  logbuf[0] = '\0';
  assert_int_equal(river_flow_attach(f, "c", "b", &o), RIVER_EINVAL);
  assert_non_null(strstr(logbuf, "pace must be a number of seconds"));
  o.pace = 0.01;
  o.policy = RIVER_DQ_STATIC;
  assert_int_equal(river_flow_attach(f, "c", "b", &o), RIVER_EINVAL);
  assert_non_null(strstr(logbuf, "edge c -> b: pace is for push dq edges "
                                 "only"));
  o = (river_edge_opts)RIVER_EDGE_OPTS_INIT;
  o.filter = "x < 5";
  o.filter_at = (river_filter_at)7;
  assert_int_equal(river_flow_attach(f, "c", "b", &o), RIVER_EINVAL);
  assert_non_null(strstr(logbuf, "edge c -> b: a filter is at the source or "
                                 "the sink"));
  o.filter = "";
  o.filter_at = RIVER_FILTER_AT_SINK;
  assert_int_equal(river_flow_attach(f, "c", "b", &o), RIVER_EINVAL);
  assert_non_null(strstr(logbuf, "the filter is empty"));
  o.filter = "x < 5";
  o.policy = RIVER_DQ_PULL;
  assert_int_equal(river_flow_attach(f, "c", "b", &o), RIVER_EINVAL);
  assert_non_null(strstr(logbuf, "a pull edge filters at its source"));
  /* complete it: d -> c -> b (b's next free input is 1) */
  assert_int_equal(river_flow_place(f, "d", "t_gen", r0, 1), RIVER_SUCCESS);
  assert_int_equal(river_flow_arg(f, "d", "records", "2G"), RIVER_SUCCESS);
  assert_int_equal(river_flow_attach(f, "d", "c", NULL), RIVER_SUCCESS);
  assert_int_equal(river_flow_attach(f, "c", "b", NULL), RIVER_SUCCESS);
  assert_int_equal(river_flow_check(f), RIVER_SUCCESS);
  assert_int_equal(river_flow_go(f), RIVER_EINVAL);  /* a plan cannot run */
  river_flow_destroy(f);
}

/* u_probe reads every kind of argument in its schema callback. */
static struct {
  int rc[12];
  int64_t i;
  uint64_t u, sz;
  double d;
  int b, inst, ninst, nin, nout;
  const char *s, *fld, *stage;
} probe;

static int probe_run(river_ctx *ctx)
{
  (void)ctx;
  return RIVER_SUCCESS;
}

static int probe_schema(river_ctx *ctx, int output, river_schema **schema)
{
  const river_schema *sc;
  int64_t i;

  (void)output;
  probe.rc[0] = river_arg_int(ctx, "n", &probe.i);
  probe.rc[1] = river_arg_uint(ctx, "u", &probe.u);
  probe.rc[2] = river_arg_uint(ctx, "sz", &probe.sz);
  probe.rc[3] = river_arg_double(ctx, "d", &probe.d);
  probe.rc[4] = river_arg_bool(ctx, "b", &probe.b);
  probe.rc[5] = river_arg_str(ctx, "s", &probe.s);
  probe.rc[6] = river_arg_str(ctx, "f", &probe.fld);
  probe.rc[7] = river_arg_int(ctx, "u", &i);        /* a uint: refused */
  probe.rc[8] = river_arg_int(ctx, "none", &i);     /* not declared */
  probe.rc[9] = river_ctx_instance(ctx, &probe.inst, &probe.ninst);
  probe.rc[10] = river_ctx_ports(ctx, &probe.nin, &probe.nout);
  probe.rc[11] = river_input_schema(ctx, 0, &sc);   /* it has no input */
  probe.stage = river_ctx_stage(ctx);
  return river_schema_parse("k:uint64", schema);
}

static void test_flow_module_args(void **state)
{
  static const river_module_decl d = {
      0, 0, 1, 1, 1,
      "n:int=-5, u:uint=7, sz:size=2Ki, d:double=0.25, b:bool=on, s:str=hi,"
      " f:field=k", probe_schema, NULL};
  const char *path = tmp_spec(
      "stages:\n"
      "  - {name: p, module: u_probe, ranks: 2, args: {u: 9, b: 'no'}}\n"
      "  - {name: q, module: t_sink, ranks: 1}\n"
      "edges: [{from: p, to: q}]\n");
  river_flow *f = NULL;
  int k;

  (void)state;
  assert_int_equal(river_module_register("u_probe", probe_run, &d, NULL),
                   RIVER_SUCCESS);
  assert_int_equal(river_flow_load_plan(path, 3, NULL, 0, &f), RIVER_SUCCESS);
  unlink(path);
  assert_int_equal(river_flow_check(f), RIVER_SUCCESS);
  for (k = 0; k <= 6; k++)
    assert_int_equal(probe.rc[k], RIVER_SUCCESS);
  assert_int_equal(probe.i, -5);
  assert_int_equal(probe.u, 9);
  assert_int_equal(probe.sz, 2048);
  assert_true(probe.d == 0.25);
  assert_int_equal(probe.b, 0);
  assert_string_equal(probe.s, "hi");
  assert_string_equal(probe.fld, "k");
  assert_int_equal(probe.rc[7], RIVER_EINVAL);
  assert_non_null(strstr(logbuf, "stage 'p': argument 'u' is a uint: "
                                 "river_arg_int cannot read it"));
  assert_int_equal(probe.rc[8], RIVER_EINVAL);
  assert_non_null(strstr(logbuf, "stage 'p': module 'u_probe' has no "
                                 "argument 'none'"));
  assert_int_equal(probe.rc[9], RIVER_SUCCESS);
  assert_int_equal(probe.inst, 0);
  assert_int_equal(probe.ninst, 2);
  assert_int_equal(probe.nin, 0);
  assert_int_equal(probe.nout, 1);
  assert_int_equal(probe.rc[11], RIVER_EINVAL);
  assert_string_equal(probe.stage, "p");
  river_flow_destroy(f);
}

/* Declarations refused at registration, each with its message. */
static void test_module_register_bad(void **state)
{
  static const struct {
    river_module_decl d;
    const char *want;
  } bad[] = {
    {{2, 1, 0, 0, 1, NULL, NULL, NULL}, "bad port counts"},
    {{0, 0, 0, -2, 1, NULL, NULL, NULL}, "bad port counts"},
    {{0, 0, 0, 0, 2, NULL, NULL, NULL}, "shares_rank must be 0 or 1"},
    {{0, 0, 0, 0, 1, "a", NULL, NULL}, "argument 'a' has no ':TYPE'"},
    {{0, 0, 0, 0, 1, "a:float", NULL, NULL}, "unknown type 'float'"},
    {{0, 0, 0, 0, 1, "9a:int", NULL, NULL}, "bad argument name '9a'"},
    {{0, 0, 0, 0, 1, "a:int=x", NULL, NULL}, "default 'x' is not an integer"},
    {{0, 0, 0, 0, 1, "a:int,a:str", NULL, NULL}, "argument 'a' declared twice"},
    {{0, 0, 0, 0, 1, "a:int,,b:str", NULL, NULL}, "empty argument"},
    {{0, 0, 0, 0, 1, "a:int,perturb:str", NULL, NULL},
     "argument 'perturb' is one every stage takes (cpu_rate"},
    {{0, 0, 0, 0, 1, "cpu_rate:double", NULL, NULL},
     "argument 'cpu_rate' is one every stage takes"},
  };
  river_module_decl ok = RIVER_MODULE_DECL_INIT;
  size_t i;

  (void)state;
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    logbuf[0] = '\0';
    assert_int_equal(river_module_register("u_bad", probe_run, &bad[i].d,
                                           NULL), RIVER_EINVAL);
    if (strstr(logbuf, bad[i].want) == NULL)
      fail_msg("declaration %zu: wanted \"%s\", got \"%s\"", i, bad[i].want,
               logbuf);
  }
  assert_int_equal(river_module_register("t_gen", probe_run, &ok, NULL),
                   RIVER_EEXIST);
  assert_int_equal(river_module_register("bad name", probe_run, &ok, NULL),
                   RIVER_EINVAL);
  assert_int_equal(river_module_register("u_ok", probe_run, &ok, NULL),
                   RIVER_SUCCESS);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_flowspec_good_pipeline, setup,
                                    teardown),
    cmocka_unit_test_setup_teardown(test_flowspec_good_paced, setup,
                                    teardown),
    cmocka_unit_test_setup_teardown(test_flowspec_good_shared, setup,
                                    teardown),
    cmocka_unit_test_setup_teardown(test_flowspec_bad_files, setup, teardown),
    cmocka_unit_test_setup_teardown(test_flowspec_params, setup, teardown),
    cmocka_unit_test_setup_teardown(test_flowspec_files, setup, teardown),
    cmocka_unit_test_setup_teardown(test_flow_api_build, setup, teardown),
    cmocka_unit_test_setup_teardown(test_flow_module_args, setup, teardown),
    cmocka_unit_test_setup_teardown(test_module_register_bad, setup,
                                    teardown),
  };

  if (flowtest_register() != RIVER_SUCCESS)
    return 1;
  return cmocka_run_group_tests(tests, NULL, NULL);
}
