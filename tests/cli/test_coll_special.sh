#!/bin/bash
# test_coll_special - special files and unreadable files where a
# collection's files should be, through the river command:
#   - a FIFO (or a directory) in place of a data copy: with a mirror,
#     copy-out reads the mirror and warns naming the file, fsck passes
#     with a warning for that copy; without one, copy-out and fsck fail
#     naming it. Nothing blocks.
#   - a FIFO (or a directory) in place of the metadata: info, copy-out,
#     fsck and rm fail naming it (rm leaves it), ls lists it as
#     unreadable, and gen replaces it.
#   - a data or metadata file that cannot be opened for lack of
#     permission is reported as "permission denied", naming the file,
#     never as corruption. The tests run as root, who may read anything,
#     so tests/deny_open.c (LD_PRELOAD) makes open() of the named path
#     fail with EACCES.
# Each command runs under `timeout` (RIVER_CMD_LIMIT seconds, default
# 60): a hang fails its check, not only the whole test. Run by
# scripts/mpi-test-launch.
set -u
run=${RIVER_MPIRUN:?run me through scripts/mpi-test-launch}
river=${top_builddir:-.}/apps/river
shim=${top_builddir:-.}/tests/.libs/deny_open.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
export RIVER_ROOT=$root
fails=0
limit=${RIVER_CMD_LIMIT:-60}
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# r NRANKS ARGS...: river on NRANKS ranks, stdout to $tmp/out, stderr to
# $tmp/err; 124 if it outlived $limit seconds (a hang).
r() {
  local n=$1; shift
  timeout -k 5 $limit "$run" -n "$n" "$river" "$@" >"$tmp/out" 2>"$tmp/err"
}
hung() { [ "$1" -eq 124 ] || [ "$1" -eq 137 ]; }
show() { sed 's/^/    /' "$tmp/err" | head -n 8; }

# expect_ok NRANKS WHAT ARGS...: the command succeeds in time.
expect_ok() {
  local n=$1 what=$2 st; shift 2
  r "$n" "$@"; st=$?
  if hung $st; then fail "$what: river $* hung"; return 1; fi
  if [ $st -ne 0 ]; then fail "$what: river $* failed"; show; return 1; fi
}
# expect_fail NRANKS PATTERN ARGS...: the command fails in time and its
# stderr matches PATTERN (grep -E).
expect_fail() {
  local n=$1 pat=$2 st; shift 2
  r "$n" "$@"; st=$?
  if hung $st; then fail "river $* hung"; return 1; fi
  if [ $st -eq 0 ]; then fail "river $* succeeded"; return 1; fi
  if ! grep -Eq -e "$pat" "$tmp/err"; then
    fail "river $*: no message matching /$pat/"; show; return 1
  fi
}
# err_has PATTERN WHAT: the last command's stderr matches PATTERN.
err_has() {
  grep -Eq -e "$1" "$tmp/err" || { fail "$2: no message matching /$1/"; show; }
}
err_lacks() {
  ! grep -Eqi -e "$1" "$tmp/err" || { fail "$2: says /$1/"; show; }
}

part_file() { # collection partition disk-pattern-prefix disk -> path
  ls "$root/$3$4/$1.p$2."*.rdat
}

[ -r "$shim" ] || fail "no $shim (make check builds it)"
n=20011

# ------------------------------------------------ FIFO in place of a copy
# s: 4 partitions, 2 copies each; partition 1's first copy is on disk 1.
expect_ok 4 "gen s" gen --force s --records $n --mirror 2 --block-size 64Ki --disks 'sdisk%d'
expect_ok 1 "copy-out s" copy-out --force s -o "$tmp/ref"
pf=$(part_file s 1 sdisk 1)
mv "$pf" "$tmp/s.p1.saved"
mkfifo "$pf"
for ranks in 1 3; do
  rm -f "$tmp/o"
  if expect_ok $ranks "copy-out s, FIFO for a copy ($ranks ranks)" copy-out --force s -o "$tmp/o"; then
    cmp -s "$tmp/o" "$tmp/ref" || fail "copy-out s with a FIFO copy differs ($ranks ranks)"
    err_has "$pf: not a regular file" "copy-out s, FIFO copy"
  fi
