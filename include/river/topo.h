/*
 * river/topo.h - the machine a rank runs on, as hwloc sees it.
 *
 * Part of the River API; include <river.h> rather than this file.
 */
#ifndef RIVER_TOPO_H
#define RIVER_TOPO_H

#include <stddef.h>
#include "river/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Describe where the calling process runs as one line of text, e.g.
 *   "host=node07 packages=2 cores=32 pus=64 numa=2 bound=pu:0-1"
 * (bound=... lists the PUs this process may run on; "none" if unbound,
 * i.e. allowed everywhere). Not collective; does not need MPI.
 *
 * IN/OUT len: on entry the size of buf; on success the string's length
 * (without the NUL). RIVER_ENOBUFS if buf is too small, with *len set to
 * the size needed (with the NUL) and buf untouched. RIVER_ETOPO if hwloc
 * fails.
 */
RIVER_API int river_topo_describe(char *buf, size_t *len);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_TOPO_H */
