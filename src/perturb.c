/*
 * throttle.c - emulated rates and perturbations (see river/throttle.h):
 * a token bucket, the --perturb spec parser, and a real CPU hog.
 *
 * Token bucket. Tokens are bytes, kept as a double with the time of the
 * last refill (river_wtime, CLOCK_MONOTONIC); a refill adds elapsed x
 * rate x factor, capped at the burst. consume() takes work in pieces of
 * at most `burst` bytes; a piece is taken at once and, if that leaves the
 * bucket in debt, the caller sleeps exactly debt / rate (re-checking the
 * clock after every wakeup, so an early wakeup sleeps again and never
 * spins). For pieces no larger than the burst this is the same as
 * waiting for the tokens first, and the debt form also copes with a
 * burst under one byte or a remainder too small to subtract from a huge
 * count. Oversleeping is not lost: the extra time refills the bucket (up
 * to the burst) for the next piece, so the long-run rate is exact.
 * Counts are handled as doubles: a size_t of any size converts without
 * overflow, and no byte count is ever multiplied.
 *
 * Perturbation specs are parsed clause by clause (split at ';') into a
 * flat list of (kind, index range, factor, start) entries in spec order;
 * a clause naming several ranges gives several entries. The factor at
 * (kind, index, t) is that of the last entry covering the index with
 * start <= t. river_perturb_count counts the indices whose effective
 * factor differs from 1 at some time: an entry is ever in effect for an
 * index unless a later entry for the same index starts no later than it,
 * so "disk:3=0.5;disk:3=1" perturbs nothing, while "disk:3=0.5;disk:3=1@2s"
 * perturbs disk 3 for two seconds. It works per segment of the index
 * line between range boundaries, so large ranges cost nothing extra.
 *
 * The CPU hog is a thread bound with hwloc to the PUs of the process. It
 * is created waiting on a condition variable, bound by the caller with
 * hwloc_set_thread_cpubind, and only then told to run (or, if binding
 * failed, to exit before it has spun at all). Its spin is measured on
 * its own CPU clock (CLOCK_THREAD_CPUTIME_ID), not the wall clock: a
 * spin timed by the wall steals only part of its time from a busy rank
 * sharing the core (the scheduler splits the spin between them), so a
 * hog of 0.5 took 12-40% of a core on a loaded 2-core VM; counting its
 * own CPU, it takes its fraction (up to the scheduler's fair share), and
 * the period stretches instead.
 */
#include "river_internal.h"

#include <ctype.h>
#include <errno.h>
#include <hwloc.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RIVER_THROTTLE_MIN_BURST 65536.0
#define RIVER_PERTURB_MAX_INDEX 1000000
#define RIVER_HOG_PERIOD 0.010  /* seconds per spin + sleep cycle */

/* ---------------------------------------------------------- sleeping */

/* Sleep until river_wtime() >= target, however often nanosleep wakes
 * early. An infinite target sleeps forever. */
static void river_sleep_until(double target)
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

/* ----------------------------------------------------------- throttle */

struct river_throttle {
  double rate;     /* nominal bytes/s */
  double factor;   /* multiplies rate */
  double burst;    /* bucket size, bytes */
  double tokens;   /* bytes available (<= burst; < 0 only within consume) */
  double last;     /* river_wtime() of the last refill */
  double slept;    /* seconds consume() has slept */
};

/* 1 if x is a finite number > 0 (NaN fails every comparison). */
static int river_positive_finite(double x)
{
  return isfinite(x) && x > 0;
}

/* Add the tokens earned since t->last at the current rate, up to the
 * burst, and move t->last to now. */
static void river_throttle_refill(river_throttle *t, double now)
{
  double add = (now - t->last) * (t->rate * t->factor);

  if (add > 0)
    t->tokens = t->tokens + add > t->burst ? t->burst : t->tokens + add;
  t->last = now;
}

/* Take `piece` bytes of tokens, sleeping off any debt that leaves. */
static void river_throttle_take(river_throttle *t, double piece)
{
  double now = river_wtime(), after;

  river_throttle_refill(t, now);
  t->tokens -= piece;
  if (t->tokens >= 0)
    return;
  river_sleep_until(now + -t->tokens / (t->rate * t->factor));
  after = river_wtime();
  t->slept += after - now;
  river_throttle_refill(t, after);
}

