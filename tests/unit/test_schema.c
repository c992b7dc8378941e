/*
 * test_schema.c - record schemas: the default schema's layout, parsing
 * every type, whitespace and key rules, the field and key queries, the
 * canonical text and its round trip, the caller-buffer contract of
 * river_schema_format, and clone/equal. Parse errors are in
 * test_schema_errors.c, key comparison in test_schema_compare.c; the
 * helpers they share in schema_test.h.
 */
#include "schema_test.h"

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

static void test_schema_destroy_null(void **state)
{
  river_schema_destroy(NULL);
}

/* river_key_of and river_key_norm: where the key lies, and memcmp of
 * normalized keys in the schema's order (-1 < 0 < 1 for an int32). */
static void test_key_of_and_norm(void **state)
{
  river_schema *s = NULL;
  river_key k;
  int32_t v[3] = {-1, 0, 1};
  unsigned char n[3][4];
  int i;

  assert_int_equal(river_schema_parse("name:char[6],v:int32,w:float64;key=v",
                                      &s), RIVER_SUCCESS);
  assert_int_equal(river_key_of(NULL, -1, &k), RIVER_EINVAL);
  assert_int_equal(river_key_of(s, -1, NULL), RIVER_EINVAL);
  assert_int_equal(river_key_of(s, 3, &k), RIVER_EINVAL);
  assert_int_equal(river_key_of(s, -1, &k), RIVER_SUCCESS);
  assert_int_equal(k.type, RIVER_TYPE_INT32);
  assert_int_equal(k.offset, 6);
  assert_int_equal(k.size, 4);
  assert_int_equal(k.record_size, 18);
  for (i = 0; i < 3; i++)
    river_key_norm(&k, &v[i], n[i]);
  assert_true(memcmp(n[0], n[1], 4) < 0 && memcmp(n[1], n[2], 4) < 0);
  assert_int_equal(river_key_of(s, 0, &k), RIVER_SUCCESS);
  assert_int_equal(k.offset, 0);
  assert_int_equal(k.size, 6);
  river_schema_destroy(s);
}

/* river_pred_*: a field compared with a value, bad input said in *why. */
static void test_pred_create_pass(void **state)
{
  river_schema *s = NULL;
  river_pred *p = NULL;
  unsigned char rec[18];
  const char *why = NULL;
  int32_t v;

  assert_int_equal(river_schema_parse("name:char[6],v:int32,w:float64;key=v",
                                      &s), RIVER_SUCCESS);
  assert_int_equal(river_pred_create(s, "v", ">=", "-2", &p, &why),
                   RIVER_SUCCESS);
  memset(rec, 0, sizeof rec);
  v = 5;
  memcpy(rec + 6, &v, 4);
  assert_int_equal(river_pred_pass(p, rec), 1);
  v = -3;
  memcpy(rec + 6, &v, 4);
  assert_int_equal(river_pred_pass(p, rec), 0);
  assert_int_equal(river_pred_pass(p, NULL), 0);
  assert_int_equal(river_pred_pass(NULL, rec), 0);
  river_pred_destroy(p);
  memcpy(rec, "abcdef", 6);
  assert_int_equal(river_pred_create(s, "name", "prefix", "abc", &p, &why),
                   RIVER_SUCCESS);
  assert_int_equal(river_pred_pass(p, rec), 1);
  river_pred_destroy(p);
  p = NULL;
  assert_int_equal(river_pred_create(s, "v", "=~", "1", &p, &why),
                   RIVER_EINVAL);
  assert_null(p);
  assert_non_null(strstr(why, "op is not one of"));
  assert_int_equal(river_pred_create(s, "nope", "==", "1", &p, &why),
                   RIVER_EINVAL);
  assert_non_null(strstr(why, "no such field"));
  assert_int_equal(river_pred_create(s, "v", "==", "x1", &p, &why),
                   RIVER_EINVAL);
  assert_non_null(strstr(why, "not a number"));
  assert_int_equal(river_pred_create(NULL, "v", "==", "1", &p, &why),
                   RIVER_EINVAL);
  assert_int_equal(river_pred_create(s, "v", "==", "1", NULL, &why),
                   RIVER_EINVAL);
  river_pred_destroy(NULL);
  river_schema_destroy(s);
}

/* river_pred_parse: one text "FIELD OP VALUE" (blanks before and
 * between the words, the value the rest after one blank); bad text and
 * NULLs are RIVER_EINVAL with *why, and *out NULL. */
