/*
 * test_badparam.c - every public function, given NULL or nonsense
 * arguments, returns RIVER_EINVAL (or its documented answer) and does
 * not crash or touch its outputs. One test per public header (several
 * for the larger ones: pcoll, gd); when a function is added to a header,
 * it gets a line here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <river.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_badparam_core(void **state)
{
  int argc = 1, a = 7, b = 7, c = 7;
  char *args[] = {"x", NULL}, **argv = args;
  char buf[8] = "keep";
  size_t len = sizeof buf;

  /* argc and argv go together: one NULL without the other is nonsense. */
  assert_int_equal(river_init(&argc, NULL), RIVER_EINVAL);
  assert_int_equal(river_init(NULL, &argv), RIVER_EINVAL);
  assert_int_equal(river_initialized(NULL), RIVER_EINVAL);
  /* Finalize without init is a state error, not a crash. */
  assert_int_equal(river_finalize(), RIVER_ESTATE);

  assert_int_equal(river_get_version(NULL, &b, &c), RIVER_EINVAL);
  assert_int_equal(river_get_version(&a, NULL, &c), RIVER_EINVAL);
  assert_int_equal(river_get_version(&a, &b, NULL), RIVER_EINVAL);
  assert_int_equal(a + b + c, 21);

  assert_int_equal(river_build_info(NULL, &len), RIVER_EINVAL);
  assert_int_equal(river_build_info(buf, NULL), RIVER_EINVAL);
  assert_int_equal(len, sizeof buf);
  len = 0; /* a zero-sized buffer cannot hold even the NUL */
  assert_int_equal(river_build_info(buf, &len), RIVER_ENOBUFS);
  assert_true(len > 1);
  assert_string_equal(buf, "keep");

  /* Codes are any int: no input makes these return NULL. */
  assert_non_null(river_strerror(12345));
  assert_non_null(river_err_name(-12345));
}

static void test_badparam_log(void **state)
{
  int level = 2;

  assert_int_equal(river_log(-1, "x"), RIVER_EINVAL);
  assert_int_equal(river_log(RIVER_LOG_DEBUG + 1, "x"), RIVER_EINVAL);
  assert_int_equal(river_log(RIVER_LOG_ERROR, NULL), RIVER_EINVAL);
  assert_int_equal(river_log_set_level(-1), RIVER_EINVAL);
  assert_int_equal(river_log_set_level(4), RIVER_EINVAL);
  assert_int_equal(river_log_get_level(NULL), RIVER_EINVAL);
  assert_int_equal(river_log_parse_level(NULL, &level), RIVER_EINVAL);
  assert_int_equal(river_log_parse_level("info", NULL), RIVER_EINVAL);
  assert_int_equal(river_log_parse_level("loud", &level), RIVER_EINVAL);
  assert_int_equal(level, 2);
  assert_string_equal(river_log_level_name(1000), "unknown");
  /* A NULL handler is the documented way back to stderr. */
  assert_int_equal(river_log_set_handler(NULL, NULL), RIVER_SUCCESS);
  /* The level is unchanged by all the refused calls above. */
  assert_int_equal(river_log_get_level(&level), RIVER_SUCCESS);
  assert_int_equal(level, RIVER_LOG_WARN);
}

/* river_vlog with a NULL format, through a va_list. */
static int call_vlog(int level, const char *fmt, ...)
{
  va_list ap;
  int rc;

  va_start(ap, fmt);
  rc = river_vlog(level, fmt, ap);
  va_end(ap);
  return rc;
}

static void test_badparam_vlog(void **state)
{
  assert_int_equal(call_vlog(RIVER_LOG_ERROR, NULL), RIVER_EINVAL);
  assert_int_equal(call_vlog(17, "x"), RIVER_EINVAL);
}

static void test_badparam_timing(void **state)
{
  double s = 3.5;
  river_timer t = RIVER_TIMER_INIT;

  assert_int_equal(river_timer_reset(NULL), RIVER_EINVAL);
  assert_int_equal(river_timer_start(NULL), RIVER_EINVAL);
  assert_int_equal(river_timer_stop(NULL), RIVER_EINVAL);
  assert_int_equal(river_timer_elapsed(NULL, &s), RIVER_EINVAL);
  assert_int_equal(river_timer_elapsed(&t, NULL), RIVER_EINVAL);
  assert_true(s == 3.5);
}

static void test_badparam_topo(void **state)
{
  char buf[8] = "keep";
  size_t len = sizeof buf;

  assert_int_equal(river_topo_describe(NULL, &len), RIVER_EINVAL);
  assert_int_equal(river_topo_describe(buf, NULL), RIVER_EINVAL);
  assert_int_equal(len, sizeof buf);
  assert_string_equal(buf, "keep");
}

