#!/bin/bash
# dev (notes/whole_waves): steps 39 to 41 against their predecessors and cuBLAS, timed over K (devbench --fit-k), then ncu's memory counters at 4096
source .whl/env.sh
export PYTHONPATH=.:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
t0=$(date +%s)
timeout ${BENCH_S:-360} python -m matmulstudy.tools.devbench ${VARIANTS} --time ${KTIMES} --rounds ${ROUNDS:-2} --fit-k --out $OUT/rounds_k.csv > $OUT/rounds_k.log 2>&1
echo "devbench over K rc=$? $(( $(date +%s) - t0 )) s"
sed -n '/fit/,$p' $OUT/rounds_k.log | tail -12
timeout ${BENCH_S:-360} python -m matmulstudy.tools.devbench ${VARIANTS} --time ${TIMES} --rounds ${ROUNDS:-2} --check 1x1x1 --out $OUT/rounds.csv > $OUT/rounds.log 2>&1
echo "devbench rc=$? $(( $(date +%s) - t0 )) s"
sed -n '/fit/,$p' $OUT/rounds.log | tail -20
python - <<'P'
import pandas as pd, os
d = pd.read_csv(os.environ["OUT"] + "/rounds.csv")
t = d[d.timed]
print(t.pivot_table(index=["shape", "variant"], columns="round", values="of_reference", sort=False).round(4).to_string())
print(t.groupby(["shape", "variant"], sort=False).agg(tflops=("gflops", lambda x: x.median() / 1e3), mhz=("min_mhz", "min")).round(1).to_string())
print("verified all:", d.verified.all(), "checked:", d[~d.timed].groupby("variant").size().to_dict())
P
t0=$(date +%s)
mkdir -p /tmp/ncuout && timeout ${NCU_S:-150} python notes/bf16_ncu_memory/ncu_mem.py 4096x4096x4096 /tmp/ncuout ${NCU_IDS} > /dev/null 2>&1
echo "ncu rc=$? $(( $(date +%s) - t0 )) s"
python - <<'P'
import pathlib, csv, io, os
rows = {}
for f in sorted(pathlib.Path("/tmp/ncuout").glob("ncu_*.csv")):
    text = f.read_text(); start = text.find('"ID"')
    if start < 0: print(f.name, "no csv"); continue
    for r in csv.DictReader(io.StringIO(text[start:])):
        m = rows.setdefault(f.stem[4:], {}); m[r["Metric Name"]] = r["Metric Value"]; m["grid"] = r["Grid Size"]
want = ["gpu__time_duration.sum", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "lts__throughput.avg.pct_of_peak_sustained_elapsed", "lts__t_sector_hit_rate.pct", "dram__bytes_read.sum", "sm__cycles_active.avg", "grid"]
with open(os.environ["OUT"] + "/ncu_4096.csv", "w", newline="") as out:   # values keep ncu's thousands commas: quoted
    w = csv.writer(out, quoting=csv.QUOTE_ALL)
    w.writerow(["variant"] + want)
    for vid, m in rows.items():
        w.writerow([vid] + [m.get(k) or "" for k in want])
print(open(os.environ["OUT"] + "/ncu_4096.csv").read())
P
