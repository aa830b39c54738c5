"""The pages a reviewer reads: one summary page per GPU, and the index across GPUs.

Everything on them is read from a study's committed tables (samples.csv.gz,
summary.csv, hardware.csv, gpu.json, its own registry.yaml and config.yaml,
and crosscheck.csv, repeat.csv, sanitizer.csv and faults.csv where present),
so they re-render without a GPU; study_facts.py says what the facts are.
"""

from __future__ import annotations

from .. import precisions
from . import explain, headline
from .committed import Study
from .figures import FIGURES, family
from .readme import ABSENT, renumbered
from .results import NOT_IN_ENERGY_PHASE, at_size, failures
from .study_facts import (counts, facts, harness_checks, limits, repo_link, settings_apart, taken_on,
                          verification)

SAMPLES_LINK = ("Tables: [samples.csv.gz](samples.csv.gz) (every sample, gzip CSV; what every sample shares, once, "
                "in [measured_with.csv](measured_with.csv))")


def _code_row(study: Study, f: dict) -> str:
    """The page's table row for the code: the commit and the config it was measured with."""
    return (f"| code | commit `{f['commit']}`" + (" (tree differed from it)" if f["dirty"] is True else "")
            + f", config hash `{f['config_hash']}`" + (" ([config.yaml](config.yaml))" if study.config else "") + " |")


def _checked_rows(study: Study, f: dict) -> list[str]:
    """The page's table rows for the checks: how results were verified, and what failed."""
    return ([f"| verification | {counts(f['checks'])} (before and after timing) |",
             f"| failed verifications | {f['failed']}" + (" (see [failures.txt](failures.txt))" if f["failed"] else "")
             + " |"]
            + ([f"| not measured (build or run failed) | {f['not_measured']} (see [failures.txt](failures.txt)) |"]
               if f["not_measured"] else []))


def _regime_rows(study: Study) -> list[str]:
    """The page's rows for the two regimes, where the study has them: the timed batches the GPU throttled in,
    taken again; the energy phase, each GPU variant back to back at the power cap."""
    s, c, rows = study.summary, study.config, []
    if "retaken_samples" in s:
        samples, batches = int(s["retaken_samples"].fillna(0).sum()), int(s["retakes"].fillna(0).sum())
        taken = int((s["retaken_samples"].fillna(0) > 0).sum())
        rows.append(f"| batches taken again | {samples:,} samples in {batches} batch{'es' * (batches != 1)} of "
                    f"{taken} measurement{'s' * (taken != 1)}: a batch during "
                    f"which the SM clock fell below {c.get('throttle_fraction', 'throttle_fraction')} of the highest "
                    f"is kept aside, not counted, and timed again, shorter, after {c.get('throttle_recovery_s', '?')} "
                    f"s (at most {c.get('max_retakes', '?')} a measurement; past that its samples count, flagged "
                    "throttled) |")
    if "mean_power_w" in s:
        gpu = s[s["variant"].map(lambda v: study.registry[v].is_gpu)]
        in_phase = gpu[gpu["energy_note"].fillna("") != NOT_IN_ENERGY_PHASE]
        where = ("on every shape" if len(in_phase) == len(gpu) else "at " + " and ".join(
            sorted({f"{m}x{n}x{k}" for m, n, k in zip(in_phase["M"], in_phase["N"], in_phase["K"])},
                   key=lambda tag: [int(x) for x in tag.split("x")])))
        gpu, notes = in_phase, in_phase["energy_note"].fillna("")
        rows.append(f"| energy | every GPU variant run back to back {where}, L2 warm, after every timed "
                    f"measurement, from one tick of NVML's energy counter to another at least "
                    f"{c.get('energy_window_s', '?')} s later ({headline.rate_timing(s, 'sustained_timed_launches')}), "
                    f"its output checked again ([energy.csv](energy.csv))"
                    f"{taken_on(study, study.optional('energy.csv'))}: "
                    f"its sustained GFLOP/s and clock, joules per launch, mean power, GFLOP per joule; "
                    f"{int(gpu['gflop_per_joule'].notna().sum())} of {len(gpu)} GPU measurements; n/a: "
                    + (counts(notes[notes != ""].str.split(":").str[0].value_counts().to_dict())) + ". "
                    + window_caveat(c.get("energy_window_s")) + " |")
    return rows


METHOD_WINDOWS = "../../docs/method.md#the-energy-counter-and-short-windows"   # from a study's page
TICK_SEEN_LATE_S = 0.017   # the host sees a tick of NVML's energy counter up to this late (docs/method.md)


