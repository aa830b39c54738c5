"""Per-tile fit over K of devbench rounds at M = N = 4096 (4 rounds of tiles on 132 SMs): time = 4 (a K + e)."""
import sys, pandas as pd, numpy as np
d = pd.read_csv(sys.argv[1]); t = d[d.timed].copy()
t["K"] = t["shape"].str.split("x").str[2].astype(int)
rows = []
for v, g in t.groupby("variant", sort=False):
    per_round = g.groupby("K").median_ms.median() * 1e3 / 4   # us per round of tiles
    a, e = np.polyfit(per_round.index, per_round.values, 1)
    res = per_round.values - (a * per_round.index + e)
    r4096 = g[g.K == 4096].of_reference.median() if (g.K == 4096).any() else float("nan")
    rows.append(dict(variant=v, main_us_per_4096k=a * 4096, rest_us_per_tile=e, max_residual_us=np.abs(res).max(),
                     of_cublas_4096=r4096, min_mhz=g.min_mhz.min()))
print(pd.DataFrame(rows).round(3).to_string(index=False))
