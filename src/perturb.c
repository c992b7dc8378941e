/*
 * perturb.c - perturbation specs (see river/throttle.h): parsing
 * "disk:3=0.5;cpu:0,4-6=0.25@2s" and the queries on the result.
 *
 * A spec is parsed clause by clause (split at ';') into struct
 * river_perturb, a flat list of (kind, index range, factor, start)
 * entries in spec order; a clause naming several ranges gives several
 * entries. The factor at (kind, index, t) is that of the last entry
 * covering the index with start <= t. river_perturb_count counts the
 * indices whose effective factor differs from 1 at some time: an entry is
 * ever in effect for an index unless a later entry for the same index
 * starts no later than it, so "disk:3=0.5;disk:3=1" perturbs nothing,
 * while "disk:3=0.5;disk:3=1@2s" perturbs disk 3 for two seconds. It
 * works per segment of the index line between range boundaries, so large
 * ranges cost nothing extra.
 */
#include "river_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INDEX 1000000   /* the largest index a spec may name */

struct perturb_entry {
  int kind;
  int lo, hi;       /* indices lo..hi, inclusive */
  double factor;
  double start;     /* seconds into the run */
};

struct river_perturb {
  struct perturb_entry *e;   /* in spec order */
  size_t n, cap;
};

/* The clause being parsed, for error messages. */
struct clause {
  const char *spec;
  int number;               /* 1-based */
  const char *text, *end;   /* the clause, trimmed */
  char *why;                /* the message goes here, not to the log
                               (river_perturb_parse_msg), if not NULL */
  size_t whylen;
};

/* Say "perturbation spec ...: clause N (...): PROBLEM" (logged, or into
 * c->why) and return RIVER_EFORMAT. */
static int clause_fail(const struct clause *c, const char *fmt, ...)
    RIVER_PRINTF(2, 3);

static int clause_fail(const struct clause *c, const char *fmt, ...)
{
  char why[512];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  if (c->why != NULL)
    snprintf(c->why, c->whylen, "perturbation spec \"%s\": clause %d "
             "(\"%.*s\"): %s", c->spec, c->number, (int)(c->end - c->text),
             c->text, why);
  else
    river__error("perturbation spec \"%s\": clause %d (\"%.*s\"): %s",
                 c->spec, c->number, (int)(c->end - c->text), c->text, why);
  return RIVER_EFORMAT;
}

static int is_space(char ch)
{
  return isspace((unsigned char)ch) != 0;
}

static int is_digit(char ch)
{
  return ch >= '0' && ch <= '9';
}

/* Move *b forward and *e back over white space. */
static void trim(const char **b, const char **e)
{
  while (*b < *e && is_space(**b))
    (*b)++;
  while (*e > *b && is_space((*e)[-1]))
    (*e)--;
}

/* Skip white space from p, not past e. */
static const char *skip_space(const char *p, const char *e)
{
  while (p < e && is_space(*p))
    p++;
  return p;
}

/* End of the token at p: the first white space, '@' or e. */
static const char *token_end(const char *p, const char *e)
{
  while (p < e && !is_space(*p) && *p != '@')
    p++;
  return p;
}

/* Append an entry for lo..hi of kind (factor and start filled in later). */
static int add_entry(river_perturb *p, int kind, int lo, int hi)
{
  if (p->n == p->cap) {
    size_t cap = p->cap ? 2 * p->cap : 8;
    struct perturb_entry *e = realloc(p->e, cap * sizeof *e);

    if (e == NULL)
      return RIVER_ENOMEM;
    p->e = e;
    p->cap = cap;
  }
  p->e[p->n].kind = kind;
  p->e[p->n].lo = lo;
  p->e[p->n].hi = hi;
  p->e[p->n].factor = 1.0;
  p->e[p->n].start = 0.0;
  p->n++;
  return RIVER_SUCCESS;
}

/* Read decimal digits at *q (before e) into *v; 0 if there are none.
 * Values over MAX_INDEX are logged as errors. */
static int parse_index(const struct clause *c, const char **q,
                       const char *e, int *v, int *rc)
{
  const char *b = *q;
  long x = 0;

  while (*q < e && is_digit(**q)) {
    if (x <= MAX_INDEX)
      x = 10 * x + (**q - '0');
    (*q)++;
  }
  if (*q == b)
    return 0;
  if (x > MAX_INDEX) {
    *rc = clause_fail(c, "index %.*s is larger than %d", (int)(*q - b), b,
                      MAX_INDEX);
    return 0;
  }
  *v = (int)x;
  return 1;
}

/* Parse one item of an index list, "N" or "N-M" (trimmed, non-empty), and
 * add its entry. */
