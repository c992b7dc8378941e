#!/bin/bash
# test_progress.sh - the progress line (river/progress.h) of the river
# command, on 2 ranks (rank 0's stderr; RIVER_PROGRESS_EVERY=0.2 so that
# a run of about 2 s, with emulated disks, shows several lines):
#  - through a pipe: plain lines, no carriage return, one per round at
#    most (never the same line from two ranks); the counts read and
#    written never fall and never pass the total, at most one line per
#    interval (rank 0's only); a closing line with
#    every record read and written, once; slowest and fastest rank named;
#    the sorted output still validates;
#  - through a terminal (script): the line redrawn in place (a carriage
#    return and an erase to the line's end), the closing line ending it
#    (the ranks' stderr is a pipe: river-mpirun tells them its own is a
#    terminal, RIVER_PROGRESS_TTY);
#  - river run: the line named run, with no total; river gen, copy-in,
#    copy-out and valsort: one count, of their records and MB (copy-out's
#    bytes the same as with no line); fsck still OK with the line on;
#  - --quiet, RIVER_PROGRESS=0, and a run shorter than one line: no line;
#  - RIVER_PROGRESS=maybe and RIVER_PROGRESS_EVERY=-1: a warning naming
#    the variable, said once, and the run goes on (RIVER_PROGRESS_EVERY
#    not even looked at with the line off).
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
export RIVER_PROGRESS=1
N=40000
emul="--disk-rate 2Mi"
r 2 gen --force --records $N g >/dev/null || fail "gen"

# lines FILE: the periodic progress lines of river sort in FILE.
lines() { grep -E '^sort: read [0-9]+, wrote [0-9]+ records of '$N "$1"; }

# --- through a pipe
RIVER_PROGRESS_EVERY=0.2 r 2 sort $emul g s1 >"$tmp/out" 2>"$tmp/err" \
  || fail "sort with progress"
n=$(lines "$tmp/err" | wc -l)
[ "$n" -ge 3 ] || { fail "only $n progress lines through a pipe"; cat "$tmp/err"; }
grep -q $'\r' "$tmp/err" && fail "a carriage return through a pipe"
lines "$tmp/err" | awk -v n=$N '
  { sub(/,$/, "", $3); r = $3 + 0; w = $5 + 0
    if (r < lr || w < lw || r > n || w > n) bad = 1; lr = r; lw = w }
  END { exit bad }' || { fail "progress counts fell or passed $N"; lines "$tmp/err"; }
# At most a line per 0.2 s (not one from each rank): the run's time from
# its "done in" line.
awk -v n="$n" '/^run: .* done in/ { t = $(NF - 4) }
               END { exit !(n <= t / 0.2 + 2) }' "$tmp/out" \
  || { fail "$n progress lines: more than one per 0.2 s"; cat "$tmp/out"; }
lines "$tmp/err" | grep -Eq 'ETA [0-9]+:[0-9]+; slowest rank [01] \([0-9.]+ [kM]?B/s\), fastest rank [01] \(' \
  || { fail "no ETA or slowest and fastest rank"; lines "$tmp/err" | head -n 2; }
[ "$(grep -c "^sort: done: read $N records (4.00 MB), wrote $N (4.00 MB) in [0-9]*:[0-9]*; slowest rank" "$tmp/err")" -eq 1 ] \
  || { fail "no closing line with every record, once"; tail -n 3 "$tmp/err"; }
r 2 valsort s1 --input g >"$tmp/out" 2>&1 || { fail "valsort"; cat "$tmp/out"; }

# --- through a terminal
if RIVER_PROGRESS_EVERY=0.2 script -qefc \
     "'$run' -n 2 '$river' sort $emul g s2" /dev/null >"$tmp/tty" 2>&1; then
  grep -q $'\r''sort: read [0-9]*, wrote [0-9]* records of '$N'.*'$'\e''\[K' "$tmp/tty" \
    || { fail "no line redrawn on a terminal"; head -c 400 "$tmp/tty" | od -c | head; }
  grep -q $'\r''sort: done: read '$N' records.*slowest rank.*'$'\r''\?$' "$tmp/tty" \
    || { fail "no closing line on a terminal"; tail -c 300 "$tmp/tty" | od -c | tail; }
else
  fail "sort on a terminal"; tail -n 5 "$tmp/tty"
fi

# --- river run: no total
RIVER_PROGRESS_EVERY=0.2 r 2 run "${top_srcdir:-.}/flows/sort.yaml" in=g out=s3 \
  disk_rate=2000000 >"$tmp/out" 2>"$tmp/err" || fail "run with progress"
grep -Eq '^run: read [0-9]+, wrote [0-9]+ records, [0-9.]+ [kM]?B/s in' "$tmp/err" \
  || { fail "no progress line from river run"; cat "$tmp/err"; }
grep -q ' of [0-9]* (' "$tmp/err" && fail "river run's line gives a total"
grep -q "^run: done: read $N records" "$tmp/err" || fail "river run: no closing line"

