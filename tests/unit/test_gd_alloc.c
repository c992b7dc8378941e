/*
 * test_gd_alloc.c - graduated declustering's pure parts (src/gd_alloc.c):
 * the disks' feedback allocator river__gd_pick, on its own and driven by
 * an event-driven model of the ring, and the fluid ideal
 * river_gd_fluid_ideal on hand-computed cases.
 *
 * The ring model. n disks in a ring, disk d serving rate[d] blocks per
 * unit time, one block at a time (a block takes 1/rate[d]); a disk with
 * rate 0 is lost and serves nothing. Partition p is on disks p..p+r-1
 * (mod n), so disk d holds r streams, stream j being partition d - j.
 * Client p reads partition p and keeps requests pending at every live
 * mirror, so every stream of a live disk always has one pending (the
 * partitions are 100000 blocks, never finished in the time modelled).
 * Whenever a disk finishes a block it asks river__gd_pick which stream to
 * serve next. What a disk knows of a client's progress (received /
 * blocks) is one of:
 *   FRESH     the client's progress at that instant (idealised);
 *   REPORTED  what gd.c does: a request carries its client's progress
 *             when it was sent, and the disk keeps the largest reported.
 *             A client sends the next request to a mirror when that
 *             mirror's reply arrives, so the disk learns of the client's
 *             progress only when it serves it, and what it learns is
 *             stale by the round trip: blocks take `delay` to reach the
 *             client and requests `delay` to reach the disk;
 *   ENGINE    what gd.c does now: as REPORTED, and whenever a block
 *             reaches a client it also sends its progress to every other
 *             mirror (`delay` later); disks pick with
 *             river__gd_pick_balanced: progress plus an integral bias
 *             per stream, staying with the stream they served last while
 *             it leads the laggard by under `run` blocks
 *             (river_gd_opts.run_blocks: 0, the default, and 2, for
 *             spinning disks; gd.c's GD_GAIN, GD_BIAS_CAP);
 *   NOGD      progress == NULL (the baselines: plain round robin).
 * Rates are measured over a window after a warm-up, in blocks per unit
 * time, and compared with the fluid ideal.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <river.h>
#include "gd_alloc_internal.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ the ring model */

#define MAXN 16
#define MAXR 4
#define NBLOCKS 100000.0   /* blocks per partition */
#define QCAP 4096          /* messages in flight, at most */
#define WARM 2000.0        /* time before the window */
#define WINDOW 20000.0     /* time rates are measured over */
#define GD_GAIN_MODEL 0.01 /* the allocator's integral gain (gd.c) */
#define GD_CAP_MODEL 20.0  /* and its cap, in blocks (gd.c) */

enum feedback { FRESH, REPORTED, ENGINE, NOGD };

static const char *const fb_name[] = {"fresh", "reported", "engine",
                                      "no GD"};

struct model {
  /* in */
  int n, r;
  double rate[MAXN];
  enum feedback fb;
  double delay;                /* REPORTED: one-way latency */
  double run;                  /* ENGINE: blocks of lead a disk tolerates
                                  (river_gd_opts.run_blocks) */
  /* out, over the window */
  double client[MAXN];         /* client p's blocks per unit time */
  double share[MAXN][MAXR];    /* disk d's fraction to its stream j */
  double total;                /* all clients' blocks per unit time */
  long spread;                 /* blocks between the clients at the end */
};

/* Messages in flight: every one of a kind has the same latency, so they
 * arrive in the order they were sent and a FIFO is a time-ordered
 * queue. */
struct msg {
  double t;                    /* arrival */
  int d, j;                    /* disk and stream */
  double prog;                 /* requests: the client's progress */
};

struct fifo {
  struct msg m[QCAP];
  int head, count;
};

static void push(struct fifo *f, struct msg m)
{
  assert_true(f->count < QCAP);
  f->m[(f->head + f->count) % QCAP] = m;
  f->count++;
}

static struct msg pop(struct fifo *f)
{
  struct msg m = f->m[f->head];

  f->head = (f->head + 1) % QCAP;
  f->count--;
  return m;
}

static double head_time(const struct fifo *f)
{
  return f->count ? f->m[f->head].t : INFINITY;
}

static int part_of(const struct model *m, int d, int j)
{
  return (d - j + m->n) % m->n;
}

/* The model's state while it runs. */
struct ring {
  struct fifo blocks;          /* blocks on their way to clients */
  struct fifo reqs;            /* requests and reports on their way */
  double ev[MAXN];             /* disk d's next event (INFINITY: lost) */
  double view[MAXN][MAXR];     /* what disk d knows of stream j's client */
  double bias[MAXN][MAXR];     /* ENGINE: disk d's bias per stream */
  long got[MAXN];              /* blocks client p has received */
  long inwin[MAXN];            /* of those, received in the window */
  long served[MAXN][MAXR];     /* blocks disk d served stream j, in it */
  int busy[MAXN];              /* disk d is serving a block */
  int cur[MAXN];               /* the stream disk d serves (or served) */
  int cursor[MAXN];            /* disk d's round-robin cursor */
  int pend[MAXR];              /* every stream always has a request */
};

/* Every disk idle at time 0 (a lost one never serves), nothing in
 * flight, nothing received. */
static void ring_start(struct ring *s, const struct model *m)
{
  int d, j;

  s->blocks.head = s->blocks.count = s->reqs.head = s->reqs.count = 0;
  memset(s->bias, 0, sizeof s->bias);
  for (d = 0; d < m->n; d++) {
    s->ev[d] = m->rate[d] > 0 ? 0.0 : INFINITY;   /* lost: never serves */
    s->busy[d] = 0;
    s->cur[d] = -1;
    s->cursor[d] = 0;
    s->got[d] = s->inwin[d] = 0;
    for (j = 0; j < MAXR; j++) {
      s->view[d][j] = 0;
      s->served[d][j] = 0;
    }
  }
  for (j = 0; j < MAXR; j++)
    s->pend[j] = 1;   /* every client always has a request at every mirror */
}

/* A block reaches its client, which sends its next request to that
 * mirror, carrying its progress now (ENGINE: and reports that progress
 * to its other mirrors). */
static void ring_block_arrives(struct ring *s, const struct model *m)
{
  struct msg b = pop(&s->blocks);
  int p = part_of(m, b.d, b.j), j;

  s->got[p]++;
  if (b.t > WARM)
    s->inwin[p]++;
  b.t += m->delay;
  b.prog = (double)s->got[p] / NBLOCKS;
  push(&s->reqs, b);
  if (m->fb == ENGINE)  /* progress reports to the other mirrors */
    for (j = 0; j < m->r; j++) {
      struct msg pr = b;
      pr.d = (p + j) % m->n;
      pr.j = j;
      if (pr.d != b.d)
        push(&s->reqs, pr);
    }
}

/* A request (or report) reaches its disk: the disk keeps the largest
 * progress it has heard for that stream. */
static void ring_request_arrives(struct ring *s)
{
  struct msg q = pop(&s->reqs);

  if (q.prog > s->view[q.d][q.j])
    s->view[q.d][q.j] = q.prog;
}

/* Disk d finished a block at td: send it; it picks its next at this
 * same time, after the events above that are due now. */
static void ring_disk_done(struct ring *s, const struct model *m, int d,
                           double td)
{
  struct msg b = {td + m->delay, d, s->cur[d], 0};

  if (td > WARM)
    s->served[d][s->cur[d]]++;
  push(&s->blocks, b);
  s->busy[d] = 0;
}

/* Idle disk d picks the stream to serve at td, by what it knows of the
 * clients' progress (m->fb), and starts the block. */
