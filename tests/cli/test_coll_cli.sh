#!/bin/bash
# test_coll_cli - collections through the river command, end to end:
# gen/copy-in/copy-out round trips (binary and ASCII, 4 writers, 3 and 1
# readers, with and without mirrors, both layouts), h5dump of the
# metadata, fsck against single flipped bytes, reading past a lost disk,
# and bad input: each fails on every rank with a message naming the
# thing, and loses nothing. Run by scripts/mpi-test-launch.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"

n=20011   # not a multiple of 4 or 3: uneven partitions

# --------------------------------------------------------------- round trips
for fmt in binary ascii; do
  flag=; [ $fmt = ascii ] && flag=--ascii
  r 4 gen --force "g_$fmt" --records $n $flag >/dev/null || fail "gen $fmt"
  r 4 copy-out --force "g_$fmt" -o "$tmp/$fmt.dat" || fail "copy-out g_$fmt"
  [ "$(stat -c %s "$tmp/$fmt.dat")" -eq $((n * 100)) ] || fail "$fmt: wrong size"
  for m in 1 2; do
    for lay in partitioned interleaved; do
      c="c_${fmt}_${m}_$lay"
      r 4 copy-in --force "$tmp/$fmt.dat" "$c" --mirror $m --layout $lay \
        --block-size 64Ki >/dev/null || fail "copy-in $c"
      for readers in 3 1; do
        rm -f "$tmp/back"
        r $readers copy-out --force "$c" -o "$tmp/back" || fail "copy-out $c ($readers)"
        cmp -s "$tmp/$fmt.dat" "$tmp/back" \
          || fail "$c read by $readers ranks differs from what was copied in"
      done
    done
  done
done
# stdout is the default output.
r 2 copy-out c_binary_2_interleaved | cmp -s - "$tmp/binary.dat" \
  || fail "copy-out to stdout differs"
# gensort layout: binary bytes 10-11 are 00 11; ASCII lines are 100 bytes.
[ "$(od -An -tx1 -j10 -N2 "$tmp/binary.dat" | tr -d ' ')" = 0011 ] \
  || fail "binary records lack gensort's 00 11 marker"
[ "$(tr -d '\r' <"$tmp/ascii.dat" | awk 'length != 98' | wc -l)" -eq 0 ] \
  && [ "$(wc -l <"$tmp/ascii.dat")" -eq $n ] || fail "ASCII records malformed"
# The same rows whatever the number of generating ranks.
r 3 gen --force g3 --records $n >/dev/null && r 1 copy-out --force g3 -o "$tmp/g3.dat" \
  && cmp -s "$tmp/g3.dat" "$tmp/binary.dat" || fail "gen depends on rank count"
r 2 gen --force skewed --records 5000 --skew >/dev/null && r 1 copy-out --force skewed -o "$tmp/sk" \
  || fail "gen --skew"
low=$(od -An -v -tu1 -w100 "$tmp/sk" | awk '$1 < 16' | wc -l)
[ "$low" -gt 2000 ] || fail "--skew: only $low of 5000 keys start below 16"

# ------------------------------------------------------------------ h5dump
if command -v h5dump >/dev/null; then
  h5dump -H "$root/c_binary_2_partitioned.river.h5" >"$tmp/h5" 2>&1 \
    || fail "h5dump failed"
  for want in 'DATATYPE "record" H5T_COMPOUND' '"key";' '"payload";' \
              'DATASET "partitions"' '"nrecords";' '"checksum";' '"disks";' \
              '"path";' 'ATTRIBUTE "schema"'; do
    grep -qF "$want" "$tmp/h5" || fail "h5dump: no $want"
  done
  grep -q 'H5T_ARRAY { \[10\] H5T_STD_U8LE } "key"' "$tmp/h5" \
    || fail "h5dump: key is not bytes[10]"
  h5dump -d partitions "$root/c_binary_2_partitioned.river.h5" | grep -q "5003" \
    || fail "h5dump: partition table lacks a record count"
else
  fail "h5dump not installed (hdf5-tools)"
fi

