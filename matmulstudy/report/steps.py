"""A page per step (reports/<label>/steps/NN_<id>.md), for reading the study as a course, in order.

Each page is drawn from the study's own registry, tables and kernels.tar.gz (the
sources it was measured with: study/snapshot.py), like the rest of the
study's pages, so it re-renders byte for byte. It shows:

- where the step stands: the pages before and after it, and the study;
- what it changes and why, in its file's own words (the header comment);
- its effect at the progression's size: GFLOP/s, the speedup over the step
  before, the fraction of its precision's reference, and the counters its
  registry entry names (`shows`), before and after; then every shape;
- where public kernels go wrong at this step, where its header says (a
  paragraph that starts "Where public kernels go wrong:", with its source);
- the code that changed: the defines that differ from the step before, the
  other registry keys of how it is launched that do (its grid, its tensor
  maps' boxes), the parts of the shared headers that test the defines (#if
  blocks), the headers it includes that the step before did not, and the
  diff of its file against the step before's;
- its source.

The step before is the one before it in its chapter, or, for a chapter's
first step, the last one of the chapter before of its precision (step 9
continues from step 8); the first step of a precision has none, and its page
shows its whole file.
"""

from __future__ import annotations

import difflib
import re

import pandas as pd

from .. import precisions
from ..study.counters import COUNTERS
from ..study.snapshot import KERNELS, includes, read_kernel, with_includes
from . import explain
from .committed import Study

FOLDER = "steps"


def page_name(variant) -> str:
    """The page's file name: its file's number and its id (NN_<id>.md: steps 8a and 8b share a file)."""
    number = variant.file.stem.split("_")[0] if variant.file is not None else ""
    return f"{number}_{variant.id}.md" if number else f"{variant.id}.md"


def in_order(study: Study, precision: precisions.Precision | None = None) -> list:
    """The study's steps (of one precision), chapter by chapter: the progression's order."""
    chapters = list(study.registry.chapters)
    return sorted(study.registry.steps(precision=precision), key=lambda v: chapters.index(v.chapter))


def timed_in_order(study: Study) -> list:
    """The steps the study timed, in the progression's order: the pages it has."""
    return [v for v in in_order(study) if (study.summary["variant"] == v.id).any()]


def header_comment(source: str) -> list[str]:
    """The comment that opens a kernel file, as Markdown: paragraphs joined, `- ` items kept as a list, lines
    indented by four or more spaces kept as they are (in a text block)."""
    lines = []
    for line in source.splitlines():
        if not line.startswith("//"):
            break
        lines.append(line[2:].removeprefix(" "))
    out, block = [], []

    def close_block():
        if block:
            out.extend(["```text", *block, "```"])
            block.clear()

    for line in lines:
        if line.startswith("    "):
            block.append(line)
            continue
        close_block()
        if not line.strip():
            out.append("")
        elif line.startswith("- ") or not out or not out[-1]:
            out.append(line)
        elif out[-1].startswith("- ") and not line.startswith("  "):
            out += ["", line]   # the list is over: a paragraph of its own
        else:
            out[-1] += " " + line.strip()
    close_block()
    return out


PITFALL = "Where public kernels go wrong:"   # a header's paragraph that gets a section of its own


def split_pitfalls(header: list[str]) -> tuple[list[str], list[str]]:
    """A header (header_comment's lines) without, and its paragraphs on, where public kernels go wrong."""
    pitfalls = [line for line in header if line.startswith(PITFALL)]
    rest = [line for line in header if not line.startswith(PITFALL)]
    return [line for i, line in enumerate(rest) if line or i == 0 or rest[i - 1]], pitfalls


def _code(source: str) -> list[str]:
    """A kernel file's lines past its opening comment."""
    lines = source.splitlines()
    start = next((i for i, line in enumerate(lines) if not line.startswith("//")), len(lines))
    return lines[start:]


_OWN_PAGE = re.compile(r"\b([Tt])he step's page( and [^)]*?)? give(s?)\b")


def on_its_page(line: str) -> str:
    """A header's line as its own step page shows it: 'The step's page gives the measured values', read on that
    page, points below it."""
    return _OWN_PAGE.sub(lambda m: f"{'I' if m.group(1) == 'T' else 'i'}ts effect, below,{m.group(2) or ''} "
                                   f"give{m.group(3)}", line)


