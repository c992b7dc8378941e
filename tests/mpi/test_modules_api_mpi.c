/*
 * test_modules_api_mpi - the module calls that the sorting modules added
 * (river/module.h), from user modules, on 2..4 ranks:
 *
 *   splitters  a producer on every rank sets splitters on its exchange
 *              output (river_output_consumers, river_set_partitioner):
 *              bad `by`, a hash with splitters, the wrong number of
 *              splitters and splitters out of order are RIVER_EINVAL,
 *              setting after a put RIVER_ESTATE; with splitters on the
 *              first key byte at 256 (i+1)/n, consumer i gets exactly the
 *              records whose first key byte is in [256 i/n, 256 (i+1)/n),
 *              and river_get_unit on that (non-pull) input is
 *              RIVER_ENOTSUP
 *   units      sort (3 runs) on every rank -> pull edge -> one consumer:
 *              before a get river_get_unit and river_get_tag are
 *              RIVER_ESTATE; then every message has a unit, each unit's
 *              messages are contiguous, first ... last, there are 3
 *              units per sort instance, and the units' tags (sort's: the
 *              position of the run's first record in the whole output)
 *              with their lengths tile [0, records) exactly; a tag set
 *              after a put on a non-pull edge is RIVER_ESTATE
 *   peers      gen -> one-to-one -> tpeers -> exchange -> tsink, the
 *              stage placed with an origin: river_ctx_log says "ORIGIN:
 *              stage 'peers': " from the schema callback, on rank 0
 *              alone (the others' at debug level), and "ORIGIN: stage
 *              'peers' instance I: " while it runs, on every rank;
 *              river_ctx_failed and river_ctx_allgather are
 *              RIVER_ESTATE at check time, and while running 0 and every
 *              instance's words in instance order; river_input_producers
 *              is 1 on the one-to-one input, n on the exchange's;
 *              river_input_edge / river_output_edge give the edges'
 *              kinds; bad ports, levels and k are RIVER_EINVAL;
 *              river_ctx_perturb gives the parsed perturb argument
 *              (RIVER_ESTATE at check time), and river_ctx_charge_disk
 *              with disk_rate 1Mi and "disk:1=0.5" takes at least 90% of
 *              0.095 s for 100 kB on disk 0 and of 0.19 s more on disk
 *              1 (a lower bound only: a loaded machine is slower, never
 *              faster)
 *   nonsense   NULL contexts and out-of-range indexes
 */
#include <river.h>
#include <river/flow.h>
#include <river/module.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static int nparts;                 /* consumers of the exchange */
static uint64_t got_records, bad_place, total_units;
static uint64_t unit_tag[64], unit_len[64];  /* per unit got (tunits) */

/* Put its input through output 0, with splitters on the first key byte
 * (after checking the bad forms). */