# -------------------------------------------------------------------- fsck
r 4 gen --force f --records 20000 --block-size 64Ki >/dev/null || fail "gen f"
r 3 fsck f >"$tmp/out" 2>&1 || fail "fsck of an intact collection failed"
grep -q "fsck f: OK" "$tmp/out" || fail "fsck: no OK line"
pf=$(part_file f 1 1)
cp "$pf" "$tmp/pristine"
size=$(stat -c %s "$pf")
bs=65536
# header, a block's records, its padding, a later block, the last block,
# the block-CRC table
for pos in 100 4093 $((4096 + 50)) $((4096 + 65500 + 3)) $((4096 + 2 * bs + 999)) \
           $((4096 + 7 * bs + 10)) $((size - 3)); do
  cp "$tmp/pristine" "$pf"
  flip "$pf" $pos
  if r 2 fsck f >"$tmp/out" 2>"$tmp/err"; then
    fail "fsck missed a flipped byte at offset $pos"; continue
  fi
  grep -q "partition 1 copy on disk 1" "$tmp/err" \
    || fail "fsck (byte $pos): partition and disk not named"
  if [ $pos -ge 4096 ] && [ $pos -lt $((size - 32)) ]; then
    blk=$(((pos - 4096) / bs))
    grep -q "block $blk" "$tmp/err" || fail "fsck (byte $pos): block $blk not named"
  fi
done
cp "$tmp/pristine" "$pf"
r 2 fsck f >/dev/null 2>&1 || fail "fsck after repair"

# ------------------------------------------------ mirrors cover a lost disk
# (m2 has disk directories of its own: losing its disk 2 harms nothing else)
r 4 copy-in --force "$tmp/binary.dat" m2 --mirror 2 --block-size 64Ki --disks 'm2disk%d' \
  >/dev/null || fail "copy-in m2"
[ "$(ls "$root"/m2disk*/m2.p*.rdat | wc -l)" -eq 8 ] || fail "m2: not 2 copies of 4 partitions"
rm -rf "$root/m2disk2"
r 3 copy-out --force m2 -o "$tmp/m2" 2>"$tmp/err" || fail "copy-out with disk 2 gone"
cmp -s "$tmp/m2" "$tmp/binary.dat" || fail "copy-out with a lost disk differs"
grep -q "partition 2: the copy on disk 2 is unusable" "$tmp/err" \
  || fail "copy-out did not say disk 2's copy of partition 2 is unusable"
# The same with graduated declustering's baselines: the fixed mirror fails
# over; "nomirror" reads the first copies only, so it fails, naming
# partition and block, and leaves no output.
for ranks in 1 2 4; do
  rm -f "$tmp/m2n"
  r $ranks copy-out --force m2 -o "$tmp/m2n" --read-policy mirror-nogd 2>/dev/null \
    && cmp -s "$tmp/m2n" "$tmp/binary.dat" || fail "mirror-nogd on $ranks ranks, disk 2 gone"
done
rm -f "$tmp/m2n"
expect_fail 3 "collection m2: partition 2 block 0: no readable copy \(missing on disk 2; other mirrors not tried: nomirror" \
  copy-out --force m2 -o "$tmp/m2n" --read-policy nomirror
[ ! -e "$tmp/m2n" ] || fail "a failed nomirror copy-out left an output file"
# Interleaved, mirrored, a disk lost: stripes still come out in order.
r 4 copy-in --force "$tmp/binary.dat" m2i --mirror 2 --layout interleaved --block-size 8Ki \
  --disks 'm2idisk%d' >/dev/null || fail "copy-in m2i"
rm -rf "$root/m2idisk1"
for ranks in 1 3; do
  r $ranks copy-out --force m2i -o "$tmp/m2i" 2>/dev/null && cmp -s "$tmp/m2i" "$tmp/binary.dat" \
    || fail "interleaved mirrored copy-out on $ranks ranks with disk 1 gone"
done
expect_fail 2 "--read-policy fast: expected gd, mirror-nogd or nomirror" \
  copy-out --force m2 -o "$tmp/m2n" --read-policy fast
# Every block still has an intact copy: fsck passes, warning about each
# copy on the lost disk (tests/cli/test_fsck.sh has the details).
r 2 fsck m2 >"$tmp/out" 2>/dev/null || fail "fsck failed with disk 2 gone (no data lost)"
grep -q "WARN: partition 1 copy 1 (disk 2): file missing" "$tmp/out" \
  && grep -q "WARN: partition 2 copy 0 (disk 2): file missing" "$tmp/out" \
  || fail "fsck m2 did not name the copies on the lost disk"
