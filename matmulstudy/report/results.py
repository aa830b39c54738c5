"""The tidy results table of one study (one GPU), and what is read off it."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import pandas as pd

from .. import precisions
from ..errors import StudyError
from ..measure.hardware import occupancy
from ..measure.sanitize import verdict
from ..study import counters
from ..study.paths import STUDY_FILES
from ..study.registry import Registry
from ..study.shapes import Shape


def collect(bench_csvs: list, gpu_json: str | None, registry: Registry) -> pd.DataFrame:
    """One row per sample from every bench job, with the study's GPU on each.

    Refuses to merge samples timed on different GPUs: a figure from such a
    table would compare kernels that never ran on the same hardware.
    """
    frames = [pd.read_csv(p) for p in bench_csvs]
    if not frames:
        raise StudyError("no bench results to collect")
    df = pd.concat(frames, ignore_index=True)
    gpu_names = set(df.loc[df["variant"].map(lambda v: registry[v].is_gpu), "device"].dropna())
    if gpu_json:
        with open(gpu_json) as fh:
            gpu_names.add(json.load(fh)["gpu_name"])
    refuse_mixed(df, gpu_names)
    gpu_names = sorted(gpu_names)
    df.insert(df.columns.get_loc("variant") + 1, "title", df["variant"].map(lambda v: registry[v].title))
    df["gpu"] = gpu_names[0] if gpu_names else "none"
    order = {vid: v.order for vid, v in registry.items()}
    return (df.sort_values(["dtype", "variant", "M", "N", "K", "seed", "sample"],
                           key=lambda s: s.map(order) if s.name == "variant" else s)
              .reset_index(drop=True))


# What every sample of a study shares (study/provenance.py's facts of the run, the GPU's): written once, in
# the study's measured_with.csv, where the column has one value in the whole study; a column whose value
# differs from sample to sample stays with the samples.
PROVENANCE = ("git_commit", "git_dirty", "config_hash", "host", "slurm_job_id", "python", "gpu_uuid",
              "compute_capability", "driver_version", "driver_cuda_version", "pycuda_version", "gpu")
GZIP = {"method": "gzip", "compresslevel": 9, "mtime": 0}   # no time stamp: the same table, the same bytes


def shared_path(samples: str | Path) -> Path:
    """The file of the provenance a study's samples share: measured_with.csv beside samples.csv.gz."""
    return Path(samples).with_name(STUDY_FILES["measured_with"])


def write_results(df: pd.DataFrame, samples: str | Path) -> None:
    """Every sample of a study, compact: the provenance it shares once (measured_with.csv, one row), the
    rest as gzip CSV (samples.csv.gz); read_results puts them together again."""
    shared = [c for c in PROVENANCE if c in df and df[c].nunique(dropna=False) == 1]
    df[shared].head(1).to_csv(shared_path(samples), index=False)
    df.drop(columns=shared).to_csv(samples, index=False, compression=GZIP)


def read_results(samples: str | Path) -> pd.DataFrame:
    """A study's samples, each row with the provenance it shares (write_results), every column typed as a
    whole (no DtypeWarning, whatever the rows' order)."""
    df = pd.read_csv(samples, low_memory=False)
    shared = shared_path(samples)
    if os.path.exists(shared):
        row = pd.read_csv(shared)
        for column in row.columns:
            df[column] = pd.Series([row[column].iloc[0]] * len(df), index=df.index, dtype=row[column].dtype)
    return df


def refuse_mixed(df: pd.DataFrame, gpu_names: set) -> None:
    """Samples measured at different commits or on different GPUs are not one study.

    GPUs differ when their names differ, or (same model) their UUIDs do.
    """
    if "git_commit" in df:
        commits = df["git_commit"].value_counts()
        if len(commits) > 1:
            found = ", ".join(f"{c} ({n} samples)" for c, n in commits.items())
            raise StudyError(f"results come from different commits: {found}; rerun the old ones with "
                             "`snakemake --forcerun bench` (or check out the commit they came from)")
    uuids = set(df["gpu_uuid"].dropna()) if "gpu_uuid" in df else set()
    for found in (gpu_names, uuids):
        if len(found) > 1:
            raise StudyError(f"results come from different GPUs {sorted(found)}; give each GPU its own label "
                             "(results/<label>/) and rerun the study there")


