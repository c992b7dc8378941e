/*
 * river_internal.h - declarations shared by River's source files and never
 * installed. Internal non-static names carry the river__ prefix.
 */
#ifndef RIVER_INTERNAL_H
#define RIVER_INTERNAL_H

#include "config.h"
#include "river.h"

#include <stddef.h>

/* Rank in MPI_COMM_WORLD for log prefixes, or -1 when MPI is not up. */
int river__log_rank(void);

/* Read RIVER_LOG into the log level (warns on a value it cannot parse). */
void river__log_init_from_env(void);

/* Copy the NUL-terminated str into buf following the caller-buffer
 * contract of river_build_info() and river_topo_describe(). */
int river__copy_out(const char *str, char *buf, size_t *len);

/* Shorthands for the internal logger. */
#define river__error(...) river_log(RIVER_LOG_ERROR, __VA_ARGS__)
#define river__warn(...)  river_log(RIVER_LOG_WARN, __VA_ARGS__)
#define river__info(...)  river_log(RIVER_LOG_INFO, __VA_ARGS__)
#define river__debug(...) river_log(RIVER_LOG_DEBUG, __VA_ARGS__)

#endif /* RIVER_INTERNAL_H */
