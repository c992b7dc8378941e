/*
 * gd_alloc.c - the pure parts of graduated declustering (river/gd.h): the
 * disks' feedback allocator, the fluid ideal, the lost disk's plan and
 * an emulated disk's clock. No MPI here, so the
 * unit tests can drive them on a model of the ring.
 */
#include "river_internal.h"
#include "gd_alloc_internal.h"

#include <math.h>
#include <stdlib.h>

/*
 * The feedback allocator. A disk holds requests from several streams
 * (one per partition copy it stores); stream i has pending[i] requests
 * and its client last reported progress[i] (fraction of the partition
 * received). Serve the stream whose client lags the most; streams within
 * RIVER_GD_TIE of the laggard share round-robin from *cursor, so equal
 * clients alternate instead of one starving the other. With progress ==
 * NULL (the baselines) every pending stream shares round-robin: no bias.
 * Returns the stream to serve, or -1 if nothing is pending.
 */
int river__gd_pick(const double *progress, const int *pending, int n,
                   int *cursor)
{
  double low = INFINITY;
  int i, j, start = *cursor;

  if (progress != NULL)
    for (i = 0; i < n; i++)
      if (pending[i] > 0 && progress[i] < low)
        low = progress[i];
  for (j = 0; j < n; j++) {
    i = (start + j) % n;
    if (pending[i] <= 0)
      continue;
    if (progress != NULL && progress[i] > low + RIVER_GD_TIE)
      continue;
    *cursor = (i + 1) % n;
    return i;
  }
  return -1;
}

/*
 * As river__gd_pick, but a disk keeps serving the stream it served last
 * (`last`, or -1) while that stream still has requests and its client is
 * within `margin` of the laggard: clients then take turns in runs of a
 * few blocks instead of one, so a disk switches streams (a seek on a
 * spinning disk) a few times less often, at the price of clients being
 * up to `margin` apart.
 */
int river__gd_pick_sticky(const double *progress, const int *pending, int n,
                          int *cursor, int last, double margin)
{
  double low = INFINITY;
  int i;

  if (progress != NULL && last >= 0 && last < n && pending[last] > 0) {
    for (i = 0; i < n; i++)
      if (pending[i] > 0 && progress[i] < low)
        low = progress[i];
    if (progress[last] <= low + margin)
      return last;
  }
  return river__gd_pick(progress, pending, n, cursor);
}

/*
 * The allocator gd_server.c uses: river__gd_pick_sticky on progress plus a
 * per-stream bias that integrates how far each stream's client is ahead
 * of the mean of the streams pending here. Strict priority alone can
 * give a client most of a disk only while that client is behind, so a
 * chain of disks shifting bandwidth round the ring needs a progress
 * gradient (clients far from a slow disk run blocks ahead, finish first
 * and waste the end of the run); the integral term lets a disk keep
 * favouring a client at equal progress, and drives the gradient to zero.
 * bias[i] (per stream, the caller's, starting at 0) is updated here:
 * bias += gain x (progress - mean), clamped to [-cap, cap]; progress
 * (the caller's scratch copy) is overwritten with progress + bias.
 */
int river__gd_pick_balanced(double *progress, const int *pending, int n,
                            int *cursor, int last, double margin,
                            double *bias, double gain, double cap)
{
  double mean = 0;
  int i, k = 0;

  for (i = 0; i < n; i++)
    if (pending[i] > 0) {
      mean += progress[i];
      k++;
    }
  if (k == 0)
    return -1;
  mean /= k;
  for (i = 0; i < n; i++) {
    if (pending[i] > 0) {
      bias[i] += gain * (progress[i] - mean);
      bias[i] = bias[i] > cap ? cap : bias[i] < -cap ? -cap : bias[i];
    }
    progress[i] += bias[i];
  }
  return river__gd_pick_sticky(progress, pending, n, cursor, last, margin);
}

