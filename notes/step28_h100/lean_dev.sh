#!/bin/bash
# On the GPU machine (nvidia-h100-x1): step 27 with its consumer loop lean (LEAN_LOOP) against step 27 and cuBLAS
# TF32 (ablate.py's two rounds, bits against step 25's), and both builds' SASS instruction counts.
source .whl/env.sh && pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 1
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
export PYTHONPATH=.:$PYTHONPATH
python notes/step26_h100/ablate.py leanloop=LEAN_LOOP@1 --sizes 4096,8192 > $OUT/lean_ablate.txt 2>&1
tail -10 $OUT/lean_ablate.txt
for c in /tmp/ablate/gpu_wgmma_queued.cubin /tmp/ablate/leanloop.cubin; do
  cuobjdump -sass $c > $OUT/$(basename $c .cubin).sass; echo "$c: $(grep -c HGMMA $OUT/$(basename $c .cubin).sass) HGMMA"
done
