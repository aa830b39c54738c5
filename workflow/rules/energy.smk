# The energy of every step (config energy_window_s > 0): every GPU variant at
# the reference size and the largest run back to back, L2 warm, until NVML's
# energy counter has ticked twice; its sustained rate at the power cap, joules
# per launch, mean power and GFLOP per joule, its output checked again. One
# job, after every timed one: its heat would lower the next variant's clock
# (matmulstudy/measure/energy.py).


rule measure_energy:
    input:
        unpack(lambda wc: RULES.energy_inputs(wc.label)),
    output:
        paths.ENERGY,
    log:
        "logs/measure_energy/{label}.log",
    params:
        problems=lambda wc: RULES.energy_problems(wc.label),
        window_s=SETTINGS.timing.energy_window_s,
        checking=SETTINGS.checking,
    resources:
        gpu=1,
        gpu_model=RULES.gpu_model,
        runtime=15,
        mem_mb=16000,
    threads: workflow.cores
    script:
        "../scripts/measure_energy.py"
