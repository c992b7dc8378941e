/*
 * coll.c - parallel collections (river/pcoll.h) in flows. Module
 * `coll_read` reads a collection into its output through graduated
 * declustering (river/gd.h): instance i is the GD client of partitions
 * p with p mod n == i and serves the disks d with d mod n == i, so a
 * mirrored collection is read from every mirror at once, with failover.
 * Module `coll_write` writes its input into a new collection, instance
 * i writing partition i (or, from a pull edge, each unit it takes as a
 * partition of its own, placed by the unit's id), committed atomically
 * once the whole flow has succeeded on every rank (an end step,
 * river_ctx_at_end). Either takes a
 * flat file of records instead, `coll: file:PATH` (file.c): coll_read
 * reads a slice per instance, coll_write writes one file in the order
 * the records' tags give (sort's runs).
 *
 * Both make River's collective calls (open, GD, create, commit) over the
 * stage's communicator (river_ctx_comm) from inside their tasks: River's
 * waits yield to the rank's other stages there (src/wait.c).
 */
#include "modules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* `coll: file:PATH`: a flat file of records instead (file.c). */
#define FILE_PREFIX "file:"

/* The collection options of a stage's `root` argument. */
static void coll_opts(river_ctx *ctx, river_pcoll_opts *o)
{
  const char *root = "";

  *o = (river_pcoll_opts)RIVER_PCOLL_OPTS_INIT;
  river_arg_str(ctx, "root", &root);
  o->root = root[0] ? root : NULL;
}

/* ------------------------------------------------------------ reading */

/* `order`: 0 unordered, 1 stream, -1 (logged) anything else. */
static int read_order(river_ctx *ctx)
{
  const char *order = "";

  river_arg_str(ctx, "order", &order);
  if (strcmp(order, "unordered") == 0)
    return 0;
  if (strcmp(order, "stream") == 0)
    return 1;
  river_ctx_log(ctx, RIVER_LOG_ERROR, "argument 'order': '%.100s' is neither "
                "'unordered' nor 'stream'", order);
  return -1;
}

/* The stage's `policy`: GD (the default) or a baseline; -1 (logged)
 * for anything else. */
static int read_policy(river_ctx *ctx)
{
  static const char *names[] = {"gd", "mirror-nogd", "nomirror"};
  const char *policy = "";
  int i;

  river_arg_str(ctx, "policy", &policy);
  for (i = 0; i < 3; i++)
    if (strcmp(policy, names[i]) == 0)
      return i;   /* RIVER_GD_BALANCED, _MIRROR_NOGD, _NOMIRROR */
  river_ctx_log(ctx, RIVER_LOG_ERROR, "argument 'policy': '%.100s' is not "
                "gd, mirror-nogd or nomirror", policy);
  return -1;
}

/* The stage's disk emulation: with a disk_rate (the flow's check has
 * checked it), its perturb's "disk:D" clauses name disks 0..ndisks-1
 * (`whose` says whose disks they are). RIVER_EINVAL, logged if `loud`,
 * if not. */
static int disks_ok(river_ctx *ctx, int ndisks, const char *whose, int loud)
{
  river_perturb *p = NULL;
  const char *spec = "";
  uint64_t rate = 0;
  int max = -1, rc = RIVER_SUCCESS;

  river_arg_uint(ctx, "disk_rate", &rate);
  river_arg_str(ctx, "perturb", &spec);
  if (rate == 0 || spec[0] == '\0')
    return RIVER_SUCCESS;
  rc = river_perturb_parse(spec, &p);
  if (rc == RIVER_SUCCESS)
    river_perturb_max_index(p, RIVER_PERTURB_DISK, &max);
  river_perturb_destroy(p);
  if (rc == RIVER_SUCCESS && max >= ndisks) {
    if (loud)
      river_ctx_log(ctx, RIVER_LOG_ERROR, "argument 'perturb' names disk %d; "
                    "%s has disks 0..%d", max, whose, ndisks - 1);
    rc = RIVER_EINVAL;
  }
  return rc;
}

