/*
 * throttle_internal.h - the token bucket's calls beyond river/throttle.h
 * (src/throttle.c), for its unit tests. Private: never installed.
 */
#ifndef RIVER_THROTTLE_INTERNAL_H
#define RIVER_THROTTLE_INTERNAL_H

#include <stddef.h>
#include "river/throttle.h"

/* Take `bytes` of tokens from t now, without waiting; returns the time
 * (river_wtime) at which t is out of the debt that leaves (now or
 * earlier if none): a caller that waits on its own terms (a flow stage's
 * emulated CPU, src/flow_io.c) waits until then. */
double river__throttle_take(river_throttle *t, size_t bytes);

/* Empty t's bucket as of now: from here on it earns tokens at its rate,
 * with none banked from before (an emulated disk that starts a timed run
 * with a block in hand would beat the ideal the run is measured by). */
void river__throttle_restart(river_throttle *t);

/* A flow stage's emulated CPU or disk (cpu_rate, disk_rate) at `rate`
 * bytes/s: the default bucket, but empty at its first use, having
 * earned nothing before it, and banking at most 50 ms of its own work
 * (at its current factor) while idle after it (throttle.c says why). */
int river__stage_throttle(double rate, river_throttle **out);

#endif /* RIVER_THROTTLE_INTERNAL_H */
