/*
 * units.c - sizes and counts in and out (river/units.h).
 *
 * One table drives the parser: each suffix River takes and its
 * multiplier. A number is read digit by digit, refusing overflow as it
 * goes, and its suffix must be one of the table's, whole; the formatter
 * finds the fewest decimal digits to drop that leave three, with
 * integer arithmetic only, so that a size prints the same on every
 * machine.
 */
#include "river_internal.h"

#include <stdio.h>
#include <string.h>

#define KILO UINT64_C(1000)
#define KIBI UINT64_C(1024)

static const struct suffix {
  const char *text;
  uint64_t mult;
} suffixes[] = {
  {"k", KILO},  {"K", KILO},  /* K: the same as k, as people write it */
  {"M", KILO * KILO},  {"G", KILO * KILO * KILO},
  {"T", KILO * KILO * KILO * KILO},
  {"Ki", KIBI}, {"Mi", KIBI * KIBI}, {"Gi", KIBI * KIBI * KIBI},
  {"Ti", KIBI * KIBI * KIBI * KIBI},
};

#define NSUFFIXES (sizeof suffixes / sizeof suffixes[0])

int river_parse_size(const char *text, uint64_t *value)
{
  const char *p = text;
  uint64_t v = 0, mult = 1;
  size_t i;

  if (text == NULL || value == NULL || *p < '0' || *p > '9')
    return RIVER_EINVAL;
  for (; *p >= '0' && *p <= '9'; p++) {
    unsigned d = (unsigned)(*p - '0');
    if (v > (UINT64_MAX - d) / 10)
      return RIVER_EINVAL;
    v = v * 10 + d;
  }
  if (*p != '\0') {
    for (i = 0; i < NSUFFIXES && strcmp(p, suffixes[i].text) != 0; i++)
      ;
    if (i == NSUFFIXES)
      return RIVER_EINVAL;
    mult = suffixes[i].mult;
  }
  if (v > UINT64_MAX / mult)
    return RIVER_EINVAL;
  *value = v * mult;
  return RIVER_SUCCESS;
}

/* bytes / d rounded half up, without overflow (d > 0). */
static uint64_t div_round(uint64_t bytes, uint64_t d)
{
  uint64_t q = bytes / d, r = bytes % d;

  return r >= d - r ? q + 1 : q;
}

int river_format_size(uint64_t bytes, char *buf, size_t len)
{
  static const char *const units[] = {"B", "kB", "MB", "GB", "TB", "PB",
                                      "EB"};
  char text[RIVER_SIZE_TEXT_MAX];
  uint64_t q = bytes, d = 1, pow10 = 1;
  int e = 0, unit, decimals;

  if (buf == NULL)
    return RIVER_EINVAL;
  if (bytes < KILO) {
    snprintf(text, sizeof text, "%u B", (unsigned)bytes);
  } else {
    /* The least e >= 1 with bytes / 10^e rounded under 1000: q then has
     * three digits (bytes / 10^(e-1) rounded to 1000 or more), and the
     * unit is the power of 1000 at or below q x 10^e. */
    do {
      e++;
      d *= 10;
      q = div_round(bytes, d);
    } while (q >= 1000);
    unit = (e + 2) / 3;
    decimals = 3 * unit - e;   /* 0, 1 or 2 */
    while (decimals-- > 0)
      pow10 *= 10;
    if (pow10 == 1)
      snprintf(text, sizeof text, "%u %s", (unsigned)q, units[unit]);
    else
      snprintf(text, sizeof text, "%u.%0*u %s", (unsigned)(q / pow10),
               pow10 == 10 ? 1 : 2, (unsigned)(q % pow10), units[unit]);
  }
  if (strlen(text) >= len)
    return RIVER_ENOBUFS;
  memcpy(buf, text, strlen(text) + 1);
  return RIVER_SUCCESS;
}
