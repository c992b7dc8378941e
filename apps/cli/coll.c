/*
 * coll.c - the river command's collection options and the commands that
 * move data: gen, copy-in, copy-out (ls, info, fsck and rm are in
 * coll_info.c). Which records each rank writes and the order of records
 * read back come from the library (river_pcoll_split, river_pcoll_order).
 * copy-in stages an input that is not a shared regular file (a pipe, a
 * FIFO) under the root (struct copy_in); copy-out writes a FIFO or device
 * through and follows symbolic links (only those the kernel's
 * protected_symlinks rule would), renaming only over regular files
 * (struct out_path).
 *
 * Every subcommand runs on all ranks of the job. Options are parsed the
 * same way on every rank (so a bad option fails everywhere alike); work
 * that may fail on one rank only ends in cli_agree(), so every rank
 * returns the same code and the job exits non-zero on every rank.
 */
#include "coll.h"

#include "app.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A wrong command line, said by rank 0 alone: every rank parses the
 * same arguments and fails alike. */
#define say_usage(...) \
  do { \
    if (cli_rank() == 0) \
      river_log(RIVER_LOG_ERROR, __VA_ARGS__); \
  } while (0)

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
  {"force", no_argument, NULL, OPT_FORCE},
  {"remove", no_argument, NULL, OPT_REMOVE},
  {"input", required_argument, NULL, OPT_INPUT},
  {"memory", required_argument, NULL, OPT_MEMORY},
  {"static", no_argument, NULL, OPT_STATIC},
  {"disk-rate", required_argument, NULL, OPT_DISK_RATE},
  {"cpu-rate", required_argument, NULL, OPT_CPU_RATE},
  {"perturb", required_argument, NULL, OPT_PERTURB},
  {"sync", no_argument, NULL, OPT_SYNC},
  {"key", required_argument, NULL, OPT_KEY},
  {"replicate", no_argument, NULL, OPT_REPLICATE},
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
    rc = app_parse_u64("--records", val, 0, UINT64_MAX / 128, 1, &v);
    a->records = v;
    a->have_records = 1;
    break;
  case OPT_ASCII: a->gen_flags |= RIVER_GENSORT_ASCII; break;
  case OPT_SKEW: a->gen_flags |= RIVER_GENSORT_SKEW; break;
  case OPT_SEED: rc = app_parse_u64("--seed", val, 0, UINT64_MAX, 0,
                                          &a->seed); break;
  case OPT_MIRROR:
    rc = app_parse_u64("--mirror", val, 1, 64, 0, &v);
    a->opts.replication = (int)v;
    break;
  case OPT_BLOCK:
    rc = app_parse_u64("--block-size", val, RIVER_COLL_ALIGN, 1u << 30,
                             1, &v);
    if (rc == RIVER_SUCCESS && v % RIVER_COLL_ALIGN != 0) {
      say_usage("--block-size %s: must be a multiple of %d",
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
      say_usage("--layout %s: expected partitioned or "
                "interleaved", val);
      rc = RIVER_EINVAL;
    }
    break;
  case OPT_SCHEMA: a->schema = val; break;
  case OPT_OUT: a->out = val; break;
  case OPT_FORCE: a->force = 1; break;
  case OPT_REMOVE: a->remove = 1; break;
  case OPT_INPUT: a->input = val; break;
  case OPT_MEMORY: a->memory = val; break;
  case OPT_STATIC: a->is_static = 1; break;
  case OPT_DISK_RATE: a->disk_rate = val; break;
  case OPT_CPU_RATE: a->cpu_rate = val; break;
  case OPT_PERTURB: a->perturb = val; break;
  case OPT_SYNC: a->sync = 1; break;
  case OPT_KEY: a->key = val; break;
  case OPT_REPLICATE: a->replicate = 1; break;
  case OPT_READ:
    if (strcmp(val, "gd") == 0)
      a->read_policy = RIVER_GD_BALANCED;
    else if (strcmp(val, "mirror-nogd") == 0)
      a->read_policy = RIVER_GD_MIRROR_NOGD;
    else if (strcmp(val, "nomirror") == 0)
      a->read_policy = RIVER_GD_NOMIRROR;
    else {
      say_usage("--read-policy %s: expected gd, mirror-nogd "
                "or nomirror", val);
      rc = RIVER_EINVAL;
    }
    break;
  default: rc = RIVER_EINVAL;
  }
  return rc;
}

/* The option getopt_long just returned (val, or optopt for an error;
 * longindex as it set it) as typed: "-o" or "--NAME". */
