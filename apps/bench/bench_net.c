/*
 * river-bench net - what crossing nodes costs a many-to-many exchange,
 * and what combining each node's traffic would save (issue 41, Deliver
 * 4: per-node aggregation; doc/design.md says when River would use it):
 *
 *   mpirun -n N river-bench net aggregate [--repeats R (3)] [--csv FILE]
 *                                         [--bytes BYTES ...]
 *
 * The job's ranks must span at least two nodes (as MPI sees them:
 * MPI_Comm_split_type SHARED; scripts/river-mpirun --nodes emulates
 * them), L ranks on each. One round: every rank sends m bytes to every
 * rank of the other nodes, and receives as much from each: the pattern
 * of an EXCHANGE edge whose messages are m bytes. Two ways, interleaved
 * --repeats times at each m:
 *
 *   direct      an MPI_Isend per (rank, remote rank) pair: L x L x
 *               (nodes - 1) messages leave each node a round.
 *   aggregated  node A's traffic for node B goes through one relay rank
 *               of A (local rank B mod L) to one relay of B (local rank
 *               A mod L): each rank sends the relay its L x m bytes for
 *               B (within the node), the relay sends B's relay one
 *               message of L x L x m bytes (received in place, no
 *               packing copy), which sends each of its node's ranks its
 *               L pieces (a strided datatype, within the node): nodes - 1
 *               messages leave each node a round, and each byte makes
 *               two more hops, within nodes.
 *
 * Every byte carries (source rank, destination rank, round), checked on
 * arrival: each round delivers every piece once, to its rank. A run is
 * ROUNDS rounds, each started together (a barrier); its time is the
 * slowest rank's, per round. Rank 0 prints, per m and way, the median
 * round time over the repeats (min..max), the node-crossing messages a
 * round, and aggregated's time over direct's (under 1: combining pays).
 * These are MPI's own costs on this machine's transports (between
 * emulated nodes: TCP over loopback), not River's: what per-node
 * aggregation in the queue could save at most, before the relay's
 * work and the adaptivity it costs (a relay busy elsewhere holds its
 * node pair; doc/design.md).
 */
#include "bench.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define NET_ROUNDS 20           /* rounds a run */
#define NET_MAX_SIZES 16

static struct net_opts {
  const char *bytes;            /* --bytes, a comma list, or NULL */
} net_opt = {NULL};

static const size_t default_sizes[] = {64, 512, 4096, 8192, 32768, 262144};

/* The job's nodes: this rank's node, its rank and size there, and the
 * number of nodes; RIVER_EINVAL (said by rank 0) unless every node has
 * the same number of ranks and there are at least two. */
struct net_layout {
  MPI_Comm node;                /* this node's ranks */
  int nodes, node_id, lrank, lsize;
  int *world_of;                /* nodes x lsize: world rank of (node, l) */
};

/* The worst (lowest) of every rank's rc. */
static int agree(int rc)
{
  int all = rc;

  MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all;
}

static int layout(struct net_layout *g)
{
  MPI_Comm leaders;
  int wrank, wsize, is_leader, lmin = 0, lmax = 0, rc = RIVER_SUCCESS;
  int *all;

  memset(g, 0, sizeof *g);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, wrank,
                          MPI_INFO_NULL, &g->node) != MPI_SUCCESS)
    return RIVER_EMPI;
  MPI_Comm_rank(g->node, &g->lrank);
  MPI_Comm_size(g->node, &g->lsize);
  is_leader = g->lrank == 0;
  MPI_Comm_split(MPI_COMM_WORLD, is_leader ? 0 : MPI_UNDEFINED, wrank,
                 &leaders);
  if (is_leader) {
    MPI_Comm_rank(leaders, &g->node_id);
    MPI_Comm_size(leaders, &g->nodes);
    MPI_Comm_free(&leaders);
  }
  MPI_Bcast(&g->node_id, 1, MPI_INT, 0, g->node);
  MPI_Bcast(&g->nodes, 1, MPI_INT, 0, g->node);
  MPI_Allreduce(&g->lsize, &lmin, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&g->lsize, &lmax, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (g->nodes < 2 || lmin != lmax) {
    if (wrank == 0)
      river_log(RIVER_LOG_ERROR,
                "net aggregate: needs ranks on at least 2 nodes, as many on "
                "each (here %d node%s, %d..%d ranks a node; "
                "scripts/river-mpirun --nodes N emulates nodes)",
                g->nodes, g->nodes == 1 ? "" : "s", lmin, lmax);
    MPI_Comm_free(&g->node);
    return RIVER_EINVAL;
  }
  all = malloc(sizeof(int) * 2 * (size_t)wsize);
  g->world_of = malloc(sizeof(int) * (size_t)wsize);
  if (all == NULL || g->world_of == NULL)
    rc = RIVER_ENOMEM;
  rc = agree(rc);
  if (rc == RIVER_SUCCESS) {
    int mine[2] = {g->node_id, g->lrank}, r;
    MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
    for (r = 0; r < wsize; r++)
      g->world_of[all[2 * r] * g->lsize + all[2 * r + 1]] = r;
  }
  free(all);
  if (rc != RIVER_SUCCESS) {
    free(g->world_of);
    g->world_of = NULL;
    MPI_Comm_free(&g->node);
  }
  return rc;
}

