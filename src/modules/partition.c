/*
 * partition.c - module `partition`: places its records on the partitions
 * of its one output, an exchange edge, by range splitters drawn from a
 * sample of the data (by: range) or by a hash of the key (by: hash).
 *
 * By range, every instance buffers the start of its input (argument
 * `buffer` bytes, 0: all of it), draws `sample` keys from the buffer at
 * random, and the stage's instances all-gather their samples with
 * nonblocking MPI on the stage's communicator (river_ctx_comm,
 * river_ctx_wait). Each sample key stands for buffered/sampled records
 * of its instance, so every instance computes the same splitters: the
 * weighted quantiles 1/P .. (P-1)/P of the keys (P: the number of
 * partitions, river_output_consumers), sorted by the radix sort. It
 * installs them on its output (river_set_partitioner), sends the
 * buffered records, then streams the rest. Skewed keys still balance,
 * as far as the sample shows them; equal keys always share a partition.
 *
 * Every instance holds every instance's sample, so the keys gathered
 * are capped (issue 41): at most SAMPLE_PER_PART per partition, and
 * never fewer than SAMPLE_FLOOR in all, each instance drawing its share
 * by its buffered records (at least 1 where it has any; the instances
 * all-gather their counts first), so a few instances holding all the
 * data still draw the whole sample between them. Up to 65 instances of
 * the default 1000 keys nothing changes; at 10,000 instances and
 * partitions, with the data spread evenly, each draws 64, and the
 * gathered sample is 640,000 keys (6.1 MiB of 10-byte keys, about 16
 * MiB with the sort's weights and order), where 1000 each made 10
 * million (about 250 MiB a rank). 64 keys a partition leave a
 * partition's share within about 1/8 of the mean (the quantile's
 * spread) on any key distribution the sample represents.
 */
#include "modules.h"

#include <stdlib.h>
#include <string.h>

#define SAMPLE_PER_PART 64   /* gathered keys a partition, at most */
#define SAMPLE_FLOOR 65536   /* ... unless fewer than these in all */

struct part {
  river_ctx *ctx;
  river_key k;         /* the key as stored */
  unsigned char *buf;          /* buffered records */
  size_t n, cap;
  int ended;                   /* input 0 ended while buffering */
};

/* Buffer input 0 until `limit` bytes (0: all) or its end. */
static int fill(struct part *p, uint64_t limit)
{
  size_t rs = p->k.record_size, n;
  const void *recs;
  unsigned char *nb;
  int rc;

  while (limit == 0 || (uint64_t)p->n * rs < limit) {
    rc = river_get(p->ctx, 0, &recs, &n);
    if (rc == RIVER_EOS) {
      p->ended = 1;
      return RIVER_SUCCESS;
    }
    if (rc != RIVER_SUCCESS)
      return rc;
    if (p->n + n > p->cap) {
      size_t cap = p->cap ? p->cap : 4096;
      while (cap < p->n + n)
        cap *= 2;
      if ((nb = realloc(p->buf, cap * rs)) == NULL)
        return RIVER_ENOMEM;
      p->buf = nb;
      p->cap = cap;
    }
    memcpy(p->buf + p->n * rs, recs, n * rs);
    p->n += n;
  }
  return RIVER_SUCCESS;
}

/* All-gather the instances' samples: *all gets every instance's keys
 * in instance order, k of this one's; sizes (an instance each) their
 * bytes (nonblocking, waiting cooperatively). */
static int gather(struct part *p, const unsigned char *mine, uint64_t k,
                  size_t *sizes, unsigned char **all)
{
  void *got = NULL;
  int rc = river_ctx_allgatherv(p->ctx, mine, k * p->k.size, &got, sizes);

  *all = got;
  return rc;
}

/* The keys an instance of n buffered records draws, of the N of all
 * instances: its share of the cap by its records (rounded up, at least
 * 1 where it has any), at most the sample asked and its records. Every
 * instance computes every instance's the same way. */
static uint64_t sample_keys(uint64_t n, uint64_t total, uint64_t cap,
                            uint64_t nsample)
{
  uint64_t share;

  if (n == 0)
    return 0;
  share = n <= UINT64_MAX / cap ? (cap * n + total - 1) / total : cap;
  share = share < nsample ? share : nsample;
  return share < n ? share : n;
}

