/*
 * topo.c - what hwloc knows about the machine a rank runs on, the name
 * of its node, and binding a job's ranks to their nodes' cores.
 *
 * Each call loads a fresh topology and destroys it before returning: the
 * calls are rare (start-up reports, one bind per job), so caching would
 * buy nothing and would need a lifecycle of its own. river_topo_bind
 * finds a rank's place on its node from every rank's river_node_name
 * (one allgather of fixed-size names), not from the launcher, so it
 * numbers ranks the same way under mpirun, srun and emulated nodes.
 */
#include "river_internal.h"

#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Number of objects of type in topo, or 0 if hwloc cannot tell. */
static int count_objs(hwloc_topology_t topo, hwloc_obj_type_t type)
{
  int n = hwloc_get_nbobjs_by_type(topo, type);

  return n < 0 ? 0 : n;
}

/* The PUs this process may run on into set; *bound 1 unless that is
 * every PU of topo. RIVER_ETOPO if hwloc cannot tell. */
static int get_binding(hwloc_topology_t topo, hwloc_bitmap_t set, int *bound)
{
  hwloc_const_bitmap_t all = hwloc_topology_get_topology_cpuset(topo);

  if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) < 0)
    return RIVER_ETOPO;
  *bound = !hwloc_bitmap_isincluded(all, set);
  return RIVER_SUCCESS;
}

/* Write the PUs this process may run on as "pu:LIST" ("none" if it may
 * run on every PU) into buf. Returns RIVER_ETOPO if hwloc fails. */
static int describe_binding(hwloc_topology_t topo, char *buf, size_t size)
{
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  char *list = NULL;
  int rc = RIVER_ETOPO, bound = 0;

  if (set == NULL)
    return RIVER_ENOMEM;
  if (get_binding(topo, set, &bound) != RIVER_SUCCESS)
    goto out;
  if (!bound) {
    snprintf(buf, size, "none");
  } else {
    if (hwloc_bitmap_list_asprintf(&list, set) < 0)
      goto out;
    snprintf(buf, size, "pu:%s", list);
  }
  rc = RIVER_SUCCESS;
out:
  free(list);
  hwloc_bitmap_free(set);
  return rc;
}

int river_node_name(char *buf, size_t *len)
{
  const char *vars[2] = {"RIVER_NODE_NAME", "SLURMD_NODENAME"};
  char host[256];
  int i;

  if (buf == NULL || len == NULL)
    return RIVER_EINVAL;
  for (i = 0; i < 2; i++) {
    const char *v = getenv(vars[i]);
    if (v != NULL && *v != '\0')
      return river__copy_out(v, buf, len);
  }
  if (gethostname(host, sizeof host) != 0)
    snprintf(host, sizeof host, "unknown");
  host[sizeof host - 1] = '\0';
  return river__copy_out(host, buf, len);
}

int river_topo_describe(char *buf, size_t *len)
{
  hwloc_topology_t topo;
  char host[256], bound[256], line[640];
  int rc;

  if (buf == NULL || len == NULL)
    return RIVER_EINVAL;
  if (hwloc_topology_init(&topo) < 0)
    return RIVER_ETOPO;
  if (hwloc_topology_load(topo) < 0) {
    rc = RIVER_ETOPO;
    goto out;
  }
  rc = describe_binding(topo, bound, sizeof bound);
  if (rc != RIVER_SUCCESS)
    goto out;
  {
    size_t hl = sizeof host;
    if (river_node_name(host, &hl) != RIVER_SUCCESS)
      snprintf(host, sizeof host, "unknown");
  }

  snprintf(line, sizeof line,
           "host=%s packages=%d cores=%d pus=%d numa=%d bound=%s", host,
           count_objs(topo, HWLOC_OBJ_PACKAGE),
           count_objs(topo, HWLOC_OBJ_CORE),
           count_objs(topo, HWLOC_OBJ_PU),
           count_objs(topo, HWLOC_OBJ_NUMANODE), bound);
  rc = river__copy_out(line, buf, len);
out:
  hwloc_topology_destroy(topo);
  return rc;
}

/* The calling rank's index among the ranks of comm on its node (those
 * with its river_node_name), in rank order, and their number. */
