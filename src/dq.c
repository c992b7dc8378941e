/*
 * dq.c - distributed queues (see river/dq.h): records travel from
 * producers to consumers in messages of whole records, under credit flow
 * control kept in an RMA window.
 *
 * Setup. river_dq_create checks what a rank can check alone, then agrees
 * over comm (one MPI_Allreduce MAX of each parameter and its complement,
 * which gives min and max) that every rank passed valid, identical
 * record_size, policy, credits, message_size and seed; any difference is
 * RIVER_EINVAL on every rank with the reason logged. A rank with bad
 * arguments still takes part when MPI is up, so one bad rank cannot hang
 * the others. The queue's traffic runs on a duplicate of comm. Roles are
 * Allgathered; producer and consumer indices follow rank order.
 *
 * Messages. A 24-byte header {kind, producer index, seq, nrecords} and
 * nrecords whole records, at most message_size bytes. DATA messages
 * (tag 1) take a credit; seq counts them per (producer, consumer) pair.
 * Each producer ends its stream to each consumer with one EOS message
 * (tag 2) whose seq is the number of DATA messages it sent there; the EOS
 * also carries the producer's last, partly filled message for that
 * consumer, if any, and takes no credit. So river_dq_close never waits for
 * a credit, only for its sends to complete, and a rank that is both
 * producer and consumer can always close.
 *
 * Producer. Message buffers are "slots" in one allocation: nfill of them
 * are being filled (one, or one per consumer for EXCHANGE), the rest hold
 * sends in flight. There are credits x targets + nfill slots (targets: 1
 * for ONE_TO_ONE and BROADCAST, whose one buffer is sent to every
 * consumer, else nconsumers); a slot is reused once MPI_Testsome says its
 * sends completed. Send requests have fixed places, slot x fanout + j,
 * then one EOS request per consumer. The window holds, per consumer, how
 * many messages it has released; the producer reads it atomically with
 * MPI_Get_accumulate(MPI_NO_OP) + MPI_Win_flush, when its cached copy
 * shows no credit (PUSH: no consumer with every credit free). PUSH picks
 * the least loaded consumer (most free credits), at random among equals,
 * with a hand-written splitmix64 (seedable, per queue, the same on
 * every platform: rand() is global, random_r is glibc's); STATIC goes
 * round-robin by message starting at producer index mod nconsumers and
 * waits for that consumer; ONE_TO_ONE sends to consumer pidx; BROADCAST
 * sends each message to every consumer and needs a credit at each (every
 * consumer has seen the same number, so one header serves all);
 * EXCHANGE calls the partition function twice per record, once to check
 * and count (so a bad index, or try_put's "not now", takes no record)
 * and once to place it.
 *
 * A full message may wait in its fill buffer after try_put (it is sent by
 * the next put, try_put or close); put returns only when no full message
 * waits. try_put is all or nothing: it first works out, from free credits
 * and free slots, whether every message the records would complete can be
 * sent now, and takes them only then.
 *
 * Consumer. credits x nproducers DATA receives (ANY_SOURCE, tag 1) and
 * one EOS receive per producer (that producer, tag 2), each into a
 * message_size buffer, are posted at create. A completed DATA message
 * waits in its producer's ring of `credits` places (index seq mod
 * credits) until its seq is next; get delivers round-robin over
 * producers that have their next message, so MPI completing receives out
 * of order cannot break FIFO per pair. Release re-posts the receive
 * first, then adds 1 to the producer's window slot (MPI_Accumulate SUM +
 * MPI_Win_flush: passive target, no help from the producer needed). A
 * producer is done at a consumer when its EOS has come and every message
 * up to it was delivered; get returns RIVER_EOS when all are done.
 *
 * Why no message waits for a receive (bounded memory, no unexpected
 * queue): a producer sends DATA to consumer c only while sent - returned
 * < credits, and c returns a credit only after re-posting the buffer, so
 * DATA messages from one producer in flight or held at c never exceed
 * credits; c has credits x nproducers DATA receives, so one is always
 * posted for each DATA message in flight, and each producer's one EOS has
 * its own. Memory: a producer holds (credits x targets + nfill) messages,
 * a consumer (credits + 1) x nproducers.
 *
 * Why no deadlock: close and destroy wait only for sends to complete,
 * which needs nothing but MPI progress at the receivers (every River wait
 * loop and collective makes progress). put waits for credits, which
 * consumers return by calling get/release; a consumer's get waits only
 * for messages. A rank in both roles returns credits only when it calls
 * get, so it must not block in put while its own consumer side is
 * undrained: it interleaves try_put and try_get (see river/dq.h).
 *
 * PULL (units; river/dq.h). A PULL producer's window adds, after the
 * ncons credit counters: claimed (units numbered so far by consumers),
 * announced (units opened by the producer) and a ring of ncons + 1
 * owner words (unit u's claimer + 1 at u mod (ncons + 1), 0 if none).
 * The producer opens unit u (announced += 1, an atomic add on its own
 * window) when the first record of the unit is put. A consumer with no
 * unit in progress (idle) polls producers that have not closed, taking
 * turns: it reads claimed and announced (MPI_Get_accumulate NO_OP) and,
 * if claimed < announced, takes a unit number with MPI_Fetch_and_op(+1)
 * on claimed, then adds its index + 1 to that unit's owner word
 * (MPI_Accumulate SUM; no compare-and-swap: Open MPI 4.1's shared-memory
 * BTL crashes on it, open-mpi/ompi#11349). Consumers racing for the last
 * announced unit may take the number of a unit not announced yet: that
 * consumer owns the producer's next unit, if it is ever made; it waits
 * for it, and drops the number when the producer's EOS comes with every
 * message before it delivered (the producer closed without that unit).
 * Numbers run at most ncons - 1 ahead of announced (one per consumer,
 * each after seeing claimed < announced), so unit u's owner word cannot
 * be written for unit u + ncons + 1 before the producer opens unit u + 1,
 * and the producer clears (subtracts) the word as soon as it reads it.
 * The producer learns the owner of its open unit by reading the word,
 * and sends the unit's messages, flagged FIRST and LAST in the header's
 * kind, to that consumer under its credits; a full message waits in the
 * fill buffer until the next record (then it is not the last) or the
 * unit's end. So an unclaimed unit holds one message; put waits for the
 * claim before sending it, end_unit for the claim and a credit, close
 * for the claim only (the last message rides on the EOS, as for every
 * policy). As a producer opens unit u + 1 only after u was claimed, at
 * most one of its units is unclaimed. A consumer takes messages only from
 * the producer of its unit, in order, until LAST; then it is idle again.
 * It returns RIVER_EOS when idle and every producer's EOS has come and
 * all was delivered: a producer closes only after its last unit was
 * claimed, so no unit is left unclaimed.
 *
 * Why PULL cannot deadlock: a producer waits only for (a) the claim of
 * its open unit, which any idle consumer in get makes (idle consumers
 * poll announced counters with backoff), (b) credits from the unit's
 * owner, which is in get taking exactly that producer's messages, and
 * (c) sends to complete. A consumer waits only for its unit's producer,
 * which waits at worst for (b) from this consumer (returned on its next
 * get) or, for a number taken in a race, for its next unit or its close.
 * A consumer busy with a unit is not needed for any other producer's
 * claim as long as some consumer becomes idle: units end, so every
 * consumer becomes idle again. (A rank in both roles cannot claim its own
 * unit while it waits in put/end_unit/close: river/dq.h.)
 *
 * Destroy. Every rank tells every other (MPI_Alltoall) how many messages
 * it sent it; consumers wait (test + backoff) until all have arrived
 * while producers wait for their sends, so no message of this queue is
 * still in flight when the receives are cancelled and the communicator
 * freed (a late one could otherwise match a later queue reusing the
 * context id). The RIVER_ESTATE outcome (a producer that did not close, a
 * consumer that did not reach EOS) is agreed with an MPI_Allreduce MIN.
 *
 * Every wait tests and sleeps with river__backoff; nothing blocks in
 * MPI_Wait/MPI_Recv/MPI_Send.
 *
 * Stats: records_out/bytes_out count records put, once; messages_out and
 * msgs_to count messages with records sent to each consumer (BROADCAST:
 * once per consumer), the last one (with the EOS) included; a credit
 * stall is counted once per message that had to wait for a credit.
 * Calls on a rank without the role they need (put on a consumer, get on
 * a producer) are RIVER_EINVAL: the role is an argument of create, not a
 * state.
 *
 * Open MPI before 5.0 names a window's shared-memory segment after the
 * communicator's context id, which disjoint groups (say, the parts of one
 * MPI_Comm_split) can share: two queues created at once on one node then
 * collide, failing or silently sharing one segment (open-mpi/ompi#9492,
 * seen here as ENOENT). So with those versions the rank that creates the
 * segment, the communicator's lowest rank on each node, holds a
 * node-wide file lock around MPI_Win_allocate.
 */
