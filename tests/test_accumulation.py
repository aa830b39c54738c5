"""FP8 (e4m3) inputs and what the tensor cores keep of their sums: the host's rounding to e4m3 and its bytes
(measure/data.py), the family of models of a tensor-core instruction's sum (measure/tensorcore.py), and the
probe that fits them to the GPU (gpu/accumulate.cu, tools/accumulation.py)."""

import shutil
import subprocess

import numpy as np
import pytest

from matmulstudy.errors import StudyError
from matmulstudy.measure import data, tensorcore
from matmulstudy.tools import accumulation
from matmulstudy.precisions import PRECISIONS

FINITE = data.E4M3_FINITE


def test_every_finite_e4m3_byte_is_its_value_and_back():
    values = data.e4m3_values(FINITE)
    assert np.isnan(data.e4m3_values(np.array([0x7F, 0xFF], dtype=np.uint8))).all()
    assert np.array_equal(data.e4m3_bits(values), FINITE)
    magnitudes = np.unique(np.abs(values))
    assert magnitudes[1] == 2.0**-9 and magnitudes[-1] == 448 and len(magnitudes) == 127
    assert np.array_equal(data.round_to_e4m3(values).view(np.uint32), values.view(np.uint32))   # e4m3 stays


def test_rounding_to_e4m3_goes_to_the_nearest_value_and_ties_to_the_even_one():
    table = np.unique(data.e4m3_values(FINITE).astype(np.float64))
    x = np.concatenate([(np.random.default_rng(0).random(200_000, dtype=np.float32) * 2 - 1) * 3,
                        ((table[1:] + table[:-1]) / 2).astype(np.float32)])   # every midpoint: a tie
    rounded = data.round_to_e4m3(x).astype(np.float64)
    i = np.searchsorted(table, x.astype(np.float64))
    below, above = table[np.clip(i - 1, 0, None)], table[np.clip(i, None, len(table) - 1)]
    nearest = np.where(x - below < above - x, below, above)
    tie = x - below == above - x
    even = np.where(data.e4m3_bits(below.astype(np.float32)) % 2 == 0, below, above)
    assert tie.sum() >= len(table) - 1
    assert np.array_equal(rounded, np.where(tie, even, nearest))
    # below half the smallest step: zero (the tie at 2^-10 too); 1 - 2^-5 rounds up to 1
    assert list(data.round_to_e4m3(np.array([2.0**-10, -2.0**-11, 1 - 2.0**-5], dtype=np.float32))) == [0, 0, 1]


def test_values_past_e4m3_or_with_more_bits_are_refused():
    with pytest.raises(ValueError, match="scale them first"):
        data.round_to_e4m3(np.array([500.0], dtype=np.float32))
    with pytest.raises(ValueError, match="round_to_e4m3"):
        data.e4m3_bits(np.array([1.0625], dtype=np.float32))   # 4 mantissa bits
    with pytest.raises(ValueError, match="round_to_e4m3"):
        data.e4m3_bits(np.array([3 * 2.0**-11], dtype=np.float32))   # between two subnormals


def _dots(kind, seed=1, problems=4):
    return accumulation.dots(*accumulation.designed(kind, problems, 64, np.random.default_rng(seed)))


@pytest.mark.parametrize("truth", [tensorcore.HOPPER_FP8_WGMMA, tensorcore.Model(16, 24, 23, "rn", False)])
def test_the_fit_finds_the_model_that_made_the_results(truth):
    fa, fb, fc = _dots("wide")
    d = tensorcore.chain(truth, fa, fb, fc)
    (best, score), (_, second) = tensorcore.fit(fa, fb, fc, d)[:2]
    assert best == truth and score == 1.0 and second < 1.0
    fa, fb, fc = _dots("study")   # eight instructions in a row: the accumulator carried from one to the next
    assert fa.shape[1:] == (8, 32) and (tensorcore.chain(best, fa, fb, fc) == tensorcore.chain(truth, fa, fb, fc)).all()


def test_a_model_with_every_bit_is_an_exact_sum_and_cutting_bits_moves_it_toward_zero():
    fa, fb, fc = _dots("study")
    exact = (fa.astype(np.float64) * fb).sum(axis=(1, 2))   # at most 256 products of 8 bits: exact in float64
    wide = tensorcore.chain(tensorcore.Model(32, 40, 52, "rz", True), fa, fb, fc)
    assert np.array_equal(wide, exact)
    fa, fb = np.abs(fa[:, :1]), np.abs(fb[:, :1])   # one instruction, every product positive
    exact = (fa.astype(np.float64) * fb).sum(axis=(1, 2))
    cut = tensorcore.chain(tensorcore.Model(32, 13, 13, "rz", True), fa, fb, fc)   # aligned to the values
    assert (cut != exact).mean() > 0.5 and (cut <= exact).all() and (cut >= exact * (1 - 33 * 2.0**-13)).all()


def test_the_probe_builds_for_sm90_with_the_fp8_tensor_core_instruction_and_says_which_gpu_it_needs(tmp_path):
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    cubin = accumulation.build_probe("sm_90", tmp_path)
    if shutil.which("cuobjdump"):
        sass = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True).stdout
        assert "QGMMA.64x8x32.F32.E4M3.E4M3" in sass   # wgmma's FP8 path
        assert "HMMA.16816.F32" in sass                # mma.sync's e4m3 on sm_90: FP16 instructions
    with pytest.raises(StudyError, match="needs an sm_90 GPU"):
        accumulation.build_probe("sm_80", tmp_path)


