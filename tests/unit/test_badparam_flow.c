/*
 * test_badparam_flow.c - bad arguments to the flow layer (river/flow.h,
 * river/module.h; badparam.h says what every test_badparam* program
 * checks). A flow to pass where one is needed is loaded as a plan of
 * one stage of a module registered here.
 */
#include "badparam.h"

static int run(river_ctx *ctx)
{
  return RIVER_SUCCESS;
}

/* A plan with stage "a" of module b_mod (no ports) on rank 0 of 2. */
static river_flow *plan(void)
{
  static const river_module_decl d = {0, 0, 0, 0, 1, "n:int=1", NULL, NULL};
  char path[] = "/tmp/badparam-flow-XXXXXX";
  const char text[] = "stages: [{name: a, module: b_mod, ranks: [0]}]\n";
  river_flow *f = NULL;
  int fd;

  river_module_register("b_mod", run, &d, NULL);
  fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)sizeof text - 1);
  close(fd);
  assert_int_equal(river_flow_load_plan(path, 2, NULL, 0, &f), RIVER_SUCCESS);
  unlink(path);
  return f;
}

/* river/flow.h: NULL flows, names, outputs; nonsense sizes. Outputs stay
 * as they were. */
static void test_badparam_flow(void **state)
{
  river_flow *keep = (river_flow *)&keep, *out = keep, *f = plan();
  river_stage_stats st;
  const char *kv[] = {"a=1"}, *name = "x";
  int r0[] = {0}, n = 7, done = 7;
  size_t len = 4;
  char buf[4];

  river_log_set_handler(quiet, NULL);
  assert_int_equal(river_flow_create(MPI_COMM_NULL, &out), RIVER_EINVAL);
  assert_int_equal(river_flow_create(MPI_COMM_WORLD, NULL), RIVER_EINVAL);
  assert_ptr_equal(out, keep);
  assert_int_equal(river_flow_origin(NULL, "x"), RIVER_EINVAL);
  assert_int_equal(river_flow_place(NULL, "s", "b_mod", r0, 1), RIVER_EINVAL);
  assert_int_equal(river_flow_place(f, NULL, "b_mod", r0, 1), RIVER_EINVAL);
  assert_int_equal(river_flow_place(f, "s", NULL, r0, 1), RIVER_EINVAL);
  assert_int_equal(river_flow_place(f, "s", "b_mod", NULL, 1), RIVER_EINVAL);
  assert_int_equal(river_flow_place(f, "s", "b_mod", r0, -1), RIVER_EINVAL);
  assert_int_equal(river_flow_place(f, "", "b_mod", r0, 1), RIVER_EINVAL);
  assert_int_equal(river_flow_arg(NULL, "a", "n", "1"), RIVER_EINVAL);
  assert_int_equal(river_flow_arg(f, NULL, "n", "1"), RIVER_EINVAL);
  assert_int_equal(river_flow_arg(f, "a", NULL, "1"), RIVER_EINVAL);
  assert_int_equal(river_flow_arg(f, "a", "n", NULL), RIVER_EINVAL);
  assert_int_equal(river_flow_attach(NULL, "a", "a", NULL), RIVER_EINVAL);
  assert_int_equal(river_flow_attach(f, NULL, "a", NULL), RIVER_EINVAL);
  assert_int_equal(river_flow_attach(f, "a", NULL, NULL), RIVER_EINVAL);
  assert_int_equal(river_flow_check(NULL), RIVER_EINVAL);
  assert_int_equal(river_flow_go(NULL), RIVER_EINVAL);
  assert_int_equal(river_flow_go_async(NULL), RIVER_EINVAL);
  assert_int_equal(river_flow_test(NULL, &done), RIVER_EINVAL);
  assert_int_equal(river_flow_test(f, NULL), RIVER_EINVAL);
  assert_int_equal(river_flow_wait(NULL), RIVER_EINVAL);
  assert_int_equal(river_flow_stage_stats(NULL, "a", &st), RIVER_EINVAL);
  assert_int_equal(river_flow_stage_stats(f, NULL, &st), RIVER_EINVAL);
  assert_int_equal(river_flow_stage_stats(f, "a", NULL), RIVER_EINVAL);
  assert_int_equal(river_flow_nstages(NULL, &n), RIVER_EINVAL);
  assert_int_equal(river_flow_nstages(f, NULL), RIVER_EINVAL);
  assert_int_equal(river_flow_stage(NULL, 0, &name, NULL, NULL, NULL),
                   RIVER_EINVAL);
  assert_int_equal(river_flow_stage(f, 1, &name, NULL, NULL, NULL),
                   RIVER_EINVAL);
  assert_int_equal(river_flow_stage(f, -1, &name, NULL, NULL, NULL),
                   RIVER_EINVAL);
  assert_string_equal(name, "x");
  assert_int_equal(river_flow_dot(NULL, buf, &len), RIVER_EINVAL);
  assert_int_equal(river_flow_dot(f, buf, NULL), RIVER_EINVAL);
  assert_int_equal(river_flow_dot(f, buf, &len), RIVER_ENOBUFS);
  assert_true(len > 4);
  assert_int_equal(river_flow_load(MPI_COMM_WORLD, NULL, NULL, 0, &out),
                   RIVER_EINVAL);
  assert_int_equal(river_flow_load(MPI_COMM_NULL, "x.yaml", NULL, 0, &out),
                   RIVER_EINVAL);
  assert_int_equal(river_flow_load_plan(NULL, 2, NULL, 0, &out), RIVER_EINVAL);
  assert_int_equal(river_flow_load_plan("x.yaml", 0, NULL, 0, &out),
                   RIVER_EINVAL);
  assert_int_equal(river_flow_load_plan("x.yaml", 2, NULL, 0, NULL),
                   RIVER_EINVAL);
  assert_int_equal(river_flow_load_plan("x.yaml", 2, NULL, 1, &out),
                   RIVER_EINVAL);
  assert_int_equal(river_flow_load_plan("x.yaml", 2, kv, -1, &out),
                   RIVER_EINVAL);
  assert_ptr_equal(out, keep);
  assert_int_equal(n, 7);
  assert_int_equal(done, 7);
  assert_int_equal(river_flow_destroy(NULL), RIVER_SUCCESS);
  assert_int_equal(river_flow_destroy(f), RIVER_SUCCESS);
  river_log_set_handler(NULL, NULL);
}

