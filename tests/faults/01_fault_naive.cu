// Planted faults in the naive kernel (step 1): each FAULT value is one
// deliberate defect. tests/faults/faults.yaml lists them; the fault suite
// (python -m matmulstudy.tools.faults) runs each through the study's own
// bench.measure and records whether the verification catches it.
//
// Every fault below leaves the kernel otherwise correct, so what is caught
// is the defect alone. The bound a result is held to (matmulstudy/measure/verify.py)
// is TAU * 2^-23 * sqrt(K) * r, r = sqrt(sum_k (A(row,k) B(k,col))^2); the
// faults that put one element "TIMES bounds off" compute that bound here.

#include <cuda_fp16.h>

#define LAST_ROW 1            // the last row of C is never written
#define CORNER_TILE 2         // the block at the bottom-right corner writes nothing
#define OFF_BY_BOUND 3        // one element off by TIMES times its own bound
#define ONE_NAN 4             // one element is NaN
#define FP16_ACCUMULATION 5   // the running sum is kept in fp16
#define TF32_INPUTS 6         // A and B rounded to TF32 (10-bit mantissa), as tensor cores would
#define LARGE_ONLY 7          // one element TIMES bounds off, only when M and N are >= FROM_SIZE

#if !defined(BLOCK_X) || !defined(BLOCK_Y) || !defined(FAULT)
#error "BLOCK_X, BLOCK_Y and FAULT come from tests/faults/faults.yaml as -D defines"
#endif
#if (FAULT == OFF_BY_BOUND || FAULT == LARGE_ONLY) && (!defined(TIMES) || !defined(TAU))
#error "this fault needs TIMES and TAU (the config's tolerance)"
#endif
#if FAULT == LARGE_ONLY && !defined(FROM_SIZE)
#error "LARGE_ONLY needs FROM_SIZE"
#endif

// cvt.rna.tf32.f32 (PTX ISA, "cvt"): round to nearest, ties away, to TF32;
// the result is a float with the low 13 mantissa bits zero.
__device__ float to_tf32(float x)
{
    unsigned bits;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(bits) : "f"(x));
    return __uint_as_float(bits);
}

extern "C" __global__ void __launch_bounds__(BLOCK_X * BLOCK_Y)
fault_naive(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C)
{
    const int row = blockIdx.y * BLOCK_Y + threadIdx.y;
    const int col = blockIdx.x * BLOCK_X + threadIdx.x;
    if (row >= M || col >= N)
        return;
#if FAULT == LAST_ROW
    if (row == M - 1)
        return;
#elif FAULT == CORNER_TILE
    if (blockIdx.x == gridDim.x - 1 && blockIdx.y == gridDim.y - 1)
        return;
#endif

    float acc = 0.0f, squares = 0.0f;
#if FAULT == FP16_ACCUMULATION
    __half acc16 = __float2half(0.0f);
#endif
    for (int k = 0; k < K; ++k) {
        float a = A[row * K + k], b = B[k * N + col];
#if FAULT == TF32_INPUTS
        a = to_tf32(a);
        b = to_tf32(b);
#endif
#if FAULT == FP16_ACCUMULATION
        acc16 = __float2half(__half2float(acc16) + a * b);
#else
        acc += a * b;
#endif
        squares += (a * b) * (a * b);
    }
#if FAULT == FP16_ACCUMULATION
    acc = __half2float(acc16);
#endif

    const bool marked = row == M / 2 && col == N / 2;
#if FAULT == OFF_BY_BOUND
    if (marked)
        acc += TIMES * TAU * 0x1p-23f * sqrtf((float)K) * sqrtf(squares);
#elif FAULT == LARGE_ONLY
    if (marked && M >= FROM_SIZE && N >= FROM_SIZE)
        acc += TIMES * TAU * 0x1p-23f * sqrtf((float)K) * sqrtf(squares);
#elif FAULT == ONE_NAN
    if (marked)
        acc = __int_as_float(0x7FC00000);
#endif
    (void)squares;
    (void)marked;
    C[row * N + col] = acc;
}
