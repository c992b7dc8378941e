/*
 * sort.c - `river sort IN OUT [--memory SIZE] [--mirror R] [--root DIR]
 * [--static] [--disk-rate R] [--cpu-rate R] [--perturb SPEC]`: the
 * one-pass parallel sort of collection IN into collection OUT. The sort
 * is the flow spec flows/sort.yaml, which `river run` runs as well; this
 * command finds it, fills in its params from the options, and reports
 * the time, with emulated rates against the sort's fluid ideal.
 *
 * Where the spec is: $RIVER_FLOWS/sort.yaml if set; else, for the river
 * program of a build tree (not installed), the source tree's flows/;
 * else the installed $(pkgdatadir)/flows. Every rank looks; they agree.
 */
#include "coll.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef RIVER_SRC_FLOWSDIR
#define RIVER_SRC_FLOWSDIR "flows"
#endif
#ifndef RIVER_FLOWSDIR
#define RIVER_FLOWSDIR "/usr/local/share/river/flows"
#endif
#ifndef RIVER_BUILDDIR
#define RIVER_BUILDDIR "."
#endif

/* Whether this program is the one in the build tree (apps/river, or
 * libtool's apps/.libs/ copy), not an installed one. */
static int in_build_tree(void)
{
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  size_t len = strlen(RIVER_BUILDDIR);

  if (n <= 0)
    return 0;
  exe[n] = '\0';
  return strncmp(exe, RIVER_BUILDDIR, len) == 0 && exe[len] == '/';
}

/* The path of the shipped spec `name` into buf. */
static int find_spec(const char *name, char *buf, size_t len)
{
  const char *env = getenv("RIVER_FLOWS");
  const char *dirs[] = {env && *env ? env : NULL,
                        in_build_tree() ? RIVER_SRC_FLOWSDIR : NULL,
                        RIVER_FLOWSDIR};
  size_t i;

  for (i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
    if (dirs[i] == NULL)
      continue;
    if (snprintf(buf, len, "%s/%s", dirs[i], name) < (int)len
        && access(buf, R_OK) == 0)
      return RIVER_SUCCESS;
    if (i == 0) {   /* RIVER_FLOWS given: it must hold the spec */
      river_log(RIVER_LOG_ERROR, "sort: no %s in RIVER_FLOWS=%s (rank %d)",
                name, env, cli_rank());
      return RIVER_ENOTFOUND;
    }
  }
  river_log(RIVER_LOG_ERROR, "sort: cannot find %s in %s (rank %d; set "
            "RIVER_FLOWS to the folder that holds it)", name, RIVER_FLOWSDIR,
            cli_rank());
  return RIVER_ENOTFOUND;
}

/* OUT must not exist unless --force (then the sort replaces it when it
 * commits, and a failed sort leaves it as it was). Collective. */
static int refuse_existing(const char *out, const river_pcoll_opts *opts)
{
  char path[4200];
  size_t len = 4096;
  int rc;

  rc = river_pcoll_root(opts, path, &len);
  if (rc == RIVER_SUCCESS
      && snprintf(path + strlen(path), sizeof path - strlen(path),
                  "/%s" RIVER_PCOLL_META_SUFFIX, out)
             >= (int)(sizeof path - strlen(path)))
    rc = RIVER_EINVAL;
  if (rc == RIVER_SUCCESS && access(path, F_OK) == 0) {
    if (cli_rank() == 0)
      river_log(RIVER_LOG_ERROR, "sort: collection %s exists (--force "
                "replaces it once the sorted one is written)", out);
    rc = RIVER_EEXIST;
  }
  return cli_agree(rc);
}

/* "key=value" into buf, or 0 (said) if it does not fit: a value is
 * never cut short. */
static int param(char *buf, size_t len, const char *key, const char *value)
{
  if (snprintf(buf, len, "%s=%s", key, value) < (int)len)
    return 1;
  if (cli_rank() == 0)
    river_log(RIVER_LOG_ERROR, "sort: --%s is longer than %zu bytes", key,
              len - strlen(key) - 2);
  return 0;
}

