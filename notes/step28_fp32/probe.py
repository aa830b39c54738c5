"""One launch of each build at one size, for Nsight Compute: PYTHONPATH=. python notes/step28_fp32/probe.py N NAME=VID[:DEF@val...] ...
(NAME=sal: the reference kernel, as ablate.py says)."""
import dataclasses, io, pathlib, sys
import numpy as np
from matmulstudy.gpu.session import GpuSession
from matmulstudy.measure import bench, build, data
from matmulstudy.study.registry import load_registry
from matmulstudy.study.shapes import Shape
reg, tmp = load_registry(), pathlib.Path("/tmp/probe"); tmp.mkdir(exist_ok=True)
n = int(sys.argv[1]); specs = sys.argv[2:]
shape = Shape(n, n, n)
a, b = data.make_inputs(shape, 0)
with GpuSession() as gpu:
    d_a, d_b, d_c = gpu.to_device(a), gpu.to_device(b), gpu.empty(4 * n * n)
    for spec in specs:
        name, _, rest = spec.partition("=")
        if rest == "sal":
            f = gpu.load_function(pathlib.Path(".whl/sal/sal.cubin").resolve(), "_Z15sgemm_128x256x8iiifPKfiS0_ifPfi", "iiifPiPifPi")
            f.prepared_call(((n + 255) // 256, (n + 127) // 128, 1), (256, 1, 1), n, n, n, np.float32(1), d_a, n, d_b, n, np.float32(0), d_c, n)
        else:
            vid, *flags = rest.split(":")
            v = reg[vid]
            extra = {x.split("@")[0]: x.split("@")[1] for x in flags if x}
            v = dataclasses.replace(v, defines={**v.defines, **extra})
            cubin = tmp / f"{name}.cubin"
            build.build(v, cubin, tmp / f"{name}.json", "sm_90", io.StringIO())
            bench.gpu_launch(gpu, v, cubin, shape, d_a, d_b, d_c)[0]()
        gpu.synchronize()
