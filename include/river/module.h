/*
 * river/module.h - writing a module: a sequential function that River
 * runs once per rank of its stage (an instance), with a queue on every
 * edge of the flow (river/flow.h).
 *
 * A module reads records from its inputs and writes records to its
 * outputs, each numbered from 0 in the order the flow attached them:
 *
 *   static int upper(river_ctx *ctx)
 *   {
 *     const void *in;
 *     size_t n;
 *     int rc;
 *     while ((rc = river_get(ctx, 0, &in, &n)) == RIVER_SUCCESS)
 *       if ((rc = river_put(ctx, 0, in, n)) != RIVER_SUCCESS)
 *         return rc;
 *     return rc == RIVER_EOS ? RIVER_SUCCESS : rc;
 *   }
 *
 * End of input is the ordinary return code RIVER_EOS. When the module
 * function returns, River closes its outputs (downstream instances see
 * RIVER_EOS once every upstream instance has returned); a module that
 * returns an error fails the flow on every rank.
 *
 * Records cross an edge in messages (whole records, about the edge's
 * message size): river_get hands over one message's records at a time,
 * valid until the next river_get (or river_try_get, river_select) on
 * that input.
 *
 * Waiting never spins: a module blocked in get or put yields its rank
 * to the other stages placed there and, when none can run, the rank
 * sleeps with River's backoff (river_wait). Calls on a context are made
 * only from its module function (contexts are not thread-safe).
 */
#ifndef RIVER_MODULE_H
#define RIVER_MODULE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "river/core.h"
#include "river/gd.h"
#include "river/perturb.h"
#include "river/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A running instance of a stage: what its module sees of the flow. */
typedef struct river_ctx river_ctx;

/* A module: RIVER_SUCCESS when done, or an error code. */
typedef int (*river_module_fn)(river_ctx *ctx);

/* The output schema of a module: called once per output while the flow
 * is checked, with the stage's arguments and its input schemas readable
 * through ctx (river_arg_*, river_input_schema; no get or put). Sets
 * *schema to a new schema the flow then owns. */
typedef int (*river_schema_fn)(river_ctx *ctx, int output,
                               river_schema **schema);

/*
 * A module's check of a stage before anything runs: called once per
 * stage (not per instance; river_ctx_instance gives instance 0 and the
 * number of instances) on every rank when the flow is checked (by
 * river_flow_run, river_flow_check and `river flow check`), after the
 * schemas, with the stage's arguments readable (river_arg_*,
 * river_input_schema; no get or put). RIVER_SUCCESS, or an error said
 * with river_ctx_log (rank 0's message is shown, the others' hushed)
 * that fails the check: no stage of the flow starts. For what is
 * cheap to see up front and would otherwise fail mid-run (coll_write's
 * existing target).
 */
typedef int (*river_check_fn)(river_ctx *ctx);

/* What a module declares when it is registered. */
typedef struct river_module_decl {
  int min_inputs, max_inputs;    /* max -1: any number */
  int min_outputs, max_outputs;
  int shares_rank;     /* 1: its instances may share ranks with other
                          stages' (I/O-bound modules); 0: a rank of its
                          stage runs nothing else */
  const char *args;    /* its arguments, comma-separated, each
                          NAME:TYPE or NAME:TYPE=DEFAULT (no default:
                          required); TYPE is str, int, uint, size
                          (a count or byte count: river_parse_size's
                          k/M/G/T x1000, Ki/Mi/Gi/Ti x1024), double, bool
                          (true/false/yes/no/1/0) or field (a field of
                          input 0's schema). NULL: none */
  river_schema_fn schema;  /* NULL: every output carries input 0's
                              schema (a module without inputs must then
                              be given a `schema` argument) */
  const char *doc;     /* one line for listings; may be NULL */
  river_check_fn check;  /* NULL: none */
} river_module_decl;

#define RIVER_MODULE_DECL_INIT {0, 0, 0, 0, 0, NULL, NULL, NULL, NULL}

/*
 * Make module `name` (1..63 letters, digits, '_', '-') available to
 * flows: fn with decl (copied) and user (returned by river_ctx_user).
 * Not collective, but every rank that runs a flow using it must register
 * it the same way before the flow is checked. RIVER_EEXIST if the name
 * is taken (the built-in modules are registered by river_init);
 * RIVER_EINVAL (logged) for a bad name or declaration.
 */
RIVER_API int river_module_register(const char *name, river_module_fn fn,
                                    const river_module_decl *decl,
                                    void *user);

/* What river_module_info_get tells of a registered module (river
 * modules lists them). The strings are River's, valid until
 * river_finalize. */
