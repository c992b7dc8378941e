/*
 * file.c - flat files of records in flows. Module `file_read` splits a
 * file of fixed-size records (of its `schema` argument, by default the
 * 100-byte gensort record) by whole records among its instances,
 * instance i reading records [N i/n, N (i+1)/n) with pread straight
 * into its output's messages. Module `file_write` writes its input's
 * records in arrival order: with one instance to PATH, with several
 * each instance to PATH.INSTANCE. Each file is written under a
 * temporary name beside it (a river_outfile, recorded for gc) and
 * renamed into place only once the whole flow has succeeded on every
 * rank (an end step, river_ctx_at_end): a failure anywhere, which also
 * ends this module's input, leaves the old file as it was. Durable
 * unless `sync: false` (or RIVER_SYNC=0): fsync before the rename, and
 * of the directory after.
 */
#include "modules.h"
#include "river/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The records' schema: the `schema` argument, else gensort's. */
static int arg_schema(river_ctx *ctx, river_schema **out)
{
  const char *text = "";

  river_arg_str(ctx, "schema", &text);
  return text[0] ? river_schema_parse(text, out)
                 : river_schema_create_default(out);
}

/* Open path for reading and find its record count: RIVER_SUCCESS with
 * *fd open, or an error logged (naming the stage and path). */
static int open_records(river_ctx *ctx, const char *path,
                        size_t rs, int *fd, uint64_t *nrec)
{
  struct stat st;
  int err;

  /* O_NONBLOCK: a FIFO must not block the open (it is refused below) */
  *fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (*fd < 0 || fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    err = *fd < 0 ? errno : 0;
    if (*fd >= 0)
      close(*fd);
    *fd = -1;
    river_ctx_log(ctx, RIVER_LOG_ERROR, "cannot read %s: %s", path,
                  err ? strerror(err) : "not a regular file");
    return err == ENOENT ? RIVER_ENOTFOUND
           : err == EACCES ? RIVER_EACCES : RIVER_EIO;
  }
  if ((uint64_t)st.st_size % rs != 0) {
    river_ctx_log(ctx, RIVER_LOG_ERROR, "%s: %llu bytes are not a whole "
                  "number of %zu-byte records", path,
                  (unsigned long long)st.st_size, rs);
    close(*fd);
    *fd = -1;
    return RIVER_ECORRUPT;
  }
  *nrec = (uint64_t)st.st_size / rs;
  return RIVER_SUCCESS;
}

/* At check time: the schema argument, and a readable file of whole
 * records (said once, by the rank that prints check's messages). */
int river__file_schema(river_ctx *ctx, const char *path,
                       river_schema **schema)
{
  size_t rs = 0;
  uint64_t n;
  int fd, rc;

  rc = arg_schema(ctx, schema);
  if (rc != RIVER_SUCCESS)
    return rc;   /* check has said what is wrong with it */
  river_schema_record_size(*schema, &rs);
  rc = open_records(ctx, path, rs, &fd,
                    &n);
  if (rc == RIVER_SUCCESS)
    close(fd);
  else {
    river_schema_destroy(*schema);
    *schema = NULL;
  }
  return rc;
}

static int read_schema(river_ctx *ctx, int output, river_schema **schema)
{
  const char *path = "";

  (void)output;
  river_arg_str(ctx, "path", &path);
  return river__file_schema(ctx, path, schema);
}

/* Read n records at record `first` into buf. */
static int read_at(river_ctx *ctx, int fd, const char *path, void *buf,
                   size_t n, size_t rs, uint64_t first)
{
  size_t len = n * rs, done = 0;
  ssize_t k;

  while (done < len) {
    k = pread(fd, (char *)buf + done, len - done,
              (off_t)(first * rs + done));
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0) {
      river_ctx_log(ctx, RIVER_LOG_ERROR, "reading %s at byte %llu: %s", path,
                    (unsigned long long)(first * rs + done),
                    k < 0 ? strerror(errno) : "the file got shorter");
      return RIVER_EIO;
    }
    done += (size_t)k;
  }
  return RIVER_SUCCESS;
}

