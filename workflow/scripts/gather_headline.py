# Each precision's headline rounds (measure_headline, a job each) in one table, in the precisions' order.
from matmulstudy.measure import headline
from matmulstudy.pipeline import rulescript


def main(snakemake, log):
    table = headline.gather(list(snakemake.input))
    table.to_csv(snakemake.output[0], index=False)
    print(f"{len(table)} rows from {len(snakemake.input)} precisions", file=log)


rulescript.run(snakemake, main)
