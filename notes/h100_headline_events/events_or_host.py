"""Kept as run on nvidia-h100-x1 (2026-11-24) at commit 1624e2d: sustained windows timed both ways.
`python notes/h100_headline_events/events_or_host.py` with the project and PyCUDA importable; the output is in
notes/power_cap.md.

Is the sustained rate's spread the GPU's or the method's? cuBLAS FP32 and TF32 at 8192, sustained windows as the
study takes them, each also timed by CUDA events over whole chunks inside the window; then one long run, its
GPU-timed rate in 0.5 s slices."""
import io, sys, time, numpy as np
from pathlib import Path
from matmulstudy.gpu import host, nvml, timer as T
from matmulstudy.gpu.session import GpuSession
from matmulstudy.measure import build
from matmulstudy.measure.bench import gpu_launch
from matmulstudy.study.registry import load_registry
from matmulstudy.study.shapes import Shape

seen = []   # (host time, done, event) of every chunk seen finished
def collect(self, now):
    while self.chunks and self.chunks[0].query():
        ev = self.chunks.pop(0); self.finished.append((now, self.done + self.per_chunk)); seen.append((now, self.done, ev))
T.BackToBack.collect = collect
arch = host.arch_of(host.visible_gpu()["compute_capability"])
harness = Path("/tmp/h.cubin"); build.build_harness(arch, harness, io.StringIO())
reg = load_registry()
n = 8192; shape = Shape(n, n, n); flop = 2 * n**3
rows = []
with GpuSession() as gpu:
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n * n, dtype=np.float32); b = rng.standard_normal(n * n, dtype=np.float32)
    d_a, d_b, d_c = gpu.to_device(a), gpu.to_device(b), gpu.empty(n * n * 4)
    timer = T.Timer.for_session(gpu, harness)
    for rnd in range(6):
        for vid, ms in (("cublas", 21.3), ("cublas_tf32", 3.0)):
            launch, _ = gpu_launch(gpu, reg[vid], None, shape, d_a, d_b, d_c)
            time.sleep(0.5); seen.clear()
            mon = nvml.Monitor(gpu.device.pci_bus_id())
            run = timer.sustain(launch, ms, 0.5, mon); mon.close()
            t0, t1 = run.readings[0].time_s, run.readings[-1].time_s
            inside = [(t, d, e) for t, d, e in seen if t0 <= t <= t1]
            (_, d0, e0), (_, d1, e1) = inside[0], inside[-1]
            gpu_s = e0.time_till(e1) / 1e3
            ev_rate = (d1 - d0) * flop / gpu_s / 1e9
            clk = [r.sm_clock_mhz for r in run.readings]
            rows.append((rnd, vid, run.launches * flop / run.seconds / 1e9, ev_rate, run.seconds, d1 - d0, gpu_s,
                         np.median(clk), min(clk), run.joules / run.seconds))
    print("round variant interp_gflops event_gflops window_s ev_launches ev_s clk_med clk_min power_w")
    for r in rows:
        print(f"{r[0]} {r[1]:12s} {r[2]:10.1f} {r[3]:10.1f} {r[4]:.3f} {r[5]:4d} {r[6]:.3f} {r[7]:.0f} {r[8]:.0f} {r[9]:.0f}")
    for vid, ms, per in (("cublas", 21.3, 1), ("cublas_tf32", 3.0, 4)):
        launch, _ = gpu_launch(gpu, reg[vid], None, shape, d_a, d_b, d_c)
        time.sleep(1.0)
        evs = [gpu.cuda.Event()]; evs[0].record()
        mon = nvml.Monitor(gpu.device.pci_bus_id()); clocks = []
        t_end = time.perf_counter() + 4.0
        while time.perf_counter() < t_end:
            for _ in range(per): launch()
            e = gpu.cuda.Event(); e.record(); evs.append(e)
            if len(evs) > 4: evs[-4].synchronize(); clocks.append(mon.read().sm_clock_mhz)
        evs[-1].synchronize(); mon.close()
        t = np.array([0] + [evs[0].time_till(e) for e in evs[1:]]) / 1e3
        slices = []
        edges = np.arange(0.0, t[-1], 0.5)
        for lo in edges[:-1]:
            i0 = np.searchsorted(t, lo); i1 = np.searchsorted(t, lo + 0.5) - 1
            slices.append((i1 - i0) * per * flop / (t[i1] - t[i0]) / 1e9)
        print(vid, "long run, GFLOP/s per 0.5 s slice (GPU time):", " ".join(f"{s:.0f}" for s in slices),
              "| SM clock min/median", min(clocks), np.median(clocks))
