/*
 * pcoll_gc.c - leftovers under a root: the files crashed or failed jobs
 * leave behind (river_pcoll_gc) and every file named for one collection
 * (river_pcoll_purge, for a collection whose metadata is damaged).
 *
 * One scan serves both. It reads the root (metadata, temporary metadata,
 * lock files, staged streams) and every disk directory a collection
 * there uses, classifying each entry by its name (pcoll_path.c parses
 * every River file name) into a list of candidates, sorted by the
 * collection they are named for. Then, name by name, it takes that
 * name's writers' lock (pcoll_lock.c), reads the name's metadata afresh
 * and judges each candidate against it: holding the lock, no write of
 * that name is in progress, so nothing it finds can be a file some job
 * is about to commit. Only removal takes locks (and removes nothing it
 * could not lock); a listing only skips names whose lock is held.
 *
 * Data file names carry the collection and generation but not the root,
 * so a disk directory outside the root may hold another root's files of
 * the same name. Which directories are the root's own is decided on the
 * resolved path (dir_is_own): one whose realpath is under the root's
 * realpath, or one of a pattern the caller gives (opts->disks). Any
 * other, whatever the pattern that reached it (a default-pattern diskN
 * that is a symbolic link elsewhere included), is "shared": there gc
 * judges only files of a generation this root claims (gen_claimed: the
 * generation of one of its write records or temporary metadata, made by
 * the caller's user; write generations are random, so no other root has
 * them) and says how many
 * it left; purge removes only those and the files its collection's own
 * metadata names, if the caller's user owns that metadata file (the seal
 * has no secret: another user's metadata may name another root's
 * directory and generation, river__pcoll_foreign).
 *
 * A data file of a generation its name's metadata does not name is
 * kept, not removed, when it looks newer than that metadata (newer_than
 * _meta: no file of the metadata's own generation was found, or the
 * file is younger than the newest of them): a metadata file restored
 * from an older copy must not cost the newest data. RIVER_PCOLL_GC_FORCE
 * removes those too.
 */
#include "pcoll_internal.h"

#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MISSING_DISKS_MAX 16  /* missing disk directories past the last
                                 known one before the scan stops */

struct cand {
  char *path;
  enum river__pcoll_file kind;
  struct river__pcoll_entry e;
  uint64_t bytes;
  int owned;            /* in a directory of the root's own (above) */
  /* metadata only: what reading it gave, and which file was read */
  int st;
  struct river__pcoll_where *w;
  struct stat id;
};

struct scan {
  const char *root;
  const char *only;             /* purge: the one name; gc: NULL */
  int remove;
  int force;                    /* RIVER_PCOLL_GC_FORCE */
  int explicit_disks;           /* the caller gave opts->disks */
  int name_failed;              /* removals that failed for this name */
  uint64_t kept;                /* newer data files kept (not forced) */
  river_pcoll_leftover_fn report;
  void *arg;
  uint64_t nfiles, nbytes;
  uint64_t shared;              /* data files left in shared directories */
  uint64_t ndata;               /* data files found */
  int failed;                   /* names skipped: lock or read failed */
  char real_root[PATH_MAX];     /* realpath of the root ("" if none) */
  struct cand *c;
  size_t n, cap;
  struct stat *dirs;            /* disk directories scanned (dev, ino) */
  size_t ndirs, dircap;
};

/* --------------------------------------------------------- the scan */

static int add_cand(struct scan *s, const char *dir, const char *entry,
                    enum river__pcoll_file kind,
                    const struct river__pcoll_entry *e, int owned)
{
  char path[RIVER_PATH_MAX];
  struct stat st;
  struct cand *c;
  int n;

  if (s->only != NULL && strcmp(e->name, s->only) != 0)
    return RIVER_SUCCESS;
  n = snprintf(path, sizeof path, "%s/%s", dir, entry);
  if (n < 0 || (size_t)n >= sizeof path || lstat(path, &st) != 0
      || !S_ISREG(st.st_mode))
    return RIVER_SUCCESS;  /* not a file River wrote: not ours to judge */
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 64;
    c = realloc(s->c, cap * sizeof *c);
    if (c == NULL)
      return RIVER_ENOMEM;
    s->c = c;
    s->cap = cap;
  }
  c = &s->c[s->n];
  if ((c->path = strdup(path)) == NULL)
    return RIVER_ENOMEM;
  c->kind = kind;
  c->e = *e;
  c->bytes = (uint64_t)st.st_size;
  c->owned = owned;
  c->st = RIVER_ENOTFOUND;
  c->w = NULL;
  c->id = st;
  s->n++;
  return RIVER_SUCCESS;
}

