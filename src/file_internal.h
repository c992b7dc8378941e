/*
 * file_internal.h - River's file-system helpers (src/file.c), one of the
 * base headers (river_internal.h says what makes one): any of River's
 * files may include it. Mapping a failed system call to a code, opening
 * a file only if it is a regular one (a FIFO, device or directory
 * refused at once, never blocked on), in one step or two, and syncing a
 * directory after a rename into it. Never installed.
 */
#ifndef RIVER_FILE_INTERNAL_H
#define RIVER_FILE_INTERNAL_H

#include <river.h>

/* Log at `level` that a system call on name failed (errno says why) and
 * map it: a missing file is RIVER_ENOTFOUND, a refused permission
 * (EACCES, EPERM) RIVER_EACCES, anything else RIVER_EIO. */
int river__syserr(int level, const char *name, const char *what);

/* fsync the directory that holds path (after a rename into it). */
int river__fsync_dir(const char *path);

/* Open path read-only as `what` (e.g. "metadata"), only if it is a
 * regular file: the open does not block (O_NONBLOCK, cleared again once
 * fstat has shown a regular file), so a FIFO, device or directory is
 * refused at once. *fd is the open descriptor on success. Failures are
 * logged at level naming path: RIVER_ENOTFOUND (no such file),
 * RIVER_EACCES (no permission), RIVER_ECORRUPT (not a regular file),
 * RIVER_EIO (anything else). */
int river__open_regular(const char *path, const char *what, int level,
                        int *fd);

/* river__open_regular in two steps, for a caller that opens files now
 * and reports a failure only when it needs the file: river__open_quiet
 * logs nothing and fills *f: fd >= 0 (open, regular), or fd -1 with the
 * system call that failed (call) and its errno (err), or call NULL and
 * the mode of a file that is not regular. river__open_report logs what
 * river__open_regular would have logged for f and returns its code
 * (RIVER_SUCCESS for an open f). */
typedef struct river__file {
  int fd;
  int err;
  const char *call;
  unsigned mode;
} river__file;
void river__open_quiet(const char *path, river__file *f);
int river__open_report(const char *path, const char *what, int level,
                       const river__file *f);

#endif /* RIVER_FILE_INTERNAL_H */
