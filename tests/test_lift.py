"""The fastest BF16 and FP8 kernels lifted out of the study (kernels/examples/lift_gemm.cu): one include, the
types written out, the maps made by the driver, no Python. It builds with nvcc alone; on an sm_90 GPU its own
check passes, and its C is the study's harness's, bit for bit, on the same inputs."""

import shutil
import subprocess

import numpy as np
import pytest

from matmulstudy.measure import data
from matmulstudy.study.paths import ROOT
from matmulstudy.study.shapes import Shape

EXAMPLE = ROOT / "kernels" / "examples" / "lift_gemm.cu"
BUILD = ["nvcc", "-std=c++17", "-O3", "-gencode", "arch=compute_90a,code=sm_90a"]   # as its header says


@pytest.fixture(scope="module")
def lift_gemm(tmp_path_factory):
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    exe = tmp_path_factory.mktemp("lift") / "lift_gemm"
    proc = subprocess.run([*BUILD, "-o", str(exe), str(EXAMPLE)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return exe


def test_the_example_builds_with_nvcc_alone_and_includes_one_header_of_the_kernels(lift_gemm):
    includes = [line for line in EXAMPLE.read_text().splitlines() if line.startswith('#include "')]
    assert includes == ['#include "../sm90/gemm.cuh"   // every role of the tensor-core kernels']
    assert lift_gemm.stat().st_size > 0


@pytest.mark.parametrize("args, said", [
    (["bf16", "8"], "usage: lift_gemm"),
    (["int8", "8", "8", "8", "a", "b", "c"], "usage: lift_gemm"),
    (["bf16", "8", "8", "12", "a", "b", "c"], "BF16's rows must start on 16 bytes: K and N multiples of 8"),
    (["fp8", "8", "8", "24", "a", "b", "c"], "FP8's rows must start on 16 bytes: K a multiple of 16, N of 4"),
    (["fp8", "8", "6", "32", "a", "b", "c"], "FP8's rows must start on 16 bytes: K a multiple of 16, N of 4"),
    (["fp8", "8", "8", "32", "no-such-a", "b", "c"], "cannot read 256 bytes from no-such-a")])
def test_the_example_says_what_is_wrong_with_its_arguments_before_it_asks_for_a_gpu(lift_gemm, args, said):
    proc = subprocess.run([str(lift_gemm), *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and said in proc.stderr, proc.stderr


@pytest.mark.gpu
def test_the_lifted_kernels_check_themselves(lift_gemm):
    proc = subprocess.run([str(lift_gemm)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("every sampled element within the bound") == 2, proc.stdout


@pytest.mark.gpu
@pytest.mark.parametrize("vid, which", [("gpu_wgmma_bf16_drawn_late", "bf16"), ("gpu_wgmma_fp8", "fp8")])
def test_the_lifted_kernel_gives_the_studys_bits(registry, gpu_builds, lift_gemm, tmp_path, vid, which):
    """The same inputs through the study's harness (its build of the step, its launcher) and through the lifted
    program: the same C, bit for bit (the same wgmma on the same tiles in the same order)."""
    from matmulstudy.measure import bench
    from matmulstudy.gpu.session import GpuSession
    v = registry[vid]
    if v.unsupported(gpu_builds["arch"]):
        pytest.skip(v.unsupported(gpu_builds["arch"]))
    shape = Shape(1537, 2056, 1040)
    a, b = data.operands(*data.make_inputs(shape, 3), v.precision)   # the bits the kernels read
    with GpuSession() as gpu:
        d_a, d_b, d_c = gpu.to_device(a), gpu.to_device(b), gpu.empty(4 * shape.M * shape.N)
        launch, _ = bench.gpu_launch(gpu, v, gpu_builds[vid, "float32"], shape, d_a, d_b, d_c)
        launch()
        gpu.synchronize()
        harness = gpu.to_host(d_c, (shape.M, shape.N))
    a.tofile(tmp_path / "a.bin")
    b.tofile(tmp_path / "b.bin")
    proc = subprocess.run([str(lift_gemm), which, *map(str, shape), str(tmp_path / "a.bin"), str(tmp_path / "b.bin"),
                           str(tmp_path / "c.bin")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lifted = np.fromfile(tmp_path / "c.bin", np.float32).reshape(shape.M, shape.N)
    assert np.array_equal(lifted.view(np.uint32), harness.view(np.uint32))
