/*
 * fuzz_meta.c - libFuzzer harness for the metadata loader
 * (src/pcoll_meta.c and its seal, src/pcoll_seal.c): every input is a
 * metadata file image, given to river__pcoll_meta_parse, the entry every
 * reader goes through once it has read the file (river_pcoll_open, ls,
 * info, fsck, rm, gc, a commit's look at the metadata it replaces). Any
 * crash, leak or sanitizer report is a bug; errors are the expected
 * outcome for most inputs, so River's log is silenced.
 *
 * libFuzzer learns the CRC a seal compares against and forges it, so
 * the default mode reaches River's record behind the seal too. With
 * RIVER_FUZZ_SEAL=1 in the environment every input of at least 512
 * bytes is sealed first (its header's CRC, size and format rewritten to
 * pass: what a hostile writer, not a damaged disk, hands a reader),
 * spending the whole run behind the seal. CI runs the default mode. Built with clang -fsanitize=fuzzer,address,undefined by
 * `make fuzz` (tests/fuzz/local.mk); seed corpus: tests/fuzz/corpus_meta
 * (metadata files written by `river gen`).
 */
#include "pcoll_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int seal;

static void quiet(int level, int rank, const char *msg, void *ctx)
{
  (void)level;
  (void)rank;
  (void)msg;
  (void)ctx;
}

static size_t le64(const unsigned char *p)
{
  uint64_t v = 0;
  int i;

  for (i = 7; i >= 0; i--)
    v = (v << 8) | p[i];
  return (size_t)v;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  const char *s = getenv("RIVER_FUZZ_SEAL");

  (void)argc;
  (void)argv;
  seal = s != NULL && strcmp(s, "1") == 0;
  river_log_set_handler(quiet, NULL);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  unsigned char *img = malloc(size > 0 ? size : 1);
  river_pcoll *pc = calloc(1, sizeof *pc);

  if (img != NULL && pc != NULL) {
    memcpy(img, data, size);
    if (seal && size >= RIVER_PCOLL_SEAL_SIZE)
      river__pcoll_seal(img, size, le64(img + 32), le64(img + 40));
    pc->comm = MPI_COMM_NULL;
    pc->lock_fd = -1;
    strcpy(pc->info.name, "fuzz");
    strcpy(pc->root, "/nonexistent");
    river__pcoll_meta_parse(pc, "/nonexistent/fuzz.river.h5", img, size, 0);
  }
  river__pcoll_free(pc);
  free(img);
  return 0;
}
