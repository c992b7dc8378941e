/*
 * dq_internal.h - what the distributed queue's files share; never
 * installed. The queue's struct, the message header, tags and kinds, the
 * words of a producer's window, the functions one file calls in another,
 * and the protocol (below).
 *
 * The files split the queue by role, in layers (each calls only those
 * below it): src/dq.c has the entry points that are not side-specific
 * (create with its argument checks, roles and buffers; destroy with its
 * drain; stats; the rank's tick), src/dq_producer.c the producer side
 * (filling buffers, credits, the choice of consumer, put, close) and
 * src/dq_consumer.c the consumer side (per-pair sequence rings, get,
 * release, pacing); below them src/dq_credit.c, the credit words on
 * either path (RMA window or two-sided messages) and PULL's claims,
 * src/dq_recv.c, a consumer's posted receives, and at the bottom
 * src/dq_mem.c, the counted memory and the timeout's report. PULL's two
 * halves go with their sides: announcing units and learning who
 * claimed them is the producer's, claiming is the consumer's (through
 * dq_credit.c). Each file includes this header and none includes
 * another.
 *
 * Distributed queues (see river/dq.h): records travel from producers to
 * consumers in messages of whole records, under credit flow control kept
 * in an RMA window.
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
 * a credit: it starts its EOS sends and destroy completes them (a
 * consumer posts no receive for them: it matches each with
 * MPI_Improbe), and a rank that is both producer and consumer can
 * always close.
 *
 * Producer. Message buffers are "slots" in one allocation: nfill of them
 * are being filled (one, or one per consumer for EXCHANGE), the rest hold
 * sends in flight. There are min(credits x targets, the pool) + nfill
 * slots (targets: 1 for ONE_TO_ONE and BROADCAST, whose one buffer is
 * sent to every consumer, else nconsumers; the pool: credits x
 * DQ_SEND_PEERS, or RIVER_DQ_SEND_SLOTS; issue 41: credits x consumers
 * slots made a producer's memory grow with the consumers, 500 MiB at
 * 500 of them); a slot is reused once MPI_Testsome says its sends
 * completed, and a full message with a credit but no free slot waits
 * for one (a send to a consumer beyond its posted receives completes
 * when it gets, as a credit returns: a lagging consumer holds at most
 * `credits` slots, so with more than DQ_SEND_PEERS consumers the others
 * still have the rest). Consumers that stop getting can hold them all,
 * so a pool with no slot free for DQ_SLOT_STUCK doubles, up to one slot
 * per credit (dq_producer.c, grow_pool): waiting for a slot never waits
 * on anything a wait for credits would not. Send requests have fixed
 * places, slot x fanout + j (nslots_max slots), then one EOS request
 * per consumer, tested only once close has begun. The window holds, per consumer, how
 * many messages it has released (PUSH: and its rate, below); the
 * producer reads it atomically with
 * MPI_Get_accumulate(MPI_NO_OP) + MPI_Win_flush, when its cached copy
 * shows no credit (PUSH: no consumer with every credit free). PUSH, once
 * awake (dormant PUSH, below), picks
 * the least loaded consumer (most free credits), ties round-robin from
 * the consumer after the one it sent to last (so with no consumer
 * lagging the shares come out exactly STATIC's); the partial message a
 * PUSH producer's EOS carries goes, when no consumer has a free credit,
 * to one drawn with a hand-written splitmix64 (seedable, per queue, the
 * same on every platform: rand() is global, random_r is glibc's); STATIC goes
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
 * Consumer. nrslots DATA receives (ANY_SOURCE, tag 1), each into a
 * message_size buffer, are posted at create; no EOS receive (tag 2) is
 * posted (issue 41: one per producer, each a message_size buffer, made a
 * consumer's memory grow with the producers, 256 MiB at 1,000 of them
 * with the default 256 KiB, and put every producer's EOS request in
 * each poll's MPI_Testsome). Each poll matches the EOS messages that
 * came (MPI_Improbe, any source; at most DQ_EOS_HELD with records held
 * at once, dq_consumer.c, eos_cap) and receives each into a buffer of its
 * size: a bare header into the queue's own, one with records into a
 * message buffer allocated then and freed when get's caller releases
 * it (nonblocking, MPI_Imrecv: a large one needs its producer's
 * progress). nrslots is DQ_POSTED (2; RIVER_DQ_POSTED
 * sets it, 0 = all), at most credits x nproducers (a PULL consumer on
 * the MSG path posts more before it asks for another unit while others
 * may come: river__dq_grow_recvs; PULL used to post all credits x
 * nproducers, 1 GiB at 1,000 producers): a DATA message beyond them
 * waits at its producer (rendezvous:
 * MPI has only its header at the consumer) or, if small enough to go
 * eagerly, in MPI's unexpected queue, until a get re-posts a receive;
 * MPI matches one producer's messages in the order sent, so the
 * message each producer's ring needs next is always matched before its
 * later ones. Why few: every posted receive has its own buffer and MPI
 * matches ANY_SOURCE receives in the order posted, so the consumer
 * cycled through all credits x nproducers buffers, a working set that
 * outgrew the caches at 8 x 8 (2 credits: 17 buffers a consumer). On
 * the 2-core VM, 8 x 8 with 4 credits, all posted against 2: 12.9
 * against 18.6 GB/s at 64 KiB, 12.6 against 26.9 at 1 MiB (raw MPI
 * pairs 13.6, 14.8; doc/results.md, overhead); 1 x 1 and 4 KiB
 * messages unchanged. A completed DATA message
 * waits in its producer's ring of `credits` places (index seq mod
 * credits) until its seq is next; get delivers from producers that
 * have their next message, taking turns in the order they came to have
 * it (a queue of them, `ready`: a message costs the same however many
 * producers there are; before issue 41 get scanned them all), so MPI
 * completing receives out of order cannot break FIFO per pair. Get lends the message's buffer
 * out and at once swaps the consumer's one spare buffer into its receive
 * slot, re-posts the receive, and adds 1 to the producer's window slot
 * (MPI_Accumulate SUM + MPI_Win_flush: passive target, no help from the
 * producer needed); release (or the next get) makes the lent buffer the
 * spare again. So credits count messages in flight or waiting, never the
 * one the caller works on: returned at release, that one message halved
 * a 1 -> 1 pipeline of 2 credits. A
 * producer is done at a consumer when its EOS has come and every message
 * up to it was delivered; get returns RIVER_EOS when all are done.
 *
 * Pacing (PUSH consumers; river/dq.h). Consumer c keeps an EWMA (1/8)
 * of its processing time per byte: from get returning a message to the
 * next get call, so time spent waiting for messages never counts. With
 * at least 4 samples its limit is L = max(2, ceil(pace / time of a full
 * message)) messages queued or in flight at it. Credits of p's messages
 * at c are at most `credits`, so holding back W = live x credits - L of
 * them (live: producers whose EOS has not come) bounds what can be
 * queued at c by L (+ extra, below). Get taking p's message (p live):
 * p's credit is held (held[p] += 1; held[p] <= credits, as p's
 * unreturned credits at c are), then held credits are returned, taking
 * producers in turn, while more than W are held: so the held credits
 * rotate over the producers. The tick: held credits bound a producer
 * only while c keeps coming back to this queue; a consumer that waits on
 * another queue (or input) for something its producer sends only after
 * more messages here would wait for good (the review of issue 13 found
 * it). So every paced consumer queue is on a rank-wide list, and every
 * River wait step (river__backoff's hook) returns all the credits held
 * by a queue whose consumer has been out of get for longer than pace
 * and two message times. A producer's EOS drops its held credits
 * (nothing more comes from it) and returns those over the new, smaller
 * W. The idle rule: the budget is counted over every live producer, so
 * a producer that sends nothing for a while can sit on exposed credits
 * while another, streaming, has all of its held: c would starve while
 * it waits in this very get (the tick leaves it be there). So
 * when c finds nothing to deliver while it holds credits, for every
 * full message's time (at its rate; `pace` before it is measured) it
 * lets one more message in (extra += 1) and returns a held credit;
 * extra shrinks by one per message taken while L or more wait at c
 * (or every posted DATA receive holds one: with nrslots < L the
 * messages beyond them wait unseen at their producers, and counting
 * only what arrived kept extra for good: `dq read` with one consumer
 * at 5% ended 1.1-1.5 points lower in 3 runs of 4), so it
 * stays only while c would otherwise starve. Nothing else
 * changes: exactly-once, FIFO and the memory bound do not depend on
 * when credits return. Tests: push-paced, push-paced-1,
 * test_paced_silent and test_paced_two_queues in tests/mpi/test_dq_mpi.c.
 *
 * Dormant PUSH (river/dq.h). A PUSH producer starts dormant (with more
 * than one consumer). Its turn for the next message, after n sent, is
 * the consumer furthest behind STATIC's schedule (message j to (pidx +
 * j) mod ncons; ties: the schedule's own consumer first), so with no
 * detour it is exactly STATIC's, and after detours the consumers passed
 * over catch up. If that consumer t has a free credit it gets the
 * message. If not, the producer reads its window and, if some consumer
 * has a credit (d: the furthest behind of them), it wakes when t's rate
 * code is DQ_WAKE_SLOWER under the mean of the other consumers' (both
 * firm; DQ_WAKE_EARLY if not), when t is busy while a consumer with a
 * credit is idle, or when t has held it up for DQ_WAKE_SILENT; it waits
 * for t when every code it compared is firm; otherwise (t or every
 * other consumer not measured yet, or not firm) it sends to d. Waking is
 * for the rest of the queue, and the producer adds 1 to the wake word
 * of every other producer's window, which each reads with its credits:
 * a producer left dormant among woken ones would send unpaced messages
 * that fill the consumers' queues, and pacing would then hold back the
 * woken producers' credits. The EOS's partial message goes to t (no
 * credit needed), as STATIC's does. try_put plans the same choices on
 * its copy of the credits (dormant_fits; a consumer short of credits
 * only in the plan is passed over), and the sends that follow never
 * wait (q->planned), whatever the window says by then.
 *
 * Rates. A PUSH consumer keeps, beside pacing's, a longer average of
 * its processing time per byte: a plain mean of its first DQ_CODE_AVG
 * samples, then an EWMA of 1 / DQ_CODE_AVG, leaving out the first
 * message and any got after get waited or try_get said EAGAIN (an
 * emulated rate's tokens pile
 * up while it is idle; those samples made equal consumers' first codes
 * differ by up to 30%). It sends the code, with a firm bit (DQ_CODE_AVG
 * samples) and an idle bit (most of its last gets waited), in the top
 * 24 bits of each credit word it adds to, as the difference from what
 * that word holds (only this consumer adds to it, and the sum wraps
 * modulo 2^64), and to every producer at once when the code is first
 * measured, turns firm, or the idle bit flips (at most once per
 * DQ_CODE_MIN messages). The count below the field is modulo
 * 2^DQ_COUNT_BITS: the consumer takes the carry out (released[]), the
 * producer compares counts modulo the same. A message sent dormant
 * carries DQ_STATIC; its credit is never held (none of its producer's
 * was before: a producer sends dormant only before it ever sends
 * awake, and per-pair FIFO delivers in that order): a dormant producer
 * waits for its turn's consumer,
 * and held credits there would stall it while the consumers after it
 * in its order run dry (measured: 15 ms of idle per consumer in a 4 s
 * run, and 1 s stalls).
 *
 * Bounded memory: a producer sends DATA to consumer c only while
 * sent - returned < credits, and c returns a credit only after
 * re-posting the slot, so DATA messages from one producer in flight or
 * waiting at c never exceed credits (those beyond c's posted receives
 * wait unmatched: at the producer, or eager ones in MPI's buffers at
 * c). Memory: a producer holds nslots messages (above), a
 * consumer nrslots + 1 (the spare) and one for each EOS with records it
 * has received and not yet delivered (a producer sends one EOS to each
 * consumer, with records only to the one that gets its last fill
 * buffer: PUSH, STATIC, PULL one consumer per producer, EXCHANGE up to
 * every consumer), plus a few words per producer (rings, counters).
 *
 * Why no deadlock: close waits for no send of its own beyond the DATA
 * its last records need credits for; its EOS sends are only started,
 * and destroy completes them. (It used to wait for them, which was safe
 * while every EOS had a receive posted; without, two ranks closing
 * queues to each other would each wait for the other to take its EOS:
 * test_dq_mpi's one-to-one-3 hung so.) destroy waits for every send: a
 * DATA send beyond the posted receives
 * completes once its consumer gets the messages before it, which a
 * consumer that reached EOS has done, and one that did not drops
 * undelivered messages in destroy (river__dq_drop_waiting) so that its
 * receives match the rest. put waits for credits, which
 * consumers return by calling get/release, and for send slots, which
 * come free as consumers get (or the pool grows: "Producer"); a
 * consumer's get waits only
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
 * unit while it waits in put/end_unit/close: river/dq.h.) On the MSG
 * path a consumer may also hold units granted late, waiting behind the
 * one in progress (below): their producers wait for (b) until that unit
 * ends, which needs its own producer only, unless that producer waits
 * (through another queue) on a held unit's producer: then MSG waits for
 * good where RMA does not (doc/design.md, "Credit paths").
 *
 * Destroy. Nothing is exchanged all-to-all: each producer's EOS to each
 * consumer says how many DATA messages it sent there (a producer that
 * did not close sends one flagged DQ_ABORT at destroy, so a consumer
 * still getting learns its stream is incomplete, RIVER_ESTATE, instead
 * of waiting for ever); on the MSG path, how many credit messages each
 * rank was sent is summed with one MPI_Ireduce_scatter_block. Consumers
 * wait (test + backoff) until all have arrived while producers wait for
 * their sends, so no message of this queue is
 * still in flight when the receives are cancelled and the communicator
 * freed (a late one could otherwise match a later queue reusing the
 * context id). The RIVER_ESTATE outcome (a producer that did not close, a
 * consumer that did not reach EOS) is agreed with an MPI_Allreduce MIN.
 *
 * Every wait tests and sleeps with river__backoff; nothing blocks in
 * MPI_Wait/MPI_Recv/MPI_Send.
 *
 * Nonblocking forms. Each local call that can wait has a try_ form that
 * takes one step and says RIVER_EAGAIN instead (try_put, try_reserve,
 * try_commit, try_end_unit, try_close, try_get), so a cooperative task
 * can drive a producer and a consumer on one rank without ever waiting
 * inside the queue; the blocking forms are loops over the same steps
 * with river__backoff. close is a small state machine for that: closing
 * (set by the first try_close; puts are refused from then on), closed
 * (the EOS messages went, after PULL's last claim) and close_done (the
 * EOS sends completed; DATA sends beyond the consumers' posted receives
 * may not have, and destroy waits for them). What remains that waits is remote only: an RMA flush
 * (completed by the target's MPI library, needing nothing from this
 * rank's other tasks) and the collective destroy, which a runtime calls
 * once every task of the rank has finished.
 *
 * Stats: records_out/bytes_out count records put, once; messages_out and
 * msgs_to count messages with records sent to each consumer (BROADCAST:
 * once per consumer), the last one (with the EOS) included; a credit
 * stall is counted once per message that had to wait for a credit.
 * Calls on a rank without the role they need (put on a consumer, get on
 * a producer) are RIVER_EINVAL: the role is an argument of create, not a
 * state.
 *
 * The window comes from river__win_allocate (src/rma.c), which works
 * around Open MPI < 5 giving two windows created at once on one node,
 * over disjoint communicators, the same shared-memory segment.
 *
 * Credit paths. "The window" above is the RMA path. Where MPI cannot
 * make a window over the queue's ranks (Debian's Open MPI between nodes
 * over TCP), or RIVER_DQ_CREDITS=msg, the same words live in each
 * producer's plain memory and others change them by two-sided messages
 * the producer applies (the MSG path): every access to the words goes
 * through src/dq_credit.c, whose opening comment has that protocol;
 * everything in this comment holds on both paths, except PULL's claim:
 * atomic at the producer there (no race for the last unit), it needs
 * the producer to pass through River (any queue call or wait) to be
 * answered, so an idle consumer whose answer is late asks other
 * producers too, one claim in flight to each at most, and takes every
 * grant that comes, in turn: it may hold up to one unit per producer
 * claimed (one in progress, the others waiting), where on the RMA path
 * it holds one (dq_credit.c, msg_claim).
 */