int river__file_read_slice(river_ctx *ctx, const char *path)
{
  const river_schema *s;
  uint64_t nrec, first, end;
  size_t rs = 0, max, k;
  int inst, ninst, fd, rc;
  void *buf;

  river_output_schema(ctx, 0, &s);
  river_schema_record_size(s, &rs);
  river_ctx_instance(ctx, &inst, &ninst);
  rc = open_records(ctx, path, rs, &fd, &nrec);
  if (rc != RIVER_SUCCESS)
    return rc;
  first = (uint64_t)((unsigned __int128)nrec * (unsigned)inst
                     / (unsigned)ninst);
  end = (uint64_t)((unsigned __int128)nrec * (unsigned)(inst + 1)
                   / (unsigned)ninst);
  while (first < end && rc == RIVER_SUCCESS) {
    rc = river_reserve(ctx, 0, &buf, &max);
    if (rc != RIVER_SUCCESS)
      break;
    k = end - first < max ? (size_t)(end - first) : max;
    rc = read_at(ctx, fd, path, buf, k, rs, first);
    if (rc == RIVER_SUCCESS)
      rc = river_ctx_charge_disk(ctx, inst, k * rs);
    if (rc == RIVER_SUCCESS)
      rc = river_commit(ctx, 0, k);
    first += k;
  }
  close(fd);
  return rc;
}

static int file_read(river_ctx *ctx)
{
  const char *path = "";

  river_arg_str(ctx, "path", &path);
  return river__file_read_slice(ctx, path);
}

/* ------------------------------------------------------------ writing */


/* pwrite all of len bytes at p to fd at byte off. */
static int pwrite_all(int fd, const void *p, size_t len, uint64_t off)
{
  const char *c = p;
  ssize_t k;

  while (len > 0) {
    k = pwrite(fd, c, len, (off_t)off);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return -1;
    c += k;
    len -= (size_t)k;
    off += (uint64_t)k;
  }
  return 0;
}

/* path may be written: absent, or (with replace) a regular file (not a
 * directory, FIFO, device, socket or symbolic link, which the rename
 * would replace or fail on). RIVER_EEXIST (logged) if not (modules.h). */
int river__file_replaceable(river_ctx *ctx, const char *path, int replace)
{
  struct stat st;

  if (lstat(path, &st) != 0)
    return RIVER_SUCCESS;
  if (S_ISREG(st.st_mode) && !replace) {
    river_ctx_log(ctx, RIVER_LOG_ERROR, "%s exists (replace: true replaces "
                  "it once the new one is written)", path);
    return RIVER_EEXIST;
  }
  if (S_ISREG(st.st_mode))
    return RIVER_SUCCESS;
  river_ctx_log(ctx, RIVER_LOG_ERROR, "%s exists and is not a regular file "
                "(%s): not replacing it", path,
                S_ISDIR(st.st_mode) ? "a directory"
               : S_ISLNK(st.st_mode) ? "a symbolic link"
               : S_ISFIFO(st.st_mode) ? "a FIFO"
               : S_ISSOCK(st.st_mode) ? "a socket" : "a device");
  return RIVER_EEXIST;
}

/* The flags of a file output from the stage's `sync` argument. */
static int out_flags(river_ctx *ctx, int replace)
{
  int sync = 1;

  river_arg_bool(ctx, "sync", &sync);
  return (sync ? 0 : RIVER_OUTFILE_NOSYNC)
         | (replace ? 0 : RIVER_OUTFILE_NOREPLACE);
}

/* The root where a file output's temporary is recorded (for gc): the
 * stage's `root` argument, else NULL ($RIVER_ROOT or the default). */
static const char *out_root(river_ctx *ctx)
{
  const char *root = "";

  river_arg_str(ctx, "root", &root);
  return root[0] ? root : NULL;
}

