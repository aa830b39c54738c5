# Seeded inputs, one pair per shape and seed, and, for a CPU-only study,
# their float64 reference (a study with a GPU makes its references there).
# A GPU study's inputs wait for its GPU (gpu.json): where there is none,
# nothing is generated for it.


rule make_inputs:
    input:
        gpu=lambda wc: gpu_json(LABEL),
    output:
        a="results/inputs/{dtype}/{shape}_s{seed}/A.npy",
        b="results/inputs/{dtype}/{shape}_s{seed}/B.npy",
    log:
        "logs/make_inputs/{dtype}/{shape}_s{seed}.log",
    script:
        "../scripts/make_inputs.py"


rule make_reference:
    input:
        a=rules.make_inputs.output.a,
        b=rules.make_inputs.output.b,
    output:
        ref="results/inputs/{dtype}/{shape}_s{seed}/ref.npy",
        scale="results/inputs/{dtype}/{shape}_s{seed}/scale.npy",
    log:
        "logs/make_reference/{dtype}/{shape}_s{seed}.log",
    threads: workflow.cores
    script:
        "../scripts/make_reference.py"
