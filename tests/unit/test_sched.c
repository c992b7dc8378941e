/*
 * test_sched - the cooperative scheduler (src/sched_internal.h),
 * compiled in (it is internal): tasks interleave round-robin in the order added, a task
 * that returns at once, statuses, tasks added by a task, deep recursion
 * within the stack, the guard page (an overflow kills a forked child, it
 * corrupts nothing), misuse refused, that a round of blocked tasks backs
 * off (CPU time well below wall time over 200 ms of everything blocked)
 * and that progress resets the backoff; River's wait backoff
 * (river__backoff, under river_wait and every blocking River call)
 * yields to the other tasks when called from a task, and its yield
 * phase outside a task in each of its three modes (src/wait.c): 64
 * yields with RIVER_SPIN_US=0, a spin of RIVER_SPIN_US, and, on an
 * oversubscribed node, 64 yields that handed the core over or 1 ms,
 * never fewer. It also prints the cost of one
 * task switch (yield and resume) for doc/design.md; no timing is
 * asserted there.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <river.h>
#include "river_internal.h"
#include "sched_internal.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(clockid_t c)
{
  struct timespec ts;

  clock_gettime(c, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------ interleaving */

#define NT 50
#define NI 20

struct trace {
  int log[NT * NI][2];
  int n;
};

struct worker {
  struct trace *tr;
  int id;
};

static int work(void *arg)
{
  struct worker *w = arg;
  int i;

  assert_ptr_equal(river__task_arg(river__sched_current()), arg);
  for (i = 0; i < NI; i++) {
    w->tr->log[w->tr->n][0] = w->id;
    w->tr->log[w->tr->n][1] = i;
    w->tr->n++;
    assert_int_equal(river__sched_yield(0), RIVER_SUCCESS);
  }
  return RIVER_SUCCESS;
}

static void test_interleave(void **state)
{
  static struct trace tr;
  struct worker w[NT];
  river__task *t[NT];
  river__sched_stats st;
  river__sched *s = NULL;
  int i, status = -1;

  (void)state;
  assert_int_equal(river__sched_create(64 << 10, &s), RIVER_SUCCESS);
  for (i = 0; i < NT; i++) {
    w[i].tr = &tr;
    w[i].id = i;
    assert_int_equal(river__sched_spawn(s, work, &w[i], &t[i]),
                     RIVER_SUCCESS);
    assert_int_equal(river__task_done(t[i], &status), 0);
  }
  assert_null(river__sched_current());
  assert_int_equal(river__sched_run(s), RIVER_SUCCESS);
  /* Round-robin in the order added: entry j is task j % NT's turn
   * j / NT. */
  assert_int_equal(tr.n, NT * NI);
  for (i = 0; i < NT * NI; i++) {
    assert_int_equal(tr.log[i][0], i % NT);
    assert_int_equal(tr.log[i][1], i / NT);
  }
  for (i = 0; i < NT; i++) {
    assert_int_equal(river__task_done(t[i], &status), 1);
    assert_int_equal(status, RIVER_SUCCESS);
  }
  river__sched_stats_get(s, &st);
  assert_int_equal(st.switches, NT * (NI + 1));
  assert_int_equal(st.rounds, NI + 1);
  assert_int_equal(st.idle_rounds, 0);
  river__sched_destroy(s);
}

/* ------------------------------------------- statuses, spawn in a task */

static int counter;

static int quick(void *arg)
{
  (void)arg;
  return RIVER_EIO;
}

static int slow(void *arg)
{
  int i;

  (void)arg;
  for (i = 0; i < 5; i++) {
    counter++;
    river__sched_yield(i % 2);
  }
  return RIVER_SUCCESS;
}

static int spawner(void *arg)
{
  river__sched *s = arg;
  river__task *child = NULL;

  assert_int_equal(river__sched_spawn(s, slow, NULL, &child), RIVER_SUCCESS);
  /* Nested runs are refused. */
  assert_int_equal(river__sched_run(s), RIVER_ESTATE);
  river__sched_yield(0);
  assert_int_equal(river__task_done(child, NULL), 0);
  return RIVER_SUCCESS;
}

