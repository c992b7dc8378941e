/*
 * dq_credit.c - a distributed queue's credit words, on either of two
 * paths (dq_internal.h, "Credit paths"): an RMA window (RMA: passive
 * target atomics, no help from the window's owner) or two-sided messages
 * (MSG: the owner keeps its words in plain memory and applies what others
 * send it). Every access to the words goes through here, so the
 * producer and consumer files are the same on both paths.
 *
 * Words live on producers: consumer c's credit word (returned credits
 * and rate field) at index c, and after them PUSH's wake word or PULL's
 * claimed/announced counters and owner ring (dq_internal.h). Only three
 * things ever reach another rank's words: a consumer adds to its credit
 * word (return_credits), a producer adds 1 to another's wake word
 * (tell_wake), and a PULL consumer claims a unit (claimed += 1, owner
 * word += its index + 1). On the MSG path the first two are one message
 * kind (ADD) and the claim another (CLAIM, answered by a REPLY):
 *
 *   ADD   {DQ_CW_ADD, credit, wake, 0}  from any rank to producer p:
 *         p adds credit to the sender's credit word (the sender's
 *         consumer index, found from its rank), wake to its wake word;
 *   CLAIM {DQ_CW_CLAIM, 0, 0, 0}        from a PULL consumer: p takes its
 *         next unclaimed announced unit for it, if any, and answers
 *   REPLY {1, unit} or {0, 0}           on DQ_TAG_REPLY.
 *
 * Each rank has at most one ADD in flight to each producer: what it adds
 * while one is in flight is summed (the words only ever add, modulo
 * 2^64, and only this rank adds to its credit word) and goes when that
 * send completes, so a producer's unexpected messages are bounded by its
 * number of peers, and a consumer's memory by its producers. A producer
 * applies what has come before it reads its own words (and in every
 * River wait of the rank: the backoff hook, below), so a claim needs the
 * producer to be in River now and then, as any queue call or wait is:
 * a producer busy outside River delays its answer, never loses it, and
 * meanwhile the consumer asks other producers (msg_claim: at most one
 * claim in flight to each; a grant that comes late is still taken).
 * A claim is atomic at the producer, so PULL's race for the last
 * announced unit (dq_internal.h) cannot happen on this path. A rank's
 * words and its own adds to them (a rank in both roles) are plain
 * memory: River's handles are single-threaded.
 *
 * Destroy counts the credit messages (and claims) each rank sent each
 * other beside the data messages (dq.c, drain), an ADD still waiting
 * behind an unfinished send included: a producer serves until it has
 * had them all, everyone until its sends completed (a consumer's claim
 * sends and reply receives too, one per producer at most, whether its
 * answer was awaited or not: river__dq_cw_busy), so nothing of the
 * queue is in flight when its receive is cancelled (a count short of
 * what went is reported: river__dq_cw_check_sent).
 */
#include "dq_internal.h"
#include "rma.h"

#include <stdlib.h>
#include <string.h>

#define DQ_CW_ADD 1u
#define DQ_CW_CLAIM 2u
#define DQ_CW_WORDS 4  /* words of an ADD or CLAIM message */

static const char *path_name(int path)
{
  return path == RIVER_DQ_CREDITS_RMA ? "rma" : "msg";
}

const char *river__dq_path_name(const river_dq *q)
{
  return path_name(q->path);
}

/* ------------------------------------------------------ choosing a path */

/* RIVER_DQ_CREDITS: 0 auto (unset or "auto"), RIVER_DQ_CREDITS_RMA,
 * RIVER_DQ_CREDITS_MSG, or -1 (logged) for anything else. */
static int path_wanted(void)
{
  const char *v = getenv("RIVER_DQ_CREDITS");

  if (v == NULL || *v == '\0' || strcmp(v, "auto") == 0)
    return 0;
  if (strcmp(v, "rma") == 0)
    return RIVER_DQ_CREDITS_RMA;
  if (strcmp(v, "msg") == 0)
    return RIVER_DQ_CREDITS_MSG;
  river__error("dq create: RIVER_DQ_CREDITS=%s: expected auto, rma or msg",
               v);
  return -1;
}

/* The MSG path's PULL state: a producer's replies, a consumer's claims
 * (one to each producer at most); RIVER_SUCCESS or RIVER_ENOMEM. */
