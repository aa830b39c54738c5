"""Dev: the SM clock a TRACE=1 candidate runs at, tile by tile, from inside the kernel (clock64 over the global
timer), against what NVML reads meanwhile: in batches of about 10 ms of launches, each followed by as long a
rest (as the study times its burst samples: README, "How a measurement is taken"), where NVML is read while the
batch runs; after 0.5 s idle (one launch); and at the end of 1 s and 3 s of launches back to back (sustained).
The TRACE define is in step44_candidates.patch (persistent_bf16.cuh: the persistent BF16 steps, 34 to 44); on a
GPU machine, from the project's root, with the tree at the patch's commit (cefcb61) or a later one whose kernels
are the same:

    git apply notes/late_draw/step44_candidates.patch
    PYTHONPATH=. python notes/late_draw/clock_trace.py 4096x4096x4096 gpu_wgmma_bf16_drawn_late
    git apply -R notes/late_draw/step44_candidates.patch

The runs' outputs are in runs/clock_trace_*.txt (the first version, without the batches, printed
clock_trace_cfe0bf9e.txt's lines).
"""
import ctypes, io, pathlib, subprocess, sys, time

import numpy as np

from matmulstudy.gpu import host
from matmulstudy.gpu.launch import launcher
from matmulstudy.gpu.nvml import Monitor
from matmulstudy.gpu.session import GpuSession
from matmulstudy.measure import build
from matmulstudy.measure.build import built_variant
from matmulstudy.measure.data import make_inputs, operands
from matmulstudy.study.registry import load_registry
from matmulstudy.study.shapes import Shape
from matmulstudy.tools.devbench import candidate


def smi_clock() -> str:
    return subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader"],
                          capture_output=True, text=True).stdout.strip()


def report(label, t):
    rows = []
    for r in range(16):
        live = t[:, r, 0] > 0
        if not live.any():
            break
        ns = (t[live, r, 2] - t[live, r, 0]).astype(float)
        clk = (t[live, r, 3] - t[live, r, 1]).astype(float)
        mhz = clk / ns * 1e3
        rows.append(f"{r}:{np.median(mhz):.0f}[{mhz.min():.0f}-{mhz.max():.0f}] {np.median(ns) / 1e3:.2f}us")
    print(f"{label}: " + "  ".join(rows), flush=True)


reg, tmp = load_registry(), pathlib.Path("/tmp/clock_trace")
tmp.mkdir(exist_ok=True)
arch = host.arch_of(host.visible_gpu()["compute_capability"])
shape = Shape.parse(sys.argv[1])
M, N, K = shape
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
        run()
        gpu.synchronize()
        kernel = gpu.kept(("driver kernel", str(cubin)), None)
        cuda = ctypes.CDLL("libcuda.so.1")
        ptr, nbytes = ctypes.c_uint64(), ctypes.c_size_t()
        assert cuda.cuModuleGetGlobal_v2(ctypes.byref(ptr), ctypes.byref(nbytes), kernel.module, b"trace_buf") == 0
        address, size = ptr.value, nbytes.value

        def read():
            out = np.zeros(size // 8, np.uint64)
            gpu.cuda.memcpy_dtoh(out, address)
            gpu.cuda.memset_d8(address, 0, size)
            return out.reshape(1024, 16, 4).astype(np.int64)[:132]

        read()
        monitor = Monitor.for_session(gpu)
        start = time.perf_counter()
        run()
        gpu.synchronize()
        per_batch = max(1, int(0.010 / (time.perf_counter() - start)))
        for i in range(20):
            begun = time.perf_counter()
            for _ in range(per_batch):
                run()
            during = monitor.read(energy=False)
            gpu.synchronize()
            ran = time.perf_counter() - begun
            trace = read()
            if i in (0, 1, 4, 9, 19):
                report(f"{name} {shape.tag} batch {i} of {per_batch} launches (NVML during it: "
                       f"{during.sm_clock_mhz:.0f} MHz, {during.power_w:.0f} W, reasons {during.reasons:#x})", trace)
            time.sleep(ran)
        for i in range(3):
            time.sleep(0.5)
            run()
            gpu.synchronize()
            report(f"{name} {shape.tag} burst {i}", read())
        for seconds in (1.0, 3.0):
            start = time.time()
            launches = 0
            while time.time() - start < seconds:
                for _ in range(50):
                    run()
                launches += 50
                gpu.synchronize()
            for _ in range(49):
                run()
            clock = smi_clock()
            run()
            gpu.synchronize()
            report(f"{name} {shape.tag} after {launches} launches in {seconds:.0f} s (nvidia-smi then: {clock})", read())
