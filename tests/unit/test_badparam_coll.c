/*
 * test_badparam_coll.c - bad arguments to the collection functions:
 * single-disk collections and parallel collections, their layout and
 * listing (badparam.h says what every test_badparam* program checks).
 */
#include "badparam.h"


/* Collections: NULL and nonsense, then reader calls on a writer and
 * writer calls on a reader (in a mkdtemp() directory). */
static void test_badparam_collection(void **state)
{
  const char *tmpdir = getenv("TMPDIR");
  char dir[4096], path[4200], tmp[4200], label[RIVER_COLL_LABEL_MAX + 2];
  river_coll_opts o = RIVER_COLL_OPTS_INIT;
  river_coll *keep = (river_coll *)&o, *w = NULL, *r = NULL;
  river_coll_info info, blank;
  unsigned char rec[100] = {0}, buf[8192];
  const void *recs = rec;
  size_t k = 7;
  uint64_t bad = 7;

  river_log_set_handler(quiet, NULL);
  snprintf(dir, sizeof dir, "%s/river_badparam_XXXXXX",
           tmpdir && *tmpdir ? tmpdir : "/tmp");
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/c", dir);
  snprintf(tmp, sizeof tmp, "%s/c.tmp", dir);

  /* create and open: *out stays as it was. */
  assert_int_equal(river_coll_create(NULL, 100, NULL, &keep), RIVER_EINVAL);
  assert_int_equal(river_coll_create("", 100, NULL, &keep), RIVER_EINVAL);
  assert_int_equal(river_coll_create(path, 100, NULL, NULL), RIVER_EINVAL);
  assert_int_equal(river_coll_create(path, 0, NULL, &keep), RIVER_EINVAL);
  o.block_size = 4095;
  assert_int_equal(river_coll_create(path, 100, &o, &keep), RIVER_EINVAL);
  o.block_size = 4096;
  assert_int_equal(river_coll_create(path, 4097, &o, &keep), RIVER_EINVAL);
  o.block_size = 0;
  memset(label, 'x', sizeof label - 1);
  label[sizeof label - 1] = '\0';
  o.label = label;
  assert_int_equal(river_coll_create(path, 100, &o, &keep), RIVER_EINVAL);
  assert_int_equal(river_coll_open(NULL, 0, NULL, &keep), RIVER_EINVAL);
  assert_int_equal(river_coll_open("", 0, NULL, &keep), RIVER_EINVAL);
  assert_int_equal(river_coll_open(path, 0, NULL, NULL), RIVER_EINVAL);
  assert_int_equal(river_coll_open(path, 0, NULL, &keep), RIVER_ENOTFOUND);
  assert_ptr_equal(keep, (river_coll *)&o);
  assert_int_equal(access(tmp, F_OK), -1);

  /* NULL handles. */
  memset(&info, 0x5a, sizeof info);
  blank = info;
  assert_int_equal(river_coll_append(NULL, rec, 1), RIVER_EINVAL);
  assert_int_equal(river_coll_commit(NULL), RIVER_EINVAL);
  assert_int_equal(river_coll_close(NULL), RIVER_SUCCESS);
  assert_int_equal(river_coll_stat(NULL, &info), RIVER_EINVAL);
  assert_int_equal(river_coll_read_block(NULL, 0, buf, sizeof buf, &k),
                   RIVER_EINVAL);
  assert_int_equal(river_coll_next(NULL, &recs, &k), RIVER_EINVAL);
  assert_int_equal(river_coll_rewind(NULL), RIVER_EINVAL);
  assert_int_equal(river_coll_verify(NULL, &bad), RIVER_EINVAL);

  /* A writer: NULL outputs and records, reader calls. */
  o.label = NULL;
  o.block_size = 8192;
  assert_int_equal(river_coll_create(path, 100, &o, &w), RIVER_SUCCESS);
  assert_int_equal(river_coll_append(w, NULL, 1), RIVER_EINVAL);
  assert_int_equal(river_coll_append(w, rec, SIZE_MAX), RIVER_EOVERFLOW);
  assert_int_equal(river_coll_stat(w, NULL), RIVER_EINVAL);
  assert_int_equal(river_coll_read_block(w, 0, buf, sizeof buf, &k),
                   RIVER_EINVAL);
  assert_int_equal(river_coll_next(w, &recs, &k), RIVER_EINVAL);
  assert_int_equal(river_coll_rewind(w), RIVER_EINVAL);
  assert_int_equal(river_coll_verify(w, &bad), RIVER_EINVAL);
  assert_int_equal(river_coll_append(w, rec, 1), RIVER_SUCCESS);
  assert_int_equal(river_coll_commit(w), RIVER_SUCCESS);

  /* A reader: NULL outputs, out of range, too small, writer calls. */
  assert_int_equal(river_coll_open(path, 100, NULL, &r), RIVER_SUCCESS);
  assert_int_equal(river_coll_stat(r, NULL), RIVER_EINVAL);
  assert_int_equal(river_coll_read_block(r, 0, NULL, sizeof buf, &k),
                   RIVER_EINVAL);
  assert_int_equal(river_coll_read_block(r, 0, buf, sizeof buf, NULL),
                   RIVER_EINVAL);
  assert_int_equal(river_coll_read_block(r, 1, buf, sizeof buf, &k),
                   RIVER_EINVAL);
  assert_int_equal(river_coll_read_block(r, 0, buf, 100, &k), RIVER_ENOBUFS);
  assert_int_equal(river_coll_next(r, NULL, &k), RIVER_EINVAL);
  assert_int_equal(river_coll_next(r, &recs, NULL), RIVER_EINVAL);
  assert_int_equal(river_coll_append(r, rec, 1), RIVER_EINVAL);
  assert_int_equal(river_coll_commit(r), RIVER_EINVAL); /* r stays open */
  assert_int_equal(river_coll_verify(r, NULL), RIVER_SUCCESS);
  assert_int_equal(river_coll_close(r), RIVER_SUCCESS);

  /* None of the refused calls wrote an output. */
  assert_memory_equal(&info, &blank, sizeof info);
  assert_ptr_equal(recs, rec);
  assert_int_equal(k + bad, 14);

  river_log_set_handler(NULL, NULL);
  assert_int_equal(unlink(path), 0);
  assert_int_equal(rmdir(dir), 0);
}