def at_size(df: pd.DataFrame, size: int, dtype: str = "float32", verified: bool = False) -> pd.DataFrame:
    """The rows (samples or summary rows) of the square shape size³ in one dtype; only verified ones if asked."""
    at = df[(df.M == size) & (df.N == size) & (df.K == size) & (df.dtype == dtype)]
    return at[at["verified"].astype(bool)] if verified else at


def slower_beyond_spread(now: pd.Series, before: pd.Series) -> bool:
    """Whether a step is slower than the one before it beyond their measured spread: `now`'s and `before`'s
    GFLOP/s samples, the upper quartile of the one under the lower quartile of the other (their interquartile
    ranges apart). A step within the spread of the one before is not called slower."""
    return bool(now.quantile(0.75) < before.quantile(0.25))


def summary(df: pd.DataFrame, registry: Registry, gpu: dict | None = None) -> pd.DataFrame:
    """Median time and GFLOP/s with the interquartile range, per variant and shape.

    Only verified samples count, and of those not the ones of batches taken
    again because the GPU throttled (retaken_samples says how many); a failed
    measurement stays as a row with verified = False and no numbers. Also per row: how many samples were
    throttled (NVML), the timing's final noise and why it stopped, the check's
    margins, and the median's fraction of the registry's reference in the
    row's precision on the same shape and of the GPU's peak in the base
    precision (`gpu`: gpu.json). Fractions are left empty where they would
    compare different arithmetic: int32 rows, and the base precision's peak
    of another precision's row.
    """
    keys = ["dtype", "variant", "title", "M", "N", "K"]

    def first(g, column):
        return g[column].iloc[0] if column in g else None

    def agg(g):
        retaken = g["retaken"].fillna(False).astype(bool) if "retaken" in g else pd.Series(False, index=g.index)
        ok = g[g["verified"] & ~retaken]   # the samples that count
        t = ok["time_ms"]
        f = ok["gflops"]
        on_gpu = registry[g.name[1]].is_gpu and "throttled" in ok
        flags = ok["throttled"] if on_gpu else pd.Series(dtype=object)
        later = {}   # what later studies record: the batches taken again where the GPU throttled
        if "retaken" in g:
            later.update(retaken_samples=int(retaken.sum()), retakes=first(g, "retakes"))
        return pd.Series({
            "verified": bool(g["verified"].all()),
            "samples": len(ok),
            "median_ms": t.median(), "q1_ms": t.quantile(0.25), "q3_ms": t.quantile(0.75),
            "median_gflops": f.median(), "q1_gflops": f.quantile(0.25), "q3_gflops": f.quantile(0.75),
            "max_error": g["max_error"].max(),
            "margin": g["margin"].max() if "margin" in g else None,            # error over its bound
            "fp32_margin": g["fp32_margin"].max() if "fp32_margin" in g else None,   # over FP32's bound
            "check": first(g, "check"), "precision": first(g, "precision"),
            "noise": first(g, "noise"), "stop_reason": first(g, "stop_reason"),
            "throttled_samples": int((flags == True).sum()) if on_gpu else None,   # noqa: E712
            "clock_unknown_samples": int(flags.isna().sum()) if on_gpu else None,
            "min_sm_clock_mhz": ok["sm_clock_mhz"].min() if on_gpu else None,
            **later,
        })
    out = df.groupby(keys, sort=False).apply(agg, include_groups=False).reset_index()
    base = out["precision"].fillna(precisions.BASE.id).eq(precisions.BASE.id) & out["dtype"].eq("float32")
    out["frac_of_cublas"] = fraction_of_cublas(out, registry)
    peak = (gpu or {}).get(precisions.BASE.peak_key)
    out["frac_of_fp32_peak"] = (out["median_gflops"] / peak).where(base) if peak else float("nan")
    return out


# What the energy phase (measure/energy.py) adds to a summary row.
ENERGY_COLUMNS = ("sustained_gflops", "sustained_median_sm_clock_mhz", "sustained_min_sm_clock_mhz",
                  "sustained_busy", "sustained_timed_launches", "joules_per_launch", "mean_power_w",
                  "gflop_per_joule", "energy_note")
KEYS = ["dtype", "variant", "M", "N", "K"]
# energy_note of a GPU measurement at a shape the energy phase did not run (since it runs at the headline's shapes)
NOT_IN_ENERGY_PHASE = "not in the energy phase: it runs at the reference size and the largest"


