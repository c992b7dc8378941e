#!/bin/bash
# test_dq_window - the distributed-queue tests (tests/mpi/test_dq_mpi.c,
# test_dq_bad_mpi.c, test_dq_coop_mpi.c, test_dq_msg_mpi.c) with
# RIVER_DQ_READ_ALL=0: every producer reads one credit word per message
# (or, PUSH, the words of a window of DQ_CHOICES consumers) and PUSH
# chooses among that window from the start, never dormant, as they do
# beyond 64 consumers (src/dq_internal.h), which no other test reaches
# on this machine. Then `river-bench scale queues` at 16 ranks, 8
# consumers (a window of 4 of them), checking every record arrives
# exactly once and in order for each DQ policy, even and with a
# lagging consumer. Each runs even if one before it failed; the test
# fails if any did.
set -u
run=${RIVER_MPIRUN:?run me through scripts/mpi-test-launch}
top=${top_builddir:-.}
status=0
export RIVER_DQ_READ_ALL=0
for t in test_dq_mpi:8 test_dq_bad_mpi:8 test_dq_coop_mpi:8 test_dq_msg_mpi:3; do
  echo "RIVER_DQ_READ_ALL=0 ${t%:*}"
  "$run" -n "${t#*:}" "$top/tests/mpi/${t%:*}.mpi" || status=1
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "RIVER_DQ_READ_ALL=0 river-bench scale queues, 16 ranks"
if ! "$run" -n 16 "$top/apps/river-bench" scale queues --repeats 1 \
     --csv "$tmp/scale.csv" >"$tmp/scale.out" 2>&1; then
  echo "FAIL: river-bench scale failed"; cat "$tmp/scale.out"; status=1
elif grep -q "DATA CHECK FAILED" "$tmp/scale.out" \
     || [ "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "ok") k = i; next }
                      k && $k == 1' "$tmp/scale.csv" | wc -l)" -ne 8 ]; then
  echo "FAIL: a record was lost, duplicated or out of order"
  cat "$tmp/scale.out"; status=1
fi
exit $status
