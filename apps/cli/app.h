/*
 * app.h - what the river command's writers (sort.c, join.c, coll.c)
 * share: their endpoints (a collection, or file:PATH), the refusal of
 * an existing OUT, and the flow params they fill in from options.
 */
#ifndef RIVER_APPS_CLI_APP_H
#define RIVER_APPS_CLI_APP_H

#include "coll.h"

#include <stddef.h>

/* The path of a file: endpoint, or NULL for a collection name. */
const char *app_file_path(const char *endpoint);

/* OUT (a collection, or file:PATH) must not exist unless --force: then
 * the application replaces it when it commits, and a failed run leaves it
 * as it was. `who` names the command in the message. Collective: every
 * rank returns the same code. */
int app_refuse_existing(const char *who, const char *out,
                        const river_pcoll_opts *opts);

/* "key=value" into buf, or 0 (said on rank 0, naming `who` and the
 * option --key) if it does not fit: a value is never cut short. */
int app_param(const char *who, char *buf, size_t len, const char *key,
              const char *value);

/* An emulated rate option `opt` (bytes/s, river_parse_size's suffixes:
 * 40M is 40,000,000; at least the flows' least emulated rate, 1024
 * bytes/s) as a number of bytes/s into *rate and the param key=value
 * into buf; 0 if val is NULL (absent). */
int app_rate_param(const char *opt, const char *val, const char *key,
                   double *rate, char *buf, size_t len);

#endif /* RIVER_APPS_CLI_APP_H */
