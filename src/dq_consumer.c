/*
 * dq_consumer.c - the consumer side of the distributed queue (protocol in
 * dq_internal.h). Receives are posted at create into the slots of
 * q->rbuf: nrslots for DATA from anyone (DQ_POSTED; PULL on the MSG
 * path grows them as it asks for units; src/dq_recv.c posts them). An
 * EOS has no receive posted: MPI_Improbe finds it, and it is received
 * into a bare header in q's, or, with records, into a message buffer
 * allocated then and freed at its release (at most DQ_EOS_HELD of those
 * at once: eos_cap). A DATA message that completes
 * waits in its producer's ring (q->ring, index seq mod credits) until it
 * is next, so delivery is FIFO
 * per producer whatever order MPI completes receives in; get lends out
 * one message at a time, re-posts its slot with the spare buffer and
 * returns its credit to the producer's window (or holds it: pacing);
 * release (or the next get) makes the lent buffer the spare again.
 * PULL's consumer half is here too: an idle consumer claims a producer's
 * next unit and takes only that producer's messages until the unit's
 * last.
 */
#include "dq_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* PUSH: this consumer's drain rate as a credit word's 24-bit field
 * (dq_internal.h): the code once DQ_CODE_MIN messages are measured,
 * firm from DQ_CODE_AVG on; idle once DQ_CODE_MIN messages are got
 * while more than half of its recent gets waited. */
static uint32_t rate_code(const river_dq *q)
{
  double c;
  uint32_t f = 0;

  if (!DQ_DOES(q, DQ_P_RATES))
    return 0;
  if (q->messages_in >= DQ_CODE_MIN && q->waited_avg > 0.5)
    f |= DQ_RATE_IDLE;
  if (q->nslow < DQ_CODE_MIN || !(q->spb_slow > 0.0))
    return f;
  if (q->nslow >= DQ_CODE_AVG)
    f |= DQ_RATE_FIRM;
  c = 1.0 - log2(q->spb_slow) * DQ_CODE_SCALE;
  if (!(c >= 1.0))
    return f | 1u;
  return f | (c >= (double)DQ_CODE_MAX ? DQ_CODE_MAX : (uint32_t)(c + 0.5));
}

/* PUSH: tell every producer this consumer's rate field (return_credits
 * with no credit) when it first has one, when its code becomes firm
 * and when it becomes idle or busy (at most once per DQ_CODE_MIN
 * messages), rather than with the next credit each gets back: a
 * dormant producer decides by it (dq_internal.h), and a slow consumer
 * returns its next credit late. The code's later drift goes with the
 * credits. Beyond read_all consumers no producer is dormant (it
 * chooses among a window), so the code goes only with the credits: a
 * word to every producer at each idle flip would make a message's work
 * grow with the producers (issue 41). */
static int return_credits(river_dq *q, int p, uint64_t n);
static int tell_code(river_dq *q)
{
  uint32_t f = q->rate, told = q->code_told;
  int p, rc, first, firm, idle;

  if (f == 0 || f == told || q->ncons > q->read_all)
    return RIVER_SUCCESS;
  first = told == 0 || (DQ_RATE_CODE(told) == 0 && DQ_RATE_CODE(f) != 0);
  firm = ((f ^ told) & DQ_RATE_FIRM) != 0;
  idle = ((f ^ told) & DQ_RATE_IDLE) != 0
         && q->messages_in - q->told_at >= DQ_CODE_MIN;
  if (!first && !firm && !idle)
    return RIVER_SUCCESS;
  q->code_told = f;
  q->told_at = q->messages_in;
  DQ_STEPS(q, q->nprod);
  for (p = 0; p < q->nprod; p++)
    if (q->code_sent[p] != f && q->eos_seq[p] == DQ_UNKNOWN
        && (rc = return_credits(q, p, 0)) != RIVER_SUCCESS)
      return rc;
  return RIVER_SUCCESS;
}

/* Return n credits to producer p (add to its window slot for this
 * consumer), and with them (PUSH) the change in this consumer's rate
 * code since p's slot last heard it: one word, one add (dq_credit.c). The
 * sum wraps modulo 2^64, so the code's field takes the difference. */
