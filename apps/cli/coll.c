/*
 * coll.c - the river command's collection options and the commands that
 * move data: gen, copy-in, copy-out (ls, info, fsck and rm are in
 * coll_info.c). Which records each rank writes and the order of records
 * read back come from the library (river_pcoll_split, river_pcoll_order).
 *
 * Every subcommand runs on all ranks of the job. Options are parsed the
 * same way on every rank (so a bad option fails everywhere alike); work
 * that may fail on one rank only ends in cli_agree(), so every rank
 * returns the same code and the job exits non-zero on every rank.
 */
#include "coll.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct option long_opts[] = {
  {"root", required_argument, NULL, OPT_ROOT},
  {"disks", required_argument, NULL, OPT_DISKS},
  {"direct-io", no_argument, NULL, OPT_DIRECT},
  {"records", required_argument, NULL, OPT_RECORDS},
  {"ascii", no_argument, NULL, OPT_ASCII},
  {"skew", no_argument, NULL, OPT_SKEW},
  {"seed", required_argument, NULL, OPT_SEED},
  {"mirror", required_argument, NULL, OPT_MIRROR},
  {"layout", required_argument, NULL, OPT_LAYOUT},
  {"block-size", required_argument, NULL, OPT_BLOCK},
  {"schema", required_argument, NULL, OPT_SCHEMA},
  {"output", required_argument, NULL, OPT_OUT},
  {"read-policy", required_argument, NULL, OPT_READ},
  {NULL, 0, NULL, 0}
};

static int set_opt(struct args *a, int opt, const char *val)
{
  uint64_t v = 0;
  int rc = RIVER_SUCCESS;

  switch (opt) {
  case OPT_ROOT: a->opts.root = val; break;
  case OPT_DISKS: a->opts.disks = val; break;
  case OPT_DIRECT: a->opts.direct_io = 1; break;
  case OPT_RECORDS:
    rc = cli_parse_u64("--records", val, 0, UINT64_MAX / 128, 1, &v);
    a->records = v;
    a->have_records = 1;
    break;
  case OPT_ASCII: a->gen_flags |= RIVER_GENSORT_ASCII; break;
  case OPT_SKEW: a->gen_flags |= RIVER_GENSORT_SKEW; break;
  case OPT_SEED: rc = cli_parse_u64("--seed", val, 0, UINT64_MAX, 0,
                                          &a->seed); break;
  case OPT_MIRROR:
    rc = cli_parse_u64("--mirror", val, 1, 64, 0, &v);
    a->opts.replication = (int)v;
    break;
  case OPT_BLOCK:
    rc = cli_parse_u64("--block-size", val, RIVER_COLL_ALIGN, 1u << 30,
                             1, &v);
    if (rc == RIVER_SUCCESS && v % RIVER_COLL_ALIGN != 0) {
      river_log(RIVER_LOG_ERROR, "--block-size %s: must be a multiple of %d",
                val, RIVER_COLL_ALIGN);
      rc = RIVER_EINVAL;
    }
    a->opts.block_size = (size_t)v;
    break;
  case OPT_LAYOUT:
    if (strcmp(val, "partitioned") == 0)
      a->opts.layout = RIVER_LAYOUT_PARTITIONED;
    else if (strcmp(val, "interleaved") == 0)
      a->opts.layout = RIVER_LAYOUT_INTERLEAVED;
    else {
      river_log(RIVER_LOG_ERROR, "--layout %s: expected partitioned or "
                "interleaved", val);
      rc = RIVER_EINVAL;
    }
    break;
  case OPT_SCHEMA: a->schema = val; break;
  case OPT_OUT: a->out = val; break;
  case OPT_READ:
    if (strcmp(val, "gd") == 0)
      a->read_policy = RIVER_GD_BALANCED;
    else if (strcmp(val, "mirror-nogd") == 0)
      a->read_policy = RIVER_GD_MIRROR_NOGD;
    else if (strcmp(val, "nomirror") == 0)
      a->read_policy = RIVER_GD_NOMIRROR;
    else {
      river_log(RIVER_LOG_ERROR, "--read-policy %s: expected gd, mirror-nogd "
                "or nomirror", val);
      rc = RIVER_EINVAL;
    }
    break;
  default: rc = RIVER_EINVAL;
  }
  return rc;
}

