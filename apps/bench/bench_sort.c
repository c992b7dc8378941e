/*
 * bench_sort.c - river-bench sort: the River paper's sort experiments
 * (section 5.5) on the shipped flow flows/sort.yaml, River against the
 * static baseline on the same flow (river sort --static: fixed readers,
 * reader i -> partitioner i, sorter i -> writer i), on emulated disks
 * (--rate MB/s each, read and written) and partitioner CPUs (--cpu-rate
 * MB/s each, default twice the disk rate):
 *
 *   scaling       n = 1, 2, 4, ... ranks (and the job's size), unperturbed
 *   partitioners  k = 0..n of the n partitioners at 25% of their CPU
 *   writers       k = 0..n of the n disks at 50% (read and written)
 *   real          no emulation: --records (10M: 1 GB) ASCII gensort
 *                 records in a flat file sorted into a flat file by
 *                 GNU sort (LC_ALL=C sort --parallel=2 -S 50%), River
 *                 and static, without and with fsync of the output
 *                 (--sync), --repeats times interleaved; River's output
 *                 must be GNU sort's bytes. Its rows' ideal_MBps is GNU
 *                 sort's rate in the same repeat, ratio the speed-up
 *                 (target 4x). The time is the flow's, in the running
 *                 job: starting a job (about 0.14 s here) is not in it.
 *
 * For each point the n ranks generate gensort records (uniform keys,
 * rate x seconds / 2 bytes a rank, so that the unperturbed ideal takes
 * about --seconds) in blocks of --block-size (256 KiB), mirrored on two
 * disks when n > 1, then run River and
 * static --repeats times each, interleaved (R S R S ...). Every output is
 * validated as `river valsort --input` would (key order, record count,
 * gensort's checksum equal to the input's) and removed. A row per run:
 * measured MB/s, the fluid ideal (app_sort_ideal: the best any placement
 * could do at the configured rates, the in-memory sort counted as free),
 * ratio; rank 0 then prints each point's medians. Ranks outside a point
 * wait backing off, so they take no CPU from it.
 */
#include "bench.h"
#include "../common/ideal.h"
#include "../common/number.h"   /* app_size */
#include "../common/shipped.h"

#include <fcntl.h>
#include <mpi.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SORT_CHUNK 10000   /* records generated and written at a time */

/* The suite's own options (the table at the end). */
static struct sort_opts {
  double cpu_rate_mbps;    /* --cpu-rate, each partitioner (0: 2 x --rate) */
  size_t block_size;       /* --block-size, the input's blocks */
  uint64_t records;        /* --records, real's input */
} sort_opt = {0, 256 << 10, 10000000};   /* real: 1 GB of gensort records */

/* A point: n ranks, k of them perturbed by `factor` (kind: RIVER_
 * PERTURB_CPU or _DISK, -1 for none). */
struct point {
  const char *exp;
  int n, k, kind;
  double factor;
};

/* What the n ranks of a point share. */
struct ctx {
  struct bench *b;
  MPI_Comm comm;           /* the point's ranks, or MPI_COMM_NULL */
  const char *root, *spec;
  uint64_t per_rank;       /* records each rank generates */
  river_valsort_summary in;  /* the input's count and checksum */
};



/* ----------------------------------------------------------- the data */

/* The n ranks write collection "in": rank r the gensort rows
 * [r per, (r+1) per), `copies` copies; c->in gets its summary. */