static int return_credits(river_dq *q, int p, uint64_t n)
{
  int r = q->prod_rank[p];
  uint32_t code = q->rate;
  uint64_t add = n, low = q->released[p] & DQ_COUNT_MASK;
  int rc;

  /* The count is modulo 2^DQ_COUNT_BITS: its carry must not reach the
   * rate field (after 2^40 messages on one pair). */
  if (low + n > DQ_COUNT_MASK)
    add -= UINT64_C(1) << DQ_COUNT_BITS;
  add += ((uint64_t)code - (uint64_t)q->code_sent[p]) << DQ_COUNT_BITS;
  if ((rc = river__dq_cw_add(q, p, (MPI_Aint)q->cidx, add, 1))
      != RIVER_SUCCESS) {
    river__error("dq: returning a credit to rank %d failed", r);
    return rc;
  }
  q->released[p] += n;
  q->code_sent[p] = code;
  return RIVER_SUCCESS;
}

/* Pacing: p holds a credit here now; queue it in heldq if it is not. */
static void held_push(river_dq *q, int p)
{
  if (q->in_heldq[p])
    return;
  q->heldq[(q->heldq_head + q->heldq_n++) % q->nprod] = p;
  q->in_heldq[p] = 1;
}

/* Pacing: return one held credit, taking producers in turn: the first
 * of heldq, which goes to the back if it holds more (one whose stream
 * ended holds none and is skipped). O(1) a credit, however many
 * producers. */
static int return_one_held(river_dq *q)
{
  int p, rc;

  while (q->heldq_n > 0) {
    p = q->heldq[q->heldq_head];
    q->heldq_head = (q->heldq_head + 1) % q->nprod;
    q->heldq_n--;
    q->in_heldq[p] = 0;
    if (q->held_by[p] == 0)
      continue;
    if ((rc = return_credits(q, p, 1)) != RIVER_SUCCESS) {
      held_push(q, p);
      return rc;
    }
    q->held_by[p]--;
    q->nheld--;
    if (q->held_by[p] > 0)
      held_push(q, p);
    return RIVER_SUCCESS;
  }
  q->nheld = 0;   /* every held credit is in heldq: none is held */
  return RIVER_SUCCESS;
}

static double pace_msg_time(const river_dq *q);

/* While the rank waits anywhere in River (river__backoff's hook:
 * dq_credit.c), a paced queue whose consumer has been out of get for
 * longer than pace and than two of its message times gives back every
 * credit it holds, so a consumer waiting on another queue or input
 * never holds a producer up for good (dq_internal.h). */
void river__dq_pace_tick(river_dq *q)
{
  double now = river_wtime();

  if (!q->in_get && q->nheld > 0 && now - q->t_left >= q->pace
      && now - q->t_left >= 2.0 * pace_msg_time(q))
    while (q->nheld > 0 && return_one_held(q) == RIVER_SUCCESS)
      ;
}

/* Pacing: the time this consumer takes for a full message, or 0 while
 * not measured. */
static double pace_msg_time(const river_dq *q)
{
  return q->nsamples < 4 ? 0.0
                         : q->spb * (double)(q->per_msg * q->record_size);
}

/* Pacing: L, the messages this consumer lets be queued or in flight at
 * it, from its drain rate (dq_internal.h), not counting extra. */
static int pace_limit(const river_dq *q)
{
  double full = pace_msg_time(q), l;
  int most = q->live * q->credits;

  if (full <= 0.0)
    return most;
  l = q->pace / full;
  if (l >= (double)most)
    return most;
  return l <= 2.0 ? 2 : (int)l + ((double)(int)l < l); /* ceil */
}

/* Pacing: credits to hold now, W = live x credits - (L + extra). */
static int pace_hold(const river_dq *q, int l)
{
  int hold = q->live * q->credits - l - q->extra;

  return hold > 0 ? hold : 0;
}

/* Pacing: return held credits over the bound (after it grew or live
 * shrank). */
static int pace_settle(river_dq *q)
{
  int hold = pace_hold(q, pace_limit(q)), rc = RIVER_SUCCESS;

  while (rc == RIVER_SUCCESS && q->nheld > hold)
    rc = return_one_held(q);
  return rc;
}

/* The credit of producer p's message, just taken by get: held or returned
 * (pacing), then held credits over the bound returned. */
