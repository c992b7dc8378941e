/*
 * flow_run_internal.h - a running flow, as the flow runtime's files
 * share it: src/flow_run.c (set-up, the scheduler, tear-down),
 * src/flow_io.c (what a module calls: get, put, select, ...),
 * src/flow_abort.c (abort notices), src/flow_emulate.c (a stage
 * instance's emulated CPU and disks) and src/flow_partition.c (where an
 * exchange edge sends a record).
 *
 * Every rank runs the instances placed on it as cooperative tasks of
 * one scheduler (src/sched.c): a module that cannot get or put now
 * yields, and the rank backs off when every task is blocked. Each edge
 * is one distributed queue over the flow's communicator; on a rank that
 * holds both ends of an edge (two stages on the same ranks) the same
 * queue handle serves both tasks, which is safe because only one task
 * runs at a time.
 */
#ifndef RIVER_FLOW_RUN_INTERNAL_H
#define RIVER_FLOW_RUN_INTERNAL_H

#include "flow_internal.h"
#include "progress_internal.h"
#include "sched_internal.h"

/* One input of an instance. */
struct river__in {
  river_dq *q;
  int holding;             /* a message from the queue is lent out */
  int got;                 /* a message was handed over and no EOS since:
                              its unit and tag can be asked for (also
                              when a sink filter gave the message back) */
  int ended;               /* RIVER_EOS seen */
  int pending;             /* select fetched a message not yet handed
                              over: recs/n */
  const void *recs;
  size_t n;
  size_t record_size;
  river_pred *pred;        /* the edge's filter, at the sink: what
                              passes is copied to fbuf (fcap records) */
  unsigned char *fbuf;
  size_t fcap;
  uint64_t *units_from;    /* a PULL edge's: units taken from each
                              producer (nproducers; for the stats file) */
  int nproducers;
};

/* One output of an instance. */
struct river__out {
  river_dq *q;
  size_t record_size;
  size_t chunk;            /* records per put call: one message's worth */
  int closed;
  int used;                /* something was put, reserved or committed */
  int copy;                /* the queue places records itself (exchange,
                              pull): reserve lends buf, commit puts it */
  unsigned char *buf;      /* chunk records, for copy */
  river_pred *pred;        /* the edge's filter, at the source: what
                              passes a put is copied to fbuf (chunk
                              records) and sent from there */
  unsigned char *fbuf;
};

/* A stage instance's emulation (src/flow_emulate.c): its CPU and disks. */
struct river__edisk {
  int disk;
  river_throttle *thr;
};

struct river__emul {
  river_perturb *perturb;  /* the stage's perturb, parsed once, or NULL */
  river_throttle *cpu;     /* cpu_rate's bucket, or NULL: real speed */
  double t0;               /* the instance's start (perturb times) */
  double cpu_ready;        /* river_wtime() when cpu is done with what
                              the module got (src/flow_io.c) */
  double disk_rate;        /* the module's disk_rate; 0: real speed */
  struct river__edisk *disks; /* a bucket per disk charged, at first use */
  int ndisks, disks_cap;
};

/* Read ctx's emulation arguments into e (zeroed). RIVER_ENOMEM. */
int river__emul_init(struct river__emul *e, river_ctx *ctx);
void river__emul_free(struct river__emul *e);

/* What a get handed over: bytes charged to the CPU (no wait here: the
 * next get waits until e->cpu_ready). */
void river__emul_charge_cpu(struct river__emul *e, int instance,
                            size_t bytes);

/* bytes moved to or from disk `disk`: waits as that disk would. */
int river__emul_charge_disk(struct river__emul *e, int disk, size_t bytes);

/* An instance's counters over time, for the stats file: rows of
 * RIVER__SERIES_COLS doubles (seconds since the run began on this rank,
 * records in, bytes in, records out, bytes out, seconds blocked in get,
 * in put), one a grid step (src/flow_series.c), the last at its return. */
#define RIVER__SERIES_COLS 7
struct river__series {
  double *v;
  int n, cap;              /* rows held, rows of room */
  int ended;               /* the row at its return is taken */
};