static void ring_disk_picks(struct ring *s, const struct model *m, int d,
                            double td)
{
  double prog[MAXR];
  int j;

  for (j = 0; j < m->r; j++)
    prog[j] = m->fb == FRESH ? (double)s->got[part_of(m, d, j)] / NBLOCKS
                             : s->view[d][j];
  if (m->fb == ENGINE)
    s->cur[d] = river__gd_pick_balanced(prog, s->pend, m->r, &s->cursor[d],
                                        s->cur[d], m->run / NBLOCKS,
                                        s->bias[d], GD_GAIN_MODEL,
                                        GD_CAP_MODEL / NBLOCKS);
  else
    s->cur[d] = river__gd_pick(m->fb == NOGD ? NULL : prog, s->pend, m->r,
                               &s->cursor[d]);
  assert_true(s->cur[d] >= 0 && s->cur[d] < m->r);
  s->busy[d] = 1;
  s->ev[d] = td + 1.0 / m->rate[d];
}

/* The model's outputs: the clients' spread at the end, their rates and
 * the disks' shares over the window. */
static void ring_results(const struct ring *s, struct model *m)
{
  long lo, hi, sum;
  int p, d, j;

  /* How far apart the clients are at the end (blocks): a gradient round
   * the ring shows here, not in the rates. */
  lo = hi = s->got[0];
  for (p = 1; p < m->n; p++) {
    lo = s->got[p] < lo ? s->got[p] : lo;
    hi = s->got[p] > hi ? s->got[p] : hi;
  }
  m->spread = hi - lo;
  m->total = 0;
  for (p = 0; p < m->n; p++) {
    assert_true(s->got[p] < (long)NBLOCKS);  /* no partition ran out */
    m->client[p] = (double)s->inwin[p] / WINDOW;
    m->total += m->client[p];
  }
  for (d = 0; d < m->n; d++) {
    sum = 0;
    for (j = 0; j < m->r; j++)
      sum += s->served[d][j];
    for (j = 0; j < m->r; j++)
      m->share[d][j] = sum ? (double)s->served[d][j] / (double)sum : 0;
  }
}

/*
 * Run the model to WARM + WINDOW. Events at the same time go blocks
 * reaching clients first, then requests reaching disks, then disks: so
 * with delay 0 a disk that finishes a block has heard its client's new
 * progress before it picks again.
 */
static void run_model(struct model *m)
{
  static struct ring s;    /* static: large */
  double end = WARM + WINDOW;
  int d;

  assert_true(m->n >= 1 && m->n <= MAXN && m->r >= 1 && m->r <= MAXR
              && m->r <= m->n);
  ring_start(&s, m);
  for (;;) {
    double tb = head_time(&s.blocks), tq = head_time(&s.reqs), td = INFINITY;
    int dd = -1;

    for (d = 0; d < m->n; d++)
      if (s.ev[d] < td) {
        td = s.ev[d];
        dd = d;
      }
    if (tb <= tq && tb <= td) {
      if (tb > end)
        break;
      ring_block_arrives(&s, m);
    } else if (tq <= td) {
      if (tq > end)
        break;
      ring_request_arrives(&s);
    } else {
      if (td > end)
        break;
      if (s.busy[dd])
        ring_disk_done(&s, m, dd, td);
      else
        ring_disk_picks(&s, m, dd, td);
    }
  }
  ring_results(&s, m);
}

static void setup_model(struct model *m, int n, int r, const double *rate,
                        enum feedback fb, double delay, double run)
{
  memset(m, 0, sizeof *m);
  m->n = n;
  m->r = r;
  memcpy(m->rate, rate, (size_t)n * sizeof *rate);
  m->fb = fb;
  m->delay = delay;
  m->run = run;
}

static void print_rates(const char *what, const struct model *m)
{
  char line[1024];
  size_t at = 0;
  int p;

  for (p = 0; p < m->n && at < sizeof line - 16; p++)
    at += (size_t)snprintf(line + at, sizeof line - at, " %.4f",
                           m->client[p]);
  print_message("%s (%s, delay %g, run %g): clients%s; total %.4f; %ld "
                "blocks apart\n", what, fb_name[m->fb], m->delay, m->run,
                line, m->total, m->spread);
}

/* Every client within frac of want. */
static void assert_clients_near(const struct model *m, double want,
                                double frac)
{
  int p;

  for (p = 0; p < m->n; p++)
    if (fabs(m->client[p] - want) > frac * want)
      fail_msg("client %d: %.4f blocks per unit time, want %.4f +- %.0f%% "
               "(%s feedback, delay %g, run %g)", p, m->client[p], want,
               100 * frac, fb_name[m->fb], m->delay, m->run);
}

/* Every client within frac of each other: max - min <= frac * max. */
static void assert_clients_equal(const struct model *m, double frac)
{
  double lo = INFINITY, hi = 0;
  int p;

  for (p = 0; p < m->n; p++) {
    lo = m->client[p] < lo ? m->client[p] : lo;
    hi = m->client[p] > hi ? m->client[p] : hi;
  }
  if (hi - lo > frac * hi)
    fail_msg("clients from %.4f to %.4f: more than %.0f%% apart", lo, hi,
             100 * frac);
}

/* The feedback variants every GD requirement must hold under: the
 * idealised one; reports on requests only (gd.c's first version) and
 * gd.c's reports to every mirror, picking by the laggard (run 0, the
 * default) and with runs of 2 blocks' lead (spinning disks), each with
 * no latency, half a block time and two block times (of a fast disk)
 * each way. */
static const struct {
  enum feedback fb;
  double delay, run;
} variants[] = {{FRESH, 0, 0},    {REPORTED, 0, 0}, {REPORTED, 0.5, 0},
                {REPORTED, 2, 0}, {ENGINE, 0, 0},   {ENGINE, 0.5, 0},
                {ENGINE, 2, 0},   {ENGINE, 0, 2},   {ENGINE, 0.5, 2},
                {ENGINE, 2, 2}};

#define NVARIANTS (sizeof variants / sizeof variants[0])

/*
 * The paper's example: 4 disks, r = 2, disk 1 at half speed. Total 3.5,
 * so the ideal is 0.875 per client. Where it goes: disk 1 holds
 * partitions 1 and 0 (clients 1 and 0 progress equally, so it alternates
 * between them: 0.25 each); then client 0 needs 0.625 = 5/8 of disk 0
 * and client 1 5/8 of disk 2; disk 0's other 3/8 goes to client 3, which
 * needs 0.5 of disk 3, whose other 0.5 goes to client 2 with disk 2's
 * remaining 3/8.
 *
 * The 5/8 tolerance. Equal client rates leave the flows one degree of
 * freedom, the split of disk 1. If it gives x to client 1 and 0.5 - x to
 * client 0, then client 0's other mirror, disk 0, gives it t0 - (0.5 -
 * x), and disk 2 gives client 1 t1 - x (t0, t1: those clients' measured
 * rates; disks 0 and 2 run at 1, so these are also their shares). So
 * the neighbours' shares are off 5/8 by at most |t - 0.875| + |x - 0.25|.
 * The test asks disk 1's split to be even within 0.01 (|x - 0.25| <=
 * 0.005: equal clients tie, and ties alternate) and clients 0 and 1 to
 * be within 2% of 0.875 (0.0175): together 0.0225, so 0.025 (4% of 5/8)
 * is a bound that only fails if one of those does, with 0.0025 left for
 * the window's edges (a block or two in 20000). The model measures
 * 0.6250 in every variant.
 */
