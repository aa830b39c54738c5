"""Dev: per-tile timeline of a TRACE=1 candidate. python .whl/dev/trace.py SHAPE CAND [CAND...]"""
import ctypes, io, pathlib, sys
import numpy as np
from matmulstudy.gpu import host
from matmulstudy.gpu.launch import launcher
from matmulstudy.gpu.session import GpuSession
from matmulstudy.measure import build
from matmulstudy.measure.build import built_variant
from matmulstudy.measure.data import make_inputs, operands
from matmulstudy.study.registry import load_registry
from matmulstudy.study.shapes import Shape
from matmulstudy.tools.devbench import candidate
reg, tmp = load_registry(), pathlib.Path("/tmp/trace"); tmp.mkdir(exist_ok=True)
arch = host.arch_of(host.visible_gpu()["compute_capability"])
shape = Shape.parse(sys.argv[1]); M, N, K = shape
for name in sys.argv[2:]:
    v = candidate(reg, name + ":TRACE=1")
    tag = name.replace(":", "_").replace("=", "")
    cubin = tmp / f"{tag}.cubin"
    build.build(v, cubin, tmp / f"{tag}.json", v.target(arch), io.StringIO())
    v = built_variant(v, cubin)
    a, b = operands(*make_inputs(shape, 0), v.precision)
    with GpuSession() as gpu:
        d_a, d_b, d_c = gpu.to_device(a), gpu.to_device(b), gpu.empty(M * N * 4)
        run = launcher(gpu, cubin, v, M, N, K, d_a, d_b, d_c)
        for _ in range(5):
            run()
        gpu.synchronize()
        kern = gpu.kept(("driver kernel", str(cubin)), None)
        cuda = ctypes.CDLL("libcuda.so.1")
        ptr, size = ctypes.c_uint64(), ctypes.c_size_t()
        assert cuda.cuModuleGetGlobal_v2(ctypes.byref(ptr), ctypes.byref(size), kern.module, b"trace_buf") == 0
        host_buf = np.zeros(size.value // 8, np.uint64)
        assert cuda.cuMemcpyDtoH_v2(host_buf.ctypes.data_as(ctypes.c_void_p), ptr, size) == 0
    t = host_buf.reshape(1024, 16, 4).astype(np.int64)[:132]
    t0 = t[:, :, 0].min(where=t[:, :, 0] > 0, initial=2**62)
    print(f"== {name} at {shape.tag}: times in us from the first tile's start")
    rows = []
    for r in range(16):
        live = t[:, r, 0] > 0
        if not live.any():
            break
        start, mend, cend = (t[live, r, 0] - t0) / 1e3, (t[live, r, 1] - t0) / 1e3, (t[live, r, 2] - t0) / 1e3
        main, epi = mend - start, cend - mend
        print(f"tile {r}: blocks {live.sum():3d}  start {np.median(start):7.2f} [{start.min():7.2f},{start.max():7.2f}]"
              f"  main {np.median(main):6.2f} [{main.min():6.2f},{main.max():6.2f}]  C out {np.median(epi):5.2f} [{epi.min():5.2f},{epi.max():5.2f}]"
              f"  main ends spread {mend.max() - mend.min():5.2f}"
              + (f"  full waits (kcycles) {np.median(t[live, r, 3]) / 1e3:6.2f} [{t[live, r, 3].min() / 1e3:6.2f},{t[live, r, 3].max() / 1e3:6.2f}]" if "TRACE_WAIT" in name else ""))
    ends = (t[:, :, 2] - t0)[t[:, :, 0] > 0] / 1e3
    print(f"last C end {ends.max():.2f} us")
    # a tile's start after the previous tile's C end, same block
    gaps = []
    for blk in range(132):
        for r in range(1, 16):
            if t[blk, r, 0] > 0:
                gaps.append((t[blk, r, 0] - t[blk, r - 1, 2]) / 1e3)
    print(f"gap C end -> next start: median {np.median(gaps):.3f} max {np.max(gaps):.3f} us")
