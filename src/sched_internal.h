/*
 * sched_internal.h - River's cooperative scheduler (src/sched.c), one of
 * the base headers (river_internal.h): any file may ask whether it runs
 * in a task and yield, as every wait does (river__backoff). Never
 * installed. Runs several tasks (the module instances placed on one
 * rank) on one thread, each on its own stack. (Not "sched.h": that name
 * would hide the system's <sched.h> from files built with -Isrc.) A task gives up the CPU only when it calls
 * river__sched_yield, saying whether it could make progress; when a whole
 * round of tasks was blocked the scheduler backs off as river_wait does
 * (yields, then sleeps from 1 us doubling to 1 ms), so a rank whose tasks
 * all wait does not spin.
 *
 * One scheduler runs at a time per process (the running one is what
 * river__sched_yield and river__sched_current see); handles are not
 * thread-safe.
 */
#ifndef RIVER_SCHED_INTERNAL_H
#define RIVER_SCHED_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#define RIVER__SCHED_STACK_DEFAULT ((size_t)8 << 20)  /* 8 MiB, as a
                                   thread's; only pages used are backed */

typedef struct river__sched river__sched;
typedef struct river__task river__task;

/* A task's body: its return value is the task's status. */
typedef int (*river__task_fn)(void *arg);

/* Counters of a scheduler (river__sched_stats). */
typedef struct river__sched_stats {
  uint64_t switches;     /* task resumptions */
  uint64_t rounds;       /* passes over the unfinished tasks */
  uint64_t idle_rounds;  /* rounds in which every task was blocked */
} river__sched_stats;

/* A new scheduler whose tasks get stack_size bytes of stack each (0:
 * RIVER__SCHED_STACK_DEFAULT; rounded up to whole pages), each with an
 * inaccessible guard page below it so that an overflow faults.
 * RIVER_EINVAL for a NULL out, RIVER_ENOMEM. */
int river__sched_create(size_t stack_size, river__sched **out);

/* Add a task running fn(arg); it first runs in river__sched_run, in the
 * order added (a task may add tasks; they join the current run).
 * *out (may be NULL) gets its handle, owned by the scheduler.
 * RIVER_EINVAL for NULL s or fn, RIVER_ENOMEM if its stack cannot be
 * mapped. */
int river__sched_spawn(river__sched *s, river__task_fn fn, void *arg,
                       river__task **out);

/* Run the tasks round-robin until every one has returned. RIVER_SUCCESS
 * if every task returned RIVER_SUCCESS, else the status of the first
 * (in the order added) that did not. RIVER_ESTATE if called from a task
 * or while another scheduler runs; RIVER_EINVAL for NULL. */
int river__sched_run(river__sched *s);

/* One pass over the unfinished tasks, without waiting (for callers
 * that interleave other work: river_flow_test). *done gets 1 once every
 * task has returned, and then the outcome is returned as by
 * river__sched_run; RIVER_SUCCESS before. RIVER_ESTATE as for run. */
int river__sched_step(river__sched *s, int *done);

/* From a task: give the CPU to the next task. blocked = 1: the task
 * could not make progress (it waits for something); 0: it did. Returns
 * when the task's turn comes again: RIVER_SUCCESS, or RIVER_ETIMEDOUT
 * once the watchdog has fired in the scheduler (the task should stop
 * waiting and fail). RIVER_ESTATE outside a task. */
int river__sched_yield(int blocked);

/* The task running now, or NULL outside a task. */
river__task *river__sched_current(void);

/* The argument a task was spawned with. */
void *river__task_arg(const river__task *t);

/* 1 if the task has returned (*status, if not NULL, gets its return
 * value), 0 if not yet. */
int river__task_done(const river__task *t, int *status);

/* The scheduler's counters so far. */
void river__sched_stats_get(const river__sched *s, river__sched_stats *st);

/* Free the scheduler, its tasks and their stacks (NULL: no-op). Tasks
 * that have not returned are dropped without being resumed. Not from a
 * task of s. */
void river__sched_destroy(river__sched *s);

#endif /* RIVER_SCHED_INTERNAL_H */
