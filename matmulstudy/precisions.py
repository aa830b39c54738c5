"""The one table of the study's precisions: what a chapter computes in.

Everything that depends on a precision reads its row here: the registry (a
chapter's precision, whether a CPU variant may compute in it), the check (the
input epsilon of bound (1), measure/verify.py), cuBLAS (the math mode of the
reference every step of the precision is measured against), the GPU's facts
(its dense rate per SM, for the peak and the roof), and the report (panel
titles, lines and colours). Adding a precision is one row below, a chapter
of that precision in kernels/registry.yaml, and its kernels.

A precision is handed along as its row: the registry resolves a chapter's
id once (Chapter.precision, Variant.precision are rows), and every function
takes the row. Ids live only in files (registry.yaml, the tables' precision
column) and are looked up where such a file is read; a row held against an
id string raises, so that code passing ids where rows go fails at once.

The base precision, FP32, is the study's own: CPU variants compute in it,
int32 aside every fraction of a peak is of its peak, and every other
precision's result is also held against its bound, where it must fail.

The rows' input epsilons (bound (1) of measure/verify.py, which derives the
FP32 part):
- FP32: its inputs are used as they are, eps_in = 0.
- TF32: each float32 input keeps 10 explicit mantissa bits (cvt.rna, or the
  library's own rounding), so a product moves by less than 2^-10 per input:
  eps_in = 2 * 2^-10 = 2^-9 beside FP32's eps_acc (its sums are FP32).
  With truncated inputs each product shrinks by about 2^-10 on average: the
  error is about 2^-10 |C_ij| plus noise, |C_ij| about r_ij for random signs
  (largest about 6 r_ij among 8192^2 elements), a margin of about 0.4.
  Held against FP32's bound instead, rounding to 10 mantissa bits moves each
  product by p_k (d_a + d_b), a rounding error uniform within half an ulp
  (2^-11 of the value at most, 2^-11 / sqrt(6) in rms): the sum has rms
  2^-11 r / sqrt(3) whatever K is, 2^12 / sqrt(3 K) in units of FP32's
  eps32 sqrt(K) r: 26 rms at K = 8192 (its largest element near 140, 18x the
  bound), 74 at K = 1024. Its largest element would come within 2x of FP32's
  bound only beyond K = 5 * 10^5: the check tells TF32 arithmetic from FP32
  at every size of the study. FP32's worst-case bound u K^1.5 r would not.
- BF16: each float32 input is rounded to nearest-even BF16 (7 explicit
  mantissa bits) on the host, before the upload, and the kernels read the
  16-bit values; the float64 reference is the product of those rounded
  inputs. A product of two BF16 values has at most 16 significant bits: it
  is exact in FP32 and in the tensor cores, so eps_in = 0 and the error is
  in the sums alone. Those are not IEEE's: a tensor-core instruction adds
  its 16 products (one k-step of mma.sync m16n8k16 or wgmma k16) to the
  accumulator aligned to the largest of them and cut toward zero, not
  rounded to nearest (Fasi et al., "Numerical behavior of NVIDIA tensor
  cores", PeerJ CS 2021; Khattak and Mikaitis, "Accurate models of NVIDIA
  tensor cores", 2025). Each cut loses up to one ulp of the partial sum
  s_g, 2^-23 |s_g|, always toward zero: unlike rounding to nearest it does
  not average out along a dot product, and the K / 16 cuts of a random walk
  of partial sums (|s_g| about r) add up to about 2^-23 (K / 16) r at most:
  eps_bias = 2^-23 / 16, a term linear in K beside FP32's eps_acc sqrt(K).
  tests/test_verify.py emulates such sums: their largest error is 0.04 of
  BF16's bound at K = 1024 and 0.09 at 8192, where against FP32's bound it
  would be 0.6. The inputs' rounding is the precision's definition, so its
  results are not held against FP32's bound (held_to_fp32 False). Instead
  a result computed from the unrounded inputs moves each product by up to
  2^-8 of itself, about 2^-9 r in rms over a dot product: 13 times BF16's
  bound at its largest element at K = 8192 and 89 times at 1024 in that
  test; a sum kept in BF16 (each partial sum cut to 8 bits) is over 1,000
  times. Both are planted faults of the GPU tests.
- FP8 fast-accum: each float32 input is rounded to nearest-even e4m3 (3
  explicit mantissa bits, exponents 2^-6 to 2^8, multiples of 2^-9 below:
  |x| <= 2^-10 becomes 0, about 0.1% of the study's uniform inputs) on the
  host, and the kernels read the bytes; B is stored N x K (K-major: FP8
  wgmma reads both operands so, and cuBLASLt's FP8 GEMM takes only the
  "TN" layout). The reference is the float64 product of the rounded
  inputs; a product of two e4m3 values has at most 8 significant bits and
  is exact, so eps_in = 0. The sums are the tensor cores' alone, the way
  cuBLASLt sums with CUBLASLT_MATMUL_DESC_FAST_ACCUM: measured bit for bit
  on the H200 (matmulstudy/measure/tensorcore.py's HOPPER_FP8_WGMMA,
  docs/fp8.md), each wgmma k32 aligns its 32 products and the accumulator
  to the largest exponent among them and cuts them toward zero 13 bits
  below it, then cuts the sum to 13 mantissa bits. Far coarser than FP32,
  and one-sided: emulating it on the study's inputs (tensorcore.errors;
  tests/test_accumulation.py), the error in units of 2^-13 r has rms 0.31,
  3.8, 9.9 and 15.6 at K = 32, 1024, 4096 and 8192 (about 0.1 sqrt(K) +
  K / 1200), largest 2.5, 38, 79 and 161 among 10^5, 2 * 10^4, 8,000 and
  8,000 dot products. So eps_acc = 2^-14 and eps_bias = 2^-21 (bound (1):
  24, 160, 384 and 618 of those units with tau = 8): the largest emulated
  errors sit at 0.11 to 0.26 of the bound. Over all 8192^2 elements the
  tail reaches further: on an H200 the largest error was 0.40, 0.59 and 0.64
  of the bound at 2048, 4096 and 8192, the same for step 50 and cuBLASLt.
  The planted faults it rejects: a result of the unrounded float32 inputs
  (rms 270 units at every K: 94% of elements over the bound at K = 32, 2% at
  8192), and sums kept in BF16 or e4m3 (rms 55 to 850 units for BF16: a
  third to a half of the elements over it).
- FP8: the same inputs, the sums promoted to FP32 (DeepGEMM's way, and
  cuBLASLt's without fast accumulation): the tensor cores sum each 128 of K
  (four wgmma k32) from zero as above, and the CUDA cores add those parts
  in FP32, rounded to nearest. A part's error is at most about a fast-accum
  sum's at K = 128, relative to the part's own root-sum-square r_p; the
  parts' signs are random, so their errors add in quadrature, and
  sqrt(sum r_p^2) = r: the error is constant in K. Emulated
  (tensorcore.promoted with every = 4; tests/test_accumulation.py), in
  units of 2^-13 r: rms 0.51 at K = 64, then 0.85 from K = 128 on (0.85 at
  1024, 0.86 at 4096 and 8192); largest 7.0, 11.6, 9.8 and 6.1 among
  4 * 10^5, 4 * 10^5, 2 * 10^5 and 5 * 10^4 dot products at K = 64, 128,
  256 and 1024, the tail falling about 25 times every 4 units at K = 128
  (1.6 * 10^-4 of them past 8). The term constant in K is therefore
  eps_in = 2^-11 (32 units with tau = 8: extrapolating that tail, the
  largest of some 10^7 elements near K = 128 lies at about half of it),
  beside FP32's eps_acc for the parts' additions (K / 128 of them; sqrt(K)
  overstates it). On an H200 the largest error over all elements was 0.18
  to 0.20 of it at 2048, 4096 and 8192, the same for step 51 and cuBLASLt.
  It rejects the unrounded inputs (rms 270 units), sums kept in BF16 or
  e4m3, and, from K = 4096 on, the tensor cores' sums alone (fast-accum's:
  rms 9.9 and 15.6 units at 4096 and 8192, largest 79 and 161).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .elements import Element, element
from .errors import StudyError

EPS32 = 2.0**-23   # float32 machine epsilon: every precision here sums in FP32


@dataclass(frozen=True)
class Cublas:
    """How cuBLAS computes a precision's reference: cublasSgemm under this math mode, or, for inputs of
    another element type, cublasGemmEx with A and B of that cudaDataType and CUBLAS_COMPUTE_32F."""
    math_mode: int
    math_name: str                  # the enumerator's name in cublas_api.h
    data_type: int | None = None    # cudaDataType of A and B for cublasGemmEx (None: cublasSgemm)
    data_name: str = ""             # its name in library_types.h
    fast_accum: bool | None = None  # cuBLASLt's FP8 GEMM with CUBLASLT_MATMUL_DESC_FAST_ACCUM so (None: cuBLAS)

    @property
    def library(self) -> str:
        """'cuBLAS', or 'cuBLASLt' where the call is cuBLASLt's FP8 GEMM."""
        return "cuBLAS" if self.fast_accum is None else "cuBLASLt"

    @property
    def call(self) -> str:
        """As a caption names it."""
        if self.fast_accum is not None:
            return (f"cublasLtMatmul with {self.data_name} inputs (\"TN\": B stored N x K), CUBLAS_COMPUTE_32F, FP32 "
                    f"output and CUBLASLT_MATMUL_DESC_FAST_ACCUM {int(self.fast_accum)}")
        if self.data_type is None:
            return f"cublasSgemm with {self.math_name}"
        return f"cublasGemmEx with {self.data_name} inputs, CUBLAS_COMPUTE_32F and FP32 output"