static void test_badparam_schema(void **state)
{
  river_schema *s = NULL, *out;
  const char *name = "keep";
  river_type type = RIVER_TYPE_FLOAT64;
  size_t count = 7, offset = 7, size = 7, len;
  int n = 7, field = 7, eq = 7, cmp = 7;
  unsigned char rec[100] = {0};
  char buf[8] = "keep";

  assert_int_equal(river_schema_create_default(&s), RIVER_SUCCESS);
  out = s; /* a failed call leaves *out as it was */

  assert_int_equal(river_schema_parse(NULL, &out), RIVER_EINVAL);
  assert_int_equal(river_schema_parse("a:int32", NULL), RIVER_EINVAL);
  assert_int_equal(river_schema_create_default(NULL), RIVER_EINVAL);
  assert_int_equal(river_schema_clone(NULL, &out), RIVER_EINVAL);
  assert_int_equal(river_schema_clone(s, NULL), RIVER_EINVAL);
  assert_ptr_equal(out, s);
  river_schema_destroy(NULL); /* documented no-op */

  assert_int_equal(river_schema_record_size(NULL, &size), RIVER_EINVAL);
  assert_int_equal(river_schema_record_size(s, NULL), RIVER_EINVAL);
  assert_int_equal(river_schema_nfields(NULL, &n), RIVER_EINVAL);
  assert_int_equal(river_schema_nfields(s, NULL), RIVER_EINVAL);

  /* Field outputs are optional; s and the index are not. */
  assert_int_equal(river_schema_field(NULL, 0, &name, &type, &count, &offset),
                   RIVER_EINVAL);
  assert_int_equal(river_schema_field(s, -1, &name, &type, &count, &offset),
                   RIVER_EINVAL);
  assert_int_equal(river_schema_field(s, 2, &name, &type, &count, &offset),
                   RIVER_EINVAL);
  assert_int_equal(river_schema_field(s, 1 << 30, &name, &type, &count,
                                      &offset), RIVER_EINVAL);

  /* Key outputs are optional too; s is not. */
  assert_int_equal(river_schema_key(NULL, &field, &offset, &size),
                   RIVER_EINVAL);

  assert_int_equal(river_schema_find(NULL, "key", &field), RIVER_EINVAL);
  assert_int_equal(river_schema_find(s, NULL, &field), RIVER_EINVAL);
  assert_int_equal(river_schema_find(s, "key", NULL), RIVER_EINVAL);

  len = sizeof buf;
  assert_int_equal(river_schema_format(NULL, buf, &len), RIVER_EINVAL);
  assert_int_equal(river_schema_format(s, NULL, &len), RIVER_EINVAL);
  assert_int_equal(river_schema_format(s, buf, NULL), RIVER_EINVAL);
  assert_int_equal(len, sizeof buf);
  assert_string_equal(buf, "keep");

  assert_int_equal(river_schema_equal(NULL, s, &eq), RIVER_EINVAL);
  assert_int_equal(river_schema_equal(s, NULL, &eq), RIVER_EINVAL);
  assert_int_equal(river_schema_equal(s, s, NULL), RIVER_EINVAL);

  assert_int_equal(river_schema_compare(NULL, rec, rec, &cmp), RIVER_EINVAL);
  assert_int_equal(river_schema_compare(s, NULL, rec, &cmp), RIVER_EINVAL);
  assert_int_equal(river_schema_compare(s, rec, NULL, &cmp), RIVER_EINVAL);
  assert_int_equal(river_schema_compare(s, rec, rec, NULL), RIVER_EINVAL);

  /* None of the refused calls wrote an output. */
  assert_string_equal(name, "keep");
  assert_int_equal(type, RIVER_TYPE_FLOAT64);
  assert_int_equal(count + offset + size, 21);
  assert_int_equal(n + field + eq + cmp, 28);

  /* Types are any int: no input makes river_type_name return NULL. */
  assert_string_equal(river_type_name(-1), "unknown");
  assert_string_equal(river_type_name(RIVER_TYPE_BYTES + 1), "unknown");
  river_schema_destroy(s);
}

