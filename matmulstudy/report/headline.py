"""The headline ratios from headline.csv (measure/headline.py): each precision's best step over its reference,
per round, and per regime the median of the rounds with their range and the clocks."""

from __future__ import annotations

import pandas as pd

SHAPE = ["M", "N", "K"]
KEYS = ["precision"] + SHAPE + ["regime"]


def ratios(headline: pd.DataFrame) -> pd.DataFrame:
    """One row per precision, shape, regime and round: the step's and the reference's GFLOP/s and SM clock, and
    their ratio. A round where either side did not verify or has no rate (an n/a sustained run) has no ratio."""
    ok = headline[headline["verified"].astype(bool) & headline["gflops"].notna()]
    side = ok.pivot_table(index=KEYS + ["round"], columns="role", values=["gflops", "sm_clock_mhz"], aggfunc="first")
    side.columns = [f"{role}_{value}" for value, role in side.columns]
    side = side.dropna(subset=["step_gflops", "reference_gflops"]).reset_index()
    names = headline.drop_duplicates(KEYS + ["role"]).pivot_table(index=KEYS, columns="role", values="variant",
                                                                  aggfunc="first").reset_index()
    out = side.merge(names, on=KEYS)
    out["ratio"] = out["step_gflops"] / out["reference_gflops"]
    return out


def summary(headline: pd.DataFrame) -> pd.DataFrame:
    """Per precision, shape and regime: the step and its reference, the rounds that gave a ratio (of how many),
    the median ratio and its range, each side's median GFLOP/s and its SM clock's range over the rounds."""
    per_round = ratios(headline)
    rounds = headline.groupby(KEYS)["round"].nunique().rename("rounds")
    rows = []
    for key, g in per_round.groupby(KEYS):
        rows.append({**dict(zip(KEYS, key)), "step": g["step"].iloc[0], "reference": g["reference"].iloc[0],
                     "ratios": len(g), "ratio": g["ratio"].median(), "ratio_min": g["ratio"].min(),
                     "ratio_max": g["ratio"].max(), "step_gflops": g["step_gflops"].median(),
                     "reference_gflops": g["reference_gflops"].median(),
                     "step_clock_min": g["step_sm_clock_mhz"].min(), "step_clock_max": g["step_sm_clock_mhz"].max(),
                     "reference_clock_min": g["reference_sm_clock_mhz"].min(),
                     "reference_clock_max": g["reference_sm_clock_mhz"].max()})
    out = pd.DataFrame(rows, columns=KEYS + ["step", "reference", "ratios", "ratio", "ratio_min", "ratio_max",
                                             "step_gflops", "reference_gflops", "step_clock_min", "step_clock_max",
                                             "reference_clock_min", "reference_clock_max"])
    return out.merge(rounds.reset_index(), on=KEYS, how="left")


def not_verified(headline: pd.DataFrame) -> pd.DataFrame:
    """The rows of the rounds whose result did not verify (never a ratio)."""
    return headline[~headline["verified"].astype(bool)]


def agreement(first: pd.DataFrame, second: pd.DataFrame) -> pd.DataFrame:
    """Two studies' headline ratios side by side (their headline.csv): the difference in points, per precision,
    shape and regime where both have one of the same step (NaN where their best steps differ)."""
    a, b = summary(first), summary(second)
    cols = KEYS + ["step", "ratio"]
    out = a[cols].merge(b[cols], on=KEYS, suffixes=("_first", "_second"))
    # two studies whose best steps differ (two steps within noise of each other) compare two kernels: no points
    same = out["step_first"] == out["step_second"]
    out["points"] = ((out["ratio_second"] - out["ratio_first"]) * 100).where(same)
    return out


def _clocks(low: float, high: float) -> str:
    return "n/a" if pd.isna(low) else (f"{low:.0f}" if round(low) == round(high) else f"{low:.0f}-{high:.0f}")


def page_section(headline: pd.DataFrame | None, registry, config: dict, label_of,
                 repeat: pd.DataFrame | None = None) -> list[str]:
    """The page's section on the headline ratios: the method, one row per precision, shape and regime, and
    where the study holds a second one (repeat/headline.csv), its ratio and the difference. `label_of`: a
    precision's id -> its label."""
    if headline is None or headline.empty:
        return []
    summ = summary(headline)
    both = agreement(headline, repeat).set_index(KEYS) if repeat is not None else None
    rounds, window = config.get("headline_rounds", "?"), config.get("headline_window_s", "?")
    lines = ["## The headline ratios, in rounds", "",
             f"Each precision's best step at the reference size and its cuBLAS reference, measured again after "
             f"every other measurement in {rounds} rounds on one GPU, the step first in odd rounds and the "
             f"reference first in even ones, so that both see the same power state ([headline.csv](headline.csv)). "
             f"Burst: timed as the study times (cold L2, batches behind the blocker, throttled batches taken "
             f"again). Sustained: each back to back, after 0.5 s idle, from one tick of NVML's energy counter to "
             f"another at least {window} s later: the clock the 700 W cap leaves. Every result checked again; the "
             "ratio is the median of the rounds' ratios, with their range.", "",
             "| precision | shape | regime | step | step GFLOP/s | reference GFLOP/s | ratio | rounds' range "
             "| SM clock, step / reference (MHz) |" + (" second study | difference |" if both is not None else ""),
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
            cells += (["", ""] if key not in both.index else
                      [f"{both.at[key, 'ratio_second']:.1%}", f"{both.at[key, 'points']:+.1f} points"]
                      if pd.notna(both.at[key, "points"]) else
                      [f"{both.at[key, 'ratio_second']:.1%} ({registry[both.at[key, 'step_second']].title})",
                       "another step"])
        lines.append("| " + " | ".join(cells) + " |")
    bad = not_verified(headline)
    if len(bad):
        lines += ["", "Not verified, and left out of every ratio: "
                  + "; ".join(f"{r['variant']} {r['M']}×{r['N']}×{r['K']} round {r['round']} {r['regime']}"
                              for _, r in bad.iterrows())]
    return lines + [""]