/* The byte at offset i of the piece source -> dest in round k. */
static unsigned char pattern(int source, int dest, int k, size_t i)
{
  uint64_t x = ((uint64_t)(unsigned)source * 0x9E3779B1u)
               ^ ((uint64_t)(unsigned)dest * 0x85EBCA77u)
               ^ ((uint64_t)(unsigned)k * 0xC2B2AE3Du) ^ (uint64_t)i;

  x ^= x >> 13;
  x *= 0x2545F4914F6CDD1DULL;
  return (unsigned char)(x >> 56);
}

static void fill(unsigned char *p, int source, int dest, int k, size_t m)
{
  size_t i;

  for (i = 0; i < m; i++)
    p[i] = pattern(source, dest, k, i);
}

static int check(const unsigned char *p, int source, int dest, int k,
                 size_t m)
{
  size_t i;

  for (i = 0; i < m; i++)
    if (p[i] != pattern(source, dest, k, i))
      return 0;
  return 1;
}

/* Buffers of a run at piece size m: out and in hold a piece for each
 * remote rank (remote index j = node-order over the other nodes, then
 * local rank); relay buffers hold L x L pieces per node pair relayed. */
struct net_bufs {
  int remote;                   /* remote ranks: (nodes - 1) x L */
  unsigned char *out, *in;      /* remote x m */
  unsigned char *rel_in, *rel_out; /* relays: (nodes - 1) x L x L x m */
  MPI_Request *req;
};

/* The world rank and piece index of remote index j (nodes other than
 * this one, in order, then local rank). */
static int remote_node(const struct net_layout *g, int j)
{
  int b = j / g->lsize;

  return b < g->node_id ? b : b + 1;
}

/* One direct round k; 1 if every piece came right. */
static int round_direct(const struct net_layout *g, struct net_bufs *u,
                        size_t m, int k, int wrank)
{
  int j, n = 0, ok = 1;

  for (j = 0; j < u->remote; j++) {
    int r = g->world_of[remote_node(g, j) * g->lsize + j % g->lsize];
    MPI_Irecv(u->in + (size_t)j * m, (int)m, MPI_BYTE, r, 71,
              MPI_COMM_WORLD, &u->req[n++]);
  }
  for (j = 0; j < u->remote; j++) {
    int r = g->world_of[remote_node(g, j) * g->lsize + j % g->lsize];
    fill(u->out + (size_t)j * m, wrank, r, k, m);
    MPI_Isend(u->out + (size_t)j * m, (int)m, MPI_BYTE, r, 71,
              MPI_COMM_WORLD, &u->req[n++]);
  }
  MPI_Waitall(n, u->req, MPI_STATUSES_IGNORE);
  for (j = 0; j < u->remote; j++) {
    int r = g->world_of[remote_node(g, j) * g->lsize + j % g->lsize];
    ok &= check(u->in + (size_t)j * m, r, wrank, k, m);
  }
  return ok;
}

/* One aggregated round k: three phases, each a Waitall (a relay forwards
 * only what has come). 1 if every piece came right. */
