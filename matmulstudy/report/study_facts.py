"""What a study's pages say of it: where and how it was measured, what checked the harness, how every
result was verified. Read from the study's committed tables, so that they re-render without a GPU; the same
facts, in a few lines of reStructuredText, end every figure's caption in Snakemake's HTML report."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pandas as pd

from .. import precisions
from ..study.paths import ROOT
from ..study.settings import OPTIONAL_STAGE_KEYS
from ..study.snapshot import read_config
from .committed import Study
from .results import at_size, failed_runs

REPEAT_WITHIN = 0.01   # a second study's median within 1% of the first's (the bar a repeat is held to)


def first(df: pd.DataFrame, column: str):
    values = df[column].dropna() if column in df else []
    return values.iloc[0] if len(values) else None


def _flag(value) -> bool | None:
    """A yes/no column's value as Python's True or False (the CSV gives numpy's bool, or a string in a column
    of mixed types), None where it was not recorded."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return None
    return str(value) == "True"


def repo_link(study: Study, path: str) -> str:
    """A markdown link from the study's folder to a file of the repository; where the study lies outside it
    (a study run with --directory elsewhere), the file's name alone, which no link would reach."""
    folder = Path(study.folder).resolve()
    if ROOT.resolve() in folder.parents:
        return f"[{path}]({os.path.relpath(ROOT / path, folder)})"
    return f"the repository's `{path}`"


def not_measured(results: pd.DataFrame) -> pd.DataFrame:
    """One row per measurement that could not be made (its build or its run failed)."""
    return failed_runs(results).drop_duplicates(["dtype", "variant", "M", "N", "K", "seed"])


