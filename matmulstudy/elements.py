"""The element types the study's kernels read A and B in: float32, BF16 (16-bit values) and e4m3 (bytes), each
with its bytes and cuda.h's CUtensorMapDataType enumerator for its tensor maps (gpu/tma.py). A precision names
its kernels' type (precisions.py's `inputs`); the rounding of float32 values to a narrow type and the bits of
the values so rounded are measure/data.py's (numpy's, which a run's start does not import)."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import StudyError


@dataclass(frozen=True)
class Element:
    name: str
    bytes: int
    code: int

    @property
    def narrow(self) -> bool:
        """Whether float32 values are rounded to it before a kernel reads them."""
        return self.bytes < 4


FLOAT32, BFLOAT16 = Element("float32", 4, 7), Element("bfloat16", 2, 9)
FLOAT8_E4M3 = Element("float8_e4m3", 1, 0)   # bytes to the copy engine (CU_TENSOR_MAP_DATA_TYPE_UINT8)
ELEMENTS = {e.name: e for e in (FLOAT32, BFLOAT16, FLOAT8_E4M3)}


def element(name: str) -> Element:
    """The element type of this name, or a StudyError naming those the study's kernels read."""
    if name not in ELEMENTS:
        raise StudyError(f"no kernel here reads {name} elements (only {', '.join(ELEMENTS)}: matmulstudy/elements.py)")
    return ELEMENTS[name]
