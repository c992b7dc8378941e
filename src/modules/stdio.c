/*
 * stdio.c - flows in a shell pipe. Module `stdin` reads records (of its
 * `schema` argument, by default the 100-byte gensort record) from
 * standard input on instance 0 (the others produce nothing); module
 * `stdout` writes its input's records, raw bytes in arrival order, to
 * standard output, on one instance only. Neither waits on the pipe
 * while it is not ready: it polls and, until the pipe is, yields to the
 * other stages on its rank. River's own messages go to standard error
 * (`river run` prints its totals there when a flow has a stdout stage).
 */
#include "modules.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STDIO_CHUNK ((size_t)256 << 10)  /* bytes read at a time */

/* Wait (yielding) until fd is ready for events; 0, or -1 with errno
 * (ECANCELED if the flow failed elsewhere or River's watchdog fired). */
static int ready(river_ctx *ctx, int fd, short events)
{
  struct pollfd p;
  int k;

  for (;;) {
    p.fd = fd;
    p.events = events;
    p.revents = 0;
    k = poll(&p, 1, 0);
    if (k > 0)
      return 0;  /* ready, at its end, or in error: the call will say */
    if (k < 0 && errno != EINTR)
      return -1;
    if (river_ctx_yield(ctx) != RIVER_SUCCESS) {
      errno = ECANCELED;
      return -1;
    }
  }
}

static int stdin_schema(river_ctx *ctx, int output, river_schema **schema)
{
  const char *text = "";

  (void)output;
  river_arg_str(ctx, "schema", &text);
  return text[0] ? river_schema_parse(text, schema)
                 : river_schema_create_default(schema);
}

/* Read what standard input has (one read) after buf[*have]; *eof at its
 * end. */
static int read_some(river_ctx *ctx, unsigned char *buf, size_t cap,
                     size_t *have, int *eof)
{
  ssize_t k;

  if (ready(ctx, STDIN_FILENO, POLLIN) != 0)
    k = -1;
  else
    while ((k = read(STDIN_FILENO, buf + *have, cap - *have)) < 0
           && errno == EINTR)
      ;
  if (k < 0 && errno == EAGAIN)
    return RIVER_SUCCESS;   /* poll said yes, the read says not yet */
  if (k < 0) {
    river_ctx_log(ctx, RIVER_LOG_ERROR, "reading standard input: %s",
                  strerror(errno));
    return RIVER_EIO;
  }
  *have += (size_t)k;
  *eof = k == 0;
  return RIVER_SUCCESS;
}

static int stdin_mod(river_ctx *ctx)
{
  const river_schema *s;
  unsigned char *buf;
  size_t rs = 0, cap, have = 0, whole;
  int inst, eof = 0, rc = RIVER_SUCCESS;

  river_ctx_instance(ctx, &inst, NULL);
  if (inst != 0)
    return RIVER_SUCCESS;
  river_output_schema(ctx, 0, &s);
  river_schema_record_size(s, &rs);
  cap = STDIO_CHUNK < rs ? rs : STDIO_CHUNK / rs * rs;
  if ((buf = malloc(cap)) == NULL)
    return RIVER_ENOMEM;
  while (!eof && rc == RIVER_SUCCESS) {
    rc = read_some(ctx, buf, cap, &have, &eof);
    whole = have / rs;
    if (rc == RIVER_SUCCESS && whole > 0) {
      rc = river_put(ctx, 0, buf, whole);
      memmove(buf, buf + whole * rs, have - whole * rs);
      have -= whole * rs;
    }
  }
  if (rc == RIVER_SUCCESS && have > 0) {
    river_ctx_log(ctx, RIVER_LOG_ERROR, "standard input ends with %zu bytes, "
                  "not a whole %zu-byte record", have, rs);
    rc = RIVER_ECORRUPT;
  }
  free(buf);
  return rc;
}

/* Write len bytes to standard output, yielding while the pipe is full. */
static int out_all(river_ctx *ctx, const unsigned char *p, size_t len)
{
  ssize_t k;

  while (len > 0) {
    if (ready(ctx, STDOUT_FILENO, POLLOUT) != 0)
      return -1;
    k = write(STDOUT_FILENO, p, len);
    if (k < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (k <= 0)
      return -1;
    p += k;
    len -= (size_t)k;
  }
  return 0;
}

static int stdout_mod(river_ctx *ctx)
{
  const river_schema *s;
  const void *recs;
  size_t rs = 0, n;
  int inst, ninst, rc, wrc = RIVER_SUCCESS;

  river_ctx_instance(ctx, &inst, &ninst);
  if (ninst > 1) {
    if (inst == 0)
      river_ctx_log(ctx, RIVER_LOG_ERROR, "module stdout runs as one "
                    "instance (it has %d): give its stage one rank", ninst);
    return RIVER_EINVAL;
  }
  river_input_schema(ctx, 0, &s);
  river_schema_record_size(s, &rs);
  while ((rc = river_get(ctx, 0, &recs, &n)) == RIVER_SUCCESS)
    if (wrc == RIVER_SUCCESS && out_all(ctx, recs, n * rs) != 0) {
      river_ctx_log(ctx, RIVER_LOG_ERROR, "writing standard output: %s",
                    strerror(errno));
      wrc = RIVER_EIO;   /* keep reading: upstream must not block */
    }
  return rc == RIVER_EOS ? wrc : rc;
}

void river__module_stdin(void)
{
  river_module_decl d = RIVER_MODULE_DECL_INIT;

  d.min_outputs = d.max_outputs = 1;
  d.shares_rank = 1;
  d.args = "schema:str=";
  d.schema = stdin_schema;
  d.doc = "records from standard input (instance 0; schema, default "
          "gensort's)";
  river_module_register("stdin", stdin_mod, &d, NULL);
}

void river__module_stdout(void)
{
  river_module_decl d = RIVER_MODULE_DECL_INIT;

  d.min_inputs = d.max_inputs = 1;
  d.shares_rank = 1;
  d.doc = "records to standard output, raw, in arrival order (one "
          "instance)";
  river_module_register("stdout", stdout_mod, &d, NULL);
}
