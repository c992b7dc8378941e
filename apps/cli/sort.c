/*
 * sort.c - `river sort IN OUT [--memory SIZE] [--mirror R] [--root DIR]
 * [--static] [--disk-rate R] [--cpu-rate R] [--perturb SPEC] [--schema S]
 * [--sync]`: the one-pass parallel sort of IN into OUT, each a
 * collection or file:PATH, a flat file of records (a file: OUT is
 * always fsynced, --sync is kept for old scripts; RIVER_SYNC=0 skips
 * it for scratch data). The sort
 * is the flow spec flows/sort.yaml, which `river run` runs as well; this
 * command finds it, fills in its params from the options, and reports
 * the time, with emulated rates against the sort's fluid ideal.
 *
 * Where the spec is: app_find_flow (apps/common/shipped.h). Every rank
 * looks; they agree. The fluid ideal is app_sort_ideal's.
 */
#include "app.h"
#include "../common/ideal.h"
#include "../common/shipped.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>




/* Rank 0's line after a sort: records, size, time, rate; with emulated
 * rates, the fluid ideal and the share of it reached. */
static void report(const struct args *a, const river_pcoll_info *in,
                   double seconds, double disk, double cpu)
{
  uint64_t bytes = in->nrecords * in->record_size;
  char size[APP_SIZE_TEXT], rate[APP_SIZE_TEXT];
  double ideal;
  struct app_machine m;
  river_perturb *p = NULL;

  if (cli_rank() != 0)
    return;
  if (a->perturb != NULL)
    river_perturb_parse(a->perturb, &p);   /* the flow checked it */
  m.disk = disk;
  m.cpu = cpu;
  m.perturb = p;
  /* A timed perturbation has no ideal from the factors at the start. */
  ideal = a->perturb && strchr(a->perturb, '@') ? 0
          : app_sort_ideal(&m, (double)bytes, cli_size(), in->ndisks,
                           in->npartitions, in->replication,
                           a->opts.replication > 0 ? a->opts.replication
                                                   : 1);
  river_perturb_destroy(p);
  if (cli_stats != NULL) {   /* rank 0's numbers are the file's */
    river_stats_add_number(cli_stats, "seconds", seconds);
    if (ideal >= 0.001 && seconds > 0) {
      river_stats_add_number(cli_stats, "fluid_ideal_seconds", ideal);
      river_stats_add_number(cli_stats, "fluid_ideal_ratio",
                             ideal / seconds);
    }
  }
  printf("sort: %s %s -> %s: %llu records, %s in %.3f s, %s",
         a->is_static ? "static" : "river", a->pos[0], a->pos[1],
         (unsigned long long)in->nrecords, app_size(bytes, size), seconds,
         app_rate(seconds > 0 ? (double)bytes / seconds : 0.0, rate));
  if (ideal >= 0.001 && seconds > 0)
    printf("; fluid ideal %.3f s, %.1f%% of it", ideal,
           100.0 * ideal / seconds);
  else if (disk > 0 || cpu > 0)
    printf("; no fluid ideal (%s)", a->perturb && strchr(a->perturb, '@')
           ? "the perturbation changes over time" : "under 1 ms");
  printf("\n");
  fflush(stdout);
}

/* IN's description (collective: every rank opens it). A file: IN is
 * described as the flow reads it: a slice per rank, each on its own
 * (emulated) disk, records of --schema (default gensort's). */
