# compute-sanitizer's four tools on one launch of one cuda variant per shape.
import json

from matmulstudy.gpu import host
from matmulstudy.measure import build, sanitize
from matmulstudy.pipeline import rulescript
from matmulstudy.study.registry import load_registry


def main(snakemake, log):
    variant = build.built_variant(load_registry()[snakemake.wildcards.variant], snakemake.input.cubin)
    with open(snakemake.input.gpu) as fh:
        gpu = json.load(fh)
    table = sanitize.sanitize(variant, snakemake.input.cubin, snakemake.input.launcher,
                              list(snakemake.params.shapes), log, sms=gpu["sm_count"])
    table["gpu_uuid"] = host.running_uuid()   # where it ran: the pages say so if not on the study's GPU
    table.to_csv(snakemake.output[0], index=False)
    print(sanitize.verdict(table).iloc[0], file=log)


rulescript.run(snakemake, main)
