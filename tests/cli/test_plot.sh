#!/bin/bash
# test_plot.sh - scripts/river-plot (doc/stats.md, "Plots"), on the
# hand-made stats file tests/cli/stats-example.json (2 flows on 4
# ranks over 2 nodes, every field of the format, a GD read) and on
# river's own:
#  - the example is a valid stats file (check_stats.py);
#  - it gives 4 PNGs beside it, their paths on stdout in order, nothing
#    on stderr; -o DIR and --prefix put them elsewhere under another
#    name; no temporary left;
#  - a file from before series, spec, args and gd: edges only, and one
#    line on stderr for each plot skipped;
#  - bad input (not JSON, not a stats file, another format version, a
#    key missing, series of unequal lengths, a command that is no text,
#    a NaN, an empty CSV, a CSV with no rows or a cut last row, text, no
#    such file): exit 1, one message naming the file, no PNG; a CSV
#    whose plot would replace it: refused; one in a directory with a dot
#    in its name: its PNG beside it; two inputs of one name into one
#    directory (or --compare): refused (2), nothing written; -o where
#    nothing can be written: one line, exit 1; without matplotlib,
#    exit 2 and the line saying how to install it;
#  - a river-bench CSV (doc/results/dq-read.csv): one PNG, to -o's name
#    or beside it;
#  - river's own: a two-pass sort's stats file on 2 ranks gives all 4
#    plots (series, edges, its read stage's GD read), a copy-out's the
#    GD one.
# Skipped (77) only where neither python3 nor the system's
# /usr/bin/python3 (river-plot falls back to it) can import matplotlib
# (scripts/install-deps installs it).
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
if ! python3 -c 'import matplotlib' 2>/dev/null \
   && ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  echo "SKIP: test_plot: python3 cannot import matplotlib" \
       "(scripts/install-deps installs it)" >&2
  exit 77
fi
plot=${top_srcdir:-.}/scripts/river-plot
example=${top_srcdir:-.}/tests/cli/stats-example.json
PLOTS="throughput timeline edges gd"

# png_ok FILE: FILE is there, not empty, and starts as a PNG does.
png_ok() {
  [ -s "$1" ] || { fail "$1: missing or empty"; return; }
  [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] \
    || fail "$1: not a PNG"
}

# plots_ok DIR STEM NAMES...: stdout ($tmp/out) lists exactly
# DIR/STEM-NAME.png for each NAME, in order, and each is a PNG.
plots_ok() {
  local dir=$1 stem=$2 name want=; shift 2
  for name in "$@"; do
    want="$want$dir/$stem-$name.png"$'\n'
    png_ok "$dir/$stem-$name.png"
  done
  [ "$(cat "$tmp/out")"$'\n' = "$want" ] \
    || { fail "$stem: stdout is not the PNGs' paths"; cat "$tmp/out"; }
}

# has KEY FILE: FILE (a stats file) has KEY (series: in any instance;
# gd: the command's or a flow's).
has() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[2]))
if sys.argv[1] == "series":
    sys.exit(not any("series" in i for f in doc["flows"]
                     for s in f["stages"] for i in s["instances"]))
if sys.argv[1] == "gd":
    sys.exit(not ("gd" in doc or any("gd" in f for f in doc["flows"])))
sys.exit(sys.argv[1] not in doc)
EOF
}

# --- the example: a valid stats file, and every plot from it
python3 "${top_srcdir:-.}/tests/cli/check_stats.py" "$example" \
  "${top_srcdir:-.}/doc/stats.schema.json" --records 5000000 --flows 2 \
  --nodes 2 --gd-bytes 500000000 >"$tmp/check" 2>&1 \
  || { fail "stats-example.json is not a valid stats file"; cat "$tmp/check"; }
mkdir "$tmp/a"
cp "$example" "$tmp/a/run.json"
"$plot" "$tmp/a/run.json" >"$tmp/out" 2>"$tmp/err" \
  || { fail "river-plot run.json: exit $?"; cat "$tmp/err"; }
plots_ok "$tmp/a" run $PLOTS
[ -s "$tmp/err" ] && { fail "river-plot run.json said something"; cat "$tmp/err"; }
[ "$(ls -A "$tmp/a" | wc -l)" -eq 5 ] \
  || { fail "more than the PNGs left beside run.json"; ls -A "$tmp/a"; }
mkdir "$tmp/b"
"$plot" -o "$tmp/b" --prefix p1 "$example" >"$tmp/out" 2>"$tmp/err" \
  || { fail "river-plot -o --prefix: exit $?"; cat "$tmp/err"; }
plots_ok "$tmp/b" p1 $PLOTS

# --- a file from before series, spec, args and gd: edges only
python3 - "$example" "$tmp/old.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
del doc["gd"]
for f in doc["flows"]:
    del f["spec"]
    for s in f["stages"]:
        del s["args"]
        for i in s["instances"]:
            del i["series"]
json.dump(doc, open(sys.argv[2], "w"))
EOF
"$plot" "$tmp/old.json" >"$tmp/out" 2>"$tmp/err" \
  || { fail "river-plot old.json: exit $?"; cat "$tmp/err"; }
