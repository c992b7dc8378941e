/*
 * test_progress_mpi - the progress line's API (river/progress.h), on any
 * number of ranks (4 in the suite):
 *
 *   args    NULL and nonsense refused with RIVER_EINVAL: create with out
 *           NULL, comm MPI_COMM_NULL, a label empty, over 40 characters
 *           or with a control character (said); add, poll, on and end of
 *           NULL; a bad RIVER_PROGRESS or RIVER_PROGRESS_EVERY refused on
 *           every rank and said by rank 0 only
 *   off     RIVER_PROGRESS=0: every call works, and no line is shown
 *   lines   RIVER_PROGRESS=1, a line every 0.05 s (not a terminal):
 *           every rank adds records for 0.6 s, the last rank staying
 *           out of River for 0.4 s of it (busy): no call of rank 0's
 *           waits for it (each returns in under 0.2 s; one that waited
 *           would take 0.4), rank 0 shows at least 3 lines, their counts
 *           never fall and never pass what was added, and the closing
 *           line gives every record exactly and names the busy rank the
 *           slowest; with a total, the lines give the share of it
 *
 * Rank 0's stderr goes to a file while a progress runs, and is read back.
 */
#define _GNU_SOURCE
#include <river.h>
#include "mpitest.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank, size;
static char errpath[64];
static int saved_err = -1;

/* Rank 0: stderr into a fresh file (to_file) or back (restore). */
static void to_file(void)
{
  int fd;

  if (rank != 0)
    return;
  strcpy(errpath, "/tmp/test_progress.XXXXXX");
  fd = mkstemp(errpath);
  fflush(stderr);
  saved_err = dup(2);
  dup2(fd, 2);
  close(fd);
}

static void restore(void)
{
  if (rank != 0 || saved_err < 0)
    return;
  fflush(stderr);
  dup2(saved_err, 2);
  close(saved_err);
  saved_err = -1;
}

/* Rank 0: the file's text (malloc'd), and the file removed. */
static char *slurp(void)
{
  FILE *f = fopen(errpath, "r");
  char *buf = calloc(1, 1 << 16);
  size_t n = 0;

  if (f != NULL && buf != NULL) {
    n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = '\0';
  }
  if (f != NULL)
    fclose(f);
  unlink(errpath);
  return buf;
}

static void nap(double s)
{
  struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};

  nanosleep(&ts, NULL);
}

static void test_args(void)
{
  river_progress *p = NULL;
  char long_label[48];
  int on = 0;

  mt_log_clear();
  MT_CHECK_RC(river_progress_create(MPI_COMM_WORLD, "x", 0, 0, NULL),
              RIVER_EINVAL);
  MT_CHECK(mt_logged("river_progress_create", "out is NULL", NULL));
  MT_CHECK_RC(river_progress_create(MPI_COMM_NULL, "x", 0, 0, &p),
              RIVER_EINVAL);
  MT_CHECK_RC(river_progress_create(MPI_COMM_WORLD, "", 0, 0, &p),
              RIVER_EINVAL);
  memset(long_label, 'a', 41);
  long_label[41] = '\0';
  MT_CHECK_RC(river_progress_create(MPI_COMM_WORLD, long_label, 0, 0, &p),
              RIVER_EINVAL);
  mt_log_clear();
  MT_CHECK_RC(river_progress_create(MPI_COMM_WORLD, "a\nb", 0, 0, &p),
              RIVER_EINVAL);
  MT_CHECK(mt_logged("label must be 1 to 40 characters", NULL, NULL));
  MT_CHECK(p == NULL);
  MT_CHECK_RC(river_progress_add(NULL, 1, 1), RIVER_EINVAL);
  MT_CHECK_RC(river_progress_poll(NULL), RIVER_EINVAL);
  MT_CHECK_RC(river_progress_on(NULL, &on), RIVER_EINVAL);
  MT_CHECK_RC(river_progress_end(NULL), RIVER_EINVAL);

  setenv("RIVER_PROGRESS", "maybe", 1);
  mt_log_clear();
  MT_CHECK_RC(river_progress_create(MPI_COMM_WORLD, "x", 0, 0, &p),
              RIVER_EINVAL);
  MT_CHECK(mt_logged("RIVER_PROGRESS=maybe", NULL, NULL) == (rank == 0));
  setenv("RIVER_PROGRESS", "1", 1);
  setenv("RIVER_PROGRESS_EVERY", "0", 1);
  mt_log_clear();
  MT_CHECK_RC(river_progress_create(MPI_COMM_WORLD, "x", 0, 0, &p),
              RIVER_EINVAL);
  MT_CHECK(mt_logged("RIVER_PROGRESS_EVERY=0", NULL, NULL) == (rank == 0));
  unsetenv("RIVER_PROGRESS_EVERY");
}

static void test_off(void)
{
  river_progress *p = NULL;
  char *text;
  int on = 1, i;

  setenv("RIVER_PROGRESS", "0", 1);
  setenv("RIVER_PROGRESS_EVERY", "0.01", 1);
  to_file();
  MT_CHECK_RC(river_progress_create(MPI_COMM_WORLD, "off", 100, 0, &p),
              RIVER_SUCCESS);
  MT_CHECK_RC(river_progress_on(p, &on), RIVER_SUCCESS);
  MT_CHECK(on == 0);
  for (i = 0; i < 20 && p != NULL; i++) {
    MT_CHECK_RC(river_progress_add(p, 1, 100), RIVER_SUCCESS);
    MT_CHECK_RC(river_progress_poll(p), RIVER_SUCCESS);
    nap(0.005);
  }
  if (p != NULL)
    MT_CHECK_RC(river_progress_end(p), RIVER_SUCCESS);
  restore();
  if (rank == 0) {
    text = slurp();
    MT_CHECK(text != NULL && strstr(text, "off:") == NULL);
    free(text);
  }
  unsetenv("RIVER_PROGRESS_EVERY");
}

