/*
 * river_internal.h - the base helpers every River source file may use,
 * never installed: logging, the wait backoff and watchdog, sleeping to a
 * deadline, collectives that wait without blocking a rank's other
 * tasks, agreement, hashing, fault steps. Internal non-static names
 * carry the river__ prefix.
 *
 * The base headers, which any file of any concept may include: this
 * one, and
 *   file_internal.h   file-system helpers (src/file.c): open only a
 *                     regular file, sync a directory, errno to a code,
 *                     unguessable names, a job's locked records of
 *                     what it leaves while it runs;
 *   sched_internal.h  the cooperative scheduler (src/sched.c): the tasks
 *                     a rank's module instances run as, and the yield
 *                     every wait takes in a task (river__backoff);
 *   rma.h             every RMA window of the library (src/rma.c);
 *   progress_internal.h  the progress line's sampler and tick
 *                     (src/progress.c), which the flow runtime drives.
 * A header is base when it carries no concept's types (no collection,
 * queue, flow, schema, ...), only its own and the public API's, and
 * rests only on lower layers: the OS, MPI and this file. Every other
 * private header is one concept's, included by that concept's files
 * only:
 *   collections         collection_internal.h (collection.c,
 *                       collection_write.c), included by
 *                       pcoll_internal.h (pcoll*.c): single-disk and
 *                       parallel collections are one concept
 *                       (doc/collections.md), a partition copy being a
 *                       single-disk collection;
 *   distributed queue   dq_internal.h (dq*.c);
 *   GD                  gd_internal.h (gd.c, gd_client.c, gd_server.c)
 *                       with gd_alloc_internal.h (gd_alloc.c);
 *   flows               flow_internal.h (flow.c, flow_check.c,
 *                       flowspec.c, module.c) with flow_run_internal.h
 *                       (flow_run.c, flow_io.c, flow_abort.c,
 *                       flow_emulate.c, flow_partition.c), and
 *                       modules/modules.h (module.c's registry hook, the
 *                       built-in modules).
 * What one concept uses of another goes through the public API
 * (the headers under include/river): GD reads a collection's copies with
 * river_pcoll_read_copy_level, _check_copy and _read_copy_range, the
 * flow runtime sizes its puts with river_dq_put_max and names the ranks
 * a queue waits for with river_dq_waiting_for. This file declares base
 * helpers only.
 */
#ifndef RIVER_INTERNAL_H
#define RIVER_INTERNAL_H

#include "config.h"
#include "river.h"

#include <math.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define RIVER_PATH_MAX 4096       /* any path River builds */

/* Rank in MPI_COMM_WORLD for log prefixes, or -1 when MPI is not up. */
int river__log_rank(void);

/* While hushed (river__log_hush(1), undone by river__log_hush(0); they
 * nest), errors, warnings and notes are said at debug level: a flow's
 * check runs every module's schema callback on every rank and lets only
 * rank 0 say what they find (src/flow_check.c). */
void river__log_hush(int on);

/* How many errors this process has said so far (hushed ones not
 * counted): a caller that would add a line of its own about a failure
 * says it only if nothing was said meanwhile (src/flow_run.c). */
unsigned long river__log_errors(void);

/* Read RIVER_LOG into the log level (warns on a value it cannot parse). */
void river__log_init_from_env(void);

/* Copy the NUL-terminated str into buf following the caller-buffer
 * contract of river_build_info() and river_topo_describe(). */
int river__copy_out(const char *str, char *buf, size_t *len);

/* One step of River's wait backoff (src/wait.c): in a task, a yield to
 * the rank's other tasks; elsewhere river__nap (src/backoff.c): a few
 * yields, then sleeps doubling from 1 us to 1 ms. Either runs the
 * backoff hooks first. Start each wait with long ns =
 * RIVER_BACKOFF_START. RIVER_SUCCESS, or RIVER_ETIMEDOUT once the
 * watchdog (RIVER_TIMEOUT) has seen no progress for that long: the
 * caller stops waiting, logs what it waited for with
 * river__timeout_error and returns the code. */
#define RIVER_BACKOFF_START 0L
int river__backoff(long *ns);
int river__nap(long *ns);
void river__run_hooks(void);

/* Sleep until river_wtime() >= target, however often nanosleep wakes
 * early; never spins, never yields to other tasks (src/backoff.c). An
 * infinite target sleeps forever. */
void river__sleep_until(double target);

/* Seconds of CPU the calling thread has used (src/timing.c): a cost
 * measured with it leaves out the time the OS ran something else. */
double river__thread_cpu(void);

/* 1 if x is a finite number > 0 (NaN fails every comparison). */
static inline int river__positive_finite(double x)
{
  return isfinite(x) && x > 0;
}

