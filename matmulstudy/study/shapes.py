"""A shape of the study: M x N x K, and its tag (MxNxK) in paths and tables."""

from __future__ import annotations

import re
from typing import NamedTuple

from ..errors import StudyError


class Shape(NamedTuple):
    M: int
    N: int
    K: int

    @property
    def tag(self) -> str:
        return f"{self.M}x{self.N}x{self.K}"

    @property
    def flop(self) -> int:
        return 2 * self.M * self.N * self.K

    @property
    def is_square(self) -> bool:
        return self.M == self.N == self.K

    @classmethod
    def parse(cls, tag: str) -> "Shape":
        m = re.fullmatch(r"(\d+)x(\d+)x(\d+)", tag)
        if not m:
            raise StudyError(f"shape '{tag}' is not of the form MxNxK")
        return cls(*map(int, m.groups()))
