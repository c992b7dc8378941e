/* hello.c - the smallest River program: start River (and MPI if need
 * be), log a line, stop; exits non-zero if a call fails. */
#include <river.h>
#include <stdio.h>

int main(int argc, char **argv)
{
  int rc = river_init(&argc, &argv);   /* starts MPI if you have not */
  if (rc != RIVER_SUCCESS) {
    fprintf(stderr, "river_init: %s\n", river_strerror(rc));
    return 1;
  }
  river_log(RIVER_LOG_INFO, "up");     /* "river[RANK] info: up" */
  rc = river_finalize();               /* stops MPI only if River started it */
  if (rc != RIVER_SUCCESS) {
    fprintf(stderr, "river_finalize: %s\n", river_strerror(rc));
    return 1;
  }
  return 0;
}
