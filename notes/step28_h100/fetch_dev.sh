#!/bin/bash
# On the GPU machine (nvidia-h100-x1), branch attempt/tf32-clock: step 27 with one lane a consumer warp polling each
# full barrier (FETCH_ONE_LANE), alone and with try_wait's suspend-time hint, against step 27 and cuBLAS TF32.
source .whl/env.sh && pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 1
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
export PYTHONPATH=.:$PYTHONPATH
python notes/step26_h100/ablate.py one=FETCH_ONE_LANE@1 onehint=FETCH_ONE_LANE@1:WAIT_SUSPEND_NS@20000 \
    --sizes 4096,8192 > $OUT/fetch_ablate.txt 2>&1
tail -12 $OUT/fetch_ablate.txt
