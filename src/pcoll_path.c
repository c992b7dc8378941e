/*
 * pcoll_path.c - where a parallel collection's files live: the name rule,
 * the root rule, disk patterns and the names of the metadata and data
 * files. Each file-name format is spelled here once; every other file
 * (and the river command) asks these functions.
 *
 * Nothing here holds state: the functions map (root, pattern, name,
 * partition, generation) to strings, with RIVER_EOVERFLOW when a result
 * does not fit its buffer; river_pcoll_list reads the root directory.
 * Temporary names carry a random tag (river__pcoll_random_tag), so that
 * no one can plant a link where a write will create a file: River
 * creates them O_EXCL|O_NOFOLLOW, and a name nobody can guess is also
 * one nobody can block.
 */
#include "pcoll_internal.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/random.h>
#endif

/* The files of collection NAME with write generation GEN (16 hex
 * digits); TAG is 'x' and 16 random hex digits, fresh for each file.
 * Valid names never start with '.', so nothing River names with a
 * leading '.' can be taken for a collection.
 *   ROOT/NAME.h5                    the metadata
 *   ROOT/.tmp.NAME.GEN.TAG.h5       the metadata while GEN commits
 *   ROOT/.NAME.lock                 the writers' lock (pcoll_lock.c)
 *   ROOT/.NAME.GEN.write            the record of write GEN while it
 *                                   runs (pcoll_record.c)
 *   ROOT/.NAME.copy-in.XXXXXX       the river command's staged stream
 *   DISK/NAME.pP.GEN.rdat           partition P's data on a disk
 *   DISK/NAME.pP.GEN.TAG.rdat.tmp   the same while it is written
 * Builds before the tags wrote ROOT/.tmp.NAME.GEN.h5 and
 * DISK/NAME.pP.GEN.rdat.tmp: the parser still knows them (gc). */
#define META_TMP_TAG ".tmp."
#define LOCK_SUFFIX ".lock"
#define RECORD_SUFFIX ".write"
#define STAGING_TAG ".copy-in."
#define DATA_SUFFIX ".rdat"
#define DATA_TMP_SUFFIX ".rdat.tmp"
#define TAG_LEN 18   /* ".x" and 16 hex digits */

/* What is wrong with a collection name (see river_pcoll_create). */
enum name_fault {
  NAME_OK, NAME_LENGTH, NAME_DOT, NAME_DASH, NAME_CHAR, NAME_DOTDOT
};

/* Check name without logging; *bad_char gets the offending character
 * for NAME_CHAR. */
static enum name_fault name_fault(const char *name, char *bad_char)
{
  size_t i, n = strlen(name);

