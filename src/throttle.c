/*
 * throttle.c - emulated rates (see river/throttle.h): the token bucket,
 * struct river_throttle. Its sleeping (river__sleep_until) and its
 * yielding in a task (the scheduler) are base helpers (river_internal.h,
 * sched_internal.h).
 *
 * Tokens are bytes, kept as a double with the time of the last refill
 * (river_wtime, CLOCK_MONOTONIC); a refill adds elapsed x rate x factor,
 * capped at the burst. consume() takes work in pieces of at most `burst`
 * bytes; a piece is taken at once and, if that leaves the bucket in debt,
 * the caller sleeps exactly debt / rate (re-checking the clock after
 * every wakeup, so an early wakeup sleeps again and never spins). For
 * pieces no larger than the burst this is the same as waiting for the
 * tokens first, and the debt form also copes with a burst under one byte
 * or a remainder too small to subtract from a huge count. Oversleeping is
 * not lost: the extra time refills the bucket (up to the burst) for the
 * next piece, so the long-run rate is exact. Counts are handled as
 * doubles: a size_t of any size converts without overflow, and no byte
 * count is ever multiplied.
 *
 * The perturbation specs are in perturb.c, the CPU hog in cpu_hog.c.
 */
#include "river_internal.h"
#include "sched_internal.h"

#include <stdlib.h>

#define MIN_BURST 65536.0   /* bytes: the smallest default burst */

/* ----------------------------------------------------------- throttle */

struct river_throttle {
  double rate;     /* nominal bytes/s */
  double factor;   /* multiplies rate */
  double burst;    /* bucket size, bytes */
  double tokens;   /* bytes available (<= burst; < 0 only within consume) */
  double last;     /* river_wtime() of the last refill */
  double slept;    /* seconds consume() has slept */
  int unused;      /* a stage's bucket not yet charged: it earns nothing
                      until its first use (a stage's bucket) */
  int own_time;    /* a stage's bucket: it banks at most burst x factor,
                      the burst's time at its current rate */
};

/* Add the tokens earned since t->last at the current rate, up to the
 * burst (a stage's bucket: the burst x factor), and move t->last to
 * now; a stage's bucket at its first use only starts earning. */
static void refill(river_throttle *t, double now)
{
  double add = (now - t->last) * (t->rate * t->factor);
  double cap = t->own_time ? t->burst * t->factor : t->burst;

  if (t->unused) {  /* the first use of a stage's bucket: empty now */
    t->unused = 0;
    t->tokens = 0.0;
    t->last = now;
    return;
  }

  if (add > 0)
    t->tokens = t->tokens + add > cap ? cap : t->tokens + add;
  t->last = now;
}

/* Wait until river_wtime() >= target: inside a flow's task by yielding
 * to the rank's other tasks (an emulated slow disk or CPU slows its own
 * stage, not every stage on the rank; the scheduler sleeps when all
 * wait), elsewhere by sleeping. */
static void wait_until(double target)
{
  if (river__sched_current() == NULL) {
    river__sleep_until(target);
    return;
  }
  while (river_wtime() < target)
    river__sched_yield(1);
}

/* Take `piece` bytes of tokens, waiting off any debt that leaves. */
static void take(river_throttle *t, double piece)
{
  double now = river_wtime(), after;

  refill(t, now);
  t->tokens -= piece;
  if (t->tokens >= 0)
    return;
  wait_until(now + -t->tokens / (t->rate * t->factor));
  after = river_wtime();
  t->slept += after - now;
  refill(t, after);
}

int river_throttle_take(river_throttle *t, size_t bytes, double *ready)
{
  double now;

  if (t == NULL || ready == NULL)
    return RIVER_EINVAL;
  now = river_wtime();
  refill(t, now);
  t->tokens -= (double)bytes;
  *ready = t->tokens >= 0 ? now : now + -t->tokens / (t->rate * t->factor);
  return RIVER_SUCCESS;
}