#ifndef RIVER_DQ_INTERNAL_H
#define RIVER_DQ_INTERNAL_H

#include "river_internal.h"

#include <stdint.h>

#define DQ_TAG_DATA 1
#define DQ_TAG_EOS 2
#define DQ_TAG_CREDIT 3       /* two-sided credits: ADD and CLAIM */
#define DQ_TAG_REPLY 4        /* two-sided credits: a claim's answer */
#define DQ_KIND_DATA 1u
#define DQ_KIND_EOS 2u
#define DQ_ALIGN 64           /* slot stride: records stay aligned */
/* Message buffers start on a 4 KiB boundary, and a message of 4 KiB or
 * more takes whole 4 KiB pages (dq.c, msg_buffers): a 1 x 1 queue of
 * 64 KiB messages in malloc'd buffers ran at 78-90% of raw MPI in the
 * benchmark, where raw streams ran before it in the process, and at
 * raw's rate aligned (issue 13, doc/results/issue13-session6-local.txt).
 * 4 KiB is x86-64's page; on kernels with larger pages it is still a
 * boundary, not a page (not measured there). */
#define DQ_PAGE 4096
#define DQ_POSTED 2           /* DATA receives a consumer keeps posted */
#define DQ_EOS_HELD 2         /* EOS messages with records a consumer
                                 holds at once (dq_consumer.c) */
