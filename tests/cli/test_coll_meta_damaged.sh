#!/bin/bash
# test_coll_meta_damaged - a metadata file that crashes HDF5 crashes no
# command. tests/cli/meta_crash.river.h5 is the metadata of a 10-record
# collection written by River's metadata format 2 with one bit flipped
# (offset 2275, 0x00 -> 0x10, in the partition table's datatype): River
# before format 3 gave it to HDF5 unchecked, and every command that
# read it (info, fsck, ls, gc, rm, rm --force, a rewrite) died of
# SIGSEGV in H5Dread (H5T__conv_struct_opt, exit 139); 101 of the 26,136
# one-byte corruptions (each byte xor 1, 2, 4, ..., 128, 255) of that
# file crashed River's reader there or in H5Aopen. It is planted as
# collection dmg's metadata in three forms (the first two crashed River
# before format 3: HDF5 finds its superblock at byte 0 or 512):
#   v2     as it is (format 2: refused as an older format);
#   zhdr   behind a 512-byte user block of River's magic and zeros
#          (River's header is damaged);
#   sealed behind the user block (header and record) of a real format-3
#          file of the same size (only the checksum is wrong).
# (River now never parses the HDF5 part, so even a correctly resealed
# copy of it could not crash a reader; tests/fuzz/fuzz_meta.c forges
# seals.)
# For each: info, fsck and rm of dmg fail with an error (exit 1, not a
# signal) naming the file; ls and gc of the root succeed, name dmg, and
# ls still lists the intact collection keep; rm --force removes dmg's
# metadata and data files, and a new dmg can be written after it. Then
# a rewrite of dmg over the damaged file works, leaving the old data
# for gc to list, and one killed at the commit's rename leaves a
# temporary metadata file that gc lists. Last, a symbolic link and a
# file over the size bound are refused without being read.
# Run by scripts/mpi-test-launch.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
image=${top_srcdir:-.}/tests/cli/meta_crash.river.h5
meta=$root/dmg.river.h5

# nosig WHAT RC: the command exited by itself (not killed by a signal).
nosig() {
  [ "$2" -lt 128 ] || fail "$1: died of a signal (exit $2)"
}

# names FILE: stderr (FILE) names the damaged file.
names() {
  grep -Fq "collection dmg: metadata $meta" "$2" \
    || { fail "$1: no error naming $meta"; sed 's/^/    /' "$2" | head -n 5; }
}

# plant FORM: dmg's metadata replaced by the crashing image in FORM.
plant() {
  case $1 in
  v2) cp "$image" "$meta" ;;
  zhdr) { printf 'river metadata\n'; head -c 497 /dev/zero; cat "$image"; } \
          >"$meta" ;;
  sealed) { head -c 512 "$tmp/dmg.good"; cat "$image"; } >"$meta" ;;
  esac
}

# check FORM MESSAGE: the commands on dmg planted in FORM (MESSAGE: the
# reader's complaint, grep -E).
check() {
  local f=$1 msg=$2 n rc
  for n in $(ranks 1 3); do
    for cmd in info fsck; do
      plant "$f"
      r "$n" $cmd dmg >"$tmp/out" 2>"$tmp/err"; rc=$?
      nosig "$f: $cmd on $n ranks" $rc
      [ $rc -eq 1 ] || fail "$f: $cmd on $n ranks: exit $rc, not 1"
      names "$f: $cmd on $n ranks" "$tmp/err"
      grep -Eq "$msg" "$tmp/err" || fail "$f: $cmd on $n ranks: no /$msg/"
    done
  done
  # ls succeeds and says, as an error, why dmg is unreadable.
  CLITEST_ALLOW_ERROR=1 r 1 ls >"$tmp/out" 2>"$tmp/err"; rc=$?
  nosig "$f: ls" $rc
  [ $rc -eq 0 ] || fail "$f: ls: exit $rc"
  names "$f: ls" "$tmp/err"
  grep -Eq '^keep +100 +10.0 kB ' "$tmp/out" || fail "$f: ls lost keep"
  grep -Eq '^dmg +\(unreadable metadata' "$tmp/out" \
    || fail "$f: ls does not mark dmg unreadable"
  r 1 gc >"$tmp/out" 2>"$tmp/err"; rc=$?
  nosig "$f: gc" $rc
  [ $rc -eq 0 ] || fail "$f: gc: exit $rc"
  grep -q "warn: collection dmg: metadata unreadable" "$tmp/err" \
    || fail "$f: gc does not warn about dmg"
  [ "$(grep -c "collection dmg: metadata unreadable" "$tmp/err")" -eq 1 ] \
    || fail "$f: gc warns about dmg more than once"
  grep -q keep "$tmp/out" "$tmp/err" && fail "$f: gc says something of keep"
  r 1 rm dmg >"$tmp/out" 2>"$tmp/err"; rc=$?
  nosig "$f: rm" $rc
  [ $rc -eq 1 ] || fail "$f: rm: exit $rc, not 1"
  grep -Fq "its metadata $meta cannot be read" "$tmp/err" \
    || fail "$f: rm does not name $meta"
  [ -f "$meta" ] || fail "$f: rm without --force removed $meta"
  r 1 rm --force dmg >"$tmp/out" 2>"$tmp/err"; rc=$?
  nosig "$f: rm --force" $rc
  [ $rc -eq 0 ] || fail "$f: rm --force: exit $rc"
  [ -e "$meta" ] && fail "$f: rm --force left $meta"
  ls "$root"/disk*/dmg.* >/dev/null 2>&1 \
    && fail "$f: rm --force left data files of dmg"
  r 2 gen --force dmg --records 10 >/dev/null 2>"$tmp/err" \
    || fail "$f: gen dmg after rm --force"
  r 1 info dmg >"$tmp/out" 2>&1 && grep -q '^records *10 ' "$tmp/out" \
    || fail "$f: the new dmg is not readable"
}