static int tsplit(river_ctx *ctx)
{
  unsigned char keys[8][10], k[2][10];
  const void *recs;
  size_t n;
  int i, rc, c = 0;

  MT_CHECK_RC(river_output_consumers(ctx, 0, &c), RIVER_SUCCESS);
  MT_CHECK(c == nparts);
  MT_CHECK_RC(river_output_consumers(ctx, 1, &c), RIVER_EINVAL);
  memset(keys, 0, sizeof keys);
  for (i = 0; i < nparts - 1; i++)
    keys[i][0] = (unsigned char)(256 * (i + 1) / nparts);
  MT_CHECK_RC(river_set_partitioner(ctx, 0, 7, NULL, 0), RIVER_EINVAL);
  MT_CHECK_RC(river_set_partitioner(ctx, 0, RIVER_BY_HASH, keys, 1),
              RIVER_EINVAL);
  MT_CHECK_RC(river_set_partitioner(ctx, 0, RIVER_BY_RANGE, keys,
                                    (size_t)nparts), RIVER_EINVAL);
  MT_CHECK_RC(river_set_partitioner(ctx, 1, RIVER_BY_HASH, NULL, 0),
              RIVER_EINVAL);
  memset(k, 0, sizeof k);
  k[0][0] = 9;
  if (nparts == 3)
    MT_CHECK_RC(river_set_partitioner(ctx, 0, RIVER_BY_RANGE, k, 2),
                RIVER_EINVAL);  /* 9 then 0: out of order */
  rc = river_set_partitioner(ctx, 0, RIVER_BY_RANGE, keys,
                             (size_t)nparts - 1);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  MT_CHECK_RC(river_set_tag(ctx, 1, 5), RIVER_EINVAL);
  MT_CHECK_RC(river_set_tag(ctx, 0, 5), RIVER_SUCCESS);  /* before a put */
  while ((rc = river_get(ctx, 0, &recs, &n)) == RIVER_SUCCESS)
    if ((rc = river_put(ctx, 0, recs, n)) != RIVER_SUCCESS)
      return rc;
  MT_CHECK_RC(river_set_partitioner(ctx, 0, RIVER_BY_HASH, NULL, 0),
              RIVER_ESTATE);
  /* (Records may wait in a partly filled message: a new tag is refused
   * then, or taken if every message went; never mixed into one.) */
  return rc == RIVER_EOS ? RIVER_SUCCESS : rc;
}

/* Count the records and those outside this instance's key-byte range. */
static int tplaced(river_ctx *ctx)
{
  const unsigned char *r;
  const void *recs;
  size_t n, j;
  int inst, lo, hi, rc;

  river_ctx_instance(ctx, &inst, NULL);
  lo = 256 * inst / nparts;
  hi = 256 * (inst + 1) / nparts;
  while ((rc = river_get(ctx, 0, &recs, &n)) == RIVER_SUCCESS) {
    MT_CHECK_RC(river_get_unit(ctx, 0, NULL, NULL, NULL), RIVER_ENOTSUP);
    for (j = 0, r = recs; j < n; j++, r += 100)
      bad_place += r[0] < lo || r[0] >= hi;
    got_records += n;
  }
  return rc == RIVER_EOS ? RIVER_SUCCESS : rc;
}

/* Check the units of a pull input. */
static int tunits(river_ctx *ctx)
{
  const void *recs;
  size_t n;
  uint64_t unit = 0, cur = 0, tag = 7;
  int first, last, in_unit = 0, rc;

  MT_CHECK_RC(river_get_unit(ctx, 0, &unit, &first, &last), RIVER_ESTATE);
  MT_CHECK_RC(river_get_unit(ctx, 1, &unit, &first, &last), RIVER_EINVAL);
  MT_CHECK_RC(river_get_tag(ctx, 0, &tag), RIVER_ESTATE);
  MT_CHECK_RC(river_get_tag(ctx, 1, &tag), RIVER_EINVAL);
  MT_CHECK_RC(river_get_tag(ctx, 0, NULL), RIVER_EINVAL);
  while ((rc = river_get(ctx, 0, &recs, &n)) == RIVER_SUCCESS) {
    got_records += n;
    MT_CHECK_RC(river_get_unit(ctx, 0, &unit, &first, &last), RIVER_SUCCESS);
    MT_CHECK_RC(river_get_tag(ctx, 0, &tag), RIVER_SUCCESS);
    MT_CHECK(first == !in_unit);   /* a unit starts only after one ends */
    MT_CHECK(!in_unit || unit == cur);
    if (first && total_units < 64)
      unit_tag[total_units] = tag;
    MT_CHECK(total_units == 0 || unit_tag[(total_units - !first) % 64] == tag);
    if (first)
      total_units++;
    if (total_units > 0 && total_units <= 64)
      unit_len[total_units - 1] += n;
    cur = unit;
    in_unit = !last;
  }
  MT_CHECK(!in_unit);
  MT_CHECK_RC(river_get_unit(ctx, 0, NULL, NULL, NULL), RIVER_ESTATE);
  return rc == RIVER_EOS ? RIVER_SUCCESS : rc;
}

