"""PyTorch's BF16 matmul (C in BF16, and in FP32 with out_dtype) timed by tools/crosscheck.py's own loop, and the
kernel each call ran."""
import torch
from torch.profiler import ProfilerActivity, profile

from matmulstudy.measure.data import make_inputs
from matmulstudy.study.shapes import Shape
from matmulstudy.tools.crosscheck import _queued, _row

print("torch", torch.__version__, torch.cuda.get_device_name())
for n in (4096, 8192):
    shape = Shape(n, n, n)
    a32, b32 = make_inputs(shape, 0)
    a = torch.from_numpy(a32).cuda().to(torch.bfloat16)
    b = torch.from_numpy(b32).cuda().to(torch.bfloat16)
    calls = {"bf16 out": lambda: torch.mm(a, b)}
    try:
        torch.mm(a, b, out_dtype=torch.float32)
        calls["fp32 out (out_dtype)"] = lambda: torch.mm(a, b, out_dtype=torch.float32)
    except Exception as e:
        print("out_dtype:", type(e).__name__, str(e)[:200])
    for name, call in calls.items():
        pairs = _queued(call, lambda: torch.cuda.Event(enable_timing=True), torch.cuda.synchronize, 50)
        r = _row("torch", torch.__version__, name, shape, [s.elapsed_time(e) for s, e in pairs])
        print(f"{n} {name}: median {r['median_ms']:.4f} ms  {r['median_gflops'] / 1e3:.1f} TFLOP/s  "
              f"(q1 {r['q1_ms']:.4f}, q3 {r['q3_ms']:.4f})")
    for name, call in calls.items():
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            call()
            torch.cuda.synchronize()
        names = sorted({e.key for e in prof.key_averages() if any(w in e.key.lower() for w in ("gemm", "nvjet", "sm90"))})
        print(f"{n} {name} kernels: {names[:3]}")
