/*
 * pcoll_seal.c - the seal of a metadata file (format 3): a 512-byte
 * header in the HDF5 file's user block that lets a reader check the
 * whole file image before HDF5 parses a byte of it. HDF5 crashes on
 * some corrupt files (a flipped byte in an object header), so nothing
 * unchecked may reach it; tools (h5dump, h5py) skip a user block, so
 * the file stays plain HDF5 to them. No HDF5 here: the checks are
 * River's own, on bytes in memory (the reader has read the file once).
 *
 * The header (uN: N-bit little-endian), then zeros to byte 512:
 *
 *   0  16 bytes  magic "river metadata\n\0"
 *   16 u32       metadata format (RIVER_PCOLL_FORMAT, 3)
 *   20 u32       header size (512: where HDF5's superblock starts)
 *   24 u64       the whole file's size in bytes
 *   32 u32       CRC32C of the whole file but these 4 bytes (bytes 0..31,
 *                then 36 to the end)
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

  river_crc32c(img, 32, &crc);
  river_crc32c(img + 36, len - 36, &crc);
  return crc;
}

void river__pcoll_seal(unsigned char *img, size_t len)
{
  memset(img, 0, RIVER_PCOLL_SEAL_SIZE);
  memcpy(img, magic, sizeof magic);
  put_le(img + 16, RIVER_PCOLL_FORMAT, 4);
  put_le(img + 20, RIVER_PCOLL_SEAL_SIZE, 4);
  put_le(img + 24, len, 8);
  put_le(img + 32, seal_crc(img, len), 4);
}

int river__pcoll_seal_check(const unsigned char *img, size_t len, char *why,
                            size_t n)
{
  uint64_t fmt, hdr, size;

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
  hdr = get_le(img + 20, 4);
  size = get_le(img + 24, 8);
  if (fmt != RIVER_PCOLL_FORMAT && hdr == RIVER_PCOLL_SEAL_SIZE
      && size == len && get_le(img + 32, 4) == seal_crc(img, len)) {
    snprintf(why, n, "is in metadata format %llu; this River reads format "
             "%d only", (unsigned long long)fmt, RIVER_PCOLL_FORMAT);
    return RIVER_EFORMAT;
  }
  if (fmt != RIVER_PCOLL_FORMAT || hdr != RIVER_PCOLL_SEAL_SIZE) {
    snprintf(why, n, "fails its checksum (altered or torn write): its "
             "River header is damaged");
    return RIVER_ECORRUPT;
  }
  if (size != len) {
    snprintf(why, n, "is %zu bytes, its header says %llu (truncated or "
             "torn write)", len, (unsigned long long)size);
    return RIVER_ECORRUPT;
  }
  if (get_le(img + 32, 4) != seal_crc(img, len)) {
    snprintf(why, n, "fails its checksum (altered or torn write)");
    return RIVER_ECORRUPT;
  }
  return RIVER_SUCCESS;
}