#define DQ_READ_ALL 64        /* up to this many consumers a producer
                                 reads every credit word at once
                                 (dq_producer.c, read_for), and PUSH
                                 looks at every consumer; beyond,
                                 RIVER_DQ_READ_ALL sets it */
#define DQ_CHOICES 4          /* PUSH beyond read_all consumers: the
                                 window of consumers a message may go to
                                 (dq_producer.c, window_choose) */
/* PUSH beyond read_all consumers, RMA path: each consumer publishes its
 * rate field in a word of its own window (the rate word), and producers
 * read the words of the consumers they may send to (dq_producer.c,
 * pub_refresh) rather than waiting for that consumer's credits to bring
 * it: */
#define DQ_PUB_FLIGHT 8       /* reads of rate words in flight at most */
#define DQ_PUB_AGE 0.01       /* a word read this long ago (s) is read
                                 again when its consumer is a choice */
#define DQ_PUB_STEP 2048u     /* a consumer publishes when its code moved
                                 by this much (about 2% of its rate),
                                 became firm, or idle or busy */
#define DQ_PUB_SLOWER 0.7     /* a busy consumer draining under this
                                 share of the fastest one's rate
                                 is held to fewer credits (early codes
                                 of equal consumers differ by up to
                                 30%: dq_producer.c, window_credits) */
