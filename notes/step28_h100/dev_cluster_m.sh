#!/bin/bash
# On the GPU machine (nvidia-h100-x1): step 28 (clusters along M) against step 27 and cuBLAS TF32 (ablate.py's
# timing, two rounds, bits against step 25's; GROUP 2, 4 and 8 cluster rows), its GPU tests and the four sanitizer
# tools, and Nsight Compute on both at 4096 and 8192 (clock_ncu.sh).
source .whl/env.sh && pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 1
nvidia-smi --query-gpu=name,uuid,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
export PYTHONPATH=.:$PYTHONPATH
python notes/step26_h100/ablate.py --base gpu_wgmma_cluster_m gpu_wgmma_queued cm8=GROUP@8 cm2=GROUP@2 \
    --sizes 4096,8192,2048 > $OUT/ablate_cluster_m.txt 2>&1
tail -18 $OUT/ablate_cluster_m.txt
timeout 300 python -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_kernels.py tests/test_sanitizer.py \
    -k "cluster_m or launch_after_launch" 2>&1 | tail -3
bash notes/step28_h100/clock_ncu.sh gpu_wgmma_queued,gpu_wgmma_cluster_m 4096,8192 2>&1 | grep -v Warning | tail -40