/* The messages at warn level or worse that reached the handler. */
static char said[8][512];
static int nsaid;

static void keep(int level, int rank, const char *msg, void *ctx)
{
  (void)rank;
  (void)ctx;
  if (level <= RIVER_LOG_WARN && nsaid < 8)
    snprintf(said[nsaid++], sizeof said[0], "%s", msg);
}

static int tpeers_schema(river_ctx *ctx, int output, river_schema **out)
{
  const river_schema *s;
  const river_perturb *pert = NULL;
  uint64_t w = 1, all[8];
  int failed = 0, p = 0;

  (void)output;
  MT_CHECK_RC(river_ctx_perturb(ctx, &pert), RIVER_ESTATE);
  MT_CHECK_RC(river_ctx_log(ctx, RIVER_LOG_WARN, "checked %d", 1),
              RIVER_SUCCESS);
  MT_CHECK_RC(river_ctx_failed(ctx, &failed), RIVER_ESTATE);
  MT_CHECK_RC(river_ctx_allgather(ctx, &w, 1, all), RIVER_ESTATE);
  MT_CHECK_RC(river_input_producers(ctx, 0, &p), RIVER_SUCCESS);
  MT_CHECK(p == 1);
  river_input_schema(ctx, 0, &s);
  return river_schema_clone(s, out);
}

static int tpeers(river_ctx *ctx)
{
  river_edge_opts e;
  const river_perturb *pert = NULL;
  uint64_t mine[2], all[16];
  const void *recs;
  double t0, f = 0.0;
  size_t n;
  int inst = -1, ninst = 0, failed = -1, p = 0, i, rc;

  river_ctx_instance(ctx, &inst, &ninst);
  MT_CHECK_RC(river_ctx_perturb(ctx, &pert), RIVER_SUCCESS);
  MT_CHECK(pert != NULL);
  if (pert != NULL) {
    river_perturb_factor(pert, RIVER_PERTURB_DISK, 1, 0.0, &f);
    MT_CHECK(f == 0.5);
  }
  MT_CHECK_RC(river_ctx_perturb(ctx, NULL), RIVER_EINVAL);
  MT_CHECK_RC(river_ctx_charge_disk(ctx, -1, 1), RIVER_EINVAL);
  /* 1Mi is 1048576 bytes/s; a disk's bucket starts empty. 90%: the
   * bound's margin for the clock, not for load (load only slows). */
  t0 = river_wtime();
  MT_CHECK_RC(river_ctx_charge_disk(ctx, 0, 100000), RIVER_SUCCESS);
  MT_CHECK(river_wtime() - t0 >= 0.9 * 100000 / 1048576.0);
  MT_CHECK_RC(river_ctx_charge_disk(ctx, 1, 100000), RIVER_SUCCESS);
  MT_CHECK(river_wtime() - t0 >= 0.9 * 3 * 100000 / 1048576.0);
  MT_CHECK_RC(river_ctx_log(ctx, RIVER_LOG_WARN, "ran %d", 5),
              RIVER_SUCCESS);
  MT_CHECK_RC(river_ctx_log(ctx, 9, "no such level"), RIVER_EINVAL);
  MT_CHECK_RC(river_ctx_log(ctx, RIVER_LOG_WARN, NULL), RIVER_EINVAL);
  MT_CHECK_RC(river_input_producers(ctx, 0, &p), RIVER_SUCCESS);
  MT_CHECK(p == 1);
  MT_CHECK_RC(river_input_producers(ctx, 1, &p), RIVER_EINVAL);
  MT_CHECK_RC(river_input_edge(ctx, 0, &e), RIVER_SUCCESS);
  MT_CHECK(e.kind == RIVER_EDGE_ONE_TO_ONE);
  MT_CHECK_RC(river_output_edge(ctx, 0, &e), RIVER_SUCCESS);
  MT_CHECK(e.kind == RIVER_EDGE_EXCHANGE && e.by == RIVER_BY_HASH);
  MT_CHECK_RC(river_input_edge(ctx, 1, &e), RIVER_EINVAL);
  MT_CHECK_RC(river_output_edge(ctx, -1, &e), RIVER_EINVAL);
  MT_CHECK_RC(river_output_edge(ctx, 0, NULL), RIVER_EINVAL);
  MT_CHECK_RC(river_ctx_failed(ctx, &failed), RIVER_SUCCESS);
  MT_CHECK(failed == 0);
  MT_CHECK_RC(river_ctx_failed(ctx, NULL), RIVER_EINVAL);
  mine[0] = (uint64_t)inst;
  mine[1] = 7 * (uint64_t)inst + 3;
  MT_CHECK_RC(river_ctx_allgather(ctx, mine, 0, all), RIVER_EINVAL);
  MT_CHECK_RC(river_ctx_allgather(ctx, NULL, 2, all), RIVER_EINVAL);
  MT_CHECK_RC(river_ctx_allgather(ctx, mine, 2, all), RIVER_SUCCESS);
  for (i = 0; i < ninst && i < 8; i++)
    MT_CHECK(all[2 * i] == (uint64_t)i && all[2 * i + 1] == 7 * (uint64_t)i + 3);
  while ((rc = river_get(ctx, 0, &recs, &n)) == RIVER_SUCCESS)
    if ((rc = river_put(ctx, 0, recs, n)) != RIVER_SUCCESS)
      return rc;
  return rc == RIVER_EOS ? RIVER_SUCCESS : rc;
}