@dataclass(frozen=True, eq=False)
class Precision:
    id: str                 # as chapters and variants name it
    label: str              # as the report writes it
    unit: str               # what multiplies: "CUDA core" or "tensor core"
    inputs: str             # the element type the kernels read: float32, bfloat16 (16-bit values), float8_e4m3 (bytes)
    rounding: str           # what happens to the inputs before they are multiplied
    eps_in: float           # bound (1)'s term constant in K: one product's error from its rounded inputs, or
                            # the tensor cores' sums between two promotions to FP32 (FP8)
    eps_acc: float          # bound (1): rounding of each FP32 addition
    cublas: Cublas          # the reference's call
    rate: str               # what per_sm counts: "lanes" (FMA units) or "flop_per_clock"
    per_sm: dict            # {compute capability: that count per SM}
    flop_per_rate: int      # flop a clock of one `rate`: 2 for an FMA lane
    peak_line: str          # the progression's line at the peak (str.format: peak, sms, per_sm, mhz)
    roof: str               # the roofline's name of its peak
    colour: str             # its cuBLAS reference in every figure
    cpu: bool = False       # whether a CPU variant may compute in it
    eps_bias: float = 0.0   # bound (1)'s term linear in K: a sum's error that does not average out
    held_to_fp32: bool = True   # whether its results are also held against FP32's bound (where they must fail)
    sums: str = "in FP32"   # how its sums are kept, for a caption
    b_transposed: bool = False   # B stored N x K (K-major) for its kernels and its reference, not K x N
    page: str = ""          # its chapter page in docs/ (<id>.md unless given)
    sources: tuple = field(default_factory=tuple)   # where per_sm comes from

    def __eq__(self, other) -> bool:
        """One row is one precision: equal by id. Held against an id string it raises rather than say False,
        so that code still passing the id where the row is handed along fails where it is, not quietly."""
        if isinstance(other, str):
            raise TypeError(f"a Precision is compared with the string {other!r}: compare its .id, or pass the row "
                            "(precisions.get)")
        return isinstance(other, Precision) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"Precision({self.id!r})"

    @property
    def arithmetic(self) -> str:
        """'FP32 on the CUDA cores': a panel's title."""
        return f"{self.label} on the {self.unit}s"

    @property
    def adjective(self) -> str:
        """'tensor-core', as in 'the tensor-core chapter'."""
        return self.unit.replace(" ", "-")

    @property
    def rate_key(self) -> str:
        """gpu.json's key of its rate per SM: fp32_lanes_per_sm, ..."""
        return f"{self.id}_{self.rate}_per_sm"

    @property
    def peak_key(self) -> str:
        """gpu.json's key of its peak at the highest SM clock, in GFLOP/s."""
        return f"{self.id}_peak_gflops"

    @property
    def is_base(self) -> bool:
        return self is BASE

    def describe(self) -> str:
        """One sentence for a caption: what its steps compute, and against what."""
        return (f"{self.label}: float32 inputs rounded {self.rounding}, multiplied on the {self.unit}s, summed "
                f"{self.sums}; its reference is cuBLAS, {self.cublas.call}.")

    @property
    def rounds_inputs(self) -> bool:
        """Whether its inputs are rounded (to BF16 or e4m3) before its kernels read them: by the GPU reference
        (measure/devicecheck.py), or on the host (measure/data.py's `rounded`) where no GPU reference is made."""
        return self.element.narrow

    @property
    def element(self) -> Element:
        """The element type of A and B as its kernels read them (elements.py)."""
        return element(self.inputs)

    @property
    def operand_bytes(self) -> int:
        """Bytes of one element of A or B as its kernels read it."""
        return self.element.bytes

    def peak_facts(self, sm_count: int, compute_capability: tuple, sm_clock_khz: float) -> dict:
        """Its rate per SM on this architecture and the dense peak at that clock (None where the table does
        not know the architecture: no peak is drawn)."""
        per_sm = self.per_sm.get(tuple(compute_capability))
        peak = sm_count * per_sm * self.flop_per_rate * sm_clock_khz / 1e6 if per_sm else None
        return {self.rate_key: per_sm, self.peak_key: peak}

    def peak_label(self, gpu: dict) -> str:
        """The line the progression draws at its peak, from a study's gpu.json."""
        return self.peak_line.format(peak=gpu[self.peak_key], sms=gpu.get("sm_count"),
                                     per_sm=gpu.get(self.rate_key), mhz=gpu.get("max_sm_clock_mhz", 0))

    @property
    def doc(self) -> str:
        """The file name of its chapter page in docs/."""
        return self.page or f"{self.id}.md"

    @property
    def reference_name(self) -> str:
        """'cuBLAS BF16', 'cuBLASLt FP8 fast-accum': its reference as a caption names it."""
        return f"{self.cublas.library} {self.label}"

    def eps_in_text(self) -> str:
        """eps_in as the page writes it: 0, or a power of two (2⁻⁹)."""
        return power_text(self.eps_in)

    def eps_bias_text(self) -> str:
        """eps_bias as the page writes it: a fraction of FP32's epsilon (2⁻²³/16), or a power of two."""
        parts = EPS32 / self.eps_bias if self.eps_bias else 0
        return f"2⁻²³/{round(parts)}" if parts >= 1 and parts == round(parts) else power_text(self.eps_bias)


