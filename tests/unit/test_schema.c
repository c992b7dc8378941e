/*
 * test_schema.c - record schemas: the default schema's layout, parsing
 * every type, whitespace and key rules, every parse error (by code and
 * by logged message), the canonical text and its round trip, the
 * caller-buffer contract of river_schema_format, clone/equal, and key
 * comparison for every type (signs, large unsigned values, NaN,
 * unaligned fields).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <river.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

struct captured {
  int calls;
  int level;
  char msg[1100];
};

static struct captured logged;

static void capture(int level, int rank, const char *msg, void *ctx)
{
  struct captured *c = ctx;

  c->calls++;
  c->level = level;
  snprintf(c->msg, sizeof c->msg, "%s", msg);
}

static int setup(void **state)
{
  memset(&logged, 0, sizeof logged);
  river_log_set_handler(capture, &logged);
  river_log_set_level(RIVER_LOG_WARN);
  return 0;
}

static int teardown(void **state)
{
  river_log_set_handler(NULL, NULL);
  return 0;
}

static void assert_contains(const char *hay, const char *needle)
{
  if (strstr(hay, needle) == NULL)
    fail_msg("\"%s\" does not contain \"%s\"", hay, needle);
}

static river_schema *parse_ok(const char *text)
{
  river_schema *s = NULL;
  int rc = river_schema_parse(text, &s);

  if (rc != RIVER_SUCCESS)
    fail_msg("parse \"%s\": %s (%s)", text, river_err_name(rc), logged.msg);
  assert_non_null(s);
  return s;
}

static void assert_field(const river_schema *s, int i, const char *name,
                         river_type type, size_t count, size_t offset)
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

static void assert_key(const river_schema *s, int field, size_t offset,
                       size_t size)
{
  int f = -1;
  size_t o = 99, z = 99;

  assert_int_equal(river_schema_key(s, &f, &o, &z), RIVER_SUCCESS);
  assert_int_equal(f, field);
  assert_int_equal(o, offset);
  assert_int_equal(z, size);
}

static size_t record_size(const river_schema *s)
{
  size_t size = 0;

  assert_int_equal(river_schema_record_size(s, &size), RIVER_SUCCESS);
  return size;
}

static int nfields(const river_schema *s)
{
  int n = -1;

  assert_int_equal(river_schema_nfields(s, &n), RIVER_SUCCESS);
  return n;
}

/* The canonical text of s (static buffer). */
static const char *format(const river_schema *s)
{
  static char buf[8192];
  size_t len = sizeof buf;

  assert_int_equal(river_schema_format(s, buf, &len), RIVER_SUCCESS);
  assert_int_equal(len, strlen(buf));
  return buf;
}

/* Sign of the key comparison of records a and b. */
static int cmp(const river_schema *s, const void *a, const void *b)
{
  int c = 12345;

  assert_int_equal(river_schema_compare(s, a, b, &c), RIVER_SUCCESS);
  return (c > 0) - (c < 0);
}

/* a < b, with both argument orders and each against itself. */
static void assert_less(const river_schema *s, const void *a, const void *b)
{
  assert_int_equal(cmp(s, a, b), -1);
  assert_int_equal(cmp(s, b, a), 1);
  assert_int_equal(cmp(s, a, a), 0);
  assert_int_equal(cmp(s, b, b), 0);
}

/* -------------------------------------------------- default and layout */

static void test_schema_create_default_layout(void **state)
{
  river_schema *s = NULL;

  assert_int_equal(river_schema_create_default(&s), RIVER_SUCCESS);
  assert_non_null(s);
  assert_int_equal(record_size(s), 100);
  assert_int_equal(nfields(s), 2);
  assert_field(s, 0, "key", RIVER_TYPE_BYTES, 10, 0);
  assert_field(s, 1, "payload", RIVER_TYPE_BYTES, 90, 10);
  assert_key(s, 0, 0, 10);
  assert_string_equal(format(s),
                      "key:bytes[10],payload:bytes[90];key=key");
  river_schema_destroy(s);
  assert_int_equal(logged.calls, 0);
}

static void test_schema_create_default_equals_parsed_text(void **state)
{
  river_schema *d = NULL, *p = parse_ok(RIVER_SCHEMA_DEFAULT);
  int eq = -1;

  assert_int_equal(river_schema_create_default(&d), RIVER_SUCCESS);
  assert_int_equal(river_schema_equal(d, p, &eq), RIVER_SUCCESS);
  assert_int_equal(eq, 1);
  river_schema_destroy(d);
  river_schema_destroy(p);
}

static void test_schema_parse_every_type(void **state)
{
  river_schema *s = parse_ok("a:int32,b:int64,c:uint32,d:uint64,"
                             "e:float32,f:float64,g:char[3],h:bytes[5]");

  assert_int_equal(nfields(s), 8);
  assert_field(s, 0, "a", RIVER_TYPE_INT32, 1, 0);
  assert_field(s, 1, "b", RIVER_TYPE_INT64, 1, 4);
  assert_field(s, 2, "c", RIVER_TYPE_UINT32, 1, 12);
  assert_field(s, 3, "d", RIVER_TYPE_UINT64, 1, 16);
  assert_field(s, 4, "e", RIVER_TYPE_FLOAT32, 1, 24);
  assert_field(s, 5, "f", RIVER_TYPE_FLOAT64, 1, 28);
  assert_field(s, 6, "g", RIVER_TYPE_CHAR, 3, 36);
  assert_field(s, 7, "h", RIVER_TYPE_BYTES, 5, 39);
  assert_int_equal(record_size(s), 44);
  assert_key(s, 0, 0, 4); /* no field called "key": the first field */
  river_schema_destroy(s);
  assert_int_equal(logged.calls, 0);
}