static int pace_credit(river_dq *q, int p)
{
  int l = pace_limit(q), hold, rc = RIVER_SUCCESS;

  if (q->eos_seq[p] != DQ_UNKNOWN)
    return return_credits(q, p, 1); /* p closed: nothing to pace */
  /* The queue is long again (L wait, or every posted receive held a
   * message when get took this one: more wait unseen at producers):
   * take back what idling gave. nwaiting still counts the one taken,
   * so with 1 posted that would always hold: not below 2 (L >= 2). */
  if (q->extra > 0
      && q->nwaiting >= (l < q->nrslots ? l : q->nrslots > 2 ? q->nrslots : 2))
    q->extra--;
  hold = pace_hold(q, l);
  if (hold == 0 && q->nheld == 0)
    return return_credits(q, p, 1); /* the common case: not paced */
  /* Hold p's credit and return held ones in turn, so that the held
   * credits rotate over the producers. */
  q->held_by[p]++;
  q->nheld++;
  q->credits_paced++;
  held_push(q, p);
  while (rc == RIVER_SUCCESS && q->nheld > hold)
    rc = return_one_held(q);
  return rc;
}

/* Pacing, nothing to deliver while credits are held: for every full
 * message's time of that, let one more message in (extra) and return a
 * held credit, taking producers in turn (the idle rule of
 * dq_internal.h: held credits must never starve this consumer). */
static int pace_idle(river_dq *q)
{
  double now, t = pace_msg_time(q);

  if (q->nheld == 0)
    return RIVER_SUCCESS;
  now = river_wtime();
  if (q->t_idle == 0.0)
    q->t_idle = now;
  if (now - q->t_idle < (t > 0.0 && t < q->pace ? t : q->pace))
    return RIVER_SUCCESS;
  q->t_idle = now;
  if (q->extra < q->live * q->credits)
    q->extra++;
  return return_one_held(q);
}

static void mark(river_dq *q, int p);

/* File the message that arrived in buf (status st): a DATA message (in
 * receive slot k) into its producer's ring, an EOS (k -1) into eos_seq,
 * and an EOS's records, if any, into eos_buf (buf is then the queue's,
 * else the caller's to free). RIVER_ECORRUPT (logged) for a message
 * River did not send. */
static int file_arrival(river_dq *q, int k, unsigned char *buf,
                        const MPI_Status *st)
{
  struct dq_hdr h;
  int bytes = 0, eos = k < 0;
  uint64_t p;
  uint32_t flags;

  memcpy(&h, buf, sizeof h);
  MPI_Get_count(st, MPI_BYTE, &bytes);
  flags = DQ_DOES(q, DQ_P_UNITS) ? DQ_FIRST | DQ_LAST
          : DQ_DOES(q, DQ_P_RATES) && !eos ? DQ_STATIC : 0u;
  flags |= eos ? DQ_ABORT : 0u;
  p = h.producer;
  if (bytes < (int)DQ_HDR_SIZE || p >= (uint64_t)q->nprod
      || q->prod_rank[p] != st->MPI_SOURCE
      || (h.kind & DQ_KIND_MASK)
         != (eos ? DQ_KIND_EOS : DQ_KIND_DATA)
      || (h.kind & ~(DQ_KIND_MASK | flags))
      || (eos && (q->eos_seq[p] != DQ_UNKNOWN || q->eos_buf[p] != NULL))
      || h.nrecords > q->per_msg || (!eos && h.nrecords == 0)
      || (uint64_t)bytes != DQ_HDR_SIZE + h.nrecords * q->record_size
      || h.seq < q->next[p]
      || (!eos && (h.seq - q->next[p] >= (uint64_t)q->credits
                   || h.seq >= q->eos_seq[p]
                   || q->ring[p * q->credits + h.seq % q->credits] >= 0))) {
    river__error("dq: malformed message from rank %d (kind %u, producer "
                 "%llu, seq %llu, %llu records, %d bytes)", st->MPI_SOURCE,
                 (unsigned)h.kind, (unsigned long long)p,
                 (unsigned long long)h.seq, (unsigned long long)h.nrecords,
                 bytes);
    if (!eos)
      river__dq_post_recv(q, k); /* keep the slot in use */
    /* It came from a producer's rank: it counts as arrived from it, so
     * that destroy's drain, which counts arrivals, still ends. */
    for (p = 0; p < (uint64_t)q->nprod; p++)
      if (q->prod_rank[p] == st->MPI_SOURCE)
        q->arrived[p]++;
    return RIVER_ECORRUPT;
  }
  q->arrived[p]++;
  if (eos) {
    if ((h.kind & DQ_ABORT) && !q->aborted) {
      /* Said once, by a consumer still getting (at destroy, the
       * producer's own "did not close" says it). */
      if (!q->draining)
        river__error("dq: producer %llu (rank %d) was destroyed without "
                     "closing: its stream to consumer %d is incomplete",
                     (unsigned long long)p, st->MPI_SOURCE, q->cidx);
      q->aborted = 1;
    }
    q->eos_seq[p] = h.seq;
    q->eos_full[p] = h.nrecords > 0;
    if (h.nrecords > 0)
      q->eos_buf[p] = buf;
    q->nwaiting += h.nrecords > 0;
    /* Pacing: nothing more comes from p; its held credits bound no
     * more, and the others' bound shrinks with live. */
    q->live--;
    q->nheld -= q->held_by[p];
    q->held_by[p] = 0;
    mark(q, (int)p);
    /* Not at destroy: the MSG path's credit messages were counted when
     * its drain began, and none may follow (dq.c, credit_count). */
    if (q->pace > 0.0 && !q->draining)
      return pace_settle(q);
  } else {
    q->ring[p * q->credits + h.seq % q->credits] = k;
    q->nwaiting++;
    mark(q, (int)p);
  }
  return RIVER_SUCCESS;
}

