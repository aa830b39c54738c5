# Optional (config ncu: true): Nsight Compute's counters of one launch of
# each cuda step at ncu_size: bank conflicts, sectors per request, achieved
# occupancy, DRAM throughput.


rule profile:
    input:
        cubin="results/{label}/build/float32/{variant}.cubin",
        gpu="results/{label}/gpu.json",
    output:
        "results/{label}/ncu/{variant}_{shape}.json",
    log:
        "logs/profile/{label}/{variant}_{shape}.log",
    threads: workflow.cores
    script:
        "../scripts/profile_ncu.py"
