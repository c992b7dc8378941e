/*
 * topo.c - what hwloc knows about the machine a rank runs on.
 *
 * Each call loads a fresh topology and destroys it before returning: the
 * calls are rare (start-up reports), so caching would buy nothing and
 * would need a lifecycle of its own.
 */
#include "river_internal.h"

#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Number of objects of type in topo, or 0 if hwloc cannot tell. */
static int count_objs(hwloc_topology_t topo, hwloc_obj_type_t type)
{
  int n = hwloc_get_nbobjs_by_type(topo, type);

  return n < 0 ? 0 : n;
}

/* Write the PUs this process may run on as "pu:LIST" ("none" if it may
 * run on every PU) into buf. Returns RIVER_ETOPO if hwloc fails. */
static int describe_binding(hwloc_topology_t topo, char *buf, size_t size)
{
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  hwloc_const_bitmap_t all = hwloc_topology_get_topology_cpuset(topo);
  char *list = NULL;
  int rc = RIVER_ETOPO;

  if (set == NULL)
    return RIVER_ENOMEM;
  if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) < 0)
    goto out;
  if (hwloc_bitmap_isincluded(all, set)) {
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