static void test_ring_slow_disk(void **state)
{
  static const double rate[4] = {1, 0.5, 1, 1};
  double per = 0, total = 0;
  struct model m;
  size_t v;

  assert_int_equal(river_gd_fluid_ideal(rate, 4, 2, &per, &total),
                   RIVER_SUCCESS);
  assert_true(fabs(per - 0.875) < 1e-12 && fabs(total - 3.5) < 1e-12);
  for (v = 0; v < NVARIANTS; v++) {
    setup_model(&m, 4, 2, rate, variants[v].fb, variants[v].delay,
                variants[v].run);
    run_model(&m);
    print_rates("4 disks, disk 1 at 0.5", &m);
    print_message("  disk 0 to client 0: %.4f, disk 2 to client 1: %.4f, "
                  "disk 1 to client 1: %.4f\n", m.share[0][0],
                  m.share[2][1], m.share[1][0]);
    assert_clients_near(&m, 0.875, 0.05);
    assert_true(fabs(m.total - 3.5) < 0.01);  /* no disk idles */
    /* Stream 0 of disk 0 is partition 0; stream 1 of disk 2 is
     * partition 1; stream 0 of disk 1 is partition 1. */
    assert_true(fabs(m.client[0] - 0.875) < 0.02 * 0.875);
    assert_true(fabs(m.client[1] - 0.875) < 0.02 * 0.875);
    /* Whatever disk 1's split x, the neighbours make up the rest:
     * disk 0 gives client 0 t0 - 0.5 (1 - x), disk 2 gives client 1
     * t1 - 0.5 x. */
    assert_true(fabs(m.share[0][0]
                     - (m.client[0] - 0.5 * (1 - m.share[1][0]))) < 0.01);
    assert_true(fabs(m.share[2][1] - (m.client[1] - 0.5 * m.share[1][0]))
                < 0.01);
    /* With plain river__gd_pick, equal clients tie at disk 1, which
     * then splits evenly: the paper's 5/8 at both neighbours. ENGINE's
     * pick (river__gd_pick_balanced) stays with its last stream on an
     * exact tie even at run 0, and its bias term moves the split: it
     * settles on another of the equally good splits (every client
     * still at 0.875; disk 1's split off 0.5 by more than 0.01 at run 0
     * too), so 5/8 is not asked of it. */
    if (variants[v].fb != ENGINE) {
      assert_true(fabs(m.share[1][0] - 0.5) < 0.01);
      assert_true(fabs(m.share[0][0] - 0.625) < 0.025);
      assert_true(fabs(m.share[2][1] - 0.625) < 0.025);
    }
  }
}

/*
 * A lost disk: 4 disks, r = 2, disk 1 serves nothing. Clients 0 and 1
 * have one mirror left each (disks 0 and 2); total 3, 0.75 per client:
 * disk 0 gives 3/4 to client 0 and 1/4 to client 3, disk 2 3/4 to
 * client 1 and 1/4 to client 2, disk 3 splits evenly. Disk 0's share to
 * client 0 is client 0's whole rate, so it gets the clients' 5%:
 * 0.0375.
 */
static void test_ring_lost_disk(void **state)
{
  static const double rate[4] = {1, 0, 1, 1};
  double per = 0;
  struct model m;
  size_t v;

  assert_int_equal(river_gd_fluid_ideal(rate, 4, 2, &per, NULL),
                   RIVER_SUCCESS);
  assert_true(fabs(per - 0.75) < 1e-12);
  for (v = 0; v < NVARIANTS; v++) {
    setup_model(&m, 4, 2, rate, variants[v].fb, variants[v].delay,
                variants[v].run);
    run_model(&m);
    print_rates("4 disks, disk 1 lost", &m);
    assert_clients_near(&m, 0.75, 0.05);
    assert_clients_equal(&m, 0.05);
    assert_true(fabs(m.total - 3.0) < 0.01);
    assert_true(fabs(m.share[0][0] - 0.75) < 0.0375);
    assert_true(fabs(m.share[2][1] - 0.75) < 0.0375);
  }
}

/*
 * 14 disks with k slow disks (k = 1, 2, 3, 4, 6), r = 2 and r = 3. The
 * configurations are ones where the whole ring binds (checked below: the
 * ideal equals the mean disk rate), so GD must bring every client to the
 * same rate, the ideal one, within 5%.
 */
static void test_ring_14_disks(void **state)
{
  static const struct {
    int r, k;
    int slow[6];
    double factor[6];
  } cases[] = {
    {2, 1, {4}, {0.5}},
    {2, 2, {6, 7}, {0.5, 0.5}},                   /* adjacent */
    {2, 3, {0, 5, 10}, {0.25, 0.25, 0.25}},
    {2, 4, {1, 2, 8, 13}, {0.5, 0.6, 0.3, 0.7}},  /* 13 and 1: near the
                                                     wrap */
    {2, 6, {0, 2, 4, 6, 8, 10}, {0.5, 0.5, 0.5, 0.5, 0.5, 0.5}},
    {3, 1, {4}, {0.2}},
    {3, 3, {3, 4, 5}, {0.5, 0.5, 0.5}},
    {3, 4, {0, 1, 7, 12}, {0.1, 0.3, 0.5, 0.4}},
  };
  double rate[14], per, sum;
  struct model m;
  size_t c, v;
  int d, i;

  for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    for (d = 0; d < 14; d++)
      rate[d] = 1.0;
    for (i = 0; i < cases[c].k; i++)
      rate[cases[c].slow[i]] = cases[c].factor[i];
    sum = 0;
    for (d = 0; d < 14; d++)
      sum += rate[d];
    assert_int_equal(river_gd_fluid_ideal(rate, 14, cases[c].r, &per, NULL),
                     RIVER_SUCCESS);
    assert_true(fabs(per - sum / 14) < 1e-12);  /* the whole ring binds */
    for (v = 0; v < NVARIANTS; v++) {
      char what[64];
      setup_model(&m, 14, cases[c].r, rate, variants[v].fb,
                  variants[v].delay, variants[v].run);
      run_model(&m);
      snprintf(what, sizeof what, "14 disks, r %d, %d slow (ideal %.4f)",
               cases[c].r, cases[c].k, per);
      print_rates(what, &m);
      assert_clients_near(&m, per, 0.05);
      /* gd.c's allocator keeps the clients together, with no gradient
       * round the ring: a handful of blocks apart (at most 15 measured,
       * with runs of 0 and of 2, at two block times of latency; reports
       * on requests alone drift up to 137 apart). */
      if (variants[v].fb == ENGINE)
        assert_true(m.spread <= 24);
    }
  }
}

/*
 * When a run of clients binds rather than the whole ring, the ideal
 * (river_gd_fluid_ideal) is that run's rate: the slowest clients get it,
 * and the disks, which never idle while requests are pending, give the
 * rest to the others. 6 disks, r = 2, disks 2 and 3 at 0.1: client 2
 * reads only disks 2 and 3, so gets 0.2 = the ideal, all of both (it
 * always lags); disks 4, 5, 0, 1 (4.0 in all) serve clients 3, 4, 5, 0,
 * 1 at 0.8 each (disk 4 gives 0.8 to client 3, 0.2 to client 4; disk 5
 * 0.6 to client 4, 0.4 to client 5; disk 0 0.4 to client 5, 0.6 to
 * client 0; disk 1 0.2 to client 0, 0.8 to client 1).
 */
static void test_ring_binding_run(void **state)
{
  static const double rate[6] = {1, 1, 0.1, 0.1, 1, 1};
  double per = 0;
  struct model m;
  size_t v;
  int p;

  assert_int_equal(river_gd_fluid_ideal(rate, 6, 2, &per, NULL),
                   RIVER_SUCCESS);
  assert_true(fabs(per - 0.2) < 1e-12);
  for (v = 0; v < NVARIANTS; v++) {
    setup_model(&m, 6, 2, rate, variants[v].fb, variants[v].delay,
                variants[v].run);
    run_model(&m);
    print_rates("6 disks, disks 2 and 3 at 0.1", &m);
    assert_true(fabs(m.client[2] - per) < 0.05 * per);
    for (p = 0; p < 6; p++)
      if (p != 2)
        assert_true(fabs(m.client[p] - 0.8) < 0.05 * 0.8);
  }
}