/* At check time: the collection's schema, from its metadata. Every rank
 * checks; the flow's check lets only rank 0's messages through
 * (river_ctx_log), so a job says each once. */
static int read_schema(river_ctx *ctx, int output, river_schema **schema)
{
  river_pcoll_opts o;
  river_pcoll *pc = NULL;
  const river_schema *s;
  const char *name = "";
  int rc;

  (void)output;
  rc = read_order(ctx) < 0 || read_policy(ctx) < 0 ? RIVER_EINVAL
                                                   : RIVER_SUCCESS;
  coll_opts(ctx, &o);
  river_arg_str(ctx, "coll", &name);
  if (rc == RIVER_SUCCESS && strncmp(name, FILE_PREFIX,
                                     strlen(FILE_PREFIX)) == 0) {
    int ninst;
    river_ctx_instance(ctx, NULL, &ninst);
    rc = disks_ok(ctx, ninst, "the stage (a disk per instance)", 1);
    if (rc == RIVER_SUCCESS)
      rc = river__file_schema(ctx, name + strlen(FILE_PREFIX), schema);
    return rc;
  }
  o.hold = RIVER_PCOLL_HOLD_NONE;   /* its facts only */
  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_open(MPI_COMM_SELF, name, &o, &pc);
  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_schema(pc, &s);
  if (rc == RIVER_SUCCESS) {
    river_pcoll_info info;
    char whose[RIVER_PCOLL_NAME_MAX + 16];
    river_pcoll_info_get(pc, &info);
    snprintf(whose, sizeof whose, "collection %s", name);
    rc = disks_ok(ctx, info.ndisks, whose, 1);
  }
  if (rc == RIVER_SUCCESS)
    rc = river_schema_clone(s, schema);
  river_pcoll_close(pc);
  return rc;
}

/* What a reader keeps while GD delivers. */
struct reader {
  river_ctx *ctx;
  river_pcoll_order *order;  /* stream on one instance: record order */
  int runs;                  /* stream on several: a unit per partition */
  int last;                  /* the partition of the last block */
  int rc;                    /* the first failure passing records on */
};

/* Pass one block on. */
static void pass_on(struct reader *r, int p, uint64_t b, const void *recs,
                    size_t n)
{
  const void *ready = recs;
  size_t nready = n;

  if (r->rc != RIVER_SUCCESS)
    return;  /* keep serving GD, pass nothing more on */
  if (r->order != NULL)
    r->rc = river_pcoll_order_add(r->order, p, b, recs, n, &ready, &nready);
  if (r->rc == RIVER_SUCCESS && r->runs && r->last >= 0 && p != r->last)
    r->rc = river_end_unit(r->ctx, 0);
  r->last = p;
  if (r->rc == RIVER_SUCCESS && nready > 0)
    r->rc = river_put(r->ctx, 0, ready, nready);
}

/* The end of the blocks: what the reorderer holds, the last unit. */
static void finish(struct reader *r)
{
  const void *ready = NULL;
  size_t nready = 0;

  if (r->rc == RIVER_SUCCESS && r->order != NULL)
    r->rc = river_pcoll_order_flush(r->order, &ready, &nready);
  if (r->rc == RIVER_SUCCESS && nready > 0)
    r->rc = river_put(r->ctx, 0, ready, nready);
  if (r->rc == RIVER_SUCCESS && r->runs)
    r->rc = river_end_unit(r->ctx, 0);
}

/* Read through GD over the stage: every instance calls river_gd_next
 * until it ends (its disks serve the others meanwhile), then closes. */
