#!/bin/bash
# The committed study of one GPU on the device (dev tooling; the README's command is the study itself), run
# detached so that polls can follow it: setsid nohup bash notes/study_time/chain.sh COMMIT LABEL &
#   1. the study as the README runs it, `snakemake --cores all`, timed;
#   2. the CuPy cross-check of cuBLAS FP32 in the same session;
#   3. the same workflow with Nsight Compute and compute-sanitizer on (hardware.csv, sanitizer.csv), timed.
# With a third argument `repeat`: only the study, with --cores 1 (the repeat, on another machine).
# After each stage the report and the logs are packed into /tmp/work/results/chain.tgz; times.txt says where
# it stands. A label that is not the GPU's model (h100 on an H200) stops it before any work.
commit=$1 label=$2 mode=$3
rm -rf /tmp/work && cp -a "$(dirname "$0")/../.." /tmp/work && cd /tmp/work || exit 1
source .whl/env.sh
export PYTHONPATH=.:$PYTHONPATH MATMULSTUDY_GIT_COMMIT=$commit
mkdir -p results/chain && log=results/chain/times.txt
gpu=$(nvidia-smi --query-gpu=name,uuid --format=csv,noheader | head -1)
echo "start $(date -u +%FT%TZ) $gpu commit $commit label $label" >> $log
case "$label:$gpu" in
  h100:*H100*|h200:*H200*) ;;
  *) echo "STOP: label $label is not this GPU ($gpu)" >> $log; exit 2 ;;
esac
pack() { tar czf results/chain.tgz.part -C /tmp/work reports/$label logs results/chain && mv results/chain.tgz.part results/chain.tgz; }
t0=$(date +%s)
cores=all; [ "$mode" = repeat ] && cores=1
snakemake --cores $cores --config label=$label > results/chain/study.log 2>&1
echo "study (--cores $cores) rc=$? $(( $(date +%s) - t0 )) s" >> $log
pack
[ "$mode" = repeat ] && { echo "DONE $(date -u +%FT%TZ)" >> $log; exit 0; }
t0=$(date +%s)
python -m matmulstudy.tools.crosscheck --sizes 4096 8192 --out reports/$label/crosscheck.csv \
  > results/chain/crosscheck.log 2>&1
echo "crosscheck rc=$? $(( $(date +%s) - t0 )) s" >> $log
t0=$(date +%s)
snakemake --cores all --config label=$label ncu=true sanitizer=true > results/chain/ncu_sanitizer.log 2>&1
echo "ncu+sanitizer rc=$? $(( $(date +%s) - t0 )) s" >> $log
pack
echo "DONE $(date -u +%FT%TZ)" >> $log
