# The headline ratios in rounds (config headline_rounds > 0): each precision's
# best step at the reference size and its cuBLAS reference, at the reference
# size and the largest one, measured again in rounds that alternate which goes
# first, burst then sustained, every result checked. A job per precision, after
# every timed one and the energy phase (matmulstudy/measure/headline.py): in
# one job for all precisions, a study cut short in it (an H100's, when its
# 10-minute call ended, the FP32 and TF32 rounds done after 112 s) ran it
# again from its first round; a job per precision (under a minute to two
# each) keeps those done. gather_headline puts them in one table.


rule measure_headline:
    input:
        unpack(lambda wc: RULES.headline_inputs(wc.label)),
    output:
        paths.HEADLINE_PART,
    log:
        "logs/measure_headline/{label}_{precision}.log",
    params:
        problems=lambda wc: RULES.headline_problems(wc.label),
        reference_size=SETTINGS.reference_size,
        timing=SETTINGS.timing,
        checking=SETTINGS.checking,
    wildcard_constraints:
        precision="|".join(RUN.headline_precisions()) or "none",
    resources:
        gpu=1,
        gpu_model=RULES.gpu_model,
        runtime=5,
        mem_mb=16000,
    threads: workflow.cores
    script:
        "../scripts/measure_headline.py"


localrules: gather_headline


rule gather_headline:
    input:
        lambda wc: [paths.HEADLINE_PART.format(label=wc.label, precision=p) for p in RUN.headline_precisions()],
    output:
        paths.HEADLINE,
    log:
        "logs/gather_headline/{label}.log",
    script:
        "../scripts/gather_headline.py"