static const char *opt_name(int val, int longindex)
{
  static char name[64];
  size_t i;

  if (longindex < 0 && val == 'o')
    return "-o";
  for (i = 0; long_opts[i].name != NULL; i++)
    if (longindex == (int)i || (longindex < 0 && long_opts[i].val == val))
      break;
  snprintf(name, sizeof name, "--%s",
           long_opts[i].name ? long_opts[i].name : "?");
  return name;
}

/* The long option (of those the command allows) a mistyped --word most
 * likely meant: the nearest by edit distance, within 2 (the word before
 * any '='), else NULL. */
static const char *nearest_opt(const char *word, unsigned allowed)
{
  char name[64];
  const char *best = NULL;
  int d, bestd = 3;
  size_t i;

  snprintf(name, sizeof name, "%s", word);
  name[strcspn(name, "=")] = '\0';
  for (i = 0; long_opts[i].name != NULL; i++) {
    if (!(allowed & (unsigned)long_opts[i].val))
      continue;
    d = cli_edit_distance(name, long_opts[i].name);
    if (d < bestd && d < (int)strlen(name)) {
      bestd = d;
      best = long_opts[i].name;
    }
  }
  return best;
}

/* Log what is wrong with the option getopt_long returned as opt (for
 * '?' and ':', optopt says which); always RIVER_EINVAL. */
static int bad_opt(const char *cmd, int opt, int longindex, char **argv,
                   unsigned allowed)
{
  const char *arg = argv[optind - 1];
  char see[64];

  snprintf(see, sizeof see, "(see river %s --help)", cmd);
  if (opt == ':') {
    say_usage("%s: option %s needs a value %s", cmd,
              opt_name(optopt, -1), see);
  } else if (opt == '?' && strncmp(arg, "--", 2) != 0) {
    say_usage("%s: unknown option '-%c' %s", cmd, optopt,
              see);
  } else if (opt == '?' && optopt != 0 && strchr(arg, '=') != NULL) {
    /* A known option without a value, given one (--direct-io=1). */
    say_usage("%s: option %s takes no value (given '%s') "
              "%s", cmd, opt_name(optopt, -1), strchr(arg, '=') + 1, see);
  } else if (opt == '?' && nearest_opt(arg + 2, allowed) != NULL) {
    say_usage("%s: unknown option '%s': did you mean "
              "'--%s'? %s", cmd, arg, nearest_opt(arg + 2, allowed), see);
  } else if (opt == '?') {
    say_usage("%s: unknown option '%s' %s", cmd, arg, see);
  } else if (optarg != NULL) {
    say_usage("%s: option %s (value '%s') is not accepted "
              "by %s %s", cmd, opt_name(opt, longindex), optarg, cmd, see);
  } else {
    say_usage("%s: option %s is not accepted by %s %s", cmd,
              opt_name(opt, longindex), cmd, see);
  }
  return RIVER_EINVAL;
}

/* The positional arguments still missing when `given` of posnames
 * ("IN and OUT (COLL or file:PATH)", "R, S and OUT COLL") came: the
 * names after the first `given` (split at ", " and " and "), with the
 * note in parentheses kept ("OUT (COLL or file:PATH)"). A static
 * buffer (said once, at once). */
static const char *missing_names(const char *posnames, int given)
{
  static char out[256];
  char names[256], *note, *p, *next;
  int k = 0;
  size_t o = 0;

  snprintf(names, sizeof names, "%s", posnames);
  out[0] = '\0';
  if ((note = strstr(names, " (")) != NULL)
    *note++ = '\0';   /* " (...)": after the names */
  for (p = names; p != NULL; p = next, k++) {
    char *comma = strstr(p, ", "), *and = strstr(p, " and ");
    char *cut = comma != NULL && (and == NULL || comma < and) ? comma : and;
    next = cut != NULL ? cut + (cut == comma ? 2 : 5) : NULL;
    if (cut != NULL)
      *cut = '\0';
    if (k >= given && o < sizeof out)
      o += (size_t)snprintf(out + o, sizeof out - o, "%s%s",
                            o > 0 ? (next != NULL ? ", " : " and ") : "", p);
  }
  if (note != NULL && o < sizeof out)
    snprintf(out + o, sizeof out - o, " %s", note);
  return out[0] != '\0' ? out : posnames;
}

