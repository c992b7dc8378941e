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
 *   - bounded memory: at most `credits` messages per (producer, consumer)
 *     pair in flight or waiting at the consumer, plus the last one, which
 *     river_dq_close sends with the end-of-stream without waiting for a
 *     credit. Memory per rank does not grow with the peers' count
 *     beyond a few words per peer (doc/design.md, "Queue memory", has
 *     the formula; river_dq_stats' memory_bytes the count): a producer
 *     holds a pool of credits x 16 send buffers (RIVER_DQ_SEND_SLOTS; it
 *     doubles after 1 s with none free, up to one per credit at every
 *     consumer) and its fill buffer (EXCHANGE: one per consumer, smaller
 *     beyond 16 consumers); a consumer keeps only 2 data receives posted
 *     (RIVER_DQ_POSTED; PULL on the two-sided credit path: credits x
 *     producers) and holds at most 2 ends of stream with records, so it
 *     holds (2 + 1 + 2) x stride, one of them for the message
 *     river_dq_get has lent out (its credit goes back when get takes
 *     it, not at release); the other messages in
 *     flight wait at their producers (or, small enough to go eagerly, in
 *     MPI's buffers at the consumer: still credits per pair); stride
 *     is message_size rounded up to 64 bytes, or to whole 4 KiB pages
 *     from 4 KiB up, and each rank's message buffers start on a 4 KiB
 *     boundary, so a message of 4 KiB or more starts on one too;
 *   - no spinning: blocked calls test and sleep with backoff
 *     (river/wait.h), so a blocked rank uses a few percent of a core.
 *
 * Flow control (all policies): every producer owns an RMA window
 * (MPI_Win_allocate, passive target, locked once with MPI_Win_lock_all)
 * holding, per consumer, the number of messages that consumer has
 * taken (got); consumers add to it with MPI_Accumulate. A producer sends
 * to consumer c only while sent[c] - returned[c] < credits.
 *
 * Policies (how a producer picks the consumer of a full message; a
 * flow's edge kind picks one, river/flow.h):
 *   RIVER_DQ_PUSH        the least loaded consumer (the most free
 *                        credits; among equals the next in round-robin
 *                        order): faster consumers return credits sooner
 *                        and so receive more (River's adaptive default).
 *                        A producer starts dormant, in STATIC's order,
 *                        and stays so while no consumer is measured
 *                        slower (below). Beyond 64 consumers
 *                        (RIVER_DQ_READ_ALL sets the number) it looks
 *                        only at a window of the 4 from its round-robin
 *                        next, from the start (never dormant), so its
 *                        work per message does not grow with them;
 *   RIVER_DQ_STATIC      round-robin by message, waiting for the chosen
 *                        consumer's credit: the static-partition baseline,
 *                        on the same code path;
 *   RIVER_DQ_EXCHANGE    by record: a partition function of the record
 *                        picks the consumer (range or hash; m x n);
 *   RIVER_DQ_ONE_TO_ONE  producer i sends to consumer i (needs as many
 *                        producers as consumers);
 *   RIVER_DQ_BROADCAST   every consumer gets every record;
 *   RIVER_DQ_PULL        by unit, chosen by consumers (below).
 *
 * Pacing (RIVER_DQ_PUSH). Left alone, a slow consumer would hold up to
 * credits x producers messages when the producers finish, and drain
 * them at its slow rate while the fast consumers idle: the end-of-run
 * tail. So each PUSH consumer measures its drain rate (the time from
 * get returning a message to the next get, per byte) and lets at most
 * opts.pace seconds' worth of messages (never fewer than 2) be queued at
 * it: it holds back the credits of the messages it takes beyond that,
 * and PUSH's least-loaded choice then sends elsewhere. Credits held
 * back go back as the consumer speeds up, when producers close, a
 * message at a time while this consumer finds nothing to deliver (so
 * they never starve it), and all at once when the rank waits anywhere
 * else in River (another queue's get, a put, a collective) after
 * being out of this queue's get for longer than pace and two of its
 * message times: a consumer that waits on another queue never holds a
 * producer up for good. A consumer that may wait outside River (its
 * own MPI calls) while its producers need more than one message
 * buffered at it should set pace < 0 (a dormant producer, below, may
 * still wait up to 1 s for it, once per queue). A fast consumer
 * (a message in under pace / (credits x producers) seconds) never holds
 * any back. Pacing changes only when credits return: every guarantee
 * above holds.
 *
 * Dormant until a consumer is slower (RIVER_DQ_PUSH). With every
 * consumer at one speed, STATIC's equal shares end together; PUSH's,
 * which follow whichever credit came back first, do not quite (0.2-0.3
 * points of a 15 x 15 run). So a PUSH producer starts in STATIC's
 * order: message j to consumer (its index + j) mod consumers. While a
 * consumer's turn comes and it has no free credit, the producer sends
 * elsewhere (the consumer passed over catches up later, so the shares
 * still end as STATIC's) as long as the drain rates it compares are
 * not yet measured well (256 messages each), and waits for it, as
 * STATIC does, once they are and it is within 5% of the others (try_put
 * never waits: it planned with the credits it read). It wakes, PUSH
 * with pacing for the rest of the queue, when that consumer is 5%
 * slower than the mean of the others (50% before 256 messages), is busy
 * while another with a free credit waits for messages, or has held the
 * producer up for 1 s while another had a credit (a consumer busy
 * elsewhere for good: another queue). One producer waking wakes every
 * producer of the queue. Consumers send their rates with their credits
 * (the same RMA word, no extra message), and to every producer when
 * first measured, when firm, and when they start or stop waiting for
 * messages. Beyond 64 consumers (RIVER_DQ_READ_ALL sets the number) a
 * producer chooses among a window of 4 consumers at a time, never
 * dormant; on the RMA credit path each consumer also publishes its rate
 * in a word of its own window, producers read the words of the
 * consumers they may send to, and a busy consumer draining under 70% of
 * the fastest one's rate is sent in proportion to its rate (with c
 * credits, nothing under 1 / 2c of it), from the moment each producer
 * reads its word rather than when its own credits run out; a consumer
 * that keeps up (most of its gets wait) is never held, and a producer
 * that has found credits only at held consumers for 50 ms sends there
 * (doc/design.md, "Work per message"). On the MSG credit path there
 * are no rate words: credits alone decide.
 * Messages sent dormant are not paced: a dormant producer
 * waits for its turn's consumer, and credits held there would stall
 * it. river_dq_stats' messages_static counts them. The credit counts
 * in the window are modulo 2^40 messages per (producer, consumer)
 * pair, far more than can be in flight.
 *
 * RIVER_DQ_PULL (unit-level pull, for large ordered units such as a
 * sorted run of many MB). A producer's records form units: the records
 * put since its last river_dq_end_unit (or since create) are one unit,
 * ended by river_dq_end_unit or, if not empty, by river_dq_close. Units
 * are numbered 0, 1, ... per producer and never empty (ending an empty
 * unit is a no-op). Consumers choose, producers never do: a consumer
 * with no unit in progress claims the next unclaimed unit of some
 * producer atomically in that producer's RMA window, and then gets the
 * whole unit: every unit goes whole to exactly one consumer, its messages
 * in order and contiguous in that consumer's get sequence (a consumer
 * works on one unit at a time; rarely, one that loses a race for a
 * producer's last announced unit gets, and waits for, that producer's
 * next unit instead). river_dq_unit tells which unit a message
 * belongs to. A producer holds at most one unclaimed unit and buffers at
 * most one message of it: river_dq_put (once that message is full),
 * river_dq_end_unit and river_dq_close wait, without spinning, until a
 * consumer claims the unit (consumers idle in river_dq_get poll for
 * units, with backoff); end_unit also waits for the owner's credit for
 * the unit's last message, close does not. So with PULL a rank in both
 * roles, whose own consumer side may be the one to claim, uses the
 * nonblocking forms (below) for all of them.
 * RIVER_EOS comes once every producer has closed and this consumer has
 * got every unit it claimed.
 *
 * Nonblocking forms. A rank that is both producer and consumer returns
 * credits only when it gets, so it must not block as a producer while
 * its own consumer side waits to be drained. Every local call that can
 * wait has a form that never does: river_dq_try_put, try_reserve,
 * try_commit, try_end_unit, try_close and try_get return RIVER_EAGAIN
 * when they cannot complete now (call again later, after getting and
 * releasing what has come); a loop over them alone, with a backoff when
 * a whole pass made no progress, drives a rank in both roles to the end
 * for every policy. This is how River's flow runtime runs several
 * modules on one rank as cooperative tasks. (The blocking forms are
 * loops over the same steps.) What the try_ forms still wait for is
 * remote only: an RMA flush completes in the target's MPI library and
 * needs nothing more from this rank. river_dq_release never waits.
 *
 * Handles are not thread-safe. river_dq_create and river_dq_destroy are
 * collective over the communicator, and destroy waits for the other
 * ranks (a runtime running modules as tasks calls it only once every
 * task of the rank has finished); the rest are local.
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
  RIVER_DQ_BROADCAST = 4,
  RIVER_DQ_PULL = 5
} river_dq_policy;

/* For RIVER_DQ_EXCHANGE: the consumer index (0..nconsumers-1) of a
 * record. Must be a pure function of the record's bytes. */
typedef int (*river_dq_partition_fn)(const void *record, int nconsumers,
                                     void *ctx);

typedef struct river_dq_opts {
  river_dq_policy policy;
  int credits;            /* messages per (producer, consumer) in flight
                             or waiting, not yet got;
                             0 = RIVER_DQ_DEFAULT_CREDITS */
  size_t message_size;    /* bytes per message (whole records fit);
                             0 = RIVER_DQ_DEFAULT_MESSAGE_SIZE */
  uint64_t seed;          /* RIVER_DQ_PUSH: picks the consumer of a
                             final message when none has a credit */
  river_dq_partition_fn partition; /* RIVER_DQ_EXCHANGE only */
  void *partition_ctx;
  double pace;            /* RIVER_DQ_PUSH: seconds of work a consumer
                             lets queue up at it, by its measured drain
                             rate (below); 0 = RIVER_DQ_DEFAULT_PACE,
                             < 0: no pacing. Local: ranks may differ */
} river_dq_opts;

/* Bytes of a message taken by River's header: a message carries
 * (message_size - RIVER_DQ_HEADER_SIZE) / record_size whole records. */
#define RIVER_DQ_HEADER_SIZE 32

#define RIVER_DQ_OPTS_INIT {RIVER_DQ_PUSH, 0, 0, 0, NULL, NULL, 0.0}
#define RIVER_DQ_DEFAULT_PACE 0.02

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
  uint64_t credits_paced;       /* credits this consumer held back
                                   (pacing, RIVER_DQ_PUSH) */
  uint64_t messages_waiting;    /* messages arrived at this consumer and
                                   not yet got, now (at most its posted
                                   receives: more may wait at producers) */
  uint64_t messages_static;     /* RIVER_DQ_PUSH producer: messages sent
                                   dormant, before a consumer was
                                   measured slower (above; detours and
                                   the last, with the EOS, included) */
  int credit_path;              /* how this queue's credits travel:
                                   RIVER_DQ_CREDITS_RMA or _MSG (below) */
  uint64_t memory_bytes;        /* the most this rank's part of the
                                   queue has held at once: its message
                                   buffers, receives and per-peer words
                                   (not MPI's own; doc/design.md, "Queue
                                   memory", has the formula) */
  uint64_t peer_steps;          /* the queue's control work on this rank,
                                   counted: every producer or consumer
                                   entry its calls looked at (an
                                   iteration of a loop over peers, a
                                   credit word read, a request tested).
                                   Per message it should not grow with
                                   the peers (doc/design.md, "Work per
                                   message"); river-bench scale reports
                                   it per call */
} river_dq_stats;

/* A queue's credit path (river_dq_stats' credit_path), chosen at create
 * and the same on every rank of the queue: an RMA window where MPI can
 * make one over the queue's ranks, else two-sided messages (see
 * doc/design.md, "Credit paths"). The environment variable
 * RIVER_DQ_CREDITS=auto|rma|msg (default auto) forces one: rma fails
 * create where no window can be made; msg wins over rma if the ranks
 * differ. */
#define RIVER_DQ_CREDITS_RMA 1
#define RIVER_DQ_CREDITS_MSG 2

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

/* river_dq_put of records whose size the caller states (sizeof of its
 * record type: RIVER_DQ_PUT_TYPED): RIVER_EINVAL, said, naming both
 * sizes, if it is not the queue's record_size. */
RIVER_API int river_dq_put_sized(river_dq *q, const void *records,
                                 size_t nrecords, size_t record_size);
#define RIVER_DQ_PUT_TYPED(q, records, n) \
  river_dq_put_sized((q), (records), (n), sizeof *(records))

/* Like river_dq_put, but returns RIVER_EAGAIN instead of blocking; then
 * none of the records was taken. Records that could not go at once even
 * with every credit free (they would fill more messages than `credits`
 * for one consumer, or, for PUSH and STATIC, for all consumers together)
 * give RIVER_ENOBUFS, also taking none: put fewer at a time. So do, on
 * a PULL queue, records that would open a unit and complete a message
 * (a unit is claimed only once it has records: they would wait for
 * ever); river_dq_put_max says how many always fit. */
RIVER_API int river_dq_try_put(river_dq *q, const void *records,
                               size_t nrecords);

/*
 * The most records one river_dq_try_put on producer q may be given and
 * never answer RIVER_ENOBUFS, nor RIVER_EAGAIN for ever, whatever their
 * keys and the records already waiting in q's messages: with every
 * credit free (PULL: once the open unit is claimed) they go at once.
 * For a caller that puts in chunks with try_put (river_dq_put takes any
 * number). With r records per message ((message_size -
 * RIVER_DQ_HEADER_SIZE) / record_size): credits x r for ONE_TO_ONE and
 * BROADCAST; credits x r x the number of consumers for PUSH and STATIC;
 * (credits - 1) x r + 1 for EXCHANGE, whose records may all go to one
 * consumer, and whose r is smaller with many consumers (its messages
 * shrink); r for PULL, whose unit is claimed only once it has records
 * (a try_put that opens a unit and would complete a message is
 * RIVER_ENOBUFS). *max gets it (at least 1; SIZE_MAX where it
 * would not fit a size_t). Not collective. RIVER_EINVAL, *max
 * untouched, for NULLs or on a rank that is not a producer.
 */
RIVER_API int river_dq_put_max(const river_dq *q, size_t *max);

/*
 * Zero-copy put: river_dq_reserve lends the free part of the message
 * being filled (*buf, room for *max >= 1 records, blocking like put while
 * a full message has nowhere to go); write records there, then
 * river_dq_commit(q, n) puts the first n (0 <= n <= *max) as river_dq_put
 * would, without copying them. One reservation at a time: reserve again
 * before commit, or commit without a reservation, is RIVER_ESTATE; n >
 * *max is RIVER_EINVAL (the reservation stays). PUSH, STATIC, ONE_TO_ONE
 * and BROADCAST only (EXCHANGE places records one by one, PULL by units:
 * RIVER_EINVAL, use river_dq_put). A reservation not committed by close
 * is dropped.
 */
RIVER_API int river_dq_reserve(river_dq *q, void **buf, size_t *max);
RIVER_API int river_dq_commit(river_dq *q, size_t n);

/* Nonblocking reserve: RIVER_EAGAIN (nothing reserved) where
 * river_dq_reserve would wait: a full message waiting for a credit, or
 * every buffer still being sent. */
RIVER_API int river_dq_try_reserve(river_dq *q, void **buf, size_t *max);

/* Nonblocking commit: takes the n records like river_dq_commit (same
 * checks and codes) but never waits; a message they fill that has no
 * credit now stays in its buffer and goes with a later put, reserve,
 * commit or close (try_reserve returns RIVER_EAGAIN until it has gone). */
RIVER_API int river_dq_try_commit(river_dq *q, size_t n);

/* Send what is buffered and end this producer's stream (an end-of-stream
 * to every consumer, carrying the last records). Starts the end-of-stream
 * messages and returns: it never waits for a credit or for a consumer to
 * get (PULL: it waits until the open unit is claimed), so a rank in both
 * roles may close before it gets. The end-of-stream and data messages
 * may still be on their way after close (a consumer keeps few receives
 * posted and none for end-of-stream messages; the rest wait at their
 * producer until it gets); river_dq_destroy waits for them. Until then, keep the rank
 * calling River or MPI (any call that waits does): where the sender
 * moves a large message's data after the match (Open MPI over TCP, or
 * shared memory without its single-copy path), the consumers wait for
 * the producer's next call. Put, reserve or end_unit after close, and
 * close again, are RIVER_ESTATE. */
RIVER_API int river_dq_close(river_dq *q);

/* Nonblocking close: one step of river_dq_close. RIVER_EAGAIN while it
 * cannot complete (PULL: the open unit is not claimed yet): call it
 * again later (or call
 * river_dq_close). RIVER_SUCCESS once the stream has ended;
 * RIVER_ESTATE after that. From the first call on, the producer is
 * closing: put, reserve and end_unit are RIVER_ESTATE (an uncommitted
 * reservation is dropped). */
RIVER_API int river_dq_try_close(river_dq *q);

/*
 * Get the next message (consumer): *records points at *nrecords whole
 * records, borrowed until river_dq_release or the next get. Getting a
 * message returns its credit to its producer (unless pacing holds it):
 * the consumer keeps a spare buffer for the one it has lent out.
 * Returns RIVER_EOS when every producer has closed and all data has been
 * delivered (and again on later calls). If from is not NULL it gets the
 * producer index. Outputs are set only on RIVER_SUCCESS. RIVER_EINVAL on
 * a rank that is not a consumer; RIVER_ESTATE once a producer was
 * destroyed without closing (its stream is incomplete: said once).
 */
RIVER_API int river_dq_get(river_dq *q, const void **records,
                           size_t *nrecords, int *from);

/* Like river_dq_get, but returns RIVER_EAGAIN if no message is ready. */
RIVER_API int river_dq_try_get(river_dq *q, const void **records,
                               size_t *nrecords, int *from);

/* Give back the message from the last get (no-op if none is held): its
 * buffer becomes the consumer's spare again. Never waits. */
RIVER_API int river_dq_release(river_dq *q);

/*
 * RIVER_DQ_PULL, producer: end the current unit (the records put since
 * the last end_unit, or since create). Sends its last message to the
 * consumer that claimed it, waiting (without spinning) for the claim and
 * for that consumer's credit. No records since the last end_unit: a
 * no-op (units are never empty). RIVER_EINVAL for NULL, on a rank that is
 * not a producer, or on a queue of another policy (units exist only for
 * PULL); RIVER_ESTATE after close.
 */
RIVER_API int river_dq_end_unit(river_dq *q);

/* Nonblocking end_unit: RIVER_EAGAIN while the unit is not claimed or
 * its owner has no credit for the last message (the unit stays open:
 * call again later; records put in between join it); RIVER_SUCCESS once
 * it has ended. Same argument checks and codes as river_dq_end_unit. */
RIVER_API int river_dq_try_end_unit(river_dq *q);

/*
 * RIVER_DQ_PULL, consumer: the unit of the message returned by the last
 * successful get (still valid after river_dq_release). *unit gets its
 * global id, (producer index << 40) | (unit number within that
 * producer, from 0); *first and *last get 1 if the message is the unit's
 * first or last message, else 0 (both 1 for a one-message unit). Every
 * pointer must be non-NULL. RIVER_EINVAL for NULLs, on a rank that is not
 * a consumer, or on a queue of another policy; RIVER_ESTATE before the
 * first message. Outputs are set only on RIVER_SUCCESS.
 */
#define RIVER_DQ_UNIT_SHIFT 40
RIVER_API int river_dq_unit(const river_dq *q, uint64_t *unit, int *first,
                            int *last);

/*
 * Tags: a producer may label the records it puts with a 64-bit value
 * that the consumer reads back with each message (any policy; a sort
 * tags each sorted run with its first record's position in the output,
 * so that whichever consumer gets the run knows where to write it).
 * Every message carries the tag its producer had set when it sent it;
 * RIVER_DQ_NO_TAG until one is set.
 *
 * river_dq_set_tag: set the tag for the records put from now on. A
 * message never mixes tags, so this is refused (RIVER_ESTATE) while put
 * records wait in a partly filled message, a reservation is open, a PULL
 * unit is open, or after close: set it before the first put, or (PULL)
 * between river_dq_end_unit and the next unit's first record.
 * RIVER_EINVAL for NULL or on a rank that is not a producer.
 *
 * river_dq_tag: the tag of the message returned by the last successful
 * get (still valid after river_dq_release). RIVER_EINVAL for NULLs or on
 * a rank that is not a consumer; RIVER_ESTATE before the first message.
 */
#define RIVER_DQ_NO_TAG UINT64_MAX
RIVER_API int river_dq_set_tag(river_dq *q, uint64_t tag);
RIVER_API int river_dq_tag(const river_dq *q, uint64_t *tag);

/* This rank's counters so far. */
RIVER_API int river_dq_stats_get(const river_dq *q, river_dq_stats *stats);

/*
 * The ranks q is waiting for on this rank, for a caller that waits on it
 * in its own loop (river_dq_try_get, river_dq_try_put, ...) and must say
 * whom it waited for when it gives up: on a consumer, the producers
 * whose end of stream has not come; on a producer, the consumers with no
 * credit free, and, once it has closed and until its end of stream has
 * gone, every consumer. They are ranks of the communicator q was created
 * over, the producers first (a rank in both roles may name one rank
 * twice, once per role); what this rank knows now: nothing is
 * sent or received. *n gets how many there are, and ranks[0..max) the
 * first of them (min(*n, max)); ranks may be NULL when max is 0. Not
 * collective. RIVER_EINVAL, outputs untouched, for a NULL q or n, max <
 * 0, or ranks NULL with max > 0.
 */
RIVER_API int river_dq_waiting_for(const river_dq *q, int *ranks, int max,
                                   int *n);

/*
 * Free the queue: collective over the ranks of the communicator it was
 * created on; it waits for every rank (and for every message in flight
 * to arrive), so a runtime running modules as tasks calls it only after
 * every task on the rank has finished. Producers must have closed and consumers must have seen
 * RIVER_EOS first (RIVER_ESTATE otherwise; the queue is freed all the
 * same, and every rank gets the same code; a consumer that had not seen
 * RIVER_EOS drops the messages it had not got). A producer destroyed
 * without closing ends its streams there: a consumer still getting
 * gets RIVER_ESTATE, said once by each such consumer and naming that
 * producer, rather than waiting for records that will not come, and so
 * does every get after it. The other producers are not told: one that
 * waits for such a consumer's credits (a put) or claims (a PULL close)
 * waits until River's timeout (RIVER_TIMEOUT, off by default) or the
 * job's end, so a program that abandons a queue on one rank should end
 * the job (a flow's abort does) rather than go on with it. NULL is a
 * no-op.
 */
RIVER_API int river_dq_destroy(river_dq *q);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_DQ_H */