def step_before(study: Study, variant):
    """The step whose code this one changes (module docstring), or None."""
    return study.registry.step_before(variant.id)


def _included(study: Study, path: str) -> list[str]:
    """The files a kernel file includes (paths under kernels/), as the study kept them."""
    return includes(path, read_kernel(study.folder, path) or "")


def _included_all(study: Study, path: str) -> list[str]:
    """The files a kernel file includes, and those they include in turn, each once, nearest first: a define of
    the registry may be read two headers down (in the studies measured before kernels/sm90/, step 47's
    DRAW_LATE in tiles.cuh, which persistent_bf16.cuh included)."""
    return [h for h in with_includes([path], lambda p: read_kernel(study.folder, p)) if h != path]


def _file(study: Study, variant) -> str | None:
    entry = study.registry.raw_entry(variant.id)
    return entry.get("file")


def excerpt(source: str, names: set[str]) -> list[list[str]]:
    """What a file says about these names: its #if blocks that test them and the places its code names them
    (_mention_spans), overlapping parts merged, in the file's order."""
    lines, spans = source.splitlines(), []
    for lo, hi in sorted(_block_spans(source, names) + _mention_spans(source, names)):
        if spans and lo <= spans[-1][1] + 1:
            spans[-1][1] = max(spans[-1][1], hi)
        else:
            spans.append([lo, hi])
    return [lines[lo:hi + 1] for lo, hi in spans]


def _block_spans(header: str, names: set[str]) -> list[tuple[int, int]]:
    """The #if ... #endif blocks of a header whose condition names one of these defines, whole (nested blocks
    inside them included), as (first, last) line indexes."""
    lines, blocks, i = header.splitlines(), [], 0
    while i < len(lines):
        m = re.match(r"\s*#\s*if(?:def|ndef)?\b(.*)", lines[i])
        if m and set(re.findall(r"[A-Za-z_]\w*", m.group(1))) & names:
            depth, j = 0, i
            while j < len(lines):
                if re.match(r"\s*#\s*if", lines[j]):
                    depth += 1
                elif re.match(r"\s*#\s*endif", lines[j]):
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            blocks.append((i, j))
            i = j + 1
        else:
            i += 1
    return blocks


def _mention_spans(header: str, names: set[str], context: int = 3, most: int = 3) -> list[tuple[int, int]]:
    """Up to `most` places of a file's code (not its preprocessor lines, comments or strings) that name one of
    these, with `context` lines around each."""
    lines = header.splitlines()
    def named(line):   # its code, not its comments or strings
        code = re.sub(r'"[^"]*"', "", line.split("//")[0])
        return set(re.findall(r"[A-Za-z_]\w*", code)) & names
    hits = [i for i, line in enumerate(lines) if not re.match(r"\s*#\s*(if|elif|error|endif)", line)
            and named(line)][:most]
    return [(max(i - context, 0), min(i + context, len(lines) - 1)) for i in hits]


def _switches(diff: list[str]) -> set[str]:
    """What the added lines of a diff choose by name from a header: the values of enums (Order::name) and
    template arguments they pass."""
    added = "\n".join(line[1:] for line in diff if line.startswith("+") and not line.startswith("+++"))
    return set(re.findall(r"\b[A-Z]\w*::(\w+)", added))


def template_switches(diff: list[str], headers) -> set[str]:
    """The names of the template parameters a step sets otherwise than the step before: where a `using X =
    Role<...>;` of the diff's removed lines and its added one differ in an argument, the parameter of that
    position in the role's template (in `headers`' texts), followed through alias templates to the ones they
    name (`Bf16Mainloop<true, ...>` sets SteppedDescriptors, which SmemMainloop takes as its second). A step
    that switches a role's technique on by a bare `true` shows where the shared code reads it."""
    params = _template_params("\n".join(headers))
    uses = {side: {m.group(1): (m.group(2), _split_args(m.group(3))) for m in _USING.finditer("\n".join(
        line[1:] for line in diff if line.startswith(side) and not line.startswith(side * 3)))} for side in "-+"}
    out = set()
    for alias, (role, args) in uses["+"].items():
        old_role, old_args = uses["-"].get(alias, (None, []))
        if old_role == role:
            for i in range(max(len(args), len(old_args))):
                if (args[i:i + 1] or [None]) != (old_args[i:i + 1] or [None]):
                    out |= _parameter(params, role, i)
    return out


