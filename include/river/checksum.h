/*
 * river/checksum.h - CRC32C (Castagnoli), the checksum on every block
 * River stores. Computed by Intel ISA-L's hardware-accelerated
 * crc32_iscsi (SSE4.2/PCLMUL on x86, CRC instructions on ARM).
 *
 * Part of the River API; include <river.h> rather than this file.
 */
#ifndef RIVER_CHECKSUM_H
#define RIVER_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>
#include "river/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Extend the CRC32C in *crc with len bytes at buf. Start from *crc = 0;
 * the result equals the standard CRC-32C of all bytes given so far
 * (e.g. "123456789" gives 0xE3069283), so data may be fed in pieces.
 * buf may be NULL only when len is 0.
 */
RIVER_API int river_crc32c(const void *buf, size_t len, uint32_t *crc);

/*
 * A well-mixed 64-bit value from x: splitmix64's step and output function
 * (x + 0x9e3779b97f4a7c15, then its finalizer). For order-independent
 * digests of records (sum the hashes of their ids or CRCs) and
 * deterministic test data; not a cryptographic hash.
 */
RIVER_API uint64_t river_hash64(uint64_t x);

#ifdef __cplusplus
}
#endif

#endif /* RIVER_CHECKSUM_H */
