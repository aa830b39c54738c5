// The harness's own kernels, not steps of the study: timing and verification.
//
// block_stream holds the GPU's stream until the host has queued every timed
// launch of a batch (nvbench's "blocking kernel"). Without it, a kernel that
// runs faster than Python can launch it is timed together with the idle gap
// before it, and small sizes look slower than they are. Once released, the
// queued launches run back to back and each event pair brackets one kernel.
//
// release and status live in page-locked host memory mapped into the GPU's
// address space: the host writes release = 1; the kernel writes status = 1 if
// it gave up waiting after timeout_ns (the batch then ran unprotected, and
// the measurement says so).

extern "C" __global__ void block_stream(const volatile int* release, int* status,
                                        unsigned long long timeout_ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (*release == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > timeout_ns) {
            *status = 1;
            return;
        }
        __nanosleep(1000);
    }
}

// flush_l2 evicts the previous launch's data from the L2 cache before a cold
// measurement: it reads a buffer twice the size of L2 (the size comes from
// the device's attributes). Loads use ld.global.cg (cached in L2, not L1), so
// L2 ends up holding clean lines of this buffer and the timed kernel finds
// none of its operands there and pays no write-back of the flush's data,
// which matches Nsight Compute's own "--cache-control all". The sum is
// written only if it equals a value the buffer never produces, so the loads
// cannot be optimised away and nothing is written.

extern "C" __global__ void flush_l2(const int4* buffer, unsigned long long count, int* sink)
{
    int acc = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < count;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        int4 v = __ldcg(buffer + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x5EED5EED)
        *sink = acc;
}

// --- verification: the float64 reference and the element-wise check ------
//
// matmulstudy/measure/devicecheck.py computes R = A @ B and r = sqrt((A∘A) @ (B∘B))
// with cuBLAS DGEMM on copies widened here, then check_result compares every
// element of a result with bound (1) of matmulstudy/measure/verify.py. Nothing of
// the size of C comes back to the host: only four counters.

// BF16 inputs (matmulstudy/precisions.py's bf16): each float32 of x rounded in
// place to the nearest BF16 value, ties to even, and its high 16 bits (the
// BF16 value a kernel reads) into bits. The same integer steps as
// matmulstudy/measure/data.py's round_to_bf16 and bf16_bits, so the same
// bits (tests/test_gpu_kernels.py compares them). Here because on the host
// they took most of a BF16 reference's time: 3 to 7 s of a BF16 measuring
// job's 8 to 10 at commit 392ec8f, where the other precisions' references
// took half a second.
extern "C" __global__ void round_bf16(unsigned* x, unsigned short* bits, unsigned long long n)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        const unsigned v = x[i], rounded = (v + 0x7FFFu + ((v >> 16) & 1u)) & 0xFFFF0000u;
        x[i] = rounded;
        bits[i] = (unsigned short)(rounded >> 16);
    }
}

// FP8 inputs (matmulstudy/precisions.py's fp8 rows): each float32 of x (rows x cols) rounded in place to the
// nearest e4m3 value, ties to even, and its byte (sign, 4 exponent bits of bias 7, 3 mantissa bits: what a
// kernel reads) into bits, at the same place or, `transpose`, at (col, row) of a cols x rows matrix (FP8's B,
// stored N x K). The same steps as matmulstudy/measure/data.py's round_to_e4m3 and e4m3_bits: from 2^-6 up,
// 20 bits cut as round_bf16 cuts 16; below, x * 512 rounded to the nearest integer (rintf: ties to even), the
// subnormal's code. The study's inputs lie in [-1, 1), far inside e4m3's range (448).
extern "C" __global__ void round_e4m3(float* x, unsigned char* bits, unsigned long long rows, unsigned long long cols,
                                      int transpose)
{
    const unsigned long long n = rows * cols;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        const unsigned v = __float_as_uint(x[i]), sign = (v >> 24) & 0x80u;
        unsigned code;
        if (fabsf(x[i]) < 0x1p-6f) {
            const float q = rintf(x[i] * 512.0f);
            x[i] = q / 512.0f;
            code = sign | (unsigned)fabsf(q);
        } else {
            const unsigned rounded = (v + 0x7FFFFu + ((v >> 20) & 1u)) & 0xFFF00000u;
            x[i] = __uint_as_float(rounded);
            code = sign | (((rounded >> 23) & 0xFFu) - 127u + 7u) << 3 | ((rounded >> 20) & 7u);
        }
        const unsigned long long at = transpose ? i % cols * rows + i / cols : i;
        bits[at] = (unsigned char)code;
    }
}

// dst = (double)src (float32 or int32 elements), squared when `square`.
extern "C" __global__ void widen(const void* src, int is_int, double* dst, unsigned long long n, int square)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        double x = is_int ? (double)((const int*)src)[i] : (double)((const float*)src)[i];
        dst[i] = square ? x * x : x;
    }
}

extern "C" __global__ void root(double* x, unsigned long long n)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        x[i] = sqrt(x[i]);
}

// out[0] elements over the bound or NaN, out[1] NaN, out[2] still the poison,
// out[3] the bits of the largest error that is not NaN. float32: error =
// |C - R| / max(r, tiny), over the bound when !(error <= tol) (so NaN is);
// int32: error = |C - R|, tol = 0. Errors are >= 0, so their IEEE bits order
// like the numbers and atomicMax on the bits takes the largest.
extern "C" __global__ void check_result(const unsigned* c, int is_int, const double* ref, const double* scale,
                                        double tol, double tiny, unsigned long long n, unsigned poison,
                                        unsigned long long* out)
{
    unsigned long long bad = 0, nan = 0, unwritten = 0;
    double worst = 0.0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        unsigned bits = c[i];
        double value = is_int ? (double)(int)bits : (double)__uint_as_float(bits);
        double err = fabs(value - ref[i]);
        if (!is_int)
            err /= fmax(scale[i], tiny);
        bad += !(err <= tol);
        nan += isnan(err);
        unwritten += bits == poison;
        if (!isnan(err))
            worst = fmax(worst, err);
    }
    for (int offset = 16; offset > 0; offset /= 2) {   // the warp's sums and maximum, in lane 0
        bad += __shfl_down_sync(0xffffffffu, bad, offset);
        nan += __shfl_down_sync(0xffffffffu, nan, offset);
        unwritten += __shfl_down_sync(0xffffffffu, unwritten, offset);
        worst = fmax(worst, __shfl_down_sync(0xffffffffu, worst, offset));
    }
    if (threadIdx.x % 32 == 0) {
        if (bad) atomicAdd(out + 0, bad);
        if (nan) atomicAdd(out + 1, nan);
        if (unwritten) atomicAdd(out + 2, unwritten);
        atomicMax(out + 3, (unsigned long long)__double_as_longlong(worst));
    }
}