  if (n == 0 || n > RIVER_PCOLL_NAME_MAX)
    return NAME_LENGTH;
  if (name[0] == '.')
    return NAME_DOT;
  if (name[0] == '-')
    return NAME_DASH;
  for (i = 0; i < n; i++) {
    char ch = name[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')
          || (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-')) {
      *bad_char = ch;
      return NAME_CHAR;
    }
  }
  return strstr(name, "..") != NULL ? NAME_DOTDOT : NAME_OK;
}

int river_pcoll_check_name(const char *name)
{
  char ch = 0;

  if (name == NULL)
    return RIVER_EINVAL;
  switch (name_fault(name, &ch)) {
  case NAME_OK:
    return RIVER_SUCCESS;
  case NAME_LENGTH:
    river__error("collection name '%s': must be 1..%d characters", name,
                 RIVER_PCOLL_NAME_MAX);
    break;
  case NAME_DOT:
    river__error("collection name '%s': may not start with '.'", name);
    break;
  case NAME_DASH:
    river__error("collection name '%s': may not start with '-' (it would "
                 "read as an option)", name);
    break;
  case NAME_CHAR:
    river__error("collection name '%s': character '%c' not allowed (use "
                 "letters, digits, '.', '_', '-'; no '/')", name, ch);
    break;
  case NAME_DOTDOT:
    river__error("collection name '%s': may not contain '..'", name);
    break;
  }
  return RIVER_EINVAL;
}

int river__pcoll_check_disks(const char *pat)
{
  const char *p;
  int nd = 0, nn = 0;
  size_t n = strlen(pat);

  if (n == 0 || n >= RIVER_PATH_MAX / 2) {
    river__error("disk pattern '%s': empty or too long", pat);
    return RIVER_EINVAL;
  }
  for (p = pat; *p; p++) {
    if (*p != '%')
      continue;
    if (p[1] == 'd')
      nd++;
    else if (p[1] == 'n')
      nn++;
    else if (p[1] == 'r') {
      /* Decided (issue 34): a disk's directory must be the same for every
       * rank that writes, serves or removes it, whatever its rank in
       * whichever job; %d already names the disk, %n its node. */
      river__error("disk pattern '%s': %%r (a rank) is not allowed: a "
                   "disk's directory must not depend on which rank reads "
                   "it; use %%d for the disk and %%n for the node's name",
                   pat);
      return RIVER_EINVAL;
    } else if (p[1] != '%') {
      river__error("disk pattern '%s': only %%d (once), %%n (at most once) "
                   "and %%%% are allowed", pat);
      return RIVER_EINVAL;
    }
    p++;
  }
  if (nd != 1) {
    river__error("disk pattern '%s': needs exactly one %%d for the disk "
                 "number", pat);
    return RIVER_EINVAL;
  }
  if (nn > 1) {
    river__error("disk pattern '%s': %%n (the node's name) may appear at "
                 "most once", pat);
    return RIVER_EINVAL;
  }
  for (p = pat; (p = strstr(p, "..")) != NULL; p += 2) {
    int starts = p == pat || p[-1] == '/';
    int ends = p[2] == '\0' || p[2] == '/';
    if (starts && ends) {
      river__error("disk pattern '%s': '..' would escape the root", pat);
      return RIVER_EINVAL;
    }
  }
  return RIVER_SUCCESS;
}

int river__pcoll_node_local(const char *pat)
{
  const char *p;

  for (p = pat; p != NULL && *p; p++) {
    if (*p != '%')
      continue;
    if (p[1] == 'n')
      return 1;
    if (p[1] != '\0')
      p++;
  }
  return 0;
}

const char *river__pcoll_default_disks(void)
{
  const char *env = getenv("RIVER_DISKS");

  return env != NULL && *env != '\0' ? env : RIVER_PCOLL_DEFAULT_DISKS;
}

int river__pcoll_this_node(char *buf, size_t size)
{
  size_t len = size;
  int rc = river_node_name(buf, &len);

  if (rc != RIVER_SUCCESS) {
    river__error("the node's name does not fit %zu bytes", size);
    return RIVER_EOVERFLOW;
  }
  /* It becomes one component of a path: no '/', not "." or "..". */
  if (buf[0] == '\0' || strchr(buf, '/') != NULL || strcmp(buf, ".") == 0
      || strcmp(buf, "..") == 0) {
    river__error("node name '%s' (RIVER_NODE_NAME, else SLURMD_NODENAME, "
                 "else the host name) cannot stand for %%n in a disk "
                 "pattern: it must be one path component", buf);
    return RIVER_EINVAL;
  }
  return RIVER_SUCCESS;
}

int river__pcoll_resolve_root(const river_pcoll_opts *opts, char *root,
                              size_t size)
{
  const char *r = opts && opts->root ? opts->root : getenv("RIVER_ROOT");
  size_t n;

  if (opts && opts->root && opts->root[0] == '\0') {
    river__error("root: empty (give a directory, or no root for $RIVER_ROOT "
                 "or %s)", RIVER_PCOLL_DEFAULT_ROOT);
    return RIVER_EINVAL;
  }
  if (r == NULL || *r == '\0')
    r = RIVER_PCOLL_DEFAULT_ROOT;
  n = strlen(r);
  if (n > RIVER_PCOLL_ROOT_MAX || n >= size) {
    river__error("root '%.40s...' is %zu bytes; River's roots are limited "
                 "to %d", r, n, RIVER_PCOLL_ROOT_MAX);
    return RIVER_EINVAL;
  }
  memcpy(root, r, n + 1);
  return RIVER_SUCCESS;
}

int river__pcoll_disk_dir(const char *root, const char *pat, int d,
                          char *buf, size_t size)
{
  char num[16], node[256];
  size_t o = 0;
  const char *p;
  int rc;

  if (river__pcoll_node_local(pat)
      && (rc = river__pcoll_this_node(node, sizeof node)) != RIVER_SUCCESS)
    return rc;
  if (pat[0] != '/') {
    int n = snprintf(buf, size, "%s/", root);
    if (n < 0 || (size_t)n >= size)
      return RIVER_EOVERFLOW;
    o = (size_t)n;
  }
  snprintf(num, sizeof num, "%d", d);
  for (p = pat; *p; p++) {
    const char *piece = p;
    size_t len = 1;
    if (p[0] == '%' && (p[1] == 'd' || p[1] == 'n')) {
      piece = p[1] == 'd' ? num : node;
      len = strlen(piece);
      p++;
    } else if (p[0] == '%' && p[1] == '%') {
      p++;
    }
    if (o + len >= size)
      return RIVER_EOVERFLOW;
    memcpy(buf + o, piece, len);
    o += len;
  }
  buf[o] = '\0';
  return RIVER_SUCCESS;
}

int river__pcoll_file_path(const char *root, const char *pat, int d,
                           const char *file, char *buf, size_t size)
{
  char dir[RIVER_PATH_MAX];
  int rc = river__pcoll_disk_dir(root, pat, d, dir, sizeof dir);
  int n;

  if (rc != RIVER_SUCCESS)
    return rc;
  n = snprintf(buf, size, "%s/%s", dir, file);
  return n < 0 || (size_t)n >= size ? RIVER_EOVERFLOW : RIVER_SUCCESS;
}

void river__pcoll_random_tag(char out[17])
{
  unsigned char b[8];
  size_t got = 0;
  int i;

#if defined(__linux__)
  while (got < sizeof b) {
    ssize_t n = getrandom(b + got, sizeof b - got, 0);
    if (n <= 0)
      break;
    got += (size_t)n;
  }
#endif
  if (got < sizeof b) {
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    ssize_t n = fd >= 0 ? read(fd, b, sizeof b) : -1;
    got = n == (ssize_t)sizeof b ? sizeof b : 0;
    if (fd >= 0)
      close(fd);
  }
  if (got < sizeof b) {  /* no randomness to be had: unique, not secret */
    static uint64_t seq;
    struct timespec ts;
    uint64_t x;
    clock_gettime(CLOCK_REALTIME, &ts);
    x = river__mix64((uint64_t)ts.tv_sec * 1000000000u
                     + (uint64_t)ts.tv_nsec + ((uint64_t)getpid() << 40)
                     + ++seq * RIVER_MIX64_STEP);
    for (i = 0; i < 8; i++)
      b[i] = (unsigned char)(x >> (8 * i));
  }
  for (i = 0; i < 8; i++)
    snprintf(out + 2 * i, 3, "%02x", b[i]);
}

int river__pcoll_meta_path(const char *root, const char *name,
                           const char *tmp_gen, char *buf, size_t size)
{
  char tag[17];
  int n;

  if (tmp_gen)
    river__pcoll_random_tag(tag);
  n = tmp_gen ? snprintf(buf, size, "%s/" META_TMP_TAG "%s.%s.x%s"
                         RIVER_PCOLL_META_SUFFIX, root, name, tmp_gen, tag)
              : snprintf(buf, size, "%s/%s" RIVER_PCOLL_META_SUFFIX,
                         root, name);

  return n < 0 || (size_t)n >= size ? RIVER_EOVERFLOW : RIVER_SUCCESS;
}

int river__pcoll_record_path(const char *root, const char *name,
                             const char *gen, char *buf, size_t size)
{
  int n = snprintf(buf, size, "%s/.%s.%s" RECORD_SUFFIX, root, name, gen);

  return n < 0 || (size_t)n >= size ? RIVER_EOVERFLOW : RIVER_SUCCESS;
}

int river__pcoll_lock_path(const char *root, const char *name, char *buf,
                           size_t size)
{
  int n = snprintf(buf, size, "%s/.%s" LOCK_SUFFIX, root, name);

  return n < 0 || (size_t)n >= size ? RIVER_EOVERFLOW : RIVER_SUCCESS;
}

int river__pcoll_staging_path(const char *root, const char *name, char *buf,
                              size_t size)
{
  int n = snprintf(buf, size, "%s/.%s" STAGING_TAG "XXXXXX", root, name);

  return n < 0 || (size_t)n >= size ? RIVER_EOVERFLOW : RIVER_SUCCESS;
}

/* 1 if s is n lowercase hex digits. */
static int is_hex(const char *s, size_t n)
{
  size_t i;

  for (i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return 0;
  return 1;
}

int river__pcoll_is_generation(const char *gen)
{
  return gen != NULL && strlen(gen) == 16 && is_hex(gen, 16);
}

/* 1 if entry ends with suffix; *stem_len gets the length before it. */
static int ends_with(const char *entry, const char *suffix, size_t *stem_len)
{
  size_t n = strlen(entry), sl = strlen(suffix);

  if (n < sl || strcmp(entry + n - sl, suffix) != 0)
    return 0;
  *stem_len = n - sl;
  return 1;
}

/* The length of s[0..n) without a trailing random tag (".x" and 16
 * hex digits), if it has one. */
static size_t untag(const char *s, size_t n)
{
  return n > TAG_LEN && s[n - TAG_LEN] == '.' && s[n - TAG_LEN + 1] == 'x'
                 && is_hex(s + n - 16, 16)
             ? n - TAG_LEN : n;
}

/* Copy the first n bytes of s into name if they are a valid collection
 * name; 0 if not. */
static int take_name(const char *s, size_t n, char *name)
{
  char ch;

  if (n == 0 || n > RIVER_PCOLL_NAME_MAX)
    return 0;
  memcpy(name, s, n);
  name[n] = '\0';
  return name_fault(name, &ch) == NAME_OK;
}

/* A disk directory's entry: NAME.pP.GEN.rdat or its .tmp. */
static enum river__pcoll_file data_entry(const char *entry,
                                         struct river__pcoll_entry *e)
{
  enum river__pcoll_file kind = RIVER__PCOLL_DATA_TMP;
  const char *dotp;
  size_t stem;
  char *end;
  long p;

  if (!ends_with(entry, DATA_TMP_SUFFIX, &stem)) {
    kind = RIVER__PCOLL_DATA;
    if (!ends_with(entry, DATA_SUFFIX, &stem))
      return RIVER__PCOLL_OTHER;
  } else {
    stem = untag(entry, stem);
  }
  /* ... .pP.GEN: GEN is the last 16 characters of the stem */
  if (stem < 21 || entry[stem - 17] != '.'
      || !is_hex(entry + stem - 16, 16))
    return RIVER__PCOLL_OTHER;
  memcpy(e->gen, entry + stem - 16, 16);
  e->gen[16] = '\0';
  for (dotp = entry + stem - 18; dotp > entry && *dotp != '.'; dotp--)
    ;
  if (dotp == entry || dotp[1] != 'p' || dotp[2] < '0' || dotp[2] > '9')
    return RIVER__PCOLL_OTHER;
  errno = 0;
  p = strtol(dotp + 2, &end, 10);
  if (errno != 0 || end != entry + stem - 17 || p > INT_MAX)
    return RIVER__PCOLL_OTHER;
  e->part = (int)p;
  return take_name(entry, (size_t)(dotp - entry), e->name)
             ? kind : RIVER__PCOLL_OTHER;
}

/* A root directory's entry: metadata, its temporary, lock, write record
 * or staging. */
static enum river__pcoll_file root_entry(const char *entry,
                                         struct river__pcoll_entry *e)
{
  size_t stem, tl = strlen(META_TMP_TAG);
  const char *s;

  /* No suffix is another's: a staged stream ends in six letters or
   * digits (mkstemp), metadata in .h5, a lock in .lock. */
  if (entry[0] == '.' && ends_with(entry, LOCK_SUFFIX, &stem))
    return take_name(entry + 1, stem - 1, e->name) ? RIVER__PCOLL_LOCK
                                                   : RIVER__PCOLL_OTHER;
  if (entry[0] == '.' && ends_with(entry, RECORD_SUFFIX, &stem)) {
    if (stem < 19 || entry[stem - 17] != '.' || !is_hex(entry + stem - 16, 16))
      return RIVER__PCOLL_OTHER;
    memcpy(e->gen, entry + stem - 16, 16);
    e->gen[16] = '\0';
    return take_name(entry + 1, stem - 18, e->name) ? RIVER__PCOLL_RECORD
                                                    : RIVER__PCOLL_OTHER;
  }
  if (ends_with(entry, RIVER_PCOLL_META_SUFFIX, &stem)) {
    if (entry[0] != '.')
      return take_name(entry, stem, e->name) ? RIVER__PCOLL_META
                                             : RIVER__PCOLL_OTHER;
    stem = untag(entry, stem);
    if (strncmp(entry, META_TMP_TAG, tl) != 0 || stem < tl + 17
        || entry[stem - 17] != '.' || !is_hex(entry + stem - 16, 16))
      return RIVER__PCOLL_OTHER;
    memcpy(e->gen, entry + stem - 16, 16);
    e->gen[16] = '\0';
    return take_name(entry + tl, stem - 17 - tl, e->name)
               ? RIVER__PCOLL_META_TMP : RIVER__PCOLL_OTHER;
  }
  /* .NAME.copy-in.XXXXXX */
  stem = strlen(entry);
  if (entry[0] != '.' || stem < 1 + strlen(STAGING_TAG) + 6)
    return RIVER__PCOLL_OTHER;
  s = entry + stem - 6 - strlen(STAGING_TAG);
  if (strncmp(s, STAGING_TAG, strlen(STAGING_TAG)) != 0)
    return RIVER__PCOLL_OTHER;
  return take_name(entry + 1, (size_t)(s - entry - 1), e->name)
             ? RIVER__PCOLL_STAGING : RIVER__PCOLL_OTHER;
}

enum river__pcoll_file river__pcoll_parse_entry(const char *entry,
                                                int in_root,
                                                struct river__pcoll_entry *e)
{
  memset(e, 0, sizeof *e);
  e->part = -1;
  if (entry == NULL)
    return RIVER__PCOLL_OTHER;
  return in_root ? root_entry(entry, e) : data_entry(entry, e);
}

int river__pcoll_data_name(const char *name, int p, const char *gen,
                           char *buf, size_t size)
{
  int n = snprintf(buf, size, "%s.p%d.%s" DATA_SUFFIX, name, p, gen);

  return n < 0 || (size_t)n >= size ? RIVER_EOVERFLOW : RIVER_SUCCESS;
}

int river__pcoll_data_tmp_name(const char *name, int p, const char *gen,
                               char *buf, size_t size)
{
  char tag[17];
  int n;

  river__pcoll_random_tag(tag);
  n = snprintf(buf, size, "%s.p%d.%s.x%s" DATA_TMP_SUFFIX, name, p, gen, tag);
  return n < 0 || (size_t)n >= size ? RIVER_EOVERFLOW : RIVER_SUCCESS;
}

int river__pcoll_mkdirs(const char *path)
{
  char tmp[RIVER_PATH_MAX];
  char *p;

  if (strlen(path) >= sizeof tmp)
    return RIVER_EOVERFLOW;
  strcpy(tmp, path);
  for (p = tmp + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
      goto fail;
    *p = '/';
  }
  if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
    goto fail;
  return RIVER_SUCCESS;
fail:
  river__error("cannot create directory %s: %s", tmp, strerror(errno));
  return RIVER_EIO;
}

int river__pcoll_disk_ready(const char *dir)
{
  struct stat st;
  int rc = river__pcoll_mkdirs(dir);

  if (rc != RIVER_SUCCESS)
    return rc;
  if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode) && st.st_uid != geteuid()
      && st.st_uid != 0) {
    river__error("disk directory %s is a symbolic link owned by another "
                 "user (uid %u): River does not follow it (remove it, or "
                 "make the link yourself)", dir, (unsigned)st.st_uid);
    return RIVER_EACCES;
  }
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    river__error("disk directory %s: not a directory", dir);
    return RIVER_EIO;
  }
  return RIVER_SUCCESS;
}

