"""On the GPU machine, under Nsight Compute: TF32 steps and cuBLAS TF32 launched back to back (three launches each,
so that ncu sees the later ones warm), at the sizes given. A probe for ncu's sections, not a measurement of the study:
    ncu --clock-control none --section ... --page raw --csv -k regex:'gpu_wgmma|sm90' \\
        python notes/step28_h100/probe.py gpu_wgmma_queued,gpu_wgmma_overlapped 4096"""
import io, pathlib, sys
from matmulstudy.gpu.session import GpuSession
from matmulstudy.measure import bench, build, data
from matmulstudy.study.registry import load_registry
from matmulstudy.study.shapes import Shape

reg, tmp = load_registry(), pathlib.Path("/tmp/probe")
tmp.mkdir(exist_ok=True)
ids = sys.argv[1].split(",") + ["cublas_tf32"]
cubins = {}
for vid in ids[:-1]:
    cubins[vid] = tmp / f"{vid}.cubin"
    build.build(reg[vid], cubins[vid], tmp / f"{vid}.json", "sm_90a", io.StringIO())
with GpuSession() as gpu:
    for n in map(int, sys.argv[2].split(",")):
        shape = Shape(n, n, n)
        a, b = data.make_inputs(shape, 0)
        d_a, d_b, d_c = gpu.to_device(a), gpu.to_device(b), gpu.empty(4 * n * n)
        for vid in ids:
            f = bench.gpu_launch(gpu, reg[vid], cubins.get(vid), shape, d_a, d_b, d_c)[0]
            for _ in range(3):
                f()
            gpu.synchronize()
        gpu.release(d_a, d_b, d_c)
