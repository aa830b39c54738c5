"""On the GPU machine: the fixed cost of a launch, step 27 (and 25) against cuBLAS TF32: median times with a cold
L2 (the study's: the harness's flush kernel before each launch), with a warm one (no flush), and cold with the
flush kernel asking for the most shared memory (its carveout set to 100%, as the TMA steps' is by their 225 KB).
    PYTHONPATH=. python notes/step26_h100/launch_cost.py"""
import io, pathlib
import numpy as np
import pandas as pd
from matmulstudy.gpu.session import GpuSession
from matmulstudy.gpu.timer import Timer
from matmulstudy.measure import bench, build, data
from matmulstudy.measure.criterion import Criterion
from matmulstudy.study.registry import load_registry
from matmulstudy.study.shapes import Shape
from matmulstudy.tools.devbench import TIMING

reg, tmp = load_registry(), pathlib.Path("/tmp/launch_cost")
tmp.mkdir(exist_ok=True)
cubins = {}
for vid in ("gpu_wgmma_lean", "gpu_wgmma_queued"):
    cubins[vid] = tmp / f"{vid}.cubin"
    build.build(reg[vid], cubins[vid], tmp / f"{vid}.json", "sm_90a", io.StringIO())
harness = tmp / "harness.cubin"
build.build_harness("sm_90a", harness, io.StringIO())
rows = []
with GpuSession() as gpu:
    timer = Timer.for_session(gpu, harness)
    for n in (256, 1024, 4096):
        shape = Shape(n, n, n)
        a, b = data.make_inputs(shape, 0)
        d_a, d_b, d_c = gpu.to_device(a), gpu.to_device(b), gpu.empty(4 * n * n)
        launches = {vid: bench.gpu_launch(gpu, reg[vid], cubins.get(vid), shape, d_a, d_b, d_c)[0]
                    for vid in ("gpu_wgmma_lean", "gpu_wgmma_queued", "cublas_tf32")}
        for mode in ("cold", "warm", "cold, flush at 100% shared"):
            if mode.endswith("shared"):
                timer.flush._kernel.set_attribute(gpu.cuda.function_attribute.PREFERRED_SHARED_MEMORY_CARVEOUT, 100)
            for vid, f in launches.items():
                t = timer.time(f, TIMING.warmup, Criterion.from_timing(TIMING), cold=mode != "warm")
                rows.append({"n": n, "mode": mode, "variant": vid, "us": 1e3 * float(np.median(t.times_ms))})
            if mode.endswith("shared"):
                timer.flush._kernel.set_attribute(gpu.cuda.function_attribute.PREFERRED_SHARED_MEMORY_CARVEOUT, -1)
        gpu.release(d_a, d_b, d_c)
df = pd.DataFrame(rows)
t = df.pivot_table(index=["n", "mode"], columns="variant", values="us")
t["queued_of_cublas"] = t["cublas_tf32"] / t["gpu_wgmma_queued"]
print(t.round(3).to_string())