static int make_input(struct ctx *c, int copies)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  river_schema *s = NULL;
  river_pcoll *pc = NULL;
  river_valsort *v = NULL;
  unsigned char *buf = malloc((size_t)SORT_CHUNK * 100);
  uint64_t done = 0;
  int r, rc;

  MPI_Comm_rank(c->comm, &r);
  o.root = c->root;
  o.replication = copies;
  o.block_size = sort_opt.block_size & ~(size_t)4095;   /* --block-size */
  rc = buf ? river_schema_parse(RIVER_SCHEMA_DEFAULT, &s) : RIVER_ENOMEM;
  if (rc == RIVER_SUCCESS)
    rc = river_valsort_create(s, &v);
  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_create(c->comm, "in", s, &o, &pc);
  while (rc == RIVER_SUCCESS && done < c->per_rank) {
    size_t n = c->per_rank - done < SORT_CHUNK ? (size_t)(c->per_rank - done)
                                               : SORT_CHUNK;
    rc = river_gensort_fill((uint64_t)r * c->per_rank + done, n, 0, 1, buf);
    if (rc == RIVER_SUCCESS)
      rc = river_pcoll_write(pc, buf, n);
    if (rc == RIVER_SUCCESS)
      rc = river_valsort_add(v, buf, n);
    done += n;
  }
  if (pc != NULL) {
    int crc = river_pcoll_commit(pc);   /* collective: fails everywhere */
    rc = rc != RIVER_SUCCESS ? rc : crc;
  }
  if (rc == RIVER_SUCCESS)
    rc = river_valsort_reduce(v, c->comm);
  if (rc == RIVER_SUCCESS)
    rc = river_valsort_result(v, &c->in);
  river_valsort_destroy(v);
  river_schema_destroy(s);
  free(buf);
  return rc;
}

/* Validate "out" as valsort --input does: rank r reads its contiguous
 * share of the partitions in order; ok = sorted, same count and
 * checksum as the input. */
static int validate(struct ctx *c, int *ok)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  river_pcoll *pc = NULL;
  river_pcoll_info info;
  river_valsort *v = NULL;
  river_valsort_summary got;
  const river_schema *s;
  unsigned char *buf = NULL;
  int r, n, p, rc;

  *ok = 0;
  MPI_Comm_rank(c->comm, &r);
  MPI_Comm_size(c->comm, &n);
  o.root = c->root;
  o.hold = RIVER_PCOLL_HOLD_NONE;  /* the bench's own output: each rank
                                      opens its share as it reads it */
  rc = river_pcoll_open(c->comm, "out", &o, &pc);
  if (rc != RIVER_SUCCESS)
    return rc;
  river_pcoll_info_get(pc, &info);
  river_pcoll_schema(pc, &s);
  rc = river_valsort_create(s, &v);
  if (rc == RIVER_SUCCESS && (buf = malloc(info.block_size)) == NULL)
    rc = RIVER_ENOMEM;
  for (p = (int)((int64_t)info.npartitions * r / n);
       rc == RIVER_SUCCESS
       && p < (int)((int64_t)info.npartitions * (r + 1) / n); p++) {
    uint64_t b, nb = 0;
    size_t rpb, got_n;
    river_pcoll_blocks(pc, p, &rpb, &nb);
    for (b = 0; rc == RIVER_SUCCESS && b < nb; b++) {
      rc = river_pcoll_read_block(pc, p, b, buf, info.block_size, &got_n);
      if (rc == RIVER_SUCCESS)
        rc = river_valsort_add(v, buf, got_n);
    }
  }
  rc = river_valsort_reduce(v, c->comm) != RIVER_SUCCESS && rc == RIVER_SUCCESS
           ? RIVER_EMPI : rc;
  if (rc == RIVER_SUCCESS && river_valsort_result(v, &got) == RIVER_SUCCESS)
    *ok = got.unordered == 0 && got.records == c->in.records
          && got.checksum_hi == c->in.checksum_hi
          && got.checksum_lo == c->in.checksum_lo;
  river_valsort_destroy(v);
  river_pcoll_close(pc);
  free(buf);
  return rc;
}

/* ------------------------------------------------------------ the runs */

/* One sort of "in" into "out" on the point's ranks with policy static
 * or not; *seconds its time. The output is validated and removed. */