/*
 * The end game's test (gd_client.c end_game): is a block that waits
 * behind `out` requests at a busy copy (measured block time tbusy) worth
 * withdrawing and asking of an idle copy (tidle)? 0 means not measured
 * yet, and an unmeasured copy is taken to be as fast as the other. Move
 * only when both hold:
 *   - the block would wait there longer than `gain` block times of the
 *     idle copy (out x tbusy > gain x tidle), and
 *   - the busy copy is slower, not merely busier: tbusy > slower x tidle
 *     (when both are measured). At equal speeds (every disk serving two
 *     clients in lockstep) the "idle" copy is busy with its other client,
 *     so moving gains nothing. Measured (issue 13): with one disk at 10%
 *     of 14, 96.1% of the fluid ideal with the first test alone, 99.3%
 *     with both (medians of 6, interleaved).
 */
int river__gd_worth_moving(int out, double tbusy, double tidle, double gain,
                           double slower)
{
  int measured = tbusy > 0 && tidle > 0;

  if (out <= 0 || !(gain > 0) || !(slower >= 1))
    return 0;
  if (tidle <= 0)
    tidle = tbusy;
  if (tbusy <= 0)
    tbusy = tidle;
  if (!((double)out * tbusy > gain * tidle))
    return 0;
  return !measured || tbusy > slower * tidle;
}

/*
 * Don't start what can't finish in time: would the n-th block queued at
 * a copy (block time tslow) arrive later than the client's other copy
 * (block time tfast) could deliver everything else, that block included?
 * `left` is the partition's blocks not yet received (those out
 * anywhere, and those not asked yet), the n at this copy among them; if
 * the n-th went to the other copy instead, it would deliver left - n + 1
 * of them. Only for a copy measured slower than the other by `slower`
 * (so of two copies at one speed, neither is ever refused, and the
 * faster of two is never refused at all): a disk at 10% then stops
 * taking a client's blocks in the last block times it cannot fill, and
 * no client waits at the end for a slow disk's last block.
 */
int river__gd_too_late(int n, double tslow, uint64_t left, double tfast,
                       double slower)
{
  if (n < 1 || (uint64_t)n > left || !(tslow > 0) || !(tfast > 0)
      || !(slower >= 1) || !(tslow > slower * tfast))
    return 0;
  return (double)n * tslow > (double)(left - (uint64_t)n + 1) * tfast;
}

int river__gd_fastest(int repl, const unsigned char *usable,
                      const double *tnow)
{
  int c, fast = -1;

  for (c = 0; c < repl; c++)
    if (usable[c] && tnow[c] > 0 && (fast < 0 || tnow[c] < tnow[fast]))
      fast = c;
  return fast;
}

/*
 * BALANCED's choice of the copy to ask for one more block: among the
 * usable copies (not failed for this block, not dead) with fewer than k
 * requests out, the one with the fewest out, ties from `rr` on; except
 * that a copy is passed over while its next block would be too late
 * (river__gd_too_late: at its average block time tavg, against the
 * fastest usable copy at tnow, the block time as of now). -1 if none
 * may take it now; *could: whether some copy is usable at all (it may
 * take it later).
 */
int river__gd_choose_copy(int repl, int k, const int *out,
                          const unsigned char *usable, const double *tavg,
                          const double *tnow, uint64_t left, int rr,
                          double slower, int *could)
{
  int c, j, best = -1, fast = river__gd_fastest(repl, usable, tnow);

  *could = 0;
  for (j = 0; j < repl; j++) {
    c = (rr + j) % repl;
    if (!usable[c])
      continue;
    *could = 1;
    if (out[c] >= k
        || (fast >= 0 && c != fast
            && river__gd_too_late(out[c] + 1, tavg[c], left, tnow[fast],
                                  slower)))
      continue;
    if (best < 0 || out[c] < out[best])
      best = c;
  }
  return best;
}

/*
 * Dormant partitions (BALANCED; gd_client.c). While nothing is known to
 * be slow a partition reads its first copy, as MIRROR_NOGD does: at equal
 * speeds every disk then serves exactly its own partition and all end
 * together, where progress feedback ends a block or two apart (issue 13:
 * 99.5% of the fluid ideal against the fixed mirror's 99.9% at k = 0).
 * It probes its other copies, one block in `every`, each partition
 * alike, so the disks' loads stay equal, and it wakes (BALANCED from then
 * on) when river__gd_first_slower says so, when a read fails, when its
 * first copy's disk is shared with a woken partition or says its client
 * lags another of that disk's by GD_WAKE_LAG blocks (while blocks are
 * left to ask), or when the end game moves one of its blocks.
 *
 * river__gd_first_slower: whether the first copy is slower than the
 * fastest other live copy whose disk time is known (tserve, seconds per
 * block as the disks report them; 0: not known): by `slower` times its
 * block time, or silent (no block for `silent` seconds while requests
 * are out) for `silent_x` of its block times. 0 while no other copy's
 * time is known.
 */
