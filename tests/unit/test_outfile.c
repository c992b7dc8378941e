/*
 * test_outfile - river_outfile, a file written outside a root (no MPI
 * job needed), in a mkdtemp() directory holding a root and a target:
 * publish replaces the target with the new bytes and keeps its mode 600;
 * discard leaves the old bytes and no temporary; NOREPLACE refuses a
 * target that exists; a symbolic link at the target is not replaced;
 * a handle dropped without publish or discard (a dead job) leaves a
 * temporary that river_pcoll_gc of the root lists (and removes), while
 * a live one's temporary is left alone; planted records make gc remove
 * no file that is not a temporary of River's.
 */
#include <river.h>

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

static char dir[64], root[128], target[128];

static void quiet(int level, int rank, const char *msg, void *ctx)
{
  (void)level;
  (void)rank;
  (void)msg;
  (void)ctx;
}

/* The bytes of path into buf (at most len); their count, -1 if absent. */
static long slurp(const char *path, char *buf, size_t len)
{
  FILE *f = fopen(path, "r");
  size_t n;

  if (f == NULL)
    return -1;
  n = fread(buf, 1, len, f);
  fclose(f);
  return (long)n;
}

/* The number of entries of dir whose name contains ".river-tmp.". */
static int temporaries(void)
{
  struct dirent *de;
  DIR *d = opendir(dir);
  int n = 0;

  assert_non_null(d);
  while ((de = readdir(d)) != NULL)
    n += strstr(de->d_name, ".river-tmp.") != NULL;
  closedir(d);
  return n;
}

static int setup(void **state)
{
  FILE *f;

  (void)state;
  river_log_set_handler(quiet, NULL);
  snprintf(dir, sizeof dir, "/tmp/test_outfile.XXXXXX");
  assert_non_null(mkdtemp(dir));
  snprintf(root, sizeof root, "%s/root", dir);
  snprintf(target, sizeof target, "%s/out.dat", dir);
  assert_int_equal(mkdir(root, 0777), 0);
  f = fopen(target, "w");
  assert_non_null(f);
  fputs("old", f);
  fclose(f);
  assert_int_equal(chmod(target, 0600), 0);
  return 0;
}

static int teardown(void **state)
{
  char cmd[128];

  (void)state;
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
  river_log_set_handler(NULL, NULL);
  return 0;
}

/* Write s into a new outfile for target. */
static river_outfile *write_one(const char *s, int flags)
{
  river_outfile *of = NULL;
  int fd = -1;

  assert_int_equal(river_outfile_create(target, root, flags, &of),
                   RIVER_SUCCESS);
  assert_int_equal(river_outfile_fd(of, &fd), RIVER_SUCCESS);
  assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
  return of;
}

static void test_outfile_publish_keeps_mode(void **state)
{
  char buf[16];
  struct stat st;

  (void)state;
  assert_int_equal(river_outfile_publish(write_one("new!", 0)),
                   RIVER_SUCCESS);
  assert_int_equal(slurp(target, buf, sizeof buf), 4);
  assert_memory_equal(buf, "new!", 4);
  assert_int_equal(stat(target, &st), 0);
  assert_int_equal(st.st_mode & 07777, 0600);
  assert_int_equal(temporaries(), 0);
}

static void test_outfile_discard_keeps_old(void **state)
{
  char buf[16];

  (void)state;
  river_outfile_discard(write_one("partial", RIVER_OUTFILE_NOSYNC));
  assert_int_equal(slurp(target, buf, sizeof buf), 3);
  assert_memory_equal(buf, "old", 3);
  assert_int_equal(temporaries(), 0);
  river_outfile_discard(NULL);
}

static void test_outfile_noreplace(void **state)
{
  char buf[16];

  (void)state;
  assert_int_equal(river_outfile_publish(write_one("x",
                                                   RIVER_OUTFILE_NOREPLACE)),
                   RIVER_EEXIST);
  assert_int_equal(slurp(target, buf, sizeof buf), 3);
  assert_int_equal(temporaries(), 0);
}

static void test_outfile_link_not_replaced(void **state)
{
  river_outfile *of = NULL;
  char link[160];

  (void)state;
  snprintf(link, sizeof link, "%s/link", dir);
  assert_int_equal(symlink(target, link), 0);
  assert_int_equal(river_outfile_create(link, root, 0, &of), RIVER_EEXIST);
  assert_null(of);
}

/* Count gc's reports of outside temporaries. */
static void count_tmp(const river_pcoll_leftover *l, void *arg)
{
  if (strstr(l->path, ".river-tmp.") != NULL)
    ++*(int *)arg;
}

