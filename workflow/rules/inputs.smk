# Seeded inputs, one pair per shape and seed, and their float64 reference.


rule inputs:
    output:
        a="results/inputs/{dtype}/{shape}_s{seed}/A.npy",
        b="results/inputs/{dtype}/{shape}_s{seed}/B.npy",
    log:
        "logs/inputs/{dtype}/{shape}_s{seed}.log",
    script:
        "../scripts/make_inputs.py"


rule reference:
    input:
        a=rules.inputs.output.a,
        b=rules.inputs.output.b,
    output:
        ref="results/inputs/{dtype}/{shape}_s{seed}/ref.npy",
        scale="results/inputs/{dtype}/{shape}_s{seed}/scale.npy",
    log:
        "logs/reference/{dtype}/{shape}_s{seed}.log",
    threads: workflow.cores
    script:
        "../scripts/make_reference.py"
