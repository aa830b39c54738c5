# The instruction mix of a kernel's main loop, from its machine code (none for a failed build).
import json

from matmulstudy.measure import build, hardware
from matmulstudy.study import rulescript
from matmulstudy.study.registry import load_registry


def main(snakemake, log):
    variant = load_registry()[snakemake.wildcards.variant]
    record = {"variant": variant.id, "dtype": snakemake.wildcards.dtype}
    failed = build.failed_build(snakemake.input.resources)
    if failed:
        print(f"not disassembled: {failed['failed']}", file=log)
    else:
        sass = hardware.disassemble(snakemake.input.cubin)
        log.write(sass)
        record.update(hardware.main_loop_mix(hardware.parse_sass(sass, variant.kernel)))
    with open(snakemake.output[0], "w") as fh:
        json.dump(record, fh, indent=2)


rulescript.run(snakemake, main)