/* A buffer for an EOS of n bytes with records, counted in the queue's
 * memory as one message's stride whatever n (a longer one, refused
 * once received whole, is freed at once). */
static unsigned char *eos_buffer(river_dq *q, size_t n)
{
  unsigned char *buf = river__dq_buffers(q, n > q->stride ? n : q->stride);

  if (buf != NULL && n > q->stride)
    river__dq_mem_add(q, (int64_t)q->stride - (int64_t)n);
  q->eos_held += buf != NULL;
  return buf;
}

/* An EOS buffer from eos_buffer is freed. */
static void eos_buffer_free(river_dq *q, unsigned char *buf)
{
  free(buf);
  river__dq_mem_add(q, -(int64_t)q->stride);
  q->eos_held--;
}

/* File EOS receive i of those in flight, completed with status st, and
 * drop it from the list. */
static int eos_arrived(river_dq *q, int i, const MPI_Status *st)
{
  unsigned char *buf = q->eos_req_buf[i];
  struct dq_hdr h;
  int rc;

  memcpy(&h, buf, sizeof h);   /* whole: it came with records */
  rc = file_arrival(q, -1, buf, st);
  if (rc != RIVER_SUCCESS || q->eos_buf[h.producer] != buf)
    eos_buffer_free(q, buf);   /* refused: not filed into eos_buf */
  q->n_eos_req--;
  q->eos_req[i] = q->eos_req[q->n_eos_req];
  q->eos_req_buf[i] = q->eos_req_buf[q->n_eos_req];
  return rc;
}

/* EOS buffers with records a consumer may hold (eos_progress): each is
 * delivered once its producer's DATA before it has come, except a PULL
 * consumer's on the MSG path, which may hold units granted late by
 * every producer and takes one unit's messages at a time: a held EOS of
 * a unit waiting behind the current one waits for that unit, whose own
 * EOS must not be refused then (the review of issue 41 found it hang). */
static int eos_cap(const river_dq *q)
{
  return DQ_DOES(q, DQ_P_UNITS) && q->path == RIVER_DQ_CREDITS_MSG
         ? q->nprod : DQ_EOS_HELD;
}

/* The EOS messages: take in those whose receive completed, then match
 * those that came (MPI_Improbe, any producer) and receive each into a
 * buffer of its size: a bare header at once into q->eos_in (it came
 * whole: it is one header), one with records into a message buffer of
 * its own, nonblocking (a large one needs its producer's progress). One
 * EOS per producer, so at most nprod are in flight. */
