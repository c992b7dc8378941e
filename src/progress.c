/*
 * progress.c - the progress line (river/progress.h).
 *
 * Rounds. Each rank starts round k (two MPI_Ireduce to rank 0 on the
 * progress's own communicator: the sums of records, bytes and work
 * done; the fastest and slowest rank's rate as one MAXLOC over
 * {rate, rank} and {-rate, rank}) once round k - 1 has completed here
 * and the grid's time for round k (t0 + k intervals) has come. So every
 * rank starts the same rounds in the same order, each when it can, and
 * none waits: a busy rank's round starts when it next calls in (then
 * the rounds it owes, back to back, so its numbers are soon fresh
 * again), and rank 0 shows a round when every rank has joined it. A
 * round in flight is tested every TEST_GAP at most. Calls come from
 * river_progress_add and _poll, from every River wait (a backoff hook)
 * and, in a flow, from every get and put (river__progress_tick).
 *
 * End. The ranks may have started different numbers of rounds: they
 * agree on the largest (an MPI_Allreduce on a second communicator, as
 * the rounds' own cannot take a collective out of their order), start
 * the rounds they have not, complete them, and reduce their totals
 * once more for the closing line.
 *
 * A rank's rate is its work (bytes; a flow counts what each instance
 * took in, or put out where it has no input) over a round's interval,
 * and over the whole run for the closing line.
 */
#include "river_internal.h"
#include "progress_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LABEL_MAX 40
#define EVERY_LOG 5.0       /* seconds between lines in a log */
#define EVERY_TTY 0.5       /* ... on a terminal (redrawn) */
#define ROUND_MAX 1.0       /* at most this between rounds */
#define TEST_GAP 0.002      /* between tests of a round in flight */

/* The sums a round reduces: records read (a flow's sources) and done
 * (its sinks; one count elsewhere), their bytes, and the work. */
enum { S_RIN, S_ROUT, S_BIN, S_BOUT, S_WORK, S_N };
_Static_assert(S_N == RIVER__PROGRESS_NCOUNT,
               "the flow runtime's sampler fills S_N counts");

struct dint {
  double v;
  int r;
};

struct river_progress {
  MPI_Comm comm;            /* the rounds; MPI_COMM_NULL when off */
  MPI_Comm ctl;             /* end's agreement */
  int rank, on, tty, two;
  char label[LABEL_MAX + 1];
  uint64_t total_records, total_bytes;
  uint64_t cnt[S_N];        /* this rank's, so far */
  river__progress_sample_fn sample;
  river_progress_sample_fn psample;   /* the public one's */
  void *sample_arg;
  double t0, every, round_s;
  double due;               /* when the next step has work: the next
                               round's start on the grid t0 + k x
                               round_s, or, with a round in flight, its
                               next test */
  double last_t;            /* this rank's last round's rate measured */
  uint64_t last_work;
  double last_rate;
  uint64_t rounds;          /* started here */
  int inflight;
  MPI_Request req[2];
  uint64_t sum_in[S_N], sum_out[S_N];
  struct dint mm_in[2], mm_out[2];
  /* rank 0: the last round seen and lines shown */
  double last_line;
  int lines;
  struct river__hook hook;
  river_progress *next;     /* the active ones (river__progress_tick) */
  /* Its cost on this rank (logged at debug level at the end): the
   * steps that had work (a round to start or test) and their CPU time
   * (not the wall clock's: a step the OS preempted would count the
   * other process's time). */
  uint64_t steps;
  double spent;
};

static uint64_t ticks;      /* river__progress_tick calls (its cost is a
                               clock read each; logged at the end) */

static river_progress *active;
static double next_due = 1e300;   /* the soonest round of any active */

static void due_update(void)
{
  river_progress *p;

  next_due = 1e300;
  for (p = active; p != NULL; p = p->next)
    if (p->due < next_due)
      next_due = p->due;
}