static int input_info(const struct args *a, river_pcoll_info *info,
                      size_t *key_size)
{
  river_pcoll_opts o = a->opts;
  river_pcoll *pc = NULL;
  river_schema *s = NULL;
  const river_schema *cs;
  struct stat st;
  int rc;

  if (app_file_path(a->pos[0]) != NULL) {
    memset(info, 0, sizeof *info);
    rc = a->schema ? river_schema_parse(a->schema, &s)
                   : river_schema_create_default(&s);
    if (rc == RIVER_SUCCESS)
      rc = river_schema_record_size(s, &info->record_size);
    if (rc == RIVER_SUCCESS)
      rc = river_schema_key(s, NULL, NULL, key_size);
    river_schema_destroy(s);
    if (rc == RIVER_SUCCESS && stat(app_file_path(a->pos[0]), &st) == 0)
      info->nrecords = (uint64_t)st.st_size / info->record_size;
    /* (A rank that cannot see it reads 0 records here; the flow's check
     * says why, on every rank.) */
    info->ndisks = info->npartitions = cli_size();
    info->replication = 1;
    return cli_agree(rc);
  }
  o.hold = RIVER_PCOLL_HOLD_NONE;   /* its facts only: the flow reads it */
  rc = river_pcoll_open(MPI_COMM_WORLD, a->pos[0], &o, &pc);
  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_info_get(pc, info);
  if (rc == RIVER_SUCCESS && river_pcoll_schema(pc, &cs) == RIVER_SUCCESS)
    rc = river_schema_key(cs, NULL, NULL, key_size);
  river_pcoll_close(pc);
  return rc;
}


/* The memory each rank may use: --memory, else half the node's memory
 * divided among the job's ranks on that node. Collective. */
static int rank_memory(const struct args *a, uint64_t *mem)
{
  MPI_Comm node;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  int here = 1;

  if (a->memory != NULL)
    return app_parse_u64("--memory", a->memory, 1, UINT64_MAX >> 1, 1, mem);
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                          MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &here);
    MPI_Comm_free(&node);
  }
  *mem = pages > 0 && page > 0
         ? (uint64_t)pages * (uint64_t)page / 2 / (uint64_t)here
         : (uint64_t)1 << 30;
  return RIVER_SUCCESS;
}

/* Does IN fit in one pass with mem bytes per rank? A sorter holds its
 * share (with 25% to spare for uneven splitters) plus the sort's working
 * space, 2 (K + 8) + 8 bytes a record. */
static int fits(const river_pcoll_info *in, size_t key_size, uint64_t mem)
{
  double per = (double)in->record_size + 2.0 * ((double)key_size + 8) + 8;
  double share = (double)in->nrecords / cli_size() * 1.25;

  return share * per <= (double)mem;
}

/* The temporary collection of the first pass's runs: a name no other
 * job uses (rank 0's pid and clock), the same on every rank. */
static int runs_name(char *buf, size_t len)
{
  unsigned long long w[2] = {0, 0};
  struct timespec ts;

  if (cli_rank() == 0) {
    clock_gettime(CLOCK_REALTIME, &ts);
    w[0] = (unsigned long long)getpid();
    w[1] = (unsigned long long)ts.tv_sec * 1000000000ull
           + (unsigned long long)ts.tv_nsec;
  }
  if (cli_bcast(w, sizeof w) != RIVER_SUCCESS)
    return RIVER_EMPI;
  snprintf(buf, len, "sort-runs-%llu-%llx", w[0], w[1]);
  return RIVER_SUCCESS;
}

/* The block size of the first pass's runs: a merger holds a block of
 * each run of a group (about its share of IN over a run's size, a run
 * being what fits in mem), and must fit them in mem: half of mem over
 * the runs, in whole RIVER_COLL_ALIGN units, at most 1 MiB. 0 (said)
 * if mem cannot hold even the smallest blocks. */
static uint64_t run_block(const river_pcoll_info *in, size_t key_size,
                          uint64_t mem)
{
  double nruns = 0;
  uint64_t b = app_sort_run_block(in->record_size, key_size, in->nrecords,
                                  cli_size(), mem, &nruns);

  if (b == 0 && cli_rank() == 0)
    river_log(RIVER_LOG_ERROR, "sort: --memory %llu bytes is too small "
              "to make progress: a rank would merge about %.0f sorted "
              "runs, holding a block of at least %d bytes of each",
              (unsigned long long)mem, nruns,
              RIVER_COLL_ALIGN > 2 * (int)in->record_size
                  ? RIVER_COLL_ALIGN : 2 * (int)in->record_size);
  return b;
}

