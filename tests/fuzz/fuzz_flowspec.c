/*
 * fuzz_flowspec.c - libFuzzer harness for the flow spec loader
 * (src/flowspec.c, and the graph checks it drives in src/flow.c and
 * src/flow_check.c): every input is loaded as a plan for 4 ranks, with
 * the test modules (tests/flow_modules.c) and the built-in ones
 * registered, then checked and, if it passes, drawn as a Graphviz
 * graph. Any crash, leak or sanitizer report is a bug; errors are the
 * expected outcome for most inputs, so River's log is silenced.
 *
 * The input reaches the loader as a file (the loader's only entry), an
 * anonymous memory file named through /proc/self/fd. Built with clang
 * -fsanitize=fuzzer,address,undefined by `make fuzz` (tests/fuzz/local.mk);
 * seed corpus: tests/fuzz/corpus and the specs under tests/flows.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1  /* memfd_create */
#endif
#include <river.h>

#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../flow_modules.h"

static void quiet(int level, int rank, const char *msg, void *ctx)
{
  (void)level;
  (void)rank;
  (void)msg;
  (void)ctx;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  (void)argv;
  river_log_set_handler(quiet, NULL);
  return flowtest_register() == RIVER_SUCCESS ? 0 : 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static const char *const params[] = {"records=10", "n=2"};
  char path[64], dot[4096];
  river_flow *f = NULL;
  size_t len = sizeof dot;
  int fd = memfd_create("spec", 0);

  if (fd < 0)
    return 0;
  if (write(fd, data, size) == (ssize_t)size) {
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    if (river_flow_load_plan(path, 4, params, 0, &f) == RIVER_SUCCESS
        && river_flow_check(f) == RIVER_SUCCESS)
      river_flow_dot(f, dot, &len);
    river_flow_destroy(f);
  }
  close(fd);
  return 0;
}