r 1 gen --force keep --records 100 >/dev/null || fail "gen keep"
r 1 copy-out --force keep -o "$tmp/keep" || fail "copy-out keep"
r 1 gen --force dmg --records 10 >/dev/null || fail "gen dmg"
cp "$meta" "$tmp/dmg.good"
[ "$(stat -c %s "$image")" -eq $(($(stat -c %s "$meta") - 512)) ] \
  || fail "dmg's metadata is not 512 bytes more than the image: 'sealed' is not"

check v2 "is in metadata format 2 or older \\(no whole-file checksum\\); this River reads format 3 only \\(copy it out with the River that wrote it, or remove it: \`river rm --force dmg\`\\)"
check zhdr "$meta fails its checksum \\(altered or torn write\\)$"
check sealed "$meta fails its checksum \\(altered or torn write\\)\$"

# A rewrite over the damaged file: it works, and the old data files are
# gc's to list.
plant zhdr
r 2 gen --force dmg --records 20 >/dev/null 2>"$tmp/err"; rc=$?
nosig "rewrite" $rc
[ $rc -eq 0 ] || fail "rewrite of damaged dmg: exit $rc"
grep -q "collection dmg: replacing unreadable metadata" "$tmp/err" \
  || fail "rewrite: no warning about the metadata it replaced"
r 1 info dmg >"$tmp/out" 2>&1 && grep -q '^records *20 ' "$tmp/out" \
  || fail "rewrite: the new dmg is not readable"
r 1 gc >"$tmp/out" 2>"$tmp/err"
grep -Eq "disk[01]/dmg\\.p[01]\\.[0-9a-f]+\\.rdat .*data file of a generation the metadata no longer names" \
  "$tmp/out" || fail "rewrite: gc does not list the old data files"

# A rewrite killed at its commit's rename: gc lists its temporary
# metadata, rm --force clears the name, and a write works again.
plant v2
RIVER_TEST_FAULT=commit-rename:kill r 1 gen --force dmg --records 30 \
  >/dev/null 2>"$tmp/err" && fail "the killed rewrite succeeded"
ls -A "$root" | grep -q '^\.tmp\.dmg\..*\.river\.h5$' \
  || fail "the killed rewrite left no temporary metadata (test broken)"
r 1 gc >"$tmp/out" 2>"$tmp/err"; rc=$?
nosig "gc after a killed rewrite" $rc
grep -Eq "/\\.tmp\\.dmg\\.[^ ]*\\.river\\.h5 .*temporary metadata of a write that never committed" \
  "$tmp/out" || fail "gc does not list the killed rewrite's temporary metadata"
r 1 rm --force dmg >/dev/null 2>&1 || fail "rm --force after the killed rewrite"
ls -A "$root" "$root"/disk* | grep -q 'dmg\.' \
  && fail "rm --force left files of dmg after the killed rewrite"
r 1 gen --force dmg --records 40 >/dev/null 2>&1 || fail "gen dmg at the end"

# What is read at all: no symbolic link (to an intact file, even), no
# file over the 1 GiB bound (a sparse one here), each refused naming it.
r 1 gen --force ln --records 10 >/dev/null || fail "gen ln"
mv "$root/ln.river.h5" "$tmp/ln.river.h5"
ln -s "$tmp/ln.river.h5" "$root/ln.river.h5"
expect_fail 1 "collection ln: metadata $root/ln.river.h5 is a symbolic link; not read" info ln
mv "$tmp/ln.river.h5" "$root/ln.river.h5"
truncate -s 1100M "$root/ln.river.h5"
expect_fail 1 "collection ln: metadata $root/ln.river.h5 is 1153433600 bytes, over the 1073741824-byte bound of a metadata file; not read" info ln
r 1 rm --force ln >/dev/null 2>&1 || fail "rm --force ln"

r 1 copy-out --force keep -o "$tmp/keep2" && cmp -s "$tmp/keep" "$tmp/keep2" \
  || fail "keep changed"

clitest_end test_coll_meta_damaged