done
expect_ok 2 "copy-out s, mirror-nogd" copy-out --force s -o "$tmp/o" --read-policy mirror-nogd \
  && { cmp -s "$tmp/o" "$tmp/ref" || fail "mirror-nogd with a FIFO copy differs"; }
# Every block still has an intact copy (the mirror): fsck passes with a
# warning naming the copy, and the file in the log.
if expect_ok 2 "fsck s, FIFO copy with a mirror" fsck s; then
  err_has "$pf: not a regular file" "fsck s, FIFO copy"
  grep -q "WARN: partition 1 copy 0" "$tmp/out" \
    || { fail "fsck s: no WARN line for partition 1 copy 0"; cat "$tmp/out"; }
fi
# A directory in its place is refused the same way.
rm "$pf"; mkdir "$pf"
expect_ok 2 "copy-out s, directory for a copy" copy-out --force s -o "$tmp/o" \
  && err_has "$pf: not a regular file" "copy-out s, directory copy"
rmdir "$pf"; mv "$tmp/s.p1.saved" "$pf"
expect_ok 2 "fsck s restored" fsck s

# Without a mirror: a clear error naming the file, no output file.
expect_ok 4 "gen u" gen --force u --records 2000 --block-size 64Ki --disks 'udisk%d'
pf=$(part_file u 2 udisk 2)
mv "$pf" "$tmp/u.p2.saved"; mkfifo "$pf"
rm -f "$tmp/u.out"
expect_fail 3 "$pf: not a regular file" copy-out --force u -o "$tmp/u.out"
err_has "partition 2 block 0: no readable copy" "copy-out u, FIFO copy"
[ ! -e "$tmp/u.out" ] || fail "a failed copy-out left an output file"
expect_fail 2 "$pf: not a regular file" fsck u
rm "$pf"; mv "$tmp/u.p2.saved" "$pf"

# ---------------------------------------- FIFO in place of the metadata
mkdir -p "$root"
mkfifo "$root/fm.river.h5"
mf="$root/fm.river.h5: not a regular file"
expect_fail 2 "$mf" info fm
expect_fail 2 "$mf" copy-out --force fm -o "$tmp/fm.out"
expect_fail 2 "$mf" fsck fm
expect_fail 1 "$mf" rm fm
[ -p "$root/fm.river.h5" ] || fail "rm removed a FIFO that is not River's"
if expect_ok 2 "ls with a FIFO as metadata" ls; then
  grep -q "^fm .*unreadable" "$tmp/out" || fail "ls does not list fm as unreadable"
  grep -q "^s " "$tmp/out" || fail "ls stopped listing at fm"
fi
# A new collection of that name replaces the FIFO.
expect_ok 2 "gen fm over a FIFO" gen --force fm --records 100 \
  && expect_ok 1 "copy-out the new fm" copy-out --force fm -o "$tmp/fm.out"
mkdir "$root/dm.river.h5"
expect_fail 2 "$root/dm.river.h5: not a regular file" info dm
expect_fail 1 "$root/dm.river.h5: not a regular file" rm dm

# ---------------------------------------------------- permission denied
# deny PATH RANKS ARGS...: run river with open() of PATH refused.
deny() {
  local path=$1; shift
  LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$shim" RIVER_TEST_DENY_OPEN="$path" "$@"
}
# The shim itself works: cat of a denied file fails.
if deny "$tmp/ref" cat "$tmp/ref" >/dev/null 2>&1; then
  fail "the deny_open shim does not deny"
