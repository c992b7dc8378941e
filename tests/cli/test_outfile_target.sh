#!/bin/bash
# test_outfile_target.sh - what is at an output's target outside a root
# (doc/collections.md, "Symbolic links" and copy-out):
#   - copy-out -o through another user's symbolic link in a sticky,
#     world-writable directory is refused, naming it, and what the link
#     points to stays byte for byte (Linux's protected_symlinks rule,
#     applied whatever the sysctl says); the caller's own link there, and
#     a link of the directory's owner, are followed; a regular file
#     another user planted there is not replaced (copy-out, sort file:),
#     as Linux's protected_regular would refuse to open it;
#   - copy-out -o to a FIFO another user planted there, or to a FIFO with
#     no reader, is an error at once, never a wait in open(); /dev/stderr
#     (a link to the launcher's pipe) is written through;
#   - the directory sync after the rename that publishes an output fails
#     (EIO, the fail_fsync shim on the output's directory): copy-out -o,
#     a flow's file_write and sort file: warn that the file is published
#     but the sync failed, exit 0, and the new file is complete.
# Run as root (the tests are) to plant files of uid 65534.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
shim=${top_builddir:-.}/tests/.libs/fail_fsync.so
flows=${top_srcdir:-.}/tests/flows/run
other=65534

r 2 gen --force X --records 3000 </dev/null >/dev/null || fail "gen X"
r 2 copy-out --force X -o "$tmp/ref.dat" </dev/null || fail "copy-out X (reference)"

# co_timed WHAT PATH: copy-out X -o PATH on 2 ranks within 60 s; the exit
# status in $rc, stderr in $tmp/err; a hang (124) fails WHAT.
co_timed() {
  timeout 60 "$run" -n 2 "$river" copy-out --force X -o "$2" </dev/null \
    >/dev/null 2>"$tmp/err"
  rc=$?
  [ $rc = 124 ] && fail "$1: copy-out still waiting after 60 s"
}

# ------------------------------------------- links in a sticky directory
mkdir -m 1777 "$tmp/pub"
mkdir "$tmp/victim"
head -c 5000 /dev/urandom >"$tmp/victim/v.dat"
cp "$tmp/victim/v.dat" "$tmp/victim.orig"
ln -s "$tmp/victim/v.dat" "$tmp/pub/theirs.dat"
if chown -h "$other" "$tmp/pub/theirs.dat"; then
  co_timed "another user's link" "$tmp/pub/theirs.dat"
  [ $rc = 0 ] && fail "copy-out -o through another user's link in a sticky directory succeeded"
  grep -q "$tmp/pub/theirs.dat is a symbolic link owned by another user (uid $other) in the sticky, world-writable directory $tmp/pub" "$tmp/err" \
    || { fail "another user's link: no message naming it"; head -n 3 "$tmp/err"; }
  cmp -s "$tmp/victim/v.dat" "$tmp/victim.orig" \
    || fail "copy-out replaced what another user's link points to"
  [ -L "$tmp/pub/theirs.dat" ] || fail "another user's link is no longer a link"
  [ -z "$(ls -a "$tmp/pub" "$tmp/victim" | grep river-tmp)" ] \
    || fail "a refused copy-out left a temporary"

  # A FIFO another user planted there: refused at once.
  mkfifo "$tmp/pub/fifo.dat" && chown "$other" "$tmp/pub/fifo.dat"
  co_timed "another user's FIFO" "$tmp/pub/fifo.dat"
  [ $rc = 0 ] && fail "copy-out -o another user's FIFO succeeded"
  grep -q "$tmp/pub/fifo.dat is a special file owned by another user (uid $other)" "$tmp/err" \
    || { fail "another user's FIFO: no message naming it"; head -n 3 "$tmp/err"; }

  # A regular file another user planted there is not replaced (the new
  # file would be given its owner and mode): copy-out and sort file:.
  head -c 700 /dev/urandom >"$tmp/pub/planted.dat"
  cp "$tmp/pub/planted.dat" "$tmp/planted.orig"
  chown "$other" "$tmp/pub/planted.dat"; chmod 666 "$tmp/pub/planted.dat"
  co_timed "another user's file" "$tmp/pub/planted.dat"
  [ $rc = 0 ] && fail "copy-out -o replaced another user's file in a sticky directory"
  grep -q "$tmp/pub/planted.dat is a file owned by another user (uid $other) in the sticky, world-writable directory $tmp/pub: not replacing it" "$tmp/err" \
    || { fail "another user's file: no message naming it"; head -n 3 "$tmp/err"; }
  expect_fail 2 "planted.dat is a file owned by another user \\(uid $other\\)" \
    sort X "file:$tmp/pub/planted.dat" --force
  cmp -s "$tmp/pub/planted.dat" "$tmp/planted.orig" \
    || fail "another user's file in a sticky directory was replaced"
  [ -z "$(ls -a "$tmp/pub" | grep river-tmp)" ] || fail "a refused output left a temporary"

  # A link of the directory's owner is followed (the kernel's rule too).
  mkdir -m 1777 "$tmp/pub2"; chown "$other" "$tmp/pub2"
  echo old >"$tmp/victim/owners.dat"
  ln -s "$tmp/victim/owners.dat" "$tmp/pub2/owners.dat"
  chown -h "$other" "$tmp/pub2/owners.dat"
  r 2 copy-out --force X -o "$tmp/pub2/owners.dat" </dev/null \
    || fail "copy-out -o the sticky directory owner's link"
  cmp -s "$tmp/victim/owners.dat" "$tmp/ref.dat" \
    || fail "the directory owner's link: its target lacks the data"