static void test_status(void **state)
{
  river__sched *s = NULL;
  river__task *a = NULL, *b = NULL, *c = NULL;
  int status = 0;

  (void)state;
  /* One task that returns at once. */
  assert_int_equal(river__sched_create(0, &s), RIVER_SUCCESS);
  assert_int_equal(river__sched_spawn(s, quick, NULL, &a), RIVER_SUCCESS);
  assert_int_equal(river__sched_run(s), RIVER_EIO);
  assert_int_equal(river__task_done(a, &status), 1);
  assert_int_equal(status, RIVER_EIO);
  river__sched_destroy(s);

  /* A slow task, one that fails at once, one that adds a task. */
  counter = 0;
  assert_int_equal(river__sched_create(0, &s), RIVER_SUCCESS);
  assert_int_equal(river__sched_spawn(s, slow, NULL, &a), RIVER_SUCCESS);
  assert_int_equal(river__sched_spawn(s, quick, NULL, &b), RIVER_SUCCESS);
  assert_int_equal(river__sched_spawn(s, spawner, s, &c), RIVER_SUCCESS);
  assert_int_equal(river__sched_run(s), RIVER_EIO); /* the first failure */
  assert_int_equal(counter, 10);                    /* both slow ones ran */
  assert_int_equal(river__task_done(a, &status), 1);
  assert_int_equal(status, RIVER_SUCCESS);
  assert_int_equal(river__task_done(c, &status), 1);
  river__sched_destroy(s);

  /* An empty scheduler has nothing to run. */
  assert_int_equal(river__sched_create(0, &s), RIVER_SUCCESS);
  assert_int_equal(river__sched_run(s), RIVER_SUCCESS);
  river__sched_destroy(s);
}

static void test_badargs(void **state)
{
  river__sched *s = NULL;

  (void)state;
  assert_int_equal(river__sched_create(0, NULL), RIVER_EINVAL);
  assert_int_equal(river__sched_create(SIZE_MAX, &s), RIVER_EINVAL);
  assert_null(s);
  assert_int_equal(river__sched_create(0, &s), RIVER_SUCCESS);
  assert_int_equal(river__sched_spawn(NULL, quick, NULL, NULL), RIVER_EINVAL);
  assert_int_equal(river__sched_spawn(s, NULL, NULL, NULL), RIVER_EINVAL);
  assert_int_equal(river__sched_run(NULL), RIVER_EINVAL);
  assert_int_equal(river__sched_yield(1), RIVER_ESTATE); /* not a task */
  assert_null(river__sched_current());
  assert_int_equal(river__task_done(NULL, NULL), 0);
  assert_null(river__task_arg(NULL));
  river__sched_destroy(s);
  river__sched_destroy(NULL);
}

/* ---------------------------------------------------------- the stack */

/* Recurse depth levels with a 1 KiB frame, yielding at the bottom. */
static uint64_t deep(int depth)
{
  volatile unsigned char buf[1024];
  uint64_t sum;

  memset((void *)buf, depth & 0xff, sizeof buf);
  if (depth == 0) {
    river__sched_yield(0);
    return buf[17];
  }
  sum = deep(depth - 1);
  return sum + buf[depth % 1024];
}

static int recurse(void *arg)
{
  uint64_t *out = arg;

  *out = deep(300);
  return RIVER_SUCCESS;
}

static void test_deep(void **state)
{
  river__sched *s = NULL;
  uint64_t r1 = 0, r2 = 0, expect = 0;
  int d;

  (void)state;
  for (d = 1; d <= 300; d++)
    expect += (uint64_t)(d & 0xff);
  /* About 300 KiB of frames (more under ASan) in the default 8 MiB, on
   * two stacks at once. */
  assert_int_equal(river__sched_create(0, &s), RIVER_SUCCESS);
  assert_int_equal(river__sched_spawn(s, recurse, &r1, NULL), RIVER_SUCCESS);
  assert_int_equal(river__sched_spawn(s, recurse, &r2, NULL), RIVER_SUCCESS);
  assert_int_equal(river__sched_run(s), RIVER_SUCCESS);
  assert_true(r1 == expect && r2 == expect);
  river__sched_destroy(s);
}

static int forever(void *arg)
{
  uint64_t *out = arg;

  *out = deep(1 << 20); /* 1 GiB of frames: far past any stack */
  return RIVER_SUCCESS;
}

/* An overflow hits the guard page: the (forked) process dies at once
 * (SIGSEGV, or ASan's stack-overflow report and a failing exit). */
static void test_guard(void **state)
{
  int wstatus = 0;
  pid_t pid;

  (void)state;
  fflush(NULL);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    river__sched *s = NULL;
    uint64_t r = 0;
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0)
      dup2(fd, 2); /* keep ASan's report out of the test's output */
    signal(SIGSEGV, SIG_DFL); /* not CMocka's handler */
    if (river__sched_create(64 << 10, &s) != RIVER_SUCCESS
        || river__sched_spawn(s, forever, &r, NULL) != RIVER_SUCCESS)
      _exit(0);
    river__sched_run(s);
    _exit(0); /* not reached: the overflow is caught */
  }
  assert_int_equal(waitpid(pid, &wstatus, 0), pid);
  assert_true(WIFSIGNALED(wstatus)
              || (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) != 0));
}

/* ---------------------------------------------------------- backoff */

/* wait.c's RIVER_BACKOFF_YIELDS: a backoff state below it is still in
 * the yield phase; the first sleep sets it to 1000 (1 us). */
