/*
 * dq_producer.c - the producer side of the distributed queue (protocol in
 * dq_internal.h): records are copied into fill buffers (slots of q->sbuf),
 * a full buffer goes as one DATA message to the consumer the policy
 * picks among those with a free credit (credits are counted in q->sent
 * and q->returned, the latter re-read from this producer's window), and
 * close sends each consumer its EOS. PULL's producer half is here too:
 * opening (announcing) units in the window and reading who claimed them.
 * put, reserve, commit, end_unit and close wait (testing and backing
 * off) for what they need; their try_ forms take one step and say
 * RIVER_EAGAIN instead (try_put first works out that nothing will have
 * to wait), and end_unit and close are loops over theirs.
 */
#include "dq_internal.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* splitmix64: the next pseudo-random number from *s. */
static uint64_t next_random(uint64_t *s)
{
  return river__mix64(*s += RIVER_MIX64_STEP);
}

/* Send slot s's buffer. */
static unsigned char *send_slot(const river_dq *q, int s)
{
  return q->slot_buf[s];
}

/* Credits consumer c has free, by the last read of the window. */
static uint64_t free_credits(const river_dq *q, int c)
{
  /* The window's count is modulo 2^DQ_COUNT_BITS (dq_internal.h). */
  return (uint64_t)q->credits
         - ((q->sent[c] - q->returned[c]) & DQ_COUNT_MASK);
}

/* Consumer c's credit word, just read into q->returned[c]: its count
 * stays there, its rate code goes to q->code[c]. */
static void split_word(river_dq *q, int c)
{
  q->code[c] = (uint32_t)(q->returned[c] >> DQ_COUNT_BITS);
  q->returned[c] &= DQ_COUNT_MASK;
}

/* Refresh q->returned, and (PUSH) each consumer's rate code, from this
 * producer's window (atomic reads). */
static int read_credits(river_dq *q)
{
  uint64_t woke = 0;
  int c, rc;

  if ((rc = river__dq_cw_read_own(q, 0, q->ncons, q->returned))
          != RIVER_SUCCESS
      || (q->dormant
          && (rc = river__dq_cw_read_own(q, DQ_W_WAKE(q), 1, &woke))
                 != RIVER_SUCCESS))
    return rc;
  for (c = 0; c < q->ncons; c++)
    split_word(q, c);
  if (woke != 0)
    q->dormant = 0; /* another producer woke: so does this one */
  return RIVER_SUCCESS;
}

/* Refresh q->returned[c] alone (STATIC, EXCHANGE, ONE_TO_ONE, PULL:
 * each message has one consumer, known before it goes, so a message
 * reads one word, not every consumer's). */
static int read_credit(river_dq *q, int c)
{
  int rc = river__dq_cw_read_own(q, c, 1, &q->returned[c]);

  split_word(q, c);
  return rc;
}

/* Refresh the n consumers' words from c on (wrapping past the last):
 * at most two reads. */
static int read_range(river_dq *q, int c, int n)
{
  int k, i, rc;

  if (n >= q->ncons)
    return read_credits(q);
  k = q->ncons - c < n ? q->ncons - c : n;
  if ((rc = river__dq_cw_read_own(q, c, k, q->returned + c))
          != RIVER_SUCCESS
      || (n > k
          && (rc = river__dq_cw_read_own(q, 0, n - k, q->returned))
                 != RIVER_SUCCESS))
    return rc;
  for (i = 0; i < n; i++)
    split_word(q, (c + i) % q->ncons);
  return RIVER_SUCCESS;
}

/* PUSH beyond read_all consumers: whether the window is in use (PUSH's
 * hooks ask), and its size. */
static int windowed(const river_dq *q)
{
  return q->ncons > q->read_all;
}

static int window_size(const river_dq *q)
{
  return q->ncons < DQ_CHOICES ? q->ncons : DQ_CHOICES;
}

/* PUSH beyond read_all consumers: how many of consumer c's credits this
 * producer may hold at once. All of them while c's rate is not known,
 * while it is idle (most of its gets wait: it keeps up), or while it
 * drains at least DQ_PUB_SLOWER of the rate of the fastest consumer
 * seen lately (q->code_ref); else in proportion to its rate against
 * that one, rounded: with 4 credits, a consumer at half the rate has 2,
 * one under an eighth none (with c credits, under 1 / 2c), and messages
 * go to faster ones. Its rate comes from its rate word (q->pub, read by
 * pub_refresh), else from its credit word. So a slow consumer is held
 * to its share by every producer as soon as each reads its word, where
 * credits alone let each producer queue credits messages there
 * (credits x producers in all) before passing it by. A code is
 * measured on the gets that did not wait (dq_consumer.c,
 * pace_measure), so a consumer whose every get waits has none: where no
 * consumer but the slow one has a code, it is the fastest seen and is
 * not held (it is passed by through its credits alone, as before the
 * rate words). */
static uint64_t window_credits(const river_dq *q, int c)
{
  uint32_t f = q->pub != NULL && q->pub[c] != 0 ? q->pub[c] : q->code[c];
  uint32_t code = DQ_RATE_CODE(f);
  double w;

  if (code == 0 || (f & DQ_RATE_IDLE) || code >= q->code_ref)
    return (uint64_t)q->credits;
  w = exp2(-(double)(q->code_ref - code) / DQ_CODE_SCALE);
  if (w >= DQ_PUB_SLOWER)
    return (uint64_t)q->credits;
  return (uint64_t)((double)q->credits * w + 0.5);
}

/* PUSH beyond read_all consumers (a no-op elsewhere): start reading the
 * rate words of the consumers of the window from r on, and of the
 * window after it (their words come before they are a choice), where a
 * word was not asked for in the last DQ_PUB_AGE; take the reads that
 * came. At most 2 x DQ_CHOICES entries looked at, whatever the
 * consumers. Before every try_put plan (plan_try_put) and every
 * blocking put's choice (push_choose), never while a plan holds. */
static int pub_refresh(river_dq *q, int r)
{
  int i, c, rc, k = 2 * window_size(q);
  double now;

  /* While try_put's plan holds, the words it planned with stay. */
  if (!q->pub_on || q->pub == NULL || q->planned)
    return RIVER_SUCCESS;
  if ((rc = river__dq_pub_poll(q, 0)) != RIVER_SUCCESS)
    return rc;
  if (k > q->ncons)
    k = q->ncons;
  now = river_wtime();
  DQ_STEPS(q, k);
  for (i = 0; i < k && q->npub < DQ_PUB_FLIGHT; i++) {
    c = (r + i) % q->ncons;
    if (q->pub_at[c] >= 0.0   /* -1: a read in flight */
        && (q->pub_at[c] == 0.0 || now - q->pub_at[c] >= DQ_PUB_AGE)
        && (rc = river__dq_pub_start(q, c)) != RIVER_SUCCESS)
      return rc;
  }
  return RIVER_SUCCESS;
}

/* PUSH beyond read_all consumers: among the window of DQ_CHOICES
 * consumers from r on, the one with the most free credits by avail
 * (NULL: free_credits), counting only those window_credits lets it hold,
 * the first of them on ties; -1 if none has one.
 * Its work does not grow with the consumers, where the least-loaded
 * choice's scan of all of them would (issue 41). Ties to the first
 * keep round-robin's shares while every consumer keeps up; a consumer
 * that lags holds more of its credits than the others in the window,
 * so messages pass it by. The credits it looks at are never more than
 * the true ones (they only come back), so it never over-sends. */
