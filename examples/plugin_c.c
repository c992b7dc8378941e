/* plugin_c.c - a plugin: a shared library of user modules that `river
 * run --plugin`, `river flow check --plugin`, `river modules --plugin`
 * and a flow spec's `plugins:` load on every rank (doc/modules.md,
 * "Plugins"). Its entry point, river_plugin_init, registers its one
 * module:
 *
 *   keep_below  1 input, 1 output: passes on the records whose field
 *               `field` (default the key) starts with a byte below
 *               `below` (default 64)
 *
 * Build it (an installed River; see doc/building.md):
 *
 *   mpicc -shared -fPIC $(pkg-config --cflags river) plugin_c.c \
 *         $(pkg-config --libs river) -o plugin_c.so
 *   river-mpirun -n 3 river run --plugin ./plugin_c.so plugin.yaml
 */
#include <river.h>

int river_plugin_init(void);

static int keep_below(river_ctx *ctx)
{
  const river_schema *s;
  const char *field;
  uint64_t below;
  size_t size, offset, n, k;
  const void *msg;
  int i, rc;

  if ((rc = river_arg_str(ctx, "field", &field)) != RIVER_SUCCESS
      || (rc = river_arg_uint(ctx, "below", &below)) != RIVER_SUCCESS
      || (rc = river_input_schema(ctx, 0, &s)) != RIVER_SUCCESS
      || (rc = river_schema_record_size(s, &size)) != RIVER_SUCCESS
      || (rc = river_schema_find(s, field, &i)) != RIVER_SUCCESS
      || (rc = river_schema_field(s, i, NULL, NULL, NULL, &offset))
             != RIVER_SUCCESS)
    return rc;
  while ((rc = river_get(ctx, 0, &msg, &n)) == RIVER_SUCCESS)
    for (k = 0; k < n; k++) {
      const unsigned char *r = (const unsigned char *)msg + k * size;
      if (r[offset] < below && (rc = river_put(ctx, 0, r, 1)) != RIVER_SUCCESS)
        return rc;
    }
  return rc == RIVER_EOS ? RIVER_SUCCESS : rc;
}

/* The entry point: register every module of the library. */
int river_plugin_init(void)
{
  river_module_decl d = RIVER_MODULE_DECL_INIT;

  d.min_inputs = d.max_inputs = 1;
  d.min_outputs = d.max_outputs = 1;
  d.args = "field:str=key,below:uint=64";
  d.doc = "pass on the records whose field starts with a byte below "
          "`below` (a plugin: examples/plugin_c.c)";
  return river_module_register("keep_below", keep_below, &d, NULL);
}
