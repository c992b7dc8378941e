/*
 * disk.c - a stage's emulated disk, for the modules that read or write
 * storage (coll_read and coll_write on a file:, coll_write on a
 * collection): `disk_rate` bytes/s times the `perturb` factor of its
 * disk, charged as the module moves bytes (river/throttle.h; a wait
 * inside a task yields to the rank's other stages).
 */
#include "modules.h"
#include "../throttle_internal.h"

#include <string.h>

int river__stage_perturb(river_ctx *ctx, river_perturb **p)
{
  const char *spec = "";

  *p = NULL;
  river_arg_str(ctx, "perturb", &spec);
  return spec[0] ? river_perturb_parse(spec, p) : RIVER_SUCCESS;
}

int river__mdisk_open(river_ctx *ctx, int disk, struct river__mdisk *d)
{
  uint64_t rate = 0;
  int rc;

  memset(d, 0, sizeof *d);
  d->disk = disk;
  d->t0 = river_wtime();
  river_arg_uint(ctx, "disk_rate", &rate);
  if (rate == 0)
    return RIVER_SUCCESS;
  rc = river__stage_throttle((double)rate, &d->thr);
  if (rc == RIVER_SUCCESS)
    rc = river__stage_perturb(ctx, &d->pert);
  return rc;
}

void river__mdisk_charge(struct river__mdisk *d, size_t bytes)
{
  double f = 1.0;

  if (d->thr == NULL)
    return;
  if (d->pert != NULL)
    river_perturb_factor(d->pert, RIVER_PERTURB_DISK, d->disk,
                         river_wtime() - d->t0, &f);
  river_throttle_set_factor(d->thr, f);
  river_throttle_consume(d->thr, bytes);
}

void river__mdisk_close(struct river__mdisk *d)
{
  river_throttle_destroy(d->thr);
  river_perturb_destroy(d->pert);
  d->thr = NULL;
  d->pert = NULL;
}