#include "river_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define RIVER_DQ_TAG_DATA 1
#define RIVER_DQ_TAG_EOS 2
#define RIVER_DQ_KIND_DATA 1u
#define RIVER_DQ_KIND_EOS 2u
#define RIVER_DQ_ALIGN 64           /* slot stride: records stay aligned */
#define RIVER_DQ_UNKNOWN UINT64_MAX /* eos_seq before the EOS has come */
#define RIVER_DQ_KIND_MASK 0xffu    /* PULL: unit flags above the kind */
#define RIVER_DQ_FIRST 0x100u       /* PULL: the unit's first message */
#define RIVER_DQ_LAST 0x200u        /* PULL: the unit's last message */
/* PULL: words after the ncons credit counters in a producer's window */
#define RIVER_DQ_W_CLAIM(q) ((MPI_Aint)(q)->ncons)     /* units claimed */
#define RIVER_DQ_W_ANN(q) ((MPI_Aint)(q)->ncons + 1)   /* units announced */
/* then a ring of ncons + 1 owner words: unit u's claimer + 1, or 0 */
#define RIVER_DQ_W_OWNER(q, u)                                             \
  ((MPI_Aint)(q)->ncons + 2 + (MPI_Aint)((u) % ((uint64_t)(q)->ncons + 1)))

struct river_dq_hdr {
  uint32_t kind;        /* RIVER_DQ_KIND_* */
  uint32_t producer;    /* producer index */
  uint64_t seq;         /* DATA: per-pair number; EOS: DATA messages sent */
  uint64_t nrecords;    /* records following the header */
};
#define RIVER_DQ_HDR sizeof(struct river_dq_hdr)

struct river_dq {
  MPI_Comm comm;                /* private duplicate, or MPI_COMM_NULL */
  MPI_Win win;                  /* credits; MPI_WIN_NULL until made */
  int locked;                   /* MPI_Win_lock_all done */
  int rank, size, role;
  int nprod, ncons, pidx, cidx; /* counts; own indices (-1: not) */
  int *prod_rank, *cons_rank;   /* index -> rank in comm (size entries) */
  river_dq_policy policy;
  int credits;
  uint64_t seed;
  size_t record_size, message_size, stride, per_msg;
  river_dq_partition_fn partition;
  void *partition_ctx;
  uint64_t *count_out, *count_in; /* destroy: messages to/from each rank */

  /* producer */
  int closed;
  int nslots, nfill, fanout, nsreq, sactive;
  unsigned char *sbuf;          /* nslots x stride */
  int *slot_refs;               /* sends in flight from each slot */
  unsigned char *slot_fill;     /* 1: the slot is a fill buffer */
  int *fill;                    /* nfill: slot being filled, or -1 */
  size_t *fill_n;               /* records in it */
  unsigned char *stalled;       /* its stall was counted */
  MPI_Request *sreq;            /* nsreq: slot x fanout + j, then EOS */
  int *sidx;
  struct river_dq_hdr *eos_hdr; /* ncons: header-only EOS messages */
  uint64_t *winmem;             /* window: returned credits (RMA only) */
  uint64_t *sent, *returned, *zeros, *msgs_to, *avail; /* per consumer */
  size_t *count;                /* EXCHANGE: records per consumer */
  int rr;                       /* STATIC: next consumer */
  int unit_open;                /* PULL: the current unit has records */
  size_t reserved;              /* river_dq_reserve's *max, 0: none */
  int owner;                    /* PULL: its claimer, or -1 not known */
  int unit_first, unit_last;    /* PULL: flags for the next message */
  uint64_t nunits;              /* PULL: units opened (announced) */
  uint64_t rng;                 /* PUSH: splitmix64 state */

  /* consumer */
  int nrslots, nrreq;           /* DATA slots; + one EOS slot per producer */
  unsigned char *rbuf;          /* nrreq x stride */
  MPI_Request *rreq;
  int *ridx;
  MPI_Status *rstat;
  int *ring;                    /* nprod x credits: slot of seq, or -1 */
  uint64_t *next, *eos_seq, *arrived, *msgs_from; /* per producer */
  unsigned char *eos_full;      /* EOS records not yet delivered */
  int held, held_p, last_p;     /* slot lent out by get (-1: none) */
  int eos_seen;
  int cur_p;                    /* PULL: producer of the unit in progress */
  uint64_t cur_u;               /* PULL: its unit number */
  uint64_t g_unit;              /* PULL: unit of the last get's message */
  int g_first, g_last, g_valid;

  uint64_t records_out, bytes_out, messages_out;
  uint64_t records_in, bytes_in, messages_in, credit_stalls;
  double put_wait, get_wait;
};

/* ------------------------------------------------------------ helpers */

/* splitmix64: the next pseudo-random number from *s. */
static uint64_t river_dq_rand(uint64_t *s)
{
  return river__mix64(*s += RIVER_MIX64_STEP);
}

static unsigned char *river_dq_sslot(const river_dq *q, int s)
{
  return q->sbuf + (size_t)s * q->stride;
}

static unsigned char *river_dq_rslot(const river_dq *q, int k)
{
  return q->rbuf + (size_t)k * q->stride;
}

/* Credits consumer c has free, by the last read of the window. */
static uint64_t river_dq_free_at(const river_dq *q, int c)
{
  return (uint64_t)q->credits - (q->sent[c] - q->returned[c]);
}

/* ----------------------------------------------------------- producer */

/* Refresh q->returned from this producer's window (atomic reads). */
static int river_dq_read_credits(river_dq *q)
{
  if (MPI_Get_accumulate(q->zeros, q->ncons, MPI_UINT64_T, q->returned,
                         q->ncons, MPI_UINT64_T, q->rank, 0, q->ncons,
                         MPI_UINT64_T, MPI_NO_OP, q->win) != MPI_SUCCESS
      || MPI_Win_flush(q->rank, q->win) != MPI_SUCCESS) {
    river__error("dq: reading the credit window failed");
    return RIVER_EMPI;
  }
  return RIVER_SUCCESS;
}

/* PULL: learn who claimed the open unit (q->owner), if anyone has. */
static int river_dq_read_owner(river_dq *q)
{
  uint64_t zero = 0, v = 0, back;
  MPI_Aint w;

  if (q->owner >= 0 || !q->unit_open)
    return RIVER_SUCCESS;
  w = RIVER_DQ_W_OWNER(q, q->nunits - 1);
  if (MPI_Get_accumulate(&zero, 1, MPI_UINT64_T, &v, 1, MPI_UINT64_T,
                         q->rank, w, 1, MPI_UINT64_T, MPI_NO_OP, q->win)
          != MPI_SUCCESS
      || MPI_Win_flush(q->rank, q->win) != MPI_SUCCESS)
    goto fail;
  if (v == 0)
    return RIVER_SUCCESS;
  if (v > (uint64_t)q->ncons) {
    river__error("dq: unit %llu has a bad claim (%llu)",
                 (unsigned long long)(q->nunits - 1), (unsigned long long)v);
    return RIVER_ECORRUPT;
  }
  /* Clear the word for unit nunits - 1 + ncons + 1, whose claim cannot
   * come before this producer opens its next unit (see above). */
  back = (uint64_t)0 - v;
  if (MPI_Accumulate(&back, 1, MPI_UINT64_T, q->rank, w, 1, MPI_UINT64_T,
                     MPI_SUM, q->win) != MPI_SUCCESS
      || MPI_Win_flush(q->rank, q->win) != MPI_SUCCESS)
    goto fail;
  q->owner = (int)(v - 1);
  return RIVER_SUCCESS;
fail:
  river__error("dq: reading the claim window failed");
  return RIVER_EMPI;
}

/* PULL: open a new unit: announce it (an atomic add on this producer's
 * own window). */
static int river_dq_open_unit(river_dq *q)
{
  uint64_t one = 1;

  if (MPI_Accumulate(&one, 1, MPI_UINT64_T, q->rank, RIVER_DQ_W_ANN(q), 1,
                        MPI_UINT64_T, MPI_SUM, q->win) != MPI_SUCCESS
      || MPI_Win_flush(q->rank, q->win) != MPI_SUCCESS) {
    river__error("dq: announcing a unit failed");
    return RIVER_EMPI;
  }
  q->nunits++;
  q->unit_open = 1;
  q->owner = -1;
  q->unit_first = 1;
  q->unit_last = 0;
  return RIVER_SUCCESS;
}

/* PULL: RIVER_EAGAIN until the open unit is claimed. */
static int river_dq_step_claim(river_dq *q, int b)
{
  int rc;

  (void)b;
  if ((rc = river_dq_read_owner(q)) != RIVER_SUCCESS)
    return rc;
  return q->owner >= 0 ? RIVER_SUCCESS : RIVER_EAGAIN;
}

/* Retire completed sends: their slots become free again. */
static int river_dq_send_progress(river_dq *q)
{
  int i, n = 0, data = q->nslots * q->fanout;

  if (q->sactive == 0)
    return RIVER_SUCCESS;
  if (MPI_Testsome(q->nsreq, q->sreq, &n, q->sidx, MPI_STATUSES_IGNORE)
      != MPI_SUCCESS)
    return RIVER_EMPI;
  if (n == MPI_UNDEFINED)
    n = 0;
  for (i = 0; i < n; i++) {
    if (q->sidx[i] < data)
      q->slot_refs[q->sidx[i] / q->fanout]--;
    q->sactive--;
  }
  return RIVER_SUCCESS;
}

