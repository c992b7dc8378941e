/*
 * number.h - the one parser of integer option values that the river
 * command (apps/cli/) and river-bench (apps/bench/) share, over the
 * library's river_parse_size (river/units.h), so that `--records 1M`
 * means the same in both and in a flow spec: 1,000,000 (`1Mi`:
 * 1,048,576).
 */
#ifndef RIVER_APPS_NUMBER_H
#define RIVER_APPS_NUMBER_H

#include <river.h>

#include <stdint.h>

/* Parse an integer option value in [min, max]; on failure rank 0 logs
 * "OPT VALUE: expected an integer in MIN..MAX" (every rank parses the
 * same arguments: said once) and it returns RIVER_EINVAL.
 * When allow_suffix, takes river_parse_size's suffixes (k, M, G, T:
 * x1000; Ki, Mi, Gi, Ti: x1024) and the message ends with them,
 * " (" RIVER_SIZE_SUFFIXES ")"; else digits alone. */
int app_parse_u64(const char *opt, const char *val, uint64_t min,
                  uint64_t max, int allow_suffix, uint64_t *out);

/* The command line was wrong (an unknown option, a bad value, a missing
 * or extra argument): the parser that found it has said what, and calls
 * this; the program then exits 2 (usage) rather than 1 (failure), the
 * same on every rank (doc/guide.md, "Exit codes"). */
void app_usage_error(void);

/* Whether app_usage_error was called on this rank. */
int app_usage_seen(void);

/* Sizes and rates as every command prints them (river_format_size):
 * bytes as "105 MB", a rate in bytes/s as "105 MB/s", written in buf
 * (APP_SIZE_TEXT bytes), which is returned, for printf's arguments. */
#define APP_SIZE_TEXT (RIVER_SIZE_TEXT_MAX + 2)
const char *app_size(uint64_t bytes, char *buf);
const char *app_rate(double bytes_per_s, char *buf);

#endif /* RIVER_APPS_NUMBER_H */