int river_pcoll_disk_path(const river_pcoll *pc, int d, char *buf,
                          size_t *len)
{
  char dir[RIVER_PATH_MAX];
  int rc;

  if (pc == NULL || d < 0 || d >= pc->info.ndisks || buf == NULL
      || len == NULL)
    return RIVER_EINVAL;
  rc = river__pcoll_disk_dir(pc->root, pc->disks, d, dir, sizeof dir);
  return rc == RIVER_SUCCESS ? river__copy_out(dir, buf, len) : rc;
}

int river_pcoll_disk_dir(const river_pcoll_opts *opts, int d, char *buf,
                         size_t *len)
{
  const char *pat = opts && opts->disks ? opts->disks
                                        : river__pcoll_default_disks();
  char root[RIVER_PATH_MAX], dir[RIVER_PATH_MAX];
  int rc;

  if (d < 0 || buf == NULL || len == NULL)
    return RIVER_EINVAL;
  if (river__pcoll_resolve_root(opts, root, sizeof root) != RIVER_SUCCESS
      || river__pcoll_check_disks(pat) != RIVER_SUCCESS)
    return RIVER_EINVAL;
  rc = river__pcoll_disk_dir(root, pat, d, dir, sizeof dir);
  return rc == RIVER_SUCCESS ? river__copy_out(dir, buf, len) : rc;
}