/*
 * Random rings (a fixed seed): 5 to 14 disks, r = 1..3, rates from 0.1
 * to 1, some lost. Whatever binds, the slowest client gets the ideal
 * within 5% and no client gets less (the ideal is an upper bound on the
 * slowest client's rate, so that is all GD can do).
 *
 * Reported progress costs something here: a disk learns that a client
 * is ahead only by serving it a block, so some rings settle with a group
 * of clients a bounded number of blocks behind (about 100 in the 12-disk
 * r = 3 ring), reached slowly: over this window that group is up to 2%
 * below the ideal with a latency of 2, and the gap shrinks as the window
 * grows (0.4% over 80000, under 0.1% over 320000). Fresh progress has
 * none of it.
 */
static void test_ring_random(void **state)
{
  unsigned long long seed = 0x9e3779b97f4a7c15ULL;
  double rate[MAXN], per, lo;
  struct model m;
  int t, d, n, r, p;
  size_t v;

  for (t = 0; t < 12; t++) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    n = 5 + (int)((seed >> 33) % 10);
    r = 1 + (int)((seed >> 40) % 3);
    for (d = 0; d < n; d++) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      rate[d] = 0.1 + 0.9 * (double)(seed >> 11) / 9007199254740992.0;
      if (r > 1 && (seed >> 7) % 11 == 0)
        rate[d] = 0;   /* lost (only with a mirror: r = 1 would read 0) */
    }
    assert_int_equal(river_gd_fluid_ideal(rate, n, r, &per, NULL),
                     RIVER_SUCCESS);
    if (per == 0)
      continue;   /* two adjacent lost disks at r = 2: a partition gone */
    for (v = 0; v < NVARIANTS; v++) {
      char what[64];
      setup_model(&m, n, r, rate, variants[v].fb, variants[v].delay,
                variants[v].run);
      run_model(&m);
      snprintf(what, sizeof what, "random %d disks, r %d (ideal %.4f)", n, r,
               per);
      print_rates(what, &m);
      lo = INFINITY;
      for (p = 0; p < n; p++)
        lo = m.client[p] < lo ? m.client[p] : lo;
      if (lo < 0.95 * per || lo > 1.05 * per)
        fail_msg("random ring %d: slowest client %.4f, ideal %.4f", t, lo,
                 per);
    }
  }
}

/*
 * The no-GD baseline (progress == NULL): plain round robin. On the
 * paper's example every disk splits evenly, so clients 0 and 1 (next to
 * the slow disk) get 0.5 + 0.25 = 0.75 and clients 2 and 3 get 1.0: the
 * slow disk's clients lag, 14% below the ideal 0.875, which the GD
 * assertion (within 5%) would refuse. With disk 1 lost: 0.5, 0.5, 1, 1.
 */
static void test_ring_no_gd(void **state)
{
  static const double slow[4] = {1, 0.5, 1, 1}, lost[4] = {1, 0, 1, 1};
  static const double want_slow[4] = {0.75, 0.75, 1, 1},
                      want_lost[4] = {0.5, 0.5, 1, 1};
  struct model m;
  int p;

  setup_model(&m, 4, 2, slow, NOGD, 0, 0);
  run_model(&m);
  print_rates("4 disks, disk 1 at 0.5", &m);
  for (p = 0; p < 4; p++)
    assert_true(fabs(m.client[p] - want_slow[p]) < 0.01 * want_slow[p]);
  assert_true(m.client[0] < 0.95 * 0.875 && m.client[1] < 0.95 * 0.875);
  assert_true(fabs(m.share[0][0] - 0.5) < 0.001);

  setup_model(&m, 4, 2, lost, NOGD, 0, 0);
  run_model(&m);
  print_rates("4 disks, disk 1 lost", &m);
  for (p = 0; p < 4; p++)
    assert_true(fabs(m.client[p] - want_lost[p]) < 0.01 * want_lost[p]);
  assert_true(m.client[0] < 0.95 * 0.75);
}

/* ------------------------------------------------------ river__gd_pick */

static void test_pick_nothing_pending(void **state)
{
  double prog[3] = {0.1, 0.2, 0.3};
  int none[3] = {0, 0, 0}, cursor = 1;

  assert_int_equal(river__gd_pick(prog, none, 3, &cursor), -1);
  assert_int_equal(river__gd_pick(NULL, none, 3, &cursor), -1);
  assert_int_equal(cursor, 1);   /* untouched */
}

static void test_pick_lowest_progress(void **state)
{
  double prog[4] = {0.5, 0.2, 0.3, 0.9};
  int pend[4] = {1, 1, 2, 1}, cursor, start;

  /* Wherever the cursor is, the laggard; the cursor moves past it. */
  for (start = 0; start < 4; start++) {
    cursor = start;
    assert_int_equal(river__gd_pick(prog, pend, 4, &cursor), 1);
    assert_int_equal(cursor, 2);
  }
  /* Again and again while it lags: no round robin between unequal. */
  for (start = 0; start < 5; start++)
    assert_int_equal(river__gd_pick(prog, pend, 4, &cursor), 1);
  /* Just past the tie margin is not a tie. */
  prog[2] = 0.2 + 1e-7;
  for (start = 0; start < 5; start++)
    assert_int_equal(river__gd_pick(prog, pend, 4, &cursor), 1);
}

static void test_pick_ties_round_robin(void **state)
{
  double eq[3] = {0.3, 0.3, 0.3}, two[4] = {0.7, 0.2, 0.9, 0.2},
         near[3] = {0.2, 0.2 + RIVER_GD_TIE / 2, 0.5};
  int pend[4] = {1, 1, 1, 1}, cursor = 0, i;

  for (i = 0; i < 9; i++)
    assert_int_equal(river__gd_pick(eq, pend, 3, &cursor), i % 3);
  assert_int_equal(cursor, 0);
  /* Two tied laggards alternate; the others wait. */
  cursor = 0;
  for (i = 0; i < 8; i++)
    assert_int_equal(river__gd_pick(two, pend, 4, &cursor), i % 2 ? 3 : 1);
  /* Within RIVER_GD_TIE is a tie. */
  cursor = 0;
  for (i = 0; i < 6; i++)
    assert_int_equal(river__gd_pick(near, pend, 3, &cursor), i % 2);
  /* The cursor wraps: from the last stream to the first. */
  cursor = 2;
  assert_int_equal(river__gd_pick(eq, pend, 3, &cursor), 2);
  assert_int_equal(cursor, 0);
  assert_int_equal(river__gd_pick(eq, pend, 3, &cursor), 0);
  assert_int_equal(cursor, 1);
}

static void test_pick_skips_idle_streams(void **state)
{
  double prog[3] = {0.0, 0.5, 0.6}, tied[3] = {0.0, 0.5, 0.5};
  static const int order[3] = {0, 2, 3};
  int pend[3] = {0, 1, 1}, rr[4] = {1, 0, 1, 1}, cursor = 0, i;

  /* Stream 0 lags the most but has nothing pending. */
  for (i = 0; i < 4; i++)
    assert_int_equal(river__gd_pick(prog, pend, 3, &cursor), 1);
  /* ... nor does it hold back the pending ones' tie. */
  cursor = 0;
  for (i = 0; i < 6; i++)
    assert_int_equal(river__gd_pick(tied, pend, 3, &cursor), 1 + i % 2);
  /* No progress (the baselines): round robin over the pending ones. */
  cursor = 0;
  for (i = 0; i < 9; i++)
    assert_int_equal(river__gd_pick(NULL, rr, 4, &cursor), order[i % 3]);
}

/* --------------------------------------------- river__gd_worth_moving */

