/*
 * badparam.h - what the test_badparam* programs share: every public
 * function, given NULL or nonsense arguments, returns RIVER_EINVAL (or its
 * documented answer) and does not crash or touch its outputs. One
 * program per family of headers (test_badparam.c: core, schema,
 * checksum, gensort, wait, throttle; test_badparam_coll.c: collections;
 * test_badparam_dq_gd.c: queues and graduated declustering), one test
 * per header (several for the larger ones); when a function is added to
 * a header, it gets a line in its program.
 */
#ifndef RIVER_TEST_BADPARAM_H
#define RIVER_TEST_BADPARAM_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <river.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A log handler that drops every message. */
void quiet(int level, int rank, const char *msg, void *ctx);

/* Every logged message (collect appends each, with a newline), for the
 * checks on what refusals say. */
extern char msgs[8192];
void collect(int level, int rank, const char *msg, void *ctx);

#endif /* RIVER_TEST_BADPARAM_H */