def window_caveat(window_s) -> str:
    """Why a point of the power figure can lie past the GPU's power limit, for the study's energy window."""
    spread = f" (±{TICK_SEEN_LATE_S / window_s:.0%} for its {window_s} s)" if window_s else ""
    return ("A mean power over so short a window can lie past the GPU's power limit: the board holds its limit "
            "on average over about a second, not over every tenth, and the host sees each tick of the counter up "
            f"to {TICK_SEEN_LATE_S * 1e3:.0f} ms late, which puts a window's seconds, and so its power and GFLOP per "
            f"joule, that far off{spread} ([docs/method.md]({METHOD_WINDOWS}))")


def _failure_section(study: Study) -> list[str]:
    lines = failures(study.results)
    if not lines:
        return []
    shown = lines[:30]
    return (["## Failures", "", f"{len(lines)} measurement(s) failed, none of them plotted ([failures.txt]"
             "(failures.txt) lists them all): the variant, the shape, and why, with the first line of the "
             "error and the job's log.", ""] + [f"- {line}" for line in shown]
            + ([f"- ... and {len(lines) - len(shown)} more"] if len(lines) > len(shown) else []) + [""])


def _skipped_section(study: Study) -> list[str]:
    """The steps this study's GPU cannot run (a registry `needs` its architecture lacks), and why."""
    skipped = study.optional("skipped.csv")
    if skipped is None or skipped.empty:
        return []
    return (["## Skipped on this GPU", "", "Not built and not run here, and nowhere drawn ([skipped.csv]"
             "(skipped.csv)); the rest of the study is unaffected:", ""]
            + [f"- {r.title} (`{r.variant}`): {r.reason}" for r in skipped.itertuples()] + [""])


def study_page(study: Study) -> str:
    """reports/<label>/README.md: what was measured, where, how, and what it shows."""
    f = facts(study)
    g = study.gpu
    size = study.size
    if study.cpu_only:
        return _cpu_page(study, f)
    table = explain.progression_table(study.counted, study.hardware, study.registry, size, summary=study.summary,
                                      counters_at=study.counters_at)
    lines = [f"# GPU matrix multiplication, step by step, on {f['gpu']}", "",
             "Produced by the study's pipeline (`snakemake`) on this GPU and re-rendered from the "
             f"tables in this folder; {repo_link(study, 'README.md')} says how.", "",
             f"![the progression at {size}](figures/progression.png)", "",
             "Where the hand-written kernels win, shape by shape (each chapter's best step, as a share of cuBLAS in "
             "its precision):", "", "![each chapter's best step by size](figures/best_by_size.svg)", "",
             "**The study as a course:** [a page per step](steps/README.md), in order, each with what the "
             "step changes and why, its effect and counters, and the code that changed from the step before.",
             "",
             "## Where and how it was measured", "",
             "| | |", "| --- | --- |",
             f"| GPU | {f['gpu']}, {g.get('sm_count')} SMs, compute capability {f['cc']}, UUID `{f['uuid']}` |",
             f"| limits | {limits(g)} |",
             f"| software | driver {f['driver']} (CUDA {f['cuda']}), {f['nvcc']}, {f['library']}, PyCUDA {f['pycuda']} |",
             _code_row(study, f),
             f"| when, where | {f['first']} to {f['last']} on host {f['host']} |",
             f"| timing | {f['cache'] or 'n/a'} L2, CUDA events per launch behind a blocking kernel; "
             f"{f['samples']:,} samples in {f['measurements']} measurements ({f['min_samples']} to "
             f"{f['max_samples']} each); stopped on: {counts(f['stops'])} |",
             *_checked_rows(study, f),
             f"| throttled samples | {f['throttled']}" + (": " + "; ".join(f["throttled_in"]) if f["throttled_in"]
                                                           else "") + " |", *_regime_rows(study), ""]
    lines += _failure_section(study)
    lines += _skipped_section(study)
    checks = harness_checks(study)
    if checks:
        lines += ["## The harness, checked", ""] + checks + [""]
    rounds, second = study.optional("headline.csv"), study.optional("repeat/headline.csv")
    section = headline.page_section(rounds, study.registry, study.config, lambda p: precisions.get(p).label,
                                    second, study.gpu.get("power_limit_w"), taken_on(study, rounds))
    if section and second is None and (study.folder / "repeat").is_dir():   # a repeat run without the rounds
        apart = settings_apart(study)
        section += ["The second study (repeat/) did not measure these rounds again"
                    + (f" (its settings apart: {apart})" if apart else "")
                    + ": each ratio here was measured in this study alone.", ""]
    lines += section
    lines += verification(study)
    lines += [explain.markdown(table, f["gpu"], size, level=2)]
    for p in precisions.others():   # each other precision's chapters, after their figure
        chapter = explain.progression_table(study.counted, study.hardware, study.registry, size, precision=p,
                                            summary=study.summary, counters_at=study.counters_at)
        if len(chapter):
            lines += [f"![the {p.adjective} chapter at {size}](figures/progression_{p.id}.svg)", "",
                      explain.markdown(chapter, f["gpu"], size, level=2, precision=p)]
    lines += technique_table(study)
    lines += ["## Figures", ""]
    lines += figure_list(study, FIGURES)
    lines += ["", SAMPLES_LINK + ", [summary.csv](summary.csv) (medians, "
              "IQR, noise, fractions), [hardware.csv](hardware.csv) (resources, instruction mix, counters).", ""]
    return "\n".join(lines)


