#!/bin/bash
# test_readme - the README's C example (its first ```c block) is
# examples/hello.c word for word, so the program make check compiles and
# runs is the one readers copy.
set -u
src=${top_srcdir:-.}
if diff -u "$src/examples/hello.c" \
     <(awk '/^```c$/ { on = 1; next } on && /^```$/ { exit } on' "$src/README.md"); then
  echo "PASS: test_readme"; exit 0
fi
echo "FAIL: test_readme (README.md's C example differs from examples/hello.c)"; exit 1
