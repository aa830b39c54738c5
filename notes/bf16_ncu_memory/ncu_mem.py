"""Dev: Nsight Compute's memory sections for BF16 steps / cuBLAS. python .whl/dev/ncu_mem.py SHAPE OUTDIR VID [VID...]"""
import io, pathlib, subprocess, sys
from matmulstudy.gpu import host
from matmulstudy.measure import build, hardware
from matmulstudy.study.registry import load_registry
from matmulstudy.study.shapes import Shape
reg, tmp = load_registry(), pathlib.Path("/tmp/ncu"); tmp.mkdir(exist_ok=True)
arch = host.arch_of(host.visible_gpu()["compute_capability"])
shape, out = Shape.parse(sys.argv[1]), pathlib.Path(sys.argv[2])
METRICS = ["l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed",
           "l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed",
           "l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed",
           "l1tex__throughput.avg.pct_of_peak_sustained_elapsed",
           "lts__throughput.avg.pct_of_peak_sustained_elapsed",
           "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum", "lts__t_sectors_op_red.sum",
           "lts__t_sector_hit_rate.pct", "dram__bytes_read.sum", "dram__bytes_write.sum",
           "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
           "sm__memory_throughput.avg.pct_of_peak_sustained_elapsed", "gpu__time_duration.sum",
           "sm__cycles_active.avg", "smsp__cycles_active.avg"]
for vid in sys.argv[3:]:
    v = reg[vid]
    extra = []
    if v.is_built:
        cubin = tmp / f"{vid}.cubin"
        build.build(v, cubin, tmp / f"{vid}.json", v.target(arch), io.StringIO())
        extra = [str(cubin)]
    cmd = [hardware.find_tool("ncu"), "--clock-control", "none", "--print-units", "base", "--csv", "--page", "details",
           "--section", "SpeedOfLight", "--section", "MemoryWorkloadAnalysis_Tables", "--metrics", ",".join(METRICS),
           sys.executable, "-m", "matmulstudy.tools.launch_once", vid, shape.tag] + extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    (out / f"ncu_{vid}.csv").write_text(p.stdout + "\n" + p.stderr[-3000:])
    print(vid, "rc", p.returncode, len(p.stdout), flush=True)
