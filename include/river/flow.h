/*
 * river/flow.h - flows: stages (a module on a set of ranks, with
 * arguments) connected by edges (a distributed queue each), built on a
 * communicator and run together.
 *
 *   river_flow *f;
 *   river_edge_opts e = RIVER_EDGE_OPTS_INIT;
 *   int readers[] = {0, 1}, sinks[] = {2, 3};
 *   river_flow_create(MPI_COMM_WORLD, &f);
 *   river_flow_place(f, "read", "gen", readers, 2);
 *   river_flow_arg(f, "read", "records", "1M");
 *   river_flow_place(f, "sink", "count", sinks, 2);
 *   river_flow_attach(f, "read", "sink", &e);       (a push edge)
 *   river_flow_go(f);                               (collective)
 *   river_flow_destroy(f);
 *
 * A flow spec (doc/flowspec.md) is loaded by river_flow_load, which
 * builds the flow through these same calls. Building is local: every
 * rank of the communicator must build the same flow (the spec loader
 * does, reading the same file); river_flow_check, go and go_async are
 * collective and agree that it is the same.
 *
 * Errors in building name the stage, edge and argument; a caller that
 * knows where a call came from (the spec loader: FILE:LINE:COLUMN) sets
 * it with river_flow_origin, and the messages start with it.
 *
 * Words (doc/design.md, section 1): an edge's kind (river_edge_kind:
 * dq, exchange, one-to-one, broadcast) says how records cross it, and
 * picks the DQ policy (river_dq_policy) its queue runs: a dq edge the
 * one river_edge_opts.policy names (push, pull or static; "a push
 * edge"), the other kinds EXCHANGE, ONE_TO_ONE and BROADCAST.
 */
#ifndef RIVER_FLOW_H
#define RIVER_FLOW_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "river/core.h"
#include "river/dq.h"
#include "river/module.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct river_flow river_flow;

/* An edge's kind: how records cross it, and so the DQ policy its queue
 * runs (river/dq.h). */
typedef enum river_edge_kind {
  RIVER_EDGE_DQ,          /* the DQ policy in river_edge_opts.policy:
                             push (default), pull or static */
  RIVER_EDGE_EXCHANGE,    /* RIVER_DQ_EXCHANGE, by key: hash or range */
  RIVER_EDGE_ONE_TO_ONE,  /* RIVER_DQ_ONE_TO_ONE: instance i to i */
  RIVER_EDGE_BROADCAST    /* RIVER_DQ_BROADCAST: every record to every
                             instance */
} river_edge_kind;

typedef enum river_exchange_by {
  RIVER_BY_HASH,          /* hash of the key field's bytes */
  RIVER_BY_RANGE          /* key ranges from a sample of the data */
} river_exchange_by;

/* Where an edge's filter drops the records that fail it: at the source
 * (before they are sent: the traffic is cut where the data lives) or at
 * the sink (as they arrive). */
typedef enum river_filter_at {
  RIVER_FILTER_AT_SOURCE,
  RIVER_FILTER_AT_SINK
} river_filter_at;

typedef struct river_edge_opts {
  river_edge_kind kind;
  river_dq_policy policy;   /* RIVER_EDGE_DQ: its DQ policy,
                               RIVER_DQ_PUSH, _PULL or _STATIC */
  river_exchange_by by;     /* RIVER_EDGE_EXCHANGE */
  const char *key;          /* RIVER_EDGE_EXCHANGE: the field to
                               partition on; NULL: the schema's key */
  int credits;              /* 0: the DQ default */
  size_t message_size;      /* 0: the DQ default */
  int from_output;          /* the source's output index; -1: its next
                               unconnected one */
  int to_input;             /* the destination's input index; -1: its
                               next unconnected one */
  const char *filter;       /* "FIELD OP VALUE": only the records for
                               which it holds cross the edge (OP and VALUE
                               as the filter module takes them; VALUE is
                               the rest of the text); NULL: every record */
  river_filter_at filter_at; /* where the others are dropped */
  double pace;              /* RIVER_EDGE_DQ with RIVER_DQ_PUSH: the
                               consumers' pacing, river_dq_opts.pace
                               (seconds; 0: the DQ default, 20 ms; < 0:
                               off); 0 on every other edge */
} river_edge_opts;

#define RIVER_EDGE_OPTS_INIT \
  {RIVER_EDGE_DQ, RIVER_DQ_PUSH, RIVER_BY_HASH, NULL, 0, 0, -1, -1, NULL, \
   RIVER_FILTER_AT_SOURCE, 0.0}

/* For a module (river/module.h): the options of the edge on input
 * `input` or output `output` of its stage, as the flow resolved them
 * (kind, policy, ports; key and filter borrowed from the flow). A module
 * that writes units on a pull edge asks its output's. RIVER_EINVAL for a
 * NULL ctx or opts, or a port that is not connected. */
RIVER_API int river_input_edge(const river_ctx *ctx, int input,
                               river_edge_opts *opts);
RIVER_API int river_output_edge(const river_ctx *ctx, int output,
                                river_edge_opts *opts);

/* Per-stage totals after a run (river_flow_stage_stats, collective). */
typedef struct river_stage_stats {
  int ninstances;
  uint64_t records_in, bytes_in, records_out, bytes_out;  /* sums */
  double seconds;           /* the slowest instance's run time */
  int slowest;              /* its instance number */
  int in_credits;           /* how its input queues' credits travel:
                               RIVER_DQ_CREDITS_RMA, _MSG, both OR-ed,
                               or 0 (no queue in) (river/dq.h) */
} river_stage_stats;

