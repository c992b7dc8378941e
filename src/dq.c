/*
 * dq.c - the distributed queue's entry points that are not side-specific
 * (see river/dq.h): create (argument checks, agreement over comm, roles,
 * this rank's buffers, the credit window, posted receives), destroy
 * (drain, cancel, free) and stats. Everything hangs off struct river_dq;
 * it, the message format and the protocol are described in
 * dq_internal.h. The producer side is in dq_producer.c, the consumer
 * side in dq_consumer.c.
 */
#include "dq_internal.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ create/destroy */

/* What one rank can check alone; *o gets opts with defaults filled in. */
static int check_local(int role, size_t record_size,
                       const river_dq_opts *opts, river_dq_opts *o)
{
  const river_dq_opts def = RIVER_DQ_OPTS_INIT;

  *o = opts != NULL ? *opts : def;
  if (role & ~(RIVER_DQ_PRODUCER | RIVER_DQ_CONSUMER)) {
    river__error("dq create: role %d is not RIVER_DQ_PRODUCER and/or "
                 "RIVER_DQ_CONSUMER", role);
    return RIVER_EINVAL;
  }
  if (river__dq_policy((int)o->policy) == NULL) {
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
      || o->message_size < DQ_HDR_SIZE
      || record_size > o->message_size - DQ_HDR_SIZE) {
    river__error("dq create: %zu-byte records do not fit %zu-byte messages "
                 "(%zu bytes of header; at most %d bytes)", record_size,
                 o->message_size, DQ_HDR_SIZE, INT_MAX);
    return RIVER_EINVAL;
  }
  if (!(o->pace <= 1e6 && o->pace >= -1e6)) { /* NaN too */
    river__error("dq create: pace %g is not a number of seconds", o->pace);
    return RIVER_EINVAL;
  }
  if (o->pace == 0.0)
    o->pace = RIVER_DQ_DEFAULT_PACE;
  if ((river__dq_policy((int)o->policy)->flags & DQ_P_KEYED)
      && o->partition == NULL) {
    river__error("dq create: RIVER_DQ_%s needs a partition function",
                 river__dq_policy((int)o->policy)->name);
    return RIVER_EINVAL;
  }
  return RIVER_SUCCESS;
}

/* Collective over comm: RIVER_EINVAL on every rank if any rank's
 * arguments were bad (local_rc) or ranks differ in a parameter. */
