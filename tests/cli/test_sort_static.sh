#!/bin/bash
# test_sort_static.sh - river sort's static baseline and emulated rates:
#  - `sort --static` (fixed readers, reader i feeding partitioner i)
#    validates at 2 and 4 ranks, also with one disk directory lost (the
#    fixed reader fails over to the mirror);
#  - with emulated disks and partitioner CPUs and one of each slowed,
#    River and static both validate, and the report line gives the
#    fluid ideal, which the measured time does not beat;
#  - a stage's cpu_rate slows it (a run takes at least bytes / rate)
#    and changes nothing in what it gets; a stage's cpu_rate and
#    coll_write's disk_rate start with no work banked, also when the
#    first use comes after a wait;
#  - bad --perturb, --disk-rate, read_policy and coll_read run_blocks
#    values fail on every rank naming the option or argument, and leave
#    no OUT; coll_read with run_blocks 2 reads every record once.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
N=20000
# Rates low enough that the emulation's tolerance (ideal_ok) is a small
# part of the ideal (0.9 s at 4 ranks, 1.3 s at 2).
emul="--disk-rate 2Mi --cpu-rate 2Mi"

# took_at_least FILE SECONDS WHAT: the run's "done in" time in FILE is
# at least SECONDS (emulated work cannot go faster), else fail WHAT.
took_at_least() {
  awk -v min="$2" '/^run: .* done in/ { t = $(NF - 4) }
                   END { exit !(t >= min) }' "$1" || { fail "$3"; cat "$1"; }
}

# ideal_ok FILE: the report line in FILE has a fluid ideal, and the
# measured time does not beat it by more than the emulation lets work
# start early: each emulated stage may bank at most 50 ms of its own
# work (a bucket's burst, rate / 20: doc/design.md, "empty at their
# first use"), the partitioners and the writers one after the other
# (100 ms), GD's disks read at most a block ahead (IN's 64 KiB blocks
# at 1 MB/s, 65 ms), and the report's grain (1 ms): 0.17 s, under a
# fifth of the ideal here, where "20% under the ideal" was the bound
# before (with 1 MiB blocks the read-ahead alone was 0.5 s).
ideal_ok() {
  awk '/^sort: .* fluid ideal/ {
         for (i = 1; i <= NF; i++) {
           if ($(i + 1) == "s," && $(i - 1) == "in") t = $i
           if ($(i - 1) == "ideal") ideal = $i
         }
         found = 1
       }
       END { exit !(found && t > 0 && ideal > 0 && t >= ideal - 0.17) }' "$1"
}

for n in $(ranks 2 4); do
  r "$n" gen --force "in$n" --records $N --skew --mirror 2 --seed $n \
    --block-size 65536 >/dev/null 2>&1 \
    || fail "$n ranks: gen"
  r "$n" sort "in$n" "st$n" --static >"$tmp/out" 2>&1 \
    || { fail "$n ranks: sort --static"; head -n 5 "$tmp/out"; }
  grep -q "^sort: static in$n -> st$n: $N records" "$tmp/out" \
    || fail "$n ranks: no report line for --static"
  r "$n" valsort "st$n" --input "in$n" >/dev/null 2>&1 \
    || fail "$n ranks: --static output does not validate"
  for policy in "" --static; do
    out=em$n${policy:+s}
    r "$n" sort "in$n" "$out" $policy $emul \
      --perturb "disk:1=0.5;cpu:$((n - 1))=0.25" >"$tmp/out" 2>&1 \
      || { fail "$n ranks: emulated sort $policy"; head -n 5 "$tmp/out"; }
    ideal_ok "$tmp/out" \
      || { fail "$n ranks $policy: report"; grep '^sort:' "$tmp/out"; }
    r "$n" valsort "$out" --input "in$n" >/dev/null 2>&1 \
      || fail "$n ranks: emulated $policy output does not validate"
  done
done

# A lost disk: the static readers fail over to the other copy.
rm -rf "$root/disk1"
r 4 sort in4 lost --static >/dev/null 2>&1 || fail "--static, disk 1 lost"
r 4 valsort lost --input in4 >/dev/null 2>&1 \
  || fail "--static with disk 1 lost: valsort"

# cpu_rate: 2 MB at 2 + 1 MiB/s cannot take under 0.6 s; same digest.
flows=${top_srcdir:-.}/tests/flows/run
r 3 run "$flows/gen_slow.yaml" >"$tmp/fast" 2>&1 || fail "gen_slow, full speed"
r 3 run "$flows/gen_slow.yaml" cpu_rate=2Mi perturb=cpu:1=0.5 \
  >"$tmp/slow" 2>&1 || fail "gen_slow, emulated"