static int node_place(MPI_Comm comm, int *index, int *count)
{
  char *names = NULL, mine[RIVER_NODE_NAME_MAX];
  size_t len = sizeof mine;
  int rank, size, r, rc;

  memset(mine, 0, sizeof mine);
  rc = river_node_name(mine, &len);
  if (rc == RIVER_ENOBUFS) {
    river__error("bind: node name longer than %d bytes",
                 RIVER_NODE_NAME_MAX - 1);
    rc = RIVER_EOVERFLOW;
  }
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (rc == RIVER_SUCCESS
      && (names = malloc((size_t)size * RIVER_NODE_NAME_MAX)) == NULL)
    rc = RIVER_ENOMEM;
  /* Every rank takes part in the allgather, or none does. */
  rc = river__agree(comm, rc);
  if (rc == RIVER_SUCCESS)
    rc = river__allgather(mine, RIVER_NODE_NAME_MAX, MPI_CHAR, names, comm);
  if (rc == RIVER_SUCCESS) {
    *index = *count = 0;
    for (r = 0; r < size; r++) {
      if (strcmp(names + (size_t)r * RIVER_NODE_NAME_MAX, mine) != 0)
        continue;
      if (r < rank)
        (*index)++;
      (*count)++;
    }
  }
  free(names);
  return rc;
}

/* Bind this process to the core of topo that local index i of n gets:
 * i*C/n when the node's C cores are enough (spread over the machine),
 * else i mod C (ranks share cores). PUs stand in for cores where hwloc
 * knows none. */
static int bind_to_core(hwloc_topology_t topo, int i, int n)
{
  hwloc_obj_type_t type = HWLOC_OBJ_CORE;
  int c, ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  hwloc_obj_t obj;
  char *list = NULL;

  if (ncores <= 0) {
    type = HWLOC_OBJ_PU;
    ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  }
  if (ncores <= 0) {
    river__error("bind: hwloc finds no core on this node");
    return RIVER_ETOPO;
  }
  c = n <= ncores ? (int)((long long)i * ncores / n) : i % ncores;
  obj = hwloc_get_obj_by_type(topo, type, (unsigned)c);
  if (obj == NULL || obj->cpuset == NULL) {
    river__error("bind: hwloc has no core %d", c);
    return RIVER_ETOPO;
  }
  if (hwloc_set_cpubind(topo, obj->cpuset, HWLOC_CPUBIND_PROCESS) < 0) {
    river__error("bind: binding to core %d failed: %s", c, strerror(errno));
    return RIVER_ETOPO;
  }
  if (hwloc_bitmap_list_asprintf(&list, obj->cpuset) >= 0)
    river__debug("bind: rank %d of %d on this node: core %d (pu:%s)", i, n,
                 c, list);
  free(list);
  return RIVER_SUCCESS;
}

/* Bind this process as local index i of n on its node unless it is
 * bound already; *bound says whether it was. */
static int bind_here(int i, int n, int *bound)
{
  hwloc_topology_t topo;
  hwloc_bitmap_t set = NULL;
  int rc = RIVER_ETOPO;

  if (hwloc_topology_init(&topo) < 0) {
    river__error("bind: hwloc cannot start");
    return RIVER_ETOPO;
  }
  if (hwloc_topology_load(topo) < 0
      || (set = hwloc_bitmap_alloc()) == NULL
      || get_binding(topo, set, bound) != RIVER_SUCCESS) {
    river__error("bind: hwloc cannot read this node's topology or the "
                 "process's binding");
    goto out;
  }
  rc = *bound ? RIVER_SUCCESS : bind_to_core(topo, i, n);
out:
  hwloc_bitmap_free(set);
  hwloc_topology_destroy(topo);
  return rc;
}

int river_topo_bind(MPI_Comm comm, int *outcome)
{
  MPI_Comm dup = MPI_COMM_NULL;
  int index = 0, count = 0, bound = 0, rc;

  if (comm == MPI_COMM_NULL || outcome == NULL)
    return RIVER_EINVAL;
  /* Refuses a call without MPI (and says so), as every collective does. */
  if ((rc = river__comm_dup(comm, &dup)) != RIVER_SUCCESS)
    return rc;
  rc = node_place(dup, &index, &count);
  if (rc == RIVER_SUCCESS)
    rc = bind_here(index, count, &bound);
  rc = river__agree(dup, rc);
  MPI_Comm_free(&dup);
  if (rc == RIVER_SUCCESS)
    *outcome = bound ? RIVER_BIND_KEPT : RIVER_BIND_DONE;
  return rc;
}
