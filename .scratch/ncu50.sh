# ncu counters of step 50, cuBLASLt FP8 fast-accum, step 47 and cuBLAS BF16 at 4096 and 8192 (the study's metrics)
set -u
python - <<'PY'
import io, sys
from pathlib import Path
from matmulstudy.measure import build
from matmulstudy.study.registry import load_registry
reg = load_registry()
for vid in ("gpu_wgmma_fp8", "gpu_wgmma_bf16_drawn_late"):
    build.build(reg[vid], Path(f"/tmp/{vid}.cubin"), Path(f"/tmp/{vid}.json"), "sm_90a", sys.stdout)
PY
for n in 4096 8192; do
  for v in gpu_wgmma_fp8 gpu_wgmma_bf16_drawn_late; do
    cubin=""; [ -f /tmp/$v.cubin ] && cubin=/tmp/$v.cubin
    ncu --clock-control none --print-units base --csv --metrics gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg,sm__cycles_active.max,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio \
      python -m matmulstudy.tools.launch_once $v ${n}x${n}x${n} $cubin > $OUT/ncu_${v}_$n.csv 2>&1
    python - "$OUT/ncu_${v}_$n.csv" $v $n <<'PY'
import sys
from matmulstudy.measure.hardware import parse_ncu_csv
text = open(sys.argv[1]).read()
kernel = None if sys.argv[2].startswith("cublas") else sys.argv[2]
try:
    v = parse_ncu_csv(text, kernel)
    print(f"{sys.argv[3]:>5} {sys.argv[2]:<28} time {v['ncu_time_ns']/1e3:9.1f} us  tensor {v.get('tensor_pipe_pct', 0):5.1f}%  dram {v.get('dram_throughput_pct', 0):5.1f}%  l2 {v.get('l2_throughput_pct', 0):5.1f}%  balance {v['sm_balance']:.3f}  kernels {v['ncu_kernels'][:60]}")
except Exception as e:
    print(sys.argv[2], sys.argv[3], "ERROR", e, text[-500:])
PY
  done
done