static int eos_progress(river_dq *q)
{
  MPI_Message m;
  MPI_Status st;
  unsigned char *buf;
  int i, flag = 0, bytes = 0, rc = RIVER_SUCCESS, r;

  for (i = 0; i < q->n_eos_req; i++) {
    if (MPI_Test(&q->eos_req[i], &flag, &st) != MPI_SUCCESS)
      return RIVER_EMPI;
    if (flag) {
      river__progress();
      if ((r = eos_arrived(q, i--, &st)) != RIVER_SUCCESS)
        rc = r;
    }
  }
  /* Every producer's EOS came (live counts those still to come): none
   * to look for. While DQ_EOS_HELD EOS buffers with records are held
   * (received or on their way, not yet released), the next EOS waits
   * unmatched: each held one is delivered once its producer's DATA
   * before it has come, which needs no EOS, so this bounds them without
   * a wait on anything else (issue 41: every producer's last partial
   * message could be held at one consumer, np buffers). Not in
   * destroy's drain: an undrained consumer delivers nothing more. */
  while (q->live > 0 && (q->eos_held < eos_cap(q) || q->draining)) {
    if (river__watchdog_fired())   /* nothing new starts (src/agree.c) */
      return RIVER_ETIMEDOUT;
    if (MPI_Improbe(MPI_ANY_SOURCE, DQ_TAG_EOS, q->comm, &flag, &m, &st)
        != MPI_SUCCESS)
      return RIVER_EMPI;
    if (!flag)
      return rc;
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    if (bytes >= 0 && (size_t)bytes <= sizeof q->eos_in) {
      if (MPI_Mrecv(q->eos_in, bytes, MPI_BYTE, &m, &st) != MPI_SUCCESS)
        return RIVER_EMPI;
      river__progress();
      if ((r = file_arrival(q, -1, (unsigned char *)q->eos_in, &st))
          != RIVER_SUCCESS)
        rc = r;
      continue;
    }
    /* Records with it: at most message_size bytes (a longer one is
     * received whole and refused by file_arrival), on a page as every
     * message buffer (dq_internal.h, DQ_PAGE). */
    if (q->n_eos_req >= q->nprod
        || (buf = eos_buffer(q, (size_t)bytes)) == NULL) {
      river__error("dq: no memory for an end of stream of %d bytes", bytes);
      return RIVER_ENOMEM;
    }
    if (MPI_Imrecv(buf, bytes, MPI_BYTE, &m, &q->eos_req[q->n_eos_req])
        != MPI_SUCCESS) {
      eos_buffer_free(q, buf);
      return RIVER_EMPI;
    }
    q->eos_req_buf[q->n_eos_req++] = buf;
  }
  return rc;
}

/* Take in every receive that has completed. */
int river__dq_recv_progress(river_dq *q)
{
  int i, n = 0, rc = RIVER_SUCCESS, r;

  /* Two-sided credits: send the credits that wait for an earlier send
   * to the same producer (dq_credit.c). */
  if ((rc = river__dq_cw_progress(q)) != RIVER_SUCCESS)
    return rc;
  DQ_STEPS(q, q->nrreq);
  if (MPI_Testsome(q->nrreq, q->rreq, &n, q->ridx, q->rstat) != MPI_SUCCESS)
    return RIVER_EMPI;
  if (n == MPI_UNDEFINED)
    n = 0;
  if (n > 0)
    river__progress();
  for (i = 0; i < n; i++)
    if ((r = file_arrival(q, q->ridx[i],
                          river__dq_recv_slot(q, q->ridx[i]),
                          &q->rstat[i])) != RIVER_SUCCESS)
      rc = r;
  if ((r = eos_progress(q)) != RIVER_SUCCESS)
    rc = r;
  return rc;
}

/* At destroy: drop the DATA messages waiting undelivered and re-post
 * their receives. Only a consumer that did not reach EOS has any (its
 * destroy reports that): with fewer receives posted than messages in
 * flight, the producers' last sends match only once these are gone. */
int river__dq_drop_waiting(river_dq *q)
{
  int p, k, rc = RIVER_SUCCESS;

  for (p = 0; p < q->nprod; p++)
    while (rc == RIVER_SUCCESS
           && (k = q->ring[p * q->credits + q->next[p] % q->credits]) >= 0) {
      q->ring[p * q->credits + q->next[p] % q->credits] = -1;
      q->next[p]++;
      q->nwaiting--;
      rc = river__dq_post_recv(q, k);
    }
  return rc;
}

