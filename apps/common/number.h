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

#endif /* RIVER_APPS_NUMBER_H */
