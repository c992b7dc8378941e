/*
 * flow_internal.h - the flow graph as the library keeps it: the module
 * registry's entries, stages, edges, the flow, and the context a module
 * sees. Shared by src/module.c (registry, arguments, contexts),
 * src/flow.c (building), src/flow_check.c (checking), src/flowspec.c
 * (only through the public API) and the runtime (src/flow_run.c).
 *
 * For the runtime's author: a checked flow (state RIVER__FLOW_CHECKED)
 * guarantees that every stage has 1..n distinct ranks in range, every
 * port 0..ninputs-1 / 0..noutputs-1 holds exactly one edge, the graph is
 * acyclic (topo[] lists the stages sources first), every required
 * argument is given and every given value parses as its declared type,
 * and out_schema[] holds each output's schema (edge e carries
 * stages[e.from].out_schema[e.from_output]). Instance i of a stage runs
 * on ranks[i] (ranks sorted ascending). The runtime hangs its state on
 * river_flow.run and river_ctx.run; destroy frees neither (the runtime
 * clears them first).
 */
#ifndef RIVER_FLOW_INTERNAL_H
#define RIVER_FLOW_INTERNAL_H

#include "river_internal.h"
#include "river/flow.h"
#include "river/module.h"

#include <stdarg.h>

#define RIVER__NAME_MAX 63     /* stage and module names */
#define RIVER__ARG_NAME_MAX 31 /* argument names */
/* The arguments every stage takes besides its module's own, for
 * experiments: an emulated CPU rate for what the stage gets from its
 * inputs (bytes/s, 0 = real speed) and a perturbation spec whose
 * "cpu:I" clauses slow instance I (coll_read and coll_write also take
 * its "disk:D" clauses). Appended to every module's declaration. */
#define RIVER__STAGE_ARGS "cpu_rate:size=0,perturb:str="
#define RIVER__NSTAGE_ARGS 2
#define RIVER__MIN_RATE 1024   /* bytes/s: the least emulated rate */
#define RIVER__PORTS_MAX 1024  /* inputs or outputs of one stage */
#define RIVER__STAGES_MAX 4096 /* stages of a flow (checks are O(n^2)) */
#define RIVER__EDGES_MAX 16384 /* edges of a flow */

/* The declared type of a module argument. */
typedef enum river__arg_type {
  RIVER__ARG_STR,
  RIVER__ARG_INT,
  RIVER__ARG_UINT,
  RIVER__ARG_SIZE,
  RIVER__ARG_DOUBLE,
  RIVER__ARG_BOOL,
  RIVER__ARG_FIELD
} river__arg_type;

/* One declared argument: NAME:TYPE[=DEFAULT]. */
typedef struct river__arg_decl {
  char name[RIVER__ARG_NAME_MAX + 1];
  river__arg_type type;
  char *def;                   /* NULL: required */
} river__arg_decl;

/* A registered module (src/module.c). decl.args and decl.doc point at
 * the entry's own copies. */
typedef struct river__module {
  char name[RIVER__NAME_MAX + 1];
  river_module_fn fn;
  river_module_decl decl;
  void *user;
  int nargs;
  river__arg_decl *args;
  char *plugin;            /* the plugin that registered it (its path),
                              NULL: built in or the program's own */
} river__module;

/* An argument given to a stage: args[k] of the stage is the value of
 * its module's argument k (value NULL: not given). */
typedef struct river__arg {
  char *value;
  char *origin;                /* where it was given; NULL: unknown */
} river__arg;

/* A stage: a module on ranks. in_edge[i] / out_edge[o] are edge indexes,
 * -1 where nothing is connected yet; ninputs / noutputs are the number
 * of slots (the highest connected index + 1). */
typedef struct river__stage {
  char name[RIVER__NAME_MAX + 1];
  const river__module *mod;
  int *ranks, nranks;          /* sorted ascending */
  river__arg *args;            /* mod->nargs entries */
  int *in_edge, ninputs, in_cap;
  int *out_edge, noutputs, out_cap;
  char *origin;                /* "file:line:col" of its placing, or NULL */
  river_schema **out_schema;   /* noutputs entries, filled by check */
} river__stage;

/* An edge: output from_output of stage `from` to input to_input of
 * stage `to`. opts.key is the edge's own copy (or NULL); opts'
 * from_output / to_input hold the resolved indexes. */