static void test_badparam_checksum(void **state)
{
  uint32_t crc = 0x5a5a5a5a;

  assert_int_equal(river_crc32c("x", 1, NULL), RIVER_EINVAL);
  assert_int_equal(river_crc32c(NULL, 1, &crc), RIVER_EINVAL);
  assert_int_equal(river_crc32c(NULL, SIZE_MAX, &crc), RIVER_EINVAL);
  assert_int_equal(crc, 0x5a5a5a5a);
  /* No bytes: buf may be NULL and the CRC stays as it was. */
  assert_int_equal(river_crc32c(NULL, 0, &crc), RIVER_SUCCESS);
  assert_int_equal(crc, 0x5a5a5a5a);
}

static void quiet(int level, int rank, const char *msg, void *ctx)
{
}

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

/* Every logged message, for the checks on what refusals say. */
static char msgs[8192];

static void collect(int level, int rank, const char *msg, void *ctx)
{
  size_t n = strlen(msgs);

  snprintf(msgs + n, sizeof msgs - n, "%s\n", msg);
}

/* Collection names every pcoll call refuses (NBADNAMES of them, from
 * bad_names); the last is longname, one character over
 * RIVER_PCOLL_NAME_MAX. */
#define NBADNAMES 7
static char longname[RIVER_PCOLL_NAME_MAX + 2];

static const char *const *bad_names(void)
{
  static const char *names[NBADNAMES] = {"", "a/b", "..", ".hidden",
                                         "a..b", "a b", longname};

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
                           "a/../../x%d", "x%d/..", "%"};
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
  uint64_t nb = 7, bad = 7;

  river_log_set_handler(collect, NULL);
  memset(&info, 0x5a, sizeof info);
  blank_info = info;
  memset(&part, 0x5a, sizeof part);
  blank_part = part;
  assert_int_equal(river_pcoll_write(NULL, rec, 1), RIVER_EINVAL);
  assert_int_equal(river_pcoll_write(NULL, NULL, 0), RIVER_EINVAL);
  assert_int_equal(river_pcoll_commit(NULL), RIVER_EINVAL);
  assert_int_equal(river_pcoll_close(NULL), RIVER_SUCCESS); /* no-op */
  assert_int_equal(river_pcoll_info_get(NULL, &info), RIVER_EINVAL);
  assert_int_equal(river_pcoll_schema(NULL, &sp), RIVER_EINVAL);
  assert_int_equal(river_pcoll_partition(NULL, 0, &part), RIVER_EINVAL);
  assert_int_equal(river_pcoll_disk_path(NULL, 0, buf, &len), RIVER_EINVAL);
  assert_int_equal(river_pcoll_read_block(NULL, 0, 0, rec, sizeof rec, &k),
                   RIVER_EINVAL);
  assert_int_equal(river_pcoll_blocks(NULL, 0, &rpb, &nb), RIVER_EINVAL);
  assert_int_equal(river_pcoll_verify_copy(NULL, 0, 0, &bad), RIVER_EINVAL);
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
  for (i = 0; i < NBADNAMES; i++)
    assert_int_equal(river_pcoll_remove(badnames[i], NULL), RIVER_EINVAL);
  o.disks = "../x%d";
  assert_int_equal(river_pcoll_remove("c", &o), RIVER_EINVAL);
  o.disks = NULL;

  /* check_name */
  assert_int_equal(river_pcoll_check_name(NULL), RIVER_EINVAL);
  for (i = 0; i < NBADNAMES; i++)
    assert_int_equal(river_pcoll_check_name(badnames[i]), RIVER_EINVAL);
  longname[RIVER_PCOLL_NAME_MAX] = '\0'; /* 128 characters: allowed */
  assert_int_equal(river_pcoll_check_name(longname), RIVER_SUCCESS);
  assert_int_equal(river_pcoll_check_name("a.b_c-9"), RIVER_SUCCESS);
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
  /* list */
  assert_int_equal(river_pcoll_list(NULL, NULL, &len, &n), RIVER_EINVAL);
  assert_int_equal(river_pcoll_list(NULL, buf, NULL, &n), RIVER_EINVAL);
  assert_int_equal(river_pcoll_list(NULL, buf, &len, NULL), RIVER_EINVAL);
  assert_true(len == sizeof buf && n == 7 && strcmp(buf, "keep") == 0);
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

static void test_badparam_gensort(void **state)
{
  unsigned char buf[200];

  memset(buf, 0x5a, sizeof buf);
  assert_int_equal(river_gensort_fill(0, 1, 0, 0, NULL), RIVER_EINVAL);
  assert_int_equal(river_gensort_fill(0, 2, 8u, 0, buf), RIVER_EINVAL);
  assert_int_equal(river_gensort_fill(UINT64_MAX, 2, 0, 0, buf),
                   RIVER_EINVAL);
  assert_int_equal(buf[0], 0x5a);
  assert_int_equal(buf[199], 0x5a);
  assert_int_equal(river_gensort_fill(0, 0, 0, 0, NULL), RIVER_SUCCESS);
}