/* A new, empty flow on comm (which it duplicates). Not collective. */
RIVER_API int river_flow_create(MPI_Comm comm, river_flow **out);

/* Where the next calls come from, for messages (e.g. "sort.yaml:12:5");
 * NULL: nowhere in particular. Copied. */
RIVER_API int river_flow_origin(river_flow *f, const char *where);

/* Place stage `stage` (a new name: 1..63 letters, digits, '_', '-')
 * running module `module` on ranks[0..nranks-1] of the flow's
 * communicator (distinct, in range). RIVER_ENOTFOUND for an unknown
 * module; RIVER_EINVAL for a bad or duplicate name or ranks; RIVER_EBUSY
 * if a rank would hold two stages and either module does not share
 * ranks. */
RIVER_API int river_flow_place(river_flow *f, const char *stage,
                               const char *module, const int *ranks,
                               int nranks);

/* Give stage `stage` argument name=value (text; checked against the
 * module's declared type now: "stage S: argument 'records': expected a
 * size (suffixes k, M, G, T: ...), got 'lots'", RIVER_EINVAL; a size
 * is river_parse_size's, river/units.h). Giving one twice replaces
 * it. RIVER_ENOTFOUND for an unknown stage or argument. */
RIVER_API int river_flow_arg(river_flow *f, const char *stage,
                             const char *name, const char *value);

/* Connect an output of stage `from` to an input of stage `to`. opts
 * NULL: RIVER_EDGE_OPTS_INIT (opts->key is copied). RIVER_ENOTFOUND
 * (logged) for an unknown stage; RIVER_EINVAL (logged) for ports out of
 * range or already connected, options that do not fit the kind (a key
 * on an edge that is not an exchange, one-to-one between stages of
 * different sizes), a self-edge. */
RIVER_API int river_flow_attach(river_flow *f, const char *from,
                                const char *to, const river_edge_opts *opts);

/* Check the whole flow (collective): every required argument given,
 * every port connected exactly once, no cycle, schemas agreeing across
 * every edge, every rank building the same flow. RIVER_EINVAL (logged
 * on rank 0, naming the stage or edge) otherwise. go and go_async
 * check first. */
RIVER_API int river_flow_check(river_flow *f);

/* Run the flow to its end (collective): every rank runs the instances
 * placed on it; returns when every instance on every rank has returned
 * and every queue has drained. The outcome is agreed: RIVER_SUCCESS
 * everywhere or the same error everywhere. A flow runs once. */
RIVER_API int river_flow_go(river_flow *f);

/* Show a progress line (river/progress.h) on rank 0 while the flow
 * runs, named label (1 to 40 characters): records its sources have
 * read and its sinks taken in, of total_records each (0: not known:
 * no percentage or ETA), rates, elapsed time, and the slowest and
 * fastest rank. RIVER_PROGRESS=0 hides it; RIVER_PROGRESS=1 shows it
 * for every flow, as "flow", without this call. Before the run, with
 * the same arguments on every rank. */
RIVER_API int river_flow_progress(river_flow *f, const char *label,
                                  uint64_t total_records);

/* Start the flow (collective) and return at once; river_flow_test
 * advances it without waiting (*done 1 when finished, then its outcome
 * is returned), river_flow_wait runs it to the end. Between them the
 * caller may do other work, but not on the flow's communicator. */
RIVER_API int river_flow_go_async(river_flow *f);
RIVER_API int river_flow_test(river_flow *f, int *done);
RIVER_API int river_flow_wait(river_flow *f);

/* After a run (collective): the totals of stage `stage`. */
RIVER_API int river_flow_stage_stats(river_flow *f, const char *stage,
                                     river_stage_stats *st);

/* The stages, in placement order: stage i's name (borrowed) and ranks
 * (borrowed, *nranks entries). For plans and reports. */
RIVER_API int river_flow_nstages(const river_flow *f, int *n);
RIVER_API int river_flow_stage(const river_flow *f, int i, const char **name,
                               const char **module, const int **ranks,
                               int *nranks);

/* The flow as a Graphviz graph (stages with their module and rank
 * count, edges with their kind), with the caller-buffer contract (see
 * river_build_info). */
RIVER_API int river_flow_dot(const river_flow *f, char *buf, size_t *len);

/*
 * Load the flow spec at path (YAML, doc/flowspec.md) onto comm, with
 * params[0..nparams-1] ("key=value", overriding the spec's params).
 * Every rank loads it (not collective: the check is). Errors name
 * path:line:column and what is wrong, logged once per rank (rank 0's
 * message suffices: the others' are the same): RIVER_EFORMAT for what
 * the spec itself gets wrong (YAML, keys, types, ranks, parameters),
 * the flow API's codes for what building refuses, RIVER_ENOTFOUND (and
 * the other codes of opening a file) for a path that cannot be read.
 * The flow is not checked yet: river_flow_check (or go) does that.
 */
RIVER_API int river_flow_load(MPI_Comm comm, const char *path,
                              const char *const *params, int nparams,
                              river_flow **out);

/* Load a spec for nranks ranks without a communicator, to check it and
 * print its plan (river flow check --ranks N): river_flow_check then
 * works locally; the flow cannot run. */
RIVER_API int river_flow_load_plan(const char *path, int nranks,
                                   const char *const *params, int nparams,
                                   river_flow **out);

/* Free a flow that is not running (NULL: no-op). */
RIVER_API int river_flow_destroy(river_flow *f);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_FLOW_H */