/* A stage's bucket: river_throttle_create's default (50 ms of work),
 * but empty at its first use, having earned nothing before it.
 * Full at creation, as river_throttle_create makes it, every stage of
 * a flow started with 50 ms of free work that the fluid ideal does not
 * count; empty at creation, a stage that idled before its first work (a
 * writer through the sort's phase before its own) still banked it. At
 * first use the demo's static run takes 3.54 s where it took 3.26 s
 * empty at creation and 3.22 s full, River 1.67 s where it took 1.61 s,
 * and no sort point is above its ideal any more (doc/results.md, issue
 * 13's ninth session). The bucket still banks up to 50 ms of its own
 * work while its stage idles after its first use (a stage waiting for
 * input): 50 ms at its current rate (own_time), not the nominal rate's
 * bytes, which a stage perturbed to a quarter speed would have spent in
 * 200 ms. A smaller burst would also turn the lateness of a task
 * waiting its turn (cooperative, src/sched.c, on an oversubscribed
 * core) into lost work, and was not measured apart from this change. */
int river_throttle_create_stage(double rate, river_throttle **out)
{
  int rc = river_throttle_create(rate, 0, out);

  if (rc == RIVER_SUCCESS) {
    (*out)->unused = 1;
    (*out)->own_time = 1;
  }
  return rc;
}

int river_throttle_create(double rate, double burst, river_throttle **out)
{
  river_throttle *t;

  if (out == NULL)
    return RIVER_EINVAL;
  if (!river__positive_finite(rate)) {
    river__error("throttle: rate %g is not a finite number > 0", rate);
    return RIVER_EINVAL;
  }
  if (!(burst == 0 || river__positive_finite(burst))) {
    river__error("throttle: burst %g is not a finite number >= 0", burst);
    return RIVER_EINVAL;
  }
  if (burst == 0)
    burst = rate / 20 > MIN_BURST ? rate / 20
                                                 : MIN_BURST;
  t = malloc(sizeof *t);
  if (t == NULL)
    return RIVER_ENOMEM;
  t->rate = rate;
  t->factor = 1.0;
  t->burst = burst;
  t->tokens = burst;
  t->last = river_wtime();
  t->slept = 0.0;
  t->unused = 0;
  t->own_time = 0;
  *out = t;
  return RIVER_SUCCESS;
}

void river_throttle_destroy(river_throttle *t)
{
  free(t);
}

int river_throttle_consume(river_throttle *t, size_t bytes)
{
  double left = (double)bytes;

  if (t == NULL)
    return RIVER_EINVAL;
  while (left > 0) {
    double piece = left < t->burst ? left : t->burst;

    if (left - piece == left)   /* burst below the count's precision */
      piece = left;
    left -= piece;
    take(t, piece);
  }
  return RIVER_SUCCESS;
}

int river_throttle_set_factor(river_throttle *t, double factor)
{
  if (t == NULL)
    return RIVER_EINVAL;
  if (!river__positive_finite(factor)) {
    river__error("throttle: factor %g is not a finite number > 0", factor);
    return RIVER_EINVAL;
  }
  if (!river__positive_finite(t->rate * factor)) {
    river__error("throttle: factor %g makes the rate %g x %g out of range",
                 factor, t->rate, factor);
    return RIVER_EINVAL;
  }
  refill(t, river_wtime());   /* at the old rate up to now */
  t->factor = factor;
  return RIVER_SUCCESS;
}

int river_throttle_rate(const river_throttle *t, double *rate)
{
  if (t == NULL || rate == NULL)
    return RIVER_EINVAL;
  *rate = t->rate * t->factor;
  return RIVER_SUCCESS;
}

int river_throttle_slept(const river_throttle *t, double *seconds)
{
  if (t == NULL || seconds == NULL)
    return RIVER_EINVAL;
  *seconds = t->slept;
  return RIVER_SUCCESS;
}
