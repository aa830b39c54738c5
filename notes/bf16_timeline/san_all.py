"""Dev: the four sanitizer tools on every cuda variant at the given shapes. python .whl/dev/san_all.py SHAPE [SHAPE...]"""
import io, pathlib, sys
from matmulstudy.gpu import host
from matmulstudy.gpu.session import GpuSession
from matmulstudy.measure import build, sanitize
from matmulstudy.study.registry import load_registry
from matmulstudy.study.shapes import Shape
reg, tmp = load_registry(), pathlib.Path("/tmp/san_all"); tmp.mkdir(exist_ok=True)
arch = host.arch_of(host.visible_gpu()["compute_capability"])
shapes = [Shape.parse(s) for s in sys.argv[1:]]
launcher = tmp / "launch"
sanitize.build_launcher(launcher, io.StringIO())
with GpuSession() as gpu:
    sms = gpu.sm_count
bad = 0
for v in reg.values():
    if v.backend != "cuda" or v.unsupported(arch):
        continue
    cubin = tmp / f"{v.id}.cubin"
    build.build(v, cubin, tmp / f"{v.id}.json", v.target(arch), io.StringIO())
    table = sanitize.sanitize(v, cubin, launcher, shapes, io.StringIO(), sms=sms)
    ok = table["clean"].all()
    bad += not ok
    print(f"{v.id}: {'clean' if ok else table.to_string()} ({len(table)} runs)", flush=True)
print("variants not clean:", bad)
