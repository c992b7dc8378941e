/*
 * test_gd_mpi - graduated declustering (river/gd.h) on 8 ranks, in
 * groups of 2..8 ranks (the first n ranks of the job; the others wait):
 *
 *   source     a synthetic mirrored source (river_gd_create) whose records
 *              say which partition and index they are: every record
 *              delivered exactly once (count, XOR and sum of record
 *              hashes against what the partitions hold, and a per-block
 *              "seen once" map at the client), in both access modes (in
 *              stream mode blocks come in write order), with every policy;
 *              with k disks slowed (emulated rates, perturbation) and with
 *              a lost disk (every read there fails RIVER_ENOTFOUND); with
 *              separate disk and client ranks; uneven and empty partitions
 *   balance    3 clients, 3 disks, disk 0 at a third of the speed: under
 *              GD the clients finish within a few percent of each other
 *              and the slow disk's neighbours serve more; with
 *              mirror-nogd the slow disk's client is left behind
 *   dormant    4 disks, 4 clients at one speed: each disk serves exactly
 *              its partition's share and switches streams only for the
 *              probes; with disk 0 at 50% every partition that needs to
 *              wakes and the clients finish together; layouts where
 *              the fixed mirror is unbalanced (uneven partitions, a
 *              client reading 2 of 4 disks' partitions) start awake
 *   end game   4 disks, 4 clients, disk 0 at 5% of the others' rate: the
 *              blocks queued at the slow disk at the end are withdrawn
 *              (CANCEL) and read from the idle mirror: cancels happen
 *              (river_gd_stats), every record still comes exactly once,
 *              in write order in stream mode, also with a lost disk
 *   failures   a block bad on one copy is served by the other; a block
 *              bad on every copy fails the read on every rank (close),
 *              with an error naming partition and block; nomirror does
 *              not fail over
 *   collection a real mirrored collection (river_gd_open): read by 2..8
 *              ranks in both modes, then with a flipped byte in one copy,
 *              with one disk directory removed and another unreadable,
 *              and with both copies
 *              of a block damaged (error naming collection, partition,
 *              block on the client; every rank fails)
 *   bad input  NULL and nonsense arguments, ranks disagreeing
 *
 * Collective calls are made on every rank of their communicator whatever
 * the checks say, so a failing check never hangs the test.
 */
#define _GNU_SOURCE
#include <river.h>
#include "mpitest.h"
#include "gd_internal.h" /* GD_HDR: where a block's buffer starts */

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NR 8          /* the job's ranks */
#define RS 32         /* record size */
#define RPB 16        /* records per block (synthetic source) */

static int wrank, wsize;
static char root[2048];

/* ------------------------------------------------------------ records */

/* Record i of partition p: {id = p << 40 | i, three words from id}. */
static void make_rec(unsigned char *r, int p, uint64_t i)
{
  uint64_t w[4];

  w[0] = ((uint64_t)p << 40) | i;
  w[1] = river_hash64(w[0]);
  w[2] = river_hash64(w[1]);
  w[3] = river_hash64(w[2]);
  memcpy(r, w, RS);
}

static int rec_ok(const unsigned char *r)
{
  unsigned char want[RS];
  uint64_t id;

  memcpy(&id, r, 8);
  make_rec(want, (int)(id >> 40), id & ((1ULL << 40) - 1));
  return memcmp(r, want, RS) == 0;
}

struct sums {
  uint64_t count, x, sum;
};

static void sums_add(struct sums *s, const unsigned char *r)
{
  uint64_t h = river_hash64(river_hash64(((const uint64_t *)(const void *)r)[0])
                     ^ ((const uint64_t *)(const void *)r)[3]);

  s->count++;
  s->x ^= h;
  s->sum += h;
}

static void sums_reduce(MPI_Comm c, const struct sums *in, struct sums *out)
{
  MPI_Allreduce(&in->count, &out->count, 1, MPI_UINT64_T, MPI_SUM, c);
  MPI_Allreduce(&in->x, &out->x, 1, MPI_UINT64_T, MPI_BXOR, c);
  MPI_Allreduce(&in->sum, &out->sum, 1, MPI_UINT64_T, MPI_SUM, c);
}

/* ------------------------------------------------------ synthetic source */

#define MAXP 16

struct source {
  int npart, ndisks, repl;
  uint64_t nrec[MAXP];
  int lost_disk;          /* every read there: RIVER_ENOTFOUND; -1: none */
  int missing_part;       /* every read of it: RIVER_ENOTFOUND; -1: none */
  int missing_ms;         /* ... after this long (a slow failure) */
  int bad_disk;           /* (bad_disk, bad_part, bad_block): ECORRUPT */
  int bad_part;
  uint64_t bad_block;
  uint64_t bad_last;      /* > bad_block: blocks bad_block..bad_last */
  int bad_all;            /* that block is bad on every copy */
  river_layout order;     /* stream order of the layout */
  int first[MAXP];        /* partition p's first copy's disk */
  int wrong_disk;         /* set if a read arrived at the wrong disk */
  uint64_t reads;
  int late_rank;          /* this rank (of the job; -1: none) starts */
  int late_ms;            /* ... reading this late */
};

static int src_read(void *ctx, int p, int c, int disk, uint64_t block,
                    void *buf, size_t bufsize, size_t *nrecords)
{
  struct source *s = ctx;
  uint64_t first = block * RPB, i, n;

  s->reads++;
  if (disk != (s->first[p] + c) % s->ndisks)
    s->wrong_disk = 1;
  if (p == s->missing_part && s->missing_ms > 0)
    usleep((useconds_t)s->missing_ms * 1000);
  if (disk == s->lost_disk || p == s->missing_part)
    return RIVER_ENOTFOUND;
  if (p == s->bad_part
      && (block == s->bad_block
          || (block > s->bad_block && block <= s->bad_last))
      && (s->bad_all || disk == s->bad_disk))
    return RIVER_ECORRUPT;
  if (bufsize < RPB * RS || first >= s->nrec[p])
    return RIVER_EINVAL;
  n = s->nrec[p] - first < RPB ? s->nrec[p] - first : RPB;
  for (i = 0; i < n; i++)
    make_rec((unsigned char *)buf + i * RS, p, first + i);
  *nrecords = (size_t)n;
  return RIVER_SUCCESS;
}

static void source_init(struct source *s, int npart, int ndisks, int repl)
{
  int p;

  memset(s, 0, sizeof *s);
  s->npart = npart;
  s->ndisks = ndisks;
  s->repl = repl;
  s->lost_disk = s->missing_part = s->bad_disk = s->bad_part =
      s->late_rank = -1;
  for (p = 0; p < npart; p++) {
    s->nrec[p] = 40 + (uint64_t)p * 37 + (p % 3 == 2 ? RPB : 0);
    s->first[p] = p % ndisks;
  }
}

/* What the partitions hold. */
static void source_sums(const struct source *s, struct sums *out)
{
  unsigned char r[RS];
  uint64_t i;
  int p;

  memset(out, 0, sizeof *out);
  for (p = 0; p < s->npart; p++)
    for (i = 0; i < s->nrec[p]; i++) {
      make_rec(r, p, i);
      sums_add(out, r);
    }
}

/* ------------------------------------------------------------ one read */

struct outcome {
  int rc_next;            /* what river_gd_next ended with */
  int rc_close;
  struct sums got;        /* this rank's */
  river_gd_stats st;
  int order_ok;           /* stream: write order kept */
  int records_ok;         /* every record as made, in its partition */
  int once_ok;            /* no block twice */
  uint64_t probes_moved;  /* probes the end game withdrew (gd_internal.h) */
  int servers[NR], nservers; /* where this client's DONE went */
  int clients[NR], nclients; /* whose DONE this server waited for */
};

/* Drain gd on this rank, checking what arrives. */
static void drain(river_gd *gd, river_gd_mode mode, int striped,
                  struct outcome *o, const uint64_t *nblocks, int npart)
{
  const void *r;
  size_t n, i;
  int p, lastp = -1, rc;
  uint64_t b, lastb = 0;
  unsigned char *seen[MAXP] = {NULL};