static int window_choose(river_dq *q, int r, const uint64_t *avail)
{
  uint64_t most = 0, most_any = 0, f, held;
  int i, c, best = -1, any = -1, k = window_size(q);
  double now;

  DQ_STEPS(q, k);
  for (i = 0; i < k; i++) {
    c = (r + i) % q->ncons;
    f = avail != NULL ? avail[c] : free_credits(q, c);
    if (f > most_any) {
      most_any = f;
      any = c;
    }
    held = (uint64_t)q->credits - window_credits(q, c);
    f = f > held ? f - held : 0;
    if (f > most) {
      most = f;
      best = c;
    }
  }
  if (best >= 0) {
    if (avail == NULL)   /* a send, not try_put's plan */
      q->t_held = 0.0;
    return best;
  }
  if (any < 0)
    return -1;
  /* Only consumers held back by their rates have credits here. A
   * producer held so for DQ_PUB_HELD (windows with no credit at all
   * in between do not count as a choice) sends by credits alone until
   * a send finds an unheld consumer with a credit: the faster
   * consumers may not be getting at all (waiting on another queue, or
   * on this producer's other work), and their words alone would hold
   * it for good. try_put's plan reads the same state, never resets it,
   * so what it plans the sends then do. */
  now = river_wtime();
  if (q->t_held == 0.0) {
    q->t_held = now;
    return -1;
  }
  return now - q->t_held >= DQ_PUB_HELD ? any : -1;
}

/* try_put's plan beyond read_all consumers: the consumers m messages'
 * windows can reach from q->rr (each starts after the one before went),
 * and whether m messages can go now, each to the consumer
 * window_choose takes, by their credits (copied to q->avail; fresh: as
 * fits_now's). */
static int plan_span(const river_dq *q, uint64_t m)
{
  uint64_t k = (uint64_t)window_size(q);

  return m + 1 >= (uint64_t)q->ncons / k ? q->ncons : (int)((m + 1) * k);
}

static int window_fits(river_dq *q, uint64_t m, int fresh)
{
  int i, c, r = q->rr, span = plan_span(q, m);

  DQ_STEPS(q, span);
  for (i = 0; i < span; i++) {
    c = (q->rr + i) % q->ncons;
    q->avail[c] = free_credits(q, c);
  }
  for (; m > 0; m--) {
    if ((c = window_choose(q, r, q->avail)) < 0) {
      /* By fresh credits a window has none: the next try plans on the
       * next window, so consumers that stopped getting do not hold the
       * producer while others have credits (as choose_consumer moves
       * on). */
      if (fresh)
        q->rr = (r + window_size(q)) % q->ncons;
      return 0;
    }
    q->avail[c]--;
    r = (c + 1) % q->ncons;
  }
  return 1;
}

/* PUSH: this producer woke; wake every other one too (add 1 to the wake
 * word of each window), so that none stays in static's order while the
 * others are not: its messages, unpaced, would fill the consumers'
 * queues and pacing would then hold back the producers that woke. */
static int tell_wake(river_dq *q)
{
  int p, rc;

  q->tell_wake = 0;
  DQ_STEPS(q, q->nprod);
  for (p = 0; p < q->nprod; p++)
    if (p != q->pidx
        && (rc = river__dq_cw_add(q, p, DQ_W_WAKE(q), 1, 0))
               != RIVER_SUCCESS) {
      river__error("dq: telling producer %d to wake failed", p);
      return rc;
    }
  return river__dq_cw_flush_all(q);
}

/* PUSH, dormant: how far consumer c is behind static's schedule for
 * the next message, n messages having gone (planned: more to count as
 * sent, or NULL). STATIC sends message j to consumer (pidx + j) mod
 * ncons. */
static int64_t dormant_owed(const river_dq *q, int c, uint64_t n,
                            const size_t *planned)
{
  uint64_t r = (uint64_t)((c - q->pidx % q->ncons + q->ncons) % q->ncons);
  uint64_t due = n + 1 > r ? (n - r) / (uint64_t)q->ncons + 1 : 0;

  return (int64_t)due
         - (int64_t)(q->sent[c] + (planned != NULL ? planned[c] : 0));
}

/* PUSH, dormant: the consumer for the next message, or -1 to wait.
 * avail (or NULL: free_credits) gives the credits, planned (or NULL)
 * messages to count as sent already (try_put's plan); *turn (or NULL)
 * gets t. Its turn, t, is the consumer furthest behind static's
 * schedule (ties: the schedule's own consumer first): with no detour
 * exactly STATIC's, and after detours the consumers passed over catch
 * up, so the shares end as STATIC's. When t has no free credit: with
 * decide 0, -1 (read the window first); else, if some consumer has one
 * (d: the furthest behind of them), it wakes, PUSH for the rest of the
 * queue, when t drains slower than the mean of the other consumers
 * measured by DQ_WAKE_SLOWER (DQ_WAKE_EARLY while a code is not firm)
 * or has held it up for DQ_WAKE_SILENT (t may be busy elsewhere for
 * good: a consumer waiting on another queue); it waits for t, as
 * STATIC would, when every code compared is firm (decide 2: never,
 * after try_put's plan); else it detours to d. With avail (the plan),
 * a t short of credits only in the plan's own copy is passed over. */
static int dormant_choose(river_dq *q, const uint64_t *avail,
                          const size_t *planned, int decide, int *turn)
{
  uint64_t n = 0;
  int64_t most = INT64_MIN, most_d = INT64_MIN, o;
  double sum = 0.0, now, slower;
  int c, i, k, t = 0, d = -1, nm = 0, firm = 1, idle = 0;
  uint32_t f;

  DQ_STEPS(q, 2 * q->ncons);   /* this loop and the next */
  for (c = 0; c < q->ncons; c++)
    n += q->sent[c] + (planned != NULL ? planned[c] : 0);
  k = (int)((q->pidx + n) % (uint64_t)q->ncons);
  for (i = 0; i < q->ncons; i++) {
    c = (k + i) % q->ncons;
    o = dormant_owed(q, c, n, planned);
    if (o > most) {
      most = o;
      t = c;
    }
    if (o > most_d && (avail != NULL ? avail[c] : free_credits(q, c)) > 0) {
      most_d = o;
      d = c;
    }
  }
  if (turn != NULL)
    *turn = t;
  if (d == t)
    return t;
  if (!decide || d < 0)
    return -1; /* nobody has a credit: nothing to learn while waiting */
  if (avail != NULL && free_credits(q, t) > 0)
    return d; /* try_put's plan used t's credits itself: go on */
  f = q->code[t];
  if (DQ_RATE_CODE(f) == 0)
    return d; /* t not measured yet */
  DQ_STEPS(q, q->ncons);
  for (c = 0; c < q->ncons; c++) {
    if (c == t)
      continue;
    if ((q->code[c] & DQ_RATE_IDLE) && !(f & DQ_RATE_IDLE)
        && (avail != NULL ? avail[c] : free_credits(q, c)) > 0)
      idle = 1; /* c waits for messages while t has all it can take */
    if (DQ_RATE_CODE(q->code[c]) != 0) {
      sum += DQ_RATE_CODE(q->code[c]);
      nm++;
      firm &= (q->code[c] & DQ_RATE_FIRM) != 0;
    }
  }
  if (nm == 0 && !idle)
    return d; /* no other consumer measured yet */
  firm &= (f & DQ_RATE_FIRM) != 0;
  slower = log2(firm ? DQ_WAKE_SLOWER : DQ_WAKE_EARLY) * DQ_CODE_SCALE;
  now = river_wtime();
  if (q->t_stall == 0.0)
    q->t_stall = now;
  if (idle || sum / nm - (double)DQ_RATE_CODE(f) > slower
      || now - q->t_stall > DQ_WAKE_SILENT) {
    q->dormant = 0;
    q->tell_wake = 1;
    return d;
  }
  return firm && decide != 2 ? -1 : d;
}

