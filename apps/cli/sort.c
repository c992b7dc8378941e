/*
 * sort.c - `river sort IN OUT [--memory SIZE] [--mirror R] [--root DIR]
 * [--static] [--disk-rate R] [--cpu-rate R] [--perturb SPEC] [--schema S]
 * [--sync]`: the one-pass parallel sort of IN into OUT, each a
 * collection or file:PATH, a flat file of records. The sort
 * is the flow spec flows/sort.yaml, which `river run` runs as well; this
 * command finds it, fills in its params from the options, and reports
 * the time, with emulated rates against the sort's fluid ideal.
 *
 * Where the spec is: app_find_flow (apps/common/sortapp.h). Every rank
 * looks; they agree. The fluid ideal is app_sort_ideal's.
 */
#include "app.h"
#include "../common/sortapp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>




/* Rank 0's line after a sort: records, size, time, rate; with emulated
 * rates, the fluid ideal and the share of it reached. */
static void report(const struct args *a, const river_pcoll_info *in,
                   double seconds, double disk, double cpu)
{
  double mb = (double)in->nrecords * (double)in->record_size / 1e6, ideal;
  struct app_sort_machine m;
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
          : app_sort_ideal(&m, mb * 1e6, cli_size(), in->ndisks,
                           in->npartitions, in->replication,
                           a->opts.replication > 0 ? a->opts.replication
                                                   : 1);
  river_perturb_destroy(p);
  printf("sort: %s %s -> %s: %llu records, %.1f MB in %.3f s, %.1f MB/s",
         a->is_static ? "static" : "river", a->pos[0], a->pos[1],
         (unsigned long long)in->nrecords, mb, seconds,
         seconds > 0 ? mb / seconds : 0.0);
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
static int input_info(const struct args *a, river_pcoll_info *info)
{
  river_pcoll *pc = NULL;
  river_schema *s = NULL;
  struct stat st;
  int rc;

  if (app_file_path(a->pos[0]) != NULL) {
    memset(info, 0, sizeof *info);
    rc = a->schema ? river_schema_parse(a->schema, &s)
                   : river_schema_create_default(&s);
    if (rc == RIVER_SUCCESS)
      rc = river_schema_record_size(s, &info->record_size);
    river_schema_destroy(s);
    if (rc == RIVER_SUCCESS && stat(app_file_path(a->pos[0]), &st) != 0)
      rc = RIVER_ENOTFOUND;   /* the flow's check says why, below */
    if (rc == RIVER_SUCCESS) {
      info->nrecords = (uint64_t)st.st_size / info->record_size;
      info->ndisks = info->npartitions = cli_size();
      info->replication = 1;
    }
    return rc == RIVER_ENOTFOUND ? RIVER_SUCCESS : cli_agree(rc);
  }
  rc = river_pcoll_open(MPI_COMM_WORLD, a->pos[0], &a->opts, &pc);

  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_info_get(pc, info);
  river_pcoll_close(pc);
  return rc;
}


int cmd_sort(int argc, char **argv)
{
  struct args a;
  river_pcoll_info in;
  char spec[4096], kv[18][4200];
  const char *params[18];
  double disk, cpu, seconds = 0;
  int n = 0, i, rc;

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
  if ((rc = input_info(&a, &in)) != RIVER_SUCCESS)
    return rc;
  if (!app_param("sort", kv[n++], sizeof kv[0], "in", a.pos[0])
      || !app_param("sort", kv[n++], sizeof kv[0], "out", a.pos[1]))
    return RIVER_EINVAL;
  snprintf(kv[n++], sizeof kv[0], "mirror=%d",
           a.opts.replication > 0 ? a.opts.replication : 1);
  if (a.sync)
    snprintf(kv[n++], sizeof kv[0], "sync=true");
  if (disk > 0 || cpu > 0) {   /* emulated: keep the DQ's tail short */
    snprintf(kv[n++], sizeof kv[0], "credits=%s", APP_SORT_EMUL_CREDITS);
    snprintf(kv[n++], sizeof kv[0], "message_size=%s", APP_SORT_EMUL_MSG);
  }
  if (a.is_static) {   /* fixed readers, partitioners and writers */
    snprintf(kv[n++], sizeof kv[0], "read_policy=mirror-nogd");
    snprintf(kv[n++], sizeof kv[0], "spread=one-to-one");
    snprintf(kv[n++], sizeof kv[0], "gather=one-to-one");
    snprintf(kv[n++], sizeof kv[0], "gather_policy=");
    snprintf(kv[n++], sizeof kv[0], "runs=1");
  }
  if ((a.memory != NULL && !app_param("sort", kv[n++], sizeof kv[0], "memory", a.memory))
      || (a.opts.root != NULL
          && !app_param("sort", kv[n++], sizeof kv[0], "root", a.opts.root))
      || (a.perturb != NULL
          && !app_param("sort", kv[n++], sizeof kv[0], "perturb", a.perturb))
      || (a.schema != NULL
          && !app_param("sort", kv[n++], sizeof kv[0], "schema", a.schema)))
    return RIVER_EINVAL;
  for (i = 0; i < n && i < (int)(sizeof kv / sizeof kv[0]); i++)
    params[i] = kv[i];
  rc = cli_run_flow(spec, params, n, &seconds);
  if (rc == RIVER_SUCCESS)
    report(&a, &in, seconds, disk, cpu);
  return rc;
}
