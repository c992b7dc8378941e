#!/bin/bash
# unit_tests_disabled - stands in for the CMocka unit tests when River was
# configured with --disable-unit-tests: always skipped, so that make
# check's summary shows them missing (and .ci/run, which fails on any
# skip, refuses such a build).
echo "SKIP: the CMocka unit tests were not built (./configure --disable-unit-tests)"
echo "Install CMocka (libcmocka-dev) and re-run ./configure to run them."
exit 77
