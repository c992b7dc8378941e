/*
 * pmpi_count.h - the CPU time and number of the MPI calls River has
 * made in this process so far (apps/bench/pmpi_count.c wraps them by
 * PMPI): river-bench scale takes them off a call's time to leave River's
 * own work.
 */
#ifndef RIVER_BENCH_PMPI_COUNT_H
#define RIVER_BENCH_PMPI_COUNT_H

double pmpi_count_cpu(void);   /* seconds of thread CPU time */
long pmpi_count_calls(void);

#endif /* RIVER_BENCH_PMPI_COUNT_H */