/* The watchdog (src/backoff.c). river__watchdog_init reads RIVER_TIMEOUT
 * (river_init; RIVER_EINVAL, logged, for a value that is not seconds
 * >= 0); river__watchdog_seconds gives it (0: off). river__progress
 * counts a sign of progress (a message that completed, work done). river__watchdog_fired: 1 once it has ended a wait (then
 * every later backoff fails at once). river__timeout_error logs, once per process, that the
 * watchdog ended a wait for `what`, naming ranks[0..n) of comm by their
 * world ranks (n 0: none known), and returns RIVER_ETIMEDOUT. */
int river__watchdog_init(void);
double river__watchdog_seconds(void);
int river__watchdog_fired(void);
void river__progress(void);
int river__timeout_error(MPI_Comm comm, const int *ranks, int n,
                         const char *what);

/* river_wait for a collective request over comm: where the watchdog
 * ends it, the message names comm's other ranks (MPI does not say which
 * one is late). src/agree.c's collectives wait so. */
int river__wait_collective(MPI_Request *req, MPI_Comm comm);

/* Work a rank does at every backoff step, wherever in River it waits:
 * its paced queues give back held credits and its MSG-path queues serve
 * (src/dq_credit.c), a running flow forwards abort notices
 * (src/flow_run.c). The owner keeps the hook (no allocation) and adds
 * it once, removing it before it is freed; hooks run newest first. */
struct river__hook {
  void (*fn)(void *arg);
  void *arg;
  struct river__hook *next;
};
void river__backoff_hook_add(struct river__hook *h);
void river__backoff_hook_remove(struct river__hook *h);

/* River's collectives (src/agree.c): the MPI collective of the same name,
 * started nonblocking on heap copies of the buffers and waited for with
 * river_wait, so that ranks waiting for a late one back off instead of
 * spinning. RIVER_SUCCESS, RIVER_EMPI if MPI fails, or RIVER_ETIMEDOUT
 * if the watchdog ended the wait or had fired before (nothing started).
 * gather/allgather: count items from each rank. */
int river__comm_dup(MPI_Comm comm, MPI_Comm *out);
int river__barrier(MPI_Comm comm);
int river__bcast(void *buf, int count, MPI_Datatype type, int root,
                 MPI_Comm comm);
int river__gather(const void *in, int count, MPI_Datatype type, void *out,
                  int root, MPI_Comm comm);
int river__allgather(const void *in, int count, MPI_Datatype type, void *out,
                     MPI_Comm comm);
/* Gatherv/scatterv of bytes: counts and displs (bytes) matter at root. */
int river__gatherv(const void *in, int count, void *out, const int *counts,
                   const int *displs, int root, MPI_Comm comm);
int river__scatterv(const void *in, const int *counts, const int *displs,
                    void *out, int count, int root, MPI_Comm comm);
int river__allreduce(const void *in, void *out, int count, MPI_Datatype type,
                     MPI_Op op, MPI_Comm comm);

/* Agree on a collective outcome over comm: every rank gets the most
 * negative rc of any rank (RIVER_EMPI if the reduction fails,
 * RIVER_ETIMEDOUT if the watchdog ended it). */
int river__agree(MPI_Comm comm, int rc);

/* Agree that every rank of comm passed the same n (<= RIVER_AGREE_SAME_MAX)
 * values and that local_rc, this rank's own argument check, succeeded
 * everywhere: one MPI_Allreduce MAX of each value and its complement
 * (which gives min and max). Otherwise RIVER_EINVAL on every rank, with
 * the differing value named in the log ("WHAT: ranks passed different
 * NAME"). Every rank must call it, even one whose own check failed. */
#define RIVER_AGREE_SAME_MAX 16
int river__agree_same(MPI_Comm comm, const char *what, int local_rc, int n,
                      const char *const names[], const uint64_t values[]);

/* splitmix64's output function: a well-mixed 64-bit value from x. River's
 * generators (gensort rows, queue choices, generation ids) are built on
 * it; see src/core.c for why it is written here. */
uint64_t river__mix64(uint64_t x);

/* The golden-ratio increment of splitmix64's counter. */
#define RIVER_MIX64_STEP 0x9e3779b97f4a7c15ULL

/* Test-only fault injection at a named step (src/fault.c): 1 if
 * $RIVER_TEST_FAULT says the step fails; may also kill the process or
 * sleep. 0 (and nothing else) when the variable is unset. */
int river__test_fault(const char *step);

/* Keep p for the rest of the process (src/wait.c): the buffer of an MPI
 * request that was left pending (a flow failed while a module waited
 * for its stage's peers, which may never join) must outlive it, and MPI
 * may still write into it. Kept reachable, so leak checkers are quiet;
 * never freed. NULL is a no-op. */
void river__orphan(void *p);

/* Shorthands for the internal logger. */
#define river__error(...) river_log(RIVER_LOG_ERROR, __VA_ARGS__)
#define river__warn(...)  river_log(RIVER_LOG_WARN, __VA_ARGS__)
#define river__info(...)  river_log(RIVER_LOG_INFO, __VA_ARGS__)
#define river__debug(...) river_log(RIVER_LOG_DEBUG, __VA_ARGS__)

#endif /* RIVER_INTERNAL_H */