static int parse_args(int argc, char **argv, unsigned allowed, int npos,
                      const char *posnames, struct args *a)
{
  river_pcoll_opts defaults = RIVER_PCOLL_OPTS_INIT;
  int opt, rc, li = -1;

  memset(a, 0, sizeof *a);
  a->cmd = argv[0];
  a->opts = defaults;
  optind = 1;
  opterr = 0;
  /* The leading ':' tells a missing value (':') from an unknown option. */
  while ((opt = getopt_long(argc, argv, ":o:", long_opts, &li)) != -1) {
    if (opt == '?' || opt == ':' || !(allowed & (unsigned)
                                      (opt == 'o' ? OPT_OUT : opt)))
      return bad_opt(a->cmd, opt, li, argv, allowed);
    rc = set_opt(a, opt == 'o' ? OPT_OUT : opt, optarg);
    if (rc != RIVER_SUCCESS)
      return rc;
    li = -1;
  }
  for (; optind < argc; optind++) {
    if (a->npos == npos) {
      say_usage("%s: unexpected argument '%s'", a->cmd,
                argv[optind]);
      return RIVER_EINVAL;
    }
    a->pos[a->npos++] = argv[optind];
  }
  if (a->npos < npos) {
    say_usage("%s: missing %s (see river %s --help)", a->cmd,
              missing_names(posnames, a->npos), a->cmd);
    return RIVER_EINVAL;
  }
  /* COLL is always the last argument; only "--" or a lone "-" gets a
   * name starting with '-' here, which would read as an option. */
  if (npos > 0 && strstr(posnames, "COLL") != NULL
      && a->pos[npos - 1][0] == '-') {
    say_usage("%s: argument '%s' was taken as COLL: a "
              "collection name may not start with '-'", a->cmd,
              a->pos[npos - 1]);
    return RIVER_EINVAL;
  }
  if ((allowed & OPT_RECORDS) && !a->have_records) {
    say_usage("%s: --records COUNT is required", a->cmd);
    return RIVER_EINVAL;
  }
  return RIVER_SUCCESS;
}

int cli_coll_args(int argc, char **argv, unsigned allowed, int npos,
                  const char *posnames, struct args *a)
{
  int rc = parse_args(argc, argv, allowed, npos, posnames, a);

  if (rc != RIVER_SUCCESS)
    app_usage_error();   /* said: exit 2 */
  return rc;
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

/* The progress line of a write of total records of rs bytes each
 * (collective: rc is agreed first; river/progress.h): NULL where it
 * failed, with *rc set. */
static river_progress *progress_begin(const char *label, uint64_t total,
                                      size_t rs, int *rc)
{
  river_progress *pr = NULL;

  *rc = cli_agree(*rc);
  if (*rc == RIVER_SUCCESS)
    *rc = river_progress_create(MPI_COMM_WORLD, label, total, total * rs,
                                &pr);
  return pr;
}

/* End pr (collective; every rank has one, or none has) into rc. */
static int progress_finish(river_progress *pr, int rc)
{
  int prc = pr != NULL ? river_progress_end(pr, rc == RIVER_SUCCESS)
                        : RIVER_SUCCESS;

  return rc == RIVER_SUCCESS ? prc : rc;
}

/* A GD read's bytes served and received here so far. */
static uint64_t gd_work(const struct gd_progress *g)
{
  river_gd_stats st;

  if (g->gd == NULL || river_gd_stats_get(g->gd, &st) != RIVER_SUCCESS)
    return g->base;
  return g->base + st.bytes_served + st.bytes_received;
}

static void gd_sample(void *arg, uint64_t *records, uint64_t *bytes,
                      uint64_t *work)
{
  const struct gd_progress *g = arg;

  *records = g->records;
  *bytes = g->bytes;
  *work = gd_work(g);
}

int gd_progress_begin(struct gd_progress *g, const char *label,
                      const river_pcoll_info *info, int rc)
{
  memset(g, 0, sizeof *g);
  g->label = label;
  rc = cli_agree(rc);
  if (rc == RIVER_SUCCESS)
    rc = river_progress_create_sampled(MPI_COMM_WORLD, label,
                                       info->nrecords,
                                       info->nrecords * info->record_size,
                                       gd_sample, g, &g->p);
  return rc;
}

void gd_progress_closing(struct gd_progress *g)
{
  /* A failure here shows when the file is written: the ranks then hold
   * different numbers of reads, which river_stats_write refuses. */
  if (cli_stats != NULL && g->gd != NULL)
    (void)river_stats_add_gd(cli_stats, g->gd, g->label);
  g->base = gd_work(g);
  g->gd = NULL;
}

int gd_progress_finish(struct gd_progress *g, int rc)
{
  rc = progress_finish(g->p, rc);
  g->p = NULL;
  return rc;
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
  river_progress *pr = NULL;
  unsigned char *buf = NULL;
  uint64_t first = 0, stride = 1, count = 0, done, wrote = 0;
  size_t chunk = 8192, n;
  double t0;
  int rank = cli_rank(), size = cli_size(), rc;

  rc = cli_coll_args(argc, argv, OPT_COMMON | OPT_RECORDS | OPT_ASCII | OPT_SKEW
                  | OPT_SEED | OPT_MIRROR | OPT_LAYOUT | OPT_BLOCK | OPT_FORCE,
                  1, "COLL", &a);
  if (rc == RIVER_SUCCESS && !a.force)
    rc = app_refuse_existing("gen", a.pos[0], &a.opts);
  if (rc != RIVER_SUCCESS)
    return rc;
  a.opts.exclusive = !a.force;   /* and not one committed meanwhile */
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
  pr = progress_begin("gen", a.records, RIVER_GENSORT_RECORD_SIZE, &rc);
  t0 = river_wtime();
  for (done = 0; done < count && rc == RIVER_SUCCESS; done += n) {
    n = count - done < chunk ? (size_t)(count - done) : chunk;
    rc = gen_rows(&a, first + done * stride, stride, n, buf);
    if (rc == RIVER_SUCCESS)
      rc = river_pcoll_write(pc, buf, n);
    if (rc == RIVER_SUCCESS) {
      wrote += n;
      rc = river_progress_add(pr, n, n * RIVER_GENSORT_RECORD_SIZE);
    }
  }
  rc = progress_finish(pr, rc);
  rc = finish_write(pc, rc);
  rc = cli_stats_work("gen", wrote, wrote * RIVER_GENSORT_RECORD_SIZE, t0,
                      rc);
  if (rc == RIVER_SUCCESS && rank == 0)
    printf("gen: %s: %llu record%s on %d partition%s%s\n", a.pos[0],
           (unsigned long long)a.records, CLI_S(a.records), size,
           CLI_S(size), a.opts.replication > 1 ? " (mirrored)" : "");
out:
  free(buf);
  river_schema_destroy(schema);
  return rc;
}

/* -------------------------------------------------------------- copy-in */

/* Write all of p to fd (retrying short writes); RIVER_EIO with errno set
 * on failure. */
static int write_all(int fd, const unsigned char *p, size_t len)
{
  ssize_t n;

  while (len > 0) {
    n = write(fd, p, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n == 0)
      errno = EIO;
    if (n <= 0)
      return RIVER_EIO;
    p += n;
    len -= (size_t)n;
  }
  return RIVER_SUCCESS;
}


/* Read count records starting at record `first` of fd into pc, in chunks;
 * stride > 1 takes every stride-th record (interleaved layouts). */
static int copy_in_range(int fd, const char *file, size_t rs, uint64_t first,
                         uint64_t count, uint64_t stride, river_pcoll *pc,
                         river_progress *pr, uint64_t *wrote)
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
    if (rc == RIVER_SUCCESS) {
      *wrote += span;
      rc = river_progress_add(pr, span, span * rs);
    }
    done += span;
  }
  free(buf);
  return rc;
}

