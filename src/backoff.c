/*
 * backoff.c - the lowest layer of River's waits: one backoff step
 * (river__nap), the hooks every step runs, and the watchdog. Above it,
 * src/sched.c's scheduler naps when a round of its tasks was blocked,
 * and src/wait.c's river__backoff (every wait of River's) yields to the
 * rank's other tasks in a task, else naps; nothing here calls either.
 * Sleeping to a deadline (river__sleep_until: emulated rates, the CPU
 * hog, GD's held blocks) is here too, at the end.
 *
 * The backoff first yields the core (sched_yield) RIVER_BACKOFF_YIELDS
 * times, then sleeps, starting at 1 us and doubling up to 1 ms; it starts
 * over for every wait. Yielding first matters: on these VMs the shortest
 * nanosleep takes ~60 us, which capped a 1-to-1 queue of 64 KiB messages
 * at ~0.6 GB/s; a yield returns at once when the core is free and hands
 * it over when another rank is runnable, so short waits stay short and
 * oversubscribed ranks still make way for each other. Long waits cost
 * little. Measured on these VMs, a loop of
 * nanosleep alone costs 14% of a core at 100 us, 4.3% at 500 us and 2.5%
 * at 1 ms, so the design card's 100 us cap could not meet the < 5% target
 * for a blocked rank; 1 ms does, at the price of up to 1 ms of extra
 * latency after a long wait.
 *
 * Spinning when cores are to spare. Even 64 yields end in a sleep on
 * the critical path of a fast stream: a 1 -> 1 queue of 64 KiB messages
 * reached 51% of raw MPI (which spins in MPI_Wait) with them, 93% when
 * it yielded up to 1024 times. So when this node has at least as many
 * CPUs as MPI ranks (OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS or
 * SLURM_NTASKS_PER_NODE against the online CPUs), the yield phase lasts
 * RIVER_SPIN_US microseconds (default 1000) instead: waits shorter than
 * that never sleep. 100 us was not enough for large messages: on a
 * 16-core VM a 1 -> 1 queue of 1 MiB `put`s ran at 5% of raw MPI with it
 * (0.4 against 7.6 GB/s; cause there not established), and here, with
 * Open MPI's single-copy path (CMA) off, as in a container that forbids
 * process_vm_readv, a 1 MiB message moves in 32 KiB fragments that each
 * need both ranks inside MPI, so a sleep stalls it: put 0.22 GB/s,
 * reserve 0.37 GB/s; with a 1 ms spin 67% and 112% of raw
 * (doc/results/dq-spin-cma-off.txt). The price, on a core that is the
 * rank's own: waits a little longer than the spin are spun through
 * first (`river-bench dq wait`: a consumer fed a message every 2 ms used
 * 58% of a core, 16% with a 100 us spin, 12% with none); set
 * RIVER_SPIN_US lower where that matters more than large messages. A
 * spin that adapted (halved when it caught nothing) cut that to 15% but
 * let the 1 MiB stream with CMA off collapse again (6-34% of raw), so
 * the spin is fixed.
 *
 * Oversubscribed (more ranks than CPUs, as in the emulated benchmarks:
 * 30 ranks on 2 cores), a fixed spin would take the CPU from ranks with
 * work, so the yield phase counts yields instead, but only yields that
 * handed the core over: one that came back within RIVER_HANDOFF_NS
 * found nobody else runnable and cost nobody anything. The phase ends
 * after RIVER_BACKOFF_YIELDS yields that handed over, or after the spin
 * default (1 ms) in all, whichever is first. Why: when every yield
 * counted, 64 of them on a core nobody else wanted passed in a few
 * microseconds, and a 1 -> 1 queue of 512 KiB messages beside 14 idle
 * ranks (river-bench dq overhead -n 16) ended each wait in a sleep: 38%
 * of raw MPI, against 145% with a 1 ms spin (doc/results.md). On a
 * busy core the phase is the 64 hand-overs it always was.
 * RIVER_SPIN_US set decides either way: that fixed spin, and 0 = 64
 * yields, counted whether or not they handed over (the old oversubscribed
 * behaviour, kept for A/B). A blocked rank still sleeps after at most
 * that long, so a long wait costs little (2.5-3% of a core).
 * The online CPUs, not this process's affinity mask: launchers bind
 * each rank to one core, which would count as one CPU.
 *
 * The watchdog (RIVER_TIMEOUT seconds, 0 or unset: off). Every wait of
 * River's backs off here, so this is where a wait that never ends is
 * caught. Progress is counted, not timed: river__progress() bumps a
 * counter where a message moved or work was done -- a river_wait or
 * river_waitall whose requests completed, a DQ send or receive that
 * completed, a GD request or block that arrived, a scheduler round in
 * which some task got anything done (did not yield as blocked). Not a
 * loop's own activity: a GD client that keeps moving its requests away
 * from a frozen server sends messages but gets nothing (found so: with
 * GD's `busy` counted, a sort with a SIGSTOPped rank never timed out).
 * A backoff outside a task reads
 * the clock only once it sleeps (not in the yield phase); when the
 * counter has not moved for RIVER_TIMEOUT seconds it returns
 * RIVER_ETIMEDOUT, and from then on every backoff of the process does so
 * at once (the watchdog has fired for good: the requests of the waits it
 * ended may still be pending, so the only safe thing left is to end the
 * job, which is what the river command does). The wait that got it logs
 * one message saying what it waited for (river__timeout_error).
 */