def technique_table(study: Study) -> list[str]:
    """## One technique, several precisions: a row per technique that the study's steps apply in more than one
    precision (the registry's `technique`), a column per precision, each cell the step that applies it there and
    its rate against that precision's cuBLAS at the study's size. Nothing where no technique spans two (a study
    measured before techniques were named has none)."""
    steps = sorted((v for v in study.registry.steps() if v.technique), key=lambda v: study.registry.course[v.id])
    by = {}
    for v in steps:
        by.setdefault(v.technique, {}).setdefault(v.precision, v)
    shared = {t: cells for t, cells in by.items() if len(cells) > 1}
    if not shared:
        return []
    order = [p for p in precisions.TABLE if any(p in cells for cells in shared.values())]
    size = study.size
    at = at_size(study.summary, size).set_index("variant")["frac_of_cublas"]

    def cell(v) -> str:
        if v is None:
            return ""
        number, ratio = v.number, at.get(v.id)
        return f"{number}: {ratio:.1%}" if ratio is not None and ratio == ratio else number   # NaN: no rate

    return ["## One technique, several precisions", "",
            f"A row per technique that steps of more than one precision apply, the step in each precision, and its "
            f"time against that precision's cuBLAS at {size} (cuBLAS's time / the step's).", "",
            "| technique | " + " | ".join(p.label for p in order) + " |",
            "| --- |" + " ---: |" * len(order),
            *(f"| {t} | " + " | ".join(cell(cells.get(p)) for p in order) + " |" for t, cells in shared.items()),
            ""]


def figure_list(study: Study, figures, what: dict | None = None) -> list[str]:
    """A line per figure the study has drawn, and one per family of a figure per chapter, its chapters' links in
    the line: '- size_sweep, GFLOP/s against size ...: [the seeds' steps](...), [beyond the seeds](...)'."""
    lines, families = [], {}
    for f in figures:
        if not (study.folder / "figures" / f"{f.name}.svg").exists():
            continue
        if f.chapter is None:
            lines.append(f"- [{f.name}](figures/{f.name}.svg): {(what or {}).get(f.name, f.what)}")
        else:
            families.setdefault(family(f), []).append(f)
    for name, mine in families.items():
        links = ", ".join(f"[{f.chapter_title}](figures/{f.name}.svg)" for f in mine)
        lines.append(f"- {name}, {mine[0].what}, a figure per chapter: {links}")
    return lines


# The figures a study without a GPU draws (the others need a GPU's steps, its cuBLAS or its peak).
CPU_FIGURES = ("progression", "size_sweep", "timing", "margin")


def _cpu_page(study: Study, f: dict) -> str:
    """reports/<label>/README.md of a study without a GPU: what it is (the CPU baselines only), where and how
    they were measured, and how they compare."""
    size = study.size
    at = at_size(study.summary, size, verified=True)
    at = at[at["dtype"] == "float32"].set_index("variant")
    order = [v for v in study.registry if v in at.index]
    lines = [f"# The study's CPU variants on {f['cpu']} (no GPU in this study)", "",
             "A study with no GPU variant in it: only the CPU baselines that the GPU steps are measured "
             "against ran, verified and timed as in any study. Produced by the study's pipeline (`snakemake`) "
             f"and re-rendered from the tables in this folder; {repo_link(study, 'README.md')} says how.", "",
             f"![the CPU variants at {size}](figures/progression.png)", "",
             "## Where and how it was measured", "",
             "| | |", "| --- | --- |",
             f"| machine | {f['cpu']} (host {f['host']}); no GPU in this study |",
             f"| software | {f['cpu_software']}; Python {f['python']} |",
             _code_row(study, f),
             f"| when | {f['first']} to {f['last']} |",
             f"| timing | wall clock (`time.perf_counter`) per call; {f['samples']:,} samples in "
             f"{f['measurements']} measurements ({f['min_samples']} to {f['max_samples']} each); stopped on: "
             f"{counts(f['stops'])} |",
             *_checked_rows(study, f), ""]
    lines += _failure_section(study)
    lines += verification(study)
    lines += [f"## The CPU variants at {size}×{size}×{size}, float32", "",
              "Median of the timed calls, and each as a multiple of the first.", "",
              "| variant | GFLOP/s | of the first |", "| --- | ---: | ---: |"]
    for vid in order:
        lines.append(f"| {study.registry[vid].title} | {at.at[vid, 'median_gflops']:,.2f} | "
                     f"×{at.at[vid, 'median_gflops'] / at.at[order[0], 'median_gflops']:.1f} |")
    lines += ["", "## Figures", ""]
    first = next(iter(study.registry.chapters), None)
    drawn = [fig for fig in FIGURES if family(fig) in CPU_FIGURES and fig.chapter in (None, first)]
    lines += figure_list(study, drawn, {"progression": "the CPU variants at the reference size, each with its "
                                                       "speedup over the one before"})
    others = list(dict.fromkeys(family(fig) for fig in FIGURES if fig not in drawn))
    lines += [f"- {', '.join(others)}: empty in this study (they draw GPU steps, cuBLAS or the GPU's peak)",
              "", SAMPLES_LINK + ", [summary.csv](summary.csv) (medians, "
              "IQR, noise).", ""]
    return "\n".join(lines)


