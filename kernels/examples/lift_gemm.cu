// The course's fastest BF16 and FP8 kernels lifted into a program of one's own: one include, the kernel's
// types written out, its tensor maps made with the driver's cuTensorMapEncodeTiled, one launch. No Python,
// no registry: the kernel's block, shared memory and workspace are its type's (Gemm::THREADS, Gemm::FACTS).
//
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -o lift_gemm kernels/examples/lift_gemm.cu
//   ./lift_gemm                          multiply seeded inputs with both kernels, check sampled elements
//   ./lift_gemm bf16|fp8 M N K A B C     C (M x N, float32) = A B from files of the bits each kernel reads
//
// The kernels are step 47 (BF16: 128 x 256 tiles, 4 stages, descriptors stepped, a queue of tiles in whole
// rounds, tickets drawn when needed, one producer warp) and step 50 (FP8 e4m3, the tensor cores' sums,
// on step 47's roles): kernels/bf16/47_gpu_wgmma_bf16_drawn_late.cu and kernels/fp8_fast/50_gpu_wgmma_fp8.cu
// compose the same types. Row-major A (M x K) and C; B K x N for BF16 and N x K (K-major) for FP8, as
// cuBLASLt's FP8 GEMM takes it. Like those steps, they read what the copy engine can: rows starting on 16 bytes
// (K and N multiples of 8 in BF16; in FP8 K of 16 and N of 4, for C's float32 rows; 16-byte aligned buffers); the study copies other operands
// onto 16 bytes first (matmulstudy/gpu/launch.py's Padding), and so must a caller.
// Needs an sm_90 GPU (H100, H200) and CUDA 12.3 or newer.

#include <cuda_runtime.h>
#include <cudaTypedefs.h>   // PFN_cuTensorMapEncodeTiled: the driver's function, found through the runtime

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../sm90/gemm.cuh"   // every role of the tensor-core kernels

using Tile47 = TileShape<128, 256, 64>;
using Bf16Gemm = Gemm<Bf16Mainloop<Tile47, StageCount<4>, Descriptors::stepped, Unaligned::host_copies, 4>,
                      QueuedTiles<Tile47, ClusterShape<1>, 16, Takers::whole_rounds, Draw::when_needed>, BufferStore,
                      Producer::one_warp>;
using Tile50 = TileShape<128, 256, 128>;
using Fp8Gemm = Gemm<Fp8Mainloop<Tile50, StageCount<4>, Descriptors::stepped, Unaligned::host_copies>,
                     QueuedTiles<Tile50, ClusterShape<1>, 16, Takers::whole_rounds, Draw::when_needed>, BufferStore,
                     Producer::one_warp>;

template <class Kernel>
__global__ void __launch_bounds__(Kernel::THREADS, 1)
gemm_kernel(int M, int N, int K, const typename Kernel::Element* __restrict__ A,
            const typename Kernel::Element* __restrict__ B, float* __restrict__ C,
            const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
            const __grid_constant__ CUtensorMap map_c, Workspace* workspace)
{
    Kernel::run(M, N, K, A, B, C, &map_a, &map_b, &map_c, workspace);
}

