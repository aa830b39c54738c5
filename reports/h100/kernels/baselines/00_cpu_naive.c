/*
 * Baseline: the naive triple loop on the CPU.
 *
 * Source: seed 000, "Naive Implementation On CPUs": for each C(i,j), the inner
 * product of row i of A and column j of B.  Compiled by the pipeline with
 * gcc -O2 (no -ffast-math, so the k loop stays a sequential float sum, as in
 * the seed) and called through ctypes.
 *
 * Compute-to-memory ratio: 2 flop per A(i,k), B(k,j) pair, as on the GPU; on
 * the CPU the walk down a column of B (stride N floats) misses the cache, so
 * this is the slowest line of the study by a wide margin.
 *
 * Layout: row-major A (M x K), B (K x N), C (M x N); C is overwritten.
 */
void cpu_naive(int M, int N, int K, const float *A, const float *B, float *C)
{
    for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) {
            float acc = 0.0f;
            for (int k = 0; k < K; ++k)
                acc += A[(long)i * K + k] * B[(long)k * N + j];
            C[(long)i * N + j] = acc;
        }
    }
}