# What a study folder may hold beside its tables, and how the index names it.
EXTRAS = (("hardware.csv", "Nsight Compute",
           lambda st: "ncu_shape" in st.hardware and st.hardware["ncu_shape"].notna().any()),
          ("sanitizer.csv", "compute-sanitizer", None), ("crosscheck.csv", "the CuPy cross-check", None),
          ("energy.csv", "the energy of every step", None), ("headline.csv", "the headline ratios in rounds", None),
          ("repeat.csv", "a second full study (repeat/)", None),
          ("before.csv", "the study before it compared (before/)", None))


def holds(st: Study) -> str:
    """What a study holds: its steps, by chapter, and the checks and phases whose files it has."""
    steps = [v for v in st.registry.steps() if v.id in set(st.summary["variant"])]
    titles = [v.number for v in steps]
    extras = [name for file, name, present in EXTRAS
              if (st.folder / file).exists() and (present is None or present(st))]
    return f"steps {titles[0]} to {titles[-1]}; " + ", ".join(extras) if steps else ", ".join(extras)


def index_page(studies: list[Study], size: int, registry) -> str:
    """reports/README.md: every GPU's study, and the progression across them; by the live `registry`, which
    studies were measured before the steps took the numbers they have now (their tables keep the old ones)."""
    # a pair of columns per precision that any of the studies measured (its reference or a step)
    measured = [p for p in precisions.TABLE
                if any(v.precision == p and v.is_gpu for st in studies for v in st.registry.values())]
    head = ["GPU", "folder"] + [text for p in measured for text in (f"{p.reference_name}", f"best {p.label} step")]
    lines = ["# The study on each GPU", "",
             *[line for p in measured for line in (f"![the {p.label} steps on each GPU at {size}]"
                                                   f"(figures/progression_by_gpu_{p.id}.svg)", "")],
             f"At {size}×{size}×{size}; each step's fraction is of the same GPU's cuBLAS in the step's precision.", "",
             "| " + " | ".join(head + ["measured", "commit"]) + " |",
             "| --- | --- |" + " ---: | --- |" * len(measured) + " --- | --- |"]
    then = " Its steps keep the numbers of its commit: the course was renumbered since (the registry's `was:`)."
    what = ["", "What each holds:", ""] + [f"- [{st.label}/]({st.label}/README.md), {facts(st)['gpu']}: {holds(st)}."
                                          + (then if renumbered(st, registry) else "")
                                          for st in studies]
    for st in studies:
        at = at_size(st.summary, size, verified=True)
        cells = []
        for precision in measured:
            reference = st.registry.reference(precision)
            ref = at.loc[at.variant == getattr(reference, "id", None), "median_gflops"]
            steps = st.steps_only(at, precision)
            best = steps.loc[steps["median_gflops"].idxmax()] if len(steps) else None
            cells += [f"{ref.iloc[0]:,.0f} GFLOP/s" if len(ref) else ABSENT,
                      f"{best['title']}: {best['median_gflops']:,.0f} GFLOP/s ({best['median_gflops'] / ref.iloc[0]:.0%})"
                      if best is not None and len(ref) else ABSENT]
        f = facts(st)
        lines.append(f"| {f['gpu']} | [{st.label}/]({st.label}/README.md) | " + " | ".join(cells)
                     + f" | {str(f['first'])[:10]} | `{str(f['commit'])[:10]}` |")
    return "\n".join(lines + what) + "\n"
