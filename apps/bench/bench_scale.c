/*
 * river-bench scale - a distributed queue's memory and control work per
 * message against the number of ranks (issue 41; the model it is
 * checked against is doc/design.md's "Queue memory"):
 *
 *   mpirun -n N river-bench scale queues [--repeats R (3)] [--csv FILE]
 *                                        [--message-size BYTES] [--group G]
 *
 * At the job's size n, the first n/2 ranks produce and the next n/2
 * consume (an odd rank out takes part in the collectives only), one
 * queue of each kind in turn. With --group G (dividing N), the ranks
 * split into N / G groups of G, each running its own queue of G/2
 * producers and G/2 consumers at the same time: the machine's load is
 * that of N ranks, the queue's peers G's, so runs at one N and several
 * G tell what the number of peers costs apart from what an
 * oversubscribed machine adds (the CSV's n_producers and n_consumers
 * are the group's). The kinds: PUSH, STATIC, PULL (a unit every 4
 * messages) and EXCHANGE (records spread by a hash of their number).
 * Each kind runs "even" (every consumer at full speed) and "lag"
 * (consumer 0 sleeps after every message it gets: 1 ms in the memory
 * phase, 200 us in the work phase, 5% of the others' speed or less),
 * interleaved, --repeats times. Queues use the library's defaults
 * (credits, pacing); --message-size sets the memory phase's message.
 *
 * Each run has two phases, each its own queue:
 *   mem   MEM_MESSAGES messages per producer of the default size (256
 *         KiB): river_dq_stats.memory_bytes (what the queue counted
 *         itself holding at most: message buffers, requests, per-peer
 *         words), the maximum over producers and over consumers; and
 *         the growth of the process heap (glibc's mallinfo2, River's and
 *         MPI's allocations both, e.g. MPI's unexpected messages),
 *         sampled every few messages, the maximum over ranks.
 *   work  WORK_MESSAGES messages per producer of 4 KiB (MPI sends them
 *         eagerly: little copying, mostly control work): the CPU time
 *         (the thread's: not the time it was descheduled, as a rank on
 *         an oversubscribed machine often is) of each try_put of a
 *         message's records (producer) and try_get (consumer) that moved
 *         one, the median of each rank's calls, then the median and the
 *         maximum over ranks (less the timer's own cost, measured at
 *         the start); and River's own part of it: less the CPU time of
 *         the MPI calls made inside (counted by PMPI wrappers,
 *         apps/bench/pmpi_count.c);
 *         beside it, for scale, MPI's own: the
 *         median CPU time of an MPI_Iprobe that finds nothing; and a
 *         control: a fixed piece of work (CTL_LINES cache lines, one a
 *         page, read and written), timed the same way right after each
 *         of those calls, the median over ranks. Its time grows with n
 *         only by what the machine adds: on an oversubscribed core the
 *         other ranks run between two calls and evict this one's lines,
 *         and River's calls pay that too (scripts/scale-fit fits
 *         River's own time in units of it as well); and the control
 *         work counted rather than timed: river_dq_stats.peer_steps
 *         (every producer or consumer entry the queue's calls looked
 *         at) in each of those calls, the median of a rank's, then the
 *         median and maximum over ranks. A count: the machine's load
 *         moves it only where it changes what a call finds.
 * RIVER_DQ_READ_ALL=0 in the environment runs every queue as it runs
 * beyond 64 consumers (src/dq_internal.h: one credit word a message,
 * PUSH's window); the CSV's read_all column says which ran.
 * Every record is checked: each consumer sees every producer's records
 * in the order put (FIFO per pair), and the count, sum and XOR of the
 * records' hashes got equal those put (exactly once).
 *
 * Rank 0 prints a row per run and, for each kind and lag, the medians
 * over repeats with their min..max; the CSV has a row per run. The fit
 * over n (and the prediction at 1,000 and 10,000 ranks) is
 * scripts/scale-fit's, over the CSVs of runs at several n.
 */
#include "bench.h"
#include "pmpi_count.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

/* The suite's own options (the table at the end). */
static struct scale_opts {
  int group;               /* --group, ranks per queue (0: all) */
  size_t message_size;     /* --message-size, the memory phase's (0: the
                              queue's default) */
} scale_opt = {0, 0};