  for (p = 0; p < npart && p < MAXP; p++)
    seen[p] = calloc(nblocks[p] + 1, 1);
  o->order_ok = o->records_ok = o->once_ok = 1;
  while ((rc = river_gd_next(gd, &r, &n, &p, &b)) == RIVER_SUCCESS) {
    if (p < 0 || p >= npart || b >= nblocks[p]) {
      o->records_ok = 0;
      continue;
    }
    if (seen[p][b]++)
      o->once_ok = 0;
    /* The block's buffer (header, then records) starts on 4 KiB. */
    MT_CHECK(((uintptr_t)r - GD_HDR) % 4096 == 0);
    /* Stream: (partition, block), or (block, partition) for an
     * interleaved order, strictly ascending; with every block delivered
     * once, that is exactly the write order. */
    if (mode == RIVER_GD_STREAM && lastp >= 0
        && !(striped ? b > lastb || (b == lastb && p > lastp)
                     : p > lastp || (p == lastp && b > lastb)))
      o->order_ok = 0;
    lastp = p;
    lastb = b;
    for (i = 0; i < n; i++) {
      const unsigned char *rec = (const unsigned char *)r + i * RS;
      uint64_t id;
      memcpy(&id, rec, 8);
      if (!rec_ok(rec) || (int)(id >> 40) != p)
        o->records_ok = 0;
      sums_add(&o->got, rec);
    }
  }
  o->rc_next = rc;
  river_gd_stats_get(gd, &o->st);
  for (p = 0; p < npart && p < MAXP; p++)
    free(seen[p]);
}

/* Read source s with GD on comm c; checks exactly-once and order. */
static void read_source(MPI_Comm c, struct source *s,
                        const river_gd_opts *opts, int expect_rc,
                        struct outcome *o, const char *what)
{
  river_gd_layout l = {0};
  river_gd *gd = NULL;
  struct sums want, all;
  uint64_t nblocks[MAXP];
  int p, rc, ok, bad;

  memset(o, 0, sizeof *o);
  l.npartitions = s->npart;
  l.ndisks = s->ndisks;
  l.replication = s->repl;
  l.record_size = RS;
  l.records_per_block = RPB;
  l.nrecords = s->nrec;
  l.order = s->order;
  l.first_disk = s->first;
  for (p = 0; p < s->npart; p++)
    nblocks[p] = (s->nrec[p] + RPB - 1) / RPB;
  rc = river_gd_create(c, &l, src_read, s, opts, &gd);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc != RIVER_SUCCESS)
    return;
  if (wrank == s->late_rank)
    usleep((useconds_t)s->late_ms * 1000);
  drain(gd, opts ? opts->mode : RIVER_GD_UNORDERED,
        s->order == RIVER_LAYOUT_INTERLEAVED, o, nblocks, s->npart);
  o->probes_moved = gd->probes_moved;
  o->nservers = gd->nservers;
  o->nclients = gd->nclients;
  if (gd->nservers > 0)   /* else the lists may be NULL */
    memcpy(o->servers, gd->servers, (size_t)gd->nservers * sizeof(int));
  if (gd->nclients > 0)
    memcpy(o->clients, gd->clients, (size_t)gd->nclients * sizeof(int));
  o->rc_close = river_gd_close(gd);
  MT_CHECK_RC(o->rc_close, expect_rc);
  if (expect_rc == RIVER_SUCCESS)
    MT_CHECK_RC(o->rc_next, RIVER_EOS);
  source_sums(s, &want);
  sums_reduce(c, &o->got, &all);
  ok = o->order_ok && o->records_ok && o->once_ok && !s->wrong_disk;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, c);
  bad = !ok || (expect_rc == RIVER_SUCCESS
                && (all.count != want.count || all.x != want.x
                    || all.sum != want.sum));
  if (bad) {
    int r;
    MPI_Comm_rank(c, &r);
    if (r == 0)
      fprintf(stderr, "%s: delivered %llu of %llu records, order %d, "
                      "records %d, once %d, disks %d\n", what,
              (unsigned long long)all.count, (unsigned long long)want.count,
              o->order_ok, o->records_ok, o->once_ok, !s->wrong_disk);
  }
  MT_CHECK(!bad);
}

/* The first n ranks of the job, or MPI_COMM_NULL on the others. */
static MPI_Comm group(int n)
{
  MPI_Comm c;

  MPI_Comm_split(MPI_COMM_WORLD, wrank < n ? 0 : MPI_UNDEFINED, wrank, &c);
  return c;
}

/* ------------------------------------------------------------- source */

/* 1 on every rank if all of WORLD's ranks share one node (as MPI sees
 * nodes), else 0: timing checks hold only there (tests/nodes/ runs this
 * test on emulated nodes, over TCP on the same cores). Collective. */
static int world_on_one_node(void)
{
  MPI_Comm node;
  int nsize = 0, world_n = 0, mine, all = 0;

  MPI_Comm_size(MPI_COMM_WORLD, &world_n);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                      MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &nsize);
  MPI_Comm_free(&node);
  mine = nsize == world_n;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all;
}

/* The seeks (summed over group c) of one read of n partitions of 64
 * blocks with run_blocks rb, the other options o (test_source's
 * perturbed reads: half the disks at 50%, emulated rates and seeks).
 * Collective over c. */
static uint64_t seeks_with_runs(MPI_Comm c, int n, river_gd_opts o, int rb)
{
  struct source s;
  struct outcome out;
  char what[96];
  uint64_t seeks = 0;
  int q;

  o.run_blocks = rb;
  source_init(&s, n, n, 2);
  for (q = 0; q < n; q++)
    s.nrec[q] = 64 * RPB;
  snprintf(what, sizeof what, "n=%d run_blocks %d", n, rb);
  read_source(c, &s, &o, RIVER_SUCCESS, &out, what);
  MPI_Allreduce(&out.st.seeks, &seeks, 1, MPI_UINT64_T, MPI_SUM, c);
  return seeks;
}

/* seeks_with_runs at run_blocks 0 and the most, summed over every n
 * (groups of 2..NR ranks), added to all[0..1] (rank 0's are whole).
 * Collective over the world. */
static void seeks_every_n(uint64_t all[2])
{
  river_gd_opts o = RIVER_GD_OPTS_INIT;
  river_perturb *pt = NULL;
  char spec[64];
  int n;

  for (n = 2; n <= NR; n++) {
    MPI_Comm c = group(n);
    if (c == MPI_COMM_NULL)
      continue;
    snprintf(spec, sizeof spec, "disk:0-%d=0.5", n / 2 - 1);
    MT_CHECK_RC(river_perturb_parse(spec, &pt), RIVER_SUCCESS);
    o.perturb = pt;
    o.disk_rate = 40e6;
    o.seek_seconds = 1e-4;
    all[0] += seeks_with_runs(c, n, o, 0);
    all[1] += seeks_with_runs(c, n, o, RIVER_GD_MAX_RUN_BLOCKS);
    river_perturb_destroy(pt);
    MPI_Comm_free(&c);
  }
}

