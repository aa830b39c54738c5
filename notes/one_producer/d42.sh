#!/bin/bash
# dev (run detached; poll /tmp/dev/times.txt): step 42's GPU tests, then devbench of steps 39/42 and 41 with
# one producer warp against their cuBLAS in alternating rounds, then ncu at 4096 (issue slots, tensor pipe)
cd "$(dirname "$0")/../.."
rm -rf /tmp/dwork /tmp/dev && cp -a . /tmp/dwork && mkdir -p /tmp/dev && cd /tmp/dwork
source .whl/env.sh
export PYTHONPATH=.:$PYTHONPATH PYTHONUNBUFFERED=1
log=/tmp/dev/times.txt
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader > /tmp/dev/gpu.txt
echo "start $(date -u +%FT%TZ) $(cat /tmp/dev/gpu.txt)" >> $log
t0=$(date +%s)
python -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_kernels.py tests/test_sanitizer.py \
  -k "${TESTS}" > /tmp/dev/pytest.log 2>&1
echo "pytest rc=$? $(( $(date +%s) - t0 )) s: $(tail -1 /tmp/dev/pytest.log)" >> $log
t0=$(date +%s)
python -m matmulstudy.tools.devbench ${VARIANTS} --time ${TIMES} --rounds ${ROUNDS:-2} --check ${CHECKS:-1x1x1} \
  --out /tmp/dev/rounds.csv > /tmp/dev/rounds.log 2>&1
echo "devbench rc=$? $(( $(date +%s) - t0 )) s" >> $log
t0=$(date +%s)
mkdir -p /tmp/ncuout && python notes/one_producer/ncu_issue.py 4096x4096x4096 /tmp/ncuout ${NCU_IDS} > /tmp/dev/ncu.log 2>&1
echo "ncu rc=$? $(( $(date +%s) - t0 )) s" >> $log
cp /tmp/ncuout/*.csv /tmp/dev/ 2>/dev/null
echo "DONE $(date -u +%FT%TZ)" >> $log
