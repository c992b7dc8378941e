#!/bin/bash
# test_fortran_ref - doc/guide.md's Fortran reference against module
# river (tests/doc/check_fortran_ref.py): every public type, constant
# and procedure of fortran/river.F90 and fortran/*.inc is there, each
# procedure with its arguments as declared (order, optional, intent,
# type), and the guide names no river_* procedure or RIVER_* constant
# that module river lacks. The constants come from the build's
# fortran/river_constants.inc; without it (--disable-fortran) they are
# not checked, and the checker says so.
set -u
src=${top_srcdir:-.}
build=${top_builddir:-.}
if python3 "$src/tests/doc/check_fortran_ref.py" "$src/doc/guide.md" \
     "$src/fortran" "$build/fortran/river_constants.inc"; then
  echo "PASS: test_fortran_ref"; exit 0
fi
echo "FAIL: test_fortran_ref (doc/guide.md's Fortran reference and" \
     "module river differ)"
exit 1
