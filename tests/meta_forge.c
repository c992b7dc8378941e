/*
 * meta_forge.c - a test tool that forges a collection's metadata file
 * the way a hostile user could: it rewrites fields of River's record
 * (the generation, the disk pattern) and seals the file again with
 * River's own sealing code (src/pcoll_seal.c, compiled in): the seal is
 * a CRC32C, a check against damage, not a signature. Used by
 * tests/cli/test_coll_forged.sh to show that readers judge what a
 * sealed file says (a traversal in the generation) and that nothing is
 * removed on the word of another user's metadata.
 *
 *   meta_forge IN OUT [gen=GEN] [disks=PATTERN]
 *
 * Every partition row's path is rewritten to NAME.pP.GEN.rdat, as River
 * would have written it for that generation (so only the field itself
 * is forged). The HDF5 part of the file is kept as it was (River never
 * reads it). Exit status 0 on success, 2 on a usage or format error.
 * The record's layout is that of src/pcoll_meta.c's opening comment.
 */
#include "pcoll_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A cursor over the input record. */
struct cur {
  const unsigned char *p;
  size_t left;
  int bad;
};

/* The output record. */
struct out {
  unsigned char *p;
  size_t n, cap;
};

static uint64_t get_u(struct cur *c, int nbytes)
{
  uint64_t v = 0;
  int i;

  if (c->bad || c->left < (size_t)nbytes) {
    c->bad = 1;
    return 0;
  }
  for (i = nbytes - 1; i >= 0; i--)
    v = (v << 8) | c->p[i];
  c->p += nbytes;
  c->left -= (size_t)nbytes;
  return v;
}

/* A string of the record into a fresh buffer (NUL-terminated). */
static char *get_s(struct cur *c)
{
  uint64_t n = get_u(c, 8);
  char *s;

  if (c->bad || n > c->left || (s = malloc((size_t)n + 1)) == NULL) {
    c->bad = 1;
    return NULL;
  }
  memcpy(s, c->p, (size_t)n);
  s[n] = '\0';
  c->p += n;
  c->left -= (size_t)n;
  return s;
}

static void put(struct out *o, const void *p, size_t n)
{
  if (o->n + n > o->cap) {
    size_t cap = 2 * (o->n + n);
    unsigned char *q = realloc(o->p, cap);
    if (q == NULL) {
      fprintf(stderr, "meta_forge: out of memory\n");
      exit(2);
    }
    o->p = q;
    o->cap = cap;
  }
  memcpy(o->p + o->n, p, n);
  o->n += n;
}

static void put_u(struct out *o, uint64_t v, int nbytes)
{
  unsigned char b[8];
  int i;

  for (i = 0; i < nbytes; i++)
    b[i] = (unsigned char)(v >> (8 * i));
  put(o, b, (size_t)nbytes);
}

static void put_s(struct out *o, const char *s)
{
  put_u(o, strlen(s), 8);
  put(o, s, strlen(s));
}

/* Copy nbytes of the input unchanged. */
static void copy(struct cur *c, struct out *o, size_t nbytes)
{
  if (c->bad || c->left < nbytes) {
    c->bad = 1;
    return;
  }
  put(o, c->p, nbytes);
  c->p += nbytes;
  c->left -= nbytes;
}

/* Copy a string, or put repl instead of it when repl is not NULL. */
static char *swap_s(struct cur *c, struct out *o, const char *repl)
{
  char *s = get_s(c);

  if (s != NULL)
    put_s(o, repl ? repl : s);
  return s;
}

static int die(const char *msg)
{
  fprintf(stderr, "meta_forge: %s\n", msg);
  return 2;
}

