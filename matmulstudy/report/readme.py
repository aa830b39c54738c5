"""The README's numbers, from the committed studies.

The README quotes the studies (the base precision's progression at the
reference size, each other precision's steps on each GPU, the headline ratios,
the harness's checks). Written by hand, those figures outlive the studies they
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
from .study_facts import facts, harness_checks

BEGIN = "<!-- numbers: written from reports/ by `python -m matmulstudy.tools.readme`; not by hand -->"
END = "<!-- numbers: end -->"


def _local_links(text: str, label: str) -> str:
    """A page's links (relative to reports/<label>/) made relative to the repository's root."""
    def fix(m):
        target = m.group(1)
        if target.startswith(("http", "#")):
            return m.group(0)
        return f"]({target[len('../../'):]})" if target.startswith("../../") else f"](reports/{label}/{target})"
    return re.sub(r"\]\(([^)]+)\)", fix, text)


def _gpu(st: Study) -> str:
    f = facts(st)
    return f"{f['gpu']} ([`reports/{st.label}/`](reports/{st.label}/README.md), commit `{str(f['commit'])[:10]}`, " \
           f"{str(f['first'])[:10]})"


def base_table(st: Study) -> list[str]:
    """The reference size's table of the base precision's chapters: every step, the CPU baseline, both cuBLAS."""
    at = at_size(st.summary, st.size)
    base = precisions.BASE
    reference = at.loc[at["variant"] == st.registry.reference(base.id).id, "median_gflops"].iloc[0]
    shown = [v for v in st.registry.values() if v.precision == base.id and not v.is_gpu] + \
        list(st.registry.steps(precision=base.id)) + \
        [r for r in (st.registry.reference(p.id) for p in precisions.TABLE) if r is not None]
    lines = [f"At {st.size}×{st.size}×{st.size} on the {_gpu(st)}: cold L2, timed until the interquartile range was "
             f"within {st.config.get('max_noise', 0):.1%} of the median or the time budget ran out, every result "
             "verified:", "",
             f"| variant | median time (ms) | GFLOP/s (median) | IQR | samples | noise (IQR/median) "
             f"| of cuBLAS {base.label} | of {base.label} peak |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for v in shown:
        row = at[at["variant"] == v.id]
        if not len(row):
            continue
        r = row.iloc[0]
        other = v.precision not in (None, base.id)
        peak = "" if other else f"{r['median_gflops'] / st.gpu[base.peak_key]:.1%}"
        lines.append(f"| {v.title}{'; another precision' if other else ''} | {r['median_ms']:.3f} | "
                     f"{r['median_gflops']:,.0f} | {r['q1_gflops']:,.0f} to {r['q3_gflops']:,.0f} | {r['samples']} | "
                     f"{r['noise']:.2%} | {r['median_gflops'] / reference:.1%} | {peak} |")
    return lines


ABSENT = "–"   # a step that a GPU's study did not have: its commit came before the step


def _no_result(st: Study, vid: str) -> str:
    """The cell of a variant with no row at this size: blank if the study had it, else ABSENT."""
    return "" if vid in st.registry else ABSENT


def precision_table(studies: list[Study], precision: str, sizes: tuple) -> list[str]:
    """A precision's steps as fractions of its reference, per GPU and size; the best of each column in bold;
    the samples re-taken (batches during which the GPU throttled) where there were any; ABSENT where a GPU's
    study had no such step (or reference), with a line under the table that says so."""
    p = precisions.get(precision)
    cols = [(st, n) for st in studies for n in sizes]
    head = " | ".join(f"{facts(st)['gpu'].split()[1]} {n}" for st, n in cols)
    lines = [f"| step | {head} |", "| --- |" + " ---: |" * len(cols)]
    tables = {(st.label, n): at_size(st.summary, n) for st, n in cols}
    steps = list(studies[0].registry.steps(precision=precision))
    best = {}
    for (label, n), at in tables.items():
        mine = at[at["variant"].isin([v.id for v in steps])]
        best[label, n] = mine.loc[mine["frac_of_cublas"].idxmax(), "variant"] if len(mine) else None
    for v in steps:
        cells = []
        for st, n in cols:
            row = tables[st.label, n]
            row = row[row["variant"] == v.id]
            if not len(row):
                cells.append(_no_result(st, v.id))
                continue
            r = row.iloc[0]
            text = f"{r['frac_of_cublas']:.1%}"
            text = f"**{text}**" if best[st.label, n] == v.id else text
            retaken = int(r.get("retaken_samples", 0) or 0)
            cells.append(text + (f" ({retaken} re-taken)" if retaken else ""))
        lines.append(f"| {v.title} | " + " | ".join(cells) + " |")
    reference = studies[0].registry.reference(precision)
    cells = []
    for st, n in cols:
        row = tables[st.label, n]
        row = row[row["variant"] == reference.id]
        cells.append(f"{row.iloc[0]['median_gflops'] / 1e3:.1f}" if len(row) else _no_result(st, reference.id))
    lines.append(f"| cuBLAS {p.label}, TFLOP/s | " + " | ".join(cells) + " |")
    absent = [st for st in studies if any(v.id not in st.registry for v in steps + [reference])]
    if absent:
        lines += ["", f"{ABSENT}: not in the study of the " + " and the ".join(_gpu(st) for st in absent) +
                  ", made before these steps."]
    return lines


def headline_sentence(st: Study) -> str:
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
        parts.append(f"{precisions.get(precision).label} {st.registry[step].title}: " + "; ".join(
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


def block(studies: list[Study]) -> str:
    """The README's numbers: the first study's base-precision table, each other precision's steps on every GPU,
    the headline ratios, the harness's checks and the verification, each study named with its commit."""
    first = studies[0]
    lines = [BEGIN, ""] + base_table(first) + [""]
    for p in precisions.TABLE:
        if p.id == precisions.BASE.id or not list(first.registry.steps(precision=p.id)):
            continue
        sizes = tuple(sorted({first.size, max(int(n) for n in first.config.get("sizes", [first.size]))}))
        lines += [f"Of cuBLAS {p.label} ({p.label} steps; the timed samples of each GPU's study, \"re-taken\": samples "
                  "of batches in which the SM clock fell below 0.9 of its highest, kept aside and timed again):", ""]
        lines += precision_table(studies, p.id, sizes) + [""]
    sentences = [headline_sentence(st) for st in studies]
    if any(sentences):
        lines += ["Measured again in alternating rounds after everything else (each page's headline section), "
                  "each precision's best step over its reference:", ""] + [s for s in sentences if s] + [""]
    for st in studies:
        checks = harness_checks(st)
        if checks:
            lines += [f"The harness checked on the {facts(st)['gpu']}:", ""] + \
                     [_local_links(c, st.label) for c in checks] + [""]
    lines += ["Every element of every result checked against a float64 reference:", ""]
    lines += [verification_sentence(st) for st in studies] + ["", END]
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
