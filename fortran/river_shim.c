/*
 * river_shim.c - C helpers for the Fortran module where a C function
 * cannot be bound directly (variadic river_log; MPI_Comm arguments).
 */
#include <river.h>

int river__f_log(int level, const char *msg);
int river__f_pcoll_create(MPI_Fint comm, const char *name,
                          const river_schema *schema,
                          const river_pcoll_opts *opts, river_pcoll **out);
int river__f_dq_create(MPI_Fint comm, int role, size_t record_size,
                       const river_dq_opts *opts, river_dq **out);
int river__f_pcoll_open(MPI_Fint comm, const char *name,
                        const river_pcoll_opts *opts, river_pcoll **out);
int river__f_gd_open(MPI_Fint comm, river_pcoll *pc,
                     const river_gd_opts *opts, river_gd **out);

/* river_log(level, "%s", msg): Fortran cannot call a variadic function. */
int river__f_log(int level, const char *msg)
{
  if (msg == NULL)
    return RIVER_EINVAL;
  return river_log(level, "%s", msg);
}

/* river_pcoll_create: MPI_Comm is opaque in C; Fortran holds an MPI_Fint
 * (type(MPI_Comm)%MPI_VAL), converted here with MPI_Comm_f2c. */
int river__f_pcoll_create(MPI_Fint comm, const char *name,
                          const river_schema *schema,
                          const river_pcoll_opts *opts, river_pcoll **out)
{
  return river_pcoll_create(MPI_Comm_f2c(comm), name, schema, opts, out);
}

/* river_pcoll_open: MPI_Comm is opaque in C (see river__f_pcoll_create). */
int river__f_pcoll_open(MPI_Fint comm, const char *name,
                        const river_pcoll_opts *opts, river_pcoll **out)
{
  return river_pcoll_open(MPI_Comm_f2c(comm), name, opts, out);
}

/* river_dq_create: MPI_Comm is opaque in C (see river__f_pcoll_create). */
int river__f_dq_create(MPI_Fint comm, int role, size_t record_size,
                       const river_dq_opts *opts, river_dq **out)
{
  return river_dq_create(MPI_Comm_f2c(comm), role, record_size, opts, out);
}

/* river_gd_open: MPI_Comm is opaque in C (see river__f_pcoll_create). */
int river__f_gd_open(MPI_Fint comm, river_pcoll *pc,
                     const river_gd_opts *opts, river_gd **out)
{
  return river_gd_open(MPI_Comm_f2c(comm), pc, opts, out);
}
