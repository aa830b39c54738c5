// What the tensor cores keep of a sum of FP8 (e4m3) products: the instruction
// the FP8 chapter's bound is derived from, run on inputs the host designs
// (matmulstudy/tools/accumulation.py), so that its sums can be compared bit
// for bit with a model of them (matmulstudy/measure/tensorcore.py).
//
// Why: a product of two e4m3 values is exact in FP32, so an FP8 kernel's
// error is all in its sums, and on Hopper those are not FP32's. DeepGEMM's
// README says the FP8 tensor cores keep about 14 bits of them; the bound
// needs to know how many, which way they are cut, and where: within one
// instruction, and from one instruction to the next through its accumulator.
//
// Two kernels, the same sums by two instructions:
// - fp8_wgmma_chain: wgmma.mma_async m64n8k32 e4m3, the instruction of the
//   chapter's steps and of cuBLASLt's FP8 kernels (QGMMA in the SASS);
// - fp8_mma_chain: mma.sync m16n8k32 e4m3, which ptxas builds for sm_90 out
//   of FP16 HMMA instructions (the SASS shows it): a control, not Hopper's
//   FP8 path.
//
// fp8_mma_chain: warp w computes problem w of `count`,
//     D = C + A_0 B_0^T + A_1 B_1^T + ... + A_{steps-1} B_{steps-1}^T,
// one mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 a step, the
// accumulator kept in the warp's registers from one step to the next (as a
// kernel's main loop keeps it), C and D FP32 16 x 8, each A_s 16 x 32 e4m3
// bytes (row-major: K-major) and each B_s 8 x 32 (a row of K per column of
// the product: K-major too, as FP8 tensor-core instructions take both).
// Fragments as the PTX ISA lays them out for m16n8k32 with 8-bit types
// ("Matrix Fragments for mma.m16n8k32"): a thread of group g = lane / 4 and
// t = lane % 4 holds A's rows g and g + 8 at k = 4t..4t+3 and 4t+16..4t+19,
// B's column g at those k, and D's rows g and g + 8 at columns 2t, 2t + 1.
//
// mma.sync with e4m3 needs sm_89 (Ada) or later; built for sm_90 here (an
// H100 or H200, the chapter's GPUs).

#include <cstdint>

#include "../../kernels/sm90/hopper.cuh"   // descriptor_sw128, wgmma_fence, wgmma_commit, wgmma_wait

__device__ __forceinline__ uint32_t four(const uint8_t* p)   // 4 bytes, the lowest address the lowest element
{
    return *reinterpret_cast<const uint32_t*>(p);
}

extern "C" __global__ void fp8_mma_chain(const uint8_t* A, const uint8_t* B, const float* C, float* D,
                                         int count, int steps)
{
    const int problem = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (problem >= count)
        return;
    const int g = lane / 4, t = lane % 4;
    float d[4];
    for (int i = 0; i < 4; ++i)
        d[i] = C[problem * 128 + (g + 8 * (i / 2)) * 8 + 2 * t + (i & 1)];
    for (int s = 0; s < steps; ++s) {
        const uint8_t* a = A + (static_cast<size_t>(problem) * steps + s) * 16 * 32;
        const uint8_t* b = B + (static_cast<size_t>(problem) * steps + s) * 8 * 32;
        const uint32_t a0 = four(a + g * 32 + 4 * t), a1 = four(a + (g + 8) * 32 + 4 * t);
        const uint32_t a2 = four(a + g * 32 + 4 * t + 16), a3 = four(a + (g + 8) * 32 + 4 * t + 16);
        const uint32_t b0 = four(b + g * 32 + 4 * t), b1 = four(b + g * 32 + 4 * t + 16);
        asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
    for (int i = 0; i < 4; ++i)
        D[problem * 128 + (g + 8 * (i / 2)) * 8 + 2 * t + (i & 1)] = d[i];
}

// fp8_wgmma_chain: block p (one warpgroup, 128 threads) computes problem p of `count`, as fp8_mma_chain, with
// A_s 64 x 32 and B_s 8 x 32 (both K-major) and C, D 64 x 8: one wgmma m64n8k32 a step, the accumulator in
// registers from one step to the next. Each step's A_s and B_s are written by the threads into shared memory as
// the copy engine writes a K-major slice in the 128-byte swizzle (rows of 128 bytes, a row's 16-byte chunk c at
// chunk c ^ (row % 8)), in the first 32 bytes of each row; descriptor_sw128 of the buffers' starts reads them.
// D's layout: thread (warp w, g = lane / 4, t = lane % 4) holds rows 16w + g and 16w + g + 8, columns 2t, 2t + 1.
extern "C" __global__ void __launch_bounds__(128) fp8_wgmma_chain(const uint8_t* A, const uint8_t* B, const float* C,
                                                                   float* D, int count, int steps)
{
    __shared__ __align__(1024) uint8_t a_s[64 * 128];
    __shared__ __align__(1024) uint8_t b_s[8 * 128];
    const int problem = blockIdx.x, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (problem >= count)
        return;
    const int g = lane / 4, t = lane % 4;
    float d[4];
    for (int i = 0; i < 4; ++i)
        d[i] = C[problem * 512 + (16 * warp + g + 8 * (i / 2)) * 8 + 2 * t + (i & 1)];
    for (int s = 0; s < steps; ++s) {
        const uint8_t* a = A + (static_cast<size_t>(problem) * steps + s) * 64 * 32;
        const uint8_t* b = B + (static_cast<size_t>(problem) * steps + s) * 8 * 32;
        for (int chunk = threadIdx.x; chunk < 64 * 2; chunk += 128) {   // A: 64 rows of two 16-byte chunks
            const int row = chunk / 2, c = chunk % 2;
            *reinterpret_cast<uint4*>(a_s + row * 128 + 16 * (c ^ (row % 8))) =
                *reinterpret_cast<const uint4*>(a + row * 32 + 16 * c);
        }
        if (threadIdx.x < 8 * 2) {                                       // B: 8 rows of two
            const int row = threadIdx.x / 2, c = threadIdx.x % 2;
            *reinterpret_cast<uint4*>(b_s + row * 128 + 16 * (c ^ (row % 8))) =
                *reinterpret_cast<const uint4*>(b + row * 32 + 16 * c);
        }
        fence_proxy_async();   // the threads' writes, seen by the tensor cores' reads (the async proxy)
        __syncthreads();
        wgmma_fence();
        asm volatile("{\n\t.reg .pred accumulate;\n\tsetp.ne.u32 accumulate, 1, 0;\n\t"
                     "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {%0, %1, %2, %3}, %4, %5, "
                     "accumulate, 1, 1;\n}"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "l"(descriptor_sw128(a_s)), "l"(descriptor_sw128(b_s)));
        wgmma_commit();
        wgmma_wait<0>();
        __syncthreads();       // every warp's wgmma has read the buffers before they are written again
    }
    for (int i = 0; i < 4; ++i)
        D[problem * 512 + (16 * warp + g + 8 * (i / 2)) * 8 + 2 * t + (i & 1)] = d[i];
}