def power_text(x: float) -> str:
    """0, a power of two as the pages write it (2⁻⁹), or the number."""
    if x == 0:
        return "0"
    exponent = math.log2(x)
    if exponent != int(exponent):
        return f"{x:g}"
    return "2" + str(int(exponent)).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


# FP32 lanes (FMA units) per SM by compute capability, from the CUDA C Programming Guide's table of
# arithmetic instruction throughput.
_FP32_LANES = {(6, 0): 64, (6, 1): 128, (6, 2): 128, (7, 0): 64, (7, 2): 64, (7, 5): 64, (8, 0): 64, (8, 6): 128,
               (8, 7): 128, (8, 9): 128, (9, 0): 128, (10, 0): 128, (10, 3): 128, (12, 0): 128}

# Dense TF32 tensor-core flop per clock per SM (2 per multiply-add), from NVIDIA's whitepapers' peak tables
# divided by SMs and boost clock: A100 156 TFLOP/s = 108 x 1024 x 1410 MHz; GA102 (RTX 3090) 35.6 = 82 x 256 x
# 1695 MHz; AD102 (RTX 4090) 82.6 = 128 x 256 x 2520 MHz; H100 SXM 494.7 = 132 x 2048 x 1830 MHz. Other
# architectures: not known here (no TF32 peak is drawn).
_TF32_FLOP = {(8, 0): 1024, (8, 6): 256, (8, 9): 256, (9, 0): 2048}

