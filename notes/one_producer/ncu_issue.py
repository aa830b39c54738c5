"""Dev (notes/one_producer): Nsight Compute's issue-slot and tensor-pipe counters of registry variants or devbench
candidates (ID:NAME=VALUE), one launch each. python notes/one_producer/ncu_issue.py SHAPE OUTDIR NAME [NAME...];
prints one CSV row a name. NCU_METRICS=a,b,... asks for other counters (notes/c_placement: L2 and DRAM's)."""
import csv, io, os, pathlib, subprocess, sys
from matmulstudy.gpu import host
from matmulstudy.measure import build, hardware
from matmulstudy.study.registry import load_registry
from matmulstudy.study.shapes import Shape
from matmulstudy.tools.devbench import candidate

METRICS = ["gpu__time_duration.sum", "sm__cycles_active.avg",
           "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
           "smsp__issue_active.avg.pct_of_peak_sustained_active", "smsp__inst_executed.sum",
           "smsp__warps_active.avg.per_cycle_active", "dram__bytes_read.sum", "lts__t_sector_hit_rate.pct"]
METRICS = os.environ["NCU_METRICS"].split(",") if os.environ.get("NCU_METRICS") else METRICS
reg, arch = load_registry(), host.arch_of(host.visible_gpu()["compute_capability"])
shape, out = Shape.parse(sys.argv[1]), pathlib.Path(sys.argv[2])
writer = csv.writer(sys.stdout)
writer.writerow(["variant", *METRICS])
for vid in sys.argv[3:]:
    v, extra = candidate(reg, vid), []
    if v.is_built:
        cubin = out / f"{vid}.cubin"
        build.build(v, cubin, out / f"{vid}.json", v.target(arch), io.StringIO())
        extra = [str(cubin)]
    cmd = [hardware.find_tool("ncu"), "--clock-control", "none", "--print-units", "base", "--csv", "--page",
           "details", "--metrics", ",".join(METRICS), sys.executable, "-m", "matmulstudy.tools.launch_once",
           vid.split(":")[0], shape.tag] + extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    (out / f"ncu_{vid}.csv").write_text(p.stdout + "\n" + p.stderr[-3000:])
    start, values = p.stdout.find('"ID"'), {}
    if start >= 0:
        for row in csv.DictReader(io.StringIO(p.stdout[start:])):
            values[row["Metric Name"]] = row["Metric Value"]
    writer.writerow([vid, *(values.get(m, "") for m in METRICS)])
