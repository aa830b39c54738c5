# What the GPU says of itself (name, SMs, clocks, limits, its FP32 peak from
# them), what NVML says (driver, power limit), and its memory bandwidth,
# measured here by device-to-device copies. Fails at once, in one line, where
# no GPU is usable.
import json

from matmulstudy import host, nvml, rulescript
from matmulstudy.errors import StudyError
from matmulstudy.gpu import GpuSession


def main(snakemake, log):
    with GpuSession() as gpu:
        info = gpu.info()
        monitor = nvml.Monitor(info["pci_bus_id"])
        info.update(monitor.facts())
        monitor.close()
        info.update(gpu.copy_bandwidth())
    try:
        info["uuid"] = host.visible_gpu()["uuid"]
    except StudyError as err:
        info["uuid"] = None
        print(f"uuid not recorded: {err}")
    with open(snakemake.output[0], "w") as fh:
        json.dump(info, fh, indent=2)
    print(json.dumps(info, indent=2))


rulescript.run(snakemake, main)
