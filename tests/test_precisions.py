"""The one table of precisions: what every module reads, and a precision added as one row.

The probe adds a made-up precision (fp16) to a fresh copy of the repository: one row in the table, one
chapter and one step entry in the registry, and the step's kernel file. The dry run plans the step and its
chapter's figure; the figure table and the pages follow, with no other file edited.
"""

import math
import os
import re
import subprocess
import sys

import pytest
import yaml

from conftest import ROOT, fresh_copy, snakemake
from matmulstudy import precisions
from matmulstudy.measure.verify import bound
from matmulstudy.precisions import PRECISIONS

H100 = {"sm_count": 132, "compute_capability": (9, 0), "sm_clock_khz": 1_980_000}


def test_the_precisions_name_themselves_and_their_facts():
    assert [p.id for p in precisions.TABLE] == ["fp32", "tf32", "bf16", "fp8_fast", "fp8"] and precisions.BASE.id == "fp32"
    fp32, tf32 = precisions.get("fp32"), precisions.get("tf32")
    assert fp32.arithmetic == "FP32 on the CUDA cores" and tf32.arithmetic == "TF32 on the tensor cores"
    assert tf32.adjective == "tensor-core" and [p.id for p in precisions.others()] == ["tf32", "bf16", "fp8_fast", "fp8"]
    assert (fp32.eps_in_text(), tf32.eps_in_text()) == ("0", "2⁻⁹")
    assert fp32.cpu and not tf32.cpu
    assert (fp32.cublas.math_mode, tf32.cublas.math_mode) == (0, 3)   # cublas_api.h's enumerators
    assert "CUBLAS_TF32_TENSOR_OP_MATH" in tf32.describe()
    bf16 = precisions.get("bf16")
    assert (bf16.eps_in_text(), bf16.operand_bytes, bf16.held_to_fp32) == ("0", 2, False)
    assert (bf16.cublas.data_type, fp32.cublas.data_type) == (14, None)   # library_types.h's CUDA_R_16BF
    assert "cublasGemmEx with CUDA_R_16BF inputs" in bf16.describe()
    fp8 = precisions.get("fp8_fast")
    assert (fp8.operand_bytes, fp8.b_transposed, fp8.held_to_fp32, fp8.cublas.data_type) == (1, True, False, 28)
    assert "cublasLtMatmul with CUDA_R_8F_E4M3 inputs" in fp8.describe() and "FAST_ACCUM 1" in fp8.describe()
    promoted = precisions.get("fp8")   # the same inputs and reference call, but for the mode, and a bound flat in K
    assert (promoted.operand_bytes, promoted.b_transposed, promoted.cublas.data_type) == (1, True, 28)
    assert "FAST_ACCUM 0" in promoted.describe() and promoted.reference_name == "cuBLASLt FP8"
    assert (promoted.eps_in_text(), promoted.eps_bias) == ("2⁻¹¹", 0.0)
    assert bound(8192, 8, PRECISIONS["fp8"]) == pytest.approx(8 * (2**-11 + 2**-23 * math.sqrt(8192)))


def test_a_precisions_peak_is_sms_times_its_rate_times_the_clock():
    """The H100's: 132 SMs x 128 FP32 lanes x 2 x 1980 MHz, and x 2048 TF32 flop a clock (535.3 TFLOP/s; the
    datasheet's 494.7 is the same product at 1830 MHz). An architecture the table does not know has none."""
    sms, cc, clock = H100.values()
    assert precisions.BASE.peak_facts(sms, cc, clock) == {"fp32_lanes_per_sm": 128,
                                                          "fp32_peak_gflops": pytest.approx(66908.16)}
    tf32 = precisions.get("tf32").peak_facts(sms, cc, clock)
    assert tf32["tf32_flop_per_clock_per_sm"] == 2048 and tf32["tf32_peak_gflops"] == pytest.approx(535265.28)
    assert precisions.get("tf32").peak_facts(sms, (7, 0), clock) == {"tf32_flop_per_clock_per_sm": None,
                                                                     "tf32_peak_gflops": None}
    bf16 = precisions.get("bf16").peak_facts(sms, cc, clock)   # 1,070.5 TFLOP/s; the datasheet's 989.4 at 1830 MHz
    assert bf16["bf16_flop_per_clock_per_sm"] == 4096 and bf16["bf16_peak_gflops"] == pytest.approx(1070530.56)
    gpu = {"sm_count": 132, "max_sm_clock_mhz": 1980.0, **tf32}
    assert precisions.get("tf32").peak_label(gpu) == "TF32 dense peak: 535,265 (132 SMs × 2048 flop/clock × 1980 MHz)"


def test_an_unknown_precision_is_named_with_the_known_ones():
    with pytest.raises(Exception, match=r"precision 'fp4' is not one of \['fp32', 'tf32', 'bf16', 'fp8_fast', 'fp8'\]"):
        precisions.get("fp4")
    assert bound(1024, 8, PRECISIONS["tf32"]) == pytest.approx(8 * (2**-9 + 2**-23 * 32))