typedef struct river_module_info {
  const char *name;
  int min_inputs, max_inputs;    /* max -1: any number */
  int min_outputs, max_outputs;
  const char *args;    /* NAME:TYPE[=DEFAULT], comma-separated: its own
                          and the stage arguments every module takes */
  const char *doc;     /* may be NULL */
  const char *plugin;  /* the plugin that registered it (its path), or
                          NULL: built in, or the program's own */
} river_module_info;

/* How many modules are registered (the built-ins, the program's, the
 * plugins'); river_module_info_get(0..n-1) tells of each. */
RIVER_API int river_module_count(int *n);
RIVER_API int river_module_info_get(int index, river_module_info *info);

/*
 * Load a plugin: a shared library of modules (dlopen of path, which is
 * used as given: a name without '/' is taken as ./NAME, never searched
 * for; only paths a user gives are loaded), then call its entry point
 *
 *   int river_plugin_init(void);
 *
 * which registers its modules (river_module_register, or the Fortran
 * module's; C and Fortran libraries alike) and returns RIVER_SUCCESS or
 * an error. Not collective, like river_module_register: every rank that
 * runs a flow using its modules must load it (a flow spec's `plugins:`
 * and `river run --plugin` do that on every rank). Loading a plugin
 * already loaded does nothing. Errors (said, naming path):
 * RIVER_ENOTFOUND (no such file, or no river_plugin_init in it),
 * RIVER_EFORMAT (not a library this process can load: dlerror's
 * reason), RIVER_EEXIST (a module name already taken: a built-in's, or
 * another plugin's), or what river_plugin_init returned; a failed init's
 * modules are removed again.
 */
RIVER_API int river_plugin_load(const char *path);

/* -------------------------------------------------------- who am I */

/* The user pointer given at registration. */
RIVER_API void *river_ctx_user(const river_ctx *ctx);

/* This instance's number (0..ninstances-1, in rank order) and the
 * number of instances of its stage. Either output may be NULL. */
RIVER_API int river_ctx_instance(const river_ctx *ctx, int *instance,
                                 int *ninstances);

/* The stage's name (borrowed). */
RIVER_API const char *river_ctx_stage(const river_ctx *ctx);

/* The number of inputs and outputs. Either output may be NULL. */
RIVER_API int river_ctx_ports(const river_ctx *ctx, int *ninputs,
                              int *noutputs);

/*
 * Say something about this stage, through river_log: the message gets
 * the prefix "WHERE: stage 'NAME': " while the flow is checked, and
 * "WHERE: stage 'NAME' instance I: " while it runs, WHERE being the
 * stage's place in its flow spec (file:line:col; left out for a stage
 * placed by river_flow_place without an origin). While the flow is
 * checked, every rank runs the schema callbacks and only rank 0's
 * errors, warnings and notes are said (the other ranks' at debug level),
 * so a job says each once: this holds for river_log and for what the
 * library's own calls say from a schema callback too. RIVER_EINVAL for a
 * NULL ctx or fmt, or a level outside RIVER_LOG_ERROR..RIVER_LOG_DEBUG.
 */
RIVER_API int river_ctx_log(const river_ctx *ctx, int level,
                            const char *fmt, ...) RIVER_PRINTF(3, 4);

/* The schema of an input or output (borrowed, valid while the flow
 * runs). RIVER_EINVAL for an index out of range. */
RIVER_API int river_input_schema(const river_ctx *ctx, int input,
                                 const river_schema **schema);
RIVER_API int river_output_schema(const river_ctx *ctx, int output,
                                  const river_schema **schema);

/* ------------------------------------------------------- arguments */

/* The value of argument `name` (declared by the module) as given to the
 * stage, else its default. RIVER_EINVAL (logged, naming the stage and
 * argument) if the module did not declare it or it has another type;
 * values were checked against their types when the flow was checked.
 * A string is borrowed for the life of the flow. */
RIVER_API int river_arg_str(const river_ctx *ctx, const char *name,
                            const char **value);
RIVER_API int river_arg_int(const river_ctx *ctx, const char *name,
                            int64_t *value);
RIVER_API int river_arg_uint(const river_ctx *ctx, const char *name,
                             uint64_t *value);   /* uint and size */
RIVER_API int river_arg_double(const river_ctx *ctx, const char *name,
                               double *value);
RIVER_API int river_arg_bool(const river_ctx *ctx, const char *name,
                             int *value);

/* ------------------------------------------------------------ data */