/* A claim on runs this process could not remove: kept (and reachable)
 * until the process exits, when gc takes over. */
static river_pcoll_scratch *kept_claim;

/* The two-pass sort: IN's sorted runs (at most mem bytes each) into
 * collection `runs`, then merged into OUT; `runs` removed whatever
 * happens. kv/n: the first pass's params so far. */
static int two_pass(const struct args *a, const river_pcoll_info *in,
                    size_t key_size, char (*kv)[4200], int n,
                    const char *spec, uint64_t mem, double *seconds)
{
  char merge[4096], runs[96], mkv[8][4200], size[APP_SIZE_TEXT];
  river_pcoll_scratch *claim = NULL;
  const char *params[24];
  double t1 = 0, t2 = 0;
  uint64_t block = run_block(in, key_size, mem);
  double per = (double)in->record_size + 2.0 * ((double)key_size + 8) + 8;
  double least = 2.0 * RIVER_DQ_DEFAULT_MESSAGE_SIZE / in->record_size * per;
  int i, m = 0, rc;

  if (block == 0)
    return RIVER_EINVAL;
  if ((double)mem < least) {   /* a sorter takes whole exchange messages */
    if (cli_rank() == 0)
      river_log(RIVER_LOG_ERROR, "sort: --memory %llu bytes is too small "
                "to make progress: a sorter holds at least two messages of "
                "the exchange (%d bytes each) with the sort's working "
                "space, %.0f bytes", (unsigned long long)mem,
                (int)RIVER_DQ_DEFAULT_MESSAGE_SIZE, least);
    return RIVER_EINVAL;
  }
  rc = cli_agree(app_find_flow("sort", "sort_merge.yaml", merge,
                               sizeof merge));
  if (rc == RIVER_SUCCESS)
    rc = runs_name(runs, sizeof runs);
  if (rc == RIVER_SUCCESS && cli_rank() == 0)   /* gc's, if we die */
    rc = river_pcoll_scratch_claim(runs, &a->opts, &claim);
  rc = cli_agree(rc);
  if (rc != RIVER_SUCCESS) {
    river_pcoll_scratch_release(claim);
    return rc;
  }
  snprintf(kv[n++], 4200, "out=%s", runs);
  snprintf(kv[n++], 4200, "memory=%llu", (unsigned long long)mem);
  snprintf(kv[n++], 4200, "spill=true");
  snprintf(kv[n++], 4200, "runs=1");
  snprintf(kv[n++], 4200, "mirror=1");
  snprintf(kv[n++], 4200, "block_size=%llu", (unsigned long long)block);
  for (i = 0; i < n; i++)
    params[i] = kv[i];
  rc = cli_run_flow(spec, params, n, "sort, pass 1", in->nrecords, &t1);
  snprintf(mkv[m++], sizeof mkv[0], "in=%s", runs);
  snprintf(mkv[m++], sizeof mkv[0], "memory=%llu", (unsigned long long)mem);
  snprintf(mkv[m++], sizeof mkv[0], "mirror=%d",
           a->opts.replication > 0 ? a->opts.replication : 1);
  snprintf(mkv[m++], sizeof mkv[0], "sync=true");   /* (RIVER_SYNC=0 skips) */
  snprintf(mkv[m++], sizeof mkv[0], "replace=%s", a->force ? "true" : "false");
  if (!app_param("sort", mkv[m++], sizeof mkv[0], "out", a->pos[1])
      || (a->opts.root != NULL
          && !app_param("sort", mkv[m++], sizeof mkv[0], "root",
                        a->opts.root)))
    rc = rc == RIVER_SUCCESS ? RIVER_EINVAL : rc;
  for (i = 0; i < m; i++)
    params[i] = mkv[i];
  if (rc == RIVER_SUCCESS)
    rc = cli_run_flow(merge, params, m, "sort, pass 2", in->nrecords, &t2);
  {   /* the runs go, whatever happened (every node's: collective) */
    int r = river_pcoll_remove_all(MPI_COMM_WORLD, runs, &a->opts);
    if (cli_rank() != 0) {
      /* rank 0 holds the claim */
    } else if (r != RIVER_SUCCESS && r != RIVER_ENOTFOUND) {
      river_log(RIVER_LOG_WARN, "sort: could not remove the runs "
                "collection %s (river rm %s or river gc --remove removes "
                "it)", runs, runs);
      kept_claim = claim;   /* held to exit: gc lists the runs after */
    } else {
      river_pcoll_scratch_release(claim);
    }
  }
  *seconds = t1 + t2;
  if (rc == RIVER_SUCCESS && cli_rank() == 0)
    printf("sort: two passes, %.3f s + %.3f s, runs of at most %s a "
           "rank\n", t1, t2, app_size(mem, size));
  return cli_agree(rc);
}