/* The record rec (len bytes) with the forged fields into o. */
static int forge(const unsigned char *rec, size_t len, const char *gen,
                 const char *disks, struct out *o)
{
  struct cur c = {rec, len, 0};
  char *name, *schema_text, *oldgen, *path, buf[RIVER_PCOLL_PATH_LEN + 64];
  uint64_t np, repl, p;
  river_schema *schema = NULL;
  size_t key_size = 0;

  copy(&c, o, 8);                        /* river_format */
  name = swap_s(&c, o, NULL);
  schema_text = swap_s(&c, o, NULL);
  copy(&c, o, 8);                        /* record_size */
  copy(&c, o, 8);                        /* nrecords */
  np = get_u(&c, 8);
  put_u(o, np, 8);
  copy(&c, o, 8);                        /* ndisks */
  repl = get_u(&c, 8);
  put_u(o, repl, 8);
  free(swap_s(&c, o, NULL));             /* layout */
  copy(&c, o, 16);                       /* ordered, block_size */
  oldgen = swap_s(&c, o, gen);
  free(swap_s(&c, o, disks));
  free(swap_s(&c, o, NULL));             /* river_version */
  if (c.bad || name == NULL || schema_text == NULL || oldgen == NULL
      || river_schema_parse(schema_text, &schema) != RIVER_SUCCESS
      || np > 1u << 20 || repl > 1u << 10)
    return die("cannot read the record's attributes");
  river_schema_key(schema, NULL, NULL, &key_size);
  for (p = 0; p < np && !c.bad; p++) {
    copy(&c, o, 4 + 8 + 8 + 8 + 4 + 4 + 4 * (size_t)repl);
    path = get_s(&c);
    snprintf(buf, sizeof buf, "%s.p%llu.%s.rdat", name,
             (unsigned long long)p, gen ? gen : oldgen);
    put_s(o, buf);
    free(path);
    copy(&c, o, 2 * key_size);           /* key_min, key_max */
  }
  river_schema_destroy(schema);
  free(name);
  free(schema_text);
  free(oldgen);
  if (c.bad || c.left != 0)
    return die("cannot read the record's partition table");
  return 0;
}

int main(int argc, char **argv)
{
  const char *gen = NULL, *disks = NULL;
  struct out o = {NULL, 0, 0};
  unsigned char *img;
  size_t len, ub, reclen;
  char why[256];
  long size;
  FILE *f;
  int i, rc;

  if (argc < 3)
    return die("usage: meta_forge IN OUT [gen=GEN] [disks=PATTERN]");
  for (i = 3; i < argc; i++) {
    if (strncmp(argv[i], "gen=", 4) == 0)
      gen = argv[i] + 4;
    else if (strncmp(argv[i], "disks=", 6) == 0)
      disks = argv[i] + 6;
    else
      return die("fields: gen=GEN, disks=PATTERN");
  }
  f = fopen(argv[1], "rb");
  if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) <= 0
      || fseek(f, 0, SEEK_SET) != 0)
    return die("cannot read the input");
  len = (size_t)size;
  img = malloc(len);
  if (img == NULL || fread(img, 1, len, f) != len)
    return die("cannot read the input");
  fclose(f);
  if (river__pcoll_seal_check(img, len, &reclen, why, sizeof why)
      != RIVER_SUCCESS)
    return die("the input is not a sealed River metadata file");
  ub = 0;
  for (i = 7; i >= 0; i--)
    ub = (ub << 8) | img[32 + i];
  rc = forge(img + RIVER_PCOLL_SEAL_HDR, reclen, gen, disks, &o);
  if (rc != 0)
    return rc;
  if (RIVER_PCOLL_SEAL_HDR + o.n > ub)
    return die("the forged record does not fit the user block");
  memset(img + RIVER_PCOLL_SEAL_HDR, 0, ub - RIVER_PCOLL_SEAL_HDR);
  memcpy(img + RIVER_PCOLL_SEAL_HDR, o.p, o.n);
  river__pcoll_seal(img, len, ub, o.n);
  f = fopen(argv[2], "wb");
  if (f == NULL || fwrite(img, 1, len, f) != len || fclose(f) != 0)
    return die("cannot write the output");
  free(o.p);
  free(img);
  return 0;
}