static int river_dq_free_slots(const river_dq *q)
{
  int s, n = 0;

  for (s = 0; s < q->nslots; s++)
    n += q->slot_refs[s] == 0 && !q->slot_fill[s];
  return n;
}

/* Pick the consumer of fill buffer b's message by policy, among those
 * with a free credit (*c = -1: all of them, for BROADCAST). RIVER_EAGAIN
 * if the policy's choice has no credit even after re-reading the window. */
static int river_dq_choose(river_dq *q, int b, int *c)
{
  int pass, i, n, k, rc;

  for (pass = 0; pass < 2; pass++) {
    if (pass == 1 && (rc = river_dq_read_credits(q)) != RIVER_SUCCESS)
      return rc;
    switch (q->policy) {
    case RIVER_DQ_PUSH: {
      /* The least loaded: among the consumers with the most free
       * credits, one at random. Unless some consumer is known to have
       * every credit free, read the window first (a local atomic): a
       * stale view would keep queueing at slow consumers. */
      uint64_t most = 0, f;
      for (i = 0; i < q->ncons; i++)
        if ((f = river_dq_free_at(q, i)) > most)
          most = f;
      if (pass == 0 && most < (uint64_t)q->credits)
        continue;
      if (most == 0)
        break;
      for (i = 0, n = 0; i < q->ncons; i++)
        n += river_dq_free_at(q, i) == most;
      k = (int)(((river_dq_rand(&q->rng) >> 32) * (uint64_t)n) >> 32);
      for (i = 0; i < q->ncons; i++)
        if (river_dq_free_at(q, i) == most && k-- == 0) {
          *c = i;
          return RIVER_SUCCESS;
        }
      break;
    }
    case RIVER_DQ_PULL:
      if ((rc = river_dq_read_owner(q)) != RIVER_SUCCESS)
        return rc;
      if (q->owner >= 0 && river_dq_free_at(q, q->owner) > 0) {
        *c = q->owner;
        return RIVER_SUCCESS;
      }
      break;
    case RIVER_DQ_BROADCAST:
      for (i = 0; i < q->ncons && river_dq_free_at(q, i) > 0; i++)
        ;
      if (i == q->ncons) {
        *c = -1;
        return RIVER_SUCCESS;
      }
      break;
    default:
      k = q->policy == RIVER_DQ_STATIC ? q->rr
          : q->policy == RIVER_DQ_EXCHANGE ? b : q->pidx;
      if (river_dq_free_at(q, k) > 0) {
        *c = k;
        return RIVER_SUCCESS;
      }
      break;
    }
  }
  return RIVER_EAGAIN;
}

/* Isend len bytes at buf to consumer c with tag, in request place req. */
static int river_dq_isend(river_dq *q, const void *buf, size_t len, int c,
                          int tag, int req)
{
  if (MPI_Isend(buf, (int)len, MPI_BYTE, q->cons_rank[c], tag, q->comm,
                &q->sreq[req]) != MPI_SUCCESS) {
    river__error("dq: MPI_Isend to rank %d failed", q->cons_rank[c]);
    return RIVER_EMPI;
  }
  q->sactive++;
  return RIVER_SUCCESS;
}

/* The fill buffer b is sent; it stops being a fill buffer. */
static void river_dq_fill_done(river_dq *q, int b)
{
  q->slot_fill[q->fill[b]] = 0;
  q->fill[b] = -1;
  q->fill_n[b] = 0;
  q->stalled[b] = 0;
}

/* Send fill buffer b as a DATA message if its consumer has a credit;
 * RIVER_EAGAIN (and a counted stall) if not. Never waits. */
static int river_dq_step_send(river_dq *q, int b)
{
  struct river_dq_hdr h;
  int s = q->fill[b], c, j, lo, hi, rc;
  unsigned char *buf;
  size_t len;

  if (s < 0 || q->fill_n[b] == 0)
    return RIVER_SUCCESS;
  rc = river_dq_choose(q, b, &c);
  if (rc == RIVER_EAGAIN && !q->stalled[b]) {
    q->credit_stalls++;
    q->stalled[b] = 1;
  }
  if (rc != RIVER_SUCCESS)
    return rc;
  lo = c < 0 ? 0 : c;
  hi = c < 0 ? q->ncons : c + 1;
  buf = river_dq_sslot(q, s);
  h.kind = RIVER_DQ_KIND_DATA;
  if (q->policy == RIVER_DQ_PULL)
    h.kind |= (q->unit_first ? RIVER_DQ_FIRST : 0u)
              | (q->unit_last ? RIVER_DQ_LAST : 0u);
  h.producer = (uint32_t)q->pidx;
  h.seq = q->sent[lo];   /* BROADCAST: every consumer has seen as many */
  h.nrecords = q->fill_n[b];
  memcpy(buf, &h, sizeof h);
  len = RIVER_DQ_HDR + q->fill_n[b] * q->record_size;
  for (j = 0, c = lo; c < hi; c++, j++) {
    rc = river_dq_isend(q, buf, len, c, RIVER_DQ_TAG_DATA, s * q->fanout + j);
    if (rc != RIVER_SUCCESS)
      return rc;
    q->slot_refs[s]++;
    q->sent[c]++;
    q->msgs_to[c]++;
    q->messages_out++;
  }
  if (q->policy == RIVER_DQ_STATIC)
    q->rr = (q->rr + 1) % q->ncons;
  q->unit_first = 0;
  river_dq_fill_done(q, b);
  return RIVER_SUCCESS;
}

/* Give fill buffer b a slot if it has none; RIVER_EAGAIN while every
 * slot is still being sent. */
static int river_dq_step_slot(river_dq *q, int b)
{
  int s, pass, rc;

  if (q->fill[b] >= 0)
    return RIVER_SUCCESS;
  for (pass = 0; pass < 2; pass++) {
    if (pass == 1 && (rc = river_dq_send_progress(q)) != RIVER_SUCCESS)
      return rc;
    for (s = 0; s < q->nslots; s++)
      if (q->slot_refs[s] == 0 && !q->slot_fill[s]) {
        q->slot_fill[s] = 1;
        q->fill[b] = s;
        q->fill_n[b] = 0;
        return RIVER_SUCCESS;
      }
  }
  return RIVER_EAGAIN;
}

/* RIVER_EAGAIN while sends are in flight. */
static int river_dq_step_drain(river_dq *q, int b)
{
  int rc = river_dq_send_progress(q);

  (void)b;
  if (rc != RIVER_SUCCESS)
    return rc;
  return q->sactive ? RIVER_EAGAIN : RIVER_SUCCESS;
}

typedef int (*river_dq_step)(river_dq *q, int b);

/* Repeat step until it is done, progressing sends and backing off in
 * between; the time it waited counts as put wait. */
static int river_dq_wait_step(river_dq *q, river_dq_step step, int b)
{
  long ns = RIVER_BACKOFF_START;
  double t0 = 0.0;
  int rc;

  while ((rc = step(q, b)) == RIVER_EAGAIN) {
    if (t0 == 0.0)
      t0 = river_wtime();
    if ((rc = river_dq_send_progress(q)) != RIVER_SUCCESS)
      break;
    river__backoff(&ns);
  }
  if (t0 != 0.0)
    q->put_wait += river_wtime() - t0;
  return rc;
}

/* EXCHANGE: check every record's consumer and count them in q->count.
 * RIVER_EINVAL (logged) for an index out of range. */
static int river_dq_count(river_dq *q, const unsigned char *r, size_t n)
{
  size_t i;
  int c;

  memset(q->count, 0, (size_t)q->ncons * sizeof *q->count);
  for (i = 0; i < n; i++) {
    c = q->partition(r + i * q->record_size, q->ncons, q->partition_ctx);
    if (c < 0 || c >= q->ncons) {
      river__error("dq: the partition function gave consumer %d for record "
                   "%zu of this put (must be 0..%d); no record was taken",
                   c, i, q->ncons - 1);
      return RIVER_EINVAL;
    }
    q->count[c]++;
  }
  return RIVER_SUCCESS;
}

/* Messages that adding k > 0 records to fill buffer b completes and must
 * send (the last full one may stay in its buffer); adds to *slots the
 * slots that takes. */
static uint64_t river_dq_need(const river_dq *q, int b, size_t k,
                              uint64_t *slots)
{
  uint64_t m = ((uint64_t)q->fill_n[b] + k - 1) / q->per_msg;

  *slots += m + (q->fill[b] < 0);
  return m;
}

/* Whether n records (EXCHANGE: as counted in q->count) can be taken
 * without waiting, by the credits in q->returned and the free slots:
 * 1 yes, 0 short of credits, -1 short of slots. */