#define CHECK(call)                                                                                   \
    do {                                                                                              \
        cudaError_t err_ = (call);                                                                    \
        if (err_ != cudaSuccess) {                                                                    \
            std::fprintf(stderr, "lift_gemm: %s failed: %s\n", #call, cudaGetErrorString(err_));     \
            std::exit(1);                                                                             \
        }                                                                                             \
    } while (0)

// A 2-D map of a row-major rows x cols matrix of `bytes`-byte elements, box_rows x box_cols a copy; or, with
// blocks > 1, a 3-D one whose box is `blocks` such boxes side by side (a block's columns, rows, blocks: B of BF16
// where N is whole 64-column blocks). The 128-byte swizzle, zeros outside the matrix.
static CUtensorMap tensor_map(const void* base, CUtensorMapDataType type, int bytes, int rows, int cols,
                              unsigned box_rows, unsigned box_cols, unsigned blocks = 1)
{
    static PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
    cudaDriverEntryPointQueryResult found;
    if (!encode && (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", reinterpret_cast<void**>(&encode),
                                                     12000, cudaEnableDefault, &found) != cudaSuccess ||
                    found != cudaDriverEntryPointSuccess)) {
        std::fprintf(stderr, "lift_gemm: the driver has no cuTensorMapEncodeTiled (an R525 driver or newer)\n");
        std::exit(1);
    }
    const int rank = blocks > 1 ? 3 : 2;
    const cuuint64_t dims[3] = {blocks > 1 ? box_cols : cuuint64_t(cols), cuuint64_t(rows), cuuint64_t(cols) / box_cols};
    const cuuint64_t strides[2] = {cuuint64_t(cols) * bytes, cuuint64_t(box_cols) * bytes};
    const cuuint32_t box[3] = {box_cols, box_rows, blocks}, steps[3] = {1, 1, 1};
    CUtensorMap map;
    if (encode(&map, type, rank, const_cast<void*>(base), dims, strides, box, steps, CU_TENSOR_MAP_INTERLEAVE_NONE,
               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
        std::fprintf(stderr, "lift_gemm: cuTensorMapEncodeTiled refused a %dx%d map\n", rows, cols);
        std::exit(1);
    }
    return map;
}

// C = A B on the GPU's buffers, the kernel's maps made here: a block an SM, the kernel's threads and shared
// memory, and a workspace of its own, zeroed.
template <class Kernel>
static void multiply(int M, int N, int K, const void* A, const void* B, float* C, bool fp8)
{
    using Mainloop = typename Kernel::Mainloop;   // a box of A is a tile's rows by a slice; B's as it lays it out
    const CUtensorMapDataType type = fp8 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    const int bytes = sizeof(typename Kernel::Element), columns = Mainloop::BOX_COLUMNS;
    const CUtensorMap map_a = tensor_map(A, type, bytes, M, K, Mainloop::TILE_M, Mainloop::TILE_K);
    const CUtensorMap map_b = Mainloop::B_K_MAJOR ? tensor_map(B, type, bytes, N, K, columns, Mainloop::TILE_K)
                                                  : tensor_map(B, type, bytes, K, N, Mainloop::TILE_K, columns,
                                                               N % columns == 0 ? Mainloop::BOXES_A_COPY : 1);
    const CUtensorMap map_c = tensor_map(C, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, M, N, 64, 32);   // C's buffers' box
    void* workspace = nullptr;
    if (Kernel::FACTS.workspace_bytes) {
        CHECK(cudaMalloc(&workspace, Kernel::FACTS.workspace_bytes));
        CHECK(cudaMemset(workspace, 0, Kernel::FACTS.workspace_bytes));
    }
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CHECK(cudaFuncSetAttribute(gemm_kernel<Kernel>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               Kernel::FACTS.shared_bytes));
    using T = typename Kernel::Element;
    gemm_kernel<Kernel><<<sms, Kernel::THREADS, Kernel::FACTS.shared_bytes>>>(
        M, N, K, static_cast<const T*>(A), static_cast<const T*>(B), C, map_a, map_b, map_c,
        static_cast<Workspace*>(workspace));
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaFree(workspace));
}

// The values the bits stand for: BF16 (the high half of a float32) and e4m3 (OCP FP8, no infinities).
static double bf16_value(uint16_t bits)
{
    const uint32_t word = uint32_t(bits) << 16;
    float x;
    std::memcpy(&x, &word, 4);
    return x;
}

static double e4m3_value(uint8_t bits)
{
    const int exponent = (bits >> 3) & 15, mantissa = bits & 7;
    const double magnitude = exponent ? (8 + mantissa) * std::ldexp(1.0, exponent - 10) : mantissa * std::ldexp(1.0, -9);
    return bits & 0x80 ? -magnitude : magnitude;
}

// Sampled elements of C against a float64 sum, within the study's bound for the kernel's precision
// (matmulstudy/measure/verify.py: 8 (eps_acc sqrt(K) + eps_bias K) r, r the root of the sum of the squared
// products). Returns the elements outside it.
static int check(int M, int N, int K, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                 const std::vector<float>& c, bool fp8)
{
    const double eps_acc = fp8 ? std::ldexp(1.0, -14) : std::ldexp(1.0, -23);
    const double eps_bias = fp8 ? std::ldexp(1.0, -21) : std::ldexp(1.0, -23) / 16;
    auto value = [&](const std::vector<uint8_t>& m, size_t i) {
        return fp8 ? e4m3_value(m[i]) : bf16_value(reinterpret_cast<const uint16_t*>(m.data())[i]);
    };
    int bad = 0;
    unsigned state = 7u;
    for (int s = 0; s < 512; ++s) {
        state = state * 1664525u + 1013904223u;
        const int i = s == 0 ? 0 : s == 1 ? M - 1 : int(state % unsigned(M));
        state = state * 1664525u + 1013904223u;
        const int j = s == 0 ? 0 : s == 1 ? N - 1 : int(state % unsigned(N));
        double sum = 0, squares = 0;
        for (int k = 0; k < K; ++k) {
            const double p = value(a, size_t(i) * K + k) * value(b, fp8 ? size_t(j) * K + k : size_t(k) * N + j);
            sum += p;
            squares += p * p;
        }
        const double bound = 8 * (eps_acc * std::sqrt(double(K)) + eps_bias * K) * std::sqrt(squares);
        bad += std::fabs(c[size_t(i) * N + j] - sum) > bound;
    }
    return bad;
}

