/*
 * river/dq.h - distributed queues: records from producers to consumers,
 * each side at its own pace.
 *
 * A queue lives on a communicator; each rank is a producer, a consumer or
 * both. Producers river_dq_put() records, which River batches into
 * messages (default 256 KiB of whole records); consumers river_dq_get() a
 * message at a time. Guarantees, for every policy:
 *
 *   - exactly once: every record put is delivered to exactly one consumer
 *     (to every consumer for RIVER_DQ_BROADCAST), none invented;
 *   - FIFO per (producer, consumer): messages from one producer reach a
 *     consumer in the order sent, even though MPI may complete several
 *     posted receives out of order (River checks sequence numbers);
 *   - end of stream only after all data: river_dq_get returns RIVER_EOS
 *     once every producer has closed and every message has been delivered;
 *   - bounded memory: at most `credits` unreleased messages per (producer,
 *     consumer) pair, plus the last one, which river_dq_close sends with
 *     the end-of-stream without waiting for a credit; so at most
 *     (credits + 1) x message_size per peer;
 *   - no spinning: blocked calls test and sleep with backoff
 *     (river/wait.h), so a blocked rank uses a few percent of a core.
 *
 * Flow control (all policies): every producer owns an RMA window
 * (MPI_Win_allocate, passive target, locked once with MPI_Win_lock_all)
 * holding, per consumer, the number of messages that consumer has
 * finished with; consumers add to it with MPI_Accumulate. A producer sends
 * to consumer c only while sent[c] - returned[c] < credits.
 *
 * Policies (how a producer picks the consumer of a full message):
 *   RIVER_DQ_PUSH        at random among consumers with a free credit:
 *                        faster consumers return credits sooner and so
 *                        receive more (River's adaptive default);
 *   RIVER_DQ_STATIC      round-robin by message, waiting for the chosen
 *                        consumer's credit: the static-partition baseline,
 *                        on the same code path;
 *   RIVER_DQ_EXCHANGE    by record: a partition function of the record
 *                        picks the consumer (range or hash; m x n);
 *   RIVER_DQ_ONE_TO_ONE  producer i sends to consumer i (needs as many
 *                        producers as consumers);
 *   RIVER_DQ_BROADCAST   every consumer gets every record.
 *
 * A rank that is both producer and consumer returns credits only when it
 * gets, so it must not block in river_dq_put while its own consumer side
 * waits to be drained: it interleaves river_dq_try_put and
 * river_dq_try_get. river_dq_close never waits for a credit, so any rank
 * can close.
 *
 * Handles are not thread-safe. river_dq_create and river_dq_destroy are
 * collective over the communicator; the rest are local.
 *
 * Part of the River API; include <river.h> rather than this file.
 */
#ifndef RIVER_DQ_H
#define RIVER_DQ_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include "river/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RIVER_DQ_PRODUCER 1
#define RIVER_DQ_CONSUMER 2

#define RIVER_DQ_DEFAULT_CREDITS 4
#define RIVER_DQ_DEFAULT_MESSAGE_SIZE ((size_t)256 << 10)

typedef enum river_dq_policy {
  RIVER_DQ_PUSH = 0,
  RIVER_DQ_STATIC = 1,
  RIVER_DQ_EXCHANGE = 2,
  RIVER_DQ_ONE_TO_ONE = 3,
  RIVER_DQ_BROADCAST = 4
} river_dq_policy;

/* For RIVER_DQ_EXCHANGE: the consumer index (0..nconsumers-1) of a
 * record. Must be a pure function of the record's bytes. */
typedef int (*river_dq_partition_fn)(const void *record, int nconsumers,
                                     void *ctx);

typedef struct river_dq_opts {
  river_dq_policy policy;
  int credits;            /* messages per (producer, consumer) not yet
                             released; 0 = RIVER_DQ_DEFAULT_CREDITS */
  size_t message_size;    /* bytes per message (whole records fit);
                             0 = RIVER_DQ_DEFAULT_MESSAGE_SIZE */
  uint64_t seed;          /* for RIVER_DQ_PUSH's random choices */
  river_dq_partition_fn partition; /* RIVER_DQ_EXCHANGE only */
  void *partition_ctx;
} river_dq_opts;

