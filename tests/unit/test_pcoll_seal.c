/*
 * test_pcoll_seal - the River header that seals a metadata file
 * (src/pcoll_seal.c, compiled in: it is internal), checked on images in
 * memory of exactly their size (so ASan sees any read past the end): a
 * sealed image passes and gives its record's length; every single-bit
 * flip anywhere in it, every truncation by up to a user block and an
 * extension by one byte fail as corrupt; a file starting with HDF5's
 * signature is an older format; an image sealed as another format
 * version is refused as such; a header that contradicts itself (user
 * block not a power of two, record past the user block) is corrupt even
 * under a valid checksum; the user block grows in powers of two with the
 * record.
 */
#include "pcoll_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define LEN 1500
#define UB 1024
#define REC 300

/* A sealed image of LEN bytes: a REC-byte record, HDF5-ish bytes after
 * the UB-byte user block (the caller frees it). */
static unsigned char *sealed(void)
{
  unsigned char *img = malloc(LEN);
  size_t i;

  assert_non_null(img);
  memset(img, 0, LEN);
  for (i = 0; i < REC; i++)
    img[RIVER_PCOLL_SEAL_HDR + i] = (unsigned char)(i * 7 + 1);
  for (i = UB; i < LEN; i++)
    img[i] = (unsigned char)(i * 13);
  river__pcoll_seal(img, LEN, UB, REC);
  return img;
}

/* The check of the first len bytes of img, copied to a buffer of
 * exactly len bytes. */
static int check(const unsigned char *img, size_t len, size_t *reclen,
                 char *why)
{
  unsigned char *copy = malloc(len ? len : 1);
  int rc;

  assert_non_null(copy);
  memcpy(copy, img, len);
  rc = river__pcoll_seal_check(copy, len, reclen, why, 256);
  free(copy);
  return rc;
}

static void test_pcoll_seal_intact(void **state)
{
  unsigned char *img = sealed();
  size_t reclen = 0;
  char why[256];

  (void)state;
  assert_int_equal(check(img, LEN, &reclen, why), RIVER_SUCCESS);
  assert_int_equal(reclen, REC);
  assert_memory_equal(img, "river metadata\n", 16);
  free(img);
}

static void test_pcoll_seal_bitflips(void **state)
{
  unsigned char *img = sealed();
  size_t i, reclen;
  char why[256];
  int b, rc;

  (void)state;
  for (i = 0; i < LEN; i++) {
    for (b = 0; b < 8; b++) {
      img[i] ^= (unsigned char)(1u << b);
      rc = check(img, LEN, &reclen, why);
      img[i] ^= (unsigned char)(1u << b);
      if (rc != RIVER_ECORRUPT)
        fail_msg("bit %d of byte %zu flipped: %d (%s)", b, i, rc, why);
    }
  }
  free(img);
}

static void test_pcoll_seal_sizes(void **state)
{
  unsigned char *img = sealed(), *big;
  size_t len, reclen;
  char why[256];

  (void)state;
  for (len = 0; len < LEN; len++) {
    assert_int_equal(check(img, len, &reclen, why), RIVER_ECORRUPT);
    if (len >= RIVER_PCOLL_SEAL_SIZE)
      assert_non_null(strstr(why, "truncated or torn write"));
  }
  big = calloc(1, LEN + 1);
  assert_non_null(big);
  memcpy(big, img, LEN);
  assert_int_equal(check(big, LEN + 1, &reclen, why), RIVER_ECORRUPT);
  free(big);
  free(img);
}

static void test_pcoll_seal_old_format(void **state)
{
  static const unsigned char h5[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a,
                                      '\n'};
  unsigned char *img = sealed();
  size_t reclen;
  char why[256];

  (void)state;
  memcpy(img, h5, sizeof h5);
  assert_int_equal(check(img, LEN, &reclen, why), RIVER_EFORMAT);
  assert_non_null(strstr(why, "format 2 or older"));
  assert_int_equal(check(img, 8, &reclen, why), RIVER_EFORMAT);
  free(img);
}

/* Sealed, then the format changed and the CRC made to match again (by
 * sealing and copying the checksum field of a file built to match). */
static void test_pcoll_seal_other_format(void **state)
{
  unsigned char *img = sealed();
  uint32_t crc = 0;
  size_t reclen;
  char why[256];

  (void)state;
  img[16] = 4;
  river_crc32c(img, 20, &crc);
  river_crc32c(img + 24, LEN - 24, &crc);
  img[20] = (unsigned char)crc;
  img[21] = (unsigned char)(crc >> 8);
  img[22] = (unsigned char)(crc >> 16);
  img[23] = (unsigned char)(crc >> 24);
  assert_int_equal(check(img, LEN, &reclen, why), RIVER_EFORMAT);
  assert_non_null(strstr(why, "metadata format 4"));
  free(img);
}

static void test_pcoll_seal_contradiction(void **state)
{
  unsigned char *img = sealed();
  size_t reclen;
  char why[256];

  (void)state;
  river__pcoll_seal(img, LEN, 768, REC);         /* not a power of two */
  assert_int_equal(check(img, LEN, &reclen, why), RIVER_ECORRUPT);
  assert_non_null(strstr(why, "contradicts itself"));
  river__pcoll_seal(img, LEN, 512, 512 - 63);    /* record past it */
  assert_int_equal(check(img, LEN, &reclen, why), RIVER_ECORRUPT);
  river__pcoll_seal(img, LEN, 2048, REC);        /* past the file's end */
  assert_int_equal(check(img, LEN, &reclen, why), RIVER_ECORRUPT);
  river__pcoll_seal(img, LEN, 512, 512 - 64);    /* exactly fits */
  assert_int_equal(check(img, LEN, &reclen, why), RIVER_SUCCESS);
  free(img);
}

static void test_pcoll_seal_ub(void **state)
{
  (void)state;
  assert_int_equal(river__pcoll_seal_ub(0), 512);
  assert_int_equal(river__pcoll_seal_ub(448), 512);
  assert_int_equal(river__pcoll_seal_ub(449), 1024);
  assert_int_equal(river__pcoll_seal_ub(100000), 131072);
  assert_true(river__pcoll_seal_ub(RIVER_PCOLL_META_MAX)
              > RIVER_PCOLL_META_MAX);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_pcoll_seal_intact),
    cmocka_unit_test(test_pcoll_seal_bitflips),
    cmocka_unit_test(test_pcoll_seal_sizes),
    cmocka_unit_test(test_pcoll_seal_old_format),
    cmocka_unit_test(test_pcoll_seal_other_format),
    cmocka_unit_test(test_pcoll_seal_contradiction),
    cmocka_unit_test(test_pcoll_seal_ub),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