/* Collection names every pcoll call refuses (NBADNAMES of them, from
 * bad_names); the last is longname, one character over
 * RIVER_PCOLL_NAME_MAX. */
#define NBADNAMES 9
static char longname[RIVER_PCOLL_NAME_MAX + 2];

static const char *const *bad_names(void)
{
  static const char *names[NBADNAMES] = {"", "a/b", "..", ".hidden",
                                         "a..b", "a b", "-x", "-",
                                         longname};

  memset(longname, 'n', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  return names;
}

/* Parallel collections, without MPI: only refusals that come before any
 * MPI call (MPI_COMM_NULL, NULL pointers and handles, bad names and disk
 * patterns). Outputs stay as they were. First create: NULL arguments and
 * bad names, each refusal said. */
static void test_badparam_pcoll_create(void **state)
{
  river_schema *s = NULL;
  river_pcoll *keep = (river_pcoll *)&s, *out = keep;
  const char *const *badnames = bad_names();
  size_t i;

  assert_int_equal(river_schema_create_default(&s), RIVER_SUCCESS);
  river_log_set_handler(collect, NULL);
  assert_int_equal(river_pcoll_create(MPI_COMM_NULL, "c", s, NULL, &out),
                   RIVER_EINVAL);
  assert_int_equal(river_pcoll_create(MPI_COMM_WORLD, NULL, s, NULL, &out),
                   RIVER_EINVAL);
  assert_int_equal(river_pcoll_create(MPI_COMM_WORLD, "c", NULL, NULL, &out),
                   RIVER_EINVAL);
  assert_int_equal(river_pcoll_create(MPI_COMM_WORLD, "c", s, NULL, NULL),
                   RIVER_EINVAL);
  for (i = 0; i < NBADNAMES; i++) {
    msgs[0] = '\0';
    assert_int_equal(river_pcoll_create(MPI_COMM_WORLD, badnames[i], s, NULL,
                                        &out), RIVER_EINVAL);
    assert_non_null(strstr(msgs, "collection name"));
  }
  /* "a/b": the message quotes the name and says what is wrong. */
  msgs[0] = '\0';
  assert_int_equal(river_pcoll_create(MPI_COMM_WORLD, "a/b", s, NULL, &out),
                   RIVER_EINVAL);
  assert_non_null(strstr(msgs, "'a/b'"));
  assert_non_null(strstr(msgs, "'/'"));
  /* Good arguments before MPI_Init: refused and said, not an MPI abort. */
  msgs[0] = '\0';
  assert_int_equal(river_pcoll_create(MPI_COMM_SELF, "c", s, NULL, &out),
                   RIVER_EINVAL);
  assert_non_null(strstr(msgs, "MPI is not initialized"));
  assert_ptr_equal(out, keep);
  river_log_set_handler(NULL, NULL);
  river_schema_destroy(s);
}

/* open: names, then disk patterns, are checked before MPI; a refused
 * pattern is named. */
static void test_badparam_pcoll_open(void **state)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  river_pcoll *keep = (river_pcoll *)&o, *out = keep;
  const char *const *badnames = bad_names();
  const char *badpats[] = {"nodisk", "d%d%d", "d%s", "../x%d",
                           "a/../../x%d", "x%d/..", "%", "%n/%n/d%d",
                           "x%r/d%d", "%n", "%n/../d%d"};
  size_t i;

  river_log_set_handler(collect, NULL);
  assert_int_equal(river_pcoll_open(MPI_COMM_NULL, "c", NULL, &out),
                   RIVER_EINVAL);
  assert_int_equal(river_pcoll_open(MPI_COMM_WORLD, NULL, NULL, &out),
                   RIVER_EINVAL);
  assert_int_equal(river_pcoll_open(MPI_COMM_WORLD, "c", NULL, NULL),
                   RIVER_EINVAL);
  for (i = 0; i < NBADNAMES; i++)
    assert_int_equal(river_pcoll_open(MPI_COMM_WORLD, badnames[i], NULL,
                                      &out), RIVER_EINVAL);
  for (i = 0; i < sizeof badpats / sizeof badpats[0]; i++) {
    msgs[0] = '\0';
    o.disks = badpats[i];
    assert_int_equal(river_pcoll_open(MPI_COMM_WORLD, "c", &o, &out),
                     RIVER_EINVAL);
    assert_non_null(strstr(msgs, badpats[i]));
  }
  o.disks = NULL;
  /* Good arguments before MPI_Init (flow checks open collections for
   * their schema: the fuzzing harness found this abort). */
  msgs[0] = '\0';
  assert_int_equal(river_pcoll_open(MPI_COMM_SELF, "c", &o, &out),
                   RIVER_EINVAL);
  assert_non_null(strstr(msgs, "MPI is not initialized"));
  assert_ptr_equal(out, keep);
  river_log_set_handler(NULL, NULL);
}