grep -q "OK with warnings: 2 of 8 copies damaged" "$tmp/out" || fail "fsck m2 summary"
# A damaged block on one copy is read from the other.
flip "$(ls "$root"/m2disk0/m2.p0.*.rdat)" $((4096 + 100))
r 2 copy-out --force m2 -o "$tmp/m2b" 2>/dev/null && cmp -s "$tmp/m2b" "$tmp/binary.dat" \
  || fail "a corrupt block was not read from its mirror"

# ------------------------------------------------------------- bad input
expect_fail 4 "collection name 'a/b'" gen --force a/b --records 10
expect_fail 2 "collection name '\.\.'" gen --force .. --records 10
expect_fail 2 "may not contain '\.\.'" copy-out x..y
expect_fail 2 "'\.\.' would escape the root" gen --force esc --records 10 --disks '../out%d'
expect_fail 2 "needs exactly one %d" gen --force esc --records 10 --disks 'disk'
expect_fail 2 "--records 99999999999999999999999: expected an integer" \
  gen --force big --records 99999999999999999999999
expect_fail 2 "--block-size 5G: expected an integer" gen --force big --records 1 --block-size 5G
expect_fail 2 "--mirror 9: needs 1\.\.2|replication 9 needs 1\.\.2" gen --force mm --records 10 --mirror 9
expect_fail 2 "collection nothere not found" copy-out nothere
expect_fail 2 "cannot read $tmp/missing" copy-in --force "$tmp/missing" x
head -c 1050 "$tmp/binary.dat" >"$tmp/odd"
expect_fail 2 "odd: 1050 bytes is not a whole number of 100-byte records" \
  copy-in --force "$tmp/odd" x
expect_fail 2 'schema "k:int33": field 1 "k": unknown type' copy-in "$tmp/binary.dat" x --schema 'k:int33'
# Every rank exits non-zero and says so.
r 4 gen --force a/b --records 1 2>"$tmp/err" >/dev/null
[ "$(grep -c 'collection name' "$tmp/err")" -eq 4 ] || fail "not every rank reported the bad name"

# A failed replacement leaves the old collection as it was.
r 4 copy-in --force "$tmp/odd" c_binary_1_partitioned 2>/dev/null && fail "bad copy-in succeeded"
r 2 copy-out --force c_binary_1_partitioned -o "$tmp/still" && cmp -s "$tmp/still" "$tmp/binary.dat" \
  || fail "failed replacement damaged the old collection"
# A good replacement removes the old generation's files.
r 4 copy-in --force "$tmp/ascii.dat" c_binary_1_partitioned >/dev/null || fail "replace"
[ "$(ls "$root"/disk*/c_binary_1_partitioned.p*.rdat | wc -l)" -eq 4 ] \
  || fail "old generation files left behind"

