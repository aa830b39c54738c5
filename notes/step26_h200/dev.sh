#!/bin/bash
# On the H200: steps 26 and 27's GPU tests, then devbench against steps 25, 18 and cuBLAS TF32 in two rounds of
# swapped order.
source .whl/env.sh && pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv,noheader
timeout 200 python -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_kernels.py -k "persistent or queued" 2>&1 | tail -3
T=4096,8192,2048,4096x4096x4095,1537x3001x997
timeout 170 python -m matmulstudy.tools.devbench gpu_wgmma_lean gpu_wgmma_persistent gpu_wgmma_queued gpu_mma_tf32 cublas_tf32 --time $T --out $OUT/round1.csv 2>&1 | tail -27
timeout 150 python -m matmulstudy.tools.devbench gpu_wgmma_queued gpu_wgmma_persistent gpu_wgmma_lean gpu_mma_tf32 cublas_tf32 --check 1x1x1 --time $T --out $OUT/round2.csv 2>&1 | tail -26
