"""The headline ratios from headline.csv (measure/headline.py): each precision's best step (and any step within a
percent of it) over its reference, per round, and per regime the median of the rounds with their range and the
clocks."""

from __future__ import annotations

import pandas as pd

SHAPE = ["M", "N", "K"]
KEYS = ["precision"] + SHAPE + ["regime"]


def ratios(headline: pd.DataFrame) -> pd.DataFrame:
    """One row per precision, shape, regime, round and step: the step's and the reference's GFLOP/s and SM
    clock, and their ratio. A round where either side did not verify or has no rate (an n/a sustained run)
    has no ratio."""
    ok = headline[headline["verified"].astype(bool) & headline["gflops"].notna()]
    cols = KEYS + ["round", "variant", "gflops", "sm_clock_mhz"]

    def side(role):
        return ok.loc[ok["role"] == role, cols].rename(columns={
            "variant": role, "gflops": f"{role}_gflops", "sm_clock_mhz": f"{role}_sm_clock_mhz"})
    out = side("step").merge(side("reference"), on=KEYS + ["round"])
    out["ratio"] = out["step_gflops"] / out["reference_gflops"]
    return out


def summary(headline: pd.DataFrame) -> pd.DataFrame:
    """Per precision, shape, regime and step (the best, and any within measure/headline.py's TIE of it): its
    reference, the rounds that gave a ratio (of how many), the median ratio and its range, each side's median
    GFLOP/s and its SM clock's range over the rounds."""
    per_round = ratios(headline)
    steps = headline[headline["role"] == "step"].rename(columns={"variant": "step"})
    rounds = steps.groupby(KEYS + ["step"])["round"].nunique().rename("rounds")
    rows = []
    for key, g in per_round.groupby(KEYS + ["step"]):
        rows.append({**dict(zip(KEYS + ["step"], key)), "reference": g["reference"].iloc[0],
                     "ratios": len(g), "ratio": g["ratio"].median(), "ratio_min": g["ratio"].min(),
                     "ratio_max": g["ratio"].max(), "step_gflops": g["step_gflops"].median(),
                     "reference_gflops": g["reference_gflops"].median(),
                     "step_clock_min": g["step_sm_clock_mhz"].min(), "step_clock_max": g["step_sm_clock_mhz"].max(),
                     "reference_clock_min": g["reference_sm_clock_mhz"].min(),
                     "reference_clock_max": g["reference_sm_clock_mhz"].max()})
    out = pd.DataFrame(rows, columns=KEYS + ["step", "reference", "ratios", "ratio", "ratio_min", "ratio_max",
                                             "step_gflops", "reference_gflops", "step_clock_min", "step_clock_max",
                                             "reference_clock_min", "reference_clock_max"])
    return out.merge(rounds.reset_index(), on=KEYS + ["step"], how="left")


def not_verified(headline: pd.DataFrame) -> pd.DataFrame:
    """The rows of the rounds whose result did not verify (never a ratio)."""
    return headline[~headline["verified"].astype(bool)]


REPRODUCED = 1.5   # points: two studies' ratios of one step this close reproduce each other


def not_reproduced(points) -> bool:
    """Whether two studies' ratios `points` apart (as the page prints them, to a tenth) miss REPRODUCED."""
    return round(abs(points), 1) > REPRODUCED


def agreement(first: pd.DataFrame, second: pd.DataFrame) -> pd.DataFrame:
    """Two studies' headline ratios side by side (their headline.csv): per precision, shape, regime and step
    that both measured, the two ratios and the difference in points."""
    cols = KEYS + ["step", "ratio"]
    out = summary(first)[cols].merge(summary(second)[cols], on=KEYS + ["step"], suffixes=("_first", "_second"))
    out["points"] = (out["ratio_second"] - out["ratio_first"]) * 100
    return out


METHOD_CAP = "../../docs/method.md#the-gpu-under-its-power-cap"   # from a study's page


def rate_timing(table: pd.DataFrame, column: str) -> str:
    """How a table's sustained rates were timed, by its `column` of launches timed by CUDA events: absent or 0
    in a study measured before gpu/timer.py timed them so (commit 1624e2d and earlier)."""
    if column in table and pd.to_numeric(table[column], errors="coerce").gt(0).any():
        return "its rate timed by CUDA events over the whole chunks of launches inside"
    return ("its rate from the host's times of the chunks of launches seen finished, interpolated, as studies "
            "until commit 1624e2d timed it: the host sees a chunk finish only when it polls, and studies since time "
            f"it by CUDA events, which [docs/method.md]({METHOD_CAP}) shows to spread less")


def cap(power_limit_w: float | None) -> str:
    """The GPU's power cap in words: its own limit where NVML gave it (no GPU's limit is written in here)."""
    return f"{power_limit_w:,.0f} W cap" if power_limit_w and power_limit_w == power_limit_w else "power cap"


