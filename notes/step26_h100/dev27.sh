#!/bin/bash
# On the GPU machine (run with carry .whl): steps 25, 26 and 27 built, checked, timed against cuBLAS TF32 in two
# rounds of swapped order, Nsight Compute on each at 8192 and 4096, then the GPU tests of 26 and 27.
source .whl/env.sh && pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv,noheader
T=${TIME:-4096,8192,2048,4096x4096x4095}
timeout 150 python -m pytest -x -q -p no:cacheprovider -m gpu tests/test_gpu_kernels.py -k "persistent or queued" 2>&1 | tail -4
timeout 200 python -m matmulstudy.tools.devbench gpu_wgmma_lean gpu_wgmma_persistent gpu_wgmma_queued cublas_tf32 --time $T --out $OUT/round1.csv 2>&1 | tail -16 || exit 1
timeout 150 python -m matmulstudy.tools.devbench gpu_wgmma_queued gpu_wgmma_persistent gpu_wgmma_lean cublas_tf32 --check 1x1x1 --time $T --out $OUT/round2.csv 2>&1 | tail -14
timeout 100 bash notes/step26_h100/profile.sh gpu_wgmma_lean,gpu_wgmma_persistent,gpu_wgmma_queued 8192 4096 2>&1 | tail -8
