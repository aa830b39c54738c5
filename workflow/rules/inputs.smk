# Seeded inputs, one pair per shape and seed, and, for a CPU-only study,
# their float64 reference (a study with a GPU makes its references there).
# Where a GPU study's GPU has been found unusable (query_gpu, which runs
# first, left its one-line error), its inputs are not generated. (Not a
# dependency on gpu.json: on a cluster the inputs are made on CPU nodes
# while the GPU jobs wait together, profiles/slurm. Nor params: the inputs
# are every label's, and a study of another label must not make them, and
# every measurement of them, run again; the label comes in the environment.)


rule make_inputs:
    output:
        a=paths.INPUT_A,
        b=paths.INPUT_B,
    log:
        "logs/make_inputs/{dtype}/{shape}_s{seed}.log",
    script:
        "../scripts/make_inputs.py"


rule make_reference:
    input:
        a=rules.make_inputs.output.a,
        b=rules.make_inputs.output.b,
    output:
        ref=paths.REFERENCE,
        scale=paths.SCALE,
    log:
        "logs/make_reference/{dtype}/{shape}_s{seed}.log",
    threads: workflow.cores
    script:
        "../scripts/make_reference.py"