int cli_coll_args(int argc, char **argv, unsigned allowed, int npos,
                        const char *posnames, struct args *a)
{
  river_pcoll_opts defaults = RIVER_PCOLL_OPTS_INIT;
  int opt, rc;

  memset(a, 0, sizeof *a);
  a->cmd = argv[0];
  a->opts = defaults;
  optind = 1;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, "o:", long_opts, NULL)) != -1) {
    if (opt == 'o')
      opt = OPT_OUT;
    if (opt == '?' || opt == ':' || !(allowed & (unsigned)opt)) {
      river_log(RIVER_LOG_ERROR, "%s: option '%s' not accepted or missing "
                "its value (see river %s --help)", a->cmd, argv[optind - 1],
                a->cmd);
      return RIVER_EINVAL;
    }
    rc = set_opt(a, opt, optarg);
    if (rc != RIVER_SUCCESS)
      return rc;
  }
  for (; optind < argc; optind++) {
    if (a->npos == npos) {
      river_log(RIVER_LOG_ERROR, "%s: unexpected argument '%s'", a->cmd,
                argv[optind]);
      return RIVER_EINVAL;
    }
    a->pos[a->npos++] = argv[optind];
  }
  if (a->npos < npos) {
    river_log(RIVER_LOG_ERROR, "%s: missing %s (see river %s --help)", a->cmd,
              posnames, a->cmd);
    return RIVER_EINVAL;
  }
  if ((allowed & OPT_RECORDS) && !a->have_records) {
    river_log(RIVER_LOG_ERROR, "%s: --records COUNT is required", a->cmd);
    return RIVER_EINVAL;
  }
  return RIVER_SUCCESS;
}

/* Commit pc if every rank wrote its part, else abandon it (collective);
 * returns the agreed outcome. */
static int finish_write(river_pcoll *pc, int rc)
{
  rc = cli_agree(rc);
  if (rc != RIVER_SUCCESS) {
    river_pcoll_close(pc);
    return rc;
  }
  return river_pcoll_commit(pc);
}

/* ------------------------------------------------------------------ gen */

/* Rows first, first + stride, ... (n of them) of a's generator into buf. */
static int gen_rows(const struct args *a, uint64_t first, uint64_t stride,
                    size_t n, unsigned char *buf)
{
  size_t i;
  int rc = RIVER_SUCCESS;

  if (stride == 1)
    return river_gensort_fill(first, n, a->gen_flags, a->seed, buf);
  for (i = 0; i < n && rc == RIVER_SUCCESS; i++)
    rc = river_gensort_fill(first + i * stride, 1, a->gen_flags, a->seed,
                            buf + i * RIVER_GENSORT_RECORD_SIZE);
  return rc;
}

int cmd_gen(int argc, char **argv)
{
  struct args a;
  river_schema *schema = NULL;
  river_pcoll *pc = NULL;
  unsigned char *buf = NULL;
  uint64_t first = 0, stride = 1, count = 0, done;
  size_t chunk = 8192, n;
  int rank = cli_rank(), size = cli_size(), rc;

  rc = cli_coll_args(argc, argv, OPT_COMMON | OPT_RECORDS | OPT_ASCII | OPT_SKEW
                  | OPT_SEED | OPT_MIRROR | OPT_LAYOUT | OPT_BLOCK, 1, "COLL",
                  &a);
  if (rc != RIVER_SUCCESS)
    return rc;
  rc = river_schema_create_default(&schema);
  buf = malloc(chunk * RIVER_GENSORT_RECORD_SIZE);
  rc = cli_agree(rc == RIVER_SUCCESS && buf == NULL ? RIVER_ENOMEM : rc);
  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_create(MPI_COMM_WORLD, a.pos[0], schema, &a.opts, &pc);
  if (rc != RIVER_SUCCESS)
    goto out;
  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_split(a.opts.layout, a.records, size, rank, &first,
                           &stride, &count);
  for (done = 0; done < count && rc == RIVER_SUCCESS; done += n) {
    n = count - done < chunk ? (size_t)(count - done) : chunk;
    rc = gen_rows(&a, first + done * stride, stride, n, buf);
    if (rc == RIVER_SUCCESS)
      rc = river_pcoll_write(pc, buf, n);
  }
  rc = finish_write(pc, rc);
  if (rc == RIVER_SUCCESS && rank == 0)
    printf("gen: %s: %llu records on %d partitions%s\n", a.pos[0],
           (unsigned long long)a.records, size,
           a.opts.replication > 1 ? " (mirrored)" : "");
out:
  free(buf);
  river_schema_destroy(schema);
  return rc;
}

/* -------------------------------------------------------------- copy-in */

/* Read count records starting at record `first` of fd into pc, in chunks;
 * stride > 1 takes every stride-th record (interleaved layouts). */