/* The exchange's consumer: every instance of the stage before it sends. */
static int tsink(river_ctx *ctx)
{
  const void *recs;
  size_t n;
  int p = 0, rc;

  MT_CHECK_RC(river_input_producers(ctx, 0, &p), RIVER_SUCCESS);
  MT_CHECK(p == nparts);
  while ((rc = river_get(ctx, 0, &recs, &n)) == RIVER_SUCCESS)
    got_records += n;
  return rc == RIVER_EOS ? RIVER_SUCCESS : rc;
}

static void register_modules(void)
{
  river_module_decl d = RIVER_MODULE_DECL_INIT;

  d.min_inputs = d.max_inputs = 1;
  d.shares_rank = 1;
  MT_CHECK_RC(river_module_register("tplaced", tplaced, &d, NULL),
              RIVER_SUCCESS);
  MT_CHECK_RC(river_module_register("tunits", tunits, &d, NULL),
              RIVER_SUCCESS);
  MT_CHECK_RC(river_module_register("tsink", tsink, &d, NULL),
              RIVER_SUCCESS);
  d.min_outputs = d.max_outputs = 1;
  MT_CHECK_RC(river_module_register("tsplit", tsplit, &d, NULL),
              RIVER_SUCCESS);
  d.schema = tpeers_schema;
  d.args = "disk_rate:size=0";
  MT_CHECK_RC(river_module_register("tpeers", tpeers, &d, NULL),
              RIVER_SUCCESS);
}

