# The headline ratios in rounds (config headline_rounds > 0): each precision's
# best step at the reference size and its cuBLAS reference, at the reference
# size and the largest one, measured again in rounds that alternate which goes
# first, burst then sustained, every result checked. One job, after every
# timed one and the energy phase (matmulstudy/measure/headline.py).


rule measure_headline:
    input:
        unpack(lambda wc: RULES.headline_inputs(wc.label)),
    output:
        paths.HEADLINE,
    log:
        "logs/measure_headline/{label}.log",
    params:
        problems=lambda wc: RULES.headline_problems(wc.label),
        reference_size=SETTINGS.reference_size,
        timing=SETTINGS.timing,
        checking=SETTINGS.checking,
    resources:
        gpu=1,
        gpu_model=RULES.gpu_model,
        runtime=15,
        mem_mb=16000,
    threads: workflow.cores
    script:
        "../scripts/measure_headline.py"