# Dense BF16 tensor-core flop per clock per SM, from the same tables: A100 312 TFLOP/s = 108 x 2048 x 1410 MHz;
# GA102 71 = 82 x 512 x 1695 MHz; AD102 165.2 = 128 x 512 x 2520 MHz; H100 SXM 989.4 = 132 x 4096 x 1830 MHz.
_BF16_FLOP = {(8, 0): 2048, (8, 6): 512, (8, 9): 512, (9, 0): 4096}

# Dense FP8 tensor-core flop per clock per SM (FP32 accumulation), from the same tables: H100 SXM 1978.9 TFLOP/s =
# 132 x 8192 x 1830 MHz. Other architectures: not known here (no FP8 peak is drawn).
_FP8_FLOP = {(9, 0): 8192}

# What the two FP8 rows share: the inputs, B's layout, the tensor cores and their peak, cuBLASLt's call; they
# differ in how the sums are kept (in the tensor cores alone, or promoted to FP32), so in bound and reference mode.
_FP8 = dict(
    unit="tensor core", inputs="float8_e4m3",
    rounding="to e4m3 (3 explicit mantissa bits, nearest-even) on the host, stored as bytes, B as N x K",
    held_to_fp32=False, b_transposed=True, page="fp8.md",
    rate="flop_per_clock", per_sm=_FP8_FLOP, flop_per_rate=1,
    peak_line="FP8 dense peak: {peak:,.0f} ({sms} SMs × {per_sm} flop/clock × {mhz:.0f} MHz)",
    roof="FP8 dense (tensor cores)", sources=("NVIDIA H100 whitepaper, dense FP8 peak",))


