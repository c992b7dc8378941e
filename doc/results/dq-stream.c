/*
 * dq-stream.c - the per-message profile's harness (issue 13, doc/results.md
 * "overhead"): n producers stream GIB GiB of 100-byte records through a
 * PUSH queue with reserve/commit (mode 0) or n raw MPI_Isend/MPI_Irecv
 * pairs send as much from `depth` = 2 hot buffers each (mode 1), or raw
 * MPI in the queue's own pattern (mode 2, river-bench's raw-a2a: producer
 * p sends message j to consumer (p + j) mod n, 2 in flight per pair, each
 * consumer keeping 2 receives posted per producer), in a
 * fresh process per run and without river-bench's other work, so that
 * perf sees only the stream. Build and run from the repository root:
 *   mpicc -O2 -Iinclude doc/results/dq-stream.c -o /tmp/dq-stream \
 *     -Lsrc/.libs -lriver -Wl,-rpath,$PWD/src/.libs
 *   mpirun --oversubscribe -n 2 /tmp/dq-stream MODE MSG_BYTES GIB
 *   mpirun --oversubscribe -n 2 bash -c 'exec perf record -g \
 *     -o /tmp/perf.$OMPI_COMM_WORLD_RANK.data /tmp/dq-stream 0 65536 4'
 * Not part of the build: a measuring aid, kept with the figures it gave.
 */
#include <river.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
  int rank, size, mode = argc > 1 ? atoi(argv[1]) : 0; /* 0 river reserve, 1 raw-hot, 2 raw-a2a */
  size_t msg = argc > 2 ? strtoull(argv[2], 0, 10) : 65536;
  double gib = argc > 3 ? atof(argv[3]) : 4;
  uint64_t total = (uint64_t)(gib * (1 << 30)), done = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = size / 2, prod = rank < n, peer = prod ? rank + n : rank - n;
  total /= n;
  double t0 = MPI_Wtime();
  if (mode == 0) {
    river_dq_opts o = RIVER_DQ_OPTS_INIT;
    river_dq *q;
    o.credits = 2; o.message_size = msg;
    river_dq_create(MPI_COMM_WORLD, prod ? RIVER_DQ_PRODUCER : RIVER_DQ_CONSUMER, 100, &o, &q);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (prod) {
      uint64_t nrec = total / 100, sent = 0;
      while (sent < nrec) {
        void *d; size_t room, k;
        river_dq_reserve(q, &d, &room);
        k = nrec - sent < room ? nrec - sent : room;
        river_dq_commit(q, k);
        sent += k;
      }
      river_dq_close(q);
    } else {
      const void *r; size_t n;
      while (river_dq_get(q, &r, &n, NULL) == RIVER_SUCCESS) done += n;
    }
    river_dq_destroy(q);
  } else if (mode == 2) {
    int nreq = 2 * n, i;
    MPI_Request *req = malloc(nreq * sizeof *req);
    char *buf = aligned_alloc(4096, nreq * msg); memset(buf, 1, nreq * msg);
    uint64_t count = total / msg, d;
    count -= count % n;
    for (i = 0; i < nreq; i++) req[i] = MPI_REQUEST_NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (d = 0; d < count; d++) {
      int s = (int)(d % nreq), to = prod ? n + (rank + s) % n : s % n;
      MPI_Wait(&req[s], MPI_STATUS_IGNORE);
      if (prod) MPI_Isend(buf + s * msg, (int)msg, MPI_BYTE, to, 9, MPI_COMM_WORLD, &req[s]);
      else MPI_Irecv(buf + s * msg, (int)msg, MPI_BYTE, to, 9, MPI_COMM_WORLD, &req[s]);
    }
    MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
  } else {
    int depth = 2, i; MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    char *buf = malloc(depth * msg); memset(buf, 1, depth * msg);
    uint64_t count = total / msg, d;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (d = 0; d < count; d++) {
      int s = (int)(d % depth);
      MPI_Wait(&req[s], MPI_STATUS_IGNORE);
      if (prod) MPI_Isend(buf + s * msg, (int)msg, MPI_BYTE, peer, 9, MPI_COMM_WORLD, &req[s]);
      else MPI_Irecv(buf + s * msg, (int)msg, MPI_BYTE, peer, 9, MPI_COMM_WORLD, &req[s]);
    }
    MPI_Waitall(depth, req, MPI_STATUSES_IGNORE);
  }
  double t = MPI_Wtime() - t0, tm;
  MPI_Reduce(&t, &tm, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("mode %d msg %zu %dx%d: %.0f MB/s\n", mode, msg, n, n, (double)total * n / tm / 1e6);
  MPI_Finalize();
  return 0;
}