static int river_dq_fits(river_dq *q, size_t n)
{
  uint64_t m, sum = 0, lo = UINT64_MAX, slots = 0;
  int b, c;

  for (c = 0; c < q->ncons; c++) {
    q->avail[c] = river_dq_free_at(q, c);
    sum += q->avail[c];
    lo = q->avail[c] < lo ? q->avail[c] : lo;
  }
  if (q->policy == RIVER_DQ_EXCHANGE) {
    for (b = 0; b < q->nfill; b++) {
      if (q->count[b] == 0)
        continue;
      if (river_dq_need(q, b, q->count[b], &slots) > q->avail[b])
        return 0;
    }
    return slots <= (uint64_t)river_dq_free_slots(q) ? 1 : -1;
  }
  m = river_dq_need(q, 0, n, &slots);
  if (slots > (uint64_t)river_dq_free_slots(q))
    return -1;
  switch (q->policy) {
  case RIVER_DQ_PULL: /* only to the open unit's claimer, once known */
    if (river_dq_read_owner(q) != RIVER_SUCCESS || q->owner < 0)
      return m == 0;
    return m <= q->avail[q->owner];
  case RIVER_DQ_PUSH:
    return m <= sum;
  case RIVER_DQ_BROADCAST:
    return m <= lo;
  case RIVER_DQ_ONE_TO_ONE:
    return m <= q->avail[q->pidx];
  default: /* STATIC: message j goes to rr + j; m <= sum keeps this short */
    if (m > sum)
      return 0;
    for (c = q->rr; m > 0; m--, c = (c + 1) % q->ncons)
      if (q->avail[c]-- == 0)
        return 0;
    return 1;
  }
}

/* RIVER_ENOBUFS (logged) if n records could never be taken at once, not
 * even with every credit free: they would complete more messages for one
 * consumer than it has credits (PUSH, STATIC: than all have). */
static int river_dq_ever_fits(river_dq *q, size_t n)
{
  uint64_t m = 0, need, slots = 0, cap = (uint64_t)q->credits;
  int b;

  if (q->policy == RIVER_DQ_EXCHANGE) {
    for (b = 0; b < q->nfill; b++)
      if (q->count[b] > 0
          && (need = river_dq_need(q, b, q->count[b], &slots)) > m)
        m = need;
  } else {
    if (q->policy == RIVER_DQ_PUSH || q->policy == RIVER_DQ_STATIC)
      cap *= (uint64_t)q->ncons;
    m = river_dq_need(q, 0, n, &slots);
  }
  if (m <= cap)
    return RIVER_SUCCESS;
  river__error("dq: try_put of %zu records would need %llu messages to go "
               "at once but credits allow %llu; put fewer at a time", n,
               (unsigned long long)m, (unsigned long long)cap);
  return RIVER_ENOBUFS;
}

/* try_put's test: RIVER_SUCCESS if the records fit now, else EAGAIN (and,
 * if credits are short, a stall counted for the buffers that wait). */
static int river_dq_plan(river_dq *q, size_t n)
{
  int b, rc, fit;

  if ((rc = river_dq_ever_fits(q, n)) != RIVER_SUCCESS)
    return rc;
  if (river_dq_fits(q, n) == 1)
    return RIVER_SUCCESS;
  if ((rc = river_dq_read_credits(q)) != RIVER_SUCCESS
      || (rc = river_dq_send_progress(q)) != RIVER_SUCCESS)
    return rc;
  if ((fit = river_dq_fits(q, n)) == 1)
    return RIVER_SUCCESS;
  for (b = 0; fit == 0 && b < q->nfill; b++)
    if ((q->policy != RIVER_DQ_EXCHANGE || q->count[b] > 0)
        && !q->stalled[b]) {
      q->credit_stalls++;
      q->stalled[b] = 1;
    }
  return RIVER_EAGAIN;
}

/* Copy the records into fill buffers, sending (and waiting for) each
 * message that fills while more records follow. */
static int river_dq_take(river_dq *q, const unsigned char *r, size_t n)
{
  size_t i = 0, k, rs = q->record_size;
  int b = 0, rc;

  if (q->policy == RIVER_DQ_PULL && n > 0 && !q->unit_open
      && (rc = river_dq_open_unit(q)) != RIVER_SUCCESS)
    return rc;
  while (i < n) {
    if (q->policy == RIVER_DQ_EXCHANGE) {
      b = q->partition(r + i * rs, q->ncons, q->partition_ctx);
      if (b < 0 || b >= q->ncons) {
        river__error("dq: the partition function is not a function of the "
                     "record: it gave %d for a record it first placed in "
                     "range", b);
        return RIVER_EINVAL;
      }
    }
    if (q->fill_n[b] == q->per_msg
        && (rc = river_dq_wait_step(q, river_dq_step_send, b)) != RIVER_SUCCESS)
      return rc;
    if ((rc = river_dq_wait_step(q, river_dq_step_slot, b)) != RIVER_SUCCESS)
      return rc;
    k = q->policy == RIVER_DQ_EXCHANGE ? 1 : q->per_msg - q->fill_n[b];
    k = k < n - i ? k : n - i;
    memcpy(river_dq_sslot(q, q->fill[b]) + RIVER_DQ_HDR
           + q->fill_n[b] * rs, r + i * rs, k * rs);
    q->fill_n[b] += k;
    i += k;
  }
  q->records_out += n;
  q->bytes_out += n * rs;
  return RIVER_SUCCESS;
}

/* Send every full fill buffer: waiting for credits (block) or only those
 * that have one now. */
static int river_dq_send_full(river_dq *q, int block)
{
  int b, rc;

  /* PULL: a full message waits for the next record or the unit's end,
   * which tells whether it is the unit's last. */
  if (q->policy == RIVER_DQ_PULL)
    return RIVER_SUCCESS;
  for (b = 0; b < q->nfill; b++) {
    if (q->fill[b] < 0 || q->fill_n[b] < q->per_msg)
      continue;
    rc = block ? river_dq_wait_step(q, river_dq_step_send, b)
               : river_dq_step_send(q, b);
    if (rc != RIVER_SUCCESS && rc != RIVER_EAGAIN)
      return rc;
  }
  return RIVER_SUCCESS;
}

static int river_dq_put_common(river_dq *q, const void *records,
                               size_t nrecords, int block)
{
  int rc;

  if (q == NULL || (records == NULL && nrecords > 0)
      || !(q->role & RIVER_DQ_PRODUCER))
    return RIVER_EINVAL;
  if (q->closed)
    return RIVER_ESTATE;
  if (q->reserved) {
    river__error("dq put: a reservation is open (commit it first)");
    return RIVER_ESTATE;
  }
  if (nrecords > SIZE_MAX / q->record_size)
    return RIVER_EINVAL;
  if ((rc = river_dq_send_progress(q)) != RIVER_SUCCESS)
    return rc;
  if (nrecords == 0)
    return RIVER_SUCCESS;
  if (q->policy == RIVER_DQ_EXCHANGE
      && (rc = river_dq_count(q, records, nrecords)) != RIVER_SUCCESS)
    return rc;
  if (!block) {
    if ((rc = river_dq_send_full(q, 0)) != RIVER_SUCCESS
        || (rc = river_dq_plan(q, nrecords)) != RIVER_SUCCESS)
      return rc;
  }
  /* The plan said nothing below waits: take() cannot block for try_put
   * (were it ever wrong, it would wait briefly, never take a part). */
  if ((rc = river_dq_take(q, records, nrecords)) != RIVER_SUCCESS)
    return rc;
  return river_dq_send_full(q, block);
}

int river_dq_reserve(river_dq *q, void **buf, size_t *max)
{
  int rc;

  if (q == NULL || buf == NULL || max == NULL
      || !(q->role & RIVER_DQ_PRODUCER))
    return RIVER_EINVAL;
  if (q->policy == RIVER_DQ_EXCHANGE || q->policy == RIVER_DQ_PULL) {
    river__error("dq reserve: not for %s queues (records are placed %s): "
                 "use river_dq_put", q->policy == RIVER_DQ_PULL ? "PULL"
                                                                : "EXCHANGE",
                 q->policy == RIVER_DQ_PULL ? "by units" : "one by one");
    return RIVER_EINVAL;
  }
  if (q->closed || q->reserved) {
    river__error("dq reserve: %s", q->closed ? "the queue is closed"
                 : "a reservation is already open (commit it first)");
    return RIVER_ESTATE;
  }
  if ((rc = river_dq_send_progress(q)) != RIVER_SUCCESS)
    return rc;
  if (q->fill_n[0] == q->per_msg
      && (rc = river_dq_wait_step(q, river_dq_step_send, 0)) != RIVER_SUCCESS)
    return rc;
  if ((rc = river_dq_wait_step(q, river_dq_step_slot, 0)) != RIVER_SUCCESS)
    return rc;
  *buf = river_dq_sslot(q, q->fill[0]) + RIVER_DQ_HDR
         + q->fill_n[0] * q->record_size;
  *max = q->reserved = q->per_msg - q->fill_n[0];
  return RIVER_SUCCESS;
}

int river_dq_commit(river_dq *q, size_t n)
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
  return river_dq_send_full(q, 1);
}

int river_dq_put(river_dq *q, const void *records, size_t nrecords)
{
  return river_dq_put_common(q, records, nrecords, 1);
}

int river_dq_try_put(river_dq *q, const void *records, size_t nrecords)
{
  return river_dq_put_common(q, records, nrecords, 0);
}

/* The consumer that gets fill buffer b's records with the EOS: by policy,
 * preferring (PUSH) one with a free credit; no credit is taken. */