def _clocks(low: float, high: float) -> str:
    return "n/a" if pd.isna(low) else (f"{low:.0f}" if round(low) == round(high) else f"{low:.0f}-{high:.0f}")


def page_section(headline: pd.DataFrame | None, registry, config: dict, label_of,
                 repeat: pd.DataFrame | None = None, power_limit_w: float | None = None, where: str = "") -> list[str]:
    """The page's section on the headline ratios: the method, one row per precision, shape, regime and step, and
    where the study holds a second one (repeat/headline.csv), its ratio and the difference. `label_of`: a
    precision's id -> its label; `power_limit_w`: the GPU's own limit (gpu.json), where NVML gave it; `where`:
    which GPU the rounds ran on, where the table says (', on the same GPU')."""
    if headline is None or headline.empty:
        return []
    summ = summary(headline)
    both = agreement(headline, repeat).set_index(KEYS + ["step"]) if repeat is not None else None
    others = summary(repeat).set_index(KEYS) if repeat is not None else None   # the steps the second measured
    rounds, window = config.get("headline_rounds", "?"), config.get("headline_window_s", "?")
    lines = ["## The headline ratios, in rounds", "",
             f"Each precision's best step at the reference size (with any step within a percent of it, which two "
             f"studies could otherwise rank apart) and its cuBLAS reference, measured again after every other "
             f"measurement in {rounds} rounds{where or ' on one GPU'}, the steps first in odd rounds and the "
             f"reference first in even ones, so that all see the same power state ([headline.csv](headline.csv)). "
             f"Burst: timed as the study times (cold L2, batches behind the blocker, throttled batches taken "
             f"again). Sustained: each back to back, after 0.5 s idle, from one tick of NVML's energy counter to "
             f"another at least {window} s later: the clock the {cap(power_limit_w)} leaves; "
             f"{rate_timing(headline, 'timed_launches')}. Every result checked again; the "
             "ratio is the median of the rounds' ratios, with their range. The clocks are what NVML read while "
             "the batches or the run went on; inside a launch the multiprocessors can run slower than NVML "
             "says ([docs/method.md](../../docs/method.md#the-gpu-under-its-power-cap)).", "",
             "| precision | shape | regime | step | step GFLOP/s | reference GFLOP/s | ratio | rounds' range "
             "| SM clock NVML read, step / reference (MHz) |"
             + (" second study | difference |" if both is not None else ""),
             "| --- | --- | --- | --- | ---: | ---: | ---: | --- | --- |" + (" ---: | ---: |" if both is not None
                                                                            else "")]
    for r in summ.itertuples():
        cells = [label_of(r.precision), f"{r.M}×{r.N}×{r.K}", r.regime, registry[r.step].title,
                 f"{r.step_gflops:,.0f}", f"{r.reference_gflops:,.0f}", f"**{r.ratio:.1%}**",
                 f"{r.ratio_min:.1%} to {r.ratio_max:.1%} ({r.ratios} of {r.rounds})",
                 f"{_clocks(r.step_clock_min, r.step_clock_max)} / "
                 f"{_clocks(r.reference_clock_min, r.reference_clock_max)}"]
        if both is not None:
            key = (r.precision, r.M, r.N, r.K, r.regime)
            if key + (r.step,) in both.index:
                points = both.at[key + (r.step,), "points"]
                cells += [f"{both.at[key + (r.step,), 'ratio_second']:.1%}",
                          f"{points:+.1f} points" + (f" (**not reproduced** within {REPRODUCED} points)"
                                                     if not_reproduced(points) else "")]
            else:   # the second study did not measure this step here: its own best, named
                there = others.loc[[key]] if key in others.index else others.iloc[0:0]
                cells += ["; ".join(f"{t.ratio:.1%} ({registry[t.step].title})" for t in there.itertuples()),
                          "another step" if len(there) else ""]
        lines.append("| " + " | ".join(cells) + " |")
    if both is not None and len(both):
        apart = both["points"].abs().groupby(level="regime").max()
        lines += ["", "Between the two studies, the ratios of a step both measured: "
                  + ", ".join(f"{regime} within {points:.1f} points" for regime, points in apart.items()) + "."]
        if both["points"].map(not_reproduced).any():
            lines += ["", f"A ratio that the second study did not reproduce within {REPRODUCED} points is marked. "
                      "Back to back at the power cap (sustained), a kernel's clock and rate depend on the GPU's "
                      "power state, which can differ between two studies minutes apart more than between the "
                      f"rounds of one ([docs/method.md]({METHOD_CAP})): read it as that study's "
                      "figure, not the GPU's."]
    bad = not_verified(headline)
    if len(bad):
        lines += ["", "Not verified, and left out of every ratio: "
                  + "; ".join(f"{r['variant']} {r['M']}×{r['N']}×{r['K']} round {r['round']} {r['regime']}"
                              for _, r in bad.iterrows())]
    return lines + [""]
