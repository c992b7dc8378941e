#!/bin/bash
# test_noreplace.sh - nothing is replaced by accident (doc/collections.md,
# "Nothing is replaced by accident"): every writer refuses a target that
# is already there unless told to replace it (--force, replace: true),
# with one message naming the target, before any work, exit 1 on every
# rank, and the old data byte for byte as it was; with --force (or
# replace: true) the target is replaced. Writers: gen, copy-in,
# copy-out -o, sort, join, a flow's coll_write (collection and file:)
# and file_write, at 1 and 3 ranks.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
flows=${top_srcdir:-.}/flows

# digest COLL: the checksum of COLL's records, in collection order.
digest() {
  r 1 copy-out "$1" 2>/dev/null | cksum
}

# refused NRANKS WHAT PATTERN ARGS...: river ARGS fails with exit 1, says
# PATTERN (one line naming the target: grep -E) exactly once, and logs
# no stage's work (a flow that started would print its stage table).
refused() {
  local n=$1 what=$2 pat=$3 lines; shift 3
  if r "$n" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"; then
    fail "$what: succeeded over an existing target"; return
  fi
  lines=$(grep -Ec -e "$pat" "$tmp/err")
  [ "$lines" = 1 ] || { fail "$what: said $lines times, not once: /$pat/"; cat "$tmp/err"; }
  grep -q "^run: stage" "$tmp/out" && fail "$what: the flow ran before refusing"
  grep -q "river-tmp" "$tmp/err" && fail "$what: a temporary was made"
  true
}

