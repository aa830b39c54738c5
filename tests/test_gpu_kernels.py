"""Every GPU variant against the float64 reference, on ragged shapes; the GPU's check against the CPU's (GPU only)."""

import functools

import numpy as np
import pytest

from matmulstudy.measure import bench, data
from matmulstudy.study.settings import Timing, default_settings
from matmulstudy.study.shapes import Shape
from matmulstudy.study.registry import load_registry
from matmulstudy.precisions import PRECISIONS

pytestmark = pytest.mark.gpu

# K = 1, odd K, an odd number of 8- and 16-wide k-tiles (40, 65, 129), M or N not a multiple of 4,
# rows that do not start on 16 bytes (K or N odd), more than one 128 x 256 block tile, 11 rows of 256 x 128
# tiles by 5 (step 29's groups of 8 tile rows: a full one and a short one; a cluster's block right of C),
# 9 rows of them by 33 (153 cluster tiles: more than the 66 clusters of steps 32 and 33's persistent grid),
# and 17 x 12 tiles of 128 x 256 (a wave of 132 whole ones, then step 19 cuts the 72 left in pieces: its
# "one-tile" hybrid; at 17 x 17 its other one); N of whole 64-column blocks, a tile and a quarter of them,
# with M and K ragged (step 43's B in one copy; 4096 x 64 x 1024 is one block and three outside B)
SHAPES = [Shape(1, 1, 1), Shape(17, 33, 65), Shape(200, 72, 40), Shape(1000, 1000, 1000), Shape(4096, 64, 1024),
          Shape(513, 257, 129), Shape(31, 1, 4097), Shape(131, 259, 1), Shape(2600, 520, 36),
          Shape(2049, 4097, 33), Shape(2049, 2817, 33), Shape(300, 320, 200)]
# every kernel of a variant that chooses among them by shape (step 20), each at every shape
CASES = [(v.id, d, k) for v in load_registry().values() if v.is_gpu for d in v.dtypes for k in v.kernels]
TIMING = Timing(warmup=1, cache="cold", min_samples=3, max_samples=3, max_noise=0.005, max_time_s=1.0,
                throttle_fraction=0.9)
CHECK = default_settings().checking


@functools.cache
def problem(shape, dtype):
    return data.make_inputs(shape, 42, dtype)


def measure(variant, shape, dtype, gpu_builds, cubin=None):
    from matmulstudy.measure.devicecheck import DeviceReference
    from matmulstudy.gpu.session import GpuSession
    a, b = problem(shape, dtype)
    with GpuSession() as gpu, DeviceReference(gpu, gpu_builds["harness"], a, b, variant.precision) as reference:
        return bench.measure(variant, shape, 42, a, b, cubin or gpu_builds.get((variant.id, dtype)), TIMING, CHECK,
                             harness=gpu_builds["harness"], session=gpu, reference=reference)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.tag)
@pytest.mark.parametrize("variant_id, dtype, kernel", CASES)
def test_gpu_variant_matches_float64_reference(registry, gpu_builds, variant_id, dtype, kernel, shape):
    variant = registry[variant_id]
    if variant.unsupported(gpu_builds["arch"]):
        pytest.skip(variant.unsupported(gpu_builds["arch"]))
    rows = measure(variant.only(kernel) if variant.is_built else variant, shape, dtype, gpu_builds)
    assert rows["verified"].all(), rows[["margin", "bad_elements", "unwritten_elements"]].iloc[0].to_dict()
    assert len(rows) == TIMING.min_samples and (rows["time_ms"] > 0).all()
    assert rows["blocked"].all() and rows["cache"].eq("cold").all()
    assert rows["sm_clock_mhz"].gt(0).all(), rows["nvml"].iloc[0]   # NVML read while it ran
    assert rows["reference"].eq("gpu (cuBLAS DGEMM)").all()
    if dtype == "int32":
        assert rows["max_error"].iloc[0] == 0   # exact
    elif registry[variant_id].precision.id == "fp32":
        assert rows["margin"].iloc[0] <= 0.5    # a correct FP32 result sits at half the bound or less
    elif registry[variant_id].precision.id == "bf16":   # checked against the product of its rounded inputs
        assert rows["fp32_margin"].isna().all() and rows["margin"].iloc[0] <= 0.5