static void test_schema_parse_single_field(void **state)
{
  river_schema *s = parse_ok("x:char[1]");

  assert_int_equal(nfields(s), 1);
  assert_int_equal(record_size(s), 1);
  assert_field(s, 0, "x", RIVER_TYPE_CHAR, 1, 0);
  assert_key(s, 0, 0, 1);
  river_schema_destroy(s);
}

static void test_schema_parse_key_rules(void **state)
{
  river_schema *s;

  /* A field named "key" is the key when there is no key clause. */
  s = parse_ok("id:int64,key:uint32,v:float64");
  assert_key(s, 1, 8, 4);
  river_schema_destroy(s);

  /* A key clause wins over a field named "key". */
  s = parse_ok("id:int64,key:uint32,v:float64;key=v");
  assert_key(s, 2, 12, 8);
  river_schema_destroy(s);

  s = parse_ok("a:bytes[7],b:char[2],c:int32;key=b");
  assert_key(s, 1, 7, 2);
  assert_int_equal(record_size(s), 13);
  river_schema_destroy(s);

  /* Names are case-sensitive: "Key" is not "key". */
  s = parse_ok("a:int32,Key:int64");
  assert_key(s, 0, 0, 4);
  river_schema_destroy(s);
}

static void test_schema_parse_whitespace(void **state)
{
  river_schema *s = parse_ok(" \tk : char[4] ,\n v:uint64 ; key = v \n");
  river_schema *t = parse_ok("k:char[4],v:uint64;key=v");
  int eq = 0;

  assert_int_equal(river_schema_equal(s, t, &eq), RIVER_SUCCESS);
  assert_int_equal(eq, 1);
  assert_field(s, 0, "k", RIVER_TYPE_CHAR, 4, 0);
  assert_field(s, 1, "v", RIVER_TYPE_UINT64, 1, 4);
  assert_key(s, 1, 4, 8);
  assert_string_equal(format(s), "k:char[4],v:uint64;key=v");
  river_schema_destroy(s);
  river_schema_destroy(t);
}

static void test_schema_parse_name_rules(void **state)
{
  char text[64];
  river_schema *s;

  /* 31 characters is the longest name. */
  snprintf(text, sizeof text, "%s:int32",
           "abcdefghijklmnopqrstuvwxyz_1234");
  s = parse_ok(text);
  assert_field(s, 0, "abcdefghijklmnopqrstuvwxyz_1234", RIVER_TYPE_INT32, 1,
               0);
  river_schema_destroy(s);

  s = parse_ok("_:int32,_9:int32,A_b9:int32,Z:int32");
  assert_int_equal(nfields(s), 4);
  assert_field(s, 0, "_", RIVER_TYPE_INT32, 1, 0);
  assert_field(s, 3, "Z", RIVER_TYPE_INT32, 1, 12);
  river_schema_destroy(s);
}

static void test_schema_parse_leading_zeros_in_n(void **state)
{
  river_schema *s = parse_ok("a:bytes[007]");

  assert_field(s, 0, "a", RIVER_TYPE_BYTES, 7, 0);
  assert_string_equal(format(s), "a:bytes[7];key=a");
  river_schema_destroy(s);
}

/* Builds "f0:int32,f1:int32,...": n fields. */
static void many_fields(char *buf, size_t size, int n)
{
  size_t len = 0;
  int i;

  buf[0] = '\0';
  for (i = 0; i < n; i++)
    len += (size_t)snprintf(buf + len, size - len, "%sf%d:int32",
                            i ? "," : "", i);
}

static void test_schema_parse_max_fields(void **state)
{
  char text[1024];
  river_schema *s;
  size_t off = 0;
  int n;

  many_fields(text, sizeof text, RIVER_SCHEMA_MAX_FIELDS);
  s = parse_ok(text);
  assert_int_equal(nfields(s), RIVER_SCHEMA_MAX_FIELDS);
  assert_int_equal(record_size(s), 4 * RIVER_SCHEMA_MAX_FIELDS);
  assert_int_equal(river_schema_field(s, 63, NULL, NULL, NULL, &off),
                   RIVER_SUCCESS);
  assert_int_equal(off, 252);
  assert_int_equal(river_schema_find(s, "f63", &n), RIVER_SUCCESS);
  assert_int_equal(n, 63);
  river_schema_destroy(s);
}

static void test_schema_parse_record_size_limit(void **state)
{
  river_schema *s = parse_ok("a:bytes[1073741824]");

  assert_int_equal(record_size(s), (size_t)1 << 30);
  river_schema_destroy(s);

  s = parse_ok("a:int64,b:bytes[1073741816]");
  assert_int_equal(record_size(s), (size_t)1 << 30);
  assert_field(s, 1, "b", RIVER_TYPE_BYTES, 1073741816, 8);
  river_schema_destroy(s);
}

/* --------------------------------------------------------- parse errors */

struct bad_case {
  const char *text;
  int rc;
  const char *want[3];  /* substrings of the logged message */
};