def with_energy(summ: pd.DataFrame, energy: pd.DataFrame | None, registry: Registry, why_none: str) -> pd.DataFrame:
    """The summary with each row's sustained run: its rate back to back at the power cap, joules per launch,
    the GPU's mean power and GFLOP per joule (energy.csv, one sustained run a variant, dtype and shape), or in
    energy_note why there are none: a CPU variant, no energy phase (`why_none`), a shape the phase did not run
    (NOT_IN_ENERGY_PHASE), or the phase's own reason."""
    out = summ.copy()
    phase = energy is not None and len(energy) > 0
    if phase:
        first = energy.drop_duplicates(KEYS)[KEYS + [c for c in ENERGY_COLUMNS if c in energy]]
        out = out.merge(first, on=KEYS, how="left")
        shape = ["dtype", "M", "N", "K"]
        missed = ~out.set_index(shape).index.isin(energy.set_index(shape).index)   # shapes the phase did not run
    for column in ENERGY_COLUMNS:
        if column not in out:
            out[column] = float("nan") if column != "energy_note" else None
    gpu = out["variant"].map(lambda v: registry[v].is_gpu)
    out["energy_note"] = out["energy_note"].astype(object)
    out.loc[~gpu, "energy_note"] = "a CPU variant: NVML's counter measures the GPU"
    if phase:
        out.loc[gpu & missed, "energy_note"] = NOT_IN_ENERGY_PHASE
    out.loc[gpu & out["energy_note"].isna() & out["sustained_gflops"].isna(), "energy_note"] = why_none
    out["energy_note"] = out["energy_note"].fillna("")
    return out


def ncu_agreement(hw: pd.DataFrame, summ: pd.DataFrame) -> pd.DataFrame:
    """Beside each ncu measurement, the pipeline's median at the same shape.

    ncu_vs_median = ncu's gpu__time_duration / the median - 1: how far the
    harness's timing is from the profiler's for the same kernel and inputs.
    """
    if "ncu_time_ns" not in hw:
        return hw
    med = summ.assign(ncu_shape=[Shape(*mnk).tag for mnk in zip(summ["M"], summ["N"], summ["K"])])
    med = med[["variant", "dtype", "ncu_shape", "median_ms"]].rename(columns={"median_ms": "median_ms_at_ncu_shape"})
    out = hw.merge(med, on=["variant", "dtype", "ncu_shape"], how="left")
    out["ncu_vs_median"] = out["ncu_time_ns"].astype(float) / 1e6 / out["median_ms_at_ncu_shape"] - 1
    return out