static int msg_alloc_pull(river_dq *q)
{
  int np = q->nprod, k;

  if (q->role & RIVER_DQ_PRODUCER) {
    q->rep_buf = river__dq_calloc(q, (size_t)q->ncons * 2, sizeof(uint64_t));
    q->rep_req = river__dq_calloc(q, (size_t)q->ncons, sizeof(MPI_Request));
    if (q->rep_buf == NULL || q->rep_req == NULL)
      return RIVER_ENOMEM;
    for (k = 0; k < q->ncons; k++)
      q->rep_req[k] = MPI_REQUEST_NULL;
    if (river__test_fault("dq-claim-deaf")
        && (q->claim_held = river__dq_calloc(q, (size_t)q->ncons, 1)) == NULL)
      return RIVER_ENOMEM;
  }
  if (q->role & RIVER_DQ_CONSUMER) {
    q->claim_rep = river__dq_calloc(q, (size_t)np * 2, sizeof(uint64_t));
    q->claim_sreq = river__dq_calloc(q, (size_t)np, sizeof(MPI_Request));
    q->claim_rreq = river__dq_calloc(q, (size_t)np, sizeof(MPI_Request));
    q->claim_at = river__dq_calloc(q, (size_t)np, sizeof(double));
    if (q->claim_rep == NULL || q->claim_sreq == NULL
        || q->claim_rreq == NULL || q->claim_at == NULL)
      return RIVER_ENOMEM;
    for (k = 0; k < np; k++)
      q->claim_sreq[k] = q->claim_rreq[k] = MPI_REQUEST_NULL;
    /* Never changed: claims to several producers may be in flight. */
    q->claim_msg[0] = DQ_CW_CLAIM;
  }
  return RIVER_SUCCESS;
}

/* The MSG path's state; RIVER_SUCCESS or RIVER_ENOMEM. */
static int msg_alloc(river_dq *q, size_t words)
{
  int np = q->nprod, k;

  q->winmem = river__dq_calloc(q, words > 0 ? words : 1, sizeof(uint64_t));
  q->cw_sbuf = river__dq_calloc(q, (size_t)np * DQ_CW_WORDS, sizeof(uint64_t));
  q->cw_pend = river__dq_calloc(q, (size_t)np * 3, sizeof(uint64_t));
  q->cw_sreq = river__dq_calloc(q, (size_t)np, sizeof(MPI_Request));
  q->cw_has = river__dq_calloc(q, (size_t)np, 1);
  q->cw_wait = river__dq_calloc(q, (size_t)np, sizeof *q->cw_wait);
  /* Destroy's counts (credit_count): taken here, where failing is
   * agreed, so that no rank can miss destroy's collective for want of
   * them. */
  q->cw_count = river__dq_calloc(q, (size_t)q->size, sizeof(uint64_t));
  if (q->winmem == NULL || q->cw_sbuf == NULL || q->cw_pend == NULL
      || q->cw_sreq == NULL || q->cw_has == NULL || q->cw_wait == NULL
      || q->cw_count == NULL)
    return RIVER_ENOMEM;
  q->cw_sent = q->cw_pend + 2 * (size_t)np;
  for (k = 0; k < np; k++)
    q->cw_sreq[k] = MPI_REQUEST_NULL;
  q->cw_rreq = MPI_REQUEST_NULL;
  q->claim_p = -1;
  q->cw_late = river__test_fault("dq-credit-late");
  return DQ_DOES(q, DQ_P_UNITS) ? msg_alloc_pull(q) : RIVER_SUCCESS;
}

/* A producer's one posted credit receive (from anyone). */
static int post_cw(river_dq *q)
{
  if (river__watchdog_fired())   /* nothing new starts (src/agree.c) */
    return RIVER_ETIMEDOUT;
  if (MPI_Irecv(q->cw_rbuf, DQ_CW_WORDS, MPI_UINT64_T, MPI_ANY_SOURCE,
                DQ_TAG_CREDIT, q->comm, &q->cw_rreq) != MPI_SUCCESS) {
    river__error("dq: posting the credit receive failed");
    return RIVER_EMPI;
  }
  return RIVER_SUCCESS;
}

/* Set once a window over ranks on several nodes could not be made in
 * this process: the next queues that span nodes do not try again (a
 * failed MPI_Win_allocate between two emulated nodes took about 2 s, and
 * test_flow_mpi's many small queues took 201 s instead of 81). */
static int spanning_window_failed;

/* 1 if comm's ranks are on more than one node (as MPI sees nodes). */
static int spans_nodes(MPI_Comm comm)
{
  MPI_Comm node;
  int size = 0, nsize = -1;

  MPI_Comm_size(comm, &size);
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                          &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
  }
  return nsize != size;
}