static int copy_in_range(int fd, const char *file, size_t rs, uint64_t first,
                         uint64_t count, uint64_t stride, river_pcoll *pc)
{
  size_t chunk = ((size_t)8 << 20) / rs + 1, n, i;
  unsigned char *buf = malloc(chunk * rs);
  uint64_t done = 0, span;
  ssize_t got;
  int rc = buf ? RIVER_SUCCESS : RIVER_ENOMEM;

  while (rc == RIVER_SUCCESS && done < count) {
    /* In a span of chunk records starting at our next record, ours are
     * those at multiples of stride. */
    span = count - done < chunk / stride ? count - done : chunk / stride;
    if (span == 0)
      span = 1;
    n = (size_t)((span - 1) * stride + 1);
    got = pread(fd, buf, n * rs, (off_t)((first + done * stride) * rs));
    if (got != (ssize_t)(n * rs)) {
      river_log(RIVER_LOG_ERROR, "%s: read failed at record %llu: %s", file,
                (unsigned long long)(first + done * stride),
                got < 0 ? strerror(errno) : "file changed while reading");
      rc = RIVER_EIO;
      break;
    }
    for (i = 1; i < span; i++)
      memmove(buf + i * rs, buf + i * stride * rs, rs);
    rc = river_pcoll_write(pc, buf, (size_t)span);
    done += span;
  }
  free(buf);
  return rc;
}

int cmd_copy_in(int argc, char **argv)
{
  struct args a;
  river_schema *schema = NULL;
  river_pcoll *pc = NULL;
  struct stat st;
  uint64_t nrec, first = 0, stride = 1, count = 0;
  size_t rs = 0;
  int fd = -1, rank = cli_rank(), size = cli_size(), rc;

  rc = cli_coll_args(argc, argv, OPT_COMMON | OPT_SCHEMA | OPT_MIRROR
                  | OPT_LAYOUT | OPT_BLOCK, 2, "FILE and COLL", &a);
  if (rc != RIVER_SUCCESS)
    return rc;
  rc = a.schema ? river_schema_parse(a.schema, &schema)
                : river_schema_create_default(&schema);
  if (rc == RIVER_SUCCESS)
    river_schema_record_size(schema, &rs);
  if (rc == RIVER_SUCCESS) {
    fd = open(a.pos[0], O_RDONLY);
    if (fd < 0 || fstat(fd, &st) != 0) {
      river_log(RIVER_LOG_ERROR, "copy-in: cannot read %s: %s", a.pos[0],
                strerror(errno));
      rc = errno == ENOENT ? RIVER_ENOTFOUND : RIVER_EIO;
    } else if ((uint64_t)st.st_size % rs != 0) {
      river_log(RIVER_LOG_ERROR, "copy-in: %s: %lld bytes is not a whole "
                "number of %zu-byte records (schema %s)", a.pos[0],
                (long long)st.st_size, rs, a.schema ? a.schema
                : RIVER_SCHEMA_DEFAULT);
      rc = RIVER_EFORMAT;
    }
  }
  rc = cli_agree(rc);
  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_create(MPI_COMM_WORLD, a.pos[1], schema, &a.opts, &pc);
  if (rc != RIVER_SUCCESS)
    goto out;
  nrec = (uint64_t)st.st_size / rs;
  rc = river_pcoll_split(a.opts.layout, nrec, size, rank, &first, &stride,
                         &count);
  if (rc == RIVER_SUCCESS)
    rc = copy_in_range(fd, a.pos[0], rs, first, count, stride, pc);
  rc = finish_write(pc, rc);
  if (rc == RIVER_SUCCESS && rank == 0)
    printf("copy-in: %s -> %s: %llu records of %zu bytes on %d partitions\n",
           a.pos[0], a.pos[1], (unsigned long long)nrec, rs, size);
out:
  if (fd >= 0)
    close(fd);
  river_schema_destroy(schema);
  return rc;
}

/* ------------------------------------------------------------- copy-out */

/*
 * copy-out reads the collection with graduated declustering (river/gd.h):
 * rank 0 is the client of every partition, in stream mode, so blocks
 * reach it in write order, which river_pcoll_order turns into record
 * order; every rank serves the disks d with d mod size == rank, reading
 * from all mirrors at once; --read-policy selects the baselines.
 */
struct copy_out {
  river_pcoll *pc;
  river_pcoll_info info;
  river_pcoll_order *order; /* rank 0 */
  int rank, size;
  int fd;          /* rank 0: output */
  int rc;          /* first failure seen by this rank */
};

