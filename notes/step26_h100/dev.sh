#!/bin/bash
# On the GPU machine (run with carry .whl): step 26 built, checked, timed against step 25 and cuBLAS TF32 in two
# rounds of swapped order, then its GPU tests. bash notes/step26_h100/dev.sh [tests]
source .whl/env.sh && pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 1
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv,noheader
python - <<'PY'
from matmulstudy.gpu.session import GpuSession
from matmulstudy.study.registry import load_registry
from matmulstudy.measure import build
from matmulstudy.gpu import tma
import io, pathlib
v = load_registry()["gpu_wgmma_persistent"]
out = pathlib.Path("/tmp/p26.cubin")
build.build(v, out, pathlib.Path("/tmp/p26.json"), "sm_90a", io.StringIO())
with GpuSession() as gpu:
    k = tma.DriverKernel(str(out), v.kernel, v.dynamic_shared)
    grid = v.launch_grid(4096, 4096, gpu.sm_count)
    print("sms", gpu.sm_count, "grid", grid, "max active clusters", k.max_active_clusters(grid, v.block))
PY
T=${TIME:-4096,8192,2048,4096x4096x4095}
timeout 240 python -m matmulstudy.tools.devbench gpu_wgmma_lean gpu_wgmma_persistent cublas_tf32 --time $T --out $OUT/round1.csv || exit 1
timeout 200 python -m matmulstudy.tools.devbench gpu_wgmma_persistent gpu_wgmma_lean cublas_tf32 --check 1x1x1 --time $T --out $OUT/round2.csv
if [ "$1" = tests ]; then
  timeout 280 python -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_kernels.py tests/test_sanitizer.py -k persistent 2>&1 | tail -5
fi
