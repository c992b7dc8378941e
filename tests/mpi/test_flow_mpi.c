/*
 * test_flow_mpi - running flows built with the flow API, on 8 ranks and
 * on sub-communicators of 2..8 of them:
 *
 *   split     gen on the first half of the ranks, a sink on the rest,
 *             through a push, static, pull or exchange (hash, range) DQ
 *   shared    gen and the sink on the same ranks (two stages per rank),
 *             push and one-to-one, and a three-stage chain with a copying
 *             user module between them, all on every rank
 *   failure   a module that fails on one instance (the last, a middle
 *             one) or on every one at once: the same error on every
 *             rank, no hang
 *   peers     a stage's instances agree on a total (river_ctx_comm, a
 *             nonblocking allreduce, river_ctx_wait) beside gen
 *   async     go_async, then test until done
 *   end steps river_ctx_at_end: called once per instance after the
 *             outcome is agreed, with RIVER_SUCCESS or the flow's error
 *             (a failure upstream included); a publish that fails on
 *             one instance fails the flow on every rank
 *
 * Every record is delivered exactly once: the sinks' order-independent
 * digest (count, sum and xor of per-record CRCs, summed over the ranks)
 * equals the digest of the records gen was asked for, computed here.
 */
#include <river.h>
#include <river/flow.h>
#include <river/module.h>
#include <river/gensort.h>

#include <stdlib.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

struct digest {
  uint64_t records, sum, xor_;
};

static struct digest got;      /* what this rank's sink instances saw */
static int fail_instance = -1; /* "failing" fails on this instance */

static void digest_add(struct digest *d, const void *recs, size_t n,
                       size_t rs)
{
  const unsigned char *r = recs;
  uint32_t crc;
  size_t i;

  for (i = 0; i < n; i++, r += rs) {
    crc = 0;
    river_crc32c(r, rs, &crc);
    d->sum += crc;
    d->xor_ ^= river_hash64(crc + (uint64_t)rs);
  }
  d->records += n;
}

/* The digest of gensort rows 0..records-1 with seed. */
static struct digest expected(uint64_t records, uint64_t seed)
{
  struct digest d = {0, 0, 0};
  unsigned char *buf = malloc(1000 * RIVER_GENSORT_RECORD_SIZE);
  uint64_t i, k;

  for (i = 0; i < records; i += k) {
    k = records - i < 1000 ? records - i : 1000;
    river_gensort_fill(i, (size_t)k, 0, seed, buf);
    digest_add(&d, buf, (size_t)k, RIVER_GENSORT_RECORD_SIZE);
  }
  free(buf);
  return d;
}

/* ------------------------------------------------- the test modules */

static int tsink(river_ctx *ctx)
{
  const void *recs;
  size_t n;
  int i, rc;

  while ((rc = river_select(ctx, &i)) == RIVER_SUCCESS) {
    rc = river_try_get(ctx, i, &recs, &n);
    if (rc == RIVER_SUCCESS)
      digest_add(&got, recs, n, RIVER_GENSORT_RECORD_SIZE);
    else if (rc != RIVER_EOS)
      return rc;
  }
  return rc == RIVER_EOS ? RIVER_SUCCESS : rc;
}

/* Copy input 0 to output 0, a message at a time. */
static int tcopy(river_ctx *ctx)
{
  const void *recs;
  size_t n;
  int rc;

  while ((rc = river_get(ctx, 0, &recs, &n)) == RIVER_SUCCESS)
    if ((rc = river_put(ctx, 0, recs, n)) != RIVER_SUCCESS)
      return rc;
  return rc;
}

/* Like tcopy, but instance fail_instance (FAIL_ALL: every instance)
 * fails after its first message. */
#define FAIL_ALL (-2)
static int failing(river_ctx *ctx)
{
  const void *recs;
  size_t n;
  int inst, rc;

  river_ctx_instance(ctx, &inst, NULL);
  while ((rc = river_get(ctx, 0, &recs, &n)) == RIVER_SUCCESS) {
    if (inst == fail_instance || fail_instance == FAIL_ALL)
      return RIVER_EIO;
    if ((rc = river_put(ctx, 0, recs, n)) != RIVER_SUCCESS)
      return rc;
  }
  return rc;
}