int river__gd_first_slower(int repl, const double *tserve,
                           const unsigned char *dead, double silent,
                           double slower, double silent_x)
{
  double other = 0;
  int c;

  for (c = 1; c < repl; c++)
    if (!dead[c] && tserve[c] > 0 && (other == 0 || tserve[c] < other))
      other = tserve[c];
  if (!(other > 0))
    return 0;
  return tserve[0] > slower * other || silent > silent_x * other;
}

/*
 * river__gd_choose_dormant: the copy a dormant partition asks for its
 * next new block (`next`): a probe of another copy when one is due (next
 * >= probe_at) and no copy but the first has a request out, the copies
 * taken in turn from the `probes` asked so far, skipping dead and full
 * ones; else the first copy if it has fewer than k out; else -1 (wait).
 */
int river__gd_choose_dormant(int repl, int k, const int *out,
                             const unsigned char *dead, uint64_t next,
                             uint64_t probe_at, int probes)
{
  int c, j, probing = 0;

  for (c = 1; c < repl; c++)
    probing += out[c];
  if (!probing && next >= probe_at && repl > 1)
    for (j = 0; j < repl - 1; j++) {
      c = 1 + (probes + j) % (repl - 1);
      if (!dead[c] && out[c] < k)
        return c;
    }
  return out[0] < k ? 0 : -1;
}

/*
 * A lost disk's plan (BALANCED; chained declustering's failover,
 * gd_client.c river__gd_client_plan). With every disk up, a dormant
 * read is balanced by construction: each disk serves its own
 * partition's first copy. With disk d lost, that is no longer so: its
 * partition can be read only from disk d+1 and the partition whose
 * second copy it held only from disk d-1, and progress feedback
 * balancing 13 coupled disks ended them 1-2 blocks of load apart (issue
 * 13: the lost run at 98.9-99.5% of its fluid ideal where the whole run
 * reached 99.4-100%). So the load is planned instead, to the record:
 * the live disks between two lost ones (a chain) share the chain's
 * partitions equally, each partition split between its two copies at
 * the record where one disk's share ends and the next one's begins.
 * Each disk's share is then the same, to a record, and the disks end
 * together when their speeds are equal; a partition wakes (BALANCED)
 * when they are not.
 *
 * river__gd_plan: n disks in a ring, replication 2; part_of[d], the
 * partition whose first copy is on disk d (its second is on d+1 mod n);
 * nrec[p], its records; lost[d], disk d cannot be read. Fills first[p]:
 * the records of p to read from its first copy (from record 0; the rest
 * from its second). 0 on success; -1 when there is no plan: no disk
 * lost, every disk lost, two neighbours lost (a partition has no copy),
 * or sizes so unequal that a share would not fit its partitions.
 */
int river__gd_plan(int n, const int *part_of, const uint64_t *nrec,
                   const unsigned char *lost, uint64_t *first)
{
  int d, d0 = -1, s, m, j, nlost = 0;

  for (d = 0; d < n; d++)
    if (lost[d]) {
      nlost++;
      if (d0 < 0)
        d0 = d;
      if (lost[(d + 1) % n] && n > 1)
        return -1;
    }
  if (nlost == 0 || nlost == n)
    return -1;
  /* Each chain starts after a lost disk: disks s .. s+m-1 are up. */
  for (s = (d0 + 1) % n; ; ) {
    uint64_t total, carry, per, rem, t_prev = 0;
    int before = part_of[(s + n - 1) % n];

    for (m = 0; !lost[(s + m) % n]; m++)
      ;
    total = nrec[before];
    for (j = 0; j < m; j++)
      total += nrec[part_of[(s + j) % n]];
    per = total / (uint64_t)m;
    rem = total % (uint64_t)m;
    /* The lost disk's partition: all from its second copy, on disk s. */
    first[before] = 0;
    carry = nrec[before];
    for (j = 1; j <= m; j++) {
      /* Disks s .. s+j-1 carry floor(j x total / m) records between
       * them: shares differ by a record at most. */
      uint64_t t = per * (uint64_t)j + rem * (uint64_t)j / (uint64_t)m;
      uint64_t share = t - t_prev, x;
      int p = part_of[(s + j - 1) % n];

      t_prev = t;
      if (share < carry || (x = share - carry) > nrec[p])
        return -1;
      first[p] = x;
      carry = nrec[p] - x;
    }
    if (carry != 0)   /* the chain's last partition: its second copy is
                         on the lost disk that ends the chain */
      return -1;
    s = (s + m + 1) % n;
    if (s == (d0 + 1) % n)
      break;
  }
  return 0;
}