def test_only_the_table_and_one_binding_spell_a_tensor_core_precision():
    """A grep for the tensor-core precision finds its row and the one binding that must spell a library's own
    name for it (CuPy's and PyTorch's TF32 switches), and nothing else of the package."""
    spelled = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "matmulstudy").rglob("*.py")
                     if re.search("tf32|TF32", p.read_text()))
    assert spelled == ["matmulstudy/precisions.py", "matmulstudy/tools/crosscheck.py"]


FP16_ROW = '''    Precision(
        id="fp16", label="FP16", unit="tensor core", inputs="float32",
        rounding="to FP16 (10 explicit mantissa bits, 5 exponent bits) in the kernel",
        eps_in=2 * 2.0**-11, eps_acc=EPS32, cublas=Cublas(0, "CUBLAS_DEFAULT_MATH"),
        rate="flop_per_clock", per_sm={(9, 0): 4096}, flop_per_rate=1,
        peak_line="FP16 dense peak: {peak:,.0f}", roof="FP16 dense (tensor cores)", colour="#8b0000"),
'''
ANCHOR = "    # a new precision: one more row above this line\n"


def add_a_precision(repo) -> str:
    """A made-up precision, fp16, as a user adds one: a row in the table, a chapter computing in it, a step of
    that chapter (its kernel a copy of the first tensor-core step's, renamed) in the chapter's folder.
    Returns the step's id."""
    table = repo / "matmulstudy" / "precisions.py"
    text = table.read_text()
    assert text.count(ANCHOR) == 1
    table.write_text(text.replace(ANCHOR, FP16_ROW + ANCHOR))
    registry = yaml.safe_load((repo / "kernels" / "registry.yaml").read_text())
    model = next(e for e in registry["variants"] if e.get("chapter") == "tensor")
    vid = "gpu_mma_fp16"
    source = (repo / "kernels" / model["file"]).read_text().replace(model["id"], vid)
    (repo / "kernels" / "fp16").mkdir()
    (repo / "kernels" / "fp16" / f"24_{vid}.cu").write_text(source)
    chapter = {"id": "fp16", "title": "tensor cores (FP16)", "precision": "fp16"}
    step = dict(model, id=vid, chapter="fp16", file=f"fp16/24_{vid}.cu", title="24 mma.sync (FP16)")
    text = (repo / "kernels" / "registry.yaml").read_text()
    text = text.replace("\nvariants:\n", "  - " + yaml.safe_dump(chapter, sort_keys=False).replace("\n", "\n    ")
                        .rstrip() + "\n\nvariants:\n", 1)
    (repo / "kernels" / "registry.yaml").write_text(
        text + "\n" + "".join("  " + line for line in yaml.safe_dump([step], sort_keys=False).splitlines(True)))
    return vid


@pytest.mark.slow
def test_a_precision_is_one_row_a_chapter_and_its_kernels(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    fresh_copy(repo)
    vid = add_a_precision(repo)
    def edited(path) -> bool:   # new, or not as in this repository
        ours = ROOT / path.relative_to(repo)
        return not ours.is_file() or path.read_bytes() != ours.read_bytes()
    changed = sorted(str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_file() and edited(p))
    assert changed == ["kernels/fp16/24_gpu_mma_fp16.cu", "kernels/registry.yaml", "matmulstudy/precisions.py"]
    env = {**os.environ, "PYTHONPATH": str(repo)}

    # the dry run plans the step, its chapter's figure, and nothing of the precision goes unplanned
    proc = snakemake("-n", "--config", "label=probe", "arch=sm_90", cwd=repo, snakefile=repo / "Snakefile", env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for planned in (f"results/probe/build/float32/{vid}.cubin", f"results/probe/bench/float32/{vid}_s0.csv",
                    "reports/probe/figures/progression_fp16.svg", "reports/probe/figures/progression_tf32.svg"):
        assert planned in proc.stdout, planned

    # the figure table and the pages follow: a committed study re-rendered in the copy lists the new
    # chapter's figure, which says that this study has no step in it, and the bound names its epsilon
    names = subprocess.run([sys.executable, "-c", "from matmulstudy.report.figures import FIGURES; "
                            "print(' '.join(f.name for f in FIGURES))"], cwd=repo, env=env, capture_output=True,
                           text=True, check=True).stdout.split()
    assert names.index("progression_fp16") == names.index("progression_fp8") + 1
    study = repo / "reports" / "h100"
    drawn = ("progression_fp16", "progression_tf32", "progression", "roofline_tensor", "efficiency_tensor")
    proc = subprocess.run([sys.executable, "-m", "matmulstudy.report.render", str(study), "--only", *drawn],
                          cwd=repo, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    page = (study / "README.md").read_text()
    assert ("- [progression_fp16](figures/progression_fp16.svg): the "
            "tensor-core chapter (FP16 arithmetic) at the reference size, with cuBLAS FP16") in page
    assert "ε_in = 0 for FP32, 2⁻⁹ for TF32, 0 for BF16, 0 for FP8 fast-accum, 2⁻¹¹ for FP8, 2⁻¹⁰ for FP16" in page
    assert "no tensor-core (FP16) steps in this study" in (study / "figures" / "progression_fp16.svg").read_text()
    for name in drawn[1:]:   # the others as committed
        assert (study / "figures" / f"{name}.svg").read_bytes() == \
            (ROOT / "reports" / "h100" / "figures" / f"{name}.svg").read_bytes(), name
