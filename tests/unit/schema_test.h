/*
 * schema_test.h - what the record-schema unit tests (test_schema.c,
 * test_schema_errors.c, test_schema_compare.c) share: a log handler that
 * keeps the last message in `logged`, the CMocka setup and teardown that
 * install it, and short forms of the river_schema calls that fail the
 * test on an unexpected code (parse_ok, assert_field, assert_key,
 * record_size, nfields, format, cmp, assert_less, many_fields).
 *
 * Header-only: each test program is one file that includes it once.
 */
#ifndef RIVER_SCHEMA_TEST_H
#define RIVER_SCHEMA_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <river.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct captured {
  int calls;
  int level;
  char msg[1100];
};

/* The log as the tests see it: setup() clears it and installs capture. */
static struct captured logged;

static inline void capture(int level, int rank, const char *msg,
                           void *ctx)
{
  struct captured *c = ctx;

  c->calls++;
  c->level = level;
  snprintf(c->msg, sizeof c->msg, "%s", msg);
}

static inline int setup(void **state)
{
  memset(&logged, 0, sizeof logged);
  river_log_set_handler(capture, &logged);
  river_log_set_level(RIVER_LOG_WARN);
  return 0;
}

static inline int teardown(void **state)
{
  river_log_set_handler(NULL, NULL);
  return 0;
}

static inline void assert_contains(const char *hay, const char *needle)
{
  if (strstr(hay, needle) == NULL)
    fail_msg("\"%s\" does not contain \"%s\"", hay, needle);
}

static inline river_schema *parse_ok(const char *text)
{
  river_schema *s = NULL;
  int rc = river_schema_parse(text, &s);

  if (rc != RIVER_SUCCESS)
    fail_msg("parse \"%s\": %s (%s)", text, river_err_name(rc), logged.msg);
  assert_non_null(s);
  return s;
}

static inline void assert_field(const river_schema *s, int i,
                                const char *name, river_type type,
                                size_t count, size_t offset)
{
  const char *n = NULL;
  river_type t = (river_type)-1;
  size_t c = 0, o = 0;

  assert_int_equal(river_schema_field(s, i, &n, &t, &c, &o), RIVER_SUCCESS);
  assert_string_equal(n, name);
  assert_int_equal(t, type);
  assert_int_equal(c, count);
  assert_int_equal(o, offset);
}

static inline void assert_key(const river_schema *s, int field,
                              size_t offset, size_t size)
{
  int f = -1;
  size_t o = 99, z = 99;

  assert_int_equal(river_schema_key(s, &f, &o, &z), RIVER_SUCCESS);
  assert_int_equal(f, field);
  assert_int_equal(o, offset);
  assert_int_equal(z, size);
}

static inline size_t record_size(const river_schema *s)
{
  size_t size = 0;

  assert_int_equal(river_schema_record_size(s, &size), RIVER_SUCCESS);
  return size;
}

static inline int nfields(const river_schema *s)
{
  int n = -1;

  assert_int_equal(river_schema_nfields(s, &n), RIVER_SUCCESS);
  return n;
}

/* The canonical text of s (static buffer). */
static inline const char *format(const river_schema *s)
{
  static char buf[8192];
  size_t len = sizeof buf;

  assert_int_equal(river_schema_format(s, buf, &len), RIVER_SUCCESS);
  assert_int_equal(len, strlen(buf));
  return buf;
}

/* Sign of the key comparison of records a and b. */
static inline int cmp(const river_schema *s, const void *a, const void *b)
{
  int c = 12345;

  assert_int_equal(river_schema_compare(s, a, b, &c), RIVER_SUCCESS);
  return (c > 0) - (c < 0);
}

/* a < b, with both argument orders and each against itself. */
static inline void assert_less(const river_schema *s, const void *a,
                               const void *b)
{
  assert_int_equal(cmp(s, a, b), -1);
  assert_int_equal(cmp(s, b, a), 1);
  assert_int_equal(cmp(s, a, a), 0);
  assert_int_equal(cmp(s, b, b), 0);
}

/* Builds "f0:int32,f1:int32,...": n fields. */
static inline void many_fields(char *buf, size_t size, int n)
{
  size_t len = 0;
  int i;

  buf[0] = '\0';
  for (i = 0; i < n; i++)
    len += (size_t)snprintf(buf + len, size - len, "%sf%d:int32",
                            i ? "," : "", i);
}

#endif /* RIVER_SCHEMA_TEST_H */