#define RIVER_DQ_OPTS_INIT {RIVER_DQ_PUSH, 0, 0, 0, NULL, NULL}

/* Per-rank counters (river_dq_stats). Arrays are indexed by consumer
 * (msgs_to) or producer (msgs_from) index and owned by the queue. */
typedef struct river_dq_stats {
  uint64_t records_out, bytes_out, messages_out;  /* as a producer */
  uint64_t records_in, bytes_in, messages_in;     /* as a consumer */
  const uint64_t *msgs_to;      /* nconsumers entries, or NULL */
  const uint64_t *msgs_from;    /* nproducers entries, or NULL */
  uint64_t credit_stalls;       /* times a full message found no credit */
  double put_wait_seconds;      /* time blocked in put/close */
  double get_wait_seconds;      /* time blocked in get */
  int nproducers, nconsumers;
  int producer_index, consumer_index;  /* -1 if not in that role */
} river_dq_stats;

typedef struct river_dq river_dq;

/*
 * Create a queue over comm (collective). role is RIVER_DQ_PRODUCER,
 * RIVER_DQ_CONSUMER or both OR-ed; a rank may also pass 0 (neither) to
 * take part in the collective calls only. Producer and consumer indices
 * follow rank order within each role. record_size must be > 0 and fit
 * the message size. Every rank must pass the same record_size and opts
 * (RIVER_EINVAL on every rank otherwise); the queue needs at least one
 * producer and one consumer.
 */
RIVER_API int river_dq_create(MPI_Comm comm, int role, size_t record_size,
                              const river_dq_opts *opts, river_dq **out);

/* Put nrecords records (producer; RIVER_EINVAL on a rank that is not
 * one). Blocks, without spinning, while the message being filled has
 * nowhere to go. */
RIVER_API int river_dq_put(river_dq *q, const void *records, size_t nrecords);

/* Like river_dq_put, but returns RIVER_EAGAIN instead of blocking; then
 * none of the records was taken. Records that could not go at once even
 * with every credit free (they would fill more messages than `credits`
 * for one consumer, or, for PUSH and STATIC, for all consumers together)
 * give RIVER_ENOBUFS, also taking none: put fewer at a time. */
RIVER_API int river_dq_try_put(river_dq *q, const void *records,
                               size_t nrecords);

/* Send what is buffered and end this producer's stream (an end-of-stream
 * to every consumer). Blocks until every message has been sent, but never
 * for a credit. Put after close is RIVER_ESTATE. */
RIVER_API int river_dq_close(river_dq *q);

/*
 * Get the next message (consumer): *records points at *nrecords whole
 * records, borrowed until river_dq_release or the next get. Releasing
 * (explicitly or by the next get) returns the credit to its producer.
 * Returns RIVER_EOS when every producer has closed and all data has been
 * delivered (and again on later calls). If from is not NULL it gets the
 * producer index. Outputs are set only on RIVER_SUCCESS. RIVER_EINVAL on
 * a rank that is not a consumer.
 */
RIVER_API int river_dq_get(river_dq *q, const void **records,
                           size_t *nrecords, int *from);

/* Like river_dq_get, but returns RIVER_EAGAIN if no message is ready. */
RIVER_API int river_dq_try_get(river_dq *q, const void **records,
                               size_t *nrecords, int *from);

/* Give back the message from the last get (no-op if none is held). */
RIVER_API int river_dq_release(river_dq *q);

/* This rank's counters so far. */
RIVER_API int river_dq_stats_get(const river_dq *q, river_dq_stats *stats);

/*
 * Free the queue: collective over the ranks of the communicator it was
 * created on. Producers must have closed and consumers must have seen
 * RIVER_EOS first (RIVER_ESTATE otherwise; the queue is freed all the
 * same, and every rank gets the same code). NULL is a no-op.
 */
RIVER_API int river_dq_destroy(river_dq *q);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_DQ_H */
