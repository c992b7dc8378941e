/*
 * river_shim.c - C helpers for the Fortran module where a C function
 * cannot be bound directly (variadic river_log).
 */
#include <river.h>

int river__f_log(int level, const char *msg);

/* river_log(level, "%s", msg): Fortran cannot call a variadic function. */
int river__f_log(int level, const char *msg)
{
  if (msg == NULL)
    return RIVER_EINVAL;
  return river_log(level, "%s", msg);
}