/* The perturbation's factor for (kind, index) at the start; 1 without
 * a spec. */
static double factor(const river_perturb *p, int kind, int index)
{
  double f = 1.0;

  if (p != NULL)
    river_perturb_factor(p, kind, index, 0.0, &f);
  return f;
}

/*
 * The fluid ideal of the sort, in seconds: the best any placement of
 * the work could do with the emulated rates (0 for a rate means real
 * speed, which the ideal does not model). The sort holds every record
 * before it writes any, so it has two phases:
 *
 *   reading and partitioning, at min(R_read, R_cpu): R_read is GD's
 *   fluid ideal over IN's disks (river_gd_fluid_ideal; the sum of the
 *   disks' rates if IN has more partitions than disks), R_cpu the sum
 *   of the n partitioners' CPU rates;
 *   writing, at the sum of the n disks' rates divided by OUT's copies.
 *
 * Perturbation factors are those in force at the start (a spec with
 * timed clauses gets no ideal: report() says so). The in-memory
 * sort and the exchange are not emulated and count as free: the ideal
 * is a bound the measured time can only approach. 0 if nothing is
 * emulated.
 */
static double sort_ideal(const river_pcoll_info *in, int n, int rout,
                         double disk, double cpu, const river_perturb *p)
{
  double bytes = (double)in->nrecords * (double)in->record_size;
  double read = INFINITY, part = INFINITY, write = 0, t = 0;
  double *rates = malloc((size_t)in->ndisks * sizeof *rates);
  int d;

  if ((disk == 0 && cpu == 0) || rates == NULL) {
    free(rates);
    return 0;
  }
  if (disk > 0) {
    for (d = 0, read = 0; d < in->ndisks; d++) {
      rates[d] = disk * factor(p, RIVER_PERTURB_DISK, d);
      read += rates[d];
    }
    if (in->npartitions == in->ndisks)
      river_gd_fluid_ideal(rates, in->ndisks, in->replication, NULL, &read);
    for (d = 0; d < n; d++)
      write += disk * factor(p, RIVER_PERTURB_DISK, d) / rout;
    t += bytes / write;
  }
  if (cpu > 0)
    for (d = 0, part = 0; d < n; d++)
      part += cpu * factor(p, RIVER_PERTURB_CPU, d);
  free(rates);
  return t + bytes / (read < part ? read : part);
}

/* Rank 0's line after a sort: records, size, time, rate; with emulated
 * rates, the fluid ideal and the share of it reached. */