#define DQ_PUB_HELD 0.05      /* a producer that has found credits
                                 only at consumers held back by their
                                 rates for this long (s) sends by
                                 credits alone until it can send to
                                 one not held (dq_producer.c,
                                 window_choose) */
#define DQ_REF_DECAY 64u      /* a producer's reference code (the
                                 fastest consumer it has read) falls
                                 by this much a message sent (its rate
                                 halves in about 1,000 messages)
                                 unless a code read keeps it up */
#define DQ_SLOT_STUCK 1.0     /* a producer's pool doubles after this
                                 long (s) with no slot free
                                 (dq_producer.c, grow_pool) */
#define DQ_FILL_PEERS 16      /* EXCHANGE: fill buffers of a full
                                 message for up to this many consumers;
                                 beyond, their sizes share that budget */
#define DQ_FILL_MIN 8192      /* ... but never below this many bytes */
#define DQ_SEND_PEERS 16      /* a producer's send slots: credits x this
                                 many consumers at most (dq.c) */
#define DQ_CW_PENDING 1u      /* cw_has: an add waits to be sent */
#define DQ_CW_LISTED 2u       /* cw_has: the producer is in cw_wait */
#define DQ_UNKNOWN UINT64_MAX /* eos_seq before the EOS has come */
#define DQ_KIND_MASK 0xffu    /* PULL: unit flags above the kind */
#define DQ_FIRST 0x100u       /* PULL: the unit's first message */
#define DQ_LAST 0x200u        /* PULL: the unit's last message */
#define DQ_STATIC 0x400u      /* PUSH: sent dormant, in static's order */
#define DQ_ABORT 0x800u       /* EOS: the producer was destroyed without
                                 closing: its stream is incomplete */
/* A credit word: the consumer's released messages in the low 40 bits;
 * above them (PUSH) 24 bits about its drain rate: a code, 1 + log2(bytes
 * per second of processing) x DQ_CODE_SCALE (0: not measured), a bit
 * set once the code is averaged over DQ_CODE_AVG messages (firm), and a
 * bit set while most of its gets wait for a message (idle). */
#define DQ_COUNT_BITS 40
#define DQ_COUNT_MASK ((UINT64_C(1) << DQ_COUNT_BITS) - 1)
#define DQ_RATE_CODE(f) ((f) & 0x3fffffu)       /* f: the 24-bit field */
#define DQ_RATE_IDLE 0x400000u
#define DQ_RATE_FIRM 0x800000u
#define DQ_CODE_MAX 0x3fffffu
#define DQ_CODE_SCALE 65536.0 /* codes per doubling of the rate */
#define DQ_CODE_MIN 8         /* messages measured before a first code */
#define DQ_CODE_AVG 256       /* ... before a firm one; then an EWMA of
                                 1 / this */
/* PUSH, dormant: wake when the consumer whose turn it is drains slower
 * than the mean of the other consumers measured by this much (every
 * code compared firm; DQ_WAKE_EARLY if not), or has held the producer
 * up for DQ_WAKE_SILENT seconds while another had a credit. */
