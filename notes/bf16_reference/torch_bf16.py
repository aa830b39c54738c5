"""PyTorch's BF16 matmul (C in BF16, and in FP32 with out_dtype) timed as tools/crosscheck.py times its calls,
and the kernel each call ran."""
import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

from matmulstudy.measure.data import make_inputs
from matmulstudy.study.shapes import Shape
print("torch", torch.__version__, torch.cuda.get_device_name())
for n in (4096, 8192):
    shape = Shape(n, n, n)
    a32, b32 = make_inputs(shape, 0)
    a = torch.from_numpy(a32).cuda().to(torch.bfloat16)
    b = torch.from_numpy(b32).cuda().to(torch.bfloat16)
    calls = {"bf16 out": lambda: torch.mm(a, b)}
    try:
        out = torch.mm(a, b, out_dtype=torch.float32)
        calls["fp32 out (out_dtype)"] = lambda: torch.mm(a, b, out_dtype=torch.float32)
    except Exception as e:
        print("out_dtype:", type(e).__name__, str(e)[:200])
    for name, call in calls.items():
        for _ in range(10):
            call()
        torch.cuda.synchronize()
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(50)]
        for s, e in ev:
            s.record(); call(); e.record()
        torch.cuda.synchronize()
        t = np.array([s.elapsed_time(e) for s, e in ev])
        med = np.median(t)
        print(f"{n} {name}: median {med:.4f} ms  {2 * n**3 / med / 1e9:.1f} TFLOP/s  (q1 {np.percentile(t,25):.4f}, q3 {np.percentile(t,75):.4f})")
    for name, call in calls.items():
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            call(); torch.cuda.synchronize()
        names = sorted({e.key for e in prof.key_averages() if "gemm" in e.key.lower() or "nvjet" in e.key.lower() or "sm90" in e.key.lower()})
        print(f"{n} {name} kernels: {names[:3]}")