/* PULL: learn who claimed the open unit (q->owner), if anyone has. */
static int read_owner(river_dq *q)
{
  uint64_t v = 0;
  MPI_Aint w;
  int rc;

  if (q->owner >= 0 || !q->unit_open)
    return RIVER_SUCCESS;
  w = DQ_W_OWNER(q, q->nunits - 1);
  if ((rc = river__dq_cw_read_own(q, w, 1, &v)) != RIVER_SUCCESS)
    return rc;
  if (v == 0)
    return RIVER_SUCCESS;
  if (v > (uint64_t)q->ncons) {
    river__error("dq: unit %llu has a bad claim (%llu)",
                 (unsigned long long)(q->nunits - 1), (unsigned long long)v);
    return RIVER_ECORRUPT;
  }
  /* Clear the word for unit nunits - 1 + ncons + 1, whose claim cannot
   * come before this producer opens its next unit (the PULL
   * paragraph of dq_internal.h). */
  if ((rc = river__dq_cw_add(q, q->pidx, w, (uint64_t)0 - v, 1))
      != RIVER_SUCCESS)
    return rc;
  q->owner = (int)(v - 1);
  return RIVER_SUCCESS;
}

/* PULL: open a new unit: announce it (an atomic add on this producer's
 * own window). */
static int open_unit(river_dq *q)
{
  int rc;

  if ((rc = river__dq_cw_add(q, q->pidx, DQ_W_ANN(q), 1, 1))
      != RIVER_SUCCESS) {
    river__error("dq: announcing a unit failed");
    return rc;
  }
  q->nunits++;
  q->unit_open = 1;
  q->owner = -1;
  q->unit_first = 1;
  q->unit_last = 0;
  return RIVER_SUCCESS;
}

/* PULL: RIVER_EAGAIN until the open unit is claimed. */
static int step_claim(river_dq *q, int b)
{
  int rc;

  (void)b;
  if ((rc = read_owner(q)) != RIVER_SUCCESS)
    return rc;
  return q->owner >= 0 ? RIVER_SUCCESS : RIVER_EAGAIN;
}

/* Retire completed sends: their slots become free again. */
int river__dq_send_progress(river_dq *q)
{
  int i, k, n = 0, data = q->nslots_max * q->fanout, rc;

  /* Two-sided credits: apply what came, send what waits (dq_credit.c). */
  if ((rc = river__dq_cw_progress(q)) != RIVER_SUCCESS)
    return rc;
  if (q->sactive == 0)
    return RIVER_SUCCESS;
  /* Only the sends in flight, packed in sreq: the work does not grow
   * with the slots or the consumers (issue 41). */
  DQ_STEPS(q, q->sactive);
  if (MPI_Testsome(q->sactive, q->sreq, &n, q->sidx, MPI_STATUSES_IGNORE)
      != MPI_SUCCESS)
    return RIVER_EMPI;
  if (n == MPI_UNDEFINED || n == 0)
    return RIVER_SUCCESS;
  river__progress();
  for (i = 0; i < n; i++) {
    int place = q->splace[q->sidx[i]];
    if (place < data) {
      int s = place / q->fanout;
      if (--q->slot_refs[s] == 0 && !q->slot_fill[s])
        q->free_stack[q->nfree++] = s;   /* free again */
    }
  }
  /* Pack: the completed ones are MPI_REQUEST_NULL now; the others keep
   * their order. */
  for (i = 0, k = 0; i < q->sactive; i++)
    if (q->sreq[i] != MPI_REQUEST_NULL) {
      q->sreq[k] = q->sreq[i];
      q->splace[k++] = q->splace[i];
    }
  q->sactive = k;
  return RIVER_SUCCESS;
}

static int free_slots(const river_dq *q)
{
  return q->nfree;
}

/* Re-read the credit words choose_consumer needs for fill buffer b's
 * message: the policy's (its read hook). Up to DQ_READ_ALL consumers
 * every word is read at once anyway: one read then refreshes them all,
 * where one a consumer would be a read for nearly every message
 * (STATIC's next consumer is another each time). */
static int read_for(river_dq *q, int b)
{
  if (q->ncons <= q->read_all)
    return read_credits(q);
  return q->pol->read(q, b);
}

/* Pick the consumer of fill buffer b's message by policy, among those
 * with a free credit (*c = -1: all of them, for BROADCAST). RIVER_EAGAIN
 * if the policy's choice has no credit even after re-reading the window. */
static int choose_consumer(river_dq *q, int b, int *c)
{
  int pass, rc;

  for (pass = 0; pass < 2; pass++) {
    if (pass == 1 && (rc = read_for(q, b)) != RIVER_SUCCESS)
      return rc;
    if ((rc = q->pol->choose(q, b, pass, c)) != RIVER_EAGAIN)
      return rc;
  }
  return RIVER_EAGAIN;
}

/* Isend len bytes at buf to consumer c with tag, for request place
 * place (its request goes at the end of the packed sreq). */
static int isend(river_dq *q, const void *buf, size_t len, int c,
                 int tag, int place)
{
  if (river__watchdog_fired())   /* nothing new starts (src/agree.c) */
    return RIVER_ETIMEDOUT;
  if (MPI_Isend(buf, (int)len, MPI_BYTE, q->cons_rank[c], tag, q->comm,
                &q->sreq[q->sactive]) != MPI_SUCCESS) {
    river__error("dq: MPI_Isend to rank %d failed", q->cons_rank[c]);
    return RIVER_EMPI;
  }
  q->splace[q->sactive++] = place;
  return RIVER_SUCCESS;
}

/* The fill buffer b is sent; it stops being a fill buffer. */
static void fill_done(river_dq *q, int b)
{
  q->nfill_held--;
  q->slot_fill[q->fill[b]] = 0;
  q->fill[b] = -1;
  q->fill_n[b] = 0;
  q->stalled[b] = 0;
}

/* Send fill buffer b as a DATA message if its consumer has a credit;
 * RIVER_EAGAIN (and a counted stall) if not. Never waits. */
