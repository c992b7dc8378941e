/*
 * gd_internal.h - graduated declustering's handle and wire protocol,
 * shared by src/gd.c (API, setup, read sources), src/gd_client.c (the
 * reading side) and src/gd_server.c (the disks). Never installed.
 *
 * Messages, on a duplicate of the caller's communicator:
 *   REQ  (tag 1) client -> server: {partition, copy, block, tried,
 *        missing, progress, target, flags}. `tried` and `missing` are bit sets of the
 *        copies that already failed for this block (missing: with
 *        RIVER_ENOTFOUND); the server echoes them, so the client keeps no
 *        table of what it asked. progress is the client's fraction of the
 *        partition received: the feedback the allocator works from.
 *        Two kinds ask for no block (copy < 0): PROGRESS, sent to each
 *        other live mirror whenever a block arrives, so that a disk that
 *        is not serving a client still knows how far it is (else it
 *        would see the progress of the client's last request to it, take
 *        a client that is ahead for a laggard, and serve it); and DONE,
 *        sent to the server rank of each copy of the client's
 *        partitions (the only ranks it asks; each server counts the
 *        clients of the partitions it holds) once the client has every
 *        reply it will get. MPI keeps one sender's messages on one tag in order,
 *        so a server that has a client's DONE has all its messages.
 *        A third, CANCEL (copy = GD_MSG_CANCEL, target = the copy, and
 *        partition, block), withdraws a request the client sent earlier
 *        to that server (so it has arrived: same tag, same order).
 *        flags GD_REQ_PROBE: a dormant partition's probe (below).
 *   DATA (tag 2) server -> client: a 128-byte header {partition, copy,
 *        block, tried, missing, status, dead, nrecords, tserve, shared}
 *        then the records. status GD_CANCELLED: no records; the request
 *        was withdrawn. tserve: the disk's seconds per block (its
 *        emulated rate's, or its measured reads'); shared: the disk has
 *        had a request that was neither a dormant or planned
 *        partition's (GD_REQ_PLANNED) nor a probe; lagging: how many
 *        blocks its client lags another client of the disk. A piece
 *        (gd_req.n > 0: records lo..lo+n-1 of the block) comes back
 *        with lo, the block's stored checksum and, for the piece that
 *        ends the block, its padding (padlen bytes after the records).
 *
 * Dormant partitions (BALANCED; gd.c dormant_ok, gd_client.c
 * choose_copy, check_wake; river__gd_first_slower and
 * river__gd_choose_dormant in src/gd_alloc.c). Where reading every
 * partition's first copy is balanced by construction (each disk holds
 * one partition's first copy, every partition has one number of blocks,
 * every client reads all its partitions at once; unordered mode only)
 * a partition starts
 * dormant: it asks its first copy for every block, as MIRROR_NOGD does,
 * except one block in GD_PROBE_EVERY (from block 1), which it asks of
 * another copy as a probe (flags GD_REQ_PROBE), to learn that disk's
 * tserve. At equal speeds every partition does the same, so every disk
 * serves exactly one partition's worth and all end together. It wakes,
 * and is BALANCED for the rest of the read, when its first copy's disk
 * is slower than another's by GD_WAKE_SLOWER (or, before the first copy
 * has delivered a block, silent for GD_WAKE_SILENT of the other's block
 * times), when a read fails or the first copy is dead, when the end
 * game moves one of its blocks, when a reply from its first copy
 * says `shared`: a woken partition now reads there too, so this one
 * will get less of that disk and must spread in turn, or when such a
 * reply says `lagging`: its client has fallen GD_WAKE_LAG blocks behind
 * another of the disk's (a late start, a stalled client), which only
 * the other copies can make up. Waking so passes
 * round the ring, and once one partition wakes every one does. On
 * waking, the other copies' block times (their probes', counting the
 * wait) are forgotten. A disk serves a probe before anything else, so
 * that a probe never waits for its client to fall behind the disk's
 * own (pick_stream). Other layouts start awake.
 *
 * A lost disk's plan (BALANCED; gd.c gd_find_lost, river__gd_plan in
 * src/gd_alloc.c, gd_client.c river__gd_client_plan, ask_planned,
 * ask_pieces, piece_arrived). Where partitions could start dormant, with
 * two copies, over a source that can check copies and read pieces (a
 * collection's, river_gd_open), every server checks the copies its disks
 * hold before the read and all ranks learn which cannot be read. If
 * they are exactly the copies of some disks, none next to another, the
 * read follows a plan: the live disks of each chain between lost disks
 * carry equal shares of the chain's records, to a record, each partition
 * split at record x between its copies (copy 0 reads [0, x), copy 1 the
 * rest). Copy 0 asks its blocks from the bottom up, copy 1 from the top
 * down (`next`, `top`), each request flagged GD_REQ_PLANNED; the block x
 * falls inside is asked first, in two pieces (gd_req.lo, n), read
 * unverified with the block's stored checksum (gd_hdr.crc, and the
 * block's padding with the piece that ends it), assembled at the client
 * and checked there; a piece that fails, or a block that does not match,
 * is read whole (retry list), where the disks verify it. A planned
 * partition wakes (BALANCED over [next, top) from then on) when a copy's
 * disk is slower than the other's by GD_WAKE_SLOWER, when a copy has
 * been silent before its first reply for GD_WAKE_SILENT of its expected
 * block times (the other's tserve scaled by the share of its disk the
 * plan gives this partition), when a read fails, when a disk it reads
 * is `shared` (a request there was neither planned nor a probe), or when
 * its client lags another client of such a disk by GD_PLAN_LAG blocks
 * (gd_hdr.lagging is the lag in blocks). The end game waits for the wake
 * (a copy's block time as the client sees it is the share of its disk).
 *
 * End game (BALANCED; gd_client.c end_game, gd_server.c withdraw). A
 * partition with every block asked and none to retry, one live copy
 * with nothing out and another with requests out: the client sends a
 * CANCEL for the block it asked last at the busy copy, if that block
 * would wait there (out x the copy's measured block time) longer than
 * GD_MOVE_GAIN block times of the idle copy and the busy copy is slower
 * (its block time over GD_SLOWER x the idle copy's), not merely busier.
 * At any time, too, a copy slower than the partition's fastest by
 * GD_SLOWER gets no request whose block would arrive after the fastest
 * could deliver all the rest (river__gd_too_late; choose_copy), and the
 * last request queued there is withdrawn the same way when it fails that
 * test: a slow disk never starts a block that would end the run late.
 * The server, if the request
 * still waits in its stream's ring (no disk started it), moves it to the
 * stream's cq and soon replies GD_CANCELLED (send_cancelled, no disk
 * time); else it ignores the CANCEL and the block comes as usual. Either
 * way the request gets exactly one reply, which ends the CANCEL; on
 * GD_CANCELLED the client asks the block of the idle copy (retry list,
 * `prefer`). No block is read or delivered twice, a client never has two
 * requests for one block, one CANCEL is out per partition and a block is
 * withdrawn at most once. The client keeps its requests out in `asks`
 * (one per posted slot, since a reply may land in any slot); a server
 * counts withdrawn requests against k (count + ncq) until their reply,
 * as the client does.
 *
 * Client (gd_client.c). Buffers ("slots") of header + one block: a slot
 * is FREE, POSTED (an MPI_Irecv from any server is waiting in it, for one
 * request this rank sent), READY (a block arrived, not yet delivered) or
 * HELD (the block river_gd_next returned last). A reply lands in any
 * posted slot, not necessarily the one its request left from. A block is
 * asked for only when a free slot can take its reply and the slot's
 * previous request send has completed, so memory is bounded by the slot
 * count: outstanding x r x (partitions, at most 4) + 1 in unordered
 * mode, window + 1 in stream mode (where a block may be asked for only
 * within `window` blocks of the next one to deliver, in the client's
 * sequence: the write order, its partitions whole in ascending order, or
 * for an interleaved collection stripe by stripe, block b of each of its
 * partitions before any block b + 1).
 * Each partition keeps at most `outstanding` requests at each live copy.
 * New blocks go in ascending order to the copy with the fewest requests
 * out (BALANCED, once woken), or to the first live copy (MIRROR_NOGD) or
 * copy 0 only (NOMIRROR). A failed block goes on the partition's retry list with the
 * failed copies marked, and is asked of a copy not yet tried; a copy the
 * server reports dead (file missing or unusable) gets no more requests.
 * PROGRESS reports have one buffer per (partition, copy): while one is
 * in flight, a newer report to that copy waits and is sent once the
 * buffer is free, with the progress of that moment (the reports it
 * replaces are superseded: a server keeps only the highest it has heard).
 *
 * Server (gd_server.c). One MPI_Irecv for tag 1 is kept posted.
 * Each local disk keeps a queue per stream (partition copy it stores);
 * the allocator (river__gd_pick_balanced, src/gd_alloc.c) picks the
 * stream to serve from the clients' latest reported progress: the
 * laggard's (staying with the stream it served last on an exact tie),
 * except that a dormant partition's probe at the head of its queue is
 * served first;
 * with river_gd_opts.run_blocks > 0 it stays with that stream until its
 * client leads by that many blocks, so streams alternate in runs, not
 * block by block (fewer seeks on a spinning disk). A block is read
 * through the handle's source (a gd_source_fn) into a send slot, passes
 * the disk's token bucket when rates are emulated (plus a seek's worth
 * of time when the disk switches streams), and goes out with MPI_Isend.
 * The server is done when every client of its partitions has said DONE
 * and its sends have completed.
 *
 * Progress (river_gd_next) alternates server and client steps, testing
 * MPI requests; with nothing to do it backs off (river__backoff). Its one
 * MPI_Wait follows MPI_Cancel of the server's posted request receive,
 * which the MPI standard makes local (so does setup, for a server with
 * no client). river_gd_close waits for this rank's own sends (river_wait,
 * which backs off), once both of its sides are done;
 * river__gd_client_drain says why those end.
 */