# digest FILE: the records, sum and xor over count's lines in FILE.
digest() {
  local n=0 sum=0 x=0 stage inst cnt s xr
  while read -r stage inst cnt s xr; do
    [ "$stage" = sink ] || continue
    n=$((n + cnt)); sum=$((sum + 0x$s)); x=$((x ^ 0x$xr))
  done <"$1"
  echo "$n $sum $x"
}
[ "$(digest "$tmp/slow")" = "$(digest "$tmp/fast")" ] \
  && [ "$(digest "$tmp/fast" | cut -d' ' -f1)" = $N ] \
  || fail "cpu_rate changed the records"
took_at_least "$tmp/slow" 0.6 "cpu_rate did not slow the stage"
# A stage's emulated CPU and disk start with nothing banked: 2,000,000
# bytes at 4 MiB/s take at least 0.4768 s (with the 50 ms burst full at
# the start, as before issue 13's ninth session, 0.429 s).
r 2 run "$flows/gen_slow.yaml" cpu_rate=4Mi >"$tmp/cpu4" 2>&1 \
  || fail "gen_slow, one sink at 4 MiB/s"
took_at_least "$tmp/cpu4" 0.4765 "cpu_rate: free work at the start"
# chain COLL [MID]: a flow spec, gen (rank 0) -> a stage `mid` given by
# MID ("module: M, args: {...}"; none if empty) -> coll_write of COLL
# at 4 MiB/s, the last two on rank 1.
chain() {
  local coll=$1 mid=$2
  printf '%s\n' 'stages:' \
    '  - {name: src, module: gen, ranks: 0-0, args: {records: 20000}}' \
    ${mid:+"  - {name: mid, $mid, ranks: rest}"} \
    "  - {name: out, module: coll_write, ranks: rest, args: {coll: $coll, disk_rate: 4Mi}}" \
    "edges: [{from: src, to: ${mid:+mid\}, {from: mid, to: }out}]"
}
chain w4 "" >"$tmp/w4.yaml"
r 2 run "$tmp/w4.yaml" >"$tmp/disk4" 2>&1 || fail "coll_write at 4 MiB/s"
took_at_least "$tmp/disk4" 0.4765 "disk_rate: free work at the start"
# Nor at the first use after idling: the writer waits through the sort's
# 0.4768 s of emulated CPU (it holds every record before it writes one),
# then writes 0.4768 s; banking 50 ms while it waited, as at 7800fd3,
# the run took 0.913-0.916 s.
chain w5 "module: sort, args: {cpu_rate: 4Mi}" >"$tmp/w5.yaml"
r 2 run "$tmp/w5.yaml" >"$tmp/idle4" 2>&1 || fail "sort, then coll_write at 4 MiB/s"
took_at_least "$tmp/idle4" 0.953 \
  "disk_rate: work banked while idle before the first write"

# Bad values: named, every rank, no OUT.
expect_fail 4 "argument 'perturb': perturbation spec \"cpu:x=1\"" \
  sort in4 bad1 --cpu-rate 1Mi --perturb cpu:x=1
expect_fail 4 "argument 'perturb' names cpu 7; the stage has instances 0..3" \
  sort in4 bad2 $emul --perturb "cpu:7=0.5"
expect_fail 4 "--disk-rate fast: expected an integer" \
  sort in4 bad3 --disk-rate fast
expect_fail 2 "argument 'policy': 'bogus' is not gd, mirror-nogd or nomirror" \
  run "${top_srcdir:-.}/flows/sort.yaml" in=in2 out=bad4 read_policy=bogus
expect_fail 4 "argument 'perturb' names disk 4; collection in4 has disks 0..3" \
  sort in4 bad5 --disk-rate 10Mi --perturb "disk:4=0.5"
expect_fail 2 "sort: --perturb scales emulated rates: give --disk-rate or --cpu-rate" \
  sort in2 bad6 --perturb "disk:0=0.5"
expect_fail 2 "--disk-rate 100: expected an integer in 1024\\.\\." \
  sort in2 bad7 --disk-rate 100
expect_fail 2 "factor \"0.00001\" is outside 0.001..1000" \
  sort in2 bad8 --cpu-rate 1Mi --perturb "cpu:0=0.00001"