/* Producer p's next message in order: its receive slot, or -1. */
static int next_in_order(const river_dq *q, int p)
{
  int k = q->ring[p * q->credits + q->next[p] % q->credits];

  if (k >= 0)
    return k;
  if (q->eos_full[p] && q->next[p] == q->eos_seq[p])
    return q->nrslots + p;
  return -1;
}

/* After producer p's state changed (a message came, one was
 * delivered): queue p in ready if its next message is here (not PULL,
 * which takes its unit's producer only), and count it done once its
 * stream has ended and all of it was delivered. O(1): get never looks
 * at every producer. */
static void mark(river_dq *q, int p)
{
  if (!DQ_DOES(q, DQ_P_UNITS) && !q->in_ready[p]
      && next_in_order(q, p) >= 0) {
    q->ready[(q->ready_head + q->ready_n++) % q->nprod] = p;
    q->in_ready[p] = 1;
  }
  if (!q->done_p[p] && q->eos_seq[p] != DQ_UNKNOWN
      && q->next[p] == q->eos_seq[p] && !q->eos_full[p]) {
    q->done_p[p] = 1;
    q->ndone++;
  }
}

static int all_done(const river_dq *q)
{
  return q->ndone == q->nprod;
}

/* Give back the message lent out by get: a DATA message's buffer
 * becomes the spare again (its slot was re-posted, and its credit
 * returned, when get took it: deliver); an EOS buffer is not used
 * again. Never waits. */
static int release_held(river_dq *q)
{
  if (q->held < 0)
    return RIVER_SUCCESS;
  if (q->held < q->nrslots) {
    q->spare = q->lent;
  } else {   /* an EOS's records: its buffer was its own */
    q->eos_buf[q->held - q->nrslots] = NULL;
    eos_buffer_free(q, q->lent);
  }
  q->held = -1;
  q->lent = NULL;
  return RIVER_SUCCESS;
}

/* PUSH (pacing, and the rate code producers wake by): the processing
 * time of the message got last, from get returning it to this call (at
 * the start of a get). */
static void pace_measure(river_dq *q)
{
  double dt, spb;

  if (q->t_got == 0.0)
    return;
  dt = river_wtime() - q->t_got;
  q->t_got = 0.0;
  if (q->got_bytes == 0)
    return;
  spb = dt / (double)q->got_bytes;
  q->spb = q->nsamples == 0 ? spb : q->spb + (spb - q->spb) / 8.0;
  if (q->nsamples < 4)
    q->nsamples++; /* 4 is all pace_msg_time asks: no overflow */
  /* The rate code's average leaves out a message got after waiting,
   * and the first one (before it, the rank was outside get): an
   * emulated rate's tokens pile up while idle, and they made the first
   * codes of equal consumers differ by up to 30%. */
  if (q->messages_in <= 1)
    return;
  q->waited_avg += ((double)q->got_waited - q->waited_avg) / 16.0;
  if (q->got_waited)
    return;
  if (q->nslow < DQ_CODE_AVG)
    q->nslow++;
  q->spb_slow += (spb - q->spb_slow) / (double)q->nslow;
}

/* Lend out producer p's next message, in receive slot k; *hp gets its
 * header. A DATA message's buffer leaves its slot, which is re-posted at
 * once with the spare buffer, and its credit goes back (or is held:
 * pacing) now, not when the caller releases it: credits count messages
 * in flight or waiting, so the one the caller works on does not hold the
 * producer back (at 1 x 1 with 2 credits, it halved the pipeline). */