#define DQ_WAKE_SLOWER 1.05
#define DQ_WAKE_EARLY 1.5
#define DQ_WAKE_SILENT 1.0
/* A producer's window: ncons credit counters (consumer c's released
 * messages at c), then, for PULL only, these words: */
#define DQ_W_CLAIM(q) ((MPI_Aint)(q)->ncons)     /* units claimed */
#define DQ_W_ANN(q) ((MPI_Aint)(q)->ncons + 1)   /* units announced */
/* then a ring of ncons + 1 owner words: unit u's claimer + 1, or 0;
 * PUSH's instead: one word, not 0 once some producer woke */
#define DQ_W_WAKE(q) ((MPI_Aint)(q)->ncons)
/* then, PUSH, on every rank that consumes: its rate word (used beyond
 * read_all consumers on the RMA path), after a producer's words (a rank
 * in both roles) or alone (a consumer only) */
#define DQ_W_PUB(q, is_producer) ((is_producer) ? (MPI_Aint)(q)->ncons + 1 : 0)
#define DQ_W_OWNER(q, u)                                                   \
  ((MPI_Aint)(q)->ncons + 2 + (MPI_Aint)((u) % ((uint64_t)(q)->ncons + 1)))

struct dq_hdr {
  uint32_t kind;        /* DQ_KIND_*, PULL: | DQ_FIRST, DQ_LAST */
  uint32_t producer;    /* producer index */
  uint64_t seq;         /* DATA: per-pair number; EOS: DATA messages sent */
  uint64_t nrecords;    /* records following the header */
  uint64_t tag;         /* the producer's tag when it sent it */
};
#define DQ_HDR_SIZE sizeof(struct dq_hdr)
/* Count n peer entries looked at (river_dq_stats.peer_steps): the
 * control work that must not grow with the peers (issue 41). */
#define DQ_STEPS(q, n) ((q)->peer_steps += (uint64_t)(n))
_Static_assert(sizeof(struct dq_hdr) == RIVER_DQ_HEADER_SIZE,
               "river/dq.h's RIVER_DQ_HEADER_SIZE is the header's size");

/* A policy's traits: what the queue's files ask of a policy is read
 * from its row of one table (dq_producer.c, `policies`; a row per value
 * of river/dq.h's river_dq_policy). The flags say what the policy does,
 * for every file; the hooks are its producer's choices. A new policy is
 * a value in river/dq.h, a row, and its hooks: the other files test
 * flags, never a policy's name. */
#define DQ_P_SPREAD 0x01u /* messages go to the consumers in turn from
                             q->rr, which moves on after each send
                             (PUSH, STATIC): one put may use every
                             consumer's credits */
#define DQ_P_RATES 0x02u  /* consumers are told apart by speed (PUSH):
                             rate codes in the credit words, the wake
                             word, pacing, the dormant start */
#define DQ_P_KEYED 0x04u  /* a partition function places each record:
                             a fill buffer per consumer, records taken
                             one by one (EXCHANGE) */
#define DQ_P_EVERY 0x08u  /* each message goes to every consumer
                             (BROADCAST) */
#define DQ_P_PAIRED 0x10u /* producer i sends to consumer i only: as
                             many of each (ONE_TO_ONE) */
#define DQ_P_UNITS 0x20u  /* records go in units, each claimed by one
                             consumer (PULL): unit flags, claims, the
                             window's unit words, no reserve */

struct dq_policy {
  river_dq_policy policy;
  const char *name;             /* as in messages: "PUSH" */
  unsigned flags;               /* DQ_P_* */
  /* The producer's choices (dq_producer.c). The one consumer fill
   * buffer b's messages go to, or -1 not known yet; NULL where a
   * message may go to one of several (PUSH) or to all (BROADCAST). */
  int (*target)(river_dq *q, int b);
  /* Re-read the credit words choose needs (beyond read_all consumers;
   * up to them every word is read at once). */
  int (*read)(river_dq *q, int b);
  /* The consumer for fill buffer b's full message among those with a
   * free credit, by the credits as last read (pass 0) or just re-read
   * (pass 1): RIVER_SUCCESS and *c (-1: every consumer), RIVER_EAGAIN
   * if none, or an error. */
  int (*choose)(river_dq *q, int b, int pass, int *c);
  /* Whether try_put's n records (KEYED: as counted per consumer) can
   * go now: 1 yes, 0 short of credits, -1 short of slots; fresh: the
   * credits were just re-read. */
  int (*fits)(river_dq *q, size_t n, int fresh);
  /* Re-read the credit words fits needs for n records. */
  int (*read_plan)(river_dq *q, size_t n);
  /* The consumer that gets fill buffer b's last records with the EOS
   * (no credit taken), -1 every consumer. */
  int (*final)(river_dq *q, int b);
};

/* dq_producer.c: policy p's row, or NULL if p is no policy. */
const struct dq_policy *river__dq_policy(int p);

/* Whether the queue's policy does f (DQ_P_*). */
#define DQ_DOES(q, f) (((q)->pol->flags & (f)) != 0)

