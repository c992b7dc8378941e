/*
 * flow_emulate.c - a part of the flow runtime: a stage instance's
 * emulation, in one place: the arguments every stage takes (cpu_rate,
 * perturb) and the disk_rate of the modules that declare it, read and
 * parsed once when the instance is made, on the public emulation API
 * (river/throttle.h: a stage's buckets, river_throttle_create_stage;
 * river/perturb.h).
 *
 *   CPU   what river_get hands over keeps the stage's CPU busy for
 *         bytes / (cpu_rate x its perturb "cpu:I" factor now): a debt in
 *         a token bucket that the next get waits out (src/flow_io.c);
 *   disk  what a module charges to its disk D (river_ctx_charge_disk)
 *         takes bytes / (disk_rate x the "disk:D" factor now), each disk
 *         number a bucket of its own, made at its first charge.
 *
 * Times in the perturbation count from the instance's start. A rate of
 * 0 is real speed: nothing is charged and the perturbation, which
 * scales a rate, does nothing (river_ctx_perturb still gives it).
 */
#include "flow_run_internal.h"

#include <stdlib.h>

int river__emul_init(struct river__emul *e, river_ctx *ctx)
{
  const char *spec = "";
  uint64_t cpu = 0, disk = 0;
  int rc = RIVER_SUCCESS;

  e->t0 = river_wtime();
  river_arg_uint(ctx, "cpu_rate", &cpu);
  river_arg_str(ctx, "perturb", &spec);
  /* disk_rate only where the module declares it (asking another would
   * be an error, and said). */
  if (river__arg_index(ctx->stage->mod, "disk_rate") >= 0
      && river_arg_uint(ctx, "disk_rate", &disk) == RIVER_SUCCESS)
    e->disk_rate = (double)disk;
  if (spec[0] != '\0')
    rc = river_perturb_parse(spec, &e->perturb);   /* checked already */
  if (rc == RIVER_SUCCESS && cpu > 0)
    rc = river_throttle_create_stage((double)cpu, &e->cpu);
  return rc;
}

void river__emul_free(struct river__emul *e)
{
  int i;

  for (i = 0; i < e->ndisks; i++)
    river_throttle_destroy(e->disks[i].thr);
  free(e->disks);
  river_throttle_destroy(e->cpu);
  river_perturb_destroy(e->perturb);
  e->disks = NULL;
  e->ndisks = e->disks_cap = 0;
  e->cpu = NULL;
  e->perturb = NULL;
}

/* kind's factor for index i now (1 without a perturbation). */
static double factor(const struct river__emul *e, int kind,
                     int i)
{
  double f = 1.0;

  if (e->perturb != NULL)
    river_perturb_factor(e->perturb, kind, i, river_wtime() - e->t0, &f);
  return f;
}

void river__emul_charge_cpu(struct river__emul *e, int instance,
                            size_t bytes)
{
  if (e->cpu == NULL)
    return;
  river_throttle_set_factor(e->cpu, factor(e, RIVER_PERTURB_CPU, instance));
  river_throttle_take(e->cpu, bytes, &e->cpu_ready);
}

/* Disk d's bucket, made at its first use; NULL if out of memory. */
static river_throttle *disk_of(struct river__emul *e, int d)
{
  struct river__edisk *x;
  int i;

  for (i = 0; i < e->ndisks; i++)
    if (e->disks[i].disk == d)
      return e->disks[i].thr;
  if (e->ndisks == e->disks_cap) {
    int cap = e->disks_cap ? 2 * e->disks_cap : 2;
    if ((x = realloc(e->disks, (size_t)cap * sizeof *x)) == NULL)
      return NULL;
    e->disks = x;
    e->disks_cap = cap;
  }
  x = &e->disks[e->ndisks];
  x->disk = d;
  if (river_throttle_create_stage(e->disk_rate, &x->thr) != RIVER_SUCCESS)
    return NULL;
  e->ndisks++;
  return x->thr;
}

int river__emul_charge_disk(struct river__emul *e, int disk, size_t bytes)
{
  river_throttle *t;

  if (e->disk_rate <= 0)
    return RIVER_SUCCESS;   /* real speed */
  if ((t = disk_of(e, disk)) == NULL)
    return RIVER_ENOMEM;
  river_throttle_set_factor(t, factor(e, RIVER_PERTURB_DISK, disk));
  return river_throttle_consume(t, bytes);
}