/*
 * The input of copy-in. Rank 0 opens FILE ("-": standard input). If it is
 * a regular file that every other rank opens as the same file (device and
 * inode), every rank reads its own records from it. Anything else -- a
 * pipe, a FIFO, a character device, /dev/stdin, a file only rank 0 sees --
 * is a stream: rank 0 reads it to its end into a temporary file under the
 * root (.COLL.copy-in.XXXXXX), every rank opens that, and rank 0 unlinks
 * it at once, so it lives only as long as the open descriptors. The
 * record count comes from the file's size, never from a stream's.
 */
struct in_file {
  int regular;         /* rank 0's input is a regular file */
  dev_t dev;
  ino_t ino;
  uint64_t size;       /* bytes to copy in */
};

struct copy_in {
  const char *file;    /* FILE as given, for messages */
  const char *coll;
  size_t rs;
  const char *schema;  /* for messages */
  int fd;
  struct in_file in;   /* rank 0's, broadcast */
  char stage[PATH_MAX + 64]; /* the staged copy ("" if none) */
};

static int bad_size(const struct copy_in *ci)
{
  if (ci->in.size % ci->rs == 0)
    return RIVER_SUCCESS;
  river_log(RIVER_LOG_ERROR, "copy-in: %s: %llu bytes is not a whole number "
            "of %zu-byte records (schema %s)", ci->file,
            (unsigned long long)ci->in.size, ci->rs, ci->schema);
  return RIVER_EFORMAT;
}

