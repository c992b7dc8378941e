/*
 * badparam_util.c - the log handlers the test_badparam* programs share
 * (see badparam.h).
 */
#include "badparam.h"

void quiet(int level, int rank, const char *msg, void *ctx)
{
}

char msgs[8192];

void collect(int level, int rank, const char *msg, void *ctx)
{
  size_t n = strlen(msgs);

  snprintf(msgs + n, sizeof msgs - n, "%s\n", msg);
}
