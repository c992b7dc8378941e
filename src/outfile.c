/*
 * outfile.c - files River writes outside a root (river/outfile.h): a
 * temporary beside the target, renamed over it when complete, and a
 * record of that temporary in a root so that gc can find it if the job
 * dies first.
 *
 * The record is one small file per temporary,
 * ROOT/.river-outside/RANDOM.tmp-record, holding the temporary's
 * absolute path; its writer holds an OFD write lock on it for as long as
 * the temporary may exist, so gc (river__outfile_gc, called by
 * river_pcoll_gc) tells a live writer's temporary (locked: left alone)
 * from a dead one's. One file per temporary, not a shared list: jobs
 * never rewrite each other's records. A record only ever names a
 * RIVER_TMP_TAG file, and gc removes only such a regular file that the
 * record's owner owns, so a planted record cannot make gc remove
 * anything else.
 */
#define _GNU_SOURCE 1  /* renameat2, F_OFD_SETLK */
#include "river_internal.h"
#include "pcoll_internal.h"
#include "river/outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef F_OFD_SETLK
#define OUT_LOCK F_OFD_SETLK
#else
#define OUT_LOCK F_SETLK
#endif

#define RIVER_TMP_TAG ".river-tmp."      /* in every temporary's name */
#define RECORD_DIR ".river-outside"      /* under the root */
#define RECORD_SUFFIX ".tmp-record"
#define SCRATCH_SUFFIX ".scratch-record"   /* a scratch collection's */

struct river_outfile {
  char *path, *tmp;
  int fd, flags;
  int dirfd, recfd;      /* the record's directory and file, or -1 */
  char rec[40];          /* the record's name in dirfd */
};

/* 16 hex digits no bystander can predict, into hex (17 bytes). */
static void random_hex(char *hex)
{
  uint64_t r = 0;
  struct timespec ts;

  if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
    clock_gettime(CLOCK_REALTIME, &ts);   /* no entropy yet: mix what */
    r = river_hash64((uint64_t)getpid() ^ (uint64_t)ts.tv_nsec   /* is */
                     ^ ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)(uintptr_t)&r);
  }
  snprintf(hex, 17, "%016llx", (unsigned long long)r);
}

/* 1 if the environment asks for no fsync (RIVER_SYNC=0: scratch data). */
static int env_nosync(void)
{
  const char *v = getenv("RIVER_SYNC");

  return v != NULL && (strcmp(v, "0") == 0 || strcmp(v, "false") == 0
                       || strcmp(v, "no") == 0);
}

/* Create and lock record file HEX.SUFFIX in root's record directory,
 * holding content (n bytes): *dirfd, *recfd and rec (the record's name,
 * 40 bytes) set, or left -1 if it could not be made (errno set). */
static int record_make(const char *dir, const char *hex, const char *suffix,
                       const char *content, int n, int *dirfd, int *recfd,
                       char *rec)
{
  struct flock fl;
  int rfd, e;

  *dirfd = *recfd = -1;
  snprintf(rec, 40, "%s%s", hex, suffix);
  rfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);  /* a root may be a
                                                           link: followed */
  if (rfd >= 0 && mkdirat(rfd, RECORD_DIR, 0777) != 0 && errno != EEXIST)
    goto fail;
  if (rfd >= 0)
    *dirfd = openat(rfd, RECORD_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW
                                     | O_CLOEXEC);
  if (*dirfd >= 0)
    *recfd = openat(*dirfd, rec, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW
                    | O_CLOEXEC, 0666);
  if (*recfd < 0)
    goto fail;
  memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  if (fcntl(*recfd, OUT_LOCK, &fl) != 0
      || write(*recfd, content, (size_t)n) != n) {
    unlinkat(*dirfd, rec, 0);
    goto fail;
  }
  close(rfd);
  return 0;
fail:
  e = errno;
  if (*recfd >= 0)
    close(*recfd);
  if (*dirfd >= 0)
    close(*dirfd);
  if (rfd >= 0)
    close(rfd);
  *dirfd = *recfd = -1;
  errno = e;
  return -1;
}

/* Say (once) that a record could not be made: at debug level for a root
 * that does not exist or cannot be written (a read-only root copy-out
 * reads from), else as a warning. */
static void record_failed(const char *what, const char *dir)
{
  int e = errno;

  river_log(e == ENOENT || e == EROFS || e == EACCES ? RIVER_LOG_DEBUG
                                                    : RIVER_LOG_WARN,
            "%s: not recorded under %s/%s (gc will not list it if this job "
            "dies): %s", what, dir, RECORD_DIR, strerror(e));
}

/* Record of->tmp (as an absolute path) in root's record directory,
 * locked. Without a record the output goes on (record_failed). */