/* A sink with an end step that records the outcome it was given; with
 * user "fail", instance 0's step fails to publish. */
static int end_calls, end_outcome = 1;

static int end_step(void *arg, int outcome)
{
  end_calls++;
  end_outcome = outcome;
  return arg != NULL && outcome == RIVER_SUCCESS ? RIVER_EIO
                                                 : RIVER_SUCCESS;
}

static int tend(river_ctx *ctx)
{
  int inst, rc = tsink(ctx);

  river_ctx_instance(ctx, &inst, NULL);
  if (rc == RIVER_SUCCESS)
    rc = river_ctx_at_end(ctx, end_step,
                          river_ctx_user(ctx) && inst == 0 ? ctx : NULL);
  return rc;
}

/* Count input 0, then agree with the stage's other instances (a
 * nonblocking allreduce on river_ctx_comm, waited with river_ctx_wait
 * while gen runs beside it) on the total, which must be `records`. */
static uint64_t agreed_total;

static int tagree(river_ctx *ctx)
{
  const void *recs;
  size_t n;
  uint64_t mine = 0, total = 0;
  MPI_Comm comm;
  MPI_Request req;
  int rc;

  while ((rc = river_get(ctx, 0, &recs, &n)) == RIVER_SUCCESS)
    mine += n;
  if (rc != RIVER_EOS)
    return rc;
  if ((rc = river_ctx_comm(ctx, &comm)) != RIVER_SUCCESS)
    return rc;
  MPI_Iallreduce(&mine, &total, 1, MPI_UINT64_T, MPI_SUM, comm, &req);
  rc = river_ctx_wait(ctx, &req, MPI_STATUS_IGNORE);
  agreed_total = total;
  return rc;
}

/* Instance 0 fails at once; the others wait for all the stage's
 * instances in an allreduce that instance 0 never joins: they must be
 * told (the abort notice) instead of waiting forever. */
static int tpeerfail(river_ctx *ctx)
{
  static uint64_t one = 1, total;  /* outlive the pending allreduce */
  static MPI_Request req;
  const void *recs;
  size_t n;
  MPI_Comm comm;
  int inst, rc;

  river_ctx_instance(ctx, &inst, NULL);
  if (inst == 0)
    return RIVER_EIO;
  while ((rc = river_get(ctx, 0, &recs, &n)) == RIVER_SUCCESS)
    ;
  river_ctx_comm(ctx, &comm);
  MPI_Iallreduce(&one, &total, 1, MPI_UINT64_T, MPI_SUM, comm, &req);
  rc = river_ctx_wait(ctx, &req, MPI_STATUS_IGNORE);
  return rc == RIVER_SUCCESS ? RIVER_EINVAL : rc;  /* it cannot complete */
}

static void register_modules(void)
{
  river_module_decl d = RIVER_MODULE_DECL_INIT;

  d.min_inputs = 1;
  d.max_inputs = -1;
  d.shares_rank = 1;
  MT_CHECK_RC(river_module_register("tsink", tsink, &d, NULL),
              RIVER_SUCCESS);
  MT_CHECK_RC(river_module_register("tend", tend, &d, NULL), RIVER_SUCCESS);
  MT_CHECK_RC(river_module_register("tendfail", tend, &d, "fail"),
              RIVER_SUCCESS);
  d.max_inputs = 1;
  d.min_outputs = d.max_outputs = 1;
  MT_CHECK_RC(river_module_register("tcopy", tcopy, &d, NULL),
              RIVER_SUCCESS);
  MT_CHECK_RC(river_module_register("failing", failing, &d, NULL),
              RIVER_SUCCESS);
  d.min_outputs = d.max_outputs = 0;
  MT_CHECK_RC(river_module_register("tagree", tagree, &d, NULL),
              RIVER_SUCCESS);
  MT_CHECK_RC(river_module_register("tpeerfail", tpeerfail, &d, NULL),
              RIVER_SUCCESS);
}

/* -------------------------------------------------------- the flows */

static int range_ranks(int *r, int from, int to)
{
  int i;

  for (i = from; i < to; i++)
    r[i - from] = i;
  return to - from;
}

