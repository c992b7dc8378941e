/*
 * test_progress_mpi - the progress line's API (river/progress.h), on any
 * number of ranks (4 in the suite):
 *
 *   args    NULL and nonsense refused with RIVER_EINVAL: create with out
 *           NULL, comm MPI_COMM_NULL, a label empty, over 40 characters
 *           or with a control character (said); add, poll, on and end of
 *           NULL; a RIVER_PROGRESS or RIVER_PROGRESS_EVERY not
 *           understood: warned about by rank 0 only and taken as unset
 *           (a display setting never fails a job)
 *   off     RIVER_PROGRESS=0: every call works, and no line is shown
 *   lines   RIVER_PROGRESS=1, a line every 0.05 s (not a terminal),
 *           every rank adding records, at least 2 lines a run, their
 *           counts never falling nor passing what was added, and one
 *           closing line with every record:
 *           - busy: the last rank out of River for 0.8 s of 1.4 s: no
 *             call of rank 0's waits for it (each returns in under
 *             0.4 s; one that waited would take 0.8), and the closing
 *             line names it the slowest;
 *           - late: rank 0 itself out for 1 s, then 1 s more: its last
 *             line shows over 3/4 of the total (fresh), not about half
 *             (1 s old), and it is the slowest;
 *           - failed: one rank ends with ok 0: lines, no closing line;
 *           - sampled (river_progress_create_sampled): what its sampler
 *             gives, add refused; a NULL sampler on one rank only is
 *             refused on every rank (args);
 *           - total: the lines give the share of it
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

/* A sampled progress's counts: what the rank did, read at each round. */
static uint64_t sampled;

static void sampler(void *arg, uint64_t *records, uint64_t *bytes,
                    uint64_t *work)
{
  const uint64_t *n = arg;

  *records = *n;
  *bytes = *n * 10000;
  *work = *n * 10000;
}

static void test_args(void)
{
  static int sentinel;
  river_progress *p = (river_progress *)&sentinel;
  char long_label[48];
  int on = 0;

  mt_log_clear();
  MT_CHECK_RC(river_progress_create(MPI_COMM_WORLD, "x", 0, 0, NULL),
              RIVER_EINVAL);   /* out NULL: nothing to set */
  MT_CHECK(mt_logged("river_progress_create", "out is NULL", NULL));
  MT_CHECK_RC(river_progress_create(MPI_COMM_NULL, "x", 0, 0, &p),
              RIVER_EINVAL);
  MT_CHECK(p == NULL);   /* *out set on failure too */
  p = (river_progress *)&sentinel;
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
  p = (river_progress *)&sentinel;
  mt_log_clear();
  MT_CHECK_RC(river_progress_create_sampled(MPI_COMM_WORLD, "x", 0, 0, NULL,
                                            NULL, &p), RIVER_EINVAL);
  MT_CHECK(p == NULL && mt_logged("fn is NULL", NULL, NULL));
  p = (river_progress *)&sentinel;
  /* fn NULL on one rank only: every rank refuses, none waits */
  MT_CHECK_RC(river_progress_create_sampled(MPI_COMM_WORLD, "x", 0, 0,
                                            rank == 0 ? NULL : sampler,
                                            &sampled, &p), RIVER_EINVAL);
  MT_CHECK(p == NULL);
  MT_CHECK_RC(river_progress_add(NULL, 1, 1), RIVER_EINVAL);
  MT_CHECK_RC(river_progress_poll(NULL), RIVER_EINVAL);
  MT_CHECK_RC(river_progress_on(NULL, &on), RIVER_EINVAL);
  MT_CHECK_RC(river_progress_end(NULL, 1), RIVER_EINVAL);

  /* A display setting never fails a job: warned about by rank 0 only,
   * and taken as unset. */
  setenv("RIVER_PROGRESS", "maybe", 1);
  mt_log_clear();
  MT_CHECK_RC(river_progress_create(MPI_COMM_WORLD, "x", 0, 0, &p),
              RIVER_SUCCESS);
  MT_CHECK(mt_logged("warn", "RIVER_PROGRESS=maybe", "taken as unset")
           == (rank == 0));
  MT_CHECK_RC(river_progress_on(p, &on), RIVER_SUCCESS);
  MT_CHECK(on == 1);   /* unset: a progress created here shows */
  if (p != NULL)
    MT_CHECK_RC(river_progress_end(p, 1), RIVER_SUCCESS);
  setenv("RIVER_PROGRESS", "1", 1);
  setenv("RIVER_PROGRESS_EVERY", "0", 1);
  mt_log_clear();
  MT_CHECK_RC(river_progress_create(MPI_COMM_WORLD, "x", 0, 0, &p),
              RIVER_SUCCESS);
  MT_CHECK(mt_logged("warn", "RIVER_PROGRESS_EVERY=0", NULL)
           == (rank == 0));
  if (p != NULL)
    MT_CHECK_RC(river_progress_end(p, 1), RIVER_SUCCESS);
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
    MT_CHECK_RC(river_progress_end(p, 1), RIVER_SUCCESS);
  restore();
  if (rank == 0) {
    text = slurp();
    MT_CHECK(text != NULL && strstr(text, "off:") == NULL);
    free(text);
  }
  unsetenv("RIVER_PROGRESS_EVERY");
}

/* Check rank 0's lines of progress `label` in text: counts that never
 * fall nor pass max, at least 2 of them (each run lasts 16 or more
 * lines' intervals: 2 hold under a machine loaded twice over); the closing line's count is
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
  MT_CHECK(lines >= 2 && closing == 1);
  if (mt_failures != failed)
    fprintf(stdout, "progress %s: %d lines, %d closing:\n%s", label, lines,
            closing, text);
}

/* Every rank adds a record of 10 kB a millisecond for `seconds`; rank
 * `who` stays out of River for `away` seconds after the first 0.1 s.
 * Rank 0's longest call goes to *worst. The records added here. */
