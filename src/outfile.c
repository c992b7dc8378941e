/*
 * outfile.c - files River writes outside a root (river/outfile.h): a
 * temporary beside the target, renamed over it when complete, and a
 * record of that temporary in a root so that gc can find it if the job
 * dies first.
 *
 * The record is one small file per temporary,
 * ROOT/.river-outside/RANDOM.tmp-record, holding the temporary's
 * absolute path; its writer holds an OFD write lock on it for as long as
 * the temporary may exist (river__record_make, src/file.c), so gc
 * (src/pcoll_outside.c, called by river_pcoll_gc) tells a live writer's
 * temporary (locked: left alone) from a dead one's. One file per
 * temporary, not a shared list: jobs never rewrite each other's
 * records. A record only ever names a RIVER_OUTFILE_TMP_TAG file, and
 * gc removes only such a regular file that the record's owner owns, so
 * a planted record cannot make gc remove anything else. The root is
 * river_pcoll_root's.
 */
#define _GNU_SOURCE 1  /* renameat2 */
#include "river_internal.h"
#include "file_internal.h"
#include "river/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct river_outfile {
  char *path, *tmp;
  int fd, flags;
  int dirfd, recfd;      /* the record's directory and file, or -1 */
  char rec[40];          /* the record's name in dirfd */
};

/* 1 if the environment asks for no fsync (RIVER_SYNC=0: scratch data). */
static int env_nosync(void)
{
  const char *v = getenv("RIVER_SYNC");

  return v != NULL && (strcmp(v, "0") == 0 || strcmp(v, "false") == 0
                       || strcmp(v, "no") == 0);
}

/* Record of->tmp (as an absolute path) in root's record directory,
 * locked. Without a record the output goes on (river__record_make has
 * said why). */
static void record(river_outfile *of, const char *root, const char *hex)
{
  char abs[RIVER_PATH_MAX + 8], cwd[RIVER_PATH_MAX];
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  char dir[RIVER_PATH_MAX];
  size_t len = sizeof dir;
  int n;

  o.root = root;
  if (of->tmp[0] == '/')
    n = snprintf(abs, sizeof abs, "%s\n", of->tmp);
  else if (getcwd(cwd, sizeof cwd) != NULL)
    n = snprintf(abs, sizeof abs, "%s/%s\n", cwd, of->tmp);
  else
    n = -1;
  if (n < 0 || (size_t)n >= sizeof abs
      || river_pcoll_root(root ? &o : NULL, dir, &len) != RIVER_SUCCESS)
    return;
  snprintf(of->rec, sizeof of->rec, "%s%s", hex,
           RIVER_OUTFILE_RECORD_SUFFIX);
  river__record_make(dir, RIVER_OUTFILE_RECORD_DIR, of->rec, of->tmp, abs, n,
                     &of->dirfd, &of->recfd);
}

/* Drop the record (the temporary is gone or published), free of. */
static void finish(river_outfile *of)
{
  if (of->recfd >= 0) {
    unlinkat(of->dirfd, of->rec, 0);   /* while still locked */
    close(of->recfd);
  }
  if (of->dirfd >= 0)
    close(of->dirfd);
  free(of->path);
  free(of->tmp);
  free(of);
}

/* The directory holding path into dir (RIVER_PATH_MAX bytes). */
static void dir_of(const char *path, char *dir)
{
  const char *slash = strrchr(path, '/');

  if (slash == NULL)
    strcpy(dir, ".");
  else
    snprintf(dir, RIVER_PATH_MAX, "%.*s", slash == path ? 1
             : (int)(slash - path), path);
}

int river_outfile_check_planted(const char *path)
{
  char dir[RIVER_PATH_MAX];
  struct stat st, ds;
  const char *kind, *verdict;

  if (path == NULL || path[0] == '\0')
    return RIVER_EINVAL;
  if (strlen(path) >= RIVER_PATH_MAX || lstat(path, &st) != 0
      || st.st_uid == geteuid())
    return RIVER_SUCCESS;
  dir_of(path, dir);
  if (stat(dir, &ds) != 0 || !(ds.st_mode & S_ISVTX)
      || !(ds.st_mode & S_IWOTH) || st.st_uid == ds.st_uid)
    return RIVER_SUCCESS;
  kind = S_ISLNK(st.st_mode) ? "symbolic link"
         : S_ISREG(st.st_mode) ? "file" : "special file";
  verdict = S_ISREG(st.st_mode) ? "not replacing it"
            : "not followed or written through (remove it, or write to "
              "another name)";
  river__error("%s is a %s owned by another user (uid %u) in the sticky, "
               "world-writable directory %s: %s", path, kind,
               (unsigned)st.st_uid, dir, verdict);
  return RIVER_EACCES;
}

/* RIVER_SUCCESS if path may be replaced: absent or a regular file (not
 * another user's in a sticky, world-writable directory). */
static int replaceable(const char *path)
{
  struct stat st;

  if (lstat(path, &st) != 0)
    return RIVER_SUCCESS;
  if (S_ISREG(st.st_mode))
    return river_outfile_check_planted(path);
  river__error("%s exists and is not a regular file (%s): not replacing "
               "it", path, S_ISDIR(st.st_mode) ? "a directory"
               : S_ISLNK(st.st_mode) ? "a symbolic link"
               : S_ISFIFO(st.st_mode) ? "a FIFO"
               : S_ISSOCK(st.st_mode) ? "a socket" : "a device");
  return RIVER_EEXIST;
}

