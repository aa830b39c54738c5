"""The pages a reviewer reads: one summary page per GPU, and the index across GPUs.

Everything on them is read from a study's committed tables (results.csv,
summary.csv, hardware.csv, gpu.json, its own registry.yaml and config.yaml,
and crosscheck.csv, repeat.csv, sanitizer.csv and faults.csv where present),
so they re-render without a GPU. The same facts, in a few lines of
reStructuredText, end every figure's caption in Snakemake's HTML report.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from . import explain
from .figures import FIGURES
from .registry import KERNELS_DIR
from .results import at_size, failed_runs, failures
from .study import Study


def _first(df: pd.DataFrame, column: str):
    values = df[column].dropna() if column in df else []
    return values.iloc[0] if len(values) else None


ROOT = KERNELS_DIR.parent   # the repository


def _repo_link(study: Study, path: str) -> str:
    """A markdown link from the study's folder to a file of the repository; where the study lies outside it
    (a study run with --directory elsewhere), the file's name alone, which no link would reach."""
    folder = Path(study.folder).resolve()
    if ROOT.resolve() in folder.parents:
        return f"[{path}]({os.path.relpath(ROOT / path, folder)})"
    return f"the repository's `{path}`"


def _not_measured(results: pd.DataFrame) -> pd.DataFrame:
    """One row per measurement that could not be made (its build or its run failed)."""
    return failed_runs(results).drop_duplicates(["dtype", "variant", "M", "N", "K", "seed"])


def _code_row(study: Study, f: dict) -> str:
    """The page's table row for the code: the commit and the config it was measured with."""
    return (f"| code | commit `{f['commit']}`" + (" (tree differed from it)" if f["dirty"] is True else "")
            + f", config hash `{f['config_hash']}`" + (" ([config.yaml](config.yaml))" if study.config else "") + " |")


def _checked_rows(study: Study, f: dict) -> list[str]:
    """The page's table rows for the checks: how results were verified, and what failed."""
    return ([f"| verification | {_counts(f['checks'])} (before and after timing) |",
             f"| failed verifications | {f['failed']}" + (" (see [failures.txt](failures.txt))" if f["failed"] else "")
             + " |"]
            + ([f"| not measured (build or run failed) | {f['not_measured']} (see [failures.txt](failures.txt)) |"]
               if f["not_measured"] else []))


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