static void test_source(void)
{
  static const river_gd_policy pols[] = {RIVER_GD_BALANCED,
                                         RIVER_GD_MIRROR_NOGD,
                                         RIVER_GD_NOMIRROR};
  uint64_t seeks_all[2] = {0, 0};   /* rank 0: over every n */
  int n, m, pi;

  for (n = 2; n <= NR; n++) {
    MPI_Comm c = group(n);
    if (c == MPI_COMM_NULL)
      continue;
    for (m = 0; m < 2; m++) {
      river_gd_opts o = RIVER_GD_OPTS_INIT;
      struct source s;
      struct outcome out;
      char what[96];
      o.mode = m ? RIVER_GD_STREAM : RIVER_GD_UNORDERED;
      /* Every policy, every rank both disk and client. */
      for (pi = 0; pi < 3; pi++) {
        o.policy = pols[pi];
        source_init(&s, n, n, 2);
        snprintf(what, sizeof what, "n=%d mode %d policy %d", n, m, pi);
        read_source(c, &s, &o, RIVER_SUCCESS, &out, what);
      }
      o.policy = RIVER_GD_BALANCED;
      /* k slowed disks, emulated at 40 MB/s (blocks are 512 bytes). */
      {
        river_perturb *pt = NULL;
        char spec[64];
        snprintf(spec, sizeof spec, "disk:0-%d=0.5", n / 2 - 1);
        MT_CHECK_RC(river_perturb_parse(spec, &pt), RIVER_SUCCESS);
        o.perturb = pt;
        o.disk_rate = 40e6;
        o.seek_seconds = 1e-4;
        source_init(&s, n, n, 2);
        snprintf(what, sizeof what, "n=%d mode %d perturbed", n, m);
        read_source(c, &s, &o, RIVER_SUCCESS, &out, what);
        /* Spinning disks: runs of 2 blocks' lead; still exactly once. */
        o.run_blocks = 2;
        source_init(&s, n, n, 2);
        snprintf(what, sizeof what, "n=%d mode %d perturbed, runs of 2", n,
                 m);
        read_source(c, &s, &o, RIVER_SUCCESS, &out, what);
        /* run_blocks reaches the disks: with the most lead they switch
         * streams (count seeks) less often than with none, where equal
         * clients take turns block by block. Checked on the sum over
         * every n: at n = 2 (one disk of 2 at 50%) the clients stop
         * asking the slow disk near the end (river__gd_too_late), and
         * with blocks of a few microseconds that can leave both counts
         * small and within the scatter (7 against 8 once in CI). */
        if (m == RIVER_GD_UNORDERED) {
          uint64_t seeks[2];
          seeks[0] = seeks_with_runs(c, n, o, 0);
          seeks[1] = seeks_with_runs(c, n, o, RIVER_GD_MAX_RUN_BLOCKS);
          if (wrank == 0)
            printf("n=%d: seeks %llu with run_blocks 0, %llu with %d\n", n,
                   (unsigned long long)seeks[0],
                   (unsigned long long)seeks[1], RIVER_GD_MAX_RUN_BLOCKS);
          seeks_all[0] += seeks[0];
          seeks_all[1] += seeks[1];
        }
        o.run_blocks = 0;
        o.perturb = NULL;
        o.disk_rate = 0;
        o.seek_seconds = 0;
        river_perturb_destroy(pt);
      }
      /* A lost disk: every record still comes, from the mirrors. */
      source_init(&s, n, n, 2);
      s.lost_disk = n - 1;
      snprintf(what, sizeof what, "n=%d mode %d lost disk", n, m);
      read_source(c, &s, &o, RIVER_SUCCESS, &out, what);
      /* Three copies, two disks lost (n >= 4), small outstanding. */
      if (n >= 4) {
        o.outstanding = 1;
        source_init(&s, n, n, 3);
        s.lost_disk = 1;
        snprintf(what, sizeof what, "n=%d mode %d r=3", n, m);
        read_source(c, &s, &o, RIVER_SUCCESS, &out, what);
        o.outstanding = 0;
      }
      /* Fewer disks than partitions, more partitions than ranks. */
      source_init(&s, 2 * n, n, 2);
      s.nrec[1] = 0;
      /* (partition p's copies are on disks p mod n, p+1 mod n: what
       * the source checks, (p + c) mod ndisks) */
      snprintf(what, sizeof what, "n=%d mode %d 2n partitions", n, m);
      read_source(c, &s, &o, RIVER_SUCCESS, &out, what);
      /* The same in an interleaved write order (stripe by stripe). */
      s.order = RIVER_LAYOUT_INTERLEAVED;
      snprintf(what, sizeof what, "n=%d mode %d interleaved", n, m);
      read_source(c, &s, &o, RIVER_SUCCESS, &out, what);
    }
    MPI_Comm_free(&c);
  }
  {
    /* Runs halve the seeks where the ranks share a node's memory; over
     * TCP between emulated nodes (tests/nodes/test_gd_2n.sh) the
     * clients' timing changes which blocks a disk gets next (200
     * against 142 in one run under load), so there the ratio is
     * reported, not asserted; every read above is checked either way.
     * A loaded node's scheduling can do the same (here, idle: 861
     * against 136), so on one node a sum that misses is measured again,
     * every n afresh, up to 3 times in all, and checked on the first
     * that meets it or on the last: disks that ignore run_blocks switch
     * as often with it as without and fail every time. */
    int one_node = world_on_one_node(), attempt, ok = 0;
    for (attempt = 1; attempt <= 3; attempt++) {
      if (attempt > 1) {
        seeks_all[0] = seeks_all[1] = 0;
        seeks_every_n(seeks_all);
      }
      if (wrank == 0) {
        ok = !one_node || seeks_all[1] < seeks_all[0] / 2;
        printf("every n%s: seeks %llu with run_blocks 0, %llu with %d%s\n",
               attempt > 1 ? ", again" : "",
               (unsigned long long)seeks_all[0],
               (unsigned long long)seeks_all[1], RIVER_GD_MAX_RUN_BLOCKS,
               one_node ? "" : " (ranks on several nodes: not asserted)");
        if (one_node && (ok || attempt == 3))
          MT_CHECK(seeks_all[1] < seeks_all[0] / 2);
      }
      MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
      if (ok)
        break;
    }
  }
}

/* Separate roles: disks on the first half of the ranks, clients on the
 * second, some ranks reading two partitions. */
/* got[0..n-1] is exactly the pair want[0..1] (sorted). */
static int peers_are(const int *got, int n, const int *want)
{
  return n == 2 && got[0] == want[0] && got[1] == want[1];
}

static void test_roles(void)
{
  MPI_Comm c = group(NR);
  int disk_ranks[4] = {0, 1, 2, 3}, client_ranks[6] = {4, 5, 6, 7, 4, 5};
  /* Partition p's copies are on disks p % 4 and p % 4 + 1: client 4
   * reads partitions 0 and 4 (disks 0, 1), 5 reads 1 and 5 (1, 2), 6
   * reads 2 (2, 3), 7 reads 3 (3, 0); disk 0 holds copies of 0, 4 and
   * 3, and so on. Each says DONE to two servers, not to all four. */
  static const int servers_of[4][2] = {{0, 1}, {1, 2}, {2, 3}, {0, 3}};
  static const int clients_of[4][2] = {{4, 7}, {4, 5}, {5, 6}, {6, 7}};
  int m;

  for (m = 0; m < 2; m++) {
    river_gd_opts o = RIVER_GD_OPTS_INIT;
    struct source s;
    struct outcome out;
    o.mode = m ? RIVER_GD_STREAM : RIVER_GD_UNORDERED;
    o.disk_ranks = disk_ranks;
    o.client_ranks = client_ranks;
    source_init(&s, 6, 4, 2);
    read_source(c, &s, &o, RIVER_SUCCESS, &out, "roles");
    if (wrank < 4) {
      MT_CHECK(out.st.blocks_received == 0 && out.st.blocks_served > 0
               && out.st.served_seconds > 0 && out.st.seconds == 0);
      MT_CHECK(out.nservers == 0
               && peers_are(out.clients, out.nclients, clients_of[wrank]));
    } else {
      MT_CHECK(out.st.blocks_received > 0 && out.st.blocks_served == 0
               && out.st.served_seconds == 0 && out.st.seconds > 0);
      MT_CHECK(out.nclients == 0
               && peers_are(out.servers, out.nservers,
                            servers_of[wrank - 4]));
    }
    s.lost_disk = 2;
    read_source(c, &s, &o, RIVER_SUCCESS, &out, "roles, lost disk");
    if (wrank == 2)
      MT_CHECK(out.st.blocks_served == 0 && out.st.served_seconds == 0);
  }
  MPI_Comm_free(&c);
}

/* ------------------------------------------------------------ balance */

/* 3 disks and 3 clients on 6 ranks, disk 0 at a third of the rate: GD
 * evens the clients out, the fixed mirror does not. */
