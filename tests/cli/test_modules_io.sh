#!/bin/bash
# test_modules_io.sh - the I/O built-in modules under `river run` at
# 1..4 ranks (doc/modules.md): coll_read (through GD, unordered and
# stream, mirrored or not) and coll_write (atomic, mirrored), file_read
# and file_write, stdin and stdout. Outcomes: content digests of the
# count module (summed over its instances) equal to the reference
# gen -> count flow's, and byte equality with `river gen` + copy-out;
# errors: one message, non-zero exit on every rank, no hang.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
flows=${top_srcdir:-.}/tests/flows/run


# The reference: gen -> count on one rank, and `river gen`'s records.
r 1 run "$flows/gen_count.yaml" out="$tmp/ref" gen_ranks=0-0 \
  count_ranks=0-0 >/dev/null || fail "the one-rank reference run"
want=$(total "$tmp/ref")
[ "${want%% *}" = 20000 ] || fail "the reference counted ${want%% *} records"
r 3 gen --force g --records 20000 --seed 1 --mirror 2 >/dev/null \
  && r 1 copy-out --force g -o "$tmp/g.dat" || fail "river gen + copy-out"
r 2 gen --force g1 --records 20000 --seed 1 >/dev/null || fail "river gen g1"

# ------------------------------------------------------------ coll_read
for n in $(ranks 1 2 3 4); do
  for c in g g1; do
    for order in unordered stream; do
      rm -f "$tmp"/c.*
      r "$n" run "$flows/coll_count.yaml" coll=$c order=$order \
        out="$tmp/c" >"$tmp/out" 2>&1 || { fail "$n ranks: coll_read $c $order"
                                            head -n 5 "$tmp/out"; continue; }
      [ "$(total "$tmp/c")" = "$want" ] \
        || fail "$n ranks: coll_read $c $order: $(total "$tmp/c"), want $want"
    done
  done
  # Both stages on every rank, reader and counter sharing them.
  rm -f "$tmp"/c.*
  r "$n" run "$flows/coll_count.yaml" coll=g read_ranks=0-$((n - 1)) \
    count_ranks=0-$((n - 1)) out="$tmp/c" >/dev/null 2>&1 \
    && [ "$(total "$tmp/c")" = "$want" ] || fail "$n ranks: coll_read shared"
done

# ----------------------------------------------------------- coll_write
for n in $(ranks 1 2 3 4); do
  m=$((n > 1 ? 2 : 1))
  # One-to-one from gen on the same ranks: instance i writes gen's rows
  # [20000 i/n, 20000 (i+1)/n) as partition i, as `river gen` does.
  r "$n" run "$flows/gen_coll.yaml" coll=w$n kind=one-to-one mirror=$m \
    >"$tmp/out" 2>&1 || { fail "$n ranks: gen -> coll_write"; head -n 5 "$tmp/out"; }
  r 2 copy-out --force w$n -o "$tmp/w.dat" && cmp -s "$tmp/w.dat" "$tmp/g.dat" \
    || fail "$n ranks: coll_write's copy-out differs from river gen's"
  r 1 info w$n 2>/dev/null | grep -Eq "^layout +partitioned, $n partitions?.* $m cop" \
    || fail "$n ranks: coll_write's layout or mirror=$m not recorded"
  # Through a push edge the partitions differ; the content does not.
  r "$n" run "$flows/gen_coll.yaml" coll=p$n layout=interleaved block_size=16Ki \
    >/dev/null 2>&1 || fail "$n ranks: gen -> coll_write (push)"
  rm -f "$tmp"/c.*
  r 1 run "$flows/coll_count.yaml" coll=p$n order=stream out="$tmp/c" \
    >/dev/null 2>&1 && [ "$(total "$tmp/c")" = "$want" ] \
    || fail "$n ranks: coll_write (push, interleaved): $(total "$tmp/c")"
done
# Writing over an existing collection replaces it atomically.
r 2 run "$flows/gen_coll.yaml" coll=w1 records=500 >/dev/null 2>&1 \
  && r 1 copy-out --force w1 -o "$tmp/w.dat" && [ "$(stat -c %s "$tmp/w.dat")" = 50000 ] \
  || fail "coll_write over an existing collection"