static void test_move_only_from_slower(void **state)
{
  (void)state;
  /* One disk at 10%: its block takes 10 of the idle copy's; even the
   * one block out there moves. */
  assert_true(river__gd_worth_moving(1, 0.65, 0.065, 1.5, 1.5));
  assert_true(river__gd_worth_moving(3, 0.65, 0.065, 1.5, 1.5));
  /* Equal speeds, two blocks out (the lockstep case): the copy is busier,
   * not slower; the wait test alone would move (2 x 13 ms > 1.5 x 13). */
  assert_false(river__gd_worth_moving(2, 0.013, 0.013, 1.5, 1.5));
  assert_false(river__gd_worth_moving(8, 0.013, 0.013, 1.5, 1.5));
  assert_false(river__gd_worth_moving(8, 0.019, 0.013, 1.5, 1.5));
  assert_true(river__gd_worth_moving(8, 0.0196, 0.013, 1.5, 1.5));
  /* Never to a slower copy: the idle copy is the slow disk. */
  assert_false(river__gd_worth_moving(4, 0.065, 0.65, 1.5, 1.5));
  /* Slower, but the wait is short: one block at 1.6x waits 1.6 < 2. */
  assert_false(river__gd_worth_moving(1, 0.016, 0.01, 2.0, 1.5));
  /* Not measured: the other copy's time stands in; moves once the wait
   * alone says so. */
  assert_false(river__gd_worth_moving(1, 0.01, 0, 1.5, 1.5));
  assert_true(river__gd_worth_moving(2, 0.01, 0, 1.5, 1.5));
  assert_true(river__gd_worth_moving(2, 0, 0.01, 1.5, 1.5));
  assert_false(river__gd_worth_moving(2, 0, 0, 1.5, 1.5));
  /* Nonsense: nothing out, no gain, a slower factor under 1. */
  assert_false(river__gd_worth_moving(0, 1.0, 0.01, 1.5, 1.5));
  assert_false(river__gd_worth_moving(-1, 1.0, 0.01, 1.5, 1.5));
  assert_false(river__gd_worth_moving(4, 1.0, 0.01, 0, 1.5));
  assert_false(river__gd_worth_moving(4, 1.0, 0.01, 1.5, 0.5));
  assert_false(river__gd_worth_moving(4, 1.0, 0.01, NAN, 1.5));
}

/* ------------------------------------------------- river__gd_too_late */

static void test_too_late(void **state)
{
  uint64_t left;
  int n;

  (void)state;
  /* A disk at 10%: with 30 blocks left, a 3rd block queued there would
   * come after 3 x 0.65 = 1.95 s; the fast copy delivers the 28 others in
   * 1.82 s: refused. A 2nd (1.3 s against 29 x 0.065 = 1.885) is not. */
  assert_true(river__gd_too_late(3, 0.65, 30, 0.065, 1.5));
  assert_false(river__gd_too_late(2, 0.65, 30, 0.065, 1.5));
  /* The partition's last block never goes to the slow copy ... */
  assert_true(river__gd_too_late(1, 0.65, 1, 0.065, 1.5));
  /* ... and early on it takes its share. */
  assert_false(river__gd_too_late(2, 0.65, 200, 0.065, 1.5));
  /* The faster copy, and copies of one speed, are never refused. */
  for (left = 1; left <= 64; left++)
    for (n = 1; n <= (int)left && n <= 8; n++) {
      assert_false(river__gd_too_late(n, 0.065, left, 0.65, 1.5));
      assert_false(river__gd_too_late(n, 0.013, left, 0.013, 1.5));
      assert_false(river__gd_too_late(n, 0.0194, left, 0.013, 1.5));
    }
  /* The formula's edges, in values exact in binary: the n-th block at
   * the slow copy against left - n + 1 at the fast one, strictly. */
  assert_false(river__gd_too_late(1, 1.0, 8, 0.125, 1.5));   /* 1 = 8/8 */
  assert_true(river__gd_too_late(1, 1.0, 7, 0.125, 1.5));
  assert_false(river__gd_too_late(2, 1.0, 9, 0.25, 1.5));    /* 2 = 8/4 */
  assert_true(river__gd_too_late(2, 1.0, 8, 0.25, 1.5));
  /* ... and the threshold: 1.5 x 0.5 = 0.75 is not slower, 0.8125 is. */
  assert_false(river__gd_too_late(1, 0.75, 1, 0.5, 1.5));
  assert_true(river__gd_too_late(1, 0.8125, 1, 0.5, 1.5));
  assert_false(river__gd_too_late(1, 0.8125, 1, 0.5, 2.0));
  /* Not measured, or nonsense: no. */
  assert_false(river__gd_too_late(1, 0, 1, 0.065, 1.5));
  assert_false(river__gd_too_late(1, 0.65, 1, 0, 1.5));
  assert_false(river__gd_too_late(0, 0.65, 1, 0.065, 1.5));
  assert_false(river__gd_too_late(2, 0.65, 1, 0.065, 1.5));
  assert_false(river__gd_too_late(1, NAN, 1, 0.065, 1.5));
  assert_false(river__gd_too_late(1, 0.65, 1, 0.065, 0.5));
}

/* -------------------------------------------- river__gd_choose_copy */

static void test_choose_copy(void **state)
{
  const unsigned char both[2] = {1, 1}, only0[2] = {1, 0}, none[2] = {0, 0};
  /* copy 0 a disk at 10% (0.65 s a block), copy 1 fast (0.065 s) */
  const double tslow[2] = {0.65, 0.065};
  const double teq[2] = {0.013, 0.013};
  int out[2], could = -1;

  (void)state;
  /* Equal speeds: the fewest out, ties from rr; never a refusal, to the
   * last block. */
  out[0] = 2; out[1] = 1;
  assert_int_equal(river__gd_choose_copy(2, 2, out, both, teq, teq, 1, 0,
                                         1.5, &could), 1);
  assert_int_equal(could, 1);
  out[0] = 0; out[1] = 0;
  assert_int_equal(river__gd_choose_copy(2, 2, out, both, teq, teq, 1, 1,
                                         1.5, &could), 1);
  assert_int_equal(river__gd_choose_copy(2, 2, out, both, teq, teq, 1, 0,
                                         1.5, &could), 0);
  /* Early in a partition the slow copy takes its share (fewer out). */
  out[0] = 0; out[1] = 2;
  assert_int_equal(river__gd_choose_copy(2, 4, out, both, tslow, tslow,
                                         200, 0, 1.5, &could), 0);
  /* Near the end it is passed over: 3 left, the fast copy delivers them
   * all in 0.195 s, the slow one's block would take 0.65 s. */
  assert_int_equal(river__gd_choose_copy(2, 4, out, both, tslow, tslow, 3,
                                         0, 1.5, &could), 1);
  /* ... and if the fast copy is full, the block waits for it. */
  out[1] = 4;
  assert_int_equal(river__gd_choose_copy(2, 4, out, both, tslow, tslow, 3,
                                         0, 1.5, &could), -1);
  assert_int_equal(could, 1);
  /* A block the fast copy failed (not usable) goes to the slow one, the
   * last block too. */
  out[0] = 1; out[1] = 4;
  assert_int_equal(river__gd_choose_copy(2, 4, out, only0, tslow, tslow, 1,
                                         1, 1.5, &could), 0);
  /* The fast copy stalled: silent for 2 s, its block time as of now is
   * 2 s, and the slow copy is no longer refused. */
  {
    const double tnow[2] = {0.65, 2.0};
    out[0] = 0; out[1] = 4;
    assert_int_equal(river__gd_choose_copy(2, 8, out, both, tslow, tnow, 3,
                                           0, 1.5, &could), 0);
  }
  /* Full everywhere: -1, but it may go later. No usable copy: never. */
  out[0] = 2; out[1] = 2;
  assert_int_equal(river__gd_choose_copy(2, 2, out, both, teq, teq, 9, 0,
                                         1.5, &could), -1);
  assert_int_equal(could, 1);
  assert_int_equal(river__gd_choose_copy(2, 2, out, none, teq, teq, 9, 0,
                                         1.5, &could), -1);
  assert_int_equal(could, 0);
  /* Not measured: no refusal. */
  {
    const double zero[2] = {0, 0};
    out[0] = 0; out[1] = 1;
    assert_int_equal(river__gd_choose_copy(2, 2, out, both, zero, zero, 1,
                                           1, 1.5, &could), 0);
  }
  assert_int_equal(river__gd_fastest(2, both, tslow), 1);
  assert_int_equal(river__gd_fastest(2, only0, tslow), 0);
  assert_int_equal(river__gd_fastest(2, none, tslow), -1);
}

