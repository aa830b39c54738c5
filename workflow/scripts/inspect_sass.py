# The instruction mix of a kernel's main loop, from its machine code.
import json

from matmulstudy import hardware, registry, rulescript


def main(snakemake, log):
    variant = registry.load_registry()[snakemake.wildcards.variant]
    sass = hardware.disassemble(snakemake.input.cubin)
    log.write(sass)
    mix = hardware.main_loop_mix(hardware.parse_sass(sass, variant.kernel))
    with open(snakemake.output[0], "w") as fh:
        json.dump({"variant": variant.id, "dtype": snakemake.wildcards.dtype, **mix}, fh, indent=2)


rulescript.run(snakemake, main)
