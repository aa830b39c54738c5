# Optional (config ncu: true): Nsight Compute's counters of one launch of
# each GPU variant at ncu_size: bank conflicts, sectors per request, achieved
# occupancy, DRAM throughput, and its kernel time, which collect_results sets
# beside the harness's median.


rule profile_kernel:
    input:
        unpack(lambda wc: {"gpu": paths.GPU_FACTS.format(label=wc.label)} | (
            {"cubin": paths.binary(wc.label, REGISTRY[wc.variant], "float32")}
            if REGISTRY[wc.variant].backend == "cuda" else {})),
    output:
        paths.NCU,
    log:
        "logs/profile_kernel/{label}/{variant}_{shape}.log",
    resources:
        gpu=1,
        gpu_model=RULES.gpu_model,
        runtime=5,
    threads: workflow.cores
    script:
        "../scripts/profile_kernel.py"