def _throttled(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary rows with at least one throttled sample."""
    if "throttled_samples" not in summary:
        return summary.iloc[0:0]
    return summary[summary["throttled_samples"].fillna(0) > 0]


def facts(study: Study) -> dict:
    """Where and how the study was measured, from its rows."""
    r, s = study.results, study.summary
    gpu_rows = r[study.on_gpu(r)]
    cuda = r[r["variant"].map(lambda v: study.registry[v].backend == "cuda")]
    reference = study.registry.reference("fp32")
    throttled = _throttled(s)
    checks = r.drop(failed_runs(r).index).drop_duplicates(["dtype", "variant", "M", "N", "K", "seed"])
    return {
        "gpu": study.gpu["gpu_name"], "uuid": _first(gpu_rows, "gpu_uuid"),
        "cc": _first(gpu_rows, "compute_capability"), "driver": _first(gpu_rows, "driver_version"),
        "cuda": _first(gpu_rows, "driver_cuda_version"), "nvcc": _first(cuda, "compiler"),
        "library": _first(r[r["variant"] == reference.id], "library") if reference and "library" in r else None,
        "pycuda": _first(gpu_rows, "pycuda_version"), "commit": _first(r, "git_commit"),
        "dirty": _first(r, "git_dirty"), "config_hash": _first(r, "config_hash"), "host": _first(r, "host"),
        "first": r["timestamp"].min() if "timestamp" in r else None,
        "last": r["timestamp"].max() if "timestamp" in r else None,
        "cache": ", ".join(sorted(gpu_rows["cache"].dropna().unique())) if "cache" in gpu_rows else None,
        "measurements": len(s), "samples": int(s["samples"].sum()),
        "min_samples": int(s.loc[s["verified"].astype(bool), "samples"].min()) if s["verified"].any() else 0,
        "max_samples": int(s["samples"].max()),
        "stops": s["stop_reason"].value_counts().to_dict() if "stop_reason" in s else {},
        "checks": checks["check"].value_counts().to_dict() if "check" in checks else {},
        "failed": int((~s["verified"].astype(bool)).sum()) - len(_not_measured(r)),
        "not_measured": len(_not_measured(r)),
        "throttled": int(s["throttled_samples"].fillna(0).sum()) if "throttled_samples" in s else 0,
        "throttled_in": [f"{t.variant} {t.dtype} {t.M}×{t.N}×{t.K} ({int(t.throttled_samples)} of {t.samples}, "
                         f"SM clock down to {t.min_sm_clock_mhz:.0f} MHz)" for t in throttled.itertuples()],
        "cpu": _first(r[~study.on_gpu(r)], "device"), "python": _first(r, "python"),
        "cpu_software": ", ".join(sorted({str(x) for x in r.loc[~study.on_gpu(r), ["compiler", "library"]]
                                          .stack().dropna() if str(x)} if {"compiler", "library"} <= set(r)
                                         else set())),
    }


def provenance_rst(study: Study) -> str:
    """The facts every caption of this GPU ends with (reStructuredText)."""
    f = facts(study)
    g = study.gpu
    if study.cpu_only:
        return "\n".join([
            f"**Measured on** the CPU only (no GPU in this study): {f['cpu']}, host {f['host']}, {f['first']} to "
            f"{f['last']}; code at commit ``{str(f['commit'])[:12]}`` (config hash ``{f['config_hash']}``); "
            f"{f['cpu_software']}; Python {f['python']}.", "",
            f"**How**: each call timed by the wall clock (``time.perf_counter``); {f['min_samples']} to "
            f"{f['max_samples']} samples per measurement (stops: {_counts(f['stops'])}). Every result checked "
            f"before and after timing ({_counts(f['checks'])}).", "",
            f"**Failed verifications**: {f['failed']} of {f['measurements']} measurements."]) + "\n"
    lines = [
        f"**Measured on** {f['gpu']} (UUID {f['uuid']}, compute capability {f['cc']}, driver {f['driver']}, "
        f"CUDA {f['cuda']}), host {f['host']}, {f['first']} to {f['last']}; code at commit "
        f"``{str(f['commit'])[:12]}`` (config hash ``{f['config_hash']}``), kernels built by {f['nvcc']}, "
        f"timed through PyCUDA {f['pycuda']}.",
        "",
        f"**How**: each launch between its own CUDA events, {f['cache'] or 'n/a'} L2, queued behind a blocking "
        f"kernel; {f['min_samples']} to {f['max_samples']} samples per measurement, until the interquartile range "
        f"was within the noise target or the time budget ran out (stops: {_counts(f['stops'])}). Every result "
        f"checked before and after timing ({_counts(f['checks'])}). Limits: {_limits(g)}.",
        "",
        f"**Failed verifications**: {f['failed']} of {f['measurements']} measurements. "
        f"**Throttled samples**: {f['throttled']}" + (f" ({'; '.join(f['throttled_in'])})." if f["throttled_in"]
                                                      else "."),
    ]
    return "\n".join(lines) + "\n"


def _limits(g: dict) -> str:
    if not g.get("fp32_peak_gflops"):
        return "no GPU in this study (CPU variants only)"
    return (f"FP32 peak {g['fp32_peak_gflops']:,.0f} GFLOP/s ({g.get('sm_count')} SMs × "
            f"{g.get('fp32_lanes_per_sm')} lanes × 2 × {g.get('max_sm_clock_mhz', 0):.0f} MHz); copy bandwidth "
            f"measured {(g.get('copy_bandwidth_gbs') or 0) / 1000:.2f} TB/s (theoretical "
            f"{(g.get('dram_peak_gbs') or 0) / 1000:.2f}); power limit {g.get('power_limit_w', 'n/a')} W")


def _counts(counts: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "none recorded"


def _checks(study: Study) -> list[str]:
    """What the harness was checked against, where the study holds it."""
    lines = []
    hw = study.hardware
    if "ncu_vs_median" in hw and hw["ncu_vs_median"].notna().any():
        ncu = hw[hw["ncu_vs_median"].notna()]
        worst = ncu.loc[ncu["ncu_vs_median"].abs().idxmax()]
        lines.append(f"- Nsight Compute's kernel time for one launch of each of {len(ncu)} GPU variants at "
                     f"{worst['ncu_shape']}: within {abs(worst['ncu_vs_median']):.1%} of the harness's median "
                     f"(largest: {worst['variant']}; [hardware.csv](hardware.csv)).")
    cross = study.optional("crosscheck.csv")
    reference = study.registry.reference("fp32")
    if cross is not None and reference is not None:
        s = study.summary
        for row in cross[(cross.library == "cupy") & (cross.precision == "fp32")].itertuples():
            ours = s[(s.variant == reference.id) & (s.M == row.M) & (s.N == row.N) & (s.K == row.K)]["median_ms"]
            if len(ours):
                lines.append(f"- cuBLAS FP32 at {row.M}: {ours.iloc[0]:.3f} ms here, {row.median_ms:.3f} ms "
                             f"measured by CuPy {row.version} in the same session "
                             f"({ours.iloc[0] / row.median_ms - 1:+.1%}; [crosscheck.csv](crosscheck.csv)).")
    repeat = study.optional("repeat.csv")
    if repeat is not None:
        big = repeat[repeat[["M", "N", "K"]].min(axis=1) >= 1024]
        gpu = big[study.on_gpu(big)]
        cpu = big[~study.on_gpu(big)]
        off = gpu[gpu["difference"].abs() > 0.02]
        text = (f"- A second full study right after ([repeat.csv](repeat.csv)), sizes from 1024: GPU variants "
                f"within {gpu['difference'].abs().max():.1%}")
        if len(off):
            second = study.optional("repeat/summary.csv")   # kept beside repeat.csv where the second study ran
            flagged = {(t.dtype, t.variant, t.M, t.N, t.K) for s in (study.summary, second) if s is not None
                       for t in _throttled(s).itertuples()}
            text = (f"- A second full study right after ([repeat.csv](repeat.csv)), sizes from 1024: "
                    f"{len(gpu) - len(off)} of {len(gpu)} GPU measurements within 2%; beyond: " + ", ".join(
                        f"{r.variant} {r.M}×{r.N}×{r.K} {r.difference:+.1%}" + _why_apart(r, flagged)
                        for r in off.itertuples()))
        if len(cpu):
            text += f"; the CPU baseline moved by up to {cpu['difference'].abs().max():.0%}"
        lines.append(text + ".")
    return lines


def _why_apart(row, throttled: set) -> str:
    """Why two studies' medians of one measurement are more than 2% apart, where the tables say."""
    if (row.dtype, row.variant, row.M, row.N, row.K) in throttled:
        return " (throttled samples in one of the two)"
    if bool(getattr(row, "ranges_overlap", False)):
        return (f" (two clusters of times: samples {row.fastest_ms_first:.3f} to {row.slowest_ms_first:.3f} ms here, "
                f"{row.fastest_ms_second:.3f} to {row.slowest_ms_second:.3f} ms in the second study)")
    return ""


def _verification(study: Study) -> list[str]:
    """The margins of the check (error over bound), the sanitizer's verdicts and the planted faults."""
    s = study.summary
    lines = ["## Verification", ""]
    if "margin" not in s or s["margin"].isna().all():
        lines += ["This study was checked with the earlier bound (tolerance × ε × √K relative to |A|·|B|, "
                  "Freivalds' method above 4096); it records no margins.", ""]
    else:
        tau = study.config.get("tolerance", "τ")
        lines += [f"Every element of every result against a float64 reference, with |C − R| ≤ {tau} · (ε_in + "
                  "2⁻²³·√K) · r, r = √((A∘A)(B∘B)) (ε_in = 0 for FP32, 2⁻⁹ for TF32; derived in "
                  f"{_repo_link(study, 'matmulstudy/verify.py')}). The margin is the largest error over "
                  "that bound, per measurement: at most 1 passes; the bound is set so that a correct FP32 result "
                  "stays at or below 0.5. A TF32 variant is also measured against FP32's bound, where it must "
                  "fail (margin ≥ 2), so that the two precisions cannot be mistaken for each other.", "",
                  f"| variant | precision | worst margin | at shape | margin at {study.size} | "
                  "least margin over FP32's bound |", "| --- | --- | ---: | --- | ---: | ---: |"]
        for vid, g in s[s["dtype"] == "float32"].groupby("variant", sort=False):
            worst = g.loc[g["margin"].idxmax()] if g["margin"].notna().any() else None
            at = at_size(g, study.size)
            prec = g["precision"].iloc[0]
            lines.append(f"| {g['title'].iloc[0]} | {prec} | "
                         + (f"{worst['margin']:.3f} | {worst['M']}×{worst['N']}×{worst['K']}" if worst is not None
                            else "| ") + " | "
                         + (f"{at['margin'].iloc[0]:.3f}" if len(at) and pd.notna(at["margin"].iloc[0]) else "")
                         + " | " + (f"{g['fp32_margin'].min():.1f}" if prec != "fp32" else "") + " |")
        lines.append("")
    sanitizer = study.optional("sanitizer.csv")
    if sanitizer is not None:
        bad = sanitizer[~sanitizer["clean"].astype(bool)]
        lines += [f"compute-sanitizer ([sanitizer.csv](sanitizer.csv)): {', '.join(sorted(sanitizer['tool'].unique()))} "
                  f"on one launch of each of {sanitizer['variant'].nunique()} kernels at "
                  f"{', '.join(sorted(sanitizer['shape'].unique()))}: "
                  + ("no errors or hazards." if bad.empty else
                     f"**{len(bad)} of {len(sanitizer)} runs found problems**: "
                     + "; ".join(f"{r.variant} {r.tool} {r.shape} ({r.first_report})" for r in bad.itertuples())),
                  ""]
    faults = study.optional("faults.csv")
    if faults is not None:
        live = faults[faults["expected"].astype(bool)]
        missed = live[~live["caught"].astype(bool)]
        alarms = faults[~faults["expected"].astype(bool) & faults["caught"].astype(bool)]
        lines += [f"Planted faults ([faults.csv](faults.csv), `python -m matmulstudy.faults`): "
                  f"{faults['fault'].nunique()} kernels with one deliberate defect each, {len(faults)} runs; "
                  f"{len(live) - len(missed)} of {len(live)} live defects caught ("
                  + ", ".join(f"{n} by {by}" for by, n in live["by"].value_counts().items())
                  + f"), {len(missed)} missed, {len(alarms)} false alarms.", ""]
    return lines


def study_page(study: Study) -> str:
    """reports/<label>/README.md: what was measured, where, how, and what it shows."""
    f = facts(study)
    g = study.gpu
    size = study.size
    if study.cpu_only:
        return _cpu_page(study, f)
    table = explain.progression_table(study.results, study.hardware, study.registry, size)
    lines = [f"# GPU matrix multiplication, step by step, on {f['gpu']}", "",
             "Produced by the study's pipeline (`snakemake --cores 1`) on this GPU and re-rendered from the "
             f"tables in this folder; {_repo_link(study, 'README.md')} says how.", "",
             f"![the progression at {size}](figures/progression.png)", "",
             "## Where and how it was measured", "",
             "| | |", "| --- | --- |",
             f"| GPU | {f['gpu']}, {g.get('sm_count')} SMs, compute capability {f['cc']}, UUID `{f['uuid']}` |",
             f"| limits | {_limits(g)} |",
             f"| software | driver {f['driver']} (CUDA {f['cuda']}), {f['nvcc']}, {f['library']}, PyCUDA {f['pycuda']} |",
             _code_row(study, f),
             f"| when, where | {f['first']} to {f['last']} on host {f['host']} |",
             f"| timing | {f['cache'] or 'n/a'} L2, CUDA events per launch behind a blocking kernel; "
             f"{f['samples']:,} samples in {f['measurements']} measurements ({f['min_samples']} to "
             f"{f['max_samples']} each); stopped on: {_counts(f['stops'])} |",
             *_checked_rows(study, f),
             f"| throttled samples | {f['throttled']}" + (": " + "; ".join(f["throttled_in"]) if f["throttled_in"]
                                                           else "") + " |", ""]
    lines += _failure_section(study)
    lines += _skipped_section(study)
    checks = _checks(study)
    if checks:
        lines += ["## The harness, checked", ""] + checks + [""]
    lines += _verification(study)
    lines += [explain.markdown(table, f["gpu"], size, level=2)]
    tensor = explain.progression_table(study.results, study.hardware, study.registry, size, precision="tf32")
    if len(tensor):
        lines += [f"![the tensor-core chapter at {size}](figures/progression_tf32.png)", "",
                  explain.markdown(tensor, f["gpu"], size, level=2, precision="tf32")]
    lines += ["## Figures", ""]
    lines += [f"- [{f.name}](figures/{f.name}.png) ([SVG](figures/{f.name}.svg)): {f.what}"
              for f in FIGURES if (study.folder / "figures" / f"{f.name}.png").exists()]
    lines += ["", "Tables: [results.csv](results.csv) (every sample), [summary.csv](summary.csv) (medians, "
              "IQR, noise, fractions), [hardware.csv](hardware.csv) (resources, instruction mix, counters).", ""]
    return "\n".join(lines)


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
             f"and re-rendered from the tables in this folder; {_repo_link(study, 'README.md')} says how.", "",
             f"![the CPU variants at {size}](figures/progression.png)", "",
             "## Where and how it was measured", "",
             "| | |", "| --- | --- |",
             f"| machine | {f['cpu']} (host {f['host']}); no GPU in this study |",
             f"| software | {f['cpu_software']}; Python {f['python']} |",
             _code_row(study, f),
             f"| when | {f['first']} to {f['last']} |",
             f"| timing | wall clock (`time.perf_counter`) per call; {f['samples']:,} samples in "
             f"{f['measurements']} measurements ({f['min_samples']} to {f['max_samples']} each); stopped on: "
             f"{_counts(f['stops'])} |",
             *_checked_rows(study, f), ""]
    lines += _failure_section(study)
    lines += _verification(study)
    lines += [f"## The CPU variants at {size}×{size}×{size}, float32", "",
              "Median of the timed calls, and each as a multiple of the first.", "",
              "| variant | GFLOP/s | of the first |", "| --- | ---: | ---: |"]
    for vid in order:
        lines.append(f"| {study.registry[vid].title} | {at.at[vid, 'median_gflops']:,.2f} | "
                     f"×{at.at[vid, 'median_gflops'] / at.at[order[0], 'median_gflops']:.1f} |")
    lines += ["", "## Figures", ""]
    what = {"progression": "the CPU variants at the reference size, each with its speedup over the one before"}
    lines += [f"- [{fig.name}](figures/{fig.name}.png) ([SVG](figures/{fig.name}.svg)): {what.get(fig.name, fig.what)}"
              for fig in FIGURES if fig.name in CPU_FIGURES and (study.folder / "figures" / f"{fig.name}.png").exists()]
    others = [fig.name for fig in FIGURES if fig.name not in CPU_FIGURES]
    lines += [f"- {', '.join(others)}: empty in this study (they draw GPU steps, cuBLAS or the GPU's peak)",
              "", "Tables: [results.csv](results.csv) (every sample), [summary.csv](summary.csv) (medians, "
              "IQR, noise).", ""]
    return "\n".join(lines)


