/*
 * coll.c - the river command's collection subcommands: gen,
 * copy-in, copy-out, ls, info, fsck, rm.
 *
 * Every subcommand runs on all ranks of the job. Options are parsed the
 * same way on every rank (so a bad option fails everywhere alike); work
 * that may fail on one rank only ends in river_cli_agree(), so every rank
 * returns the same code and the job exits non-zero on every rank.
 */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Options, by bit, so each subcommand says which it accepts. */
enum {
  OPT_ROOT = 1 << 0, OPT_DISKS = 1 << 1, OPT_DIRECT = 1 << 2,
  OPT_RECORDS = 1 << 3, OPT_ASCII = 1 << 4, OPT_SKEW = 1 << 5,
  OPT_SEED = 1 << 6, OPT_MIRROR = 1 << 7, OPT_LAYOUT = 1 << 8,
  OPT_BLOCK = 1 << 9, OPT_SCHEMA = 1 << 10, OPT_OUT = 1 << 11,
  OPT_READ = 1 << 12
};
#define OPT_COMMON (OPT_ROOT | OPT_DISKS | OPT_DIRECT)

struct args {
  const char *cmd;
  river_pcoll_opts opts;
  const char *pos[2];
  int npos;
  uint64_t records;
  int have_records;
  unsigned gen_flags;
  uint64_t seed;
  const char *schema;
  const char *out;
  river_gd_policy read_policy;
};

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
    rc = river_cli_parse_u64("--records", val, 0, UINT64_MAX / 128, 1, &v);
    a->records = v;
    a->have_records = 1;
    break;
  case OPT_ASCII: a->gen_flags |= RIVER_GENSORT_ASCII; break;
  case OPT_SKEW: a->gen_flags |= RIVER_GENSORT_SKEW; break;
  case OPT_SEED: rc = river_cli_parse_u64("--seed", val, 0, UINT64_MAX, 0,
                                          &a->seed); break;
  case OPT_MIRROR:
    rc = river_cli_parse_u64("--mirror", val, 1, 64, 0, &v);
    a->opts.replication = (int)v;
    break;
  case OPT_BLOCK:
    rc = river_cli_parse_u64("--block-size", val, RIVER_COLL_ALIGN, 1u << 30,
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

/* Parse argv for a subcommand accepting `allowed` options and exactly
 * npos positional arguments (named in `posnames` for messages). */
static int parse_args(int argc, char **argv, unsigned allowed, int npos,
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

/* The records [*first, *first + *count) of n that rank r of size ranks
 * owns in a partitioned layout: an even split. */
static void my_range(uint64_t n, int r, int size, uint64_t *first,
                     uint64_t *count)
{
  uint64_t lo = n / (uint64_t)size * (uint64_t)r
                + (n % (uint64_t)size) * (uint64_t)r / (uint64_t)size;
  uint64_t hi = n / (uint64_t)size * (uint64_t)(r + 1)
                + (n % (uint64_t)size) * (uint64_t)(r + 1) / (uint64_t)size;

  *first = lo;
  *count = hi - lo;
}

/* Commit pc if every rank wrote its part, else abandon it (collective);
 * returns the agreed outcome. */
static int finish_write(river_pcoll *pc, int rc)
{
  rc = river_cli_agree(rc);
  if (rc != RIVER_SUCCESS) {
    river_pcoll_close(pc);
    return rc;
  }
  return river_pcoll_commit(pc);
}

/* ------------------------------------------------------------------ gen */

int river_cmd_gen(int argc, char **argv)
{
  struct args a;
  river_schema *schema = NULL;
  river_pcoll *pc = NULL;
  unsigned char *buf = NULL;
  uint64_t first, count, done, row;
  size_t chunk = 8192, n;
  int rank = river_cli_rank(), size = river_cli_size(), rc;

  rc = parse_args(argc, argv, OPT_COMMON | OPT_RECORDS | OPT_ASCII | OPT_SKEW
                  | OPT_SEED | OPT_MIRROR | OPT_LAYOUT | OPT_BLOCK, 1, "COLL",
                  &a);
  if (rc != RIVER_SUCCESS)
    return rc;
  rc = river_schema_create_default(&schema);
  buf = malloc(chunk * RIVER_GENSORT_RECORD_SIZE);
  rc = river_cli_agree(rc == RIVER_SUCCESS && buf == NULL ? RIVER_ENOMEM : rc);
  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_create(MPI_COMM_WORLD, a.pos[0], schema, &a.opts, &pc);
  if (rc != RIVER_SUCCESS)
    goto out;
  if (a.opts.layout == RIVER_LAYOUT_INTERLEAVED) {
    /* Rows rank, rank+size, ...: generate one at a time into the chunk. */
    done = 0;
    for (row = (uint64_t)rank; row < a.records && rc == RIVER_SUCCESS;) {
      for (n = 0; n < chunk && row < a.records; n++, row += (uint64_t)size)
        river_gensort_fill(row, 1, a.gen_flags, a.seed,
                           buf + n * RIVER_GENSORT_RECORD_SIZE);
      rc = river_pcoll_write(pc, buf, n);
    }
  } else {
    my_range(a.records, rank, size, &first, &count);
    for (done = 0; done < count && rc == RIVER_SUCCESS; done += n) {
      n = count - done < chunk ? (size_t)(count - done) : chunk;
      rc = river_gensort_fill(first + done, n, a.gen_flags, a.seed, buf);
      if (rc == RIVER_SUCCESS)
        rc = river_pcoll_write(pc, buf, n);
    }
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

int river_cmd_copy_in(int argc, char **argv)
{
  struct args a;
  river_schema *schema = NULL;
  river_pcoll *pc = NULL;
  struct stat st;
  uint64_t nrec, first, count;
  size_t rs = 0;
  int fd = -1, rank = river_cli_rank(), size = river_cli_size(), rc;

  rc = parse_args(argc, argv, OPT_COMMON | OPT_SCHEMA | OPT_MIRROR
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
  rc = river_cli_agree(rc);
  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_create(MPI_COMM_WORLD, a.pos[1], schema, &a.opts, &pc);
  if (rc != RIVER_SUCCESS)
    goto out;
  nrec = (uint64_t)st.st_size / rs;
  if (a.opts.layout == RIVER_LAYOUT_INTERLEAVED) {
    count = nrec > (uint64_t)rank
                ? (nrec - (uint64_t)rank + (uint64_t)size - 1) / (uint64_t)size
                : 0;
    rc = copy_in_range(fd, a.pos[0], rs, (uint64_t)rank, count,
                       (uint64_t)size, pc);
  } else {
    my_range(nrec, rank, size, &first, &count);
    rc = copy_in_range(fd, a.pos[0], rs, first, count, 1, pc);
  }
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
 * reach it in write order (partition by partition, or stripe by stripe
 * for an interleaved collection), and every rank serves the disks d with
 * d mod size == rank, reading from all mirrors at once; --read-policy
 * selects the baselines.
 */
struct copy_out {
  river_pcoll *pc;
  river_pcoll_info info;
  size_t rpb;
  int rank, size;
  int fd;          /* rank 0: output */
  int rc;          /* first failure seen by this rank */
  /* interleaved: the stripe being gathered */
  unsigned char *stripe, *line;
  size_t *stripe_n;
  uint64_t stripe_b;
  int stripe_have;
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

/* Interleaved layout: record k of every partition's block b, in
 * partition order, then record k + 1: the stripe gathered so far. */
static void emit_stripe(struct copy_out *co)
{
  size_t rs = co->info.record_size, k, o;
  int p;

  for (k = 0; k < co->rpb; k++) {
    for (o = 0, p = 0; p < co->info.npartitions; p++)
      if (k < co->stripe_n[p])
        memcpy(co->line + (o++) * rs,
               co->stripe + ((size_t)p * co->rpb + k) * rs, rs);
    if (o == 0)
      break;
    emit(co, co->line, o * rs);
  }
  memset(co->stripe_n, 0, (size_t)co->info.npartitions * sizeof *co->stripe_n);
  co->stripe_have = 0;
}

/* Rank 0: one block, in write order. */
static void copy_out_block(struct copy_out *co, const void *recs, size_t n,
                           int p, uint64_t b)
{
  size_t rs = co->info.record_size;

  if (co->info.layout != RIVER_LAYOUT_INTERLEAVED) {
    emit(co, recs, n * rs);
    return;
  }
  if (co->stripe_have && b != co->stripe_b)
    emit_stripe(co);
  co->stripe_b = b;
  co->stripe_have = 1;
  memcpy(co->stripe + (size_t)p * co->rpb * rs, recs, n * rs);
  co->stripe_n[p] = n;
}

/* Every rank: serve its disks; rank 0 also writes what arrives. */
static int copy_out_run(struct copy_out *co, river_gd_policy policy)
{
  river_gd_opts o = RIVER_GD_OPTS_INIT;
  river_gd *gd = NULL;
  const void *recs;
  size_t n;
  uint64_t b;
  int *clients, p, rc;

  clients = calloc((size_t)co->info.npartitions, sizeof *clients);
  if (clients == NULL)
    return river_cli_agree(RIVER_ENOMEM);
  o.mode = RIVER_GD_STREAM;
  o.policy = policy;
  o.client_ranks = clients;  /* all 0 */
  rc = river_gd_open(MPI_COMM_WORLD, co->pc, &o, &gd);
  free(clients);
  if (rc != RIVER_SUCCESS)
    return rc;
  while ((rc = river_gd_next(gd, &recs, &n, &p, &b)) == RIVER_SUCCESS) {
    copy_out_block(co, recs, n, p, b);
    if (co->rc != RIVER_SUCCESS)
      break;   /* close lets the other ranks finish */
  }
  if (rc == RIVER_EOS && co->stripe_have)
    emit_stripe(co);
  if (rc != RIVER_EOS && rc != RIVER_SUCCESS && co->rc == RIVER_SUCCESS)
    co->rc = rc;
  rc = river_gd_close(gd);
  return river_cli_agree(rc != RIVER_SUCCESS ? rc : co->rc);
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

int river_cmd_copy_out(int argc, char **argv)
{
  struct args a;
  struct copy_out co = {0};
  char tmp[4200] = "";
  int rc;

  rc = parse_args(argc, argv, OPT_COMMON | OPT_OUT | OPT_READ, 1, "COLL",
                  &a);
  if (rc != RIVER_SUCCESS)
    return rc;
  co.rank = river_cli_rank();
  co.size = river_cli_size();
  co.fd = -1;
  rc = river_pcoll_open(MPI_COMM_WORLD, a.pos[0], &a.opts, &co.pc);
  if (rc != RIVER_SUCCESS)
    return rc;
  river_pcoll_info_get(co.pc, &co.info);
  co.rpb = co.info.block_size / co.info.record_size;
  if (co.rank == 0 && co.info.layout == RIVER_LAYOUT_INTERLEAVED) {
    size_t np = (size_t)co.info.npartitions, rs = co.info.record_size;
    co.stripe = malloc(np * co.rpb * rs);
    co.line = malloc(np * rs);
    co.stripe_n = calloc(np, sizeof *co.stripe_n);
    if (co.stripe == NULL || co.line == NULL || co.stripe_n == NULL)
      rc = RIVER_ENOMEM;
  }
  if (rc == RIVER_SUCCESS && co.rank == 0)
    rc = copy_out_open(&co, a.out, tmp, sizeof tmp);
  rc = river_cli_agree(rc);
  if (rc == RIVER_SUCCESS)
    rc = copy_out_run(&co, a.read_policy);
  if (co.rank == 0)
    rc = river_cli_agree(copy_out_close(&co, a.out, tmp, rc));
  else
    rc = river_cli_agree(rc);
  free(co.stripe);
  free(co.line);
  free(co.stripe_n);
  river_pcoll_close(co.pc);
  return rc;
}

/* ------------------------------------------------------ ls, info, rm */

static const char *root_of(const struct args *a)
{
  const char *env = getenv("RIVER_ROOT");

  return a->opts.root ? a->opts.root
                      : env && *env ? env : RIVER_PCOLL_DEFAULT_ROOT;
}

static int print_ls(const struct args *a)
{
  const char *suffix = ".river.h5", *root = root_of(a);
  size_t sl = strlen(suffix), n;
  struct dirent *e;
  river_pcoll_info in;
  river_pcoll *pc;
  char name[RIVER_PCOLL_NAME_MAX + 1];
  int count = 0;
  DIR *d = opendir(root);

  if (d == NULL) {
    if (errno == ENOENT) {
      printf("no collections (no %s)\n", root);
      return RIVER_SUCCESS;
    }
    river_log(RIVER_LOG_ERROR, "ls: cannot read %s: %s", root,
              strerror(errno));
    return RIVER_EIO;
  }
  printf("%-24s %14s %14s %6s %6s %s\n", "NAME", "RECORDS", "BYTES",
         "PARTS", "COPIES", "LAYOUT");
  while ((e = readdir(d)) != NULL) {
    n = strlen(e->d_name);
    if (n <= sl || n - sl > RIVER_PCOLL_NAME_MAX || e->d_name[0] == '.'
        || strcmp(e->d_name + n - sl, suffix) != 0)
      continue;
    memcpy(name, e->d_name, n - sl);
    name[n - sl] = '\0';
    count++;
    if (river_pcoll_open(MPI_COMM_SELF, name, &a->opts, &pc)
        != RIVER_SUCCESS) {
      printf("%-24s (unreadable metadata: see river fsck %s)\n", name, name);
      continue;
    }
    river_pcoll_info_get(pc, &in);
    printf("%-24s %14llu %14llu %6d %6d %s\n", name,
           (unsigned long long)in.nrecords,
           (unsigned long long)(in.nrecords * in.record_size), in.npartitions,
           in.replication,
           in.layout == RIVER_LAYOUT_INTERLEAVED ? "interleaved"
                                                 : "partitioned");
    river_pcoll_close(pc);
  }
  closedir(d);
  printf("%d collection%s in %s\n", count, count == 1 ? "" : "s", root);
  return RIVER_SUCCESS;
}

int river_cmd_ls(int argc, char **argv)
{
  struct args a;
  int rc = parse_args(argc, argv, OPT_COMMON, 0, "", &a);

  if (rc == RIVER_SUCCESS && river_cli_rank() == 0)
    rc = print_ls(&a);
  return river_cli_agree(rc);
}

static void print_info(river_pcoll *pc)
{
  const river_schema *s;
  river_pcoll_info in;
  river_pcoll_part part;
  char text[4096], dir[4200];
  size_t len = sizeof text;
  int p, c;

  river_pcoll_info_get(pc, &in);
  river_pcoll_schema(pc, &s);
  river_schema_format(s, text, &len);
  len = sizeof dir;
  river_pcoll_disk_path(pc, 0, dir, &len);
  printf("collection  %s\n", in.name);
  printf("schema      %s (%zu-byte records)\n", text, in.record_size);
  printf("records     %llu (%llu bytes)\n", (unsigned long long)in.nrecords,
         (unsigned long long)(in.nrecords * in.record_size));
  printf("layout      %s%s, %d partitions on %d disks, %d cop%s each\n",
         in.layout == RIVER_LAYOUT_INTERLEAVED ? "interleaved" : "partitioned",
         in.ordered ? " (ordered by key)" : "", in.npartitions, in.ndisks,
         in.replication, in.replication == 1 ? "y" : "ies");
  printf("blocks      %zu bytes (%zu records)\n", in.block_size,
         in.block_size / in.record_size);
  printf("generation  %s\n", in.generation);
  printf("disk 0      %s\n", dir);
  printf("%9s %14s %14s %8s %8s  %-12s %s\n", "PARTITION", "RECORDS", "BYTES",
         "BLOCKS", "CHECKSUM", "DISKS", "FILE");
  for (p = 0; p < in.npartitions; p++) {
    char disks[64] = "";
    size_t o = 0;
    river_pcoll_partition(pc, p, &part);
    for (c = 0; c < in.replication && o < sizeof disks - 12; c++)
      o += (size_t)snprintf(disks + o, sizeof disks - o, "%s%d",
                            c ? "," : "", (part.first_disk + c) % in.ndisks);
    printf("%9d %14llu %14llu %8llu %08x  %-12s %s\n", p,
           (unsigned long long)part.nrecords, (unsigned long long)part.bytes,
           (unsigned long long)part.nblocks, (unsigned)part.checksum, disks,
           part.path);
  }
}

int river_cmd_info(int argc, char **argv)
{
  struct args a;
  river_pcoll *pc = NULL;
  int rc = parse_args(argc, argv, OPT_COMMON, 1, "COLL", &a);

  if (rc != RIVER_SUCCESS)
    return rc;
  rc = river_pcoll_open(MPI_COMM_WORLD, a.pos[0], &a.opts, &pc);
  if (rc == RIVER_SUCCESS && river_cli_rank() == 0)
    print_info(pc);
  river_pcoll_close(pc);
  return rc;
}

int river_cmd_rm(int argc, char **argv)
{
  struct args a;
  int rc = parse_args(argc, argv, OPT_COMMON, 1, "COLL", &a);

  if (rc == RIVER_SUCCESS && river_cli_rank() == 0) {
    rc = river_pcoll_remove(a.pos[0], &a.opts);
    if (rc == RIVER_SUCCESS)
      printf("rm: removed %s\n", a.pos[0]);
  }
  return river_cli_agree(rc);
}

/* ----------------------------------------------------------------- fsck */

int river_cmd_fsck(int argc, char **argv)
{
  struct args a;
  river_pcoll *pc = NULL;
  river_pcoll_info in;
  int rank = river_cli_rank(), size = river_cli_size(), p, c, rc;
  int counts[3] = {0, 0, 0}; /* copies checked, copies damaged, partitions
                                with no intact copy */

  rc = parse_args(argc, argv, OPT_COMMON, 1, "COLL", &a);
  if (rc != RIVER_SUCCESS)
    return rc;
  rc = river_pcoll_open(MPI_COMM_WORLD, a.pos[0], &a.opts, &pc);
  if (rc != RIVER_SUCCESS)
    return rc;
  river_pcoll_info_get(pc, &in);
  for (p = rank; p < in.npartitions; p += size) {
    int intact = 0;
    for (c = 0; c < in.replication; c++) {
      counts[0]++;
      if (river_pcoll_verify_copy(pc, p, c, NULL) == RIVER_SUCCESS)
        intact++;
      else
        counts[1]++;
    }
    if (intact == 0)
      counts[2]++;
  }
  MPI_Allreduce(MPI_IN_PLACE, counts, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (counts[1] == 0)
      printf("fsck %s: OK: %d partitions, %d copies, every block verified\n",
             in.name, in.npartitions, counts[0]);
    else
      printf("fsck %s: DAMAGED: %d of %d copies; %d partition%s with no "
             "intact copy%s\n", in.name, counts[1], counts[0], counts[2],
             counts[2] == 1 ? "" : "s",
             counts[2] ? " (data lost)" : " (every block still has a good "
             "mirror)");
  }
  river_pcoll_close(pc);
  return counts[1] ? RIVER_ECORRUPT : RIVER_SUCCESS;
}
