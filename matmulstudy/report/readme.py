"""The README's numbers, from the committed studies.

The README quotes the studies (each chapter's best step against cuBLAS on
each GPU, the headline ratios, the verification) and the registry (which
steps each GPU runs). Written by hand, those figures outlive the studies they
came from; here they are drawn from reports/<label>/ and written between two
markers of README.md
(`python -m matmulstudy.tools.readme`), and a test holds the README equal to
what the committed studies give.
"""

from __future__ import annotations

import re
from pathlib import Path

from .. import precisions
from . import headline
from .committed import Study
from .results import at_size
from .study_facts import facts
from ..study.paths import ROOT

BEGIN = "<!-- numbers: written from reports/ by `python -m matmulstudy.tools.readme`; not by hand -->"
END = "<!-- numbers: end -->"


def _gpu(st: Study, registry) -> str:
    f = facts(st)
    then = ("; measured before the steps were renumbered: its pages keep the numbers of then, the registry's "
            "`was:`" if renumbered(st, registry) else "")
    return f"{f['gpu']} ([`reports/{st.label}/`](reports/{st.label}/README.md), commit `{str(f['commit'])[:10]}`, " \
           f"{str(f['first'])[:10]}{then})"


def renumbered(st: Study, registry) -> bool:
    """Whether a study was measured before its steps took the numbers they have now (its own registry, kept
    beside it, numbers some step otherwise than the live one)."""
    return any(v.number != registry[v.id].number for v in st.registry.values() if v.id in registry)


ABSENT = "–"   # a step that a GPU's study did not have: its commit came before the step


def headline_sentence(st: Study, registry) -> str:
    """Each precision's best step over its reference in the rounds, burst and sustained, at each shape."""
    table = st.optional("headline.csv")
    if table is None or table.empty:
        return ""
    summ = headline.summary(table)
    parts = []
    for precision, g in summ.groupby("precision", sort=False):
        burst = g[g["regime"] == "burst"]
        step = burst.loc[burst["ratio"].idxmax(), "step"]   # the best at the reference size and beyond
        mine = g[g["step"] == step].set_index(["M", "regime"])["ratio"]
        sizes = sorted({m for m, _ in mine.index})
        title = (registry if step in registry else st.registry)[step].title   # as the course numbers it now
        parts.append(f"{precisions.get(precision).label} {title}: " + "; ".join(
            f"{mine.get((m, 'burst'), float('nan')):.1%} burst and {mine.get((m, 'sustained'), float('nan')):.1%} "
            f"sustained at {m}" for m in sizes))
    return f"- {facts(st)['gpu']}: " + "; ".join(parts) + "."


def verification_sentence(st: Study) -> str:
    """The largest error of a correct result of the base precision, and how far the other precisions lie past
    the base precision's bound."""
    s = st.summary[st.summary["verified"].astype(bool)]
    base = s[s["precision"].fillna(precisions.BASE.id) == precisions.BASE.id]
    text = f"the largest error of a correct {precisions.BASE.label} result {base['margin'].max():.2f} of the bound"
    others = s[(s["precision"].fillna(precisions.BASE.id) != precisions.BASE.id) & (s["dtype"] == "float32")]
    if "fp32_margin" in others and others["fp32_margin"].notna().any():
        held = " and ".join(p.label for p in precisions.others() if p.held_to_fp32 and
                            (others["precision"] == p.id).any())
        text += (f"; every {held} result at least {others['fp32_margin'].min():.1f} times over the "
                 f"{precisions.BASE.label} bound, so that the two cannot be mistaken")
    return f"- {facts(st)['gpu']}: " + text + "."


# where a chapter starts on its precision's page of the course, docs/<precision>.md: a heading "<title> (steps
# N to M)", whose anchor is this and the chapter's first and last step numbers (chapter_anchor)
CHAPTER_ANCHORS = {"seeds": "the-seeds", "beyond": "beyond-the-seeds"}
ARCHS = {"sm_75": "Turing (RTX 20, T4)", "sm_80": "A100", "sm_86": "RTX 30, A10, A40", "sm_89": "RTX 40, L4, L40",
         "sm_90": "H100, H200"}   # the GPUs people run the study on, by the nvcc target a study builds for


def chapter_anchor(chapter_id: str, steps) -> str:
    """The anchor of a chapter's heading on its precision's page ('#beyond-the-seeds-steps-9-to-23'), or ''."""
    if chapter_id not in CHAPTER_ANCHORS:
        return ""
    numbers = [int(re.match(r"\d+", v.title).group()) for v in steps]
    return f"#{CHAPTER_ANCHORS[chapter_id]}-steps-{min(numbers)}-to-{max(numbers)}"


def numbers_of(steps) -> str:
    """A chapter's step numbers as ranges: '9-17, 28-31' (8a and 8b count as 8)."""
    numbers = sorted({int(re.match(r"\d+", v.title).group()) for v in steps})
    runs, start = [], None
    for i, n in enumerate(numbers):
        start = n if start is None else start
        if i + 1 == len(numbers) or numbers[i + 1] != n + 1:
            runs.append(f"{start}" if start == n else f"{start}-{n}")
            start = None
    return ", ".join(runs)