static int parse_item(river_perturb *p, const struct clause *c,
                      int kind, const char *b, const char *e)
{
  const char *q = b;
  int lo, hi, rc = RIVER_SUCCESS;

  if (!parse_index(c, &q, e, &lo, &rc))
    goto bad;
  hi = lo;
  q = skip_space(q, e);
  if (q < e && *q == '-') {
    q = skip_space(q + 1, e);
    if (!parse_index(c, &q, e, &hi, &rc))
      goto bad;
  }
  if (q != e)
    goto bad;
  if (lo > hi)
    return clause_fail(c, "bad range %d-%d (the start is after the end)",
                       lo, hi);
  return add_entry(p, kind, lo, hi);
bad:
  if (rc != RIVER_SUCCESS)
    return rc;
  return clause_fail(c, "bad index \"%.*s\" (expected N or N-M, "
                     "N and M from 0 to %d)", (int)(e - b), b,
                     MAX_INDEX);
}

/* Parse the index list b..e (a comma-separated list of items). */
static int parse_indices(river_perturb *p, const struct clause *c,
                         int kind, const char *b, const char *e)
{
  const char *lb = b, *le = e;

  trim(&lb, &le);
  if (lb == le)
    return clause_fail(c, "empty index list");
  while (b <= e) {
    const char *comma = memchr(b, ',', (size_t)(e - b));
    const char *ib = b, *ie = comma ? comma : e;
    int rc;

    trim(&ib, &ie);
    if (ib == ie)
      return clause_fail(c, "empty item in the index list \"%.*s\"",
                         (int)(le - lb), lb);
    rc = parse_item(p, c, kind, ib, ie);
    if (rc != RIVER_SUCCESS)
      return rc;
    if (comma == NULL)
      break;
    b = comma + 1;
  }
  return RIVER_SUCCESS;
}

/* Parse the number at q (digits or '.' first: no sign, inf or nan) into
 * *v; returns the end of the number, or q if there is none. */
static const char *parse_number(const char *q, const char *e, double *v)
{
  char *end;

  if (q == e || !(is_digit(*q) || *q == '.'))
    return q;
  *v = strtod(q, &end);
  return end > e ? q : end;
}

/* Parse "FACTOR[@TIME]" in b..e into *factor and *start. */
static int parse_factor_time(const struct clause *c, const char *b,
                             const char *e, double *factor, double *start)
{
  const char *q = skip_space(b, e), *n, *u;
  double v = 0;

  if (q == e || *q == '@')
    return clause_fail(c, "missing factor after '='");
  n = parse_number(q, e, &v);
  if (n == q || (n < e && !is_space(*n) && *n != '@')
      || !river__positive_finite(v))
    return clause_fail(c, "factor \"%.*s\" is not a positive finite "
                       "number", (int)(token_end(q, e) - q), q);
  if (v < RIVER_PERTURB_FACTOR_MIN || v > RIVER_PERTURB_FACTOR_MAX)
    return clause_fail(c, "factor \"%.*s\" is outside %g..%g",
                       (int)(token_end(q, e) - q), q,
                       RIVER_PERTURB_FACTOR_MIN, RIVER_PERTURB_FACTOR_MAX);
  *factor = v;
  *start = 0;
  q = skip_space(n, e);
  if (q == e)
    return RIVER_SUCCESS;
  if (*q != '@')
    return clause_fail(c, "trailing junk \"%.*s\" after the factor",
                       (int)(e - q), q);

  q = skip_space(q + 1, e);
  n = parse_number(q, e, &v);
  if (n == q || !isfinite(v) || v < 0)
    return clause_fail(c, "bad time \"%.*s\" (expected seconds >= 0: "
                       "2s, 2 or 500ms)",
                       (int)(token_end(q, e) - q), q);
  u = skip_space(n, e);
  for (n = u; n < e && isalpha((unsigned char)*n); n++)
    ;
  if ((n == u + 1 && u[0] == 's') || n == u)
    *start = v;
  else if (n == u + 2 && u[0] == 'm' && u[1] == 's')
    *start = v / 1000;
  else
    return clause_fail(c, "bad time unit \"%.*s\" (use s or ms)",
                       (int)(token_end(u, e) - u), u);
  q = skip_space(n, e);
  if (q != e)
    return clause_fail(c, "trailing junk \"%.*s\" after the time",
                       (int)(e - q), q);
  return RIVER_SUCCESS;
}

/* Parse the clause b..e (between ';'s) into entries of p. */
static int parse_clause(river_perturb *p, struct clause *c,
                        const char *b, const char *e)
{
  const char *colon, *eq, *kb, *ke;
  size_t first = p->n, i;
  double factor = 1.0, start = 0.0;
  int kind, rc;

  trim(&b, &e);
  c->text = b;
  c->end = e;
  if (b == e)
    return clause_fail(c, "empty clause");
  colon = memchr(b, ':', (size_t)(e - b));
  if (colon == NULL)
    return clause_fail(c, "missing ':' after the kind (expected "
                       "KIND:INDICES=FACTOR[@TIME])");
  kb = b;
  ke = colon;
  trim(&kb, &ke);
  if (ke - kb == 4 && memcmp(kb, "disk", 4) == 0)
    kind = RIVER_PERTURB_DISK;
  else if (ke - kb == 3 && memcmp(kb, "cpu", 3) == 0)
    kind = RIVER_PERTURB_CPU;
  else
    return clause_fail(c, "unknown kind \"%.*s\" (use disk or cpu)",
                       (int)(ke - kb), kb);
  eq = memchr(colon + 1, '=', (size_t)(e - colon - 1));
  if (eq == NULL)
    return clause_fail(c, "missing '=' between the indices and the factor");
  rc = parse_indices(p, c, kind, colon + 1, eq);
  if (rc != RIVER_SUCCESS)
    return rc;
  rc = parse_factor_time(c, eq + 1, e, &factor, &start);
  if (rc != RIVER_SUCCESS)
    return rc;
  for (i = first; i < p->n; i++) {
    p->e[i].factor = factor;
    p->e[i].start = start;
  }
  return RIVER_SUCCESS;
}