/* ------------------------------------------------ river_gd_fluid_ideal */

static void ideal_is(const double *rates, int n, int r, double per)
{
  double pc = -1, tot = -1;

  assert_int_equal(river_gd_fluid_ideal(rates, n, r, &pc, &tot),
                   RIVER_SUCCESS);
  if (fabs(pc - per) > 1e-12 || fabs(tot - n * per) > 1e-12)
    fail_msg("n %d, r %d: ideal %.15g per client, %.15g total; want %.15g, "
             "%.15g", n, r, pc, tot, per, n * per);
}

/* A dormant partition's wake test: the first copy against the fastest
 * other live copy whose disk time is known. */
static void test_first_slower(void **state)
{
  const unsigned char alive[3] = {0, 0, 0}, dead1[3] = {0, 1, 0};
  (void)state;
  /* Equal speeds, and within the margin: stay dormant. */
  {
    const double t[2] = {0.0065, 0.0065}, t1[2] = {0.00656, 0.0065};
    assert_int_equal(river__gd_first_slower(2, t, alive, 0, 1.01, 10), 0);
    assert_int_equal(river__gd_first_slower(2, t1, alive, 0, 1.01, 10), 0);
  }
  /* Slower by more than 1.01 (a disk at 50%, or at 98%): wake. */
  {
    const double t50[2] = {0.013, 0.0065}, t98[2] = {0.00664, 0.0065};
    assert_int_equal(river__gd_first_slower(2, t50, alive, 0, 1.01, 10), 1);
    assert_int_equal(river__gd_first_slower(2, t98, alive, 0, 1.01, 10), 1);
  }
  /* Faster than the other: stay. Nothing known of the other: stay, even
   * silent for long (there is nothing to compare with). */
  {
    const double tf[2] = {0.0065, 0.013}, tu[2] = {0.013, 0};
    assert_int_equal(river__gd_first_slower(2, tf, alive, 0, 1.01, 10), 0);
    assert_int_equal(river__gd_first_slower(2, tu, alive, 5.0, 1.01, 10), 0);
  }
  /* Silent for more than 10 of the other's block times: wake; for less,
   * not; also when the first copy's own time is not known yet. */
  {
    const double t[2] = {0, 0.0065};
    assert_int_equal(river__gd_first_slower(2, t, alive, 0.066, 1.01, 10), 1);
    assert_int_equal(river__gd_first_slower(2, t, alive, 0.064, 1.01, 10), 0);
  }
  /* Three copies: the fastest live other counts; a dead one does not. */
  {
    const double t[3] = {0.010, 0.0065, 0.0100};
    assert_int_equal(river__gd_first_slower(3, t, alive, 0, 1.01, 10), 1);
    assert_int_equal(river__gd_first_slower(3, t, dead1, 0, 1.01, 10), 0);
  }
}

/* The load river__gd_plan gives disk d: its first copy's share of the
 * partition there, and the rest of the partition whose second copy it
 * holds. */
static uint64_t plan_load(int n, const int *part_of, const uint64_t *nrec,
                          const uint64_t *first, int d)
{
  int prev = part_of[(d + n - 1) % n];
  return first[part_of[d]] + (nrec[prev] - first[prev]);
}

/* A lost disk's plan: every live disk of a chain carries the chain's
 * records equally, to a record; a lost disk's partition comes all from
 * its second copy, the one whose second copy it held all from its
 * first; no plan where none can be made. */
static void test_plan(void **state)
{
  int part_of[14], d, n;
  uint64_t nrec[14], first[14], lo, hi, sum;
  unsigned char lost[14];
  (void)state;

  /* 14 disks of 600,000 records (the lost benchmark), disk 0 lost: 13
   * disks carry 8,400,000 / 13 = 646,153.8 each (646,153 or 646,154). */
  for (d = 0; d < 14; d++) {
    part_of[d] = d;
    nrec[d] = 600000;
    lost[d] = d == 0;
  }
  assert_int_equal(river__gd_plan(14, part_of, nrec, lost, first), 0);
  assert_true(first[0] == 0 && first[13] == 600000);
  lo = UINT64_MAX;
  hi = sum = 0;
  for (d = 1; d < 14; d++) {
    uint64_t l = plan_load(14, part_of, nrec, first, d);
    lo = l < lo ? l : lo;
    hi = l > hi ? l : hi;
    sum += l;
  }
  assert_true(sum == 8400000 && lo == 646153 && hi == 646154);
  /* Disk 1 takes all of partition 0 and 46,153 of partition 1's first
   * records; each split point moves along the chain. */
  assert_int_equal(first[1], 46153);
  for (d = 2; d < 13; d++)
    assert_true(first[d] > first[d - 1] && first[d] < 600000);

  /* A permuted layout, two lost disks (2 and 6) of 8, unequal sizes:
   * chains 3..5 (partitions of disks 2..5) and 7..1, each balanced. */
  n = 8;
  for (d = 0; d < n; d++) {
    part_of[d] = (d * 3) % n;           /* a permutation */
    nrec[part_of[d]] = 1000 + (uint64_t)d * 10;
    lost[d] = d == 2 || d == 6;
  }
  assert_int_equal(river__gd_plan(n, part_of, nrec, lost, first), 0);
  {
    uint64_t chain1 = 0, chain2 = 0;
    for (d = 2; d <= 5; d++)
      chain1 += nrec[part_of[d]];
    for (d = 6; d < 10; d++)
      chain2 += nrec[part_of[d % n]];
    for (d = 3; d <= 5; d++) {
      uint64_t l = plan_load(n, part_of, nrec, first, d);
      assert_true(l == chain1 / 3 || l == chain1 / 3 + 1);
    }
    for (d = 7; d < 10; d++) {
      uint64_t l = plan_load(n, part_of, nrec, first, d % n);
      assert_true(l == chain2 / 3 || l == chain2 / 3 + 1);
    }
    assert_true(first[part_of[2]] == 0 && first[part_of[6]] == 0);
    assert_true(first[part_of[5]] == nrec[part_of[5]]
                && first[part_of[1]] == nrec[part_of[1]]);
  }

  /* 3 disks, one lost: a chain of 2. */
  for (d = 0; d < 3; d++) {
    part_of[d] = d;
    nrec[d] = 7;
    lost[d] = d == 1;
  }
  assert_int_equal(river__gd_plan(3, part_of, nrec, lost, first), 0);
  assert_true(plan_load(3, part_of, nrec, first, 2) >= 10
              && plan_load(3, part_of, nrec, first, 2) <= 11
              && plan_load(3, part_of, nrec, first, 0)
                     + plan_load(3, part_of, nrec, first, 2) == 21);

  /* No plan: nothing lost, everything lost, two neighbours lost (the
   * partition between them has no copy), and a chain whose first disk's
   * share is smaller than the lost disk's partition it must carry. */
  for (d = 0; d < 4; d++) {
    part_of[d] = d;
    nrec[d] = 100;
    lost[d] = 0;
  }
  assert_int_equal(river__gd_plan(4, part_of, nrec, lost, first), -1);
  memset(lost, 1, 4);
  assert_int_equal(river__gd_plan(4, part_of, nrec, lost, first), -1);
  memset(lost, 0, 4);
  lost[1] = lost[2] = 1;
  assert_int_equal(river__gd_plan(4, part_of, nrec, lost, first), -1);
  lost[1] = 0;
  lost[3] = 1;   /* 2 and 3 */
  assert_int_equal(river__gd_plan(4, part_of, nrec, lost, first), -1);
  lost[2] = 0;
  lost[1] = 1;   /* 1 and 3: chains of one disk, {2} and {0}, each
                    carrying both of its partitions whole */
  assert_int_equal(river__gd_plan(4, part_of, nrec, lost, first), 0);
  assert_true(first[1] == 0 && first[2] == 100 && first[3] == 0
              && first[0] == 100);
  lost[1] = 0;   /* 3 lost: fine at equal sizes ... */
  assert_int_equal(river__gd_plan(4, part_of, nrec, lost, first), 0);
  nrec[3] = 1000;   /* ... not when the lost disk's partition is most of
                       the chain's records (disk 0 must carry it all) */
  assert_int_equal(river__gd_plan(4, part_of, nrec, lost, first), -1);
}

