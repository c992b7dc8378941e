/*
 * test_badparam_dq_gd.c - bad arguments to the distributed queue and
 * graduated declustering (badparam.h says what every test_badparam*
 * program checks).
 */
#include "badparam.h"

#include <math.h>

/* Distributed queues, without MPI: only refusals that come before MPI is
 * needed (MPI_COMM_NULL, NULL handles and outputs, record size 0, bad
 * role bits, policies and credits). Outputs stay as they were. */
static void test_badparam_dq(void **state)
{
  river_dq_opts o = RIVER_DQ_OPTS_INIT, x;
  river_dq *keep = (river_dq *)&o, *q = keep;
  river_dq_stats st;
  const void *recs = &o;
  unsigned char rec[16] = {0};
  size_t n = 7;
  int from = 7, first = 7, last = 7;
  uint64_t unit = 7;

  river_log_set_handler(collect, NULL);
  msgs[0] = '\0';
  assert_int_equal(river_dq_create(MPI_COMM_NULL, RIVER_DQ_PRODUCER, 16, &o,
                                   &q), RIVER_EINVAL);
  assert_int_equal(river_dq_create(MPI_COMM_WORLD, RIVER_DQ_PRODUCER, 16, &o,
                                   NULL), RIVER_EINVAL);
  assert_int_equal(river_dq_create(MPI_COMM_WORLD, RIVER_DQ_CONSUMER, 0, &o,
                                   &q), RIVER_EINVAL);
  assert_non_null(strstr(msgs, "record_size"));
  assert_int_equal(river_dq_create(MPI_COMM_WORLD, 4, 16, &o, &q),
                   RIVER_EINVAL);
  assert_int_equal(river_dq_create(MPI_COMM_WORLD, -1, 16, NULL, &q),
                   RIVER_EINVAL);
  assert_non_null(strstr(msgs, "role"));
  x = o;
  x.policy = (river_dq_policy)(RIVER_DQ_PULL + 1);
  assert_int_equal(river_dq_create(MPI_COMM_WORLD, RIVER_DQ_PRODUCER, 16, &x,
                                   &q), RIVER_EINVAL);
  x.policy = (river_dq_policy)-1;
  assert_int_equal(river_dq_create(MPI_COMM_WORLD, RIVER_DQ_PRODUCER, 16, &x,
                                   &q), RIVER_EINVAL);
  assert_non_null(strstr(msgs, "policy"));
  x = o;
  x.credits = -1;
  assert_int_equal(river_dq_create(MPI_COMM_WORLD, RIVER_DQ_PRODUCER, 16, &x,
                                   &q), RIVER_EINVAL);
  assert_non_null(strstr(msgs, "credits"));
  x = o;
  x.pace = NAN;
  assert_int_equal(river_dq_create(MPI_COMM_WORLD, RIVER_DQ_CONSUMER, 16, &x,
                                   &q), RIVER_EINVAL);
  assert_non_null(strstr(msgs, "pace"));
  x.pace = INFINITY;
  assert_int_equal(river_dq_create(MPI_COMM_WORLD, RIVER_DQ_CONSUMER, 16, &x,
                                   &q), RIVER_EINVAL);
  x = o;
  x.message_size = 16; /* no room for a header and a 16-byte record */
  assert_int_equal(river_dq_create(MPI_COMM_WORLD, RIVER_DQ_PRODUCER, 16, &x,
                                   &q), RIVER_EINVAL);
  x = o;
  x.policy = RIVER_DQ_EXCHANGE; /* without a partition function */
  assert_int_equal(river_dq_create(MPI_COMM_WORLD, RIVER_DQ_PRODUCER, 16, &x,
                                   &q), RIVER_EINVAL);
  assert_non_null(strstr(msgs, "partition"));
  river_log_set_handler(NULL, NULL);
  assert_ptr_equal(q, keep);

  assert_int_equal(river_dq_put(NULL, rec, 1), RIVER_EINVAL);
  assert_int_equal(river_dq_try_put(NULL, rec, 1), RIVER_EINVAL);
  assert_int_equal(river_dq_close(NULL), RIVER_EINVAL);
  assert_int_equal(river_dq_try_close(NULL), RIVER_EINVAL);
  {
    void *rb = NULL;
    assert_int_equal(river_dq_reserve(NULL, &rb, &n), RIVER_EINVAL);
    assert_int_equal(river_dq_commit(NULL, 1), RIVER_EINVAL);
    assert_int_equal(river_dq_try_reserve(NULL, &rb, &n), RIVER_EINVAL);
    assert_int_equal(river_dq_try_reserve(NULL, NULL, NULL), RIVER_EINVAL);
    assert_int_equal(river_dq_try_commit(NULL, 1), RIVER_EINVAL);
  }
  assert_int_equal(river_dq_get(NULL, &recs, &n, &from), RIVER_EINVAL);
  assert_int_equal(river_dq_try_get(NULL, &recs, &n, &from), RIVER_EINVAL);
  assert_int_equal(river_dq_release(NULL), RIVER_EINVAL);
  assert_int_equal(river_dq_stats_get(NULL, &st), RIVER_EINVAL);
  assert_int_equal(river_dq_put_max(NULL, &n), RIVER_EINVAL);
  assert_int_equal(river_dq_put_max(NULL, NULL), RIVER_EINVAL);
  assert_int_equal(river_dq_waiting_for(NULL, &from, 1, &first),
                   RIVER_EINVAL);
  assert_int_equal(river_dq_waiting_for(NULL, NULL, 0, &first),
                   RIVER_EINVAL);
  assert_int_equal(river_dq_waiting_for(NULL, NULL, -1, NULL), RIVER_EINVAL);
  /* RIVER_DQ_PULL's unit calls. */
  assert_int_equal(river_dq_end_unit(NULL), RIVER_EINVAL);
  assert_int_equal(river_dq_try_end_unit(NULL), RIVER_EINVAL);
  assert_int_equal(river_dq_unit(NULL, &unit, &first, &last), RIVER_EINVAL);
  assert_int_equal(river_dq_unit(NULL, NULL, NULL, NULL), RIVER_EINVAL);
  assert_int_equal(river_dq_set_tag(NULL, 1), RIVER_EINVAL);
  assert_int_equal(river_dq_tag(NULL, &unit), RIVER_EINVAL);
  assert_int_equal(river_dq_tag(NULL, NULL), RIVER_EINVAL);
  assert_true(unit == 7 && first == 7 && last == 7);
  x = o;
  x.policy = RIVER_DQ_PULL;
  x.credits = -1;
  assert_int_equal(river_dq_create(MPI_COMM_WORLD, RIVER_DQ_CONSUMER, 16, &x,
                                   &q), RIVER_EINVAL);
  assert_ptr_equal(q, keep);
  assert_ptr_equal(recs, &o);
  assert_int_equal(n + (size_t)from, 14);
  assert_int_equal(river_dq_destroy(NULL), RIVER_SUCCESS);
}