# one_count LABEL: the lines of a command with one count, of 2097152
# records (2Mi, 209,715,200 bytes, printed as 210 MB), in $tmp/err: at
# least one (a line every 0.02 s, and each command takes longer than
# that here, sanitizers or not), its share and size of the total, and
# one closing line.
one_count() {
  grep -Eq "^$1: [0-9]+ of 2097152 records \([0-9.]+%\), [0-9.]+ [kM]?B of 210 MB, [0-9.]+ [kMG]?B/s, [0-9]+:[0-9]+" "$tmp/err" \
    || { fail "$1: no progress line"; head -n 3 "$tmp/err"; }
  [ "$(grep -c "^$1: done: 2097152 records, 210 MB in " "$tmp/err")" -eq 1 ] \
    || { fail "$1: no closing line, once"; tail -n 2 "$tmp/err"; }
}

# --- river gen and copy-in: one count, of a total in records and MB
RIVER_PROGRESS_EVERY=0.02 r 2 gen --force --records 2Mi big >"$tmp/out" 2>"$tmp/err" \
  || fail "gen with progress"
one_count gen
r 2 --quiet copy-out big >"$tmp/big.dat" 2>/dev/null || fail "copy-out big"
RIVER_PROGRESS_EVERY=0.02 r 2 copy-in --force "$tmp/big.dat" big2 >"$tmp/out" \
  2>"$tmp/err" || fail "copy-in with progress"
one_count copy-in
# --- copy-out and valsort: rank 0 counts what it takes, every rank's
# rate is what it served (graduated declustering) or checked
RIVER_PROGRESS_EVERY=0.02 r 2 copy-out big2 >"$tmp/big2.dat" 2>"$tmp/err" \
  || fail "copy-out with progress"
one_count copy-out
cmp -s "$tmp/big.dat" "$tmp/big2.dat" || fail "copy-out with progress: other bytes"
rm -f "$tmp/big.dat" "$tmp/big2.dat"
r 2 --quiet sort big2 bigs >/dev/null 2>&1 || fail "sort big2"
RIVER_PROGRESS_EVERY=0.02 r 2 valsort bigs >"$tmp/out" 2>"$tmp/err" \
  || fail "valsort with progress"
one_count valsort
# fsck counts copy by copy (one a rank here: too coarse for a line),
# and still says OK
RIVER_PROGRESS_EVERY=0.02 r 2 fsck big2 >"$tmp/out" 2>"$tmp/err" \
  || fail "fsck with progress"
grep -q '^fsck big2: OK' "$tmp/out" || { fail "fsck big2"; cat "$tmp/out"; }
if grep -q '^fsck: done' "$tmp/err" && ! grep -q '^fsck: [0-9]* of' "$tmp/err"; then
  fail "fsck: a closing line without a line before it"
fi

# --- no line
RIVER_PROGRESS_EVERY=0.2 r 2 sort --quiet $emul g s4 >"$tmp/out" 2>"$tmp/err" \
  || fail "sort --quiet"
grep -q '^sort: \(read\|done\)' "$tmp/err" && fail "a progress line with --quiet"
RIVER_PROGRESS=0 RIVER_PROGRESS_EVERY=0.2 r 2 sort $emul g s5 >"$tmp/out" \
  2>"$tmp/err" || fail "sort with RIVER_PROGRESS=0"
grep -q '^sort: \(read\|done\)' "$tmp/err" && fail "a progress line with RIVER_PROGRESS=0"
RIVER_PROGRESS_EVERY=30 r 2 sort g s6 >"$tmp/out" 2>"$tmp/err" \
  || fail "a quick sort"
grep -q '^sort: \(read\|done\)' "$tmp/err" \
  && fail "a progress line from a run shorter than one line's interval"

# --- settings not understood: warned about once (rank 0's decides),
# taken as unset; the run goes on (a display setting never fails a job)
RIVER_PROGRESS=maybe r 2 sort g s7 >"$tmp/out" 2>"$tmp/err" \
  || fail "sort with RIVER_PROGRESS=maybe"
[ "$(grep -c 'warn.*RIVER_PROGRESS=maybe: expected 1, on' "$tmp/err")" -eq 1 ] \
  || { fail "RIVER_PROGRESS=maybe not warned about once"; cat "$tmp/err"; }
RIVER_PROGRESS_EVERY=-1 r 2 sort g s8 >"$tmp/out" 2>"$tmp/err" \
  || fail "sort with RIVER_PROGRESS_EVERY=-1"
[ "$(grep -c 'warn.*RIVER_PROGRESS_EVERY=-1: expected seconds' "$tmp/err")" -eq 1 ] \
  || { fail "RIVER_PROGRESS_EVERY=-1 not warned about once"; cat "$tmp/err"; }
RIVER_PROGRESS=0 RIVER_PROGRESS_EVERY=-1 r 2 sort g s9 >"$tmp/out" 2>"$tmp/err" \
  || fail "sort with the line off and RIVER_PROGRESS_EVERY=-1"
grep -q 'RIVER_PROGRESS_EVERY' "$tmp/err" \
  && fail "RIVER_PROGRESS_EVERY warned about with the line off"
r 2 valsort s8 --input g >"$tmp/out" 2>&1 || { fail "valsort s8"; cat "$tmp/out"; }

clitest_end test_progress
