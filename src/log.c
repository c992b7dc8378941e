/*
 * log.c - River's one logger.
 *
 * A level (messages above it are dropped before formatting) and an
 * optional handler; without a handler, each message is one write of
 * "river[RANK] LEVEL: message\n" to stderr so that lines from many ranks
 * do not interleave mid-line.
 */
#include "river_internal.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static int level_cur = RIVER_LOG_WARN;
static river_log_fn handler;
static void *handler_ctx;
static int hushed;   /* > 0: every message at debug level */

static const char *const level_names[] = {"error", "warn", "info",
                                                "debug"};

static int level_valid(int level)
{
  return level >= RIVER_LOG_ERROR && level <= RIVER_LOG_DEBUG;
}

const char *river_log_level_name(int level)
{
  return level_valid(level) ? level_names[level] : "unknown";
}

int river_log_parse_level(const char *name, int *level)
{
  int i;

  if (name == NULL || level == NULL)
    return RIVER_EINVAL;
  for (i = RIVER_LOG_ERROR; i <= RIVER_LOG_DEBUG; i++) {
    if (strcasecmp(name, level_names[i]) == 0) {
      *level = i;
      return RIVER_SUCCESS;
    }
  }
  return RIVER_EINVAL;
}

int river_log_set_level(int level)
{
  if (!level_valid(level))
    return RIVER_EINVAL;
  level_cur = level;
  return RIVER_SUCCESS;
}

int river_log_get_level(int *level)
{
  if (level == NULL)
    return RIVER_EINVAL;
  *level = level_cur;
  return RIVER_SUCCESS;
}

int river_log_set_handler(river_log_fn fn, void *ctx)
{
  handler = fn;
  handler_ctx = fn ? ctx : NULL;
  return RIVER_SUCCESS;
}

void river__log_hush(int on)
{
  hushed += on ? 1 : -1;
}

void river__log_init_from_env(void)
{
  const char *env = getenv("RIVER_LOG");
  int level;

  if (env == NULL || *env == '\0')
    return;
  if (river_log_parse_level(env, &level) == RIVER_SUCCESS)
    level_cur = level;
  else
    river__warn("RIVER_LOG=%s not understood (use error, warn, info or "
                "debug); keeping level %s",
                env, river_log_level_name(level_cur));
}

int river__log_rank(void)
{
  int up = 0, down = 0, rank;

  if (MPI_Initialized(&up) != MPI_SUCCESS || !up)
    return -1;
  if (MPI_Finalized(&down) != MPI_SUCCESS || down)
    return -1;
  if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS)
    return -1;
  return rank;
}

static unsigned long errors_said;   /* errors said (not hushed) */

unsigned long river__log_errors(void)
{
  return errors_said;
}

int river_vlog(int level, const char *fmt, va_list ap)
{
  char msg[1024], line[1100];
  int rank, n;
  char rankbuf[16];

  if (!level_valid(level) || fmt == NULL)
    return RIVER_EINVAL;
  if (hushed > 0)
    level = RIVER_LOG_DEBUG;
  if (level == RIVER_LOG_ERROR)
    errors_said++;
  if (level > level_cur)
    return RIVER_SUCCESS;

  vsnprintf(msg, sizeof msg, fmt, ap);  /* long messages are truncated */
  rank = river__log_rank();
  if (handler) {
    handler(level, rank, msg, handler_ctx);
    return RIVER_SUCCESS;
  }
  if (rank >= 0)
    snprintf(rankbuf, sizeof rankbuf, "%d", rank);
  else
    strcpy(rankbuf, "-");
  n = snprintf(line, sizeof line, "river[%s] %s: %s\n", rankbuf,
               level_names[level], msg);
  if (n < 0)
    return RIVER_EINVAL;
  if ((size_t)n >= sizeof line) {
    n = sizeof line - 1;
    line[n - 1] = '\n';
  }
  /* One write per message: lines from different ranks stay whole. */
  if (write(STDERR_FILENO, line, (size_t)n) < 0)
    return RIVER_EIO;
  return RIVER_SUCCESS;
}

int river_log(int level, const char *fmt, ...)
{
  va_list ap;
  int rc;

  va_start(ap, fmt);
  rc = river_vlog(level, fmt, ap);
  va_end(ap);
  return rc;
}