/* Errors of every call below that takes a ctx: RIVER_EINVAL for a NULL
 * ctx (or another NULL or out-of-range argument), RIVER_ESTATE (logged)
 * for a context that is not a running module's (a schema callback's, or
 * a flow's that has ended). */

/* The next message of records from input `input`: *records (borrowed
 * until the next get, try_get or select) and *n records. Blocks until
 * one arrives; RIVER_EOS once the input has ended. */
RIVER_API int river_get(river_ctx *ctx, int input, const void **records,
                        size_t *n);

/* river_get without waiting: RIVER_EAGAIN if nothing is there now. */
RIVER_API int river_try_get(river_ctx *ctx, int input, const void **records,
                            size_t *n);

/* Wait until some input that has not ended has a message or ends; *input
 * gets its index (then river_try_get on it returns the message or
 * RIVER_EOS). RIVER_EOS when every input has ended. Inputs are served
 * fairly (round-robin from the last one returned). */
RIVER_API int river_select(river_ctx *ctx, int *input);

/* Write n records (copied) to output `output`; blocks while the edge's
 * queues are full. */
RIVER_API int river_put(river_ctx *ctx, int output, const void *records,
                        size_t n);

/* Zero-copy put: *buf gets room for *max records in the output's next
 * message; river_commit(ctx, output, k) puts the first k of them. */
RIVER_API int river_reserve(river_ctx *ctx, int output, void **buf,
                            size_t *max);
RIVER_API int river_commit(river_ctx *ctx, int output, size_t n);

/* End a unit on a pull edge (a sorted run): the records put since the
 * last unit go whole, in order, to one consumer. A no-op on other
 * edges and for an empty unit. */
RIVER_API int river_end_unit(river_ctx *ctx, int output);

/*
 * The unit of the message that the last get (or select) returned on
 * input `input`, when that input is a pull edge (policy pull: units are
 * sorted runs, each delivered whole and contiguous to one consumer):
 * *unit gets its id (the same for every message of the unit, different
 * for each unit), *first and *last 1 if the message is the unit's first
 * or last, else 0. Any output may be NULL. RIVER_ENOTSUP (not logged) on
 * an input of another kind, which has no units; RIVER_ESTATE before the
 * first message or after RIVER_EOS.
 */
RIVER_API int river_get_unit(river_ctx *ctx, int input, uint64_t *unit,
                             int *first, int *last);

/*
 * Tags (river/dq.h): a 64-bit label on the records put on output
 * `output`, read back by the consumer with each message. Set it before
 * the first put, or, on a pull edge, before each unit's first record
 * (between river_end_unit and the next put): RIVER_ESTATE otherwise, as
 * a message never mixes tags. `sort` tags each sorted run with the
 * position of its first record in the sorted output; `coll_write` to a
 * file: PATH writes each run there. river_get_tag: the tag of the
 * message the last get (or select) returned on input `input`
 * (RIVER_DQ_NO_TAG if its producer set none); RIVER_ESTATE before the
 * first message or after RIVER_EOS.
 */
RIVER_API int river_set_tag(river_ctx *ctx, int output, uint64_t tag);
RIVER_API int river_get_tag(river_ctx *ctx, int input, uint64_t *tag);

/* The number of instances of the stage that output `output` feeds: on
 * an exchange edge, the number of partitions. */
RIVER_API int river_output_consumers(const river_ctx *ctx, int output,
                                     int *n);

/* The number of instances that send to this one on input `input`: 1 on
 * a one-to-one edge, else every instance of the stage feeding it.
 * RIVER_EINVAL for a NULL ctx or n, or an input that is not connected. */
RIVER_API int river_input_producers(const river_ctx *ctx, int input,
                                    int *n);

/* The options of the edge on an input or output: river_input_edge and
 * river_output_edge, in river/flow.h (beside river_edge_opts). */

/*
 * Choose how this instance's records on output `output`, an exchange
 * edge, are placed, instead of the edge's `by` (a module that samples its
 * data, like `partition`, sets splitters). Call before the first put,
 * reserve or commit on that output. by is RIVER_BY_HASH (river/flow.h;
 * splitters NULL, n 0) or RIVER_BY_RANGE with either no splitters (the
 * evenly split key space, as `by: range` on the edge) or n = consumers - 1
 * splitters (river_output_consumers), each a value of the records' key
 * field as stored in a record (key size bytes), in key order: a record
 * goes to consumer i, the number of splitters <= its key, so equal keys
 * go to the same consumer. Copied. RIVER_EINVAL (logged, naming the
 * stage) on another kind of edge, for RIVER_BY_RANGE on an edge that
 * exchanges on a field other than the records' key (a hash places by the
 * edge's field, whichever it is), for a wrong n or splitters out of
 * order; RIVER_ESTATE after the first put.
 */