/* An emulated disk's clock: a block starts when the disk is free and
 * either had the request and the slot (however long ago: the rank slept)
 * or a block's time ago at most; never before the disk is free, and
 * with the factor changed since, the block's time of read-ahead only. */
static void test_disk_start(void **state)
{
  const double t = 0.01;   /* a block: 10 ms */

  (void)state;
  /* Busy: a block starts when the disk is done with the last, whatever
   * waited (never faster than its rate). */
  assert_true(river__gd_disk_start(5.0, 1.0, 1.0, 4.0, t, 1) == 5.0);
  assert_true(river__gd_disk_start(5.0, 1.0, 1.0, 4.0, t, 0) == 5.0);
  /* Free since 1.0 with the request since 1.5 and the slot since 1.2:
   * the rank took it at 2.0; the disk started at 1.5. */
  assert_true(river__gd_disk_start(1.0, 1.5, 1.2, 2.0, t, 1) == 1.5);
  /* ... the slot freed last: from then. */
  assert_true(river__gd_disk_start(1.0, 1.2, 1.5, 2.0, t, 1) == 1.5);
  /* ... free only since 1.7: from then. */
  assert_true(river__gd_disk_start(1.7, 1.2, 1.5, 2.0, t, 1) == 1.7);
  /* A request taken in just now (it waited in MPI while the rank
   * slept): a block's time of read-ahead, not all of the wait. */
  assert_true(fabs(river__gd_disk_start(1.0, 2.0, 1.2, 2.0, t, 1)
                   - (2.0 - t)) < 1e-12);
  assert_true(fabs(river__gd_disk_start(1.0, 1.995, 1.2, 2.0, t, 1)
                   - (2.0 - t)) < 1e-12);
  /* The factor changed since the request came: the read-ahead only. */
  assert_true(fabs(river__gd_disk_start(1.0, 1.5, 1.2, 2.0, t, 0)
                   - (2.0 - t)) < 1e-12);
  /* ... and still never before the disk was free. */
  assert_true(river__gd_disk_start(1.999, 1.5, 1.2, 2.0, t, 0) == 1.999);
  /* The read's first block: the disk free from the start (t0 = 0). */
  assert_true(river__gd_disk_start(0.0, 0.0, 0.0, 0.002, t, 1) == 0.0);
}

/* A planned partition's wake test: any live copy against the fastest
 * other, and silence in that copy's own block times. */
static void test_plan_slower(void **state)
{
  const unsigned char alive[2] = {0, 0}, dead0[2] = {1, 0};
  const double none[2] = {0, 0};
  (void)state;
  {
    const double t[2] = {0.0065, 0.0065}, t1[2] = {0.0065, 0.00656};
    assert_int_equal(river__gd_plan_slower(2, t, alive, none, 1.01, 10), 0);
    assert_int_equal(river__gd_plan_slower(2, t1, alive, none, 1.01, 10), 0);
  }
  /* Either copy slower by more than 1.01: wake. */
  {
    const double t0[2] = {0.013, 0.0065}, t1[2] = {0.0065, 0.00664};
    assert_int_equal(river__gd_plan_slower(2, t0, alive, none, 1.01, 10), 1);
    assert_int_equal(river__gd_plan_slower(2, t1, alive, none, 1.01, 10), 1);
  }
  /* One live copy: nothing to compare with, however slow or silent. */
  {
    const double t[2] = {0.5, 0.0065}, quiet[2] = {9.0, 9.0};
    assert_int_equal(river__gd_plan_slower(2, t, dead0, quiet, 1.01, 10), 0);
  }
  /* Silent (already scaled to its share) for over 10 of the other's
   * block times: wake; for fewer, not. */
  {
    const double t[2] = {0.0065, 0}, q1[2] = {0, 0.066}, q2[2] = {0, 0.064};
    assert_int_equal(river__gd_plan_slower(2, t, alive, q1, 1.01, 10), 1);
    assert_int_equal(river__gd_plan_slower(2, t, alive, q2, 1.01, 10), 0);
  }
}

/* A dormant partition's next ask: the first copy, a probe when due. */
static void test_choose_dormant(void **state)
{
  const unsigned char alive[3] = {0, 0, 0}, dead1[3] = {0, 1, 0};
  int out[3] = {0, 0, 0};
  (void)state;
  /* Block 0: the first copy; block 1 (probe_at 1): a probe of copy 1. */
  assert_int_equal(river__gd_choose_dormant(2, 2, out, alive, 0, 1, 0), 0);
  assert_int_equal(river__gd_choose_dormant(2, 2, out, alive, 1, 1, 0), 1);
  /* A probe out: no second one; the first copy until it is full. */
  out[1] = 1;
  assert_int_equal(river__gd_choose_dormant(2, 2, out, alive, 20, 17, 1), 0);
  out[0] = 2;
  assert_int_equal(river__gd_choose_dormant(2, 2, out, alive, 20, 17, 1),
                   -1);
  /* Not due yet: the first copy, or wait for it. */
  out[1] = 0;
  assert_int_equal(river__gd_choose_dormant(2, 2, out, alive, 5, 17, 1), -1);
  out[0] = 1;
  assert_int_equal(river__gd_choose_dormant(2, 2, out, alive, 5, 17, 1), 0);
  /* Due with the first copy full: the probe goes (it adds a request). */
  out[0] = 2;
  assert_int_equal(river__gd_choose_dormant(2, 2, out, alive, 17, 17, 1), 1);
  /* Three copies: probes take turns, a dead copy is skipped. */
  out[0] = 0;
  assert_int_equal(river__gd_choose_dormant(3, 2, out, alive, 1, 1, 0), 1);
  assert_int_equal(river__gd_choose_dormant(3, 2, out, alive, 17, 17, 1), 2);
  assert_int_equal(river__gd_choose_dormant(3, 2, out, dead1, 1, 1, 0), 2);
  /* One copy: never a probe. */
  assert_int_equal(river__gd_choose_dormant(1, 2, out, alive, 1, 1, 0), 0);
}

