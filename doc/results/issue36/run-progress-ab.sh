#!/bin/bash
# A/B: river sort of 20M records on 2 ranks, progress on (default) vs --quiet, 5 interleaved pairs
M=/work/main; R=/work/ab/prog/root; rm -rf $R; mkdir -p $R
cd /work/ab/prog
$M/scripts/river-mpirun -n 2 $M/apps/river --quiet gen --root $R --records 20000000 g > gen.log 2>&1
out=/work/ab/prog/prog-ab-20M.txt; : > $out
for i in 1 2 3 4 5; do
  for mode in on quiet; do
    q=; [ $mode = quiet ] && q=--quiet
    $M/scripts/river-mpirun -n 2 $M/apps/river sort $q --root $R --force g s > run20-$mode-$i.log 2>&1
    echo "$mode $i $(grep '^sort: river' run20-$mode-$i.log)" >> $out
  done
done
echo ALLDONE >> $out
rm -rf $R
