"""Dev (notes/c_evict_first): Nsight Compute's L2 and DRAM counters of variants or candidates (devbench's
ID:NAME=VALUE), one launch each. python notes/c_evict_first/ncu_l2.py SHAPE OUTDIR NAME [NAME...]; one CSV row
a name."""
import csv, io, pathlib, subprocess, sys
from matmulstudy.gpu import host
from matmulstudy.measure import build, hardware
from matmulstudy.study.registry import load_registry
from matmulstudy.study.shapes import Shape
from matmulstudy.tools.devbench import candidate

METRICS = ["gpu__time_duration.sum", "sm__cycles_active.avg", "sm__cycles_active.max",
           "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
           "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sector_hit_rate.pct",
           "lts__t_sector_op_read_hit_rate.pct", "lts__t_sector_op_write_hit_rate.pct",
           "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum"]
reg, arch = load_registry(), host.arch_of(host.visible_gpu()["compute_capability"])
shape, out = Shape.parse(sys.argv[1]), pathlib.Path(sys.argv[2])
writer = csv.writer(sys.stdout)
writer.writerow(["name", *METRICS])
for i, name in enumerate(sys.argv[3:]):
    v, extra = candidate(reg, name), []
    if v.is_built:
        cubin = out / f"c{i}.cubin"
        build.build(v, cubin, out / f"c{i}.json", v.target(arch), io.StringIO())
        extra = [str(cubin)]
    cmd = [hardware.find_tool("ncu"), "--clock-control", "none", "--print-units", "base", "--csv", "--page",
           "details", "--metrics", ",".join(METRICS), sys.executable, "-m", "matmulstudy.tools.launch_once",
           name.split(":")[0], shape.tag] + extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    (out / f"ncu_c{i}.csv").write_text(p.stdout + "\n" + p.stderr[-3000:])
    start, values = p.stdout.find('"ID"'), {}
    if start >= 0:
        for row in csv.DictReader(io.StringIO(p.stdout[start:])):
            values[row["Metric Name"]] = row["Metric Value"]   # cuBLAS: the last launch's
    writer.writerow([name, *(values.get(m, "") for m in METRICS)])
