#!/bin/bash
# On the GPU machine (nvidia-h100-x1): where the warps of step 27 and of cuBLAS TF32 wait, at 4096 and 8192
# (Nsight Compute's WarpStateStats and SchedulerStats sections, three launches each; raw CSV into $OUT).
source .whl/env.sh && pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 1
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
export PYTHONPATH=.:$PYTHONPATH
timeout 400 ncu --clock-control none --section WarpStateStats --section SchedulerStats --section Occupancy \
    --metrics gpc__cycles_elapsed.avg.per_second,sm__cycles_active.avg,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active \
    --page raw --csv -k regex:'gpu_wgmma|sm90' python notes/step28_h100/probe.py gpu_wgmma_queued 4096,8192 \
    > $OUT/stalls.csv 2> $OUT/stalls_err.txt
echo "ncu rc $?"; tail -2 $OUT/stalls_err.txt; wc -c $OUT/stalls.csv
