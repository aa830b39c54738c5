# Optional (config ncu: true): Nsight Compute's counters of one launch of
# each GPU variant at ncu_size: bank conflicts, sectors per request, achieved
# occupancy, DRAM throughput, and its kernel time, which collect_results sets
# beside the harness's median.


rule profile_kernel:
    input:
        unpack(lambda wc: {"gpu": f"results/{wc.label}/gpu.json"} | (
            {"cubin": f"results/{wc.label}/build/float32/{wc.variant}.cubin"}
            if REGISTRY[wc.variant].backend == "cuda" else {})),
    output:
        "results/{label}/ncu/{variant}_{shape}.json",
    log:
        "logs/profile_kernel/{label}/{variant}_{shape}.log",
    resources:
        gpu=1,
        gpu_model=gpu_model,
        runtime=5,
    threads: workflow.cores
    script:
        "../scripts/profile_kernel.py"