static const struct bad_case bad_cases[] = {
  /* empty text */
  {"", RIVER_EFORMAT, {"the text is empty"}},
  {" \t\n", RIVER_EFORMAT, {"the text is empty"}},
  /* empty field */
  {"a:int32,,b:int32", RIVER_EFORMAT, {"field 2 is empty"}},
  {"a:int32,", RIVER_EFORMAT, {"field 2 is empty"}},
  {",a:int32", RIVER_EFORMAT, {"field 1 is empty"}},
  {"a:int32, ,b:int32", RIVER_EFORMAT, {"field 2 is empty"}},
  {";key=a", RIVER_EFORMAT, {"field 1 is empty"}},
  /* missing ':' */
  {"a int32", RIVER_EFORMAT, {"field 1 \"a int32\"", "missing ':'"}},
  {"a:int32,b", RIVER_EFORMAT, {"field 2 \"b\"", "missing ':'"}},
  /* bad names */
  {":int32", RIVER_EFORMAT, {"field 1", "bad name \"\"", "it is empty"}},
  {"9a:int32", RIVER_EFORMAT,
   {"field 1", "bad name \"9a\"", "must start with a letter or '_'"}},
  {"a:int32,a-b:int32", RIVER_EFORMAT,
   {"field 2", "bad name \"a-b\"", "only letters, digits and '_'"}},
  {"a b:int32", RIVER_EFORMAT,
   {"field 1", "bad name \"a b\"", "only letters, digits and '_'"}},
  {"abcdefghijklmnopqrstuvwxyz_12345:int32", RIVER_EFORMAT,
   {"field 1", "bad name \"abcdefghijklmnopqrstuvwxyz_12345\"",
    "longer than 31 characters"}},
  /* duplicate names */
  {"a:int32,a:int64", RIVER_EFORMAT,
   {"field 2", "duplicate name \"a\"", "also field 1"}},
  {"x:int32,y:int32,z:int32,y:char[2]", RIVER_EFORMAT,
   {"field 4", "duplicate name \"y\"", "also field 2"}},
  /* unknown types */
  {"a:int16", RIVER_EFORMAT, {"field 1 \"a\"", "unknown type \"int16\""}},
  {"a:int32,b:Int32", RIVER_EFORMAT,
   {"field 2 \"b\"", "unknown type \"Int32\""}},
  {"a:double", RIVER_EFORMAT, {"field 1 \"a\"", "unknown type \"double\""}},
  {"a:char(4)", RIVER_EFORMAT, {"field 1 \"a\"", "unknown type \"char(4)\""}},
  {"a:bytes [4]", RIVER_EFORMAT,
   {"field 1 \"a\"", "unknown type \"bytes [4]\""}},
  {"a:b:int32", RIVER_EFORMAT, {"field 1 \"a\"", "unknown type \"b:int32\""}},
  {"a:", RIVER_EFORMAT, {"field 1 \"a\"", "no type after ':'"}},
  {"a:char", RIVER_EFORMAT, {"field 1 \"a\"", "\"char\" needs a length"}},
  {"a:int32,b:bytes", RIVER_EFORMAT,
   {"field 2 \"b\"", "\"bytes\" needs a length"}},
  /* bad N */
  {"a:char[0]", RIVER_EFORMAT, {"field 1 \"a\"", "must be at least 1"}},
  {"a:bytes[000]", RIVER_EFORMAT, {"field 1 \"a\"", "must be at least 1"}},
  {"a:char[]", RIVER_EFORMAT, {"field 1 \"a\"", "has no length N"}},
  {"a:char[x]", RIVER_EFORMAT,
   {"field 1 \"a\"", "length N \"x\"", "not a number"}},
  {"a:bytes[-1]", RIVER_EFORMAT,
   {"field 1 \"a\"", "length N \"-1\"", "not a number"}},
  {"a:bytes[+1]", RIVER_EFORMAT,
   {"field 1 \"a\"", "length N \"+1\"", "not a number"}},
  {"a:int32,b:bytes[1x]", RIVER_EFORMAT,
   {"field 2 \"b\"", "length N \"1x\"", "not a number"}},
  {"a:char[ 4]", RIVER_EFORMAT,
   {"field 1 \"a\"", "length N \" 4\"", "not a number"}},
  {"a:char[4]x", RIVER_EFORMAT,
   {"field 1 \"a\"", "junk \"x\" after the ']'", "char[4]x"}},
  {"a:char[4]]", RIVER_EFORMAT, {"field 1 \"a\"", "junk \"]\" after"}},
  {"a:char[4", RIVER_EFORMAT,
   {"field 1 \"a\"", "\"char[4\" lacks the closing ']'"}},
  /* key clause */
  {"a:int32;key=b", RIVER_EFORMAT, {"key \"b\" is not one of the fields"}},
  {"a:int32;key=A", RIVER_EFORMAT, {"key \"A\" is not one of the fields"}},
  {"a:int32;key=", RIVER_EFORMAT, {"key clause \"key=\" names no field"}},
  {"a:int32;key=-a", RIVER_EFORMAT, {"names no field"}},
  {"a:int32;key=a;", RIVER_EFORMAT,
   {"junk \";\" after the key clause \"key=a\""}},
  {"a:int32;key=a b", RIVER_EFORMAT,
   {"junk \"b\" after the key clause \"key=a\""}},
  {"a:int32;key=a;key=a", RIVER_EFORMAT, {"junk \";key=a\" after"}},
  {"a:int32;key=a,b:int32", RIVER_EFORMAT, {"junk \",b:int32\" after"}},
  {"a:int32;", RIVER_EFORMAT,
   {"expected \"key=NAME\" after ';', found \"\""}},
  {"a:int32;kee=a", RIVER_EFORMAT,
   {"expected \"key=NAME\" after ';', found \"kee=a\""}},
  {"a:int32;key a", RIVER_EFORMAT,
   {"expected \"key=NAME\" after ';', found \"key a\""}},
  {"a:int32;keys=a", RIVER_EFORMAT, {"expected \"key=NAME\""}},
  {"a:int32;Key=a", RIVER_EFORMAT, {"expected \"key=NAME\""}},
  /* sizes */
  {"a:bytes[1073741825]", RIVER_EOVERFLOW,
   {"field 1 \"a\"", "length N 1073741825", "too large"}},
  {"a:char[18446744073709551616]", RIVER_EOVERFLOW,
   {"field 1 \"a\"", "too large"}},
  {"a:int32,b:bytes[99999999999999999999999999999999]", RIVER_EOVERFLOW,
   {"field 2 \"b\"", "too large"}},
  {"a:bytes[1073741824],b:int32", RIVER_EOVERFLOW,
   {"field 2 \"b\"", "the record would exceed 1 GiB"}},
  {"a:int64,b:bytes[1073741817]", RIVER_EOVERFLOW,
   {"field 2 \"b\"", "the record would exceed 1 GiB"}},
  {"a:bytes[536870912],b:bytes[536870912],c:char[1]", RIVER_EOVERFLOW,
   {"field 3 \"c\"", "the record would exceed 1 GiB"}},
};