/* Add dir's River files (in_root: the root's kinds, else data files;
 * owned: dir is the root's own). */
static int scan_dir(struct scan *s, const char *dir, int in_root, int owned)
{
  struct river__pcoll_entry e;
  enum river__pcoll_file kind;
  struct dirent *de;
  int rc = RIVER_SUCCESS;
  DIR *d = opendir(dir);

  if (d == NULL) {
    if (errno == ENOENT || (errno == ENOTDIR && !in_root))
      return RIVER_SUCCESS;
    river__error("cannot read directory %s: %s", dir, strerror(errno));
    return errno == EACCES ? RIVER_EACCES : RIVER_EIO;
  }
  while (rc == RIVER_SUCCESS && (de = readdir(d)) != NULL) {
    kind = river__pcoll_parse_entry(de->d_name, in_root, &e);
    if (kind != RIVER__PCOLL_OTHER)
      rc = add_cand(s, dir, de->d_name, kind, &e, owned);
  }
  closedir(d);
  return rc;
}

/* 1 if disk directory dir is the root's own: its realpath is under the
 * root's (a diskN that is a link out of the root is not), or it is one
 * of the caller's --disks pattern (by_pattern). Ownership rule of the
 * file's opening comment; every judgement of a data file rests on it. */
static int dir_is_own(const struct scan *s, const char *dir, int by_pattern)
{
  char real[PATH_MAX];
  size_t n = strlen(s->real_root);

  if (by_pattern && s->explicit_disks)
    return 1;
  return n > 0 && realpath(dir, real) != NULL
         && strncmp(real, s->real_root, n) == 0 && real[n] == '/';
}

/* Scan disk directory dir unless it was scanned already (two patterns
 * may name one directory, or two links one place: compared by device
 * and inode; the first scan decides whether it is the root's own,
 * dir_is_own); *exists: whether it is a directory. */
static int scan_disk(struct scan *s, const char *dir, int owned,
                     int *exists)
{
  struct stat st;
  size_t i;

  *exists = stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
  if (!*exists)
    return RIVER_SUCCESS;
  for (i = 0; i < s->ndirs; i++)
    if (s->dirs[i].st_dev == st.st_dev && s->dirs[i].st_ino == st.st_ino)
      return RIVER_SUCCESS;
  if (s->ndirs == s->dircap) {
    size_t cap = s->dircap ? 2 * s->dircap : 16;
    struct stat *v = realloc(s->dirs, cap * sizeof *v);
    if (v == NULL)
      return RIVER_ENOMEM;
    s->dirs = v;
    s->dircap = cap;
  }
  s->dirs[s->ndirs++] = st;
  return scan_dir(s, dir, 0, dir_is_own(s, dir, owned));
}

/* Scan the disks of pattern pat: 0..known-1, and on while they exist
 * (up to MISSING_DISKS_MAX missing in a row). */
static int scan_pattern(struct scan *s, const char *pat, int known,
                        int owned)
{
  char dir[RIVER_PATH_MAX];
  int d, missing = 0, exists, rc = RIVER_SUCCESS;

  for (d = 0; rc == RIVER_SUCCESS && (d < known
                                      || missing < MISSING_DISKS_MAX); d++) {
    if (river__pcoll_disk_dir(s->root, pat, d, dir, sizeof dir)
        != RIVER_SUCCESS)
      break;
    rc = scan_disk(s, dir, owned, &exists);
    missing = exists ? 0 : missing + 1;
  }
  return rc;
}

/* Read metadata candidate c (once: an unreadable one is reported once). */
static int read_meta(const struct scan *s, struct cand *c)
{
  if (c->w == NULL && (c->w = malloc(sizeof *c->w)) == NULL)
    return RIVER_ENOMEM;
  c->st = river__pcoll_where(s->root, c->e.name, c->w);
  return RIVER_SUCCESS;
}

/* Scan the disks of pattern pat (the caller's, or the default), of
 * every readable collection under the root and of every write record
 * there (a killed write's pattern, which may be in no metadata); the
 * candidates list holds the root's files now. */