static int parse_spec(const char *spec, river_perturb **out, char *why,
                      size_t whylen)
{
  struct clause c = {spec, 0, NULL, NULL, why, whylen};
  const char *b = spec, *e;
  river_perturb *p;
  int rc = RIVER_SUCCESS;

  p = calloc(1, sizeof *p);
  if (p == NULL)
    return RIVER_ENOMEM;
  e = spec + strlen(spec);
  if (skip_space(b, e) != e) {
    for (;;) {
      const char *semi = strchr(b, ';');

      c.number++;
      rc = parse_clause(p, &c, b, semi ? semi : e);
      if (rc != RIVER_SUCCESS || semi == NULL)
        break;
      b = semi + 1;
    }
  }
  if (rc != RIVER_SUCCESS) {
    river_perturb_destroy(p);
    return rc;
  }
  *out = p;
  return RIVER_SUCCESS;
}

int river_perturb_parse(const char *spec, river_perturb **out)
{
  if (spec == NULL || out == NULL)
    return RIVER_EINVAL;
  return parse_spec(spec, out, NULL, 0);
}

int river_perturb_parse_msg(const char *spec, river_perturb **out,
                            char *why, size_t whylen)
{
  if (spec == NULL || out == NULL || why == NULL || whylen == 0)
    return RIVER_EINVAL;
  return parse_spec(spec, out, why, whylen);
}

void river_perturb_destroy(river_perturb *p)
{
  if (p == NULL)
    return;
  free(p->e);
  free(p);
}

static int kind_ok(int kind)
{
  return kind == RIVER_PERTURB_DISK || kind == RIVER_PERTURB_CPU;
}

int river_perturb_factor(const river_perturb *p, int kind, int index,
                         double t, double *factor)
{
  size_t i;

  if (p == NULL || factor == NULL || !kind_ok(kind)
      || index < 0 || isnan(t))
    return RIVER_EINVAL;
  for (i = p->n; i-- > 0;) {
    const struct perturb_entry *x = &p->e[i];

    if (x->kind == kind && x->lo <= index && index <= x->hi && x->start <= t) {
      *factor = x->factor;
      return RIVER_SUCCESS;
    }
  }
  *factor = 1.0;
  return RIVER_SUCCESS;
}

static int int_cmp(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;

  return (x > y) - (x < y);
}

/* 1 if index x's effective factor differs from 1 at some time: some
 * entry covering x with factor != 1 has no later covering entry that
 * starts no later than it. */
static int ever_perturbed(const river_perturb *p, int kind, int x)
{
  double later_start = INFINITY;
  size_t i;

  for (i = p->n; i-- > 0;) {
    const struct perturb_entry *y = &p->e[i];

    if (y->kind != kind || x < y->lo || x > y->hi)
      continue;
    if (y->start < later_start) {
      if (y->factor != 1.0)
        return 1;
      later_start = y->start;
    }
  }
  return 0;
}

int river_perturb_count(const river_perturb *p, int kind, int *k)
{
  int *cut, ncut = 0, j, count = 0;
  size_t i;

  if (p == NULL || k == NULL || !kind_ok(kind))
    return RIVER_EINVAL;
  /* Every index in [cut[j], cut[j+1]) is covered by the same entries. */
  cut = malloc((2 * p->n + 1) * sizeof *cut);
  if (cut == NULL)
    return RIVER_ENOMEM;
  for (i = 0; i < p->n; i++) {
    if (p->e[i].kind != kind)
      continue;
    cut[ncut++] = p->e[i].lo;
    cut[ncut++] = p->e[i].hi + 1;
  }
  qsort(cut, (size_t)ncut, sizeof *cut, int_cmp);
  for (j = 0; j + 1 < ncut; j++)
    if (cut[j] != cut[j + 1] && ever_perturbed(p, kind, cut[j]))
      count += cut[j + 1] - cut[j];
  free(cut);
  *k = count;
  return RIVER_SUCCESS;
}

int river_perturb_max_index(const river_perturb *p, int kind, int *max)
{
  int m = -1;
  size_t i;

  if (p == NULL || max == NULL || !kind_ok(kind))
    return RIVER_EINVAL;
  for (i = 0; i < p->n; i++)
    if (p->e[i].kind == kind && p->e[i].hi > m)
      m = p->e[i].hi;
  *max = m;
  return RIVER_SUCCESS;
}