#ifndef RIVER_GD_INTERNAL_H
#define RIVER_GD_INTERNAL_H

#include "river_internal.h"
#include "gd_alloc_internal.h"

enum { GD_TAG_REQ = 1, GD_TAG_DATA = 2 };
/* gd_req.copy of the messages that ask for no block */
enum { GD_MSG_PROGRESS = -1, GD_MSG_DONE = -2, GD_MSG_CANCEL = -3 };
/* gd_hdr.status of a reply to a request its server withdrew at a CANCEL
 * (positive: never a river code) */
enum { GD_CANCELLED = 1 };
enum { SLOT_FREE = 0, SLOT_POSTED, SLOT_READY, SLOT_HELD };
/* gd_part.piece[] */
enum gd_piece { PIECE_NONE = 0, PIECE_OUT, PIECE_GOT, PIECE_FAILED };
/* gd_req.flags */
enum { GD_REQ_PROBE = 1, GD_REQ_PLANNED = 2 };

#define GD_HDR 128         /* bytes before a block's records */
#define GD_MAX_ACTIVE 4    /* unordered: partitions read at once */
#define GD_SEND_SLOTS 4    /* per local disk */
#define GD_GAIN 0.01       /* allocator: integral gain per pick */
#define GD_BIAS_CAP 20.0   /* allocator: most blocks of bias */
#define GD_MOVE_GAIN 1.5  /* end game: withdraw a block from a busy copy
                              when it would wait there this many times
                              longer than at an idle copy */