/* The P-1 splitters of the gathered samples into split (P-1 keys). */
static int choose(struct part *p, const unsigned char *all,
                  const uint64_t *counts, int ninst, int nparts,
                  unsigned char *split)
{
  river_key sk = {p->k.type, 0, p->k.size, p->k.size};
  double *w, total = 0.0, cum = 0.0;
  size_t ns = 0, i, *order;
  int inst, j = 0, rc;

  for (inst = 0; inst < ninst; inst++)
    ns += counts[2 * inst];
  w = malloc((ns + 1) * sizeof *w);
  order = malloc((ns + 1) * sizeof *order);
  if (w == NULL || order == NULL) {
    free(w); free(order);
    return RIVER_ENOMEM;
  }
  for (inst = 0, i = 0; inst < ninst; inst++) {
    uint64_t c;
    for (c = 0; c < counts[2 * inst]; c++, i++)
      w[i] = (double)counts[2 * inst + 1] / (double)counts[2 * inst];
    total += (double)counts[2 * inst + 1];
  }
  rc = river__radix_order(&sk, all, ns, order);
  for (i = 0; rc == RIVER_SUCCESS && i < ns && j < nparts - 1; i++) {
    cum += w[order[i]];
    while (j < nparts - 1 && cum >= total * (j + 1) / nparts)
      memcpy(split + (size_t)j++ * p->k.size, all + order[i] * p->k.size,
             p->k.size);
  }
  for (; rc == RIVER_SUCCESS && j < nparts - 1; j++)  /* rounding */
    memcpy(split + (size_t)j * p->k.size, all + order[ns - 1] * p->k.size,
           p->k.size);
  free(w);
  free(order);
  return rc;
}

/* Sample, agree, install splitters on output 0. */
static int agree(struct part *p, uint64_t nsample)
{
  uint64_t k, i, seed, cap, total = 0, ns = 0, want = 0, mine_n = p->n;
  unsigned char *mine = NULL, *all = NULL, *split = NULL;
  uint64_t *counts = NULL, *nbuf = NULL;
  size_t *sizes = NULL;
  int inst, ninst, nparts, rc;

  river_ctx_instance(p->ctx, &inst, &ninst);
  river_output_consumers(p->ctx, 0, &nparts);
  cap = (uint64_t)nparts * SAMPLE_PER_PART;
  cap = cap > SAMPLE_FLOOR ? cap : SAMPLE_FLOOR;
  /* Every instance's buffered records, from which each computes every
   * instance's sample count (counts[2i]) and weight (counts[2i+1]).
   * Everything is allocated first (this one's keys at their most); an
   * instance that fails fails the flow, which ends the others' gathers
   * (river_ctx_wait). */
  k = p->n < nsample ? p->n : nsample;
  k = k < cap ? k : cap;
  counts = malloc(2 * (size_t)ninst * sizeof *counts);
  nbuf = malloc((size_t)ninst * sizeof *nbuf);
  mine = malloc(k * p->k.size + 1);
  sizes = malloc((size_t)ninst * sizeof *sizes);
  rc = counts == NULL || nbuf == NULL || mine == NULL || sizes == NULL
       ? RIVER_ENOMEM : RIVER_SUCCESS;
  if (rc != RIVER_SUCCESS
      || (rc = river_ctx_allgather(p->ctx, &mine_n, 1, nbuf)) != RIVER_SUCCESS)
    goto out;
  for (i = 0; i < (uint64_t)ninst; i++)
    total += nbuf[i];
  for (i = 0; i < (uint64_t)ninst; i++) {
    counts[2 * i] = sample_keys(nbuf[i], total, cap, nsample);
    counts[2 * i + 1] = nbuf[i];
    ns += counts[2 * i];
    want += nbuf[i] < nsample ? nbuf[i] : nsample;
  }
  if (inst == 0 && ns < want)
    river_ctx_log(p->ctx, RIVER_LOG_DEBUG, "partition: %llu sample keys "
                  "in all, not %llu: %d instances gather at most %llu for "
                  "%d partitions, each its share by its records",
                  (unsigned long long)ns, (unsigned long long)want, ninst,
                  (unsigned long long)cap, nparts);
  k = counts[2 * inst];   /* at most what mine holds */
  seed = river_hash64(0x5eed + (uint64_t)inst);
  for (i = 0; i < k; i++) {
    uint64_t at = (seed = river_hash64(seed + i)) % p->n;
    memcpy(mine + i * p->k.size, p->buf + at * p->k.record_size + p->k.offset,
           p->k.size);
  }
  rc = gather(p, mine, k, sizes, &all);
  if (rc == RIVER_SUCCESS && (ns == 0 || nparts == 1))
    rc = river_set_partitioner(p->ctx, 0, RIVER_BY_HASH, NULL, 0);
  else if (rc == RIVER_SUCCESS) {
    split = malloc((size_t)nparts * p->k.size);
    rc = split == NULL ? RIVER_ENOMEM
         : choose(p, all, counts, ninst, nparts, split);
    if (rc == RIVER_SUCCESS)
      rc = river_set_partitioner(p->ctx, 0, RIVER_BY_RANGE, split,
                                 (size_t)nparts - 1);
  }
out:
  free(mine);
  free(all);
  free(split);
  free(counts);
  free(nbuf);
  free(sizes);
  return rc;
}