_USING = re.compile(r"\busing\s+(\w+)\s*=\s*(\w+)\s*<(.*)>\s*;")
_TEMPLATE = re.compile(r"template\s*<([^;{]*?)>\s*(?:struct|class)\s+(\w+)|template\s*<([^;{]*?)>\s*using\s+(\w+)\s*="
                       r"\s*(\w+)\s*<([^;]*)>\s*;")


def _template_params(source: str) -> dict[str, tuple[list[str], tuple | None]]:
    """{template's name: (its parameters' names, the template an alias names and its arguments, or None)}."""
    out = {}
    for m in _TEMPLATE.finditer(source):
        if m.group(2):
            out.setdefault(m.group(2), (_names(m.group(1)), None))
        else:
            out.setdefault(m.group(4), (_names(m.group(3)), (m.group(5), _split_args(m.group(6)))))
    return out


def _parameter(params: dict, role: str, i: int, depth: int = 4) -> set[str]:
    """The name of a template's i-th parameter, and those of the templates it is passed on to, as far as aliases
    go."""
    if role not in params or i >= len(params[role][0]) or depth == 0:
        return set()
    name, (_, target) = params[role][0][i], params[role]
    found = {name}
    for j, arg in enumerate(target[1] if target else []):
        if arg == name:
            found |= _parameter(params, target[0], j, depth - 1)
    return found


def _split_args(text: str) -> list[str]:
    """A template's arguments (or parameters), split at its top-level commas."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c in "<([" and 1 or 0
        depth -= c in ">)]" and 1 or 0
        if c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    return [p for p in parts + [text[start:].strip()] if p]


def _names(parameters: str) -> list[str]:
    """The names of a template's parameters: `bool Stepped, int B = 1, class Op` -> [Stepped, B, Op]."""
    return [re.findall(r"\w+", p.split("=")[0])[-1] for p in _split_args(parameters)]


def _fenced(blocks: list[list[str]]) -> list[str]:
    """Excerpts of a file as one CUDA code block, `...` between them."""
    return ["```cuda"] + [line for block in blocks for line in block + ["..."]][:-1] + ["```", ""]


# Registry keys that name, describe or measure a step rather than say how it is built and launched.
_NOT_LAUNCH = {"id", "file", "kernel", "title", "source", "chapter", "defines", "shows", "search", "flop_per_byte",
               "was", "technique"}


def _flow(value) -> str:
    """A registry value as the YAML writes it inline: [BK, 64, B_BLOCKS], {A: [BM, BK], ...}, or (none)."""
    if value is None:
        return "(none)"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return str(value)


def _launch_changes(study: Study, variant, before) -> list[tuple[str, str, str]]:
    """(key, before, after) for each registry key of how the step is built and launched (grid, block, tile,
    tensor maps, shared memory, ...) whose entry differs from the step before's; its defines are listed apart."""
    new, old = study.registry.raw_entry(variant.id), study.registry.raw_entry(before.id)
    keys = [k for k in dict.fromkeys([*old, *new]) if k not in _NOT_LAUNCH]
    return [(k, _flow(old.get(k)), _flow(new.get(k))) for k in keys if old.get(k) != new.get(k)]


def kernel_link(path: str) -> str:
    """A kernel file as the study kept it: its path, linked to the archive beside the study's tables (the
    repository's file may have changed since the study ran)."""
    return f"[`{path}`](../{KERNELS})"