typedef struct river__edge {
  int from, to;
  river_edge_opts opts;
  char *origin;
} river__edge;

typedef enum river__flow_state {
  RIVER__FLOW_BUILDING,        /* place/arg/attach allowed */
  RIVER__FLOW_CHECKED,         /* check passed; building again unchecks */
  RIVER__FLOW_RUNNING,         /* the runtime owns it */
  RIVER__FLOW_DONE
} river__flow_state;

struct river_flow {
  MPI_Comm comm;               /* a dup; MPI_COMM_NULL for a plan */
  int rank, size;              /* rank in comm (0 for a plan), ranks */
  river__stage *stages;
  int nstages, stage_cap;
  river__edge *edges;
  int nedges, edge_cap;
  int *topo;                   /* nstages stage indexes, after check */
  char *origin;                /* river_flow_origin's current value */
  char progress_label[41];     /* river_flow_progress's, "" if not called */
  uint64_t progress_records;   /* ... its total (0: not known) */
  char *spec_path;             /* river_flow_load's path, or NULL */
  char **spec_params;          /* ... and its params (nspec_params) */
  int nspec_params;
  river__flow_state state;
  void *run;                   /* the runtime's state */
  void (*run_free)(river_flow *f); /* frees it (set by the runtime: the
                                      flow's own files never call it) */
};

/* What a module sees. During check (schema callbacks) instance is 0 and
 * run is NULL. */
struct river_ctx {
  river_flow *flow;
  river__stage *stage;
  int instance, ninstances;
  void *run;                   /* the runtime's per-instance state */
};

/* ------------------------------------------------ src/module.c */

/* The registered module called name, or NULL. */
const river__module *river__module_find(const char *name);

/* Free every registered module (for river_finalize and tests). */
void river__module_clear(void);

/* The plugin whose river_plugin_init runs now (src/plugin.c), NULL
 * outside one: the modules registered meanwhile are its own. */
void river__module_set_plugin(const char *path);

/* Remove the modules plugin `path` registered (its init failed). */
void river__module_drop_plugin(const char *path);

/* 1 if name is 1..max characters of letters, digits, '_' and '-'. */
int river__name_ok(const char *name, size_t max);

/* Parse text as an argument of type t; on success (RIVER_SUCCESS) the
 * value is stored in whichever of *i, *u, *d fits the type (any may be
 * NULL; bool goes to *i). RIVER_EINVAL otherwise, logging nothing:
 * river__arg_expect(t) says what was expected ("a size (suffixes k, M,
 * G, T: ...)", with RIVER_SIZE_SUFFIXES). A size is river_parse_size's
 * (river/units.h); a uint its digits alone. */
int river__arg_parse(river__arg_type t, const char *text, int64_t *i,
                     uint64_t *u, double *d);
const char *river__arg_expect(river__arg_type t);

/* The index of module m's argument name, or -1. */
int river__arg_index(const river__module *m, const char *name);

/* A context on stage s of f for the schema callbacks of check. */
void river__ctx_init(river_ctx *ctx, river_flow *f, river__stage *s);

/* ------------------------------------------------ src/flow.c */

/* Log at level, prefixed by origin ("ORIGIN: ") when it is not NULL. */
void river__flow_log(int level, const char *origin, const char *fmt, ...)
    RIVER_PRINTF(3, 4);

/* The level of check's messages on this rank: errors on rank 0 (and in
 * a plan), debug elsewhere, so that a job prints each one once. */
int river__flow_check_level(const river_flow *f);

/* A new plan: a flow for nranks ranks without a communicator. */
int river__flow_create_plan(int nranks, river_flow **out);

/* The index of stage name in f, or -1. */
int river__flow_stage_index(const river_flow *f, const char *name);

/* "dq push", "exchange hash on key", ...: an edge's kind for messages
 * and the dot output, into buf (at least 96 bytes). */
void river__edge_describe(const river_edge_opts *o, char *buf, size_t len);

/* Undo check: free the output schemas and topo order; back to BUILDING
 * (src/flow.c). */
void river__flow_uncheck(river_flow *f);

/* ------------------------------------------------ src/flow_run.c */

/* Free what the runtime hung on f (f->run), if anything: also f's
 * run_free hook, which the runtime sets. */
void river__flow_run_free(river_flow *f);

#endif /* RIVER_FLOW_INTERNAL_H */