/* Waits, without MPI: only refusals that come before any MPI call. */
static void test_badparam_wait(void **state)
{
  MPI_Request reqs[2];

  assert_int_equal(river_wait(NULL, MPI_STATUS_IGNORE), RIVER_EINVAL);
  assert_int_equal(river_waitall(-1, reqs), RIVER_EINVAL);
  assert_int_equal(river_waitall(1, NULL), RIVER_EINVAL);
  assert_int_equal(river_waitall(2, NULL), RIVER_EINVAL);
}

/* Distributed queues, without MPI: only refusals that come before MPI is
 * needed (MPI_COMM_NULL, NULL handles and outputs, record size 0, bad
 * role bits, policies and credits). Outputs stay as they were. */
static void test_badparam_dq(void **state)
{
  river_dq_opts o = RIVER_DQ_OPTS_INIT, x;
  river_dq *keep = (river_dq *)&o, *q = keep;
  river_dq_stats st;
  const void *recs = &o;
  unsigned char rec[16] = {0};
  size_t n = 7;
  int from = 7, first = 7, last = 7;
  uint64_t unit = 7;

  river_log_set_handler(collect, NULL);
  msgs[0] = '\0';
  assert_int_equal(river_dq_create(MPI_COMM_NULL, RIVER_DQ_PRODUCER, 16, &o,
                                   &q), RIVER_EINVAL);
  assert_int_equal(river_dq_create(MPI_COMM_WORLD, RIVER_DQ_PRODUCER, 16, &o,
                                   NULL), RIVER_EINVAL);
  assert_int_equal(river_dq_create(MPI_COMM_WORLD, RIVER_DQ_CONSUMER, 0, &o,
                                   &q), RIVER_EINVAL);
  assert_non_null(strstr(msgs, "record_size"));
  assert_int_equal(river_dq_create(MPI_COMM_WORLD, 4, 16, &o, &q),
                   RIVER_EINVAL);
  assert_int_equal(river_dq_create(MPI_COMM_WORLD, -1, 16, NULL, &q),
                   RIVER_EINVAL);
  assert_non_null(strstr(msgs, "role"));
  x = o;
  x.policy = (river_dq_policy)(RIVER_DQ_PULL + 1);
  assert_int_equal(river_dq_create(MPI_COMM_WORLD, RIVER_DQ_PRODUCER, 16, &x,
                                   &q), RIVER_EINVAL);
  x.policy = (river_dq_policy)-1;
  assert_int_equal(river_dq_create(MPI_COMM_WORLD, RIVER_DQ_PRODUCER, 16, &x,
                                   &q), RIVER_EINVAL);
  assert_non_null(strstr(msgs, "policy"));
  x = o;
  x.credits = -1;
  assert_int_equal(river_dq_create(MPI_COMM_WORLD, RIVER_DQ_PRODUCER, 16, &x,
                                   &q), RIVER_EINVAL);
  assert_non_null(strstr(msgs, "credits"));
  x = o;
  x.message_size = 16; /* no room for a header and a 16-byte record */
  assert_int_equal(river_dq_create(MPI_COMM_WORLD, RIVER_DQ_PRODUCER, 16, &x,
                                   &q), RIVER_EINVAL);
  x = o;
  x.policy = RIVER_DQ_EXCHANGE; /* without a partition function */
  assert_int_equal(river_dq_create(MPI_COMM_WORLD, RIVER_DQ_PRODUCER, 16, &x,
                                   &q), RIVER_EINVAL);
  assert_non_null(strstr(msgs, "partition"));
  river_log_set_handler(NULL, NULL);
  assert_ptr_equal(q, keep);

  assert_int_equal(river_dq_put(NULL, rec, 1), RIVER_EINVAL);
  assert_int_equal(river_dq_try_put(NULL, rec, 1), RIVER_EINVAL);
  assert_int_equal(river_dq_close(NULL), RIVER_EINVAL);
  {
    void *rb = NULL;
    assert_int_equal(river_dq_reserve(NULL, &rb, &n), RIVER_EINVAL);
    assert_int_equal(river_dq_commit(NULL, 1), RIVER_EINVAL);
  }
  assert_int_equal(river_dq_get(NULL, &recs, &n, &from), RIVER_EINVAL);
  assert_int_equal(river_dq_try_get(NULL, &recs, &n, &from), RIVER_EINVAL);
  assert_int_equal(river_dq_release(NULL), RIVER_EINVAL);
  assert_int_equal(river_dq_stats_get(NULL, &st), RIVER_EINVAL);
  /* RIVER_DQ_PULL's unit calls. */
  assert_int_equal(river_dq_end_unit(NULL), RIVER_EINVAL);
  assert_int_equal(river_dq_unit(NULL, &unit, &first, &last), RIVER_EINVAL);
  assert_int_equal(river_dq_unit(NULL, NULL, NULL, NULL), RIVER_EINVAL);
  assert_true(unit == 7 && first == 7 && last == 7);
  x = o;
  x.policy = RIVER_DQ_PULL;
  x.credits = -1;
  assert_int_equal(river_dq_create(MPI_COMM_WORLD, RIVER_DQ_CONSUMER, 16, &x,
                                   &q), RIVER_EINVAL);
  assert_ptr_equal(q, keep);
  assert_ptr_equal(recs, &o);
  assert_int_equal(n + (size_t)from, 14);
  assert_int_equal(river_dq_destroy(NULL), RIVER_SUCCESS);
}