static int read_gd(river_ctx *ctx, river_pcoll *pc, int stream,
                   int policy)
{
  river_gd_opts o = RIVER_GD_OPTS_INIT;
  struct reader r = {ctx, NULL, 0, -1, RIVER_SUCCESS};
  river_pcoll_info info;
  const river_perturb *pert = NULL;
  river_gd *gd = NULL;
  const void *recs;
  MPI_Comm comm;
  uint64_t b, rate = 0, run = 0;
  size_t n;
  int ninst, p, rc;

  river_ctx_comm(ctx, &comm);
  river_ctx_instance(ctx, NULL, &ninst);
  river_pcoll_info_get(pc, &info);
  river_arg_uint(ctx, "disk_rate", &rate);
  river_arg_uint(ctx, "run_blocks", &run);
  if (run > RIVER_GD_MAX_RUN_BLOCKS) {   /* every instance alike */
    river_ctx_log(ctx, RIVER_LOG_ERROR, "argument 'run_blocks': %llu is over "
                  "%d", (unsigned long long)run, RIVER_GD_MAX_RUN_BLOCKS);
    return RIVER_EINVAL;
  }
  river_ctx_perturb(ctx, &pert);
  o.policy = (river_gd_policy)policy;
  o.disk_rate = (double)rate;
  o.run_blocks = (int)run;
  o.perturb = rate > 0 ? pert : NULL;
  o.mode = stream ? RIVER_GD_STREAM : RIVER_GD_UNORDERED;
  if (stream && ninst == 1)
    r.rc = river_pcoll_order_create(pc, &r.order);
  r.runs = stream && ninst > 1;
  if (r.runs && info.layout != RIVER_LAYOUT_PARTITIONED) {
    river_ctx_log(ctx, RIVER_LOG_ERROR, "collection %s is interleaved: its "
                  "stream order needs one instance", info.name);
    r.rc = RIVER_EINVAL;
  }
  rc = river_gd_open(comm, pc, &o, &gd);
  if (rc != RIVER_SUCCESS) {
    river_pcoll_order_destroy(r.order);
    return rc;
  }
  while ((rc = river_gd_next(gd, &recs, &n, &p, &b)) == RIVER_SUCCESS)
    pass_on(&r, p, b, recs, n);
  if (rc == RIVER_EOS) {
    rc = RIVER_SUCCESS;
    finish(&r);
  }
  (void)river_ctx_keep_gd(ctx, gd);   /* for the stats file; a report */
  p = river_gd_close(gd);  /* the same outcome on every instance */
  river_pcoll_order_destroy(r.order);
  if (rc == RIVER_SUCCESS)
    rc = p;
  return rc != RIVER_SUCCESS ? rc : r.rc;
}

static int coll_read(river_ctx *ctx)
{
  river_pcoll_opts o;
  river_pcoll *pc = NULL;
  const char *name = "";
  MPI_Comm comm;
  int stream, policy, rc;

  if ((stream = read_order(ctx)) < 0 || (policy = read_policy(ctx)) < 0)
    return RIVER_EINVAL;
  river_arg_str(ctx, "coll", &name);
  if (strncmp(name, FILE_PREFIX, strlen(FILE_PREFIX)) == 0)
    return river__file_read_slice(ctx, name + strlen(FILE_PREFIX));
  coll_opts(ctx, &o);
  river_ctx_comm(ctx, &comm);
  /* Each instance holds the copies of the disks it serves in the GD
   * read on this communicator (RIVER_PCOLL_HOLD_SERVED): a commit or
   * remove of the collection meanwhile takes nothing from the read. */
  rc = river_pcoll_open(comm, name, &o, &pc);   /* collective */
  if (rc != RIVER_SUCCESS)
    return rc;
  rc = read_gd(ctx, pc, stream, policy);
  river_pcoll_close(pc);
  return rc;
}

/* ------------------------------------------------------------ writing */

/* The create options from the stage's arguments; RIVER_EINVAL (logged
 * by instance 0 only: every instance finds the same) for a bad one. */