static int check_same(MPI_Comm comm, int local_rc, size_t rs,
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
static int assign_roles(river_dq *q, int *roles)
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
  if (DQ_DOES(q, DQ_P_PAIRED) && q->nprod != q->ncons) {
    river__error("dq create: RIVER_DQ_%s needs as many producers as "
                 "consumers (%d and %d)", q->pol->name, q->nprod, q->ncons);
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

/* The queue relies on MPI matching one producer's messages in the
 * order sent (dq_internal.h, "Consumer": with few receives posted, a
 * later message matched first would hold a receive its predecessor
 * needs). MPI-4 lets a communicator's duplicate inherit the hint
 * mpi_assert_allow_overtaking; say "false" on the queue's own. A
 * hint: an MPI that does not know it ignores it. */
static void no_overtaking(MPI_Comm comm)
{
  MPI_Info info;

  if (MPI_Info_create(&info) != MPI_SUCCESS)
    return;
  if (MPI_Info_set(info, "mpi_assert_allow_overtaking", "false")
      == MPI_SUCCESS)
    (void)MPI_Comm_set_info(comm, info);
  MPI_Info_free(&info);
}

/* A count a tuning variable may set (name, an integer >= min), else
 * dflt (also when it is not such an integer). */
static long env_count(const char *name, long dflt, long min)
{
  const char *v = getenv(name);
  char *end;
  long n;

  if (v == NULL || *v == '\0')
    return dflt;
  n = strtol(v, &end, 10);
  return *end == '\0' && n >= min ? n : dflt;
}

/* How many DATA receives a consumer keeps posted (dq_internal.h,
 * "Consumer"): DQ_POSTED, or RIVER_DQ_POSTED's count (0: all), never
 * more than the credits x producers that can be in flight. A PULL
 * consumer takes one producer's messages at a time, and the others'
 * must not fill its receives: on the RMA path it holds one unit, so
 * only its producer sends to it; on the MSG path it may hold units
 * granted late by several producers (dq_credit.c, msg_claim), whose
 * messages wait behind the one in progress: before it asks for one
 * more, it posts enough for all of them (river__dq_grow_recvs; it
 * posted all credits x producers before issue 41, and capping the
 * units held instead made a consumer wait on producers that answer
 * late). Called once the credit path is known. */
static int posted_data_receives(const river_dq *q)
{
  long n = env_count("RIVER_DQ_POSTED", DQ_POSTED, 0);

  if (n == 0 || n > q->nring)
    n = q->nring;
  return (int)n;
}

/* A consumer's posted receives and their buffers (once the credit path
 * is known: posted_data_receives). */
static int alloc_receives(river_dq *q)
{
  int k;

  q->nrslots = posted_data_receives(q);
  q->nrreq = q->nrslots;   /* EOS: no receive posted (dq_internal.h) */
  q->rbuf = river__dq_buffers(q, ((size_t)q->nrreq + 1) * q->stride);
  q->rptr = river__dq_calloc(q, (size_t)q->nrreq, sizeof *q->rptr);
  q->rreq = river__dq_calloc(q, (size_t)q->nrreq, sizeof(MPI_Request));
  q->ridx = river__dq_calloc(q, (size_t)q->nrreq, sizeof(int));
  q->rstat = river__dq_calloc(q, (size_t)q->nrreq, sizeof(MPI_Status));
  if (q->rbuf == NULL || q->rptr == NULL || q->rreq == NULL
      || q->ridx == NULL || q->rstat == NULL) {
    /* rreq may be there but holds no valid request: nothing will be
     * posted, so river__dq_cancel_recvs must not look at it. */
    q->nrreq = 0;
    return RIVER_ENOMEM;
  }
  for (k = 0; k < q->nrreq; k++) {
    q->rptr[k] = q->rbuf + (size_t)k * q->stride;
    q->rreq[k] = MPI_REQUEST_NULL;
  }
  q->spare = q->rbuf + (size_t)q->nrreq * q->stride;
  return RIVER_SUCCESS;
}

/* A producer's send slots besides its fill buffers: one per credit at
 * each of its targets, at most DQ_SEND_PEERS targets' worth, or
 * RIVER_DQ_SEND_SLOTS's count (at least 1; never more than credits x
 * targets, all that can be in flight). So a producer's memory does not
 * grow with the consumers (doc/design.md, "Queue memory"). */
static int send_slots(const river_dq *q, int targets)
{
  long all = (long)q->credits * targets, n;

  n = env_count("RIVER_DQ_SEND_SLOTS",
                (long)q->credits
                    * (targets < DQ_SEND_PEERS ? targets : DQ_SEND_PEERS),
                1);
  return (int)(n < all ? n : all);
}

/* An EXCHANGE producer's message size (its fill buffers, one per
 * consumer, and its send slots): a full message for up to DQ_FILL_PEERS
 * consumers; beyond, DQ_FILL_PEERS full messages shared among them, but
 * at least DQ_FILL_MIN bytes (and one record), on a page. So its memory
 * is DQ_FILL_PEERS messages up to DQ_FILL_PEERS x message_size /
 * DQ_FILL_MIN consumers (512 at the default 256 KiB) and grows by
 * DQ_FILL_MIN a consumer after that (doc/design.md, "Queue memory"). */
static void exchange_message(river_dq *q)
{
  size_t m = q->message_size, want, min;

  if (q->ncons <= DQ_FILL_PEERS)
    return;
  want = m * DQ_FILL_PEERS / (size_t)q->ncons;
  min = DQ_HDR_SIZE + q->record_size;
  min = min > DQ_FILL_MIN ? min : DQ_FILL_MIN;
  want = want > min ? want : min;
  want = (want + DQ_PAGE - 1) / DQ_PAGE * DQ_PAGE;   /* whole pages */
  if (want >= m)
    return;
  q->send_per_msg = (want - DQ_HDR_SIZE) / q->record_size;
  q->sstride = want;
}

int river_dq_put_max(const river_dq *q, size_t *max)
{
  uint64_t m, r;

  if (q == NULL || max == NULL || !(q->role & RIVER_DQ_PRODUCER))
    return RIVER_EINVAL;
  r = q->send_per_msg;
  if (DQ_DOES(q, DQ_P_KEYED)) {
    /* All of them may go to one consumer whose fill buffer is one
     * record short of full: credits - 1 more messages and one record. */
    m = (uint64_t)(q->credits - 1) * r + 1;
  } else if (DQ_DOES(q, DQ_P_UNITS)) {
    /* A unit's first message waits for the unit's claim (pull_fits),
     * and the claim comes only once the unit has records: a try_put
     * that opens a unit must not complete a message. */
    m = r;
  } else {
    /* The messages try_put may complete at once (ever_fits, in
     * dq_producer.c): credits, for every consumer where messages spread;
     * a fill buffer may already be full, so m messages take m x r. */
    m = (uint64_t)q->credits;
    if (DQ_DOES(q, DQ_P_SPREAD))
      m = m > UINT64_MAX / (uint64_t)q->ncons ? UINT64_MAX
                                              : m * (uint64_t)q->ncons;
    m = m > UINT64_MAX / r ? UINT64_MAX : m * r;
  }
  *max = m > SIZE_MAX ? SIZE_MAX : (size_t)m;
  return RIVER_SUCCESS;
}

/* This rank's buffers for its roles. */
static int alloc_buffers(river_dq *q)
{
  int targets, b, k, p, ok = 1;
  int nc = q->ncons, np = q->nprod;

  q->held = -1;
  q->cur_p = -1;
  q->owner = -1;
  q->tag = RIVER_DQ_NO_TAG;
  if (q->role & RIVER_DQ_PRODUCER) {
    /* One buffer's sends: to one consumer (PAIRED) or, at once, to
     * every one (EVERY): credits x 1 slots; else to any of nc. */
    targets = DQ_DOES(q, DQ_P_PAIRED | DQ_P_EVERY) ? 1 : nc;
    q->nfill = DQ_DOES(q, DQ_P_KEYED) ? nc : 1;
    q->sstride = q->stride;
    q->send_per_msg = q->per_msg;
    if (DQ_DOES(q, DQ_P_KEYED))
      exchange_message(q);
    q->nslots = q->nslots0 = send_slots(q, targets) + q->nfill;
    q->nslots_max = q->credits * targets + q->nfill;
    q->fanout = DQ_DOES(q, DQ_P_EVERY) ? nc : 1;
    q->nsreq = q->nslots_max * q->fanout + nc;
    q->sbuf = river__dq_buffers(q, (size_t)q->nslots * q->sstride);
    q->slot_buf = river__dq_calloc(q, (size_t)q->nslots_max,
                                   sizeof *q->slot_buf);
    q->slot_refs = river__dq_calloc(q, (size_t)q->nslots_max, sizeof(int));
    q->slot_fill = river__dq_calloc(q, (size_t)q->nslots_max, 1);
    q->free_stack = river__dq_calloc(q, (size_t)q->nslots_max, sizeof(int));
    if (DQ_DOES(q, DQ_P_KEYED)) {
      q->touched = river__dq_calloc(q, (size_t)nc, sizeof(int));
      q->fullq = river__dq_calloc(q, (size_t)nc, sizeof(int));
      q->in_fullq = river__dq_calloc(q, (size_t)nc, 1);
      ok = q->touched && q->fullq && q->in_fullq;
    }
    q->fill = river__dq_calloc(q, (size_t)q->nfill, sizeof(int));
    q->fill_n = river__dq_calloc(q, (size_t)q->nfill, sizeof(size_t));
    q->stalled = river__dq_calloc(q, (size_t)q->nfill, 1);
    q->sreq = river__dq_calloc(q, (size_t)q->nsreq, sizeof(MPI_Request));
    q->sidx = river__dq_calloc(q, (size_t)q->nsreq, sizeof(int));
    q->splace = river__dq_calloc(q, (size_t)q->nsreq, sizeof(int));
    q->eos_hdr = river__dq_calloc(q, (size_t)nc, sizeof *q->eos_hdr);
    q->eos_went = river__dq_calloc(q, (size_t)nc, 1);
    q->sent = river__dq_calloc(q, (size_t)nc * 5, sizeof(uint64_t));
    q->count = river__dq_calloc(q, (size_t)nc, sizeof(size_t));
    q->code = river__dq_calloc(q, (size_t)nc, sizeof *q->code);
    for (k = 0; k < DQ_PUB_FLIGHT; k++) {
      q->pub_req[k] = MPI_REQUEST_NULL;
      q->pub_c[k] = -1;
    }
    if (DQ_DOES(q, DQ_P_RATES) && nc > q->read_all) {
      q->pub = river__dq_calloc(q, (size_t)nc, sizeof *q->pub);
      q->pub_at = river__dq_calloc(q, (size_t)nc, sizeof *q->pub_at);
      ok = ok && q->pub && q->pub_at;
    }
    ok = ok && q->sbuf && q->slot_buf && q->slot_refs && q->slot_fill
         && q->free_stack && q->fill && q->fill_n
         && q->stalled && q->sreq && q->sidx && q->splace && q->eos_hdr
         && q->eos_went && q->sent && q->count && q->code;
    if (ok) {
      q->returned = q->sent + nc;
      q->zeros = q->sent + 2 * nc;
      q->msgs_to = q->sent + 3 * nc;
      q->avail = q->sent + 4 * nc;
      for (b = 0; b < q->nslots; b++) {
        q->slot_buf[b] = q->sbuf + (size_t)b * q->sstride;
        q->free_stack[q->nfree++] = q->nslots - 1 - b;   /* 0 on top */
      }
      for (b = 0; b < q->nfill; b++)
        q->fill[b] = -1;
      for (k = 0; k < q->nsreq; k++)
        q->sreq[k] = MPI_REQUEST_NULL;
      q->rr = q->pidx % nc;
      q->rng = q->seed ^ (RIVER_MIX64_STEP * (uint64_t)(q->pidx + 1));
      /* Beyond read_all consumers PUSH chooses among a window of them
       * from the start (dq_producer.c, window_choose): no dormant mode,
       * whose turns and wake test look at every consumer. */
      q->dormant = DQ_DOES(q, DQ_P_RATES) && nc > 1 && nc <= q->read_all;
      q->bad_seq = river__test_fault("dq-data-seq");
    }
  }
  if (ok && (q->role & RIVER_DQ_CONSUMER)) {
    q->nring = q->credits * np;
    q->eos_buf = river__dq_calloc(q, (size_t)np, sizeof *q->eos_buf);
    q->eos_req = river__dq_calloc(q, (size_t)np, sizeof *q->eos_req);
    q->eos_req_buf = river__dq_calloc(q, (size_t)np, sizeof *q->eos_req_buf);
    q->ring = river__dq_calloc(q, (size_t)q->nring, sizeof(int));
    q->next = river__dq_calloc(q, (size_t)np * 4, sizeof(uint64_t));
    q->eos_full = river__dq_calloc(q, (size_t)np, 1);
    q->ready = river__dq_calloc(q, (size_t)np, sizeof(int));
    q->in_ready = river__dq_calloc(q, (size_t)np, 1);
    q->done_p = river__dq_calloc(q, (size_t)np, 1);
    q->heldq = river__dq_calloc(q, (size_t)np, sizeof(int));
    q->in_heldq = river__dq_calloc(q, (size_t)np, 1);
    q->held_by = river__dq_calloc(q, (size_t)np, sizeof(int));
    q->code_sent = river__dq_calloc(q, (size_t)np, sizeof *q->code_sent);
    q->released = river__dq_calloc(q, (size_t)np, sizeof *q->released);
    ok = q->ring && q->next && q->eos_full && q->ready && q->in_ready
         && q->done_p && q->heldq && q->in_heldq && q->held_by
         && q->code_sent
         && q->released && q->eos_buf && q->eos_req && q->eos_req_buf;
    if (ok) {
      q->eos_seq = q->next + np;
      q->arrived = q->next + 2 * np;
      q->msgs_from = q->next + 3 * np;
      for (k = 0; k < q->nring; k++)
        q->ring[k] = -1;
      for (p = 0; p < np; p++)
        q->eos_seq[p] = DQ_UNKNOWN;
      q->last_p = np - 1;
      q->live = np;
    }
  }
  return ok ? RIVER_SUCCESS : RIVER_ENOMEM;
}

/* Free the queue's MPI objects (collective where they are) and memory. */
static void free_queue(river_dq *q)
{
  int p;

  river__dq_credits_free(q);
  if (q->comm != MPI_COMM_NULL)
    MPI_Comm_free(&q->comm);
  free(q->prod_rank);
  free(q->cw_count);
  for (p = q->nslots0; q->slot_buf != NULL && p < q->nslots; p++)
    free(q->slot_buf[p]);   /* grown one by one (dq_producer.c) */
  free(q->slot_buf);
  free(q->sbuf);
  free(q->free_stack);
  free(q->touched);
  free(q->fullq);
  free(q->in_fullq);
  free(q->slot_refs);
  free(q->slot_fill);
  free(q->fill);
  free(q->fill_n);
  free(q->stalled);
  free(q->sreq);
  free(q->sidx);
  free(q->splace);
  free(q->eos_hdr);
  free(q->eos_went);
  free(q->sent);
  free(q->count);
  free(q->code);
  free(q->pub);
  free(q->pub_at);
  free(q->rbuf);
  for (p = 0; q->eos_buf != NULL && p < q->nprod; p++)
    free(q->eos_buf[p]);
  free(q->eos_buf);
  for (p = 0; q->eos_req_buf != NULL && p < q->n_eos_req; p++)
    free(q->eos_req_buf[p]);
  free(q->eos_req);
  free(q->eos_req_buf);
  free(q->rptr);
  for (p = 0; p < q->ngrown; p++)
    free(q->grown[p]);
  free(q->grown);
  free(q->rreq);
  free(q->ridx);
  free(q->rstat);
  free(q->ring);
  free(q->next);
  free(q->eos_full);
  free(q->ready);
  free(q->in_ready);
  free(q->done_p);
  free(q->heldq);
  free(q->in_heldq);
  free(q->held_by);
  free(q->code_sent);
  free(q->released);
  free(q);
}

/* Everything after the argument checks: roles, buffers, window, posted
 * receives. Collective; the outcome is agreed over comm. */
static int setup(river_dq *q, MPI_Comm comm, int role)
{
  size_t winsize;
  int read_all;
  int rc, r;
  int *roles = q->prod_rank + 2 * (size_t)q->size; /* scratch */

  if (river__comm_dup(comm, &q->comm) != RIVER_SUCCESS) {
    q->comm = MPI_COMM_NULL;
    river__error("dq create: MPI_Comm_dup failed");
    return river__agree(comm, RIVER_EMPI);
  }
  rc = river__agree(comm, RIVER_SUCCESS);
  if (rc != RIVER_SUCCESS)
    return rc;
  MPI_Comm_set_errhandler(q->comm, MPI_ERRORS_RETURN);
  no_overtaking(q->comm);
  if (river__allgather(&role, 1, MPI_INT, roles, q->comm) != RIVER_SUCCESS)
    return RIVER_EMPI;
  if ((rc = assign_roles(q, roles)) != RIVER_SUCCESS)
    return rc; /* every rank saw the same roles */
  /* Both roles, the same on every rank (the smallest asked for): a
   * consumer knows from it whether its producers read rate codes
   * (dq_consumer.c, tell_code) and rate words (publish_code). */
  read_all = (int)env_count("RIVER_DQ_READ_ALL", DQ_READ_ALL, 0);
  if (river__allreduce(&read_all, &q->read_all, 1, MPI_INT, MPI_MIN,
                       q->comm) != RIVER_SUCCESS)
    return RIVER_EMPI;
  rc = alloc_buffers(q);
  /* PUSH: every rank that consumes has its rate word (one word, used
   * only beyond read_all consumers: dq_credit.c, "rate words"). */
  winsize = rc == RIVER_SUCCESS && (role & RIVER_DQ_PRODUCER)
            ? ((size_t)q->ncons + (DQ_DOES(q, DQ_P_UNITS)
                                   ? (size_t)q->ncons + 3
                                   : DQ_DOES(q, DQ_P_RATES) ? 1u : 0u))
              * sizeof(uint64_t) : 0;
  if (rc == RIVER_SUCCESS && DQ_DOES(q, DQ_P_RATES)
      && (role & RIVER_DQ_CONSUMER))
    winsize += sizeof(uint64_t);
  r = river__dq_credits_setup(q, winsize / sizeof(uint64_t), rc);
  if (r != RIVER_SUCCESS)
    return r; /* agreed; nothing is posted (credits_setup cancels) */
  /* Rate words where producers choose among a window of consumers
   * (dq_producer.c, pub_refresh), on the RMA path; below read_all a
   * producer reads every consumer's code with its own credit words. */
  q->pub_on = DQ_DOES(q, DQ_P_RATES) && q->ncons > q->read_all
              && q->path == RIVER_DQ_CREDITS_RMA
              && !river__test_fault("dq-no-rate-word");
  if (rc == RIVER_SUCCESS && (role & RIVER_DQ_CONSUMER))
    rc = alloc_receives(q);
  if (rc == RIVER_SUCCESS)
    rc = river__dq_post_recvs(q);
  rc = river__agree(q->comm, rc);
  if (rc != RIVER_SUCCESS) {
    river__dq_cancel_recvs(q);
    river__dq_cw_cancel(q);
  }
  return rc;
}

/* ---------------------------------------------------- the rank's tick */

/* Every queue of the rank with something to do while it waits anywhere
 * in River (river__backoff's hook): a paced consumer's held credits
 * (dq_consumer.c) and the MSG path's serving and sending
 * (dq_credit.c); a queue joins at create, leaves at destroy. River's handles
 * are not thread-safe; neither is this list. */
static river_dq *ticked;

static void tick(void *arg);
static struct river__hook tick_hook = {tick, NULL, NULL};

static void tick(void *arg)
{
  river_dq *q;

  (void)arg;
  for (q = ticked; q != NULL; q = q->tick_next) {
    if (q->pace > 0.0 && (q->role & RIVER_DQ_CONSUMER))
      river__dq_pace_tick(q);
    if (q->path == RIVER_DQ_CREDITS_MSG && q->tick_rc == RIVER_SUCCESS)
      q->tick_rc = river__dq_cw_progress(q); /* the queue's next call
                                                 returns a failure */
  }
}

static void tick_register(river_dq *q)
{
  int paced = q->pace > 0.0 && (q->role & RIVER_DQ_CONSUMER);

  if (!paced && q->path != RIVER_DQ_CREDITS_MSG)
    return;
  if (paced)
    q->t_left = river_wtime();
  if (ticked == NULL)
    river__backoff_hook_add(&tick_hook);
  q->tick_next = ticked;
  ticked = q;
}

static void tick_unregister(river_dq *q)
{
  river_dq **pp;

  for (pp = &ticked; *pp != NULL; pp = &(*pp)->tick_next)
    if (*pp == q) {
      *pp = q->tick_next;
      break;
    }
  if (ticked == NULL)
    river__backoff_hook_remove(&tick_hook);
}

int river_dq_create(MPI_Comm comm, int role, size_t record_size,
                    const river_dq_opts *opts, river_dq **out)
{
  river_dq_opts o;
  river_dq *q = NULL;
  int rc, up = 0, down = 0, size = 0;

  if (comm == MPI_COMM_NULL)
    return RIVER_EINVAL;
  rc = check_local(role, record_size, opts, &o);
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
  if ((rc = check_same(comm, rc, record_size, &o)) != RIVER_SUCCESS)
    return rc;
  MPI_Comm_size(comm, &size);
  q = calloc(1, sizeof *q);
  if (q != NULL) {
    q->comm = MPI_COMM_NULL;
    q->win = MPI_WIN_NULL;
    q->size = size;
    river__dq_mem_add(q, (int64_t)sizeof *q);
    q->prod_rank = river__dq_calloc(q, (size_t)size * 3, sizeof(int));
  }
  rc = q && q->prod_rank ? RIVER_SUCCESS : RIVER_ENOMEM;
  rc = river__agree(comm, rc);
  if (rc == RIVER_SUCCESS) {
    MPI_Comm_rank(comm, &q->rank);
    q->cons_rank = q->prod_rank + size;
    q->role = role;
    q->pol = river__dq_policy((int)o.policy);
    q->credits = o.credits;
    q->seed = o.seed;
    q->record_size = record_size;
    q->message_size = o.message_size;
    {
      size_t a = o.message_size >= DQ_PAGE ? DQ_PAGE : DQ_ALIGN;
      q->stride = (o.message_size + a - 1) / a * a;
    }
    q->per_msg = (o.message_size - DQ_HDR_SIZE) / record_size;
    q->partition = o.partition;
    q->partition_ctx = o.partition_ctx;
    /* Pacing is the consumer's own business: no agreement needed. */
    q->pace = DQ_DOES(q, DQ_P_RATES) && o.pace > 0 ? o.pace : 0.0;
    rc = setup(q, comm, role);
  }
  if (rc != RIVER_SUCCESS) {
    if (q != NULL)
      free_queue(q);
    return rc;
  }
  tick_register(q);
  river__debug("dq: %d producers, %d consumers, credits by %s", q->nprod,
               q->ncons, river__dq_path_name(q));
  *out = q;
  return RIVER_SUCCESS;
}

/* Destroy, MSG credit path: how many credit messages were sent to this
 * rank (the sum over its peers of their counts, one
 * MPI_Ireduce_scatter_block: O(n) words and O(log n) steps a rank);
 * q->cw_count (taken at create) keeps this rank's counts for the check
 * at the end. None on the RMA path, where credits travel in the
 * window. */
static int credit_count(river_dq *q, uint64_t *expected)
{
  MPI_Request req = MPI_REQUEST_NULL;
  int p;

  *expected = 0;
  if (q->path != RIVER_DQ_CREDITS_MSG)
    return RIVER_SUCCESS;
  memset(q->cw_count, 0, (size_t)q->size * sizeof(uint64_t));
  for (p = 0; p < q->nprod; p++)
    q->cw_count[q->prod_rank[p]] = river__dq_cw_sent_to(q, p);
  if (river__watchdog_fired())   /* nothing new starts (src/agree.c) */
    return RIVER_ETIMEDOUT;
  if (MPI_Ireduce_scatter_block(q->cw_count, expected, 1, MPI_UINT64_T,
                                MPI_SUM, q->comm, &req) != MPI_SUCCESS)
    return RIVER_EMPI;
  return river__wait_collective(&req, q->comm);
}

/* Destroy, a producer that did not close: an EOS flagged DQ_ABORT to
 * every consumer that has had none, header only, its seq the DATA
 * messages sent there. Every consumer then has an EOS from every
 * producer, which says how many messages to wait for, and one still
 * getting learns that the stream is incomplete (its get fails) instead
 * of waiting for ever. The records not sent are dropped. */
static int send_aborts(river_dq *q)
{
  int c, rc;

  for (c = 0; c < q->ncons; c++) {
    if (q->eos_went[c])
      continue;
    q->eos_hdr[c].kind = DQ_KIND_EOS | DQ_ABORT;
    q->eos_hdr[c].producer = (uint32_t)q->pidx;
    q->eos_hdr[c].seq = q->sent[c];
    q->eos_hdr[c].nrecords = 0;
    q->eos_hdr[c].tag = q->tag;
    q->closing = 1;   /* nothing more is put, the pool grows no more */
    if ((rc = river__dq_send_eos_to(q, c)) != RIVER_SUCCESS)
      return rc;
  }
  q->closed = 1;
  return RIVER_SUCCESS;
}

/* Consumer: everything producer p sent here has arrived: its EOS, whose
 * seq is the DATA messages before it, and those (a malformed arrival
 * from p's rank counts as one, file_arrival). */
static int all_arrived(const river_dq *q, int p)
{
  return q->eos_seq[p] != DQ_UNKNOWN && q->arrived[p] > q->eos_seq[p];
}

/* Wait until this rank's sends have completed and every message sent to
 * it has arrived. The counts of DATA messages travel with the data:
 * each producer's EOS to each consumer says how many it sent there
 * (one that did not close sends one at destroy, send_aborts); the MSG
 * path's credit messages are counted by credit_count. No all-to-all:
 * O(peers) a rank. Waited for with river_wait, which yields in a task:
 * no collective of River's blocks a rank's other stages. */
static int drain(river_dq *q)
{
  long ns = RIVER_BACKOFF_START;
  int p, rc, more, first = RIVER_SUCCESS;
  uint64_t cw_expected = 0;

  q->draining = 1;
  /* credit_count is collective: every rank enters it, whatever failed
   * before (a rank that skipped it would leave the others waiting). */
  if ((q->role & RIVER_DQ_PRODUCER) && !q->closed)
    first = send_aborts(q);
  if ((rc = credit_count(q, &cw_expected)) != RIVER_SUCCESS)
    return rc;
  if (first != RIVER_SUCCESS)
    return first;
  for (;;) {
    if ((rc = river__dq_cw_progress(q)) != RIVER_SUCCESS
        && rc != RIVER_ECORRUPT)
      return rc;
    more = river__dq_cw_busy(q, cw_expected);
    if (q->role & RIVER_DQ_PRODUCER) {
      if ((rc = river__dq_send_progress(q)) != RIVER_SUCCESS
          && rc != RIVER_ECORRUPT)
        return rc;
      more |= q->sactive > 0;
    }
    if (q->role & RIVER_DQ_CONSUMER) {
      /* A malformed arrival is reported (its slot re-posted, counted as
       * arrived), not a reason to stop: with few receives posted, the
       * producers' last sends match only while this loop re-posts. */
      if ((rc = river__dq_recv_progress(q)) != RIVER_SUCCESS
          && rc != RIVER_ECORRUPT)
        return rc;
      if (rc != RIVER_SUCCESS && first == RIVER_SUCCESS)
        first = rc;
      if ((rc = river__dq_drop_waiting(q)) != RIVER_SUCCESS)
        return rc;
      for (p = 0; p < q->nprod && !more; p++)
        more = !all_arrived(q, p);
    }
    if (!more) {
      rc = river__dq_cw_check_sent(q, q->cw_count);
      return first != RIVER_SUCCESS ? first : rc;
    }
    if (river__backoff(&ns) != RIVER_SUCCESS)
      return river__dq_timeout(q, "a queue's destroy waiting for its "
                                  "last messages");
  }
}

int river_dq_destroy(river_dq *q)
{
  int rc = RIVER_SUCCESS, r;

  if (q == NULL)
    return RIVER_SUCCESS;
  tick_unregister(q);
  if ((q->role & RIVER_DQ_PRODUCER) && !q->closed) {
    river__error("dq destroy: producer %d did not close", q->pidx);
    rc = RIVER_ESTATE;
  }
  if ((q->role & RIVER_DQ_CONSUMER) && q->aborted) {
    rc = RIVER_ESTATE;   /* said when its get learnt it, or by the
                            producer that did not close */
  } else if ((q->role & RIVER_DQ_CONSUMER) && !q->eos_seen) {
    river__error("dq destroy: consumer %d did not reach end of stream",
                 q->cidx);
    rc = RIVER_ESTATE;
  }
  if ((r = drain(q)) != RIVER_SUCCESS && r < rc)
    rc = r;
  if ((r = river__dq_cancel_recvs(q)) != RIVER_SUCCESS && r < rc)
    rc = r;
  if ((r = river__dq_cw_cancel(q)) != RIVER_SUCCESS && r < rc)
    rc = r;
  rc = river__agree(q->comm, rc);
  if (river__watchdog_fired()) {
    /* Some rank may never answer: its messages and window stay MPI's
     * (freeing the window is collective and would wait forever). */
    river__orphan(q);
    return RIVER_ETIMEDOUT;
  }
  free_queue(q);
  return rc;
}

/* --------------------------------------------------------------- stats */

int river_dq_stats_get(const river_dq *q, river_dq_stats *stats)
{
  int p;

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
  stats->credits_paced = q->credits_paced;
  stats->messages_static = q->messages_static;
  stats->credit_path = q->path;
  stats->memory_bytes = q->mem_peak;
  stats->peer_steps = q->peer_steps;
  for (p = 0; q->ring != NULL && p < q->nring; p++)
    stats->messages_waiting += q->ring[p] >= 0;
  for (p = 0; q->eos_full != NULL && p < q->nprod; p++)
    stats->messages_waiting += q->eos_full[p];
  return RIVER_SUCCESS;
}