static int river_dq_final_target(river_dq *q, int b)
{
  int c;

  switch (q->policy) {
  case RIVER_DQ_PUSH:
    if (river_dq_choose(q, b, &c) == RIVER_SUCCESS)
      return c;
    return (int)(((river_dq_rand(&q->rng) >> 32) * (uint64_t)q->ncons) >> 32);
  case RIVER_DQ_STATIC:
    return q->rr;
  case RIVER_DQ_EXCHANGE:
    return b;
  case RIVER_DQ_ONE_TO_ONE:
    return q->pidx;
  case RIVER_DQ_PULL:
    return q->owner; /* close waited for the claim */
  default:
    return -1; /* BROADCAST: every consumer */
  }
}

/* Send fill buffer b's records, if any, with the EOS to its consumer(s):
 * no credit needed. */
static int river_dq_send_final(river_dq *q, int b)
{
  int s = q->fill[b], t, c, hi, rc;
  size_t n = s < 0 ? 0 : q->fill_n[b];
  unsigned char *buf;
  struct river_dq_hdr h;

  if (n == 0)
    return RIVER_SUCCESS;
  t = river_dq_final_target(q, b);
  hi = t < 0 ? q->ncons : t + 1;
  t = t < 0 ? 0 : t;
  h = q->eos_hdr[t];   /* BROADCAST: the same seq at every consumer */
  h.nrecords = n;
  if (q->policy == RIVER_DQ_PULL)
    h.kind |= RIVER_DQ_LAST | (q->unit_first ? RIVER_DQ_FIRST : 0u);
  buf = river_dq_sslot(q, s);
  memcpy(buf, &h, sizeof h);
  for (c = t; c < hi; c++) {
    rc = river_dq_isend(q, buf, RIVER_DQ_HDR + n * q->record_size, c,
                        RIVER_DQ_TAG_EOS, q->nslots * q->fanout + c);
    if (rc != RIVER_SUCCESS)
      return rc;
    q->eos_hdr[c].nrecords = n; /* c's EOS is on its way */
    q->msgs_to[c]++;
    q->messages_out++;
  }
  return RIVER_SUCCESS;
}

int river_dq_close(river_dq *q)
{
  int b, c, rc;

  if (q == NULL || !(q->role & RIVER_DQ_PRODUCER))
    return RIVER_EINVAL;
  if (q->closed)
    return RIVER_ESTATE;
  q->reserved = 0;   /* an uncommitted reservation is dropped */
  if ((rc = river_dq_send_progress(q)) != RIVER_SUCCESS)
    return rc;
  /* PULL: the open unit ends here; its last message goes with the EOS to
   * its claimer, so wait for the claim (not for a credit). */
  if (q->policy == RIVER_DQ_PULL && q->unit_open
      && (rc = river_dq_wait_step(q, river_dq_step_claim, 0)) != RIVER_SUCCESS)
    return rc;
  for (c = 0; c < q->ncons; c++) {
    q->eos_hdr[c].kind = RIVER_DQ_KIND_EOS;
    q->eos_hdr[c].producer = (uint32_t)q->pidx;
    q->eos_hdr[c].seq = q->sent[c];
    q->eos_hdr[c].nrecords = 0;
  }
  for (b = 0; b < q->nfill; b++)
    if ((rc = river_dq_send_final(q, b)) != RIVER_SUCCESS)
      return rc;
  for (c = 0; c < q->ncons; c++) {
    if (q->eos_hdr[c].nrecords > 0)
      continue;
    rc = river_dq_isend(q, &q->eos_hdr[c], RIVER_DQ_HDR, c, RIVER_DQ_TAG_EOS,
                        q->nslots * q->fanout + c);
    if (rc != RIVER_SUCCESS)
      return rc;
  }
  /* The fill slots stay marked busy: nothing is put after close. */
  q->closed = 1;
  q->unit_open = 0;
  return river_dq_wait_step(q, river_dq_step_drain, 0);
}

int river_dq_end_unit(river_dq *q)
{
  int rc;

  if (q == NULL || !(q->role & RIVER_DQ_PRODUCER)
      || q->policy != RIVER_DQ_PULL)
    return RIVER_EINVAL;
  if (q->closed)
    return RIVER_ESTATE;
  if ((rc = river_dq_send_progress(q)) != RIVER_SUCCESS)
    return rc;
  if (!q->unit_open)
    return RIVER_SUCCESS; /* empty: no unit */
  /* An open unit's last records wait in the fill buffer (send_full keeps
   * a full one back): send them flagged last, once claimed and credited. */
  q->unit_last = 1;
  rc = river_dq_wait_step(q, river_dq_step_send, 0);
  q->unit_last = 0;
  if (rc != RIVER_SUCCESS)
    return rc;
  q->unit_open = 0;
  q->owner = -1;
  return RIVER_SUCCESS;
}

/* ----------------------------------------------------------- consumer */

static int river_dq_post(river_dq *q, int k)
{
  int src = k < q->nrslots ? MPI_ANY_SOURCE : q->prod_rank[k - q->nrslots];
  int tag = k < q->nrslots ? RIVER_DQ_TAG_DATA : RIVER_DQ_TAG_EOS;

  if (MPI_Irecv(river_dq_rslot(q, k), (int)q->message_size, MPI_BYTE, src,
                tag, q->comm, &q->rreq[k]) != MPI_SUCCESS) {
    river__error("dq: MPI_Irecv failed");
    return RIVER_EMPI;
  }
  return RIVER_SUCCESS;
}

/* File the message that completed in receive slot k (status st): a DATA
 * message into its producer's ring, an EOS into eos_seq. RIVER_ECORRUPT
 * (logged) for a message River did not send. */
static int river_dq_arrived(river_dq *q, int k, const MPI_Status *st)
{
  struct river_dq_hdr h;
  int bytes = 0, eos = k >= q->nrslots;
  uint64_t p;

  memcpy(&h, river_dq_rslot(q, k), sizeof h);
  MPI_Get_count(st, MPI_BYTE, &bytes);
  p = h.producer;
  if (bytes < (int)RIVER_DQ_HDR || p >= (uint64_t)q->nprod
      || q->prod_rank[p] != st->MPI_SOURCE
      || (h.kind & RIVER_DQ_KIND_MASK)
         != (eos ? RIVER_DQ_KIND_EOS : RIVER_DQ_KIND_DATA)
      || (h.kind & ~(RIVER_DQ_KIND_MASK | RIVER_DQ_FIRST | RIVER_DQ_LAST))
      || (q->policy != RIVER_DQ_PULL && h.kind > RIVER_DQ_KIND_MASK)
      || (eos && p != (uint64_t)(k - q->nrslots))
      || h.nrecords > q->per_msg || (!eos && h.nrecords == 0)
      || (uint64_t)bytes != RIVER_DQ_HDR + h.nrecords * q->record_size
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
      river_dq_post(q, k); /* keep the slot in use */
    return RIVER_ECORRUPT;
  }
  q->arrived[p]++;
  if (eos) {
    q->eos_seq[p] = h.seq;
    q->eos_full[p] = h.nrecords > 0;
  } else {
    q->ring[p * q->credits + h.seq % q->credits] = k;
  }
  return RIVER_SUCCESS;
}

/* Take in every receive that has completed. */
static int river_dq_recv_progress(river_dq *q)
{
  int i, n = 0, rc = RIVER_SUCCESS, r;

  if (MPI_Testsome(q->nrreq, q->rreq, &n, q->ridx, q->rstat) != MPI_SUCCESS)
    return RIVER_EMPI;
  if (n == MPI_UNDEFINED)
    n = 0;
  for (i = 0; i < n; i++)
    if ((r = river_dq_arrived(q, q->ridx[i], &q->rstat[i])) != RIVER_SUCCESS)
      rc = r;
  return rc;
}

/* Producer p's next message in order: its receive slot, or -1. */
static int river_dq_next_slot(const river_dq *q, int p)
{
  int k = q->ring[p * q->credits + q->next[p] % q->credits];

  if (k >= 0)
    return k;
  if (q->eos_full[p] && q->next[p] == q->eos_seq[p])
    return q->nrslots + p;
  return -1;
}

static int river_dq_all_done(const river_dq *q)
{
  int p;

  for (p = 0; p < q->nprod; p++)
    if (q->eos_seq[p] == RIVER_DQ_UNKNOWN || q->next[p] != q->eos_seq[p]
        || q->eos_full[p])
      return 0;
  return 1;
}

/* Give back the message lent out by get: re-post its receive, then
 * return the credit (an EOS's records took none). */
static int river_dq_release_held(river_dq *q)
{
  uint64_t one = 1;
  int k = q->held, r;

  if (k < 0)
    return RIVER_SUCCESS;
  q->held = -1;
  if (k >= q->nrslots)
    return RIVER_SUCCESS;
  r = q->prod_rank[q->held_p];
  if (river_dq_post(q, k) != RIVER_SUCCESS)
    return RIVER_EMPI;
  if (MPI_Accumulate(&one, 1, MPI_UINT64_T, r, (MPI_Aint)q->cidx, 1,
                     MPI_UINT64_T, MPI_SUM, q->win) != MPI_SUCCESS
      || MPI_Win_flush(r, q->win) != MPI_SUCCESS) {
    river__error("dq: returning a credit to rank %d failed", r);
    return RIVER_EMPI;
  }
  return RIVER_SUCCESS;
}

/* Lend out producer p's next message, in receive slot k; *hp gets its
 * header. */
