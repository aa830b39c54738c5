#!/bin/bash
# Where the study's time goes (dev, issue 25's 6-minute bar): a subset study on the device with every job's work
# under cProfile (MATMULSTUDY_PROFILE), then each measuring job's and the headline's longest calls, and the
# jobs' own times, into $OUT. Run on the device: bash notes/study_time/profile.sh (after .whl/env.sh's set-up).
source .whl/env.sh
export PYTHONPATH=.:$PYTHONPATH MATMULSTUDY_PROFILE=1
python -m compileall -q /tmp/site matmulstudy workflow > /dev/null 2>&1   # as a workstation has them
python -c "import matplotlib.font_manager" > /dev/null 2>&1
snakemake --cores 1 --config label=prof \
    'variants=[gpu_naive,gpu_regtile,gpu_async_by_shape,cublas,gpu_wgmma_queued,cublas_tf32]' > $OUT/prof.log 2>&1
echo "study rc=$?"
grep -rH "job time" logs > $OUT/jobtimes.txt
for f in logs/measure_variant/prof/float32/gpu_regtile_s0.log logs/measure_variant/prof/float32/cublas_s0.log \
         logs/measure_headline/prof.log; do
    echo "=== $f"; sed -n '/the longest calls, cumulatively/,$p' "$f" | head -60
done > $OUT/profiles.txt
tail -3 $OUT/prof.log