def code_section(study: Study, variant, before) -> list[str]:
    """The code that changed from the step before: defines, the header blocks they select, new headers, the
    diff of the file (or the whole file, for a step with no step before)."""
    path = _file(study, variant)
    text = read_kernel(study.folder, path) if path else None
    lines = ["## The code that changed", ""]
    if text is None:
        return lines + ["This study kept no copy of the step's source (studies before its sources were kept: "
                        "`python -m matmulstudy.tools.snapshot --kernels` gives it one from its commit).", ""]
    link = kernel_link(path)
    if before is None:
        return lines + [f"The first step of its precision: its whole file, {link}.", "", "```cuda",
                        text.rstrip("\n"), "```", ""]
    old_path = _file(study, before)
    old = read_kernel(study.folder, old_path) or ""
    changed = {k: (before.defines.get(k), v) for k, v in variant.defines.items() if before.defines.get(k) != v}
    changed |= {k: (v, None) for k, v in before.defines.items() if k not in variant.defines}
    if changed:
        lines += [f"Defines (from the registry) that differ from step **{before.title}**: "
                  + ", ".join(f"`{k}` {'(none)' if a is None else a} -> {'(none)' if b is None else b}"
                              for k, (a, b) in changed.items()) + ".", ""]
    launch = _launch_changes(study, variant, before)
    if launch:
        lines += [f"How the host launches it (the registry), where it differs from step **{before.title}**: "
                  + ", ".join(f"`{k}` {a} -> {b}" for k, a, b in launch) + ".", ""]
    headers = _included(study, path)
    new = [h for h in headers if h not in _included(study, old_path)]
    if new:
        lines += ["Files it includes that the step before did not: "
                  + ", ".join(kernel_link(h) for h in new) + ".", ""]
    diff = list(difflib.unified_diff(_code(old), _code(text), f"a/{old_path}", f"b/{path}", lineterm="", n=3))
    shared = {h: read_kernel(study.folder, h) or "" for h in _included_all(study, path)}
    roles = template_switches(diff, shared.values())   # a role's parameter it sets otherwise, by its name
    names = set(changed) | _switches(diff) | roles
    for header in [h for h in shared if h not in new] if names else []:
        # the headers the file includes itself: the defines and what its code passes by name (Order::rows);
        # those they include: the defines and the roles' parameters (a name like `rows` is any function's
        # parameter there)
        asked = names if header in headers else set(changed) | roles
        source = read_kernel(study.folder, header) or ""
        blocks = excerpt(source, asked) if asked else []
        if blocks:
            lines += [f"Where {kernel_link(header)} switches on "
                      + ", ".join(f"`{n}`" for n in sorted(asked)) + ":", ""] + _fenced(blocks)
    for header in new:   # a header it brings in: what the step's code now calls
        source = read_kernel(study.folder, header) or ""
        lines += [f"<details><summary>{header} ({len(source.splitlines())} lines), which it now includes"
                  "</summary>", "", "```cuda", source.rstrip("\n"), "```", "", "</details>", ""]
    lines += [f"Its file, {link}, against step **{before.title}**'s, past their header comments (the one "
              "above):", ""]
    lines += (["```diff", *diff, "```", ""] if diff else ["The same code.", ""])
    uses = excerpt(text, set(changed)) if not diff and changed else []
    if uses:   # one file, other defines (steps 8a and 8b): where the file uses them
        lines += ["Where its file uses the defines that differ:", ""] + _fenced(uses)
    return lines