else
  fail "cannot chown a link to uid $other (run as root)"
fi
# The caller's own link there is followed: the link stays a link.
echo old >"$tmp/victim/mine.dat"
ln -s "$tmp/victim/mine.dat" "$tmp/pub/mine.dat"
r 2 copy-out --force X -o "$tmp/pub/mine.dat" </dev/null || fail "copy-out -o my own link"
[ -L "$tmp/pub/mine.dat" ] || fail "my own link is no longer a link"
cmp -s "$tmp/victim/mine.dat" "$tmp/ref.dat" || fail "my own link: its target lacks the data"

# A FIFO of the caller's with no reader: an error at once.
mkfifo "$tmp/nobody-reads"
co_timed "a FIFO with no reader" "$tmp/nobody-reads"
[ $rc = 0 ] && fail "copy-out -o a FIFO with no reader succeeded"
grep -q "copy-out: cannot open $tmp/nobody-reads: a FIFO with no reader" "$tmp/err" \
  || { fail "a FIFO with no reader: no message saying so"; head -n 3 "$tmp/err"; }

# /dev/stderr, a link to /proc/self/fd/2, a link whose text names no file
# (pipe:[N]: the launcher's pipe): written through, as the kernel resolves
# it.
r 2 copy-out --force X -o /dev/stderr </dev/null >/dev/null 2>"$tmp/se" \
  || { fail "copy-out -o /dev/stderr (a pipe)"; head -c 300 "$tmp/se"; }
cmp -s "$tmp/se" "$tmp/ref.dat" || fail "copy-out -o /dev/stderr: other bytes"

# --------------------------- the directory sync after the publish fails
mkdir "$tmp/odir"
warned() { # WHAT FILE: the warning names FILE
  grep -q "$2 is published, but the directory sync failed ($tmp/odir: Input/output error): the rename may not survive a power failure" "$tmp/err" \
    || { fail "$1: no warning that the directory sync failed"; head -n 3 "$tmp/err"; }
}
# preloaded N ARGS...: river ARGS on N ranks with the shim failing the
# fsync of $tmp/odir; exit status in $rc, stderr in $tmp/err.
preloaded() {
  local n=$1; shift
  env LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$shim" RIVER_TEST_FAIL_FSYNC="$tmp/odir" \
    timeout 120 "$run" -n "$n" "$river" "$@" </dev/null >/dev/null 2>"$tmp/err"
  rc=$?
}

head -c 20000 /dev/urandom >"$tmp/odir/co.dat"
preloaded 2 copy-out --force X -o "$tmp/odir/co.dat"
[ $rc = 0 ] || { fail "copy-out -o: a failed directory sync after the rename: exit $rc"; head -n 3 "$tmp/err"; }
warned "copy-out -o" "$tmp/odir/co.dat"
cmp -s "$tmp/odir/co.dat" "$tmp/ref.dat" || fail "copy-out -o: the published file is not complete"

head -c 20000 /dev/urandom >"$tmp/odir/fw.dat"
preloaded 2 run "$flows/coll_file.yaml" coll=X out="$tmp/odir/fw.dat"
[ $rc = 0 ] || { fail "file_write: a failed directory sync after the rename: exit $rc"; head -n 3 "$tmp/err"; }
warned "file_write" "$tmp/odir/fw.dat"
r 2 run "$flows/coll_file.yaml" coll=X out="$tmp/fw.want" </dev/null >/dev/null 2>&1 \
  || fail "file_write without the shim"
cmp -s "$tmp/odir/fw.dat" "$tmp/fw.want" || fail "file_write: the published file is not complete"

head -c 20000 /dev/urandom >"$tmp/odir/sf.dat"
preloaded 2 sort X "file:$tmp/odir/sf.dat" --force
[ $rc = 0 ] || { fail "sort file:: a failed directory sync after the rename: exit $rc"; head -n 3 "$tmp/err"; }
warned "sort file:" "$tmp/odir/sf.dat"
r 2 sort X "file:$tmp/sf.want" </dev/null >/dev/null 2>&1 || fail "sort file: without the shim"
cmp -s "$tmp/odir/sf.dat" "$tmp/sf.want" || fail "sort file:: the published file is not complete"
[ -z "$(ls -a "$tmp/odir" | grep river-tmp)" ] || fail "a temporary was left in $tmp/odir"

clitest_end test_outfile_target
