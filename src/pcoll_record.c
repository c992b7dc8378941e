/*
 * pcoll_record.c - the record of a write in progress, ROOT/.NAME.GEN.write:
 * a few lines of text that rank 0 creates (O_EXCL|O_NOFOLLOW) after
 * taking the name's lock and before any rank creates a data file, and
 * removes when every rank has committed or removed its files. A write
 * killed in between leaves it, and with it what `river gc` needs to
 * find and own that write's files: the generation (data file names
 * carry it, and it is random, so the files of that generation are this
 * root's even in a directory other roots use) and the disk pattern
 * (which may be one no metadata names: a first write with --disks).
 *
 *   river-write 1
 *   generation GEN
 *   ndisks N
 *   disks PATTERN
 */
#include "pcoll_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RECORD_MAGIC "river-write 1\n"
#define RECORD_MAX 8192   /* bytes read: more is not a record */

/* Write all of text to fd and fsync it: 0 or an errno value. */
static int write_all(int fd, const char *text, size_t len)
{
  ssize_t n;

  while (len > 0) {
    n = write(fd, text, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return n < 0 ? errno : ENOSPC;
    text += n;
    len -= (size_t)n;
  }
  return fsync(fd) == 0 ? 0 : errno;
}

int river__pcoll_record_create(river_pcoll *pc)
{
  char path[RIVER_PATH_MAX], *text;
  int fd, err, n;

  if (river__pcoll_record_path(pc->root, pc->info.name, pc->info.generation,
                               path, sizeof path) != RIVER_SUCCESS)
    return RIVER_EOVERFLOW;
  text = malloc(RIVER_PATH_MAX + 128);
  if (text == NULL)
    return RIVER_ENOMEM;
  n = snprintf(text, RIVER_PATH_MAX + 128, RECORD_MAGIC "generation %s\n"
               "ndisks %d\ndisks %s\n", pc->info.generation,
               pc->info.ndisks, pc->disks);
  fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
            0666);
  err = fd < 0 ? errno : write_all(fd, text, (size_t)n);
  free(text);
  if (fd >= 0 && close(fd) != 0 && err == 0)
    err = errno;
  if (err != 0) {
    river__error("collection %s: cannot create %s: %s%s", pc->info.name,
                 path, strerror(err), err == EEXIST || err == ELOOP
                 ? " (a file or link River did not make is there; it is "
                   "not followed or replaced)" : "");
    if (fd >= 0)
      unlink(path);
    return err == EACCES || err == EPERM ? RIVER_EACCES : RIVER_EIO;
  }
  pc->record = 1;
  return RIVER_SUCCESS;
}

void river__pcoll_record_remove(river_pcoll *pc)
{
  char path[RIVER_PATH_MAX];

  if (!pc->record)
    return;
  pc->record = 0;
  if (river__pcoll_record_path(pc->root, pc->info.name, pc->info.generation,
                               path, sizeof path) == RIVER_SUCCESS
      && unlink(path) != 0 && errno != ENOENT)
    river__warn("collection %s: cannot remove %s: %s (`river gc` lists it)",
                pc->info.name, path, strerror(errno));
}

/* The value of line "KEY VALUE\n" in text, copied into out (size
 * bytes); 0 if there is none or it does not fit. */
static int field(const char *text, const char *key, char *out, size_t size)
{
  size_t k = strlen(key), n;
  const char *p = text, *end;

  for (; p != NULL && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
    if (strncmp(p, key, k) != 0 || p[k] != ' ')
      continue;
    end = strchr(p + k + 1, '\n');
    if (end == NULL)
      return 0;
    n = (size_t)(end - (p + k + 1));
    if (n == 0 || n >= size)
      return 0;
    memcpy(out, p + k + 1, n);
    out[n] = '\0';
    return 1;
  }
  return 0;
}

int river__pcoll_record_read(const char *path, struct river__pcoll_record *r)
{
  char *text, num[16], *end;
  struct stat st;
  ssize_t n = 0, got;
  long nd;
  int fd, ok;

  fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0)
    return RIVER_ECORRUPT;
  text = malloc(RECORD_MAX + 1);
  ok = text != NULL && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
       && st.st_size < RECORD_MAX;
  while (ok && (got = read(fd, text + n, (size_t)(RECORD_MAX - n))) != 0) {
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0 || n + got >= RECORD_MAX)
      ok = 0;
    else
      n += got;
  }
  close(fd);
  if (ok) {
    text[n] = '\0';
    ok = strncmp(text, RECORD_MAGIC, strlen(RECORD_MAGIC)) == 0
         && field(text, "generation", r->generation, sizeof r->generation)
         && river__pcoll_is_generation(r->generation)
         && field(text, "ndisks", num, sizeof num)
         && field(text, "disks", r->disks, sizeof r->disks);
  }
  if (ok) {
    errno = 0;
    nd = strtol(num, &end, 10);
    ok = errno == 0 && *end == '\0' && nd >= 1 && nd <= 1 << 20
         && river__pcoll_check_disks(r->disks) == RIVER_SUCCESS;
    r->ndisks = (int)nd;
  }
  free(text);
  return ok ? RIVER_SUCCESS : RIVER_ECORRUPT;
}