/* Copy the rest of input 0 to output 0. */
static int stream(river_ctx *ctx)
{
  const void *recs;
  size_t n;
  int rc;

  while ((rc = river_get(ctx, 0, &recs, &n)) == RIVER_SUCCESS)
    if ((rc = river_put(ctx, 0, recs, n)) != RIVER_SUCCESS)
      return rc;
  return rc == RIVER_EOS ? RIVER_SUCCESS : rc;
}

static int partition(river_ctx *ctx)
{
  struct part p;
  const river_schema *s;
  const char *by;
  uint64_t nsample, limit;
  int rc;

  memset(&p, 0, sizeof p);
  p.ctx = ctx;
  river_arg_str(ctx, "by", &by);
  river_arg_uint(ctx, "sample", &nsample);
  river_arg_uint(ctx, "buffer", &limit);
  if (strcmp(by, "hash") == 0) {
    rc = river_set_partitioner(ctx, 0, RIVER_BY_HASH, NULL, 0);
    return rc == RIVER_SUCCESS ? stream(ctx) : rc;
  }
  river_input_schema(ctx, 0, &s);
  rc = river_key_of(s, -1, &p.k);
  if (rc == RIVER_SUCCESS)
    rc = fill(&p, limit);
  if (rc == RIVER_SUCCESS)
    rc = agree(&p, nsample ? nsample : 1);
  if (rc == RIVER_SUCCESS && p.n > 0)
    rc = river_put(ctx, 0, p.buf, p.n);
  free(p.buf);
  if (rc == RIVER_SUCCESS && !p.ended)
    rc = stream(ctx);
  return rc;
}

/* Check `by` while the flow is checked; output 0 carries input 0's
 * schema. */
static int partition_schema(river_ctx *ctx, int output, river_schema **out)
{
  const river_schema *s;
  const char *by;

  (void)output;
  river_arg_str(ctx, "by", &by);
  if (strcmp(by, "range") != 0 && strcmp(by, "hash") != 0) {
    river_ctx_log(ctx, RIVER_LOG_ERROR, "partition: argument 'by' is '%s', "
                  "not range or hash", by);
    return RIVER_EINVAL;
  }
  river_input_schema(ctx, 0, &s);
  return river_schema_clone(s, out);
}

void river__module_partition(void)
{
  river_module_decl d = RIVER_MODULE_DECL_INIT;

  d.min_inputs = d.max_inputs = 1;
  d.min_outputs = d.max_outputs = 1;
  d.shares_rank = 1;
  d.args = "by:str=range,sample:uint=1000,buffer:size=64Mi";
  d.schema = partition_schema;
  d.doc = "place records on the partitions of an exchange edge: by range "
          "splitters from a sample of the data agreed by the stage, or "
          "by hash";
  river_module_register("partition", partition, &d, NULL);
}