def chapter_table(studies: list[Study], sizes: tuple, registry) -> list[str]:
    """Each chapter's best step as a share of cuBLAS in its precision, per GPU and size (the step's number in
    the course now, in brackets), and each precision's cuBLAS in TFLOP/s; the chapters and their steps are the
    live registry's, each step found in a study by its id."""
    cols = [(st, n) for st in studies for n in sizes]
    lines = ["| chapter | steps | " + " | ".join(f"{facts(st)['gpu'].split()[1]}, {n}" for st, n in cols) + " |",
             "| --- | --- |" + " ---: |" * len(cols)]
    for chapter in registry.chapters.values():
        steps = list(registry.steps(chapter.id))
        if not steps:
            continue
        cells = []
        for st, n in cols:
            at = at_size(st.summary, n)
            mine = at[at["variant"].isin([v.id for v in steps]) & at["verified"].astype(bool)]
            best = mine.loc[mine["frac_of_cublas"].idxmax()] if len(mine) else None
            cells.append(ABSENT if best is None else
                         f"{best['frac_of_cublas']:.1%} ({registry[best['variant']].number})")
        page = ROOT / "docs" / chapter.precision.doc
        name = (f"[{chapter.title}](docs/{page.name}{chapter_anchor(chapter.id, steps)})" if page.exists()
                else chapter.title)
        lines.append(f"| {name}, {chapter.precision.label} | {numbers_of(steps)} | "
                     + " | ".join(cells) + " |")
    # every reference the live registry has, in every column (a study that lacks one: ABSENT in its place)
    references = [r for r in (registry.reference(p) for p in precisions.TABLE) if r is not None]
    cells = []
    for st, n in cols:
        at = at_size(st.summary, n)
        rates = [at.loc[at["variant"] == r.id, "median_gflops"] for r in references]
        cells.append(" / ".join(f"{r.iloc[0] / 1e3:,.1f}" if len(r) else ABSENT for r in rates))
    labels = " / ".join(r.precision.label for r in references)
    return lines + [f"| cuBLAS {labels}, TFLOP/s | | " + " | ".join(cells) + " |"]


def gpu_table(registry) -> list[str]:
    """Which steps a GPU runs, by the nvcc target of its study (the registry's `needs`), chapter by chapter."""
    chapters = [c for c in registry.chapters.values() if list(registry.steps(c.id))]
    lines = ["| GPU (nvcc target) | " + " | ".join(c.title for c in chapters) + " | cuBLAS references |",
             "| --- |" + " --- |" * (len(chapters) + 1)]
    for arch, gpus in ARCHS.items():
        cells = []
        for c in chapters:
            runs = [v for v in registry.steps(c.id) if not v.unsupported(arch)]
            cells.append(numbers_of(runs) if runs else "none")
        refs = [p.label for p in precisions.TABLE
                if (r := registry.reference(p)) is not None and not r.unsupported(arch)]
        lines.append(f"| {gpus} ({arch}) | " + " | ".join(cells) + f" | {', '.join(refs)} |")
    return lines


def block(studies: list[Study], registry) -> str:
    """The README's numbers: each chapter's best step against cuBLAS on every committed GPU, the headline
    ratios measured again in rounds, the verification; and which steps each GPU runs (the live registry)."""
    first = studies[0]
    sizes = tuple(sorted({first.size, max(int(n) for n in first.config.get("sizes", [first.size]))}))
    lines = [BEGIN, "", "Each chapter's best step as a share of cuBLAS in its own precision (the step's number in "
             "the course in brackets; medians of the timed samples, every result verified), in the committed studies: "
             + "; ".join(_gpu(st, registry) for st in studies) + ".", ""]
    lines += chapter_table(studies, sizes, registry) + [""]
    sentences = [headline_sentence(st, registry) for st in studies]
    if any(sentences):
        lines += ["Measured again in alternating rounds after everything else (each page's headline section), "
                  "each precision's best step over its reference:", ""] + [s for s in sentences if s] + [""]
    lines += ["Every element of every result checked against a float64 reference:", ""]
    lines += [verification_sentence(st) for st in studies] + [""]
    lines += ["The steps each GPU runs (a step needs the instructions its registry entry names; the others are "
              "skipped, and the run, the page and every figure say so):", ""] + gpu_table(registry) + ["", END]
    return "\n".join(lines)


def replaced(readme: str, numbers: str) -> str:
    """The README with its numbers between the markers replaced by `numbers` (block())."""
    start, end = readme.find(BEGIN), readme.find(END)
    if start < 0 or end < start:
        raise ValueError(f"README.md has no '{BEGIN}' ... '{END}' block: put the two markers where its numbers go")
    return readme[:start] + numbers + readme[end + len(END):]


def committed_studies(reports: Path) -> list[Study]:
    """The committed studies, the H100's first (the README's progression is its)."""
    folders = [f for f in Path(reports).iterdir() if (f / "summary.csv").exists()]
    return [Study.load(f) for f in sorted(folders, key=lambda f: (f.name != "h100", f.name))]