/* Place gen (records, seed) on ranks gr[0..ng-1] as stage "gen". */
static void place_gen(river_flow *f, const int *gr, int ng, uint64_t records)
{
  char text[32];

  snprintf(text, sizeof text, "%llu", (unsigned long long)records);
  MT_CHECK_RC(river_flow_place(f, "gen", "gen", gr, ng), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_arg(f, "gen", "records", text), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_arg(f, "gen", "seed", "7"), RIVER_SUCCESS);
}

/* Run f on comm and compare the sinks' digest, summed over comm, with
 * that of `records` gensort rows (seed 7). */
static void run_and_check(river_flow *f, MPI_Comm comm, uint64_t records,
                          const char *what)
{
  struct digest want = expected(records, 7), all;
  int rc;

  memset(&got, 0, sizeof got);
  rc = river_flow_go(f);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  MPI_Allreduce(&got, &all, 3, MPI_UINT64_T, MPI_SUM, comm);
  all.xor_ = 0;
  MPI_Allreduce(&got.xor_, &all.xor_, 1, MPI_UINT64_T, MPI_BXOR, comm);
  if (all.records != want.records || all.sum != want.sum
      || all.xor_ != want.xor_) {
    fprintf(stderr, "%s: got %llu records, want %llu (or digest differs)\n",
            what, (unsigned long long)all.records,
            (unsigned long long)want.records);
    MT_CHECK(0);
  }
  MT_CHECK_RC(river_flow_destroy(f), RIVER_SUCCESS);
}

/* gen on the first half, tsink on the rest, through edge e. */
static void split_flow(MPI_Comm comm, int n, const river_edge_opts *e,
                       const char *what)
{
  int gr[8], sr[8], ng = n / 2, ns;
  river_flow *f = NULL;

  ng = ng < 1 ? 1 : ng;
  range_ranks(gr, 0, ng);
  ns = range_ranks(sr, ng, n);
  MT_CHECK_RC(river_flow_create(comm, &f), RIVER_SUCCESS);
  place_gen(f, gr, ng, 20011);
  MT_CHECK_RC(river_flow_place(f, "sink", "tsink", sr, ns), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_attach(f, "gen", "sink", e), RIVER_SUCCESS);
  run_and_check(f, comm, 20011, what);
}

/* gen and tsink on every rank of comm (and tcopy between them if
 * chain), through edges e. */
static void shared_flow(MPI_Comm comm, int n, const river_edge_opts *e,
                        int chain, const char *what)
{
  int all[8];
  river_flow *f = NULL;

  range_ranks(all, 0, n);
  MT_CHECK_RC(river_flow_create(comm, &f), RIVER_SUCCESS);
  place_gen(f, all, n, 30011);
  MT_CHECK_RC(river_flow_place(f, "sink", "tsink", all, n), RIVER_SUCCESS);
  if (chain) {
    MT_CHECK_RC(river_flow_place(f, "copy", "tcopy", all, n), RIVER_SUCCESS);
    MT_CHECK_RC(river_flow_attach(f, "gen", "copy", e), RIVER_SUCCESS);
    MT_CHECK_RC(river_flow_attach(f, "copy", "sink", e), RIVER_SUCCESS);
  } else {
    MT_CHECK_RC(river_flow_attach(f, "gen", "sink", e), RIVER_SUCCESS);
  }
  run_and_check(f, comm, 30011, what);
}