#define PHASE_OVER 64


static double block_until;

/* Blocked (nothing to do) until block_until. */
static int idle(void *arg)
{
  (void)arg;
  while (now(CLOCK_MONOTONIC) < block_until)
    river__sched_yield(1);
  return RIVER_SUCCESS;
}

static void test_all_blocked_sleeps(void **state)
{
  river__sched *s = NULL;
  river__sched_stats st;
  double w0, c0, wall, cpu;
  int i;

  (void)state;
  assert_int_equal(river__sched_create(0, &s), RIVER_SUCCESS);
  for (i = 0; i < 4; i++)
    assert_int_equal(river__sched_spawn(s, idle, NULL, NULL), RIVER_SUCCESS);
  w0 = now(CLOCK_MONOTONIC);
  c0 = now(CLOCK_PROCESS_CPUTIME_ID);
  block_until = w0 + 0.2;
  assert_int_equal(river__sched_run(s), RIVER_SUCCESS);
  wall = now(CLOCK_MONOTONIC) - w0;
  cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
  river__sched_stats_get(s, &st);
  printf("sched: 4 tasks blocked for %.0f ms: %.1f ms CPU, %llu rounds, "
         "%llu idle\n", wall * 1e3, cpu * 1e3,
         (unsigned long long)st.rounds, (unsigned long long)st.idle_rounds);
  assert_true(wall >= 0.2);
  assert_true(cpu < 0.25 * wall);    /* sleeping, not spinning */
  /* All rounds idle but the last one or two: the deadline can pass in
   * the middle of a round, so that its later tasks return in it and its
   * earlier ones in the next (seen once in a full make check: 409
   * rounds, 407 idle). */
  assert_true(st.idle_rounds + 2 >= st.rounds);
  assert_true(st.rounds < 5000);     /* at most ~1 ms apart, once slow */
  river__sched_destroy(s);
}

static int busy_done;

static int busy(void *arg)
{
  int i;

  (void)arg;
  for (i = 0; i < 300; i++)
    river__sched_yield(0);
  busy_done = 1;
  return RIVER_SUCCESS;
}

static int waiter(void *arg)
{
  (void)arg;
  while (!busy_done)
    river__sched_yield(1);
  return RIVER_SUCCESS;
}

/* While one task progresses, no round counts as idle (no sleep). */
static void test_progress_resets(void **state)
{
  river__sched *s = NULL;
  river__sched_stats st;

  (void)state;
  busy_done = 0;
  assert_int_equal(river__sched_create(0, &s), RIVER_SUCCESS);
  assert_int_equal(river__sched_spawn(s, waiter, NULL, NULL), RIVER_SUCCESS);
  assert_int_equal(river__sched_spawn(s, busy, NULL, NULL), RIVER_SUCCESS);
  assert_int_equal(river__sched_run(s), RIVER_SUCCESS);
  river__sched_stats_get(s, &st);
  assert_int_equal(st.idle_rounds, 0);
  assert_int_equal(st.rounds, 302); /* 301 turns of busy, waiter's last */
  river__sched_destroy(s);
}

/* A task waiting through River's backoff (as river_wait does) lets the
 * other tasks run: without the yield, `backer` would spin forever, as
 * `setter` would never get its turn. */
static int flag, backoffs;

static int backer(void *arg)
{
  long ns = RIVER_BACKOFF_START;

  (void)arg;
  while (!flag) {
    river__backoff(&ns);
    backoffs++;
  }
  return RIVER_SUCCESS;
}

static int setter(void *arg)
{
  int i;

  (void)arg;
  for (i = 0; i < 3; i++)
    river__sched_yield(0);
  flag = 1;
  return 7;
}

static void *one_backoff(void *arg)
{
  river__backoff(arg);
  return NULL;
}

