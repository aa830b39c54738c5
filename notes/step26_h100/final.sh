#!/bin/bash
# On the GPU machine: steps 26 and 27 as committed: their GPU tests (ragged shapes, step 25's bits launch after
# launch) and the four sanitizer tools, then devbench in two rounds of swapped order, then Nsight Compute.
source .whl/env.sh && pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv,noheader
timeout 240 python -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_kernels.py tests/test_sanitizer.py -k "persistent or queued" 2>&1 | tail -3
T=4096,8192,2048,4096x4096x4095,1537x3001x997
timeout 200 python -m matmulstudy.tools.devbench gpu_wgmma_lean gpu_wgmma_persistent gpu_wgmma_queued gpu_mma_tf32 cublas_tf32 --time $T --out $OUT/round1.csv 2>&1 | tail -30
timeout 160 python -m matmulstudy.tools.devbench gpu_wgmma_queued gpu_wgmma_persistent gpu_wgmma_lean gpu_mma_tf32 cublas_tf32 --check 1x1x1 --time $T --out $OUT/round2.csv 2>&1 | tail -27
timeout 100 bash notes/step26_h100/profile.sh gpu_wgmma_lean,gpu_wgmma_persistent,gpu_wgmma_queued 8192 4096 2>&1 | tail -7 | tee $OUT/ncu.txt
