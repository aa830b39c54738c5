# The float64 reference (A @ B and |A| @ |B|) for one shape and seed.
import time

import numpy as np

from matmulstudy.gpu import host
from matmulstudy.measure import data
from matmulstudy.pipeline import rulescript


def main(snakemake, log):
    t0 = time.perf_counter()
    with host.blas_threads():
        ref, scale = data.reference(data.load(snakemake.input.a), data.load(snakemake.input.b))
        blas = host.blas_description()
    np.save(snakemake.output.ref, ref, allow_pickle=False)
    np.save(snakemake.output.scale, scale, allow_pickle=False)
    print(f"reference {ref.shape} in float64, {time.perf_counter() - t0:.1f} s ({blas})")


rulescript.run(snakemake, main)
