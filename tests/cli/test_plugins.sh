#!/bin/bash
# test_plugins.sh - plugins: shared libraries of user modules that every
# rank loads (river_plugin_load; doc/modules.md, "Plugins"):
#  - a C plugin (examples/plugin_c.c) by `river run --plugin`, by a flow
#    spec's `plugins:` (a path relative to the spec), and by `river flow
#    check --plugin`; the records its module passes are exactly those a
#    reference count finds; `river modules --plugin` lists it (ports,
#    arguments, the plugin's path) with the built-ins;
#  - a Fortran plugin (examples/plugin_f.F90) the same way;
#  - without the plugin the spec is refused naming the module;
#  - bad plugins: a missing file, a library without river_plugin_init,
#    one whose module takes a built-in's name (sort), one that fails on
#    one rank only, a bare name found only on LD_LIBRARY_PATH (never
#    searched): each said once, exit 1 on every rank, no hang.
set -u
. "${top_srcdir:-.}/tests/cli/clitest.sh"
lib=${top_builddir:-.}
pc=$(cd "$lib/examples/.libs" && pwd)/plugin_c.so
pf=$(cd "$lib/examples/.libs" && pwd)/plugin_f.so
bad=$(cd "$lib/tests/plugins/.libs" && pwd)
spec=${top_srcdir:-.}/examples/plugin.yaml
[ -f "$pc" ] || { echo "FAIL: $pc not built"; exit 1; }
N=30000


# once NRANKS PATTERN ARGS...: fails with exit 1, PATTERN said once and
# one closing line.
once() {
  local n=$1 pat=$2 rc; shift 2
  r "$n" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"; rc=$?
  [ "$rc" = 1 ] || fail "river $*: exit $rc, not 1"
  [ "$(grep -Ec -e "$pat" "$tmp/err")" = 1 ] \
    || { fail "river $*: /$pat/ not said once"; grep error "$tmp/err" | head -n 6; }
  [ "$(grep -c ' failed' "$tmp/err")" -le 2 ] \
    || { fail "river $*: more than the message and one closing line"; grep error "$tmp/err" | head -n 6; }
}

for n in $(ranks 2 3); do
  # The reference: every record, and below 0 none, below 256 all.
  rm -f "$tmp"/c*.*
  r "$n" run --plugin "$pc" "$spec" records=$N below=256 out="$tmp/call" \
    >/dev/null 2>&1 || fail "$n ranks: run --plugin (below 256)"
  r 2 run "${top_srcdir:-.}/tests/flows/run/gen_count.yaml" records=$N seed=0 \
    out="$tmp/cref" >/dev/null 2>&1 || fail "gen_count reference"
  [ "$(total "$tmp/call")" = "$(total "$tmp/cref")" ] \
    || fail "$n ranks: keep_below 256 did not pass every record once: $(total "$tmp/call") vs $(total "$tmp/cref")"
  r "$n" run --plugin "$pc" "$spec" records=$N below=0 out="$tmp/cnone" \
    >/dev/null 2>&1 && [ "$(total "$tmp/cnone" | cut -d' ' -f1)" = 0 ] \
    || fail "$n ranks: keep_below 0 passed records"
  r "$n" run --plugin="$pc" "$spec" records=$N below=64 out="$tmp/c64" \
    >"$tmp/out" 2>&1 || fail "$n ranks: run --plugin=PATH"
  got=$(total "$tmp/c64" | cut -d' ' -f1)
  [ "$got" -gt $((N / 8)) ] && [ "$got" -lt $((N * 3 / 8)) ] \
    || fail "$n ranks: keep_below 64 passed $got of $N (about a quarter expected)"
  grep -q "^run: stage keep .*keep_below" "$tmp/out" || fail "$n ranks: no keep_below stage line"
  # the Fortran plugin: keep_odd_f, about half
  if [ -f "$pf" ]; then
    r "$n" run --plugin "$pf" "${top_srcdir:-.}/examples/plugin_f.yaml" \
      records=$N out="$tmp/codd" \
      >/dev/null 2>&1 || fail "$n ranks: the Fortran plugin's flow"
    got=$(total "$tmp/codd" | cut -d' ' -f1)
    [ "$got" -gt $((N * 2 / 5)) ] && [ "$got" -lt $((N * 3 / 5)) ] \
      || fail "$n ranks: keep_odd_f passed $got of $N (about half expected)"
  fi
