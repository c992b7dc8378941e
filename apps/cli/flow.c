/*
 * flow.c - `river flow check FLOW.yaml [--ranks N] [--dot] [key=value...]`:
 * load a flow spec, check it, and print its rank -> stage plan (or, with
 * --dot, the flow as a Graphviz graph) on rank 0.
 *
 * Without --ranks the spec is loaded on the job's communicator and
 * checked collectively (every rank builds the same flow); with --ranks N
 * every rank checks it alone as a plan for N ranks. A bad spec gives
 * the same message on every rank, so ranks other than 0 hold their
 * messages back and print them only when rank 0 had nothing to say.
 */
#include "cli.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct held {
  char text[4096];
};

/* A log handler that keeps errors and warnings for later. */
static void hold(int level, int rank, const char *msg, void *ctx)
{
  struct held *h = ctx;
  size_t n = strlen(h->text);

  (void)rank;
  if (level <= RIVER_LOG_WARN)
    snprintf(h->text + n, sizeof h->text - n, "%s\n", msg);
}

/* Print one line per rank listing its stages. */
static int print_plan(const char *path, const river_flow *f, int nranks)
{
  const char *name;
  const int *ranks;
  int ns, i, k, r, any;

  river_flow_nstages(f, &ns);
  printf("%s: %d stage%s on %d rank%s\n", path, ns, ns == 1 ? "" : "s",
         nranks, nranks == 1 ? "" : "s");
  for (r = 0; r < nranks; r++) {
    printf("rank %d:", r);
    any = 0;
    for (i = 0; i < ns; i++) {
      river_flow_stage(f, i, &name, NULL, &ranks, &k);
      while (k-- > 0)
        if (ranks[k] == r) {
          printf("%s %s", any ? "," : "", name);
          any = 1;
        }
    }
    printf("%s\n", any ? "" : " (idle)");
  }
  return RIVER_SUCCESS;
}

static int print_dot(const river_flow *f)
{
  size_t len = 0;
  char *buf;
  int rc = river_flow_dot(f, NULL, &len);

  if (rc != RIVER_ENOBUFS && rc != RIVER_SUCCESS)
    return rc;
  if ((buf = malloc(len)) == NULL)
    return RIVER_ENOMEM;
  if ((rc = river_flow_dot(f, buf, &len)) == RIVER_SUCCESS)
    fputs(buf, stdout);
  free(buf);
  return rc;
}

/* Load and check; f is NULL unless both succeeded on every rank. */
static int load_check(const char *path, uint64_t nranks, char **kv, int nkv,
                      river_flow **f)
{
  int rc;

  *f = NULL;
  if (nranks > 0) {
    rc = river_flow_load_plan(path, (int)nranks, (const char *const *)kv,
                              nkv, f);
    if (rc == RIVER_SUCCESS)
      rc = river_flow_check(*f);
    return cli_agree(rc);
  }
  rc = river_flow_load(MPI_COMM_WORLD, path, (const char *const *)kv, nkv, f);
  if ((rc = cli_agree(rc)) == RIVER_SUCCESS)
    rc = river_flow_check(*f);      /* collective: agrees itself */
  return rc;
}