/* Rank 0: open FILE and describe it in ci->in. */
static int in_open_root(struct copy_in *ci)
{
  struct stat st;

  ci->fd = strcmp(ci->file, "-") == 0 ? dup(STDIN_FILENO)
                                      : open(ci->file, O_RDONLY);
  if (ci->fd < 0 || fstat(ci->fd, &st) != 0) {
    river_log(RIVER_LOG_ERROR, "copy-in: cannot read %s: %s", ci->file,
              strerror(errno));
    return errno == ENOENT ? RIVER_ENOTFOUND : RIVER_EIO;
  }
  if (S_ISDIR(st.st_mode)) {
    river_log(RIVER_LOG_ERROR, "copy-in: %s is a directory, not a file of "
              "records", ci->file);
    return RIVER_EINVAL;
  }
  ci->in.regular = S_ISREG(st.st_mode) && strcmp(ci->file, "-") != 0;
  ci->in.dev = st.st_dev;
  ci->in.ino = st.st_ino;
  ci->in.size = (uint64_t)st.st_size;
  return ci->in.regular ? bad_size(ci) : RIVER_SUCCESS;
}

/* Ranks other than 0: open path if it is the file rank 0 described
 * (without blocking on a FIFO); 1 if so, else 0 with nothing open. */
static int in_open_same(struct copy_in *ci, const char *path)
{
  struct stat st;

  ci->fd = open(path, O_RDONLY | O_NONBLOCK);
  if (ci->fd >= 0 && fstat(ci->fd, &st) == 0 && S_ISREG(st.st_mode)
      && st.st_dev == ci->in.dev && st.st_ino == ci->in.ino)
    return 1;
  if (ci->fd >= 0)
    close(ci->fd);
  ci->fd = -1;
  return 0;
}

/* Collective: open the input on every rank; *stream = 1 if it must be
 * staged (then only rank 0 has it open). */
static int in_open(struct copy_in *ci, int rank, int *stream)
{
  int rc = RIVER_SUCCESS, same = 1, all = 0;

  if (rank == 0)
    rc = in_open_root(ci);
  if (cli_bcast(&ci->in, (int)sizeof ci->in) != RIVER_SUCCESS)
    rc = RIVER_EMPI;
  rc = cli_agree(rc);
  if (rc != RIVER_SUCCESS)
    return rc;
  if (rank != 0)
    same = ci->in.regular && in_open_same(ci, ci->file);
  else
    same = ci->in.regular;
  all = cli_agree(same);
  if (all < 0)
    return all;
  *stream = !all;
  if (*stream && rank != 0 && ci->fd >= 0) {
    close(ci->fd);
    ci->fd = -1;
  }
  return RIVER_SUCCESS;
}

/* Mark the staged file fd as in use (a write lock on it, as river gc
 * checks before it removes a staged stream), for as long as fd is open. */
static void hold_stage(int fd)
{
  struct flock fl;

  memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
#ifdef F_OFD_SETLK
  (void)fcntl(fd, F_OFD_SETLK, &fl);
#else
  (void)fcntl(fd, F_SETLK, &fl);
#endif
}

/* Rank 0: read the input to its end into a new temporary file under the
 * root; ci->fd becomes that file, ci->in its description. */
static int stage_fill(struct copy_in *ci, const river_pcoll_opts *opts)
{
  char root[PATH_MAX] = "";
  size_t len = sizeof root, bufsize = (size_t)1 << 20;
  unsigned char *buf = malloc(bufsize);
  struct stat st;
  ssize_t got = 1;
  int out = -1, rc = river_pcoll_root(opts, root, &len);

  if (rc == RIVER_SUCCESS && buf != NULL) {
    snprintf(ci->stage, sizeof ci->stage, "%s/.%s.copy-in.XXXXXX", root,
             ci->coll);
    out = mkstemp(ci->stage);
    if (out >= 0)
      hold_stage(out);
  }
  if (out < 0) {
    river_log(RIVER_LOG_ERROR, "copy-in: cannot create a temporary file "
              "under %s for %s: %s", root, ci->file, strerror(errno));
    ci->stage[0] = '\0';
    free(buf);
    return RIVER_EIO;
  }
  while (rc == RIVER_SUCCESS && got != 0) {
    got = read(ci->fd, buf, bufsize);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      river_log(RIVER_LOG_ERROR, "copy-in: reading %s failed: %s", ci->file,
                strerror(errno));
    else if (got > 0 && write_all(out, buf, (size_t)got) != RIVER_SUCCESS)
      river_log(RIVER_LOG_ERROR, "copy-in: writing %s (the copy of %s) "
                "failed: %s", ci->stage, ci->file, strerror(errno));
    else
      continue;
    rc = RIVER_EIO;
  }
  free(buf);
  close(ci->fd);
  ci->fd = out;
  if (rc == RIVER_SUCCESS && fstat(out, &st) != 0)
    rc = RIVER_EIO;
  if (rc == RIVER_SUCCESS) {
    ci->in.dev = st.st_dev;
    ci->in.ino = st.st_ino;
    ci->in.size = (uint64_t)st.st_size;
    rc = bad_size(ci);
  }
  return rc;
}