/* A GD read function that must never be called here. */
static int gd_never_read(void *ctx, int partition, int copy, int disk,
                         uint64_t block, void *buf, size_t bufsize,
                         size_t *nrecords)
{
  fail_msg("gd read called without MPI");
  return RIVER_EINVAL;
}

/* A good layout: 4 partitions of 10 records on 4 disks, 2 copies. */
static void gd_layout(river_gd_layout *l)
{
  static const uint64_t nrec[4] = {10, 10, 10, 10};

  memset(l, 0, sizeof *l);
  l->npartitions = 4;
  l->ndisks = 4;
  l->replication = 2;
  l->record_size = 100;
  l->records_per_block = 10;
  l->nrecords = nrec;
}

/* Graduated declustering, without MPI: river_gd_create and river_gd_open
 * ask MPI_Initialized first, so with MPI not initialised every call is
 * refused with RIVER_EINVAL, good arguments or bad, before any other MPI
 * call and without calling read; the checks of the arguments themselves
 * run under MPI (tests/mpi/test_gd_mpi.c). *out is NULL after a refused
 * create or open (river_gd_create clears it first), never anything
 * else. First create. */
static void test_badparam_gd_create(void **state)
{
  static const int first[4] = {0, 1, 2, 7};
  river_gd_layout l;
  river_gd_opts o = RIVER_GD_OPTS_INIT, x;
  river_gd *keep = (river_gd *)&o, *g = keep;
  const uint64_t *nrec;
  int init = 1;
  double nan = strtod("nan", NULL);

  assert_int_equal(MPI_Initialized(&init), MPI_SUCCESS);
  assert_int_equal(init, 0);
  gd_layout(&l);
  nrec = l.nrecords;

  river_log_set_handler(collect, NULL);
  msgs[0] = '\0';
  /* A good layout and options: still no MPI. */
  assert_int_equal(river_gd_create(MPI_COMM_WORLD, &l, gd_never_read, NULL,
                                   &o, &g), RIVER_EINVAL);
  assert_null(g);
  g = keep;
  assert_int_equal(river_gd_create(MPI_COMM_WORLD, &l, gd_never_read, NULL,
                                   NULL, &g), RIVER_EINVAL);
  assert_null(g);
  /* NULL and nonsense. */
  g = keep;
  assert_int_equal(river_gd_create(MPI_COMM_NULL, &l, gd_never_read, NULL,
                                   &o, &g), RIVER_EINVAL);
  assert_null(g);
  g = keep;
  assert_int_equal(river_gd_create(MPI_COMM_WORLD, NULL, gd_never_read, NULL,
                                   &o, &g), RIVER_EINVAL);
  assert_null(g);
  g = keep;
  assert_int_equal(river_gd_create(MPI_COMM_WORLD, &l, NULL, NULL, &o, &g),
                   RIVER_EINVAL);
  assert_null(g);
  assert_int_equal(river_gd_create(MPI_COMM_WORLD, &l, gd_never_read, NULL,
                                   &o, NULL), RIVER_EINVAL);
  l.replication = 5;            /* more copies than disks */
  g = keep;
  assert_int_equal(river_gd_create(MPI_COMM_WORLD, &l, gd_never_read, NULL,
                                   &o, &g), RIVER_EINVAL);
  assert_null(g);
  l.replication = 2;
  l.first_disk = first;         /* disk 7 of 4 */
  assert_int_equal(river_gd_create(MPI_COMM_WORLD, &l, gd_never_read, NULL,
                                   &o, &g), RIVER_EINVAL);
  l.first_disk = NULL;
  l.nrecords = NULL;
  assert_int_equal(river_gd_create(MPI_COMM_WORLD, &l, gd_never_read, NULL,
                                   &o, &g), RIVER_EINVAL);
  l.nrecords = nrec;
  x = o;
  x.policy = (river_gd_policy)(RIVER_GD_NOMIRROR + 1);
  assert_int_equal(river_gd_create(MPI_COMM_WORLD, &l, gd_never_read, NULL,
                                   &x, &g), RIVER_EINVAL);
  x = o;
  x.mode = (river_gd_mode)-1;
  assert_int_equal(river_gd_create(MPI_COMM_WORLD, &l, gd_never_read, NULL,
                                   &x, &g), RIVER_EINVAL);
  x = o;
  x.outstanding = -1;
  x.disk_rate = nan;
  x.seek_seconds = 0.01;        /* a seek cost without a disk rate */
  assert_int_equal(river_gd_create(MPI_COMM_WORLD, &l, gd_never_read, NULL,
                                   &x, &g), RIVER_EINVAL);
  assert_null(g);
  river_log_set_handler(NULL, NULL);
}