static int step_send(river_dq *q, int b)
{
  struct dq_hdr h;
  int s = q->fill[b], c, j, lo, hi, rc;
  unsigned char *buf;
  size_t len;

  if (s < 0 || q->fill_n[b] == 0)
    return RIVER_SUCCESS;
  rc = choose_consumer(q, b, &c);
  if (rc == RIVER_EAGAIN && !q->stalled[b]) {
    q->credit_stalls++;
    q->stalled[b] = 1;
  }
  if (rc != RIVER_SUCCESS)
    return rc;
  q->t_stall = 0.0;
  q->messages_static += q->dormant;
  if (q->pub != NULL && !q->planned)   /* the fastest seen lately fades
                                          unless read again (not while
                                          a plan holds) */
    q->code_ref = q->code_ref > DQ_REF_DECAY ? q->code_ref - DQ_REF_DECAY : 0;
  lo = c < 0 ? 0 : c;
  hi = c < 0 ? q->ncons : c + 1;
  buf = send_slot(q, s);
  h.kind = DQ_KIND_DATA | (q->dormant ? DQ_STATIC : 0u);
  if (DQ_DOES(q, DQ_P_UNITS))
    h.kind |= (q->unit_first ? DQ_FIRST : 0u)
              | (q->unit_last ? DQ_LAST : 0u);
  h.producer = (uint32_t)q->pidx;
  h.seq = q->sent[lo];   /* BROADCAST: every consumer has seen as many */
  if (q->bad_seq)        /* a test's fault: out of the consumer's window */
    h.seq += (uint64_t)q->credits;
  h.nrecords = q->fill_n[b];
  h.tag = q->tag;
  memcpy(buf, &h, sizeof h);
  len = DQ_HDR_SIZE + q->fill_n[b] * q->record_size;
  for (j = 0, c = lo; c < hi; c++, j++) {
    rc = isend(q, buf, len, c, DQ_TAG_DATA, s * q->fanout + j);
    if (rc != RIVER_SUCCESS)
      return rc;
    q->slot_refs[s]++;
    q->sent[c]++;
    q->msgs_to[c]++;
    q->messages_out++;
  }
  if (DQ_DOES(q, DQ_P_SPREAD))
    q->rr = (lo + 1) % q->ncons;
  q->unit_first = 0;
  fill_done(q, b);
  return RIVER_SUCCESS;
}

/* No slot is free: after DQ_SLOT_STUCK of that, double the pool (up to
 * credits x targets + nfill, one per credit as before the pool).
 * Why: a send beyond a consumer's posted receives holds its slot until
 * that consumer gets, so consumers that stop getting for a while (one
 * waiting on another queue for what this producer sends only later) can
 * hold every slot of the pool while others have credits: waiting for a
 * slot would then be waiting for good (the review of issue 41 found it,
 * 10 such consumers of one PUSH producer). The pool stays its size
 * while slots come free; memory beyond it is what stuck consumers pin.
 * DQ_SLOT_STUCK is long enough that a consumer merely descheduled for a
 * while does not grow it (50 ms did, at 64 ranks on 2 cores). */
static int grow_pool(river_dq *q)
{
  double now = river_wtime();
  unsigned char *buf;
  int add, k;

  if (q->nslots >= q->nslots_max || q->closing)
    return RIVER_SUCCESS;
  if (q->t_noslot == 0.0) {
    q->t_noslot = now;
    return RIVER_SUCCESS;
  }
  if (now - q->t_noslot < DQ_SLOT_STUCK)
    return RIVER_SUCCESS;
  add = q->nslots - q->nfill;
  add = add < q->nslots_max - q->nslots ? add : q->nslots_max - q->nslots;
  for (k = 0; k < add; k++) {
    if ((buf = river__dq_buffers(q, q->sstride)) == NULL) {
      river__error("dq: no memory for another send slot");
      return RIVER_ENOMEM;
    }
    q->free_stack[q->nfree++] = q->nslots;
    q->slot_buf[q->nslots++] = buf;
  }
  river__debug("dq: producer %d: no send slot free for %.0f ms; the pool "
               "grows to %d", q->pidx, 1e3 * (now - q->t_noslot),
               q->nslots - q->nfill);
  q->t_noslot = 0.0;
  return RIVER_SUCCESS;
}

/* Give fill buffer b a slot if it has none; RIVER_EAGAIN while every
 * slot is still being sent (and the pool may grow: grow_pool). */
static int step_slot(river_dq *q, int b)
{
  int s, pass, rc;

  if (q->fill[b] >= 0)
    return RIVER_SUCCESS;
  for (pass = 0; pass < 3; pass++) {
    if (pass == 1 && (rc = river__dq_send_progress(q)) != RIVER_SUCCESS)
      return rc;
    if (pass == 2 && (rc = grow_pool(q)) != RIVER_SUCCESS)
      return rc;
    if (q->nfree > 0) {
      s = q->free_stack[--q->nfree];
      q->slot_fill[s] = 1;
      q->fill[b] = s;
      q->fill_n[b] = 0;
      q->nfill_held++;
      q->t_noslot = 0.0;
      return RIVER_SUCCESS;
    }
  }
  return RIVER_EAGAIN;
}

typedef int (*step_fn)(river_dq *q, int b);

/* Repeat step until it is done, progressing sends and backing off in
 * between; the time it waited counts as put wait. */
static int wait_step(river_dq *q, step_fn step, int b)
{
  long ns = RIVER_BACKOFF_START;
  double t0 = 0.0;
  int rc;

  while ((rc = step(q, b)) == RIVER_EAGAIN) {
    if (t0 == 0.0)
      t0 = river_wtime();
    if ((rc = river__dq_send_progress(q)) != RIVER_SUCCESS)
      break;
    if ((rc = river__backoff(&ns)) != RIVER_SUCCESS) {
      rc = river__dq_timeout(q, step == step_slot
                                    ? "a queue's producer waiting for a "
                                      "send slot (its sends to consumers "
                                      "have not completed)"
                                    : "a queue's producer waiting for a "
                                      "credit");
      break;
    }
  }
  if (t0 != 0.0)
    q->put_wait += river_wtime() - t0;
  return rc;
}

/* EXCHANGE: check every record's consumer and count them in q->count.
 * RIVER_EINVAL (logged) for an index out of range. */
static int count_by_consumer(river_dq *q, const unsigned char *r, size_t n)
{
  size_t i;
  int c;

  DQ_STEPS(q, q->ntouched);
  for (i = 0; i < (size_t)q->ntouched; i++)
    q->count[q->touched[i]] = 0;
  q->ntouched = 0;
  for (i = 0; i < n; i++) {
    c = q->partition(r + i * q->record_size, q->ncons, q->partition_ctx);
    if (c < 0 || c >= q->ncons) {
      river__error("dq: the partition function gave consumer %d for record "
                   "%zu of this put (must be 0..%d); no record was taken",
                   c, i, q->ncons - 1);
      return RIVER_EINVAL;
    }
    if (q->count[c]++ == 0)
      q->touched[q->ntouched++] = c;
  }
  return RIVER_SUCCESS;
}

/* Messages that adding k > 0 records to fill buffer b completes and must
 * send (the last full one may stay in its buffer); adds to *slots the
 * slots that takes. */
static uint64_t messages_needed(const river_dq *q, int b, size_t k,
                                uint64_t *slots)
{
  uint64_t m = ((uint64_t)q->fill_n[b] + k - 1) / q->send_per_msg;

  *slots += m + (q->fill[b] < 0);
  return m;
}

/* PUSH, dormant: whether m messages can go now, each to the consumer
 * choose_consumer would take (its turn, or a detour), by the credits in
 * q->avail; q->count (EXCHANGE's) counts the plan. fresh: the credits
 * were just read (else a turn with no credit says 0: read first). */
static int dormant_fits(river_dq *q, uint64_t m, int fresh)
{
  int d;

  memset(q->count, 0, (size_t)q->ncons * sizeof *q->count);
  for (; m > 0; m--) {
    d = dormant_choose(q, q->avail, q->count, fresh, NULL);
    if (d < 0 || !q->dormant)
      return 0; /* wait, or woke: plan again, awake */
    q->avail[d]--;
    q->count[d]++;
  }
  return 1;
}

/* --------------------------------------------------------------- policies
 * Each policy's producer choices (struct dq_policy, dq_internal.h), then
 * the table. Where a policy's messages go to one consumer known from
 * the fill buffer (its target hook: STATIC, EXCHANGE, ONE_TO_ONE, PULL)
 * the target_ hooks serve it. */

/* The messages n records would complete in fill buffer 0, in *m: 1, or
 * -1 if the free slots are short of them. */
