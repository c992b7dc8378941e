#!/bin/bash
# test_layout - the source tree keeps its rules (doc/design.md section 2):
#   1. no include cycle among River's own files (src/, include/, apps/,
#      fortran/, examples/, tests/): every quoted #include is resolved as
#      the compiler would (beside the file, then include/, then src/) and
#      the graph is handed to tsort, which reports any loop;
#   2. only src/pcoll_meta.c speaks HDF5 (includes hdf5.h) among the
#      library's collection files, and the river command and the
#      benchmarks include no private header of the library;
#   3. the library makes no blocking MPI collective that moves data
#      (MPI_Allreduce, MPI_Bcast, MPI_Barrier, ...): each is the
#      nonblocking form waited for with River's backoff (river__allreduce,
#      river__agree, river_wait), which in a flow yields to the rank's
#      other stages. A blocking one hangs a flow whose stages on a rank
#      each make one on their own communicator (gd_find_lost's two
#      MPI_Allreduce hung test_join_mpi about one run in two under load:
#      each rank waited in a different stage's collective).
set -u
top=${top_srcdir:-.}
cd "$top" || exit 1
fail=0

edges=$(
  find src include apps fortran examples tests -name '*.[ch]' | sort |
  while read -r f; do
    dir=$(dirname "$f")
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
    while read -r inc; do
      for cand in "$dir/$inc" "include/$inc" "src/$inc"; do
        if [ -f "$cand" ]; then
          echo "$f $(realpath --relative-to=. "$cand")"
          break
        fi
      done
    done
  done
)
if ! loops=$(printf '%s\n' "$edges" | tsort 2>&1 >/dev/null) || [ -n "$loops" ]; then
  echo "include cycle:"
  printf '%s\n' "$loops"
  fail=1
fi

h5=$(grep -l '#include[[:space:]]*<hdf5.h>' src/*.c | grep -v '^src/core.c$' || true)
if [ "$h5" != "src/pcoll_meta.c" ]; then
  echo "hdf5.h is included by: ${h5:-nothing} (only src/pcoll_meta.c" \
       "should, besides core.c's version report)"
  fail=1
fi

private=$(grep -ln '#include[[:space:]]*"\(river_internal\|[a-z_]*_internal\|rma\)\.h"' \
            apps/*/*.c apps/*/*.h 2>/dev/null || true)
if [ -n "$private" ]; then
  echo "programs including the library's private headers: $private"
  fail=1
fi

# Calls, not mentions: comment lines (starting with * or //) and text
# after /* are left out.
blocking=$(grep -nE '(^|[^A-Za-z_])MPI_(Allreduce|Reduce|Bcast|Barrier|Allgatherv?|Gatherv?|Scatterv?|Alltoall[vw]?|Reduce_scatter(_block)?|Scan|Exscan)[[:space:]]*\(' \
             src/*.c src/modules/*.c 2>/dev/null \
           | grep -vE '^[^:]+:[0-9]+:[[:space:]]*(\*|//|/\*)' || true)
if [ -n "$blocking" ]; then
  echo "blocking MPI collectives in the library (use the nonblocking form"
  echo "and river_wait, or river__allreduce / river__agree):"
  printf '%s\n' "$blocking"
  fail=1
fi

n=$(printf '%s\n' "$edges" | grep -c .)
if [ $fail -eq 0 ]; then
  echo "PASS: test_layout ($n includes, no cycle)"
  exit 0
fi
echo "FAIL: test_layout"
exit 1