static int scan_disks(struct scan *s, const char *pat)
{
  struct river__pcoll_record rec;
  size_t i, nroot = s->n;
  int rc = scan_pattern(s, pat, 0, 1);

  for (i = 0; rc == RIVER_SUCCESS && i < nroot; i++) {
    if (s->c[i].kind == RIVER__PCOLL_RECORD
        && s->c[i].id.st_uid == geteuid()  /* as may_claim, below */
        && river__pcoll_record_read(s->c[i].path, &rec) == RIVER_SUCCESS
        && strcmp(rec.generation, s->c[i].e.gen) == 0)
      rc = scan_pattern(s, rec.disks, rec.ndisks, 0);
    if (s->c[i].kind != RIVER__PCOLL_META)
      continue;
    rc = read_meta(s, &s->c[i]);
    if (rc == RIVER_SUCCESS && s->c[i].st == RIVER_SUCCESS)
      rc = scan_pattern(s, s->c[i].w->disks, s->c[i].w->ndisks, 0);
  }
  return rc;
}

/* Holding name's lock: what its metadata says now. meta: the metadata
 * candidate of the name (NULL if there was none at the scan). Read
 * again, except that a file found unreadable at the scan and unchanged
 * since is not read (and reported) twice: a readable one is always read
 * again, as a commit may have replaced it with a file that looks the
 * same (the inode reused, the same second). */
static int meta_now(const struct scan *s, const char *name,
                    const struct cand *meta, struct river__pcoll_where *w)
{
  char path[RIVER_PATH_MAX];
  struct stat st;

  if (meta != NULL && meta->w != NULL && meta->st != RIVER_SUCCESS
      && meta->st != RIVER_ENOTFOUND
      && river__pcoll_meta_path(s->root, name, NULL, path, sizeof path)
             == RIVER_SUCCESS
      && lstat(path, &st) == 0 && st.st_dev == meta->id.st_dev
      && st.st_ino == meta->id.st_ino
      && st.st_mtime == meta->id.st_mtime) {
    *w = *meta->w;
    return meta->st;
  }
  return river__pcoll_where(s->root, name, w);
}

/* ------------------------------------------------------ the judging */

/* One name's candidates [from, to) as judge sees them. */
struct name_view {
  const struct cand *c;
  size_t from, to;
};

/* 1 if root file c may claim a generation: a write record or temporary
 * metadata that the caller's user made (anyone who can create files in
 * a shared root could plant one naming another root's generation). */
static int may_claim(const struct cand *c)
{
  return (c->kind == RIVER__PCOLL_RECORD || c->kind == RIVER__PCOLL_META_TMP)
         && c->id.st_uid == geteuid();
}

/* 1 if this root claims generation gen of the name: one of its write
 * records or temporary metadata files (in the root itself) carries it. */
static int gen_claimed(const struct name_view *v, const char *gen)
{
  size_t i;

  for (i = v->from; i < v->to; i++)
    if (may_claim(&v->c[i]) && strcmp(v->c[i].e.gen, gen) == 0)
      return 1;
  return 0;
}

/* 1 if data file c, of a generation the metadata w does not name, may be
 * newer than that metadata: none of the metadata's own data files was
 * found, or c was modified after the newest of them. */
static int newer_than_meta(const struct name_view *v, const struct cand *c,
                           const struct river__pcoll_where *w)
{
  const struct stat *x;
  size_t i;

  for (i = v->from; i < v->to; i++) {
    if (v->c[i].kind != RIVER__PCOLL_DATA
        || strcmp(v->c[i].e.gen, w->generation) != 0)
      continue;
    x = &v->c[i].id;
    if (x->st_mtim.tv_sec > c->id.st_mtim.tv_sec
        || (x->st_mtim.tv_sec == c->id.st_mtim.tv_sec
            && x->st_mtim.tv_nsec >= c->id.st_mtim.tv_nsec))
      return 0;  /* a file of the metadata's generation is as new */
  }
  return 1;
}

#define NEWER_NOTE "data file newer than its collection's metadata (was " \
  "the metadata restored from an older copy?): kept; `river gc --remove " \
  "--force` removes it"

/* What candidate c is, if it is a leftover while the name's lock is
 * held; NULL if it is needed. st: the name's metadata read (RIVER_
 * SUCCESS with w, RIVER_ENOTFOUND, or an error: unreadable). *keep: set
 * for a file listed but not to be removed (NEWER_NOTE). */