static void river_dq_deliver(river_dq *q, int p, int k,
                             struct river_dq_hdr *hp, const void **records,
                             size_t *nrecords, int *from)
{
  struct river_dq_hdr h;

  memcpy(&h, river_dq_rslot(q, k), sizeof h);
  *hp = h;
  if (k < q->nrslots) {
    q->ring[p * q->credits + q->next[p] % q->credits] = -1;
    q->next[p]++;
  } else {
    q->eos_full[p] = 0;
  }
  q->held = k;
  q->held_p = p;
  q->last_p = p;
  q->records_in += h.nrecords;
  q->bytes_in += h.nrecords * q->record_size;
  q->messages_in++;
  q->msgs_from[p]++;
  *records = river_dq_rslot(q, k) + RIVER_DQ_HDR;
  *nrecords = (size_t)h.nrecords;
  if (from != NULL)
    *from = p;
}

/* PULL, idle consumer: try to claim the next unclaimed unit of some
 * producer that has not closed (producers take turns, starting after the
 * last one): read its claimed and announced counters; if a unit is
 * unclaimed, take the next unit number with MPI_Fetch_and_op(+1) on
 * claimed, then tell the producer by adding this consumer's index + 1 to
 * that unit's owner word. Sets q->cur_p. (Consumers racing for the last
 * announced unit may take the number of a unit not announced yet: see
 * the protocol comment at the top.) */
static int river_dq_claim(river_dq *q)
{
  uint64_t zero[2] = {0, 0}, v[2], one = 1, want, got;
  int i, p, r;

  for (i = 1; i <= q->nprod; i++) {
    p = (q->last_p + i) % q->nprod;
    if (q->eos_seq[p] != RIVER_DQ_UNKNOWN)
      continue; /* closed: close waited for its last unit's claim */
    r = q->prod_rank[p];
    if (MPI_Get_accumulate(zero, 2, MPI_UINT64_T, v, 2, MPI_UINT64_T, r,
                           RIVER_DQ_W_CLAIM(q), 2, MPI_UINT64_T, MPI_NO_OP,
                           q->win) != MPI_SUCCESS
        || MPI_Win_flush(r, q->win) != MPI_SUCCESS)
      goto fail;
    if (v[0] >= v[1])
      continue;
    if (MPI_Fetch_and_op(&one, &got, MPI_UINT64_T, r, RIVER_DQ_W_CLAIM(q),
                         MPI_SUM, q->win) != MPI_SUCCESS
        || MPI_Win_flush(r, q->win) != MPI_SUCCESS)
      goto fail;
    want = (uint64_t)q->cidx + 1;
    if (MPI_Accumulate(&want, 1, MPI_UINT64_T, r, RIVER_DQ_W_OWNER(q, got),
                       1, MPI_UINT64_T, MPI_SUM, q->win) != MPI_SUCCESS
        || MPI_Win_flush(r, q->win) != MPI_SUCCESS)
      goto fail;
    q->cur_p = p;
    q->cur_u = got;
    q->last_p = p;
    return RIVER_SUCCESS;
  }
  return RIVER_SUCCESS;
fail:
  river__error("dq: claiming a unit at rank %d failed", q->prod_rank[p]);
  return RIVER_EMPI;
}

/* PULL: one look. An idle consumer claims a unit; one with a unit in
 * progress takes only that unit's producer's next message. */
static int river_dq_step_pull(river_dq *q, const void **records,
                              size_t *nrecords, int *from)
{
  struct river_dq_hdr h;
  int k, rc;

  if ((rc = river_dq_recv_progress(q)) != RIVER_SUCCESS)
    return rc;
  /* A unit number the producer closed without making (a lost race): the
   * EOS came and every message before it was delivered. */
  if (q->cur_p >= 0 && q->eos_seq[q->cur_p] != RIVER_DQ_UNKNOWN
      && q->next[q->cur_p] == q->eos_seq[q->cur_p] && !q->eos_full[q->cur_p])
    q->cur_p = -1;
  if (q->cur_p < 0 && (rc = river_dq_claim(q)) != RIVER_SUCCESS)
    return rc;
  if (q->cur_p >= 0 && (k = river_dq_next_slot(q, q->cur_p)) >= 0) {
    river_dq_deliver(q, q->cur_p, k, &h, records, nrecords, from);
    q->g_unit = ((uint64_t)q->cur_p << RIVER_DQ_UNIT_SHIFT) | q->cur_u;
    q->g_first = (h.kind & RIVER_DQ_FIRST) != 0;
    q->g_last = (h.kind & RIVER_DQ_LAST) != 0;
    q->g_valid = 1;
    if (q->g_last)
      q->cur_p = -1;
    return RIVER_SUCCESS;
  }
  if (q->cur_p < 0 && river_dq_all_done(q)) {
    q->eos_seen = 1;
    return RIVER_EOS;
  }
  return RIVER_EAGAIN;
}

/* One look for a message: RIVER_SUCCESS (delivered), RIVER_EOS or
 * RIVER_EAGAIN. Producers take turns, starting after the last one. */
static int river_dq_step_get(river_dq *q, const void **records,
                             size_t *nrecords, int *from)
{
  struct river_dq_hdr h;
  int i, p, k, rc;

  if (q->policy == RIVER_DQ_PULL)
    return river_dq_step_pull(q, records, nrecords, from);
  if ((rc = river_dq_recv_progress(q)) != RIVER_SUCCESS)
    return rc;
  for (i = 1; i <= q->nprod; i++) {
    p = (q->last_p + i) % q->nprod;
    if ((k = river_dq_next_slot(q, p)) < 0)
      continue;
    river_dq_deliver(q, p, k, &h, records, nrecords, from);
    return RIVER_SUCCESS;
  }
  if (river_dq_all_done(q)) {
    q->eos_seen = 1;
    return RIVER_EOS;
  }
  return RIVER_EAGAIN;
}

static int river_dq_get_common(river_dq *q, const void **records,
                               size_t *nrecords, int *from, int block)
{
  long ns = RIVER_BACKOFF_START;
  double t0 = 0.0;
  int rc;

  if (q == NULL || records == NULL || nrecords == NULL
      || !(q->role & RIVER_DQ_CONSUMER))
    return RIVER_EINVAL;
  if ((rc = river_dq_release_held(q)) != RIVER_SUCCESS)
    return rc;
  if (q->eos_seen)
    return RIVER_EOS;
  while ((rc = river_dq_step_get(q, records, nrecords, from)) == RIVER_EAGAIN
         && block) {
    if (t0 == 0.0)
      t0 = river_wtime();
    river__backoff(&ns);
  }
  if (t0 != 0.0)
    q->get_wait += river_wtime() - t0;
  return rc;
}

int river_dq_get(river_dq *q, const void **records, size_t *nrecords,
                 int *from)
{
  return river_dq_get_common(q, records, nrecords, from, 1);
}

int river_dq_try_get(river_dq *q, const void **records, size_t *nrecords,
                     int *from)
{
  return river_dq_get_common(q, records, nrecords, from, 0);
}

int river_dq_release(river_dq *q)
{
  if (q == NULL || !(q->role & RIVER_DQ_CONSUMER))
    return RIVER_EINVAL;
  return river_dq_release_held(q);
}

int river_dq_unit(const river_dq *q, uint64_t *unit, int *first, int *last)
{
  if (q == NULL || unit == NULL || first == NULL || last == NULL
      || !(q->role & RIVER_DQ_CONSUMER) || q->policy != RIVER_DQ_PULL)
    return RIVER_EINVAL;
  if (!q->g_valid)
    return RIVER_ESTATE;
  *unit = q->g_unit;
  *first = q->g_first;
  *last = q->g_last;
  return RIVER_SUCCESS;
}

int river_dq_stats_get(const river_dq *q, river_dq_stats *stats)
{
  if (q == NULL || stats == NULL)
    return RIVER_EINVAL;
  memset(stats, 0, sizeof *stats);
  stats->records_out = q->records_out;
  stats->bytes_out = q->bytes_out;
  stats->messages_out = q->messages_out;
  stats->records_in = q->records_in;
  stats->bytes_in = q->bytes_in;
  stats->messages_in = q->messages_in;
  stats->msgs_to = q->msgs_to;
  stats->msgs_from = q->msgs_from;
  stats->credit_stalls = q->credit_stalls;
  stats->put_wait_seconds = q->put_wait;
  stats->get_wait_seconds = q->get_wait;
  stats->nproducers = q->nprod;
  stats->nconsumers = q->ncons;
  stats->producer_index = q->pidx;
  stats->consumer_index = q->cidx;
  return RIVER_SUCCESS;
}

/* ------------------------------------------------------ create/destroy */

#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
/* Collective over comm: on the lowest rank of comm on each node, wait
 * (backing off) for the node's window lock and return its descriptor;
 * elsewhere, or if the lock file cannot be used (warned), -1. */
