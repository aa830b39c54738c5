# What the GPU says of itself (name, SMs, clocks, limits): fails at once, in
# one line, where no GPU is usable.
import json

from matmulstudy import host, rulescript
from matmulstudy.errors import StudyError
from matmulstudy.gpu import GpuSession


def main(snakemake, log):
    with GpuSession() as gpu:
        info = gpu.info()
    try:
        info["uuid"] = host.visible_gpu()["uuid"]
    except StudyError as err:
        info["uuid"] = None
        print(f"uuid not recorded: {err}")
    with open(snakemake.output[0], "w") as fh:
        json.dump(info, fh, indent=2)
    print(json.dumps(info, indent=2))


rulescript.run(snakemake, main)