static void test_backoff_yields(void **state)
{
  pthread_t th;
  river__sched *s = NULL;
  river__task *a = NULL, *b = NULL;
  int st = -1;
  long ns = RIVER_BACKOFF_START;

  (void)state;
  flag = backoffs = 0;
  /* Outside a task: a plain step, still yielding. In a thread of its
   * own with RIVER_SPIN_US=0 (64 counted yields): the default phase ends
   * after 1 ms, which one yield on a loaded machine (CI under ASan) can
   * take. */
  setenv("RIVER_SPIN_US", "0", 1);
  assert_int_equal(pthread_create(&th, NULL, one_backoff, &ns), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  unsetenv("RIVER_SPIN_US");
  assert_int_equal(ns, RIVER_BACKOFF_START + 1);
  assert_int_equal(river__sched_create(0, &s), RIVER_SUCCESS);
  assert_int_equal(river__sched_spawn(s, backer, NULL, &a), RIVER_SUCCESS);
  assert_int_equal(river__sched_spawn(s, setter, NULL, &b), RIVER_SUCCESS);
  assert_int_equal(river__sched_run(s), 7);
  assert_true(river__task_done(a, &st));
  assert_int_equal(st, RIVER_SUCCESS);
  assert_int_equal(backoffs, 4);  /* one per turn of setter, and its end */
  river__sched_destroy(s);
}

/* -------------------------------------------------- the yield phase */

struct phase {
  long ns;        /* the backoff state at the end */
  long calls;     /* backoff steps the phase took */
  long slow;      /* of them, steps of 5 us or more (a yield that may
                     have handed the core over) */
  double elapsed; /* seconds */
};

/* One yield phase, in a thread of its own: wait.c decides its mode on
 * a thread's first backoff, from the environment then. */
static void *run_phase(void *arg)
{
  struct phase *p = arg;
  double t0 = now(CLOCK_MONOTONIC), t, t1;

  p->ns = RIVER_BACKOFF_START;
  p->calls = p->slow = 0;
  while (p->ns < PHASE_OVER && p->calls < 100000000L) {
    t = now(CLOCK_MONOTONIC);
    river__backoff(&p->ns);
    t1 = now(CLOCK_MONOTONIC);
    p->calls++;
    p->slow += t1 - t >= 5e-6;
  }
  p->elapsed = now(CLOCK_MONOTONIC) - t0;
  return NULL;
}

static struct phase phase_with(const char *spin_us, const char *local_size)
{
  struct phase p;
  pthread_t th;

  if (spin_us != NULL)
    setenv("RIVER_SPIN_US", spin_us, 1);
  else
    unsetenv("RIVER_SPIN_US");
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", local_size, 1);
  assert_int_equal(pthread_create(&th, NULL, run_phase, &p), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  unsetenv("RIVER_SPIN_US");
  unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  assert_true(p.ns >= PHASE_OVER);  /* every phase ends, in a sleep */
  assert_true(p.elapsed < 5.0);
  return p;
}

static void test_yield_phase(void **state)
{
  struct phase p;

  (void)state;
  /* RIVER_SPIN_US=0: 64 yields, whatever they took. */
  p = phase_with("0", "100000");
  assert_int_equal(p.calls, PHASE_OVER);
  /* A spin: yields until 2 ms have passed, even with more ranks than
   * CPUs (RIVER_SPIN_US decides). */
  p = phase_with("2000", "100000");
  assert_true(p.elapsed >= 2e-3);
  /* Oversubscribed (100000 ranks on this node): 63 yields that handed
   * the core over (the first step starts the count), or 1 ms. Ending
   * sooner with fewer slow steps would be the old count of every yield,
   * which on an idle core ended the phase in microseconds. */
  p = phase_with(NULL, "100000");
  if (p.elapsed < 1e-3)
    assert_true(p.slow >= PHASE_OVER - 1);
  printf("yield phase, oversubscribed: %ld steps, %ld of them >= 5 us, "
         "%.0f us\n", p.calls, p.slow, p.elapsed * 1e6);
}

/* ------------------------------------------------------ switch cost */

#define NSW 200000

static int pingpong(void *arg)
{
  int i;

  (void)arg;
  for (i = 0; i < NSW; i++)
    river__sched_yield(0);
  return RIVER_SUCCESS;
}

/* Prints the cost of one switch: a task yields and the scheduler
 * resumes the next one (two swapcontext calls). Not asserted. */
static void test_switch_cost(void **state)
{
  river__sched *s = NULL;
  river__sched_stats st;
  double t0, t;

  (void)state;
  assert_int_equal(river__sched_create(0, &s), RIVER_SUCCESS);
  assert_int_equal(river__sched_spawn(s, pingpong, NULL, NULL),
                   RIVER_SUCCESS);
  assert_int_equal(river__sched_spawn(s, pingpong, NULL, NULL),
                   RIVER_SUCCESS);
  t0 = now(CLOCK_MONOTONIC);
  assert_int_equal(river__sched_run(s), RIVER_SUCCESS);
  t = now(CLOCK_MONOTONIC) - t0;
  river__sched_stats_get(s, &st);
  assert_int_equal(st.switches, 2 * (NSW + 1));
  printf("sched: %.0f ns per task switch (yield + resume, %llu "
         "switches)\n", t * 1e9 / (double)st.switches,
         (unsigned long long)st.switches);
  river__sched_destroy(s);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_interleave),
    cmocka_unit_test(test_status),
    cmocka_unit_test(test_badargs),
    cmocka_unit_test(test_deep),
    cmocka_unit_test(test_guard),
    cmocka_unit_test(test_all_blocked_sleeps),
    cmocka_unit_test(test_progress_resets),
    cmocka_unit_test(test_backoff_yields),
    cmocka_unit_test(test_yield_phase),
    cmocka_unit_test(test_switch_cost),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