/* The end step of a file output (river_ctx_at_end): publish it if the
 * flow succeeded everywhere, else remove it. */
static int end_file(void *arg, int outcome)
{
  if (outcome != RIVER_SUCCESS) {
    river_outfile_discard(arg);
    return RIVER_SUCCESS;
  }
  return river_outfile_publish(arg);
}

static int file_write(river_ctx *ctx)
{
  const river_schema *s;
  const char *path = "", *tmp = "";
  char final[4096];
  river_outfile *of = NULL;
  const void *recs;
  size_t rs = 0, n;
  uint64_t at = 0;
  int inst, ninst, fd = -1, replace = 0, rc, wrc = RIVER_SUCCESS;

  river_input_schema(ctx, 0, &s);
  river_schema_record_size(s, &rs);
  river_arg_str(ctx, "path", &path);
  river_arg_bool(ctx, "replace", &replace);
  river_ctx_instance(ctx, &inst, &ninst);
  if (ninst == 1)
    snprintf(final, sizeof final, "%s", path);
  else
    snprintf(final, sizeof final, "%s.%d", path, inst);
  if ((rc = river__file_replaceable(ctx, final, replace)) != RIVER_SUCCESS)
    return rc;   /* before any work */
  rc = river_outfile_create(final, out_root(ctx), out_flags(ctx, replace),
                            &of);
  if (rc != RIVER_SUCCESS) {
    river_ctx_log(ctx, RIVER_LOG_ERROR, "cannot write %s (see above)", final);
    return rc;
  }
  river_outfile_fd(of, &fd);
  river_outfile_tmp(of, &tmp);
  while ((rc = river_get(ctx, 0, &recs, &n)) == RIVER_SUCCESS)
    if (wrc == RIVER_SUCCESS && pwrite_all(fd, recs, n * rs, at) != 0) {
      river_ctx_log(ctx, RIVER_LOG_ERROR, "writing %s: %s", tmp,
                    strerror(errno));
      wrc = RIVER_EIO;   /* keep reading: upstream must not block */
    } else {
      at += n * rs;
    }
  if (rc == RIVER_EOS)
    rc = wrc;
  /* The end of input is not yet success: a failure anywhere ends it
   * too. The file is published once the flow's outcome is agreed. */
  if (rc == RIVER_SUCCESS)
    rc = river_ctx_at_end(ctx, end_file, of);
  if (rc != RIVER_SUCCESS)
    river_outfile_discard(of);
  return rc;
}

/* ------------------------------------------- one file, placed by tags */



/* The temporary file beside path: instance 0 creates it (a
 * river_outfile: O_EXCL|O_NOFOLLOW, a random name, recorded for gc) and
 * tells the others its name, which they open (O_NOFOLLOW). Collective
 * over the stage (every instance makes the same calls, whatever fails);
 * *fd -1 and *of NULL on failure. */
