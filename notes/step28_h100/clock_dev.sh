#!/bin/bash
# On the GPU machine (nvidia-h100-x1): candidates for what holds step 27's clock below cuBLAS TF32's at the same
# cycles (notes/tensor_cores.md): try_wait's suspend-time hint on every barrier wait, and the grouped order's
# height. ablate.py's timing, two rounds, bits against step 25's.
source .whl/env.sh && pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 1
nvidia-smi --query-gpu=name,uuid,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
export PYTHONPATH=.:$PYTHONPATH
python notes/step26_h100/ablate.py hint1ms=WAIT_SUSPEND_NS@1000000 hint20us=WAIT_SUSPEND_NS@20000 g4=GROUP@4 \
    g16=GROUP@16 --sizes 4096,8192 > $OUT/clock_ablate.txt 2>&1
tail -20 $OUT/clock_ablate.txt
