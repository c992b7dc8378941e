/*
 * dq_recv.c - a consumer's posted DATA receives (dq_internal.h,
 * "Consumer"): their slots and buffers, posting one, posting them all
 * at create, growing them (PULL on the MSG path, before it asks for
 * one more unit: dq_credit.c), and cancelling them at destroy. Below
 * dq_consumer.c, which takes in what they receive, and dq_credit.c,
 * which grows them; it calls neither.
 */
#include "dq_internal.h"

#include <stdlib.h>

/* Receive slot k's buffer (slots swap buffers with the spare: deliver);
 * slot nrslots + p is producer p's EOS with records. */
unsigned char *river__dq_recv_slot(const river_dq *q, int k)
{
  return k < q->nrslots ? q->rptr[k] : q->eos_buf[k - q->nrslots];
}

/* Post receive slot k: a slot below nrslots takes DATA from any
 * producer, slot nrslots + p producer p's EOS. */
int river__dq_post_recv(river_dq *q, int k)
{
  int src = k < q->nrslots ? MPI_ANY_SOURCE : q->prod_rank[k - q->nrslots];
  int tag = k < q->nrslots ? DQ_TAG_DATA : DQ_TAG_EOS;

  if (river__watchdog_fired())   /* nothing new starts (src/agree.c) */
    return RIVER_ETIMEDOUT;
  if (MPI_Irecv(river__dq_recv_slot(q, k), (int)q->message_size, MPI_BYTE,
                src, tag, q->comm, &q->rreq[k]) != MPI_SUCCESS) {
    river__error("dq: MPI_Irecv failed");
    return RIVER_EMPI;
  }
  return RIVER_SUCCESS;
}

/* Post DATA receives up to want (dq_internal.h). */
int river__dq_grow_recvs(river_dq *q, int want)
{
  int old = q->nrslots, add, k;
  unsigned char **rptr, **grown, *buf[64];
  MPI_Request *rreq;
  MPI_Status *rstat;
  int *ridx;

  want = want < q->nring ? want : q->nring;
  if (want <= old)
    return RIVER_SUCCESS;
  add = want - old;
  if (add > 64) {   /* in steps: buf[] holds one step's buffers */
    int rc = river__dq_grow_recvs(q, old + 64);
    return rc != RIVER_SUCCESS ? rc : river__dq_grow_recvs(q, want);
  }
  for (k = 0; k < add; k++)
    if ((buf[k] = river__dq_buffers(q, q->stride)) == NULL) {
      while (k-- > 0) {
        free(buf[k]);
        river__dq_mem_add(q, -(int64_t)q->stride);
      }
      river__error("dq: no memory for %d more posted receives", add);
      return RIVER_ENOMEM;
    }
  rptr = realloc(q->rptr, (size_t)want * sizeof *rptr);
  if (rptr != NULL)
    q->rptr = rptr;
  rreq = rptr ? realloc(q->rreq, (size_t)want * sizeof *rreq) : NULL;
  if (rreq != NULL)
    q->rreq = rreq;
  ridx = rreq ? realloc(q->ridx, (size_t)want * sizeof *ridx) : NULL;
  if (ridx != NULL)
    q->ridx = ridx;
  rstat = ridx ? realloc(q->rstat, (size_t)want * sizeof *rstat) : NULL;
  if (rstat != NULL)
    q->rstat = rstat;
  grown = rstat ? realloc(q->grown, (size_t)(q->ngrown + add)
                                        * sizeof *grown) : NULL;
  if (grown == NULL) {
    for (k = 0; k < add; k++) {
      free(buf[k]);
      river__dq_mem_add(q, -(int64_t)q->stride);
    }
    river__error("dq: no memory for %d more posted receives", add);
    return RIVER_ENOMEM;
  }
  q->grown = grown;
  river__dq_mem_add(q, (int64_t)add * (int64_t)(sizeof *rptr + sizeof *rreq
                                               + sizeof *ridx
                                               + sizeof *rstat
                                               + sizeof *grown));
  for (k = 0; k < add; k++) {
    q->rptr[old + k] = buf[k];
    q->rreq[old + k] = MPI_REQUEST_NULL;
    q->grown[q->ngrown++] = buf[k];
  }
  /* An EOS's records lent out are slot nrslots + p: its number moves. */
  if (q->held >= old)
    q->held += add;
  q->nrslots = q->nrreq = want;
  for (k = old; k < want; k++)
    if (river__dq_post_recv(q, k) != RIVER_SUCCESS)
      return RIVER_EMPI;
  river__debug("dq: consumer %d: %d receives posted", q->cidx, want);
  return RIVER_SUCCESS;
}

int river__dq_post_recvs(river_dq *q)
{
  int k, rc = RIVER_SUCCESS;

  for (k = 0; rc == RIVER_SUCCESS && k < q->nrreq; k++)
    rc = river__dq_post_recv(q, k);
  return rc;
}

/* Cancel and complete this rank's posted receives (none can match any
 * more when this is called). */
int river__dq_cancel_recvs(river_dq *q)
{
  int k, rc = RIVER_SUCCESS;

  if (q->rreq == NULL)
    return RIVER_SUCCESS; /* its allocation failed: nothing was posted */
  for (k = 0; k < q->nrreq; k++)
    if (q->rreq[k] != MPI_REQUEST_NULL && MPI_Cancel(&q->rreq[k])
                                              != MPI_SUCCESS)
      rc = RIVER_EMPI;
  if (q->nrreq > 0 && river_waitall(q->nrreq, q->rreq) != RIVER_SUCCESS)
    rc = RIVER_EMPI;
  /* An EOS receive in flight was matched: it cannot be cancelled, and
   * completes as its producer's message comes (q frees its buffer). */
  if (q->n_eos_req > 0 && river_waitall(q->n_eos_req, q->eos_req)
                              != RIVER_SUCCESS)
    rc = RIVER_EMPI;
  return rc;
}