#define REC 100                 /* record size */
#define MEM_MESSAGES 32
#define WORK_MESSAGES 1000
#define WORK_MESSAGE_SIZE 4096
#define UNIT_MESSAGES 4         /* PULL: messages per unit */
#define HEAP_EVERY 8            /* messages between heap samples */
#define PROBES 1000
#define CTL_LINES 32            /* the control's cache lines */

/* One run's figures on one rank, and (rank 0) over the ranks. */
struct scale_res {
  double mem_prod, mem_cons;    /* memory_bytes, MiB */
  double heap;                  /* heap growth, MiB */
  double put_us, put_us_max;    /* work: a producer's median call */
  double get_us, get_us_max;    /* work: a consumer's median call */
  double put_own, get_own;      /* ... River's own part (less MPI's) */
  double seconds;               /* both phases */
  double probe_us;              /* MPI's own: an MPI_Iprobe that finds
                                   nothing, median over ranks */
  double ctl_us;                /* the control, median over ranks */
  double put_mpi, get_mpi;      /* MPI calls River made per call, the
                                   mean of each rank's, median over
                                   ranks */
  double put_steps, get_steps;  /* peer entries the queue looked at in
                                   a call that moved a message
                                   (river_dq_stats.peer_steps), the
                                   median of each rank's calls, median
                                   over ranks: the control work,
                                   counted, not timed */
  double put_steps_max, get_steps_max;
  int ok;
};

/* glibc's heap in use (bytes), or 0 where there is no mallinfo2. */
static double heap_now(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
  struct mallinfo2 m = mallinfo2();

  return (double)m.uordblks + (double)m.hblkhd;
#else
  return 0.0;
#endif
}

/* This thread's CPU time (s): a call's time without the time it was
 * descheduled, as on an oversubscribed machine it often is. */
