/*
 * test_checksum.c - river_crc32c against published CRC-32C vectors (the
 * check value of "123456789" and the iSCSI vectors of RFC 3720 appendix
 * B.4), chaining in pieces, empty input and bad arguments.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <river.h>
#include <stdlib.h>
#include <string.h>

static uint32_t crc_of(const void *buf, size_t len)
{
  uint32_t crc = 0;

  assert_int_equal(river_crc32c(buf, len, &crc), RIVER_SUCCESS);
  return crc;
}

static void test_crc32c_check_value(void **state)
{
  assert_int_equal(crc_of("123456789", 9), 0xE3069283u);
}

/* RFC 3720, B.4: 32 bytes each. */
static void test_crc32c_rfc3720_vectors(void **state)
{
  unsigned char buf[32];
  int i;

  memset(buf, 0x00, sizeof buf);
  assert_int_equal(crc_of(buf, sizeof buf), 0x8A9136AAu);
  memset(buf, 0xFF, sizeof buf);
  assert_int_equal(crc_of(buf, sizeof buf), 0x62A8AB43u);
  for (i = 0; i < 32; i++)
    buf[i] = (unsigned char)i;
  assert_int_equal(crc_of(buf, sizeof buf), 0x46DD794Eu);
  for (i = 0; i < 32; i++)
    buf[i] = (unsigned char)(31 - i);
  assert_int_equal(crc_of(buf, sizeof buf), 0x113FDB5Cu);
}

/* Any split of the data, fed piece by piece, gives the one-shot CRC. */
static void test_crc32c_chained_equals_one_shot(void **state)
{
  enum { N = 10000 };
  unsigned char *buf = malloc(N);
  uint32_t whole, crc;
  size_t cut, pos, step;

  assert_non_null(buf);
  for (pos = 0; pos < N; pos++)
    buf[pos] = (unsigned char)(pos * 2654435761u >> 13);
  whole = crc_of(buf, N);

  for (cut = 0; cut <= N; cut += 997) {
    crc = 0;
    assert_int_equal(river_crc32c(buf, cut, &crc), RIVER_SUCCESS);
    assert_int_equal(river_crc32c(buf + cut, N - cut, &crc), RIVER_SUCCESS);
    assert_int_equal(crc, whole);
  }
  for (step = 1; step <= 4099; step += 1021) {
    crc = 0;
    for (pos = 0; pos < N; pos += step)
      assert_int_equal(river_crc32c(buf + pos, pos + step > N ? N - pos : step,
                                    &crc), RIVER_SUCCESS);
    assert_int_equal(crc, whole);
  }
  crc = 0;
  assert_int_equal(river_crc32c("1234", 4, &crc), RIVER_SUCCESS);
  assert_int_equal(river_crc32c("56789", 5, &crc), RIVER_SUCCESS);
  assert_int_equal(crc, 0xE3069283u);
  free(buf);
}

/* No bytes leave the CRC as it was, with or without a buffer. */
static void test_crc32c_empty(void **state)
{
  uint32_t crc = 0;

  assert_int_equal(river_crc32c(NULL, 0, &crc), RIVER_SUCCESS);
  assert_int_equal(crc, 0);
  assert_int_equal(river_crc32c("x", 0, &crc), RIVER_SUCCESS);
  assert_int_equal(crc, 0);
  crc = 0xE3069283u;
  assert_int_equal(river_crc32c(NULL, 0, &crc), RIVER_SUCCESS);
  assert_int_equal(crc, 0xE3069283u);
}

/* splitmix64 from state 0: its published first outputs. */
static void test_hash64_splitmix(void **state)
{
  uint64_t x = 0;

  (void)state;
  assert_int_equal(river_hash64(0), 0xe220a8397b1dcdafULL);
  x += 0x9e3779b97f4a7c15ULL;
  assert_int_equal(river_hash64(x), 0x6e789e6aa1b965f4ULL);
  assert_true(river_hash64(1) != river_hash64(2));
}

static void test_crc32c_bad_args(void **state)
{
  uint32_t crc = 0x1234;

  assert_int_equal(river_crc32c("abc", 3, NULL), RIVER_EINVAL);
  assert_int_equal(river_crc32c(NULL, 1, &crc), RIVER_EINVAL);
  assert_int_equal(crc, 0x1234);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_crc32c_check_value),
    cmocka_unit_test(test_crc32c_rfc3720_vectors),
    cmocka_unit_test(test_crc32c_chained_equals_one_shot),
    cmocka_unit_test(test_crc32c_empty),
    cmocka_unit_test(test_crc32c_bad_args),
    cmocka_unit_test(test_hash64_splitmix),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
