"""FP32 builds against cuBLAS SGEMM: SASS main-loop mix, then timing as devbench times (cold L2, the noise
stop), two rounds of swapped order, bits compared with the first build.
    PYTHONPATH=. python notes/step28_fp32/ablate.py NAME=VID[:DEF@val...][:file@PATH] ... --sizes 4096,8192 [--out DIR]
file@PATH builds VID's entry from another source (an earlier version of a step), grid@EXPR launches it on
[EXPR, 1] blocks (of the defines, sms and tiles), only@KERNEL launches that kernel of its file at every shape; `err` is max |C - cuBLAS's C| over
max |cuBLAS's C| (a dev check: the GPU tests verify each step against the float64 reference).
NAME=sal times salykova/sgemm.cu's 128x256x8 kernel, built by hand into .whl/sal/sal.cubin (never part of the
project: nvcc -cubin -arch=sm_90 -O3 of a file that includes its src/kernels/128x256x8.cuh), launched as its
sgemm() launches it."""
import argparse, dataclasses, io, pathlib
import numpy as np, pandas as pd
from matmulstudy.gpu.session import GpuSession
from matmulstudy.gpu.timer import Timer
from matmulstudy.measure import bench, build, data, hardware
from matmulstudy.measure.criterion import Criterion
from matmulstudy.study.registry import load_registry
from matmulstudy.study.shapes import Shape
from matmulstudy.tools.devbench import TIMING
p = argparse.ArgumentParser(); p.add_argument("specs", nargs="+"); p.add_argument("--sizes", default="4096,8192")
p.add_argument("--out", default=None)
args = p.parse_args()
reg, tmp = load_registry(), pathlib.Path("/tmp/fp32ab"); tmp.mkdir(exist_ok=True)
variants = {}
SAL = pathlib.Path(".whl/sal/sal.cubin").resolve()   # the reference kernel, dev only (not in the project)
for spec in args.specs:
    name, _, rest = spec.partition("=")
    if rest == "sal":
        variants[name] = ("sal", SAL)
        continue
    vid, *flags = rest.split(":")
    extra = dict(f.split("@", 1) for f in flags if f)
    source, grid, only = extra.pop("file", None), extra.pop("grid", None), extra.pop("only", None)
    v = reg[vid]
    if only:   # one of its kernels at every shape (step 30's)
        v = v.only(only)
    if source:
        v = dataclasses.replace(v, file=pathlib.Path(source).resolve())
    if grid:
        v = dataclasses.replace(v, grid_expr=(grid, 1))
    if extra:
        v = dataclasses.replace(v, defines={**v.defines, **extra})
    cubin = None
    if v.backend == "cuda":
        cubin = tmp / f"{name}.cubin"
        rep = build.build(v, cubin, tmp / f"{name}.json", "sm_90", io.StringIO())
        sass = hardware.disassemble(cubin)
        (pathlib.Path(args.out or "/tmp") / f"{name}.sass").write_text(sass) if args.out else None
        mix = hardware.main_loop_mix(hardware.parse_sass(sass, v.kernel))
        import re as _re
        conf = inplace = nf = 0
        for line in sass.splitlines():
            m = _re.search(r"FFMA\s+(R\d+),\s+(R\d+)(\.reuse)?,\s+(R\d+)(\.reuse)?,\s+(R\d+)(\.reuse)?", line)
            if m:
                banks = [int(m.group(g)[1:]) % 4 for g, r in ((2, 3), (4, 5), (6, 7)) if not m.group(r)]
                conf += len(banks) - len(set(banks)); inplace += m.group(1) == m.group(6); nf += 1
        print(name, "FFMA", nf, "bank conflicts", conf, "in place", inplace)
        print(name, extra, rep["registers"], "registers", rep["spill_store_bytes"], "spilled", 
              {k: mix[k] for k in mix if isinstance(mix[k], (int, float))}, flush=True)
    variants[name] = (v, cubin)
harness = tmp / "harness.cubin"; build.build_harness("sm_90", harness, io.StringIO())
rows = []
with GpuSession() as gpu:
    timer = Timer.for_session(gpu, harness)
    for tag in args.sizes.split(","):
        shape = Shape.parse(tag) if "x" in tag else Shape(int(tag), int(tag), int(tag))
        a, b = data.make_inputs(shape, 0)
        d_a, d_b, d_c = gpu.to_device(a), gpu.to_device(b), gpu.empty(4 * shape.M * shape.N)
        def sal_launch(cubin):
            f = gpu.load_function(cubin, "_Z15sgemm_128x256x8iiifPKfiS0_ifPfi", "iiifPiPifPi")
            grid = ((shape.N + 255) // 256, (shape.M + 127) // 128, 1)
            return lambda: f.prepared_call(grid, (256, 1, 1), shape.M, shape.N, shape.K, np.float32(1), d_a, shape.K,
                                           d_b, shape.N, np.float32(0), d_c, shape.N)
        launches = {n: (sal_launch(c) if v == "sal" else bench.gpu_launch(gpu, v, c, shape, d_a, d_b, d_c)[0])
                    for n, (v, c) in variants.items()}
        bits = {}
        for n, f in launches.items():
            gpu.fill_u32(d_c, 0xFFFFFFFF, shape.M * shape.N); f(); gpu.synchronize()
            bits[n] = gpu.to_host(d_c, (shape.M, shape.N)).view(np.uint32)
        first = next(iter(bits))
        cb = bits["cublas"].view(np.float32).astype(np.float64)
        err = {n: float(np.abs(b.view(np.float32) - cb).max() / np.abs(cb).max())
                  if np.isfinite(b.view(np.float32)).all() else float("inf") for n, b in bits.items()}
        for rnd in range(2):
            for n in (list(launches) if rnd == 0 else list(reversed(launches))):
                t = timer.time(launches[n], TIMING.warmup, Criterion.from_timing(TIMING), cold=True)
                rows.append({"shape": shape.tag, "round": rnd, "variant": n, "us": 1e3 * float(np.median(t.times_ms)),
                             "same": bool(np.array_equal(bits[n], bits[first])), "err": f"{err[n]:.1e}"})
        gpu.release(d_a, d_b, d_c)
df = pd.DataFrame(rows)
ref = df[df.variant == "cublas"].set_index(["shape", "round"])["us"]
df["of_cublas"] = [ref[(r["shape"], r["round"])] / r.us for _, r in df.iterrows()]
print(df.pivot_table(index=["shape", "variant", "same", "err"], columns="round", values=["of_cublas", "us"]).round(4).to_string())