def effect_section(study: Study, variant, table: pd.DataFrame, slower: list[str], before,
                   others: pd.DataFrame | None = None) -> list[str]:
    """The step's effect at the progression's size (`table`: its precision's progression_table, `slower`: its
    slower_steps, `others`: every precision's tables, for a step before of another precision: builds_on), its
    named counters, and every shape."""
    p = variant.precision
    reference = study.registry.reference(p)
    size = study.size
    lines = [f"## Its effect at {size}×{size}×{size}", ""]
    rows = table.set_index("variant") if len(table) else table
    if before is not None and before.precision != p and others is not None and len(rows) and \
            before.id in set(others["variant"]):   # its row beside this precision's, its speedup across the two
        rows = pd.concat([rows, others.set_index("variant").loc[[before.id]]])
        if variant.id in rows.index:
            rows.loc[variant.id, "speedup"] = rows.loc[variant.id, "gflops"] / rows.loc[before.id, "gflops"]
            rows.loc[variant.id, "slower"] = False   # the spread of two precisions' samples is not compared
    if variant.id not in rows.index:
        return lines + ["Not timed at this size in this study (see the study's failures and skipped variants).", ""]
    row = rows.loc[variant.id]
    rank = list(table.sort_values("gflops", ascending=False)["variant"]).index(variant.id) + 1   # in its precision
    summ = study.summary[(study.summary["variant"] == variant.id) & (study.summary["dtype"] == "float32")]
    at = summ[(summ["M"] == size) & (summ["N"] == size) & (summ["K"] == size)]
    frac = at["frac_of_cublas"].iloc[0] if len(at) and "frac_of_cublas" in at else None
    timed_before = before if before is not None and before.id in rows.index else None
    cells = [f"{row['gflops']:,.0f} GFLOP/s (median)"]
    if timed_before is not None:
        cells.append(f"×{row['speedup']:.2f} over step **{before.title}** "
                     f"({rows.loc[before.id, 'gflops']:,.0f})" + (", slower beyond both steps' spread"
                                                                   if row["slower"] else ""))
    if frac is not None and pd.notna(frac) and reference is not None:
        cells.append(f"{frac:.1%} of {reference.title}")
    cells.append(f"the {'' if rank == 1 else _ordinal(rank) + ' '}fastest of the {len(table)} {p.label} steps here")
    lines += ["; ".join(cells) + ".", ""]
    why = [n for n in slower if n.startswith(f"**{variant.title}** is slower")]
    if why:   # the summary's reading of the counters that moved against it
        lines += ["Why slower, by the counters that moved against it: " + why[0].split(": ", 1)[1], ""]
    shows = variant.shows
    if shows and timed_before is not None:
        at = explain.shown_at_values(study.registry, study.counters_at, variant.id)
        n = variant.shown_at
        lines += ["The counters its registry entry names, the step before and this one"
                  + (f", both measured at {n}x{n}x{n}, where it is meant to win:" if at else ":"), "",
                  "| counter | step before | this step | as the entry says |", "| --- | ---: | ---: | --- |"]
        for col, direction in shows:
            label, _, fmt, _ = COUNTERS[col]
            a, b = at[col] if at and col in at else (rows.loc[before.id].get(col), row.get(col))
            if a is None or b is None or pd.isna(a) or pd.isna(b):
                lines.append(f"| {label} | not measured | not measured | |")
                continue
            lines.append(f"| {label} | {fmt.format(a)} | {fmt.format(b)} | {direction}: "
                         f"{'yes' if explain.as_said(a, b, direction) else '**no**'} |")
        lines.append("")
    else:
        lines += _counters_beside(variant, timed_before, rows)
    lines += _shapes(study, variant, before)
    return lines


def _counters_beside(variant, before, rows: pd.DataFrame) -> list[str]:
    """For a step whose registry entry names no counter (`shows`): the chapter table's counters of its unit, the
    step before's beside its own, with the sentence that says why these and not named ones."""
    facts = explain.UNIT_FACTS[variant.precision.unit]
    ids = [v.id for v in (before, variant) if v is not None]
    cols = [c for c in facts if c in rows.columns and rows.loc[ids, c].notna().all()]
    if before is None:
        why = (f"The first step of the {variant.precision.label} chapters: there is no step before it to set "
               "its counters against. Its own, as the chapter's table gives them:")
    elif variant.chapter == "seeds":
        why = ("A seed's step: the seed's own model explains it (its source, above), and its registry entry "
               "names no counter of its own. The chapter table's counters, the step before and this one:")
    else:
        why = ("Its registry entry names no counter that shows its change. The chapter table's counters, the step "
               "before and this one:")
    if not cols:
        return [why.split(":")[0] + ": no counter of them was measured in this study (ncu off).", ""]
    head = ["| counter | step before | this step |", "| --- | ---: | ---: |"] if before is not None else \
        ["| counter | this step |", "| --- | ---: |"]
    return [why, "", *head, *(f"| {facts[c][0]} | " + " | ".join(facts[c][1].format(rows.loc[i, c]) for i in ids)
                              + " |" for c in cols), ""]


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _shapes(study: Study, variant, before) -> list[str]:
    """Its fraction of the reference at every shape of the study, beside the step before's."""
    summ = study.summary[study.summary["dtype"] == "float32"]
    ids = [v.id for v in (before, variant) if v is not None]
    summ = summ[summ["variant"].isin(ids) & summ["verified"].astype(bool)]
    if summ.empty or "frac_of_cublas" not in summ:
        return []
    summ = summ.assign(shape=[f"{m}×{n}×{k}" for m, n, k in zip(summ["M"], summ["N"], summ["K"])])
    table = summ.pivot_table(index="shape", columns="variant", values="frac_of_cublas", sort=False)
    reference = study.registry.reference(variant.precision)
    titles = {v.id: v.title for v in (before, variant) if v is not None}
    lines = [f"Of {reference.title if reference else 'the reference'}, at every shape of the study:", "",
             "| shape | " + " | ".join(titles[i] for i in ids if i in table) + " |",
             "| --- |" + " ---: |" * sum(i in table for i in ids)]
    for shape, r in table.iterrows():
        lines.append(f"| {shape} | " + " | ".join("" if pd.isna(r[i]) else f"{r[i]:.1%}" for i in ids if i in table)
                     + " |")
    return lines + [""]