static int round_aggregated(const struct net_layout *g, struct net_bufs *u,
                            size_t m, int k, int wrank)
{
  int L = g->lsize, b, bi, l, n = 0, ok = 1, j;
  size_t pair = (size_t)L * L * m;  /* a node pair's pieces */
  MPI_Datatype strided;

  /* 1: to this node's relay for each remote node b, this rank's L
   * pieces for b; a relay receives its node's L ranks' for each b it
   * serves, in place: [source local rank][dest local rank]. */
  for (bi = 0; bi < g->nodes - 1; bi++) {
    b = bi < g->node_id ? bi : bi + 1;
    if (b % L == g->lrank)
      for (l = 0; l < L; l++)
        MPI_Irecv(u->rel_out + (size_t)bi * pair + (size_t)l * L * m,
                  (int)((size_t)L * m), MPI_BYTE, l, 72, g->node,
                  &u->req[n++]);
  }
  for (bi = 0; bi < g->nodes - 1; bi++) {
    b = bi < g->node_id ? bi : bi + 1;
    for (l = 0; l < L; l++)
      fill(u->out + ((size_t)bi * L + (size_t)l) * m, wrank,
           g->world_of[b * L + l], k, m);
    MPI_Isend(u->out + (size_t)bi * L * m, (int)((size_t)L * m), MPI_BYTE,
              b % L, 72, g->node, &u->req[n++]);
  }
  MPI_Waitall(n, u->req, MPI_STATUSES_IGNORE);
  n = 0;
  /* 2: relay to relay, one message a node pair. */
  for (bi = 0; bi < g->nodes - 1; bi++) {
    b = bi < g->node_id ? bi : bi + 1;
    if (b % L != g->lrank)
      continue;
    MPI_Irecv(u->rel_in + (size_t)bi * pair, (int)pair, MPI_BYTE,
              g->world_of[b * L + g->node_id % L], 73, MPI_COMM_WORLD,
              &u->req[n++]);
    MPI_Isend(u->rel_out + (size_t)bi * pair, (int)pair, MPI_BYTE,
              g->world_of[b * L + g->node_id % L], 73, MPI_COMM_WORLD,
              &u->req[n++]);
  }
  MPI_Waitall(n, u->req, MPI_STATUSES_IGNORE);
  n = 0;
  /* 3: each relay hands each local rank l its pieces from b's L ranks:
   * [source][dest l], a stride of L pieces. */
  MPI_Type_vector(L, (int)m, (int)((size_t)L * m), MPI_BYTE, &strided);
  MPI_Type_commit(&strided);
  for (bi = 0; bi < g->nodes - 1; bi++) {
    b = bi < g->node_id ? bi : bi + 1;
    MPI_Irecv(u->in + (size_t)bi * L * m, (int)((size_t)L * m), MPI_BYTE,
              b % L, 74, g->node, &u->req[n++]);
    if (b % L == g->lrank)
      for (l = 0; l < L; l++)
        MPI_Isend(u->rel_in + (size_t)bi * pair + (size_t)l * m, 1, strided,
                  l, 74, g->node, &u->req[n++]);
  }
  MPI_Waitall(n, u->req, MPI_STATUSES_IGNORE);
  MPI_Type_free(&strided);
  for (j = 0; j < u->remote; j++) {
    int r = g->world_of[remote_node(g, j) * g->lsize + j % g->lsize];
    ok &= check(u->in + (size_t)j * m, r, wrank, k, m);
  }
  return ok;
}

/* One run of NET_ROUNDS rounds; the slowest rank's median round time
 * (s) in *t, 1 in *ok if every round delivered right on every rank. */
