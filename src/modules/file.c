/*
 * file.c - flat files of records in flows. Module `file_read` splits a
 * file of fixed-size records (of its `schema` argument, by default the
 * 100-byte gensort record) by whole records among its instances,
 * instance i reading records [N i/n, N (i+1)/n) with pread straight
 * into its output's messages. Module `file_write` writes its input's
 * records in arrival order: with one instance to PATH, with several
 * each instance to PATH.INSTANCE; each file is written under a
 * temporary name beside it and renamed into place when complete.
 */
#include "modules.h"

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
 * *fd open, or an error logged at level (naming the stage and path). */
static int open_records(river_ctx *ctx, int level, const char *path,
                        size_t rs, int *fd, uint64_t *nrec)
{
  struct stat st;
  int err;

  *fd = open(path, O_RDONLY | O_CLOEXEC);
  if (*fd < 0 || fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    err = *fd < 0 ? errno : 0;
    if (*fd >= 0)
      close(*fd);
    *fd = -1;
    river__flow_log(level, ctx->stage->origin, "stage '%s': cannot read "
                    "%s: %s", ctx->stage->name, path,
                    err ? strerror(err) : "not a regular file");
    return err == ENOENT ? RIVER_ENOTFOUND
           : err == EACCES ? RIVER_EACCES : RIVER_EIO;
  }
  if ((uint64_t)st.st_size % rs != 0) {
    river__flow_log(level, ctx->stage->origin, "stage '%s': %s: %llu bytes "
                    "are not a whole number of %zu-byte records",
                    ctx->stage->name, path, (unsigned long long)st.st_size,
                    rs);
    close(*fd);
    *fd = -1;
    return RIVER_ECORRUPT;
  }
  *nrec = (uint64_t)st.st_size / rs;
  return RIVER_SUCCESS;
}

/* At check time: the schema argument, and a readable file of whole
 * records (said once, by the rank that prints check's messages). */
static int read_schema(river_ctx *ctx, int output, river_schema **schema)
{
  const char *path = "";
  size_t rs = 0;
  uint64_t n;
  int fd, rc;

  (void)output;
  rc = arg_schema(ctx, schema);
  if (rc != RIVER_SUCCESS)
    return rc;   /* check has said what is wrong with it */
  river_schema_record_size(*schema, &rs);
  river_arg_str(ctx, "path", &path);
  rc = open_records(ctx, river__flow_check_level(ctx->flow), path, rs, &fd,
                    &n);
  if (rc == RIVER_SUCCESS)
    close(fd);
  else {
    river_schema_destroy(*schema);
    *schema = NULL;
  }
  return rc;
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
      river__error("stage %s: reading %s at byte %llu: %s",
                   river_ctx_stage(ctx), path,
                   (unsigned long long)(first * rs + done),
                   k < 0 ? strerror(errno) : "the file got shorter");
      return RIVER_EIO;
    }
    done += (size_t)k;
  }
  return RIVER_SUCCESS;
}

static int file_read(river_ctx *ctx)
{
  const river_schema *s;
  const char *path = "";
  uint64_t nrec, first, end;
  size_t rs = 0, max, k;
  int inst, ninst, fd, rc;
  void *buf;

  river_output_schema(ctx, 0, &s);
  river_schema_record_size(s, &rs);
  river_arg_str(ctx, "path", &path);
  river_ctx_instance(ctx, &inst, &ninst);
  rc = open_records(ctx, RIVER_LOG_ERROR, path, rs, &fd, &nrec);
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
      rc = river_commit(ctx, 0, k);
    first += k;
  }
  close(fd);
  return rc;
}

/* ------------------------------------------------------------ writing */

/* Write all of len bytes at p to fd. */
static int write_all(int fd, const void *p, size_t len)
{
  const char *c = p;
  ssize_t k;

  while (len > 0) {
    k = write(fd, c, len);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return -1;
    c += k;
    len -= (size_t)k;
  }
  return 0;
}

static int file_write(river_ctx *ctx)
{
  const river_schema *s;
  const char *path = "";
  char final[4096], tmp[4200];
  const void *recs;
  size_t rs = 0, n;
  int inst, ninst, fd, rc, wrc = RIVER_SUCCESS;

  river_input_schema(ctx, 0, &s);
  river_schema_record_size(s, &rs);
  river_arg_str(ctx, "path", &path);
  river_ctx_instance(ctx, &inst, &ninst);
  if (ninst == 1)
    snprintf(final, sizeof final, "%s", path);
  else
    snprintf(final, sizeof final, "%s.%d", path, inst);
  snprintf(tmp, sizeof tmp, "%s.river-tmp.%d", final, (int)getpid());
  fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    river__error("stage %s: cannot create %s: %s", river_ctx_stage(ctx),
                 tmp, strerror(errno));
    return errno == EACCES ? RIVER_EACCES : RIVER_EIO;
  }
  while ((rc = river_get(ctx, 0, &recs, &n)) == RIVER_SUCCESS)
    if (wrc == RIVER_SUCCESS && write_all(fd, recs, n * rs) != 0) {
      river__error("stage %s: writing %s: %s", river_ctx_stage(ctx), tmp,
                   strerror(errno));
      wrc = RIVER_EIO;   /* keep reading: upstream must not block */
    }
  if (rc == RIVER_EOS)
    rc = wrc;
  if (close(fd) != 0 && rc == RIVER_SUCCESS) {
    river__error("stage %s: writing %s: %s", river_ctx_stage(ctx), tmp,
                 strerror(errno));
    rc = RIVER_EIO;
  }
  if (rc == RIVER_SUCCESS && rename(tmp, final) != 0) {
    river__error("stage %s: cannot rename %s to %s: %s",
                 river_ctx_stage(ctx), tmp, final, strerror(errno));
    rc = RIVER_EIO;
  }
  if (rc != RIVER_SUCCESS)
    unlink(tmp);
  return rc;
}

/* ------------------------------------------------------- registration */

void river__module_file_read(void)
{
  river_module_decl d = RIVER_MODULE_DECL_INIT;

  d.min_outputs = d.max_outputs = 1;
  d.shares_rank = 1;
  d.args = "path:str,schema:str=";
  d.schema = read_schema;
  d.doc = "read a flat file of records (schema; default gensort's), split "
          "by whole records among the instances";
  river_module_register("file_read", file_read, &d, NULL);
}

void river__module_file_write(void)
{
  river_module_decl d = RIVER_MODULE_DECL_INIT;

  d.min_inputs = d.max_inputs = 1;
  d.shares_rank = 1;
  d.args = "path:str";
  d.doc = "write the records to a flat file: PATH (one instance) or "
          "PATH.INSTANCE (several)";
  river_module_register("file_write", file_write, &d, NULL);
}