/* How much of a long text an error message quotes (src/schema.c). */
#define QUOTE_MAX 400

/* text fails with rc, leaves *out alone and logs exactly one error that
 * quotes text and contains each of want. */
static void assert_parse_fails(const char *text, int rc,
                               const char *const *want, int nwant)
{
  river_schema *sentinel = NULL, *out;
  char quoted[1100];
  int got, i;

  assert_int_equal(river_schema_create_default(&sentinel), RIVER_SUCCESS);
  out = sentinel;
  memset(&logged, 0, sizeof logged);
  got = river_schema_parse(text, &out);
  if (got != rc)
    fail_msg("parse \"%s\": got %s, want %s", text, river_err_name(got),
             river_err_name(rc));
  assert_ptr_equal(out, sentinel);
  assert_int_equal(logged.calls, 1);
  assert_int_equal(logged.level, RIVER_LOG_ERROR);
  /* The message quotes the text, cut after QUOTE_MAX characters. */
  if (strlen(text) > QUOTE_MAX)
    snprintf(quoted, sizeof quoted, "schema \"%.*s...\": ", QUOTE_MAX, text);
  else
    snprintf(quoted, sizeof quoted, "schema \"%s\": ", text);
  if (strncmp(logged.msg, quoted, strlen(quoted)) != 0)
    fail_msg("message \"%s\" does not start with %s", logged.msg, quoted);
  for (i = 0; i < nwant && want[i] != NULL; i++)
    assert_contains(logged.msg, want[i]);
  river_schema_destroy(sentinel);
}

static void test_schema_parse_errors_by_code_and_message(void **state)
{
  size_t i;

  for (i = 0; i < sizeof bad_cases / sizeof *bad_cases; i++)
    assert_parse_fails(bad_cases[i].text, bad_cases[i].rc, bad_cases[i].want,
                       3);
}

static void test_schema_parse_too_many_fields(void **state)
{
  char text[1024];
  const char *want[] = {"field 65 \"f64:int32\"", "at most 64 fields"};

  many_fields(text, sizeof text, RIVER_SCHEMA_MAX_FIELDS + 1);
  assert_parse_fails(text, RIVER_EFORMAT, want, 2);
  many_fields(text, sizeof text, RIVER_SCHEMA_MAX_FIELDS + 10);
  assert_parse_fails(text, RIVER_EFORMAT, want, 2);
}

/* A text too long to quote whole still gets a message saying what is
 * wrong and where: 64 fields with 31-character names, then a 65th. */
static void test_schema_parse_error_in_long_text(void **state)
{
  char text[4096];
  const char *want[] = {"field 65 \"x:int32\"", "at most 64 fields"};
  char where[64];
  const char *want2[] = {where, "unknown type \"int33\""};
  size_t len = 0;
  int i;

  for (i = 0; i < RIVER_SCHEMA_MAX_FIELDS; i++)
    len += (size_t)snprintf(text + len, sizeof text - len, "f%030d:int32,",
                            i);
  snprintf(text + len, sizeof text - len, "x:int32");
  assert_true(strlen(text) > 2000);
  assert_parse_fails(text, RIVER_EFORMAT, want, 2);

  snprintf(where, sizeof where, "field 64 \"f%030d\"", 63);
  text[len - 2] = '3'; /* field 64 becomes int33 */
  text[len - 1] = '\0';
  assert_parse_fails(text, RIVER_EFORMAT, want2, 2);
}

/* The first error from the left is the one reported. */
static void test_schema_parse_reports_first_error(void **state)
{
  const char *want[] = {"field 2 \"b\"", "unknown type \"nope\""};

  assert_parse_fails("a:int32,b:nope,9c:char[0];key=zz", RIVER_EFORMAT, want,
                     2);
}

static void test_schema_parse_logs_only_errors(void **state)
{
  river_schema *out = NULL;

  /* Errors pass every level; successes log nothing at any level. */
  river_log_set_level(RIVER_LOG_DEBUG);
  assert_int_equal(river_schema_parse("a:int32", &out), RIVER_SUCCESS);
  assert_int_equal(logged.calls, 0);
  river_schema_destroy(out);
  out = NULL;
  river_log_set_level(RIVER_LOG_ERROR);
  assert_int_equal(river_schema_parse("a:int9", &out), RIVER_EFORMAT);
  assert_int_equal(logged.calls, 1);
  assert_null(out);
}

/* ------------------------------------------------------------- queries */

static void test_schema_find_fields(void **state)
{
  river_schema *s = parse_ok("id:uint64,name:char[20],score:float32");
  int i = -7;

  assert_int_equal(river_schema_find(s, "id", &i), RIVER_SUCCESS);
  assert_int_equal(i, 0);
  assert_int_equal(river_schema_find(s, "name", &i), RIVER_SUCCESS);
  assert_int_equal(i, 1);
  assert_int_equal(river_schema_find(s, "score", &i), RIVER_SUCCESS);
  assert_int_equal(i, 2);

  i = -7;
  assert_int_equal(river_schema_find(s, "Score", &i), RIVER_ENOTFOUND);
  assert_int_equal(river_schema_find(s, "nam", &i), RIVER_ENOTFOUND);
  assert_int_equal(river_schema_find(s, "names", &i), RIVER_ENOTFOUND);
  assert_int_equal(river_schema_find(s, "", &i), RIVER_ENOTFOUND);
  assert_int_equal(i, -7);
  assert_int_equal(logged.calls, 0);
  river_schema_destroy(s);
}

