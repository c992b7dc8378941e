/*
 * sched.c - the cooperative scheduler of src/sched_internal.h: how
 * several module instances share one rank (doc/design.md, "Several stages on one
 * rank"). Each task is a coroutine on its own mmap'd stack (glibc
 * ucontext: makecontext once, then swapcontext between the scheduler and
 * the task), with a PROT_NONE guard page below the stack, so an
 * overflow is a segmentation fault at once, never silent corruption.
 *
 * The scheduler runs the unfinished tasks in the order they were added,
 * one round after another. A task runs until it calls river__sched_yield
 * (or returns); its blocked flag says whether it got anything done. A
 * round in which every task that ran was blocked ends with one step of
 * River's wait backoff (river__nap, src/backoff.c: yields, then sleeps
 * from 1 us doubling to 1 ms), and any progress starts the backoff over,
 * so a rank whose tasks all wait uses little CPU and, as with river_wait,
 * answers within about 1 ms after a long wait. A round with progress
 * counts as progress for the watchdog (src/backoff.c); when that step times
 * out, every later yield returns RIVER_ETIMEDOUT, so each task's wait
 * gives up and its module fails.
 *
 * Built with AddressSanitizer (configure --enable-sanitizers), every
 * switch is announced to it (__sanitizer_start_switch_fiber before,
 * __sanitizer_finish_switch_fiber after), or it would take the task
 * stacks for a corrupted main stack; a finishing task passes NULL so
 * that its fake stack is freed.
 */
#include "river_internal.h"
#include "sched_internal.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define SCHED_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SCHED_ASAN 1
#endif
#endif

#ifdef SCHED_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

struct river__task {
  river__sched *sched;
  river__task_fn fn;
  void *arg;
  ucontext_t ctx;
  unsigned char *map;    /* guard page + stack */
  size_t map_size;
  int done, status, blocked;
  void *fake;            /* ASan: this task's fake stack while away */
};

struct river__sched {
  size_t stack_size, page;
  river__task **tasks;
  int ntasks, cap;
  river__task *cur;      /* the task running, or NULL */
  int stop;              /* RIVER_ETIMEDOUT once the watchdog fired: what
                            every yield returns from then on */
  ucontext_t main;       /* the scheduler's own context */
  void *fake;            /* ASan: the scheduler's fake stack */
  const void *main_bottom; /* ASan: the scheduler's stack */
  size_t main_size;
  river__sched_stats stats;
};

static _Thread_local river__sched *running; /* the scheduler in river__sched_run
                                           (on this thread) */

/* ASan's view of switches (no-ops without it). */
static void start_switch(void **fake, const void *bottom, size_t size)
{
#ifdef SCHED_ASAN
  __sanitizer_start_switch_fiber(fake, bottom, size);
#else
  (void)fake; (void)bottom; (void)size;
#endif
}

static void finish_switch(void *fake, const void **bottom, size_t *size)
{
#ifdef SCHED_ASAN
  __sanitizer_finish_switch_fiber(fake, bottom, size);
#else
  (void)fake; (void)bottom; (void)size;
#endif
}

int river__sched_create(size_t stack_size, river__sched **out)
{
  river__sched *s;
  long page = sysconf(_SC_PAGESIZE);

  if (out == NULL)
    return RIVER_EINVAL;
  if (page <= 0)
    page = 4096;
  if (stack_size == 0)
    stack_size = RIVER__SCHED_STACK_DEFAULT;
  if (stack_size > SIZE_MAX / 2)
    return RIVER_EINVAL;
  if ((s = calloc(1, sizeof *s)) == NULL)
    return RIVER_ENOMEM;
  s->page = (size_t)page;
  s->stack_size = (stack_size + s->page - 1) / s->page * s->page;
  *out = s;
  return RIVER_SUCCESS;
}

/* Where every task starts (makecontext passes no pointer portably: the
 * task is the running scheduler's current one). Never returns: a task
 * that has finished switches back for good. */
static void trampoline(void)
{
  river__sched *s = running;
  river__task *t = s->cur;

  finish_switch(NULL, &s->main_bottom, &s->main_size);
  t->status = t->fn(t->arg);
  t->done = 1;
  start_switch(NULL, s->main_bottom, s->main_size);
  setcontext(&s->main);
  abort(); /* setcontext does not return */
}

