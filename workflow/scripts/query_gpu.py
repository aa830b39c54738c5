# What the GPU says of itself (name, SMs, clocks, limits, its FP32 peak from
# them), what NVML says (driver, power limit), and its memory bandwidth,
# measured here by device-to-device copies. Fails at once, in one line, where
# no GPU is usable.
import json

from matmulstudy.errors import StudyError
from matmulstudy.gpu import host, nvml
from matmulstudy.gpu.facts import copy_bandwidth, device_facts
from matmulstudy.gpu.session import GpuSession
from matmulstudy.pipeline import rulescript


def main(snakemake, log):
    with GpuSession() as gpu:
        info = device_facts(gpu)
        monitor = nvml.Monitor(info["pci_bus_id"])
        info.update(monitor.facts())
        monitor.close()
        info.update(copy_bandwidth(gpu))
    try:
        info["uuid"] = host.visible_gpu()["uuid"]
    except StudyError as err:
        info["uuid"] = None
        print(f"uuid not recorded: {err}")
    with open(snakemake.output[0], "w") as fh:
        json.dump(info, fh, indent=2)
    print(json.dumps(info, indent=2))


rulescript.run(snakemake, main)