def failed_runs(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of measurements that could not be made (the build or the run failed; measure/bench.py's
    failure_rows)."""
    return df[df["failure"].notna()] if "failure" in df else df.iloc[0:0]


def failure_kind(rows: pd.DataFrame) -> str:
    """How a measurement failed, in a few words: 'build failed', 'run failed' (measure/bench.py's
    failure_rows) or 'verification failed'."""
    why = rows["failure"].dropna() if "failure" in rows else []
    return str(why.iloc[0]).split(":")[0] if len(why) else "verification failed"


def failures(df: pd.DataFrame) -> list[str]:
    """One line per (variant, shape, seed) whose result did not verify, or that could not be measured:
    then why, with the first line of the error and its log."""
    bad = df[~df["verified"].astype(bool)].drop_duplicates(["dtype", "variant", "M", "N", "K", "seed"])
    lines = []
    for r in bad.itertuples():
        head = f"{r.variant} {r.dtype} {r.M}x{r.N}x{r.K} seed {r.seed}: "
        if "failure" in df and pd.notna(r.failure):
            lines.append(head + r.failure)
        else:
            lines.append(head + f"{r.bad_elements:.0f} wrong element(s), {r.unwritten_elements:.0f} never written, max error "
                         f"{r.max_error:.3g} > {r.tolerance:.3g}" + (f" (margin {r.margin:.3g})" if "margin" in df else ""))
    return lines


def failed_summary(df: pd.DataFrame, report: str) -> str:
    """One line naming every variant that failed, how, and where to read why (its log, or failures.txt)."""
    bad = df[~df["verified"].astype(bool)]
    parts = []
    for (vid, dtype), g in bad.groupby(["variant", "dtype"], sort=False):
        why = g["failure"].dropna() if "failure" in g else pd.Series(dtype=object)
        if len(why):
            log = re.search(r"\(log: ([^)]+)\)$", str(why.iloc[0]))
            parts.append(f"{vid} {dtype} ({failure_kind(g)}" + (f"; log: {log.group(1)}" if log else "") + ")")
        else:
            parts.append(f"{vid} {dtype} (verification failed on {g.drop_duplicates(['M', 'N', 'K']).shape[0]} "
                         "shape(s))")
    return (f"error: {len(parts)} variant(s) failed: " + ", ".join(parts)
            + f"; failures.txt and the tables and figures of the rest are in {report}/")


def write_failures(df: pd.DataFrame, path: Path) -> list[str]:
    lines = failures(df)
    Path(path).write_text("".join(line + "\n" for line in lines))
    return lines


def _load(paths: list) -> list[dict]:
    out = []
    for path in paths:
        with open(path) as fh:
            out.append(json.load(fh))
    return out


def counters_at(ncu_paths: list) -> pd.DataFrame:
    """counters_at.csv: Nsight Compute's counters at a step's own size (its `shown_at`), the step before's
    beside them, a row per (variant, ncu_shape)."""
    rows = _load(ncu_paths)
    return pd.DataFrame(rows, columns=None if rows else ["variant", "shape"]).rename(columns={"shape": "ncu_shape"})


def hardware_table(resource_paths: list, sass_paths: list, ncu_paths: list, gpu: dict | None,
                   sanitizer: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per built (variant, dtype): what explains its speed.

    The compiler's resources and the registry's tile parameters, the
    theoretical occupancy on this GPU, the main loop's instruction mix, the
    ncu counters (float32, at ncu_size) where they were measured, and
    compute-sanitizer's verdict (float32) where it ran.
    """
    rows = []
    for r in _load(resource_paths):
        if r.get("failed"):   # a failed build has no resources: failures.txt names it
            continue
        threads = math.prod(r["block"]) if "block" in r else None
        if gpu and threads:
            r.update(occupancy(threads, r["registers"], r["shared_bytes"] + r.get("dynamic_shared_bytes", 0), gpu))
        r["threads_per_block"] = threads
        r["defines"] = " ".join(f"-D{k}={v}" for k, v in r.get("defines", {}).items())
        for key in ("block", "tile"):
            if key in r:
                r[key] = "x".join(map(str, r[key]))
        rows.append(r)
    df = pd.DataFrame(rows) if rows else pd.DataFrame(columns=["variant", "dtype"])
    if sass_paths and len(df):
        df = df.merge(pd.DataFrame(_load(sass_paths)), on=["variant", "dtype"], how="left")
    if ncu_paths:
        ncu = pd.DataFrame(_load(ncu_paths)).rename(columns={"shape": "ncu_shape"})
        ncu["dtype"] = "float32"
        df = df.merge(ncu, on=["variant", "dtype"], how="outer")   # cuBLAS: ncu only
        if gpu and gpu.get("sm_count") and "tensor_pipe_pct" in df:
            df["tensor_idle_cycles_per_tile"] = counters.tensor_idle_cycles_per_tile(df, gpu["sm_count"])
    if sanitizer is not None and len(sanitizer):
        verdicts = verdict(sanitizer).rename("sanitizer").reset_index().assign(dtype="float32")
        df = df.merge(verdicts, on=["variant", "dtype"], how="left")
    return df.convert_dtypes()


def fraction_of_cublas(summ: pd.DataFrame, registry: Registry) -> pd.Series:
    """Each float32 row's median over cuBLAS's in the row's own precision on the same shape: a tensor-core
    step against cuBLAS in its precision, never as a multiple of cuBLAS FP32 (NaN for int32 rows and where
    the reference is missing). Summaries collected before the tensor-core chapter held this against cuBLAS
    FP32 for every row."""
    precision = summ["precision"].fillna(precisions.BASE.id)
    ref = pd.Series(float("nan"), index=summ.index)
    for p in precision.unique():   # the column's ids (int32 rows: "int32", no precision's, no reference)
        reference = registry.reference(precisions.PRECISIONS[p]) if p in precisions.PRECISIONS else None
        mine = precision.eq(p) & summ["dtype"].eq("float32")
        by_shape = summ[summ["variant"].eq(getattr(reference, "id", None)) & mine].set_index(["M", "N", "K"])[
            "median_gflops"]
        ref[mine] = [by_shape.get(mnk, float("nan")) for mnk in zip(summ.loc[mine, "M"], summ.loc[mine, "N"],
                                                                          summ.loc[mine, "K"])]
    return (summ["median_gflops"] / ref).where(summ["dtype"].eq("float32"))