static void test_schema_field_optional_outputs(void **state)
{
  river_schema *s = parse_ok("id:uint64,name:char[20],score:float32");
  const char *name = NULL;
  river_type type = RIVER_TYPE_INT32;
  size_t count = 0, offset = 0;

  assert_int_equal(river_schema_field(s, 2, NULL, NULL, NULL, NULL),
                   RIVER_SUCCESS);
  assert_int_equal(river_schema_field(s, 1, &name, NULL, NULL, NULL),
                   RIVER_SUCCESS);
  assert_string_equal(name, "name");
  assert_int_equal(river_schema_field(s, 1, NULL, &type, NULL, NULL),
                   RIVER_SUCCESS);
  assert_int_equal(type, RIVER_TYPE_CHAR);
  assert_int_equal(river_schema_field(s, 1, NULL, NULL, &count, NULL),
                   RIVER_SUCCESS);
  assert_int_equal(count, 20);
  assert_int_equal(river_schema_field(s, 2, NULL, NULL, NULL, &offset),
                   RIVER_SUCCESS);
  assert_int_equal(offset, 28);
  river_schema_destroy(s);
}

static void test_schema_key_optional_outputs(void **state)
{
  river_schema *s = parse_ok("id:uint64,name:char[20],score:float32;key=name");
  int field = -1;
  size_t offset = 0, size = 0;

  assert_int_equal(river_schema_key(s, NULL, NULL, NULL), RIVER_SUCCESS);
  assert_int_equal(river_schema_key(s, &field, NULL, NULL), RIVER_SUCCESS);
  assert_int_equal(field, 1);
  assert_int_equal(river_schema_key(s, NULL, &offset, NULL), RIVER_SUCCESS);
  assert_int_equal(offset, 8);
  assert_int_equal(river_schema_key(s, NULL, NULL, &size), RIVER_SUCCESS);
  assert_int_equal(size, 20);
  river_schema_destroy(s);
}

static void test_schema_field_out_of_range(void **state)
{
  river_schema *s = parse_ok("a:int32,b:int32");
  const char *name = "keep";
  size_t count = 5;

  assert_int_equal(river_schema_field(s, 2, &name, NULL, &count, NULL),
                   RIVER_EINVAL);
  assert_int_equal(river_schema_field(s, -1, &name, NULL, &count, NULL),
                   RIVER_EINVAL);
  assert_string_equal(name, "keep");
  assert_int_equal(count, 5);
  river_schema_destroy(s);
}

static void test_type_name_every_type(void **state)
{
  static const char *const names[] = {"int32",   "int64",   "uint32",
                                      "uint64",  "float32", "float64",
                                      "char",    "bytes"};
  int t;

  assert_int_equal(RIVER_TYPE_INT32, 0);
  assert_int_equal(RIVER_TYPE_BYTES, 7);
  for (t = RIVER_TYPE_INT32; t <= RIVER_TYPE_BYTES; t++)
    assert_string_equal(river_type_name(t), names[t]);
  assert_string_equal(river_type_name(-1), "unknown");
  assert_string_equal(river_type_name(8), "unknown");
  assert_string_equal(river_type_name(1 << 30), "unknown");
}

/* -------------------------------------------------------------- format */

static const char *const round_trip_texts[] = {
  RIVER_SCHEMA_DEFAULT,
  "a:int32",
  "x:char[1]",
  "a:int32,b:int64,c:uint32,d:uint64,e:float32,f:float64,g:char[3],"
  "h:bytes[5]",
  "a:int32,b:int64,c:uint32,d:uint64,e:float32,f:float64,g:char[3],"
  "h:bytes[5];key=f",
  "id:int64,key:uint32,v:float64",
  "id:int64,key:uint32,v:float64;key=id",
  "key:bytes[10],payload:bytes[90];key=payload",
  " k : char[4] , v : uint64 ; key = v ",
  "abcdefghijklmnopqrstuvwxyz_1234:bytes[1073741824]",
  "_:float32,_0:float64;key=_0",
  "a:bytes[007],B:char[12]",
};

static void assert_round_trip(const char *text)
{
  river_schema *s = parse_ok(text), *t;
  char first[8192];
  int eq = 0;

  snprintf(first, sizeof first, "%s", format(s));
  assert_contains(first, ";key=");
  t = parse_ok(first);
  assert_int_equal(river_schema_equal(s, t, &eq), RIVER_SUCCESS);
  if (!eq)
    fail_msg("\"%s\" -> \"%s\" parses to a different schema", text, first);
  /* Canonical: formatting again gives the same text. */
  assert_string_equal(format(t), first);
  river_schema_destroy(s);
  river_schema_destroy(t);
}

static void test_schema_format_round_trip(void **state)
{
  char text[1024];
  size_t i;

  for (i = 0; i < sizeof round_trip_texts / sizeof *round_trip_texts; i++)
    assert_round_trip(round_trip_texts[i]);
  many_fields(text, sizeof text, RIVER_SCHEMA_MAX_FIELDS);
  assert_round_trip(text);
}

/* The longest canonical text: 64 fields with 31-character names and
 * bytes[N] types of many digits, fits and round-trips. */
static void test_schema_format_longest_text(void **state)
{
  char text[8192];
  size_t len = 0;
  int i;

  for (i = 0; i < RIVER_SCHEMA_MAX_FIELDS; i++)
    len += (size_t)snprintf(text + len, sizeof text - len,
                            "%sf%030d:bytes[%d]", i ? "," : "", i,
                            10000000 + i);
  snprintf(text + len, sizeof text - len, ";key=f%030d", 63);
  assert_round_trip(text);
}

