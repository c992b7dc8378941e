/*
 * run.c - `river run FLOW.yaml [key=value ...]`: every rank loads the
 * flow spec (doc/flowspec.md), takes the stages placed on it, runs them
 * to the end and, on rank 0, prints each stage's totals (to standard
 * error when a stage of module stdout owns standard output). Errors in the
 * spec are printed once, by rank 0 (the other ranks load the same file
 * and would say the same); every rank exits non-zero.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

/* A log handler that drops messages: other ranks while rank 0 speaks. */
/* Where the totals go: standard error if a stage writes records to
 * standard output (module stdout), else standard output. */
static FILE *totals_stream(river_flow *f)
{
  const char *name, *module;
  const int *ranks;
  int i, n = 0, nranks;

  river_flow_nstages(f, &n);
  for (i = 0; i < n; i++)
    if (river_flow_stage(f, i, &name, &module, &ranks, &nranks)
            == RIVER_SUCCESS && strcmp(module, "stdout") == 0)
      return stderr;
  return stdout;
}

/* How a stage's input queues' credits travel, for its line. */
static const char *credits_text(int in_credits)
{
  switch (in_credits) {
  case RIVER_DQ_CREDITS_RMA: return "  credits rma";
  case RIVER_DQ_CREDITS_MSG: return "  credits msg";
  case RIVER_DQ_CREDITS_RMA | RIVER_DQ_CREDITS_MSG: return "  credits rma+msg";
  default: return "";
  }
}

/* Rank 0: one line per stage. */
static int print_totals(river_flow *f, FILE *out)
{
  river_stage_stats st;
  const char *name, *module;
  const int *ranks;
  int i, n = 0, nranks, rc = river_flow_nstages(f, &n);

  for (i = 0; i < n && rc == RIVER_SUCCESS; i++) {
    char size[APP_SIZE_TEXT], rate[APP_SIZE_TEXT];
    uint64_t bytes;
    river_flow_stage(f, i, &name, &module, &ranks, &nranks);
    rc = river_flow_stage_stats(f, name, &st);  /* collective */
    if (rc != RIVER_SUCCESS || cli_rank() != 0)
      continue;
    bytes = st.bytes_in > st.bytes_out ? st.bytes_in : st.bytes_out;
    fprintf(out, "run: stage %-12s %-10s x%-3d %12llu records in %12llu "
            "out  %7s  %9s  slowest #%d %.3f s%s\n", name,
            module, st.ninstances, (unsigned long long)st.records_in,
            (unsigned long long)st.records_out, app_size(bytes, size),
            app_rate(st.seconds > 0 ? (double)bytes / st.seconds : 0.0,
                     rate),
            st.slowest, st.seconds, credits_text(st.in_credits));
  }
  return rc;
}

int cmd_run(int argc, char **argv)
{
  char *plugins[CLI_PLUGINS_MAX];
  int i, np, rc;

  if ((rc = cli_take_plugins(&argc, argv, plugins, CLI_PLUGINS_MAX, &np))
      != RIVER_SUCCESS)
    return rc;
  if (argc < 2 || argv[1][0] == '-') {
    if (cli_rank() == 0)
      river_log(RIVER_LOG_ERROR, "run: %s (see river run --help)",
                argc < 2 ? "missing FLOW.yaml" : "unknown option");
    app_usage_error();
    return RIVER_EINVAL;
  }
  for (i = 2; i < argc; i++) {
    if (strchr(argv[i], '=') == NULL) {
      if (cli_rank() == 0)
        river_log(RIVER_LOG_ERROR, "run: '%s' is not key=value", argv[i]);
      app_usage_error();
      return RIVER_EINVAL;
    }
  }
  if ((rc = cli_plugins(plugins, np)) != RIVER_SUCCESS)
    return rc;
  return cli_run_flow(argv[1], (const char *const *)argv + 2, argc - 2,
                      "run", 0, NULL);
}

int cli_run_flow(const char *path, const char *const *kv, int nkv,
                 const char *label, uint64_t total, double *seconds)
{
  river_flow *f = NULL;
  double t0, t;
  int rc;

  cli_hush_begin();
  rc = river_flow_load(MPI_COMM_WORLD, path, kv, nkv, &f);
  rc = cli_hush_end(rc);
  if (rc == RIVER_SUCCESS)
    rc = cli_agree(river_flow_progress(f, label, total));
  t0 = river_wtime();
  if (rc == RIVER_SUCCESS)
    rc = river_flow_go(f);
  t = river_wtime() - t0;
  /* The stats file (collective: the run's outcome is agreed), also of a
   * flow that failed once running (its outcome says so, whatever it
   * is); one that never ran (river_flow_test leaves done 0, on every
   * rank alike) has none. */
  if (cli_stats != NULL && f != NULL) {
    int done = 0, src = RIVER_SUCCESS;
    (void)river_flow_test(f, &done);
    if (done)
      src = river_stats_add_flow(cli_stats, f, label);
    if (rc == RIVER_SUCCESS)
      rc = src;
  }
  if (seconds != NULL)
    *seconds = t;
  if (rc == RIVER_SUCCESS)
    rc = print_totals(f, totals_stream(f));
  if (rc == RIVER_SUCCESS && cli_rank() == 0)
    fprintf(totals_stream(f), "run: %s: done in %.3f s on %d rank%s\n",
            path, t, cli_size(), CLI_S(cli_size()));
  river_flow_destroy(f);
  return rc;
}