static void test_balance(void)
{
  int one_node = world_on_one_node();   /* every world rank, first */
  MPI_Comm c = group(6);
  int disk_ranks[3] = {0, 1, 2}, client_ranks[3] = {3, 4, 5}, pol;
  int attempt, done = 0;
  double secs[2][3];
  river_perturb *pt = NULL;

  if (c == MPI_COMM_NULL)
    return;
  MT_CHECK_RC(river_perturb_parse("disk:0=0.34", &pt), RIVER_SUCCESS);
  /* Timings on a shared machine (8 ranks on 2 cores, slower still under
   * the sanitizers) are noisy: up to 3 attempts, the checks made on the
   * first that passes them all or on the last. A GD that does not
   * balance fails every attempt. */
  for (attempt = 1; attempt <= 3 && !done; attempt++) {
  for (pol = 0; pol < 2; pol++) {
    river_gd_opts o = RIVER_GD_OPTS_INIT;
    struct source s;
    struct outcome out;
    int p;
    o.policy = pol ? RIVER_GD_MIRROR_NOGD : RIVER_GD_BALANCED;
    o.disk_ranks = disk_ranks;
    o.client_ranks = client_ranks;
    o.disk_rate = 2e6;   /* 512-byte blocks: ~4000 blocks/s per disk */
    o.perturb = pt;
    source_init(&s, 3, 3, 2);
    for (p = 0; p < 3; p++)
      s.nrec[p] = 1200 * RPB;   /* 0.6 MB each: ~0.3 s at full speed */
    read_source(c, &s, &o, RIVER_SUCCESS, &out, "balance");
    /* An emulated disk is done with its last block no sooner than its
     * rate allows (it starts idle at the read's start, and never starts a
     * block before it is done with the last): disk 0 at 0.34 of it. */
    if (wrank < 3)
      MT_CHECK(out.st.served_seconds
               >= 0.999 * (double)out.st.bytes_served
                      / (o.disk_rate * (wrank == 0 ? 0.34 : 1.0)));
    {
      double all[6];
      MPI_Allgather(&out.st.seconds, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, c);
      for (p = 0; p < 3; p++)
        secs[pol][p] = all[3 + p];
    }
  }
  if (wrank == 0) {
    double lo = secs[0][0], hi = secs[0][0], nlo, nhi;
    int p;
    for (p = 1; p < 3; p++) {
      lo = secs[0][p] < lo ? secs[0][p] : lo;
      hi = secs[0][p] > hi ? secs[0][p] : hi;
    }
    nlo = nhi = secs[1][0];
    for (p = 1; p < 3; p++) {
      nlo = secs[1][p] < nlo ? secs[1][p] : nlo;
      nhi = secs[1][p] > nhi ? secs[1][p] : nhi;
    }
    if (getenv("RIVER_TEST_VERBOSE"))
      fprintf(stderr, "balance: gd %.3f %.3f %.3f, nogd %.3f %.3f %.3f\n",
              secs[0][0], secs[0][1], secs[0][2], secs[1][0], secs[1][1],
              secs[1][2]);
    /* GD: the clients finish together (spread < 15% on a loaded 2-core
     * machine; the benchmark measures it properly), and sooner than the
     * fixed mirror's slowest client, which reads only the slow disk. */
    done = hi - lo < 0.15 * hi && hi < 0.85 * nhi && nhi - nlo > 0.3 * nhi;
    /* Timing across emulated nodes (TCP on the same 2 cores) is the
     * benchmark's to judge: reported there, not asserted (the fixed
     * mirror's clients came out within 30% of each other once). */
    if (!one_node) {
      printf("balance: gd %.3f %.3f %.3f, nogd %.3f %.3f %.3f (ranks on "
             "several nodes: not asserted)\n", secs[0][0], secs[0][1],
             secs[0][2], secs[1][0], secs[1][1], secs[1][2]);
      done = 1;
    } else if (done || attempt == 3) {
      MT_CHECK(hi - lo < 0.15 * hi);
      MT_CHECK(hi < 0.85 * nhi);
      MT_CHECK(nhi - nlo > 0.3 * nhi);
    }
  }
  MPI_Bcast(&done, 1, MPI_INT, 0, c);
  }
  river_perturb_destroy(pt);
  MPI_Comm_free(&c);
}

/* ------------------------------------------------------------ dormant */

/* 4 disks (ranks 0-3) and 4 clients (4-7) at one emulated speed: the
 * partitions stay dormant, each reading its first copy and probing the
 * other one block in 16, so every disk serves exactly its partition's
 * share (the probes it serves for its neighbour make up for those its
 * own client sends away) and switches streams only for the probes; a
 * GD woken at equal speeds switches at nearly every block. Then disk 0
 * at 50%: partition 0 wakes (its first copy is slower), and the
 * partitions whose first copy it comes to share wake in turn, so disk 0
 * serves well under its share and the clients still finish together.
 * Then equal speeds with client 1 starting 25 ms (5 blocks) late: disk
 * 1 sees its own client lag partition 0's (whose probes it serves) by
 * GD_WAKE_LAG blocks and says so, so partition 1 wakes and spreads to
 * disk 2 (disk 1 serves under 64), and the ring wakes after it; no
 * probe is withdrawn by the end game. With neither the lag signal nor
 * probes served first, partition 0's probes at disk 1 (by lag, served
 * only once partition 1 led) waited there until the end game moved them
 * back (6 CANCELs in a run); with probes first but no lag signal, the
 * read stayed dormant, 64 blocks a disk, and client 1 ended its 25 ms
 * late (0.337 s against 0.327). With the lag signal but not probes
 * first this case passes (as does a 10 ms late start, tried): the
 * probe-first rule's evidence is the lost benchmark's whole runs
 * (doc/results/issue13-session7-probes.txt), not a test. Last, equal speeds with 6 requests out a copy, where
 * the partitions must stay dormant and exact just the same. (After its
 * last ask a client's progress at its first copy's disk is stale by the
 * requests out, so that disk may say it lags; the client ignores that
 * then, gd_client.c answered. Without that rule this case still passed
 * here, at 6 and at 12 out: by then too few blocks are out for the end
 * game to move one. So it guards the deeper queue, not that rule.) */
static void test_dormant(void)
{
  MPI_Comm c = group(NR);
  int disk_ranks[4] = {0, 1, 2, 3}, client_ranks[4] = {4, 5, 6, 7};
  int slow, p, attempt, done;
  river_perturb *pt = NULL;

  MT_CHECK_RC(river_perturb_parse("disk:0=0.5", &pt), RIVER_SUCCESS);
  for (slow = 0; slow < 4; slow++) {
    /* Timing-driven (a rank held off its core for 10 block times looks
     * like a stalled disk and wakes its partition): up to 3 attempts,
     * checked on the first that passes or on the last. */
    for (attempt = 1, done = 0; attempt <= 3 && !done; attempt++) {
      river_gd_opts o = RIVER_GD_OPTS_INIT;
      struct source s;
      struct outcome out;
      uint64_t served[NR], seeks[NR];
      double secs[NR];
      char what[64];
      o.disk_ranks = disk_ranks;
      o.client_ranks = client_ranks;
      o.disk_rate = 102400;   /* 512-byte blocks: 5 ms each */
      o.perturb = slow == 1 ? pt : NULL;
      if (slow == 3)
        o.outstanding = 6;
      source_init(&s, 4, 4, 2);
      for (p = 0; p < 4; p++)
        s.nrec[p] = 64 * RPB;
      if (slow == 2) {
        s.late_rank = client_ranks[1];
        s.late_ms = 25;
      }
      snprintf(what, sizeof what, "dormant, %s",
               slow == 1 ? "disk 0 at 50%"
               : slow == 2 ? "client 1 25 ms late"
               : slow == 3 ? "equal speeds, 6 out a copy" : "equal speeds");
      read_source(c, &s, &o, RIVER_SUCCESS, &out, what);
      {
        uint64_t mine[2] = {out.st.cancels, out.probes_moved}, all[2];
        MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, c);
        if (wrank == 0 && (getenv("RIVER_TEST_VERBOSE") || attempt == 3))
          fprintf(stderr, "%s, attempt %d: %llu cancels, %llu of probes\n",
                  what, attempt, (unsigned long long)all[0],
                  (unsigned long long)all[1]);
        out.st.cancels = all[0];
        out.probes_moved = all[1];
      }
      MPI_Allgather(&out.st.blocks_served, 1, MPI_UINT64_T, served, 1,
                    MPI_UINT64_T, c);
      MPI_Allgather(&out.st.seeks, 1, MPI_UINT64_T, seeks, 1, MPI_UINT64_T,
                    c);
      MPI_Allgather(&out.st.seconds, 1, MPI_DOUBLE, secs, 1, MPI_DOUBLE, c);
      if (wrank == 0) {
        uint64_t nseeks = seeks[0] + seeks[1] + seeks[2] + seeks[3];
        double lo = secs[4], hi = secs[4];
        int eq = 1;
        for (p = 0; p < 4; p++) {
          eq = eq && served[p] == 64;
          lo = secs[4 + p] < lo ? secs[4 + p] : lo;
          hi = secs[4 + p] > hi ? secs[4 + p] : hi;
        }
        if (getenv("RIVER_TEST_VERBOSE") || attempt == 3)
          fprintf(stderr, "%s, attempt %d: served %llu %llu %llu %llu, "
                          "%llu seeks, clients %.3f..%.3f s\n", what,
                  attempt, (unsigned long long)served[0],
                  (unsigned long long)served[1],
                  (unsigned long long)served[2],
                  (unsigned long long)served[3],
                  (unsigned long long)nseeks, lo, hi);
        /* Equal: 4 probes a partition (blocks 1, 17, 33, 49), at most 2
         * switches each, per disk. Slow: disk 0 has 4/7 of a share of
         * work to do (0.5 of 3.5 disks), the clients end within 15%. */
        done = slow == 1 ? served[0] < 48 && hi - lo < 0.15 * hi
               : slow == 2 ? served[1] < 64 && out.probes_moved == 0
                           : eq && nseeks <= 4 * 8;
        if (done || attempt == 3) {
          if (slow == 1) {
            MT_CHECK(served[0] < 48);
            MT_CHECK(hi - lo < 0.15 * hi);
          } else if (slow == 2) {
            MT_CHECK(served[1] < 64);
            MT_CHECK(out.probes_moved == 0);

          } else {
            MT_CHECK(eq);
            MT_CHECK(nseeks <= 4 * 8);
          }
        }
      }
      MPI_Bcast(&done, 1, MPI_INT, 0, c);
    }
  }
  river_perturb_destroy(pt);
  MPI_Comm_free(&c);
}