int river_pcoll_root(const river_pcoll_opts *opts, char *buf, size_t *len)
{
  char root[RIVER_PATH_MAX];

  if (buf == NULL || len == NULL)
    return RIVER_EINVAL;
  if (river__pcoll_resolve_root(opts, root, sizeof root) != RIVER_SUCCESS)
    return RIVER_EINVAL;
  return river__copy_out(root, buf, len);
}

/* The collection name a directory entry holds the metadata of, into
 * name (RIVER_PCOLL_NAME_MAX + 1 bytes); 0 if it is not a metadata file
 * (a temporary one starts with '.', so it is not a valid name). */
static int meta_entry(const char *entry, char *name)
{
  size_t sl = strlen(RIVER_PCOLL_META_SUFFIX), n = strlen(entry);
  char ch;

  if (n <= sl || n - sl > RIVER_PCOLL_NAME_MAX
      || strcmp(entry + n - sl, RIVER_PCOLL_META_SUFFIX) != 0)
    return 0;
  memcpy(name, entry, n - sl);
  name[n - sl] = '\0';
  return name_fault(name, &ch) == NAME_OK;
}

static int cmp_names(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted names of the metadata files in d, as one string of lines
 * (*text, malloc'd), and their number. */
static int collect_names(DIR *d, char **text, int *count)
{
  char name[RIVER_PCOLL_NAME_MAX + 1], **v = NULL, **nv, *t = NULL;
  size_t n = 0, cap = 0, bytes = 1, i, o = 0;
  struct dirent *e;
  int rc = RIVER_SUCCESS;

  while (rc == RIVER_SUCCESS && (e = readdir(d)) != NULL) {
    if (!meta_entry(e->d_name, name))
      continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 16;
      nv = realloc(v, cap * sizeof *v);
      if (nv == NULL) {
        rc = RIVER_ENOMEM;
        break;
      }
      v = nv;
    }
    if ((v[n] = strdup(name)) == NULL)
      rc = RIVER_ENOMEM;
    else
      bytes += strlen(v[n++]) + 1;
  }
  if (rc == RIVER_SUCCESS && (n > (size_t)INT_MAX
                              || (t = malloc(bytes)) == NULL))
    rc = n > (size_t)INT_MAX ? RIVER_EOVERFLOW : RIVER_ENOMEM;
  if (rc == RIVER_SUCCESS) {
    if (n > 1)
      qsort(v, n, sizeof *v, cmp_names);
    for (i = 0; i < n; i++)
      o += (size_t)sprintf(t + o, "%s\n", v[i]);
    t[o] = '\0';
    *text = t;
    *count = (int)n;
  }
  for (i = 0; i < n; i++)
    free(v[i]);
  free(v);
  return rc;
}

int river_pcoll_list(const river_pcoll_opts *opts, char *buf, size_t *len,
                     int *count)
{
  char root[RIVER_PATH_MAX], *text = NULL;
  int rc, n = 0;
  DIR *d;

  if (buf == NULL || len == NULL || count == NULL)
    return RIVER_EINVAL;
  if (river__pcoll_resolve_root(opts, root, sizeof root) != RIVER_SUCCESS)
    return RIVER_EINVAL;
  d = opendir(root);
  if (d == NULL) {
    if (errno == ENOENT) {
      river__info("no collections: there is no %s", root);
      return RIVER_ENOTFOUND;
    }
    river__error("cannot list the collections in %s: %s", root,
                 strerror(errno));
    return RIVER_EIO;
  }
  rc = collect_names(d, &text, &n);
  closedir(d);
  if (rc == RIVER_SUCCESS)
    rc = river__copy_out(text, buf, len);
  if (rc == RIVER_SUCCESS)
    *count = n;
  free(text);
  return rc;
}