static void test_schema_format_canonical_text(void **state)
{
  river_schema *s = parse_ok(" id : int64 , key:uint32,v:float64 ");

  assert_string_equal(format(s), "id:int64,key:uint32,v:float64;key=key");
  river_schema_destroy(s);
  s = parse_ok("a:char[0010],b:float32;key=b");
  assert_string_equal(format(s), "a:char[10],b:float32;key=b");
  river_schema_destroy(s);
}

static void test_schema_format_buffer_contract(void **state)
{
  river_schema *s = NULL;
  const char *want = "key:bytes[10],payload:bytes[90];key=key";
  size_t need = strlen(want) + 1, len;
  char buf[128];

  assert_int_equal(river_schema_create_default(&s), RIVER_SUCCESS);

  /* Too small by one (no room for the NUL): refused, buf untouched. */
  memset(buf, '#', sizeof buf);
  len = need - 1;
  assert_int_equal(river_schema_format(s, buf, &len), RIVER_ENOBUFS);
  assert_int_equal(len, need);
  for (len = 0; len < sizeof buf; len++)
    assert_int_equal(buf[len], '#');

  len = 0;
  assert_int_equal(river_schema_format(s, buf, &len), RIVER_ENOBUFS);
  assert_int_equal(len, need);
  assert_int_equal(buf[0], '#');

  /* Exactly the size needed works; *len becomes the string length. */
  len = need;
  assert_int_equal(river_schema_format(s, buf, &len), RIVER_SUCCESS);
  assert_int_equal(len, need - 1);
  assert_string_equal(buf, want);
  assert_int_equal(buf[need], '#');

  len = sizeof buf;
  assert_int_equal(river_schema_format(s, buf, &len), RIVER_SUCCESS);
  assert_int_equal(len, need - 1);
  river_schema_destroy(s);
}

/* --------------------------------------------------------- clone/equal */

static void test_schema_clone_is_equal_and_independent(void **state)
{
  river_schema *s = parse_ok("a:int32,b:char[7],c:float64;key=b");
  river_schema *c = NULL;
  int eq = 0;

  assert_int_equal(river_schema_clone(s, &c), RIVER_SUCCESS);
  assert_non_null(c);
  assert_ptr_not_equal(c, s);
  assert_int_equal(river_schema_equal(s, c, &eq), RIVER_SUCCESS);
  assert_int_equal(eq, 1);
  river_schema_destroy(s);
  /* The clone lives on alone. */
  assert_field(c, 1, "b", RIVER_TYPE_CHAR, 7, 4);
  assert_key(c, 1, 4, 7);
  assert_int_equal(record_size(c), 19);
  assert_string_equal(format(c), "a:int32,b:char[7],c:float64;key=b");
  river_schema_destroy(c);
}

static void assert_differ(const char *x, const char *y)
{
  river_schema *a = parse_ok(x), *b = parse_ok(y);
  int eq = -1;

  assert_int_equal(river_schema_equal(a, b, &eq), RIVER_SUCCESS);
  if (eq != 0)
    fail_msg("\"%s\" and \"%s\" compare equal", x, y);
  assert_int_equal(river_schema_equal(b, a, &eq), RIVER_SUCCESS);
  assert_int_equal(eq, 0);
  river_schema_destroy(a);
  river_schema_destroy(b);
}

static void test_schema_equal_differences(void **state)
{
  const char *base = "a:int32,b:char[7];key=b";
  int eq = 0;
  river_schema *s = parse_ok(base);

  assert_int_equal(river_schema_equal(s, s, &eq), RIVER_SUCCESS);
  assert_int_equal(eq, 1);
  river_schema_destroy(s);

  assert_differ(base, "a:int32,c:char[7];key=c");    /* name */
  assert_differ(base, "a:uint32,b:char[7];key=b");   /* type */
  assert_differ(base, "a:float32,b:char[7];key=b");  /* type, same size */
  assert_differ(base, "a:int32,b:bytes[7];key=b");   /* char vs bytes */
  assert_differ(base, "a:int32,b:char[8];key=b");    /* count */
  assert_differ(base, "b:char[7],a:int32;key=b");    /* order */
  assert_differ(base, "a:int32,b:char[7];key=a");    /* key */
  assert_differ(base, "a:int32,b:char[7],c:int32;key=b"); /* more fields */
  assert_differ(base, "a:int32");
}

/* ---------------------------------------------------------- comparison */

/* Records of the schema "pad:bytes[1],k:TYPE,tail:bytes[3]": the key at
 * offset 1 (unaligned for every numeric type), placed at odd addresses. */
struct rec_pair {
  unsigned char raw[2 * 32 + 1];
  unsigned char *a, *b;
};

static void rec_pair_init(struct rec_pair *p, size_t record_size)
{
  memset(p->raw, 0xee, sizeof p->raw);
  p->a = p->raw + 1;             /* odd address */
  p->b = p->raw + 1 + record_size;
  if (((uintptr_t)p->b & 1) == 0)
    p->b++;
}

/* Store v (any numeric type) as the key of rec, at offset 1. */
#define SET_KEY(rec, v) memcpy((rec) + 1, &(v), sizeof(v))

static void test_schema_compare_int32(void **state)
{
  river_schema *s = parse_ok("pad:bytes[1],k:int32,tail:bytes[3];key=k");
  static const int32_t v[] = {INT32_MIN, -70000, -256, -1, 0, 1, 255,
                              65536, INT32_MAX};
  struct rec_pair p;
  size_t i, j;

  rec_pair_init(&p, record_size(s));
  for (i = 0; i < sizeof v / sizeof *v; i++) {
    for (j = 0; j < sizeof v / sizeof *v; j++) {
      SET_KEY(p.a, v[i]);
      SET_KEY(p.b, v[j]);
      p.a[0] = 0x00;
      p.b[0] = 0xff; /* non-key bytes do not matter */
      assert_int_equal(cmp(s, p.a, p.b), (i > j) - (i < j));
    }
  }
  river_schema_destroy(s);
}