/* A GD read function that must never be called here. */
static int gd_never_read(void *ctx, int partition, int copy, int disk,
                         uint64_t block, void *buf, size_t bufsize,
                         size_t *nrecords)
{
  fail_msg("gd read called without MPI");
  return RIVER_EINVAL;
}

/* A good layout: 4 partitions of 10 records on 4 disks, 2 copies. */
static void gd_layout(river_gd_layout *l)
{
  static const uint64_t nrec[4] = {10, 10, 10, 10};

  memset(l, 0, sizeof *l);
  l->npartitions = 4;
  l->ndisks = 4;
  l->replication = 2;
  l->record_size = 100;
  l->records_per_block = 10;
  l->nrecords = nrec;
}

/* Graduated declustering, without MPI: river_gd_create and river_gd_open
 * ask MPI_Initialized first, so with MPI not initialised every call is
 * refused with RIVER_EINVAL, good arguments or bad, before any other MPI
 * call and without calling read; the checks of the arguments themselves
 * run under MPI (tests/mpi/test_gd_mpi.c). *out is NULL after a refused
 * create or open (river_gd_create clears it first), never anything
 * else. First create. */
static void test_badparam_gd_create(void **state)
{
  static const int first[4] = {0, 1, 2, 7};
  river_gd_layout l;
  river_gd_opts o = RIVER_GD_OPTS_INIT, x;
  river_gd *keep = (river_gd *)&o, *g = keep;
  const uint64_t *nrec;
  int init = 1;
  double nan = strtod("nan", NULL);

  assert_int_equal(MPI_Initialized(&init), MPI_SUCCESS);
  assert_int_equal(init, 0);
  gd_layout(&l);
  nrec = l.nrecords;

  river_log_set_handler(collect, NULL);
  msgs[0] = '\0';
  /* A good layout and options: still no MPI. */
  assert_int_equal(river_gd_create(MPI_COMM_WORLD, &l, gd_never_read, NULL,
                                   &o, &g), RIVER_EINVAL);
  assert_null(g);
  g = keep;
  assert_int_equal(river_gd_create(MPI_COMM_WORLD, &l, gd_never_read, NULL,
                                   NULL, &g), RIVER_EINVAL);
  assert_null(g);
  /* NULL and nonsense. */
  g = keep;
  assert_int_equal(river_gd_create(MPI_COMM_NULL, &l, gd_never_read, NULL,
                                   &o, &g), RIVER_EINVAL);
  assert_null(g);
  g = keep;
  assert_int_equal(river_gd_create(MPI_COMM_WORLD, NULL, gd_never_read, NULL,
                                   &o, &g), RIVER_EINVAL);
  assert_null(g);
  g = keep;
  assert_int_equal(river_gd_create(MPI_COMM_WORLD, &l, NULL, NULL, &o, &g),
                   RIVER_EINVAL);
  assert_null(g);
  assert_int_equal(river_gd_create(MPI_COMM_WORLD, &l, gd_never_read, NULL,
                                   &o, NULL), RIVER_EINVAL);
  l.replication = 5;            /* more copies than disks */
  g = keep;
  assert_int_equal(river_gd_create(MPI_COMM_WORLD, &l, gd_never_read, NULL,
                                   &o, &g), RIVER_EINVAL);
  assert_null(g);
  l.replication = 2;
  l.first_disk = first;         /* disk 7 of 4 */
  assert_int_equal(river_gd_create(MPI_COMM_WORLD, &l, gd_never_read, NULL,
                                   &o, &g), RIVER_EINVAL);
  l.first_disk = NULL;
  l.nrecords = NULL;
  assert_int_equal(river_gd_create(MPI_COMM_WORLD, &l, gd_never_read, NULL,
                                   &o, &g), RIVER_EINVAL);
  l.nrecords = nrec;
  x = o;
  x.policy = (river_gd_policy)(RIVER_GD_NOMIRROR + 1);
  assert_int_equal(river_gd_create(MPI_COMM_WORLD, &l, gd_never_read, NULL,
                                   &x, &g), RIVER_EINVAL);
  x = o;
  x.mode = (river_gd_mode)-1;
  assert_int_equal(river_gd_create(MPI_COMM_WORLD, &l, gd_never_read, NULL,
                                   &x, &g), RIVER_EINVAL);
  x = o;
  x.outstanding = -1;
  x.disk_rate = nan;
  x.seek_seconds = 0.01;        /* a seek cost without a disk rate */
  assert_int_equal(river_gd_create(MPI_COMM_WORLD, &l, gd_never_read, NULL,
                                   &x, &g), RIVER_EINVAL);
  assert_null(g);
  river_log_set_handler(NULL, NULL);
}