static int deliver(river_dq *q, int p, int k,
                   struct dq_hdr *hp, const void **records,
                   size_t *nrecords, int *from)
{
  struct dq_hdr h;
  int rc = RIVER_SUCCESS;

  q->lent = river__dq_recv_slot(q, k);
  memcpy(&h, q->lent, sizeof h);
  *hp = h;
  if (k < q->nrslots) {
    q->ring[p * q->credits + q->next[p] % q->credits] = -1;
    q->next[p]++;
    q->rptr[k] = q->spare; /* not NULL: get released what it lent */
    q->spare = NULL;
    if (river__dq_post_recv(q, k) != RIVER_SUCCESS)
      rc = RIVER_EMPI;
    else
      /* A message p sent dormant (DQ_STATIC) is not paced: p waits for
       * the consumer whose turn it is, as STATIC does, and a credit
       * held here would stall it while the consumers after this one in
       * its order ran dry (dq_internal.h). None of p's was held before:
       * p sends dormant only before it ever sends awake. */
      rc = q->pace > 0.0 && !(h.kind & DQ_STATIC) ? pace_credit(q, p)
                                                  : return_credits(q, p, 1);
  } else {
    q->eos_full[p] = 0;
  }
  q->nwaiting--; /* after the credit: pace_credit counts this one */
  q->held = k;
  q->last_p = p;
  mark(q, p);   /* its next, if here, queues behind the others' */
  q->records_in += h.nrecords;
  q->bytes_in += h.nrecords * q->record_size;
  q->messages_in++;
  q->msgs_from[p]++;
  q->g_tag = h.tag;
  q->g_tagged = 1;
  *records = q->lent + DQ_HDR_SIZE;
  *nrecords = (size_t)h.nrecords;
  if (from != NULL)
    *from = p;
  return rc;
}

/* PULL: one look. An idle consumer claims a unit; one with a unit in
 * progress takes only that unit's producer's next message. */
static int step_pull(river_dq *q, const void **records,
                     size_t *nrecords, int *from)
{
  struct dq_hdr h;
  int k, rc;

  if ((rc = river__dq_recv_progress(q)) != RIVER_SUCCESS)
    return rc;
  if (q->aborted)
    return RIVER_ESTATE; /* a producer's stream is incomplete */
  /* A unit number the producer closed without making (a lost race): the
   * EOS came and every message before it was delivered. */
  if (q->cur_p >= 0 && q->eos_seq[q->cur_p] != DQ_UNKNOWN
      && q->next[q->cur_p] == q->eos_seq[q->cur_p] && !q->eos_full[q->cur_p])
    q->cur_p = -1;
  if (q->cur_p < 0 && (rc = river__dq_cw_claim(q)) != RIVER_SUCCESS)
    return rc;
  if (q->cur_p >= 0 && (k = next_in_order(q, q->cur_p)) >= 0) {
    if ((rc = deliver(q, q->cur_p, k, &h, records, nrecords, from))
        != RIVER_SUCCESS)
      return rc;
    q->g_unit = ((uint64_t)q->cur_p << RIVER_DQ_UNIT_SHIFT) | q->cur_u;
    q->g_first = (h.kind & DQ_FIRST) != 0;
    q->g_last = (h.kind & DQ_LAST) != 0;
    q->g_valid = 1;
    if (q->g_last)
      q->cur_p = -1;
    return RIVER_SUCCESS;
  }
  if (q->cur_p < 0 && all_done(q)) {
    q->eos_seen = 1;
    return RIVER_EOS;
  }
  return RIVER_EAGAIN;
}

/* One look for a message: RIVER_SUCCESS (delivered), RIVER_EOS or
 * RIVER_EAGAIN. Producers take turns: the first in ready (mark). */
static int step_get(river_dq *q, const void **records,
                    size_t *nrecords, int *from)
{
  struct dq_hdr h;
  int p, k, rc;

  if (DQ_DOES(q, DQ_P_UNITS))
    return step_pull(q, records, nrecords, from);
  if ((rc = river__dq_recv_progress(q)) != RIVER_SUCCESS)
    return rc;
  if (q->aborted)
    return RIVER_ESTATE; /* a producer's stream is incomplete */
  while (q->ready_n > 0) {
    p = q->ready[q->ready_head];
    q->ready_head = (q->ready_head + 1) % q->nprod;
    q->ready_n--;
    q->in_ready[p] = 0;
    if ((k = next_in_order(q, p)) >= 0)
      return deliver(q, p, k, &h, records, nrecords, from);
  }
  if (all_done(q)) {
    q->eos_seen = 1;
    return RIVER_EOS;
  }
  return RIVER_EAGAIN;
}