static int run_sort(struct ctx *c, const struct point *pt, int is_static,
                    double *seconds, int *ok)
{
  char kv[14][1100];
  const char *params[14];
  double disk = c->b->rate_mbps * MB;
  double cpu = (sort_opt.cpu_rate_mbps > 0 ? sort_opt.cpu_rate_mbps
                                           : 2 * c->b->rate_mbps) * MB;
  int n = 0, i, rc;

  snprintf(kv[n++], sizeof kv[0], "in=in");
  snprintf(kv[n++], sizeof kv[0], "out=out");
  snprintf(kv[n++], sizeof kv[0], "root=%s", c->root);
  snprintf(kv[n++], sizeof kv[0], "disk_rate=%.0f", disk);
  snprintf(kv[n++], sizeof kv[0], "cpu_rate=%.0f", cpu);
  snprintf(kv[n++], sizeof kv[0], "credits=%s", APP_SORT_EMUL_CREDITS);
  snprintf(kv[n++], sizeof kv[0], "message_size=%s", APP_SORT_EMUL_MSG);
  if (pt->k > 0)
    snprintf(kv[n++], sizeof kv[0], "perturb=%s:0-%d=%g",
             pt->kind == RIVER_PERTURB_CPU ? "cpu" : "disk", pt->k - 1,
             pt->factor);
  for (i = 0; is_static && i < APP_SORT_NSTATIC; i++)   /* the baseline */
    snprintf(kv[n++], sizeof kv[0], "%s", app_sort_static[i]);
  for (i = 0; i < n; i++)
    params[i] = kv[i];
  *ok = 0;
  rc = bench_time_flow(c->comm, c->spec, params, n, seconds);
  if (rc == RIVER_SUCCESS)
    rc = validate(c, ok);
  bench_drop(c->comm, c->root, "out");
  return rc;
}

/* The fluid ideal of the point, in bytes/s. */
static double ideal_rate(struct ctx *c, const struct point *pt, int copies)
{
  struct app_machine m;
  river_perturb *p = NULL;
  char spec[64];
  double bytes = (double)c->in.records * 100, t;

  m.disk = c->b->rate_mbps * MB;
  m.cpu = (sort_opt.cpu_rate_mbps > 0 ? sort_opt.cpu_rate_mbps
                                      : 2 * c->b->rate_mbps) * MB;
  if (pt->k > 0) {
    snprintf(spec, sizeof spec, "%s:0-%d=%g",
             pt->kind == RIVER_PERTURB_CPU ? "cpu" : "disk", pt->k - 1,
             pt->factor);
    river_perturb_parse(spec, &p);
  }
  m.perturb = p;
  t = app_sort_ideal(&m, bytes, pt->n, pt->n, pt->n, copies, 1);
  river_perturb_destroy(p);
  return t > 0 ? bytes / t : 0;
}


/* Run one point: input, then repeats of River and static interleaved,
 * a row each; rank 0 prints the medians. Collective over WORLD. */
static int run_point(struct bench *b, const char *root, const char *spec,
                     const struct point *pt)
{
  struct ctx c;
  int copies = pt->n > 1 ? 2 : 1, rep, pol, rc = RIVER_SUCCESS, frc;
  double ratios[2][64];
  int nrep = b->repeats < 64 ? b->repeats : 64;

  memset(&c, 0, sizeof c);
  c.b = b;
  c.root = root;
  c.spec = spec;
  c.per_rank = (uint64_t)(b->rate_mbps * MB * b->seconds / 2 / 100);
  if (c.per_rank < 1000)
    c.per_rank = 1000;
  MPI_Comm_split(MPI_COMM_WORLD, b->rank < pt->n ? 0 : MPI_UNDEFINED,
                 b->rank, &c.comm);
  if (c.comm != MPI_COMM_NULL)
    rc = make_input(&c, copies);
  MPI_Bcast(&c.in, sizeof c.in, MPI_BYTE, 0, MPI_COMM_WORLD);
  for (rep = 0; rep < nrep; rep++)
    for (pol = 0; pol < 2; pol++) {
      struct bench_result res;
      double secs = 0;
      int ok = 0;

      memset(&res, 0, sizeof res);
      frc = rc;
      if (c.comm != MPI_COMM_NULL && rc == RIVER_SUCCESS)
        frc = run_sort(&c, pt, pol == 1, &secs, &ok);
      bench_world_wait();
      res.seconds = secs;
      res.records = c.in.records;
      res.measured = secs > 0 ? (double)c.in.records * 100 / secs : 0;
      res.ideal = ideal_rate(&c, pt, copies);
      res.ok = ok;
      frc = bench_end_run(b, &res, frc);
      if (frc != RIVER_SUCCESS && rc == RIVER_SUCCESS)
        rc = frc;
      bench_row(b, pt->exp, pol ? "static" : "river", pt->n, pt->n, pt->k,
                pt->k ? pt->factor : 1.0, &res);
      ratios[pol][rep] = res.ideal > 0 ? res.measured / res.ideal : 0;
    }
  if (b->rank == 0 && nrep > 0) {
    bench_median(ratios[0], nrep);
    bench_median(ratios[1], nrep);
    printf("%-12s n=%-2d k=%-2d median of %d: river %.1f%% (%.1f..%.1f), "
           "static %.1f%% (%.1f..%.1f) of the fluid ideal\n", pt->exp, pt->n,
           pt->k, nrep, 100 * ratios[0][nrep / 2], 100 * ratios[0][0],
           100 * ratios[0][nrep - 1], 100 * ratios[1][nrep / 2],
           100 * ratios[1][0], 100 * ratios[1][nrep - 1]);
    fflush(stdout);
  }
  if (c.comm != MPI_COMM_NULL) {
    int r;
    MPI_Comm_rank(c.comm, &r);
    if (r == 0) {
      river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
      o.root = root;
      river_pcoll_remove("in", &o);
    }
    MPI_Comm_free(&c.comm);
  }
  bench_world_wait();
  return rc;
}