/* A module instance on this rank: its context, task and ports. */
struct river__inst {
  river_ctx ctx;           /* ctx.run points back here */
  river__task *task;
  struct river__in *in;
  struct river__out *out;
  int next_select;         /* where river_select starts looking */
  river_module_stats st;
  int status;
  MPI_Comm comm;           /* the stage's instances (river_ctx_comm) */
  struct river__emul emul; /* its emulated CPU and disks */
  struct river__end *ends; /* its end steps (river_ctx_at_end), run in
                              order once the flow's outcome is agreed */
  int nends, ends_cap;
  struct river__series series;
  uint64_t *gd_words;      /* the GD read it kept (river_ctx_keep_gd), */
  int gd_nwords;           /* as the stats file gathers it */
};

struct river__run;

/* An end step a module registered: fn(arg, outcome). */
struct river__end {
  river_end_fn fn;
  void *arg;
};

/* Run the end steps of this rank's instances (stage order, then each
 * instance's in registration order) with the agreed outcome, once:
 * the first publishing step's failure, or RIVER_SUCCESS (src/flow_io.c). */
int river__run_ends(struct river__run *r, int outcome);

/* The instances' series (src/flow_series.c): start the grid; take a row
 * of every running instance of r's where one is due (from every get,
 * put and wait: cheap when none is); take in's row at its return; free
 * in's rows; report their cost. */
void river__series_start(struct river__run *r);
void river__series_tick(struct river__inst *in);
void river__series_end(struct river__inst *in);
void river__series_free(struct river__inst *in);
/* A row of in's counters now, at time t (seconds since the run began). */
void river__series_fill(const struct river__inst *in, double t, double *row);
/* Log (debug) what the series cost this rank: ticks and rows' time. */
void river__series_report(const struct river__run *r);

/* An edge's queue as this rank saw it, kept when the run finishes
 * (the queue is gone after): what river_stats_add_flow gathers. */
struct river__edge_stats {
  uint64_t records_out, messages_out, records_in, messages_in;
  uint64_t credit_stalls;
  double put_wait_seconds, get_wait_seconds;
  int nconsumers;          /* msgs_to's entries (0: not a producer) */
  uint64_t *msgs_to;       /* messages sent to each consumer index */
  int nproducers;          /* units_from's entries (0: not a consumer of
                              a PULL edge) */
  uint64_t *units_from;    /* units taken from each producer index */
};

/* A flow's run on this rank (river_flow.run). */
struct river__run {
  river__sched *sched;
  river_dq **dqs;          /* one per edge (every rank takes part) */
  int *edge_path;          /* each edge queue's credit path (its
                              river_dq_stats.credit_path), kept after
                              the queues are gone */
  struct river__part *parts; /* exchange partitioners, one per edge */
  MPI_Comm *stage_comm;    /* per stage: its instances, or
                              MPI_COMM_NULL off the stage */
  struct river__inst *inst;
  int ninst;
  int done;                /* every task has returned */
  int outcome;             /* agreed outcome, once finished */
  unsigned long errors0;   /* river__log_errors() when the run began */
  char unsaid[300];        /* this rank's first failure that nothing
                              said (a module that failed silently, or
                              one whose peer's failure had not yet
                              been said): said at the end only if no
                              rank said anything (finish) */
  int finished;            /* queues destroyed, outcome agreed */
  struct river__edge_stats *edge_st; /* per edge, kept at the end */
  river_progress *progress; /* the progress line's (river_flow_progress),
                              NULL before the run starts and after */
  double series_t0;        /* river_wtime() when the run began here */
  double series_every;     /* seconds between rows (doubles when full) */
  double series_due;       /* river_wtime() of the next row */
  uint64_t series_ticks;   /* river__series_tick calls (a clock read) */
  double series_spent;     /* CPU time taking rows */
  /* Abort notices: a rank whose instance fails tells every other rank
   * along a binomial tree rooted at it (each rank forwards the notice
   * to its children in that tree, then acknowledges to its parent once
   * its whole subtree has), so that instances waiting on their stage's
   * peers (river_ctx_wait) stop waiting, and waits for the
   * acknowledgements of its children (every rank has its notice) before
   * the instance's outputs close: a consumer that sees the end of its
   * input (which a failure upstream also ends) has the notice by then,
   * and coll_write does not commit a part of the data. O(log n) sends
   * and one posted receive a rank, where a notice to every rank and a
   * receive posted for each were O(n) (issue 41). Every rank forwards
   * while it waits anywhere in River (abort_hook, a backoff hook), when
   * a module asks whether the flow failed, and in abort_close. */
  MPI_Comm abort_comm;
  MPI_Request abort_rx;    /* the one receive, any source: a notice or
                              an acknowledgement (abort_msg) */
  int *abort_msg;          /* its buffer (2 ints, on the heap: a receive
                              the watchdog leaves posted outlives the
                              run): ABORT_NOTICE or ABORT_ACK, and the
                              tree's origin */
  struct river__abort_tree **trees;  /* those this rank is in so far:
                              the first RIVER__ABORT_POOL in pool, the
                              others allocated one by one (a tree never
                              moves: its sends' buffers are in it) */
  struct river__abort_tree *pool;
  int ntrees, captrees;
  struct river__hook abort_hook;
  int abort_hooked;
  int abort_sent, abort_seen;
};