static void test_schema_compare_int64(void **state)
{
  river_schema *s = parse_ok("pad:bytes[1],k:int64,tail:bytes[3];key=k");
  static const int64_t v[] = {INT64_MIN, -((int64_t)1 << 40), -4294967296LL,
                              -1, 0, 1, 4294967296LL, (int64_t)1 << 62,
                              INT64_MAX};
  struct rec_pair p;
  size_t i, j;

  rec_pair_init(&p, record_size(s));
  for (i = 0; i < sizeof v / sizeof *v; i++) {
    for (j = 0; j < sizeof v / sizeof *v; j++) {
      SET_KEY(p.a, v[i]);
      SET_KEY(p.b, v[j]);
      assert_int_equal(cmp(s, p.a, p.b), (i > j) - (i < j));
    }
  }
  river_schema_destroy(s);
}

static void test_schema_compare_uint32(void **state)
{
  river_schema *s = parse_ok("pad:bytes[1],k:uint32,tail:bytes[3];key=k");
  /* 0x80000000 and up would be negative as int32. */
  static const uint32_t v[] = {0, 1, 255, 256, 0x7fffffffu, 0x80000000u,
                               0xfffffffeu, UINT32_MAX};
  struct rec_pair p;
  size_t i, j;

  rec_pair_init(&p, record_size(s));
  for (i = 0; i < sizeof v / sizeof *v; i++) {
    for (j = 0; j < sizeof v / sizeof *v; j++) {
      SET_KEY(p.a, v[i]);
      SET_KEY(p.b, v[j]);
      assert_int_equal(cmp(s, p.a, p.b), (i > j) - (i < j));
    }
  }
  river_schema_destroy(s);
}

static void test_schema_compare_uint64(void **state)
{
  river_schema *s = parse_ok("pad:bytes[1],k:uint64,tail:bytes[3];key=k");
  /* Values above INT64_MAX sort after it, not before 0. */
  static const uint64_t v[] = {0, 1, 0xffffffffull, 0x100000000ull,
                               (uint64_t)INT64_MAX,
                               (uint64_t)INT64_MAX + 1,
                               0xfedcba9876543210ull, UINT64_MAX - 1,
                               UINT64_MAX};
  struct rec_pair p;
  size_t i, j;

  rec_pair_init(&p, record_size(s));
  for (i = 0; i < sizeof v / sizeof *v; i++) {
    for (j = 0; j < sizeof v / sizeof *v; j++) {
      SET_KEY(p.a, v[i]);
      SET_KEY(p.b, v[j]);
      assert_int_equal(cmp(s, p.a, p.b), (i > j) - (i < j));
    }
  }
  river_schema_destroy(s);
}

static void test_schema_compare_float64(void **state)
{
  river_schema *s = parse_ok("pad:bytes[1],k:float64,tail:bytes[3];key=k");
  /* In order; v[k] and v[k + 1] marked equal where eq[k]. */
  const double v[] = {-INFINITY, -1e300, -1.5, -0.0, 0.0, 4.9e-324, 1.0,
                      1e300, INFINITY, NAN, -NAN};
  const int rank[] = {0, 1, 2, 3, 3, 4, 5, 6, 7, 8, 8};
  struct rec_pair p;
  size_t i, j;

  rec_pair_init(&p, record_size(s));
  for (i = 0; i < sizeof v / sizeof *v; i++) {
    for (j = 0; j < sizeof v / sizeof *v; j++) {
      SET_KEY(p.a, v[i]);
      SET_KEY(p.b, v[j]);
      if (cmp(s, p.a, p.b) != (rank[i] > rank[j]) - (rank[i] < rank[j]))
        fail_msg("float64 %g vs %g: got %d", v[i], v[j], cmp(s, p.a, p.b));
    }
  }
  river_schema_destroy(s);
}

static void test_schema_compare_float32(void **state)
{
  river_schema *s = parse_ok("pad:bytes[1],k:float32,tail:bytes[3];key=k");
  const float v[] = {-INFINITY, -3.4e38f, -1.5f, -0.0f, 0.0f, 1.4e-45f,
                     1.0f, 3.4e38f, INFINITY, NAN, -NAN};
  const int rank[] = {0, 1, 2, 3, 3, 4, 5, 6, 7, 8, 8};
  struct rec_pair p;
  size_t i, j;

  rec_pair_init(&p, record_size(s));
  for (i = 0; i < sizeof v / sizeof *v; i++) {
    for (j = 0; j < sizeof v / sizeof *v; j++) {
      SET_KEY(p.a, v[i]);
      SET_KEY(p.b, v[j]);
      if (cmp(s, p.a, p.b) != (rank[i] > rank[j]) - (rank[i] < rank[j]))
        fail_msg("float32 %g vs %g: got %d", (double)v[i], (double)v[j],
                 cmp(s, p.a, p.b));
    }
  }
  river_schema_destroy(s);
}