static void record(river_outfile *of, const char *root, const char *hex)
{
  char abs[RIVER_PATH_MAX + 8], cwd[RIVER_PATH_MAX];
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  char dir[RIVER_PATH_MAX];
  int n;

  o.root = root;
  if (of->tmp[0] == '/')
    n = snprintf(abs, sizeof abs, "%s\n", of->tmp);
  else if (getcwd(cwd, sizeof cwd) != NULL)
    n = snprintf(abs, sizeof abs, "%s/%s\n", cwd, of->tmp);
  else
    n = -1;
  if (n < 0 || (size_t)n >= sizeof abs
      || river__pcoll_resolve_root(root ? &o : NULL, dir, sizeof dir)
             != RIVER_SUCCESS)
    return;
  if (record_make(dir, hex, RECORD_SUFFIX, abs, n, &of->dirfd, &of->recfd,
                  of->rec) != 0)
    record_failed(of->tmp, dir);
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
  if (len + sizeof RIVER_TMP_TAG + 16 >= RIVER_PATH_MAX) {
    river__error("output path too long: %.60s...", path);
    return RIVER_EINVAL;
  }
  of = calloc(1, sizeof *of);
  if (of == NULL || (of->path = strdup(path)) == NULL
      || (of->tmp = malloc(len + sizeof RIVER_TMP_TAG + 17)) == NULL) {
    if (of != NULL)
      free(of->path);
    free(of);
    return RIVER_ENOMEM;
  }
  of->flags = flags;
  of->dirfd = of->recfd = -1;
  random_hex(hex);
  sprintf(of->tmp, "%s%s%s", path, RIVER_TMP_TAG, hex);
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

/* ------------------------------------------------------ scratch claims */

/* A claim on a scratch collection: the same kind of locked record, named
 * HEX.scratch-record, holding the collection's name. */
struct river_pcoll_scratch {
  int dirfd, recfd;
  char rec[40];
};

int river_pcoll_scratch_claim(const char *name, const river_pcoll_opts *opts,
                              river_pcoll_scratch **out)
{
  char dir[RIVER_PATH_MAX], hex[17], line[RIVER_PATH_MAX];
  river_pcoll_scratch *sc;
  int n, rc;

  if (name == NULL || out == NULL)
    return RIVER_EINVAL;
  if ((rc = river_pcoll_check_name(name)) != RIVER_SUCCESS)
    return rc;
  rc = river__pcoll_resolve_root(opts, dir, sizeof dir);
  if (rc != RIVER_SUCCESS)
    return rc;
  if ((sc = calloc(1, sizeof *sc)) == NULL)
    return RIVER_ENOMEM;
  n = snprintf(line, sizeof line, "%s\n", name);
  random_hex(hex);
  if (record_make(dir, hex, SCRATCH_SUFFIX, line, n, &sc->dirfd, &sc->recfd,
                  sc->rec) != 0) {
    record_failed(name, dir);
    free(sc);
    return errno == EACCES || errno == EPERM || errno == EROFS
           ? RIVER_EACCES : RIVER_EIO;
  }
  *out = sc;
  return RIVER_SUCCESS;
}

void river_pcoll_scratch_release(river_pcoll_scratch *sc)
{
  if (sc == NULL)
    return;
  unlinkat(sc->dirfd, sc->rec, 0);   /* while still locked */
  close(sc->recfd);
  close(sc->dirfd);
  free(sc);
}

/* ------------------------------------------------------------- gc */

/* Read record `name` in dirfd into line (its one line, without the
 * newline): 1 if River may judge it (a regular record file of ours,
 * unlocked, one line); 0 to skip it. *rst gets the record's stat. */
static int read_record(int dirfd, const char *name, char *line, size_t len,
                       struct stat *rst)
{
  struct flock fl;
  ssize_t n;
  int busy, fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC
                                     | O_NONBLOCK);

  if (fd < 0)
    return 0;
  memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
#ifdef F_OFD_GETLK
  busy = fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
#else
  busy = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
#endif
  n = fstat(fd, rst) == 0 && S_ISREG(rst->st_mode)
      && rst->st_uid == geteuid() && !busy
      ? read(fd, line, len - 1) : -1;
  close(fd);
  if (n <= 1 || line[n - 1] != '\n')
    return 0;
  line[n - 1] = '\0';
  return memchr(line, '\0', (size_t)n - 1) == NULL;
}

/* 1 if a temporary record's line names a path River may judge: absolute,
 * its last component a RIVER_TMP_TAG name. */
static int tmp_named(const char *path)
{
  const char *base = strrchr(path, '/');

  return path[0] == '/' && base != NULL
         && strstr(base, RIVER_TMP_TAG) != NULL;
}

/* Report (and remove, if asked) one leftover, named for collection
 * name ("" for none). */
static void left(const char *path, const char *name, const char *what,
                 uint64_t bytes, int removed, river_pcoll_leftover_fn report,
                 void *arg)
{
  river_pcoll_leftover l;

  l.path = path;
  l.name = name;
  l.what = what;
  l.bytes = bytes;
  l.removed = removed;
  if (report)
    report(&l, arg);
}

/* What gc reports and counts, and where a record (and what it names)
 * lives. */
