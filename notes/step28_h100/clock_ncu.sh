#!/bin/bash
# On the GPU machine (nvidia-h100-x1): steps 25, 26 and 27 (or the steps given) and cuBLAS TF32 at 4096 (or the
# sizes given) under Nsight Compute (three launches each): the clock each ran at, its SM cycles, instructions by pipe, L2 traffic and the share of it that
# crosses the fabric between the L2's halves. Does the clock follow the fabric traffic?
source .whl/env.sh && pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 1
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
export PYTHONPATH=.:$PYTHONPATH
M=gpu__time_duration.sum,gpc__cycles_elapsed.avg.per_second,sm__cycles_active.avg,sass__inst_executed_per_opcode
M=$M,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_sectors.avg.per_cycle_elapsed
M=$M,lts__t_sectors_srcunit_ltcfabric.avg.per_cycle_elapsed,lts__t_sectors_srcunit_tex.avg.per_cycle_elapsed
M=$M,dram__bytes_read.sum,sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_active
M=$M,sm__inst_executed_pipe_adu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_cbu.avg.pct_of_peak_sustained_active
M=$M,smsp__inst_executed_op_generic_atom_dot_alu.sum,launch__grid_size,launch__cluster_dim_x,launch__cluster_dim_y
timeout 300 ncu --clock-control none --metrics $M --page raw --csv -k regex:'gpu_wgmma|sm90' \
    python notes/step28_h100/probe.py ${1:-gpu_wgmma_lean,gpu_wgmma_persistent,gpu_wgmma_queued} ${2:-4096} \
    > $OUT/clock_ncu.csv 2> $OUT/clock_ncu_err.txt
echo "ncu rc $?"; tail -2 $OUT/clock_ncu_err.txt
SIZES=${2:-4096} python - <<'PY'
import io, os, pandas as pd
t = open(os.environ["OUT"] + "/clock_ncu.csv").read()
df = pd.read_csv(io.StringIO(t[t.find('"ID"'):]), thousands=",").iloc[1:]
cols = [c for c in df.columns if any(k in c for k in ("gpu__time", "gpc__cycles", "sm__cycles_active.avg",
                                                     "sass__inst_executed_per_opcode", "tensor_op_hmma_cycles_active.avg",
                                                     "sum.per_cycle", "dram__bytes_read.sum", "pipe_adu.avg", "atom_dot_alu.sum",
                                                     "launch__grid_size", "launch__cluster_dim"))]
df[cols] = df[cols].apply(lambda s: pd.to_numeric(s.astype(str).str.replace(",", ""), errors="coerce"))
df["kernel"] = df["Kernel Name"].str[:20]
sizes = os.environ["SIZES"].split(",")   # probe.py launches each three times a size, the sizes in turn
df["size"] = [sizes[i // 3] for i in df.groupby("Kernel Name").cumcount()]
print(df.groupby(["kernel", "size"], sort=False)[cols].median().dropna(axis=1, how="all").T.to_string(float_format="{:,.3f}".format))
PY