static void test_schema_compare_bytes_unsigned(void **state)
{
  river_schema *s = NULL;
  unsigned char a[100], b[100];

  assert_int_equal(river_schema_create_default(&s), RIVER_SUCCESS);
  memset(a, 0, sizeof a);
  memset(b, 0, sizeof b);
  assert_int_equal(cmp(s, a, b), 0);

  /* Only the 10 key bytes count. */
  memset(b + 10, 0xff, 90);
  assert_int_equal(cmp(s, a, b), 0);

  /* Bytes compare unsigned: 0x80 and 0xff are above 0x7f. */
  a[0] = 0x7f;
  b[0] = 0x80;
  assert_less(s, a, b);
  b[0] = 0xff;
  assert_less(s, a, b);

  /* The first difference decides, wherever it is. */
  memset(a, 0x41, 10);
  memset(b, 0x41, 10);
  a[9] = 0x00;
  b[9] = 0x01;
  assert_less(s, a, b);
  a[3] = 0x42;
  assert_less(s, b, a);

  /* Zero bytes are data, not terminators. */
  memset(a, 0, 10);
  memset(b, 0, 10);
  b[8] = 0x01;
  assert_less(s, a, b);
  river_schema_destroy(s);
}

static void test_schema_compare_char_unaligned(void **state)
{
  river_schema *s = parse_ok("n:int32,name:char[5],x:uint64;key=name");
  unsigned char a[17], b[17];

  memset(a, 0, sizeof a);
  memset(b, 0, sizeof b);
  memcpy(a + 4, "apple", 5);
  memcpy(b + 4, "apply", 5);
  assert_less(s, a, b);
  memcpy(b + 4, "Zebra", 5); /* 'Z' < 'a' in byte order */
  assert_less(s, b, a);
  memcpy(b + 4, "appl\xe9", 5); /* high byte: after 'e' */
  assert_less(s, a, b);
  memcpy(b + 4, "apple", 5);
  b[0] = 9;
  b[16] = 9;
  assert_int_equal(cmp(s, a, b), 0);
  river_schema_destroy(s);
}

/* A key field after a char[3]: offset 3 in a record at an odd address,
 * for each numeric type the key is misaligned for its type. */
static void test_schema_compare_unaligned_numeric_key(void **state)
{
  river_schema *s = parse_ok("c:char[3],k:int64,d:float32;key=k");
  unsigned char buf[2 * 15 + 2];
  unsigned char *a = buf + 1, *b = buf + 1 + 15;
  int64_t x = -5, y = 3;

  assert_key(s, 1, 3, 8);
  memset(buf, 0, sizeof buf);
  memcpy(a + 3, &x, sizeof x);
  memcpy(b + 3, &y, sizeof y);
  assert_less(s, a, b);
  river_schema_destroy(s);

  s = parse_ok("c:char[3],k:float64;key=k");
  {
    double dx = -2.5, dy = NAN;

    memcpy(a + 3, &dx, sizeof dx);
    memcpy(b + 3, &dy, sizeof dy);
    assert_less(s, a, b);
  }
  river_schema_destroy(s);
}

/* The key is found by offset: with a key in the middle, sorting by it
 * orders records by that field alone. */
static const river_schema *sort_schema;

static int sort_cmp(const void *a, const void *b)
{
  int c = 0;

  assert_int_equal(river_schema_compare(sort_schema, a, b, &c),
                   RIVER_SUCCESS);
  return c;
}

static void test_schema_compare_sorts_records(void **state)
{
  river_schema *s = parse_ok("tag:char[1],v:int32,w:bytes[2];key=v");
  enum { N = 257, R = 7 };
  unsigned char recs[N * R];
  int32_t prev = INT32_MIN, v;
  int i;

  srand(7);
  for (i = 0; i < N; i++) {
    v = (int32_t)((rand() % 2001) - 1000) * 1000003;
    recs[i * R] = (unsigned char)i;
    memcpy(recs + i * R + 1, &v, sizeof v);
    recs[i * R + 5] = (unsigned char)(255 - i);
    recs[i * R + 6] = 0;
  }
  sort_schema = s;
  qsort(recs, N, R, sort_cmp);
  for (i = 0; i < N; i++) {
    memcpy(&v, recs + i * R + 1, sizeof v);
    assert_true(prev <= v);
    prev = v;
  }
  river_schema_destroy(s);
}

static void test_schema_destroy_null(void **state)
{
  river_schema_destroy(NULL);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
  const struct CMUnitTest tests[] = {
    T(test_schema_create_default_layout),
    T(test_schema_create_default_equals_parsed_text),
    T(test_schema_parse_every_type),
    T(test_schema_parse_single_field),
    T(test_schema_parse_key_rules),
    T(test_schema_parse_whitespace),
    T(test_schema_parse_name_rules),
    T(test_schema_parse_leading_zeros_in_n),
    T(test_schema_parse_max_fields),
    T(test_schema_parse_record_size_limit),
    T(test_schema_parse_errors_by_code_and_message),
    T(test_schema_parse_too_many_fields),
    T(test_schema_parse_error_in_long_text),
    T(test_schema_parse_reports_first_error),
    T(test_schema_parse_logs_only_errors),
    T(test_schema_find_fields),
    T(test_schema_field_optional_outputs),
    T(test_schema_key_optional_outputs),
    T(test_schema_field_out_of_range),
    T(test_type_name_every_type),
    T(test_schema_format_round_trip),
    T(test_schema_format_longest_text),
    T(test_schema_format_canonical_text),
    T(test_schema_format_buffer_contract),
    T(test_schema_clone_is_equal_and_independent),
    T(test_schema_equal_differences),
    T(test_schema_compare_int32),
    T(test_schema_compare_int64),
    T(test_schema_compare_uint32),
    T(test_schema_compare_uint64),
    T(test_schema_compare_float64),
    T(test_schema_compare_float32),
    T(test_schema_compare_bytes_unsigned),
    T(test_schema_compare_char_unaligned),
    T(test_schema_compare_unaligned_numeric_key),
    T(test_schema_compare_sorts_records),
    T(test_schema_destroy_null),
  };
#undef T
  return cmocka_run_group_tests(tests, NULL, NULL);
}