static int plan_messages(river_dq *q, size_t n, uint64_t *m)
{
  uint64_t slots = 0;

  *m = messages_needed(q, 0, n, &slots);
  return slots > (uint64_t)free_slots(q) ? -1 : 1;
}

static int target_read(river_dq *q, int b)
{
  int c = q->pol->target(q, b);

  return c >= 0 ? read_credit(q, c) : RIVER_SUCCESS;
}

static int target_choose(river_dq *q, int b, int pass, int *c)
{
  int k = q->pol->target(q, b);

  (void)pass;
  if (k < 0 || free_credits(q, k) == 0)
    return RIVER_EAGAIN;
  *c = k;
  return RIVER_SUCCESS;
}

static int target_fits(river_dq *q, size_t n, int fresh)
{
  uint64_t m;

  (void)fresh;
  if (plan_messages(q, n, &m) < 0)
    return -1;
  return m <= free_credits(q, q->pol->target(q, 0));
}

static int target_read_plan(river_dq *q, size_t n)
{
  (void)n;
  return target_read(q, 0);
}

static int target_final(river_dq *q, int b)
{
  return q->pol->target(q, b);
}

/* PUSH: the least loaded consumer (the dormant schedule first; beyond
 * read_all consumers, a window of them). */
static int push_read(river_dq *q, int b)
{
  (void)b;
  return read_range(q, q->rr, window_size(q));
}

static int push_choose(river_dq *q, int b, int pass, int *c)
{
  uint64_t most = 0, f;
  int i, n, d, rc;

  (void)b;
  if (windowed(q)) {
    if (pass == 0 && (rc = pub_refresh(q, q->rr)) != RIVER_SUCCESS)
      return rc;
    if ((*c = window_choose(q, q->rr, NULL)) >= 0)
      return RIVER_SUCCESS;
    if (pass == 1) /* the next try looks at the next window */
      q->rr = (q->rr + window_size(q)) % q->ncons;
    return RIVER_EAGAIN;
  }
  if (q->dormant) { /* static's order until a consumer is slower */
    d = dormant_choose(q, NULL, NULL, pass == 0 ? 0 : q->planned ? 2 : 1,
                       NULL);
    if (q->tell_wake && (rc = tell_wake(q)) != RIVER_SUCCESS)
      return rc;
    if (d >= 0) {
      *c = d;
      return RIVER_SUCCESS;
    }
    if (pass == 0 || q->dormant)
      return RIVER_EAGAIN;
  } /* awake: least loaded */
  /* The least loaded: among the consumers with the most free credits,
   * the next in round-robin order from this producer's own start (as
   * STATIC's). When no consumer lags, each has the most free credits in
   * turn and the shares come out exactly static's (random ties left
   * each consumer up to a message over or under, a tail of one message
   * time at the end: River 0.2-0.3 points under static with all
   * consumers equal). Unless some consumer is known to have every
   * credit free, read the window first (a local atomic): a stale view
   * would keep queueing at slow consumers. */
  DQ_STEPS(q, q->ncons);
  for (i = 0; i < q->ncons; i++)
    if ((f = free_credits(q, i)) > most)
      most = f;
  if ((pass == 0 && most < (uint64_t)q->credits) || most == 0)
    return RIVER_EAGAIN;
  for (n = 0; n < q->ncons; n++) {
    i = (q->rr + n) % q->ncons;
    DQ_STEPS(q, 1);
    if (free_credits(q, i) == most) {
      *c = i;
      return RIVER_SUCCESS;
    }
  }
  return RIVER_EAGAIN;
}

static int push_fits(river_dq *q, size_t n, int fresh)
{
  uint64_t m, sum = 0;
  int c;

  if (plan_messages(q, n, &m) < 0)
    return -1;
  if (windowed(q))
    return window_fits(q, m, fresh);
  DQ_STEPS(q, q->ncons);
  for (c = 0; c < q->ncons; c++) {
    q->avail[c] = free_credits(q, c);
    sum += q->avail[c];
  }
  return q->dormant ? dormant_fits(q, m, fresh) : m <= sum;
}

static int push_read_plan(river_dq *q, size_t n)
{
  uint64_t slots = 0;

  return read_range(q, q->rr,
                    plan_span(q, messages_needed(q, 0, n, &slots)));
}

/* The EOS's records: to the consumer whose turn it is while dormant, as
 * STATIC's; awake, to one with a free credit, else to one at random (no
 * credit is taken). */
static int push_final(river_dq *q, int b)
{
  int c;

  if (q->dormant) {
    q->messages_static++;
    (void)dormant_choose(q, NULL, NULL, 0, &c);
    return c;
  }
  if (choose_consumer(q, b, &c) == RIVER_SUCCESS)
    return c;
  return (int)(((next_random(&q->rng) >> 32) * (uint64_t)q->ncons) >> 32);
}

/* STATIC: message j to consumer rr + j, waiting for it. */
static int static_target(river_dq *q, int b)
{
  (void)b;
  return q->rr;
}

/* m messages from rr on: at most 2 x credits x consumers of them
 * (ever_fits). */
static int static_fits(river_dq *q, size_t n, int fresh)
{
  uint64_t m, i;
  int c;

  (void)fresh;
  if (plan_messages(q, n, &m) < 0)
    return -1;
  DQ_STEPS(q, 2 * m);   /* this loop and the next */
  for (c = q->rr, i = 0; i < m; i++, c = (c + 1) % q->ncons)
    q->avail[c] = free_credits(q, c);
  for (c = q->rr; m > 0; m--, c = (c + 1) % q->ncons)
    if (q->avail[c]-- == 0)
      return 0;
  return 1;
}

static int static_read_plan(river_dq *q, size_t n)
{
  uint64_t m;
  int c, rc = RIVER_SUCCESS;

  (void)plan_messages(q, n, &m);
  if (m >= (uint64_t)q->ncons)
    return read_credits(q);
  for (c = q->rr; m > 0 && rc == RIVER_SUCCESS; m--, c = (c + 1) % q->ncons)
    rc = read_credit(q, c);
  return rc;
}

/* EXCHANGE: fill buffer b is consumer b's. */
static int keyed_target(river_dq *q, int b)
{
  (void)q;
  return b;
}

/* The consumers the records go to (q->touched, counted in q->count). */
static int keyed_fits(river_dq *q, size_t n, int fresh)
{
  uint64_t slots = 0;
  int i, b;

  (void)n;
  (void)fresh;
  DQ_STEPS(q, q->ntouched);
  for (i = 0; i < q->ntouched; i++) {
    b = q->touched[i];
    if (messages_needed(q, b, q->count[b], &slots) > free_credits(q, b))
      return 0;
  }
  return slots <= (uint64_t)free_slots(q) ? 1 : -1;
}

static int keyed_read_plan(river_dq *q, size_t n)
{
  int i, rc = RIVER_SUCCESS;

  (void)n;
  for (i = 0; i < q->ntouched && rc == RIVER_SUCCESS; i++)
    rc = read_credit(q, q->touched[i]);
  return rc;
}

/* ONE_TO_ONE: producer i's messages to consumer i. */
static int paired_target(river_dq *q, int b)
{
  (void)b;
  return q->pidx;
}

/* BROADCAST: each message to every consumer, a credit at each. */
static int every_read(river_dq *q, int b)
{
  (void)b;
  return read_credits(q);
}

