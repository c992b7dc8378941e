/*
 * river_shim.c - C helpers for the Fortran module where a C function
 * cannot be bound directly (variadic river_log; MPI_Comm and
 * MPI_Request arguments, which Fortran holds as MPI_Fint handles).
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
int river__f_pcoll_disk_ranks(MPI_Fint comm, const river_pcoll *pc,
                              int *ranks);
int river__f_pcoll_remove_all(MPI_Fint comm, const char *name,
                              const river_pcoll_opts *opts);
int river__f_flow_create(MPI_Fint comm, river_flow **out);
int river__f_stats_create(MPI_Fint comm, const char *command,
                          river_stats **out);
int river__f_flow_load(MPI_Fint comm, const char *path,
                       const char *const *params, int nparams,
                       river_flow **out);
int river__f_ctx_comm(const river_ctx *ctx, MPI_Fint *comm);
int river__f_ctx_wait(river_ctx *ctx, MPI_Fint *req);
int river__f_ctx_log(const river_ctx *ctx, int level, const char *msg);
int river__f_topo_bind(MPI_Fint comm, int *outcome);

/* river_log(level, "%s", msg): Fortran cannot call a variadic function. */
int river__f_log(int level, const char *msg)
{
  if (msg == NULL)
    return RIVER_EINVAL;
  return river_log(level, "%s", msg);
}

/* river_ctx_log(ctx, level, "%s", msg), for the same reason. */
int river__f_ctx_log(const river_ctx *ctx, int level, const char *msg)
{
  if (msg == NULL)
    return RIVER_EINVAL;
  return river_ctx_log(ctx, level, "%s", msg);
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

/* river_topo_bind: MPI_Comm is opaque in C (see river__f_pcoll_create). */
int river__f_topo_bind(MPI_Fint comm, int *outcome)
{
  return river_topo_bind(MPI_Comm_f2c(comm), outcome);
}

/* river_pcoll_disk_ranks: MPI_Comm is opaque in C (see
 * river__f_pcoll_create). */
int river__f_pcoll_disk_ranks(MPI_Fint comm, const river_pcoll *pc,
                              int *ranks)
{
  return river_pcoll_disk_ranks(MPI_Comm_f2c(comm), pc, ranks);
}

/* river_pcoll_remove_all: MPI_Comm is opaque in C (see
 * river__f_pcoll_create). */
int river__f_pcoll_remove_all(MPI_Fint comm, const char *name,
                              const river_pcoll_opts *opts)
{
  return river_pcoll_remove_all(MPI_Comm_f2c(comm), name, opts);
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

/* river_flow_create: MPI_Comm is opaque in C (see river__f_pcoll_create). */
int river__f_flow_create(MPI_Fint comm, river_flow **out)
{
  return river_flow_create(MPI_Comm_f2c(comm), out);
}

/* river_stats_create: MPI_Comm is opaque in C (see
 * river__f_pcoll_create). */
int river__f_stats_create(MPI_Fint comm, const char *command,
                          river_stats **out)
{
  return river_stats_create(MPI_Comm_f2c(comm), command, out);
}

/* river_flow_load: MPI_Comm is opaque in C (see river__f_pcoll_create). */
int river__f_flow_load(MPI_Fint comm, const char *path,
                       const char *const *params, int nparams,
                       river_flow **out)
{
  return river_flow_load(MPI_Comm_f2c(comm), path, params, nparams, out);
}

/* river_ctx_comm: the stage's communicator as a Fortran handle. */
int river__f_ctx_comm(const river_ctx *ctx, MPI_Fint *comm)
{
  MPI_Comm c = MPI_COMM_NULL;
  int rc;

  if (comm == NULL)
    return RIVER_EINVAL;
  rc = river_ctx_comm(ctx, &c);
  if (rc == RIVER_SUCCESS)
    *comm = MPI_Comm_c2f(c);
  return rc;
}

/* river_ctx_wait on a Fortran request handle: converted to C and back
 * (MPI_REQUEST_NULL once it has completed). */
int river__f_ctx_wait(river_ctx *ctx, MPI_Fint *req)
{
  MPI_Request r;
  int rc;

  if (req == NULL)
    return RIVER_EINVAL;
  r = MPI_Request_f2c(*req);
  rc = river_ctx_wait(ctx, &r, MPI_STATUS_IGNORE);
  *req = MPI_Request_c2f(r);
  return rc;
}