/* Layouts where reading first copies is not balanced at equal speeds
 * start awake (gd.c dormant_ok), so GD beats the fixed mirror by using
 * the disks it would leave idle; dormant there, GD would take the fixed
 * mirror's time (each case fails with dormant_ok's test removed):
 * (a) partition 0 twice the others' size (the fixed mirror takes 128
 * block times, GD about 80); (b) one client rank reading 2 partitions of
 * 4 disks (the fixed mirror reads 2 disks, GD 3); (c) the first copies
 * of partitions 0 and 1 both on disk 0 (the fixed mirror 128 block
 * times, GD about 64). Rank 0 checks; GD at most 0.85 of nogd's time.
 * (dormant_ok's other rule, a client reading more partitions than
 * GD_MAX_ACTIVE, has no case here: with one client reading 5 of 5
 * disks' partitions, dormant GD still ran at 0.73 of nogd's time.) */
static void test_awake_layouts(void)
{
  static const char *what[3] = {"uneven partitions", "lone client",
                                "two first copies on disk 0"};
  MPI_Comm c = group(NR);
  int disk_ranks[4] = {0, 1, 2, 3}, client_ranks[4] = {4, 5, 6, 7};
  int lone[2] = {5, 5}, v, pol, p, attempt, done;

  for (v = 0; v < 3; v++)
    for (attempt = 1, done = 0; attempt <= 3 && !done; attempt++) {
      double secs[2] = {0, 0};
      for (pol = 0; pol < 2; pol++) {
        river_gd_opts o = RIVER_GD_OPTS_INIT;
        struct source s;
        struct outcome out;
        double all[NR];
        o.policy = pol ? RIVER_GD_MIRROR_NOGD : RIVER_GD_BALANCED;
        o.disk_ranks = disk_ranks;
        o.client_ranks = v == 1 ? lone : client_ranks;
        o.disk_rate = 102400;   /* 512-byte blocks: 5 ms each */
        source_init(&s, v == 1 ? 2 : 4, 4, 2);
        for (p = 0; p < s.npart; p++)
          s.nrec[p] = (p == 0 && v == 0 ? 128 : 64) * RPB;
        if (v == 2)
          s.first[1] = 0;
        read_source(c, &s, &o, RIVER_SUCCESS, &out, what[v]);
        MPI_Allgather(&out.st.seconds, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, c);
        for (p = 4; p < NR; p++)
          secs[pol] = all[p] > secs[pol] ? all[p] : secs[pol];
      }
      if (wrank == 0) {
        if (getenv("RIVER_TEST_VERBOSE") || attempt == 3)
          fprintf(stderr, "%s, attempt %d: gd %.3f s, nogd %.3f s\n",
                  what[v], attempt, secs[0], secs[1]);
        done = secs[0] < 0.85 * secs[1];
        if (attempt == 3)
          MT_CHECK(done);
      }
      MPI_Bcast(&done, 1, MPI_INT, 0, c);
    }
  MPI_Comm_free(&c);
}

/* ----------------------------------------------------------- end game */

/* 4 disks (ranks 0-3) and 4 clients (4-7), disk 0 at 5%: each client of
 * a partition on disk 0 ends with blocks queued there while its other
 * mirror runs dry, so the end game withdraws them. The exactly-once and
 * order checks are read_source's; here, that cancels happened. lost 2:
 * the fast copy of partition 0 (disk 1) fails its last 4 blocks, so the
 * slow copy, which is otherwise refused blocks this late, must serve
 * them: the refusal must compare only copies that may serve the block,
 * else the read would hang. */
static void test_end_game(void)
{
  MPI_Comm c = group(NR);
  int disk_ranks[4] = {0, 1, 2, 3}, client_ranks[4] = {4, 5, 6, 7};
  int m, lost, p, tries;
  river_perturb *pt = NULL;

  MT_CHECK_RC(river_perturb_parse("disk:0=0.05", &pt), RIVER_SUCCESS);
  for (m = 0; m < 2; m++)
    for (lost = 0; lost < 3; lost++) {
      river_gd_opts o = RIVER_GD_OPTS_INIT;
      struct source s;
      struct outcome out;
      uint64_t mine[2], all[2];
      char what[96];
      o.mode = m ? RIVER_GD_STREAM : RIVER_GD_UNORDERED;
      o.disk_ranks = disk_ranks;
      o.client_ranks = client_ranks;
      o.outstanding = 4;   /* more queued at the slow disk */
      o.disk_rate = 4e6;   /* 512-byte blocks: ~8000 blocks/s, disk 0 ~400 */
      o.perturb = pt;
      source_init(&s, 4, 4, 2);
      for (p = 0; p < 4; p++)
        s.nrec[p] = 300 * RPB + (uint64_t)p;   /* a short last block */
      s.lost_disk = lost == 1 ? 2 : -1;
      if (lost == 2) {
        s.bad_part = 0;
        s.bad_disk = 1;   /* partition 0's second copy, the fast one */
        s.bad_block = 296;
        s.bad_last = 299; /* its last 4 of 300 blocks */
      }
      snprintf(what, sizeof what, "end game mode %d%s", m,
               lost == 1 ? ", lost disk"
               : lost == 2 ? ", fast copy fails the last blocks" : "");
      /* The fast copy was asked, failed, and the slow one served what
       * it failed: unless, on a loaded machine, the slow copy reached
       * those blocks first (no failover, the data still right); then
       * the case runs again, at most 3 times: a path that never fails
       * over fails every time. */
      tries = 0;
      do {
        read_source(c, &s, &o, RIVER_SUCCESS, &out, what);
        all[0] = 1;
        if (lost == 2) {
          mine[0] = out.st.failovers;
          MPI_Allreduce(mine, all, 1, MPI_UINT64_T, MPI_SUM, c);
        }
      } while (all[0] == 0 && ++tries < 3);
      if (lost == 2) {
        MT_CHECK(all[0] >= 1 && all[0] <= 4);
        if (wrank == 0 && (all[0] < 1 || all[0] > 4 || tries > 0))
          fprintf(stderr, "%s: %llu failovers (1..4 expected), %d runs\n",
                  what, (unsigned long long)all[0], tries + 1);
      }
      mine[0] = out.st.cancels;
      mine[1] = out.st.cancelled;
      MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, c);
      if (wrank == 0 && (all[1] == 0 || all[1] > all[0]))
        fprintf(stderr, "%s: %llu cancels, %llu withdrawn\n", what,
                (unsigned long long)all[0], (unsigned long long)all[1]);
      MT_CHECK(all[1] > 0 && all[1] <= all[0]);
      /* Disks never cancel; a client's cancels are its own. */
      if (wrank < 4)
        MT_CHECK(out.st.cancels == 0 && out.st.cancelled == 0);
    }
  river_perturb_destroy(pt);
  MPI_Comm_free(&c);
}

/* ----------------------------------------------------------- failures */