printf '%s\n' 'stages:' \
  '  - {name: src, module: gen, ranks: rest, args: {records: 100}}' \
  '  - {name: out, module: coll_write, ranks: rest,' \
  '     args: {coll: bad9, disk_rate: 1Mi, perturb: "disk:3=0.5"}}' \
  'edges: [{from: src, to: out}]' >"$tmp/w.yaml"
expect_fail 3 "stage 'out' instance 0: argument 'perturb' names disk 3; the stage has disks 0..2" \
  run "$tmp/w.yaml"
# coll_read's run_blocks (river_gd_opts.run_blocks): over the most is
# refused on every rank, naming it; 2 (spinning disks) reads every
# record once (the copy, sorted, has IN's count and checksum).
runs_spec() {
  printf '%s\n' 'stages:' \
    "  - {name: in, module: coll_read, ranks: rest, args: {coll: in2, run_blocks: $1}}" \
    "  - {name: out, module: coll_write, ranks: rest, args: {coll: $2}}" \
    'edges: [{from: in, to: out}]' >"$tmp/rb.yaml"
}
runs_spec 2000 bad10
expect_fail 2 "stage 'in' instance [01]: argument 'run_blocks': 2000 is over 1024" \
  run "$tmp/rb.yaml"
runs_spec 2 rb2
r 2 run "$tmp/rb.yaml" >/dev/null 2>&1 || fail "coll_read run_blocks 2"
r 2 sort rb2 rb2s >/dev/null 2>&1 || fail "sort of the run_blocks 2 copy"
r 2 valsort rb2s --input in2 >/dev/null 2>&1 \
  || fail "coll_read run_blocks 2: the copy is not IN's records"
r 1 ls 2>/dev/null | grep -q "^bad" && fail "a failed sort left a collection"

# The sort's writers begin a partition per run (river_pcoll_begin_partition):
# an I/O error or a kill at each step of their commit leaves the old OUT
# (or, killed after the commit, the new one), never a mix; an error
# leaves nothing, a kill what gc lists and removes.
cksum_of() { r 2 valsort "$1" 2>/dev/null | awk '/checksum/ { print $5 }'; }
r 4 gen --force inb --records $N --skew --seed 99 >/dev/null 2>&1 || fail "gen inb"
r 4 sort in4 crash >/dev/null 2>&1 || fail "sort in4 crash"
old=$(cksum_of crash); new=$(cksum_of inb)
[ -n "$old" ] && [ "$old" != "$new" ] || fail "no checksums to tell OUTs apart"
for step in commit-files commit-meta commit-rename; do
  env RIVER_TEST_FAULT=$step:fail "$run" -n 4 "$river" sort inb crash \
    --force >/dev/null 2>&1 && fail "$step failing: the sort succeeded"
  [ "$(cksum_of crash)" = "$old" ] || fail "$step failing: OUT changed"
  r 1 gc 2>&1 | grep -q "^gc: no leftovers" || fail "$step failing: leftovers"
done
for step in commit-files commit-meta commit-rename commit-cleanup; do
  want=$old
  [ $step = commit-cleanup ] && want=$new
  env RIVER_TEST_FAULT=$step:kill "$run" -n 4 "$river" sort inb crash \
    --force >/dev/null 2>&1 && fail "$step: not killed"
  [ "$(cksum_of crash)" = "$want" ] || fail "killed at $step: OUT is a mix"
  r 2 fsck crash >/dev/null 2>&1 || fail "killed at $step: fsck fails"
  r 1 gc 2>&1 | grep -Eq '^gc: [1-9][0-9]* leftover' \
    || fail "killed at $step: gc lists no leftovers"
  r 1 gc --remove >/dev/null 2>&1 || fail "killed at $step: gc --remove"
  r 1 gc 2>&1 | grep -q "^gc: no leftovers" || fail "$step: gc left some"
  [ "$(cksum_of crash)" = "$want" ] || fail "killed at $step: gc damaged OUT"
  [ $step = commit-cleanup ] && { r 4 sort in4 crash --force >/dev/null 2>&1; }
done

# A stage that fails is not charged for the input drained after it:
# 2 MB at 50 KiB/s would take 40 s; the run, charged for the message it
# failed on, takes 2.2 s here. 20 s leaves a loaded machine (or the
# sanitizers) 18 s to start and end a 2-rank job, and a run that
# charges the drain fails by 20 s.
start=$(date +%s)
expect_fail 2 "sort: its input does not fit in memory" \
  run "$flows/sort_drain.yaml" cpu_rate=50Ki
[ $(($(date +%s) - start)) -lt 20 ] || fail "the drain was charged"

clitest_end test_sort_static