/* ------------------------------------------------------- experiments */

/* The temporary root (rank 0 makes it, every rank learns it) and the
 * spec; then the points, then the root removed. */
static int run_points(struct bench *b, const struct point *pts, int npts)
{
  char root[1024] = "", spec[4096] = "";
  int i, rc;

  if (b->perturb) {
    bench_usage("sort experiments set their own perturbations: no "
                "--perturb");
    return RIVER_EINVAL;
  }
  rc = app_find_flow("river-bench sort", "sort.yaml", spec, sizeof spec);
  MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rc != RIVER_SUCCESS)
    return rc;
  if ((rc = bench_make_root(root, sizeof root, "sort")) != RIVER_SUCCESS)
    return rc;
  for (i = 0; i < npts && rc == RIVER_SUCCESS; i++)
    rc = run_point(b, root, spec, &pts[i]);
  bench_world_wait();
  if (b->rank == 0)
    bench_rm_tree(root);
  return rc;
}

static int exp_scaling(struct bench *b)
{
  struct point pts[32];
  int n, np = 0;

  for (n = 1; n < b->size && np < 31; n *= 2)
    pts[np++] = (struct point){"scaling", n, 0, -1, 1.0};
  pts[np++] = (struct point){"scaling", b->size, 0, -1, 1.0};
  return run_points(b, pts, np);
}

/* k = 0..n of the job's n ranks perturbed by factor (kind). */
static int exp_k(struct bench *b, const char *name, int kind, double factor)
{
  struct point *pts = malloc((size_t)(b->size + 1) * sizeof *pts);
  int k, rc;

  if (pts == NULL)
    return RIVER_ENOMEM;
  for (k = 0; k <= b->size; k++)
    pts[k] = (struct point){name, b->size, k, kind, factor};
  rc = run_points(b, pts, b->size + 1);
  free(pts);
  return rc;
}

static int exp_partitioners(struct bench *b)
{
  return exp_k(b, "partitioners", RIVER_PERTURB_CPU, 0.25);
}

static int exp_writers(struct bench *b)
{
  return exp_k(b, "writers", RIVER_PERTURB_DISK, 0.5);
}

/* ------------------------------------------------- real: against GNU sort */

/* What the real experiment's ranks share: the job's ranks, the files. */
struct real {
  struct bench *b;
  const char *spec, *merge;               /* sort.yaml, sort_merge.yaml */
  char root[1024];
  char in[1100], out[1100], ref[1100];   /* IN, River's OUT, GNU's OUT */
};

/* The n ranks write the ASCII gensort file IN: rank r its slice of the
 * rows [0, records), at its place (rank 0 makes the file first). */