@pytest.mark.parametrize("ids", [
    ["gpu_wgmma_lean", "gpu_wgmma_persistent", "gpu_wgmma_queued", "gpu_wgmma_one_copy", "gpu_wgmma_whole_waves",
     "gpu_wgmma_small_tiles"],
    ["gpu_wgmma_bf16", "gpu_wgmma_bf16_persistent", "gpu_wgmma_bf16_aligned", "gpu_wgmma_bf16_grouped",
     "gpu_wgmma_bf16_queued", "gpu_wgmma_bf16_one_copy", "gpu_wgmma_bf16_whole_waves",
     "gpu_wgmma_bf16_one_producer", "gpu_wgmma_bf16_stepped_descriptors", "gpu_wgmma_bf16_drawn_late",
     "gpu_wgmma_bf16_small_tiles", "gpu_wgmma_bf16_smaller_tiles"]],
    ids=["tf32", "bf16"])
def test_the_persistent_steps_give_the_one_tile_steps_bits_launch_after_launch(registry, gpu_builds, ids):
    """Steps 32 to 36 change which cluster computes a tile, or how its slices arrive, not its sums: their C
    is step 31's, bit for bit; so are steps 39 to 49's step 38's (steps 40 to 49 through the aligned copies where
    rows are off 16 bytes; steps 43 to 47's B in one copy where N is whole 128-byte blocks, 300 x 320 x 200 and 4096
    among them; steps 35 and 44 to 47 on fewer blocks than multiprocessors, 78 or 42 clusters at 1537 x 3001 x 997
    and 128 blocks at 4096; steps 45 to 47 with one producer warp on the tile slot; steps 46 and 47 with their
    descriptors stepped by constants; step 47 with each ticket drawn as the block needs its tile; step 48 with tiles
    of 64 x 128, whose wgmma m64n128k16 sums each element's k-steps as m64n256k16 does; step 49's of 64 x 64
    (m64n64k16); step 36 with tiles of 128 x 64 and no clusters, its wgmma m64n128k8 summing as m64n256k8 does).
    Each runs twice at each shape, one shape after another in one context, so a launch that left its tile
    counter (steps 33, 42, 47) or any other state behind would give the next one other tiles."""
    from matmulstudy.gpu.session import GpuSession
    if registry[ids[0]].unsupported(gpu_builds["arch"]):
        pytest.skip(registry[ids[0]].unsupported(gpu_builds["arch"]))
    precision = registry[ids[0]].precision
    with GpuSession() as gpu:
        for shape in (Shape(1537, 3001, 997), Shape(2049, 4097, 33), Shape(1, 1, 1), Shape(300, 320, 200),
                      Shape(4096, 4096, 4096)):
            a, b = data.operands(*problem(shape, "float32"), precision)
            d_a, d_b = gpu.to_device(a), gpu.to_device(b)
            d_c = gpu.empty(4 * shape.M * shape.N)
            results = {}
            for vid in ids:
                launch, _ = bench.gpu_launch(gpu, registry[vid], gpu_builds[vid, "float32"], shape, d_a, d_b, d_c)
                for run in range(2):
                    gpu.fill_u32(d_c, 0xFFFFFFFF, shape.M * shape.N)   # NaN: an element not written shows
                    launch()
                    results[vid, run] = gpu.to_host(d_c, (shape.M, shape.N)).view(np.uint32)
            assert not (results[ids[0], 0] == 0xFFFFFFFF).any(), shape.tag   # the first step wrote all of C
            for key, bits in results.items():
                assert np.array_equal(bits, results[ids[0], 0]), (shape.tag, key)