static void test_outfile_gc_lists_dead(void **state)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  river_outfile *live;
  uint64_t n = 0, bytes = 0;
  pid_t pid;
  int seen = 0, status;

  (void)state;
  o.root = root;
  live = write_one("live", 0);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {   /* a job that dies while it writes */
    write_one("dead job", 0);
    _exit(0);
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_int_equal(temporaries(), 2);
  assert_int_equal(river_pcoll_gc(&o, 0, count_tmp, &seen, &n, &bytes),
                   RIVER_SUCCESS);
  assert_int_equal(seen, 1);   /* the dead one; the live one is locked */
  assert_int_equal(bytes, 8);
  assert_int_equal(river_pcoll_gc(&o, 1, NULL, NULL, &n, NULL),
                   RIVER_SUCCESS);
  assert_int_equal(temporaries(), 1);
  river_outfile_discard(live);
  assert_int_equal(temporaries(), 0);
  seen = 0;
  assert_int_equal(river_pcoll_gc(&o, 0, count_tmp, &seen, &n, NULL),
                   RIVER_SUCCESS);
  assert_int_equal(seen + (int)n, 0);
}

/* Write text to path. */
static void put(const char *path, const char *text)
{
  FILE *f = fopen(path, "w");

  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

/* Planted records (naming a file that is no temporary, or a temporary's
 * name that is a link to a victim) make gc remove nothing but them. */
static void test_outfile_gc_planted(void **state)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  char rec[256], victim[160], link[200], text[256];
  struct stat st;

  (void)state;
  o.root = root;
  snprintf(rec, sizeof rec, "%s/.river-outside", root);
  assert_int_equal(mkdir(rec, 0777), 0);
  snprintf(victim, sizeof victim, "%s/victim", dir);
  put(victim, "keep me");
  snprintf(rec, sizeof rec, "%s/.river-outside/a.tmp-record", root);
  snprintf(text, sizeof text, "%s\n", victim);
  put(rec, text);
  snprintf(link, sizeof link, "%s/x.river-tmp.0123456789abcdef", dir);
  assert_int_equal(symlink(victim, link), 0);
  snprintf(rec, sizeof rec, "%s/.river-outside/b.tmp-record", root);
  snprintf(text, sizeof text, "%s\n", link);
  put(rec, text);
  assert_int_equal(river_pcoll_gc(&o, 1, NULL, NULL, NULL, NULL),
                   RIVER_SUCCESS);
  assert_int_equal(stat(victim, &st), 0);
  assert_int_equal(st.st_size, 7);
  assert_int_equal(lstat(link, &st), 0);   /* a link: not River's */
}

static void test_badparam_outfile(void **state)
{
  river_outfile *of = (river_outfile *)&of;
  const char *s = "x";
  int fd = 7;

  (void)state;
  assert_int_equal(river_outfile_create(NULL, root, 0, &of), RIVER_EINVAL);
  assert_int_equal(river_outfile_check_planted(NULL), RIVER_EINVAL);
  assert_int_equal(river_outfile_check_planted(""), RIVER_EINVAL);
  assert_int_equal(river_outfile_create("", root, 0, &of), RIVER_EINVAL);
  assert_int_equal(river_outfile_create(target, root, 0, NULL),
                   RIVER_EINVAL);
  assert_int_equal(river_outfile_create(target, root, 4, &of), RIVER_EINVAL);
  assert_ptr_equal(of, (river_outfile *)&of);
  assert_int_equal(river_outfile_fd(NULL, &fd), RIVER_EINVAL);
  assert_int_equal(river_outfile_tmp(NULL, &s), RIVER_EINVAL);
  assert_int_equal(river_outfile_fd(of, NULL), RIVER_EINVAL);
  assert_int_equal(river_outfile_tmp(of, NULL), RIVER_EINVAL);
  assert_int_equal(river_outfile_publish(NULL), RIVER_EINVAL);
  assert_true(fd == 7 && strcmp(s, "x") == 0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_outfile_publish_keeps_mode, setup,
                                    teardown),
    cmocka_unit_test_setup_teardown(test_outfile_discard_keeps_old, setup,
                                    teardown),
    cmocka_unit_test_setup_teardown(test_outfile_noreplace, setup, teardown),
    cmocka_unit_test_setup_teardown(test_outfile_link_not_replaced, setup,
                                    teardown),
    cmocka_unit_test_setup_teardown(test_outfile_gc_lists_dead, setup,
                                    teardown),
    cmocka_unit_test_setup_teardown(test_outfile_gc_planted, setup,
                                    teardown),
    cmocka_unit_test_setup_teardown(test_badparam_outfile, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
