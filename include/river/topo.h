/*
 * river/topo.h - the machine a rank runs on, as hwloc sees it.
 *
 * Part of the River API; include <river.h> rather than this file.
 */
#ifndef RIVER_TOPO_H
#define RIVER_TOPO_H

#include <stddef.h>
#include <mpi.h>
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

/* The longest node name river_topo_bind takes, with its NUL. */
#define RIVER_NODE_NAME_MAX 256

/* What river_topo_bind did (its *outcome). */
#define RIVER_BIND_DONE 1  /* bound the process to a core */
#define RIVER_BIND_KEPT 2  /* it was bound already: left as it was */

/*
 * Bind each rank of comm to one core of its node, unless it is bound
 * already (the launcher, Slurm or taskset did: its binding is not every
 * PU hwloc sees); collective. The ranks of comm with the same
 * river_node_name are numbered 0..L-1 in rank order and spread over the
 * node's C cores (those hwloc shows this process): local index i gets
 * core i*C/L if L <= C, else core i mod C (ranks share cores). The
 * binding is the whole process's, every thread (so a river_cpu_hog, begun
 * before or after, runs on the rank's core). *outcome: RIVER_BIND_DONE or
 * RIVER_BIND_KEPT. RIVER_ETOPO on every rank (logged by the rank that
 * failed) if hwloc fails on any; RIVER_EOVERFLOW if a node name has
 * RIVER_NODE_NAME_MAX bytes or more.
 */
RIVER_API int river_topo_bind(MPI_Comm comm, int *outcome);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_TOPO_H */