@pytest.mark.parametrize("vid", ["gpu_wgmma_whole_waves", "gpu_wgmma_bf16_drawn_late", "gpu_wgmma_fp8_promoted"])
def test_two_launches_of_one_queued_kernel_at_once_on_two_streams_each_take_every_tile(registry, gpu_builds, vid):
    """A queued step's ticket counter lies in its launch's workspace (kernels/sm90/workspace.cuh), not in its
    module: two launches of one module at once, each on a stream of its own, draw each from their own counter.
    At 4096 the scheduler's whole rounds leave 4 of 132 SMs without a tile, on which the other stream's blocks
    start while the first launch runs; drawing from one counter, each launch would take some of the other's
    tickets and leave those tiles of its C unwritten. Ten launches a stream, the streams side by side: every C
    is the bits of a launch alone."""
    from matmulstudy.gpu import launch as launching
    from matmulstudy.gpu.session import GpuSession
    v = registry[vid]
    if v.unsupported(gpu_builds["arch"]):
        pytest.skip(v.unsupported(gpu_builds["arch"]))
    shape, cubin = Shape(4096, 4096, 4096), gpu_builds[vid, "float32"]
    with GpuSession() as gpu:
        a, b = data.operands(*problem(shape, "float32"), v.precision)
        d_a, d_b = gpu.to_device(a), gpu.to_device(b)
        outputs = [gpu.empty(4 * shape.M * shape.N) for _ in range(3)]
        for d_c in outputs:
            gpu.fill_u32(d_c, 0xFFFFFFFF, shape.M * shape.N)   # NaN: a tile no launch wrote shows
        launching.launcher(gpu, cubin, v, *shape, d_a, d_b, outputs[0])()   # alone, on the default stream
        gpu.synchronize()
        alone = gpu.to_host(outputs[0], (shape.M, shape.N)).view(np.uint32)
        assert not (alone == 0xFFFFFFFF).any()
        streams = [gpu.cuda.Stream(), gpu.cuda.Stream()]
        launches = [launching.launcher(gpu, cubin, v, *shape, d_a, d_b, d_c, stream=s)
                    for d_c, s in zip(outputs[1:], streams)]
        for _ in range(10):
            for launch in launches:
                launch()
        gpu.synchronize()
        for d_c in outputs[1:]:
            assert np.array_equal(gpu.to_host(d_c, (shape.M, shape.N)).view(np.uint32), alone)