def index_page(studies: list[Study], size: int) -> str:
    """reports/README.md: every GPU's study, and the progression across them."""
    lines = ["# The study on each GPU", "",
             f"![the progression on each GPU at {size}](figures/progression_by_gpu.png)", "",
             f"At {size}×{size}×{size}; each step's fraction is of the same GPU's cuBLAS in the step's precision.", "",
             "| GPU | folder | cuBLAS FP32 | best FP32 step | cuBLAS TF32 | best TF32 step | measured | commit |",
             "| --- | --- | ---: | --- | ---: | --- | --- | --- |"]
    for st in studies:
        at = at_size(st.summary, size, verified=True)
        cells = []
        for precision in ("fp32", "tf32"):
            reference = st.registry.reference(precision)
            ref = at.loc[at.variant == getattr(reference, "id", None), "median_gflops"]
            steps = st.steps_only(at, precision)
            best = steps.loc[steps["median_gflops"].idxmax()] if len(steps) else None
            cells += [f"{ref.iloc[0]:,.0f} GFLOP/s" if len(ref) else "",
                      f"{best['title']}: {best['median_gflops']:,.0f} GFLOP/s ({best['median_gflops'] / ref.iloc[0]:.0%})"
                      if best is not None and len(ref) else ""]
        f = facts(st)
        lines.append(f"| {f['gpu']} | [{st.label}/]({st.label}/README.md) | " + " | ".join(cells)
                     + f" | {str(f['first'])[:10]} | `{str(f['commit'])[:10]}` |")
    return "\n".join(lines) + "\n"
