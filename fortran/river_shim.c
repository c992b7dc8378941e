/*
 * river_shim.c - C helpers for the Fortran module where a C function
 * cannot be bound directly (variadic river_log; MPI_Comm and
 * MPI_Request arguments, which Fortran holds as MPI_Fint handles).
 */
#include <river.h>

#include <ISO_Fortran_binding.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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
void river__f_stop(int rc, const char *what);

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

/* A failed call without ierr (river_check): say it once and end the job
 * with exit status 1, without a backtrace per rank. Every rank that
 * fails comes here; a failure every rank shares (a collective call's)
 * is said by rank 0, whose MPI_Abort ends the job while the others
 * wait: rank r > 0 first waits 1 s + r x 50 ms (at most 3 s), so it
 * speaks only if the job is still there, that is if rank 0 (and every
 * rank before r) did not fail. */
void river__f_stop(int rc, const char *what)
{
  int up = 0, down = 0, rank = 0, size = 1;
  struct timespec ts;
  double wait;

  MPI_Initialized(&up);
  MPI_Finalized(&down);
  if (up && !down) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  }
  if (rank > 0) {
    wait = 1.0 + 0.05 * rank;
    wait = wait > 3.0 ? 3.0 : wait;
    ts.tv_sec = (time_t)wait;
    ts.tv_nsec = (long)((wait - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0)
      ;
  }
  river_log(RIVER_LOG_ERROR, "%s failed: %s (%s); stopping the job%s",
            what != NULL ? what : "a River call", river_strerror(rc),
            river_err_name(rc),
            rank > 0 ? " (first failed on this rank)" : "");
  fflush(NULL);
  if (up && !down && size > 1)
    MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

/* ---------------------------------------------------- typed records */

int river__f_records(const CFI_cdesc_t *a, size_t n, size_t rs,
                     const char *what, void **base);
size_t river__f_pcoll_record_size(const river_pcoll *pc);
size_t river__f_output_record_size(const river_ctx *ctx, int output);

/* A records argument of module river's record calls (an assumed-rank
 * type(*) dummy: its descriptor tells the element size, the type, the
 * shape and whether it is contiguous; fortran/river.F90, "Records"). */
int river__f_records(const CFI_cdesc_t *a, size_t n, size_t rs,
                     const char *what, void **base)
{
  size_t elems = 1;
  int k, known = 1;

  *base = NULL;
  if (a == NULL || what == NULL)
    return RIVER_EINVAL;
  if (a->type == CFI_type_struct && rs > 0 && a->elem_len != rs) {
    river_log(RIVER_LOG_ERROR, "%s: records of %zu bytes given (the c_sizeof "
              "of their derived type), the record size is %zu bytes: the "
              "type does not match the schema (a field more or less, other "
              "kinds, or padding); no record taken", what, a->elem_len, rs);
    return RIVER_EINVAL;
  }
  if (a->rank > 0 && !CFI_is_contiguous(a)) {
    river_log(RIVER_LOG_ERROR, "%s: the records are not contiguous (an "
              "array section with a stride): pass a contiguous array", what);
    return RIVER_EINVAL;
  }
  for (k = 0; k < a->rank; k++) {
    if (a->dim[k].extent < 0)
      known = 0;   /* assumed size: its last extent is not known */
    else
      elems *= (size_t)a->dim[k].extent;
  }
  if (known && n > 0 && rs > 0 && elems * a->elem_len < n * rs) {
    river_log(RIVER_LOG_ERROR, "%s: %zu records of %zu bytes need %zu bytes; "
              "the array holds %zu", what, n, rs, n * rs,
              elems * a->elem_len);
    return RIVER_EINVAL;
  }
  *base = a->base_addr;
  return RIVER_SUCCESS;
}

/* pc's record size, 0 if pc is not a collection (the call says so). */
size_t river__f_pcoll_record_size(const river_pcoll *pc)
{
  river_pcoll_info info;

  return pc != NULL && river_pcoll_info_get(pc, &info) == RIVER_SUCCESS
             ? info.record_size : 0;
}

/* The record size of ctx's output, 0 if there is no such output (the
 * call says so). */
size_t river__f_output_record_size(const river_ctx *ctx, int output)
{
  const river_schema *s = NULL;
  size_t rs = 0;

  if (ctx == NULL || river_output_schema(ctx, output, &s) != RIVER_SUCCESS
      || river_schema_record_size(s, &rs) != RIVER_SUCCESS)
    return 0;
  return rs;
}