int cmd_sort(int argc, char **argv)
{
  struct args a;
  river_pcoll_info in;
  char spec[4096], kv[24][4200];
  const char *params[24];
  double disk, cpu, seconds = 0;
  uint64_t mem = 0;
  size_t key_size = 0;
  int n = 0, i, passes, rc;

  rc = cli_coll_args(argc, argv, OPT_ROOT | OPT_MIRROR | OPT_MEMORY
                     | OPT_FORCE | OPT_STATIC | OPT_DISK_RATE | OPT_CPU_RATE
                     | OPT_PERTURB | OPT_SCHEMA | OPT_SYNC, 2,
                     "IN and OUT (COLL or file:PATH)", &a);
  if (rc != RIVER_SUCCESS)
    return rc;
  for (i = 0; i < 2; i++)
    if (app_file_path(a.pos[i]) == NULL
        && (rc = river_pcoll_check_name(a.pos[i])) != RIVER_SUCCESS)
      return rc;
  if (a.opts.replication > 1 && app_file_path(a.pos[1]) != NULL) {
    if (cli_rank() == 0)
      river_log(RIVER_LOG_ERROR, "sort: --mirror is for a collection OUT: "
                "a file: OUT is one file");
    return RIVER_EINVAL;
  }
  if ((a.schema != NULL && app_file_path(a.pos[0]) == NULL)
      || (a.sync && app_file_path(a.pos[1]) == NULL)) {
    if (cli_rank() == 0)
      river_log(RIVER_LOG_ERROR, "sort: %s is for a file: %s (a "
                "collection %s)", a.sync ? "--sync" : "--schema",
                a.sync ? "OUT" : "IN", a.sync ? "is always fsynced"
                                              : "has its schema");
    return RIVER_EINVAL;
  }
  /* (A file may be sorted onto itself: OUT is written under a
   * temporary name, renamed over the file after IN was read.) */
  if (strcmp(a.pos[0], a.pos[1]) == 0 && app_file_path(a.pos[0]) == NULL) {
    if (cli_rank() == 0)
        river_log(RIVER_LOG_ERROR, "sort: IN and OUT are both '%s': the "
                "sort reads IN while it writes OUT", a.pos[0]);
    return RIVER_EINVAL;
  }
  if ((rc = app_rate_param("--disk-rate", a.disk_rate, "disk_rate", &disk, kv[n++],
                       sizeof kv[0])) != RIVER_SUCCESS
      || (rc = app_rate_param("--cpu-rate", a.cpu_rate, "cpu_rate", &cpu, kv[n++],
                          sizeof kv[0])) != RIVER_SUCCESS)
    return rc;
  if (a.perturb != NULL && disk == 0 && cpu == 0) {
    if (cli_rank() == 0)
      river_log(RIVER_LOG_ERROR, "sort: --perturb scales emulated rates: "
                "give --disk-rate or --cpu-rate too");
    return RIVER_EINVAL;
  }
  /* A rank that cannot find it says so; every rank fails alike. */
  if ((rc = cli_agree(app_find_flow("sort", "sort.yaml", spec, sizeof spec)))
      != RIVER_SUCCESS)
    return rc;
  if (!a.force && (rc = app_refuse_existing("sort", a.pos[1], &a.opts)) != RIVER_SUCCESS)
    return rc;
  if ((rc = input_info(&a, &in, &key_size)) != RIVER_SUCCESS
      || (rc = rank_memory(&a, &mem)) != RIVER_SUCCESS)
    return rc;
  /* Every rank must take the same path: the most records any rank sees,
   * the least memory any rank has. */
  MPI_Allreduce(MPI_IN_PLACE, &in.nrecords, 1, MPI_UINT64_T, MPI_MAX,
                MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &mem, 1, MPI_UINT64_T, MPI_MIN,
                MPI_COMM_WORLD);
  passes = fits(&in, key_size, mem) ? 1 : 2;
  if (passes == 2 && a.is_static) {
    if (cli_rank() == 0)
      river_log(RIVER_LOG_ERROR, "sort: --static sorts in one pass, and "
                "%s does not fit in %llu bytes a rank (--memory)", a.pos[0],
                (unsigned long long)mem);
    return RIVER_EINVAL;
  }
  if (!app_param("sort", kv[n++], sizeof kv[0], "in", a.pos[0]))
    return RIVER_EINVAL;
  if (disk > 0 || cpu > 0) {   /* emulated: keep the DQ's tail short */
    snprintf(kv[n++], sizeof kv[0], "credits=%s", APP_SORT_EMUL_CREDITS);
    snprintf(kv[n++], sizeof kv[0], "message_size=%s", APP_SORT_EMUL_MSG);
  }
  for (i = 0; a.is_static && i < APP_SORT_NSTATIC; i++)   /* the baseline */
    snprintf(kv[n++], sizeof kv[0], "%s", app_sort_static[i]);
  if ((a.opts.root != NULL
          && !app_param("sort", kv[n++], sizeof kv[0], "root", a.opts.root))
      || (a.perturb != NULL
          && !app_param("sort", kv[n++], sizeof kv[0], "perturb", a.perturb))
      || (a.schema != NULL
          && !app_param("sort", kv[n++], sizeof kv[0], "schema", a.schema)))
    return RIVER_EINVAL;
  if (passes == 2) {
    rc = two_pass(&a, &in, key_size, kv, n, spec, mem, &seconds);
    if (rc == RIVER_SUCCESS)
      report(&a, &in, seconds, 0, 0);   /* no fluid ideal for two */
    return rc;
  }
  if (!app_param("sort", kv[n++], sizeof kv[0], "out", a.pos[1]))
    return RIVER_EINVAL;
  snprintf(kv[n++], sizeof kv[0], "mirror=%d",
           a.opts.replication > 0 ? a.opts.replication : 1);
  snprintf(kv[n++], sizeof kv[0], "sync=true");   /* --sync: the default */
  /* Without --force, an OUT made meanwhile is kept, not replaced */
  snprintf(kv[n++], sizeof kv[0], "replace=%s", a.force ? "true" : "false");
  if (a.memory != NULL)   /* a cap: over it, a clear error */
    snprintf(kv[n++], sizeof kv[0], "memory=%llu", (unsigned long long)mem);
  for (i = 0; i < n && i < (int)(sizeof kv / sizeof kv[0]); i++)
    params[i] = kv[i];
  rc = cli_run_flow(spec, params, n, "sort", in.nrecords, &seconds);
  if (rc == RIVER_SUCCESS)
    report(&a, &in, seconds, disk, cpu);
  return rc;
}