static int run(const struct net_layout *g, struct net_bufs *u, size_t m,
               int aggregated, double *t, int *ok)
{
  double times[NET_ROUNDS], t0, mine;
  int k, wrank, good = 1, all = 0;

  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  for (k = 0; k < NET_ROUNDS; k++) {
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    good &= aggregated ? round_aggregated(g, u, m, k, wrank)
                       : round_direct(g, u, m, k, wrank);
    times[k] = MPI_Wtime() - t0;
  }
  mine = bench_median(times, NET_ROUNDS);
  MPI_Allreduce(&mine, t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&good, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  *ok = all;
  return RIVER_SUCCESS;
}

/* --bytes: a comma list of piece sizes (1 .. 16 MiB each), each as
 * every size River takes (river_parse_size: 4Ki is 4096). */
static int sizes_of(size_t *out, int *n)
{
  const char *p = net_opt.bytes;
  char piece[32];
  uint64_t v = 0;
  size_t k;
  int rank;

  if (p == NULL) {
    *n = (int)(sizeof default_sizes / sizeof default_sizes[0]);
    memcpy(out, default_sizes, sizeof default_sizes);
    return RIVER_SUCCESS;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (*n = 0; *p != '\0' && *n < NET_MAX_SIZES; (*n)++) {
    k = strcspn(p, ",");
    if (k < sizeof piece) {
      memcpy(piece, p, k);
      piece[k] = '\0';
    }
    if (k >= sizeof piece || river_parse_size(piece, &v) != RIVER_SUCCESS
        || v == 0 || v > (16ULL << 20)) {
      if (rank == 0)
        river_log(RIVER_LOG_ERROR, "--bytes %s: expected a comma list of "
                  "sizes from 1 to 16Mi (" RIVER_SIZE_SUFFIXES ")",
                  net_opt.bytes);
      return RIVER_EINVAL;
    }
    out[*n] = (size_t)v;
    p += k + (p[k] == ',');
  }
  return RIVER_SUCCESS;
}

static int exp_aggregate(struct bench *b)
{
  struct net_layout g;
  struct net_bufs u;
  size_t sizes[NET_MAX_SIZES], maxm = 0;
  double t[2][64];
  int nsz, s, rep, way, rc, ok, bad = 0;

  if ((rc = sizes_of(sizes, &nsz)) != RIVER_SUCCESS
      || (rc = layout(&g)) != RIVER_SUCCESS)
    return rc;
  for (s = 0; s < nsz; s++)
    maxm = sizes[s] > maxm ? sizes[s] : maxm;
  memset(&u, 0, sizeof u);
  u.remote = (g.nodes - 1) * g.lsize;
  u.out = malloc((size_t)u.remote * maxm);
  u.in = malloc((size_t)u.remote * maxm);
  u.rel_in = malloc((size_t)u.remote * g.lsize * maxm);
  u.rel_out = malloc((size_t)u.remote * g.lsize * maxm);
  u.req = malloc(sizeof(MPI_Request) * (size_t)(2 * u.remote + 2 * g.nodes
                                                + g.lsize * g.nodes));
  rc = agree(u.out && u.in && u.rel_in && u.rel_out && u.req
             ? RIVER_SUCCESS : RIVER_ENOMEM);
  if (rc == RIVER_SUCCESS
      && (uint64_t)g.lsize * (uint64_t)g.lsize * maxm > (uint64_t)INT_MAX) {
    if (b->rank == 0)
      river_log(RIVER_LOG_ERROR, "net aggregate: %d x %d x %zu bytes is "
                "more than one MPI message holds", g.lsize, g.lsize, maxm);
    rc = RIVER_EINVAL;
  }
  if (rc == RIVER_SUCCESS && b->rank == 0)
    printf("net aggregate: %d nodes x %d ranks; a round: every rank m bytes "
           "to every rank of the other nodes; %d rounds a run, the slowest "
           "rank's median round\n", g.nodes, g.lsize, NET_ROUNDS);
  for (s = 0; rc == RIVER_SUCCESS && s < nsz; s++) {
    for (rep = 0; rep < b->repeats; rep++)
      for (way = 0; way < 2; way++) {
        run(&g, &u, sizes[s], way, &t[way][rep], &ok);
        bad += !ok;
        if (b->rank == 0) {
          printf("aggregate %-10s m=%-8zu repeat %d  %9.1f us a round%s\n",
                 way ? "aggregated" : "direct", sizes[s], rep,
                 1e6 * t[way][rep], ok ? "" : "  DATA CHECK FAILED");
          if (b->csv != NULL)
            fprintf(b->csv, "%s,%d,%d,%zu,%d,%.9f,%d,%d\n",
                    way ? "aggregated" : "direct", g.nodes, g.lsize,
                    sizes[s], rep, t[way][rep],
                    way ? g.nodes * (g.nodes - 1)
                        : g.lsize * g.lsize * g.nodes * (g.nodes - 1),
                    ok);
        }
      }
    if (b->rank == 0) {
      double lo[2], hi[2], med[2];
      for (way = 0; way < 2; way++) {
        lo[way] = hi[way] = t[way][0];
        for (rep = 1; rep < b->repeats; rep++) {
          lo[way] = t[way][rep] < lo[way] ? t[way][rep] : lo[way];
          hi[way] = t[way][rep] > hi[way] ? t[way][rep] : hi[way];
        }
        med[way] = bench_median(t[way], b->repeats);
      }
      printf("m=%zu: direct %.1f us (%.1f..%.1f), %d messages across nodes "
             "a round; aggregated %.1f us (%.1f..%.1f), %d; aggregated / "
             "direct %.2f\n", sizes[s], 1e6 * med[0], 1e6 * lo[0],
             1e6 * hi[0], g.lsize * g.lsize * g.nodes * (g.nodes - 1),
             1e6 * med[1], 1e6 * lo[1], 1e6 * hi[1],
             g.nodes * (g.nodes - 1), med[1] / med[0]);
    }
  }
  if (bad > 0 && rc == RIVER_SUCCESS)
    rc = RIVER_ECORRUPT;
  b->failures += bad;
  free(u.out);
  free(u.in);
  free(u.rel_in);
  free(u.rel_out);
  free(u.req);
  free(g.world_of);
  MPI_Comm_free(&g.node);
  return rc;
}

static const struct bench_experiment experiments[] = {
  {"aggregate", exp_aggregate},
};

static const struct bench_opt opts[] = {
  {"bytes", "LIST", "(64,512,4Ki,8Ki,32Ki,256Ki): the piece sizes m",
   bench_opt_string, &net_opt.bytes, 0, 0},
};

static const char csv_header[] =
    "way,nodes,ranks_per_node,bytes,repeat,round_seconds,"
    "messages_across_nodes,ok";

const struct bench_suite bench_net_suite = {
  .name = "net",
  .experiments = experiments,
  .nexperiments = sizeof experiments / sizeof experiments[0],
  .opts = opts,
  .nopts = sizeof opts / sizeof opts[0],
  .notes = "    (--rate, --seconds and --perturb: not used; the ranks "
           "must span nodes)\n",
  .csv_header = csv_header,
};
