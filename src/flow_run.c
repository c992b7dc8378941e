/*
 * flow_run.c - running a flow: go, go_async, test, wait, stage totals.
 *
 * Placeholders until the runtime lands (issue 11): each checks its
 * arguments and answers RIVER_ENOTSUP. The runtime replaces this file;
 * src/flow_internal.h says what a checked flow guarantees it.
 */
#include "flow_internal.h"

static int not_yet(river_flow *f, const char *call)
{
  if (f == NULL)
    return RIVER_EINVAL;
  river__error("%s: running flows is not implemented yet", call);
  return RIVER_ENOTSUP;
}

int river_flow_go(river_flow *f)
{
  return not_yet(f, "river_flow_go");
}

int river_flow_go_async(river_flow *f)
{
  return not_yet(f, "river_flow_go_async");
}

int river_flow_test(river_flow *f, int *done)
{
  if (done == NULL)
    return RIVER_EINVAL;
  return not_yet(f, "river_flow_test");
}

int river_flow_wait(river_flow *f)
{
  return not_yet(f, "river_flow_wait");
}

int river_flow_stage_stats(river_flow *f, const char *stage,
                           river_stage_stats *st)
{
  if (stage == NULL || st == NULL)
    return RIVER_EINVAL;
  return not_yet(f, "river_flow_stage_stats");
}