RIVER_API int river_set_partitioner(river_ctx *ctx, int output, int by,
                                    const void *splitters, size_t n);

/* ------------------------------------------------ talking to peers */

/* A communicator of the stage's instances (instance i is rank i), for
 * modules that must agree on something (a range partitioner's sample).
 * Owned by the flow. Use nonblocking MPI calls and river_ctx_wait:
 * a blocking call would stop every other stage on the rank. */
RIVER_API int river_ctx_comm(const river_ctx *ctx, MPI_Comm *comm);

/* Wait for req (MPI_Test in a loop), yielding to the other stages on
 * this rank meanwhile; status may be MPI_STATUS_IGNORE. If an instance
 * anywhere in the flow fails meanwhile (a peer may then never join),
 * returns RIVER_ESTATE without completing req: its buffers must then
 * outlive the module (static or heap memory, not the module's stack). */
RIVER_API int river_ctx_wait(river_ctx *ctx, MPI_Request *req,
                             MPI_Status *status);

/* All-gather k (1..65536) 64-bit words from every instance of the
 * stage: all (ninstances x k words) gets each instance's `mine`, in
 * instance order. Waits as river_ctx_wait does: RIVER_ESTATE if the flow
 * fails meanwhile (the call keeps buffers of its own, not mine or all).
 * RIVER_EINVAL for a NULL ctx, mine or all, or k out of range;
 * RIVER_ESTATE (logged) outside a running module; RIVER_ENOMEM. */
RIVER_API int river_ctx_allgather(river_ctx *ctx, const uint64_t *mine,
                                  int k, uint64_t *all);

/* The stage's instances agree on an outcome: each passes its rc and
 * gets back RIVER_SUCCESS if every instance passed RIVER_SUCCESS, else
 * the lowest (most severe) code one passed. Waits as river_ctx_wait
 * does (RIVER_ESTATE if the flow fails meanwhile). RIVER_EINVAL for a
 * NULL ctx; RIVER_ESTATE (logged) outside a running module. */
RIVER_API int river_ctx_agree(river_ctx *ctx, int rc);

/* Instance `root`'s `bytes` bytes at buf reach every instance's buf
 * (every instance passes the same bytes and root). Waits as
 * river_ctx_wait does, on buffers of its own. RIVER_EINVAL for a NULL
 * ctx, a NULL buf with bytes > 0, bytes over INT_MAX or a root out of
 * range; RIVER_ESTATE (logged) outside a running module; RIVER_ENOMEM. */
RIVER_API int river_ctx_bcast(river_ctx *ctx, void *buf, size_t bytes,
                              int root);

/* All-gather a different number of bytes from each instance: *all gets
 * a new buffer (release it with free()) holding every instance's bytes
 * in instance order, and sizes[i] (ninstances entries) instance i's
 * count. Waits as river_ctx_wait does, on buffers of its own.
 * RIVER_EINVAL for a NULL ctx, all or sizes or a NULL mine with
 * bytes > 0; on every instance if the total is over INT_MAX bytes;
 * RIVER_ESTATE (logged) outside a running module; RIVER_ENOMEM. */
RIVER_API int river_ctx_allgatherv(river_ctx *ctx, const void *mine,
                                   size_t bytes, void **all, size_t *sizes);

/* Give the rank's other stages a turn, for a module that waits on
 * something outside River (a descriptor it polls, a device):
 * RIVER_SUCCESS, or RIVER_ESTATE once the flow has failed elsewhere, or
 * RIVER_ETIMEDOUT once River's watchdog has fired (stop waiting and
 * fail). RIVER_EINVAL for a NULL ctx; RIVER_ESTATE (logged) outside a
 * running module. */
RIVER_API int river_ctx_yield(river_ctx *ctx);

/* *failed = 1 if this rank has heard that an instance anywhere in the
 * flow failed (it forwards the news as it asks), else 0. A module that
 * waits on its peers, or that writes what it received outside River's
 * queues, asks before it commits: a failure elsewhere also ends its
 * input, which then looks complete. RIVER_EINVAL for a NULL ctx or
 * failed; RIVER_ESTATE outside a running module (a schema callback). */
RIVER_API int river_ctx_failed(river_ctx *ctx, int *failed);

/* ------------------------------------------------------ publishing */