static int every_choose(river_dq *q, int b, int pass, int *c)
{
  int i;

  (void)b;
  (void)pass;
  for (i = 0; i < q->ncons && free_credits(q, i) > 0; i++)
    ;
  DQ_STEPS(q, i);
  if (i < q->ncons)
    return RIVER_EAGAIN;
  *c = -1;
  return RIVER_SUCCESS;
}

static int every_fits(river_dq *q, size_t n, int fresh)
{
  uint64_t m, lo = UINT64_MAX, f;
  int c;

  (void)fresh;
  if (plan_messages(q, n, &m) < 0)
    return -1;
  DQ_STEPS(q, q->ncons);
  for (c = 0; c < q->ncons; c++)
    if ((f = free_credits(q, c)) < lo)
      lo = f;
  return m <= lo;
}

static int every_read_plan(river_dq *q, size_t n)
{
  (void)n;
  return read_credits(q);
}

static int every_final(river_dq *q, int b)
{
  (void)q;
  (void)b;
  return -1;
}

/* PULL: the open unit's messages to its claimer, once known. */
static int pull_target(river_dq *q, int b)
{
  (void)b;
  return q->owner;  /* close waits for the claim before the EOS */
}

static int pull_choose(river_dq *q, int b, int pass, int *c)
{
  int rc;

  if ((rc = read_owner(q)) != RIVER_SUCCESS)
    return rc;
  return target_choose(q, b, pass, c);
}

static int pull_fits(river_dq *q, size_t n, int fresh)
{
  uint64_t m;

  (void)fresh;
  if (plan_messages(q, n, &m) < 0)
    return -1;
  if (read_owner(q) != RIVER_SUCCESS || q->owner < 0)
    return m == 0;
  return m <= free_credits(q, q->owner);
}

static const struct dq_policy policies[] = {
  {RIVER_DQ_PUSH, "PUSH", DQ_P_SPREAD | DQ_P_RATES, NULL, push_read,
   push_choose, push_fits, push_read_plan, push_final},
  {RIVER_DQ_STATIC, "STATIC", DQ_P_SPREAD, static_target, target_read,
   target_choose, static_fits, static_read_plan, target_final},
  {RIVER_DQ_EXCHANGE, "EXCHANGE", DQ_P_KEYED, keyed_target, target_read,
   target_choose, keyed_fits, keyed_read_plan, target_final},
  {RIVER_DQ_ONE_TO_ONE, "ONE_TO_ONE", DQ_P_PAIRED, paired_target,
   target_read, target_choose, target_fits, target_read_plan, target_final},
  {RIVER_DQ_BROADCAST, "BROADCAST", DQ_P_EVERY, NULL, every_read,
   every_choose, every_fits, every_read_plan, every_final},
  {RIVER_DQ_PULL, "PULL", DQ_P_UNITS, pull_target, target_read,
   pull_choose, pull_fits, target_read_plan, target_final},
};
_Static_assert(sizeof policies / sizeof policies[0] == RIVER_DQ_PULL + 1,
               "a row for each value of river_dq_policy");

const struct dq_policy *river__dq_policy(int p)
{
  size_t i;

  for (i = 0; i < sizeof policies / sizeof policies[0]; i++)
    if ((int)policies[i].policy == p)
      return &policies[i];
  return NULL;
}

/* Whether n records (EXCHANGE: as counted in q->count) can be taken
 * without waiting, by the credits in q->returned and the free slots:
 * 1 yes, 0 short of credits, -1 short of slots. fresh: as
 * dormant_fits's. */
static int fits_now(river_dq *q, size_t n, int fresh)
{
  return q->pol->fits(q, n, fresh);
}

/* Re-read the credit words try_put's plan of n records needs: all of
 * them up to read_all consumers, else the policy's. */
static int read_plan(river_dq *q, size_t n)
{
  if (q->ncons <= q->read_all)
    return read_credits(q);
  return q->pol->read_plan(q, n);
}

/* RIVER_ENOBUFS (logged) if n records could never be taken at once, not
 * even with every credit free: they would complete more messages for one
 * consumer than it has credits (PUSH, STATIC: than all have). */
static int ever_fits(river_dq *q, size_t n)
{
  uint64_t m = 0, need, slots = 0, cap = (uint64_t)q->credits;
  int i, held = q->nfill_held;

  if (DQ_DOES(q, DQ_P_KEYED)) {
    DQ_STEPS(q, q->ntouched);
    for (i = 0; i < q->ntouched; i++)
      if ((need = messages_needed(q, q->touched[i],
                                  q->count[q->touched[i]], &slots)) > m)
        m = need;
  } else {
    if (DQ_DOES(q, DQ_P_SPREAD))
      cap *= (uint64_t)q->ncons;
    m = messages_needed(q, 0, n, &slots);
  }
  /* The pool can grow to nslots_max (grow_pool): one slot per credit. */
  if (m > cap || slots > (uint64_t)(q->nslots_max - held)) {
    river__error("dq: try_put of %zu records would need %llu messages to "
                 "go at once but credits allow %llu; put fewer at a time",
                 n, (unsigned long long)m, (unsigned long long)cap);
    return RIVER_ENOBUFS;
  }
  /* A unit's first message waits for the unit's claim, which comes only
   * once the unit has records (pull_fits): records that would open a
   * unit and complete a message would wait for ever. */
  if (DQ_DOES(q, DQ_P_UNITS) && !q->unit_open && m > 0) {
    river__error("dq: try_put of %zu records would open a PULL unit and "
                 "complete a message before any consumer could claim the "
                 "unit; put at most %zu records to open one "
                 "(river_dq_put_max)", n, q->send_per_msg);
    return RIVER_ENOBUFS;
  }
  return RIVER_SUCCESS;
}

/* try_put's test: RIVER_SUCCESS if the records fit now, else EAGAIN (and,
 * if credits are short, a stall counted for the buffers that wait). */
static int plan_try_put(river_dq *q, size_t n)
{
  int b, i, rc, fit, dormant;

  if ((rc = ever_fits(q, n)) != RIVER_SUCCESS)
    return rc;
  /* A windowed PUSH producer takes in the rate words that came (and
   * asks for the next) before every plan, not only when its credits
   * run short: the sends that follow take none in (pub_refresh). */
  if ((rc = pub_refresh(q, q->rr)) != RIVER_SUCCESS)
    return rc;
  if (fits_now(q, n, 0) == 1)
    return RIVER_SUCCESS;
  if ((rc = read_plan(q, n)) != RIVER_SUCCESS
      || (rc = river__dq_send_progress(q)) != RIVER_SUCCESS)
    return rc;
  dormant = q->dormant;
  fit = fits_now(q, n, 1);
  if (q->tell_wake && (rc = tell_wake(q)) != RIVER_SUCCESS)
    return rc;
  if (fit == 0 && dormant && !q->dormant)
    fit = fits_now(q, n, 1); /* PUSH woke in the plan: plan again */
  if (fit == 1) {
    q->t_noslot = 0.0;
    return RIVER_SUCCESS;
  }
  if (fit < 0 && (rc = grow_pool(q)) != RIVER_SUCCESS)
    return rc;
  for (i = 0; fit == 0 && i < (DQ_DOES(q, DQ_P_KEYED) ? q->ntouched : 1);
       i++) {
    b = DQ_DOES(q, DQ_P_KEYED) ? q->touched[i] : 0;
    if (!q->stalled[b]) {
      q->credit_stalls++;
      q->stalled[b] = 1;
    }
  }
  return RIVER_EAGAIN;
}

/* Copy the records into fill buffers, sending (and waiting for) each
 * message that fills while more records follow. */