static void test_ideal_cases(void **state)
{
  static const double eq[5] = {0.8, 0.8, 0.8, 0.8, 0.8},
                      paper[4] = {1, 0.5, 1, 1}, lost[4] = {1, 0, 1, 1},
                      mixed[4] = {1, 0.5, 2, 1}, one[1] = {2};
  /* 6 disks, r = 2: client p reads disks p and p+1. */
  static const double pair[6] = {1, 1, 0.1, 0.1, 1, 1},
                      triple[6] = {1, 1, 0.1, 0.1, 0.1, 1},
                      wrap[6] = {0.1, 1, 1, 1, 1, 0.1};
  double pc = -1, tot = -1;

  /* Equal rates: the sum, whatever r. */
  ideal_is(eq, 5, 1, 0.8);
  ideal_is(eq, 5, 2, 0.8);
  ideal_is(eq, 5, 5, 0.8);
  /* The paper's example: (1 + 0.5 + 1 + 1) / 4. Runs: one client has 2
   * disks (at least 1.5), two have 3 (at least 2.5, 1.25 each), three
   * would have 4 = the ring. */
  ideal_is(paper, 4, 2, 0.875);
  /* A lost disk: 3 / 4; clients 0 and 1 alone have disk 0 or 2 (1.0),
   * together disks 0..2 (2.0 for two): the ring binds. */
  ideal_is(lost, 4, 2, 0.75);
  /* Two adjacent disks at 0.1: sum 4.2, the ring 0.7 per client. Runs:
   * one client (two disks): client 2 has disks 2 and 3, 0.2 - the
   * tightest; two clients (three disks): 1.2 / 2 = 0.6 at best; three
   * (four disks): 2.2 / 3; four (five disks): 3.2 / 4. So 0.2 per
   * client, 1.2 in all: client 2 alone is the binding run. */
  ideal_is(pair, 6, 2, 0.2);
  /* Three adjacent at 0.1 (disks 2..4): clients 2 and 3 alone have 0.2
   * each, but together only disks 2..4, 0.3 for two: 0.15, tighter than
   * either alone (and than the ring, 3.3 / 6 = 0.55; three clients: 1.3
   * / 3; four: 2.3 / 4). A run of two binds: 0.15, 0.9 in all. */
  ideal_is(triple, 6, 2, 0.15);
  /* The run may wrap: disks 5 and 0 slow, client 5 reads both. */
  ideal_is(wrap, 6, 2, 0.2);
  /* r = 3 on the same rates: client 2 has disks 2..4 (1.2), clients 1..2
   * disks 1..4 (2.2 / 2), 1..3 disks 1..5 (3.2 / 3), 2..4 disks 2..6
   * (3.2 / 3 = 1.067): the ring, 4.2 / 6 = 0.7, binds. */
  ideal_is(pair, 6, 3, 0.7);
  /* r = 1, no mirror: each client has its own disk, n x the slowest. */
  ideal_is(mixed, 4, 1, 0.5);
  ideal_is(lost, 4, 1, 0.0);   /* partition 1 cannot be read at all */
  /* r = n: every client reads every disk: the sum, 4.5 / 4 each. */
  ideal_is(mixed, 4, 4, 1.125);
  ideal_is(one, 1, 1, 2.0);
  /* Either output may be NULL. */
  assert_int_equal(river_gd_fluid_ideal(paper, 4, 2, NULL, &tot),
                   RIVER_SUCCESS);
  assert_true(fabs(tot - 3.5) < 1e-12);
  assert_int_equal(river_gd_fluid_ideal(paper, 4, 2, &pc, NULL),
                   RIVER_SUCCESS);
  assert_true(fabs(pc - 0.875) < 1e-12);
  assert_int_equal(river_gd_fluid_ideal(paper, 4, 2, NULL, NULL),
                   RIVER_SUCCESS);
}

/* The definition itself, run by run (O(n^3)): what the prefix sums of
 * river_gd_fluid_ideal must give. */
static double ideal_direct(const double *rates, int n, int r)
{
  double sum = 0, best, run;
  int i, j, len;

  for (i = 0; i < n; i++)
    sum += rates[i];
  best = sum / n;
  for (len = 1; len < n && len + r - 1 < n; len++)
    for (j = 0; j < n; j++) {
      for (run = 0, i = 0; i < len + r - 1; i++)
        run += rates[(j + i) % n];
      if (run / len < best)
        best = run / len;
    }
  return best;
}

/* Random rates (some disks 0, some 100x the others) on rings of 1..40
 * disks at every r: the same ideal as the definition, to 1e-12
 * relative. */
static void test_ideal_random(void **state)
{
  double rates[40], pc, tot, want;
  uint64_t seed = 41;
  int n, r, i, trial;

  (void)state;
  for (trial = 0; trial < 20; trial++)
    for (n = 1; n <= 40; n += 1 + trial % 3)
      for (r = 1; r <= n; r++) {
        for (i = 0; i < n; i++) {
          uint64_t x = (seed += 0x9e3779b97f4a7c15ull);
          x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
          x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
          x ^= x >> 31;
          rates[i] = x % 7 == 0 ? 0.0 : x % 11 == 0 ? 100.0
                     : (double)(x % 1000) / 100.0;
        }
        want = ideal_direct(rates, n, r);
        assert_int_equal(river_gd_fluid_ideal(rates, n, r, &pc, &tot),
                         RIVER_SUCCESS);
        if (fabs(pc - want) > 1e-12 * (want > 1 ? want : 1)
            || fabs(tot - n * pc) > 1e-9)
          fail_msg("n %d, r %d: %.17g per client, the definition %.17g", n,
                   r, pc, want);
      }
}

static void test_ideal_bad_args(void **state)
{
  double ok[4] = {1, 1, 1, 1}, bad[4] = {1, -0.5, 1, 1}, pc = 7, tot = 7;
  double nan = strtod("nan", NULL), inf = strtod("inf", NULL);

  assert_int_equal(river_gd_fluid_ideal(NULL, 4, 2, &pc, &tot),
                   RIVER_EINVAL);
  assert_int_equal(river_gd_fluid_ideal(ok, 0, 1, &pc, &tot), RIVER_EINVAL);
  assert_int_equal(river_gd_fluid_ideal(ok, -1, 1, &pc, &tot), RIVER_EINVAL);
  assert_int_equal(river_gd_fluid_ideal(ok, 4, 0, &pc, &tot), RIVER_EINVAL);
  assert_int_equal(river_gd_fluid_ideal(ok, 4, -2, &pc, &tot), RIVER_EINVAL);
  assert_int_equal(river_gd_fluid_ideal(ok, 4, 5, &pc, &tot), RIVER_EINVAL);
  assert_int_equal(river_gd_fluid_ideal(bad, 4, 2, &pc, &tot), RIVER_EINVAL);
  bad[1] = nan;
  assert_int_equal(river_gd_fluid_ideal(bad, 4, 2, &pc, &tot), RIVER_EINVAL);
  bad[1] = inf;   /* no finite ideal either */
  assert_int_equal(river_gd_fluid_ideal(bad, 4, 2, &pc, &tot), RIVER_EINVAL);
  bad[1] = -inf;
  assert_int_equal(river_gd_fluid_ideal(bad, 4, 2, &pc, &tot), RIVER_EINVAL);
  assert_true(pc == 7 && tot == 7);   /* outputs untouched */
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_pick_nothing_pending),
    cmocka_unit_test(test_pick_lowest_progress),
    cmocka_unit_test(test_pick_ties_round_robin),
    cmocka_unit_test(test_pick_skips_idle_streams),
    cmocka_unit_test(test_move_only_from_slower),
    cmocka_unit_test(test_too_late),
    cmocka_unit_test(test_choose_copy),
    cmocka_unit_test(test_first_slower),
    cmocka_unit_test(test_choose_dormant),
    cmocka_unit_test(test_plan),
    cmocka_unit_test(test_plan_slower),
    cmocka_unit_test(test_disk_start),
    cmocka_unit_test(test_ideal_cases),
    cmocka_unit_test(test_ideal_random),
    cmocka_unit_test(test_ideal_bad_args),
    cmocka_unit_test(test_ring_slow_disk),
    cmocka_unit_test(test_ring_lost_disk),
    cmocka_unit_test(test_ring_14_disks),
    cmocka_unit_test(test_ring_binding_run),
    cmocka_unit_test(test_ring_random),
    cmocka_unit_test(test_ring_no_gd),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