/* "h:mm:ss" or "m:ss". */
static void clock_text(double s, char *buf, size_t len)
{
  long t = s > 0 ? (long)((s < 1e9 ? s : 1e9) + 0.5) : 0;

  if (t >= 3600)
    snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else
    snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

/* A size (or, rate, a rate in bytes/s: "/s" after it) as every River
 * command prints one (river_format_size), in buf of SIZE_TEXT bytes. */
#define SIZE_TEXT (RIVER_SIZE_TEXT_MAX + 2)
static void size_text(double v, char *buf, int rate)
{
  river_format_size(!(v > 0) ? 0 : v >= 18446744073709549568.0 ? UINT64_MAX
                    : (uint64_t)(v + 0.5), buf, SIZE_TEXT);
  if (rate)
    strcat(buf, "/s");
}

/* Rank 0's line from reduced sums (S_*) and the slowest and fastest
 * rank (mm[0] the fastest, mm[1] the slowest, negated); final: the
 * closing line. A flow's (two) counts what its sources read and what
 * its sinks took in. */
static void show(river_progress *p, const uint64_t *sum,
                 const struct dint *mm, double now, int final)
{
  char line[512], el[32], eta[32], in[SIZE_TEXT], out[SIZE_TEXT],
       total[SIZE_TEXT], rin[SIZE_TEXT], rout[SIZE_TEXT], slow[SIZE_TEXT],
       fast[SIZE_TEXT];
  double t = now - p->t0, f = 0.0;
  size_t n = 0, len = sizeof line;
  int size = 1;

  MPI_Comm_size(p->comm, &size);
  clock_text(t, el, sizeof el);
  size_text((double)sum[S_BIN], in, 0);
  size_text((double)sum[S_BOUT], out, 0);
  size_text((double)p->total_bytes, total, 0);
  size_text(t > 0 ? (double)sum[S_BIN] / t : 0.0, rin, 1);
  size_text(t > 0 ? (double)sum[S_BOUT] / t : 0.0, rout, 1);
  size_text(-mm[1].v, slow, 1);
  size_text(mm[0].v, fast, 1);
  if (p->total_records > 0)
    f = p->two ? (double)(sum[S_RIN] + sum[S_ROUT])
                     / (2.0 * (double)p->total_records)
               : (double)sum[S_ROUT] / (double)p->total_records;
  if (final && p->two)
    n += (size_t)snprintf(line + n, len - n, "%s: done: read %llu records "
                          "(%s), wrote %llu (%s) in %s",
                          p->label, (unsigned long long)sum[S_RIN], in,
                          (unsigned long long)sum[S_ROUT], out, el);
  else if (final)
    n += (size_t)snprintf(line + n, len - n, "%s: done: %llu records, "
                          "%s in %s (%s)", p->label,
                          (unsigned long long)sum[S_ROUT], out, el, rout);
  else if (p->two)
    n += (size_t)snprintf(line + n, len - n, "%s: read %llu, wrote %llu "
                          "records", p->label,
                          (unsigned long long)sum[S_RIN],
                          (unsigned long long)sum[S_ROUT]);
  else
    n += (size_t)snprintf(line + n, len - n, "%s: %llu%s", p->label,
                          (unsigned long long)sum[S_ROUT],
                          p->total_records > 0 ? "" : " records");
  if (!final && n < len && p->total_records > 0)
    n += (size_t)snprintf(line + n, len - n, " of %llu%s (%.1f%%)",
                          (unsigned long long)p->total_records,
                          p->two ? "" : " records", 100.0 * f);
  if (!final && n < len && p->two)
    n += (size_t)snprintf(line + n, len - n, ", %s in, %s out", rin, rout);
  else if (!final && n < len && p->total_bytes > 0)
    n += (size_t)snprintf(line + n, len - n, ", %s of %s, %s", out, total,
                          rout);
  else if (!final && n < len)
    n += (size_t)snprintf(line + n, len - n, ", %s, %s", out, rout);
  if (!final && n < len)
    n += (size_t)snprintf(line + n, len - n, ", %s", el);
  if (!final && n < len && f > 0.0 && f < 1.0) {
    clock_text(t * (1.0 - f) / f, eta, sizeof eta);
    n += (size_t)snprintf(line + n, len - n, ", ETA %s", eta);
  }
  if (size > 1 && n < len)
    n += (size_t)snprintf(line + n, len - n, "; slowest rank %d (%s), "
                          "fastest rank %d (%s)", mm[1].r, slow, mm[0].r,
                          fast);
  if (p->tty)
    fprintf(stderr, "\r%s\033[K%s", line, final ? "\n" : "");
  else
    fprintf(stderr, "%s\n", line);
  fflush(stderr);
  p->lines++;
  p->last_line = now;
}

/* This rank's counts, fresh from the sampler where there is one. */
static void sample(river_progress *p)
{
  uint64_t r = 0, b = 0, w = 0;

  if (p->sample != NULL) {
    p->sample(p->sample_arg, p->cnt);
  } else if (p->psample != NULL) {
    p->psample(p->sample_arg, &r, &b, &w);
    p->cnt[S_RIN] = p->cnt[S_ROUT] = r;
    p->cnt[S_BIN] = p->cnt[S_BOUT] = b;
    p->cnt[S_WORK] = w;
  }
}

/* Start the next round with this rank's counts now. A rank that fell
 * behind the grid (it was busy outside River) starts the rounds it owes
 * one after another; its rate is measured over at least half a round,
 * and kept between such rounds (a rate over no time says nothing). */
static int round_start(river_progress *p, double now)
{
  double dt = now - p->last_t;

  sample(p);
  if (dt >= p->round_s / 2) {
    p->last_rate = (double)(p->cnt[S_WORK] - p->last_work) / dt;
    p->last_t = now;
    p->last_work = p->cnt[S_WORK];
  }
  memcpy(p->sum_in, p->cnt, sizeof p->sum_in);
  p->mm_in[0].v = p->last_rate;
  p->mm_in[1].v = -p->last_rate;
  p->mm_in[0].r = p->mm_in[1].r = p->rank;
  if (river__watchdog_fired())   /* nothing new starts (src/agree.c) */
    return RIVER_ETIMEDOUT;
  if (MPI_Ireduce(p->sum_in, p->sum_out, S_N, MPI_UINT64_T, MPI_SUM, 0,
                  p->comm, &p->req[0]) != MPI_SUCCESS)
    return RIVER_EMPI;
  /* Counted from here: the first is under way (the second's failure
   * leaves its request MPI_REQUEST_NULL, and the round in flight). */
  p->inflight = 1;
  p->rounds++;
  p->due = now + TEST_GAP;
  if (MPI_Ireduce(p->mm_in, p->mm_out, 2, MPI_DOUBLE_INT, MPI_MAXLOC, 0,
                  p->comm, &p->req[1]) != MPI_SUCCESS)
    return RIVER_EMPI;
  return RIVER_SUCCESS;
}

/* Rank 0 took in a round: show it when a line is due. */
static void round_done(river_progress *p, double now)
{
  if (p->rank == 0 && now - p->last_line >= p->every
      && now - p->t0 >= p->every)
    show(p, p->sum_out, p->mm_out, now, 0);
}

/* One step: take in the round in flight (tested every TEST_GAP at
 * most), or start the next when the grid says it is due. */
static int step_work(river_progress *p, double now);

static int step(river_progress *p)
{
  double now, cpu;
  int rc;

  if (p == NULL || !p->on)
    return RIVER_SUCCESS;
  now = river_wtime();
  if (now < p->due)
    return RIVER_SUCCESS;
  cpu = river__thread_cpu();
  rc = step_work(p, now);
  p->steps++;
  p->spent += river__thread_cpu() - cpu;
  return rc;
}

static int step_work(river_progress *p, double now)
{
  int done = 0;

  if (p->inflight) {
    if (MPI_Testall(2, p->req, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
      return RIVER_EMPI;
    if (!done) {
      p->due = now + TEST_GAP;
      return RIVER_SUCCESS;
    }
    p->inflight = 0;
    round_done(p, now);
  }
  p->due = p->t0 + (double)(p->rounds + 1) * p->round_s;
  if (now < p->due)
    return RIVER_SUCCESS;
  return round_start(p, now);
}

static void hook_fn(void *arg)
{
  river_progress *p = arg;

  step(p);
  due_update();
}

void river__progress_tick(void)
{
  river_progress *p;

  ticks++;
  if (active == NULL || river_wtime() < next_due)
    return;
  for (p = active; p != NULL; p = p->next)
    step(p);
  due_update();
}

/* RIVER_PROGRESS: 1 on, 0 off, dflt unset. A display setting never
 * fails a job: a value not understood is warned about (where say: rank
 * 0, whose setting decides) and dflt taken. */
static int wanted(int dflt, int say)
{
  const char *v = getenv("RIVER_PROGRESS");

  if (v == NULL || *v == '\0')
    return dflt;
  if (!strcmp(v, "1") || !strcmp(v, "on") || !strcmp(v, "yes")
      || !strcmp(v, "true"))
    return 1;
  if (!strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "no")
      || !strcmp(v, "false"))
    return 0;
  if (say)
    river_log(RIVER_LOG_WARN, "RIVER_PROGRESS=%s: expected 1, on, yes, "
              "true, 0, off, no or false; taken as unset", v);
  return dflt;
}

/* RIVER_PROGRESS_EVERY: seconds between lines in a log; a value not
 * understood is warned about (where say) and the default taken. */
static double every_log(int say)
{
  const char *v = getenv("RIVER_PROGRESS_EVERY");
  char *end = NULL;
  double s;

  if (v == NULL || *v == '\0')
    return EVERY_LOG;
  s = strtod(v, &end);
  if (end == v || *end != '\0' || !(s >= 0.01 && s <= 86400.0)) {
    if (say)
      river_log(RIVER_LOG_WARN, "RIVER_PROGRESS_EVERY=%s: expected "
                "seconds, 0.01 to 86400; %g taken", v, EVERY_LOG);
    return EVERY_LOG;
  }
  return s;
}

/* Whether rank 0's stderr is a terminal: RIVER_PROGRESS_TTY 1 or 0
 * where set (a launcher's stderr may be one while a rank's is a pipe to
 * it: scripts/river-mpirun sets it), else isatty. */
static int on_terminal(void)
{
  const char *v = getenv("RIVER_PROGRESS_TTY");

  if (v != NULL && strcmp(v, "1") == 0)
    return 1;
  if (v != NULL && strcmp(v, "0") == 0)
    return 0;
  return isatty(STDERR_FILENO);
}

static int label_ok(const char *label)
{
  size_t i, n = strlen(label);

  if (n == 0 || n > LABEL_MAX)
    return 0;
  for (i = 0; i < n; i++)
    if (iscntrl((unsigned char)label[i]))
      return 0;
  return 1;
}

/* The creates' body: sampled by fn (the runtime's) or pfn (a
 * caller's), or by river_progress_add; rc, this rank's own check so
 * far, is agreed with the others'. */
static int create(MPI_Comm comm, const char *label, uint64_t total_records,
                  uint64_t total_bytes, int dflt,
                  river__progress_sample_fn fn,
                  river_progress_sample_fn pfn, void *arg, int rc,
                  river_progress **out)
{
  river_progress *p;
  double cfg[3];    /* rank 0's: on, every, tty */
  int on, rank;
  double every;

  if (rc == RIVER_SUCCESS && (out == NULL || label == NULL
                              || !label_ok(label))) {
    river__error("river_progress_create: %s", out == NULL ? "out is NULL"
                 : "label must be 1 to 40 characters, none a control "
                   "character");
    rc = RIVER_EINVAL;
  }
  if (out != NULL)
    *out = NULL;
  if (comm == MPI_COMM_NULL) {
    river__error("river_progress_create: comm is MPI_COMM_NULL");
    return RIVER_EINVAL;
  }
  p = rc == RIVER_SUCCESS ? calloc(1, sizeof *p) : NULL;
  if (rc == RIVER_SUCCESS && p == NULL)
    rc = RIVER_ENOMEM;
  MPI_Comm_rank(comm, &rank);
  on = wanted(dflt, rank == 0);
  every = every_log(rank == 0 && on);
  cfg[0] = on;
  cfg[1] = every;
  cfg[2] = rank == 0 && on_terminal();
  if (p != NULL)
    p->rank = rank;
  rc = river__agree(comm, rc);
  if (rc == RIVER_SUCCESS)
    rc = river__bcast(cfg, 3, MPI_DOUBLE, 0, comm);
  if (rc != RIVER_SUCCESS) {
    free(p);
    return rc;
  }
  p->comm = p->ctl = MPI_COMM_NULL;
  p->on = cfg[0] > 0.5;
  p->tty = cfg[2] > 0.5;
  p->every = p->tty ? EVERY_TTY : cfg[1];
  p->round_s = p->every < ROUND_MAX ? p->every : ROUND_MAX;
  snprintf(p->label, sizeof p->label, "%s", label);
  p->total_records = total_records;
  p->total_bytes = total_bytes;
  p->sample = fn;
  p->psample = pfn;
  p->two = fn != NULL;
  p->sample_arg = arg;
  p->t0 = p->last_t = river_wtime();
  p->due = p->t0 + p->round_s;
  p->req[0] = p->req[1] = MPI_REQUEST_NULL;
  if (p->on) {
    rc = river__comm_dup(comm, &p->comm);
    if (rc == RIVER_SUCCESS)
      rc = river__comm_dup(comm, &p->ctl);
    rc = river__agree(comm, rc);
    if (rc != RIVER_SUCCESS) {
      if (p->comm != MPI_COMM_NULL)
        MPI_Comm_free(&p->comm);
      if (p->ctl != MPI_COMM_NULL)
        MPI_Comm_free(&p->ctl);
      free(p);
      return rc;
    }
    p->hook.fn = hook_fn;
    p->hook.arg = p;
    river__backoff_hook_add(&p->hook);
    p->next = active;
    active = p;
    due_update();
  }
  *out = p;
  return RIVER_SUCCESS;
}

int river__progress_create(MPI_Comm comm, const char *label,
                           uint64_t total_records, uint64_t total_bytes,
                           int dflt, river__progress_sample_fn fn,
                           void *arg, river_progress **out)
{
  return create(comm, label, total_records, total_bytes, dflt, fn, NULL,
                arg, RIVER_SUCCESS, out);
}

int river_progress_create(MPI_Comm comm, const char *label,
                          uint64_t total_records, uint64_t total_bytes,
                          river_progress **out)
{
  return create(comm, label, total_records, total_bytes, 1, NULL, NULL,
                NULL, RIVER_SUCCESS, out);
}

int river_progress_create_sampled(MPI_Comm comm, const char *label,
                                  uint64_t total_records,
                                  uint64_t total_bytes,
                                  river_progress_sample_fn fn, void *arg,
                                  river_progress **out)
{
  int rc = RIVER_SUCCESS;

  if (fn == NULL) {   /* still collective: the others are told */
    river__error("river_progress_create_sampled: fn is NULL");
    rc = RIVER_EINVAL;
  }
  return create(comm, label, total_records, total_bytes, 1, NULL, fn, arg,
                rc, out);
}

int river_progress_add(river_progress *p, uint64_t records, uint64_t bytes)
{
  if (p == NULL || p->sample != NULL || p->psample != NULL)
    return RIVER_EINVAL;
  p->cnt[S_RIN] += records;
  p->cnt[S_ROUT] += records;
  p->cnt[S_BIN] += bytes;
  p->cnt[S_BOUT] += bytes;
  p->cnt[S_WORK] += bytes;
  return river_progress_poll(p);
}

int river_progress_poll(river_progress *p)
{
  int rc;

  if (p == NULL)
    return RIVER_EINVAL;
  if (!p->on || river_wtime() < p->due)
    return RIVER_SUCCESS;
  rc = step(p);
  due_update();
  return rc;
}

int river_progress_on(const river_progress *p, int *on)
{
  if (p == NULL || on == NULL)
    return RIVER_EINVAL;
  *on = p->on;
  return RIVER_SUCCESS;
}

static void unlink_active(river_progress *p)
{
  river_progress **pp;

  for (pp = &active; *pp != NULL; pp = &(*pp)->next)
    if (*pp == p) {
      *pp = p->next;
      break;
    }
  due_update();
}

/* End's rounds and closing reduction (p on); ok: this rank's work
 * succeeded. The closing line only where every rank's did; a line
 * redrawn on a terminal is ended either way, so what follows starts on
 * a line of its own. */
static int finish(river_progress *p, int ok)
{
  uint64_t most = 0, sum[S_N + 1];
  struct dint mm[2];
  double now, t;
  int rc = RIVER_SUCCESS;

  sample(p);
  if ((rc = river__allreduce(&p->rounds, &most, 1, MPI_UINT64_T, MPI_MAX,
                             p->ctl)) != RIVER_SUCCESS)
    return rc;
  for (;;) {
    if (p->inflight) {
      if ((rc = river_waitall(2, p->req)) != RIVER_SUCCESS)
        return rc;
      p->inflight = 0;
    }
    if (p->rounds >= most)
      break;
    if ((rc = round_start(p, river_wtime())) != RIVER_SUCCESS)
      return rc;
  }
  now = river_wtime();
  t = now - p->t0;
  memcpy(sum, p->cnt, S_N * sizeof *sum);
  sum[S_N] = !ok;   /* ranks that failed */
  mm[0].v = t > 0 ? (double)p->cnt[S_WORK] / t : 0.0;
  mm[1].v = -mm[0].v;
  mm[0].r = mm[1].r = p->rank;
  if ((rc = river__allreduce(MPI_IN_PLACE, sum, S_N + 1, MPI_UINT64_T,
                             MPI_SUM, p->ctl)) != RIVER_SUCCESS
      || (rc = river__allreduce(MPI_IN_PLACE, mm, 2, MPI_DOUBLE_INT,
                                MPI_MAXLOC, p->ctl)) != RIVER_SUCCESS)
    return rc;
  if (p->rank == 0 && p->lines > 0 && sum[S_N] == 0) {
    show(p, sum, mm, now, 1);
  } else if (p->rank == 0 && p->lines > 0 && p->tty) {
    fputc('\n', stderr);
    fflush(stderr);
  }
  return RIVER_SUCCESS;
}

int river_progress_end(river_progress *p, int ok)
{
  int rc = RIVER_SUCCESS;

  if (p == NULL)
    return RIVER_EINVAL;
  if (p->on) {
    river__backoff_hook_remove(&p->hook);
    unlink_active(p);
    rc = finish(p, ok);
    river_log(RIVER_LOG_DEBUG, "progress %s: %llu rounds; %llu steps with "
              "work took %.3f ms of CPU in %.3f s; %llu ticks so far", p->label,
              (unsigned long long)p->rounds, (unsigned long long)p->steps,
              1e3 * p->spent, river_wtime() - p->t0,
              (unsigned long long)ticks);
    if (rc != RIVER_SUCCESS && p->inflight)
      return rc;  /* a round may still land in p: it stays */
    MPI_Comm_free(&p->comm);
    MPI_Comm_free(&p->ctl);
  }
  free(p);
  return rc;
}

void river__progress_drop(river_progress *p)
{
  if (p == NULL)
    return;
  if (p->on) {
    river__backoff_hook_remove(&p->hook);
    unlink_active(p);
    if (p->inflight)
      return;   /* a round may still land in it: it stays */
    MPI_Comm_free(&p->comm);
    MPI_Comm_free(&p->ctl);
  }
  free(p);
}
