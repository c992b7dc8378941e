/*
 * river/cpu_hog.h - a real CPU perturber for real clusters, where
 * emulation is not wanted (src/cpu_hog.c): a thread spinning on the
 * rank's core, bound with hwloc, stealing a duty cycle.
 *
 * Part of the River API; include <river.h> rather than this file.
 */
#ifndef RIVER_CPU_HOG_H
#define RIVER_CPU_HOG_H

#include "river/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------- real CPU perturber */

typedef struct river_cpu_hog river_cpu_hog;

/*
 * Start a thread that steals `fraction` (0 < fraction < 1) of the core
 * this process is bound to: it spins for fraction x 10 ms, sleeps the
 * rest, over and over; bound with hwloc to the same PUs as the calling
 * process. It steals from the rank's core only if the rank is bound to
 * one (the launcher's binding, or river_topo_bind, before or after this
 * call: river topo shows it); unbound, it may run on any PU (logged at
 * info). For real clusters, where emulation is not wanted. RIVER_ETOPO
 * if hwloc cannot bind it.
 */
RIVER_API int river_cpu_hog_start(double fraction, river_cpu_hog **out);

/* Stop and join the thread; NULL is a no-op. */
RIVER_API int river_cpu_hog_stop(river_cpu_hog *h);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_CPU_HOG_H */