static int write_opts(river_ctx *ctx, river_pcoll_opts *o)
{
  const char *layout = "";
  uint64_t mirror = 1, bs = 0;
  int inst, ninst, replace = 0;

  coll_opts(ctx, o);
  river_arg_bool(ctx, "replace", &replace);
  o->exclusive = !replace;   /* refused at create, before any work */
  river_arg_str(ctx, "layout", &layout);
  river_arg_uint(ctx, "mirror", &mirror);
  river_arg_uint(ctx, "block_size", &bs);
  river_ctx_instance(ctx, &inst, &ninst);
  if (strcmp(layout, "partitioned") == 0)
    o->layout = RIVER_LAYOUT_PARTITIONED;
  else if (strcmp(layout, "interleaved") == 0)
    o->layout = RIVER_LAYOUT_INTERLEAVED;
  else {
    if (inst == 0)
      river_ctx_log(ctx, RIVER_LOG_ERROR, "argument 'layout': '%.100s' is "
                    "neither 'partitioned' nor 'interleaved'", layout);
    return RIVER_EINVAL;
  }
  if (mirror < 1 || mirror > (uint64_t)ninst) {
    if (inst == 0)
      river_ctx_log(ctx, RIVER_LOG_ERROR, "argument 'mirror': %llu copies "
                    "need 1..%d disks (one per instance)",
                    (unsigned long long)mirror, ninst);
    return RIVER_EINVAL;
  }
  o->replication = (int)mirror;
  o->block_size = (size_t)bs;
  return disks_ok(ctx, ninst, "the stage", inst == 0);
}

/* On a pull edge, each unit (a sorted run) is a partition of its own,
 * on this instance's disk, placed in the collection by the unit's id
 * (producer, then its units in order): begin it at the unit's first
 * message. On other edges, nothing: instance i writes partition i. */
static int next_unit(river_ctx *ctx, river_pcoll *pc)
{
  uint64_t unit;
  int first = 0, rc = river_get_unit(ctx, 0, &unit, &first, NULL);

  if (rc == RIVER_ENOTSUP)
    return RIVER_SUCCESS;
  if (rc == RIVER_SUCCESS && first)
    rc = river_pcoll_begin_partition(pc, unit);
  return rc;
}

/* A write waiting for the flow's outcome; pc NULL once the module has
 * abandoned it (a step registered on some instances only). */
struct pending_write {
  river_pcoll *pc;
};

/* The end step of a collection write (river_ctx_at_end): commit it if
 * the whole flow succeeded, else close it (removing this write's
 * files). Collective over the stage: every instance registers it. */
static int end_commit(void *arg, int outcome)
{
  struct pending_write *p = arg;
  river_pcoll *pc = p->pc;

  free(p);
  if (pc == NULL)
    return RIVER_SUCCESS;   /* abandoned by the module */
  if (outcome != RIVER_SUCCESS) {
    river_pcoll_close(pc);
    return RIVER_SUCCESS;
  }
  return river_pcoll_commit(pc);
}

static int coll_write(river_ctx *ctx)
{
  river_pcoll_opts o;
  river_pcoll *pc = NULL;
  const river_schema *s;
  const char *name = "";
  const void *recs;
  MPI_Comm comm;
  struct pending_write *p = NULL;
  size_t n, rsize = 0;
  int inst, rc, reg, wrc = RIVER_SUCCESS, failed = 0;

  river_arg_str(ctx, "coll", &name);
  if (strncmp(name, FILE_PREFIX, strlen(FILE_PREFIX)) == 0)
    return river__file_write_placed(ctx, name + strlen(FILE_PREFIX));
  if ((rc = write_opts(ctx, &o)) != RIVER_SUCCESS)
    return rc;   /* the same on every instance */
  river_ctx_comm(ctx, &comm);
  river_ctx_instance(ctx, &inst, NULL);  /* its disk: the first copy's */
  river_input_schema(ctx, 0, &s);
  river_schema_record_size(s, &rsize);
  rc = river_pcoll_create(comm, name, s, &o, &pc);   /* collective */
  if (rc != RIVER_SUCCESS)
    return rc;
  /* Every instance reaches the agreement below, whatever failed. */
  while ((rc = river_get(ctx, 0, &recs, &n)) == RIVER_SUCCESS)
    if (wrc == RIVER_SUCCESS) {
      wrc = next_unit(ctx, pc);
      if (wrc == RIVER_SUCCESS)
        wrc = river_pcoll_write(pc, recs, n);
      if (wrc == RIVER_SUCCESS)
        wrc = river_ctx_charge_disk(ctx, inst,
                                    n * rsize * (size_t)o.replication);
    }
  if (rc == RIVER_EOS)
    rc = wrc;
  if (rc == RIVER_SUCCESS)
    river_ctx_failed(ctx, &failed);
  if (rc == RIVER_SUCCESS && failed) {
    /* An end of input after a failure upstream is not the whole data. */
    river_ctx_log(ctx, RIVER_LOG_DEBUG, "the flow failed elsewhere; "
                  "collection %s not committed", name);
    rc = RIVER_ESTATE;
  }
  rc = river_ctx_agree(ctx, rc);
  /* The commit waits for the flow's agreed outcome: a failure in
   * another branch, or after this stage's input ended, commits
   * nothing. Every instance registers the step, or none does. */
  if (rc == RIVER_SUCCESS) {
    p = malloc(sizeof *p);
    reg = p == NULL ? RIVER_ENOMEM : river_ctx_at_end(ctx, end_commit, p);
    if (p != NULL)
      p->pc = pc;
    rc = river_ctx_agree(ctx, reg);
    if (rc != RIVER_SUCCESS && reg == RIVER_SUCCESS)
      p->pc = NULL;   /* the step, registered here, now does nothing */
    else if (rc != RIVER_SUCCESS)
      free(p);
  }
  if (rc != RIVER_SUCCESS)
    river_pcoll_close(pc);   /* collective: removes this write's files */
  return rc;
}

