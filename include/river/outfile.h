/*
 * river/outfile.h - a file written outside a root (a flow's file_write,
 * coll_write to file:PATH, river copy-out -o): written under a temporary
 * name beside its target and published (renamed over it) only when
 * complete, so that a reader sees the old file or the new one, never a
 * part.
 *
 * The temporary, TARGET.river-tmp.RANDOM, is created O_EXCL|O_NOFOLLOW
 * with a random part a bystander cannot predict, and recorded in a root
 * (ROOT/.river-outside/RANDOM.tmp-record, locked while its writer lives)
 * so that river_pcoll_gc of that root lists (and removes) a temporary a
 * killed job left. Publishing keeps a replaced file's mode (and owner,
 * where the process may set it) and is durable by default: the file is
 * fsynced before the rename and its directory after (a failure of that
 * last fsync is a warning: river_outfile_publish).
 *
 * None of these calls is collective; the handle belongs to the caller
 * until river_outfile_publish or river_outfile_discard, which free it.
 */
#ifndef RIVER_OUTFILE_H
#define RIVER_OUTFILE_H

#include "river/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The names the paragraph above spells: a temporary is
 * TARGET RIVER_OUTFILE_TMP_TAG RANDOM, recorded as
 * ROOT/RIVER_OUTFILE_RECORD_DIR/RANDOM RIVER_OUTFILE_RECORD_SUFFIX (what
 * river_pcoll_gc looks for). */
#define RIVER_OUTFILE_TMP_TAG       ".river-tmp."
#define RIVER_OUTFILE_RECORD_DIR    ".river-outside"
#define RIVER_OUTFILE_RECORD_SUFFIX ".tmp-record"

/* Flags of river_outfile_create. */
#define RIVER_OUTFILE_NOSYNC    1  /* scratch data: no fsync of the file
                                      or its directory (also when the
                                      environment has RIVER_SYNC=0) */
#define RIVER_OUTFILE_NOREPLACE 2  /* publish only if nothing is at the
                                      target (else RIVER_EEXIST) */

typedef struct river_outfile river_outfile;

/*
 * Create the temporary for target `path` (its directory must exist; a
 * target that exists must be a regular file, else RIVER_EEXIST, logged:
 * River does not rename over a directory, link, device or FIFO; and not
 * another user's, not the directory owner's, in a sticky, world-writable
 * directory, else RIVER_EACCES, logged: publishing keeps the replaced
 * file's owner and mode, which would hand the new data over) and
 * record it in `root` (NULL: $RIVER_ROOT, else the default root; no
 * record if that directory does not exist). flags: RIVER_OUTFILE_*.
 * *out gets the handle. RIVER_EINVAL for NULL or unknown flags; RIVER_EIO
 * or RIVER_EACCES (logged, naming the file) if the temporary cannot be
 * created.
 */
RIVER_API int river_outfile_create(const char *path, const char *root,
                                   int flags, river_outfile **out);

/* The temporary's descriptor (open for writing; owned by the handle). */
RIVER_API int river_outfile_fd(const river_outfile *of, int *fd);

/*
 * The kernel's rule for entries planted in a shared directory
 * (protected_symlinks, protected_fifos, protected_regular), applied
 * whatever the system's setting: RIVER_EACCES, logged naming path, what
 * it is, its owner and the directory, if the entry at path (not
 * followed) lies in a sticky, world-writable directory and belongs
 * neither to the caller nor to the directory's owner; RIVER_SUCCESS
 * otherwise (also when nothing is there). River does not follow, write
 * through or replace such an entry; river_outfile_create checks its
 * target so, and a program that resolves links itself (copy-out -o)
 * checks each one. RIVER_EINVAL for NULL or "".
 */
RIVER_API int river_outfile_check_planted(const char *path);

/* The temporary's path (borrowed, valid while the handle lives). */
RIVER_API int river_outfile_tmp(const river_outfile *of, const char **tmp);

/*
 * Publish: fsync the temporary (unless NOSYNC), give it the replaced
 * file's mode and owner, close it, rename it over the target (or, with
 * NOREPLACE, to the target only if nothing is there), fsync the
 * directory, and drop the record. Frees the handle whatever happens; on
 * failure (logged) the temporary is removed and the target untouched.
 * The rename is the publish: once it is done the call succeeds, and a
 * failed fsync of the directory after it is only a warning naming the
 * directory (the new file is in place and whole; the rename may not
 * survive a power failure), as a collection's commit treats the root's.
 */
RIVER_API int river_outfile_publish(river_outfile *of);

/* Discard: close and remove the temporary, drop the record, free the
 * handle. NULL is a no-op. */
RIVER_API void river_outfile_discard(river_outfile *of);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_OUTFILE_H */
