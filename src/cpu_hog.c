/*
 * cpu_hog.c - the real CPU perturber (see river/throttle.h): struct
 * river_cpu_hog, a thread that spins a fraction of each period.
 *
 * The thread is bound with hwloc to the PUs of the process (so it shares
 * the rank's core once the rank is bound: river_topo_bind, which also
 * moves a hog already running, or the launcher). It is created
 * waiting on a condition variable, bound by the caller with
 * hwloc_set_thread_cpubind, and only then told to run (or, if binding
 * failed, to exit before it has spun at all). Its spin is measured on its
 * own CPU clock (CLOCK_THREAD_CPUTIME_ID), not the wall clock: a spin
 * timed by the wall steals only part of its time from a busy rank sharing
 * the core (the scheduler splits the spin between them), so a hog of 0.5
 * took 12-40% of a core on a loaded 2-core VM; counting its own CPU, it
 * takes its fraction (up to the scheduler's fair share), and the period
 * stretches instead.
 */
#include "river_internal.h"

#include <errno.h>
#include <hwloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HOG_PERIOD 0.010  /* seconds per spin + sleep cycle */

#define HOG_WAIT 0
#define HOG_RUN 1
#define HOG_ABORT 2

struct river_cpu_hog {
  pthread_t thread;
  double fraction;
  atomic_int stop;
  pthread_mutex_t lock;   /* guards go */
  pthread_cond_t cond;
  int go;                 /* HOG_WAIT until the caller has bound us */
};

/* Spin until this thread has used fraction x HOG_PERIOD of CPU,
 * sleep out the rest of the period (if any is left), until stopped. */
static void *hog_main(void *arg)
{
  river_cpu_hog *h = arg;
  double spin = h->fraction * HOG_PERIOD;
  int go;

  pthread_mutex_lock(&h->lock);
  while (h->go == HOG_WAIT)
    pthread_cond_wait(&h->cond, &h->lock);
  go = h->go;
  pthread_mutex_unlock(&h->lock);
  if (go != HOG_RUN)
    return NULL;
  while (!atomic_load(&h->stop)) {
    double t0 = river_wtime(), c0 = river__thread_cpu();

    while (river__thread_cpu() - c0 < spin && !atomic_load(&h->stop))
      ;
    river__sleep_until(t0 + HOG_PERIOD);
  }
  return NULL;
}

/* Tell h's thread to run or abort. */
static void hog_release(river_cpu_hog *h, int go)
{
  pthread_mutex_lock(&h->lock);
  h->go = go;
  pthread_cond_signal(&h->cond);
  pthread_mutex_unlock(&h->lock);
}

/* Bind h's thread to the PUs this process is bound to. */
static int hog_bind(river_cpu_hog *h)
{
  hwloc_topology_t topo;
  hwloc_bitmap_t set = NULL;
  int rc = RIVER_ETOPO;

  if (hwloc_topology_init(&topo) < 0)
    return RIVER_ETOPO;
  if (hwloc_topology_load(topo) < 0)
    goto out;
  set = hwloc_bitmap_alloc();
  if (set == NULL) {
    rc = RIVER_ENOMEM;
    goto out;
  }
  if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) < 0) {
    river__error("cpu hog: cannot read the process binding: %s",
                 strerror(errno));
    goto out;
  }
  /* Unbound, the hog runs wherever the scheduler puts it, not on the
   * rank's core: say so (river --bind, or the launcher, binds ranks). */
  if (hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(topo), set))
    river__info("cpu hog: this process is not bound to a core, so the hog "
                "may run on any PU (bind the rank: river --bind, "
                "river_topo_bind, or the launcher)");
  if (hwloc_set_thread_cpubind(topo, h->thread, set, 0) < 0) {
    river__error("cpu hog: cannot bind the thread: %s", strerror(errno));
    goto out;
  }
  rc = RIVER_SUCCESS;
out:
  hwloc_bitmap_free(set);
  hwloc_topology_destroy(topo);
  return rc;
}

int river_cpu_hog_start(double fraction, river_cpu_hog **out)
{
  river_cpu_hog *h;
  int rc, err;

  if (out == NULL)
    return RIVER_EINVAL;
  if (!(fraction > 0 && fraction < 1)) {
    river__error("cpu hog: fraction %g is not between 0 and 1 (exclusive)",
                 fraction);
    return RIVER_EINVAL;
  }
  h = malloc(sizeof *h);
  if (h == NULL)
    return RIVER_ENOMEM;
  h->fraction = fraction;
  atomic_init(&h->stop, 0);
  h->go = HOG_WAIT;
  if (pthread_mutex_init(&h->lock, NULL) != 0) {
    rc = RIVER_ENOMEM;
    goto fail_free;
  }
  if (pthread_cond_init(&h->cond, NULL) != 0) {
    rc = RIVER_ENOMEM;
    goto fail_mutex;
  }
  err = pthread_create(&h->thread, NULL, hog_main, h);
  if (err != 0) {
    river__error("cpu hog: cannot start a thread: %s", strerror(err));
    rc = err == EAGAIN ? RIVER_EAGAIN : RIVER_ENOMEM;
    goto fail_cond;
  }
  rc = hog_bind(h);
  hog_release(h, rc == RIVER_SUCCESS ? HOG_RUN : HOG_ABORT);
  if (rc != RIVER_SUCCESS) {
    pthread_join(h->thread, NULL);
    goto fail_cond;
  }
  *out = h;
  return RIVER_SUCCESS;
fail_cond:
  pthread_cond_destroy(&h->cond);
fail_mutex:
  pthread_mutex_destroy(&h->lock);
fail_free:
  free(h);
  return rc;
}

int river_cpu_hog_stop(river_cpu_hog *h)
{
  int err;

  if (h == NULL)
    return RIVER_SUCCESS;
  atomic_store(&h->stop, 1);
  err = pthread_join(h->thread, NULL);
  pthread_cond_destroy(&h->cond);
  pthread_mutex_destroy(&h->lock);
  free(h);
  if (err != 0) {
    river__error("cpu hog: joining the thread failed: %s", strerror(err));
    return RIVER_ESTATE;
  }
  return RIVER_SUCCESS;
}
