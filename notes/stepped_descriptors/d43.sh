#!/bin/bash
# dev (run detached; poll $dev/times.txt): the GPU tests named (TESTS), devbench of VARIANTS in alternating
# rounds (FIT=--fit-k: fitted over K too), Nsight Compute's issue and tensor counters at 4096 (NCU_IDS), and
# the main loop's SASS of the cubins Nsight Compute's run built (loop instructions and HGMMA a slice per
# consumer warp)
cd "$(dirname "$0")/../.."
dev=${DEV:-/tmp/dev} work=${WORK:-/tmp/dwork}
rm -rf $work $dev && cp -a . $work && mkdir -p $dev && cd $work
source .whl/env.sh
export PYTHONPATH=.:$PYTHONPATH PYTHONUNBUFFERED=1
log=$dev/times.txt
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader > $dev/gpu.txt
echo "start $(date -u +%FT%TZ) $(cat $dev/gpu.txt)" >> $log
if [ -n "$TESTS" ]; then
  t0=$(date +%s)
  python -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_kernels.py tests/test_sanitizer.py \
    -k "${TESTS}" > $dev/pytest.log 2>&1
  echo "pytest rc=$? $(( $(date +%s) - t0 )) s: $(tail -1 $dev/pytest.log)" >> $log
fi
t0=$(date +%s)
python -m matmulstudy.tools.devbench ${VARIANTS} --time ${TIMES} --rounds ${ROUNDS:-2} --check ${CHECKS:-1x1x1} \
  --out $dev/rounds.csv > $dev/rounds.log 2>&1
echo "devbench rc=$? $(( $(date +%s) - t0 )) s" >> $log
if [ -n "$NCU_IDS" ]; then
  t0=$(date +%s)
  mkdir -p $dev/ncuout && python notes/one_producer/ncu_issue.py 4096x4096x4096 $dev/ncuout ${NCU_IDS} \
    > $dev/ncu.log 2>&1
  echo "ncu rc=$? $(( $(date +%s) - t0 )) s" >> $log
  cp $dev/ncuout/*.csv $dev/ 2>/dev/null
  python - $dev/ncuout ${NCU_IDS} > $dev/sass.txt 2>&1 <<'PY'
import sys, pathlib
from matmulstudy.measure import hardware
for vid in sys.argv[2:]:
    cubin = pathlib.Path(sys.argv[1]) / f"{vid}.cubin"
    if cubin.exists():
        mix = hardware.main_loop_mix(hardware.parse_sass(hardware.disassemble(cubin), vid))
        print(vid, mix.get("loop_instructions"), dict(sorted(mix.items())))
PY
fi
echo "DONE $(date -u +%FT%TZ)" >> $log