/* open: a NULL collection is refused (and said), MPI or not. */
static void test_badparam_gd_open(void **state)
{
  river_gd_opts o = RIVER_GD_OPTS_INIT;
  river_gd *keep = (river_gd *)&o, *g = keep;

  river_log_set_handler(collect, NULL);
  msgs[0] = '\0';
  g = keep;
  assert_int_equal(river_gd_open(MPI_COMM_WORLD, NULL, &o, &g),
                   RIVER_EINVAL);
  assert_non_null(strstr(msgs, "collection is NULL"));
  assert_null(g);
  g = keep;
  assert_int_equal(river_gd_open(MPI_COMM_NULL, NULL, NULL, &g),
                   RIVER_EINVAL);
  assert_null(g);
  assert_int_equal(river_gd_open(MPI_COMM_WORLD, NULL, NULL, NULL),
                   RIVER_EINVAL);
  river_log_set_handler(NULL, NULL);
}

/* The calls on a NULL handle: refused, outputs untouched; close is a
 * no-op. */
static void test_badparam_gd_handles(void **state)
{
  river_gd_opts o = RIVER_GD_OPTS_INIT;
  river_gd_stats st, blank;
  const void *recs = &o;
  size_t n = 7;
  uint64_t block = 7;
  int part = 7;

  river_log_set_handler(collect, NULL);
  memset(&st, 0x5a, sizeof st);
  blank = st;
  assert_int_equal(river_gd_next(NULL, &recs, &n, &part, &block),
                   RIVER_EINVAL);
  assert_int_equal(river_gd_next(NULL, &recs, &n, NULL, NULL), RIVER_EINVAL);
  assert_int_equal(river_gd_next(NULL, NULL, NULL, NULL, NULL),
                   RIVER_EINVAL);
  assert_int_equal(river_gd_stats_get(NULL, &st), RIVER_EINVAL);
  assert_int_equal(river_gd_stats_get(NULL, NULL), RIVER_EINVAL);
  assert_int_equal(river_gd_close(NULL), RIVER_SUCCESS); /* no-op */
  assert_memory_equal(&st, &blank, sizeof st);
  assert_ptr_equal(recs, &o);
  assert_int_equal(n + (size_t)part + (size_t)block, 21);
  river_log_set_handler(NULL, NULL);
}

/* river_pcoll_read_copy (what GD reads with): a NULL reader, whatever
 * else, is refused and n stays as it was. */
static void test_badparam_gd_read_copy(void **state)
{
  unsigned char buf[8192];
  size_t n = 7;

  river_log_set_handler(collect, NULL);
  assert_int_equal(river_pcoll_read_copy(NULL, 0, 0, 0, buf, sizeof buf,
                                         &n), RIVER_EINVAL);
  assert_int_equal(river_pcoll_read_copy(NULL, 0, 0, 0, NULL, sizeof buf,
                                         &n), RIVER_EINVAL);
  assert_int_equal(river_pcoll_read_copy(NULL, 0, 0, 0, buf, sizeof buf,
                                         NULL), RIVER_EINVAL);
  assert_int_equal(river_pcoll_read_copy(NULL, -1, -1, UINT64_MAX, buf, 0,
                                         &n), RIVER_EINVAL);
  assert_int_equal(n, 7);
  river_log_set_handler(NULL, NULL);
}