/* Collective: rank 0 stages the stream, every rank opens the staged
 * copy, and rank 0 removes its name. */
static int stage(struct copy_in *ci, const river_pcoll_opts *opts, int rank)
{
  int rc = RIVER_SUCCESS;

  if (rank == 0)
    rc = stage_fill(ci, opts);
  if (cli_bcast(&ci->in, (int)sizeof ci->in) != RIVER_SUCCESS
      || cli_bcast(ci->stage, (int)sizeof ci->stage) != RIVER_SUCCESS)
    rc = RIVER_EMPI;
  rc = cli_agree(rc);
  if (rc == RIVER_SUCCESS && rank != 0 && !in_open_same(ci, ci->stage)) {
    river_log(RIVER_LOG_ERROR, "copy-in: cannot read %s, rank 0's copy of "
              "%s (the root must be shared by every rank)", ci->stage,
              ci->file);
    rc = RIVER_EIO;
  }
  rc = cli_agree(rc);
  if (rank == 0 && ci->stage[0] != '\0')
    unlink(ci->stage);
  return rc;
}

int cmd_copy_in(int argc, char **argv)
{
  struct args a;
  struct copy_in ci;
  river_schema *schema = NULL;
  river_pcoll *pc = NULL;
  river_progress *pr = NULL;
  uint64_t nrec, first = 0, stride = 1, count = 0, wrote = 0;
  int rank = cli_rank(), size = cli_size(), stream = 0, rc;
  double t0;

  rc = cli_coll_args(argc, argv, OPT_COMMON | OPT_SCHEMA | OPT_MIRROR
                  | OPT_LAYOUT | OPT_BLOCK | OPT_FORCE, 2, "FILE and COLL", &a);
  if (rc == RIVER_SUCCESS && !a.force)
    rc = app_refuse_existing("copy-in", a.pos[1], &a.opts);
  if (rc != RIVER_SUCCESS)
    return rc;
  a.opts.exclusive = !a.force;   /* and not one committed meanwhile */
  memset(&ci, 0, sizeof ci);
  ci.fd = -1;
  ci.file = a.pos[0];
  ci.coll = a.pos[1];
  ci.schema = a.schema ? a.schema : RIVER_SCHEMA_DEFAULT;
  rc = a.schema ? river_schema_parse(a.schema, &schema)
                : river_schema_create_default(&schema);
  if (rc == RIVER_SUCCESS)
    river_schema_record_size(schema, &ci.rs);
  rc = cli_agree(rc);
  if (rc == RIVER_SUCCESS)
    rc = in_open(&ci, rank, &stream);
  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_create(MPI_COMM_WORLD, a.pos[1], schema, &a.opts, &pc);
  if (rc != RIVER_SUCCESS)
    goto out;
  if (stream)
    rc = stage(&ci, &a.opts, rank);
  nrec = ci.in.size / ci.rs;
  if (rc == RIVER_SUCCESS)
    rc = river_pcoll_split(a.opts.layout, nrec, size, rank, &first, &stride,
                           &count);
  pr = progress_begin("copy-in", nrec, ci.rs, &rc);
  t0 = river_wtime();
  if (rc == RIVER_SUCCESS)
    rc = copy_in_range(ci.fd, a.pos[0], ci.rs, first, count, stride, pc, pr,
                       &wrote);
  rc = progress_finish(pr, rc);
  rc = finish_write(pc, rc);
  rc = cli_stats_work("copy-in", wrote, wrote * ci.rs, t0, rc);
  if (rc == RIVER_SUCCESS && rank == 0)
    printf("copy-in: %s -> %s: %llu record%s of %zu bytes on %d "
           "partition%s\n", a.pos[0], a.pos[1], (unsigned long long)nrec,
           CLI_S(nrec), ci.rs, size, CLI_S(size));
out:
  if (ci.fd >= 0)
    close(ci.fd);
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
  struct gd_progress prog;
};

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
  if (rc == RIVER_SUCCESS && n > 0) {
    emit(co, ready, n * co->info.record_size);
    co->prog.records += n;
    co->prog.bytes += n * co->info.record_size;
  }
  river_progress_poll(co->prog.p);   /* a round, if one is due */
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
  co->prog.gd = gd;
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
  gd_progress_closing(&co->prog);
  rc = river_gd_close(gd);
  return cli_agree(rc != RIVER_SUCCESS ? rc : co->rc);
}