static int take_records(river_dq *q, const unsigned char *r, size_t n)
{
  size_t i = 0, k, rs = q->record_size;
  int b = 0, rc;

  if (DQ_DOES(q, DQ_P_UNITS) && n > 0 && !q->unit_open
      && (rc = open_unit(q)) != RIVER_SUCCESS)
    return rc;
  while (i < n) {
    if (DQ_DOES(q, DQ_P_KEYED)) {
      b = q->partition(r + i * rs, q->ncons, q->partition_ctx);
      if (b < 0 || b >= q->ncons) {
        river__error("dq: the partition function is not a function of the "
                     "record: it gave %d for a record it first placed in "
                     "range", b);
        return RIVER_EINVAL;
      }
    }
    if (q->fill_n[b] == q->send_per_msg
        && (rc = wait_step(q, step_send, b)) != RIVER_SUCCESS)
      return rc;
    if ((rc = wait_step(q, step_slot, b)) != RIVER_SUCCESS)
      return rc;
    k = DQ_DOES(q, DQ_P_KEYED) ? 1 : q->send_per_msg - q->fill_n[b];
    k = k < n - i ? k : n - i;
    memcpy(send_slot(q, q->fill[b]) + DQ_HDR_SIZE
           + q->fill_n[b] * rs, r + i * rs, k * rs);
    q->fill_n[b] += k;
    i += k;
    if (DQ_DOES(q, DQ_P_KEYED) && q->fill_n[b] == q->send_per_msg
        && !q->in_fullq[b]) {
      q->fullq[q->nfullq++] = b;   /* send_full sends it */
      q->in_fullq[b] = 1;
    }
  }
  q->records_out += n;
  q->bytes_out += n * rs;
  return RIVER_SUCCESS;
}

/* Send every full fill buffer: waiting for credits (block) or only those
 * that have one now. */
static int send_full(river_dq *q, int block)
{
  int b, i, kept, rc;

  /* PULL: a full message waits for the next record or the unit's end,
   * which tells whether it is the unit's last. */
  if (DQ_DOES(q, DQ_P_UNITS))
    return RIVER_SUCCESS;
  if (!DQ_DOES(q, DQ_P_KEYED)) {
    if (q->fill[0] < 0 || q->fill_n[0] < q->send_per_msg)
      return RIVER_SUCCESS;
    rc = block ? wait_step(q, step_send, 0) : step_send(q, 0);
    return rc == RIVER_EAGAIN ? RIVER_SUCCESS : rc;
  }
  /* EXCHANGE: the buffers that filled (fullq), not every consumer's;
   * those still waiting for a credit stay in it. */
  DQ_STEPS(q, q->nfullq);
  for (i = 0, kept = 0; i < q->nfullq; i++) {
    b = q->fullq[i];
    rc = q->fill[b] < 0 || q->fill_n[b] < q->send_per_msg ? RIVER_SUCCESS
         : block ? wait_step(q, step_send, b) : step_send(q, b);
    if (rc == RIVER_EAGAIN) {
      q->fullq[kept++] = b;
      continue;
    }
    q->in_fullq[b] = 0;
    if (rc != RIVER_SUCCESS) {
      while (++i < q->nfullq)
        q->fullq[kept++] = q->fullq[i];
      q->nfullq = kept;
      return rc;
    }
  }
  q->nfullq = kept;
  return RIVER_SUCCESS;
}

static int put_common(river_dq *q, const void *records,
                      size_t nrecords, int block)
{
  int rc;

  if (q == NULL || (records == NULL && nrecords > 0)
      || !(q->role & RIVER_DQ_PRODUCER))
    return RIVER_EINVAL;
  if (q->closing)
    return RIVER_ESTATE;
  if (q->reserved) {
    river__error("dq put: a reservation is open (commit it first)");
    return RIVER_ESTATE;
  }
  if (nrecords > SIZE_MAX / q->record_size)
    return RIVER_EINVAL;
  if ((rc = river__dq_send_progress(q)) != RIVER_SUCCESS)
    return rc;
  if (nrecords == 0)
    return RIVER_SUCCESS;
  if (DQ_DOES(q, DQ_P_KEYED)
      && (rc = count_by_consumer(q, records, nrecords)) != RIVER_SUCCESS)
    return rc;
  if (!block) {
    if ((rc = send_full(q, 0)) != RIVER_SUCCESS
        || (rc = plan_try_put(q, nrecords)) != RIVER_SUCCESS)
      return rc;
  }
  /* The plan said nothing below waits: take_records cannot block for
   * try_put (were it ever wrong, it would wait briefly, never take a
   * part). A dormant PUSH producer does not wait for its turn's
   * consumer here, whatever the window says now (planned): the plan
   * found a consumer with a credit for every message. */
  q->planned = !block;
  rc = take_records(q, records, nrecords);
  if (rc == RIVER_SUCCESS)
    rc = send_full(q, block);
  q->planned = 0;
  return rc;
}

static int reserve_common(river_dq *q, void **buf, size_t *max, int block)
{
  int rc;

  if (q == NULL || buf == NULL || max == NULL
      || !(q->role & RIVER_DQ_PRODUCER))
    return RIVER_EINVAL;
  if (DQ_DOES(q, DQ_P_KEYED | DQ_P_UNITS)) {
    river__error("dq reserve: not for %s queues (records are placed %s): "
                 "use river_dq_put", q->pol->name,
                 DQ_DOES(q, DQ_P_UNITS) ? "by units" : "one by one");
    return RIVER_EINVAL;
  }
  if (q->closing || q->reserved) {
    river__error("dq reserve: %s", q->closing ? "the queue is closed"
                 : "a reservation is already open (commit it first)");
    return RIVER_ESTATE;
  }
  if ((rc = river__dq_send_progress(q)) != RIVER_SUCCESS)
    return rc;
  if (q->fill_n[0] == q->send_per_msg
      && (rc = block ? wait_step(q, step_send, 0) : step_send(q, 0))
             != RIVER_SUCCESS)
    return rc;
  if ((rc = block ? wait_step(q, step_slot, 0) : step_slot(q, 0))
      != RIVER_SUCCESS)
    return rc;
  *buf = send_slot(q, q->fill[0]) + DQ_HDR_SIZE
         + q->fill_n[0] * q->record_size;
  *max = q->reserved = q->send_per_msg - q->fill_n[0];
  return RIVER_SUCCESS;
}

int river_dq_reserve(river_dq *q, void **buf, size_t *max)
{
  return reserve_common(q, buf, max, 1);
}

int river_dq_try_reserve(river_dq *q, void **buf, size_t *max)
{
  return reserve_common(q, buf, max, 0);
}

static int commit_common(river_dq *q, size_t n, int block)
{
  if (q == NULL || !(q->role & RIVER_DQ_PRODUCER))
    return RIVER_EINVAL;
  if (!q->reserved) {
    river__error("dq commit: no reservation (call river_dq_reserve first)");
    return RIVER_ESTATE;
  }
  if (n > q->reserved) {
    river__error("dq commit: %zu records, but the reservation holds %zu",
                 n, q->reserved);
    return RIVER_EINVAL;
  }
  q->reserved = 0;
  q->fill_n[0] += n;
  q->records_out += n;
  q->bytes_out += n * q->record_size;
  return send_full(q, block);
}

int river_dq_commit(river_dq *q, size_t n)
{
  return commit_common(q, n, 1);
}

int river_dq_try_commit(river_dq *q, size_t n)
{
  return commit_common(q, n, 0);
}