# What a launch that stopped part way leaves in a module's global memory, planted as the previous launch's:
# the ticket 5 blocks in, every cut tile's progress at 3 slices (stream_k.cuh), every tile's count of pieces at 3
# and the pieces' partial tiles NaN (step 22's).
LEFT_BEHIND = {"ticket": lambda launch, n: np.array([launch << 32 | 5], np.uint64),
               "progress": lambda launch, n: np.full(n // 8, launch << 32 | 3, np.uint64),
               "arrivals": lambda launch, n: np.full(n // 8, launch << 32 | 3, np.uint64),
               "partials": lambda launch, n: np.full(n // 4, 0xFFFFFFFF, np.uint32)}
STATE = {"gpu_async_split_k": ("arrivals", "partials")}   # the others': ticket and progress


@pytest.mark.parametrize("vid", ["gpu_stream_k", "gpu_deep_slices", "gpu_hybrid_stream_k", "gpu_async_stream_k",
                                 "gpu_async_by_shape", "gpu_async_epilogue", "gpu_async_split_k"])
def test_a_stream_k_launch_ignores_what_an_interrupted_one_left(registry, gpu_builds, vid):
    """Steps 15 to 17 and 19 to 21 number their blocks by a ticket and hand cut tiles on through progress[]; step 22
    counts a tile's pieces in arrivals[] and keeps their partial tiles in partials[]; all in global memory. A launch
    that stopped part way leaves them mid-count (LEFT_BEHIND). The next launch must ignore them (the launch marks)
    and give the bits of a clean launch; counting on from them, it would number its blocks from 5, add pieces of
    tiles to C before their first, or sum a tile before its pieces are in."""
    from matmulstudy.gpu import launch as launching
    from matmulstudy.gpu.session import GpuSession
    cubin = gpu_builds[vid, "float32"]
    with GpuSession() as gpu:
        # tiles cut in pieces at each: by Stream-K at the first two, by split-K (64 x 64 tiles) at the last two
        for shape in (Shape(1537, 3001, 997), Shape(1000, 1000, 1000), Shape(300, 320, 200), Shape(513, 257, 129)):
            a, b = problem(shape, "float32")
            d_a, d_b, d_c = gpu.to_device(a), gpu.to_device(b), gpu.empty(4 * shape.M * shape.N)
            launch, _ = bench.gpu_launch(gpu, registry[vid], cubin, shape, d_a, d_b, d_c)
            results = []
            for planted in (False, True):
                if planted:
                    interrupted = next(launching.LAUNCHES)   # the number the stopped launch had
                    for name in STATE.get(vid, ("ticket", "progress")):
                        address, size = gpu.module_global(cubin, name)
                        gpu.copy_in(address, LEFT_BEHIND[name](interrupted, size))
                gpu.fill_u32(d_c, 0xFFFFFFFF, shape.M * shape.N)   # NaN: an element not written shows
                launch()
                results.append(gpu.to_host(d_c, (shape.M, shape.N)).view(np.uint32))
            assert not (results[0] == 0xFFFFFFFF).any(), shape.tag
            assert np.array_equal(results[1], results[0]), shape.tag


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_the_gpu_reference_and_check_agree_with_the_cpus(gpu_builds, dtype):
    """R and r by cuBLAS DGEMM equal NumPy's float64 ones; the device check counts what the host check counts."""
    from matmulstudy.measure.devicecheck import DeviceReference
    from matmulstudy.gpu.session import GpuSession
    from matmulstudy.measure.verify import POISON, elementwise
    shape = Shape(300, 260, 700)
    a, b = data.make_inputs(shape, 7, dtype)
    ref, r = data.reference(a, b)
    c = (a @ b).astype(a.dtype)
    c[3, 4] += (np.float32(1e-3) if dtype == "float32" else 1)
    c.reshape(-1).view(np.uint32)[-2:] = np.array(POISON).view(np.uint32)   # two elements never written
    with GpuSession() as gpu, DeviceReference(gpu, gpu_builds["harness"], a, b) as reference:
        gpu_ref = gpu.to_host(reference.d_ref, shape[:2], np.float64)
        gpu_r = gpu.to_host(reference.d_scale, shape[:2], np.float64)
        on_gpu = reference.verify_host(c, CHECK.tolerance, PRECISIONS["fp32"])
    assert np.allclose(gpu_ref, ref, rtol=1e-13, atol=1e-12) and np.allclose(gpu_r, r, rtol=1e-6)
    on_cpu = elementwise(c, ref, r, shape.K, CHECK.tolerance)
    assert (on_gpu.bad, on_gpu.nan, on_gpu.unwritten) == (on_cpu.bad, on_cpu.nan, on_cpu.unwritten) == (
        3, 2 if dtype == "float32" else 0, 2)
    if dtype == "int32":
        assert on_gpu.max_error == on_cpu.max_error


def test_the_gpu_rounds_bf16_inputs_to_the_hosts_bits(gpu_builds):
    """A BF16 reference rounds A and B on the GPU (harness.cu's round_bf16): the float32 values it multiplies
    and the 16-bit values the kernels read are round_to_bf16's and bf16_bits', bit for bit, for seeded inputs
    and for the cases rounding can get wrong: ties to even both ways, values that carry into the exponent,
    the largest finite float32 (to infinity), subnormals, signed zeros, negative values."""
    from matmulstudy.gpu.session import GpuSession
    from matmulstudy.measure.devicecheck import DeviceReference
    a, b = problem(Shape(300, 301, 257), "float32")
    edges = np.array([0x3F808000, 0x3F818000, 0x3F80_7FFF, 0x3F80_8001, 0x3FFF_FFFF, 0x7F7F_FFFF, 0x0000_8000,
                      0x0001_8000, 0x0000_0001, 0x8000_0000, 0x0000_0000, 0xBF80_8000, 0xBF81_8000, 0x3380_0000],
                     dtype=np.uint32).view(np.float32)
    a = a.copy()
    a.reshape(-1)[:edges.size] = edges
    with GpuSession() as gpu, DeviceReference(gpu, gpu_builds["harness"], a, b, PRECISIONS["bf16"]) as reference:
        for host, full, bits in ((a, reference.d_a, reference.operands[0]), (b, reference.d_b, reference.operands[1])):
            rounded = data.round_to_bf16(host)
            assert np.array_equal(gpu.to_host(full, host.shape).view(np.uint32), rounded.view(np.uint32))
            assert np.array_equal(gpu.to_host(bits, host.shape, np.uint16), data.bf16_bits(rounded))
    assert (data.round_to_bf16(edges).view(np.uint32)[[0, 1, 5]] == [0x3F800000, 0x3F820000, 0x7F800000]).all()


def test_the_gpu_rounds_e4m3_inputs_to_the_hosts_bits(gpu_builds):
    """An FP8 reference rounds A and B on the GPU (harness.cu's round_e4m3): the float32 values it multiplies
    and the bytes the kernels read (B's as N x K) are round_to_e4m3's and e4m3_bits', bit for bit, for seeded
    inputs and the cases rounding can get wrong: ties to even between normal values and between subnormal
    ones, a carry into the next exponent, the step from subnormal to normal (2^-6), what rounds to zero
    (2^-10, a tie to the even zero) and what does not, signed zeros, negative values."""
    from matmulstudy.gpu.session import GpuSession
    from matmulstudy.measure.devicecheck import DeviceReference
    a, b = problem(Shape(300, 301, 257), "float32")
    edges = np.array([1 + 1 / 16, 1 + 3 / 16, -(1 + 1 / 16), 0.96875, 0.999, 1.5 * 2.0**-9, 2.5 * 2.0**-9,
                      2.0**-10, 1.01 * 2.0**-10, -(2.0**-10), 2.0**-6 - 2.0**-12, 2.0**-6 - 2.0**-10, 0.0, -0.0,
                      -0.3, 7.5 * 2.0**-9], dtype=np.float32)
    a, b = a.copy(), b.copy()
    a.reshape(-1)[:edges.size] = edges
    b.reshape(-1)[-edges.size:] = edges
    with GpuSession() as gpu, DeviceReference(gpu, gpu_builds["harness"], a, b, PRECISIONS["fp8_fast"]) as reference:
        for host, full, bits, transposed in ((a, reference.d_a, reference.operands[0], False),
                                             (b, reference.d_b, reference.operands[1], True)):
            rounded = data.round_to_e4m3(host)
            assert np.array_equal(gpu.to_host(full, host.shape).view(np.uint32), rounded.view(np.uint32))
            want = data.e4m3_bits(rounded)
            got = gpu.to_host(bits, host.shape[::-1] if transposed else host.shape, np.uint8)
            assert np.array_equal(got, want.T if transposed else want)
    assert list(data.round_to_e4m3(edges[:7])) == [1.0, 1.25, -1.0, 1.0, 1.0, 2 * 2.0**-9, 2 * 2.0**-9]


FAULTS = [("bf16", "unrounded inputs"), ("bf16", "sums kept in BF16"), ("fp8_fast", "unrounded inputs"),
          ("fp8_fast", "sums kept in BF16"), ("fp8_fast", "sums kept in e4m3"), ("fp8", "unrounded inputs"),
          ("fp8", "sums kept in BF16"), ("fp8", "sums kept in e4m3"), ("fp8", "sums in the tensor cores alone")]
# the least margin each fault must reach: FP8's fast-accum bound grows with K as its sums' errors do, and at K =
# 4097 lies at 384 units of 2^-13 r where the unrounded inputs' errors have an rms of 270 (precisions.py): 31
# elements of them go over it by less than BF16's 2x. FP8's bound is flat in K (32 units): the tensor cores'
# sums alone, the fast-accum reference's result, go past it only from K of a few thousand on (their largest
# error is 1.85 times it at 4096 in precisions.py's emulation), and are held to it only there.
LEAST_MARGIN = {"bf16": 2, "fp8_fast": 1.5, "fp8": 1.2}
TENSOR_CORES_ALONE = [Shape(512, 256, 4096), Shape(300, 257, 8191)]   # K large enough, and elements enough
SUMS_CUT = {"sums kept in BF16": data.round_to_bf16,   # e4m3 saturated to its largest value, as cvt's .satfinite
            "sums kept in e4m3": lambda x: data.round_to_e4m3(np.clip(x, -data.E4M3_MAX, data.E4M3_MAX))}


@pytest.mark.parametrize("precision, fault", FAULTS)
def test_a_result_from_unrounded_inputs_or_narrow_sums_fails_its_check(registry, gpu_builds, precision, fault):
    """The narrow precisions' planted faults, at every shape whose sums they change: cuBLAS FP32's result on
    the unrounded inputs passed off as the precision's (what a kernel that skipped the rounding computes), and
    its reference with every partial sum cut to BF16 or e4m3 (what one that kept its sums so computes; emulated
    here, on the host, as the device cannot be made to do it), and, for FP8 promoted to FP32, cuBLASLt's FP8
    result with FAST_ACCUM 1 at large K (what a kernel that never promoted its sums computes). Each must fail
    the precision's check; the same check passes cuBLAS in that precision
    (test_gpu_variant_matches_float64_reference)."""
    from matmulstudy.gpu.cublas import Cublas, CublasLt
    from matmulstudy.gpu.session import GpuSession
    from matmulstudy.measure.devicecheck import DeviceReference
    alone, least = fault == "sums in the tensor cores alone", LEAST_MARGIN[precision]
    precision = PRECISIONS[precision]
    for shape in TENSOR_CORES_ALONE if alone else [s for s in SHAPES if s.M * s.N <= 2**22]:
        a, b = problem(shape, "float32")
        with GpuSession() as gpu, DeviceReference(gpu, gpu_builds["harness"], a, b, precision) as reference:
            if alone:
                d_c = gpu.empty(4 * shape.M * shape.N)
                fast = CublasLt(PRECISIONS["fp8_fast"], gpu)
                try:
                    fast.gemm(*shape, *reference.operands, d_c)
                    gpu.synchronize()
                finally:
                    fast.close()
                check = reference.verify(d_c, CHECK.tolerance, precision)
            elif fault == "unrounded inputs":
                d_a, d_b, d_c = gpu.to_device(a), gpu.to_device(b), gpu.empty(4 * shape.M * shape.N)
                with Cublas(PRECISIONS["fp32"]) as blas:
                    blas.gemm(*shape, d_a, d_b, d_c)
                gpu.synchronize()
                check = reference.verify(d_c, CHECK.tolerance, precision)
            else:
                ra, rb = (x.astype(np.float64) for x in data.rounded(a, b, precision))
                c = np.zeros((shape.M, shape.N), np.float32)
                for k in range(shape.K):
                    c = SUMS_CUT[fault]((c + np.outer(ra[:, k], rb[k])).astype(np.float32))
                if np.array_equal(c, (ra @ rb).astype(np.float32)):
                    continue   # every sum already such a value: the fault changes nothing here
                check = reference.verify_host(c, CHECK.tolerance, precision)
        assert not check.ok and check.margin > least, (shape.tag, check.describe())


def test_unwritten_output_is_caught_on_the_gpu(registry, gpu_builds):
    """A launch that covers only part of C leaves poison, and the check says so."""
    naive = registry["gpu_naive"]
    short = type(naive)(**{**naive.__dict__, "tile_expr": ("BLOCK_Y*2", "BLOCK_X")})  # grid for half the rows
    rows = measure(short, Shape(64, 64, 32), "float32", gpu_builds, gpu_builds["gpu_naive", "float32"])
    assert not rows["verified"].any()
    assert rows["unwritten_elements"].iloc[0] == 32 * 64


def test_a_reference_too_large_for_the_gpu_says_which_option_to_use(gpu_builds):
    """Not allocated: the check refuses before it asks for the memory."""
    from matmulstudy.measure import devicecheck
    from matmulstudy.errors import StudyError
    from matmulstudy.gpu.session import GpuSession
    a = np.zeros((1, 1), np.float32)
    with GpuSession() as gpu:
        free, _ = gpu.cuda.mem_get_info()
        side = int((free / 8) ** 0.5) + 1   # R alone fills the memory
        shape = Shape(side, side, 1)
        with pytest.raises(StudyError, match=rf"shape {shape.tag}: checking every element needs .* set "
                                             "full_check_max_size below"):
            devicecheck.DeviceReference(gpu, gpu_builds["harness"], np.broadcast_to(a, (side, 1)),
                                        np.broadcast_to(a, (1, side)))
