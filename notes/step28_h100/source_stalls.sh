#!/bin/bash
# On the GPU machine (nvidia-h100-x1): step 27's stalls instruction by instruction at 4096 (Nsight Compute's
# SourceCounters, its SASS page as CSV, one launch): which instructions the short-scoreboard, MIO and wait
# stalls sit on.
source .whl/env.sh && pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 1
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
export PYTHONPATH=.:$PYTHONPATH
timeout 300 ncu --clock-control none --section SourceCounters --page source --print-source sass --csv \
    -k regex:'gpu_wgmma_queued' --launch-skip 1 --launch-count 1 \
    python notes/step28_h100/probe.py gpu_wgmma_queued 4096 > $OUT/source.csv 2> $OUT/source_err.txt
echo "ncu rc $?"; tail -3 $OUT/source_err.txt; wc -l $OUT/source.csv; head -3 $OUT/source.csv | cut -c1-400