/* Before the flow runs: a target already there is refused unless
 * `replace` (create's exclusive write and the file's NOREPLACE rename
 * refuse one made meanwhile). */
static int write_check(river_ctx *ctx)
{
  river_pcoll_opts o;
  const char *name = "";
  char path[4200];
  size_t len = 4096;
  int replace = 0;

  river_arg_bool(ctx, "replace", &replace);
  river_arg_str(ctx, "coll", &name);
  if (strncmp(name, FILE_PREFIX, strlen(FILE_PREFIX)) == 0)
    return river__file_replaceable(ctx, name + strlen(FILE_PREFIX), replace);
  coll_opts(ctx, &o);
  if (replace || river_pcoll_root(&o, path, &len) != RIVER_SUCCESS
      || strchr(name, '/') != NULL)
    return RIVER_SUCCESS;   /* create says what is wrong */
  len = strlen(path);
  snprintf(path + len, sizeof path - len, "/%s" RIVER_PCOLL_META_SUFFIX, name);
  if (access(path, F_OK) != 0)
    return RIVER_SUCCESS;
  path[len] = '\0';
  river_ctx_log(ctx, RIVER_LOG_ERROR, "collection %s exists in %s (replace: "
                "true replaces it once the new one is written)", name, path);
  return RIVER_EEXIST;
}

/* ------------------------------------------------------- registration */

void river__module_coll_read(void)
{
  river_module_decl d = RIVER_MODULE_DECL_INIT;

  d.min_outputs = d.max_outputs = 1;
  d.shares_rank = 1;
  d.args = "coll:str,root:str=,order:str=unordered,policy:str=gd,"
           "disk_rate:size=0,schema:str=,run_blocks:uint=0";
  d.schema = read_schema;
  d.doc = "read a parallel collection (through GD: every mirror at once; "
          "order unordered or stream), or a flat file of records, coll "
          "file:PATH (schema; default gensort's), a slice per instance";
  river_module_register("coll_read", coll_read, &d, NULL);
}

void river__module_coll_write(void)
{
  river_module_decl d = RIVER_MODULE_DECL_INIT;

  d.min_inputs = d.max_inputs = 1;
  d.shares_rank = 1;
  d.args = "coll:str,root:str=,mirror:uint=1,layout:str=partitioned,"
           "block_size:size=0,disk_rate:size=0,sync:bool=true,"
           "replace:bool=false";
  d.check = write_check;
  d.doc = "write a parallel collection, instance i writing partition i "
          "(from a pull edge: each unit a partition, by unit id), committed "
          "atomically at the end; or one flat file, coll file:PATH, each "
          "run at the position its tag gives, renamed into place once the "
          "flow has succeeded (sync: false skips the fsyncs, for scratch); "
          "a collection or file already there is refused unless "
          "replace: true";
  river_module_register("coll_write", coll_write, &d, NULL);
}
