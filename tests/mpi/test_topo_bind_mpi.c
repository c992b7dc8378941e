/*
 * test_topo_bind_mpi - river_topo_bind: a rank the launcher left unbound
 * is bound to the core its place on its node gives it (local index i of
 * L ranks with its node name: core i*C/L of the node's C cores if L <= C,
 * else core i mod C), every thread of the process with it, a CPU hog
 * started before the call and one started after included; a rank already
 * bound is left as it was (RIVER_BIND_KEPT). Where the launcher says
 * which local rank a process is (Open MPI's OMPI_COMM_WORLD_LOCAL_RANK,
 * per emulated node too), it is the index River computed.
 */
#define _GNU_SOURCE
#include <river.h>
#include "mpitest.h"

#include <dirent.h>
#include <hwloc.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* This rank's index among the ranks with its node name, and their count. */
static void node_place(int *index, int *count)
{
  char mine[RIVER_NODE_NAME_MAX] = "", *all;
  size_t len = sizeof mine;
  int rank, size, r;

  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MT_CHECK_RC(river_node_name(mine, &len), RIVER_SUCCESS);
  all = calloc((size_t)size, RIVER_NODE_NAME_MAX);
  MPI_Allgather(mine, RIVER_NODE_NAME_MAX, MPI_CHAR, all,
                RIVER_NODE_NAME_MAX, MPI_CHAR, MPI_COMM_WORLD);
  *index = *count = 0;
  for (r = 0; r < size; r++)
    if (strcmp(all + (size_t)r * RIVER_NODE_NAME_MAX, mine) == 0) {
      *index += r < rank;
      (*count)++;
    }
  free(all);
}

/* The number of threads of this process whose affinity is not `want`. */
static int threads_elsewhere(const cpu_set_t *want, int *nthreads)
{
  DIR *d = opendir("/proc/self/task");
  struct dirent *e;
  int off = 0;

  *nthreads = 0;
  if (d == NULL)
    return -1;
  while ((e = readdir(d)) != NULL) {
    cpu_set_t set;
    pid_t tid = (pid_t)atoi(e->d_name);

    if (tid <= 0)
      continue;
    (*nthreads)++;
    CPU_ZERO(&set);
    if (sched_getaffinity(tid, sizeof set, &set) != 0)
      continue;   /* the thread has ended */
    off += !CPU_EQUAL(&set, want);
  }
  closedir(d);
  return off;
}

int main(int argc, char **argv)
{
  hwloc_topology_t topo;
  hwloc_bitmap_t before, after;
  river_cpu_hog *early = NULL, *late = NULL;
  cpu_set_t mask;
  int index = -1, count = 0, outcome = 0, ncores, nthreads = 0;
  const char *local;

  MPI_Init(&argc, &argv);
  MT_CHECK_RC(river_init(&argc, &argv), RIVER_SUCCESS);
  hwloc_topology_init(&topo);
  hwloc_topology_load(topo);
  before = hwloc_bitmap_alloc();
  after = hwloc_bitmap_alloc();
  hwloc_get_cpubind(topo, before, HWLOC_CPUBIND_PROCESS);
  node_place(&index, &count);
  local = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  if (local != NULL)
    MT_CHECK(atoi(local) == index);

  MT_CHECK_RC(river_cpu_hog_start(0.05, &early), RIVER_SUCCESS);
  MT_CHECK_RC(river_topo_bind(MPI_COMM_WORLD, &outcome), RIVER_SUCCESS);
  MT_CHECK_RC(river_cpu_hog_start(0.05, &late), RIVER_SUCCESS);
  hwloc_get_cpubind(topo, after, HWLOC_CPUBIND_PROCESS);

  if (hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(topo),
                              before)) {
    /* Unbound: now on its core. */
    hwloc_obj_t core;
    int c;

    ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    MT_CHECK(outcome == RIVER_BIND_DONE);
    MT_CHECK(ncores >= 1);
    if (ncores >= 1) {
      c = count <= ncores ? index * ncores / count : index % ncores;
      core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)c);
      MT_CHECK(core != NULL && hwloc_bitmap_isequal(after, core->cpuset));
    }
  } else {
    MT_CHECK(outcome == RIVER_BIND_KEPT);
    MT_CHECK(hwloc_bitmap_isequal(after, before));
  }

  /* Every thread, both hogs among them, runs where the process does. */
  CPU_ZERO(&mask);
  MT_CHECK(sched_getaffinity(0, sizeof mask, &mask) == 0);
  MT_CHECK(threads_elsewhere(&mask, &nthreads) == 0);
  MT_CHECK(nthreads >= 3);   /* main and two hogs */

  MT_CHECK_RC(river_cpu_hog_stop(late), RIVER_SUCCESS);
  MT_CHECK_RC(river_cpu_hog_stop(early), RIVER_SUCCESS);
  MT_CHECK_RC(river_topo_bind(MPI_COMM_NULL, &outcome), RIVER_EINVAL);
  {
    /* A second call finds the rank bound and keeps it. */
    hwloc_bitmap_t again = hwloc_bitmap_alloc();

    MT_CHECK_RC(river_topo_bind(MPI_COMM_WORLD, &outcome), RIVER_SUCCESS);
    MT_CHECK(outcome == RIVER_BIND_KEPT
             || hwloc_bitmap_isincluded(
                    hwloc_topology_get_topology_cpuset(topo), after));
    hwloc_get_cpubind(topo, again, HWLOC_CPUBIND_PROCESS);
    MT_CHECK(hwloc_bitmap_isequal(again, after)
             || hwloc_bitmap_isincluded(
                    hwloc_topology_get_topology_cpuset(topo), after));
    hwloc_bitmap_free(again);
  }
  hwloc_bitmap_free(before);
  hwloc_bitmap_free(after);
  hwloc_topology_destroy(topo);
  MT_CHECK_RC(river_finalize(), RIVER_SUCCESS);
  {
    int rc = mt_verdict(MPI_COMM_WORLD, "test_topo_bind_mpi");
    MPI_Finalize();
    return rc;
  }
}
