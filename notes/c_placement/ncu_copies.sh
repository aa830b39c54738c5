#!/bin/bash
# dev: Nsight Compute's L2 counters of each module copy (offsets.py with COPIES), one launch each, the tile
# counter's address beside: bash notes/c_placement/ncu_copies.sh SHAPE COPIES OUTDIR NAME...
shape=$1 copies=$2 out=$3; shift 3
M=gpu__time_duration.sum,sm__cycles_active.max,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_sectors_op_read.sum
M=$M,lts__t_sector_op_read_hit_rate.pct,dram__bytes_read.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active
WARM=0 SAMPLES=1 COPIES=$copies ncu --clock-control none --print-units base --csv --page details \
  --kernel-name regex:gpu_wgmma --log-file $out/ncu_raw.csv --metrics $M \
  python notes/c_placement/offsets.py $shape 1 0 "$@" > $out/launches.csv
python - $out <<'PY'
import io, sys, pandas as pd
out = sys.argv[1]
t = open(f"{out}/ncu_raw.csv").read(); t = t[t.find('"ID"'):]
d = pd.read_csv(io.StringIO(t))
d["v"] = pd.to_numeric(d["Metric Value"].astype(str).str.replace(",", ""), errors="coerce")
w = d.pivot_table(index="ID", columns="Metric Name", values="v")
names = pd.read_csv(f"{out}/launches.csv")
w.insert(0, "ticket", names["ticket_address"].astype(str).str[-4:].to_numpy()[:len(w)])
w.insert(0, "name", names["name"].str.replace("gpu_wgmma_bf16_stepped_descriptors", "S").to_numpy()[:len(w)])
w.columns = [c.split("__")[-1][:28] for c in w.columns]
pd.set_option("display.width", 250)
print(w.to_string())
PY
