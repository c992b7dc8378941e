/*
 * wtime-cost.c - what one river_wtime() costs here: the price of a
 * progress or series tick that has nothing to do (doc/results.md, "The
 * progress line's and the stats file's cost").
 *
 *   mpicc -O2 -Iinclude doc/results/issue36/wtime-cost.c \
 *         src/.libs/libriver.so -o /tmp/wtime-cost && /tmp/wtime-cost
 */
#include <river.h>
#include <stdio.h>

int main(void)
{
  const long n = 20000000;
  double t0, t1, sink = 0;
  long i;

  t0 = river_wtime();
  for (i = 0; i < n; i++)
    sink += river_wtime();
  t1 = river_wtime();
  printf("river_wtime: %.1f ns a call (%ld calls in %.3f s; %g)\n",
         1e9 * (t1 - t0) / (double)n, n, t1 - t0, sink > 0 ? 1.0 : 0.0);
  return 0;
}