static void report(const struct args *a, const river_pcoll_info *in,
                   double seconds, double disk, double cpu)
{
  double mb = (double)in->nrecords * (double)in->record_size / 1e6, ideal;
  river_perturb *p = NULL;

  if (cli_rank() != 0)
    return;
  if (a->perturb != NULL)
    river_perturb_parse(a->perturb, &p);   /* the flow checked it */
  ideal = a->perturb && strchr(a->perturb, '@') ? 0
          : sort_ideal(in, cli_size(), a->opts.replication > 0
                       ? a->opts.replication : 1, disk, cpu, p);
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

/* IN's description (collective: every rank opens it). */
static int input_info(const struct args *a, river_pcoll_info *info)
{
  river_pcoll *pc = NULL;
  int rc = river_pcoll_open(MPI_COMM_WORLD, a->pos[0], &a->opts, &pc);

  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_info_get(pc, info);
  river_pcoll_close(pc);
  return rc;
}

/* An emulated rate option (bytes/s, suffixes k, M, G) as a number of
 * bytes/s into *rate and the param key=value into buf; 0 if absent. */
static int rate_param(const char *opt, const char *val, const char *key,
                      double *rate, char *buf, size_t len)
{
  uint64_t v = 0;
  int rc = RIVER_SUCCESS;

  if (val != NULL)   /* at least the flow's least emulated rate, 1k */
    rc = cli_parse_u64(opt, val, 1024, UINT64_MAX >> 1, 1, &v);
  *rate = (double)v;
  snprintf(buf, len, "%s=%llu", key, (unsigned long long)v);
  return rc;
}

int cmd_sort(int argc, char **argv)
{
  struct args a;
  river_pcoll_info in;
  char spec[4096], kv[13][4200];
  const char *params[13];
  double disk, cpu, seconds = 0;
  int n = 0, i, rc;

  rc = cli_coll_args(argc, argv, OPT_ROOT | OPT_MIRROR | OPT_MEMORY
                     | OPT_FORCE | OPT_STATIC | OPT_DISK_RATE | OPT_CPU_RATE
                     | OPT_PERTURB, 2, "IN and OUT COLL", &a);
  if (rc != RIVER_SUCCESS)
    return rc;
  for (i = 0; i < 2; i++)
    if ((rc = river_pcoll_check_name(a.pos[i])) != RIVER_SUCCESS)
      return rc;
  if (strcmp(a.pos[0], a.pos[1]) == 0) {
    if (cli_rank() == 0)
        river_log(RIVER_LOG_ERROR, "sort: IN and OUT are both '%s': the "
                "sort reads IN while it writes OUT", a.pos[0]);
    return RIVER_EINVAL;
  }
  if ((rc = rate_param("--disk-rate", a.disk_rate, "disk_rate", &disk, kv[n++],
                       sizeof kv[0])) != RIVER_SUCCESS
      || (rc = rate_param("--cpu-rate", a.cpu_rate, "cpu_rate", &cpu, kv[n++],
                          sizeof kv[0])) != RIVER_SUCCESS)
    return rc;
  if (a.perturb != NULL && disk == 0 && cpu == 0) {
    if (cli_rank() == 0)
      river_log(RIVER_LOG_ERROR, "sort: --perturb scales emulated rates: "
                "give --disk-rate or --cpu-rate too");
    return RIVER_EINVAL;
  }
  /* A rank that cannot find it says so; every rank fails alike. */
  if ((rc = cli_agree(find_spec("sort.yaml", spec, sizeof spec)))
      != RIVER_SUCCESS)
    return rc;
  if (!a.force && (rc = refuse_existing(a.pos[1], &a.opts)) != RIVER_SUCCESS)
    return rc;
  if ((rc = input_info(&a, &in)) != RIVER_SUCCESS)
    return rc;
  snprintf(kv[n++], sizeof kv[0], "in=%s", a.pos[0]);  /* names: short */
  snprintf(kv[n++], sizeof kv[0], "out=%s", a.pos[1]);
  snprintf(kv[n++], sizeof kv[0], "mirror=%d",
           a.opts.replication > 0 ? a.opts.replication : 1);
  if (a.is_static) {   /* fixed readers, partitioners and writers */
    snprintf(kv[n++], sizeof kv[0], "read_policy=mirror-nogd");
    snprintf(kv[n++], sizeof kv[0], "spread=one-to-one");
    snprintf(kv[n++], sizeof kv[0], "gather=one-to-one");
    snprintf(kv[n++], sizeof kv[0], "gather_policy=");
    snprintf(kv[n++], sizeof kv[0], "runs=1");
  }
  if ((a.memory != NULL && !param(kv[n++], sizeof kv[0], "memory", a.memory))
      || (a.opts.root != NULL
          && !param(kv[n++], sizeof kv[0], "root", a.opts.root))
      || (a.perturb != NULL
          && !param(kv[n++], sizeof kv[0], "perturb", a.perturb)))
    return RIVER_EINVAL;
  for (i = 0; i < n && i < (int)(sizeof kv / sizeof kv[0]); i++)
    params[i] = kv[i];
  rc = cli_run_flow(spec, params, n, &seconds);
  if (rc == RIVER_SUCCESS)
    report(&a, &in, seconds, disk, cpu);
  return rc;
}
