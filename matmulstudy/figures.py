"""The one table of a study's figures.

Each entry is one figure: its name (figures/<name>.png and .svg), the
function of plots.py that draws it from a Study (by name: the workflow
reads this table without importing Matplotlib), its category in Snakemake's HTML
report, its caption file (workflow/report/), and the line the summary page
gives it. render.py draws them, report.smk names their outputs, captions and
categories, pages.py lists them. Adding a figure is an entry here, its
drawing function and its caption.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:   # the workflow reads this table at every start: no pandas or Matplotlib for it
    from .study import Study


@dataclass(frozen=True)
class Figure:
    name: str
    drawn_by: str
    category: str
    caption: str
    what: str

    def draw(self, study: "Study", stem: Path) -> list[Path]:
        """Draw it: figures/<name>.png and .svg from the study."""
        from . import plots
        return getattr(plots, self.drawn_by)(study, stem)


FIGURES = (
    Figure("progression", "progression", "1. Progression", "progression.rst",
           "the optimisation progression at the reference size, with cuBLAS FP32 and the FP32 peak"),
    Figure("progression_int32", "progression_int32", "1. Progression", "progression_int32.rst",
           "the same for seed 003's int32 mode"),
    Figure("progression_tf32", "progression_tf32", "1. Progression", "progression_tf32.rst",
           "the tensor-core chapter (TF32 arithmetic) at the reference size, with cuBLAS TF32"),
    Figure("size_sweep", "size_sweep", "2. Scaling with size", "size_sweep.rst",
           "GFLOP/s against size for every variant, with the interquartile range"),
    Figure("efficiency", "efficiency", "3. Efficiency", "efficiency.rst",
           "each variant as a fraction of cuBLAS in its own precision (FP32, or TF32 for the tensor-core steps) "
           "and of the FP32 peak, per shape"),
    Figure("roofline", "roofline", "3. Efficiency", "roofline.rst",
           "each step at its arithmetic intensity, under the measured bandwidth and the peak of its precision "
           "(FP32; TF32 for the tensor-core steps, in a panel of their own)"),
    Figure("hardware", "hardware", "4. What explains each step", "hardware.rst",
           "registers, occupancy, instruction mix and the ncu counters per step"),
    Figure("timing", "timing", "5. Timing noise", "timing.rst",
           "every timed sample at the reference size, as its deviation from the median"),
    Figure("margin", "margin", "8. Verification", "margin.rst",
           "each variant's largest error over the bound it is checked against, per shape"),
)


def report_outputs(label: str) -> list[str]:
    """What the plot_report rule writes for one study: every figure, the page, the caption facts."""
    return [f"reports/{label}/figures/{f.name}.{ext}" for f in FIGURES for ext in ("svg", "png")] + [
        f"reports/{label}/README.md", f"reports/{label}/provenance.rst"]


GPUS_OUTPUTS = ["reports/figures/progression_by_gpu.svg", "reports/figures/progression_by_gpu.png",
                "reports/README.md"]   # what plot_gpus writes