/* Check rank 0's lines of progress `label` in text: counts that never
 * fall nor pass max, at least 3 of them; the closing line's count is
 * max exactly and it names `slow` the slowest (if slow >= 0). */
static void check_lines(const char *text, const char *label, uint64_t max,
                        uint64_t total, int slow)
{
  const char *line = text;
  char head[64], done[64];
  unsigned long long n, last = 0;
  int lines = 0, closing = 0, who = -1, failed = mt_failures;

  snprintf(head, sizeof head, "%s: ", label);
  snprintf(done, sizeof done, "%s: done: ", label);
  while (line != NULL && *line) {
    const char *s;
    if (strncmp(line, done, strlen(done)) == 0) {
      closing++;
      MT_CHECK(sscanf(line + strlen(done), "%llu records", &n) == 1
               && n == max);
      s = strstr(line, "slowest rank ");
      MT_CHECK(s != NULL && (size == 1 || sscanf(s, "slowest rank %d",
                                                  &who) == 1));
      MT_CHECK(slow < 0 || size == 1 || who == slow);
    } else if (strncmp(line, head, strlen(head)) == 0) {
      lines++;
      MT_CHECK(sscanf(line + strlen(head), "%llu", &n) == 1);
      MT_CHECK(n >= last && n <= max);
      last = n;
      if (total > 0) {
        char share[64];
        snprintf(share, sizeof share, " of %llu records (",
                 (unsigned long long)total);
        MT_CHECK(strstr(line, share) != NULL);
      }
    }
    line = strchr(line, '\n');
    line = line != NULL ? line + 1 : NULL;
  }
  MT_CHECK(lines >= 3 && closing == 1);
  if (mt_failures != failed)
    fprintf(stdout, "progress %s: %d lines, %d closing:\n%s", label, lines,
            closing, text);
}

/* Every rank adds a record of 10 kB a millisecond for `seconds`;
 * the last stays out for `away` seconds after the first 0.1 s. Rank
 * 0's longest call goes to *worst. The records added here. */
static uint64_t add_for(river_progress *p, double seconds, double away,
                        double *worst)
{
  double t0 = river_wtime(), t;
  uint64_t n = 0;
  int slept = 0;

  *worst = 0.0;
  while (river_wtime() - t0 < seconds) {
    if (rank == size - 1 && size > 1 && !slept && away > 0
        && river_wtime() - t0 > 0.1) {
      nap(away);   /* busy: no River call */
      slept = 1;
    }
    t = river_wtime();
    MT_CHECK_RC(river_progress_add(p, 1, 10000), RIVER_SUCCESS);
    t = river_wtime() - t;
    *worst = t > *worst ? t : *worst;
    n++;
    nap(0.001);
  }
  return n;
}

static void test_lines(void)
{
  river_progress *p = NULL;
  uint64_t mine, all = 0;
  double worst = 0;
  char *text;
  int on = 0, rc;

  setenv("RIVER_PROGRESS", "1", 1);
  setenv("RIVER_PROGRESS_EVERY", "0.05", 1);
  setenv("RIVER_PROGRESS_TTY", "0", 1);
  to_file();
  rc = river_progress_create(MPI_COMM_WORLD, "busy", 0, 0, &p);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS) {
    MT_CHECK_RC(river_progress_on(p, &on), RIVER_SUCCESS);
    MT_CHECK(on == 1);
    mine = add_for(p, 1.0, 0.4, &worst);
    MT_CHECK(rank != 0 || worst < 0.2);
    if (rank == 0 && worst >= 0.2)
      printf("rank 0 waited %.3f s in a call\n", worst);
    MPI_Allreduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MT_CHECK_RC(river_progress_end(p), RIVER_SUCCESS);
  }
  restore();
  if (rank == 0) {
    text = slurp();
    check_lines(text, "busy", all, 0, size - 1);
    free(text);
  }

  /* With a total: the share of it. */
  to_file();
  all = (uint64_t)size * 300;
  rc = river_progress_create(MPI_COMM_WORLD, "total", all, all * 100, &p);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS) {
    int i;
    for (i = 0; i < 300; i++) {
      MT_CHECK_RC(river_progress_add(p, 1, 100), RIVER_SUCCESS);
      nap(0.002);
    }
    MT_CHECK_RC(river_progress_end(p), RIVER_SUCCESS);
  }
  restore();
  if (rank == 0) {
    text = slurp();
    check_lines(text, "total", all, all, -1);
    free(text);
  }
}

int main(int argc, char **argv)
{
  int rc;
  double t0;

  if (river_init(&argc, &argv) != RIVER_SUCCESS) {
    fprintf(stderr, "river_init failed\n");
    return 1;
  }
  river_log_set_handler(mt_log_capture, NULL);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  t0 = river_wtime();
  test_args();
  test_off();
  test_lines();
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    printf("test_progress_mpi: %d ranks, %.1f s\n", size,
           river_wtime() - t0);
  rc = mt_verdict(MPI_COMM_WORLD, "test_progress_mpi");
  river_finalize();
  return rc;
}