static void test_failures(void)
{
  MPI_Comm c = group(4);
  river_gd_opts o = RIVER_GD_OPTS_INIT;
  struct source s;
  struct outcome out;
  int k;

  if (c == MPI_COMM_NULL)
    return;
  /* One bad copy: the mirror serves it, a failover is counted. */
  source_init(&s, 4, 4, 2);
  s.bad_part = 2;
  s.bad_block = 3;
  s.bad_disk = 2;   /* partition 2's first copy */
  mt_log_clear();
  read_source(c, &s, &o, RIVER_SUCCESS, &out, "one bad copy");
  {
    uint64_t f = out.st.failovers;
    MPI_Allreduce(MPI_IN_PLACE, &f, 1, MPI_UINT64_T, MPI_SUM, c);
    /* GD may or may not have asked the bad copy for block 3. */
    MT_CHECK(f <= 1);
  }
  MT_CHECK(!mt_logged("error|", NULL, NULL));
  /* The fixed mirror always asks the first copy: exactly one failover. */
  o.policy = RIVER_GD_MIRROR_NOGD;
  read_source(c, &s, &o, RIVER_SUCCESS, &out, "one bad copy, nogd");
  {
    uint64_t f = out.st.failovers;
    MPI_Allreduce(MPI_IN_PLACE, &f, 1, MPI_UINT64_T, MPI_SUM, c);
    MT_CHECK(f == 1);
  }
  /* No mirror: the same bad copy fails the read. */
  o.policy = RIVER_GD_NOMIRROR;
  mt_log_clear();
  read_source(c, &s, &o, RIVER_ECORRUPT, &out, "nomirror");
  if (wrank == 2) {
    MT_CHECK_RC(out.rc_next, RIVER_ECORRUPT);
    MT_CHECK(mt_logged("error|", "partition 2 block 3: no readable copy",
                       "nomirror"));
  } else {
    MT_CHECK_RC(out.rc_next, RIVER_EOS);
  }
  /* Bad on every copy: fails on every rank, named on the client. */
  o.policy = RIVER_GD_BALANCED;
  s.bad_all = 1;
  mt_log_clear();
  read_source(c, &s, &o, RIVER_ECORRUPT, &out, "every copy bad");
  if (wrank == 2)
    MT_CHECK(mt_logged("error|", "partition 2 block 3: no readable copy",
                       "disks 2, 3"));
  /* Every copy missing: RIVER_ENOTFOUND. */
  source_init(&s, 4, 4, 1);
  s.lost_disk = 1;
  mt_log_clear();
  read_source(c, &s, &o, RIVER_ENOTFOUND, &out, "lost, no mirror");
  if (wrank == 1)
    MT_CHECK(mt_logged("error|", "partition 1 block 0: no readable copy",
                       "missing on disk 1"));
  /* One client, two failed partitions (8 on 4 ranks: rank 1 reads 1 and
   * 5): partition 1 missing, found so only after 20 ms at disk 3 (not
   * the client's own rank, which the wait would stop too), and
   * partition 5's block 0 bad at disk 2, whose reply comes first. The
   * read fails with the verdict of the block the message names, the
   * lowest: partition 1's ENOTFOUND, not the first reply's ECORRUPT.
   * Twice with the wait, twice without (either reply may come first);
   * when the first failure decided, 3 of the 4 failed ECORRUPT. */
  for (k = 0; k < 4; k++) {
    source_init(&s, 8, 4, 1);
    s.first[1] = 3;
    s.first[5] = 2;
    s.missing_part = 1;
    s.missing_ms = k < 2 ? 20 : 0;
    s.bad_part = 5;
    s.bad_block = 0;
    s.bad_all = 1;
    mt_log_clear();
    read_source(c, &s, &o, RIVER_ENOTFOUND, &out, "two failed partitions");
    if (wrank == 1) {
      MT_CHECK_RC(out.rc_next, RIVER_ENOTFOUND);
      MT_CHECK(mt_logged("error|", "partition 1 block 0: no readable copy",
                         "missing on disk 3"));
    }
  }
  MPI_Comm_free(&c);
}

/* --------------------------------------------------------- collection */

static int rm_one(const char *path, const struct stat *sb, int flag,
                  struct FTW *ftw)
{
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

static void make_root(void)
{
  if (wrank == 0) {
    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/river-gd-XXXXXX", tmp ? tmp : "/tmp");
    if (mkdtemp(root) == NULL)
      root[0] = '\0';
  }
  MPI_Bcast(root, sizeof root, MPI_CHAR, 0, MPI_COMM_WORLD);
}

/* Read collection `name` with GD on the first n ranks; returns the
 * agreed close code, and the record sums over the group in *all. */
static int read_coll(int n, const char *name, river_gd_mode mode,
                     river_gd_policy pol, struct sums *all)
{
  MPI_Comm c = group(n);
  river_pcoll_opts po = RIVER_PCOLL_OPTS_INIT;
  river_gd_opts o = RIVER_GD_OPTS_INIT;
  river_pcoll *pc = NULL;
  river_gd *gd = NULL;
  river_pcoll_info info;
  struct outcome out;
  uint64_t nblocks[MAXP] = {0};
  int rc, p;
  size_t rpb;

  memset(all, 0, sizeof *all);
  memset(&out, 0, sizeof out);
  if (c == MPI_COMM_NULL)
    return RIVER_SUCCESS;
  po.root = root;
  o.mode = mode;
  o.policy = pol;
  rc = river_pcoll_open(c, name, &po, &pc);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS) {
    river_pcoll_info_get(pc, &info);
    for (p = 0; p < info.npartitions && p < MAXP; p++)
      river_pcoll_blocks(pc, p, &rpb, &nblocks[p]);
    rc = river_gd_open(c, pc, &o, &gd);
    MT_CHECK_RC(rc, RIVER_SUCCESS);
    if (rc == RIVER_SUCCESS) {
      drain(gd, mode, info.layout == RIVER_LAYOUT_INTERLEAVED, &out, nblocks,
            info.npartitions);
      MT_CHECK(out.once_ok && out.records_ok && out.order_ok);
      rc = river_gd_close(gd);
    }
    river_pcoll_close(pc);
  }
  sums_reduce(c, &out.got, all);
  MPI_Comm_free(&c);
  return rc;
}

static void disk_dir(int d, char *buf, size_t n)
{
  snprintf(buf, n, "%s/disk%d", root, d);
}

/* Disk d lost: rank 0 removes its directory and every file in it, while
 * the other ranks wait (collective over WORLD). */