// The kernel on host arrays: A and B to the GPU, C back.
static std::vector<float> run(bool fp8, int M, int N, int K, const std::vector<uint8_t>& a,
                              const std::vector<uint8_t>& b)
{
    void *d_a, *d_b;
    float* d_c;
    CHECK(cudaMalloc(&d_a, a.size()));
    CHECK(cudaMalloc(&d_b, b.size()));
    CHECK(cudaMalloc(&d_c, size_t(M) * N * 4));
    CHECK(cudaMemcpy(d_a, a.data(), a.size(), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_b, b.data(), b.size(), cudaMemcpyHostToDevice));
    if (fp8)
        multiply<Fp8Gemm>(M, N, K, d_a, d_b, d_c, true);
    else
        multiply<Bf16Gemm>(M, N, K, d_a, d_b, d_c, false);
    std::vector<float> c(size_t(M) * N);
    CHECK(cudaMemcpy(c.data(), d_c, c.size() * 4, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    CHECK(cudaFree(d_c));
    return c;
}

static bool readable(bool fp8, int N, int K)
{
    if (fp8 ? K % 16 == 0 && N % 4 == 0 : K % 8 == 0 && N % 8 == 0)
        return true;
    std::fprintf(stderr, "lift_gemm: %s rows must start on 16 bytes: %s; copy the operands into padded ones first\n",
                 fp8 ? "FP8's" : "BF16's", fp8 ? "K a multiple of 16, N of 4 (C's rows)" : "K and N multiples of 8");
    return false;
}

static std::vector<uint8_t> load(const char* path, size_t bytes)
{
    std::vector<uint8_t> data(bytes);
    FILE* fh = std::fopen(path, "rb");
    if (!fh || std::fread(data.data(), 1, bytes, fh) != bytes) {
        std::fprintf(stderr, "lift_gemm: cannot read %zu bytes from %s\n", bytes, path);
        std::exit(2);
    }
    std::fclose(fh);
    return data;
}

int main(int argc, char** argv)
{
    const bool files = argc == 8 && (std::strcmp(argv[1], "bf16") == 0 || std::strcmp(argv[1], "fp8") == 0);
    if (files) {   // the bits each kernel reads
        const bool fp8 = std::strcmp(argv[1], "fp8") == 0;
        const int M = std::atoi(argv[2]), N = std::atoi(argv[3]), K = std::atoi(argv[4]);
        if (M < 1 || N < 1 || K < 1) {
            std::fprintf(stderr, "lift_gemm: M, N and K are 1 or more\n");
            return 2;
        }
        if (!readable(fp8, N, K))
            return 2;
        const size_t element = fp8 ? 1 : 2;
        const std::vector<uint8_t> a = load(argv[5], size_t(M) * K * element), b = load(argv[6], size_t(K) * N * element);
        const std::vector<float> c = run(fp8, M, N, K, a, b);
        FILE* fh = std::fopen(argv[7], "wb");
        if (!fh || std::fwrite(c.data(), 4, c.size(), fh) != c.size()) {
            std::fprintf(stderr, "lift_gemm: cannot write %s\n", argv[7]);
            return 2;
        }
        std::fclose(fh);
        return 0;
    }
    if (argc != 1) {
        std::fprintf(stderr, "usage: lift_gemm | lift_gemm bf16|fp8 M N K A B C\n");
        return 2;
    }
    // seeded inputs in [-1, 1): BF16 values, and e4m3 codes of exponent 0 to 7 (magnitudes below 2)
    int failed = 0;
    for (const bool fp8 : {false, true}) {
        const int M = 1537, N = 2056, K = 1040;   // M ragged; N not whole 256-column tiles, nor BF16's 64-column blocks
        const size_t element = fp8 ? 1 : 2;
        std::vector<uint8_t> a(size_t(M) * K * element), b(size_t(K) * N * element);
        unsigned state = 12345u;
        for (std::vector<uint8_t>* m : {&a, &b})
            for (size_t i = 0; i < m->size(); i += element) {
                state = state * 1664525u + 1013904223u;
                if (fp8) {
                    (*m)[i] = uint8_t((state >> 8) & 0xBF);   // sign, exponent 0 to 7, mantissa
                } else {
                    const float x = (state >> 8) * (2.0f / 16777216.0f) - 1.0f;
                    uint32_t word;
                    std::memcpy(&word, &x, 4);
                    const uint16_t bits = uint16_t((word + 0x7FFF + ((word >> 16) & 1)) >> 16);   // nearest-even
                    std::memcpy(&(*m)[i], &bits, 2);
                }
            }
        const int bad = check(M, N, K, a, b, run(fp8, M, N, K, a, b), fp8);
        std::printf("%s (step %d) %dx%dx%d: %s\n", fp8 ? "FP8" : "BF16", fp8 ? 50 : 47, M, N, K,
                    bad ? "WRONG" : "every sampled element within the bound");
        failed += bad;
    }
    return failed ? 1 : 0;
}
