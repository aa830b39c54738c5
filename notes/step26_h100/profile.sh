#!/bin/bash
# On the GPU machine: Nsight Compute on steps 25 and 26 at the shapes given (default 8192 4096): time, the SMs'
# active cycles (mean, least, most), the tensor pipe's busy share, DRAM bytes, L2 hits. One launch each, through
# the sanitizer's native launcher (launch.cu), caches flushed by ncu. bash notes/step26_h100/profile.sh [N ...]
source .whl/env.sh && pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 1
python - "$@" <<'PY'
import io, subprocess, sys, pathlib
import pandas as pd
from matmulstudy.study.registry import load_registry
from matmulstudy.measure import build, sanitize
from matmulstudy.study.shapes import Shape
reg, tmp = load_registry(), pathlib.Path("/tmp/prof")
tmp.mkdir(exist_ok=True)
launcher = tmp / "launch"
sanitize.build_launcher(launcher, io.StringIO())
metrics = ["gpu__time_duration.sum", "sm__cycles_active.avg", "sm__cycles_active.min", "sm__cycles_active.max",
           "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "sm__pipe_tensor_cycles_active.avg",
           "dram__bytes_read.sum", "lts__t_sector_hit_rate.pct", "sm__cycles_elapsed.avg.per_second"]
ids = [v for v in (sys.argv[1].split(",") if len(sys.argv) > 1 and "gpu" in sys.argv[1] else
                   ["gpu_wgmma_lean", "gpu_wgmma_persistent"])]
sizes = [int(s) for s in sys.argv[1:] if s.isdigit()] or [8192, 4096]
rows = []
for vid in ids:
    v = reg[vid]
    cubin = tmp / f"{vid}.cubin"
    build.build(v, cubin, tmp / f"{vid}.json", "sm_90a", io.StringIO())
    for n in sizes:
        cmd = sanitize.command("memcheck", launcher, cubin, v, Shape(n, n, n), exe="x", sms=132)
        cmd = ["ncu", "--clock-control", "none", "--print-units", "base", "--csv", "-k", v.kernel,
               "--metrics", ",".join(metrics)] + cmd[5:]
        out = subprocess.run(cmd, capture_output=True, text=True).stdout
        df = pd.read_csv(io.StringIO(out[out.find('"ID"'):]), thousands=",")
        m = dict(zip(df["Metric Name"], df["Metric Value"].astype(float)))
        rows.append({"variant": vid, "n": n, "us": m["gpu__time_duration.sum"] / 1e3,
                     "mhz": m["sm__cycles_elapsed.avg.per_second"] / 1e6,
                     "active_avg": m["sm__cycles_active.avg"], "active_min": m["sm__cycles_active.min"],
                     "active_max": m["sm__cycles_active.max"], "tensor_cycles": m["sm__pipe_tensor_cycles_active.avg"],
                     "tensor_pct": m["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"],
                     "dram_gb": m["dram__bytes_read.sum"] / 1e9, "l2_hit": m["lts__t_sector_hit_rate.pct"]})
print(pd.DataFrame(rows).to_string(index=False, float_format="{:,.3f}".format))
PY
