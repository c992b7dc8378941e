/*
 * dqtest.h - what the distributed-queue tests (test_dq_mpi.c,
 * test_dq_pull_mpi.c, test_dq_bad_mpi.c,
 * test_dq_coop_mpi.c) share, on top of the generic
 * harness in mpitest.h: the 64-byte test record (struct rec: who made it,
 * its number and a hash that its filler derives from, so every record
 * can be verified on arrival) with an order-independent checksum of
 * records (struct sums), barriers and gathers that wait without
 * spinning, the round layout that splits the job into groups running at
 * the same time, the log capture, and the start and end of each
 * program's main.
 *
 * Header-only: each test program is one file that includes it once.
 * Define _GNU_SOURCE before including it.
 */
#ifndef RIVER_DQTEST_H
#define RIVER_DQTEST_H

#include <river.h>
#include "mpitest.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PATTERN 8   /* ranks per copy of the round layout */
#define FILLER 40

/* A 64-byte record: who made it, its number, a hash of both, filler
 * derived from the hash. */
struct rec {
  uint32_t prod;
  uint32_t tag;     /* the scenario; POISON: the partition refuses it */
  uint64_t seq;
  uint64_t hash;
  unsigned char fill[FILLER];
};
#define RS ((size_t)sizeof(struct rec))
#define POISON 0xbadu

/* This process's rank and the job's size in MPI_COMM_WORLD (set by
 * dqtest_begin). */
static int wrank, wsize;

/* ------------------------------------------------------------ records */

static inline void rec_make(struct rec *r, uint32_t prod, uint64_t seq,
                            uint32_t tag)
{
  int i;

  r->prod = prod;
  r->tag = tag;
  r->seq = seq;
  r->hash = river_hash64(((uint64_t)prod << 48) ^ ((uint64_t)tag << 32) ^ seq);
  for (i = 0; i < FILLER; i += 8) {
    uint64_t v = river_hash64(r->hash + (uint64_t)i);
    memcpy(r->fill + i, &v, 8);
  }
}

/* 1 if r's hash and filler match its producer, tag and number. */
static inline int rec_ok(const struct rec *r)
{
  struct rec x;

  rec_make(&x, r->prod, r->seq, r->tag);
  return memcmp(&x, r, sizeof x) == 0;
}

/* A hash of all 64 bytes (for the order-independent checksum). */
static inline uint64_t rec_digest(const struct rec *r)
{
  uint64_t w[8], h = 0x5851f42d4c957f2dULL;
  int i;

  memcpy(w, r, sizeof w);
  for (i = 0; i < 8; i++)
    h = river_hash64(h ^ w[i]);
  return h;
}

struct sums {
  uint64_t count, sum, xor;
};

static inline void sums_add(struct sums *s, const struct rec *r)
{
  uint64_t d = rec_digest(r);

  s->count++;
  s->sum += d;
  s->xor ^= d;
}

/* A partition of records by a hash of their hash. */
static inline int part_hash(const void *record, int n, void *ctx)
{
  const struct rec *r = record;

  return (int)(river_hash64(r->hash ^ 0x1234) % (uint64_t)n);
}

/* ------------------------------------------------------ time and groups */

static inline void sleep_us(long us)
{
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};

  if (us > 0)
    nanosleep(&ts, NULL);
}

/* Barrier and allgather that wait with river_wait: no spinning. */
static inline void quiet_barrier(MPI_Comm c)
{
  MPI_Request r;

  MPI_Ibarrier(c, &r);
  MT_CHECK_RC(river_wait(&r, MPI_STATUS_IGNORE), RIVER_SUCCESS);
}

static inline void quiet_allgather(const void *in, void *out, int n,
                                   MPI_Comm c)
{
  MPI_Request r;

  MPI_Iallgather(in, n, MPI_UINT64_T, out, n, MPI_UINT64_T, c, &r);
  MT_CHECK_RC(river_wait(&r, MPI_STATUS_IGNORE), RIVER_SUCCESS);
}

/* This round's group: ranks are laid out in copies of PATTERN, each
 * split into groups of the given sizes. *grank gets the rank in it.
 * Collective over MPI_COMM_WORLD; free the group with MPI_Comm_free. */
static inline MPI_Comm round_group(const int *sizes, int n, int *group,
                                   int *grank)
{
  int p = wrank % PATTERN, copy = wrank / PATTERN, g = 0, first = 0;
  MPI_Comm c;

  while (g < n - 1 && p >= first + sizes[g])
    first += sizes[g++];
  quiet_barrier(MPI_COMM_WORLD);
  MPI_Comm_split(MPI_COMM_WORLD, copy * n + g, wrank, &c);
  MPI_Comm_rank(c, grank);
  *group = g;
  return c;
}

/* ------------------------------------------------------------ the log */

/* From here to log_restore, what this rank logs goes to mt_logbuf
 * (mpitest.h), which starts empty. */
static inline void log_capture(void)
{
  mt_log_clear();
  river_log_set_handler(mt_log_capture, NULL);
}

static inline void log_restore(void)
{
  river_log_set_handler(NULL, NULL);
}

/* ------------------------------------------------------------- main */

/* river_init, wrank and wsize; refuses (1, after river_finalize) a job
 * that is not a multiple of PATTERN ranks. 0: go on. */
static inline int dqtest_begin(int *argc, char ***argv, const char *name)
{
  if (river_init(argc, argv) != RIVER_SUCCESS) {
    fprintf(stderr, "river_init failed\n");
    return 1;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  if (wsize % PATTERN != 0) {
    if (wrank == 0)
      fprintf(stderr, "%s needs a multiple of %d ranks\n", name, PATTERN);
    river_finalize();
    return 1;
  }
  return 0;
}

/* Waits for every rank, prints the time since t0 and the verdict, ends
 * River; the exit status for main. */
static inline int dqtest_end(const char *name, double t0)
{
  int rc;

  quiet_barrier(MPI_COMM_WORLD);
  if (wrank == 0)
    printf("%s: %d ranks, %.1f s\n", name, wsize, river_wtime() - t0);
  rc = mt_verdict(MPI_COMM_WORLD, name);
  river_finalize();
  return rc;
}

#endif /* RIVER_DQTEST_H */
