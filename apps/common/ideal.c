/*
 * ideal.c - the applications' and benchmarks' fluid ideals (ideal.h).
 */
#include "ideal.h"

#include <math.h>
#include <stdlib.h>

/* m's factor for (kind, index) at the start; 1 without a spec. */
static double factor(const struct app_machine *m, int kind, int index)
{
  double f = 1.0;

  if (m->perturb != NULL)
    river_perturb_factor(m->perturb, kind, index, 0.0, &f);
  return f;
}

double app_sort_ideal(const struct app_machine *m, double bytes, int n,
                      int in_disks, int in_parts, int in_copies,
                      int out_copies)
{
  double read = INFINITY, part = INFINITY, write = 0, t = 0, *rates;
  int d;

  if ((m->disk == 0 && m->cpu == 0) || in_disks < 1 || n < 1)
    return 0;
  if (m->disk > 0) {
    if ((rates = malloc((size_t)in_disks * sizeof *rates)) == NULL)
      return 0;
    for (d = 0, read = 0; d < in_disks; d++) {
      rates[d] = m->disk * factor(m, RIVER_PERTURB_DISK, d);
      read += rates[d];
    }
    if (in_parts == in_disks)
      river_gd_fluid_ideal(rates, in_disks, in_copies, NULL, &read);
    free(rates);
    for (d = 0; d < n; d++)
      write += m->disk * factor(m, RIVER_PERTURB_DISK, d);
    t += bytes * out_copies / write;
  }
  if (m->cpu > 0)
    for (d = 0, part = 0; d < n; d++)
      part += m->cpu * factor(m, RIVER_PERTURB_CPU, d);
  return t + bytes / (read < part ? read : part);
}

double app_join_ideal(const struct app_machine *m, double bytes, int n)
{
  double sum = 0;
  int d;

  if (m->cpu <= 0 || n < 1)
    return 0;
  for (d = 0; d < n; d++)
    sum += m->cpu * factor(m, RIVER_PERTURB_CPU, d);
  return bytes / sum;
}

double app_dq_ideal(double bytes, int nprod, const double *prod, int ncons,
                    const double *cons)
{
  double t = 0, sum = 0;
  int i, bounded = 1;

  for (i = 0; prod != NULL && i < nprod; i++)
    if (prod[i] > 0)
      t = fmax(t, bytes / prod[i]);
  for (i = 0; cons != NULL && i < ncons; i++) {
    if (!(cons[i] > 0))
      bounded = 0;   /* an unbounded consumer: no bound from this side */
    sum += cons[i];
  }
  if (cons != NULL && ncons > 0 && bounded)
    t = fmax(t, bytes * nprod / sum);
  return t > 0 ? bytes * nprod / t : 0.0;
}