static int write_all(int fd, const unsigned char *p, size_t len)
{
  ssize_t n;

  while (len > 0) {
    n = write(fd, p, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return RIVER_EIO;
    p += n;
    len -= (size_t)n;
  }
  return RIVER_SUCCESS;
}

static void emit(struct copy_out *co, const unsigned char *recs, size_t len)
{
  if (co->rc == RIVER_SUCCESS && write_all(co->fd, recs, len) != 0) {
    river_log(RIVER_LOG_ERROR, "copy-out: write failed: %s", strerror(errno));
    co->rc = RIVER_EIO;
  }
}

/* Rank 0: write out what the reorderer has ready. */
static void emit_ready(struct copy_out *co, int rc, const void *ready,
                       size_t n)
{
  if (rc != RIVER_SUCCESS && co->rc == RIVER_SUCCESS)
    co->rc = rc;
  if (rc == RIVER_SUCCESS && n > 0)
    emit(co, ready, n * co->info.record_size);
}

/* Every rank: serve its disks; rank 0 also writes what arrives. */
static int copy_out_run(struct copy_out *co, river_gd_policy policy)
{
  river_gd_opts o = RIVER_GD_OPTS_INIT;
  river_gd *gd = NULL;
  const void *recs, *ready;
  size_t n, nready;
  uint64_t b;
  int *clients, p, rc, orc;

  clients = calloc((size_t)co->info.npartitions, sizeof *clients);
  if (clients == NULL)
    return cli_agree(RIVER_ENOMEM);
  o.mode = RIVER_GD_STREAM;
  o.policy = policy;
  o.client_ranks = clients;  /* all 0 */
  rc = river_gd_open(MPI_COMM_WORLD, co->pc, &o, &gd);
  free(clients);
  if (rc != RIVER_SUCCESS)
    return rc;
  while ((rc = river_gd_next(gd, &recs, &n, &p, &b)) == RIVER_SUCCESS) {
    orc = river_pcoll_order_add(co->order, p, b, recs, n, &ready, &nready);
    emit_ready(co, orc, ready, nready);
    if (co->rc != RIVER_SUCCESS)
      break;   /* close lets the other ranks finish */
  }
  if (rc == RIVER_EOS && co->order != NULL) {   /* rank 0 */
    orc = river_pcoll_order_flush(co->order, &ready, &nready);
    emit_ready(co, orc, ready, nready);
  }
  if (rc != RIVER_EOS && rc != RIVER_SUCCESS && co->rc == RIVER_SUCCESS)
    co->rc = rc;
  rc = river_gd_close(gd);
  return cli_agree(rc != RIVER_SUCCESS ? rc : co->rc);
}

/* Rank 0: open the output (a temporary name beside FILE, or stdout). */
static int copy_out_open(struct copy_out *co, const char *out, char *tmp,
                         size_t tmpsize)
{
  if (out == NULL || strcmp(out, "-") == 0) {
    co->fd = STDOUT_FILENO;
    return RIVER_SUCCESS;
  }
  snprintf(tmp, tmpsize, "%s.river-tmp.%d", out, (int)getpid());
  co->fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (co->fd < 0) {
    river_log(RIVER_LOG_ERROR, "copy-out: cannot create %s: %s", tmp,
              strerror(errno));
    return RIVER_EIO;
  }
  return RIVER_SUCCESS;
}

/* Rank 0: make the output whole (fsync + rename) or remove it. */
static int copy_out_close(struct copy_out *co, const char *out,
                          const char *tmp, int rc)
{
  if (co->fd == STDOUT_FILENO || co->fd < 0)
    return rc;
  if (rc == RIVER_SUCCESS && fsync(co->fd) != 0)
    rc = RIVER_EIO;
  close(co->fd);
  if (rc == RIVER_SUCCESS && rename(tmp, out) != 0) {
    river_log(RIVER_LOG_ERROR, "copy-out: cannot rename %s to %s: %s", tmp,
              out, strerror(errno));
    rc = RIVER_EIO;
  }
  if (rc != RIVER_SUCCESS)
    unlink(tmp);
  return rc;
}

int cmd_copy_out(int argc, char **argv)
{
  struct args a;
  struct copy_out co = {0};
  char tmp[4200] = "";
  int rc;

  rc = cli_coll_args(argc, argv, OPT_COMMON | OPT_OUT | OPT_READ, 1, "COLL",
                  &a);
  if (rc != RIVER_SUCCESS)
    return rc;
  co.rank = cli_rank();
  co.size = cli_size();
  co.fd = -1;
  rc = river_pcoll_open(MPI_COMM_WORLD, a.pos[0], &a.opts, &co.pc);
  if (rc != RIVER_SUCCESS)
    return rc;
  river_pcoll_info_get(co.pc, &co.info);
  if (co.rank == 0)
    rc = river_pcoll_order_create(co.pc, &co.order);
  if (rc == RIVER_SUCCESS && co.rank == 0)
    rc = copy_out_open(&co, a.out, tmp, sizeof tmp);
  rc = cli_agree(rc);
  if (rc == RIVER_SUCCESS)
    rc = copy_out_run(&co, a.read_policy);
  if (co.rank == 0)
    rc = cli_agree(copy_out_close(&co, a.out, tmp, rc));
  else
    rc = cli_agree(rc);
  river_pcoll_order_destroy(co.order);
  river_pcoll_close(co.pc);
  return rc;
}
