/*
 * checksum.c - CRC32C (Castagnoli) over Intel ISA-L.
 *
 * ISA-L's crc32_iscsi keeps the CRC register un-inverted and takes an int
 * length, so river_crc32c inverts on the way in and out (the standard
 * CRC-32C of data is ~crc32_iscsi(data, len, 0xffffffff)) and feeds
 * inputs larger than INT_MAX in pieces. The state is the caller's
 * uint32_t: there is nothing else.
 */
#include "river_internal.h"

#include <isa-l/crc.h>
#include <limits.h>

/* The largest piece handed to crc32_iscsi at once: a multiple of 4 KiB
 * below INT_MAX, so the pieces of large buffers stay aligned. */
#define RIVER_CRC_CHUNK ((size_t)INT_MAX & ~(size_t)4095)

int river_crc32c(const void *buf, size_t len, uint32_t *crc)
{
  const unsigned char *p = buf;
  unsigned int reg;
  size_t n;

  if (crc == NULL || (buf == NULL && len > 0))
    return RIVER_EINVAL;

  reg = ~*crc;
  while (len > 0) {
    n = len < RIVER_CRC_CHUNK ? len : RIVER_CRC_CHUNK;
    /* crc32_iscsi only reads the buffer; its prototype lacks const. */
    reg = crc32_iscsi((unsigned char *)p, (int)n, reg);
    p += n;
    len -= n;
  }
  *crc = ~reg;
  return RIVER_SUCCESS;
}

uint64_t river_hash64(uint64_t x)
{
  return river__mix64(x + RIVER_MIX64_STEP);
}