struct river_dq {
  MPI_Comm comm;                /* private duplicate, or MPI_COMM_NULL */
  MPI_Win win;                  /* credits (RMA path); MPI_WIN_NULL if
                                   none */
  int path;                     /* RIVER_DQ_CREDITS_RMA or _MSG */
  int rank, size, role;
  int nprod, ncons, pidx, cidx; /* counts; own indices (-1: not) */
  int *prod_rank, *cons_rank;   /* index -> rank in comm (size entries) */
  const struct dq_policy *pol;  /* the policy's traits */
  int credits;
  uint64_t seed;
  size_t record_size, message_size, stride, per_msg;
  size_t sstride, send_per_msg; /* producer: its slots' stride and the
                                   records its messages carry (EXCHANGE:
                                   fewer with many consumers, dq.c
                                   exchange_message) */
  river_dq_partition_fn partition;
  void *partition_ctx;
  uint64_t peer_steps;          /* peer entries looked at: every
                                   iteration of a loop over producers or
                                   consumers, credit word read, request
                                   tested (river_dq_stats.peer_steps;
                                   DQ_STEPS where each is) */
  uint64_t *cw_count;           /* destroy, MSG path: credit messages
                                   to each rank (size), allocated then */

  /* producer */
  int closing;                  /* try_close was called: no more puts */
  int closed;                   /* the EOS messages were sent */
  int close_done;               /* ... and the EOS sends completed */
  int bad_seq;                  /* tests: RIVER_TEST_FAULT dq-data-seq:fail
                                   sends every DATA seq out of window */
  int nslots, nfill, fanout, nsreq, sactive;
  int nslots0, nslots_max;      /* slots at create (in sbuf); at most
                                   (credits x targets + nfill) */
  unsigned char *sbuf;          /* nslots0 x sstride */
  unsigned char **slot_buf;     /* nslots_max: slot s's buffer (those
                                   past nslots0 allocated as the pool
                                   grew, dq_producer.c, grow_pool) */
  double t_noslot;              /* since when no slot has been free, or 0 */
  int *free_stack;              /* nslots_max: the free slots (nfree of
                                   them): a slot is found in O(1) */
  int nfree;
  int nfill_held;               /* fill buffers that have a slot */
  int *touched, ntouched;       /* EXCHANGE: consumers this put's records
                                   go to (count > 0), so its plan looks
                                   at those only */
  int *fullq, nfullq;           /* EXCHANGE: fill buffers that filled and
                                   may wait to be sent (send_full) */
  unsigned char *in_fullq;      /* ncons */
  int *slot_refs;               /* sends in flight from each slot */
  unsigned char *slot_fill;     /* 1: the slot is a fill buffer */
  int *fill;                    /* nfill: slot being filled, or -1 */
  size_t *fill_n;               /* records in it */
  unsigned char *stalled;       /* its stall was counted */
  MPI_Request *sreq;            /* nsreq: the sactive sends in flight,
                                   packed (only they are tested: the
                                   work does not grow with the slots) */
  int *splace;                  /* nsreq: each one's place, slot x
                                   fanout + j, or slot places + c for
                                   consumer c's EOS */
  int *sidx;
  struct dq_hdr *eos_hdr;       /* ncons: header-only EOS messages */
  unsigned char *eos_went;      /* ncons: that consumer's EOS was sent */
  uint64_t *winmem;             /* the credit words (the window's on the
                                   RMA path, plain memory on MSG's) */
  /* two-sided credits (MSG path; dq_credit.c) */
  uint64_t cw_rbuf[4];          /* producer: the posted credit receive */
  MPI_Request cw_rreq;
  uint64_t cw_recvd;            /* credit messages received */
  uint64_t *cw_sbuf;            /* nprod x 4: the ADD in flight to each */
  MPI_Request *cw_sreq;         /* nprod */
  uint64_t *cw_pend;            /* nprod x 2: credit and wake adds not
                                   sent yet; then cw_sent */
  uint64_t *cw_sent;            /* nprod: messages sent to each producer */
  unsigned char *cw_has;        /* nprod: DQ_CW_PENDING, something
                                   waits in cw_pend; DQ_CW_LISTED, p is
                                   in cw_wait */
  int *cw_wait;                 /* the producers listed (push_waiting) */
  int ncw_wait;
  uint64_t *rep_buf;            /* PULL producer: ncons x 2 replies */
  MPI_Request *rep_req;         /* ncons */
  uint64_t claim_msg[4];        /* PULL consumer: the CLAIM sent */
  uint64_t *claim_rep;          /* nprod x 2: each producer's answer; a
                                   grant {1, unit} stays until taken */
  MPI_Request *claim_sreq, *claim_rreq; /* nprod: a claim to each, at
                                   most one in flight */
  double *claim_at;             /* nprod: when each was asked last */
  int claim_p;                  /* producer asked last, or -1 */
  int tick_rc;                  /* a failure in the rank's tick, for the
                                   queue's next call to return */
  int draining;                 /* destroy has begun (dq.c, drain) */
  int cw_late;                  /* tests: RIVER_TEST_FAULT dq-credit-late:fail
                                   (dq_credit.c, push) */
  unsigned char *claim_held;    /* tests: dq-claim-deaf:fail, ncons: a
                                   claim not answered until destroy */
  uint64_t *sent, *returned, *zeros, *msgs_to, *avail; /* per consumer */
  size_t *count;                /* EXCHANGE: records per consumer */
  int rr;                       /* STATIC: next consumer; PUSH: where ties start */
  int unit_open;                /* PULL: the current unit has records */
  size_t reserved;              /* river_dq_reserve's *max, 0: none */
  int owner;                    /* PULL: its claimer, or -1 not known */
  int unit_first, unit_last;    /* PULL: flags for the next message */
  uint64_t nunits;              /* PULL: units opened (announced) */
  uint64_t rng;                 /* PUSH: splitmix64 state */
  int dormant;                  /* PUSH: still in static's order */
  int read_all;                 /* up to this many consumers, every
                                   credit word is read at once (and PUSH
                                   looks at all): DQ_READ_ALL, or the
                                   smallest RIVER_DQ_READ_ALL of the
                                   queue's ranks */
  double t_stall;               /* PUSH, dormant: since when the turn's
                                   consumer has held it up, or 0 */
  uint32_t *code;               /* PUSH: each consumer's rate field */
  int pub_on;                   /* PUSH beyond read_all consumers, RMA
                                   path: consumers publish rate words,
                                   producers read them (DQ_PUB_FLIGHT) */
  uint32_t *pub;                /* ncons: each consumer's rate word as
                                   last read, or 0 */
  double *pub_at;               /* ncons: when the word last read was
                                   asked for, 0 never, -1 in flight */
  MPI_Request pub_req[DQ_PUB_FLIGHT]; /* reads in flight, npub of them
                                   (fixed slots: a read keeps its
                                   buffer; free ones MPI_REQUEST_NULL) */
  int pub_c[DQ_PUB_FLIGHT];     /* the consumer each reads, or -1 */
  double pub_t[DQ_PUB_FLIGHT];  /* when each was started */
  uint64_t pub_in[DQ_PUB_FLIGHT]; /* what each read */
  int npub;
  uint32_t code_ref;            /* the fastest consumer's code read,
                                   falling DQ_REF_DECAY a message sent */
  double t_held;                /* since when only consumers held
                                   back by rate had credits (until a
                                   send to one not held), or 0 */
  int tell_wake;                /* PUSH: it woke; tell the others */
  int planned;                  /* try_put's plan holds: never wait */
  uint64_t messages_static;     /* PUSH: sent while dormant (detours
                                   and the EOS's last message too) */
  uint64_t tag;                 /* river_dq_set_tag's, for messages sent */

