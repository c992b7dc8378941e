/*
 * number.h - the one parser of integer option values that the river
 * command (apps/cli/) and river-bench (apps/bench/) share, so that
 * `--records 1M` means the same in both.
 */
#ifndef RIVER_APPS_NUMBER_H
#define RIVER_APPS_NUMBER_H

#include <river.h>

#include <stdint.h>

/* Parse an integer option value in [min, max]; on failure rank 0 logs
 * "OPT VALUE: expected an integer in MIN..MAX" (every rank parses the
 * same arguments: said once) and it returns RIVER_EINVAL.
 * Accepts suffixes k, M, G (powers of 1024) when allow_suffix. */
int app_parse_u64(const char *opt, const char *val, uint64_t min,
                  uint64_t max, int allow_suffix, uint64_t *out);

/* The command line was wrong (an unknown option, a bad value, a missing
 * or extra argument): the parser that found it has said what, and calls
 * this; the program then exits 2 (usage) rather than 1 (failure), the
 * same on every rank (doc/guide.md, "Exit codes"). */
void app_usage_error(void);

/* Whether app_usage_error was called on this rank. */
int app_usage_seen(void);

#endif /* RIVER_APPS_NUMBER_H */