static void flows_on(MPI_Comm comm, int n)
{
  river_edge_opts e = RIVER_EDGE_OPTS_INIT;
  char what[64];

  snprintf(what, sizeof what, "split push on %d", n);
  split_flow(comm, n, &e, what);
  e.policy = RIVER_DQ_STATIC;
  snprintf(what, sizeof what, "split static on %d", n);
  split_flow(comm, n, &e, what);
  e.policy = RIVER_DQ_PULL;
  snprintf(what, sizeof what, "split pull on %d", n);
  split_flow(comm, n, &e, what);
  e.policy = RIVER_DQ_PUSH;
  e.kind = RIVER_EDGE_EXCHANGE;
  snprintf(what, sizeof what, "split exchange hash on %d", n);
  split_flow(comm, n, &e, what);
  e.by = RIVER_BY_RANGE;
  snprintf(what, sizeof what, "split exchange range on %d", n);
  split_flow(comm, n, &e, what);
  e = (river_edge_opts)RIVER_EDGE_OPTS_INIT;
  snprintf(what, sizeof what, "shared push on %d", n);
  shared_flow(comm, n, &e, 0, what);
  e.kind = RIVER_EDGE_ONE_TO_ONE;
  snprintf(what, sizeof what, "shared one-to-one on %d", n);
  shared_flow(comm, n, &e, 0, what);
  e.kind = RIVER_EDGE_DQ;
  e.message_size = 4096;   /* many messages, few credits: much yielding */
  e.credits = 2;
  snprintf(what, sizeof what, "shared chain on %d", n);
  shared_flow(comm, n, &e, 1, what);
  e.pace = 0.001;          /* consumers hold back all but ~1 ms of work */
  snprintf(what, sizeof what, "shared chain paced 1 ms on %d", n);
  shared_flow(comm, n, &e, 1, what);
  e.pace = -1;
  snprintf(what, sizeof what, "shared chain unpaced on %d", n);
  shared_flow(comm, n, &e, 1, what);
}

/* gen -> failing (instance fail, or FAIL_ALL) -> sink: EIO on every
 * rank, no hang. */
static void failure_of(MPI_Comm comm, int n, int fail, int async)
{
  int all[8];
  river_flow *f = NULL;
  river_edge_opts one = RIVER_EDGE_OPTS_INIT;

  range_ranks(all, 0, n);
  fail_instance = fail;
  one.kind = RIVER_EDGE_ONE_TO_ONE;  /* the failing instance gets records */
  MT_CHECK_RC(river_flow_create(comm, &f), RIVER_SUCCESS);
  place_gen(f, all, n, 50000);
  MT_CHECK_RC(river_flow_place(f, "bad", "failing", all, n), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_place(f, "sink", "tsink", all, n), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_attach(f, "gen", "bad", &one), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_attach(f, "bad", "sink", NULL), RIVER_SUCCESS);
  if (async) {   /* river_flow_test's steps never nap: the notices are
                    forwarded by the waits of the tasks themselves */
    int done = 0, rc = RIVER_SUCCESS;
    MT_CHECK_RC(river_flow_go_async(f), RIVER_SUCCESS);
    while (!done && rc == RIVER_SUCCESS)
      rc = river_flow_test(f, &done);
    MT_CHECK(done);
    MT_CHECK_RC(rc, RIVER_EIO);
  } else {
    MT_CHECK_RC(river_flow_go(f), RIVER_EIO);
  }
  MT_CHECK_RC(river_flow_go(f), RIVER_ESTATE);  /* a flow runs once */
  MT_CHECK_RC(river_flow_destroy(f), RIVER_SUCCESS);
}

/* A module failing on one instance fails the flow on every rank: the
 * last, one in the middle (the abort notice's tree rooted there, src/
 * flow_run.c), and every instance at once (a tree from each: on 8
 * ranks, 4 beyond those allocated at the start), each run by
 * river_flow_go and
 * by river_flow_test (a review found the async run hung: no nap, so no
 * backoff hook forwarded the notices). */
static void failure(MPI_Comm comm, int n)
{
  const int which[3] = {n - 1, n / 2, FAIL_ALL};
  int k;

  for (k = 0; k < 6; k++)
    failure_of(comm, n, which[k % 3], k >= 3);
  fail_instance = -1;
}

/* End steps: gen -> [failing ->] sink with an end step, on every rank. */
static void end_run(MPI_Comm comm, int n, const char *sink, int fail,
                    int want)
{
  int all[8];
  river_flow *f = NULL;
  river_edge_opts one = RIVER_EDGE_OPTS_INIT;

  range_ranks(all, 0, n);
  fail_instance = fail ? n - 1 : -1;
  one.kind = RIVER_EDGE_ONE_TO_ONE;
  end_calls = 0;
  end_outcome = 1;
  MT_CHECK_RC(river_flow_create(comm, &f), RIVER_SUCCESS);
  place_gen(f, all, n, 20000);
  MT_CHECK_RC(river_flow_place(f, "bad", "failing", all, n), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_place(f, "sink", sink, all, n), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_attach(f, "gen", "bad", &one), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_attach(f, "bad", "sink", NULL), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_go(f), want);
  /* every instance's step ran once, with the agreed outcome (a failed
   * publish happens after it: the steps saw success) */
  MT_CHECK_RC(end_calls, 1);
  MT_CHECK_RC(end_outcome, fail ? RIVER_EIO : RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_destroy(f), RIVER_SUCCESS);
  fail_instance = -1;
}

