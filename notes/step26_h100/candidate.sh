#!/bin/bash
# On the GPU machine, on the branch that holds a candidate step 28 (VARIANT: gpu_wgmma_stream_k on
# attempt/stream-k-tf32, gpu_wgmma_borrowed on attempt/tf32-ring-experiments): its GPU tests (ragged shapes, step
# 25's bits launch after launch), devbench against step 27 and cuBLAS TF32 in two rounds of swapped order,
# Nsight Compute on both, and the sanitizer's four tools. bash notes/step26_h100/candidate.sh VARIANT
V=$1
source .whl/env.sh && pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv,noheader
timeout 200 python -m pytest -x -q -p no:cacheprovider -m gpu tests/test_gpu_kernels.py -k "$V or persistent_steps" 2>&1 | tail -15
T=${TIME:-4096,8192,2048,4096x4096x4095,1537x3001x997}
timeout 150 python -m matmulstudy.tools.devbench gpu_wgmma_queued $V cublas_tf32 --time $T --out $OUT/round1.csv 2>&1 | tail -20
timeout 120 python -m matmulstudy.tools.devbench $V gpu_wgmma_queued cublas_tf32 --check 1x1x1 --time $T --out $OUT/round2.csv 2>&1 | tail -17
timeout 60 bash notes/step26_h100/profile.sh gpu_wgmma_queued,$V 8192 4096 2>&1 | tail -5 | tee $OUT/ncu.txt
timeout 150 python -m pytest -x -q -p no:cacheprovider -m gpu tests/test_sanitizer.py -k "$V" 2>&1 | tail -5