/* open: a NULL collection is refused (and said), MPI or not. */
static void test_badparam_gd_open(void **state)
{
  river_gd_opts o = RIVER_GD_OPTS_INIT;
  river_gd *keep = (river_gd *)&o, *g = keep;

  river_log_set_handler(collect, NULL);
  msgs[0] = '\0';
  g = keep;
  assert_int_equal(river_gd_open(MPI_COMM_WORLD, NULL, &o, &g),
                   RIVER_EINVAL);
  assert_non_null(strstr(msgs, "collection is NULL"));
  assert_null(g);
  g = keep;
  assert_int_equal(river_gd_open(MPI_COMM_NULL, NULL, NULL, &g),
                   RIVER_EINVAL);
  assert_null(g);
  assert_int_equal(river_gd_open(MPI_COMM_WORLD, NULL, NULL, NULL),
                   RIVER_EINVAL);
  river_log_set_handler(NULL, NULL);
}

/* The calls on a NULL handle: refused, outputs untouched; close is a
 * no-op. */
static void test_badparam_gd_handles(void **state)
{
  river_gd_opts o = RIVER_GD_OPTS_INIT;
  river_gd_stats st, blank;
  const void *recs = &o;
  size_t n = 7;
  uint64_t block = 7;
  int part = 7;

  river_log_set_handler(collect, NULL);
  memset(&st, 0x5a, sizeof st);
  blank = st;
  assert_int_equal(river_gd_next(NULL, &recs, &n, &part, &block),
                   RIVER_EINVAL);
  assert_int_equal(river_gd_next(NULL, &recs, &n, NULL, NULL), RIVER_EINVAL);
  assert_int_equal(river_gd_next(NULL, NULL, NULL, NULL, NULL),
                   RIVER_EINVAL);
  assert_int_equal(river_gd_stats_get(NULL, &st), RIVER_EINVAL);
  assert_int_equal(river_gd_stats_get(NULL, NULL), RIVER_EINVAL);
  assert_int_equal(river_gd_close(NULL), RIVER_SUCCESS); /* no-op */
  assert_memory_equal(&st, &blank, sizeof st);
  assert_ptr_equal(recs, &o);
  assert_int_equal(n + (size_t)part + (size_t)block, 21);
  river_log_set_handler(NULL, NULL);
}