/* An end step (never called here). */
static int end_step(void *arg, int outcome)
{
  (void)arg;
  return outcome;
}

/* river/module.h: registration, and every context call with no context. */
static void test_badparam_module(void **state)
{
  river_module_decl d = RIVER_MODULE_DECL_INIT;
  const river_schema *sc = NULL;
  const char *s = "x";
  int64_t i = 7;
  uint64_t u = 7;
  double x = 7;
  int b = 7;
  river_module_stats ms;

  river_log_set_handler(quiet, NULL);
  assert_int_equal(river_module_register(NULL, run, &d, NULL), RIVER_EINVAL);
  assert_int_equal(river_module_register("m", NULL, &d, NULL), RIVER_EINVAL);
  assert_int_equal(river_module_register("m", run, NULL, NULL), RIVER_EINVAL);
  assert_int_equal(river_module_register("", run, &d, NULL), RIVER_EINVAL);
  assert_ptr_equal(river_ctx_user(NULL), NULL);
  assert_int_equal(river_ctx_instance(NULL, &b, &b), RIVER_EINVAL);
  assert_ptr_equal(river_ctx_stage(NULL), NULL);
  assert_int_equal(river_ctx_ports(NULL, &b, &b), RIVER_EINVAL);
  assert_int_equal(river_input_schema(NULL, 0, &sc), RIVER_EINVAL);
  assert_int_equal(river_output_schema(NULL, 0, &sc), RIVER_EINVAL);
  assert_int_equal(river_arg_str(NULL, "a", &s), RIVER_EINVAL);
  assert_int_equal(river_arg_int(NULL, "a", &i), RIVER_EINVAL);
  assert_int_equal(river_arg_uint(NULL, "a", &u), RIVER_EINVAL);
  assert_int_equal(river_arg_double(NULL, "a", &x), RIVER_EINVAL);
  assert_int_equal(river_arg_bool(NULL, "a", &b), RIVER_EINVAL);
  assert_int_equal(river_ctx_at_end(NULL, end_step, NULL), RIVER_EINVAL);
  /* The calls of a running module, with no context: RIVER_EINVAL, the
   * one code for a NULL argument (RIVER_ESTATE is for a context that is
   * not running). */
  {
    const void *recs = NULL;
    void *buf = NULL;
    size_t n = 7;
    int in = 7, c = 7;
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Request req = MPI_REQUEST_NULL;
    assert_int_equal(river_get(NULL, 0, &recs, &n), RIVER_EINVAL);
    assert_int_equal(river_try_get(NULL, 0, &recs, &n), RIVER_EINVAL);
    assert_int_equal(river_select(NULL, &in), RIVER_EINVAL);
    assert_int_equal(river_put(NULL, 0, &u, 1), RIVER_EINVAL);
    assert_int_equal(river_reserve(NULL, 0, &buf, &n), RIVER_EINVAL);
    assert_int_equal(river_commit(NULL, 0, 1), RIVER_EINVAL);
    assert_int_equal(river_end_unit(NULL, 0), RIVER_EINVAL);
    assert_int_equal(river_get_unit(NULL, 0, &u, NULL, NULL), RIVER_EINVAL);
    assert_int_equal(river_set_tag(NULL, 0, 1), RIVER_EINVAL);
    assert_int_equal(river_get_tag(NULL, 0, &u), RIVER_EINVAL);
    assert_int_equal(river_output_consumers(NULL, 0, &c), RIVER_EINVAL);
    assert_int_equal(river_set_partitioner(NULL, 0, RIVER_BY_HASH, NULL, 0),
                     RIVER_EINVAL);
    assert_int_equal(river_ctx_comm(NULL, &comm), RIVER_EINVAL);
    assert_int_equal(river_ctx_wait(NULL, &req, MPI_STATUS_IGNORE),
                     RIVER_EINVAL);
    assert_int_equal(river_ctx_stats(NULL, &ms), RIVER_EINVAL);
    assert_int_equal(river_ctx_keep_gd(NULL, NULL), RIVER_EINVAL);
    assert_true(recs == NULL && buf == NULL && n == 7 && in == 7 && c == 7);
    assert_true(comm == MPI_COMM_NULL && req == MPI_REQUEST_NULL);
  }
  assert_int_equal(river_ctx_at_end((river_ctx *)&d, NULL, NULL),
                   RIVER_EINVAL);
  assert_ptr_equal(sc, NULL);
  assert_string_equal(s, "x");
  assert_true(i == 7 && u == 7 && x == 7 && b == 7);
  river_log_set_handler(NULL, NULL);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_badparam_flow),
    cmocka_unit_test(test_badparam_module),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
