#!/bin/bash
# test_coll_forged.sh - forged metadata files (issue 33, re-audit F1;
# doc/collections.md, "What River believes of a metadata file"). The
# seal is a CRC32C: anyone can seal a file again (tests/meta_forge does,
# with River's own sealing code), so what a metadata file says is
# checked, and nothing is removed on the word of another user's:
#   1. a generation holding a traversal ("a/../../../v", which would make
#      DISK/X.p0.a/../../../v.rdat a file outside the root): info, rm,
#      copy-out and fsck refuse the file, naming it and the generation;
#      rm and a write replacing X leave the file outside the root
#      byte-identical; rm --force removes the root's own files;
#   2. a metadata file owned by another user (uid 65534) in root A that
#      names root B's disk directories (an absolute pattern) and B's
#      generation of Y: `rm Y --root A` refuses, naming the file and its
#      owner; `rm --force` removes the file but not B's data; a write
#      replacing Y in A leaves B's data (a warning says so); gc --remove
#      leaves it too. After each, B's Y is byte-identical and fsck passes;
#   3. the caller's own collection on disks outside the root (--disks
#      with an absolute pattern) is still removed by rm, data and all.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
forge=${top_builddir:-.}/tests/meta_forge
[ -x "$forge" ] || { echo "FAIL: no $forge (make check builds it)"; exit 1; }
mkdir -p "$root"

# --- 1. a traversal in the generation ----------------------------------
# forge_trav: X in $root, its metadata sealed again with the traversal,
# the directories it needs made (as anyone who can write in a disk
# directory could), and the victim $tmp/v.rdat written afresh.
trav='a/../../../v'
forge_trav() {
  rm -rf "$root" && mkdir -p "$root"
  r 2 gen --force X --records 2000 >/dev/null 2>&1 || fail "gen X"
  "$forge" "$root/X.river.h5" "$tmp/m.h5" "gen=$trav" || fail "forge X"
  cp "$tmp/m.h5" "$root/X.river.h5"
  mkdir -p "$root/disk0/X.p0.a" "$root/disk1/X.p1.a"
  head -c 5000 /dev/urandom >"$tmp/v.rdat"
  cp "$tmp/v.rdat" "$tmp/v.keep"
}
victim_intact() { cmp -s "$tmp/v.rdat" "$tmp/v.keep"; }
bad_gen="metadata $root/X.river.h5: bad generation 'a/\.\./\.\./\.\./v'"

forge_trav
expect_fail 1 "$bad_gen" info X
expect_fail 1 "$bad_gen" fsck X
expect_fail 1 "$bad_gen" copy-out --force X -o "$tmp/out.dat"
[ -e "$tmp/out.dat" ] && fail "copy-out of the forged X wrote its output"
expect_fail 1 "$bad_gen" rm X
victim_intact || fail "rm X (traversal generation) removed or changed a file outside the root"
[ -f "$root/X.river.h5" ] || fail "rm X removed the metadata it refused"

forge_trav
r 2 gen --force X --records 100 >"$tmp/out" 2>"$tmp/err" \
  || fail "gen over the forged X failed"
victim_intact || fail "gen over X (traversal generation) removed or changed a file outside the root"
grep -q "$bad_gen" "$tmp/err" || fail "gen over X: the bad generation not named"
r 2 fsck X >/dev/null 2>&1 || fail "fsck of the new X"

forge_trav
r 1 rm --force X >"$tmp/out" 2>&1 || fail "rm --force of the forged X"
victim_intact || fail "rm --force X removed or changed a file outside the root"
ls "$root"/disk*/X.p*.rdat >/dev/null 2>&1 \
  && fail "rm --force X left the root's own data files"

# --- 2. another user's metadata naming another root's files -----------
if [ "$(id -u)" -eq 0 ]; then
  A=$tmp/A B=$tmp/B
  # plant: root B with its collection Y (the victim, written afresh, so
  # that each check stands alone), and A/Y.river.h5, owned by uid 65534,
  # naming B's disks and generation (a collection Y of A's own first, so
  # that the rest of the file is River's)
  plant() {
    rm -rf "$A" "$B" && mkdir -p "$A" "$B" && chmod 777 "$A"
    r 2 gen --force Y --root "$B" --records 2000 >/dev/null 2>&1 || fail "gen Y in B"
    f=$(ls "$B"/disk0/Y.p0.*.rdat); genB=${f##*/Y.p0.}; genB=${genB%%.*}
    sumB=$(r 1 copy-out Y --root "$B" 2>/dev/null | sha256sum)
    r 2 gen --force Y --root "$A" --records 2000 >/dev/null 2>&1 || fail "gen Y in A"
    "$forge" "$A/Y.river.h5" "$tmp/m.h5" "gen=$genB" "disks=$B/disk%d" \
      || fail "forge A/Y"
    cp "$tmp/m.h5" "$A/Y.river.h5"
    chown 65534 "$A/Y.river.h5"
  }
  # b_intact WHAT: B's Y is whole after WHAT
  b_intact() {
    [ "$(r 1 copy-out Y --root "$B" 2>/dev/null | sha256sum)" = "$sumB" ] \
      || fail "$1 changed or removed root B's Y"
    r 2 fsck Y --root "$B" >/dev/null 2>&1 || fail "fsck Y in B after $1"
  }
  owner="metadata $A/Y.river.h5 belongs to (user [^ ]+ )?\(?uid 65534\)?, not to you"

  plant
  expect_fail 2 "$owner.*nothing removed.*river rm --force Y" rm Y --root "$A"
  b_intact "rm Y --root A"
  [ -f "$A/Y.river.h5" ] || fail "rm Y --root A removed the metadata it refused"

  plant
  r 1 rm --force Y --root "$A" >"$tmp/out" 2>&1 || fail "rm --force Y --root A"
  b_intact "rm --force Y --root A"
  [ -e "$A/Y.river.h5" ] && fail "rm --force Y --root A left the metadata"
  grep -Eq "$owner.*left alone" "$tmp/out" \
    || fail "rm --force Y --root A: no warning about the foreign metadata"
  grep -q "^  $B/" "$tmp/out" \
    && fail "rm --force Y --root A listed a file of B"

  plant
  r 2 gen --force Y --root "$A" --records 100 >"$tmp/out" 2>"$tmp/err" \
    || fail "gen Y --root A over the foreign metadata"
  b_intact "gen Y --root A"
  grep -Eq "the metadata this write replaces, $A/Y.river.h5, belongs to" \
    "$tmp/err" || fail "gen Y --root A: no warning about the foreign metadata"
  r 2 fsck Y --root "$A" >/dev/null 2>&1 || fail "fsck of A's new Y"

  plant
  r 1 gc --remove --force --root "$A" >/dev/null 2>&1 \
    || fail "gc --remove --force --root A"
  b_intact "gc --remove --force --root A"
else
  echo "NOTE: part 2 (another user's metadata) needs root to chown a file;" \
       "not run as uid $(id -u)"
fi

# --- 3. the caller's own collection on disks outside the root ----------
r 2 gen --force Z --records 1000 --disks "$tmp/scratch/d%d" >/dev/null 2>&1 \
  || fail "gen Z --disks outside the root"
ls "$tmp"/scratch/d0/Z.p0.*.rdat >/dev/null 2>&1 || fail "no data of Z"
r 1 rm Z >/dev/null 2>&1 || fail "rm Z (own, disks outside the root)"
ls "$tmp"/scratch/d*/Z.* >/dev/null 2>&1 && fail "rm Z left its data files"

clitest_end test_coll_forged