# Truncated data file (no mirror): the read fails naming partition and
# block, and no output file appears.
r 4 copy-in --force "$tmp/binary.dat" t1 --block-size 64Ki >/dev/null || fail "copy-in t1"
pf=$(part_file t1 2 2)
truncate -s $((4096 + 3 * 65536 + 10)) "$pf"
rm -f "$tmp/t1.out"
expect_fail 3 "partition 2 block 0: no readable copy" copy-out --force t1 -o "$tmp/t1.out"
grep -q "block 3" "$tmp/err" || fail "truncation: first missing block (3) not named"
[ ! -e "$tmp/t1.out" ] || fail "a failed copy-out left an output file"
ls "$tmp"/t1.out.river-tmp.* >/dev/null 2>&1 && fail "a failed copy-out left a temporary file"
# Checksum mismatch (no mirror).
r 4 copy-in --force "$tmp/binary.dat" t2 --block-size 64Ki >/dev/null
flip "$(part_file t2 1 1)" $((4096 + 65536 + 5))
expect_fail 2 "partition 1 block 1: no readable copy" copy-out --force t2 -o "$tmp/t2.out"
grep -q "block 1: checksum mismatch" "$tmp/err" || fail "checksum mismatch not named"
# Record-size mismatch: a data file of another collection in its place.
r 2 copy-in --force "$tmp/binary.dat" small --schema 'a:int64,b:int32' >/dev/null 2>&1 || true
head -c 240000 "$tmp/binary.dat" >"$tmp/b12"
r 2 copy-in --force "$tmp/b12" small --schema 'a:int64,b:int32' >/dev/null || fail "copy-in small"
r 2 copy-in --force "$tmp/binary.dat" t3 >/dev/null
cp "$(part_file small 0 0)" "$(part_file t3 0 0)"
expect_fail 2 "records are 12 bytes, expected 100" copy-out --force t3 -o "$tmp/t3.out"
# Corrupt and truncated metadata.
r 2 gen --force meta --records 100 >/dev/null
cp "$root/meta.river.h5" "$tmp/meta.h5"
truncate -s 1000 "$root/meta.river.h5"
expect_fail 2 "meta.river.h5 is 1000 bytes, its header says [0-9]+ \\(truncated or torn write\\)" info meta
head -c 4096 /dev/urandom >"$root/meta.river.h5"
expect_fail 2 "meta.river.h5 is not River metadata \\(4096 bytes, no River header\\): corrupt or truncated" copy-out meta
# rm refuses it (nothing removed), rm --force removes it and its data.
expect_fail 1 "nothing removed .*river rm --force meta" rm meta
[ -e "$root/meta.river.h5" ] || fail "a refused rm removed the metadata"
r 1 rm --force meta >/dev/null 2>&1 || fail "rm --force of corrupt metadata"
[ ! -e "$root/meta.river.h5" ] || fail "rm --force left the metadata"
[ -z "$(ls "$root"/disk*/meta.* 2>/dev/null)" ] || fail "rm --force left data"
expect_fail 1 "collection meta not found" info meta
# ls and rm
r 2 ls >"$tmp/out" || fail "ls"
grep -q "^g_binary .* $n " "$tmp/out" || fail "ls does not list g_binary"
r 2 rm g_binary >/dev/null || fail "rm"
[ -z "$(ls "$root"/disk*/g_binary.* 2>/dev/null)" ] || fail "rm left data files"
expect_fail 2 "collection g_binary not found" rm g_binary

# copy-out -o: a replaced file keeps its mode; a write error on standard
# output is a failure also through the launcher (which writes it).
r 2 gen --force cm --records 3000 >/dev/null || fail "gen cm"
r 1 copy-out --force cm -o "$tmp/cm.ref" || fail "copy-out cm"
printf 'old' >"$tmp/cm.out"
chmod 600 "$tmp/cm.out"
r 2 copy-out --force cm -o "$tmp/cm.out" && cmp -s "$tmp/cm.out" "$tmp/cm.ref" \
  || fail "copy-out over a mode-600 file"
[ "$(stat -c %a "$tmp/cm.out")" = 600 ] \
  || fail "copy-out -o turned mode 600 into $(stat -c %a "$tmp/cm.out")"
for n in 1 2; do
  r $n copy-out cm >/dev/full 2>"$tmp/err" \
    && fail "$n ranks: copy-out > /dev/full exited 0 through $run"
done
# A copy-out killed while it writes leaves TARGET.river-tmp.RANDOM: gc
# lists it (its record under the root), and gc --remove removes it.
env RIVER_TEST_FAULT=outfile-created:kill "$run" -n 2 "$river" copy-out cm \
  -o "$tmp/cm.out" --force >/dev/null 2>&1 && fail "copy-out not killed"
cmp -s "$tmp/cm.out" "$tmp/cm.ref" || fail "a killed copy-out changed its target"
left=$(ls "$tmp"/cm.out.river-tmp.* 2>/dev/null)
[ -n "$left" ] || fail "a killed copy-out left no temporary (the test's premise)"
r 1 gc >"$tmp/out" 2>&1
grep -qF "$left" "$tmp/out" || { fail "gc does not list a killed copy-out's $left"
  head -n 5 "$tmp/out"; }
r 1 gc --remove >/dev/null 2>&1 || fail "gc --remove"
[ -e "$left" ] && fail "gc --remove left $left"
r 1 gc >"$tmp/out" 2>&1
grep -q "river-tmp\|tmp-record" "$tmp/out" && fail "gc still lists after --remove"

# --help on every collection command
for cmd in gen copy-in copy-out ls info fsck rm; do
  r 1 "$cmd" --help >"$tmp/out" 2>&1 || fail "$cmd --help failed"
  grep -q "^usage: river $cmd" "$tmp/out" || fail "$cmd --help: no usage line"
done

clitest_end test_coll_cli