/*
 * river__gd_plan_slower: whether a planned partition should wake,
 * because one of its live copies is slower than another whose disk time
 * is known (tserve: seconds per block, 0: not known) by `slower` times,
 * or has been silent (silent[c] seconds with requests out, before its
 * first block) for silent_x of the other's block times.
 */
int river__gd_plan_slower(int repl, const double *tserve,
                          const unsigned char *dead, const double *silent,
                          double slower, double silent_x)
{
  int c, o;

  for (c = 0; c < repl; c++) {
    double other = 0;
    if (dead[c])
      continue;
    for (o = 0; o < repl; o++)
      if (o != c && !dead[o] && tserve[o] > 0
          && (other == 0 || tserve[o] < other))
        other = tserve[o];
    if (other > 0
        && (tserve[c] > slower * other || silent[c] > silent_x * other))
      return 1;
  }
  return 0;
}

int river_gd_fluid_ideal(const double *rates, int n, int r, double *per_client,
                         double *total)
{
  long double *pre;   /* pre[k]: the rates of disks 0..k-1, round the
                         ring twice (a run may wrap) */
  double best, run;
  int i, j, len, ndisk;

  if (rates == NULL || n < 1 || r < 1 || r > n)
    return RIVER_EINVAL;
  for (i = 0; i < n; i++)
    if (!(rates[i] >= 0) || isinf(rates[i]))
      return RIVER_EINVAL;
  if ((pre = malloc((2 * (size_t)n + 1) * sizeof *pre)) == NULL)
    return RIVER_ENOMEM;
  pre[0] = 0;
  for (i = 0; i < 2 * n; i++)
    pre[i + 1] = pre[i] + rates[i % n];
  /* The whole ring: n clients share every disk. */
  best = (double)(pre[n] / n);
  /* Runs of len consecutive clients j..j+len-1 (len < n) can use only
   * disks j..j+len+r-2, fewer than n of them when len + r - 1 < n: a
   * run's disks by the prefix sums, so O(n^2) in all (a sum per run
   * was O(n^3): minutes at 10,000 disks; issue 41). */
  for (len = 1; len < n; len++) {
    ndisk = len + r - 1;
    if (ndisk >= n)
      break;      /* every disk: no tighter than the whole ring */
    for (j = 0; j < n; j++) {
      run = (double)((pre[j + ndisk] - pre[j]) / len);
      if (run < best)
        best = run;
    }
  }
  free(pre);
  if (per_client)
    *per_client = best;
  if (total)
    *total = best * n;
  return RIVER_SUCCESS;
}

/*
 * An emulated disk's clock (src/gd_server.c, disk_take): when the disk
 * starts a block whose request the rank took in at `queued` into a send
 * slot it saw free at `since`, the disk being done with its last block
 * at ready_at, the server taking the block `now`, a whole block taking
 * t seconds at the disk's factor now. The disk starts when it is free
 * and either had the request and the slot (a device with a queue works
 * on while its rank waits for the CPU) or a block's time ago at most
 * (it reads a block ahead, as the token bucket a block deep it replaces
 * did). same_factor: the disk's factor at the queue's start is the one
 * now; if not (a perturbation's step in between), the read-ahead only,
 * so the disk never works at a factor it did not have. Never before
 * ready_at: the disk never works faster than its rate.
 */
double river__gd_disk_start(double ready_at, double queued, double since,
                            double now, double t, int same_factor)
{
  double start = queued > since ? queued : since;

  if (start > now - t || !same_factor)
    start = now - t;
  return start > ready_at ? start : ready_at;
}