plots_ok "$tmp" old edges
for name in throughput timeline gd; do
  [ "$(grep -c "^river-plot: .*old.json: no $name plot: " "$tmp/err")" -eq 1 ] \
    || { fail "old.json: no line saying why no $name plot"; cat "$tmp/err"; }
done
[ "$(wc -l <"$tmp/err")" -eq 3 ] || { fail "old.json: more than 3 lines"; cat "$tmp/err"; }

# --- bad input: exit 1, one line naming the file, no PNG
mkdir "$tmp/bad"
head -c 300 "$example" >"$tmp/bad/cut.json"
echo '{"hello": 1}' >"$tmp/bad/other.json"
sed 's|"river-stats/1"|"river-stats/2"|' "$example" >"$tmp/bad/v2.json"
python3 - "$example" "$tmp/bad" <<'EOF'
import json, sys
def broken(name, change):
    doc = json.load(open(sys.argv[1]))
    change(doc)
    json.dump(doc, open("%s/%s" % (sys.argv[2], name), "w"))
broken("norank.json",
       lambda d: d["flows"][1]["stages"][0]["instances"][2].pop("rank"))
broken("short.json", lambda d: d["flows"][0]["stages"][1]["instances"][0]
       ["series"]["t"].pop())
broken("noflows.json", lambda d: d.pop("flows"))
broken("cmdnum.json", lambda d: d["job"].__setitem__("command", 42))
EOF
# NaN, which Python's json takes and JSON (and jansson) does not
sed '0,/"t": \[0\.0/s//"t": [NaN/' "$example" >"$tmp/bad/nan.json"
grep -q NaN "$tmp/bad/nan.json" || fail "test setup: no NaN planted"
# a CSV whose last row a killed benchmark cut short
head -c -20 "${top_srcdir:-.}/doc/results/dq-read.csv" >"$tmp/bad/cutrow.csv"
: >"$tmp/bad/empty.csv"
head -n 1 "${top_srcdir:-.}/doc/results/dq-read.csv" >"$tmp/bad/header.csv"
echo "some text" >"$tmp/bad/notes.txt"
# bad NAME PATTERN: river-plot on $tmp/bad/NAME fails (1) with one line
# naming it and matching PATTERN, and writes nothing.
bad() {
  local rc=0
  "$plot" "$tmp/bad/$1" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ $rc -eq 1 ] || fail "$1: exit $rc, not 1"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] \
    && grep -q "^river-plot: $tmp/bad/$1: $2" "$tmp/err" \
    || { fail "$1: not one line naming it, matching /$2/"; cat "$tmp/err"; }
  [ -s "$tmp/out" ] && fail "$1: a path on stdout"
  ls -A "$tmp/bad" | grep -qv '\.\(json\|csv\|txt\)$' \
    && { fail "$1: something written"; ls -A "$tmp/bad"; }
}
bad cut.json 'not JSON'
bad other.json 'not a River stats file'
bad v2.json 'format "river-stats/2"; this river-plot reads river-stats/1'
bad norank.json 'flows\[1\]\.stages\[0\]\.instances\[2\]: no rank'
bad short.json 'flows\[0\]\.stages\[1\]\.instances\[0\]\.series: .* has 5 values, t has 4'
bad noflows.json 'top level: no flows'
bad empty.csv 'empty'
bad header.csv 'has no rows'
bad notes.txt 'neither a River stats file (JSON) nor a river-bench CSV'
bad missing.json 'No such file'
bad cmdnum.json 'job: command is not a string'
bad nan.json 'not JSON (NaN is not a JSON number)'
bad cutrow.csv 'row [0-9]* has not the header.s 11 fields (a row cut short?)'
# a CSV's plot never replaces it, nor lands outside its directory
mkdir -p "$tmp/same"
cp "${top_srcdir:-.}/doc/results/dq-read.csv" "$tmp/same/same.png"
rc=0
"$plot" "$tmp/same/same.png" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 1 ] && grep -q "same.png: its plot would replace it" "$tmp/err" \
  || { fail "a CSV named same.png: exit $rc"; cat "$tmp/err"; }
cmp -s "$tmp/same/same.png" "${top_srcdir:-.}/doc/results/dq-read.csv" \
  || fail "a CSV named same.png was replaced"
mkdir -p "$tmp/my.dir"
cp "${top_srcdir:-.}/doc/results/dq-read.csv" "$tmp/my.dir/bench"
"$plot" "$tmp/my.dir/bench" >"$tmp/out" 2>"$tmp/err" \
  || { fail "river-plot my.dir/bench: exit $?"; cat "$tmp/err"; }
[ "$(cat "$tmp/out")" = "$tmp/my.dir/bench.png" ] && png_ok "$tmp/my.dir/bench.png" \
  || { fail "a CSV without an extension in my.dir: not my.dir/bench.png"; cat "$tmp/out"; }