static void peers(MPI_Comm comm, int n)
{
  river_edge_opts e = RIVER_EDGE_OPTS_INIT;
  char want[128];
  int all[8], rank, i, found, bad;
  uint64_t sum;
  river_flow *f = NULL;

  MPI_Comm_rank(comm, &rank);
  for (i = 0; i < n; i++)
    all[i] = i;
  nparts = n;
  got_records = 0;
  nsaid = 0;
  river_log_set_handler(keep, NULL);
  MT_CHECK_RC(river_flow_create(comm, &f), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_place(f, "gen", "gen", all, n), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_arg(f, "gen", "records", "3000"), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_origin(f, "peers.yaml:7:3"), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_place(f, "peers", "tpeers", all, n), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_arg(f, "peers", "disk_rate", "1Mi"), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_arg(f, "peers", "perturb", "disk:1=0.5"),
              RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_origin(f, NULL), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_place(f, "sink", "tsink", all, n), RIVER_SUCCESS);
  e.kind = RIVER_EDGE_ONE_TO_ONE;
  MT_CHECK_RC(river_flow_attach(f, "gen", "peers", &e), RIVER_SUCCESS);
  e.kind = RIVER_EDGE_EXCHANGE;
  MT_CHECK_RC(river_flow_attach(f, "peers", "sink", &e), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_check(f), RIVER_SUCCESS);
  /* The check's messages, the module's and the library's (allgather
   * outside a running module): said on rank 0 only. */
  MT_CHECK(nsaid == (rank == 0 ? 2 : 0));
  MT_CHECK(rank != 0
           || (strcmp(said[0], "peers.yaml:7:3: stage 'peers': checked 1") == 0
               && strstr(said[1], "river_ctx_allgather") != NULL));
  nsaid = 0;
  MT_CHECK_RC(river_flow_go(f), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_destroy(f), RIVER_SUCCESS);
  river_log_set_handler(NULL, NULL);
  /* While it runs: every instance says its own, with its number. */
  snprintf(want, sizeof want, "peers.yaml:7:3: stage 'peers' instance %d: "
           "ran 5", rank);
  for (i = found = 0; i < nsaid; i++)
    found += strcmp(said[i], want) == 0;
  MT_CHECK(found == 1);
  /* ... and nothing else (river_flow_go checks the flow again: rank 0
   * says the check's two again): a run that succeeds says no error or
   * warning of its own. */
  for (i = bad = 0; i < nsaid; i++)
    if (strcmp(said[i], want) != 0
        && !(rank == 0
             && (strcmp(said[i], "peers.yaml:7:3: stage 'peers': checked 1")
                     == 0
                 || strstr(said[i], "river_ctx_allgather") != NULL))) {
      fprintf(stderr, "rank %d said: %s\n", rank, said[i]);
      bad++;
    }
  MT_CHECK(bad == 0);
  sum = got_records;
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_UINT64_T, MPI_SUM, comm);
  MT_CHECK(sum == 3000);
}

static void splitters(MPI_Comm comm, int n)
{
  river_edge_opts e = RIVER_EDGE_OPTS_INIT;
  int all[8], i;
  uint64_t sums[2];
  river_flow *f = NULL;

  for (i = 0; i < n; i++)
    all[i] = i;
  nparts = n;
  got_records = bad_place = 0;
  MT_CHECK_RC(river_flow_create(comm, &f), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_place(f, "gen", "gen", all, n), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_arg(f, "gen", "records", "5000"), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_place(f, "split", "tsplit", all, n), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_place(f, "sink", "tplaced", all, n), RIVER_SUCCESS);
  e.kind = RIVER_EDGE_ONE_TO_ONE;
  MT_CHECK_RC(river_flow_attach(f, "gen", "split", &e), RIVER_SUCCESS);
  e.kind = RIVER_EDGE_EXCHANGE;
  e.by = RIVER_BY_HASH;
  MT_CHECK_RC(river_flow_attach(f, "split", "sink", &e), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_go(f), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_destroy(f), RIVER_SUCCESS);
  sums[0] = got_records;
  sums[1] = bad_place;
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_UINT64_T, MPI_SUM, comm);
  MT_CHECK(sums[0] == 5000);
  MT_CHECK(sums[1] == 0);
}

