"""Dev (notes/c_placement): a launch's time against where C lies. One session, A and B fixed, C at each offset
of one pool; every name (a registry id or devbench's ID:NAME=VALUE) timed at every offset, in alternating
rounds (with COPIES=n, each cubin loaded as n modules), each launch from a cold L2 between CUDA events. Each result is compared with the first offset's.
python notes/c_placement/offsets.py MxNxK ROUNDS OFFSETS_KB NAME [NAME...]; prints one CSV row a measurement."""
import ctypes, dataclasses, io, os, shutil, sys
import numpy as np
from matmulstudy.gpu import host
from matmulstudy.gpu.timer import L2Flush
from matmulstudy.measure import build, data
from matmulstudy.measure.bench import gpu_launch
from matmulstudy.measure.devicecheck import workspace
from matmulstudy.study.registry import load_registry
from matmulstudy.study.shapes import Shape
from matmulstudy.tools.devbench import candidate

shape, rounds = Shape.parse(sys.argv[1]), int(sys.argv[2])
offsets = [int(x) * 1024 for x in sys.argv[3].split(",")]
M, N, K = shape
reg, arch = load_registry(), host.arch_of(host.visible_gpu()["compute_capability"])
variants = [candidate(reg, n) for n in sys.argv[4:]]
print("name,offset_kb,round,c_address_mod_64mb_kb,ticket_address,median_us,min_us,max_abs_diff")
def ticket_address(v):
    """Where this variant's module put its tile counter (tiles.cuh's tile_ticket), in hex; '' if none."""
    kernel = gpu._kept.get(("driver kernel", str(cubins.get(v.id))))
    if kernel is None:
        return ""
    address, size = ctypes.c_uint64(), ctypes.c_size_t()
    if kernel._cuda.cuModuleGetGlobal_v2(ctypes.byref(address), ctypes.byref(size), kernel.module, b"tile_ticket"):
        return ""
    return hex(address.value)


with workspace(arch, io.StringIO()) as (gpu, tmp, harness):
    cubins, copies = {}, int(os.environ.get("COPIES", "1"))
    for i, v in enumerate(list(variants)):
        if v.is_built:
            cubins[v.id] = tmp / f"c{i}.cubin"
            build.build(v, cubins[v.id], tmp / f"c{i}.json", v.target(arch), io.StringIO())
            for j in range(1, copies):   # the same cubin loaded again as a module of its own (the code elsewhere)
                twin = dataclasses.replace(v, id=f"{v.id}#{j}")
                cubins[twin.id] = tmp / f"c{i}_{j}.cubin"
                shutil.copy(cubins[v.id], cubins[twin.id])
                variants.insert(variants.index(v) + j, twin)
    a, b = data.make_inputs(shape, 0)
    d_a, d_b = (gpu.to_device(x) for x in data.operands(a, b, variants[0].precision))
    pool = gpu.empty(M * N * 4 + max(offsets))
    flush, cuda = L2Flush(gpu, harness), gpu.cuda
    start, end = cuda.Event(), cuda.Event()
    first = {}
    warm, samples = int(os.environ.get("WARM", "3")), int(os.environ.get("SAMPLES", "20"))   # 0 and 1 under ncu
    for r in range(1, rounds + 1):
        for off in offsets:
            for v in variants:
                c = int(pool) + off
                launch = gpu_launch(gpu, v, cubins.get(v.id), shape, d_a, d_b, c)[0]
                times = []
                for s in range(warm + samples):
                    flush.queue()
                    start.record()
                    launch()
                    end.record()
                    end.synchronize()
                    if s >= warm:
                        times.append(end.time_since(start) * 1e3)
                out = np.empty(M * N, np.float32)
                cuda.memcpy_dtoh(out, c)
                diff = float(np.abs(out - first.setdefault(v.id, out)).max())
                print(f"{v.id},{off // 1024},{r},{(c % (64 << 20)) // 1024},{ticket_address(v)},{np.median(times):.2f},"
                      f"{min(times):.2f},{diff}", flush=True)
