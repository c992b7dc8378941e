#!/bin/bash
# test_join.sh - river join from the command line (the join's results
# against a reference are test_join_mpi's):
#  - River, --static and --replicate join two gensort collections with
#    the same keys: one output record per match, reported, at 1..4 ranks;
#    with an emulated joiner CPU and one joiner slowed, the report gives
#    the fluid ideal;
#  - bad input, each with a clear message, a non-zero exit on every rank
#    and no OUT: an unknown key field (said in the command's words:
#    --key, R, its schema), key types that differ between R and S, a
#    file: relation whose size is not whole records of its
#    schema, --memory too small for the build side, OUT existing without
#    --force (the old OUT stays; --force replaces it), --static with
#    --replicate, OUT the same as R, no --key.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
flows=${top_srcdir:-.}/flows

# rows COLL: its record count, from river info.
rows() { r 1 info "$1" 2>/dev/null | awk '/^records/ { print $2 }'; }

r 2 gen --force r --records 3000 --seed 5 >/dev/null 2>&1 || fail "gen r"
r 3 gen --force s --records 2000 --seed 5 >/dev/null 2>&1 || fail "gen s"
for n in $(ranks 1 2 3 4); do
  for v in "" --static --replicate; do
    out=j$n${v#--}
    r "$n" join r s "$out" --key key $v >"$tmp/out" 2>&1 \
      || { fail "$n ranks: join $v"; head -n 5 "$tmp/out"; }
    grep -q "^join: .* r x s on key -> $out: 3000 x 2000 records -> 2000" \
      "$tmp/out" || { fail "$n ranks $v: report"; grep '^join' "$tmp/out"; }
    [ "$(rows "$out")" = 2000 ] || fail "$n ranks $v: OUT has $(rows "$out")"
  done
done
r 2 join r s jx --key key >/dev/null 2>&1 || fail "join r s jx"
r 1 info jx | grep -q "key:bytes\[10\],payload:bytes\[90\],payload_s:bytes\[90\]" \
  || fail "OUT's schema is not R's fields then S's but the key"
r 3 join r s jcpu --key key --cpu-rate 4Mi --perturb "cpu:1=0.25" \
  >"$tmp/out" 2>&1 || fail "emulated join"
grep -q "fluid ideal" "$tmp/out" || fail "emulated join: no fluid ideal"

# Bad input.
head -c 1600 /dev/zero >"$tmp/t16.bin"
# a key R lacks: said in the command's words (the option, the relation,
# its schema), not a line of the shipped spec
expect_fail 2 "join: --key nokey: R \\(r\\) has no field nokey \\(its schema: " \
  join r s bad1 --key nokey
grep -q "join.yaml" "$tmp/err" && fail "--key nokey: the spec's lines in the message"
r 1 copy-in --force "$tmp/t16.bin" k8 --schema "key:uint64,v:uint64" >/dev/null 2>&1 \
  || fail "copy-in k8"
expect_fail 2 "join: --key key is bytes\\[10\\] in R \\(r\\) but uint64 in S \\(k8\\): the key must be of one type in both" \
  join r k8 bad2 --key key
grep -q "join.yaml" "$tmp/err" && fail "--key of two types: the spec's lines in the message"
head -c 1050 /dev/zero >"$tmp/torn"
expect_fail 2 "$tmp/torn: 1050 bytes are not a whole number of 16-byte records" \
  run "$flows/join.yaml" r=file:$tmp/torn "r_schema=key:uint64,v:uint64" \
  s=k8 out=bad3 key=key
expect_fail 3 "join: the build input \\(input 1\\) does not fit in memory=1024 bytes" \
  join r s bad4 --key key --memory 1Ki
expect_fail 2 "join: collection jx exists \\(--force replaces it" join r s jx --key key
[ "$(rows jx)" = 2000 ] || fail "a refused join changed OUT"
r 2 join s r jx --key key --force >/dev/null 2>&1 || fail "--force"
r 1 info jx | grep -q "payload_s" || fail "--force: OUT not replaced"
# S's fields clashing with the output's twice: refused, naming them.
r 1 copy-in --force "$tmp/t16.bin" cx --schema "key:uint64,x:uint32,x_s:uint32" \
  >/dev/null 2>&1 || fail "copy-in cx"
r 1 copy-in --force "$tmp/t16.bin" rx --schema "key:uint64,x:uint64" \
  >/dev/null 2>&1 || fail "copy-in rx"
expect_fail 2 "join: S's field 'x' clashes with a field of the output, and so does 'x_s'" \
  join rx cx bad8 --key key
expect_fail 2 "join: --static and --replicate are different joins" \
  join r s bad5 --key key --static --replicate
expect_fail 2 "join: OUT is R or S" join r s r --key key --force
expect_fail 2 "join: --key FIELD is required" join r s bad6

expect_fail 2 "join: --perturb scales emulated rates" \
  join r s bad7 --key key --perturb "cpu:0=0.5"
r 1 ls 2>/dev/null | grep -q "^bad" && fail "a failed join left a collection"
r 1 gc 2>&1 | grep -q "^gc: no leftovers" || fail "a failed join left files"

clitest_end test_join