static int river_dq_win_lock(MPI_Comm comm)
{
  static const char *const dirs[] = {"/dev/shm", "/tmp"};
  long ns = RIVER_BACKOFF_START;
  MPI_Comm node;
  char path[64];
  int lrank = -1, fd = -1, i;

  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                          &node) != MPI_SUCCESS)
    return -1;
  MPI_Comm_rank(node, &lrank);
  MPI_Comm_free(&node);
  if (lrank != 0)
    return -1;
  for (i = 0; i < 2 && fd < 0; i++) {
    snprintf(path, sizeof path, "%s/river-win-%u.lock", dirs[i],
             (unsigned)getuid());
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  }
  if (fd < 0) {
    river__warn("dq create: no lock file (%s): creating the window "
                "unserialised; Open MPI < 5 may collide (ompi#9492)",
                strerror(errno));
    return -1;
  }
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      river__warn("dq create: cannot lock %s: %s", path, strerror(errno));
      close(fd);
      return -1;
    }
    river__backoff(&ns);
  }
  return fd;
}

static void river_dq_win_unlock(int fd)
{
  if (fd >= 0) {
    flock(fd, LOCK_UN);
    close(fd);
  }
}
#else
static int river_dq_win_lock(MPI_Comm comm)
{
  (void)comm;
  return -1;
}

static void river_dq_win_unlock(int fd)
{
  (void)fd;
}
#endif

/* What one rank can check alone; *o gets opts with defaults filled in. */
static int river_dq_check_local(int role, size_t record_size,
                                const river_dq_opts *opts, river_dq_opts *o)
{
  const river_dq_opts def = RIVER_DQ_OPTS_INIT;

  *o = opts != NULL ? *opts : def;
  if (role & ~(RIVER_DQ_PRODUCER | RIVER_DQ_CONSUMER)) {
    river__error("dq create: role %d is not RIVER_DQ_PRODUCER and/or "
                 "RIVER_DQ_CONSUMER", role);
    return RIVER_EINVAL;
  }
  if ((int)o->policy < RIVER_DQ_PUSH || (int)o->policy > RIVER_DQ_PULL) {
    river__error("dq create: unknown policy %d", (int)o->policy);
    return RIVER_EINVAL;
  }
  if (o->credits < 0) {
    river__error("dq create: credits %d < 0", o->credits);
    return RIVER_EINVAL;
  }
  if (o->credits == 0)
    o->credits = RIVER_DQ_DEFAULT_CREDITS;
  if (o->message_size == 0)
    o->message_size = RIVER_DQ_DEFAULT_MESSAGE_SIZE;
  if (record_size == 0) {
    river__error("dq create: record_size must be > 0");
    return RIVER_EINVAL;
  }
  if (o->message_size > INT_MAX
      || o->message_size < RIVER_DQ_HDR
      || record_size > o->message_size - RIVER_DQ_HDR) {
    river__error("dq create: %zu-byte records do not fit %zu-byte messages "
                 "(%zu bytes of header; at most %d bytes)", record_size,
                 o->message_size, RIVER_DQ_HDR, INT_MAX);
    return RIVER_EINVAL;
  }
  if (o->policy == RIVER_DQ_EXCHANGE && o->partition == NULL) {
    river__error("dq create: RIVER_DQ_EXCHANGE needs a partition function");
    return RIVER_EINVAL;
  }
  return RIVER_SUCCESS;
}

/* Collective over comm: RIVER_EINVAL on every rank if any rank's
 * arguments were bad (local_rc) or ranks differ in a parameter. */
static int river_dq_check_same(MPI_Comm comm, int local_rc, size_t rs,
                               const river_dq_opts *o)
{
  static const char *const names[] = {"record_size", "policy", "credits",
                                      "message_size", "seed"};
  uint64_t p[5];

  p[0] = rs;
  p[1] = (uint64_t)o->policy;
  p[2] = (uint64_t)o->credits;
  p[3] = o->message_size;
  p[4] = o->seed;
  return river__agree_same(comm, "dq create", local_rc, 5, names, p);
}

/* Roles from every rank: indices, counts, and the policy's needs (the
 * same verdict on every rank). */
static int river_dq_roles(river_dq *q, int *roles)
{
  int r;

  q->pidx = q->cidx = -1;
  for (r = 0; r < q->size; r++) {
    if (roles[r] & RIVER_DQ_PRODUCER) {
      if (r == q->rank)
        q->pidx = q->nprod;
      q->prod_rank[q->nprod++] = r;
    }
    if (roles[r] & RIVER_DQ_CONSUMER) {
      if (r == q->rank)
        q->cidx = q->ncons;
      q->cons_rank[q->ncons++] = r;
    }
  }
  if (q->nprod == 0 || q->ncons == 0) {
    river__error("dq create: the queue has %d producers and %d consumers; "
                 "it needs at least one of each", q->nprod, q->ncons);
    return RIVER_EINVAL;
  }
  if (q->policy == RIVER_DQ_ONE_TO_ONE && q->nprod != q->ncons) {
    river__error("dq create: RIVER_DQ_ONE_TO_ONE needs as many producers as "
                 "consumers (%d and %d)", q->nprod, q->ncons);
    return RIVER_EINVAL;
  }
  /* Requests and slots are counted in int: a producer has at most
   * (credits + 2) x nconsumers requests, a consumer (credits + 1) x
   * nproducers. */
  if ((uint64_t)q->credits + 2 > (uint64_t)(INT_MAX / 2)
                                     / (uint64_t)(q->ncons > q->nprod
                                                  ? q->ncons : q->nprod)) {
    river__error("dq create: %d credits are too many for %d producers and "
                 "%d consumers", q->credits, q->nprod, q->ncons);
    return RIVER_EINVAL;
  }
  return RIVER_SUCCESS;
}

/* This rank's buffers for its roles. */
static int river_dq_alloc(river_dq *q)
{
  int targets, b, k, p, ok = 1;
  int nc = q->ncons, np = q->nprod;

  q->held = -1;
  q->cur_p = -1;
  q->owner = -1;
  if (q->role & RIVER_DQ_PRODUCER) {
    targets = q->policy == RIVER_DQ_ONE_TO_ONE
              || q->policy == RIVER_DQ_BROADCAST ? 1 : nc;
    q->nfill = q->policy == RIVER_DQ_EXCHANGE ? nc : 1;
    q->nslots = q->credits * targets + q->nfill;
    q->fanout = q->policy == RIVER_DQ_BROADCAST ? nc : 1;
    q->nsreq = q->nslots * q->fanout + nc;
    q->sbuf = malloc((size_t)q->nslots * q->stride);
    q->slot_refs = calloc((size_t)q->nslots, sizeof(int));
    q->slot_fill = calloc((size_t)q->nslots, 1);
    q->fill = calloc((size_t)q->nfill, sizeof(int));
    q->fill_n = calloc((size_t)q->nfill, sizeof(size_t));
    q->stalled = calloc((size_t)q->nfill, 1);
    q->sreq = calloc((size_t)q->nsreq, sizeof(MPI_Request));
    q->sidx = calloc((size_t)q->nsreq, sizeof(int));
    q->eos_hdr = calloc((size_t)nc, sizeof *q->eos_hdr);
    q->sent = calloc((size_t)nc * 5, sizeof(uint64_t));
    q->count = calloc((size_t)nc, sizeof(size_t));
    ok = q->sbuf && q->slot_refs && q->slot_fill && q->fill && q->fill_n
         && q->stalled && q->sreq && q->sidx && q->eos_hdr && q->sent
         && q->count;
    if (ok) {
      q->returned = q->sent + nc;
      q->zeros = q->sent + 2 * nc;
      q->msgs_to = q->sent + 3 * nc;
      q->avail = q->sent + 4 * nc;
      for (b = 0; b < q->nfill; b++)
        q->fill[b] = -1;
      for (k = 0; k < q->nsreq; k++)
        q->sreq[k] = MPI_REQUEST_NULL;
      q->rr = q->pidx % nc;
      q->rng = q->seed ^ (RIVER_MIX64_STEP * (uint64_t)(q->pidx + 1));
    }
  }
  if (ok && (q->role & RIVER_DQ_CONSUMER)) {
    q->nrslots = q->credits * np;
    q->nrreq = q->nrslots + np;
    q->rbuf = malloc((size_t)q->nrreq * q->stride);
    q->rreq = calloc((size_t)q->nrreq, sizeof(MPI_Request));
    q->ridx = calloc((size_t)q->nrreq, sizeof(int));
    q->rstat = calloc((size_t)q->nrreq, sizeof(MPI_Status));
    q->ring = calloc((size_t)q->nrslots, sizeof(int));
    q->next = calloc((size_t)np * 4, sizeof(uint64_t));
    q->eos_full = calloc((size_t)np, 1);
    ok = q->rbuf && q->rreq && q->ridx && q->rstat && q->ring && q->next
         && q->eos_full;
    if (ok) {
      q->eos_seq = q->next + np;
      q->arrived = q->next + 2 * np;
      q->msgs_from = q->next + 3 * np;
      for (k = 0; k < q->nrslots; k++)
        q->ring[k] = -1;
      for (k = 0; k < q->nrreq; k++)
        q->rreq[k] = MPI_REQUEST_NULL;
      for (p = 0; p < np; p++)
        q->eos_seq[p] = RIVER_DQ_UNKNOWN;
      q->last_p = np - 1;
    }
  }
  return ok ? RIVER_SUCCESS : RIVER_ENOMEM;
}

