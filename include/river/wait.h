/*
 * river/wait.h - waiting for MPI requests without burning a core.
 *
 * MPI_Wait spins: a blocked rank uses a whole core, and when ranks
 * outnumber cores the spinning ranks slow the working ones (measured
 * here: 3.7x). River's waits test the request, yield the core a few
 * times, then sleep between tests, starting at 1 us and doubling to 1 ms,
 * so a blocked rank uses a few percent of a core and, after a long wait,
 * answers within about 1 ms.
 *
 * Part of the River API; include <river.h> rather than this file.
 */
#ifndef RIVER_WAIT_H
#define RIVER_WAIT_H

#include <mpi.h>
#include "river/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Like MPI_Wait(req, status), backing off between tests. status may be
 * MPI_STATUS_IGNORE. RIVER_EMPI if MPI_Test fails. RIVER_ETIMEDOUT
 * (logged) if the watchdog (RIVER_TIMEOUT, doc/design.md) saw no
 * progress for that long: *req is then still active, its buffer still
 * MPI's, and every later wait of the process fails the same way at once;
 * end the job (MPI_Abort). */
RIVER_API int river_wait(MPI_Request *req, MPI_Status *status);

/* Like MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE), backing off; the
 * watchdog as for river_wait. */
RIVER_API int river_waitall(int n, MPI_Request *reqs);

/* *fired = 1 once the watchdog has ended a wait of this process (some
 * River call returned RIVER_ETIMEDOUT), else 0. From then on River
 * starts no MPI operation: every call that would communicate returns
 * RIVER_ETIMEDOUT at once, because a collective or message started
 * after an abandoned one would be matched with it out of step. A
 * program that sees it set should start none either on communicators it
 * shares with River's calls, and end the job (MPI_Abort). RIVER_EINVAL
 * if fired is NULL. Not collective. */
RIVER_API int river_watchdog_fired(int *fired);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_WAIT_H */