static void end_steps(MPI_Comm comm, int n)
{
  end_run(comm, n, "tend", 0, RIVER_SUCCESS);
  end_run(comm, n, "tend", 1, RIVER_EIO);
  end_run(comm, n, "tendfail", 0, RIVER_EIO);
}

/* A failure upstream of coll_write: the write is never committed. The
 * failing instance's end of output reaches coll_write like any end of
 * input; only the abort notice, which must arrive first, tells it the
 * data is not whole. Rounds, for the race between the two. */
static void failure_before_write(MPI_Comm comm, int n, int rounds)
{
  char root[256] = "", arg[300];
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  river_pcoll *pc = NULL;
  river_flow *f = NULL;
  river_edge_opts one = RIVER_EDGE_OPTS_INIT;
  int all[8], rank, round;

  one.kind = RIVER_EDGE_ONE_TO_ONE;

  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    const char *t = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/river_flowfail_XXXXXX",
             t && *t ? t : "/tmp");
    if (mkdtemp(root) == NULL)
      root[0] = '\0';
  }
  MPI_Bcast(root, sizeof root, MPI_CHAR, 0, comm);
  MT_CHECK(root[0] != '\0');
  if (root[0] == '\0')
    return;
  snprintf(arg, sizeof arg, "%s", root);
  o.root = root;
  range_ranks(all, 0, n);
  for (round = 0; round < rounds; round++) {
    fail_instance = round % n;
    MT_CHECK_RC(river_flow_create(comm, &f), RIVER_SUCCESS);
    place_gen(f, all, n, 50000);
    MT_CHECK_RC(river_flow_place(f, "bad", "failing", all, n), RIVER_SUCCESS);
    MT_CHECK_RC(river_flow_place(f, "w", "coll_write", all, n),
                RIVER_SUCCESS);
    MT_CHECK_RC(river_flow_arg(f, "w", "coll", "partial"), RIVER_SUCCESS);
    MT_CHECK_RC(river_flow_arg(f, "w", "root", arg), RIVER_SUCCESS);
    /* one-to-one: the failing instance surely gets records */
    MT_CHECK_RC(river_flow_attach(f, "gen", "bad", &one), RIVER_SUCCESS);
    MT_CHECK_RC(river_flow_attach(f, "bad", "w", NULL), RIVER_SUCCESS);
    MT_CHECK_RC(river_flow_go(f), RIVER_EIO);
    MT_CHECK_RC(river_flow_destroy(f), RIVER_SUCCESS);
    MT_CHECK_RC(river_pcoll_open(comm, "partial", &o, &pc), RIVER_ENOTFOUND);
    if (pc != NULL) {
      river_pcoll_close(pc);
      pc = NULL;
      if (rank == 0)
        river_pcoll_remove("partial", &o);
    }
  }
  MPI_Barrier(comm);
  if (rank == 0) {
    /* nothing left but the writers' lock file and empty disk folders */
    DIR *d = opendir(root);
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
        continue;
      snprintf(arg, sizeof arg, "%s/%s", root, e->d_name);
      if (rmdir(arg) == 0)
        continue;
      if (strcmp(e->d_name, ".partial.lock") != 0) {
        fprintf(stderr, "left behind: %s\n", arg);
        MT_CHECK(!"the failed writes left files behind");
      }
      unlink(arg);
    }
    if (d != NULL)
      closedir(d);
    rmdir(root);
  }
}

