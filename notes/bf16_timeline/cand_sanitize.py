"""Dev: compute-sanitizer's four tools on candidate builds. python .whl/dev/cand_sanitize.py OUTDIR SHAPES CAND [CAND...]"""
import io, pathlib, subprocess, sys
from matmulstudy.gpu import host
from matmulstudy.measure import build, hardware
from matmulstudy.study.registry import load_registry
from matmulstudy.tools.devbench import candidate
reg, tmp = load_registry(), pathlib.Path("/tmp/cand_san"); tmp.mkdir(exist_ok=True)
arch = host.arch_of(host.visible_gpu()["compute_capability"])
out, shapes = pathlib.Path(sys.argv[1]), sys.argv[2].split(",")
san = hardware.find_tool("compute-sanitizer")
for name in sys.argv[3:]:
    v, vid = candidate(reg, name), name.split(":")[0]
    tag = name.replace(":", "_").replace("=", "")
    cubin = tmp / f"{tag}.cubin"
    build.build(v, cubin, tmp / f"{tag}.json", v.target(arch), io.StringIO())
    for shape in shapes:
        for tool in ["memcheck", "racecheck", "synccheck", "initcheck"]:
            p = subprocess.run([san, "--tool", tool, "--error-exitcode", "9", sys.executable, "-m",
                                "matmulstudy.tools.launch_once", vid, shape, str(cubin)], capture_output=True, text=True)
            summary = [l for l in (p.stdout + p.stderr).splitlines() if "ERROR SUMMARY" in l or "RACECHECK SUMMARY" in l]
            print(f"{name} {shape} {tool} rc={p.returncode} {summary[-1] if summary else (p.stdout + p.stderr)[-300:]}", flush=True)