static int make_file(struct real *x)
{
  uint64_t n = sort_opt.records, first, end, done;
  unsigned char *buf = malloc((size_t)SORT_CHUNK * 100);
  int fd = -1, rc = buf ? RIVER_SUCCESS : RIVER_ENOMEM;

  if (x->b->rank == 0) {
    fd = open(x->in, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    rc = fd >= 0 && ftruncate(fd, (off_t)(n * 100)) == 0 ? rc : RIVER_EIO;
    if (fd >= 0)
      close(fd);
  }
  MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  first = n * (uint64_t)x->b->rank / (uint64_t)x->b->size;
  end = n * (uint64_t)(x->b->rank + 1) / (uint64_t)x->b->size;
  fd = rc == RIVER_SUCCESS ? open(x->in, O_WRONLY) : -1;
  if (rc == RIVER_SUCCESS && fd < 0)
    rc = RIVER_EIO;
  for (done = first; rc == RIVER_SUCCESS && done < end;) {
    size_t k = end - done < SORT_CHUNK ? (size_t)(end - done) : SORT_CHUNK;
    rc = river_gensort_fill(done, k, RIVER_GENSORT_ASCII, 0, buf);
    if (rc == RIVER_SUCCESS
        && pwrite(fd, buf, k * 100, (off_t)(done * 100)) != (ssize_t)(k * 100))
      rc = RIVER_EIO;
    done += k;
  }
  if (fd >= 0)
    close(fd);
  free(buf);
  MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rc != RIVER_SUCCESS && x->b->rank == 0)
    river_log(RIVER_LOG_ERROR, "sort real: cannot write %s", x->in);
  return rc;
}

/* fsync path and its directory (GNU sort's output made as durable as
 * River's --sync makes its own). */
static int fsync_path(const char *path)
{
  char dir[1100], *slash;
  int fd = open(path, O_RDONLY), ok = fd >= 0 && fsync(fd) == 0;

  if (fd >= 0)
    close(fd);
  snprintf(dir, sizeof dir, "%s", path);
  slash = strrchr(dir, '/');
  if (slash != NULL)
    *slash = '\0';
  fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY);
  ok = ok && fd >= 0 && fsync(fd) == 0;
  if (fd >= 0)
    close(fd);
  return ok ? RIVER_SUCCESS : RIVER_EIO;
}

/* Rank 0: `LC_ALL=C sort --parallel=2 -S 50% -T DIR IN -o REF`, then
 * (sync) fsync REF; *seconds its time. The other ranks wait. */
static int run_gnu(struct real *x, int durable, double *seconds)
{
  char tdir[1100], *slash;
  char *argv[] = {"sort", "--parallel=2", "-S", "50%", "-T", tdir, x->in,
                  "-o", x->ref, NULL};
  char *envp[] = {"LC_ALL=C", "PATH=/usr/bin:/bin", NULL};
  int rc = RIVER_SUCCESS, status = 0;
  double t0;
  pid_t pid;

  bench_world_wait();
  if (x->b->rank == 0) {
    snprintf(tdir, sizeof tdir, "%s", x->in);
    slash = strrchr(tdir, '/');
    if (slash != NULL)
      *slash = '\0';
    sync();   /* no writeback of an earlier run's output is charged */
    t0 = river_wtime();
    if (posix_spawnp(&pid, "sort", NULL, NULL, argv, envp) != 0
        || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)
        || WEXITSTATUS(status) != 0) {
      river_log(RIVER_LOG_ERROR, "sort real: GNU sort failed");
      rc = RIVER_EIO;
    }
    if (rc == RIVER_SUCCESS && durable)
      rc = fsync_path(x->ref);
    *seconds = river_wtime() - t0;
  }
  bench_world_wait();
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return rc;
}

/* River's sort of file:IN into file:OUT on every rank (--static: the
 * baseline; sync: sync=true); *seconds its time. */
