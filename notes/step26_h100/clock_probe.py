"""On the GPU machine, under Nsight Compute: step 27 and cuBLAS TF32 launched back to back at 4096 and 8192 (three
launches each, so that ncu sees the later ones warm), for the SM clock each ran at (cycles elapsed per second),
its tensor pipe's busy share and its time. A probe, not a measurement of the study:
    ncu --clock-control none --metrics ... -k regex:'gpu_wgmma_queued|sm90' python notes/step26_h100/clock_probe.py"""
import io, pathlib
from matmulstudy.gpu.session import GpuSession
from matmulstudy.measure import bench, build, data
from matmulstudy.study.registry import load_registry
from matmulstudy.study.shapes import Shape

reg, tmp = load_registry(), pathlib.Path("/tmp/clock_probe")
tmp.mkdir(exist_ok=True)
cubin = tmp / "q.cubin"
build.build(reg["gpu_wgmma_queued"], cubin, tmp / "q.json", "sm_90a", io.StringIO())
with GpuSession() as gpu:
    for n in (4096, 8192):
        shape = Shape(n, n, n)
        a, b = data.make_inputs(shape, 0)
        d_a, d_b, d_c = gpu.to_device(a), gpu.to_device(b), gpu.empty(4 * n * n)
        for vid, c in (("gpu_wgmma_queued", cubin), ("cublas_tf32", None)):
            f = bench.gpu_launch(gpu, reg[vid], c, shape, d_a, d_b, d_c)[0]
            for _ in range(3):
                f()
            gpu.synchronize()
        gpu.release(d_a, d_b, d_c)