int river__sched_spawn(river__sched *s, river__task_fn fn, void *arg,
                       river__task **out)
{
  river__task *t, **grown;
  void *map;

  if (s == NULL || fn == NULL)
    return RIVER_EINVAL;
  if (s->ntasks == s->cap) {
    int cap = s->cap ? 2 * s->cap : 8;
    if ((grown = realloc(s->tasks, (size_t)cap * sizeof *grown)) == NULL)
      return RIVER_ENOMEM;
    s->tasks = grown;
    s->cap = cap;
  }
  if ((t = calloc(1, sizeof *t)) == NULL)
    return RIVER_ENOMEM;
  t->map_size = s->stack_size + s->page;
  map = mmap(NULL, t->map_size, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (map == MAP_FAILED) {
    river__error("sched: cannot map a %zu-byte task stack", t->map_size);
    free(t);
    return RIVER_ENOMEM;
  }
  t->map = map;
  if (mprotect(t->map, s->page, PROT_NONE) != 0 || getcontext(&t->ctx) != 0) {
    river__error("sched: cannot set up a task stack");
    munmap(t->map, t->map_size);
    free(t);
    return RIVER_ENOMEM;
  }
  t->ctx.uc_stack.ss_sp = t->map + s->page;
  t->ctx.uc_stack.ss_size = s->stack_size;
  t->ctx.uc_link = NULL;
  makecontext(&t->ctx, trampoline, 0);
  t->sched = s;
  t->fn = fn;
  t->arg = arg;
  s->tasks[s->ntasks++] = t;
  if (out != NULL)
    *out = t;
  return RIVER_SUCCESS;
}

/* Run task t until it yields or returns; its stack is unmapped once it
 * has returned. */
static void resume(river__sched *s, river__task *t)
{
  s->cur = t;
  t->blocked = 0;
  s->stats.switches++;
  start_switch(&s->fake, t->map + s->page, s->stack_size);
  swapcontext(&s->main, &t->ctx);
  finish_switch(s->fake, NULL, NULL);
  s->cur = NULL;
  if (t->done) {
    munmap(t->map, t->map_size);
    t->map = NULL;
  }
}

/* One pass over the unfinished tasks: *left gets how many have not
 * returned, *progress whether any made progress. */
static void round_once(river__sched *s, int *left, int *progress)
{
  int i;

  *left = 0;
  *progress = 0;
  for (i = 0; i < s->ntasks; i++) { /* tasks added meanwhile run too */
    river__task *t = s->tasks[i];
    if (t->done)
      continue;
    resume(s, t);
    *progress |= t->done || !t->blocked;
    *left += !t->done;
  }
  if (*progress)
    river__progress();
  s->stats.rounds++;
}

/* The outcome once every task has returned: the first failure. */
static int outcome(const river__sched *s)
{
  int i, rc = RIVER_SUCCESS;

  for (i = 0; i < s->ntasks && rc == RIVER_SUCCESS; i++)
    rc = s->tasks[i]->status;
  return rc;
}

int river__sched_run(river__sched *s)
{
  long ns = RIVER_BACKOFF_START;
  int left, progress;

  if (s == NULL)
    return RIVER_EINVAL;
  if (running != NULL)
    return RIVER_ESTATE;
  running = s;
  do {
    round_once(s, &left, &progress);
    if (left > 0 && !progress) {
      s->stats.idle_rounds++;
      /* The watchdog: each task's next yield (its wait's backoff) then
       * returns the code, and the task's wait gives up. */
      if (river__nap(&ns) != RIVER_SUCCESS)
        s->stop = RIVER_ETIMEDOUT;
    } else {
      ns = RIVER_BACKOFF_START;
    }
  } while (left > 0);
  running = NULL;
  return outcome(s);
}

int river__sched_step(river__sched *s, int *done)
{
  int left, progress;

  if (s == NULL || done == NULL)
    return RIVER_EINVAL;
  if (running != NULL)
    return RIVER_ESTATE;
  running = s;
  round_once(s, &left, &progress);
  running = NULL;
  if (left > 0 && !progress)
    s->stats.idle_rounds++;
  *done = left == 0;
  return *done ? outcome(s) : RIVER_SUCCESS;
}

int river__sched_yield(int blocked)
{
  river__sched *s = running;
  river__task *t = s != NULL ? s->cur : NULL;

  if (t == NULL)
    return RIVER_ESTATE;
  t->blocked = blocked != 0;
  start_switch(&t->fake, s->main_bottom, s->main_size);
  swapcontext(&t->ctx, &s->main);
  finish_switch(t->fake, &s->main_bottom, &s->main_size);
  return s->stop;
}

river__task *river__sched_current(void)
{
  return running != NULL ? running->cur : NULL;
}

void *river__task_arg(const river__task *t)
{
  return t != NULL ? t->arg : NULL;
}

int river__task_done(const river__task *t, int *status)
{
  if (t == NULL || !t->done)
    return 0;
  if (status != NULL)
    *status = t->status;
  return 1;
}

void river__sched_stats_get(const river__sched *s, river__sched_stats *st)
{
  if (s != NULL && st != NULL)
    *st = s->stats;
}

void river__sched_destroy(river__sched *s)
{
  int i;

  if (s == NULL)
    return;
  for (i = 0; i < s->ntasks; i++) {
    if (s->tasks[i]->map != NULL)
      munmap(s->tasks[i]->map, s->tasks[i]->map_size);
    free(s->tasks[i]);
  }
  free(s->tasks);
  free(s);
}