/* One abort notice's tree, at this rank: its origin, this rank's
 * parent in it (-1 at the origin) and children (at most one per bit of
 * the ranks' count), the acknowledgements still to come from them, and
 * the sends this rank made in it (the notices, then the acknowledgement
 * to its parent), whose buffers these are. */
#define RIVER__ABORT_FANOUT 32
#define RIVER__ABORT_POOL 4      /* trees allocated at the start */
struct river__abort_tree {
  int origin, parent;
  int pending;             /* children not yet acknowledged */
  int acked;               /* the acknowledgement to the parent went */
  int nreq;
  MPI_Request req[RIVER__ABORT_FANOUT + 1];
  int note[2], ack[2];
};

/* The partitioner of an exchange edge (src/flow_partition.c): its key, and
 * how records are placed: by hash, by range over the evenly split key
 * space, or (set by the producing module, river_set_partitioner) by
 * nsplit splitters, normalized keys (river_key_norm) of k.size bytes
 * each; norm is room for one record's normalized key. */
enum river__part_mode { RIVER__PART_HASH, RIVER__PART_RANGE,
                        RIVER__PART_SPLIT };
struct river__part {
  river_key k;
  int mode;                /* enum river__part_mode */
  unsigned char *split, *norm;
  size_t nsplit;
};

/* p (overwritten: free it first) for records of schema s exchanged on
 * `field` (NULL: s's key) by `by`. RIVER_EINVAL for a field s lacks
 * (the check has said so), RIVER_ENOTSUP for a range on a
 * floating-point key, RIVER_ENOMEM. */
int river__part_init(struct river__part *p, const river_schema *s,
                     const char *field, river_exchange_by by);
int river__part_is_float(const struct river__part *p);
void river__part_free(struct river__part *p);

/* Place by n splitters (bare keys as stored, in key order): RIVER_EINVAL
 * with *bad the first splitter below the one before it; RIVER_ENOMEM. */
int river__part_set_splitters(struct river__part *p, const void *keys,
                              size_t n, size_t *bad);

/* src/flow_abort.c: open the abort channel (collective: a dup of f's
 * communicator) and close it (collective when finished, the tasks
 * having run: every tree taken part in to its end first; 0, set-up
 * failed and no notice went: freed at once). */
int river__flow_abort_open(river_flow *f, struct river__run *r);
void river__flow_abort_close(river_flow *f, struct river__run *r,
                             int finished);

/* src/flow_abort.c: while f runs, tell every rank that an instance
 * failed here (once), and whether this rank knows that any instance has
 * failed (a module that waits on its stage's peers, or commits what it
 * received, asks). */
void river__flow_abort(river_flow *f);
int river__flow_aborted(river_flow *f);

/* src/flow_io.c: after the module function returned, close its outputs
 * and drain (discarding) what is left in its inputs, yielding while the
 * queues are not ready. Returns the first error of a close. */
int river__inst_finish(struct river__inst *in);

/* src/flow_partition.c: the partition function of every exchange edge (ctx:
 * its struct river__part). */
int river__part_fn(const void *record, int n, void *ctx);

#endif /* RIVER_FLOW_RUN_INTERNAL_H */