done

# plugins: in the spec, relative to the spec's directory
mkdir -p "$tmp/specdir"
cp "$pc" "$tmp/specdir/plugin_c.so"
{ echo "plugins: [plugin_c.so]"; cat "$spec"; } >"$tmp/specdir/withplugin.yaml"
(cd "$tmp" && r 2 run specdir/withplugin.yaml records=1000 below=256 \
   out="$tmp/cspec" >/dev/null 2>&1) || fail "a spec's plugins:"
[ "$(total "$tmp/cspec" | cut -d' ' -f1)" = 1000 ] || fail "a spec's plugins: not every record"
# flow check, with and without the plugin
r 2 flow check --plugin "$pc" "$spec" >/dev/null 2>&1 || fail "flow check --plugin"
once 2 "unknown module 'keep_below'" flow check "$spec"
once 2 "unknown module 'keep_below'" run "$spec"
# river modules: the plugin's module with its ports, arguments and path
r 2 modules --plugin "$pc" >"$tmp/mods" 2>&1 || fail "river modules --plugin"
grep -q "^keep_below  inputs 1, outputs 1  (plugin $pc)$" "$tmp/mods" \
  || { fail "river modules: keep_below not listed with its plugin"; grep keep "$tmp/mods"; }
grep -q "^    args: field:str=key,below:uint=64" "$tmp/mods" || fail "river modules: keep_below's arguments"
grep -q "^sort  inputs 1, outputs 1" "$tmp/mods" || fail "river modules: the built-in sort not listed"
[ "$(grep -c '^[a-z_]*  inputs' "$tmp/mods")" -ge 15 ] || fail "river modules: fewer than 15 modules"
r 1 modules >"$tmp/mods0" 2>&1 && ! grep -q keep_below "$tmp/mods0" || fail "river modules without a plugin lists keep_below"

# bad plugins
for n in $(ranks 1 4); do
  once "$n" "plugin $tmp/nothere.so: No such file or directory" \
    run --plugin "$tmp/nothere.so" "$spec"
  once "$n" "plugin $bad/noentry.so: no entry point river_plugin_init" \
    run --plugin "$bad/noentry.so" "$spec"
  once "$n" "plugin $bad/clash.so: module 'sort' is already registered \\(built in\\)" \
    modules --plugin "$bad/clash.so"
  echo "not a library" >"$tmp/junk.so"
  once "$n" "plugin $tmp/junk.so: cannot load it" run --plugin "$tmp/junk.so" "$spec"
done
# a failed plugin's modules are removed again: clash_ok is not listed
# (the job goes on only with a plugin that loads: here a second run)
RIVER_TEST_PLUGIN_FAIL_RANK=2 once 4 "fail_rank: failing on rank 2, as asked" \
  run --plugin "$bad/fail_rank.so" "$spec"
grep -q "^river\[2\] error: plugin $bad/fail_rank.so: river_plugin_init failed" "$tmp/err" \
  || { fail "fail_rank: not said by rank 2"; cat "$tmp/err"; }
# a bare name is ./NAME, never looked for on LD_LIBRARY_PATH
LD_LIBRARY_PATH="$(dirname "$pc")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  once 1 "plugin plugin_c.so: No such file or directory" \
  run --plugin plugin_c.so "$spec"
(cd "$(dirname "$pc")" && r 2 run --plugin plugin_c.so "$spec" records=100 \
   out="$tmp/cbare" >/dev/null 2>&1) || fail "a bare name in the working directory"

clitest_end test_plugins