int river__dq_credits_setup(river_dq *q, size_t words, int rc)
{
  int mine[3], all[3], r;

  if (river__watchdog_fired())   /* nothing new starts (src/agree.c) */
    return RIVER_ETIMEDOUT;
  mine[0] = path_wanted();
  mine[1] = spans_nodes(q->comm);
  mine[2] = spanning_window_failed;
  if (mine[0] < 0 && rc == RIVER_SUCCESS)
    rc = RIVER_EINVAL;
  /* The strongest wish wins (msg over rma over auto), so the path is
   * the same on every rank even where the variable differs; so do
   * "spans nodes" and "such a window failed here before" (any rank). */
  if ((r = river__allreduce(mine, all, 3, MPI_INT, MPI_MAX, q->comm))
      != RIVER_SUCCESS)
    return river__agree(q->comm, r);
  if ((rc = river__agree(q->comm, rc)) != RIVER_SUCCESS)
    return rc;
  if (all[0] == 0 && all[1] && all[2]) {
    all[0] = RIVER_DQ_CREDITS_MSG;
    river__debug("dq: no RMA window spanned nodes before: credits by "
                 "two-sided messages");
  }
  if (all[0] != RIVER_DQ_CREDITS_MSG) {
    /* The counters start at zero, and that is visible to RMA before any
     * rank leaves river__win_allocate: a consumer returns its first
     * credit only after a message this producer sent after create. */
    r = river__win_allocate(q->comm, words * sizeof(uint64_t),
                            (int)sizeof(uint64_t), all[0] == 0, &q->winmem,
                            &q->win);
    if (r == RIVER_SUCCESS) {
      river__dq_mem_add(q, (int64_t)(words * sizeof(uint64_t)));
      q->path = RIVER_DQ_CREDITS_RMA;
      river__debug("dq: credits in an RMA window%s",
                   all[0] == 0 ? "" : " (RIVER_DQ_CREDITS=rma)");
      return RIVER_SUCCESS;
    }
    if (all[0] == RIVER_DQ_CREDITS_RMA || r == RIVER_ETIMEDOUT
        || r == RIVER_EBUSY || r == RIVER_EACCES)
      return r;   /* agreed by river__win_allocate */
    if (all[1])
      spanning_window_failed = 1;
    river__debug("dq: no RMA window over the queue's ranks: credits by "
                 "two-sided messages");
  } else {
    river__debug("dq: credits by two-sided messages (RIVER_DQ_CREDITS=msg)");
  }
  q->winmem = NULL;
  q->path = RIVER_DQ_CREDITS_MSG;
  rc = msg_alloc(q, words);
  if (rc == RIVER_SUCCESS && (q->role & RIVER_DQ_PRODUCER))
    rc = post_cw(q);
  /* Where another rank failed, the receive posted here goes again:
   * nothing of the queue may stay posted once it is freed. */
  if ((rc = river__agree(q->comm, rc)) != RIVER_SUCCESS)
    river__dq_cw_cancel(q);
  return rc;
}

void river__dq_credits_free(river_dq *q)
{
  /* Rate words still being read: done before the window goes (not
   * once the watchdog fired: a stopped target's read may never end,
   * and river__win_free skips its collective free then too). */
  if (q->npub > 0 && !river__watchdog_fired()
      && river__dq_pub_poll(q, 1) != RIVER_SUCCESS)
    river__error("dq destroy: a rate word's read did not complete");
  river__win_free(&q->win);
  if (q->path == RIVER_DQ_CREDITS_MSG)
    free(q->winmem);
  q->winmem = NULL;
  free(q->cw_sbuf);
  free(q->cw_pend);
  free(q->cw_sreq);
  free(q->cw_has);
  free(q->cw_wait);
  free(q->rep_buf);
  free(q->rep_req);
  free(q->claim_rep);
  free(q->claim_sreq);
  free(q->claim_rreq);
  free(q->claim_at);
  free(q->claim_held);
}

/* --------------------------------------------------------- serving (MSG) */

/* The consumer index of comm rank r, or -1: consumer indices follow
 * rank order, so cons_rank is sorted. */