[ -e "$tmp/my.png" ] && fail "a CSV in my.dir: a PNG outside it"
# two inputs of one name into one directory: refused before any PNG
mkdir -p "$tmp/twin/a" "$tmp/twin/b" "$tmp/twin/o"
cp "$example" "$tmp/twin/a/s.json"
cp "$example" "$tmp/twin/b/s.json"
rc=0
"$plot" -o "$tmp/twin/o" "$tmp/twin/a/s.json" "$tmp/twin/b/s.json" \
  >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 2 ] && grep -q "would have the same names" "$tmp/err" \
  || { fail "two inputs of one name: exit $rc"; cat "$tmp/err"; }
[ -z "$(ls -A "$tmp/twin/o")" ] || fail "two inputs of one name: a PNG written"
rc=0
"$plot" --compare -o "$tmp/twin/o" "$tmp/twin/a/s.json" "$tmp/twin/b/s.json" \
  >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 2 ] && grep -q "two files named s" "$tmp/err" \
  || { fail "--compare of two files of one name: exit $rc"; cat "$tmp/err"; }
# -o where nothing can be written: one line, exit 1, no traceback
rc=0
"$plot" -o /proc/self "$example" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 1 ] && grep -q "cannot write" "$tmp/err" && ! grep -q Traceback "$tmp/err" \
  || { fail "-o /proc/self: exit $rc"; cat "$tmp/err"; }
# one bad input of two: nothing written for the good one either
"$plot" "$tmp/bad/cut.json" "$example" -o "$tmp/bad" >"$tmp/out" 2>&1 \
  && fail "a good and a bad input: exit 0"
ls -A "$tmp/bad" | grep -q "\.png$" && fail "a good and a bad input: a PNG written"

# --- no matplotlib: exit 2, and how to install it (an import that fails)
mkdir -p "$tmp/nompl/matplotlib"
echo 'raise ImportError("No module named matplotlib")' \
  >"$tmp/nompl/matplotlib/__init__.py"
rc=0
PYTHONPATH=$tmp/nompl "$plot" -o "$tmp/bad" "$example" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 2 ] || fail "without matplotlib: exit $rc, not 2"
[ "$(cat "$tmp/err")" = "river-plot: matplotlib is not installed (Debian/Ubuntu: apt-get install python3-matplotlib; or pip install matplotlib)" ] \
  || { fail "without matplotlib: not the one line saying how to install it"; cat "$tmp/err"; }

# --- a river-bench CSV: the PNG -o names, else beside it
"$plot" "${top_srcdir:-.}/doc/results/dq-read.csv" -o "$tmp/read.png" \
  >"$tmp/out" 2>"$tmp/err" || { fail "river-plot CSV -o: exit $?"; cat "$tmp/err"; }
png_ok "$tmp/read.png"
[ "$(cat "$tmp/out")" = "$tmp/read.png" ] || { fail "CSV: stdout"; cat "$tmp/out"; }
cp "${top_srcdir:-.}/doc/results/gd-scaling.csv" "$tmp/gds.csv"
"$plot" "$tmp/gds.csv" >"$tmp/out" 2>"$tmp/err" \
  || { fail "river-plot CSV: exit $?"; cat "$tmp/err"; }
png_ok "$tmp/gds.png"

# --- river's own stats files (make check builds river): a two-pass
# sort's (its series, its edges, its read stage's GD read) and a
# copy-out's (its GD read)
[ -x "$river" ] || fail "no river program at $river"
r 2 gen --force --records 30000 g >/dev/null 2>&1 || fail "gen g"
r 2 --stats "$tmp/sort.json" sort --memory 1Mi g s >"$tmp/log" 2>&1 \
  || { fail "sort --stats"; cat "$tmp/log"; }
python3 "${top_srcdir:-.}/tests/cli/check_stats.py" "$tmp/sort.json" \
  "${top_srcdir:-.}/doc/stats.schema.json" --records 30000 --flows 2 \
  >"$tmp/check" 2>&1 || { fail "sort.json: check_stats"; cat "$tmp/check"; }
has series "$tmp/sort.json" || fail "sort.json: no series"
has gd "$tmp/sort.json" || fail "sort.json: no GD read"
"$plot" "$tmp/sort.json" >"$tmp/out" 2>"$tmp/err" \
  || { fail "river-plot sort.json: exit $?"; cat "$tmp/err"; }
plots_ok "$tmp" sort $PLOTS
r 2 --stats "$tmp/copy.json" copy-out g >/dev/null 2>"$tmp/log" \
  || { fail "copy-out --stats"; cat "$tmp/log"; }
python3 "${top_srcdir:-.}/tests/cli/check_stats.py" "$tmp/copy.json" \
  "${top_srcdir:-.}/doc/stats.schema.json" --flows 0 --gd-bytes 3000000 \
  >"$tmp/check" 2>&1 || { fail "copy.json: check_stats"; cat "$tmp/check"; }
has gd "$tmp/copy.json" || fail "copy.json: no GD read"
"$plot" "$tmp/copy.json" >"$tmp/out" 2>"$tmp/err" \
  || { fail "river-plot copy.json: exit $?"; cat "$tmp/err"; }
plots_ok "$tmp" copy gd

clitest_end test_plot
