/*
 * join.c - `river join R S OUT --key FIELD [--static | --replicate]
 * [--memory SIZE] [--mirror N] [--force] [--root DIR] [--cpu-rate R]
 * [--perturb SPEC]`: the one-pass parallel hash join of collections R
 * and S on FIELD into collection OUT (R's fields, then S's but the key).
 * The join is the flow spec flows/join.yaml (or, --replicate,
 * flows/join_replicated.yaml), which `river run` runs as well; this
 * command builds on the smaller relation (by bytes), fills in the
 * params, and reports OUT's size and the time, with an emulated joiner
 * CPU rate against the join's fluid ideal (apps/common/ideal.h).
 */
#include "app.h"
#include "../common/ideal.h"
#include "../common/shipped.h"

#include <stdio.h>
#include <string.h>

#define NKV 20

/* A collection's description (collective: every rank opens it), and
 * that it has the join's key (else said once, in the words of the
 * command line: which relation, which option, the fields it has, not
 * a line of the shipped spec). */
static int info_of(const struct args *a, const char *role, const char *name,
                   river_pcoll_info *info, char *keytype, size_t keylen)
{
  river_pcoll_opts o = a->opts;
  river_pcoll *pc = NULL;
  const river_schema *s = NULL;
  char text[1024];
  size_t len = sizeof text, count = 1;
  river_type type;
  int rc, field;

  o.hold = RIVER_PCOLL_HOLD_NONE;   /* its facts only: the flow reads it */
  rc = river_pcoll_open(MPI_COMM_WORLD, name, &o, &pc);

  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_info_get(pc, info);
  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_schema(pc, &s);
  if (rc == RIVER_SUCCESS && river_schema_find(s, a->key, &field)
                                 != RIVER_SUCCESS) {
    if (cli_rank() == 0) {
      if (river_schema_format(s, text, &len) != RIVER_SUCCESS)
        snprintf(text, sizeof text, "?");
      river_log(RIVER_LOG_ERROR, "join: --key %s: %s (%s) has no field %s "
                "(its schema: %s)", a->key, role, name, a->key, text);
    }
    rc = RIVER_EINVAL;   /* the same schema on every rank */
  }
  /* The key's type, "uint64" or "bytes[10]", for R and S to compare. */
  if (rc == RIVER_SUCCESS && keytype != NULL
      && river_schema_field(s, field, NULL, &type, &count, NULL)
             == RIVER_SUCCESS)
    snprintf(keytype, keylen, count > 1 || type == RIVER_TYPE_BYTES
                              || type == RIVER_TYPE_CHAR
                              ? "%s[%zu]" : "%s", river_type_name(type),
             count);
  river_pcoll_close(pc);
  return rc;
}

/* Rank 0's line after a join. */
static void report(const struct args *a, const river_pcoll_info *r,
                   const river_pcoll_info *s, const river_pcoll_info *out,
                   double seconds, double cpu)
{
  double in = (double)r->nrecords * (double)r->record_size
              + (double)s->nrecords * (double)s->record_size, ideal = 0;
  struct app_machine m = {0, cpu, NULL};
  river_perturb *p = NULL;
  char size[APP_SIZE_TEXT], rate[APP_SIZE_TEXT];

  if (cli_rank() != 0)
    return;
  if (a->perturb != NULL)
    river_perturb_parse(a->perturb, &p);   /* the flow checked it */
  m.perturb = p;
  if (a->perturb == NULL || strchr(a->perturb, '@') == NULL)
    ideal = app_join_ideal(&m, in, cli_size());
  river_perturb_destroy(p);
  printf("join: %s %s x %s on %s -> %s: %llu x %llu records -> %llu, "
         "%s in %.3f s, %s",
         a->is_static ? "static" : a->replicate ? "replicated" : "river",
         a->pos[0], a->pos[1], a->key, a->pos[2],
         (unsigned long long)r->nrecords, (unsigned long long)s->nrecords,
         (unsigned long long)out->nrecords, app_size((uint64_t)in, size),
         seconds, app_rate(seconds > 0 ? in / seconds : 0.0, rate));
  if (ideal >= 0.001 && seconds > 0)
    printf("; fluid ideal %.3f s, %.1f%% of it", ideal,
           100.0 * ideal / seconds);
  printf("\n");
  fflush(stdout);
}

/* The arguments a join can be refused for before it starts. */
static int check_args(const struct args *a)
{
  const char *why = NULL;
  int i, rc;

  for (i = 0; i < 3; i++)
    if ((rc = river_pcoll_check_name(a->pos[i])) != RIVER_SUCCESS)
      return rc;
  if (a->key == NULL || a->key[0] == '\0')
    why = "--key FIELD is required";
  else if (a->is_static && a->replicate)
    why = "--static and --replicate are different joins: give one";
  else if (strcmp(a->pos[2], a->pos[0]) == 0
           || strcmp(a->pos[2], a->pos[1]) == 0)
    why = "OUT is R or S: the join reads them while it writes OUT";
  else if (a->perturb != NULL && a->cpu_rate == NULL)
    why = "--perturb scales emulated rates: give --cpu-rate too";
  if (why != NULL && cli_rank() == 0)
    river_log(RIVER_LOG_ERROR, "join: %s", why);
  return why ? RIVER_EINVAL : RIVER_SUCCESS;
}

