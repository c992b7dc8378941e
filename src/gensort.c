/*
 * gensort.c - sort-benchmark records (layout in river/gensort.h).
 *
 * Random bytes come from splitmix64 (river__mix64) applied to (seed, row,
 * word): a counter-based generator, so record r is computable without
 * generating records 0..r-1, whatever the number of ranks.
 */
#include "river_internal.h"

#include <string.h>

static const char hex_digits[] = "0123456789ABCDEF";

static uint64_t splitmix64(uint64_t x)
{
  return river__mix64(x + RIVER_MIX64_STEP);
}

/* The w-th 64-bit random word of row under seed. */
static uint64_t row_word(uint64_t seed, uint64_t row, unsigned w)
{
  return splitmix64(splitmix64(seed ^ (row * 4 + w)) + row);
}

static void make_key(uint64_t seed, uint64_t row, unsigned flags,
                              unsigned char *key)
{
  uint64_t a = row_word(seed, row, 0), b = row_word(seed, row, 1);
  unsigned i;

  for (i = 0; i < 8; i++)
    key[i] = (unsigned char)(a >> (8 * i));
  key[8] = (unsigned char)b;
  key[9] = (unsigned char)(b >> 8);
  if (flags & RIVER_GENSORT_SKEW) {
    double u = (double)(b >> 11) * (1.0 / 9007199254740992.0); /* [0,1) */
    key[0] = (unsigned char)(256.0 * u * u * u * u);
  }
  if (flags & RIVER_GENSORT_ASCII) {
    for (i = 0; i < RIVER_GENSORT_KEY_SIZE; i++)
      key[i] = (unsigned char)(' ' + key[i] % 95);
  }
}

/* Row id as 32 uppercase hex digits (a 128-bit number; high half 0). */
static void make_rowid(uint64_t row, unsigned char *out)
{
  int i;

  memset(out, '0', 16);
  for (i = 0; i < 16; i++)
    out[31 - i] = (unsigned char)hex_digits[(row >> (4 * i)) & 0xf];
}

/* groups hex digits taken from row, each repeated 4 times. */
static void make_filler(uint64_t row, int groups, unsigned char *out)
{
  int g;

  for (g = 0; g < groups; g++)
    memset(out + 4 * g, hex_digits[(row + (uint64_t)g) & 0xf], 4);
}

static void make_record(uint64_t seed, uint64_t row, unsigned flags,
                                 unsigned char *r)
{
  make_key(seed, row, flags, r);
  if (flags & RIVER_GENSORT_ASCII) {
    r[10] = ' ';
    r[11] = ' ';
    make_rowid(row, r + 12);
    r[44] = ' ';
    r[45] = ' ';
    make_filler(row, 13, r + 46);
    r[98] = '\r';
    r[99] = '\n';
  } else {
    r[10] = 0x00;
    r[11] = 0x11;
    make_rowid(row, r + 12);
    r[44] = 0x88; r[45] = 0x99; r[46] = 0xAA; r[47] = 0xBB;
    make_filler(row, 12, r + 48);
    r[96] = 0xCC; r[97] = 0xDD; r[98] = 0xEE; r[99] = 0xFF;
  }
}

int river_gensort_fill(uint64_t first, size_t count, unsigned flags,
                       uint64_t seed, void *buf)
{
  unsigned char *r = buf;
  size_t i;

  if ((buf == NULL && count > 0)
      || (flags & ~(RIVER_GENSORT_ASCII | RIVER_GENSORT_SKEW)) != 0
      || (count > 0 && first > UINT64_MAX - (count - 1)))
    return RIVER_EINVAL;
  for (i = 0; i < count; i++, r += RIVER_GENSORT_RECORD_SIZE)
    make_record(seed, first + i, flags, r);
  return RIVER_SUCCESS;
}