static double cpu_now(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The median cost of a cpu_now() pair, taken off every call's time
 * (calibrate). */
static double timer_cost;


static void calibrate(void)
{
  double v[PROBES], t0;
  int i;

  for (i = 0; i < PROBES; i++) {
    t0 = cpu_now();
    v[i] = cpu_now() - t0;
  }
  timer_cost = bench_median(v, PROBES);
}


static void nap(long *ns)
{
  struct timespec ts = {0, *ns};

  nanosleep(&ts, NULL);
  if (*ns < 1000000L)
    *ns *= 2;
}

static uint64_t rec_hash(const unsigned char *r)
{
  uint64_t h = REC, w;
  size_t i;

  for (i = 0; i + 8 <= REC; i += 8) {
    memcpy(&w, r + i, 8);
    h = river_hash64(h ^ w);
  }
  for (; i < REC; i++)
    h = river_hash64(h ^ r[i]);
  return h;
}

/* Record seq of producer p: its number, its producer, filler. */
static void rec_make(unsigned char *r, int p, uint64_t seq)
{
  uint32_t pp = (uint32_t)p;

  memset(r, (int)(seq * 31 + (uint64_t)p), REC);
  memcpy(r, &seq, 8);
  memcpy(r + 8, &pp, 4);
}

static int by_number(const void *record, int nconsumers, void *ctx)
{
  uint64_t seq;

  (void)ctx;
  memcpy(&seq, record, 8);
  return (int)(river_hash64(seq) % (uint64_t)nconsumers);
}

/* What one rank saw in one phase. */
struct phase {
  uint64_t n, sum, xor;         /* records and their hashes */
  int fifo_bad;                 /* records out of their producer's order */
  double heap0, heap_peak;
  double *call;                 /* times of the calls that moved one */
  double *own;                  /* ... River's own (less MPI's) */
  double *ctl;                  /* the control after each of them */
  double mpi;                   /* the MPI calls in them */
  int ncall, cap;
  uint64_t memory;              /* the queue's memory_bytes */
  double *stp;                  /* the peer steps of each of those calls */
};

/* The queue's peer steps so far (river_dq_stats.peer_steps). */
static uint64_t steps_now(const river_dq *q)
{
  river_dq_stats st;

  return river_dq_stats_get(q, &st) == RIVER_SUCCESS ? st.peer_steps : 0;
}

static void sample_heap(struct phase *ph, uint64_t k)
{
  double h;

  if (k % HEAP_EVERY != 0)
    return;
  h = heap_now() - ph->heap0;
  if (h > ph->heap_peak)
    ph->heap_peak = h;
}


/* The control's buffer: CTL_LINES pages. */
static unsigned char ctl_buf[CTL_LINES * 4096];

/* The control, once: its CPU time less the timer's. The same lines of
 * ctl_buf each time, read and written (volatile: all of them, every
 * time). */
static double control_once(void)
{
  volatile unsigned char *b = ctl_buf;
  unsigned v = 0;
  double t0 = cpu_now();
  int i;

  for (i = 0; i < CTL_LINES; i++) {
    v += b[(size_t)i * 4096 + (size_t)(i % 64) * 64];
    b[(size_t)i * 4096 + (size_t)(i % 64) * 64] = (unsigned char)v;
  }
  return cpu_now() - t0 - timer_cost;
}

/* A call that moved a message: from its CPU time (t1 - t0) and the MPI
 * calls in it (since m0, c0), its whole time and River's own, each less
 * the timers' cost (one pair outside, two reads per MPI call inside,
 * one of which the MPI call's own time already holds). */
static void add_call(struct phase *ph, double t0, double t1, double m0,
                     long c0, uint64_t steps)
{
  double dm = pmpi_count_cpu() - m0;
  double dc = (double)(pmpi_count_calls() - c0);

  if (ph->ncall >= ph->cap)
    return;
  ph->call[ph->ncall] = t1 - t0 - (2 * dc + 1) * timer_cost;
  ph->own[ph->ncall] = t1 - t0 - dm - (dc + 1) * timer_cost;
  ph->stp[ph->ncall] = (double)steps;
  ph->ctl[ph->ncall++] = control_once();
  ph->mpi += dc;
}

/* Producer p: nmsg messages through q, each one try_put of a whole
 * message's records (per_msg). */
static int produce(river_dq *q, river_dq_policy kind, int p, int nmsg,
                   size_t per_msg, struct phase *ph)
{
  unsigned char *batch = malloc(per_msg * REC);
  uint64_t seq = 0;
  size_t i;
  double t0, t1, m0;
  long ns, c0;
  int m, rc = RIVER_SUCCESS;
  uint64_t s0 = 0;

  if (batch == NULL)
    return RIVER_ENOMEM;
  for (m = 0; m < nmsg && rc == RIVER_SUCCESS; m++) {
    for (i = 0; i < per_msg; i++) {
      unsigned char *r = batch + i * REC;
      rec_make(r, p, seq + i);
      ph->sum += rec_hash(r);
      ph->xor ^= rec_hash(r);
    }
    ns = 1000;
    for (;;) {
      s0 = steps_now(q);
      m0 = pmpi_count_cpu();
      c0 = pmpi_count_calls();
      t0 = cpu_now();
      rc = river_dq_try_put(q, batch, per_msg);
      t1 = cpu_now();
      if (rc != RIVER_EAGAIN)
        break;
      nap(&ns);
    }
    if (rc != RIVER_SUCCESS)
      break;
    add_call(ph, t0, t1, m0, c0, steps_now(q) - s0);
    seq += per_msg;
    ph->n += per_msg;
    sample_heap(ph, (uint64_t)m);
    if (kind == RIVER_DQ_PULL && (m + 1) % UNIT_MESSAGES == 0)
      rc = river_dq_end_unit(q);
  }
  free(batch);
  /* Closed whatever happened: the consumers wait for its end. */
  {
    int r = river_dq_close(q);
    return rc != RIVER_SUCCESS ? rc : r;
  }
}

/* A consumer: everything until EOS, sleeping lag_us after each message. */
static int consume(river_dq *q, int nprod, long lag_us, struct phase *ph)
{
  uint64_t *next = calloc((size_t)nprod, sizeof *next), seq;
  const void *recs;
  size_t n, i;
  double t0, t1, m0;
  long ns = 1000, c0;
  int from, rc;
  uint32_t p;
  uint64_t s0;

  if (next == NULL)
    return RIVER_ENOMEM;
  for (;;) {
    s0 = steps_now(q);
    m0 = pmpi_count_cpu();
    c0 = pmpi_count_calls();
    t0 = cpu_now();
    rc = river_dq_try_get(q, &recs, &n, &from);
    t1 = cpu_now();
    if (rc == RIVER_EAGAIN) {
      nap(&ns);
      continue;
    }
    if (rc != RIVER_SUCCESS)
      break;
    ns = 1000;
    add_call(ph, t0, t1, m0, c0, steps_now(q) - s0);
    for (i = 0; i < n; i++) {
      const unsigned char *r = (const unsigned char *)recs + i * REC;
      memcpy(&seq, r, 8);
      memcpy(&p, r + 8, 4);
      if (p != (uint32_t)from || (int)p >= nprod || seq < next[p])
        ph->fifo_bad++;
      else
        next[p] = seq + 1;
      ph->sum += rec_hash(r);
      ph->xor ^= rec_hash(r);
    }
    ph->n += n;
    sample_heap(ph, ph->n);
    if (lag_us > 0) {
      struct timespec ts = {0, lag_us * 1000L};
      nanosleep(&ts, NULL);
    }
  }
  free(next);
  return rc == RIVER_EOS ? RIVER_SUCCESS : rc;
}

/* One phase: a queue of kind with messages of msize, nmsg per producer. */
static int run_phase(MPI_Comm comm, int np, river_dq_policy kind,
                     size_t msize, int nmsg, long lag_us, struct phase *ph)
{
  river_dq_opts o = RIVER_DQ_OPTS_INIT;
  river_dq *q = NULL;
  river_dq_stats st;
  int me, size, role, rc, r;

  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &size);
  role = me < np ? RIVER_DQ_PRODUCER : me < 2 * np ? RIVER_DQ_CONSUMER : 0;
  o.policy = kind;
  o.message_size = msize;
  if (kind == RIVER_DQ_EXCHANGE)
    o.partition = by_number;
  ph->heap0 = heap_now();
  if ((rc = river_dq_create(comm, role, REC, &o, &q)) != RIVER_SUCCESS)
    return rc;
  MPI_Barrier(comm);
  if (role == RIVER_DQ_PRODUCER)
    rc = produce(q, kind, me, nmsg,
                 ((msize ? msize : RIVER_DQ_DEFAULT_MESSAGE_SIZE)
                  - RIVER_DQ_HEADER_SIZE) / REC, ph);
  else if (role == RIVER_DQ_CONSUMER)
    rc = consume(q, np, me == np ? lag_us : 0, ph);
  if (river_dq_stats_get(q, &st) == RIVER_SUCCESS)
    ph->memory = st.memory_bytes;
  r = river_dq_destroy(q);
  return rc != RIVER_SUCCESS ? rc : r;
}