# ------------------------------------------------- file_read, file_write
for n in $(ranks 1 2 3 4); do
  rm -f "$tmp"/o.dat* "$tmp"/c.*
  # Readers on every rank, one writer: the records in any order...
  r "$n" run "$flows/file_count.yaml" in="$tmp/g.dat" out="$tmp/c" \
    >/dev/null 2>&1 && [ "$(total "$tmp/c")" = "$want" ] \
    || fail "$n ranks: file_read -> count: $(total "$tmp/c")"
  # ...and one reader, one writer: the same bytes.
  r "$n" run "$flows/file_copy.yaml" in="$tmp/g.dat" out="$tmp/o.dat" \
    read_ranks=$((n - 1))-$((n - 1)) >"$tmp/out" 2>&1 \
    && cmp -s "$tmp/o.dat" "$tmp/g.dat" || fail "$n ranks: file round trip"
  # Several writers: OUT.INSTANCE, together the same records.
  r "$n" run "$flows/file_copy.yaml" in="$tmp/g.dat" out="$tmp/o.dat" \
    read_ranks=0-$((n - 1)) write_ranks=0-$((n - 1)) >/dev/null 2>&1 \
    || fail "$n ranks: file_write x$n"
  [ "$n" -gt 1 ] && { cat "$tmp"/o.dat.[0-9]* >"$tmp/o.all"
    rm -f "$tmp"/c.*
    r 1 run "$flows/file_count.yaml" in="$tmp/o.all" out="$tmp/c" \
      >/dev/null 2>&1 && [ "$(total "$tmp/c")" = "$want" ] \
      || fail "$n ranks: file_write's $n parts: $(total "$tmp/c")"; }
done
# A failure upstream (a corrupt block that coll_read cannot read) also
# ends file_write's input: the old file stays byte for byte, with its
# mode, and no temporary is left; a flow that succeeds keeps the mode.
r 2 gen --force bad --records 200000 >/dev/null 2>&1 || fail "gen bad"
f=$(part_file bad 1 1)
flip "$f" $(( $(stat -c %s "$f") / 2 ))
head -c 1000000 /dev/urandom >"$tmp/old.dat"
cp "$tmp/old.dat" "$tmp/keep.dat"
chmod 600 "$tmp/keep.dat"
expect_fail 2 "no readable copy" run "$flows/coll_file.yaml" coll=bad \
  out="$tmp/keep.dat"
cmp -s "$tmp/keep.dat" "$tmp/old.dat" \
  || fail "a failed flow replaced file_write's target ($(stat -c %s "$tmp/keep.dat") bytes)"
ls "$tmp" | grep -q "^keep.dat.river-tmp" && fail "a failed flow left file_write's temporary"
r 2 run "$flows/coll_file.yaml" coll=g out="$tmp/keep.dat" >/dev/null 2>&1 \
  && cmp -s "$tmp/keep.dat" "$tmp/g.dat" || fail "coll_read -> file_write"
[ "$(stat -c %a "$tmp/keep.dat")" = 600 ] \
  || fail "file_write turned mode 600 into $(stat -c %a "$tmp/keep.dat")"

# Another schema: 16-byte records of two uint64.
head -c 16000 "$tmp/g.dat" >"$tmp/s16.dat"
r 2 run "$flows/file_copy.yaml" in="$tmp/s16.dat" out="$tmp/o16.dat" \
  schema="a:uint64,b:uint64" >/dev/null 2>&1 \
  && cmp -s "$tmp/o16.dat" "$tmp/s16.dat" || fail "file round trip, 16-byte schema"
rm -f "$tmp"/c.*
r 3 run "$flows/file_count.yaml" in="$tmp/s16.dat" out="$tmp/c" \
  schema="a:uint64,b:uint64" >/dev/null 2>&1
[ "$(total "$tmp/c" | cut -d' ' -f1)" = 1000 ] || fail "file_read, 16-byte schema"

