/*
 * flow_modules.c - the test modules of the flow tests (flow_modules.h).
 * Linked into tests/unit/test_flowspec, and built as the LD_PRELOAD shim
 * tests/flow_modules.la (with RIVER_TEST_PRELOAD) that registers them in
 * the river command before main, for tests/cli/test_flow_check.sh. The
 * shim finds River's functions with dlsym, so that in a process without
 * River (the MPI launcher) it does nothing.
 *
 *   t_gen    no input, 1 output; records:size, schema:str=k:uint64,
 *            seed:int=0 (its output schema is its schema argument)
 *   t_pass   1 input, 1 output; verbose:bool=false, ratio:double=1.0
 *   t_sink   1 or more inputs, no output; field:field=k
 *   t_solo   1 input, no output; does not share its ranks
 *   t_split  1 input, 2 outputs
 *   t_join   2 inputs, 1 output
 *   t_expect 1 input, no output; schema:str=k:uint64 (what it takes)
 *   t_shape  0 or 1 input, 1 output of schema "a:int32,b:int64;key=b"
 *            (a schema function)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "flow_modules.h"

#include <dlfcn.h>
#include <river.h>

typedef int (*reg_fn)(const char *, river_module_fn,
                      const river_module_decl *, void *);
typedef int (*parse_fn)(const char *, river_schema **);
static parse_fn parse;

static int run(river_ctx *ctx)
{
  (void)ctx;
  return RIVER_SUCCESS;
}

static int shape(river_ctx *ctx, int output, river_schema **schema)
{
  (void)ctx;
  (void)output;
  return parse("a:int32,b:int64;key=b", schema);
}

struct tmod {
  const char *name;
  river_module_decl d;
};

static const struct tmod mods[] = {
  {"t_gen", {0, 0, 1, 1, 1, "records:size, schema:str=k:uint64, seed:int=0",
             NULL, "test source"}},
  {"t_pass", {1, 1, 1, 1, 1, "verbose:bool=false,ratio:double=1.0", NULL,
              NULL}},
  {"t_sink", {1, -1, 0, 0, 1, "field:field=k", NULL, NULL}},
  {"t_solo", {1, 1, 0, 0, 0, NULL, NULL, NULL}},
  {"t_split", {1, 1, 2, 2, 1, NULL, NULL, NULL}},
  {"t_join", {2, 2, 1, 1, 1, NULL, NULL, NULL}},
  {"t_expect", {1, 1, 0, 0, 1, "schema:str=k:uint64", NULL, NULL}},
  {"t_shape", {0, 1, 1, 1, 1, NULL, shape, NULL}},
};

int flowtest_register(void)
{
  reg_fn reg;
  size_t i;
  int rc;

#ifdef RIVER_TEST_PRELOAD
  reg = (reg_fn)dlsym(RTLD_DEFAULT, "river_module_register");
  parse = (parse_fn)dlsym(RTLD_DEFAULT, "river_schema_parse");
  if (reg == NULL || parse == NULL)
    return RIVER_SUCCESS;    /* not a River program */
#else
  reg = river_module_register;
  parse = river_schema_parse;
#endif
  for (i = 0; i < sizeof mods / sizeof mods[0]; i++)
    if ((rc = reg(mods[i].name, run, &mods[i].d, NULL)) != RIVER_SUCCESS)
      return rc;
  return RIVER_SUCCESS;
}

#ifdef RIVER_TEST_PRELOAD
__attribute__((constructor)) static void preload(void)
{
  flowtest_register();
}
#endif
