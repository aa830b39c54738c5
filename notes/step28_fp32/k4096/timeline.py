"""Dev (issue 25, 4096): launch y29_timeline.cu's kernel (step 29 with its blocks stamped) as the study launches
step 29, cold L2, a few times, and say where the time goes: the shared slices' blocks, the whole tiles by wave,
the gaps between blocks on an SM, the tail.  PYTHONPATH=. python notes/step28_fp32/k4096/timeline.py [sizes]"""
import dataclasses, io, pathlib, sys
import numpy as np
from matmulstudy.gpu.launch import launcher
from matmulstudy.gpu.session import GpuSession
from matmulstudy.gpu.timer import Timer
from matmulstudy.measure import build, data
from matmulstudy.study.registry import load_registry
from matmulstudy.study.shapes import Shape

here = pathlib.Path(__file__).resolve().parent
v = dataclasses.replace(load_registry()["gpu_async_stream_k"], file=here / "y29_timeline.cu")
cubin, harness = pathlib.Path("/tmp/y29_timeline.cubin"), pathlib.Path("/tmp/y29_harness.cubin")
print(build.build(v, cubin, pathlib.Path("/tmp/y29_timeline.json"), "sm_90", io.StringIO())["registers"], "registers")
build.build_harness("sm_90", harness, io.StringIO())
for tag in (sys.argv[1:] or ["4096x4096x4096", "8192x8192x8192"]):
    shape = Shape.parse(tag)
    a, b = data.make_inputs(shape, 0)
    with GpuSession() as gpu:
        timer = Timer.for_session(gpu, harness)
        d_a, d_b, d_c = gpu.to_device(a), gpu.to_device(b), gpu.empty(4 * shape.M * shape.N)
        run = launcher(gpu, cubin, v, *shape, d_a, d_b, d_c)
        module = gpu._modules[str(cubin)]
        ptr, size = module.get_global("stamps")
        for rep in range(4):
            timer.flush.queue(); gpu.synchronize()
            gpu.cuda.memset_d32(ptr, 0, size // 4)
            run(); gpu.synchronize()
            st = np.empty(size // 8, dtype=np.uint64); gpu.cuda.memcpy_dtoh(st, ptr)
            st = st.reshape(-1, 4)
            used = st[:, 1] > 0
            t0 = st[used, 0].min()
            blocks = [(int(s0 - t0), int(s1 - t0), int(sm), int(k)) for s0, s1, sm, k in st[used]]
            end = max(b[1] for b in blocks)
            sk = [b for b in blocks if b[3] == 1]
            dp = sorted(b for b in blocks if b[3] == 0)
            per_sm = {}
            for b in sorted(blocks):
                per_sm.setdefault(b[2], []).append(b)
            gaps = [y[0] - x[1] for bs in per_sm.values() for x, y in zip(bs, bs[1:])]
            last = sorted(bs[-1][1] for bs in per_sm.values())
            dur_dp = np.array([b[1] - b[0] for b in dp]) / 1e3
            waves = [dur_dp[i * 132:(i + 1) * 132] for i in range((len(dp) + 131) // 132)]
            print(f"{tag} run {rep}: span {end / 1e3:.1f} us, {len(sk)} shared blocks (end min/median/max "
                  f"{min(b[1] for b in sk) / 1e3:.1f}/{np.median([b[1] for b in sk]) / 1e3:.1f}/{max(b[1] for b in sk) / 1e3:.1f} us)" if sk else
                  f"{tag} run {rep}: span {end / 1e3:.1f} us, no shared blocks")
            print(f"   whole tiles {len(dp)}: duration by wave (median, max) "
                  + ", ".join(f"{np.median(w):.1f}/{w.max():.1f}" for w in waves)
                  + f" us; gaps between blocks on an SM: median {np.median(gaps) / 1e3:.2f} us, total "
                  f"{sum(gaps) / 1e3 / len(per_sm):.1f} us an SM; SMs' last ends: first {last[0] / 1e3:.1f}, "
                  f"median {np.median(last) / 1e3:.1f}, last {last[-1] / 1e3:.1f} us")
