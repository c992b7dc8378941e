/*
 * river - River's command-line tool, run under mpirun/srun.
 *
 *   river hello            report the job: build, river topo's report,
 *                          and a ring bandwidth measurement
 *   river topo             each node's machine, each rank's node,
 *                          binding and disk (apps/cli/topo.c)
 *   river version          print River's version and build line
 *   river gen|copy-in|copy-out|ls|info|fsck|rm
 *                          collections (apps/cli/coll.c)
 *   river flow check       validate a flow spec, print its plan
 *                          (apps/cli/flow.c)
 *
 * Every subcommand takes --help, and every one --timeout, --bind,
 * --quiet and --stats (taken out of argv by main). Each subcommand is a function in the
 * table below; main() initialises River, binds the ranks if asked,
 * dispatches, and turns the
 * subcommand's River error code into a message and a non-zero exit on
 * every rank.
 */
#include "cli.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLI_LINE 640

struct cmd {
  const char *name;
  cli_fn fn;
  const char *usage;   /* arguments after the name */
  const char *summary; /* one line for `river --help` */
};

static int cmd_hello(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const struct cmd cmds[] = {
  {"hello", cmd_hello, "[--laps N] [--bytes N]",
   "report the job (build, river topo's report) and ring bandwidth"},
  {"topo", cmd_topo, "[--bind] [--root DIR] [--disks PATTERN]",
   "print each node's machine (packages, cores, PUs, NUMA nodes) once,\n"
   "             and each rank's node, binding (and who made it: river\n"
   "             --bind, the launcher, or none) and disk directory"},
  {"version", cmd_version, "", "print River's version and build line"},
  {"gen", cmd_gen,
   "COLL --records N [--ascii] [--skew] [--seed S] [--mirror R]\n"
   "       [--layout partitioned|interleaved] [--block-size B] [--force]\n"
   "       [COMMON]",
   "generate gensort-format records into a collection, a slice per rank\n"
   "             (an existing COLL is refused unless --force)"},
  {"copy-in", cmd_copy_in,
   "FILE COLL [--schema S] [--mirror R] [--layout L] [--block-size B]\n"
   "       [--force] [COMMON]",
   "split a flat file of records into a parallel collection (FILE may\n"
   "             be a pipe or FIFO, or - for standard input; an existing\n"
   "             COLL is refused unless --force)"},
  {"copy-out", cmd_copy_out,
   "COLL [-o FILE [--force]] [--read-policy gd|mirror-nogd|nomirror]\n"
   "       [COMMON]",
   "write a collection's records in order to FILE or stdout, reading\n"
   "             every mirror with graduated declustering (--read-policy:\n"
   "             the baselines); an existing FILE is refused unless\n"
   "             --force (a FIFO or device is written through)"},
  {"ls", cmd_ls, "[COMMON]", "list the collections under the root"},
  {"info", cmd_info, "COLL [COMMON]",
   "show a collection's schema, partitions, sizes and mirrors"},
  {"fsck", cmd_fsck, "COLL [COMMON]",
   "verify every block of every copy; warn about damaged copies,\n"
   "             non-zero exit only if a block has no intact copy"},
  {"rm", cmd_rm, "COLL [--force] [COMMON]",
   "remove a collection (--force: also one whose metadata is damaged,\n"
   "             with every file named for it)"},
  {"valsort", cmd_valsort, "COLL|file:PATH [--input COLL|file:PATH] "
   "[--schema S] [COMMON]",
   "check that the records are in key order and print their count and\n"
   "             checksum (the sum of their CRC-32s, as gensort -c and\n"
   "             valsort print it); with --input, that they are the\n"
   "             input's records (same count and checksum)"},
  {"sort", cmd_sort,
   "IN OUT [--memory SIZE] [--mirror R] [--force] [--root DIR]\n"
   "             [--static] [--disk-rate R] [--cpu-rate R] [--perturb SPEC]\n"
   "             [--schema S] [--sync]",
   "sort collection IN by its key into OUT (the flow flows/sort.yaml:\n"
   "             read, partition by range, sort, write), in one pass when\n"
   "             each rank's share fits its memory (--memory, default half\n"
   "             the node's RAM over its ranks), else in two: sorted runs\n"
   "             to a temporary collection, then a merge\n"
   "             (flows/sort_merge.yaml; the runs are removed after);\n"
   "             OUT's stream order is sorted (check: river valsort);\n"
   "             an existing OUT is refused unless --force;\n"
   "             IN or OUT file:PATH: a flat file of records (--schema,\n"
   "             default gensort's; OUT is fsynced before it replaces\n"
   "             one, --sync is that default, RIVER_SYNC=0 skips it);\n"
   "             --static: the static baseline; --disk-rate, --cpu-rate\n"
   "             (bytes/s) emulate disks and partitioners, which\n"
   "             --perturb slows (\"disk:1=0.5;cpu:2=0.25\"), and the\n"
   "             time is reported against the fluid ideal"},
  {"join", cmd_join,
   "R S OUT --key FIELD [--static | --replicate] [--memory SIZE]\n"
   "             [--mirror R] [--force] [--root DIR] [--cpu-rate R]\n"
   "             [--perturb SPEC]",
   "join collections R and S on FIELD into OUT (R's fields, then S's\n"
   "             but the key), in one pass: the flow flows/join.yaml\n"
   "             (read, partition by hash, exchange, hash join on the\n"
   "             smaller relation, write); --replicate: every joiner holds\n"
   "             the smaller relation and the other comes through a DQ\n"
   "             (flows/join_replicated.yaml); --static: the static\n"
   "             baseline; --cpu-rate emulates the joiners' CPUs, which\n"
   "             --perturb slows (\"cpu:1=0.25\")"},
  {"run", cmd_run, "FLOW.yaml [key=value ...] [--plugin LIB.so ...]",
   "run a flow spec (doc/flowspec.md) on the job's ranks; print each\n"
   "             stage's totals (--plugin: load a shared library of\n"
   "             user modules first, on every rank; doc/modules.md)"},
  {"gc", cmd_gc, "[--remove [--force]] [COMMON]",
   "list the files crashed or failed writes left under the root,\n"
   "             and the temporaries of outputs outside it recorded there\n"
   "             (copy-out -o, file: OUT; --remove: remove them; --force:\n"
   "             also data files newer than their collection's metadata)"},
  {"flow", cmd_flow,
   "check FLOW.yaml [--ranks N] [--dot] [--plugin LIB.so ...]\n"
   "       [key=value...]",
   "check a flow spec (on this job's ranks, or as a plan for N ranks)\n"
   "             and print each rank's stages, or the flow as a Graphviz\n"
   "             graph (--dot); key=value overrides the spec's params"},
  {"modules", cmd_modules, "[--plugin LIB.so ...]",
   "list every module a flow may name (built in, and the plugins'),\n"
   "             with its ports, arguments and what it does"},
};
#define NCMDS (sizeof cmds / sizeof cmds[0])

/* The rule of every size, count and rate the commands take (their
 * options and a flow's size params: river_parse_size), said by the help
 * of each command that takes one and by river --help. */
#define SIZE_RULE \
  "Sizes, counts and rates: digits, then k, M, G, T (\xc3\x97" "1000) or " \
  "Ki, Mi, Gi, Ti\n(\xc3\x97" "1024): --records 1M is 1000000 records, " \
  "--block-size 64Ki 65536 bytes;\nrates are bytes/s (--disk-rate 40M: " \
  "40 MB/s). Sizes print as 1.05 MB.\n"
static const char *const size_cmds[] = {"hello", "gen", "copy-in", "sort",
                                        "join", "run", "flow"};

static int world_rank(void)
{
  return cli_rank();
}

static void usage_all(FILE *out)
{
  size_t i;

  fprintf(out, "usage: mpirun -n N river COMMAND [OPTIONS]\n\ncommands:\n");
  for (i = 0; i < NCMDS; i++)
    fprintf(out, "  %-10s %s\n", cmds[i].name,
            cmds[i].summary);
  fprintf(out, "\n`river COMMAND --help` describes one command.\n"
               "COMMON options of collection commands:\n"
               "  --root DIR       metadata in DIR/COLL" RIVER_PCOLL_META_SUFFIX
               " (default "
               "$RIVER_ROOT, else %s)\n"
               "  --disks PATTERN  disk directories: one %%d for the disk "
               "number, %%n for the\n"
               "                   node's name (node-local disks); default "
               "$RIVER_DISKS, else DIR/%s\n"
               "  --direct-io      bypass the page cache (O_DIRECT)\n"
               "Every command:\n"
               "  --timeout SECS   end the job if a rank's waits see no "
               "progress for SECS\n"
               "                   seconds (sets RIVER_TIMEOUT; 0: off, "
               "the default)\n"
               "  --bind           bind each rank to a core of its node "
               "(spread over the\n"
               "                   cores) unless the launcher bound it; "
               "river topo shows it\n"
               "  --stats FILE     write the run's stats, JSON "
               "(doc/stats.md)\n"
               "  --quiet          no progress line (shown on stderr by "
               "rank 0 while a flow\n"
               "                   runs: redrawn on a terminal, a line "
               "every 5 s otherwise)\n"
               "Environment: RIVER_LOG=error|warn|info|debug, RIVER_ROOT, "
               "RIVER_DISKS,\n  RIVER_TIMEOUT, RIVER_NODE_NAME, "
               "RIVER_PROGRESS=0|1, RIVER_PROGRESS_EVERY=SECS\n"
               SIZE_RULE,
          RIVER_PCOLL_DEFAULT_ROOT, RIVER_PCOLL_DEFAULT_DISKS);
}

/* Print `usage: river NAME USAGE` and the summary to stdout on rank 0. */
static void usage_cmd(const char *name)
{
  size_t i;

  if (world_rank() != 0)
    return;
  for (i = 0; i < NCMDS; i++)
    if (strcmp(cmds[i].name, name) == 0)
      printf("usage: river %s %s\n%s\n", name, cmds[i].usage,
             cmds[i].summary);
  for (i = 0; i < sizeof size_cmds / sizeof size_cmds[0]; i++)
    if (strcmp(size_cmds[i], name) == 0)
      printf("%s", SIZE_RULE);
}

static int wants_help(int argc, char **argv)
{
  int i;

  for (i = 1; i < argc; i++)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
      return 1;
  return 0;
}

/* ------------------------------------------------------------------ hello */

/* Pass a token of `bytes` bytes round the ring `laps` times; on rank 0
 * set *seconds to the time taken. */
static int ring(uint64_t laps, uint64_t bytes, double *seconds)
{
  int rank, size;
  uint64_t lap;
  char *token;
  double t0;

  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  token = calloc(1, (size_t)bytes);
  if (token == NULL)
    return RIVER_ENOMEM;
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;

  MPI_Barrier(MPI_COMM_WORLD);
  t0 = river_wtime();
  for (lap = 0; lap < laps; lap++) {
    if (rank == 0) {
      MPI_Send(token, (int)bytes, MPI_BYTE, next, 0, MPI_COMM_WORLD);
      MPI_Recv(token, (int)bytes, MPI_BYTE, prev, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(token, (int)bytes, MPI_BYTE, prev, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      MPI_Send(token, (int)bytes, MPI_BYTE, next, 0, MPI_COMM_WORLD);
    }
  }
  *seconds = river_wtime() - t0;
  free(token);
  return RIVER_SUCCESS;
}

/* A queue over every rank (rank 0 the consumer, the others producers,
 * one record each): which way its credits travel (river/dq.h), in
 * *path. Its records are checked: each producer's rank once. */
static int hello_queue(int *path)
{
  river_dq_opts o = RIVER_DQ_OPTS_INIT;
  river_dq_stats st;
  river_dq *q = NULL;
  int rank, size, rc, r2, got = 0, sum = 0;
  const void *recs;
  size_t n;

  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  o.policy = RIVER_DQ_PUSH;
  rc = river_dq_create(MPI_COMM_WORLD, rank == 0 ? RIVER_DQ_CONSUMER
                                                 : RIVER_DQ_PRODUCER,
                       sizeof rank, &o, &q);
  if (rc != RIVER_SUCCESS)
    return rc;
  if (rank > 0) {
    rc = river_dq_put(q, &rank, 1);
    r2 = river_dq_close(q);
    rc = rc != RIVER_SUCCESS ? rc : r2;
  } else {
    while ((rc = river_dq_get(q, &recs, &n, NULL)) == RIVER_SUCCESS) {
      size_t k;
      for (k = 0; k < n; k++) {
        int v;
        memcpy(&v, (const char *)recs + k * sizeof v, sizeof v);
        sum += v;
      }
      got += (int)n;
    }
    rc = rc == RIVER_EOS && got == size - 1 && sum == size * (size - 1) / 2
         ? RIVER_SUCCESS : rc == RIVER_EOS ? RIVER_ECORRUPT : rc;
  }
  if (river_dq_stats_get(q, &st) == RIVER_SUCCESS)
    *path = st.credit_path;
  r2 = river_dq_destroy(q);
  return rc != RIVER_SUCCESS ? rc : r2;
}

static int cmd_hello(int argc, char **argv)
{
  uint64_t laps = 50, bytes = 1 << 20;
  char line[CLI_LINE];
  size_t len = sizeof line;
  int i, rank, size, rc, path = 0;
  double secs = 0.0;

  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--laps") == 0)
      rc = app_parse_u64("--laps", argv[++i], 1, 1000000, 0, &laps);
    else if (strcmp(argv[i], "--bytes") == 0)
      rc = app_parse_u64("--bytes", argv[++i], 1, 1 << 30, 1, &bytes);
    else {
      if (cli_rank() == 0)
        river_log(RIVER_LOG_ERROR, "hello: unknown argument '%s'", argv[i]);
      app_usage_error();
      rc = RIVER_EINVAL;
    }
    if (rc != RIVER_SUCCESS)
      return rc;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  if (rank == 0) {
    if (river_build_info(line, &len) != RIVER_SUCCESS)
      snprintf(line, sizeof line, "River %s", RIVER_VERSION_STRING);
    printf("%s\n", line);
  }
  if ((rc = cli_topo_report(NULL)) != RIVER_SUCCESS)
    return rc;
  if (size > 1 && (rc = ring(laps, bytes, &secs)) != RIVER_SUCCESS)
    return rc;
  if (size > 1 && (rc = hello_queue(&path)) != RIVER_SUCCESS) {
    river_log(RIVER_LOG_ERROR, "hello: a queue over every rank failed: %s",
              river_strerror(rc));
    return rc;
  }
  if (rank == 0) {
    if (size > 1) {
      double hops = (double)laps * size;
      char tok[APP_SIZE_TEXT], rate[APP_SIZE_TEXT];
      printf("ring: a %s token went %llu times round %d ranks in %.3f s: "
             "%.1f us and %s per hop\n", app_size(bytes, tok),
             (unsigned long long)laps, size, secs, 1e6 * secs / hops,
             app_rate((double)bytes * hops / secs, rate));
      printf("queue: credits by %s\n", path == RIVER_DQ_CREDITS_RMA
             ? "rma (an RMA window spans the ranks)"
             : "msg (two-sided messages: no RMA window spans the ranks, "
               "or RIVER_DQ_CREDITS=msg)");
    } else {
      printf("ring: skipped (needs 2 or more ranks)\n");
    }
  }
  return RIVER_SUCCESS;
}

/* ---------------------------------------------------------------- version */

static int cmd_version(int argc, char **argv)
{
  char line[CLI_LINE];
  size_t len = sizeof line;
  int rc;

  if (argc > 1) {
    river_log(RIVER_LOG_ERROR, "version: unexpected argument '%s'", argv[1]);
    return RIVER_EINVAL;
  }
  rc = river_build_info(line, &len);
  if (rc == RIVER_SUCCESS && world_rank() == 0)
    printf("%s\n", line);
  return rc;
}

/* ------------------------------------------------------------------- main */

/* What was wrong with the options taken before MPI is up (said once,
 * by rank 0, once it is). */
static char pre_error[160];

/* Take option opt VALUE (or opt=VALUE) out of argv, wherever it is,
 * into *val (NULL if absent). 0, or 2 (in pre_error) if it has no
 * value. */
static int take_value(int *argc, char **argv, const char *opt,
                      const char **val)
{
  size_t len = strlen(opt);
  int i, k, drop = 0;

  *val = NULL;
  for (i = 1; i < *argc && *val == NULL; i++) {
    if (strcmp(argv[i], opt) == 0) {
      if (i + 1 >= *argc || strncmp(argv[i + 1], "--", 2) == 0) {
        snprintf(pre_error, sizeof pre_error, "%s needs a value", opt);
        return 2;
      }
      *val = argv[i + 1];
      drop = 2;
    } else if (strncmp(argv[i], opt, len) == 0 && argv[i][len] == '=') {
      *val = argv[i] + len + 1;
      drop = 1;
    }
  }
  if (*val == NULL)
    return 0;
  for (i--, k = i + drop; k <= *argc; i++, k++)  /* with argv's NULL */
    argv[i] = argv[k];
  *argc -= drop;
  for (i = 1; i < *argc; i++)
    if (strcmp(argv[i], opt) == 0
        || (strncmp(argv[i], opt, len) == 0 && argv[i][len] == '=')) {
      snprintf(pre_error, sizeof pre_error, "%s given twice", opt);
      return 2;
    }
  return 0;
}

/* Take --timeout SECONDS out of argv into RIVER_TIMEOUT, which
 * river_init reads (and checks) on every rank: the job-wide watchdog
 * (doc/design.md). 0, or 2 (printed) if it has no value. */
static int take_timeout(int *argc, char **argv)
{
  const char *v = NULL;

  if (take_value(argc, argv, "--timeout", &v) != 0)
    return 2;
  if (v != NULL && setenv("RIVER_TIMEOUT", v, 1) != 0) {
    snprintf(pre_error, sizeof pre_error, "cannot set RIVER_TIMEOUT");
    return 2;
  }
  return 0;
}

/* The command line as one string (malloc'd; NULL without memory). */
static char *command_line(int argc, char **argv)
{
  size_t n = 1;
  char *s;
  int i;

  for (i = 0; i < argc; i++)
    n += strlen(argv[i]) + 1;
  if ((s = malloc(n)) == NULL)
    return NULL;
  s[0] = '\0';
  for (i = 0; i < argc; i++) {
    if (i > 0)
      strcat(s, " ");
    strcat(s, argv[i]);
  }
  return s;
}

/* Take flag (--bind, --quiet) out of argv, wherever it is: 1 if it
 * was there. */
static int take_flag(int *argc, char **argv, const char *flag)
{
  int i, k, found = 0;

  for (i = 1, k = 1; i <= *argc; i++) {  /* with argv's NULL */
    if (i < *argc && strcmp(argv[i], flag) == 0) {
      found = 1;
      continue;
    }
    argv[k++] = argv[i];
  }
  *argc = k - 1;
  return found;
}

/* Every rank's worst outcome, waited for as River waits; where the
 * watchdog has fired (RIVER_ETIMEDOUT here or in the command) some rank
 * may never answer, so the job is aborted: the library cannot end it,
 * and a rank left in MPI_Finalize would hold the job for ever. */
static int agree_or_abort(const char *name, int rc, int *first, int *usage)
{
  int v[3], w;

  /* The most negative code, the lowest rank that failed, and whether
   * any rank found the command line wrong. */
  v[0] = rc > 0 ? RIVER_EINVAL : rc;
  v[1] = rc != RIVER_SUCCESS ? cli_rank() : cli_size();
  v[2] = !app_usage_seen();
  w = rc == RIVER_ETIMEDOUT ? rc : cli_agree_min(v, 3);
  if (w != RIVER_SUCCESS) {
    river_log(RIVER_LOG_ERROR, "%s: %s (%s): aborting the job", name,
              river_strerror(w), river_err_name(w));
    fflush(NULL);
    MPI_Abort(MPI_COMM_WORLD, 124);   /* as timeout(1): exit 124 */
  }
  *first = v[1];
  *usage = !v[2];
  return v[0];
}

river_stats *cli_stats;

int cli_stats_work(const char *label, uint64_t records, uint64_t bytes,
                   double t0, int rc)
{
  int src;

  if (cli_stats == NULL)
    return rc;
  src = river_stats_add_work(cli_stats, label, records, bytes,
                             river_wtime() - t0);
  return rc != RIVER_SUCCESS ? rc : src;
}

/* --stats FILE: the run's stats file (river/stats.h), made on every
 * rank; written whatever the command's outcome. */
static int stats_begin(const char *path, const char *line)
{
  int rc;

  if (path == NULL)
    return RIVER_SUCCESS;
  if (*path == '\0') {
    if (world_rank() == 0)
      river_log(RIVER_LOG_ERROR, "--stats: an empty path");
    return RIVER_EINVAL;
  }
  rc = river_stats_create(MPI_COMM_WORLD, line, &cli_stats);
  /* Where it goes, before the command runs: a mistyped directory is
   * said now, not after a long sort. */
  if (rc == RIVER_SUCCESS
      && (rc = river_stats_check_path(cli_stats, path)) != RIVER_SUCCESS) {
    river_stats_destroy(cli_stats);
    cli_stats = NULL;
  }
  return rc;
}

static int stats_end(const char *path, int rc)
{
  int wrc;

  if (cli_stats == NULL)
    return rc;
  wrc = river_stats_write(cli_stats, path);
  river_stats_destroy(cli_stats);
  cli_stats = NULL;
  return rc != RIVER_SUCCESS ? rc : wrc;
}

int cli_edit_distance(const char *a, const char *b)
{
  size_t la = strlen(a), lb = strlen(b), i, j;
  int row[33], diag, up;

  if (la > 32 || lb > 32)
    return 9;
  for (j = 0; j <= lb; j++)
    row[j] = (int)j;
  for (i = 1; i <= la; i++) {
    diag = row[0];
    row[0] = (int)i;
    for (j = 1; j <= lb; j++) {
      up = row[j];
      row[j] = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < row[j])
        row[j] = up + 1;
      if (row[j - 1] + 1 < row[j])
        row[j] = row[j - 1] + 1;
      diag = up;
    }
  }
  return row[lb] < 9 ? row[lb] : 9;
}

/* The command a mistyped word most likely meant: the nearest by edit
 * distance, if within 2 (and less than the word's length), else NULL. */
static const char *nearest_command(const char *word)
{
  const char *best = NULL;
  int d, bestd = 3;
  size_t i;

  for (i = 0; i < NCMDS; i++) {
    d = cli_edit_distance(word, cmds[i].name);
    if (d < bestd && d < (int)strlen(word)) {
      bestd = d;
      best = cmds[i].name;
    }
  }
  return best;
}

int main(int argc, char **argv)
{
  const struct cmd *cmd = NULL;
  const char *stats = NULL;
  char *line = command_line(argc, argv);
  size_t i;
  int rc, all, bind, first, usage;

  if (take_timeout(&argc, argv) != 0
      || take_value(&argc, argv, "--stats", &stats) != 0)
    unsetenv("RIVER_TIMEOUT");   /* a bad option: said below */
  bind = take_flag(&argc, argv, "--bind");
  /* The progress line (river/progress.h): on unless --quiet, or
   * RIVER_PROGRESS says otherwise. */
  if (take_flag(&argc, argv, "--quiet"))
    setenv("RIVER_PROGRESS", "0", 1);
  else
    setenv("RIVER_PROGRESS", "1", 0);
  rc = river_init(&argc, &argv);
  if (rc != RIVER_SUCCESS) {
    fprintf(stderr, "river: cannot initialise: %s\n", river_strerror(rc));
    free(line);
    return 1;
  }
  if (pre_error[0] != '\0') {
    if (world_rank() == 0)
      river_log(RIVER_LOG_ERROR, "%s (see river --help)", pre_error);
    free(line);
    river_finalize();
    return 2;
  }
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    if (world_rank() == 0)
      usage_all(argc < 2 ? stderr : stdout);
    free(line);
    river_finalize();
    return argc < 2 ? 2 : 0;
  }
  if (strcmp(argv[1], "--version") == 0) {
    if (world_rank() == 0)
      printf("river %s\n", RIVER_VERSION_STRING);
    free(line);
    river_finalize();
    return 0;
  }
  for (i = 0; i < NCMDS; i++)
    if (strcmp(argv[1], cmds[i].name) == 0)
      cmd = &cmds[i];
  if (cmd == NULL) {
    const char *near = nearest_command(argv[1]);
    if (world_rank() == 0 && near != NULL)
      river_log(RIVER_LOG_ERROR, "unknown command '%s': did you mean '%s'? "
                "(river --help lists them)", argv[1], near);
    else if (world_rank() == 0)
      river_log(RIVER_LOG_ERROR, "unknown command '%s' (try river --help)",
                argv[1]);
    free(line);
    river_finalize();
    return 2;
  }
  if (wants_help(argc - 1, argv + 1)) {
    usage_cmd(cmd->name);
    rc = RIVER_SUCCESS;
  } else if (bind
             && (rc = river_topo_bind(MPI_COMM_WORLD, &cli_bind_outcome))
                    != RIVER_SUCCESS) {
    /* every rank has failed (river_topo_bind agrees), one has said why */
  } else if ((rc = stats_begin(stats, line)) == RIVER_SUCCESS) {
    rc = stats_end(stats, cmd->fn(argc - 1, argv + 1));
  }
  free(line);

  /* Every rank exits non-zero if any rank failed (2 if the command line
   * was wrong); a timeout aborts. The closing line is said once, by the
   * lowest rank that failed (naming it, when it is not rank 0). */
  all = agree_or_abort(cmd->name, rc, &first, &usage);
  if (rc != RIVER_SUCCESS && cli_rank() == first && first == 0)
    river_log(RIVER_LOG_ERROR, "%s failed: %s (%s)", cmd->name,
              river_strerror(rc), river_err_name(rc));
  else if (rc != RIVER_SUCCESS && cli_rank() == first)
    river_log(RIVER_LOG_ERROR, "%s failed on rank %d (first of the ranks "
              "that failed): %s (%s)", cmd->name, first, river_strerror(rc),
              river_err_name(rc));
  river_finalize();
  return all == RIVER_SUCCESS ? 0 : usage ? 2 : 1;
}
