# Build one variant (nvcc or gcc), with its tuned defines where the study tunes it, and record
# its resource report; a cubin's main-loop instruction mix is read off its SASS in the same job.
# A build that fails is recorded as failed (the first line of the compiler's error, and this
# log): the variant's later jobs record it too, and the rest of the study goes on.
import json
from pathlib import Path

from matmulstudy.errors import StudyError
from matmulstudy.measure import build, hardware
from matmulstudy.pipeline import rulescript
from matmulstudy.study.registry import load_registry


def main(snakemake, log):
    variant = load_registry()[snakemake.wildcards.variant]
    if snakemake.input.get("chosen"):   # the study tunes it: the chosen candidate's defines
        with open(snakemake.input.chosen) as fh:
            variant = variant.with_defines(json.load(fh))
        print(f"tuned defines: {variant.defines}", file=log)
    binary, resources = Path(snakemake.output.binary), Path(snakemake.output.resources)
    try:
        build.build(variant, binary, resources, snakemake.params.arch, log, dtype=snakemake.wildcards.dtype)
    except StudyError as err:
        build.record_failed_build(variant, snakemake.wildcards.dtype, binary, resources, str(err),
                                  snakemake.log[0])
        rulescript.warn(f"{variant.id} {snakemake.wildcards.dtype}: build failed: {err} (log: {snakemake.log[0]})")
    if snakemake.output.get("sass"):
        inspect(variant, snakemake.wildcards.dtype, binary, resources, snakemake.output.sass, log)


def inspect(variant, dtype, cubin, resources, out, log):
    """The instruction mix of the kernel's main loop, from its machine code (none for a failed build)."""
    record = {"variant": variant.id, "dtype": dtype}
    failed = build.failed_build(resources)
    if failed:
        print(f"not disassembled: {failed['failed']}", file=log)
    else:
        sass = hardware.disassemble(cubin)
        print(f"--- cuobjdump -sass {cubin}", file=log)
        log.write(sass)
        record.update(hardware.main_loop_mix(hardware.parse_sass(sass, variant.kernel)))
    with open(out, "w") as fh:
        json.dump(record, fh, indent=2)


rulescript.run(snakemake, main)
