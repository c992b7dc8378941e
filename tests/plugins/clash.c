/* clash.c - a plugin whose module takes a built-in's name (sort), after
 * registering one of its own (clash_ok): the load fails naming both, and
 * clash_ok is removed again (tests/cli/test_plugins.sh). */
#include <river.h>

int river_plugin_init(void);

static int nothing(river_ctx *ctx)
{
  (void)ctx;
  return RIVER_SUCCESS;
}

int river_plugin_init(void)
{
  river_module_decl d = RIVER_MODULE_DECL_INIT;
  int rc;

  d.min_inputs = d.max_inputs = 1;
  if ((rc = river_module_register("clash_ok", nothing, &d, NULL))
      != RIVER_SUCCESS)
    return rc;
  return river_module_register("sort", nothing, &d, NULL);
}