static int run_river(struct real *x, int is_static, int durable,
                     double *seconds)
{
  char kv[8][1200];
  const char *params[8];
  int n = 0, i, rc;

  snprintf(kv[n++], sizeof kv[0], "in=file:%s", x->in);
  snprintf(kv[n++], sizeof kv[0], "out=file:%s", x->out);
  snprintf(kv[n++], sizeof kv[0], "sync=%s", durable ? "true" : "false");
  for (i = 0; is_static && i < APP_SORT_NSTATIC; i++)   /* the baseline */
    snprintf(kv[n++], sizeof kv[0], "%s", app_sort_static[i]);
  for (i = 0; i < n; i++)
    params[i] = kv[i];
  if (x->b->rank == 0)
    sync();
  rc = bench_time_flow(MPI_COMM_WORLD, x->spec, params, n, seconds);
  MPI_Bcast(seconds, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return rc;
}

/* River's two-pass sort of file:IN into file:OUT, with a quarter of
 * IN's bytes as each rank's memory (river sort --memory): the runs into
 * a collection under the root, merged into OUT, removed. */
static int run_two_pass(struct real *x, int durable, double *seconds)
{
  uint64_t mem = sort_opt.records * 100 / 4, block;
  char kv[10][1200];
  const char *params[10];
  double t1 = 0, t2 = 0, nruns = 0;
  int n = 0, i, rc;

  block = app_sort_run_block(100, 10, sort_opt.records, x->b->size, mem,
                             &nruns);
  if (block == 0)
    return RIVER_EINVAL;
  snprintf(kv[n++], sizeof kv[0], "in=file:%s", x->in);
  snprintf(kv[n++], sizeof kv[0], "out=runs");
  snprintf(kv[n++], sizeof kv[0], "root=%s", x->root);
  snprintf(kv[n++], sizeof kv[0], "memory=%llu", (unsigned long long)mem);
  snprintf(kv[n++], sizeof kv[0], "spill=true");
  snprintf(kv[n++], sizeof kv[0], "runs=1");
  snprintf(kv[n++], sizeof kv[0], "block_size=%llu",
           (unsigned long long)block);
  for (i = 0; i < n; i++)
    params[i] = kv[i];
  if (x->b->rank == 0)
    sync();
  rc = bench_time_flow(MPI_COMM_WORLD, x->spec, params, n, &t1);
  n = 0;
  snprintf(kv[n++], sizeof kv[0], "in=runs");
  snprintf(kv[n++], sizeof kv[0], "out=file:%s", x->out);
  snprintf(kv[n++], sizeof kv[0], "root=%s", x->root);
  snprintf(kv[n++], sizeof kv[0], "memory=%llu", (unsigned long long)mem);
  snprintf(kv[n++], sizeof kv[0], "sync=%s", durable ? "true" : "false");
  for (i = 0; i < n; i++)
    params[i] = kv[i];
  if (rc == RIVER_SUCCESS)
    rc = bench_time_flow(MPI_COMM_WORLD, x->merge, params, n, &t2);
  *seconds = t1 + t2;
  bench_drop(MPI_COMM_WORLD, x->root, "runs");
  MPI_Bcast(seconds, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return rc;
}

/* Rank 0: are files a and b the same bytes? (cmp) */
static int same_bytes(const char *a, const char *b)
{
  FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
  static char ba[1 << 20], bb[1 << 20];
  size_t na, nb;
  int same = fa != NULL && fb != NULL;

  while (same) {
    na = fread(ba, 1, sizeof ba, fa);
    nb = fread(bb, 1, sizeof bb, fb);
    same = na == nb && memcmp(ba, bb, na) == 0;
    if (na == 0)
      break;
  }
  if (fa != NULL)
    fclose(fa);
  if (fb != NULL)
    fclose(fb);
  return same;
}


/* Each repeat: GNU sort, River, static; then the same with --sync (GNU
 * sort's output fsynced). River's and static's outputs must be GNU
 * sort's bytes. Rows: measured MB/s, ideal_MBps GNU sort's rate in the
 * same repeat and durability, ratio the speed-up over it. */
static int exp_real(struct bench *b)
{
  static const char *names[2][4] = {{"gnu-sort", "river", "static",
                                     "river-2pass"},
                                    {"gnu-sort-sync", "river-sync",
                                     "static-sync", "river-2pass-sync"}};
  char spec[4096] = "", merge[4096] = "";
  double secs[2][4][64], up[2][3][64];
  struct real x;
  int rep, sync, pol, nrep = b->repeats < 64 ? b->repeats : 64, rc;

  memset(&x, 0, sizeof x);
  x.b = b;
  x.spec = spec;
  x.merge = merge;
  rc = app_find_flow("river-bench sort", "sort.yaml", spec, sizeof spec);
  if (rc == RIVER_SUCCESS)
    rc = app_find_flow("river-bench sort", "sort_merge.yaml", merge,
                       sizeof merge);
  MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rc != RIVER_SUCCESS)
    return rc;
  if ((rc = bench_make_root(x.root, sizeof x.root, "real")) != RIVER_SUCCESS)
    return rc;
  snprintf(x.in, sizeof x.in, "%s/in", x.root);
  snprintf(x.out, sizeof x.out, "%s/river.out", x.root);
  snprintf(x.ref, sizeof x.ref, "%s/gnu.out", x.root);
  rc = make_file(&x);
  for (rep = 0; rc == RIVER_SUCCESS && rep < nrep; rep++)
    for (sync = 0; rc == RIVER_SUCCESS && sync < 2; sync++)
      for (pol = 0; rc == RIVER_SUCCESS && pol < 4; pol++) {
        struct bench_result res;
        double t = 0;
        int frc, ok = 1;

        memset(&res, 0, sizeof res);
        frc = pol == 0 ? run_gnu(&x, sync, &t)
              : pol == 3 ? run_two_pass(&x, sync, &t)
                         : run_river(&x, pol == 2, sync, &t);
        if (pol > 0 && b->rank == 0)
          ok = frc == RIVER_SUCCESS && same_bytes(x.out, x.ref);
        MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (b->rank == 0 && pol > 0)
          unlink(x.out);
        secs[sync][pol][rep] = t;
        res.seconds = t;
        res.records = sort_opt.records;
        res.measured = t > 0 ? (double)sort_opt.records * 100 / t : 0;
        res.ideal = secs[sync][0][rep] > 0
                    ? (double)sort_opt.records * 100 / secs[sync][0][rep]
                    : 0;
        res.ok = ok;
        if (pol > 0)
          up[sync][pol - 1][rep] = t > 0 ? secs[sync][0][rep] / t : 0;
        frc = bench_end_run(b, &res, frc);
        if (frc != RIVER_SUCCESS)
          rc = frc;
        bench_row(b, "real", names[sync][pol], b->size, b->size, 0, 1.0, &res);
      }
  if (b->rank == 0 && rc == RIVER_SUCCESS)
    for (sync = 0; sync < 2; sync++) {
      double g = bench_median(secs[sync][0], nrep);
      double r = bench_median(secs[sync][1], nrep);
      double st = bench_median(secs[sync][2], nrep);
      double tp = bench_median(secs[sync][3], nrep);
      double ur = bench_median(up[sync][0], nrep);
      double us = bench_median(up[sync][1], nrep);
      double ut = bench_median(up[sync][2], nrep);
      char size[APP_SIZE_TEXT];
      printf("real%s n=%d %s, median of %d: GNU sort %.2f s, River "
             "%.2f s (%.2fx, %.2f..%.2f), static %.2f s (%.2fx), two-pass "
             "%.2f s (%.2fx); target 4x\n", sync ? " --sync" : "", b->size,
             app_size(sort_opt.records * 100, size), nrep, g, r, ur,
             up[sync][0][0], up[sync][0][nrep - 1], st, us, tp, ut);
      fflush(stdout);
    }
  bench_world_wait();
  if (b->rank == 0)
    bench_rm_tree(x.root);
  return rc;
}

/* ---------------------------------------------------------- the suite */

static const struct bench_experiment experiments[] = {
  {"scaling", exp_scaling},
  {"partitioners", exp_partitioners},
  {"writers", exp_writers},
  {"real", exp_real},
};

static const struct bench_opt opts[] = {
  {"cpu-rate", "MBPS", "(2 x rate): each partitioner, MB/s",
   bench_opt_nonnegative, &sort_opt.cpu_rate_mbps, 0, 0},
  {"block-size", "BYTES", "(256Ki, >= 100): the input's blocks",
   bench_opt_size, &sort_opt.block_size, 100, SIZE_MAX},
  {"records", "N", "(10M, 1..1Ti): real's gensort input",
   bench_opt_u64, &sort_opt.records, 1, (uint64_t)1 << 40},
};

const struct bench_suite bench_sort_suite = {
  .name = "sort",
  .experiments = experiments,
  .nexperiments = sizeof experiments / sizeof experiments[0],
  .opts = opts,
  .nopts = sizeof opts / sizeof opts[0],
  .notes = "    (--rate: each disk; --seconds: the ideal run;\n"
           "     no --perturb: the experiments set their own)\n",
};