fi
# Without a mirror: copy-out and fsck say permission denied, naming the
# file, and never call it corrupt.
pf=$(part_file u 1 udisk 1)
deny "$pf" expect_fail 2 "$pf: open failed: Permission denied" copy-out --force u -o "$tmp/u.out"
err_has "partition 1 block 0: no readable copy \(permission denied" "copy-out u, denied copy"
err_has "RIVER_EACCES" "copy-out u, denied copy"
err_lacks "corrupt" "copy-out u, denied copy"
# The same with one fixed mirror (no balancing between copies).
deny "$pf" expect_fail 1 "partition 1 block 0: no readable copy .*permission denied" \
  copy-out --force u -o "$tmp/u.out" --read-policy mirror-nogd
err_lacks "corrupt" "copy-out u mirror-nogd, denied copy"
# fsck: the library names the copy, and the verdict is "unreadable:
# permission denied", not data lost (the data may well be intact).
deny "$pf" expect_fail 2 "$pf: open failed: Permission denied" fsck u
err_has "partition 1: copy on disk 1 unusable \(permission denied\)" "fsck u, denied copy"
err_has "fsck failed: permission denied" "fsck u, denied copy: its status"
grep -q "partition 1 copy 0 (disk 1): unreadable: permission denied" "$tmp/out" \
  || { fail "fsck u: no 'unreadable: permission denied' line for the copy"; cat "$tmp/out"; }
grep -Eq "data lost|DATA LOST|DAMAGED:" "$tmp/out" \
  && { fail "fsck u: a copy refused by permission is called data lost"; cat "$tmp/out"; }
# With a mirror: read from the mirror, with a warning naming the file.
pf=$(part_file s 2 sdisk 2)
deny "$pf" expect_ok 2 "copy-out s, denied copy" copy-out --force s -o "$tmp/o" \
  && { cmp -s "$tmp/o" "$tmp/ref" || fail "copy-out s with a denied copy differs"; } \
  && err_has "$pf: open failed: Permission denied" "copy-out s, denied copy"
# Metadata: info, copy-out and fsck say so; rm leaves the collection.
mp="$root/s.river.h5"
for cmd in info copy-out fsck; do
  deny "$mp" expect_fail 2 "$mp: open failed: Permission denied" $cmd s
  err_lacks "corrupt|not a readable HDF5" "$cmd s, denied metadata"
done
deny "$mp" expect_fail 1 "$mp: .*Permission denied" rm s
[ -f "$mp" ] || fail "rm removed metadata it could not read"
expect_ok 1 "copy-out s after a refused rm" copy-out --force s -o "$tmp/o" \
  && { cmp -s "$tmp/o" "$tmp/ref" || fail "s changed by a refused rm"; }

# The metadata is read once, by rank 0, and broadcast: with every other
# rank refused it, info and copy-out on 3 ranks still work (before, each
# rank read it and those failed). The wrapper denies it by rank.
cat >"$tmp/rank-deny" <<EOF
#!/bin/sh
rank=\${OMPI_COMM_WORLD_RANK:-\${PMIX_RANK:-\${PMI_RANK:-}}}
if [ -z "\$rank" ]; then
  echo "rank-deny: the launcher set no rank variable" >&2
  exit 99
fi
if [ "\$rank" != 0 ]; then
  export LD_PRELOAD="\${LD_PRELOAD:+\$LD_PRELOAD:}$shim" RIVER_TEST_DENY_OPEN="$mp"
fi
exec "$river" "\$@"
EOF
chmod +x "$tmp/rank-deny"
river_real=$river
river=$tmp/rank-deny
expect_ok 3 "info s, metadata denied to ranks 1 and 2" info s
expect_ok 3 "copy-out s, metadata denied to ranks 1 and 2" copy-out --force s -o "$tmp/o" \
  && { cmp -s "$tmp/o" "$tmp/ref" || fail "copy-out s by rank 0's metadata differs"; }
river=$river_real

if [ "$fails" -eq 0 ]; then echo "PASS: test_coll_special"; exit 0; fi
echo "FAIL: test_coll_special ($fails failed checks)"; exit 1