static void units(MPI_Comm comm, int n)
{
  river_edge_opts e = RIVER_EDGE_OPTS_INIT;
  int all[8], zero[1] = {0}, i;
  uint64_t sums[2];
  river_flow *f = NULL;

  for (i = 0; i < n; i++)
    all[i] = i;
  got_records = total_units = 0;
  memset(unit_len, 0, sizeof unit_len);
  MT_CHECK_RC(river_flow_create(comm, &f), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_place(f, "gen", "gen", all, n), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_arg(f, "gen", "records", "30000"), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_place(f, "sort", "sort", all, n), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_arg(f, "sort", "runs", "3"), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_place(f, "sink", "tunits", zero, 1), RIVER_SUCCESS);
  e.kind = RIVER_EDGE_ONE_TO_ONE;
  MT_CHECK_RC(river_flow_attach(f, "gen", "sort", &e), RIVER_SUCCESS);
  e.kind = RIVER_EDGE_DQ;
  e.policy = RIVER_DQ_PULL;
  e.message_size = 64 << 10;  /* several messages per unit */
  MT_CHECK_RC(river_flow_attach(f, "sort", "sink", &e), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_go(f), RIVER_SUCCESS);
  MT_CHECK_RC(river_flow_destroy(f), RIVER_SUCCESS);
  sums[0] = got_records;
  sums[1] = total_units;
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_UINT64_T, MPI_SUM, comm);
  MT_CHECK(sums[0] == 30000);
  MT_CHECK(sums[1] == 3 * (uint64_t)n);
  if (total_units > 0) {   /* rank 0: the units tile [0, 30000) */
    uint64_t at = 0, j, k;
    MT_CHECK(total_units == 3 * (uint64_t)n);
    for (j = 0; j < total_units && j < 64; j++) {
      for (k = 0; k < total_units && unit_tag[k] != at; k++)
        ;
      MT_CHECK(k < total_units);
      if (k == total_units)
        break;
      at += unit_len[k];
    }
    MT_CHECK(at == 30000);
  }
}

static void nonsense(void)
{
  river_edge_opts e;
  int c = 0;
  uint64_t u = 0;

  /* No context is a NULL argument: RIVER_EINVAL from every call. */
  MT_CHECK_RC(river_get_unit(NULL, 0, &u, NULL, NULL), RIVER_EINVAL);
  MT_CHECK_RC(river_get_tag(NULL, 0, &u), RIVER_EINVAL);
  MT_CHECK_RC(river_set_tag(NULL, 0, 1), RIVER_EINVAL);
  MT_CHECK_RC(river_output_consumers(NULL, 0, &c), RIVER_EINVAL);
  MT_CHECK_RC(river_input_producers(NULL, 0, &c), RIVER_EINVAL);
  MT_CHECK_RC(river_input_edge(NULL, 0, &e), RIVER_EINVAL);
  MT_CHECK_RC(river_output_edge(NULL, 0, &e), RIVER_EINVAL);
  MT_CHECK_RC(river_ctx_failed(NULL, &c), RIVER_EINVAL);
  MT_CHECK_RC(river_ctx_allgather(NULL, &u, 1, &u), RIVER_EINVAL);
  MT_CHECK_RC(river_ctx_log(NULL, RIVER_LOG_ERROR, "x"), RIVER_EINVAL);
  MT_CHECK_RC(river_ctx_charge_disk(NULL, 0, 1), RIVER_EINVAL);
  MT_CHECK_RC(river_ctx_perturb(NULL, NULL), RIVER_EINVAL);
  MT_CHECK_RC(river_set_partitioner(NULL, 0, RIVER_BY_HASH, NULL, 0),
              RIVER_EINVAL);
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
  for (n = 2; n <= size && n <= 4; n++) {
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, rank < n ? 0 : MPI_UNDEFINED, rank, &sub);
    if (sub != MPI_COMM_NULL) {
      splitters(sub, n);
      units(sub, n);
      peers(sub, n);
      MPI_Comm_free(&sub);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  nonsense();
  rc = mt_verdict(MPI_COMM_WORLD, "test_modules_api_mpi");
  river_finalize();
  return rc;
}
