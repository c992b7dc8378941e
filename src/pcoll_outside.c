/*
 * pcoll_outside.c - what a root records of things outside it, for gc:
 * scratch-collection claims (river_pcoll_scratch_claim: a locked record
 * ROOT/.river-outside/RANDOM.scratch-record naming the collection), and
 * river_pcoll_gc's scan of that directory, which judges these and the
 * records of river_outfile's temporaries (RANDOM.tmp-record, made by
 * src/outfile.c; the names are river/outfile.h's). A record is made and
 * locked by river__record_make (src/file.c) and held while its job
 * lives; gc judges only records no one holds, that the caller owns,
 * and removes a temporary only if a record names a
 * RIVER_OUTFILE_TMP_TAG file the record's owner owns.
 */
#define _GNU_SOURCE 1  /* F_OFD_GETLK */
#include "pcoll_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SCRATCH_SUFFIX ".scratch-record"   /* a scratch collection's */

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
  river__random_hex(hex);
  snprintf(sc->rec, sizeof sc->rec, "%s%s", hex, SCRATCH_SUFFIX);
  if (river__record_make(dir, RIVER_OUTFILE_RECORD_DIR, sc->rec, name, line,
                         n, &sc->dirfd, &sc->recfd) != 0) {
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
 * its last component a RIVER_OUTFILE_TMP_TAG name. */
static int tmp_named(const char *path)
{
  const char *base = strrchr(path, '/');

  return path[0] == '/' && base != NULL
         && strstr(base, RIVER_OUTFILE_TMP_TAG) != NULL;
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

int river__pcoll_outside_gc(const river_pcoll_opts *opts, const char *root,
                      int remove, river_pcoll_leftover_fn report, void *arg,
                      river__purge_fn purge, uint64_t *nfiles,
                      uint64_t *nbytes)
{
  char dir[RIVER_PATH_MAX], line[RIVER_PATH_MAX], rec[RIVER_PATH_MAX];
  struct og g = {opts, root, remove, -1, report, arg, purge, nfiles, nbytes};
  struct stat rst;
  struct dirent *de;
  DIR *d;

  if (snprintf(dir, sizeof dir, "%s/%s", root,
               RIVER_OUTFILE_RECORD_DIR) >= (int)sizeof dir)
    return RIVER_SUCCESS;
  g.dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (g.dfd < 0 || (d = fdopendir(g.dfd)) == NULL) {
    if (g.dfd >= 0)
      close(g.dfd);
    return RIVER_SUCCESS;   /* no record ever made here */
  }
  while ((de = readdir(d)) != NULL) {
    int tmp = has_suffix(de->d_name, RIVER_OUTFILE_RECORD_SUFFIX);
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