static const char *judge(struct scan *s, const struct name_view *v,
                         const struct cand *c, int st,
                         const struct river__pcoll_where *w, int *keep)
{
  int current = st == RIVER_SUCCESS && strcmp(c->e.gen, w->generation) == 0
                && c->e.part < w->npartitions;
  int claimed = gen_claimed(v, c->e.gen);

  *keep = 0;
  if ((c->kind == RIVER__PCOLL_DATA || c->kind == RIVER__PCOLL_DATA_TMP)
      && !c->owned && !claimed) {
    /* A shared directory: maybe another root's file of the same name.
     * Purge takes the metadata's word for its own generation there,
     * but only the word of the caller's own metadata (another user's
     * may name another root's files: river__pcoll_foreign). */
    if (s->only && current && !river__pcoll_foreign(w))
      return "data file";
    s->shared += !s->only;
    return NULL;
  }
  switch (c->kind) {
  case RIVER__PCOLL_META:
    return s->only ? "metadata" : NULL;
  case RIVER__PCOLL_META_TMP:
    return "temporary metadata of a write that never committed";
  case RIVER__PCOLL_LOCK:
    return NULL;  /* never reported: see judge_name */
  case RIVER__PCOLL_STAGING:
    return river__file_in_use(c->path) ? NULL : "staged copy-in stream";
  case RIVER__PCOLL_RECORD:
    return "record of a write that never finished";
  case RIVER__PCOLL_DATA_TMP:
    return "unfinished data file (a write that never committed)";
  case RIVER__PCOLL_DATA:
    if (s->only)
      return "data file";
    if (st != RIVER_SUCCESS && st != RIVER_ENOTFOUND)
      return NULL;  /* unreadable metadata: river_pcoll_purge's to judge */
    if (current)
      return NULL;
    if (st == RIVER_ENOTFOUND)
      return "data file of no collection";
    if (claimed)
      return "data file of a write that never committed";
    if (!s->force && newer_than_meta(v, c, w)) {
      *keep = 1;
      return NEWER_NOTE;
    }
    return "data file of a generation the metadata no longer names";
  case RIVER__PCOLL_OTHER:
    break;
  }
  return NULL;
}

/* Report candidate c as a leftover (what) and remove it if asked
 * (keep: only list it, and count it apart). A record is removed only
 * if every file of its name went. */
static void found(struct scan *s, const struct cand *c, const char *what,
                  int keep)
{
  river_pcoll_leftover l;

  l.path = c->path;
  l.name = c->e.name;
  l.what = what;
  l.bytes = c->bytes;
  l.removed = 0;
  if (keep) {
    s->kept++;
    if (s->report)
      s->report(&l, s->arg);
    return;
  }
  if (s->remove && c->kind == RIVER__PCOLL_RECORD && s->name_failed) {
    river__warn("%s kept: files of its write could not be removed", c->path);
  } else if (s->remove) {
    if (unlink(c->path) == 0 || errno == ENOENT)
      l.removed = 1;
    else
      s->name_failed++;
    if (!l.removed)
      river__warn("cannot remove %s: %s", c->path, strerror(errno));
  }
  s->nfiles++;
  s->nbytes += c->bytes;
  s->ndata += c->kind == RIVER__PCOLL_DATA || c->kind == RIVER__PCOLL_DATA_TMP;
  if (s->report)
    s->report(&l, s->arg);
}

/* The name's lock for removing its files: RIVER_SUCCESS with *fd, or
 * the reason it is left alone (said here, as a warning for gc, as the
 * error for purge, which then fails). A listing takes no lock: it only
 * skips a name whose lock is held. */
static int lock_name(struct scan *s, const char *name, int *fd)
{
  char path[RIVER_PATH_MAX];
  int rc;

  *fd = -1;
  if (!s->remove) {
    rc = river__pcoll_lock_path(s->root, name, path, sizeof path);
    if (rc == RIVER_SUCCESS && river__file_in_use(path))
      rc = RIVER_EBUSY;
  } else {
    rc = river__pcoll_lock(s->root, name,
                           RIVER__LOCK_QUIET | RIVER__LOCK_REQUIRED, fd);
  }
  if (rc == RIVER_EBUSY && s->only)
    river__error("collection %s is in use: another job is writing or "
                 "removing it; nothing removed", name);
  else if (rc == RIVER_EBUSY)
    river__warn("collection %s is being written or removed: its files "
                "were left alone", name);
  else if (rc != RIVER_SUCCESS && !s->only)
    river__warn("collection %s: its files were left alone (see above)",
                name);
  return rc;
}

