/*
 * dq_mem.c - what every part of the distributed queue uses and that
 * uses none of them: the queue's memory, counted where it is taken
 * (river_dq_stats.memory_bytes; the formula is doc/design.md's "Queue
 * memory"), the peers a queue waits for (river_dq_waiting_for), and the
 * report of a queue that waits too long, naming them. Below dq.c,
 * dq_producer.c, dq_consumer.c, dq_recv.c and dq_credit.c
 * (dq_internal.h says what each holds).
 */
#include "dq_internal.h"

#include <stdlib.h>

/* Add bytes (negative: freed) to the queue's count, keeping its peak. */
void river__dq_mem_add(river_dq *q, int64_t bytes)
{
  q->mem_now = (size_t)((int64_t)q->mem_now + bytes);
  if (q->mem_now > q->mem_peak)
    q->mem_peak = q->mem_now;
}

/* calloc, counted in the queue's memory (freed with free). */
void *river__dq_calloc(river_dq *q, size_t n, size_t size)
{
  void *p = calloc(n, size);

  if (p != NULL)
    river__dq_mem_add(q, (int64_t)(n * size));
  return p;
}

/* n bytes of message buffers, starting on a page (dq_internal.h,
 * DQ_PAGE; freed with free), counted in the queue's memory. NULL if
 * there is no memory. */
unsigned char *river__dq_buffers(river_dq *q, size_t n)
{
  void *p;

  if (posix_memalign(&p, DQ_PAGE, n) != 0)
    return NULL;
  river__dq_mem_add(q, (int64_t)n);
  return p;
}

int river_dq_waiting_for(const river_dq *q, int *ranks, int max, int *n)
{
  int i, k = 0;

  if (q == NULL || n == NULL || max < 0 || (ranks == NULL && max > 0))
    return RIVER_EINVAL;
  /* Consumer: the producers whose end of stream has not come. Producer:
   * the consumers with no credit free or a send still in flight. */
  for (i = 0; (q->role & RIVER_DQ_CONSUMER) && i < q->nprod; i++)
    if (q->eos_seq[i] == DQ_UNKNOWN) {
      if (k < max)
        ranks[k] = q->prod_rank[i];
      k++;
    }
  for (i = 0; (q->role & RIVER_DQ_PRODUCER) && i < q->ncons; i++)
    if (((q->sent[i] - q->returned[i]) & DQ_COUNT_MASK)
            >= (uint64_t)q->credits
        || (q->closed && !q->close_done)) {
      if (k < max)
        ranks[k] = q->cons_rank[i];
      k++;
    }
  *n = k;
  return RIVER_SUCCESS;
}

/* RIVER_ETIMEDOUT, said once with (the first 64 of) the peers q waits
 * for and what it was doing (river__timeout_error). */
int river__dq_timeout(river_dq *q, const char *what)
{
  int ranks[64], n = 0;

  river_dq_waiting_for(q, ranks, 64, &n);
  return river__timeout_error(q->comm, ranks, n < 64 ? n : 64, what);
}