def throttled_rows(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary rows with at least one throttled sample."""
    if "throttled_samples" not in summary:
        return summary.iloc[0:0]
    return summary[summary["throttled_samples"].fillna(0) > 0]


def facts(study: Study) -> dict:
    """Where and how the study was measured, from its rows."""
    r, s = study.results, study.summary
    gpu_rows = r[study.on_gpu(r)]
    cuda = r[r["variant"].map(lambda v: study.registry[v].backend == "cuda")]
    reference = study.registry.reference()
    throttled = throttled_rows(s)
    checks = r.drop(failed_runs(r).index).drop_duplicates(["dtype", "variant", "M", "N", "K", "seed"])
    return {
        "gpu": study.gpu["gpu_name"], "uuid": first(gpu_rows, "gpu_uuid"),
        "cc": first(gpu_rows, "compute_capability"), "driver": first(gpu_rows, "driver_version"),
        "cuda": first(gpu_rows, "driver_cuda_version"), "nvcc": first(cuda, "compiler"),
        "library": first(r[r["variant"] == reference.id], "library") if reference and "library" in r else None,
        "pycuda": first(gpu_rows, "pycuda_version"), "commit": first(r, "git_commit"),
        "dirty": _flag(first(r, "git_dirty")), "config_hash": first(r, "config_hash"), "host": first(r, "host"),
        "first": study.measured[0], "last": study.measured[1],
        "cache": ", ".join(sorted(gpu_rows["cache"].dropna().unique())) if "cache" in gpu_rows else None,
        "placements": int(gpu_rows["placements"].max()) if "placements" in gpu_rows and
        gpu_rows["placements"].notna().any() else 1,
        "contexts": int(gpu_rows["context"].max()) + 1 if "context" in gpu_rows and
        gpu_rows["context"].notna().any() else 1,
        "min_time_s": study.config.get("min_time_s") or 0,
        "contexts_below_ms": study.config.get("contexts_below_ms") or math.inf,
        "measurements": len(s), "samples": int(s["samples"].sum()),
        "min_samples": int(s.loc[s["verified"].astype(bool), "samples"].min()) if s["verified"].any() else 0,
        "max_samples": int(s["samples"].max()),
        "stops": s["stop_reason"].value_counts().to_dict() if "stop_reason" in s else {},
        "checks": checks["check"].value_counts().to_dict() if "check" in checks else {},
        "failed": int((~s["verified"].astype(bool)).sum()) - len(not_measured(r)),
        "not_measured": len(not_measured(r)),
        "throttled": int(s["throttled_samples"].fillna(0).sum()) if "throttled_samples" in s else 0,
        "throttled_in": [f"{t.variant} {t.dtype} {t.M}×{t.N}×{t.K} ({int(t.throttled_samples)} of {t.samples}, "
                         f"SM clock down to {t.min_sm_clock_mhz:.0f} MHz)" for t in throttled.itertuples()],
        "cpu": first(r[~study.on_gpu(r)], "device"), "python": first(r, "python"),
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
            f"{f['max_samples']} samples per measurement (stops: {counts(f['stops'])}). Every result checked "
            f"before and after timing ({counts(f['checks'])}).", "",
            f"**Failed verifications**: {f['failed']} of {f['measurements']} measurements."]) + "\n"
    lines = [
        f"**Measured on** {f['gpu']} (UUID {f['uuid']}, compute capability {f['cc']}, driver {f['driver']}, "
        f"CUDA {f['cuda']}), host {f['host']}, {f['first']} to {f['last']}; code at commit "
        f"``{str(f['commit'])[:12]}`` (config hash ``{f['config_hash']}``), kernels built by {f['nvcc']}, "
        f"timed through PyCUDA {f['pycuda']}.",
        "",
        f"**How**: each launch between its own CUDA events, {f['cache'] or 'n/a'} L2, queued behind a blocking "
        f"kernel; {f['min_samples']} to {f['max_samples']} samples per measurement, until the interquartile range "
        f"was within the noise target" + (f" and the samples' times added up to {f['min_time_s']:g} s"
                                          if f["min_time_s"] else "") +
        f" or the time budget ran out (stops: {counts(f['stops'])})"
        + (f"; the launches took {f['placements']} copies of the operands in turn" if f["placements"] > 1 else "")
        + (f"; the samples of each measurement whose launch took less than {f['contexts_below_ms']:g} ms were "
           f"taken in {f['contexts']} CUDA contexts, one after another" if f["contexts"] > 1 else "")
        + f". Every result checked before and after timing ({counts(f['checks'])}). Limits: {limits(g)}.",
        "",
        f"**Failed verifications**: {f['failed']} of {f['measurements']} measurements. "
        f"**Throttled samples**: {f['throttled']}" + (f" ({'; '.join(f['throttled_in'])})." if f["throttled_in"]
                                                      else "."),
    ]
    return "\n".join(lines) + "\n"


def limits(g: dict) -> str:
    base = precisions.BASE
    if not g.get(base.peak_key):
        return "no GPU in this study (CPU variants only)"
    return (f"{base.label} peak {g[base.peak_key]:,.0f} GFLOP/s ({g.get('sm_count')} SMs × "
            f"{g.get(base.rate_key)} {base.rate} × {base.flop_per_rate} × {g.get('max_sm_clock_mhz', 0):.0f} MHz); "
            "copy bandwidth "
            f"measured {(g.get('copy_bandwidth_gbs') or 0) / 1000:.2f} TB/s (theoretical "
            f"{(g.get('dram_peak_gbs') or 0) / 1000:.2f}); power limit {g.get('power_limit_w', 'n/a')} W")


def counts(tally: dict) -> str:
    """'noise 120, time 3': a tally as the page writes it."""
    return ", ".join(f"{k} {v}" for k, v in tally.items()) or "none recorded"


LISTED = 10   # the exceptions a check lists on the page; the rest are in its table


def harness_checks(study: Study) -> list[str]:
    """What the harness was checked against, where the study holds it: a table, a row a check (what was set
    against what, the result, its CSV), then each check's exceptions, at most LISTED of them."""
    rows, exceptions = [], []
    hw = study.hardware
    if "ncu_vs_median" in hw and hw["ncu_vs_median"].notna().any():
        ncu = hw[hw["ncu_vs_median"].notna()]
        worst = ncu.loc[ncu["ncu_vs_median"].abs().idxmax()]
        rows.append((f"Nsight Compute's kernel time for one launch of each of {len(ncu)} GPU variants at "
                     f"{worst['ncu_shape']}, against the harness's median",
                     f"within {abs(worst['ncu_vs_median']):.1%} (largest: {_title(study, worst['variant'])})"
                     f"{taken_on(study, ncu, 'ncu_gpu_uuid')}", "hardware.csv"))
    cross = study.optional("crosscheck.csv")
    reference = study.registry.reference()
    if cross is not None and reference is not None:
        s = study.summary
        for row in cross[(cross.library == "cupy") & (cross.precision == precisions.BASE.id)].itertuples():
            ours = s[(s.variant == reference.id) & (s.M == row.M) & (s.N == row.N) & (s.K == row.K)]["median_ms"]
            if len(ours):
                rows.append((f"cuBLAS {precisions.BASE.label} at {row.M}, timed by CuPy {row.version} in the same "
                             "session", f"{ours.iloc[0]:.3f} ms here, {row.median_ms:.3f} ms by CuPy "
                             f"({ours.iloc[0] / row.median_ms - 1:+.1%})", "crosscheck.csv"))
    repeat = study.optional("repeat.csv")
    moved_in_repeat = None   # the most a GPU median moved between the two studies of the same code
    if repeat is not None:
        gpu, cpu = _from_1024(study, repeat)
        moved_in_repeat = gpu["difference"].abs().max()   # NaN where no GPU row
        off = gpu[gpu["difference"].abs() > REPEAT_WITHIN]
        apart = settings_apart(study)
        where = _second_gpu(study) + (f", its settings apart: {apart}" if apart else "")
        result = (f"{len(gpu) - len(off)} of {len(gpu)} GPU measurements ({1 - len(off) / len(gpu):.1%}) within "
                  f"{REPEAT_WITHIN:.0%}" if len(off) else f"GPU variants within {moved_in_repeat:.1%}")
        if len(cpu):
            result += f"; the CPU baseline moved by up to {cpu['difference'].abs().max():.0%}"
        rows.append((f"a second full study of the same code{where}, sizes from 1024", result, "repeat.csv"))
        second = study.optional("repeat/summary.csv")   # kept beside repeat.csv where the second study ran
        flagged = {(t.dtype, t.variant, t.M, t.N, t.K) for s in (study.summary, second) if s is not None
                   for t in throttled_rows(s).itertuples()}
        exceptions += _listed(f"Beyond {REPEAT_WITHIN:.0%} in the second study", "repeat.csv",
                              [f"**{_title(study, r.variant)}** at {r.M}×{r.N}×{r.K} {r.difference:+.1%}"
                               + _why_apart(r, flagged) for r in _largest_first(off)])
    before = _against_the_study_before(study, moved_in_repeat)
    if before:
        rows.append(before[0])
        exceptions += before[1]
    if not rows:
        return []
    lines = (["| check | result | table |", "| --- | --- | --- |"]
             + [f"| {check} | {result} | [{table}]({table}) |" for check, result, table in rows] + [""] + exceptions)
    return lines[:-1] if lines[-1] == "" else lines


def _largest_first(rows: pd.DataFrame):
    """A comparison's rows, the largest move first: those a page lists."""
    return rows.iloc[rows["difference"].abs().to_numpy().argsort(kind="stable")[::-1]].itertuples()


def _listed(title: str, table: str, items: list[str]) -> list[str]:
    """A check's exceptions under the table, the largest first: at most LISTED, then how many more its table
    holds."""
    if not items:
        return []
    more = [f"- and {len(items) - LISTED} more: [{table}]({table})"] if len(items) > LISTED else []
    return [f"{title} ({len(items)}):", ""] + [f"- {item}" for item in items[:LISTED]] + more + [""]


def _from_1024(study: Study, table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A comparison's rows (compare.py's) of the shapes from 1024 on: the GPU variants' and the CPU baselines'."""
    big = table[table[["M", "N", "K"]].min(axis=1) >= 1024]
    return big[study.on_gpu(big)], big[~study.on_gpu(big)]


BEFORE_LISTED = 0.02   # a median that moved more than this from the study before is named on the page


def _against_the_study_before(study: Study, moved_in_repeat) -> tuple:
    """Where the study keeps the one before it (before.csv, by tools/compare.py, and before/ with its facts): the
    table's row (check, result, table) and its exceptions. How many GPU medians from 1024 fell inside that study's
    interquartile range, how many within 1% and 2%, the ones that moved further, and beside them how far two
    studies of the same code moved (the repeat), which is why a median can leave a range of one study's samples
    without a change of the code. () where it keeps none."""
    before = study.optional("before.csv")
    if before is None:
        return ()
    gpu, _ = _from_1024(study, before)
    if gpu.empty:
        return ()
    commit = ""
    if (study.folder / "before" / "measured_with.csv").exists():
        measured = pd.read_csv(study.folder / "before" / "measured_with.csv")
        commit = f"commit `{str(measured['git_commit'].iloc[0])[:10]}`"
    said = " ".join(filter(None, (commit, _second_gpu(study, "before").lstrip(", "))))
    moved = gpu["difference"].abs()
    result = f"of {len(gpu)} GPU medians, "
    if "within_first_iqr" in gpu:
        result += f"{int(gpu['within_first_iqr'].astype(bool).sum())} inside that study's interquartile range, "
    result += (f"{int((moved <= 0.01).sum())} within 1%, "
               f"{int((moved <= BEFORE_LISTED).sum())} within {BEFORE_LISTED:.0%}")
    if moved_in_repeat is not None and not pd.isna(moved_in_repeat):
        result += f"; two studies of this code moved by up to {moved_in_repeat:.1%} (the second study, above)"
    far = gpu[moved > BEFORE_LISTED]
    return ((f"against the study before it{', ' + said if said else ''}, sizes from 1024", result, "before.csv"),
            _listed(f"Beyond {BEFORE_LISTED:.0%} of the study before", "before.csv",
                    [f"**{_title(study, r.variant)}** at {r.M}×{r.N}×{r.K} {r.difference:+.1%}"
                     for r in _largest_first(far)]))


def _title(study: Study, vid: str) -> str:
    """A variant as the pages name it: its title ('10 16-byte loads, A transposed'), not its id."""
    return study.registry[vid].title if vid in study.registry else vid


def _second_gpu(study: Study, folder: str = "repeat") -> str:
    """Where the second study ran, if the study keeps its facts (repeat/gpu.json, or before/'s) and it was
    another GPU of the model (another UUID): the two differ by the GPUs as well as by the runs."""
    path = study.folder / folder / "gpu.json"
    if not path.exists():
        return ""
    with open(path) as fh:
        return _on_gpu(study, json.load(fh).get("uuid"))


def settings_apart(study: Study, folder: str = "repeat") -> str:
    """The settings in which the second study (its config.yaml, where kept) differs from this one, the label and
    the optional stages' switches aside: 'energy_window_s 0, headline_rounds 0' (a second study run without the
    phases that do not shape its medians), '' where none differ or it keeps none."""
    mine, its = read_config(study.folder), read_config(study.folder / folder)
    return ", ".join(f"{key} {its[key]}" for key in its
                     if key != "label" and key not in OPTIONAL_STAGE_KEYS and key in mine and its[key] != mine[key])


def _on_gpu(study: Study, uuid) -> str:
    """', on another NVIDIA H200 (UUID ...)' where a table was taken on another GPU than the study's timings
    (Nsight Compute or the sanitizer run on a second GPU of the host, or a second study), else ', on the same
    GPU'; '' where the table does not say."""
    if not isinstance(uuid, str) or not uuid:
        return ""
    return f", on another {study.gpu.get('gpu_name')} (UUID `{uuid}`)" if uuid != study.gpu.get("uuid") else \
        ", on the same GPU"


def taken_on(study: Study, table: pd.DataFrame | None, column: str = "gpu_uuid") -> str:
    """Where a table's rows were taken (_on_gpu), for tables that record their GPU in column."""
    uuids = table[column].dropna().unique() if table is not None and column in table else []
    return _on_gpu(study, uuids[0]) if len(uuids) == 1 else \
        (f", on {len(uuids)} GPUs (UUIDs {', '.join(f'`{u}`' for u in uuids)})" if len(uuids) else "")


def _why_apart(row, throttled: set) -> str:
    """Why two studies' medians of one measurement are more than REPEAT_WITHIN apart, where the tables say."""
    if (row.dtype, row.variant, row.M, row.N, row.K) in throttled:
        return " (throttled samples in one of the two)"
    if bool(getattr(row, "ranges_overlap", False)):
        return (f" (two clusters of times: samples {row.fastest_ms_first:.3f} to {row.slowest_ms_first:.3f} ms here, "
                f"{row.fastest_ms_second:.3f} to {row.slowest_ms_second:.3f} ms in the second study)")
    return ""


def verification(study: Study) -> list[str]:
    """The margins of the check (error over bound), the sanitizer's verdicts and the planted faults."""
    s = study.summary
    lines = ["## Verification", ""]
    if "margin" not in s or s["margin"].isna().all():
        lines += ["This study was checked with the earlier bound (tolerance × ε × √K relative to |A|·|B|, "
                  "Freivalds' method above 4096); it records no margins.", ""]
    else:
        tau, base = study.config.get("tolerance", "τ"), precisions.BASE
        eps_in = ", ".join(f"{p.eps_in_text()} for {p.label}" for p in precisions.TABLE)
        biased = [p for p in precisions.TABLE if p.eps_bias]
        bias = "".join(f"; ε_bias = {p.eps_bias_text()} for {p.label}, whose tensor-core sums are cut toward "
                       "zero, over the product of its inputs rounded as its kernels read them" for p in biased)
        coarse = [p for p in precisions.TABLE if p.eps_acc != precisions.EPS32]
        acc = "".join(f"; ε_acc = {precisions.power_text(p.eps_acc)} for {p.label}, summed {p.sums}"
                      for p in coarse)
        held = " or ".join(p.label for p in precisions.others() if p.held_to_fp32)
        lines += [f"Every element of every result against a float64 reference, with |C − R| ≤ {tau} · (ε_in + "
                  f"{'ε_acc' if coarse else '2⁻²³'}·√K{' + ε_bias·K' if biased else ''}) · r, r = √((A∘A)(B∘B)) "
                  f"(ε_in = {eps_in}{'; ε_acc = 2⁻²³ for FP32 sums' if coarse else ''}{acc}{bias}; "
                  f"derived in {repo_link(study, 'matmulstudy/measure/verify.py')}). The margin is the largest error "
                  f"over that bound, per measurement: at most 1 passes; the bound is set so that a correct "
                  f"{base.label} result stays at or below 0.5. A {held} variant is also measured against "
                  f"{base.label}'s bound, where it must fail (margin ≥ 2), so that the two precisions cannot be "
                  "mistaken for each other.",
                  "",
                  f"| variant | precision | worst margin | at shape | margin at {study.size} | "
                  f"least margin over {base.label}'s bound |", "| --- | --- | ---: | --- | ---: | ---: |"]
        for vid, g in s[s["dtype"] == "float32"].groupby("variant", sort=False):
            worst = g.loc[g["margin"].idxmax()] if g["margin"].notna().any() else None
            at = at_size(g, study.size)
            prec = g["precision"].iloc[0]
            lines.append(f"| {g['title'].iloc[0]} | {prec} | "
                         + (f"{worst['margin']:.3f} | {worst['M']}×{worst['N']}×{worst['K']}" if worst is not None
                            else "| ") + " | "
                         + (f"{at['margin'].iloc[0]:.3f}" if len(at) and pd.notna(at["margin"].iloc[0]) else "")
                         + " | " + (f"{g['fp32_margin'].min():.1f}" if prec != precisions.BASE.id else "") + " |")
        lines.append("")
    sanitizer = study.optional("sanitizer.csv")
    if sanitizer is not None:
        bad = sanitizer[~sanitizer["clean"].astype(bool)]
        lines += [f"compute-sanitizer ([sanitizer.csv](sanitizer.csv)): {', '.join(sorted(sanitizer['tool'].unique()))} "
                  f"on one launch of each of {sanitizer['variant'].nunique()} kernels at "
                  f"{', '.join(sorted(sanitizer['shape'].unique()))}{taken_on(study, sanitizer)}: "
                  + ("no errors or hazards." if bad.empty else
                     f"**{len(bad)} of {len(sanitizer)} runs found problems**: "
                     + "; ".join(f"{r.variant} {r.tool} {r.shape} ({r.first_report})" for r in bad.itertuples())),
                  ""]
    faults = study.optional("faults.csv")
    if faults is not None:
        live = faults[faults["expected"].astype(bool)]
        missed = live[~live["caught"].astype(bool)]
        alarms = faults[~faults["expected"].astype(bool) & faults["caught"].astype(bool)]
        lines += [f"Planted faults ([faults.csv](faults.csv), `python -m matmulstudy.tools.faults`): "
                  f"{faults['fault'].nunique()} kernels with one deliberate defect each, {len(faults)} runs; "
                  f"{len(live) - len(missed)} of {len(live)} live defects caught ("
                  + ", ".join(f"{n} by {by}" for by, n in live["by"].value_counts().items())
                  + f"), {len(missed)} missed, {len(alarms)} false alarms.", ""]
    return lines