#define GD_SLOWER 1.5     /* ... and the busy copy's block time is this
                              many times the idle copy's */
#define GD_PROBE_EVERY 16 /* a dormant partition asks one block in this
                              many of a copy other than its first */
#define GD_WAKE_SLOWER 1.01 /* ... and wakes when its first copy's disk
                              is this many times slower than another */
#define GD_WAKE_LAG 4.0   /* ... or its client lags another client of its
                              first copy's disk by this many blocks */
#define GD_PLAN_LAG 16     /* a planned partition wakes when its client
                              lags another client of a disk it reads by
                              this many blocks (a disk idles only once
                              the other's share there is done) */
#define GD_WAKE_SILENT 10.0 /* ... or its first copy, before its first
                              block, has been silent for this many of
                              the other's block times */

/*
 * Where a server's blocks come from: river_gd_read_fn (river/gd.h) plus
 * *dead, which the source sets on a failure when the copy is unusable
 * for every block (missing, or its file could not be used), so clients
 * stop asking it. *dead is 0 on entry and read only on a failure. The
 * source logs as it likes; GD decides whether a failure is an error.
 */
typedef int (*gd_source_fn)(void *ctx, int partition, int copy, int disk,
                            uint64_t block, void *buf, size_t bufsize,
                            size_t *nrecords, int *dead);

/*
 * A source that can also read pieces of blocks (river_gd_open's: a
 * collection's). check: whether copy c of partition p can be read at
 * all (*dead set when not: missing or unusable), before the read
 * starts, so that every client knows the lost disks from the outset.
 * range: records lo..lo+n-1 of a block (n >= 1, within the block),
 * unverified, into buf; the block's stored checksum (CRC32C of its whole
 * extent, records then padding) in *crc, and for the range that ends the
 * block its padding after the records (*padlen bytes; else 0), so that
 * the client can verify the block it assembles from pieces.
 */
typedef int (*gd_check_fn)(void *ctx, int partition, int copy, int *dead);
typedef int (*gd_range_fn)(void *ctx, int partition, int copy,
                           uint64_t block, uint64_t lo, uint64_t n,
                           void *buf, size_t bufsize, size_t *padlen,
                           uint32_t *crc, int *dead);

struct gd_req {
  int32_t partition, copy;
  uint64_t block, tried, missing;
  double progress;
  int32_t target;          /* CANCEL: the copy whose request for `block`
                              is withdrawn; else 0 */
  int32_t flags;           /* GD_REQ_PROBE: a dormant partition's probe
                              of a copy other than its first;
                              GD_REQ_PLANNED: a block of a copy's planned
                              share (a lost disk's plan, below) */
  uint64_t lo, n;          /* a piece: records lo..lo+n-1 of the block;
                              n == 0: the whole block */
};

struct gd_hdr {
  int32_t partition, copy;
  uint64_t block, tried, missing;
  int32_t status, dead;
  uint64_t nrecords;
  double tserve;           /* the sending disk's seconds per block (its
                              emulated time, or its measured read time;
                              0: none served yet) */
  int32_t shared;          /* the disk has had a request for a copy other
                              than a first one that was not a probe */
  int32_t lagging;         /* how many whole blocks its client lags the
                              disk's client furthest ahead (0: none) */
  uint64_t lo;             /* a piece: its first record, as asked */
  uint32_t crc;            /* a piece: the block's stored checksum */
  int32_t padlen;          /* a piece that ends its block: bytes of the
                              block's padding after the records */
};
_Static_assert(sizeof(struct gd_hdr) <= GD_HDR,
               "a block's header must fit in GD_HDR bytes");

/* ----------------------------------------------------------- client side */

struct gd_retry {
  uint64_t block, tried, missing;
  int prefer;              /* a withdrawn block: the copy to ask (waited
                              for while it lives); else -1 */
  int moved;               /* withdrawn once already: never again */
};

/* A request out (sent, its reply not yet arrived): one per POSTED slot,
 * so `nslots` of them at most. */
struct gd_ask {
  int partition;           /* -1: the entry is unused */
  int copy;
  uint64_t block, tried, missing;
  uint64_t order;          /* when it was asked (the client's count) */
  double at;               /* river_wtime() when it was asked */
  int moved;               /* withdrawn once already: never again */
  int probe;               /* a dormant partition's probe */
  uint64_t lo, n;          /* a piece (n > 0), or the whole block */
};

struct gd_part {
  int p;
  uint64_t nblocks;
  uint64_t seq0;           /* this partition's first block in the client's
                              sequence */
  uint64_t next;           /* next block never asked for */
  uint64_t received;
  int out[RIVER_GD_MAX_REPLICATION];
  unsigned char dead[RIVER_GD_MAX_REPLICATION];
  uint64_t denied;         /* copies refused for lack of permission (bits) */
  uint64_t gone;           /* dead copies that died missing (RIVER_ENOTFOUND;
                              bits): a piece not asked of one is missing */
  struct gd_retry *retry;
  size_t nretry, capretry;
  int rr;                  /* BALANCED: where ties between copies start */
  /* end game (BALANCED) */
  double tblock[RIVER_GD_MAX_REPLICATION];  /* seconds a block of this
                              partition takes at each copy (moving
                              average; 0: not measured yet) */
  double tlast[RIVER_GD_MAX_REPLICATION];   /* the copy's last arrival */
  /* dormant (BALANCED): nothing is known to be slow, so the partition
   * reads its first copy, as MIRROR_NOGD does, and probes the others */
  int dormant;
  uint64_t probe_at;       /* the next probe: when `next` reaches it */
  int probes;              /* probes asked (picks the copy to probe) */
  double tserve[RIVER_GD_MAX_REPLICATION];  /* each copy's disk's seconds
                              per block, as it last said (gd_hdr) */
  /* planned (BALANCED; a lost disk's plan, below): each live copy reads
   * its share of the partition, copy 0 blocks [0, lim0) ascending from
   * `next`, copy 1 blocks [lim1, nblocks) descending to `top`, and a
   * block split between them (lim0 < lim1) in two pieces; woken like a
   * dormant partition, and BALANCED from then on over [next, top) */
  int planned;
  uint64_t top;            /* blocks >= top were asked by copy 1's plan */
  uint64_t lim0, lim1;
  double expect[RIVER_GD_MAX_REPLICATION];  /* the disk's load over this
                              partition's share of it: how many of the
                              disk's block times a block here takes */
  int has_split;           /* block lim0 is split at record split_lo: its
                              pieces, or (once they failed) the retry
                              list, read it, never ask_new */
  uint64_t split_lo;
  int piece[2];            /* each piece's state (enum gd_piece) */
  uint64_t piece_tried;    /* copies a piece failed at */
  uint64_t piece_missing;  /* ... with RIVER_ENOTFOUND */
  uint32_t piece_crc;      /* the block's stored checksum, as said */
  int crc_differs;         /* the two pieces said different checksums */
  size_t padlen;           /* the block's padding after its records */
  unsigned char *asmbuf;   /* GD_HDR + msg_bytes: the block assembled */
  int cancelling;          /* the gd_ask a CANCEL is out for, or -1 */
  int cancel_to;           /* ... and the idle copy its block goes to */
  struct gd_req cmsg;      /* the CANCEL's buffer */
  MPI_Request csreq;
};

struct gd_slot {
  unsigned char *buf;      /* GD_HDR + block bytes */
  MPI_Request rreq;        /* the reply's receive */
  MPI_Request sreq;        /* the request's send */
  struct gd_req msg;       /* the request sent from this slot */
  int state;
  uint64_t seq;            /* READY: place in the client's sequence */
  uint64_t arrival;        /* READY: order of arrival */
};

/* A PROGRESS report's buffer, one per (local partition, copy). */
struct gd_report {
  struct gd_req msg;
  MPI_Request sreq;
  int due;                 /* a newer report waits for sreq to complete */
};

/* ----------------------------------------------------------- server side */

struct gd_stream {
  int partition, copy;
  struct gd_req *q;        /* ring of `outstanding` requests */
  double *qt;              /* ... and when the rank took each in
                              (emulated disks: disk_take) */
  int head, count;
  struct gd_req *cq;       /* requests withdrawn by a CANCEL, awaiting
                              their header-only reply; count + ncq <=
                              `outstanding` (the client counts them out
                              until the reply comes) */
  int ncq;
  uint64_t served_blocks;  /* blocks sent from it (river_gd_served_get) */
  uint64_t served_bytes;
};

struct gd_disk {
  int d;
  int nstreams;
  struct gd_stream *streams;
  int cursor;              /* allocator round-robin */
  int last;                /* partition served last (-1: none) */
  int last_stream;         /* stream served last (-1: none) */
  int emulated;            /* an emulated disk (gd->rate > 0) */
  double ready_at;         /* emulated: river_wtime() when the disk is
                              done with the block it reads now */
  double tserve;           /* seconds per block (moving average; 0: none
                              served yet), sent to clients in gd_hdr */
  int shared;              /* gd_hdr.shared */
  double *prog;            /* scratch: progress per stream */
  int *pend;               /* scratch: pending per stream */
  double *bias;            /* allocator's integral term per stream */
  double bias_cap;         /* GD_BIAS_CAP blocks, as a fraction */
};

struct gd_send {
  unsigned char *buf;
  MPI_Request req;
  int busy;
  /* Emulated disks: the block is read, but held until its disk has
   * spent the emulated time on it (the disk works while the rank goes
   * on serving its clients and other disks). */
  int held;
  double send_at;
  double free_at;          /* when the rank saw its last send complete */
  int dest, len;
  int disk;                /* the local disk it is from (index into
                              disks) */
};

struct river_gd {
  MPI_Comm comm;
  int rank, size;
  char name[RIVER_PCOLL_NAME_MAX + 16];
  /* layout */
  int npart, ndisks, repl;
  size_t record_size, rpb, block_bytes;
  uint64_t *nrecords;      /* [npart] */
  int *first_disk;         /* [npart] */
  int *disk_rank;          /* [ndisks] */
  int *client_rank;        /* [npart] */
  /* the source the server reads: gd.c's adapter of `read` (for
     river_gd_create) or of a collection (river_gd_open) */
  gd_source_fn source;
  gd_check_fn check;       /* river_gd_open's source only, else NULL */
  gd_range_fn range;       /* ... */
  void *source_ctx;
  size_t msg_bytes;        /* a reply's most bytes after its header: a
                              block's, or a collection block's extent
                              (records and padding) */
  uint64_t *plan;          /* [npart] a lost disk's plan: records read
                              from each partition's first copy (the rest
                              from its second); NULL: no plan */
  int *copy_status;        /* [npart * repl] with a plan: each copy's
                              check (0, or why it cannot be read) */
  river_gd_read_fn read;   /* river_gd_create's callback, else NULL */
  void *ctx;               /* its context */
  /* options */
  river_gd_policy policy;
  river_gd_mode mode;
  int striped;             /* stream order is stripe by stripe */
  int k;
  uint64_t window;
  double rate, seek;
  int run_blocks;          /* river_gd_opts.run_blocks */
  const river_perturb *perturb;
  double t0;
  double next_due;         /* the earliest held send's send_at; 0: none */
  /* client */
  int nmine;
  struct gd_part *mine;
  int *local_of;           /* [npart] index into mine, or -1 */
  int nslots;
  struct gd_slot *slots;
  struct gd_ask *asks;     /* [nslots]: the requests out */
  uint64_t nasked;         /* requests sent so far (gd_ask.order) */
  MPI_Request *rreqs;      /* [nslots] copies for MPI_Testsome */
  int *idx;                /* [nslots] scratch */
  uint64_t dseq;           /* stream: next place in the sequence to deliver */
  uint64_t arrivals;
  int posted;
  int client_rc;
  int fail_part;           /* the lowest block with no copy left, or -1 */
  uint64_t fail_block, fail_tried, fail_missing, fail_denied;
  int fail_rc;             /* that block's verdict (RIVER_ENOTFOUND, ...) */
  int client_done;         /* every partition finished or failed, nothing
                              posted */
  int nservers;
  int *servers;            /* the ranks serving a copy of a partition
                              this rank reads, sorted: its DONE goes
                              there */
  struct gd_req *done_msg; /* [nservers] */
  MPI_Request *done_sreq;  /* [nservers] */
  struct gd_report *reports; /* [nmine * repl]: mine[i]'s copy c at
                                i * repl + c */
  int reports_due;         /* how many reports have `due` set */
  int done_sent;
  /* server */
  int nlocal;
  struct gd_disk *disks;
  int *disk_local;         /* [ndisks] index into disks, or -1 */
  double *progress;        /* [npart] latest reported */
  uint64_t *pnblocks;      /* [npart] */
  struct gd_req rmsg;
  MPI_Request rreq;
  int nclients;            /* client ranks of the partitions with a copy
                              here */
  int *clients;            /* [nclients] those ranks, sorted */
  int dones;
  unsigned char *done_from; /* [nclients]: that client's DONE came */
  int nsend;
  struct gd_send *send;
  int server_done;
  river_gd_stats stats;
  uint64_t pieces;         /* split blocks assembled and verified (for
                              the tests) */
  uint64_t plan_woken;     /* planned partitions woken (for the tests) */
  uint64_t probes_moved;   /* probes the end game withdrew (for the tests:
                              a probe served first never waits that long) */
  int fatal;               /* a step's first error (MPI or protocol):
                              every later call returns it */
};

/* The layout's two lookups, here so that the client and the server
 * (below gd.c, which calls them both) need nothing of gd.c's. */

/* The index of rank in gd->clients (sorted, unique), or -1. */
static inline int river__gd_client_index(const river_gd *gd, int rank)
{
  int lo = 0, hi = gd->nclients - 1, mid;

  while (lo <= hi) {
    mid = lo + (hi - lo) / 2;
    if (gd->clients[mid] == rank)
      return mid;
    if (gd->clients[mid] < rank)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

/* The disk that holds copy c of partition p. */
static inline int river__gd_disk_of(const river_gd *gd, int p, int c)
{
  return (gd->first_disk[p] + c) % gd->ndisks;
}

/* Server (gd_server.c): post the request receive, or finish at once when
 * no rank reads (collective setup calls it on every rank). */
int river__gd_server_start(river_gd *gd);

/* Server: take in requests, serve what the allocator picks, finish sends;
 * sets *busy when something happened. */
int river__gd_server_step(river_gd *gd, int *busy);

/* Client (gd_client.c): start partition mp on the lost disk's plan
 * (gd->plan; gd_setup_client), its dead copies known from the outset. */
int river__gd_client_plan(river_gd *gd, struct gd_part *mp);

/* Client (gd_client.c): at close, wait for this rank's request, progress
 * and DONE sends (the reasons these waits end are given there). */
void river__gd_client_drain(river_gd *gd);

#endif /* RIVER_GD_INTERNAL_H */