static void test_pred_parse_text(void **state)
{
  river_schema *s = NULL;
  river_pred *p = NULL, *keep = (river_pred *)&keep;
  unsigned char rec[10];
  const char *why = NULL;

  assert_int_equal(river_schema_parse("name:char[6],v:int32", &s),
                   RIVER_SUCCESS);
  memset(rec, 0, sizeof rec);
  memcpy(rec, "a b", 3);
  assert_int_equal(river_pred_parse(s, " \tname \t== a b", &p, &why),
                   RIVER_SUCCESS);
  assert_string_equal(why, "");
  assert_int_equal(river_pred_pass(p, rec), 1);  /* the value "a b" */
  river_pred_destroy(p);
  assert_int_equal(river_pred_parse(s, "name ==  a b", &p, &why),
                   RIVER_SUCCESS);
  assert_int_equal(river_pred_pass(p, rec), 0);  /* the value " a b" */
  river_pred_destroy(p);
  assert_int_equal(river_pred_parse(s, "  v  <  7", &p, NULL), RIVER_SUCCESS);
  river_pred_destroy(p);

  p = keep;
  assert_int_equal(river_pred_parse(s, "v <", &p, &why), RIVER_EINVAL);
  assert_null(p);
  assert_non_null(strstr(why, "FIELD OP VALUE"));
  assert_int_equal(river_pred_parse(s, "", &p, &why), RIVER_EINVAL);
  assert_non_null(strstr(why, "FIELD OP VALUE"));
  assert_int_equal(river_pred_parse(s, "v =~ 1", &p, &why), RIVER_EINVAL);
  assert_non_null(strstr(why, "op is not one of"));
  assert_int_equal(river_pred_parse(s, "nope == 1", &p, &why),
                   RIVER_EINVAL);
  assert_non_null(strstr(why, "no such field"));
  p = keep;
  assert_int_equal(river_pred_parse(s, NULL, &p, &why), RIVER_EINVAL);
  assert_null(p);
  assert_int_equal(river_pred_parse(NULL, "v == 1", &p, &why),
                   RIVER_EINVAL);
  assert_int_equal(river_pred_parse(s, "v == 1", NULL, &why), RIVER_EINVAL);
  river_schema_destroy(s);
}

/* river_pred_keep: the passing records, in order, at the front of dst
 * (in place or into another buffer); NULLs refused, outputs untouched. */
static void test_pred_keep_in_place_and_apart(void **state)
{
  river_schema *s = NULL;
  river_pred *p = NULL;
  int32_t v[6] = {5, -1, 9, 2, 7, 0}, out[6] = {0}, want[3] = {5, 9, 7};
  size_t kept = 99;

  assert_int_equal(river_schema_parse("v:int32", &s), RIVER_SUCCESS);
  assert_int_equal(river_pred_create(s, "v", ">", "2", &p, NULL),
                   RIVER_SUCCESS);
  assert_int_equal(river_pred_keep(p, v, 6, out, &kept), RIVER_SUCCESS);
  assert_int_equal(kept, 3);
  assert_memory_equal(out, want, sizeof want);
  assert_int_equal(out[3], 0);     /* nothing past the kept records */
  assert_int_equal(river_pred_keep(p, v, 6, v, &kept), RIVER_SUCCESS);
  assert_int_equal(kept, 3);
  assert_memory_equal(v, want, sizeof want);
  assert_int_equal(river_pred_keep(p, NULL, 0, NULL, &kept), RIVER_SUCCESS);
  assert_int_equal(kept, 0);

  kept = 99;
  out[0] = 42;
  assert_int_equal(river_pred_keep(NULL, v, 3, out, &kept), RIVER_EINVAL);
  assert_int_equal(river_pred_keep(p, v, 3, out, NULL), RIVER_EINVAL);
  assert_int_equal(river_pred_keep(p, NULL, 3, out, &kept), RIVER_EINVAL);
  assert_int_equal(river_pred_keep(p, v, 3, NULL, &kept), RIVER_EINVAL);
  assert_int_equal(kept, 99);
  assert_int_equal(out[0], 42);
  river_pred_destroy(p);
  river_schema_destroy(s);
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
    T(test_schema_destroy_null),
    T(test_key_of_and_norm),
    T(test_pred_create_pass),
    T(test_pred_parse_text),
    T(test_pred_keep_in_place_and_apart),
  };
#undef T
  return cmocka_run_group_tests(tests, NULL, NULL);
}