/* river_pcoll_read_copy (what GD reads with): a NULL reader, whatever
 * else, is refused and n stays as it was. */
static void test_badparam_gd_read_copy(void **state)
{
  unsigned char buf[8192];
  size_t n = 7;

  river_log_set_handler(collect, NULL);
  assert_int_equal(river_pcoll_read_copy(NULL, 0, 0, 0, buf, sizeof buf,
                                         &n), RIVER_EINVAL);
  assert_int_equal(river_pcoll_read_copy(NULL, 0, 0, 0, NULL, sizeof buf,
                                         &n), RIVER_EINVAL);
  assert_int_equal(river_pcoll_read_copy(NULL, 0, 0, 0, buf, sizeof buf,
                                         NULL), RIVER_EINVAL);
  assert_int_equal(river_pcoll_read_copy(NULL, -1, -1, UINT64_MAX, buf, 0,
                                         &n), RIVER_EINVAL);
  assert_int_equal(n, 7);
  river_log_set_handler(NULL, NULL);
}

/* The fluid ideal: pure, so all of its refusals; outputs untouched. */
static void test_badparam_gd_fluid_ideal(void **state)
{
  double rates[4] = {1, 0.5, 1, 1}, pc = 7, tot = 7;
  double nan = strtod("nan", NULL), inf = strtod("inf", NULL);

  river_log_set_handler(collect, NULL);
  /* Rates, n >= 1, r in 1..n, finite rates >= 0. */
  assert_int_equal(river_gd_fluid_ideal(NULL, 4, 2, &pc, &tot),
                   RIVER_EINVAL);
  assert_int_equal(river_gd_fluid_ideal(rates, 0, 1, &pc, &tot),
                   RIVER_EINVAL);
  assert_int_equal(river_gd_fluid_ideal(rates, -4, 1, &pc, &tot),
                   RIVER_EINVAL);
  assert_int_equal(river_gd_fluid_ideal(rates, 4, 0, &pc, &tot),
                   RIVER_EINVAL);
  assert_int_equal(river_gd_fluid_ideal(rates, 4, 5, &pc, &tot),
                   RIVER_EINVAL);
  rates[1] = -0.5;
  assert_int_equal(river_gd_fluid_ideal(rates, 4, 2, &pc, &tot),
                   RIVER_EINVAL);
  rates[1] = nan;
  assert_int_equal(river_gd_fluid_ideal(rates, 4, 2, &pc, &tot),
                   RIVER_EINVAL);
  rates[1] = inf;
  assert_int_equal(river_gd_fluid_ideal(rates, 4, 2, &pc, &tot),
                   RIVER_EINVAL);
  assert_true(pc == 7 && tot == 7);
  /* Both outputs are optional. */
  rates[1] = 0.5;
  assert_int_equal(river_gd_fluid_ideal(rates, 4, 2, NULL, NULL),
                   RIVER_SUCCESS);
  river_log_set_handler(NULL, NULL);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_badparam_dq),
    cmocka_unit_test(test_badparam_gd_create),
    cmocka_unit_test(test_badparam_gd_open),
    cmocka_unit_test(test_badparam_gd_handles),
    cmocka_unit_test(test_badparam_gd_read_copy),
    cmocka_unit_test(test_badparam_gd_fluid_ideal),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