static int cidx_of(const river_dq *q, int r)
{
  int lo = 0, hi = q->ncons - 1, mid;

  while (lo <= hi) {
    mid = lo + (hi - lo) / 2;
    if (q->cons_rank[mid] == r)
      return mid;
    if (q->cons_rank[mid] < r)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

/* PULL, at this producer: consumer c claims the next announced unit not
 * claimed yet; 1 and its number in *unit, or 0 if there is none. */
static int claim_here(river_dq *q, int c, uint64_t *unit)
{
  uint64_t *w = q->winmem;

  if (w[DQ_W_CLAIM(q)] >= w[DQ_W_ANN(q)])
    return 0;
  *unit = w[DQ_W_CLAIM(q)]++;
  w[DQ_W_OWNER(q, *unit)] += (uint64_t)c + 1;
  return 1;
}

/* Answer consumer c's claim (its rank r). The reply before it to c has
 * been received (c asks again only after that), so its send completes
 * locally: MPI_Wait cannot wait for anyone. */
static int reply_claim(river_dq *q, int c, int r)
{
  uint64_t *b = q->rep_buf + 2 * (size_t)c;

  if (q->rep_req[c] != MPI_REQUEST_NULL
      && MPI_Wait(&q->rep_req[c], MPI_STATUS_IGNORE) != MPI_SUCCESS)
    return RIVER_EMPI;
  b[0] = (uint64_t)claim_here(q, c, &b[1]);
  if (!b[0])
    b[1] = 0;
  if (river__watchdog_fired())   /* nothing new starts (src/agree.c) */
    return RIVER_ETIMEDOUT;
  if (MPI_Isend(b, 2, MPI_UINT64_T, r, DQ_TAG_REPLY, q->comm,
                &q->rep_req[c]) != MPI_SUCCESS)
    return RIVER_EMPI;
  return RIVER_SUCCESS;
}

/* Apply one message that came to this producer from rank r. */
static int apply(river_dq *q, const uint64_t *m, int r)
{
  int c = cidx_of(q, r);

  if (m[0] == DQ_CW_ADD && (m[1] == 0 || c >= 0)) {
    if (m[1] != 0)
      q->winmem[c] += m[1];
    if (m[2] != 0)
      q->winmem[DQ_W_WAKE(q)] += m[2];
    return RIVER_SUCCESS;
  }
  if (m[0] == DQ_CW_CLAIM && c >= 0 && q->rep_req != NULL) {
    if (q->claim_held != NULL && !q->draining) {
      q->claim_held[c] = 1;  /* test fault dq-claim-deaf */
      return RIVER_SUCCESS;
    }
    return reply_claim(q, c, r);
  }
  river__error("dq: a malformed credit message (kind %llu) from rank %d",
               (unsigned long long)m[0], r);
  return RIVER_ECORRUPT;
}

/* Send what waits for producer p, if the last send to it completed. */
static int push(river_dq *q, int p)
{
  uint64_t *m = q->cw_sbuf + (size_t)p * DQ_CW_WORDS;
  int done = 1;

  if (!(q->cw_has[p] & DQ_CW_PENDING))
    return RIVER_SUCCESS;
  if (q->cw_sreq[p] != MPI_REQUEST_NULL
      && MPI_Test(&q->cw_sreq[p], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
    return RIVER_EMPI;
  /* Test fault dq-credit-late: every send after the first to p stays
   * unfinished until destroy, as one queued behind data on a busy link
   * would (what a consumer adds meanwhile waits in cw_pend). */
  if (q->cw_late && !q->draining && q->cw_sent[p] > 0)
    done = 0;
  if (!done)
    return RIVER_SUCCESS;
  if (river__watchdog_fired())   /* nothing new starts (src/agree.c) */
    return RIVER_ETIMEDOUT;
  m[0] = DQ_CW_ADD;
  m[1] = q->cw_pend[2 * (size_t)p];
  m[2] = q->cw_pend[2 * (size_t)p + 1];
  m[3] = 0;
  q->cw_pend[2 * (size_t)p] = q->cw_pend[2 * (size_t)p + 1] = 0;
  q->cw_has[p] &= (unsigned char)~DQ_CW_PENDING;
  if (MPI_Isend(m, DQ_CW_WORDS, MPI_UINT64_T, q->prod_rank[p],
                DQ_TAG_CREDIT, q->comm, &q->cw_sreq[p]) != MPI_SUCCESS) {
    river__error("dq: sending credits to rank %d failed", q->prod_rank[p]);
    return RIVER_EMPI;
  }
  q->cw_sent[p]++;
  return RIVER_SUCCESS;
}

/* Push what waits for the producers listed in cw_wait (those a credit
 * or wake add went to since they were last sent everything: not every
 * producer, so a message's work does not grow with them); those still
 * waiting stay listed. rc: the caller's so far. */
static int push_waiting(river_dq *q, int rc)
{
  int i, p, kept = 0;

  for (i = 0; i < q->ncw_wait; i++) {
    p = q->cw_wait[i];
    if (rc == RIVER_SUCCESS)
      rc = push(q, p);
    if (q->cw_has[p] & DQ_CW_PENDING)
      q->cw_wait[kept++] = p;
    else
      q->cw_has[p] = 0;
  }
  q->ncw_wait = kept;
  return rc;
}

int river__dq_cw_progress(river_dq *q)
{
  MPI_Status st;
  int done = 1, p, rc = RIVER_SUCCESS, r;

  if (q->path != RIVER_DQ_CREDITS_MSG)
    return RIVER_SUCCESS;
  if (q->tick_rc != RIVER_SUCCESS) {   /* the tick's, said once */
    rc = q->tick_rc;
    q->tick_rc = RIVER_SUCCESS;
    return rc;
  }
  while (q->cw_rreq != MPI_REQUEST_NULL) {
    if (MPI_Test(&q->cw_rreq, &done, &st) != MPI_SUCCESS)
      return RIVER_EMPI;
    if (!done)
      break;
    q->cw_recvd++;
    r = apply(q, q->cw_rbuf, st.MPI_SOURCE);
    if (r != RIVER_SUCCESS && rc == RIVER_SUCCESS)
      rc = r;
    if ((r = post_cw(q)) != RIVER_SUCCESS)
      return r;
  }
  rc = push_waiting(q, rc);
  for (p = 0; q->claim_held != NULL && q->draining && p < q->ncons; p++)
    if (q->claim_held[p] && rc == RIVER_SUCCESS) {
      q->claim_held[p] = 0;
      rc = reply_claim(q, p, q->cons_rank[p]);
    }
  return rc;
}

/* ------------------------------------------------------------ the words */

int river__dq_cw_read_own(river_dq *q, MPI_Aint off, int n, uint64_t *out)
{
  int rc;

  DQ_STEPS(q, n);
  if (q->path == RIVER_DQ_CREDITS_MSG) {
    if ((rc = river__dq_cw_progress(q)) != RIVER_SUCCESS)
      return rc;
    memcpy(out, q->winmem + off, (size_t)n * sizeof *out);
    return RIVER_SUCCESS;
  }
  if (MPI_Get_accumulate(q->zeros, n, MPI_UINT64_T, out, n, MPI_UINT64_T,
                         q->rank, off, n, MPI_UINT64_T, MPI_NO_OP, q->win)
          != MPI_SUCCESS
      || MPI_Win_flush(q->rank, q->win) != MPI_SUCCESS) {
    river__error("dq: reading the credit window failed");
    return RIVER_EMPI;
  }
  return RIVER_SUCCESS;
}

int river__dq_cw_add(river_dq *q, int p, MPI_Aint off, uint64_t add,
                     int flush)
{
  int r = q->prod_rank[p];

  if (q->path == RIVER_DQ_CREDITS_MSG) {
    if (r == q->rank) {
      q->winmem[off] += add;
      return RIVER_SUCCESS;
    }
    /* Only two words of another producer: this consumer's own credit
     * word, or the wake word. */
    q->cw_pend[2 * (size_t)p + (off == (MPI_Aint)q->cidx ? 0 : 1)] += add;
    if (!(q->cw_has[p] & DQ_CW_LISTED))
      q->cw_wait[q->ncw_wait++] = p;
    q->cw_has[p] = DQ_CW_PENDING | DQ_CW_LISTED;
    return push(q, p);
  }
  if (MPI_Accumulate(&add, 1, MPI_UINT64_T, r, off, 1, MPI_UINT64_T,
                     MPI_SUM, q->win) != MPI_SUCCESS
      || (flush && MPI_Win_flush(r, q->win) != MPI_SUCCESS)) {
    river__error("dq: adding to the credit window of rank %d failed", r);
    return RIVER_EMPI;
  }
  return RIVER_SUCCESS;
}

int river__dq_cw_flush_all(river_dq *q)
{
  if (q->path == RIVER_DQ_CREDITS_RMA
      && MPI_Win_flush_all(q->win) != MPI_SUCCESS) {
    river__error("dq: completing credit window updates failed");
    return RIVER_EMPI;
  }
  return RIVER_SUCCESS;
}

/* ------------------------------------------------- PUSH's rate words */

/* 1 if comm rank r is a producer (prod_rank is sorted: O(log nprod)). */
static int is_producer_rank(const river_dq *q, int r)
{
  int lo = 0, hi = q->nprod - 1, mid;

  while (lo <= hi) {
    mid = lo + (hi - lo) / 2;
    if (q->prod_rank[mid] == r)
      return 1;
    if (q->prod_rank[mid] < r)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return 0;
}

int river__dq_pub_write(river_dq *q, uint32_t f)
{
  uint64_t v = f;
  MPI_Aint off = DQ_W_PUB(q, (q->role & RIVER_DQ_PRODUCER) != 0);

  if (MPI_Accumulate(&v, 1, MPI_UINT64_T, q->rank, off, 1, MPI_UINT64_T,
                     MPI_REPLACE, q->win) != MPI_SUCCESS
      || MPI_Win_flush(q->rank, q->win) != MPI_SUCCESS) {
    river__error("dq: publishing the rate word failed");
    return RIVER_EMPI;
  }
  q->pub_told = f;
  return RIVER_SUCCESS;
}

int river__dq_pub_start(river_dq *q, int c)
{
  int r = q->cons_rank[c], k;

  for (k = 0; k < DQ_PUB_FLIGHT && q->pub_req[k] != MPI_REQUEST_NULL; k++)
    ;
  if (k == DQ_PUB_FLIGHT)
    return RIVER_SUCCESS;   /* asked at its next turn */
  if (MPI_Rget_accumulate(q->zeros, 1, MPI_UINT64_T, &q->pub_in[k], 1,
                          MPI_UINT64_T, r,
                          DQ_W_PUB(q, is_producer_rank(q, r)), 1,
                          MPI_UINT64_T, MPI_NO_OP, q->win, &q->pub_req[k])
      != MPI_SUCCESS) {
    river__error("dq: reading the rate word of rank %d failed", r);
    return RIVER_EMPI;
  }
  q->pub_c[k] = c;
  q->pub_t[k] = river_wtime();
  q->pub_at[c] = -1.0;   /* in flight: not asked again meanwhile */
  q->npub++;
  return RIVER_SUCCESS;
}

int river__dq_pub_poll(river_dq *q, int wait)
{
  int idx[DQ_PUB_FLIGHT], n = 0, k, c;
  uint32_t f;

  if (q->npub == 0)
    return RIVER_SUCCESS;
  DQ_STEPS(q, DQ_PUB_FLIGHT);
  /* Fixed slots, the free ones MPI_REQUEST_NULL: a read in flight keeps
   * its result buffer. One call for all of them: each MPI test drives
   * MPI's progress. */
  if (wait) {
    if (MPI_Waitall(DQ_PUB_FLIGHT, q->pub_req, MPI_STATUSES_IGNORE)
        != MPI_SUCCESS) {
      river__error("dq: reading the rate words failed");
      return RIVER_EMPI;
    }
    for (k = 0; k < DQ_PUB_FLIGHT; k++)
      if (q->pub_c[k] >= 0)
        idx[n++] = k;
  } else if (MPI_Testsome(DQ_PUB_FLIGHT, q->pub_req, &n, idx,
                          MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
    river__error("dq: reading the rate words failed");
    return RIVER_EMPI;   /* their state is MPI's: left as it is */
  } else if (n == MPI_UNDEFINED) {
    n = 0;
  }
  while (n > 0) {
    k = idx[--n];
    c = q->pub_c[k];
    f = (uint32_t)q->pub_in[k];
    q->pub[c] = f;
    q->pub_at[c] = q->pub_t[k];
    if (DQ_RATE_CODE(f) > q->code_ref)
      q->code_ref = DQ_RATE_CODE(f);
    q->pub_c[k] = -1;
    q->npub--;
  }
  return RIVER_SUCCESS;
}

/* ------------------------------------------------------- PULL's claims */

/* RMA: read producer rank r's claimed and announced counters; if a unit
 * is unclaimed, take the next unit number with MPI_Fetch_and_op(+1) on
 * claimed, then add this consumer's index + 1 to that unit's owner
 * word. 1 and the number in *unit if taken. (Consumers racing for the
 * last announced unit may take the number of a unit not announced yet:
 * the PULL paragraph of dq_internal.h.) */
static int rma_claim(river_dq *q, int r, uint64_t *unit)
{
  uint64_t zero[2] = {0, 0}, v[2], one = 1, want = (uint64_t)q->cidx + 1;

  if (MPI_Get_accumulate(zero, 2, MPI_UINT64_T, v, 2, MPI_UINT64_T, r,
                         DQ_W_CLAIM(q), 2, MPI_UINT64_T, MPI_NO_OP, q->win)
          != MPI_SUCCESS
      || MPI_Win_flush(r, q->win) != MPI_SUCCESS)
    return RIVER_EMPI;
  if (v[0] >= v[1])
    return 0;
  if (MPI_Fetch_and_op(&one, unit, MPI_UINT64_T, r, DQ_W_CLAIM(q), MPI_SUM,
                       q->win) != MPI_SUCCESS
      || MPI_Win_flush(r, q->win) != MPI_SUCCESS
      || MPI_Accumulate(&want, 1, MPI_UINT64_T, r, DQ_W_OWNER(q, *unit), 1,
                        MPI_UINT64_T, MPI_SUM, q->win) != MPI_SUCCESS
      || MPI_Win_flush(r, q->win) != MPI_SUCCESS)
    return RIVER_EMPI;
  return 1;
}

/* MSG: how long a claim's answer may take before the consumer asks the
 * next producer too. A producer answers in its next River call or wait
 * step, and River's waits sleep at most 1 ms a step, so an answer not
 * come in 10 ms means that producer is outside River (working, or
 * blocked in MPI or elsewhere), not slow to reply. Once every answer
 * awaited is that late, the idle consumer asks the next producer (then
 * waits up to as long for that one), and takes whichever grant comes
 * first. Not at the first poll without an answer: a round trip takes
 * longer than a poll, and every ask beyond the first can bring this
 * consumer a second unit, which then waits behind the first while
 * other consumers may idle (msg_claim). */
#define DQ_CLAIM_LATE 0.01

/* MSG: 1 if producer p holds nothing more for this consumer: its end of
 * stream came, and every message it sent here was delivered (a unit it
 * granted here has a message not delivered yet, which only its claimer
 * takes, after the grant: so its answer still awaited grants nothing). */
static int drained(const river_dq *q, int p)
{
  return q->eos_seq[p] != DQ_UNKNOWN && q->next[p] == q->eos_seq[p]
         && !q->eos_full[p];
}

/* MSG: units this idle consumer may still get from what it asked:
 * grants waiting, and claims in flight to producers not drained (a
 * drained one closed after its last unit's claim: it grants nothing). */
static int msg_units_may_come(river_dq *q)
{
  int p, n = 0;

  DQ_STEPS(q, q->nprod);
  for (p = 0; p < q->nprod; p++)
    n += q->claim_rreq[p] != MPI_REQUEST_NULL
             ? !drained(q, p)
             : q->claim_rep[2 * (size_t)p] != 0;
  return n;
}

/* MSG: ask producer p for a unit (a CLAIM; its REPLY is taken by
 * msg_answers), or claim at once where p is this rank. 1 and the number
 * in *unit if claimed now, 0 if not (asked, or nothing there). Before
 * it asks, here too, enough receives are posted for every unit that may
 * then be held: the messages of all but the one in progress may sit in
 * receives, credits each (dq.c, posted_data_receives). A unit claimed
 * here while another producer's answer is awaited is such a case: that
 * grant's messages may fill the receives this rank's own then need
 * (test_dq_msg_mpi, self). */
static int msg_claim_ask(river_dq *q, int p, uint64_t *unit)
{
  int r = q->prod_rank[p], rc;

  rc = river__dq_grow_recvs(q, q->credits * msg_units_may_come(q) + 1);
  if (rc != RIVER_SUCCESS)
    return rc == RIVER_ENOMEM ? RIVER_EMPI : rc;
  if (r == q->rank)
    return claim_here(q, q->cidx, unit);
  if (q->claim_sreq[p] != MPI_REQUEST_NULL /* the last ask was answered */
      && MPI_Wait(&q->claim_sreq[p], MPI_STATUS_IGNORE) != MPI_SUCCESS)
    return RIVER_EMPI;
  if (river__watchdog_fired())   /* nothing new starts (src/agree.c) */
    return RIVER_ETIMEDOUT;
  if (MPI_Irecv(q->claim_rep + 2 * (size_t)p, 2, MPI_UINT64_T, r,
                DQ_TAG_REPLY, q->comm, &q->claim_rreq[p]) != MPI_SUCCESS
      || MPI_Isend(q->claim_msg, DQ_CW_WORDS, MPI_UINT64_T, r,
                   DQ_TAG_CREDIT, q->comm, &q->claim_sreq[p])
             != MPI_SUCCESS)
    return RIVER_EMPI;
  q->cw_sent[p]++;
  q->claim_p = p;
  q->claim_at[p] = river_wtime();
  return 0;
}

/* MSG: take in the answers that came (a grant stays in claim_rep until
 * its unit is taken); *late: 1 unless some answer still awaited was
 * asked for less than DQ_CLAIM_LATE ago. A drained producer's answer is
 * not awaited: it stays posted (that producer has closed and is not
 * asked again) and destroy completes it (river__dq_cw_busy), so a
 * producer that closed and went on outside River holds no one up. */
static int msg_answers(river_dq *q, int *late)
{
  double now = river_wtime();
  int p, done;

  *late = 1;
  DQ_STEPS(q, q->nprod);
  for (p = 0; p < q->nprod; p++) {
    if (q->claim_rreq[p] == MPI_REQUEST_NULL)
      continue;
    if (MPI_Test(&q->claim_rreq[p], &done, MPI_STATUS_IGNORE)
        != MPI_SUCCESS)
      return RIVER_EMPI;
    if (!done && !drained(q, p) && now - q->claim_at[p] < DQ_CLAIM_LATE)
      *late = 0;
  }
  return RIVER_SUCCESS;
}

/* MSG: a producer whose grant waits here, taking turns after the last
 * unit's; -1 if none. */
static int msg_granted(river_dq *q)
{
  int i, p;

  for (i = 1; i <= q->nprod; i++) {
    p = (q->last_p + i) % q->nprod;
    DQ_STEPS(q, 1);
    if (q->claim_rreq[p] == MPI_REQUEST_NULL && q->claim_rep[2 * (size_t)p])
      return p;
  }
  return -1;
}

/* MSG: ask the next producer, after the one asked last, that has not
 * closed (close waited for its last unit's claim) and has no claim of
 * this consumer's in flight; where that is this rank, the claim is made
 * at once and, if there is no unit, the next one is asked. 1 (claimed
 * here: *pp, *unit), 0 (asked, or nobody to ask) or RIVER_EMPI. */
static int msg_ask_next(river_dq *q, int *pp, uint64_t *unit)
{
  int i, p, got, from = q->claim_p >= 0 ? q->claim_p : q->last_p;

  for (i = 1; i <= q->nprod; i++) {
    p = (from + i) % q->nprod;
    DQ_STEPS(q, 1);
    if (q->eos_seq[p] != DQ_UNKNOWN || q->claim_rreq[p] != MPI_REQUEST_NULL)
      continue;
    *pp = p;
    got = msg_claim_ask(q, p, unit);
    if (got != 0 || q->claim_rreq[p] != MPI_REQUEST_NULL)
      return got;
  }
  q->claim_p = -1;
  return 0;
}

/* MSG: an idle consumer's claim step: 1 (a unit: *pp, *unit), 0 (none
 * yet) or RIVER_EMPI. A grant that came is taken first, however late it
 * came: the producer gave that unit to this consumer alone. Else the
 * next producer is asked, unless an answer awaited is not late yet. So
 * at most one claim per producer is in flight, and a producer with a
 * grant waiting here is not asked again before its unit is taken:
 * units claimed by one consumer and not yet finished are at most one
 * per producer (one in progress, the others granted and waiting). A
 * consumer asks only while idle, so a grant beyond the first arrives
 * only when an answer was late. */
static int msg_claim(river_dq *q, int *pp, uint64_t *unit)
{
  int late, p;

  if (msg_answers(q, &late) != RIVER_SUCCESS)
    return RIVER_EMPI;
  if ((p = msg_granted(q)) >= 0) {
    *pp = p;
    *unit = q->claim_rep[2 * (size_t)p + 1];
    q->claim_rep[2 * (size_t)p] = 0;
    q->claim_p = -1;
    return 1;
  }
  return late ? msg_ask_next(q, pp, unit) : 0;
}

int river__dq_cw_claim(river_dq *q)
{
  uint64_t unit = 0;
  int i, p = -1, got = 0;

  if (q->path == RIVER_DQ_CREDITS_MSG)
    got = msg_claim(q, &p, &unit);
  /* RMA: every producer that has not closed (close waited for its last
   * unit's claim), in turn after the last unit's, until one grants. */
  for (i = 1; q->path == RIVER_DQ_CREDITS_RMA && got == 0 && i <= q->nprod;
       i++) {
    p = (q->last_p + i) % q->nprod;
    DQ_STEPS(q, 1);
    if (q->eos_seq[p] == DQ_UNKNOWN)
      got = rma_claim(q, q->prod_rank[p], &unit);
  }
  if (got == RIVER_ETIMEDOUT)
    return got;   /* the watchdog has fired: said where it fired */
  if (got < 0) {
    if (p >= 0)
      river__error("dq: claiming a unit at rank %d failed",
                   q->prod_rank[p]);
    else
      river__error("dq: testing for a claim's answer failed");
    return RIVER_EMPI;
  }
  if (got) {
    q->cur_p = p;
    q->cur_u = unit;
    q->last_p = p;
  }
  return RIVER_SUCCESS;
}

/* ------------------------------------------------------------- destroy */

int river__dq_cw_busy(river_dq *q, uint64_t expected)
{
  int done = 1, p, k;

  if (q->path != RIVER_DQ_CREDITS_MSG)
    return 0;
  if (q->cw_recvd < expected)
    return 1;
  for (k = 0; k < q->ncw_wait; k++)
    if (q->cw_has[q->cw_wait[k]] & DQ_CW_PENDING)
      return 1;
  for (p = 0; q->claim_rreq != NULL && p < q->nprod; p++)
    if ((q->claim_rreq[p] != MPI_REQUEST_NULL
         && (MPI_Test(&q->claim_rreq[p], &done, MPI_STATUS_IGNORE)
                 != MPI_SUCCESS || !done))
        || (q->claim_sreq[p] != MPI_REQUEST_NULL
            && (MPI_Test(&q->claim_sreq[p], &done, MPI_STATUS_IGNORE)
                    != MPI_SUCCESS || !done)))
      return 1;
  for (p = 0; p < q->nprod; p++)
    if (q->cw_sreq[p] != MPI_REQUEST_NULL
        && (MPI_Test(&q->cw_sreq[p], &done, MPI_STATUS_IGNORE)
                != MPI_SUCCESS || !done))
      return 1;
  for (k = 0; q->rep_req != NULL && k < q->ncons; k++)
    if (q->rep_req[k] != MPI_REQUEST_NULL
        && (MPI_Test(&q->rep_req[k], &done, MPI_STATUS_IGNORE)
                != MPI_SUCCESS || !done))
      return 1;
  return 0;
}

/* The count includes an ADD still waiting for the send before it to
 * complete (cw_has): it goes during the drain (busy waits for it), and
 * nothing adds after the count is taken (the tick is off; dropping
 * undelivered messages returns no credit). */
uint64_t river__dq_cw_sent_to(const river_dq *q, int p)
{
  return q->path == RIVER_DQ_CREDITS_MSG
         ? q->cw_sent[p] + ((q->cw_has[p] & DQ_CW_PENDING) != 0) : 0;
}

int river__dq_cw_check_sent(const river_dq *q, const uint64_t *count)
{
  uint64_t told;
  int p;

  for (p = 0; q->path == RIVER_DQ_CREDITS_MSG && p < q->nprod; p++) {
    told = count[q->prod_rank[p]];
    if (q->cw_sent[p] != told) {
      /* The producer stops serving at the count: a message after it
       * is left unmatched on the freed communicator. */
      river__error("dq destroy: %llu credit messages went to rank %d, "
                   "which was told %llu", (unsigned long long)q->cw_sent[p],
                   q->prod_rank[p], (unsigned long long)told);
      return RIVER_ECORRUPT;
    }
  }
  return RIVER_SUCCESS;
}

int river__dq_cw_cancel(river_dq *q)
{
  if (q->path != RIVER_DQ_CREDITS_MSG || q->cw_rreq == MPI_REQUEST_NULL)
    return RIVER_SUCCESS;
  if (MPI_Cancel(&q->cw_rreq) != MPI_SUCCESS
      || MPI_Wait(&q->cw_rreq, MPI_STATUS_IGNORE) != MPI_SUCCESS)
    return RIVER_EMPI;
  return RIVER_SUCCESS;
}