int river_throttle_create(double rate, double burst, river_throttle **out)
{
  river_throttle *t;

  if (out == NULL)
    return RIVER_EINVAL;
  if (!river_positive_finite(rate)) {
    river__error("throttle: rate %g is not a finite number > 0", rate);
    return RIVER_EINVAL;
  }
  if (!(burst == 0 || river_positive_finite(burst))) {
    river__error("throttle: burst %g is not a finite number >= 0", burst);
    return RIVER_EINVAL;
  }
  if (burst == 0)
    burst = rate / 20 > RIVER_THROTTLE_MIN_BURST ? rate / 20
                                                 : RIVER_THROTTLE_MIN_BURST;
  t = malloc(sizeof *t);
  if (t == NULL)
    return RIVER_ENOMEM;
  t->rate = rate;
  t->factor = 1.0;
  t->burst = burst;
  t->tokens = burst;
  t->last = river_wtime();
  t->slept = 0.0;
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
    river_throttle_take(t, piece);
  }
  return RIVER_SUCCESS;
}

int river_throttle_set_factor(river_throttle *t, double factor)
{
  if (t == NULL)
    return RIVER_EINVAL;
  if (!river_positive_finite(factor)) {
    river__error("throttle: factor %g is not a finite number > 0", factor);
    return RIVER_EINVAL;
  }
  if (!river_positive_finite(t->rate * factor)) {
    river__error("throttle: factor %g makes the rate %g x %g out of range",
                 factor, t->rate, factor);
    return RIVER_EINVAL;
  }
  river_throttle_refill(t, river_wtime());   /* at the old rate up to now */
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

/* ------------------------------------------------------- perturbation */

struct river_perturb_entry {
  int kind;
  int lo, hi;       /* indices lo..hi, inclusive */
  double factor;
  double start;     /* seconds into the run */
};

struct river_perturb {
  struct river_perturb_entry *e;   /* in spec order */
  size_t n, cap;
};

/* The clause being parsed, for error messages. */
struct river_clause {
  const char *spec;
  int number;               /* 1-based */
  const char *text, *end;   /* the clause, trimmed */
};

/* Log "perturbation spec ...: clause N (...): PROBLEM" and return
 * RIVER_EFORMAT. */
static int river_clause_fail(const struct river_clause *c, const char *fmt,
                             ...) RIVER_PRINTF(2, 3);

static int river_clause_fail(const struct river_clause *c, const char *fmt,
                             ...)
{
  char why[512];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  river__error("perturbation spec \"%s\": clause %d (\"%.*s\"): %s", c->spec,
               c->number, (int)(c->end - c->text), c->text, why);
  return RIVER_EFORMAT;
}

static int river_is_space(char ch)
{
  return isspace((unsigned char)ch) != 0;
}

static int river_is_digit(char ch)
{
  return ch >= '0' && ch <= '9';
}

/* Move *b forward and *e back over white space. */
static void river_trim(const char **b, const char **e)
{
  while (*b < *e && river_is_space(**b))
    (*b)++;
  while (*e > *b && river_is_space((*e)[-1]))
    (*e)--;
}

/* Skip white space from p, not past e. */
static const char *river_skip_space(const char *p, const char *e)
{
  while (p < e && river_is_space(*p))
    p++;
  return p;
}

/* End of the token at p: the first white space, '@' or e. */
static const char *river_token_end(const char *p, const char *e)
{
  while (p < e && !river_is_space(*p) && *p != '@')
    p++;
  return p;
}

/* Append an entry for lo..hi of kind (factor and start filled in later). */
static int river_perturb_add(river_perturb *p, int kind, int lo, int hi)
{
  if (p->n == p->cap) {
    size_t cap = p->cap ? 2 * p->cap : 8;
    struct river_perturb_entry *e = realloc(p->e, cap * sizeof *e);

    if (e == NULL)
      return RIVER_ENOMEM;
    p->e = e;
    p->cap = cap;
  }
  p->e[p->n].kind = kind;
  p->e[p->n].lo = lo;
  p->e[p->n].hi = hi;
  p->e[p->n].factor = 1.0;
  p->e[p->n].start = 0.0;
  p->n++;
  return RIVER_SUCCESS;
}

/* Read decimal digits at *q (before e) into *v; 0 if there are none.
 * Values over RIVER_PERTURB_MAX_INDEX are logged as errors. */
static int river_parse_index(const struct river_clause *c, const char **q,
                             const char *e, int *v, int *rc)
{
  const char *b = *q;
  long x = 0;

  while (*q < e && river_is_digit(**q)) {
    if (x <= RIVER_PERTURB_MAX_INDEX)
      x = 10 * x + (**q - '0');
    (*q)++;
  }
  if (*q == b)
    return 0;
  if (x > RIVER_PERTURB_MAX_INDEX) {
    *rc = river_clause_fail(c, "index %.*s is larger than %d", (int)(*q - b),
                            b, RIVER_PERTURB_MAX_INDEX);
    return 0;
  }
  *v = (int)x;
  return 1;
}

/* Parse one item of an index list, "N" or "N-M" (trimmed, non-empty), and
 * add its entry. */
static int river_parse_item(river_perturb *p, const struct river_clause *c,
                            int kind, const char *b, const char *e)
{
  const char *q = b;
  int lo, hi, rc = RIVER_SUCCESS;

  if (!river_parse_index(c, &q, e, &lo, &rc))
    goto bad;
  hi = lo;
  q = river_skip_space(q, e);
  if (q < e && *q == '-') {
    q = river_skip_space(q + 1, e);
    if (!river_parse_index(c, &q, e, &hi, &rc))
      goto bad;
  }
  if (q != e)
    goto bad;
  if (lo > hi)
    return river_clause_fail(c, "bad range %d-%d (the start is after the "
                             "end)", lo, hi);
  return river_perturb_add(p, kind, lo, hi);
bad:
  if (rc != RIVER_SUCCESS)
    return rc;
  return river_clause_fail(c, "bad index \"%.*s\" (expected N or N-M, "
                           "N and M from 0 to %d)", (int)(e - b), b,
                           RIVER_PERTURB_MAX_INDEX);
}

/* Parse the index list b..e (a comma-separated list of items). */
static int river_parse_indices(river_perturb *p, const struct river_clause *c,
                               int kind, const char *b, const char *e)
{
  const char *lb = b, *le = e;

  river_trim(&lb, &le);
  if (lb == le)
    return river_clause_fail(c, "empty index list");
  while (b <= e) {
    const char *comma = memchr(b, ',', (size_t)(e - b));
    const char *ib = b, *ie = comma ? comma : e;
    int rc;

    river_trim(&ib, &ie);
    if (ib == ie)
      return river_clause_fail(c, "empty item in the index list \"%.*s\"",
                               (int)(le - lb), lb);
    rc = river_parse_item(p, c, kind, ib, ie);
    if (rc != RIVER_SUCCESS)
      return rc;
    if (comma == NULL)
      break;
    b = comma + 1;
  }
  return RIVER_SUCCESS;
}

/* Parse the number at q (digits or '.' first: no sign, inf or nan) into
 * *v; returns the end of the number, or q if there is none. */
static const char *river_parse_number(const char *q, const char *e,
                                      double *v)
{
  char *end;

  if (q == e || !(river_is_digit(*q) || *q == '.'))
    return q;
  *v = strtod(q, &end);
  return end > e ? q : end;
}

/* Parse "FACTOR[@TIME]" in b..e into *factor and *start. */
static int river_parse_factor_time(const struct river_clause *c,
                                   const char *b, const char *e,
                                   double *factor, double *start)
{
  const char *q = river_skip_space(b, e), *n, *u;
  double v = 0;

  if (q == e || *q == '@')
    return river_clause_fail(c, "missing factor after '='");
  n = river_parse_number(q, e, &v);
  if (n == q || (n < e && !river_is_space(*n) && *n != '@')
      || !river_positive_finite(v))
    return river_clause_fail(c, "factor \"%.*s\" is not a positive finite "
                             "number", (int)(river_token_end(q, e) - q), q);
  *factor = v;
  *start = 0;
  q = river_skip_space(n, e);
  if (q == e)
    return RIVER_SUCCESS;
  if (*q != '@')
    return river_clause_fail(c, "trailing junk \"%.*s\" after the factor",
                             (int)(e - q), q);

  q = river_skip_space(q + 1, e);
  n = river_parse_number(q, e, &v);
  if (n == q || !isfinite(v) || v < 0)
    return river_clause_fail(c, "bad time \"%.*s\" (expected seconds >= 0: "
                             "2s, 2 or 500ms)",
                             (int)(river_token_end(q, e) - q), q);
  u = river_skip_space(n, e);
  for (n = u; n < e && isalpha((unsigned char)*n); n++)
    ;
  if ((n == u + 1 && u[0] == 's') || n == u)
    *start = v;
  else if (n == u + 2 && u[0] == 'm' && u[1] == 's')
    *start = v / 1000;
  else
    return river_clause_fail(c, "bad time unit \"%.*s\" (use s or ms)",
                             (int)(river_token_end(u, e) - u), u);
  q = river_skip_space(n, e);
  if (q != e)
    return river_clause_fail(c, "trailing junk \"%.*s\" after the time",
                             (int)(e - q), q);
  return RIVER_SUCCESS;
}

/* Parse the clause b..e (between ';'s) into entries of p. */
static int river_parse_clause(river_perturb *p, struct river_clause *c,
                              const char *b, const char *e)
{
  const char *colon, *eq, *kb, *ke;
  size_t first = p->n, i;
  double factor = 1.0, start = 0.0;
  int kind, rc;

  river_trim(&b, &e);
  c->text = b;
  c->end = e;
  if (b == e)
    return river_clause_fail(c, "empty clause");
  colon = memchr(b, ':', (size_t)(e - b));
  if (colon == NULL)
    return river_clause_fail(c, "missing ':' after the kind (expected "
                             "KIND:INDICES=FACTOR[@TIME])");
  kb = b;
  ke = colon;
  river_trim(&kb, &ke);
  if (ke - kb == 4 && memcmp(kb, "disk", 4) == 0)
    kind = RIVER_PERTURB_DISK;
  else if (ke - kb == 3 && memcmp(kb, "cpu", 3) == 0)
    kind = RIVER_PERTURB_CPU;
  else
    return river_clause_fail(c, "unknown kind \"%.*s\" (use disk or cpu)",
                             (int)(ke - kb), kb);
  eq = memchr(colon + 1, '=', (size_t)(e - colon - 1));
  if (eq == NULL)
    return river_clause_fail(c, "missing '=' between the indices and the "
                             "factor");
  rc = river_parse_indices(p, c, kind, colon + 1, eq);
  if (rc != RIVER_SUCCESS)
    return rc;
  rc = river_parse_factor_time(c, eq + 1, e, &factor, &start);
  if (rc != RIVER_SUCCESS)
    return rc;
  for (i = first; i < p->n; i++) {
    p->e[i].factor = factor;
    p->e[i].start = start;
  }
  return RIVER_SUCCESS;
}

int river_perturb_parse(const char *spec, river_perturb **out)
{
  struct river_clause c = {spec, 0, NULL, NULL};
  const char *b = spec, *e;
  river_perturb *p;
  int rc = RIVER_SUCCESS;

  if (spec == NULL || out == NULL)
    return RIVER_EINVAL;
  p = calloc(1, sizeof *p);
  if (p == NULL)
    return RIVER_ENOMEM;
  e = spec + strlen(spec);
  if (river_skip_space(b, e) != e) {
    for (;;) {
      const char *semi = strchr(b, ';');

      c.number++;
      rc = river_parse_clause(p, &c, b, semi ? semi : e);
      if (rc != RIVER_SUCCESS || semi == NULL)
        break;
      b = semi + 1;
    }
  }
  if (rc != RIVER_SUCCESS) {
    river_perturb_destroy(p);
    return rc;
  }
  *out = p;
  return RIVER_SUCCESS;
}

void river_perturb_destroy(river_perturb *p)
{
  if (p == NULL)
    return;
  free(p->e);
  free(p);
}

static int river_perturb_kind_ok(int kind)
{
  return kind == RIVER_PERTURB_DISK || kind == RIVER_PERTURB_CPU;
}

int river_perturb_factor(const river_perturb *p, int kind, int index,
                         double t, double *factor)
{
  size_t i;

  if (p == NULL || factor == NULL || !river_perturb_kind_ok(kind)
      || index < 0 || isnan(t))
    return RIVER_EINVAL;
  for (i = p->n; i-- > 0;) {
    const struct river_perturb_entry *x = &p->e[i];

    if (x->kind == kind && x->lo <= index && index <= x->hi && x->start <= t) {
      *factor = x->factor;
      return RIVER_SUCCESS;
    }
  }
  *factor = 1.0;
  return RIVER_SUCCESS;
}

static int river_int_cmp(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;

  return (x > y) - (x < y);
}

/* 1 if index x's effective factor differs from 1 at some time: some
 * entry covering x with factor != 1 has no later covering entry that
 * starts no later than it. */
static int river_perturb_ever(const river_perturb *p, int kind, int x)
{
  double later_start = INFINITY;
  size_t i;

  for (i = p->n; i-- > 0;) {
    const struct river_perturb_entry *y = &p->e[i];

    if (y->kind != kind || x < y->lo || x > y->hi)
      continue;
    if (y->start < later_start) {
      if (y->factor != 1.0)
        return 1;
      later_start = y->start;
    }
  }
  return 0;
}

int river_perturb_count(const river_perturb *p, int kind, int *k)
{
  int *cut, ncut = 0, j, count = 0;
  size_t i;

  if (p == NULL || k == NULL || !river_perturb_kind_ok(kind))
    return RIVER_EINVAL;
  /* Every index in [cut[j], cut[j+1]) is covered by the same entries. */
  cut = malloc((2 * p->n + 1) * sizeof *cut);
  if (cut == NULL)
    return RIVER_ENOMEM;
  for (i = 0; i < p->n; i++) {
    if (p->e[i].kind != kind)
      continue;
    cut[ncut++] = p->e[i].lo;
    cut[ncut++] = p->e[i].hi + 1;
  }
  qsort(cut, (size_t)ncut, sizeof *cut, river_int_cmp);
  for (j = 0; j + 1 < ncut; j++)
    if (cut[j] != cut[j + 1] && river_perturb_ever(p, kind, cut[j]))
      count += cut[j + 1] - cut[j];
  free(cut);
  *k = count;
  return RIVER_SUCCESS;
}

int river_perturb_max_index(const river_perturb *p, int kind, int *max)
{
  int m = -1;
  size_t i;

  if (p == NULL || max == NULL || !river_perturb_kind_ok(kind))
    return RIVER_EINVAL;
  for (i = 0; i < p->n; i++)
    if (p->e[i].kind == kind && p->e[i].hi > m)
      m = p->e[i].hi;
  *max = m;
  return RIVER_SUCCESS;
}

/* ----------------------------------------------------- real CPU hog */

#define RIVER_HOG_WAIT 0
#define RIVER_HOG_RUN 1
#define RIVER_HOG_ABORT 2

struct river_cpu_hog {
  pthread_t thread;
  double fraction;
  atomic_int stop;
  pthread_mutex_t lock;   /* guards go */
  pthread_cond_t cond;
  int go;                 /* RIVER_HOG_WAIT until the caller has bound us */
};

/* Seconds of CPU the calling thread has used. */
static double river_thread_cpu(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Spin until this thread has used fraction x RIVER_HOG_PERIOD of CPU,
 * sleep out the rest of the period (if any is left), until stopped. */
static void *river_hog_main(void *arg)
{
  river_cpu_hog *h = arg;
  double spin = h->fraction * RIVER_HOG_PERIOD;
  int go;

  pthread_mutex_lock(&h->lock);
  while (h->go == RIVER_HOG_WAIT)
    pthread_cond_wait(&h->cond, &h->lock);
  go = h->go;
  pthread_mutex_unlock(&h->lock);
  if (go != RIVER_HOG_RUN)
    return NULL;
  while (!atomic_load(&h->stop)) {
    double t0 = river_wtime(), c0 = river_thread_cpu();

    while (river_thread_cpu() - c0 < spin && !atomic_load(&h->stop))
      ;
    river_sleep_until(t0 + RIVER_HOG_PERIOD);
  }
  return NULL;
}

/* Tell h's thread to run or abort. */
static void river_hog_release(river_cpu_hog *h, int go)
{
  pthread_mutex_lock(&h->lock);
  h->go = go;
  pthread_cond_signal(&h->cond);
  pthread_mutex_unlock(&h->lock);
}

/* Bind h's thread to the PUs this process is bound to. */
static int river_hog_bind(river_cpu_hog *h)
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
  h->go = RIVER_HOG_WAIT;
  if (pthread_mutex_init(&h->lock, NULL) != 0) {
    rc = RIVER_ENOMEM;
    goto fail_free;
  }
  if (pthread_cond_init(&h->cond, NULL) != 0) {
    rc = RIVER_ENOMEM;
    goto fail_mutex;
  }
  err = pthread_create(&h->thread, NULL, river_hog_main, h);
  if (err != 0) {
    river__error("cpu hog: cannot start a thread: %s", strerror(err));
    rc = err == EAGAIN ? RIVER_EAGAIN : RIVER_ENOMEM;
    goto fail_cond;
  }
  rc = river_hog_bind(h);
  river_hog_release(h, rc == RIVER_SUCCESS ? RIVER_HOG_RUN : RIVER_HOG_ABORT);
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
