/*
 * rma.h - RMA windows for River's components, one of the base headers
 * (river_internal.h): any concept that needs a window includes it.
 * Never installed. Every window in the library is made with
 * river__win_allocate and freed with river__win_free, so the Open MPI
 * workaround in src/rma.c covers it.
 */
#ifndef RIVER_RMA_H
#define RIVER_RMA_H

#include <mpi.h>
#include <stddef.h>

/*
 * Collective over comm: allocate a window of bytes (IN) bytes on this
 * rank (ranks may differ; 0 is fine) with displacement unit disp_unit
 * (IN), with MPI_Win_allocate_shared when every rank of comm is on one
 * node (and RIVER_WIN_SHARED is not 0), else MPI_Win_allocate;
 * serialised node-wide where Open MPI < 5 needs it (src/rma.c). Callers
 * use the memory only through RMA calls, so the two are alike to them.
 * The window returns errors (MPI_ERRORS_RETURN), its memory is zeroed
 * and it is locked for passive-target access to
 * every rank (MPI_Win_lock_all, MPI_MODE_NOCHECK) until river__win_free.
 * base_out (OUT) is the address of a pointer, as MPI_Win_allocate's
 * baseptr: it gets the memory's address; *win (OUT) the window.
 * The outcome is agreed over comm: RIVER_SUCCESS, or the same negative
 * code on every rank (logged where it happened) with base_out and *win
 * untouched and nothing left allocated -- except where the allocation
 * failed on some ranks only: the others' parts are then left (warned), as
 * freeing them would wait forever. try_only (IN): a failed MPI
 * allocation is logged at debug level, not as an error (the caller has
 * another way: a distributed queue's two-sided credits).
 */
int river__win_allocate(MPI_Comm comm, size_t bytes, int disp_unit,
                        int try_only, void *base_out, MPI_Win *win);

/* Collective over the window's group: unlock and free a window from
 * river__win_allocate; *win becomes MPI_WIN_NULL. MPI_WIN_NULL is a no-op
 * (a failed create can call it unconditionally). */
void river__win_free(MPI_Win *win);

#endif /* RIVER_RMA_H */
