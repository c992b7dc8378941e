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
 * (host=... is river_node_name's; bound=... lists the PUs this process may run on; "none" if unbound,
 * i.e. allowed everywhere). Not collective; does not need MPI.
 *
 * IN/OUT len: on entry the size of buf; on success the string's length
 * (without the NUL). RIVER_ENOBUFS if buf is too small, with *len set to
 * the size needed (with the NUL) and buf untouched. RIVER_ETOPO if hwloc
 * fails.
 */
RIVER_API int river_topo_describe(char *buf, size_t *len);

/*
 * The name of the node the calling process runs on, as River uses it
 * (disk patterns' %n, river topo, reports): $RIVER_NODE_NAME if set and
 * not empty (emulated nodes set it: river-node-agent), else
 * $SLURMD_NODENAME (Slurm's name for the node, which differs between
 * several slurmd on one host), else the host name. Not collective; does
 * not need MPI. len as for river_topo_describe.
 */
RIVER_API int river_node_name(char *buf, size_t *len);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_TOPO_H */
