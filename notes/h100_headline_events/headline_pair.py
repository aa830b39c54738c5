"""Kept as run on nvidia-h100-x1 (2026-11-24) at commit 1624e2d with the next commit's events change in the
working tree: the headline phase twice. `python notes/h100_headline_events/headline_pair.py` with the project and
PyCUDA importable; the output is in notes/power_cap.md.

The headline phase alone, twice back to back on one GPU, as the study runs it (4 rounds, burst then sustained):
step 17 vs cuBLAS FP32, step 23 vs cuBLAS TF32, at 4096 and 8192. Does the sustained ratio hold within 1.5 points?"""
import io, os, sys, time
from pathlib import Path
import pandas as pd
from matmulstudy.gpu import host
from matmulstudy.gpu.session import GpuSession
from matmulstudy.measure import build, data, energy, headline
from matmulstudy.report import headline as page
from matmulstudy.study.registry import load_registry
from matmulstudy.study.settings import default_settings
from matmulstudy.study.shapes import Shape

reg = load_registry(); s = default_settings(reg)
arch = host.arch_of(host.visible_gpu()["compute_capability"])
out = Path("/tmp/hl"); harness = out / "harness.cubin"; build.build_harness(arch, harness, io.StringIO())
binaries = {}
for vid in ("gpu_hybrid_stream_k", "gpu_wgmma_grouped"):
    v = reg[vid]; b = out / f"{vid}.cubin"
    build.build(v, b, Path(f"{b}.json"), v.target(arch), io.StringIO()); binaries[vid] = b
ms = {4096: {"gpu_hybrid_stream_k": 2.75, "cublas": 2.64, "gpu_wgmma_grouped": 0.37, "cublas_tf32": 0.34},
      8192: {"gpu_hybrid_stream_k": 21.9, "cublas": 21.3, "gpu_wgmma_grouped": 2.95, "cublas_tf32": 2.7}}
contenders = {"fp32": ("gpu_hybrid_stream_k", "cublas"), "tf32": ("gpu_wgmma_grouped", "cublas_tf32")}
tables = []
with GpuSession() as gpu:
    inputs = {n: data.make_inputs(Shape(n, n, n), 0) for n in (4096, 8192)}
    for study in (1, 2):
        t0 = time.time()
        for n in (4096, 8192):
            variants = tuple((build.built_variant(reg[v], binaries[v]) if v in binaries else reg[v], binaries.get(v), m)
                             for v, m in ms[n].items())
            problem = energy.Problem(Shape(n, n, n), "float32", 0, *inputs[n], variants)
            t = headline.measure(gpu, harness, problem, contenders, s.timing.headline_rounds, s.timing,
                                 s.timing.headline_window_s, s.checking, sys.stdout)
            tables.append(t.assign(study=study))
        print(f"study {study}: {time.time() - t0:.0f} s", flush=True)
df = pd.concat(tables, ignore_index=True)
df.to_csv(os.path.join(os.environ.get("OUT", "/tmp"), "headline_pair.csv"), index=False)
both = page.agreement(df[df.study == 1], df[df.study == 2])
print(both.round(4).to_string())
