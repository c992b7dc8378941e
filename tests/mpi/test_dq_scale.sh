#!/bin/bash
# test_dq_scale - every DQ policy (PUSH, STATIC, PULL, EXCHANGE) at 4,
# 32 and 64 ranks, even and with a lagging consumer, through
# `river-bench scale queues` (apps/bench/bench_scale.c): every record
# arrives exactly once (count, sum and XOR of content hashes on both
# sides) and in its producer's order, and each rank's queue memory
# (river_dq_stats.memory_bytes) stays within doc/design.md's "Queue
# memory" formula, whose message-buffer part does not grow with the
# ranks once a producer has DQ_SEND_PEERS (16) consumers. Again at 16
# ranks with a send pool of one slot (RIVER_DQ_SEND_SLOTS=1): exactly
# once still, and a producer's memory at most one slot per credit (a pool
# with no slot free for 1 s doubles). No timing is asserted: figures
# belong in doc/results.md.
set -u
run=${RIVER_MPIRUN:?run me through scripts/mpi-test-launch}
bench=${top_builddir:-.}/apps/river-bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# The formula, for the library's defaults (4 credits, 256 KiB messages)
# and n ranks (n/2 producers, n/2 consumers); per-peer words at most 256
# bytes a rank of the job, and 64 KiB besides. slots: the send pool.
check_memory() { # CSV, slots (0: the default pool)
  awk -F, -v pool="$2" '
    NR == 1 { next }
    { S = 262144; c = 4; C = $5; n = $3
      slots = c * C < 16 * c ? c * C : 16 * c
      if (pool > 0) slots = c * C   # a tiny pool grows when stuck: to this
      Sx = S
      if ($1 == "exchange" && C > 16) {
        Sx = int((16 * S / C + 4095) / 4096) * 4096
        if (Sx < 8192) Sx = 8192
      }
      fills = $1 == "exchange" ? C : 1
      words = 256 * n + 65536
      prod = ((slots + fills) * Sx + words) / 1048576
      posted = $1 == "pull" ? 13 : 2   # PULL on the MSG path posts 13
      cons = ((posted + 1 + 2) * S + words) / 1048576
      if ($7 > prod || $8 > cons) {
        printf "%s %s n=%d: producer %.3f MiB (bound %.3f), consumer %.3f MiB (bound %.3f)\n", $1, $2, n, $7, prod, $8, cons
        bad = 1 }
      if ($7 <= 0 || $8 <= 0) { printf "%s %s n=%d: no memory counted\n", $1, $2, n; bad = 1 } }
    END { exit bad }' "$1"
}

one() { # n, label, [env...]
  local n=$1 label=$2
  shift 2
  env "$@" "$run" -n "$n" "$bench" scale queues --repeats 1 \
      --csv "$tmp/$label.csv" >"$tmp/$label.out" 2>&1 \
    || { fail "$label: river-bench scale failed"; cat "$tmp/$label.out"; return; }
  grep -q "DATA CHECK FAILED" "$tmp/$label.out" \
    && fail "$label: a record was lost, duplicated or out of order"
  [ "$(tail -n +2 "$tmp/$label.csv" | wc -l)" -eq 8 ] \
    || fail "$label: expected 8 rows (4 kinds, even and lag)"
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "ok") k = i; next }
           !k || $k != 1 { bad = 1 } END { exit bad || !k }' "$tmp/$label.csv" \
    || fail "$label: a run's data check failed"
}

for n in 4 32 64; do
  one $n n$n
  check_memory "$tmp/n$n.csv" 0 || fail "n=$n: memory over the formula"
done
# The message buffers of a producer do not grow from 32 to 64 ranks
# (16 and 32 consumers): PUSH, STATIC and PULL the same, EXCHANGE less.
awk -F, 'FNR == 1 { f++; next }
  { m[f, $1, $2] = $7 }
  END { for (k in m) { split(k, p, SUBSEP)
          if (p[1] == 1 && m[2, p[2], p[3]] > m[1, p[2], p[3]] + 0.01) {
            printf "%s %s: %.3f MiB at 64 ranks, %.3f at 32\n", p[2], p[3], m[2, p[2], p[3]], m[1, p[2], p[3]]; bad = 1 } }
        exit bad }' "$tmp/n32.csv" "$tmp/n64.csv" \
  || fail "a producer's memory grew from 32 to 64 ranks"

# The control work per message, counted (river_dq_stats.peer_steps in a
# call that moved a message, the median over ranks): no growth from 32
# to 64 ranks beyond what a count of sends in flight can vary by with
# the machine's load (8 steps; STATIC's and PULL's puts take 2 to 5,
# every get 2). Left out, by design (doc/design.md, "Work per
# message"): PUSH's put with the defaults (up to 64 consumers it reads
# every credit word and looks at every consumer; test_dq_window runs it
# as beyond), and EXCHANGE's put (a message's records go to up to that
# many consumers: constant per record, and per put once the consumers
# outnumber its records). A per-message loop over the consumers or the
# producers fails it: counting every send slot's request in STATIC's
# and PULL's puts (as they were tested before issue 41's step) gave 65
# at both sizes, under the pool; every credit word read, 16 and 32.
awk -F, 'FNR == 1 { f++; for (i = 1; i <= NF; i++) col[$i] = i; next }
  { ps[f, $1, $2] = $col["put_steps"]; gs[f, $1, $2] = $col["get_steps"] }
  END { for (k in ps) { split(k, p, SUBSEP)
          if (p[1] != 1) continue
          if (p[2] != "push" && p[2] != "exchange" && ps[2, p[2], p[3]] > ps[1, p[2], p[3]] + 8) {
            printf "%s %s: put %.1f steps a message at 64 ranks, %.1f at 32\n", p[2], p[3], ps[2, p[2], p[3]], ps[1, p[2], p[3]]; bad = 1 }
          if (gs[2, p[2], p[3]] > gs[1, p[2], p[3]] + 8) {
            printf "%s %s: get %.1f steps a message at 64 ranks, %.1f at 32\n", p[2], p[3], gs[2, p[2], p[3]], gs[1, p[2], p[3]]; bad = 1 }
          if (ps[1, p[2], p[3]] <= 0 || gs[1, p[2], p[3]] <= 0) {
            printf "%s %s: no steps counted\n", p[2], p[3]; bad = 1 } }
        exit bad }' "$tmp/n32.csv" "$tmp/n64.csv" \
  || fail "the control work per message grew from 32 to 64 ranks"

one 16 pool1 RIVER_DQ_SEND_SLOTS=1
check_memory "$tmp/pool1.csv" 1 || fail "pool of 1: memory over the formula"

[ $fails -eq 0 ] && echo "test_dq_scale: all checks passed"
exit $((fails > 0))