# ---------------------------------------------------------- stdin, stdout
for n in $(ranks 1 2 3 4); do
  rm -f "$tmp"/c.*
  if [ "$n" -gt 1 ]; then cr=1-$((n - 1)); else cr=0-0; fi
  r_in pipe "$n" "$tmp/g.dat" run "$flows/stdin_count.yaml" count_ranks=$cr \
    out="$tmp/c" >/dev/null 2>"$tmp/err" && [ "$(total "$tmp/c")" = "$want" ] \
    || { fail "$n ranks: stdin -> count: $(total "$tmp/c")"; head -n 5 "$tmp/err"; }
  # gen on one rank: stdout gets the records in order, only them.
  r "$n" run "$flows/gen_stdout.yaml" gen_ranks=$((n - 1))-$((n - 1)) \
    2>"$tmp/err" | cmp -s - "$tmp/g.dat" || fail "$n ranks: gen | stdout | cmp"
  grep -q "^run: stage out .*stdout" "$tmp/err" || fail "$n ranks: totals not on stderr"
  # gen everywhere: any order, the same records.
  rm -f "$tmp"/c.*
  r "$n" run "$flows/gen_stdout.yaml" gen_ranks=0-$((n - 1)) 2>/dev/null \
    >"$tmp/o.dat" \
    && r 1 run "$flows/file_count.yaml" in="$tmp/o.dat" out="$tmp/c" \
      >/dev/null 2>&1 && [ "$(total "$tmp/c")" = "$want" ] \
    || fail "$n ranks: gen x$n | stdout: $(total "$tmp/c")"
done

# --------------------------------------------------------------- errors
expect_fail 3 "nosuch" run "$flows/coll_count.yaml" coll=nosuch out="$tmp/c"
[ "$(grep -c 'collection nosuch not found' "$tmp/err")" -eq 1 ] \
  || fail "missing collection: not one message"
expect_fail 3 "'bad' is neither" run "$flows/coll_count.yaml" order=bad coll=g
[ "$(grep -c "'bad' is neither" "$tmp/err")" -eq 1 ] \
  || fail "bad order: not one message"
expect_fail 3 "'bad' is neither 'partitioned'" run "$flows/gen_coll.yaml" \
  coll=x layout=bad
[ "$(grep -c "'bad' is neither" "$tmp/err")" -eq 1 ] \
  || fail "bad layout: not one message"
expect_fail 2 "3 copies need 1..2" run "$flows/gen_coll.yaml" coll=x mirror=3
expect_fail 3 "cannot read $tmp/nofile: No such file" run \
  "$flows/file_count.yaml" in="$tmp/nofile" out="$tmp/c"
[ "$(grep -c "nofile" "$tmp/err")" -eq 1 ] || fail "missing file: not one message"
expect_fail 2 "cannot read $tmp: not a regular file" run \
  "$flows/file_count.yaml" in="$tmp" out="$tmp/c"
head -c 150 "$tmp/g.dat" >"$tmp/odd.dat"
expect_fail 4 "150 bytes are not a whole number of 100-byte records" run \
  "$flows/file_copy.yaml" in="$tmp/odd.dat" out="$tmp/x.dat"
[ -e "$tmp/x.dat" ] && fail "a failed file_read -> file_write left its output"
expect_fail 3 "argument 'schema': 'a:nosuch' is not a schema" run \
  "$flows/file_count.yaml" in="$tmp/g.dat" schema=a:nosuch out="$tmp/c"
[ "$(grep -c "nosuch" "$tmp/err")" -le 2 ] || fail "bad schema: said on every rank"
expect_fail 2 "write .*/nodir/x.dat.*|create .*/nodir/x.dat" run \
  "$flows/file_copy.yaml" in="$tmp/g.dat" out="$tmp/nodir/x.dat"
head -c 150 "$tmp/g.dat" >"$tmp/g150.dat"
r_in pipe 2 "$tmp/g150.dat" run "$flows/stdin_count.yaml" out="$tmp/c" \
  >/dev/null 2>"$tmp/err" && fail "stdin with a partial record succeeded"
grep -q "ends with 50 bytes, not a whole 100-byte record" "$tmp/err" \
  || fail "stdin with a partial record: no message"
expect_fail 3 "module stdout runs as one instance" run \
  "$flows/gen_stdout.yaml" out_ranks=0-1
r 1 ls 2>/dev/null | grep -qw x && fail "a failed coll_write left collection x"

clitest_end test_modules_io