def _fp8_cublas(fast_accum: bool) -> Cublas:
    """cuBLASLt's FP8 GEMM (CUDA_R_8F_E4M3 inputs) with CUBLASLT_MATMUL_DESC_FAST_ACCUM so."""
    return Cublas(0, "CUBLAS_DEFAULT_MATH", data_type=28, data_name="CUDA_R_8F_E4M3", fast_accum=fast_accum)


TABLE = (
    Precision(
        id="fp32", label="FP32", unit="CUDA core", inputs="float32", rounding="none: float32 as it is",
        eps_in=0.0, eps_acc=EPS32, cublas=Cublas(0, "CUBLAS_DEFAULT_MATH"),
        rate="lanes", per_sm=_FP32_LANES, flop_per_rate=2,
        peak_line="FP32 peak: {peak:,.0f}", roof="FP32", colour="black", cpu=True,
        sources=("CUDA C Programming Guide, arithmetic instruction throughput",)),
    Precision(
        id="tf32", label="TF32", unit="tensor core", inputs="float32",
        rounding="to TF32 (10 explicit mantissa bits) in the kernel",
        eps_in=2 * 2.0**-10, eps_acc=EPS32, cublas=Cublas(3, "CUBLAS_TF32_TENSOR_OP_MATH"),
        rate="flop_per_clock", per_sm=_TF32_FLOP, flop_per_rate=1,
        peak_line="TF32 dense peak: {peak:,.0f} ({sms} SMs × {per_sm} flop/clock × {mhz:.0f} MHz)",
        roof="TF32 dense (tensor cores)", colour="#4b0082",
        sources=("NVIDIA A100, GA102, AD102 and H100 whitepapers, dense TF32 peaks",)),
    Precision(
        id="bf16", label="BF16", unit="tensor core", inputs="bfloat16",
        rounding="to BF16 (7 explicit mantissa bits, nearest-even) on the host, stored as 16-bit values",
        eps_in=0.0, eps_acc=EPS32, eps_bias=EPS32 / 16, held_to_fp32=False,
        cublas=Cublas(0, "CUBLAS_DEFAULT_MATH", data_type=14, data_name="CUDA_R_16BF"),
        rate="flop_per_clock", per_sm=_BF16_FLOP, flop_per_rate=1,
        peak_line="BF16 dense peak: {peak:,.0f} ({sms} SMs × {per_sm} flop/clock × {mhz:.0f} MHz)",
        roof="BF16 dense (tensor cores)", colour="#8b4513",
        sources=("NVIDIA A100, GA102, AD102 and H100 whitepapers, dense BF16 peaks",)),
    Precision(
        id="fp8_fast", label="FP8 fast-accum",
        sums="in the tensor cores alone (13 bits below the largest exponent, cut toward zero)",
        eps_in=0.0, eps_acc=2.0**-14, eps_bias=2.0**-21, cublas=_fp8_cublas(fast_accum=True), colour="#006400",
        **_FP8),
    Precision(
        id="fp8", label="FP8", sums="in FP32, each 128 of K summed in the tensor cores first",
        eps_in=2.0**-11, eps_acc=EPS32, cublas=_fp8_cublas(fast_accum=False), colour="#000080", **_FP8),
    # a new precision: one more row above this line
)

PRECISIONS = {p.id: p for p in TABLE}
BASE = TABLE[0]   # the study's own: FP32


def chapter_name(title: str, precision: Precision) -> str:
    """A chapter's title with its precision in brackets, unless the title names the number format already:
    'beyond the seeds (FP32)', but 'tensor cores (FP8, the tensor cores' sums)' as it is (its format, FP8, is
    named; the accumulation is what its words say)."""
    label = precision.label
    return title if label.split()[0] in title else f"{title} ({label})"


def get(precision_id: str) -> Precision:
    """A precision's row, or StudyError naming the known ones."""
    try:
        return PRECISIONS[precision_id]
    except KeyError:
        raise StudyError(f"precision '{precision_id}' is not one of {list(PRECISIONS)} "
                         "(matmulstudy/precisions.py)") from None


def others() -> tuple[Precision, ...]:
    """Every precision but the base one, in the table's order: each has a chapter figure of its own."""
    return tuple(p for p in TABLE if not p.is_base)