/* Every call on a NULL handle: refused, outputs untouched; close is a
 * no-op. */
static void test_badparam_pcoll_handles(void **state)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  river_pcoll_info info, blank_info;
  river_pcoll_part part, blank_part;
  const river_schema *sp = (const river_schema *)&o;
  unsigned char rec[100] = {0};
  char buf[8] = "keep";
  size_t len = sizeof buf, rpb = 7, k = 7;
  int ranks[2] = {7, 7};
  uint64_t nb = 7, bad = 7;
  unsigned char marks[1] = {7};
  size_t pad = 7;
  uint32_t crc = 7;
  int dead = 7;

  river_log_set_handler(collect, NULL);
  memset(&info, 0x5a, sizeof info);
  blank_info = info;
  memset(&part, 0x5a, sizeof part);
  blank_part = part;
  assert_int_equal(river_pcoll_write(NULL, rec, 1), RIVER_EINVAL);
  assert_int_equal(river_pcoll_write(NULL, NULL, 0), RIVER_EINVAL);
  assert_int_equal(river_pcoll_commit(NULL), RIVER_EINVAL);
  assert_int_equal(river_pcoll_begin_partition(NULL, 0), RIVER_EINVAL);
  assert_int_equal(river_pcoll_close(NULL), RIVER_SUCCESS); /* no-op */
  assert_int_equal(river_pcoll_info_get(NULL, &info), RIVER_EINVAL);
  assert_int_equal(river_pcoll_schema(NULL, &sp), RIVER_EINVAL);
  assert_int_equal(river_pcoll_partition(NULL, 0, &part), RIVER_EINVAL);
  assert_int_equal(river_pcoll_disk_path(NULL, 0, buf, &len), RIVER_EINVAL);
  assert_int_equal(river_pcoll_disk_ranks(MPI_COMM_WORLD, NULL, ranks),
                   RIVER_EINVAL);
  assert_int_equal(river_pcoll_hold_partitions(NULL, ranks, 1), RIVER_EINVAL);
  assert_int_equal(river_pcoll_hold_partitions(NULL, NULL, 0), RIVER_EINVAL);
  assert_int_equal(ranks[0], 7);   /* untouched */
  assert_int_equal(river_pcoll_disk_ranks(MPI_COMM_NULL, NULL, NULL),
                   RIVER_EINVAL);
  assert_int_equal(ranks[0], 7);   /* untouched */
  assert_int_equal(river_pcoll_node_local(NULL, &ranks[0]), RIVER_EINVAL);
  assert_int_equal(ranks[0], 7);
  assert_int_equal(river_pcoll_node_local((river_pcoll *)&o, NULL),
                   RIVER_EINVAL);
  assert_int_equal(river_pcoll_read_block(NULL, 0, 0, rec, sizeof rec, &k),
                   RIVER_EINVAL);
  assert_int_equal(river_pcoll_blocks(NULL, 0, &rpb, &nb), RIVER_EINVAL);
  assert_int_equal(river_pcoll_read_copy(NULL, 0, 0, 0, rec, sizeof rec, &k),
                   RIVER_EINVAL);
  assert_int_equal(river_pcoll_read_copy_level(NULL, 0, 0, 0, rec, sizeof rec,
                                               &k, RIVER_LOG_WARN, &dead),
                   RIVER_EINVAL);
  assert_int_equal(river_pcoll_read_copy_level(NULL, 0, 0, 0, rec, sizeof rec,
                                               &k, RIVER_LOG_DEBUG + 1, NULL),
                   RIVER_EINVAL);
  assert_int_equal(river_pcoll_check_copy(NULL, 0, 0, RIVER_LOG_WARN),
                   RIVER_EINVAL);
  assert_int_equal(river_pcoll_check_copy(NULL, 0, 0, -1), RIVER_EINVAL);
  assert_int_equal(river_pcoll_read_copy_range(NULL, 0, 0, 0, 0, 1, rec,
                                               sizeof rec, &pad, &crc,
                                               RIVER_LOG_WARN, &dead),
                   RIVER_EINVAL);
  assert_int_equal(river_pcoll_read_copy_range(NULL, 0, 0, 0, 0, 1, NULL,
                                               0, NULL, NULL, -1, NULL),
                   RIVER_EINVAL);
  assert_int_equal(pad + crc + (size_t)dead, 21);
  assert_int_equal(river_pcoll_verify_copy(NULL, 0, 0, &bad), RIVER_EINVAL);
  assert_int_equal(river_pcoll_verify_blocks(NULL, 0, 0, marks, 1, &bad),
                   RIVER_EINVAL);
  assert_int_equal(river_pcoll_verify_blocks(NULL, 0, 0, NULL, 0, NULL),
                   RIVER_EINVAL);
  assert_int_equal(marks[0], 7);
  assert_memory_equal(&info, &blank_info, sizeof info);
  assert_memory_equal(&part, &blank_part, sizeof part);
  assert_ptr_equal(sp, (const river_schema *)&o);
  assert_string_equal(buf, "keep");
  assert_int_equal(len + rpb + k + nb + bad, sizeof buf + 28);
  river_log_set_handler(NULL, NULL);
}