@pytest.mark.gpu
def test_one_model_of_the_family_matches_every_fp8_wgmma_sum_bit_for_bit():
    from matmulstudy.gpu import host
    if host.arch_of(host.visible_gpu()["compute_capability"]) != "sm_90":
        pytest.skip("the FP8 probe runs on an sm_90 GPU (H100, H200)")
    table = accumulation.measure(problems=16)
    best = table[(table.instruction == "wgmma m64n8k32") & (table["rank"] == 1)].iloc[0]
    assert best.match_wide == 1.0 and best.match_study == 1.0, table.to_string()
    fields = ["group", "align", "bits", "rounding", "c_aligned", "reference"]
    assert tuple(best[fields]) == tuple(getattr(tensorcore.HOPPER_FP8_WGMMA, f) for f in fields), table.to_string()
    fp32 = table[(table.instruction == "wgmma m64n8k32") & (table["rank"] == "FP32 sum")].iloc[0]
    assert fp32.match_wide < 0.9, table.to_string()   # the FP8 sums are not FP32's


def test_promoting_to_fp32_keeps_the_error_flat_in_k_where_the_tensor_cores_alone_let_it_grow():
    rows = tensorcore.errors(ks=(256, 2048), n=300, ways=(None, 1))
    rms = {(r["K"], r["promoted_every"]): r["rms"] for r in rows}
    assert rms[2048, 0] > 2 * rms[256, 0] and rms[2048, 1] < 1.5 * rms[256, 1] and rms[256, 1] < rms[256, 0], rms
    exact = tensorcore.errors(tensorcore.Model(32, 40, 52, "rz", True), ks=(256,), n=50, ways=(None, 2))
    assert [r["largest"] for r in exact] == [0, 0]   # every bit kept: the exact sum, in the tensor cores or not


@pytest.mark.parametrize("precision, every, ks, share", [
    ("fp8_fast", None, ((32, 4000), (1024, 1000), (4096, 300)), 1 / 3),
    ("fp8", 4, ((64, 4000), (1024, 1000), (4096, 300)), 1 / 4),
])
def test_an_fp8_bound_holds_the_emulated_sums_and_rejects_each_planted_fault(precision, every, ks, share):
    """Bound (1) of precisions.py's FP8 rows against the tensor cores' sums emulated bit for bit
    (HOPPER_FP8_WGMMA), on the study's inputs rounded to e4m3: fp8_fast's with no promotion (cuBLASLt's
    FAST_ACCUM), fp8's promoted to FP32 every four wgmma (128 of K). The largest error stays under `share` of
    the bound. The planted faults go over it on a share of the elements at every K: the unrounded float32
    inputs' product, and the sums cut to BF16 or to e4m3 after each product (what a kernel that kept its sums
    in 8 or 4 bits computes); fp8's also rejects the tensor cores' sums alone once K is large (4096)."""
    from matmulstudy.measure.verify import bound
    rng = np.random.default_rng(3)
    for K, n in ks:
        a, b = (rng.random((n, K), dtype=np.float32) * 2 - 1 for _ in range(2))
        ra, rb = (data.round_to_e4m3(x).astype(np.float64) for x in (a, b))
        exact, r = (ra * rb).sum(axis=1), np.sqrt(((ra * rb) ** 2).sum(axis=1))
        held = bound(K, 8, PRECISIONS[precision])
        summed = tensorcore.promoted(tensorcore.HOPPER_FP8_WGMMA, ra, rb, every)
        assert (np.abs(summed - exact) / r).max() < held * share, K
        faults = {"unrounded inputs": (a.astype(np.float64) * b).sum(axis=1)}
        for name, cut in (("BF16 sums", data.round_to_bf16),
                          ("e4m3 sums", lambda x: data.round_to_e4m3(np.clip(x, -data.E4M3_MAX, data.E4M3_MAX)))):
            s = np.zeros(n, np.float32)
            for k in range(K):
                s = cut((s + ra[:, k] * rb[:, k]).astype(np.float32))
            faults[name] = s.astype(np.float64)
        if every and K >= 4096:
            faults["the tensor cores' sums alone"] = tensorcore.promoted(tensorcore.HOPPER_FP8_WGMMA, ra, rb, None)
        for name, c in faults.items():
            over = (np.abs(c - exact) / r > held).mean()
            assert over > 0.01, (K, name, over)


def test_an_fp8_variant_reads_a_as_bytes_and_b_as_the_bytes_of_its_transpose():
    """data.operands for the FP8 precision: A's e4m3 bytes M x K, B's N x K (K-major, as FP8's wgmma and
    cuBLASLt's FP8 GEMM take it), each the bytes of the inputs rounded to e4m3."""
    from matmulstudy.study.shapes import Shape
    a, b = data.make_inputs(Shape(5, 3, 7), 1)
    qa, qb = data.operands(a, b, PRECISIONS["fp8_fast"])
    assert (qa.dtype, qa.shape, qb.dtype, qb.shape) == (np.uint8, (5, 7), np.uint8, (3, 7))
    assert np.array_equal(data.e4m3_values(qa), data.round_to_e4m3(a))
    assert np.array_equal(data.e4m3_values(qb).T, data.round_to_e4m3(b)) and qb.flags.c_contiguous