/* The fluid ideal: pure, so all of its refusals; outputs untouched. */
static void test_badparam_gd_fluid_ideal(void **state)
{
  double rates[4] = {1, 0.5, 1, 1}, pc = 7, tot = 7;
  double nan = strtod("nan", NULL), inf = strtod("inf", NULL);

  river_log_set_handler(collect, NULL);
  /* Rates, n >= 1, r in 1..n, finite rates >= 0. */
  assert_int_equal(river_gd_fluid_ideal(NULL, 4, 2, &pc, &tot),
                   RIVER_EINVAL);
  assert_int_equal(river_gd_fluid_ideal(rates, 0, 1, &pc, &tot),
                   RIVER_EINVAL);
  assert_int_equal(river_gd_fluid_ideal(rates, -4, 1, &pc, &tot),
                   RIVER_EINVAL);
  assert_int_equal(river_gd_fluid_ideal(rates, 4, 0, &pc, &tot),
                   RIVER_EINVAL);
  assert_int_equal(river_gd_fluid_ideal(rates, 4, 5, &pc, &tot),
                   RIVER_EINVAL);
  rates[1] = -0.5;
  assert_int_equal(river_gd_fluid_ideal(rates, 4, 2, &pc, &tot),
                   RIVER_EINVAL);
  rates[1] = nan;
  assert_int_equal(river_gd_fluid_ideal(rates, 4, 2, &pc, &tot),
                   RIVER_EINVAL);
  rates[1] = inf;
  assert_int_equal(river_gd_fluid_ideal(rates, 4, 2, &pc, &tot),
                   RIVER_EINVAL);
  assert_true(pc == 7 && tot == 7);
  /* Both outputs are optional. */
  rates[1] = 0.5;
  assert_int_equal(river_gd_fluid_ideal(rates, 4, 2, NULL, NULL),
                   RIVER_SUCCESS);
  river_log_set_handler(NULL, NULL);
}

/* Throttles, perturbation specs and the CPU hog: NULL handles and
 * outputs, rates, bursts, factors and fractions that are not finite
 * numbers in range, kinds that do not exist, text that is no spec.
 * Outputs stay as they were. */