/* Purge of a name whose metadata (w) another user owns: say that the
 * files it names outside the root's own directories stay. */
static void warn_foreign(const struct scan *s, const char *name,
                         const struct river__pcoll_where *w)
{
  char path[RIVER_PATH_MAX], who[320];

  if (river__pcoll_meta_path(s->root, name, NULL, path, sizeof path)
      != RIVER_SUCCESS)
    return;
  river__pcoll_owner_name(w->owner, who, sizeof who);
  river__warn("collection %s: its metadata %s belongs to %s, not to you: "
              "only the files named %s in this root's own disk "
              "directories are removed; the data files it names elsewhere "
              "(disks '%s', generation %s) are left alone (River removes "
              "no data file on the word of another user's metadata)",
              name, path, who, name, w->disks, w->generation);
}

/* Judge candidates [from, to), all named for one collection, holding
 * its lock (when removing). Lock files are not reported: removing, the
 * lock file goes as the lock is released whenever no collection of the
 * name is left. */
static int judge_name(struct scan *s, size_t from, size_t to)
{
  const char *name = s->c[from].e.name, *what;
  const struct cand *meta = NULL;
  struct name_view v = {s->c, from, to};
  struct river__pcoll_where w;
  size_t i;
  int fd, st, keep, rc = lock_name(s, name, &fd);

  if (rc != RIVER_SUCCESS) {
    s->failed++;
    return s->only ? rc : RIVER_SUCCESS;
  }
  for (i = from; i < to; i++)
    if (s->c[i].kind == RIVER__PCOLL_META)
      meta = &s->c[i];
  st = meta_now(s, name, meta, &w);
  if (st != RIVER_SUCCESS && st != RIVER_ENOTFOUND && !s->only)
    river__warn("collection %s: metadata unreadable, so its data files "
                "were not judged%s%s%s", name,
                meta && S_ISREG(meta->id.st_mode) ? " (`river rm --force "
                                                  : "",
                meta && S_ISREG(meta->id.st_mode) ? name : "",
                meta && S_ISREG(meta->id.st_mode) ? "` removes them)" : "");
  if (s->only && st == RIVER_SUCCESS && river__pcoll_foreign(&w))
    warn_foreign(s, name, &w);
  s->name_failed = 0;
  for (i = from; i < to; i++)
    if ((what = judge(s, &v, &s->c[i], st, &w, &keep)) != NULL)
      found(s, &s->c[i], what, keep);
  if (s->only)
    st = RIVER_ENOTFOUND;  /* purged */
  river__pcoll_unlock(fd, s->root, name, st == RIVER_ENOTFOUND);
  return RIVER_SUCCESS;
}

/* Order: by name, then kind (a purge removes the metadata first), then
 * path. */
static int cmp_cand(const void *a, const void *b)
{
  const struct cand *x = a, *y = b;
  int c = strcmp(x->e.name, y->e.name);

  if (c == 0)
    c = (int)x->kind - (int)y->kind;
  return c != 0 ? c : strcmp(x->path, y->path);
}

/* ------------------------------------------------------------ the API */

static void scan_free(struct scan *s)
{
  size_t i;

  for (i = 0; i < s->n; i++) {
    free(s->c[i].path);
    free(s->c[i].w);
  }
  free(s->c);
  free(s->dirs);
}

/* The engine of both calls: scan, then judge name by name. */
static int run(struct scan *s, const river_pcoll_opts *opts)
{
  const char *pat = opts && opts->disks ? opts->disks
                                        : river__pcoll_default_disks();
  size_t i, j;
  int rc = scan_dir(s, s->root, 1, 1);

  if (rc == RIVER_SUCCESS)
    rc = scan_disks(s, pat);
  if (rc != RIVER_SUCCESS)
    return rc;
  if (s->n > 1)
    qsort(s->c, s->n, sizeof *s->c, cmp_cand);
  for (i = 0; rc == RIVER_SUCCESS && i < s->n; i = j) {
    for (j = i + 1; j < s->n && strcmp(s->c[j].e.name, s->c[i].e.name) == 0;
         j++)
      ;
    rc = judge_name(s, i, j);
  }
  return rc;
}

