# The GPU's facts, then every variant verified and timed on every shape of
# the study, one job (one process, one CUDA context) per variant, dtype and
# seed. A measuring job takes every core, so timed jobs never overlap each
# other or other work: the GPU and the CPU are the measured job's alone, on a
# machine with several GPUs too (one timed job at a time, on the first
# visible GPU).


rule query_gpu:
    output:
        paths.GPU_FACTS,
    log:
        "logs/query_gpu/{label}.log",
    resources:
        gpu=1,
        gpu_model=RULES.gpu_model,
        runtime=5,
    priority: 100
    script:
        "../scripts/query_gpu.py"


rule measure_variant:
    input:
        unpack(lambda wc: RULES.bench_inputs(wc.label, wc.variant, wc.dtype, wc.seed)),
    output:
        paths.SAMPLES,
    log:
        "logs/measure_variant/{label}/{dtype}/{variant}_s{seed}.log",
    params:
        problems=lambda wc: RULES.bench_problems(wc.variant, wc.dtype, wc.seed),
        timing=SETTINGS.timing,
        checking=SETTINGS.checking,
        config_hash=SETTINGS.hash,
    resources:
        # every measuring job of a study asks for the study's GPU: on Slurm they
        # run as one job on one node (profiles/slurm), CPU baselines included
        gpu=int(RUN.uses_gpu),
        gpu_model=RULES.gpu_model,
        runtime=10,   # minutes for one variant's sweep (under a minute on an H100)
        mem_mb=16000,
    threads: workflow.cores
    script:
        "../scripts/measure_variant.py"