/* PUSH beyond read_all consumers (agreed at create), RMA path: publish
 * the rate field in this consumer's rate word (producers read it:
 * dq_producer.c, pub_refresh) when it first has one, when its code
 * moved by DQ_PUB_STEP, and when it becomes firm, idle or busy. One
 * local atomic, not a word to every producer. */
static int publish_code(river_dq *q)
{
  uint32_t f = q->rate, told = q->pub_told, a, b;

  if (!q->pub_on || f == told)
    return RIVER_SUCCESS;
  a = DQ_RATE_CODE(f);
  b = DQ_RATE_CODE(told);
  if (told != 0 && ((f ^ told) & (DQ_RATE_FIRM | DQ_RATE_IDLE)) == 0
      && (a > b ? a - b : b - a) < DQ_PUB_STEP)
    return RIVER_SUCCESS;
  return river__dq_pub_write(q, f);
}

static int get_common(river_dq *q, const void **records,
                      size_t *nrecords, int *from, int block)
{
  long ns = RIVER_BACKOFF_START;
  double t0 = 0.0;
  int rc;

  if (q == NULL || records == NULL || nrecords == NULL
      || !(q->role & RIVER_DQ_CONSUMER))
    return RIVER_EINVAL;
  pace_measure(q);
  q->rate = rate_code(q); /* changes only with a measure */
  if ((rc = release_held(q)) != RIVER_SUCCESS
      || (rc = tell_code(q)) != RIVER_SUCCESS
      || (rc = publish_code(q)) != RIVER_SUCCESS)
    return rc;
  if (q->aborted)
    return RIVER_ESTATE;
  if (q->eos_seen)
    return RIVER_EOS;
  q->in_get = 1;
  while ((rc = step_get(q, records, nrecords, from)) == RIVER_EAGAIN) {
    if (q->pace > 0.0 && (rc = pace_idle(q)) != RIVER_SUCCESS)
      break;
    rc = RIVER_EAGAIN;
    if (!block)
      break;
    if (t0 == 0.0)
      t0 = river_wtime();
    if ((rc = river__backoff(&ns)) != RIVER_SUCCESS) {
      rc = river__dq_timeout(q, "a queue's consumer waiting for records");
      break;
    }
  }
  if (t0 != 0.0)
    q->get_wait += river_wtime() - t0;
  if (rc == RIVER_EAGAIN)
    q->try_waited = 1; /* try_get found nothing: as a get that waited */
  q->in_get = 0;
  if (DQ_DOES(q, DQ_P_RATES))
    q->t_left = river_wtime();
  if (rc == RIVER_SUCCESS && DQ_DOES(q, DQ_P_RATES)) {
    q->t_got = q->t_left;
    q->got_bytes = *nrecords * q->record_size;
    q->got_waited = t0 != 0.0 || q->try_waited;
    q->try_waited = 0;
    q->t_idle = 0.0;
  }
  return rc;
}

int river_dq_get(river_dq *q, const void **records, size_t *nrecords,
                 int *from)
{
  return get_common(q, records, nrecords, from, 1);
}

int river_dq_try_get(river_dq *q, const void **records, size_t *nrecords,
                     int *from)
{
  return get_common(q, records, nrecords, from, 0);
}

int river_dq_release(river_dq *q)
{
  if (q == NULL || !(q->role & RIVER_DQ_CONSUMER))
    return RIVER_EINVAL;
  return release_held(q);
}

int river_dq_tag(const river_dq *q, uint64_t *tag)
{
  if (q == NULL || tag == NULL || !(q->role & RIVER_DQ_CONSUMER))
    return RIVER_EINVAL;
  if (!q->g_tagged)
    return RIVER_ESTATE;
  *tag = q->g_tag;
  return RIVER_SUCCESS;
}

int river_dq_unit(const river_dq *q, uint64_t *unit, int *first, int *last)
{
  if (q == NULL || unit == NULL || first == NULL || last == NULL
      || !(q->role & RIVER_DQ_CONSUMER) || !DQ_DOES(q, DQ_P_UNITS))
    return RIVER_EINVAL;
  if (!q->g_valid)
    return RIVER_ESTATE;
  *unit = q->g_unit;
  *first = q->g_first;
  *last = q->g_last;
  return RIVER_SUCCESS;
}