/* Check the common arguments and resolve the root. */
static int setup(struct scan *s, char *root, const river_pcoll_opts *opts,
                 int remove, river_pcoll_leftover_fn report, void *arg)
{
  memset(s, 0, sizeof *s);
  if (remove != 0 && remove != 1 && remove != (1 | RIVER_PCOLL_GC_FORCE))
    return RIVER_EINVAL;
  if (opts && opts->disks
      && river__pcoll_check_disks(opts->disks) != RIVER_SUCCESS)
    return RIVER_EINVAL;
  if (river__pcoll_resolve_root(opts, root, RIVER_PATH_MAX) != RIVER_SUCCESS)
    return RIVER_EINVAL;
  s->root = root;
  if (realpath(root, s->real_root) == NULL)
    s->real_root[0] = '\0';
  s->remove = remove & 1;
  s->force = (remove & RIVER_PCOLL_GC_FORCE) != 0;
  s->explicit_disks = opts && opts->disks;
  s->report = report;
  s->arg = arg;
  return RIVER_SUCCESS;
}

static void give_counts(const struct scan *s, uint64_t *nfiles,
                        uint64_t *nbytes)
{
  if (nfiles)
    *nfiles = s->nfiles;
  if (nbytes)
    *nbytes = s->nbytes;
}

int river_pcoll_gc(const river_pcoll_opts *opts, int remove,
                   river_pcoll_leftover_fn report, void *arg,
                   uint64_t *nfiles, uint64_t *nbytes)
{
  char root[RIVER_PATH_MAX];
  struct scan s;
  int rc = setup(&s, root, opts, remove, report, arg);

  if (rc != RIVER_SUCCESS)
    return rc;
  rc = run(&s, opts);
  if (rc == RIVER_SUCCESS)   /* what lies outside (pcoll_outside.c) */
    rc = river__pcoll_outside_gc(opts, root, remove, report, arg,
                                 river_pcoll_purge, &s.nfiles, &s.nbytes);
  if (rc == RIVER_SUCCESS && s.shared > 0)
    river__warn("%llu data files in disk directories outside %s (after "
                "resolving links) were not judged: other roots may use "
                "those directories (give --disks PATTERN to judge a "
                "pattern's directories as this root's own, only if no "
                "other root uses them)", (unsigned long long)s.shared, root);
  if (rc == RIVER_SUCCESS && s.kept > 0)
    river__warn("%llu data files newer than their collection's metadata "
                "were listed but kept%s", (unsigned long long)s.kept,
                s.remove ? " (`river gc --remove --force` removes them)"
                         : "");
  if (rc == RIVER_SUCCESS)
    give_counts(&s, nfiles, nbytes);
  scan_free(&s);
  return rc;
}

int river_pcoll_purge(const char *name, const river_pcoll_opts *opts,
                      river_pcoll_leftover_fn report, void *arg,
                      uint64_t *nfiles, uint64_t *nbytes)
{
  char root[RIVER_PATH_MAX], path[RIVER_PATH_MAX];
  struct stat st;
  struct scan s;
  int rc;

  if (name == NULL || river_pcoll_check_name(name) != RIVER_SUCCESS)
    return RIVER_EINVAL;
  rc = setup(&s, root, opts, 1, report, arg);
  if (rc != RIVER_SUCCESS)
    return rc;
  s.only = name;
  if (river__pcoll_meta_path(root, name, NULL, path, sizeof path)
          == RIVER_SUCCESS
      && lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    river__error("collection %s: %s is not a regular file (not River's); "
                 "nothing removed", name, path);
    return RIVER_ECORRUPT;
  }
  rc = run(&s, opts);
  if (rc == RIVER_SUCCESS && s.nfiles == 0) {
    river__error("collection %s: nothing of that name under %s", name, root);
    rc = RIVER_ENOTFOUND;
  } else if (rc == RIVER_SUCCESS && s.ndata == 0) {
    river__warn("collection %s: no data files found on the disks searched; "
                "if it was written with --disks PATTERN, run this again "
                "with the same --disks", name);
  }
  if (rc == RIVER_SUCCESS)
    give_counts(&s, nfiles, nbytes);
  scan_free(&s);
  return rc;
}