  /* consumer */
  int nrslots, nrreq;           /* posted DATA slots (nrreq == nrslots);
                                   slot nrslots + p: producer p's EOS */
  int nring;                    /* credits x producers: the rings */
  unsigned char *rbuf;          /* (nrreq + 1) x stride */
  unsigned char **eos_buf;      /* per producer: its EOS with records,
                                   received and not yet released, or NULL */
  MPI_Request *eos_req;         /* nprod: EOS receives with records in
                                   flight (matched by MPI_Improbe), the
                                   first n_eos_req of them */
  unsigned char **eos_req_buf;  /* nprod: their buffers */
  int n_eos_req;
  int eos_held;                 /* EOS buffers with records taken, not
                                   freed: at most DQ_EOS_HELD */
  uint64_t eos_in[(DQ_HDR_SIZE + 7) / 8]; /* a bare EOS is received here */
  unsigned char **rptr;         /* nrreq: the buffer receive slot k uses */
  unsigned char **grown;        /* PULL, MSG path: receive buffers added
                                   (river__dq_grow_recvs), ngrown */
  int ngrown;
  unsigned char *spare;         /* the buffer not in a slot: NULL while
                                   get has lent it out */
  unsigned char *lent;          /* the buffer get lent out, or NULL */
  MPI_Request *rreq;
  int *ridx;
  MPI_Status *rstat;
  int *ring;                    /* nprod x credits: slot of seq, or -1 */
  int *ready;                   /* producers whose next message is here,
                                   in the order they became so (a ring
                                   of nprod from ready_head; not PULL):
                                   get takes the first, so a message
                                   costs the same however many producers */
  int ready_head, ready_n;
  unsigned char *in_ready;      /* nprod: p is in ready */
  unsigned char *done_p;        /* nprod: p's stream ended and was all
                                   delivered */
  int ndone;                    /* producers done: EOS at nprod */
  uint64_t *next, *eos_seq, *arrived, *msgs_from; /* per producer */
  unsigned char *eos_full;      /* EOS records not yet delivered */
  int held, last_p;             /* slot lent out by get (-1: none) */
  int eos_seen;
  int aborted;                  /* an EOS said DQ_ABORT: get fails (said
                                   once by this consumer, naming the
                                   producer) */
  int cur_p;                    /* PULL: producer of the unit in progress */
  uint64_t cur_u;               /* PULL: its unit number */
  uint64_t g_unit;              /* PULL: unit of the last get's message */
  int g_first, g_last, g_valid;
  uint64_t g_tag;               /* tag of the last get's message */
  int g_tagged;                 /* a message was got: g_tag is valid */
  /* consumer pacing (PUSH): protocol comment above */
  double pace;                  /* seconds of work to let queue; 0: off */
  double spb;                   /* EWMA of processing seconds per byte */
  double spb_slow;              /* the same, averaged longer: the rate
                                   code's (a plain mean of the first
                                   DQ_CODE_AVG samples, then an EWMA) */
  int nslow;                    /* samples in it, up to DQ_CODE_AVG */
  int got_waited;               /* get waited before returning it (or
                                   try_get said EAGAIN since the last) */
  int try_waited;               /* try_get said EAGAIN since then */
  double waited_avg;            /* EWMA (1/16) of got_waited */
  uint32_t rate;                /* PUSH: this consumer's rate field
                                   (rate_code), as of the last get */
  uint32_t code_told;           /* the rate field last told every
                                   producer (tell_code), or 0 */
  uint32_t pub_told;            /* the rate field last published in
                                   this consumer's rate word, or 0 */
  uint64_t told_at;             /* messages_in then */
  double t_got;                 /* when get last returned records, or 0 */
  double t_idle;                /* since when get has found nothing, or 0 */
  size_t got_bytes;             /* bytes of that message */
  int nsamples;                 /* processing times measured */
  int nheld, live;              /* credits held; producers whose EOS
                                   has not come */
  int *heldq;                   /* producers holding credits here, in
                                   turn (a ring of nprod from heldq_head:
                                   dq_consumer.c, return_one_held) */
  int heldq_head, heldq_n;
  unsigned char *in_heldq;      /* nprod: p is in heldq */
  int extra;                    /* messages over L let in after idling */
  int nwaiting;                 /* messages arrived, not yet got */
  int *held_by;                 /* per producer: its credits held here */
  uint32_t *code_sent;          /* PUSH: the rate code each producer's
                                   window has from this consumer */
  uint64_t *released;           /* credits returned to each producer */
  uint64_t credits_paced;
  double t_left;                /* when get last returned */
  int in_get;                   /* inside get: the tick leaves it be */
  struct river_dq *tick_next;   /* the rank's queues with something to do
                                   in River's waits (dq.c, the tick) */

