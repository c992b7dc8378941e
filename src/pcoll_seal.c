/*
 * pcoll_seal.c - the River header of a metadata file (format 3): the
 * start of the HDF5 file's user block, which HDF5 and its tools (h5dump,
 * h5py) skip. It seals the whole file with a CRC32C and says where
 * River's own record of the metadata lies (in the user block, after the
 * header): readers check the seal and parse that record, never the
 * HDF5 part, which is there for tools. HDF5 crashes on some damaged
 * files (a flipped bit in a datatype message: SIGSEGV in H5Dread), and
 * a checksum stops only damage, not a file made to pass it, so no
 * reader gives HDF5 a byte. No HDF5 here; nothing is read past the
 * image's end.
 *
 * The header (uN: N-bit little-endian):
 *
 *   0  16 bytes  magic "river metadata\n\0"
 *   16 u32       metadata format (RIVER_PCOLL_FORMAT, 3)
 *   20 u32       CRC32C of the whole file but these 4 bytes (bytes
 *                0..19, then 24 to the end)
 *   24 u64       the whole file's size in bytes
 *   32 u64       the user block's size: where HDF5's superblock starts
 *                (a power of two, at least 512)
 *   40 u64       the length of River's record, which starts at byte 64
 *   48 16 bytes  zero
 *   64           the record (pcoll_meta.c says what it holds), then
 *                zeros to the end of the user block
 *
 * A file that starts with HDF5's own signature is an older format
 * (1 or 2, no seal): refused as such, never parsed.
 */
#include "pcoll_internal.h"

#include <stdio.h>
#include <string.h>

static const char magic[16] = "river metadata\n";  /* NUL-padded */
static const unsigned char h5_sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n',
                                        0x1a, '\n'};

static void put_le(unsigned char *p, uint64_t v, int nbytes)
{
  int i;

  for (i = 0; i < nbytes; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int nbytes)
{
  uint64_t v = 0;
  int i;

  for (i = nbytes - 1; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

/* The CRC32C of img (len bytes, len >= the header) but its CRC field. */
static uint32_t seal_crc(const unsigned char *img, size_t len)
{
  uint32_t crc = 0;

  river_crc32c(img, 20, &crc);
  river_crc32c(img + 24, len - 24, &crc);
  return crc;
}

size_t river__pcoll_seal_ub(size_t reclen)
{
  size_t ub = RIVER_PCOLL_SEAL_SIZE;

  while (ub < RIVER_PCOLL_SEAL_HDR + reclen && ub <= RIVER_PCOLL_META_MAX)
    ub *= 2;
  return ub;
}

void river__pcoll_seal(unsigned char *img, size_t len, size_t ub,
                       size_t reclen)
{
  memset(img, 0, RIVER_PCOLL_SEAL_HDR);
  memcpy(img, magic, sizeof magic);
  put_le(img + 16, RIVER_PCOLL_FORMAT, 4);
  put_le(img + 24, len, 8);
  put_le(img + 32, ub, 8);
  put_le(img + 40, reclen, 8);
  put_le(img + 20, seal_crc(img, len), 4);
}

int river__pcoll_seal_check(const unsigned char *img, size_t len,
                            size_t *reclen, char *why, size_t n)
{
  uint64_t fmt, size, ub, rl;

  if (len >= sizeof h5_sig && memcmp(img, h5_sig, sizeof h5_sig) == 0) {
    snprintf(why, n, "is in metadata format 2 or older (no whole-file "
             "checksum); this River reads format %d only",
             RIVER_PCOLL_FORMAT);
    return RIVER_EFORMAT;
  }
  if (len < RIVER_PCOLL_SEAL_SIZE || memcmp(img, magic, sizeof magic) != 0) {
    snprintf(why, n, "is not River metadata (%zu bytes, no River header): "
             "corrupt or truncated", len);
    return RIVER_ECORRUPT;
  }
  fmt = get_le(img + 16, 4);
  size = get_le(img + 24, 8);
  ub = get_le(img + 32, 8);
  rl = get_le(img + 40, 8);
  if (size == len && get_le(img + 20, 4) == seal_crc(img, len)) {
    if (fmt != RIVER_PCOLL_FORMAT) {
      snprintf(why, n, "is in metadata format %llu; this River reads "
               "format %d only", (unsigned long long)fmt,
               RIVER_PCOLL_FORMAT);
      return RIVER_EFORMAT;
    }
    if (ub < RIVER_PCOLL_SEAL_SIZE || (ub & (ub - 1)) != 0 || ub >= len
        || rl > ub - RIVER_PCOLL_SEAL_HDR) {
      snprintf(why, n, "has a River header that contradicts itself (user "
               "block %llu bytes, record %llu bytes, file %zu bytes)",
               (unsigned long long)ub, (unsigned long long)rl, len);
      return RIVER_ECORRUPT;
    }
    *reclen = (size_t)rl;
    return RIVER_SUCCESS;
  }
  if (fmt == RIVER_PCOLL_FORMAT && size != len) {
    snprintf(why, n, "is %zu bytes, its header says %llu (truncated or "
             "torn write)", len, (unsigned long long)size);
    return RIVER_ECORRUPT;
  }
  snprintf(why, n, "fails its checksum (altered or torn write)");
  return RIVER_ECORRUPT;
}
