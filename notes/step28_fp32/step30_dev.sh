#!/bin/bash
# Step 30 on the device (dev, issue 25): GPU tests of steps 28-30 (every kernel on the ragged shapes, the
# sanitizer's four tools on each kernel, the interrupted launches), timing against cuBLAS SGEMM at the study's
# shapes (two rounds), and ncu at 1537x3001x997 of step 29 and step 30 (which kernel, and its counters), with
# cuBLAS SGEMM's kernel names there and at 4096. Writes $OUT/step30_*.txt.
source .whl/env.sh
export PYTHONPATH=.:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader | tee $OUT/step30_timing.txt
python -m pytest -m gpu -q -p no:cacheprovider -k "async or stream_k" tests > $OUT/step30_tests.txt 2>&1
tail -3 $OUT/step30_tests.txt
python notes/step28_fp32/ablate.py c29=gpu_async_stream_k s30=gpu_async_by_shape \
    p30=gpu_async_by_shape:only@gpu_async_by_shape cublas=cublas \
    --sizes 1537x3001x997,4096,8192,2048,4096x4096x4095,4096x1024x8192,1024,512,256 >> $OUT/step30_timing.txt 2>&1
tail -50 $OUT/step30_timing.txt
python - <<'P' > $OUT/step30_ncu.txt 2>&1
import subprocess, sys
from matmulstudy.measure import hardware
extra = ["smsp__inst_executed.sum", "smsp__cycles_active.avg"]
base = hardware.ncu_command()
base[-1] = base[-1] + "," + ",".join(extra)
for vid, cubin, shape in [("gpu_async_stream_k", "/tmp/fp32ab/c29.cubin", "1537x3001x997"),
                          ("gpu_async_by_shape", "/tmp/fp32ab/s30.cubin", "1537x3001x997"),
                          ("cublas", None, "1537x3001x997"), ("cublas", None, "4096x4096x4096")]:
    cmd = base + [sys.executable, "-m", "matmulstudy.tools.launch_once", vid, shape] + ([cubin] if cubin else [])
    out = subprocess.run(cmd, capture_output=True, text=True)
    start = out.stdout.find('"ID"')
    print(f"=== {vid} {shape} rc={out.returncode}")
    print(out.stdout[start:] if start >= 0 else out.stdout + out.stderr[-2000:])
P
python - <<'P'
import os, pandas as pd, io
text = open(os.environ["OUT"] + "/step30_ncu.txt").read()
for part in text.split("=== ")[1:]:
    head, _, csv = part.partition("\n")
    if '"ID"' not in csv:
        print(head, csv[:300]); continue
    df = pd.read_csv(io.StringIO(csv), thousands=",")
    print(head, "kernels:", df.drop_duplicates("ID")["Kernel Name"].str.split("(").str[0].tolist())
    last = df[df.ID == df.ID.max()]
    want = ["gpu__time_duration.sum", "smsp__inst_executed.sum", "sm__cycles_active.avg", "sm__cycles_active.max",
            "smsp__issue_active.avg.pct_of_peak_sustained_active", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
            "smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio",
            "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
            "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
            "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", "lts__t_sector_hit_rate.pct"]
    print("   ", {m.split(".")[0].replace("smsp__average_warps_issue_stalled_", "stall_"): v
                  for m, v in zip(last["Metric Name"], last["Metric Value"]) if m in want})
P
