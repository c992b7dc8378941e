/*
 * river.h - the public C API of River, an MPI data-flow environment and
 * I/O substrate (see doc/design.md).
 *
 * This umbrella header includes one header per concept under river/.
 * Conventions, true of every function unless its comment says otherwise:
 *   - functions that can fail return int: RIVER_SUCCESS (0) or a negative
 *     RIVER_E* code (river_strerror() explains it);
 *   - a failing call leaks nothing and leaves its outputs untouched;
 *   - NULL where a pointer is required gives RIVER_EINVAL;
 *   - the library never prints to stdout, exits or aborts: it logs
 *     through river_log() and returns codes.
 */
#ifndef RIVER_H
#define RIVER_H

#include "river/version.h"
#include "river/core.h"
#include "river/units.h"
#include "river/topo.h"
#include "river/checksum.h"
#include "river/schema.h"
#include "river/collection.h"
#include "river/pcoll.h"
#include "river/outfile.h"
#include "river/gensort.h"
#include "river/wait.h"
#include "river/dq.h"
#include "river/throttle.h"
#include "river/perturb.h"
#include "river/cpu_hog.h"
#include "river/gd.h"
#include "river/module.h"
#include "river/flow.h"
#include "river/progress.h"
#include "river/stats.h"
#include "river/valsort.h"

#endif /* RIVER_H */