  size_t mem_now, mem_peak;     /* memory held: now, at most (dq_mem.c) */
  uint64_t records_out, bytes_out, messages_out;
  uint64_t records_in, bytes_in, messages_in, credit_stalls;
  double put_wait, get_wait;
};

/* Between the files (each defined in the file named). */

/* dq_mem.c: the queue's memory (river_dq_stats' memory_bytes): taken
 * with these it is counted; river__dq_mem_add(q, -n) when n bytes are
 * freed before destroy. */
void river__dq_mem_add(river_dq *q, int64_t bytes);
void *river__dq_calloc(river_dq *q, size_t n, size_t size);
unsigned char *river__dq_buffers(river_dq *q, size_t n);
/* dq_mem.c: RIVER_ETIMEDOUT, once the watchdog ended a wait (`what`)
 * on q: logged as river__timeout_error does, naming the ranks q waits
 * for (river_dq_waiting_for). */
int river__dq_timeout(river_dq *q, const char *what);

/* dq_producer.c: retire completed sends; their slots become free again. */
int river__dq_send_progress(river_dq *q);

/* dq_recv.c: receive slot k's buffer (slot nrslots + p: producer p's
 * EOS with records); post slot k; post every slot (at create). */
unsigned char *river__dq_recv_slot(const river_dq *q, int k);
int river__dq_post_recv(river_dq *q, int k);
int river__dq_post_recvs(river_dq *q);
/* dq_recv.c: PULL on the MSG path, before asking for one more unit:
 * post DATA receives up to want (at most credits x producers), each
 * with a buffer of its own (q->grown). */
int river__dq_grow_recvs(river_dq *q, int want);
/* dq_recv.c: cancel and complete this rank's posted receives (none can
 * match any more when this is called). */
int river__dq_cancel_recvs(river_dq *q);
/* dq_consumer.c: take in every receive that has completed. */
int river__dq_recv_progress(river_dq *q);
/* dq_consumer.c: at destroy, drop the DATA messages that wait
 * undelivered (a consumer that did not reach EOS) and re-post their
 * receives, so that every producer's sends can complete. */
int river__dq_drop_waiting(river_dq *q);
/* dq_consumer.c: a paced consumer's part of the rank's tick (in every
 * River wait: gives back credits held while it is out of get). */
void river__dq_pace_tick(river_dq *q);

/* dq_credit.c: the credit words, on the queue's path. */
/* Collective: choose the path (RIVER_DQ_CREDITS, the RMA window where
 * it can be made), make the window or the two-sided state (words: the
 * producer's words, 0 elsewhere); rc: this rank's outcome so far. The
 * outcome agreed over the queue's communicator. */
int river__dq_credits_setup(river_dq *q, size_t words, int rc);
void river__dq_credits_free(river_dq *q);
const char *river__dq_path_name(const river_dq *q);
/* Read n of this producer's own words from off (atomically). */
int river__dq_cw_read_own(river_dq *q, MPI_Aint off, int n, uint64_t *out);
/* Add add to word off of producer p (this rank's too); RMA: flush
 * completes it at once, else river__dq_cw_flush_all. */
int river__dq_cw_add(river_dq *q, int p, MPI_Aint off, uint64_t add,
                     int flush);
int river__dq_cw_flush_all(river_dq *q);
/* PULL, idle consumer: try to claim a unit (sets cur_p, cur_u). */
int river__dq_cw_claim(river_dq *q);
/* MSG: apply what came, send what waits; no-op on RMA. */
int river__dq_cw_progress(river_dq *q);
/* Destroy: credit messages sent to producer p; 1 while this rank still
 * waits for its credit messages (expected: the count sent to it) or
 * its sends; cancel the posted credit receive. */
uint64_t river__dq_cw_sent_to(const river_dq *q, int p);
int river__dq_cw_busy(river_dq *q, uint64_t expected);
/* Destroy, at the end of the drain: RIVER_ECORRUPT (logged) if this rank
 * sent a producer other than the count it gave it (count: the credit
 * messages to each comm rank). */
int river__dq_cw_check_sent(const river_dq *q, const uint64_t *count);
int river__dq_cw_cancel(river_dq *q);
/* PUSH beyond read_all consumers, RMA path (q->pub_on): a consumer
 * publishes rate field f in its rate word; a producer starts reading
 * consumer c's (none if DQ_PUB_FLIGHT are in flight), and takes the
 * reads that completed into q->pub (wait: all of them). */
int river__dq_pub_write(river_dq *q, uint32_t f);
int river__dq_pub_start(river_dq *q, int c);
int river__dq_pub_poll(river_dq *q, int wait);
/* Producer: send consumer c its header-only EOS, eos_hdr[c] (marks
 * eos_went). */
int river__dq_send_eos_to(river_dq *q, int c);

#endif /* RIVER_DQ_INTERNAL_H */