/* remove: names and patterns are refused before it looks (or uses MPI);
 * check_name refuses the same names and takes 128 characters. */
static void test_badparam_pcoll_remove(void **state)
{
  river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
  const char *const *badnames = bad_names();
  size_t i;

  river_log_set_handler(collect, NULL);
  assert_int_equal(river_pcoll_remove(NULL, NULL), RIVER_EINVAL);
  assert_int_equal(river_pcoll_remove_all(MPI_COMM_NULL, "c", NULL),
                   RIVER_EINVAL);
  assert_int_equal(river_pcoll_remove_all(MPI_COMM_WORLD, NULL, NULL),
                   RIVER_EINVAL);
  for (i = 0; i < NBADNAMES; i++)
    assert_int_equal(river_pcoll_remove(badnames[i], NULL), RIVER_EINVAL);
  o.disks = "../x%d";
  assert_int_equal(river_pcoll_remove("c", &o), RIVER_EINVAL);
  assert_int_equal(river_pcoll_gc(&o, 0, NULL, NULL, NULL, NULL),
                   RIVER_EINVAL);
  assert_int_equal(river_pcoll_purge("c", &o, NULL, NULL, NULL, NULL),
                   RIVER_EINVAL);
  o.disks = NULL;

  /* gc: remove is 0, 1 or 1 | FORCE (force alone is no mode); purge: a
   * valid name */
  assert_int_equal(river_pcoll_gc(NULL, 2, NULL, NULL, NULL, NULL),
                   RIVER_EINVAL);
  assert_int_equal(river_pcoll_gc(NULL, 4 | 1, NULL, NULL, NULL, NULL),
                   RIVER_EINVAL);
  assert_int_equal(river_pcoll_gc(NULL, -1, NULL, NULL, NULL, NULL),
                   RIVER_EINVAL);
  assert_int_equal(river_pcoll_purge(NULL, NULL, NULL, NULL, NULL, NULL),
                   RIVER_EINVAL);
  for (i = 0; i < NBADNAMES; i++)
    assert_int_equal(river_pcoll_purge(badnames[i], NULL, NULL, NULL, NULL,
                                       NULL), RIVER_EINVAL);

  /* scratch claims: a name, an out-parameter; release of NULL is a no-op */
  {
    river_pcoll_scratch *sc = (river_pcoll_scratch *)&o;
    assert_int_equal(river_pcoll_scratch_claim(NULL, NULL, &sc),
                     RIVER_EINVAL);
    assert_int_equal(river_pcoll_scratch_claim("c", NULL, NULL),
                     RIVER_EINVAL);
    for (i = 0; i < NBADNAMES; i++)
      assert_int_equal(river_pcoll_scratch_claim(badnames[i], NULL, &sc),
                       RIVER_EINVAL);
    o.root = "";
    assert_int_equal(river_pcoll_scratch_claim("c", &o, &sc), RIVER_EINVAL);
    o.root = NULL;
    assert_ptr_equal(sc, (river_pcoll_scratch *)&o);   /* untouched */
    river_pcoll_scratch_release(NULL);
  }

  /* check_name */
  assert_int_equal(river_pcoll_check_name(NULL), RIVER_EINVAL);
  for (i = 0; i < NBADNAMES; i++)
    assert_int_equal(river_pcoll_check_name(badnames[i]), RIVER_EINVAL);
  longname[RIVER_PCOLL_NAME_MAX] = '\0'; /* 128 characters: allowed */
  assert_int_equal(river_pcoll_check_name(longname), RIVER_SUCCESS);
  assert_int_equal(river_pcoll_check_name("a.b_c-9"), RIVER_SUCCESS);
  /* A leading '-' would read as an option on a command line. */
  msgs[0] = '\0';
  assert_int_equal(river_pcoll_check_name("-rf"), RIVER_EINVAL);
  assert_non_null(strstr(msgs, "collection name '-rf': may not start with "
                               "'-' (it would read as an option)"));
  assert_int_equal(river_pcoll_check_name("a-"), RIVER_SUCCESS);
  river_log_set_handler(NULL, NULL);
}