int river_outfile_create(const char *path, const char *root, int flags,
                         river_outfile **out)
{
  river_outfile *of;
  char hex[17];
  size_t len;
  int rc, e;

  if (path == NULL || path[0] == '\0' || out == NULL
      || (flags & ~(RIVER_OUTFILE_NOSYNC | RIVER_OUTFILE_NOREPLACE)) != 0)
    return RIVER_EINVAL;
  if ((rc = replaceable(path)) != RIVER_SUCCESS)
    return rc;
  len = strlen(path);
  if (len + sizeof RIVER_OUTFILE_TMP_TAG + 16 >= RIVER_PATH_MAX) {
    river__error("output path too long: %.60s...", path);
    return RIVER_EINVAL;
  }
  of = calloc(1, sizeof *of);
  if (of == NULL || (of->path = strdup(path)) == NULL
      || (of->tmp = malloc(len + sizeof RIVER_OUTFILE_TMP_TAG + 17)) == NULL) {
    if (of != NULL)
      free(of->path);
    free(of);
    return RIVER_ENOMEM;
  }
  of->flags = flags;
  of->dirfd = of->recfd = -1;
  river__random_hex(hex);
  sprintf(of->tmp, "%s%s%s", path, RIVER_OUTFILE_TMP_TAG, hex);
  record(of, root, hex);   /* first: a crash in between leaves a record */
  of->fd = open(of->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW
                         | O_CLOEXEC, 0666);
  if (of->fd < 0) {
    e = errno;
    river__error("cannot create %s: %s", of->tmp, strerror(e));
    finish(of);
    return e == EACCES || e == EPERM ? RIVER_EACCES : RIVER_EIO;
  }
  river__test_fault("outfile-created");   /* tests: a job killed here */
  *out = of;
  return RIVER_SUCCESS;
}

int river_outfile_fd(const river_outfile *of, int *fd)
{
  if (of == NULL || fd == NULL)
    return RIVER_EINVAL;
  *fd = of->fd;
  return RIVER_SUCCESS;
}

int river_outfile_tmp(const river_outfile *of, const char **tmp)
{
  if (of == NULL || tmp == NULL)
    return RIVER_EINVAL;
  *tmp = of->tmp;
  return RIVER_SUCCESS;
}

/* Give the temporary the mode and owner of the file it replaces. */
static void keep_mode(const river_outfile *of)
{
  struct stat st;

  if (lstat(of->path, &st) != 0 || !S_ISREG(st.st_mode))
    return;
  if (fchown(of->fd, st.st_uid, st.st_gid) != 0)
    (void)!fchown(of->fd, (uid_t)-1, st.st_gid);  /* the group, if ours */
  fchmod(of->fd, st.st_mode & 07777);   /* after chown, which may clear
                                           set-id bits */
}

/* Rename the temporary to the target (replacing it unless NOREPLACE). */
static int rename_in(const river_outfile *of)
{
  int r;

  if (river__test_fault("file-rename")) {
    errno = EIO;
    return -1;
  }
  if (!(of->flags & RIVER_OUTFILE_NOREPLACE))
    return rename(of->tmp, of->path);
  r = renameat2(AT_FDCWD, of->tmp, AT_FDCWD, of->path, RENAME_NOREPLACE);
  if (r != 0 && (errno == EINVAL || errno == ENOSYS)) {
    r = link(of->tmp, of->path);   /* a file system without the flag */
    if (r == 0)
      unlink(of->tmp);
  }
  return r;
}

/*
 * fsync the directory holding path, just after the rename that
 * published path. The rename is the publish: readers see the new file
 * whatever happens next, so a failure here is a warning naming the
 * directory, and the publish succeeds (as a collection's commit does
 * when the root's fsync after it fails).
 */
static void sync_dir(const char *path)
{
  char dir[RIVER_PATH_MAX];
  int fd, e = 0;

  dir_of(path, dir);
  fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || fsync(fd) != 0)
    e = errno;
  if (fd >= 0)
    close(fd);
  if (e != 0)
    river__warn("%s is published, but the directory sync failed (%s: %s): "
                "the rename may not survive a power failure", path, dir,
                strerror(e));
}

int river_outfile_publish(river_outfile *of)
{
  int sync, rc = RIVER_SUCCESS;

  if (of == NULL)
    return RIVER_EINVAL;
  sync = !(of->flags & RIVER_OUTFILE_NOSYNC) && !env_nosync();
  rc = replaceable(of->path);
  if (rc == RIVER_SUCCESS)
    keep_mode(of);
  if (rc == RIVER_SUCCESS && sync && fsync(of->fd) != 0) {
    river__error("fsync of %s: %s", of->tmp, strerror(errno));
    rc = RIVER_EIO;
  }
  if (close(of->fd) != 0 && rc == RIVER_SUCCESS) {
    river__error("writing %s: %s", of->tmp, strerror(errno));
    rc = RIVER_EIO;
  }
  of->fd = -1;
  if (rc == RIVER_SUCCESS && rename_in(of) != 0) {
    if (errno == EEXIST) {
      river__error("%s appeared while this job wrote it: not replacing it",
                   of->path);
      rc = RIVER_EEXIST;
    } else {
      river__error("cannot rename %s to %s: %s", of->tmp, of->path,
                   strerror(errno));
      rc = RIVER_EIO;
    }
  }
  if (rc != RIVER_SUCCESS)
    unlink(of->tmp);
  else if (sync)
    sync_dir(of->path);   /* published: a failure here only warns */
  finish(of);
  return rc;
}

void river_outfile_discard(river_outfile *of)
{
  if (of == NULL)
    return;
  if (of->fd >= 0)
    close(of->fd);
  unlink(of->tmp);
  finish(of);
}