/* Over WORLD: the median and maximum of v over the ranks with has. */
static void over_ranks(double v, int has, double *med, double *max)
{
  int size, i, n = 0;
  double *all, mine[2] = {v, has};

  MPI_Comm_size(MPI_COMM_WORLD, &size);
  all = malloc(sizeof *all * 2 * (size_t)size);
  if (all == NULL) {
    *med = *max = -1.0;
    return;
  }
  MPI_Allgather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, MPI_COMM_WORLD);
  *max = 0.0;
  for (i = 0; i < size; i++)
    if (all[2 * i + 1] != 0.0) {
      all[n++] = all[2 * i];
      *max = all[2 * i] > *max ? all[2 * i] : *max;
    }
  *med = bench_median(all, n);
  free(all);
}

/* Exactly once and FIFO over WORLD: the records and their hashes put
 * equal those got, none out of order, and some got. */
static int data_ok(const struct phase *ph, int role)
{
  uint64_t v[4] = {0}, sum[4], x, xall = 0;

  if (role == RIVER_DQ_PRODUCER) {
    v[0] = ph->n;
    v[1] = ph->sum;
  } else if (role == RIVER_DQ_CONSUMER) {
    v[0] = (uint64_t)0 - ph->n;
    v[1] = (uint64_t)0 - ph->sum;
    v[3] = ph->n;
  }
  v[2] = (uint64_t)ph->fifo_bad;
  x = role != 0 ? ph->xor : 0;
  MPI_Allreduce(v, sum, 4, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&x, &xall, 1, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD);
  return sum[0] == 0 && sum[1] == 0 && sum[2] == 0 && sum[3] > 0
         && xall == 0;
}

/* MPI's own work at this size, for scale: the median CPU time of an
 * MPI_Iprobe (any source) that finds nothing, on every rank at once. */