/*
 * Rank 0's output. -o PATH is followed through symbolic links to what
 * they name (resolved by hand, so that a dangling link names the file to
 * create), but only through links the kernel's protected_symlinks rule
 * would follow, whatever that sysctl says: in a sticky, world-writable
 * directory (/tmp) only a link of the caller's or of the directory's
 * owner; another user's link there is refused, naming it. That target,
 * if it is a regular file or does not exist, is written under a
 * temporary name beside it (river/outfile.h: a random name, recorded in
 * the root for gc) and, once every rank has succeeded, renamed over it
 * (a file already there only with --force: refused before the copy)
 * keeping its mode, fsync'd before and its directory after (unless
 * RIVER_SYNC=0). A character device or a FIFO is written through, as
 * it is, opened without waiting: a FIFO with no reader is an error at
 * once, and in a sticky, world-writable directory the same ownership
 * rule applies to it (Linux's protected_fifos). A directory, a block
 * device or a socket is an error.
 */
struct out_path {
  char target[PATH_MAX];  /* PATH with its symbolic links followed */
  river_outfile *of;      /* its temporary; NULL when writing through */
};

/* Follow the symbolic links of path into o->target: RIVER_SUCCESS, or
 * (logged) RIVER_EACCES for a link not followed, RIVER_EINVAL for one
 * that cannot be. */
static int out_resolve(const char *path, struct out_path *o)
{
  char link[PATH_MAX], next[2 * PATH_MAX];
  const char *slash;
  struct stat st;
  ssize_t n;
  int hops;

  if (strlen(path) >= sizeof o->target)
    goto toolong;
  strcpy(o->target, path);
  for (hops = 0; lstat(o->target, &st) == 0 && S_ISLNK(st.st_mode); hops++) {
    if (river_outfile_check_planted(o->target) != RIVER_SUCCESS)
      return RIVER_EACCES;   /* the kernel's rule, said */
    n = readlink(o->target, link, sizeof link - 1);
    if (hops == 40 || n < 0) {
      river_log(RIVER_LOG_ERROR, "copy-out: cannot follow the link %s: %s",
                path, hops == 40 ? strerror(ELOOP) : strerror(errno));
      return RIVER_EINVAL;
    }
    link[n] = '\0';
    slash = strrchr(o->target, '/');
    if (link[0] == '/' || slash == NULL)
      snprintf(next, sizeof next, "%s", link);
    else
      snprintf(next, sizeof next, "%.*s/%s", (int)(slash - o->target),
               o->target, link);
    if (strlen(next) >= sizeof o->target)
      goto toolong;
    strcpy(o->target, next);
  }
  return RIVER_SUCCESS;
toolong:
  river_log(RIVER_LOG_ERROR, "copy-out: output path too long: %s", path);
  return RIVER_EINVAL;
}

/* Rank 0: open o->target, a character device or FIFO (st: its lstat;
 * river_outfile_check_planted has let it through), to write through it: without
 * waiting (O_NONBLOCK: a FIFO with no reader fails at once), not through
 * a link swapped in since (unless follow: a link only the kernel can
 * resolve), and only if it still is such a file; then blocking again for
 * the writes. The descriptor, or -1 with a logged error. */
static int out_special(const char *out, const struct out_path *o,
                       const struct stat *st, int follow)
{
  struct stat fs;
  int fd, fl;

  fd = open(o->target, O_WRONLY | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW)
                       | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    river_log(RIVER_LOG_ERROR, "copy-out: cannot open %s: %s", out,
              errno == ENXIO && S_ISFIFO(st->st_mode)
              ? "a FIFO with no reader (copy-out does not wait for one: "
                "start the reader first)" : strerror(errno));
    return -1;
  }
  if (fstat(fd, &fs) != 0 || (!S_ISFIFO(fs.st_mode) && !S_ISCHR(fs.st_mode))
      || (fl = fcntl(fd, F_GETFL)) < 0
      || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
    river_log(RIVER_LOG_ERROR, "copy-out: %s changed while it was opened "
              "(no longer a FIFO or character device)", out);
    close(fd);
    return -1;
  }
  return fd;
}

/* Rank 0: open the output (stdout, PATH's target, or a temporary name
 * beside it, recorded in root). */