/*
 * A module that writes outside River's queues (a file, a database) must
 * not publish its output until the whole flow has succeeded: a failure
 * anywhere (upstream, in another branch, on another rank) also ends its
 * input, which then looks complete. It writes under a temporary name and
 * registers an end step that publishes (renames) or discards it:
 *
 *   static int end(void *arg, int outcome)
 *   {
 *     if (outcome != RIVER_SUCCESS) {
 *       river_outfile_discard(arg);        (river/outfile.h)
 *       return RIVER_SUCCESS;
 *     }
 *     return river_outfile_publish(arg);
 *   }
 *   ... river_ctx_at_end(ctx, end, of);    (before the module returns)
 *
 * fn(arg, outcome) is called once, on this instance's rank, after every
 * instance on every rank has returned and the ranks have agreed on the
 * flow's outcome (inside river_flow_wait, or the river_flow_test that
 * finds the flow done; never from a task). outcome is RIVER_SUCCESS, or
 * the error the flow ends with: then the step discards and its return
 * value is ignored. A step that fails to publish returns an error, which
 * becomes the flow's outcome on every rank (agreed again); the steps
 * after it still run with RIVER_SUCCESS (outputs are published one by
 * one: two files cannot be renamed at once). Steps run in stage order,
 * then in the order registered; a step may make collective calls over
 * its stage's communicator if every instance of the stage registers the
 * same steps. A flow destroyed before it finishes runs its steps with
 * RIVER_ESTATE. RIVER_EINVAL for a NULL ctx or fn; RIVER_ESTATE (logged)
 * outside a running module (a schema callback); RIVER_ENOMEM.
 */
typedef int (*river_end_fn)(void *arg, int outcome);
RIVER_API int river_ctx_at_end(river_ctx *ctx, river_end_fn fn, void *arg);

/* ---------------------------------------------------- fault points */

/* A step where tests make a module fail or stop (RIVER_TEST_FAULT, as
 * River's own steps: doc/collections.md, "Fault steps"): with
 * RIVER_TEST_FAULT=STEP:fail it returns 1 (fail the step as if its I/O
 * had failed); STEP:kill kills the process there, as a crash would;
 * STEP:sleep=MS and STEP:wait=PATH hold it. Otherwise, and always
 * outside tests, 0, for the cost of a getenv. 0 for a NULL step. */
RIVER_API int river_fault_point(const char *step);

/* ------------------------------------------------------- emulation */

/*
 * Experiments slow a stage on purpose (doc/design.md, "Emulation"):
 * every stage takes cpu_rate (bytes/s its CPU digests what river_get
 * hands over; the runtime charges it) and perturb ("cpu:I=F", "disk:D=F"
 * factors over time). A module that moves bytes to or from storage
 * declares a `disk_rate:size=0` argument and charges what it moves with
 * river_ctx_charge_disk: disk `disk` then takes bytes / (disk_rate x
 * perturb's "disk:disk" factor now), waiting (yielding to the rank's
 * other stages) as that disk would; each disk number has its own bucket,
 * and the perturbation's times count from the instance's start. Without
 * a disk_rate (0 or not declared) it returns at once: real speed.
 * RIVER_EINVAL for a NULL ctx or a disk < 0; RIVER_ESTATE (logged)
 * outside a running module; RIVER_ENOMEM.
 */
RIVER_API int river_ctx_charge_disk(river_ctx *ctx, int disk, size_t bytes);

/* The stage's perturb argument as the runtime parsed it, once for this
 * instance (borrowed until the module returns; *p NULL if none given),
 * for a module that hands it on (a GD read's river_gd_opts.perturb).
 * RIVER_EINVAL for a NULL ctx or p; RIVER_ESTATE outside a running
 * module (a schema callback parses the argument itself). */
RIVER_API int river_ctx_perturb(const river_ctx *ctx,
                                const river_perturb **p);

/* ----------------------------------------------------------- stats */

typedef struct river_module_stats {
  uint64_t records_in, bytes_in;    /* over all inputs */
  uint64_t records_out, bytes_out;  /* over all outputs */
  double get_wait_seconds;          /* blocked in get/select */
  double put_wait_seconds;          /* blocked in put/commit/close */
  double run_seconds;               /* from start to return */
} river_module_stats;

/* This instance's counters so far. */
RIVER_API int river_ctx_stats(const river_ctx *ctx, river_module_stats *st);

/* Keep what GD read gd (over this stage's communicator, river_ctx_comm)
 * did on this instance, for the flow's stats file (river/stats.h: the
 * flow's "gd", named by the stage; only where every instance of the
 * stage kept one). Call it once the read is done, before
 * river_gd_close; a second call replaces the first. Local. */
RIVER_API int river_ctx_keep_gd(river_ctx *ctx, river_gd *gd);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_MODULE_H */