static int flow_check(int argc, char **argv)
{
  const char *path = NULL;
  uint64_t nranks = 0;
  char **kv = calloc((size_t)argc, sizeof *kv);
  int i, nkv = 0, dot = 0, rc = RIVER_SUCCESS, rc0, rank = cli_rank();
  struct held h = {""};
  river_flow *f = NULL;

  for (i = 1; kv != NULL && i < argc && rc == RIVER_SUCCESS; i++) {
    if (strcmp(argv[i], "--ranks") == 0)
      rc = app_parse_u64("--ranks", argv[++i], 1, 1 << 20, 0, &nranks);
    else if (strcmp(argv[i], "--dot") == 0)
      dot = 1;
    else if (argv[i][0] == '-' || (path != NULL && !strchr(argv[i], '='))) {
      if (cli_rank() == 0)
        river_log(RIVER_LOG_ERROR, "flow check: unexpected argument '%s'",
                  argv[i]);
      app_usage_error();
      rc = RIVER_EINVAL;
    } else if (path == NULL)
      path = argv[i];
    else
      kv[nkv++] = argv[i];
  }
  if (kv == NULL)
    return RIVER_ENOMEM;
  if (rc == RIVER_SUCCESS && path == NULL) {
    if (cli_rank() == 0)
      river_log(RIVER_LOG_ERROR, "flow check: no FLOW.yaml given");
    app_usage_error();
    rc = RIVER_EINVAL;
  }
  if (rc != RIVER_SUCCESS) {
    free(kv);
    return rc;
  }
  if (rank != 0)
    river_log_set_handler(hold, &h);
  rc = load_check(path, nranks, kv, nkv, &f);
  river_log_set_handler(NULL, NULL);
  rc0 = rc;
  if (cli_bcast(&rc0, sizeof rc0) == RIVER_SUCCESS && rc0 == RIVER_SUCCESS
      && h.text[0] != '\0')
    river_log(RIVER_LOG_ERROR, "%s", h.text);  /* rank 0 said nothing */
  if (rc == RIVER_SUCCESS && rank == 0)
    rc = dot ? print_dot(f) : print_plan(path, f, nranks ? (int)nranks
                                                         : cli_size());
  river_flow_destroy(f);
  free(kv);
  return cli_agree(rc);
}

int cmd_flow(int argc, char **argv)
{
  char *plugins[CLI_PLUGINS_MAX];
  int np, rc;

  if ((rc = cli_take_plugins(&argc, argv, plugins, CLI_PLUGINS_MAX, &np))
      != RIVER_SUCCESS)
    return rc;
  if (argc < 2 || strcmp(argv[1], "check") != 0) {
    if (cli_rank() == 0)
      river_log(RIVER_LOG_ERROR, "flow: %s%s%s (try river flow --help)",
                argc < 2 ? "no subcommand" : "unknown subcommand '",
                argc < 2 ? "" : argv[1], argc < 2 ? "" : "'");
    app_usage_error();
    return RIVER_EINVAL;
  }
  if ((rc = cli_plugins(plugins, np)) != RIVER_SUCCESS)
    return rc;
  return flow_check(argc - 1, argv + 1);
}

/* A port count range as text: "1", "0..2", "1 or more". */
static const char *ports(int lo, int hi, char *buf, size_t len)
{
  if (hi == -1)
    snprintf(buf, len, "%d or more", lo);
  else if (lo == hi)
    snprintf(buf, len, "%d", lo);
  else
    snprintf(buf, len, "%d..%d", lo, hi);
  return buf;
}

/* river modules [--plugin LIB.so...]: every module a flow may name,
 * with its ports, arguments and one line of what it does; rank 0
 * prints. */
int cmd_modules(int argc, char **argv)
{
  char *plugins[CLI_PLUGINS_MAX], in[32], out[32];
  river_module_info mi;
  int np, n = 0, i, rc;

  if ((rc = cli_take_plugins(&argc, argv, plugins, CLI_PLUGINS_MAX, &np))
      != RIVER_SUCCESS)
    return rc;
  if (argc > 1) {
    if (cli_rank() == 0)
      river_log(RIVER_LOG_ERROR, "modules: unexpected argument '%s' (see "
                "river modules --help)", argv[1]);
    app_usage_error();
    return RIVER_EINVAL;
  }
  if ((rc = cli_plugins(plugins, np)) != RIVER_SUCCESS)
    return rc;
  rc = river_module_count(&n);
  for (i = 0; i < n && rc == RIVER_SUCCESS && cli_rank() == 0; i++) {
    if ((rc = river_module_info_get(i, &mi)) != RIVER_SUCCESS)
      break;
    printf("%s  inputs %s, outputs %s%s%s%s\n", mi.name,
           ports(mi.min_inputs, mi.max_inputs, in, sizeof in),
           ports(mi.min_outputs, mi.max_outputs, out, sizeof out),
           mi.plugin ? "  (plugin " : "", mi.plugin ? mi.plugin : "",
           mi.plugin ? ")" : "");
    if (mi.doc)
      printf("    %s\n", mi.doc);
    printf("    args: %s\n", mi.args && mi.args[0] ? mi.args : "(none)");
  }
  if (fflush(stdout) != 0 && rc == RIVER_SUCCESS)
    rc = RIVER_EIO;
  return cli_agree(rc);
}