/* A stage whose instances talk among themselves while sharing ranks. */
static void peers(MPI_Comm comm, int n)
{
  int all[8];
  river_flow *f = NULL;
  MPI_Comm none = MPI_COMM_NULL;

  range_ranks(all, 0, n);
  agreed_total = 0;
  MT_CHECK_RC(river_flow_create(comm, &f), RIVER_SUCCESS);
  place_gen(f, all, n, 7777);
  MT_CHECK_RC(river_flow_place(f, "agree", "tagree", all, n), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_attach(f, "gen", "agree", NULL), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_go(f), RIVER_SUCCESS);
  MT_CHECK(agreed_total == 7777);
  MT_CHECK_RC(river_flow_destroy(f), RIVER_SUCCESS);
  MT_CHECK_RC(river_ctx_comm(NULL, &none), RIVER_EINVAL);

  /* An instance that fails before its peers' collective: no hang, the
   * failure everywhere. (The allreduce of the others stays pending: its
   * buffers are static here, as a module's must be in that case.) */
  MT_CHECK_RC(river_flow_create(comm, &f), RIVER_SUCCESS);
  place_gen(f, all, n, 7777);
  MT_CHECK_RC(river_flow_place(f, "peers", "tpeerfail", all, n),
              RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_attach(f, "gen", "peers", NULL), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_go(f), RIVER_EIO);
  MT_CHECK_RC(river_flow_destroy(f), RIVER_SUCCESS);
}

/* go_async, then test until done; the stage totals. The polling is
 * bounded by time, not by a count of polls: how many a run takes
 * depends on how the ranks are scheduled (1 to 5 here, idle; a rank
 * whose peers are off the cores polls in a loop meanwhile). A flow that
 * never ends fails the check at the deadline, 30 s times
 * RIVER_TEST_TIMEOUT_SCALE, well inside the launcher's limit. */
static void async(MPI_Comm comm, int n)
{
  const char *scale = getenv("RIVER_TEST_TIMEOUT_SCALE");
  double deadline = river_wtime()
                    + 30.0 * (scale != NULL && atof(scale) > 1.0
                              ? atof(scale) : 1.0);
  int gr[1] = {0}, all[8], done = 0;
  river_flow *f = NULL;
  river_stage_stats st;

  range_ranks(all, 0, n);
  MT_CHECK_RC(river_flow_create(comm, &f), RIVER_SUCCESS);
  place_gen(f, gr, 1, 1000);
  MT_CHECK_RC(river_flow_place(f, "sink", "tsink", all, n), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_attach(f, "gen", "sink", NULL), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_test(f, &done), RIVER_ESTATE);  /* not started */
  MT_CHECK_RC(river_flow_go_async(f), RIVER_SUCCESS);
  while (!done && river_wtime() < deadline)
    MT_CHECK_RC(river_flow_test(f, &done), RIVER_SUCCESS);
  MT_CHECK(done);
  MT_CHECK_RC(river_flow_stage_stats(f, "sink", &st), RIVER_SUCCESS);
  MT_CHECK(st.records_in == 1000 && st.ninstances == n);
  MT_CHECK_RC(river_flow_stage_stats(f, "gen", &st), RIVER_SUCCESS);
  MT_CHECK(st.records_out == 1000 && st.bytes_out == 100000
           && st.slowest == 0);
  MT_CHECK_RC(river_flow_stage_stats(f, "nosuch", &st), RIVER_ENOTFOUND);
  MT_CHECK_RC(river_flow_destroy(f), RIVER_SUCCESS);
}

int main(int argc, char **argv)
{
  int rank, size, n, rc;

  rc = river_init(&argc, &argv);
  if (rc != RIVER_SUCCESS)
    return 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  register_modules();
  for (n = 2; n <= size && n <= 8; n++) {
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, rank < n ? 0 : MPI_UNDEFINED, rank, &sub);
    if (sub != MPI_COMM_NULL) {
      flows_on(sub, n);
      MPI_Comm_free(&sub);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  failure(MPI_COMM_WORLD, size);
  failure_before_write(MPI_COMM_WORLD, size, 20);
  peers(MPI_COMM_WORLD, size);
  async(MPI_COMM_WORLD, size);
  end_steps(MPI_COMM_WORLD, size);
  rc = mt_verdict(MPI_COMM_WORLD, "test_flow_mpi");
  river_finalize();
  return rc;
}