int river_dq_put(river_dq *q, const void *records, size_t nrecords)
{
  return put_common(q, records, nrecords, 1);
}

int river_dq_try_put(river_dq *q, const void *records, size_t nrecords)
{
  return put_common(q, records, nrecords, 0);
}

/* Send fill buffer b's records, if any, with the EOS to its consumer(s):
 * no credit needed. */
static int send_final(river_dq *q, int b)
{
  int s = q->fill[b], t, c, hi, rc;
  size_t n = s < 0 ? 0 : q->fill_n[b];
  unsigned char *buf;
  struct dq_hdr h;

  if (n == 0)
    return RIVER_SUCCESS;
  t = q->pol->final(q, b);
  hi = t < 0 ? q->ncons : t + 1;
  t = t < 0 ? 0 : t;
  h = q->eos_hdr[t];   /* BROADCAST: the same seq at every consumer */
  h.nrecords = n;
  h.tag = q->tag;
  if (DQ_DOES(q, DQ_P_UNITS))
    h.kind |= DQ_LAST | (q->unit_first ? DQ_FIRST : 0u);
  buf = send_slot(q, s);
  memcpy(buf, &h, sizeof h);
  for (c = t; c < hi; c++) {
    if (q->eos_went[c])
      continue;   /* a close retried after a failed send: sent once */
    rc = isend(q, buf, DQ_HDR_SIZE + n * q->record_size, c,
               DQ_TAG_EOS, q->nslots_max * q->fanout + c);
    if (rc != RIVER_SUCCESS)
      return rc;
    q->eos_hdr[c].nrecords = n; /* c's EOS is on its way */
    q->eos_went[c] = 1;
    q->msgs_to[c]++;
    q->messages_out++;
  }
  return RIVER_SUCCESS;
}

/* Repeat try until it is done, backing off in between; the time it
 * waited counts as put wait. */
static int block_on(river_dq *q, int (*try)(river_dq *q))
{
  long ns = RIVER_BACKOFF_START;
  double t0 = 0.0;
  int rc;

  while ((rc = try(q)) == RIVER_EAGAIN) {
    if (t0 == 0.0)
      t0 = river_wtime();
    if ((rc = river__backoff(&ns)) != RIVER_SUCCESS) {
      rc = river__dq_timeout(q, "a queue's producer waiting to close");
      break;
    }
  }
  if (t0 != 0.0)
    q->put_wait += river_wtime() - t0;
  return rc;
}

/* Send every consumer its EOS, with the records left in the fill
 * buffers; no credit needed. */
static int send_eos(river_dq *q)
{
  int b, c, rc;

  for (c = 0; c < q->ncons; c++) {
    if (q->eos_went[c])
      continue;
    q->eos_hdr[c].kind = DQ_KIND_EOS;
    q->eos_hdr[c].producer = (uint32_t)q->pidx;
    q->eos_hdr[c].seq = q->sent[c];
    q->eos_hdr[c].nrecords = 0;
    q->eos_hdr[c].tag = q->tag;
  }
  for (b = 0; b < q->nfill; b++)
    if ((rc = send_final(q, b)) != RIVER_SUCCESS)
      return rc;
  for (c = 0; c < q->ncons; c++)
    if (!q->eos_went[c] && (rc = river__dq_send_eos_to(q, c)) != RIVER_SUCCESS)
      return rc;
  return RIVER_SUCCESS;
}

int river__dq_send_eos_to(river_dq *q, int c)
{
  int rc = isend(q, &q->eos_hdr[c], DQ_HDR_SIZE, c, DQ_TAG_EOS,
                 q->nslots_max * q->fanout + c);

  if (rc == RIVER_SUCCESS)
    q->eos_went[c] = 1;
  return rc;
}

int river_dq_try_close(river_dq *q)
{
  int rc;

  if (q == NULL || !(q->role & RIVER_DQ_PRODUCER))
    return RIVER_EINVAL;
  if (q->close_done)
    return RIVER_ESTATE;
  q->closing = 1;
  q->reserved = 0;   /* an uncommitted reservation is dropped */
  if ((rc = river__dq_send_progress(q)) != RIVER_SUCCESS)
    return rc;
  if (!q->closed) {
    /* PULL: the open unit ends here; its last message goes with the EOS
     * to its claimer, so the claim must have come (not a credit). */
    if (DQ_DOES(q, DQ_P_UNITS) && q->unit_open
        && (rc = step_claim(q, 0)) != RIVER_SUCCESS)
      return rc;
    if ((rc = send_eos(q)) != RIVER_SUCCESS)
      return rc;
    /* The fill slots stay marked busy: nothing is put after close. */
    q->closed = 1;
    q->unit_open = 0;
  }
  /* The EOS sends are not waited for: no receive is posted for them
   * (dq_internal.h, "Consumer"), so one with records completes only
   * when its consumer takes it in, and two ranks closing queues to each
   * other would wait for each other. destroy completes them. */
  if ((rc = river__dq_send_progress(q)) != RIVER_SUCCESS)
    return rc;
  q->close_done = 1;
  return RIVER_SUCCESS;
}

int river_dq_close(river_dq *q)
{
  if (q == NULL || !(q->role & RIVER_DQ_PRODUCER))
    return RIVER_EINVAL;
  return block_on(q, river_dq_try_close);
}

int river_dq_try_end_unit(river_dq *q)
{
  int rc;

  if (q == NULL || !(q->role & RIVER_DQ_PRODUCER)
      || !DQ_DOES(q, DQ_P_UNITS))
    return RIVER_EINVAL;
  if (q->closing)
    return RIVER_ESTATE;
  if ((rc = river__dq_send_progress(q)) != RIVER_SUCCESS)
    return rc;
  if (!q->unit_open)
    return RIVER_SUCCESS; /* empty: no unit */
  /* An open unit's last records wait in the fill buffer (send_full keeps
   * a full one back): send them flagged last, once claimed and credited. */
  q->unit_last = 1;
  rc = step_send(q, 0);
  q->unit_last = 0;
  if (rc != RIVER_SUCCESS)
    return rc;
  q->unit_open = 0;
  q->owner = -1;
  return RIVER_SUCCESS;
}

int river_dq_set_tag(river_dq *q, uint64_t tag)
{
  int b;

  if (q == NULL || !(q->role & RIVER_DQ_PRODUCER))
    return RIVER_EINVAL;
  if (q->closing || q->reserved > 0
      || (DQ_DOES(q, DQ_P_UNITS) && q->unit_open))
    return RIVER_ESTATE;
  for (b = 0; b < q->nfill; b++)
    if (q->fill[b] >= 0 && q->fill_n[b] > 0)
      return RIVER_ESTATE;   /* records put under the old tag wait */
  q->tag = tag;
  return RIVER_SUCCESS;
}

int river_dq_end_unit(river_dq *q)
{
  if (q == NULL || !(q->role & RIVER_DQ_PRODUCER)
      || !DQ_DOES(q, DQ_P_UNITS))
    return RIVER_EINVAL;
  return block_on(q, river_dq_try_end_unit);
}

int river_dq_put_sized(river_dq *q, const void *records, size_t nrecords,
                       size_t record_size)
{
  if (q == NULL)
    return RIVER_EINVAL;
  if (record_size != q->record_size) {
    river__error("queue: records of %zu bytes given, the queue's are %zu "
                 "bytes: the record type does not match the schema (a field "
                 "more or less, other types, or padding); nothing put",
                 record_size, q->record_size);
    return RIVER_EINVAL;
  }
  return river_dq_put(q, records, nrecords);
}
