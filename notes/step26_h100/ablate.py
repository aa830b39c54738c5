"""On the GPU machine: step 27 and experimental builds of it (-D switches in kernels/common), timed as devbench
times (cold L2, the noise stop; gpu/timer.py), in two rounds of swapped order at each size, against cuBLAS TF32
in the same round. Timing only: some experiments are wrong on purpose (no epilogue), so nothing is verified here.
    PYTHONPATH=. python notes/step26_h100/ablate.py NAME=DEFINE[:DEFINE] ... [--sizes 4096,8192]"""
import argparse, dataclasses, io, pathlib
import numpy as np
import pandas as pd
from matmulstudy.gpu.session import GpuSession
from matmulstudy.gpu.timer import Timer
from matmulstudy.measure import bench, build, data
from matmulstudy.measure.criterion import Criterion
from matmulstudy.study.registry import load_registry
from matmulstudy.study.shapes import Shape
from matmulstudy.tools.devbench import TIMING

p = argparse.ArgumentParser()
p.add_argument("exps", nargs="*")
p.add_argument("--base", default="gpu_wgmma_queued")
p.add_argument("--sizes", default="4096,8192,2048")
p.add_argument("--others", default="cublas_tf32")
args = p.parse_args()
reg, tmp = load_registry(), pathlib.Path("/tmp/ablate")
tmp.mkdir(exist_ok=True)
base = reg[args.base]
variants = {}
for spec in [args.base + "="] + args.exps:
    name, _, flags = spec.partition("=")
    extra = {f.split("@")[0]: (f.split("@")[1] if "@" in f else 1) for f in filter(None, flags.split(":"))}
    box_rows = extra.pop("BOXROWS", None)   # the C map's box rows, not a define
    v = dataclasses.replace(base, defines={**base.defines, **extra}) if name == args.base or extra else reg[name]
    if box_rows:
        v = dataclasses.replace(v, maps_expr=tuple((m, (str(box_rows), "32") if m == "C" else box)
                                                   for m, box in v.maps_expr))
    cubin = tmp / f"{name}.cubin"
    rep = build.build(v, cubin, tmp / f"{name}.json", "sm_90a", io.StringIO())
    print(name, extra, rep["registers"], "registers", rep["spill_store_bytes"], "spilled", flush=True)
    variants[name] = (v, cubin)
for name in filter(None, args.others.split(",")):
    variants[name] = (reg[name], None)
lean = tmp / "lean.cubin"   # the bits every store-path experiment must give
build.build(reg["gpu_wgmma_lean"], lean, tmp / "lean.json", "sm_90a", io.StringIO())
harness = tmp / "harness.cubin"
build.build_harness("sm_90a", harness, io.StringIO())
rows = []
with GpuSession() as gpu:
    timer = Timer.for_session(gpu, harness)
    for n in map(int, args.sizes.split(",")):
        shape = Shape(n, n, n)
        a, b = data.make_inputs(shape, 0)
        d_a, d_b, d_c = gpu.to_device(a), gpu.to_device(b), gpu.empty(4 * n * n)
        launches = {name: bench.gpu_launch(gpu, v, c, shape, d_a, d_b, d_c)[0] for name, (v, c) in variants.items()}
        bench.gpu_launch(gpu, reg["gpu_wgmma_lean"], lean, shape, d_a, d_b, d_c)[0]()
        want = gpu.to_host(d_c, (n, n)).view(np.uint32)
        same = {}
        for name, f in launches.items():
            gpu.fill_u32(d_c, 0xFFFFFFFF, n * n)
            f()
            same[name] = bool(np.array_equal(gpu.to_host(d_c, (n, n)).view(np.uint32), want))
        for rnd in range(2):
            for name in (list(launches) if rnd == 0 else list(reversed(launches))):
                t = timer.time(launches[name], TIMING.warmup, Criterion.from_timing(TIMING), cold=True)
                rows.append({"n": n, "round": rnd, "variant": name, "us": 1e3 * float(np.median(t.times_ms)),
                             "same_bits_as_25": same[name]})
        gpu.release(d_a, d_b, d_c)
df = pd.DataFrame(rows)
ref = df[df.variant == "cublas_tf32"].set_index(["n", "round"])["us"]
df["of_cublas"] = [ref[(r.n, r["round"])] / r.us for _, r in df.iterrows()]
print(df.pivot_table(index=["n", "variant", "same_bits_as_25"], columns="round",
                     values=["us", "of_cublas"]).round(4).to_string())