static int copy_out_open(struct copy_out *co, const char *out,
                         const char *root, int force, struct out_path *o)
{
  struct stat st;
  int rc;

  o->of = NULL;
  if (out == NULL || strcmp(out, "-") == 0) {
    co->fd = STDOUT_FILENO;
    return RIVER_SUCCESS;
  }
  if ((rc = out_resolve(out, o)) != RIVER_SUCCESS)
    return rc;
  if (lstat(o->target, &st) != 0 && strcmp(o->target, out) != 0
      && stat(out, &st) == 0 && (S_ISFIFO(st.st_mode)
                                 || S_ISCHR(st.st_mode))) {
    /* A link whose text names no file, but the kernel resolves it: a
     * process's descriptor (/dev/stdout -> /proc/self/fd/1 -> pipe:[N]).
     * Every link on the way was allowed above. */
    snprintf(o->target, sizeof o->target, "%s", out);
    co->fd = out_special(out, o, &st, 1);
    return co->fd >= 0 ? RIVER_SUCCESS : RIVER_EIO;
  }
  if (lstat(o->target, &st) == 0 && S_ISDIR(st.st_mode)) {
    river_log(RIVER_LOG_ERROR, "copy-out: %s is a directory", out);
    return RIVER_EINVAL;
  }
  if (lstat(o->target, &st) == 0 && (S_ISFIFO(st.st_mode)
                                     || S_ISCHR(st.st_mode))) {
    if (river_outfile_check_planted(o->target) != RIVER_SUCCESS)
      return RIVER_EACCES;
    co->fd = out_special(out, o, &st, 0);   /* written through */
    return co->fd >= 0 ? RIVER_SUCCESS : RIVER_EIO;
  }
  if (lstat(o->target, &st) == 0 && !S_ISREG(st.st_mode)) {
    river_log(RIVER_LOG_ERROR, "copy-out: %s is a %s: not written", out,
              S_ISBLK(st.st_mode) ? "block device" : "socket");
    return RIVER_EINVAL;
  }
  if (!force && lstat(o->target, &st) == 0) {
    river_log(RIVER_LOG_ERROR, "copy-out: %s exists (--force replaces it "
              "once the copy is written)", out);
    return RIVER_EEXIST;
  }
  rc = river_outfile_create(o->target, root,
                            force ? 0 : RIVER_OUTFILE_NOREPLACE, &o->of);
  if (rc == RIVER_SUCCESS)
    river_outfile_fd(o->of, &co->fd);
  return rc;
}

/* Rank 0: finish the output: a temporary is published over the target
 * (rc: the agreed outcome of the copy, so only if every rank
 * succeeded), or removed on failure. */
static int copy_out_close(struct copy_out *co, const char *out,
                          struct out_path *o, int rc)
{
  if (co->fd == STDOUT_FILENO || co->fd < 0)
    return rc;
  if (o->of == NULL) {   /* written through */
    if (close(co->fd) != 0 && rc == RIVER_SUCCESS) {
      river_log(RIVER_LOG_ERROR, "copy-out: writing %s failed: %s", out,
                strerror(errno));
      rc = RIVER_EIO;
    }
    return rc;
  }
  if (rc != RIVER_SUCCESS)
    river_outfile_discard(o->of);
  else
    rc = river_outfile_publish(o->of);
  o->of = NULL;
  return rc;
}

int cmd_copy_out(int argc, char **argv)
{
  struct args a;
  struct copy_out co = {0};
  struct out_path o = {{0}, NULL};
  int rc;

  rc = cli_coll_args(argc, argv, OPT_COMMON | OPT_OUT | OPT_READ | OPT_FORCE,
                     1, "COLL", &a);
  if (rc != RIVER_SUCCESS)
    return rc;
  co.rank = cli_rank();
  co.size = cli_size();
  co.fd = -1;
  /* Each rank holds the copies of the disks it serves in the GD read
   * (RIVER_PCOLL_HOLD_SERVED, on the same communicator): a commit or rm
   * of the collection meanwhile takes nothing from the copy-out. */
  rc = river_pcoll_open(MPI_COMM_WORLD, a.pos[0], &a.opts, &co.pc);
  if (rc != RIVER_SUCCESS)
    return rc;
  river_pcoll_info_get(co.pc, &co.info);
  if (co.rank == 0)
    rc = river_pcoll_order_create(co.pc, &co.order);
  if (rc == RIVER_SUCCESS && co.rank == 0)
    rc = copy_out_open(&co, a.out, a.opts.root, a.force, &o);
  rc = gd_progress_begin(&co.prog, "copy-out", &co.info, rc);
  if (rc == RIVER_SUCCESS)
    rc = copy_out_run(&co, a.read_policy);
  rc = gd_progress_finish(&co.prog, rc);
  if (co.rank == 0)
    rc = cli_agree(copy_out_close(&co, a.out, &o, rc));
  else
    rc = cli_agree(rc);
  river_pcoll_order_destroy(co.order);
  river_pcoll_close(co.pc);
  return rc;
}