static void lose_disk(int d)
{
  char dir[2200];

  MPI_Barrier(MPI_COMM_WORLD);
  if (wrank == 0) {
    disk_dir(d, dir, sizeof dir);
    nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Flip one byte (of record 0) of block b of collection `name`'s copy of
 * partition p on disk d. */
static void flip_in(const char *name, int d, int p, uint64_t b,
                    size_t block_size)
{
  char dir[2200], path[2600], pfx[64];
  struct dirent *e;
  DIR *dh;

  disk_dir(d, dir, sizeof dir);
  snprintf(pfx, sizeof pfx, "%s.p%d.", name, p);
  dh = opendir(dir);
  MT_CHECK(dh != NULL);
  while (dh && (e = readdir(dh)) != NULL)
    if (strncmp(e->d_name, pfx, strlen(pfx)) == 0) {
      int fd;
      unsigned char x;
      off_t at = 4096 + (off_t)(b * block_size) + 7;
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      fd = open(path, O_RDWR);
      MT_CHECK(fd >= 0);
      MT_CHECK(pread(fd, &x, 1, at) == 1);
      x ^= 0x5a;
      MT_CHECK(pwrite(fd, &x, 1, at) == 1);
      close(fd);
    }
  if (dh)
    closedir(dh);
}

static void flip(int d, int p, uint64_t b, size_t block_size)
{
  flip_in("gd1", d, p, b, block_size);
}

/* Collection gd1 read on the first k ranks (stream mode if m) delivers
 * exactly the records written (want). */
static void read_all(int k, int m, river_gd_policy pol,
                     const struct sums *want)
{
  struct sums all;
  int rc = read_coll(k, "gd1", m ? RIVER_GD_STREAM : RIVER_GD_UNORDERED, pol,
                     &all);

  if (wrank < k) {
    MT_CHECK_RC(rc, RIVER_SUCCESS);
    MT_CHECK(all.count == want->count && all.x == want->x
             && all.sum == want->sum);
  }
}

/* Write collection `name` under root, n records a rank (partition =
 * rank), 2 copies, blocks of `block` bytes; *want: the sums of every
 * record written (collective). */
static void write_coll(const char *name, uint64_t n, size_t block,
                       struct sums *want)
{
  river_pcoll_opts po = RIVER_PCOLL_OPTS_INIT;
  river_schema *schema = NULL;
  river_pcoll *pc = NULL;
  struct sums mine = {0};
  unsigned char *recs = malloc(n * RS);
  uint64_t i;
  int rc;

  MT_CHECK(recs != NULL);
  MT_CHECK_RC(river_schema_parse("id:uint64,a:uint64,b:uint64,c:uint64",
                                 &schema), RIVER_SUCCESS);
  po.root = root;
  po.replication = 2;
  po.block_size = block;
  for (i = 0; recs && i < n; i++) {
    make_rec(recs + i * RS, wrank, i);
    sums_add(&mine, recs + i * RS);
  }
  sums_reduce(MPI_COMM_WORLD, &mine, want);
  rc = river_pcoll_create(MPI_COMM_WORLD, name, schema, &po, &pc);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS) {
    MT_CHECK_RC(river_pcoll_write(pc, recs, n), RIVER_SUCCESS);
    MT_CHECK_RC(river_pcoll_commit(pc), RIVER_SUCCESS);
  }
  free(recs);
  river_schema_destroy(schema);
}

static void test_collection(void)
{
  struct sums want, all;
  uint64_t n = 300 + (uint64_t)wrank * 71;
  int rc, k, m;
  const size_t block = 4096;

  if (root[0] == '\0')
    return;
  write_coll("gd1", n, block, &want);
  /* Every group size, both modes. */
  for (k = 2; k <= NR; k++)
    for (m = 0; m < 2; m++)
      read_all(k, m, RIVER_GD_BALANCED, &want);
  /* A flipped byte in one copy: the other serves it. */
  MPI_Barrier(MPI_COMM_WORLD);
  if (wrank == 0)
    flip(3, 3, 1, block);
  MPI_Barrier(MPI_COMM_WORLD);
  for (m = 0; m < 2; m++)
    read_all(m ? 8 : 3, m, RIVER_GD_MIRROR_NOGD, &want);
  /* One disk directory removed, another unreadable (a file where the
   * directory was: root reads through permissions, so chmod would not
   * do): still every record, from the mirrors. */
  MPI_Barrier(MPI_COMM_WORLD);
  if (wrank == 0) {
    char dir[2200];
    FILE *f;
    disk_dir(5, dir, sizeof dir);
    nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
    disk_dir(1, dir, sizeof dir);
    nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
    f = fopen(dir, "w");
    MT_CHECK(f != NULL);
    if (f)
      fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (k = 2; k <= NR; k += 3)
    for (m = 0; m < 2; m++)
      read_all(k, m, RIVER_GD_BALANCED, &want);
  /* Partition 3 block 1 now bad on both copies: every rank fails, the
   * client names collection, partition and block. */
  MPI_Barrier(MPI_COMM_WORLD);
  if (wrank == 0)
    flip(4, 3, 1, block);
  MPI_Barrier(MPI_COMM_WORLD);
  mt_log_clear();
  rc = read_coll(4, "gd1", RIVER_GD_UNORDERED, RIVER_GD_BALANCED, &all);
  if (wrank < 4)
    MT_CHECK_RC(rc, RIVER_ECORRUPT);
  if (wrank == 3)
    MT_CHECK(mt_logged("error|", "collection gd1: partition 3 block 1: no "
                                 "readable copy", NULL));
  /* Disk 2 lost too: partition 1's copies are on disk 1 (unreadable, a
   * copy dead but not missing) and disk 2 (missing). Not every copy is
   * missing, so the verdict is ECORRUPT, and the client names both
   * disks, whether its failed block was asked before or after it knew
   * the first copy dead. */
  lose_disk(2);
  mt_log_clear();
  rc = read_coll(NR, "gd1", RIVER_GD_UNORDERED, RIVER_GD_BALANCED, &all);
  MT_CHECK_RC(rc, RIVER_ECORRUPT);
  if (wrank == 1)
    MT_CHECK(mt_logged("error|", "collection gd1: partition 1 block ",
                       "no readable copy (failed on disks 1, 2)"));
}

/* ------------------------------------------------------ lost disk plan */

/* What a planned read of collection gd2 did, summed over the ranks. */
struct plan_run {
  int rc;
  struct sums got;
  uint64_t pieces, woken, cancels;
  uint64_t served[NR];     /* bytes each disk served (disk d on rank d) */
};

/* Read gd2 on every rank (disk d and partition d on rank d) at an
 * emulated rate, and sum what happened. */
static void read_plan(struct plan_run *r)
{
  river_pcoll_opts po = RIVER_PCOLL_OPTS_INIT;
  river_gd_opts o = RIVER_GD_OPTS_INIT;
  river_pcoll *pc = NULL;
  river_gd *gd = NULL;
  struct outcome out;
  uint64_t nblocks[MAXP] = {0}, mine[3] = {0, 0, 0}, all[3];
  uint64_t served[NR] = {0};
  size_t rpb;
  int rc, p;

  memset(r, 0, sizeof *r);
  memset(&out, 0, sizeof out);
  po.root = root;
  o.disk_rate = 4e6;   /* 1 ms a 4 KiB block: tserve is exact, so
                          nothing wakes a plan at equal speeds */
  rc = river_pcoll_open(MPI_COMM_WORLD, "gd2", &po, &pc);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS) {
    for (p = 0; p < NR; p++)
      river_pcoll_blocks(pc, p, &rpb, &nblocks[p]);
    rc = river_gd_open(MPI_COMM_WORLD, pc, &o, &gd);
    MT_CHECK_RC(rc, RIVER_SUCCESS);
  }
  if (gd != NULL) {
    drain(gd, RIVER_GD_UNORDERED, 0, &out, nblocks, NR);
    MT_CHECK(out.once_ok && out.records_ok);
    mine[0] = gd->pieces;
    mine[1] = gd->plan_woken;
    mine[2] = gd->stats.cancels;
    served[wrank] = gd->stats.bytes_served;
    rc = river_gd_close(gd);
  }
  river_pcoll_close(pc);
  r->rc = rc;
  sums_reduce(MPI_COMM_WORLD, &out.got, &r->got);
  MPI_Allreduce(mine, all, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(served, r->served, NR, MPI_UINT64_T, MPI_SUM,
                MPI_COMM_WORLD);
  r->pieces = all[0];
  r->woken = all[1];
  r->cancels = all[2];
}

/* The plan for gd2 with `lost` disks (river__gd_plan, identity layout),
 * and how many partitions split a block. */
static int plan_for(const unsigned char *lost, uint64_t nrec, size_t rpb,
                    uint64_t *first)
{
  int part_of[NR], p, split = 0;
  uint64_t n[NR];

  for (p = 0; p < NR; p++) {
    part_of[p] = p;
    n[p] = nrec;
  }
  MT_CHECK(river__gd_plan(NR, part_of, n, lost, first) == 0);
  for (p = 0; p < NR; p++)
    split += first[p] > 0 && first[p] < nrec && first[p] % rpb != 0;
  return split;
}

/*
 * A lost disk's plan (gd_find_lost, river__gd_client_plan): with whole
 * disks lost, the live disks serve the plan's equal shares to a record
 * (when nothing woke: checked on every disk's bytes), each split block
 * comes in two pieces assembled and verified at the client, and every
 * record arrives once. A corrupt piece: the assembled block fails its
 * checksum, the client says so and reads it whole (the copy with the
 * flipped byte fails verification there and the other serves it). Two
 * lost disks: two chains. Two neighbours lost: no plan; the read fails
 * as before, naming the partition that has no copy.
 */
static void test_plan(void)
{
  struct sums want;
  struct plan_run r;
  unsigned char lost[NR] = {0};
  uint64_t first[NR];
  const uint64_t n = 1000;     /* 8 blocks of 128 records, the last 104 */
  const size_t block = 4096, rpb = block / RS;
  int d, split, p3_split;
  char saved[sizeof root];

  if (root[0] == '\0')
    return;
  /* Disks of its own (test_collection broke two of the root's): the
   * helpers here take `root`, restored at the end. */
  memcpy(saved, root, sizeof saved);
  snprintf(root, sizeof root, "%s/plan", saved);
  if (wrank == 0)
    MT_CHECK(mkdir(root, 0700) == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  write_coll("gd2", n, block, &want);
  /* Every disk up: dormant as before, no plan, no pieces. */
  read_plan(&r);
  MT_CHECK_RC(r.rc, RIVER_SUCCESS);
  MT_CHECK(r.got.count == want.count && r.got.x == want.x
           && r.got.sum == want.sum && r.pieces == 0);

  /* Disk 2 lost. */
  lose_disk(2);
  lost[2] = 1;
  split = plan_for(lost, n, rpb, first);
  MT_CHECK(split >= 3);
  read_plan(&r);
  MT_CHECK_RC(r.rc, RIVER_SUCCESS);
  MT_CHECK(r.got.count == want.count && r.got.x == want.x
           && r.got.sum == want.sum);
  MT_CHECK(r.pieces == (uint64_t)split);
  if (r.woken == 0) {   /* the plan held: every disk its share exactly */
    MT_CHECK(r.cancels == 0 && r.served[2] == 0);
    for (d = 0; d < NR; d++) {
      int prev = (d + NR - 1) % NR;
      if (d != 2)
        MT_CHECK(r.served[d] == (first[d] + n - first[prev]) * RS);
    }
  } else if (wrank == 0) {
    fprintf(stderr, "test_gd_mpi: plan: %llu partitions woke (a slow "
            "rank); shares not checked\n", (unsigned long long)r.woken);
  }

  /* A flipped byte in partition 3's split block, in the piece its first
   * copy (disk 3) serves: the assembled block fails its checksum. */
  p3_split = first[3] > 0 && first[3] % rpb != 0;
  MT_CHECK(p3_split);
  MPI_Barrier(MPI_COMM_WORLD);
  if (wrank == 0)
    flip_in("gd2", 3, 3, first[3] / rpb, block);
  MPI_Barrier(MPI_COMM_WORLD);
  mt_log_clear();
  read_plan(&r);
  MT_CHECK_RC(r.rc, RIVER_SUCCESS);
  MT_CHECK(r.got.count == want.count && r.got.x == want.x
           && r.got.sum == want.sum);
  MT_CHECK(r.pieces == (uint64_t)split - 1);
  if (wrank == 3) {
    char msg[160];
    snprintf(msg, sizeof msg, "partition 3 block %llu: the block assembled "
             "from its pieces on disks 3 and 4 does not match its checksum",
             (unsigned long long)(first[3] / rpb));
    MT_CHECK(mt_logged("warn|", msg, NULL));
  }

  /* Disks 2 and 5 lost: two chains (the flipped block is now whole at
   * disk 3, fails there, and comes from disk 4). */
  lose_disk(5);
  lost[5] = 1;
  split = plan_for(lost, n, rpb, first);
  read_plan(&r);
  MT_CHECK_RC(r.rc, RIVER_SUCCESS);
  MT_CHECK(r.got.count == want.count && r.got.x == want.x
           && r.got.sum == want.sum && r.served[2] == 0 && r.served[5] == 0);
  MT_CHECK(r.pieces >= 1 && r.pieces <= (uint64_t)split);

  /* Disk 6 too: 5 and 6 are neighbours, partition 5 has no copy. The
   * message names both disks whichever block failed first (a block
   * asked after one copy was known dead counts that copy as tried). */
  lose_disk(6);
  mt_log_clear();
  read_plan(&r);
  MT_CHECK_RC(r.rc, RIVER_ENOTFOUND);
  if (wrank == 5)
    MT_CHECK(mt_logged("error|collection gd2: partition 5 block ",
                       "no readable copy (missing on disks 5, 6)", NULL));
  memcpy(root, saved, sizeof root);
}

/* ---------------------------------------------------------- bad input */

static void test_bad(void)
{
  MPI_Comm c = group(4);
  river_gd_layout l = {0};
  river_gd_opts o = RIVER_GD_OPTS_INIT;
  river_gd *gd = (river_gd *)&l;
  uint64_t nrec[4] = {10, 10, 10, 10};
  int ranks[4] = {0, 1, 2, 9};
  struct source s;
  const void *r;
  size_t n;

  if (c == MPI_COMM_NULL)
    return;
  source_init(&s, 4, 4, 2);
  memcpy(s.nrec, nrec, sizeof nrec);
  l.npartitions = 4;
  l.ndisks = 4;
  l.replication = 2;
  l.record_size = RS;
  l.records_per_block = RPB;
  l.nrecords = nrec;
  mt_log_clear();
  MT_CHECK_RC(river_gd_create(c, NULL, src_read, &s, NULL, &gd),
              RIVER_EINVAL);
  MT_CHECK(gd == NULL);
  MT_CHECK(mt_logged("error|", "gd create: layout is NULL", NULL));
  MT_CHECK_RC(river_gd_create(c, &l, NULL, &s, NULL, &gd), RIVER_EINVAL);
  MT_CHECK_RC(river_gd_create(c, &l, src_read, &s, NULL, NULL),
              RIVER_EINVAL);
  l.replication = 5;
  mt_log_clear();
  MT_CHECK_RC(river_gd_create(c, &l, src_read, &s, NULL, &gd), RIVER_EINVAL);
  MT_CHECK(mt_logged("error|", "gd create: bad layout", "replication 5"));
  l.replication = 2;
  o.outstanding = -1;
  MT_CHECK_RC(river_gd_create(c, &l, src_read, &s, &o, &gd), RIVER_EINVAL);
  o.outstanding = 0;
  o.seek_seconds = 0.01;
  mt_log_clear();
  MT_CHECK_RC(river_gd_create(c, &l, src_read, &s, &o, &gd), RIVER_EINVAL);
  MT_CHECK(mt_logged("error|", "a seek cost needs an emulated disk rate",
                     NULL));
  o.seek_seconds = 0;
  o.run_blocks = -1;
  mt_log_clear();
  MT_CHECK_RC(river_gd_create(c, &l, src_read, &s, &o, &gd), RIVER_EINVAL);
  MT_CHECK(mt_logged("error|", "bad option run_blocks -1: must be 0..1024",
                     NULL));
  o.run_blocks = RIVER_GD_MAX_RUN_BLOCKS + 1;
  mt_log_clear();
  MT_CHECK_RC(river_gd_create(c, &l, src_read, &s, &o, &gd), RIVER_EINVAL);
  MT_CHECK(mt_logged("error|", "bad option run_blocks 1025", NULL));
  /* Ranks that disagree on it are refused too, naming it. */
  o.run_blocks = wrank == 0 ? 2 : 0;
  mt_log_clear();
  MT_CHECK_RC(river_gd_create(c, &l, src_read, &s, &o, &gd), RIVER_EINVAL);
  MT_CHECK(mt_logged("error|", "ranks passed different run_blocks", NULL));
  o.run_blocks = 0;
  o.disk_ranks = ranks;
  mt_log_clear();
  MT_CHECK_RC(river_gd_create(c, &l, src_read, &s, &o, &gd), RIVER_EINVAL);
  MT_CHECK(mt_logged("error|", "disk 3's rank 9 is not in the communicator",
                     NULL));
  o.disk_ranks = NULL;
  /* One rank differs: every rank refuses, naming what differs. */
  o.outstanding = wrank == 1 ? 3 : 2;
  mt_log_clear();
  MT_CHECK_RC(river_gd_create(c, &l, src_read, &s, &o, &gd), RIVER_EINVAL);
  MT_CHECK(mt_logged("error|", "ranks passed different outstanding", NULL));
  o.outstanding = 0;
  nrec[2] = wrank == 2 ? 11 : 10;
  MT_CHECK_RC(river_gd_create(c, &l, src_read, &s, &o, &gd), RIVER_EINVAL);
  nrec[2] = 10;
  {
    river_perturb *pt = NULL;
    river_perturb_parse("disk:7=0.5", &pt);
    o.perturb = pt;
    o.disk_rate = 1e6;
    mt_log_clear();
    MT_CHECK_RC(river_gd_create(c, &l, src_read, &s, &o, &gd), RIVER_EINVAL);
    MT_CHECK(mt_logged("error|", "names disk 7", "only 4 disks"));
    o.perturb = NULL;
    o.disk_rate = 0;
    river_perturb_destroy(pt);
  }
  MT_CHECK_RC(river_gd_open(c, NULL, &o, &gd), RIVER_EINVAL);
  MT_CHECK_RC(river_gd_next(NULL, &r, &n, NULL, NULL), RIVER_EINVAL);
  MT_CHECK_RC(river_gd_stats_get(NULL, NULL), RIVER_EINVAL);
  MT_CHECK_RC(river_gd_close(NULL), RIVER_SUCCESS);
  /* A good one, closed early on one rank: no rank hangs, and the data
   * that rank's disks hold still reaches the others. */
  {
    river_gd *g = NULL;
    struct outcome out;
    MT_CHECK_RC(river_gd_create(c, &l, src_read, &s, NULL, &g),
                RIVER_SUCCESS);
    MT_CHECK_RC(river_gd_next(g, &r, &n, NULL, NULL), RIVER_SUCCESS);
    MT_CHECK_RC(river_gd_next(g, &r, NULL, NULL, NULL), RIVER_EINVAL);
    memset(&out, 0, sizeof out);
    if (wrank != 1) {
      uint64_t nb[4] = {1, 1, 1, 1};
      drain(g, RIVER_GD_UNORDERED, 0, &out, nb, 4);
      MT_CHECK_RC(out.rc_next, RIVER_EOS);
    }
    MT_CHECK_RC(river_gd_close(g), RIVER_SUCCESS);
  }
  MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
  double t0;
  int verdict;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  if (wsize != NR) {
    if (wrank == 0)
      fprintf(stderr, "test_gd_mpi needs %d ranks, has %d\n", NR, wsize);
    MPI_Finalize();
    return 1;
  }
  MT_CHECK_RC(river_init(NULL, NULL), RIVER_SUCCESS);
  river_log_set_level(RIVER_LOG_WARN);
  river_log_set_handler(mt_log_capture, NULL);
  make_root();
  t0 = river_wtime();
  test_source();
  test_roles();
  test_balance();
  test_dormant();
  test_awake_layouts();
  test_end_game();
  test_failures();
  test_collection();
  test_plan();
  test_bad();
  if (wrank == 0 && getenv("RIVER_TEST_VERBOSE"))
    fprintf(stderr, "test_gd_mpi: %.1f s\n", river_wtime() - t0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (wrank == 0 && root[0] != '\0')
    nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
  river_log_set_handler(NULL, NULL);
  MT_CHECK_RC(river_finalize(), RIVER_SUCCESS);
  verdict = mt_verdict(MPI_COMM_WORLD, "test_gd_mpi");
  MPI_Finalize();
  return verdict;
}