static double probe_us(void)
{
  double v[PROBES], t0, med, max;
  int i, flag;

  MPI_Barrier(MPI_COMM_WORLD);
  for (i = 0; i < PROBES; i++) {
    t0 = cpu_now();
    MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag,
               MPI_STATUS_IGNORE);
    v[i] = cpu_now() - t0 - timer_cost;
  }
  over_ranks(1e6 * bench_median(v, PROBES), 1, &med, &max);
  return med;
}

static const char *kind_name(river_dq_policy k)
{
  return k == RIVER_DQ_PUSH ? "push" : k == RIVER_DQ_STATIC ? "static"
         : k == RIVER_DQ_PULL ? "pull" : "exchange";
}

/* The ranks of one queue: --group of them, or the whole job. */
static int group_size(const struct bench *b)
{
  return scale_opt.group > 0 ? scale_opt.group : b->size;
}

/* One run of a kind on this rank's group qc (its queue): both phases,
 * the figures to every rank. */
static int run_once(struct bench *b, MPI_Comm qc, river_dq_policy kind,
                    int lag, struct scale_res *res)
{
  struct phase mem = {0}, work = {0};
  int np = group_size(b) / 2, me, role, rc, r, ok;
  size_t msize = scale_opt.message_size;
  double t0, med;

  MPI_Comm_rank(qc, &me);
  role = me < np ? RIVER_DQ_PRODUCER : me < 2 * np ? RIVER_DQ_CONSUMER : 0;
  work.cap = WORK_MESSAGES * (role == RIVER_DQ_CONSUMER ? 2 * np : 1) + 16;
  work.call = malloc(sizeof *work.call * (size_t)work.cap);
  work.own = malloc(sizeof *work.own * (size_t)work.cap);
  work.ctl = malloc(sizeof *work.ctl * (size_t)work.cap);
  work.stp = malloc(sizeof *work.stp * (size_t)work.cap);
  if (work.call == NULL || work.own == NULL || work.ctl == NULL
      || work.stp == NULL)
    work.cap = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  t0 = MPI_Wtime();
  rc = run_phase(qc, np, kind, msize, MEM_MESSAGES,
                 lag ? 1000 : 0, &mem);
  ok = data_ok(&mem, role);
  if (rc == RIVER_SUCCESS)
    rc = run_phase(qc, np, kind, WORK_MESSAGE_SIZE,
                   WORK_MESSAGES, lag ? 200 : 0, &work);
  ok &= data_ok(&work, role);
  res->seconds = MPI_Wtime() - t0;
  res->ok = ok && work.cap > 0;
  over_ranks((double)mem.memory / (1 << 20), role == RIVER_DQ_PRODUCER,
             &med, &res->mem_prod);
  over_ranks((double)mem.memory / (1 << 20), role == RIVER_DQ_CONSUMER,
             &med, &res->mem_cons);
  over_ranks((mem.heap_peak > work.heap_peak ? mem.heap_peak
                                             : work.heap_peak) / (1 << 20),
             role != 0, &med, &res->heap);
  over_ranks(1e6 * bench_median(work.call, work.ncall),
             role == RIVER_DQ_PRODUCER, &res->put_us, &res->put_us_max);
  over_ranks(1e6 * bench_median(work.call, work.ncall),
             role == RIVER_DQ_CONSUMER, &res->get_us, &res->get_us_max);
  over_ranks(1e6 * bench_median(work.own, work.ncall),
             role == RIVER_DQ_PRODUCER, &res->put_own, &med);
  over_ranks(1e6 * bench_median(work.own, work.ncall),
             role == RIVER_DQ_CONSUMER, &res->get_own, &med);
  over_ranks(1e6 * bench_median(work.ctl, work.ncall), role != 0,
             &res->ctl_us, &med);
  over_ranks(work.ncall > 0 ? work.mpi / work.ncall : 0.0,
             role == RIVER_DQ_PRODUCER, &res->put_mpi, &med);
  over_ranks(work.ncall > 0 ? work.mpi / work.ncall : 0.0,
             role == RIVER_DQ_CONSUMER, &res->get_mpi, &med);
  over_ranks(bench_median(work.stp, work.ncall), role == RIVER_DQ_PRODUCER,
             &res->put_steps, &res->put_steps_max);
  over_ranks(bench_median(work.stp, work.ncall), role == RIVER_DQ_CONSUMER,
             &res->get_steps, &res->get_steps_max);
  free(work.call);
  free(work.own);
  free(work.ctl);
  free(work.stp);
  res->probe_us = probe_us();
  r = RIVER_SUCCESS;
  MPI_Allreduce(&rc, &r, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!res->ok)
    b->failures++;
  return r != RIVER_SUCCESS ? r : res->ok ? RIVER_SUCCESS : RIVER_ECORRUPT;
}