static void test_badparam_throttle(void **state)
{
  river_throttle *tkeep = (river_throttle *)&tkeep, *t = tkeep;
  river_perturb *pkeep = (river_perturb *)&pkeep, *p = pkeep;
  river_cpu_hog *hkeep = (river_cpu_hog *)&hkeep, *h = hkeep;
  double d = 7, inf = strtod("inf", NULL), nan = strtod("nan", NULL);
  int k = 7, m = 7;

  river_log_set_handler(collect, NULL);
  msgs[0] = '\0';
  assert_int_equal(river_throttle_create(1e6, 0, NULL), RIVER_EINVAL);
  assert_int_equal(river_throttle_create(0, 0, &t), RIVER_EINVAL);
  assert_int_equal(river_throttle_create(-1, 0, &t), RIVER_EINVAL);
  assert_int_equal(river_throttle_create(nan, 0, &t), RIVER_EINVAL);
  assert_int_equal(river_throttle_create(inf, 0, &t), RIVER_EINVAL);
  assert_non_null(strstr(msgs, "rate"));
  assert_int_equal(river_throttle_create(1e6, -1, &t), RIVER_EINVAL);
  assert_int_equal(river_throttle_create(1e6, nan, &t), RIVER_EINVAL);
  assert_int_equal(river_throttle_create(1e6, inf, &t), RIVER_EINVAL);
  assert_non_null(strstr(msgs, "burst"));
  assert_ptr_equal(t, tkeep);
  assert_int_equal(river_throttle_consume(NULL, 1), RIVER_EINVAL);
  assert_int_equal(river_throttle_set_factor(NULL, 1), RIVER_EINVAL);
  assert_int_equal(river_throttle_rate(NULL, &d), RIVER_EINVAL);
  assert_int_equal(river_throttle_slept(NULL, &d), RIVER_EINVAL);
  assert_int_equal(river_throttle_create(1e6, 0, &t), RIVER_SUCCESS);
  assert_int_equal(river_throttle_set_factor(t, 0), RIVER_EINVAL);
  assert_int_equal(river_throttle_set_factor(t, -0.5), RIVER_EINVAL);
  assert_int_equal(river_throttle_set_factor(t, nan), RIVER_EINVAL);
  assert_int_equal(river_throttle_set_factor(t, inf), RIVER_EINVAL);
  assert_non_null(strstr(msgs, "factor"));
  assert_int_equal(river_throttle_rate(t, NULL), RIVER_EINVAL);
  assert_int_equal(river_throttle_slept(t, NULL), RIVER_EINVAL);
  assert_int_equal(river_throttle_rate(t, &d), RIVER_SUCCESS);
  assert_true(d == 1e6);   /* the refused factors changed nothing */
  river_throttle_destroy(t);
  river_throttle_destroy(NULL);

  d = 7;
  msgs[0] = '\0';
  assert_int_equal(river_perturb_parse(NULL, &p), RIVER_EINVAL);
  assert_int_equal(river_perturb_parse("disk:1=0.5", NULL), RIVER_EINVAL);
  assert_int_equal(river_perturb_parse("disk:1=0", &p), RIVER_EFORMAT);
  assert_int_equal(river_perturb_parse("tape:1=0.5", &p), RIVER_EFORMAT);
  assert_non_null(strstr(msgs, "clause 1"));
  assert_ptr_equal(p, pkeep);
  assert_int_equal(river_perturb_parse("disk:1=0.5", &p), RIVER_SUCCESS);
  assert_int_equal(river_perturb_factor(NULL, RIVER_PERTURB_DISK, 1, 0, &d),
                   RIVER_EINVAL);
  assert_int_equal(river_perturb_factor(p, 2, 1, 0, &d), RIVER_EINVAL);
  assert_int_equal(river_perturb_factor(p, RIVER_PERTURB_DISK, -1, 0, &d),
                   RIVER_EINVAL);
  assert_int_equal(river_perturb_factor(p, RIVER_PERTURB_DISK, 1, nan, &d),
                   RIVER_EINVAL);
  assert_int_equal(river_perturb_factor(p, RIVER_PERTURB_DISK, 1, 0, NULL),
                   RIVER_EINVAL);
  assert_int_equal(river_perturb_count(NULL, RIVER_PERTURB_CPU, &k),
                   RIVER_EINVAL);
  assert_int_equal(river_perturb_count(p, -1, &k), RIVER_EINVAL);
  assert_int_equal(river_perturb_count(p, RIVER_PERTURB_CPU, NULL),
                   RIVER_EINVAL);
  assert_int_equal(river_perturb_max_index(NULL, RIVER_PERTURB_CPU, &m),
                   RIVER_EINVAL);
  assert_int_equal(river_perturb_max_index(p, 2, &m), RIVER_EINVAL);
  assert_int_equal(river_perturb_max_index(p, RIVER_PERTURB_CPU, NULL),
                   RIVER_EINVAL);
  assert_true(d == 7);
  assert_int_equal(k + m, 14);
  river_perturb_destroy(p);
  river_perturb_destroy(NULL);

  assert_int_equal(river_cpu_hog_start(0.5, NULL), RIVER_EINVAL);
  assert_int_equal(river_cpu_hog_start(0, &h), RIVER_EINVAL);
  assert_int_equal(river_cpu_hog_start(1, &h), RIVER_EINVAL);
  assert_int_equal(river_cpu_hog_start(-1, &h), RIVER_EINVAL);
  assert_int_equal(river_cpu_hog_start(nan, &h), RIVER_EINVAL);
  assert_non_null(strstr(msgs, "fraction"));
  assert_ptr_equal(h, hkeep);
  assert_int_equal(river_cpu_hog_stop(NULL), RIVER_SUCCESS);
  river_log_set_handler(NULL, NULL);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_badparam_core),
    cmocka_unit_test(test_badparam_log),
    cmocka_unit_test(test_badparam_vlog),
    cmocka_unit_test(test_badparam_timing),
    cmocka_unit_test(test_badparam_topo),
    cmocka_unit_test(test_badparam_schema),
    cmocka_unit_test(test_badparam_checksum),
    cmocka_unit_test(test_badparam_collection),
    cmocka_unit_test(test_badparam_pcoll_create),
    cmocka_unit_test(test_badparam_pcoll_open),
    cmocka_unit_test(test_badparam_pcoll_handles),
    cmocka_unit_test(test_badparam_pcoll_remove),
    cmocka_unit_test(test_badparam_pcoll_layout),
    cmocka_unit_test(test_badparam_gensort),
    cmocka_unit_test(test_badparam_wait),
    cmocka_unit_test(test_badparam_dq),
    cmocka_unit_test(test_badparam_gd_create),
    cmocka_unit_test(test_badparam_gd_open),
    cmocka_unit_test(test_badparam_gd_handles),
    cmocka_unit_test(test_badparam_gd_read_copy),
    cmocka_unit_test(test_badparam_gd_fluid_ideal),
    cmocka_unit_test(test_badparam_throttle),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