int cmd_join(int argc, char **argv)
{
  river_pcoll_info r, s, out;
  struct args a;
  char spec[4096], kv[NKV][4200];
  const char *params[NKV];
  char rtype[64] = "", stype[64] = "";
  double cpu = 0, seconds = 0;
  int n = 0, i, build, rc;

  rc = cli_coll_args(argc, argv, OPT_ROOT | OPT_MIRROR | OPT_MEMORY
                     | OPT_FORCE | OPT_STATIC | OPT_CPU_RATE | OPT_PERTURB
                     | OPT_KEY | OPT_REPLICATE, 3, "R, S and OUT COLL", &a);
  if (rc == RIVER_SUCCESS)
    rc = check_args(&a);
  if (rc == RIVER_SUCCESS)
    rc = app_rate_param("--cpu-rate", a.cpu_rate, "cpu_rate", &cpu,
                        kv[n++], sizeof kv[0]);
  if (rc != RIVER_SUCCESS)
    return rc;
  /* A rank that cannot find it says so; every rank fails alike. */
  rc = cli_agree(app_find_flow("join", a.replicate ? "join_replicated.yaml"
                                                   : "join.yaml",
                               spec, sizeof spec));
  if (rc == RIVER_SUCCESS && !a.force)
    rc = app_refuse_existing("join", a.pos[2], &a.opts);
  if (rc == RIVER_SUCCESS)
    rc = info_of(&a, "R", a.pos[0], &r, rtype, sizeof rtype);
  if (rc == RIVER_SUCCESS)
    rc = info_of(&a, "S", a.pos[1], &s, stype, sizeof stype);
  if (rc == RIVER_SUCCESS && strcmp(rtype, stype) != 0) {
    if (cli_rank() == 0)
      river_log(RIVER_LOG_ERROR, "join: --key %s is %s in R (%s) but %s in "
                "S (%s): the key must be of one type in both", a.key,
                rtype, a.pos[0], stype, a.pos[1]);
    rc = RIVER_EINVAL;
  }
  if (rc != RIVER_SUCCESS)
    return rc;
  /* Build on the smaller relation (S on a tie). */
  build = (double)r.nrecords * (double)r.record_size
          < (double)s.nrecords * (double)s.record_size ? 0 : 1;
  snprintf(kv[n++], sizeof kv[0], "build=%d", build);
  snprintf(kv[n++], sizeof kv[0], "mirror=%d",
           a.opts.replication > 0 ? a.opts.replication : 1);
  if (a.replicate) {   /* the built relation to every joiner */
    snprintf(kv[n++], sizeof kv[0], "r_edge=%s", build ? "dq" : "broadcast");
    snprintf(kv[n++], sizeof kv[0], "s_edge=%s", build ? "broadcast" : "dq");
    snprintf(kv[n++], sizeof kv[0], "r_credits=%d", build ? 2 : 16);
    snprintf(kv[n++], sizeof kv[0], "s_credits=%d", build ? 16 : 2);
  }
  if (a.is_static) {   /* fixed readers, reader i -> partitioner i */
    snprintf(kv[n++], sizeof kv[0], "read_policy=mirror-nogd");
    snprintf(kv[n++], sizeof kv[0], "spread=one-to-one");
  }
  snprintf(kv[n++], sizeof kv[0], "replace=%s", a.force ? "true" : "false");
  if (!app_param("join", kv[n++], sizeof kv[0], "r", a.pos[0])
      || !app_param("join", kv[n++], sizeof kv[0], "s", a.pos[1])
      || !app_param("join", kv[n++], sizeof kv[0], "out", a.pos[2])
      || !app_param("join", kv[n++], sizeof kv[0], "key", a.key)
      || (a.memory != NULL
          && !app_param("join", kv[n++], sizeof kv[0], "memory", a.memory))
      || (a.opts.root != NULL
          && !app_param("join", kv[n++], sizeof kv[0], "root", a.opts.root))
      || (a.perturb != NULL
          && !app_param("join", kv[n++], sizeof kv[0], "perturb", a.perturb)))
    return RIVER_EINVAL;
  for (i = 0; i < n; i++)
    params[i] = kv[i];
  rc = cli_run_flow(spec, params, n, "join", 0, &seconds);
  if (rc == RIVER_SUCCESS)
    rc = info_of(&a, "OUT", a.pos[2], &out, NULL, 0);
  if (rc == RIVER_SUCCESS)
    report(&a, &r, &s, &out, seconds, cpu);
  return rc;
}