for n in $(ranks 1 3); do
  # gen
  r "$n" gen a$n --records 1000 --seed 1 >/dev/null || fail "$n: gen a"
  before=$(digest a$n)
  refused "$n" "$n: gen" "gen: collection a$n exists \(--force replaces it" \
    gen a$n --records 500 --seed 2
  [ "$(digest a$n)" = "$before" ] || fail "$n: a refused gen changed a$n"
  r "$n" gen a$n --records 500 --seed 2 --force >/dev/null || fail "$n: gen --force"
  [ "$(digest a$n)" != "$before" ] || fail "$n: gen --force did not replace a$n"
  # copy-out -o
  r "$n" copy-out a$n -o "$tmp/a$n.dat" || fail "$n: copy-out"
  echo old >"$tmp/old$n"
  refused "$n" "$n: copy-out -o" "copy-out: $tmp/old$n exists \(--force replaces it" \
    copy-out a$n -o "$tmp/old$n"
  [ "$(cat "$tmp/old$n")" = old ] || fail "$n: a refused copy-out changed the file"
  ln -s "old$n" "$tmp/link$n"
  refused "$n" "$n: copy-out -o LINK" "copy-out: $tmp/link$n exists \(--force" \
    copy-out a$n -o "$tmp/link$n"
  [ "$(cat "$tmp/old$n")" = old ] || fail "$n: a refused copy-out through a link changed the file"
  r "$n" copy-out a$n -o "$tmp/old$n" --force || fail "$n: copy-out --force"
  cmp -s "$tmp/old$n" "$tmp/a$n.dat" || fail "$n: copy-out --force did not replace"
  r "$n" copy-out a$n -o /dev/null || fail "$n: copy-out -o /dev/null (written through) refused"
  # copy-in
  r "$n" gen b$n --records 300 --seed 3 >/dev/null || fail "$n: gen b"
  before=$(digest b$n)
  refused "$n" "$n: copy-in" "copy-in: collection b$n exists \(--force replaces it" \
    copy-in "$tmp/a$n.dat" b$n
  [ "$(digest b$n)" = "$before" ] || fail "$n: a refused copy-in changed b$n"
  r "$n" copy-in "$tmp/a$n.dat" b$n --force >/dev/null || fail "$n: copy-in --force"
  [ "$(digest b$n)" = "$(cksum <"$tmp/a$n.dat")" ] || fail "$n: copy-in --force did not replace b$n"
  # sort
  r "$n" sort a$n s$n >/dev/null 2>&1 || fail "$n: sort"
  r "$n" gen s$n --records 10 --force >/dev/null || fail "$n: gen s"
  before=$(digest s$n)
  refused "$n" "$n: sort" "sort: collection s$n exists \(--force replaces it" \
    sort a$n s$n
  [ "$(digest s$n)" = "$before" ] || fail "$n: a refused sort changed s$n"
  r "$n" sort a$n s$n --force >/dev/null 2>&1 || fail "$n: sort --force"
  r "$n" valsort s$n --input a$n >/dev/null 2>&1 || fail "$n: sort --force did not replace s$n"
  echo old >"$tmp/sorted$n"
  refused "$n" "$n: sort file:" "sort: $tmp/sorted$n exists \(--force replaces it" \
    sort a$n "file:$tmp/sorted$n"
  [ "$(cat "$tmp/sorted$n")" = old ] || fail "$n: a refused sort changed file:"
  # join
  r "$n" join a$n a$n j$n --key key >/dev/null 2>&1 || fail "$n: join"
  before=$(digest j$n)
  refused "$n" "$n: join" "join: collection j$n exists \(--force replaces it" \
    join a$n a$n j$n --key key
  [ "$(digest j$n)" = "$before" ] || fail "$n: a refused join changed j$n"
  r "$n" gen c$n --records 200 --seed 7 >/dev/null || fail "$n: gen c"
  r "$n" join c$n c$n j$n --key key --force >/dev/null 2>&1 || fail "$n: join --force"
  [ "$(digest j$n)" != "$before" ] || fail "$n: join --force did not replace j$n"
  # a flow's coll_write: a collection, and file:
  before=$(digest s$n)
  refused "$n" "$n: run coll_write" "stage 'write': collection s$n exists in .* \(replace: true replaces it" \
    run "$flows/sort.yaml" in=a$n out=s$n
  [ "$(digest s$n)" = "$before" ] || fail "$n: a refused coll_write changed s$n"
  refused "$n" "$n: flow check" "stage 'write': collection s$n exists" \
    flow check "$flows/sort.yaml" in=a$n out=s$n
  refused "$n" "$n: run coll_write file:" "stage 'write': $tmp/sorted$n exists \(replace: true" \
    run "$flows/sort.yaml" in=a$n "out=file:$tmp/sorted$n"
  [ "$(cat "$tmp/sorted$n")" = old ] || fail "$n: a refused coll_write changed file:"
  r "$n" run "$flows/sort.yaml" in=a$n "out=file:$tmp/sorted$n" replace=true \
    >/dev/null 2>&1 || fail "$n: run file: replace=true"
  [ "$(cksum <"$tmp/sorted$n")" = "$(digest s$n)" ] \
    || fail "$n: coll_write file: with replace: true did not replace"
done

# file_write, one instance and two (PATH.i)
cat >"$tmp/fw.yaml" <<YAML
params: {out: "", replace: false, n: "0-0"}
stages:
  - {name: g, module: gen, ranks: "\${n}", args: {records: 100}}
  - {name: w, module: file_write, ranks: "\${n}",
     args: {path: "\${out}", replace: "\${replace}"}}
edges:
  - {from: g, to: w, kind: one-to-one}
YAML
echo old >"$tmp/fw"
refused 1 "file_write" "stage 'w': $tmp/fw exists \(replace: true" \
  run "$tmp/fw.yaml" "out=$tmp/fw"
[ "$(cat "$tmp/fw")" = old ] || fail "a refused file_write changed the file"
r 1 run "$tmp/fw.yaml" "out=$tmp/fw" replace=true >/dev/null 2>&1 \
  || fail "file_write replace=true"
[ "$(stat -c %s "$tmp/fw")" = 10000 ] || fail "file_write replace=true did not replace"
echo old >"$tmp/fw2.1"
refused 2 "file_write, 2 instances" "stage 'w': $tmp/fw2.1 exists \(replace: true" \
  run "$tmp/fw.yaml" "out=$tmp/fw2" n=0-1
[ -e "$tmp/fw2.0" ] && fail "a refused file_write wrote instance 0's file"
[ "$(cat "$tmp/fw2.1")" = old ] || fail "a refused file_write changed instance 1's file"

clitest_end test_noreplace