static int open_shared_tmp(river_ctx *ctx, const char *path, int flags,
                           char *tmp, size_t len, int *fd,
                           river_outfile **of)
{
  const char *name = "";
  int inst, rc = RIVER_SUCCESS;

  river_ctx_instance(ctx, &inst, NULL);
  *fd = -1;
  *of = NULL;
  memset(tmp, 0, len);
  if (inst == 0) {
    rc = river_outfile_create(path, out_root(ctx), flags, of);
    if (rc == RIVER_SUCCESS) {
      river_outfile_fd(*of, fd);
      river_outfile_tmp(*of, &name);
    }
    if (rc == RIVER_SUCCESS && strlen(name) >= len) {
      river_ctx_log(ctx, RIVER_LOG_ERROR, "the path %s is too long", path);
      rc = RIVER_EINVAL;
    }
    if (rc == RIVER_SUCCESS)
      memcpy(tmp, name, strlen(name) + 1);
  }
  rc = river_ctx_agree(ctx, rc);
  if (rc == RIVER_SUCCESS)
    rc = river_ctx_bcast(ctx, tmp, len, 0);
  if (rc == RIVER_SUCCESS && inst != 0) {
    tmp[len - 1] = '\0';
    *fd = open(tmp, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (*fd < 0) {
      river_ctx_log(ctx, RIVER_LOG_ERROR, "cannot open %s: %s", tmp,
                    strerror(errno));
      rc = RIVER_EIO;
    }
  }
  rc = river_ctx_agree(ctx, rc);
  if (rc != RIVER_SUCCESS && inst != 0 && *fd >= 0)
    close(*fd);
  if (rc != RIVER_SUCCESS) {
    river_outfile_discard(*of);   /* instance 0's, if it made one */
    *of = NULL;
    *fd = -1;
  }
  return rc;
}

/* A run a writer wrote: its first record's position and its length. */
struct extent {
  uint64_t start, len;
};

/* What a placed writer wrote: its runs, and the first failure. */
struct placed {
  uint64_t tag, pos;      /* the current run's tag and next position */
  int started;
  int pull;               /* the input is a pull edge: runs are units */
  int producers;          /* instances feeding this one (non-pull) */
  struct extent *ext;     /* the runs written */
  size_t next, cap;
  uint64_t end;           /* the furthest end */
  int rc;
};

/* Start a run at position pos. */
static int new_extent(struct placed *w, uint64_t pos)
{
  if (w->next == w->cap) {
    size_t cap = w->cap ? 2 * w->cap : 16;
    struct extent *e = realloc(w->ext, cap * sizeof *e);
    if (e == NULL)
      return RIVER_ENOMEM;
    w->ext = e;
    w->cap = cap;
  }
  w->ext[w->next].start = pos;
  w->ext[w->next].len = 0;
  w->next++;
  return RIVER_SUCCESS;
}

/* Write one message of n records at its place: a run starts at a pull
 * unit's first message, or (one producer) where the tag changes, at the
 * tag's position; the messages after it follow. Untagged records go at
 * the end, in arrival order. */
static void place(river_ctx *ctx, struct placed *w, int fd, const char *tmp,
                  const void *recs, size_t n, size_t rs, int ninst)
{
  uint64_t tag = RIVER_DQ_NO_TAG;
  int first = 0;

  if (w->rc != RIVER_SUCCESS)
    return;   /* keep reading: upstream must not block */
  if ((w->rc = river_get_tag(ctx, 0, &tag)) != RIVER_SUCCESS)
    return;
  if (w->pull && (w->rc = river_get_unit(ctx, 0, NULL, &first, NULL))
                     != RIVER_SUCCESS)
    return;
  if (tag == RIVER_DQ_NO_TAG && ninst > 1) {
    river_ctx_log(ctx, RIVER_LOG_ERROR, "one file from %d instances needs "
                  "records tagged with their place (as sort tags its runs); "
                  "these are not: write a collection, or use one instance",
                  ninst);
    w->rc = RIVER_EINVAL;
    return;
  }
  if (tag != RIVER_DQ_NO_TAG && !w->pull && w->producers > 1) {
    river_ctx_log(ctx, RIVER_LOG_ERROR, "records tagged with their place "
                  "reach this instance from %d producers on an edge that "
                  "interleaves their messages: give the edge policy pull "
                  "(each run whole) or kind one-to-one", w->producers);
    w->rc = RIVER_EINVAL;
    return;
  }
  if (!w->started || (w->pull ? first : tag != w->tag)) {
    w->pos = tag == RIVER_DQ_NO_TAG ? w->end : tag;
    if ((w->rc = new_extent(w, w->pos)) != RIVER_SUCCESS)
      return;
  }
  w->started = 1;
  w->tag = tag;
  if (w->pos > (uint64_t)INT64_MAX / rs - n) {
    river_ctx_log(ctx, RIVER_LOG_ERROR, "tag %llu is past the largest file",
                  (unsigned long long)tag);
    w->rc = RIVER_EOVERFLOW;
    return;
  }
  if ((river_fault_point("file-write") && (errno = EIO) != 0)
      || pwrite_all(fd, recs, n * rs, w->pos * rs) != 0) {
    river_ctx_log(ctx, RIVER_LOG_ERROR, "writing %s at byte %llu: %s", tmp,
                  (unsigned long long)(w->pos * rs), strerror(errno));
    w->rc = RIVER_EIO;
    return;
  }
  w->pos += n;
  w->ext[w->next - 1].len += n;
  if (w->pos > w->end)
    w->end = w->pos;
}

static int by_start(const void *a, const void *b)
{
  const struct extent *x = a, *y = b;

  return (x->start > y->start) - (x->start < y->start);
}

/* Instance 0: every writer's runs (gathered), sorted, must tile
 * [0, N) exactly, and the file (by path: every other writer has closed
 * it, and pwrite leaves nothing buffered) be N records long. *total
 * gets N. */
static int tiles(river_ctx *ctx, const struct placed *w,
                 const char *tmp, size_t rs, uint64_t *total)
{
  int inst, ninst, i, rc;
  size_t *sizes, n = 0, j;
  struct extent *all = NULL;
  void *got = NULL;
  struct stat st;

  river_ctx_instance(ctx, &inst, &ninst);
  if ((sizes = calloc((size_t)ninst, sizeof *sizes)) == NULL)
    return RIVER_ENOMEM;   /* the stage's peers learn it from the flow */
  rc = river_ctx_allgatherv(ctx, w->ext, w->next * sizeof *w->ext, &got,
                            sizes);
  all = got;
  for (i = 0; rc == RIVER_SUCCESS && i < ninst; i++)
    n += sizes[i] / sizeof *all;
  *total = 0;
  if (rc == RIVER_SUCCESS && inst == 0) {
    qsort(all, n, sizeof *all, by_start);
    for (j = 0; j < n && all[j].start == *total; j++)
      *total += all[j].len;
    if (j < n || stat(tmp, &st) != 0 || (uint64_t)st.st_size != *total * rs) {
      river_ctx_log(ctx, RIVER_LOG_ERROR, "the runs written to %s do not "
                    "tile it (the run at record %llu follows records up to "
                    "%llu): runs overlap or leave a hole; the file is not "
                    "published", tmp,
                    (unsigned long long)(j < n ? all[j].start : *total),
                    (unsigned long long)*total);
      rc = RIVER_ECORRUPT;
    }
  }
  free(sizes);
  free(all);
  return rc;
}

int river__file_write_placed(river_ctx *ctx, const char *path)
{
  river_edge_opts e = RIVER_EDGE_OPTS_INIT;
  struct placed w;
  river_outfile *of = NULL;
  const river_schema *s;
  const void *recs;
  char tmp[4300] = "";
  size_t rs = 0, n;
  uint64_t total = 0;
  int inst, ninst, fd = -1, sync = 1, replace = 0, rc, crc = 0, failed = 0;

  memset(&w, 0, sizeof w);
  river_input_edge(ctx, 0, &e);
  w.pull = e.kind == RIVER_EDGE_DQ && e.policy == RIVER_DQ_PULL;
  w.producers = 1;
  river_input_producers(ctx, 0, &w.producers);
  river_input_schema(ctx, 0, &s);
  river_schema_record_size(s, &rs);
  river_ctx_instance(ctx, &inst, &ninst);
  river_arg_bool(ctx, "sync", &sync);
  river_arg_bool(ctx, "replace", &replace);
  /* Before any work and before a collective; said by instance 0 */
  rc = river_ctx_agree(ctx, inst == 0 ? river__file_replaceable(ctx, path, replace)
                                      : RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS)
    rc = open_shared_tmp(ctx, path, out_flags(ctx, replace), tmp,
                         sizeof tmp, &fd, &of);
  if (rc != RIVER_SUCCESS)
    return rc;
  /* Every instance reaches each agreement below, whatever failed. */
  while ((rc = river_get(ctx, 0, &recs, &n)) == RIVER_SUCCESS) {
    place(ctx, &w, fd, tmp, recs, n, rs, ninst);
    if (w.rc == RIVER_SUCCESS)
      w.rc = river_ctx_charge_disk(ctx, inst, n * rs);
  }
  if (rc == RIVER_EOS)
    rc = w.rc;
  if (rc == RIVER_SUCCESS)
    river_ctx_failed(ctx, &failed);
  if (rc == RIVER_SUCCESS && failed) {
    river_ctx_log(ctx, RIVER_LOG_DEBUG, "the flow failed elsewhere; %s not "
                  "written", path);
    rc = RIVER_ESTATE;
  }
  /* Each writer's data is down (and durable, unless sync is off) before
   * the file is judged; instance 0's descriptor is the outfile's, which
   * publishing syncs and closes. */
  if (rc == RIVER_SUCCESS && inst != 0 && sync && fsync(fd) != 0) {
    river_ctx_log(ctx, RIVER_LOG_ERROR, "fsync of %s: %s", tmp,
                  strerror(errno));
    rc = RIVER_EIO;
  }
  if (inst != 0)
    crc = close(fd);
  if (rc == RIVER_SUCCESS && crc != 0) {
    river_ctx_log(ctx, RIVER_LOG_ERROR, "writing %s: %s", tmp,
                  strerror(errno));
    rc = RIVER_EIO;
  }
  rc = river_ctx_agree(ctx, rc);
  if (rc == RIVER_SUCCESS)
    rc = tiles(ctx, &w, tmp, rs, &total);
  rc = river_ctx_agree(ctx, rc);
  /* Published (renamed over path) only once the whole flow has
   * succeeded on every rank: river_ctx_at_end. */
  if (rc == RIVER_SUCCESS && inst == 0)
    rc = river_ctx_at_end(ctx, end_file, of);
  if (rc != RIVER_SUCCESS)
    river_outfile_discard(of);   /* NULL off instance 0 */
  free(w.ext);
  return rc;
}

/* ------------------------------------------------------- registration */

void river__module_file_read(void)
{
  river_module_decl d = RIVER_MODULE_DECL_INIT;

  d.min_outputs = d.max_outputs = 1;
  d.shares_rank = 1;
  d.args = "path:str,schema:str=,disk_rate:size=0";
  d.schema = read_schema;
  d.doc = "read a flat file of records (schema; default gensort's), split "
          "by whole records among the instances";
  river_module_register("file_read", file_read, &d, NULL);
}

/* Before the flow runs: each instance's file may be written. */
static int file_write_check(river_ctx *ctx)
{
  const char *path = "";
  char final[4096];
  int replace = 0, i, ninst, rc = RIVER_SUCCESS;

  river_arg_str(ctx, "path", &path);
  river_arg_bool(ctx, "replace", &replace);
  river_ctx_instance(ctx, NULL, &ninst);
  for (i = 0; i < ninst && rc == RIVER_SUCCESS; i++) {
    if (ninst == 1)
      snprintf(final, sizeof final, "%s", path);
    else
      snprintf(final, sizeof final, "%s.%d", path, i);
    rc = river__file_replaceable(ctx, final, replace);
  }
  return rc;
}

void river__module_file_write(void)
{
  river_module_decl d = RIVER_MODULE_DECL_INIT;

  d.min_inputs = d.max_inputs = 1;
  d.shares_rank = 1;
  d.args = "path:str,sync:bool=true,root:str=,replace:bool=false";
  d.check = file_write_check;
  d.doc = "write the records to a flat file: PATH (one instance) or "
          "PATH.INSTANCE (several); a file already there is refused unless "
          "replace: true";
  river_module_register("file_write", file_write, &d, NULL);
}