/* What RIVER_DQ_READ_ALL says (the CSV's read_all column). */
static const char *read_all_label(void)
{
  const char *v = getenv("RIVER_DQ_READ_ALL");

  return v != NULL && *v != '\0' ? v : "default";
}

static void print_row(struct bench *b, river_dq_policy kind, int lag,
                      int rep, const struct scale_res *r)
{
  int np = group_size(b) / 2;

  if (b->rank != 0)
    return;
  printf("%-8s %-4s n=%-3d rep %d  memory: producer %7.3f MiB, consumer "
         "%7.3f MiB, heap %7.2f MiB;  work: put %6.2f us (max %6.2f), get "
         "%6.2f us (max %6.2f); own: put %5.2f, get %5.2f us; MPI_Iprobe %5.2f "
         "us; control %5.2f us; MPI calls: put %.2f, get %.2f; peer steps "
         "a message: put %.2f (max %.2f), get %.2f (max %.2f)  (%.2f s)%s\n",
         kind_name(kind), lag ? "lag" : "even", b->size, rep, r->mem_prod,
         r->mem_cons, r->heap, r->put_us, r->put_us_max, r->get_us,
         r->get_us_max, r->put_own, r->get_own, r->probe_us, r->ctl_us,
         r->put_mpi, r->get_mpi, r->put_steps, r->put_steps_max,
         r->get_steps, r->get_steps_max, r->seconds,
         r->ok ? "" : "  DATA CHECK FAILED");
  fflush(stdout);
  if (b->csv)
    fprintf(b->csv, "%s,%s,%d,%d,%d,%d,%.4f,%.4f,%.4f,%.3f,%.3f,%.3f,%.3f,"
                    "%.3f,%.3f,%.3f,%.3f,%d,%.3f,%.3f,%.3f,%s,%.3f,%.3f,"
                    "%.3f,%.3f\n",
            kind_name(kind), lag ? "lag" : "even", b->size, np, np, rep,
            r->mem_prod, r->mem_cons, r->heap, r->put_us, r->put_us_max,
            r->get_us, r->get_us_max, r->put_own, r->get_own, r->probe_us,
            r->seconds, r->ok, r->ctl_us, r->put_mpi, r->get_mpi,
            read_all_label(), r->put_steps, r->put_steps_max, r->get_steps,
            r->get_steps_max);
}

/* Rank 0: the median of field f over the repeats, with min..max. */
static void print_spread(const char *what, const struct scale_res *rs,
                         int n, size_t off)
{
  double v[64], lo = 1e300, hi = -1e300;
  int i;

  for (i = 0; i < n; i++) {
    memcpy(&v[i], (const char *)&rs[i] + off, sizeof v[i]);
    lo = v[i] < lo ? v[i] : lo;
    hi = v[i] > hi ? v[i] : hi;
  }
  printf("  %s %.3f (%.3f..%.3f)", what, bench_median(v, n), lo, hi);
}

