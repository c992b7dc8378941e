/*
 * throttle_internal.h - what the emulation files share: throttle.c (the
 * token bucket) defines these, perturb.c and cpu_hog.c use them. Private:
 * never installed.
 */
#ifndef RIVER_THROTTLE_INTERNAL_H
#define RIVER_THROTTLE_INTERNAL_H

/* Sleep until river_wtime() >= target, however often nanosleep wakes
 * early; never spins. An infinite target sleeps forever. */
void river__sleep_until(double target);

/* 1 if x is a finite number > 0 (NaN fails every comparison). */
int river__positive_finite(double x);

#endif /* RIVER_THROTTLE_INTERNAL_H */