/* The layout helpers (split, copy_disk, root, list, order): NULL or
 * nonsense arguments give RIVER_EINVAL and leave outputs untouched. */
static void test_badparam_pcoll_layout(void **state)
{
  river_pcoll *fake = (river_pcoll *)&state;
  river_pcoll_order *ord = (river_pcoll_order *)&state, *ord_out = ord;
  uint64_t first = 7, stride = 7, count = 7;
  const void *ready = &state;
  char buf[8] = "keep";
  size_t len = sizeof buf, nready = 7;
  int n = 7, d = 7;

  (void)state;
  /* split */
  assert_int_equal(river_pcoll_split((river_layout)7, 10, 2, 0, &first,
                                     &stride, &count), RIVER_EINVAL);
  assert_int_equal(river_pcoll_split(RIVER_LAYOUT_PARTITIONED, 10, 0, 0,
                                     &first, &stride, &count), RIVER_EINVAL);
  assert_int_equal(river_pcoll_split(RIVER_LAYOUT_INTERLEAVED, 10, -1, 0,
                                     &first, &stride, &count), RIVER_EINVAL);
  assert_int_equal(river_pcoll_split(RIVER_LAYOUT_PARTITIONED, 10, 2, -1,
                                     &first, &stride, &count), RIVER_EINVAL);
  assert_int_equal(river_pcoll_split(RIVER_LAYOUT_INTERLEAVED, 10, 2, 2,
                                     &first, &stride, &count), RIVER_EINVAL);
  assert_int_equal(river_pcoll_split(RIVER_LAYOUT_PARTITIONED, 10, 2, 0,
                                     NULL, &stride, &count), RIVER_EINVAL);
  assert_int_equal(river_pcoll_split(RIVER_LAYOUT_PARTITIONED, 10, 2, 0,
                                     &first, NULL, &count), RIVER_EINVAL);
  assert_int_equal(river_pcoll_split(RIVER_LAYOUT_INTERLEAVED, 10, 2, 0,
                                     &first, &stride, NULL), RIVER_EINVAL);
  assert_true(first == 7 && stride == 7 && count == 7);
  /* copy_disk */
  assert_int_equal(river_pcoll_copy_disk(NULL, 0, 0, &d), RIVER_EINVAL);
  assert_int_equal(d, 7);
  /* root */
  assert_int_equal(river_pcoll_root(NULL, NULL, &len), RIVER_EINVAL);
  assert_int_equal(river_pcoll_root(NULL, buf, NULL), RIVER_EINVAL);
  /* disk_dir: NULL buffer or length, a negative disk */
  assert_int_equal(river_pcoll_disk_dir(NULL, 0, NULL, &len), RIVER_EINVAL);
  assert_int_equal(river_pcoll_disk_dir(NULL, 0, buf, NULL), RIVER_EINVAL);
  assert_int_equal(river_pcoll_disk_dir(NULL, -1, buf, &len), RIVER_EINVAL);
  /* list */
  assert_int_equal(river_pcoll_list(NULL, NULL, &len, &n), RIVER_EINVAL);
  assert_int_equal(river_pcoll_list(NULL, buf, NULL, &n), RIVER_EINVAL);
  assert_int_equal(river_pcoll_list(NULL, buf, &len, NULL), RIVER_EINVAL);
  assert_true(len == sizeof buf && n == 7 && strcmp(buf, "keep") == 0);
  /* An empty root and one too long for River's paths, never cut short. */
  {
    river_pcoll_opts o = RIVER_PCOLL_OPTS_INIT;
    static char longroot[3000];

    river_log_set_handler(quiet, NULL);
    o.root = "";
    assert_int_equal(river_pcoll_root(&o, buf, &len), RIVER_EINVAL);
    assert_int_equal(river_pcoll_disk_dir(&o, 0, buf, &len), RIVER_EINVAL);
    assert_int_equal(river_pcoll_list(&o, buf, &len, &n), RIVER_EINVAL);
    memset(longroot, 'r', sizeof longroot - 1);
    o.root = longroot;
    assert_int_equal(river_pcoll_root(&o, buf, &len), RIVER_EINVAL);
    assert_int_equal(river_pcoll_disk_dir(&o, 0, buf, &len), RIVER_EINVAL);
    assert_int_equal(river_pcoll_list(&o, buf, &len, &n), RIVER_EINVAL);
    /* A disk pattern without %d, or with one too many. */
    o.root = "/r";
    o.disks = "disk";
    assert_int_equal(river_pcoll_disk_dir(&o, 0, buf, &len), RIVER_EINVAL);
    o.disks = "d%d/%d";
    assert_int_equal(river_pcoll_disk_dir(&o, 0, buf, &len), RIVER_EINVAL);
    river_log_set_handler(NULL, NULL);
    assert_true(len == sizeof buf && n == 7 && strcmp(buf, "keep") == 0);
  }
  /* order */
  assert_int_equal(river_pcoll_order_create(NULL, &ord_out), RIVER_EINVAL);
  assert_int_equal(river_pcoll_order_create(fake, NULL), RIVER_EINVAL);
  assert_ptr_equal(ord_out, ord);
  assert_int_equal(river_pcoll_order_add(NULL, 0, 0, buf, 1, &ready,
                                         &nready), RIVER_EINVAL);
  assert_int_equal(river_pcoll_order_flush(NULL, &ready, &nready),
                   RIVER_EINVAL);
  assert_true(ready == (const void *)&state && nready == 7);
  assert_int_equal(river_pcoll_order_destroy(NULL), RIVER_SUCCESS);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_badparam_collection),
    cmocka_unit_test(test_badparam_pcoll_create),
    cmocka_unit_test(test_badparam_pcoll_open),
    cmocka_unit_test(test_badparam_pcoll_handles),
    cmocka_unit_test(test_badparam_pcoll_remove),
    cmocka_unit_test(test_badparam_pcoll_layout),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