struct og {
  const river_pcoll_opts *opts;
  const char *root;
  int remove, dfd;
  river_pcoll_leftover_fn report;
  void *arg;
  river__purge_fn purge;
  uint64_t *nfiles, *nbytes;
};

/* A record whose object is not here: list it (remove it, if asked). */
static void stale(struct og *g, const char *recname, const char *rec,
                  const struct stat *rst, const char *what)
{
  int removed = g->remove && unlinkat(g->dfd, recname, 0) == 0;

  left(rec, "", what, (uint64_t)rst->st_size, removed, g->report, g->arg);
  *g->nfiles += 1;
  *g->nbytes += (uint64_t)rst->st_size;
}

/* Record recname of a dead job's temporary tmp outside the root. */
static void judge_tmp(struct og *g, const char *recname, const char *rec,
                      const char *tmp, const struct stat *rst)
{
  struct stat st;
  int removed;

  if (!tmp_named(tmp))
    return;
  if (lstat(tmp, &st) != 0 || !S_ISREG(st.st_mode)
      || st.st_uid != rst->st_uid) {
    stale(g, recname, rec, rst, "record of an outside temporary that is "
          "not here (gone, or on another node's file system)");
    return;
  }
  removed = g->remove && unlink(tmp) == 0;
  if (g->remove && !removed)
    river__warn("cannot remove %s: %s", tmp, strerror(errno));
  left(tmp, "", "temporary of an output outside the root (copy-out -o, "
       "file_write, a file: OUT) whose job died", (uint64_t)st.st_size,
       removed, g->report, g->arg);
  *g->nfiles += 1;
  *g->nbytes += (uint64_t)st.st_size;
  if (removed)
    unlinkat(g->dfd, recname, 0);
}

/* Record recname of a dead job's scratch collection name: list its
 * metadata, or remove the whole collection (g->purge, the gc's
 * river_pcoll_purge, which reports each file) and then the record. */
static void judge_scratch(struct og *g, const char *recname, const char *rec,
                          const char *name, const struct stat *rst)
{
  char meta[RIVER_PATH_MAX];
  struct stat st;

  if (river_pcoll_check_name(name) != RIVER_SUCCESS
      || river__pcoll_meta_path(g->root, name, NULL, meta, sizeof meta)
             != RIVER_SUCCESS)
    return;
  if (lstat(meta, &st) != 0 || !S_ISREG(st.st_mode)) {
    stale(g, recname, rec, rst, "record of a scratch collection that is "
          "not here (removed, or never committed: its files are listed "
          "as an unfinished write's)");
    return;
  }
  if (!g->remove) {
    left(meta, name, "scratch collection whose job died (a two-pass "
         "sort's runs): gc --remove removes it with its data files",
         (uint64_t)st.st_size, 0, g->report, g->arg);
    *g->nfiles += 1;
    *g->nbytes += (uint64_t)st.st_size;
  } else {
    uint64_t n = 0, bytes = 0;   /* purge sets its counts, not adds */
    if (g->purge(name, g->opts, g->report, g->arg, &n, &bytes)
        == RIVER_SUCCESS)
      unlinkat(g->dfd, recname, 0);
    *g->nfiles += n;
    *g->nbytes += bytes;
  }
}

/* 1 if entry name ends with suffix (and has more before it). */
static int has_suffix(const char *name, const char *suffix)
{
  size_t n = strlen(name), sl = strlen(suffix);

  return n > sl && strcmp(name + n - sl, suffix) == 0;
}

int river__outfile_gc(const river_pcoll_opts *opts, const char *root,
                      int remove, river_pcoll_leftover_fn report, void *arg,
                      river__purge_fn purge, uint64_t *nfiles,
                      uint64_t *nbytes)
{
  char dir[RIVER_PATH_MAX], line[RIVER_PATH_MAX], rec[RIVER_PATH_MAX];
  struct og g = {opts, root, remove, -1, report, arg, purge, nfiles, nbytes};
  struct stat rst;
  struct dirent *de;
  DIR *d;

  if (snprintf(dir, sizeof dir, "%s/%s", root, RECORD_DIR) >= (int)sizeof dir)
    return RIVER_SUCCESS;
  g.dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (g.dfd < 0 || (d = fdopendir(g.dfd)) == NULL) {
    if (g.dfd >= 0)
      close(g.dfd);
    return RIVER_SUCCESS;   /* no record ever made here */
  }
  while ((de = readdir(d)) != NULL) {
    int tmp = has_suffix(de->d_name, RECORD_SUFFIX);
    int scratch = has_suffix(de->d_name, SCRATCH_SUFFIX);
    if ((!tmp && !scratch)
        || !read_record(g.dfd, de->d_name, line, sizeof line, &rst))
      continue;
    snprintf(rec, sizeof rec, "%s/%s", dir, de->d_name);
    if (tmp)
      judge_tmp(&g, de->d_name, rec, line, &rst);
    else
      judge_scratch(&g, de->d_name, rec, line, &rst);
  }
  closedir(d);
  return RIVER_SUCCESS;
}