/* Cancel and complete this rank's posted receives (none can match any
 * more when this is called). */
static int river_dq_cancel_recvs(river_dq *q)
{
  int k, rc = RIVER_SUCCESS;

  for (k = 0; k < q->nrreq; k++)
    if (q->rreq[k] != MPI_REQUEST_NULL && MPI_Cancel(&q->rreq[k])
                                              != MPI_SUCCESS)
      rc = RIVER_EMPI;
  if (q->nrreq > 0 && river_waitall(q->nrreq, q->rreq) != RIVER_SUCCESS)
    rc = RIVER_EMPI;
  return rc;
}

/* Free the queue's MPI objects (collective where they are) and memory. */
static void river_dq_free(river_dq *q)
{
  if (q->win != MPI_WIN_NULL) {
    if (q->locked)
      MPI_Win_unlock_all(q->win);
    MPI_Win_free(&q->win);
  }
  if (q->comm != MPI_COMM_NULL)
    MPI_Comm_free(&q->comm);
  free(q->prod_rank);
  free(q->count_out);
  free(q->sbuf);
  free(q->slot_refs);
  free(q->slot_fill);
  free(q->fill);
  free(q->fill_n);
  free(q->stalled);
  free(q->sreq);
  free(q->sidx);
  free(q->eos_hdr);
  free(q->sent);
  free(q->count);
  free(q->rbuf);
  free(q->rreq);
  free(q->ridx);
  free(q->rstat);
  free(q->ring);
  free(q->next);
  free(q->eos_full);
  free(q);
}

/* Everything after the argument checks: roles, buffers, window, posted
 * receives. Collective; the outcome is agreed over comm. */
static int river_dq_setup(river_dq *q, MPI_Comm comm, int role)
{
  MPI_Aint winsize;
  int rc, k, lock;
  int *roles = q->prod_rank + 2 * (size_t)q->size; /* scratch */

  if (MPI_Comm_dup(comm, &q->comm) != MPI_SUCCESS) {
    q->comm = MPI_COMM_NULL;
    river__error("dq create: MPI_Comm_dup failed");
    return river__agree(comm, RIVER_EMPI);
  }
  rc = river__agree(comm, RIVER_SUCCESS);
  if (rc != RIVER_SUCCESS)
    return rc;
  MPI_Comm_set_errhandler(q->comm, MPI_ERRORS_RETURN);
  if (MPI_Allgather(&role, 1, MPI_INT, roles, 1, MPI_INT, q->comm)
      != MPI_SUCCESS)
    return RIVER_EMPI;
  if ((rc = river_dq_roles(q, roles)) != RIVER_SUCCESS)
    return rc; /* every rank saw the same roles */
  rc = river_dq_alloc(q);
  winsize = rc == RIVER_SUCCESS && (role & RIVER_DQ_PRODUCER)
            ? (MPI_Aint)(((size_t)q->ncons
                          + (q->policy == RIVER_DQ_PULL
                             ? (size_t)q->ncons + 3 : 0))
                         * sizeof(uint64_t)) : 0;
  lock = river_dq_win_lock(q->comm);
  k = MPI_Win_allocate(winsize, sizeof(uint64_t), MPI_INFO_NULL, q->comm,
                       &q->winmem, &q->win);
  river_dq_win_unlock(lock);
  if (k != MPI_SUCCESS) {
    q->win = MPI_WIN_NULL;
    river__error("dq create: MPI_Win_allocate failed");
    return RIVER_EMPI;
  }
  MPI_Win_set_errhandler(q->win, MPI_ERRORS_RETURN);
  if (MPI_Win_lock_all(MPI_MODE_NOCHECK, q->win) != MPI_SUCCESS)
    rc = RIVER_EMPI;
  else
    q->locked = 1;
  /* Zero the counters and make that visible to RMA. A consumer returns
   * its first credit only after a message this producer sent after
   * create, so the zeroing comes first. */
  if (winsize > 0)
    memset(q->winmem, 0, (size_t)winsize);
  if (q->locked && MPI_Win_sync(q->win) != MPI_SUCCESS)
    rc = RIVER_EMPI;
  for (k = 0; rc == RIVER_SUCCESS && k < q->nrreq; k++)
    rc = river_dq_post(q, k);
  rc = river__agree(q->comm, rc);
  if (rc != RIVER_SUCCESS)
    river_dq_cancel_recvs(q);
  return rc;
}

int river_dq_create(MPI_Comm comm, int role, size_t record_size,
                    const river_dq_opts *opts, river_dq **out)
{
  river_dq_opts o;
  river_dq *q = NULL;
  int rc, up = 0, down = 0, size = 0;

  if (comm == MPI_COMM_NULL)
    return RIVER_EINVAL;
  rc = river_dq_check_local(role, record_size, opts, &o);
  if (out == NULL && rc == RIVER_SUCCESS) {
    river__error("dq create: out is NULL");
    rc = RIVER_EINVAL;
  }
  /* With MPI up, even a rank with bad arguments takes part, so that every
   * rank returns the same code. */
  if (MPI_Initialized(&up) != MPI_SUCCESS || MPI_Finalized(&down)
                                                 != MPI_SUCCESS)
    return RIVER_EMPI;
  if (!up || down) {
    if (rc == RIVER_SUCCESS)
      river__error("dq create: MPI is not initialised");
    return rc != RIVER_SUCCESS ? rc : RIVER_ESTATE;
  }
  if ((rc = river_dq_check_same(comm, rc, record_size, &o)) != RIVER_SUCCESS)
    return rc;
  MPI_Comm_size(comm, &size);
  q = calloc(1, sizeof *q);
  if (q != NULL) {
    q->comm = MPI_COMM_NULL;
    q->win = MPI_WIN_NULL;
    q->size = size;
    q->prod_rank = calloc((size_t)size * 3, sizeof(int));
    q->count_out = calloc((size_t)size * 2, sizeof(uint64_t));
  }
  rc = q && q->prod_rank && q->count_out ? RIVER_SUCCESS : RIVER_ENOMEM;
  rc = river__agree(comm, rc);
  if (rc == RIVER_SUCCESS) {
    MPI_Comm_rank(comm, &q->rank);
    q->cons_rank = q->prod_rank + size;
    q->count_in = q->count_out + size;
    q->role = role;
    q->policy = o.policy;
    q->credits = o.credits;
    q->seed = o.seed;
    q->record_size = record_size;
    q->message_size = o.message_size;
    q->stride = (o.message_size + RIVER_DQ_ALIGN - 1) / RIVER_DQ_ALIGN
                * RIVER_DQ_ALIGN;
    q->per_msg = (o.message_size - RIVER_DQ_HDR) / record_size;
    q->partition = o.partition;
    q->partition_ctx = o.partition_ctx;
    rc = river_dq_setup(q, comm, role);
  }
  if (rc != RIVER_SUCCESS) {
    if (q != NULL)
      river_dq_free(q);
    return rc;
  }
  *out = q;
  return RIVER_SUCCESS;
}

/* Wait until this rank's sends have completed and every message sent to
 * it has arrived (counts exchanged with MPI_Alltoall). */
static int river_dq_drain(river_dq *q)
{
  long ns = RIVER_BACKOFF_START;
  int c, p, rc, more;

  memset(q->count_out, 0, (size_t)q->size * sizeof(uint64_t));
  for (c = 0; (q->role & RIVER_DQ_PRODUCER) && c < q->ncons; c++)
    q->count_out[q->cons_rank[c]] = q->sent[c] + (q->closed ? 1 : 0);
  if (MPI_Alltoall(q->count_out, 1, MPI_UINT64_T, q->count_in, 1,
                   MPI_UINT64_T, q->comm) != MPI_SUCCESS)
    return RIVER_EMPI;
  for (;;) {
    more = 0;
    if (q->role & RIVER_DQ_PRODUCER) {
      if ((rc = river_dq_send_progress(q)) != RIVER_SUCCESS)
        return rc;
      more = q->sactive > 0;
    }
    if (q->role & RIVER_DQ_CONSUMER) {
      if ((rc = river_dq_recv_progress(q)) != RIVER_SUCCESS)
        return rc;
      for (p = 0; p < q->nprod; p++)
        more |= q->arrived[p] < q->count_in[q->prod_rank[p]];
    }
    if (!more)
      return RIVER_SUCCESS;
    river__backoff(&ns);
  }
}

int river_dq_destroy(river_dq *q)
{
  int rc = RIVER_SUCCESS, r;

  if (q == NULL)
    return RIVER_SUCCESS;
  if ((q->role & RIVER_DQ_PRODUCER) && !q->closed) {
    river__error("dq destroy: producer %d did not close", q->pidx);
    rc = RIVER_ESTATE;
  }
  if ((q->role & RIVER_DQ_CONSUMER) && !q->eos_seen) {
    river__error("dq destroy: consumer %d did not reach end of stream",
                 q->cidx);
    rc = RIVER_ESTATE;
  }
  if ((r = river_dq_drain(q)) != RIVER_SUCCESS && r < rc)
    rc = r;
  if ((r = river_dq_cancel_recvs(q)) != RIVER_SUCCESS && r < rc)
    rc = r;
  rc = river__agree(q->comm, rc);
  river_dq_free(q);
  return rc;
}
