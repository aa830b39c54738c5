"""One committed study, reports/<label>/: its tables and what it was measured with.

Everything that draws or checks a study reads it through Study.load: the
tables (samples.csv.gz with measured_with.csv, summary.csv, hardware.csv, gpu.json) and its own
snapshot (registry.yaml, config.yaml; study/snapshot.py), never the live
registry or config.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .. import precisions
from ..errors import StudyError
from ..study import snapshot
from ..study.paths import STUDY_FILES
from ..study.registry import Registry
from ..study.run import skipped_words
from .results import read_results

DEFAULT_SIZE = 4096


def studies_in(folder: Path) -> list[Path]:
    """The study folders under reports/: those with their samples (samples.csv.gz)."""
    return sorted(p.parent for p in Path(folder).glob(f"*/{STUDY_FILES['results']}"))


def check_folder(folder: Path) -> Path:
    """`folder` if it holds a study's tables, else StudyError naming what it lacks and the studies beside it."""
    folder = Path(folder)
    lacks = [STUDY_FILES[key] for key in ("gpu", "results", "summary", "hardware")
             if not (folder / STUDY_FILES[key]).is_file()]
    if lacks:
        beside = [p.name for p in studies_in(folder.parent)]
        raise StudyError(f"{folder} is no study: it has no {', '.join(lacks)}"
                         + (f" (the studies in {folder.parent}: {', '.join(beside)})" if beside else ""))
    return folder


@dataclass
class Study:
    folder: Path
    results: pd.DataFrame
    summary: pd.DataFrame
    hardware: pd.DataFrame
    gpu: dict
    registry: Registry
    config: dict = field(default_factory=dict)
    size: int = DEFAULT_SIZE   # the progression's size: the study's reference_size unless asked otherwise

    @classmethod
    def load(cls, folder: Path, size: int | None = None) -> "Study":
        """The study in `folder`, or StudyError naming what it lacks (check_folder)."""
        folder = check_folder(folder)
        with open(folder / STUDY_FILES["gpu"]) as fh:
            gpu = json.load(fh)
        gpu["gpu_name"] = gpu.get("gpu_name") or "no GPU (CPU variants only)"
        config = snapshot.read_config(folder)
        tables = [read_results(folder / STUDY_FILES["results"])] + [
            pd.read_csv(folder / STUDY_FILES[name], low_memory=False)   # one dtype a column, whole
            for name in ("summary", "hardware")]
        return cls(folder, *tables, gpu, snapshot.read_registry(folder), config,
                   size or int(config.get("reference_size", DEFAULT_SIZE)))

    @property
    def label(self) -> str:
        return self.folder.name

    @property
    def measured(self) -> tuple:
        """When its samples were taken: the first and the last timestamp (None, None where the rows have none)."""
        if "timestamp" not in self.results:
            return None, None
        return self.results["timestamp"].min(), self.results["timestamp"].max()

    def optional(self, name: str) -> pd.DataFrame | None:
        """A table that only some studies have (crosscheck.csv, repeat.csv, sanitizer.csv, faults.csv)."""
        path = self.folder / name
        return pd.read_csv(path) if path.exists() else None

    @functools.cached_property
    def counters_at(self) -> pd.DataFrame | None:
        """counters_at.csv: the counters of the steps with `shown_at` at their own size, the step before's beside
        them (None in a study that measured none); read once, for the summary and every step's page."""
        return self.optional(STUDY_FILES["counters_at"])

    def on_gpu(self, df: pd.DataFrame) -> pd.Series:
        """Which rows of a table (with a variant column) are of GPU variants."""
        return df["variant"].map(lambda v: self.registry[v].is_gpu)

    @property
    def counted(self) -> pd.DataFrame:
        """The samples that count: all but those of batches taken again where the GPU throttled (a study
        measured before batches were taken again has none of those)."""
        retaken = self.results.get("retaken")
        return self.results if retaken is None else self.results[~retaken.fillna(False).astype(bool)]

    @property
    def skipped_note(self) -> str | None:
        """What the study's GPU could not run (skipped.csv), in one line that every figure ends with, or None."""
        skipped = self.optional("skipped.csv")
        if skipped is None or skipped.empty:
            return None
        return "Not run on this GPU (the page's \"Skipped on this GPU\" says why): " + skipped_words(
            (r.title, r.variant in self.registry and self.registry[r.variant].is_step, r.reason)
            for r in skipped.itertuples())

    @property
    def cpu_only(self) -> bool:
        """A study without a GPU: its CPU variants only (the baselines), timed by the wall clock."""
        return not self.on_gpu(self.results).any()

    def chapter_rows(self, df: pd.DataFrame, chapter: str, context: bool = False) -> pd.DataFrame:
        """The rows of a table that are of one chapter's steps, with `context` those of the baselines and
        references drawn beside them for scale too: the CPU baselines, the base precision's reference and the
        chapter's own."""
        ids = [v.id for v in self.registry.steps(chapter)] if chapter in self.registry.chapters else []
        if context:
            mine = self.registry.chapters[chapter].precision if ids else precisions.BASE
            references = {getattr(self.registry.reference(p), "id", None) for p in (precisions.BASE, mine)}
            ids += [v.id for v in self.registry.values() if not v.is_step and (not v.is_gpu or v.id in references)]
        return df[df["variant"].isin(ids)]

    def chapter_title(self, chapter: str) -> str:
        """What a chapter's figure draws: the chapter's title, or in a study without a GPU its CPU variants."""
        return "the CPU variants (no GPU in this study)" if self.cpu_only else self.registry.chapters[chapter].title

    def chapter_missing(self, chapter: str) -> str | None:
        """Why this study has nothing to draw of a chapter (one measured before the chapter was added, or one whose
        GPU skipped it), or None where it has the chapter's steps. A study without a GPU draws its CPU variants in
        the first chapter's figures (the context of every chapter), and says so in the others."""
        first = next(iter(self.registry.chapters), None)
        if self.cpu_only:
            return None if chapter == first else f"no GPU in this study: its CPU variants are drawn with '{first}'"
        if chapter not in self.registry.chapters or self.chapter_rows(self.summary, chapter).empty:
            return f"the chapter '{chapter}' is not in this study: its steps were not measured here"
        return None

    def steps_only(self, df: pd.DataFrame, precision: precisions.Precision | None = None) -> pd.DataFrame:
        """The rows of a table that are of steps (the kernels of the progression), of one precision's
        chapters if given."""
        return df[df["variant"].isin([v.id for v in self.registry.steps(precision=precision)])]
