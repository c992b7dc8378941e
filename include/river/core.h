/*
 * river/core.h - initialisation, versions, error codes, logging, timing.
 *
 * Part of the River API; include <river.h> rather than this file.
 */
#ifndef RIVER_CORE_H
#define RIVER_CORE_H

#include <stddef.h>
#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the symbols libriver exports; everything else is hidden. */
#if defined(RIVER_BUILDING_LIBRARY) && defined(__GNUC__)
#define RIVER_API __attribute__((visibility("default")))
#else
#define RIVER_API
#endif

#if defined(__GNUC__)
#define RIVER_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define RIVER_PRINTF(f, a)
#endif

/* ------------------------------------------------------------------ errors
 * The one table of error codes. It generates the enum below,
 * river_strerror(), river_err_name() and the Fortran constants, so a code
 * and its message cannot drift apart. Codes are negative and stable: new
 * ones are appended, none is ever renumbered. RIVER_EOS (positive) is
 * not an error: it is the status of a read past the end of a stream.
 */
#define RIVER_ERRNO_MAP(X)                                                   \
  X(SUCCESS,    0, "success")                                                \
  X(EINVAL,    -1, "invalid argument")                                       \
  X(ENOMEM,    -2, "out of memory")                                          \
  X(ESTATE,    -3, "call not valid in the current state")                    \
  X(EMPI,      -4, "an MPI call failed")                                     \
  X(EIO,       -5, "input/output error")                                     \
  X(ENOBUFS,   -6, "buffer too small")                                       \
  X(ENOTFOUND, -7, "not found")                                              \
  X(EEXIST,    -8, "already exists")                                         \
  X(ECORRUPT,  -9, "data corrupt or inconsistent")                          \
  X(EFORMAT,  -10, "malformed input")                                        \
  X(EOVERFLOW,-11, "value too large")                                        \
  X(ENOTSUP,  -12, "not supported")                                          \
  X(EHDF5,    -13, "an HDF5 call failed")                                    \
  X(ETOPO,    -14, "a hwloc topology call failed")                         \
  X(EAGAIN,   -15, "not ready: try again")                                 \
  X(EACCES,   -16, "permission denied")                                    \
  X(EBUSY,    -17, "in use by another job")                                \
  X(EVALIDATE,-18, "validation failed")                                    \
  X(ETIMEDOUT,-19, "no progress within the time limit")                   \
  X(EOS,        1, "end of stream")

typedef enum river_errno {
#define RIVER__ERRNO_ENUM(name, code, msg) RIVER_##name = (code),
  RIVER_ERRNO_MAP(RIVER__ERRNO_ENUM)
#undef RIVER__ERRNO_ENUM
} river_errno;

/* A message for err (any int). Never NULL; unknown codes give
 * "unknown error code". The string is static: do not free it. */
RIVER_API const char *river_strerror(int err);

/* The code's name, e.g. "RIVER_EINVAL". Never NULL; unknown codes give
 * "RIVER_EUNKNOWN". The string is static: do not free it. */
RIVER_API const char *river_err_name(int err);

/* ------------------------------------------------------------- lifecycle */

/*
 * Initialise River. Collective over MPI_COMM_WORLD when it initialises MPI.
 *
 * If MPI is not yet initialised, River calls MPI_Init_thread (requesting
 * MPI_THREAD_FUNNELED) with argc/argv and will finalise MPI in the matching
 * river_finalize(); if the caller already initialised MPI, River leaves MPI
 * alone in both calls. argc and argv are both NULL or both non-NULL
 * (RIVER_EINVAL otherwise). Calls nest: each river_init() needs one
 * river_finalize(), and only the last one finalises. After MPI has been
 * finalised, River cannot be initialised (RIVER_ESTATE).
 *
 * Also reads RIVER_LOG (error|warn|info|debug) to set the log level.
 */
RIVER_API int river_init(int *argc, char ***argv);

/* Undo one river_init(). RIVER_ESTATE if River is not initialised. */
RIVER_API int river_finalize(void);

/* *flag = 1 if River is initialised (by any unmatched river_init). */
RIVER_API int river_initialized(int *flag);

/* ---------------------------------------------------------------- version */

/* The version of the library linked at run time (compare with the
 * RIVER_VERSION_* macros of the header compiled against). */
RIVER_API int river_get_version(int *major, int *minor, int *release);

/*
 * Describe this River build and the libraries it runs on (River, MPI,
 * HDF5, hwloc versions) as one line of text in buf.
 *
 * IN/OUT len: on entry the size of buf in bytes; on success the string's
 * length (without the NUL). If buf is too small, returns RIVER_ENOBUFS and
 * sets *len to the size needed (with the NUL); buf is left untouched.
 * Works before river_init, without MPI being initialised.
 */
RIVER_API int river_build_info(char *buf, size_t *len);

/* ---------------------------------------------------------------- logging
 * One logger for the library and its apps. Messages go to stderr as
 *   river[RANK] LEVEL: message
 * where RANK is the rank in MPI_COMM_WORLD ("-" before MPI is
 * initialised), unless a handler is installed. The level comes from
 * RIVER_LOG (read by river_init) or river_log_set_level; the default is
 * warn. Messages above the level are dropped cheaply.
 */
typedef enum river_log_level {
  RIVER_LOG_ERROR = 0,
  RIVER_LOG_WARN  = 1,
  RIVER_LOG_INFO  = 2,
  RIVER_LOG_DEBUG = 3
} river_log_level;

/* Receives each message that passes the level: the level, the rank
 * (-1 when unknown), the formatted message without newline, and ctx. */
typedef void (*river_log_fn)(int level, int rank, const char *msg, void *ctx);

/* Log a printf-style message at level (RIVER_LOG_ERROR..RIVER_LOG_DEBUG). */
RIVER_API int river_log(int level, const char *fmt, ...) RIVER_PRINTF(2, 3);
RIVER_API int river_vlog(int level, const char *fmt, va_list ap)
    RIVER_PRINTF(2, 0);

RIVER_API int river_log_set_level(int level);
RIVER_API int river_log_get_level(int *level);

/* Parse "error", "warn", "info" or "debug" (case-insensitive) into *level.
 * RIVER_EINVAL for anything else. */
RIVER_API int river_log_parse_level(const char *name, int *level);

/* The level's name ("error".."debug"); "unknown" for other values. */
RIVER_API const char *river_log_level_name(int level);

/* Send messages to fn(…, ctx) instead of stderr; fn == NULL restores the
 * default. Not thread-safe against concurrent river_log calls. */
RIVER_API int river_log_set_handler(river_log_fn fn, void *ctx);

/* ----------------------------------------------------------------- timing */

/* Seconds on a monotonic wall clock (arbitrary origin). Works before
 * river_init and without MPI. */
RIVER_API double river_wtime(void);

/* An accumulating stopwatch: start/stop pairs add up in total.
 * Plain data; initialise with river_timer_reset or RIVER_TIMER_INIT. */
typedef struct river_timer {
  double start;   /* river_wtime() at the last start, when running */
  double total;   /* seconds accumulated over completed start/stop pairs */
  int running;    /* 1 between start and stop */
} river_timer;

#define RIVER_TIMER_INIT {0.0, 0.0, 0}

RIVER_API int river_timer_reset(river_timer *t);
/* RIVER_ESTATE if already running. */
RIVER_API int river_timer_start(river_timer *t);
/* RIVER_ESTATE if not running. */
RIVER_API int river_timer_stop(river_timer *t);
/* Total seconds, including the current run if the timer is running. */
RIVER_API int river_timer_elapsed(const river_timer *t, double *seconds);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_CORE_H */