#include "river_internal.h"

#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define RIVER_BACKOFF_YIELDS 64
#define RIVER_BACKOFF_MIN_NS 1000L
#define RIVER_BACKOFF_MAX_NS 1000000L

#define RIVER_SPIN_DEFAULT_US 1000
/* A yield that took this long handed the core to another task. */
#define RIVER_HANDOFF_NS 5000L

/* A non-negative integer from environment variable name, or -1. */
static long env_count(const char *name)
{
  const char *v = getenv(name);
  char *end;
  long n;

  if (v == NULL || *v == '\0')
    return -1;
  n = strtol(v, &end, 10);
  return *end == '\0' && n >= 0 ? n : -1;
}

/* The yield phase, decided on each thread's first backoff (the header
 * comment). */
enum yield_mode {
  YIELD_UNSET,
  YIELD_SPIN,     /* yield until spin_seconds have passed */
  YIELD_HANDOFF,  /* until 64 yields handed the core over, or the spin */
  YIELD_COUNT     /* 64 yields (RIVER_SPIN_US=0) */
};

static _Thread_local enum yield_mode mode = YIELD_UNSET;
static _Thread_local double spin_seconds;

static void decide_mode(void)
{
  long us, ranks, cpus;

  us = env_count("RIVER_SPIN_US");
  if (us < 0) {
    ranks = env_count("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (ranks < 0)
      ranks = env_count("MPI_LOCALNRANKS");
    if (ranks < 0)
      ranks = env_count("SLURM_NTASKS_PER_NODE");
    cpus = sysconf(_SC_NPROCESSORS_ONLN);
    mode = ranks > 0 && cpus > 0 && ranks <= cpus ? YIELD_SPIN
                                                  : YIELD_HANDOFF;
    us = RIVER_SPIN_DEFAULT_US;
  } else {
    mode = us > 0 ? YIELD_SPIN : YIELD_COUNT;
  }
  spin_seconds = us > 1000000 ? 1.0 : 1e-6 * (double)us;
}

/* ------------------------------------------------------------ watchdog */

static double watchdog_s;          /* RIVER_TIMEOUT; 0: off */
static unsigned long progress_n;   /* bumped at every sign of progress */
static unsigned long progress_seen;/* progress_n when last looked at */
static double progress_since;      /* when it last moved (0: not yet) */
static int watchdog_fired;         /* sticky: every backoff times out */
static int watchdog_logged;        /* the one message was logged */

int river__watchdog_init(void)
{
  const char *v = getenv("RIVER_TIMEOUT");
  char *end;
  double s;

  watchdog_s = 0.0;
  if (v == NULL || *v == '\0')
    return RIVER_SUCCESS;
  s = strtod(v, &end);
  if (*end != '\0' || !(s >= 0.0) || s > 1e9) {  /* !(>=): NaN too */
    river_log(RIVER_LOG_ERROR, "RIVER_TIMEOUT=%s: expected seconds "
              "(a number >= 0; 0 = no watchdog)", v);
    return RIVER_EINVAL;
  }
  watchdog_s = s;
  return RIVER_SUCCESS;
}

double river__watchdog_seconds(void)
{
  return watchdog_s;
}

int river__watchdog_fired(void)
{
  return watchdog_fired;
}

int river_watchdog_fired(int *fired)
{
  if (fired == NULL)
    return RIVER_EINVAL;
  *fired = watchdog_fired;
  return RIVER_SUCCESS;
}

void river__progress(void)
{
  progress_n++;
}

/* RIVER_ETIMEDOUT if the watchdog has fired or fires now (no progress
 * for watchdog_s seconds), else RIVER_SUCCESS. */
static int watchdog_check(void)
{
  double now;

  if (watchdog_fired)
    return RIVER_ETIMEDOUT;
  if (watchdog_s <= 0.0)
    return RIVER_SUCCESS;
  now = river_wtime();
  if (progress_since == 0.0 || progress_n != progress_seen) {
    progress_seen = progress_n;
    progress_since = now;
    return RIVER_SUCCESS;
  }
  if (now - progress_since < watchdog_s)
    return RIVER_SUCCESS;
  watchdog_fired = 1;
  return RIVER_ETIMEDOUT;
}

int river__timeout_error(MPI_Comm comm, const int *ranks, int n,
                         const char *what)
{
  char list[256];
  size_t len = 0;
  MPI_Group g = MPI_GROUP_NULL, w = MPI_GROUP_NULL;
  int i, j, wr, me, shown[32], nshown = 0;

  if (watchdog_logged)
    return RIVER_ETIMEDOUT;
  watchdog_logged = 1;
  list[0] = '\0';
  if (n > 0 && comm != MPI_COMM_NULL
      && MPI_Comm_group(comm, &g) == MPI_SUCCESS
      && MPI_Comm_group(MPI_COMM_WORLD, &w) == MPI_SUCCESS) {
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (i = 0; i < n && len + 16 < sizeof list && nshown < 32; i++) {
      if (MPI_Group_translate_ranks(g, 1, &ranks[i], w, &wr) != MPI_SUCCESS
          || wr == MPI_UNDEFINED)
        wr = -1;
      for (j = 0; j < nshown && shown[j] != wr; j++)
        ;
      if (wr == me || j < nshown)   /* each other rank once */
        continue;
      shown[nshown++] = wr;
      len += (size_t)snprintf(list + len, sizeof list - len, "%s%d",
                              len ? ", " : "", wr);
    }
    if (i < n)
      snprintf(list + len, sizeof list - len, ", ...");
  }
  if (g != MPI_GROUP_NULL)
    MPI_Group_free(&g);
  if (w != MPI_GROUP_NULL)
    MPI_Group_free(&w);
  river_log(RIVER_LOG_ERROR, "no progress for %g s (RIVER_TIMEOUT, river "
            "--timeout): %s%s%s%s; giving up", watchdog_s, what,
            list[0] ? ", from world rank" : "",
            list[0] ? (nshown > 1 || list[len] != '\0' ? "s " : " ") : "",
            list);
  return RIVER_ETIMEDOUT;
}

static struct river__hook *hooks;   /* river__backoff_hook_add's */

void river__backoff_hook_add(struct river__hook *h)
{
  h->next = hooks;
  hooks = h;
}

void river__backoff_hook_remove(struct river__hook *h)
{
  struct river__hook **pp;

  for (pp = &hooks; *pp != NULL; pp = &(*pp)->next)
    if (*pp == h) {
      *pp = h->next;
      return;
    }
}

/* Run every hook; one may remove itself (its next is read first). */
void river__run_hooks(void)
{
  struct river__hook *h, *next;

  for (h = hooks; h != NULL; h = next) {
    next = h->next;
    h->fn(h->arg);
  }
}

int river__nap(long *ns)
{
  static _Thread_local double spin_end; /* the yield phase's end */
  struct timespec ts;
  double t0, t1;

  river__run_hooks();
  if (*ns < RIVER_BACKOFF_YIELDS) {  /* yield phase: *ns counts yields */
    if (mode == YIELD_UNSET)
      decide_mode();
    if (watchdog_fired)
      return RIVER_ETIMEDOUT;
    if (mode == YIELD_COUNT) {
      sched_yield();
      *ns = *ns + 1 < RIVER_BACKOFF_YIELDS ? *ns + 1 : RIVER_BACKOFF_MIN_NS;
      return RIVER_SUCCESS;
    }
    t0 = river_wtime();
    if (*ns == 0) {
      spin_end = t0 + spin_seconds;
      *ns = 1;
    }
    sched_yield();
    if (mode == YIELD_SPIN) { /* yield until spin_end, counting no further */
      if (t0 >= spin_end)
        *ns = RIVER_BACKOFF_MIN_NS;
      return RIVER_SUCCESS;
    }
    t1 = river_wtime();  /* YIELD_HANDOFF: count the yields that handed over */
    if (t1 - t0 >= 1e-9 * (double)RIVER_HANDOFF_NS)
      ++*ns;
    if (*ns >= RIVER_BACKOFF_YIELDS || t1 >= spin_end)
      *ns = RIVER_BACKOFF_MIN_NS;
    return RIVER_SUCCESS;
  }
  ts.tv_sec = 0;
  ts.tv_nsec = *ns;
  nanosleep(&ts, NULL);
  *ns = *ns * 2 > RIVER_BACKOFF_MAX_NS ? RIVER_BACKOFF_MAX_NS : *ns * 2;
  return watchdog_check();
}

/* Sleeping to a deadline (river_internal.h): nanosleep until the clock
 * says so, again after every early wakeup; never spins. */
void river__sleep_until(double target)
{
  double now;

  while ((now = river_wtime()) < target) {
    double d = target - now;
    struct timespec ts;

    if (d > 1e9)    /* keep tv_sec far from overflow; loop for the rest */
      d = 1e9;
    ts.tv_sec = (time_t)d;
    ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9) + 1; /* round up */
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    nanosleep(&ts, NULL);
  }
}
