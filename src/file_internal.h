/*
 * file_internal.h - River's file-system helpers (src/file.c), one of the
 * base headers (river_internal.h says what makes one): any of River's
 * files may include it. Mapping a failed system call to a code, opening
 * a file only if it is a regular one (a FIFO, device or directory
 * refused at once, never blocked on), in one step or two, syncing a
 * directory after a rename into it, names no bystander can guess, and
 * a job's locked records of what it leaves while it runs. Never
 * installed.
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

/* 16 lowercase hex digits no bystander can predict, and a NUL, into hex
 * (a temporary's or a record's name): getrandom, or where it has no
 * entropy yet, the time, the pid and an address mixed. */
void river__random_hex(char hex[17]);

/* A job's record of something it leaves while it runs (an output's
 * temporary, a scratch collection), for the gc that comes after a job
 * that died: create file `name` in directory dir/sub (sub made if
 * missing; dir followed if a link, sub and name never), exclusively,
 * take an open-file-description write lock on it, held while *recfd
 * stays open, and write content (n bytes). 0 with *dirfd (dir/sub) and
 * *recfd open; -1 with both -1, nothing left behind, and errno saying
 * why, once the failure is logged naming `what` (at debug level for a
 * dir that does not exist or cannot be written, else as a warning). */
int river__record_make(const char *dir, const char *sub, const char *name,
                       const char *what, const char *content, int n,
                       int *dirfd, int *recfd);

#endif /* RIVER_FILE_INTERNAL_H */