static uint64_t add_for(river_progress *p, double seconds, int who,
                        double away, double *worst)
{
  double t0 = river_wtime(), t;
  uint64_t n = 0;
  int slept = 0;

  *worst = 0.0;
  while (river_wtime() - t0 < seconds) {
    if (rank == who && !slept && away > 0 && river_wtime() - t0 > 0.1) {
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

/* Rank 0: the count of the last line before the closing one, or 0. */
static unsigned long long last_count(const char *text, const char *label)
{
  char head[64];
  const char *line = text;
  unsigned long long n, last = 0;

  snprintf(head, sizeof head, "%s: ", label);
  while (line != NULL && *line) {
    if (strncmp(line, head, strlen(head)) == 0
        && sscanf(line + strlen(head), "%llu", &n) == 1)
      last = n;
    line = strchr(line, '\n');
    line = line != NULL ? line + 1 : NULL;
  }
  return last;
}

/* One run of add_for in a progress named label (a line every 0.05 s),
 * ended with ok on every rank but `fails`; rank 0 gets what was shown
 * in *text (NULL elsewhere). The records added over the ranks. */
static uint64_t run_lines(const char *label, double seconds, int who,
                          double away, int fails, char **text)
{
  river_progress *p = NULL;
  uint64_t mine = 0, all = 0;
  double worst = 0;
  int on = 0, rc;

  *text = NULL;
  to_file();
  rc = river_progress_create(MPI_COMM_WORLD, label, 0, 0, &p);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS) {
    MT_CHECK_RC(river_progress_on(p, &on), RIVER_SUCCESS);
    MT_CHECK(on == 1);
    mine = add_for(p, seconds, who, away, &worst);
    /* Rank 0 never waits for a busy rank: a call that did would take
     * the whole time it is away. */
    MT_CHECK(rank != 0 || who == 0 || away == 0 || worst < away / 2);
    if (rank == 0 && who != 0 && away > 0 && worst >= away / 2)
      printf("%s: rank 0 waited %.3f s in a call\n", label, worst);
    MPI_Allreduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MT_CHECK_RC(river_progress_end(p, rank != fails), RIVER_SUCCESS);
  }
  restore();
  if (rank == 0)
    *text = slurp();
  return all;
}

static void test_lines(void)
{
  river_progress *p = NULL;
  uint64_t mine, all;
  char *text;
  int rc;

  setenv("RIVER_PROGRESS", "1", 1);
  setenv("RIVER_PROGRESS_EVERY", "0.05", 1);
  setenv("RIVER_PROGRESS_TTY", "0", 1);

  /* The last rank busy for 0.8 s: it is the slowest. */
  all = run_lines("busy", 1.4, size - 1, 0.8, -1, &text);
  if (rank == 0)
    check_lines(text, "busy", all, 0, size - 1);
  free(text);

  /* Rank 0 busy for 1 s, then 1 s more: the last line is of the last
   * few rounds (above 3/4 of the whole), not 1 s old (about half).
   * Rounds are on a grid, and a rank behind it starts those it owes
   * back to back, so rank 0 catches up even where the others' rounds
   * complete without it and run ahead (on this Open MPI they did not:
   * a start a round after the last passed as well). */
  all = run_lines("late", 2.1, 0, 1.0, -1, &text);
  if (rank == 0) {
    check_lines(text, "late", all, 0, size > 1 ? 0 : -1);
    MT_CHECK(last_count(text, "late") * 4 >= all * 3);
    if (last_count(text, "late") * 4 < all * 3)
      printf("late: the last line shows %llu of %llu\n",
             last_count(text, "late"), (unsigned long long)all);
  }
  free(text);

  /* A rank failed: lines while it ran, no closing line. */
  all = run_lines("failed", 0.8, -1, 0, size > 1 ? 1 : 0, &text);
  if (rank == 0) {
    MT_CHECK(text != NULL && strstr(text, "failed: ") != NULL
             && strstr(text, "failed: done") == NULL);
  }
  free(text);

  /* Sampled: the counts come from the sampler, add is refused. */
  to_file();
  sampled = 0;
  rc = river_progress_create_sampled(MPI_COMM_WORLD, "sampled", 0, 0,
                                     sampler, &sampled, &p);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS) {
    double t0 = river_wtime();
    MT_CHECK_RC(river_progress_add(p, 1, 1), RIVER_EINVAL);
    while (river_wtime() - t0 < 1.0) {
      sampled++;
      MT_CHECK_RC(river_progress_poll(p), RIVER_SUCCESS);
      nap(0.001);
    }
    mine = sampled;
    MPI_Allreduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MT_CHECK_RC(river_progress_end(p, 1), RIVER_SUCCESS);
  }
  restore();
  if (rank == 0) {
    text = slurp();
    check_lines(text, "sampled", all, 0, -1);
    free(text);
  }

  /* With a total: the share of it. */
  to_file();
  all = (uint64_t)size * 400;
  rc = river_progress_create(MPI_COMM_WORLD, "total", all, all * 100, &p);
  MT_CHECK_RC(rc, RIVER_SUCCESS);
  if (rc == RIVER_SUCCESS) {
    int i;
    for (i = 0; i < 400; i++) {
      MT_CHECK_RC(river_progress_add(p, 1, 100), RIVER_SUCCESS);
      nap(0.002);
    }
    MT_CHECK_RC(river_progress_end(p, 1), RIVER_SUCCESS);
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
