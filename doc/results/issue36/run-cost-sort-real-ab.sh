#!/bin/bash
# A/B: river-bench sort real (2 ranks, 10M records), RIVER_PROGRESS=1 (every flow's line and river-bench's) vs 0, 3 interleaved pairs
M=/work/main; cd /tmp/ab36
out=/tmp/ab36/ab.txt; : > $out
for i in 1 2 3; do
  for mode in 1 0; do
    RIVER_PROGRESS=$mode $M/scripts/river-mpirun -n 2 $M/apps/river-bench sort real --repeats 1 > real-$mode-$i.out 2> real-$mode-$i.err
    echo "progress=$mode pair=$i $(grep '^real n=2' real-$mode-$i.out) | $(grep '^real --sync' real-$mode-$i.out)" >> $out
  done
done
echo ALLDONE >> $out
