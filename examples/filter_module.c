/* filter_module.c - a user module in a flow spec: register a C module,
 * load filter_module.yaml (gen -> keep_below -> count), run it, print
 * each stage's totals and check the result; exits non-zero if anything
 * fails, on every rank.
 *
 *   mpirun -n 3 ./filter_module filter_module.yaml
 *
 * keep_below passes on the records whose field `field` (default: the
 * key) starts with a byte below `below`: with gensort's uniform keys,
 * about below/256 of them. The check counts the same rows again,
 * generated here with river_gensort_fill (what gen runs), and compares
 * with what keep_below put out and what count received. */
#include <inttypes.h>
#include <river.h>
#include <stdio.h>
#include <stdlib.h>

#define RECORDS 200000     /* rows gen makes (the spec's ${records}) */
#define BELOW 64           /* keep_below's threshold (${below}) */

/* The module: one instance per rank of its stage, reading input 0 and
 * writing output 0 until the input ends (RIVER_EOS). */
static int keep_below(river_ctx *ctx)
{
  const river_schema *s;
  const char *field;
  uint64_t below;
  size_t size, offset;
  int i, rc;

  /* Its arguments (declared at registration, checked by the flow). */
  if ((rc = river_arg_str(ctx, "field", &field)) != RIVER_SUCCESS ||
      (rc = river_arg_uint(ctx, "below", &below)) != RIVER_SUCCESS)
    return rc;
  /* Where that field lies in a record of input 0. */
  if ((rc = river_input_schema(ctx, 0, &s)) != RIVER_SUCCESS ||
      (rc = river_schema_record_size(s, &size)) != RIVER_SUCCESS ||
      (rc = river_schema_find(s, field, &i)) != RIVER_SUCCESS ||
      (rc = river_schema_field(s, i, NULL, NULL, NULL, &offset)) !=
          RIVER_SUCCESS)
    return rc;

  for (;;) {
    const void *msg;
    size_t n, k;

    rc = river_get(ctx, 0, &msg, &n);   /* the next n records */
    if (rc == RIVER_EOS)
      return RIVER_SUCCESS;             /* done: River closes output 0 */
    if (rc != RIVER_SUCCESS)
      return rc;
    for (k = 0; k < n; k++) {
      const unsigned char *r = (const unsigned char *)msg + k * size;
      if (r[offset] < below && (rc = river_put(ctx, 0, r, 1)) != RIVER_SUCCESS)
        return rc;
    }
  }
}

/* The rows of gen's records=RECORDS (seed 0) whose key starts below
 * BELOW, counted without River's flows. */
static uint64_t expected(void)
{
  static unsigned char rows[1000][RIVER_GENSORT_RECORD_SIZE];
  uint64_t first, kept = 0;
  size_t k;

  for (first = 0; first < RECORDS; first += 1000) {
    if (river_gensort_fill(first, 1000, 0, 0, rows) != RIVER_SUCCESS)
      return UINT64_MAX;
    for (k = 0; k < 1000; k++)
      kept += rows[k][0] < BELOW;
  }
  return kept;
}

/* Print (rank 0) and return stage `name`'s totals. */
static river_stage_stats totals(river_flow *f, const char *name, int rank)
{
  river_stage_stats st = {0};

  if (river_flow_stage_stats(f, name, &st) == RIVER_SUCCESS && rank == 0)
    printf("%-6s %d instance(s): %8" PRIu64 " records in, %8" PRIu64
           " out, %.3f s\n", name, st.ninstances, st.records_in,
           st.records_out, st.seconds);
  return st;
}

int main(int argc, char **argv)
{
  river_module_decl decl = RIVER_MODULE_DECL_INIT;
  river_stage_stats gen, keep, count;
  river_flow *flow = NULL;
  char records[32], below[32];
  const char *params[] = {records, below};
  uint64_t want;
  int rank, rc, wrong = 0;

  if ((rc = river_init(&argc, &argv)) != RIVER_SUCCESS) {
    fprintf(stderr, "river_init: %s\n", river_strerror(rc));
    return 1;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 2) {
    if (rank == 0)
      fprintf(stderr, "usage: filter_module filter_module.yaml\n");
    river_finalize();
    return 2;
  }

  /* Register keep_below on every rank, before loading the spec. */
  decl.min_inputs = decl.max_inputs = 1;
  decl.min_outputs = decl.max_outputs = 1;
  decl.shares_rank = 1;       /* may run beside other stages on a rank */
  decl.args = "field:field=key,below:uint";   /* below is required */
  decl.doc = "records whose field starts with a byte below `below`";
  rc = river_module_register("keep_below", keep_below, &decl, NULL);

  /* Load the spec, overriding its params, and run it (collective). */
  snprintf(records, sizeof records, "records=%d", RECORDS);
  snprintf(below, sizeof below, "below=%d", BELOW);
  if (rc == RIVER_SUCCESS)
    rc = river_flow_load(MPI_COMM_WORLD, argv[1], params, 2, &flow);
  if (rc == RIVER_SUCCESS)
    rc = river_flow_go(flow);   /* the same outcome on every rank */

  if (rc == RIVER_SUCCESS) {
    gen = totals(flow, "gen", rank);
    keep = totals(flow, "keep", rank);
    count = totals(flow, "count", rank);
    want = expected();
    if (rank == 0)
      printf("kept %" PRIu64 " of %d records (expected %" PRIu64 ")\n",
             keep.records_out, RECORDS, want);
    /* Every rank has the same totals, so every rank fails alike. */
    wrong = gen.records_out != RECORDS || keep.records_in != RECORDS ||
            keep.records_out != want || count.records_in != want;
    if (wrong && rank == 0)
      fprintf(stderr, "filter_module: wrong totals\n");
  } else if (rank == 0) {
    fprintf(stderr, "filter_module: %s\n", river_strerror(rc));
  }
  river_flow_destroy(flow);
  if (river_finalize() != RIVER_SUCCESS)
    wrong = 1;
  return rc == RIVER_SUCCESS && !wrong ? 0 : 1;
}
