/*
 * test_schema_errors.c - every river_schema_parse error, by code and by
 * logged message: empty fields, bad and duplicate names, unknown types,
 * bad lengths, the key clause, size limits, too many fields, errors in a
 * text too long to quote whole, which error is reported first, and that
 * only errors are logged. The bad texts and what their messages must say
 * are the table bad_cases.
 */
#include "schema_test.h"

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

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
  const struct CMUnitTest tests[] = {
    T(test_schema_parse_errors_by_code_and_message),
    T(test_schema_parse_too_many_fields),
    T(test_schema_parse_error_in_long_text),
    T(test_schema_parse_reports_first_error),
    T(test_schema_parse_logs_only_errors),
  };
#undef T
  return cmocka_run_group_tests(tests, NULL, NULL);
}