def _renumbered(was: tuple) -> str:
    """A step's numbers before the course was renumbered: ' Step 28 before ...', ' Step 18, then 22, before ...'."""
    if not was:
        return ""
    return f" Step {', then '.join(was)}{',' if len(was) > 1 else ''} before the course was renumbered."


def step_pages(study: Study) -> dict[str, str]:
    """{file name under steps/: page} for every step the study timed, in the progression's order."""
    steps = timed_in_order(study)
    tables = {p: explain.progression_table(study.counted, study.hardware, study.registry, study.size,
                                           precision=p, summary=study.summary, counters_at=study.counters_at)
              for p in precisions.TABLE}
    slower = {p: explain.slower_steps(tables[p], p.unit) for p in precisions.TABLE}
    pages = {}
    for i, variant in enumerate(steps):
        before = step_before(study, variant)
        previous = steps[i - 1] if i > 0 else None
        following = steps[i + 1] if i + 1 < len(steps) else None
        nav = " · ".join(filter(None, [
            f"previous: [{previous.title}]({page_name(previous)})" if previous else None,
            "[the study](../README.md)", "[every step](README.md)",
            f"next: [{following.title}]({page_name(following)})" if following else None]))
        chapter = study.registry.chapters[variant.chapter]
        path = _file(study, variant)
        text = read_kernel(study.folder, path) if path else None
        header, pitfalls = split_pitfalls([on_its_page(line) for line in header_comment(text)] if text else [])
        # the registry's source, unless the header gives it (the same words twice, one under the other)
        source = "" if any(line.startswith("Source:") for line in header) else f" Source: {variant.source}."
        lines = [f"# {variant.title}", "", nav, "",
                 f"Chapter: {precisions.chapter_name(chapter.title, variant.precision)}, on "
                 f"{study.gpu['gpu_name']}.{source}" + _renumbered(variant.was), "",
                 "## What it changes, and why", "", "(Its file's header, as the study ran it.)", ""]
        lines += header or ["This study kept no copy of the step's source."]
        lines += [""] + effect_section(study, variant, tables[variant.precision], slower[variant.precision], before,
                                       pd.concat([t for t in tables.values() if len(t)]) if before else None)
        if pitfalls:
            said = [p.removeprefix(PITFALL).strip() for p in pitfalls]
            lines += ["## Where public kernels go wrong", ""] + [p[:1].upper() + p[1:] for p in said] + [""]
        lines += code_section(study, variant, before)
        lines += [nav, ""]
        pages[page_name(variant)] = "\n".join(lines)
    pages["README.md"] = "\n".join(
        [f"# The steps of the study on {study.gpu['gpu_name']}, a page each", "",
         "In the progression's order; each page shows what its step changes, its effect, and the code that "
         "changed from the step before. [The study](../README.md).", ""]
        + [f"- [{v.title}]({page_name(v)}) ({study.registry.chapters[v.chapter].title})"   # titles carry the numbers
           for v in steps] + [""])
    return pages