static int exp_queues(struct bench *b)
{
  static const river_dq_policy kinds[] = {RIVER_DQ_PUSH, RIVER_DQ_STATIC,
                                          RIVER_DQ_PULL, RIVER_DQ_EXCHANGE};
  struct scale_res res[4][2][64];
  MPI_Comm qc;
  int k, lag, rep, rc = RIVER_SUCCESS, g = group_size(b);

  calibrate();
  if (b->rank == 0)
    printf("scale: call times are CPU time, less the timer's own %.3f us; "
           "RIVER_DQ_READ_ALL %s\n", 1e6 * timer_cost, read_all_label());
  if (b->size < 2 || g > b->size || b->size % g != 0) {
    if (b->rank == 0)
      river_log(RIVER_LOG_ERROR, b->size < 2
                ? "scale: needs at least 2 ranks"
                : "scale: --group %d must divide the job's %d ranks", g,
                b->size);
    return RIVER_EINVAL;
  }
  /* Groups of g ranks, each its own queue at once: the machine's load
   * is the job's, the queue's peers the group's. */
  if (MPI_Comm_split(MPI_COMM_WORLD, b->rank / g, b->rank, &qc)
      != MPI_SUCCESS)
    return RIVER_EMPI;
  for (rep = 0; rep < b->repeats; rep++)
    for (k = 0; k < 4; k++)
      for (lag = 0; lag < 2; lag++) {
        rc = run_once(b, qc, kinds[k], lag, &res[k][lag][rep]);
        print_row(b, kinds[k], lag, rep, &res[k][lag][rep]);
        if (rc != RIVER_SUCCESS && rc != RIVER_ECORRUPT)
          goto out;
      }
  rc = RIVER_SUCCESS;
  if (b->rank != 0)
    goto out;
  printf("medians over %d repeats (min..max), n = %d, %d a queue:\n",
         b->repeats, b->size, g);
  for (k = 0; k < 4; k++)
    for (lag = 0; lag < 2; lag++) {
      printf("%-8s %-4s", kind_name(kinds[k]), lag ? "lag" : "even");
      print_spread("producer MiB", res[k][lag], b->repeats,
                   offsetof(struct scale_res, mem_prod));
      print_spread("consumer MiB", res[k][lag], b->repeats,
                   offsetof(struct scale_res, mem_cons));
      print_spread("heap MiB", res[k][lag], b->repeats,
                   offsetof(struct scale_res, heap));
      print_spread("put us", res[k][lag], b->repeats,
                   offsetof(struct scale_res, put_us));
      print_spread("get us", res[k][lag], b->repeats,
                   offsetof(struct scale_res, get_us));
      print_spread("own put us", res[k][lag], b->repeats,
                   offsetof(struct scale_res, put_own));
      print_spread("own get us", res[k][lag], b->repeats,
                   offsetof(struct scale_res, get_own));
      print_spread("MPI_Iprobe us", res[k][lag], b->repeats,
                   offsetof(struct scale_res, probe_us));
      print_spread("control us", res[k][lag], b->repeats,
                   offsetof(struct scale_res, ctl_us));
      print_spread("MPI calls/put", res[k][lag], b->repeats,
                   offsetof(struct scale_res, put_mpi));
      print_spread("MPI calls/get", res[k][lag], b->repeats,
                   offsetof(struct scale_res, get_mpi));
      print_spread("steps/put msg", res[k][lag], b->repeats,
                   offsetof(struct scale_res, put_steps));
      print_spread("steps/get msg", res[k][lag], b->repeats,
                   offsetof(struct scale_res, get_steps));
      printf("\n");
    }
out:
  MPI_Comm_free(&qc);
  return rc;
}

static const struct bench_experiment experiments[] = {
  {"queues", exp_queues},
};

/* --group: 0 or at least 2 (a queue has a producer and a consumer). */
static int parse_group(const struct bench_opt *o, const char *val)
{
  int rank = 0, rc = bench_opt_int(o, val);

  if (rc == RIVER_SUCCESS && scale_opt.group == 1) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)   /* every rank parses the same arguments */
      river_log(RIVER_LOG_ERROR, "--group 1: expected 0 or 2..%d", INT_MAX);
    rc = RIVER_EINVAL;
  }
  return rc;
}

static const struct bench_opt opts[] = {
  {"message-size", "BYTES", "(the queue's default): the memory phase's",
   bench_opt_size, &scale_opt.message_size, 1, SIZE_MAX},
  {"group", "G", "(every rank): G ranks a queue, N / G queues at once",
   parse_group, &scale_opt.group, 0, INT_MAX},
};

static const char csv_header[] =
    "kind,lag,n,n_producers,n_consumers,repeat,producer_MiB,consumer_MiB,"
    "heap_MiB,put_us,put_us_max,get_us,get_us_max,put_own_us,get_own_us,"
    "probe_us,seconds,ok,ctl_us,put_mpi_calls,get_mpi_calls,read_all,"
    "put_steps,put_steps_max,get_steps,get_steps_max";

/* Its rows are not throughput rows: its CSV has its own header. */
const struct bench_suite bench_scale_suite = {
  .name = "scale",
  .experiments = experiments,
  .nexperiments = sizeof experiments / sizeof experiments[0],
  .opts = opts,
  .nopts = sizeof opts / sizeof opts[0],
  .notes = "    (--rate, --seconds and --perturb: not used)\n",
  .csv_header = csv_header,
};
