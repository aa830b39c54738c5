// One launch of one kernel of a cubin, for compute-sanitizer (matmulstudy/measure/sanitize.py).
//
//   launch CUBIN KERNEL M N K GRID_X GRID_Y BLOCK_X BLOCK_Y [SHARED [A_BOX B_BOX [C_BOX]]] [pad=COPY_KERNEL]
//          [elem=BYTES] [ws=BYTES]
//
// SHARED: the bytes of dynamic shared memory (the kernel's limit raised to
// them first; a tensor-core step's own, which its cubin exports:
// matmulstudy/gpu/cubin.py); the boxes (ROWSxCOLS, or ROWSxCOLSxBLOCKS): the kernel takes
// TMA tensor maps of A and B (and C) after C, made here as
// matmulstudy/gpu/tma.py makes them (128-byte swizzle; 3-D with BLOCKS boxes
// side by side where the columns are whole blocks; 128 zero bytes where the
// rows do not start on 16 bytes: A and B unless K and N are multiples of 4,
// C unless N is, and the kernel then goes without them).
// pad=COPY_KERNEL (a variant with align_rows, steps 26 and 38): as
// matmulstudy/gpu/launch.py's Padding does, where K or N is not a multiple of
// 16 bytes of A's and B's elements the operands are first copied by
// COPY_KERNEL (of the same cubin; COPY_KERNEL_16 for 2-byte elements) into
// zero-padded workspace of Kp and Np (K and N rounded up to such multiples)
// columns, KERNEL multiplies the (M, Np, Kp) problem (GRID is that problem's),
// and C is copied back by COPY_KERNEL.
// elem=2 (a BF16 variant): the kernel reads A and B as 2-byte elements, so
// their maps are of BF16 (cuda.h's CU_TENSOR_MAP_DATA_TYPE_BFLOAT16) with
// rows of K (N) two-byte elements, usable where K and N are multiples of 8
// (matmulstudy/gpu/tma.py's rule); C stays float32.
// elem=1 (an FP8 variant): A and B are bytes (maps of UINT8), and B is
// stored N x K, K-major (the one layout of FP8's wgmma and of cuBLASLt's
// FP8 GEMM): both have rows of K bytes, usable where K is a multiple of 16;
// padded, B is copied into Np x Kp, N rounded up to C's 4.
// ws=BYTES (a tensor-core step, whose kernel takes its launch's workspace
// after its maps: kernels/sm90/workspace.cuh): that many bytes, zeroed, or a
// null pointer where BYTES is 0.
// A small native program rather than Python: compute-sanitizer starts it in
// well under a second, so every tool can run on every variant and shape. It
// calls the kernel exactly as the study does, (M, N, K, A, B, C) with A, B
// and C row-major, A and B filled with values in [-1, 1) (as float32; an
// int32 kernel reads the same bytes as integers, which is all a sanitizer
// needs). C is allocated and never initialised: initcheck reports a kernel
// that reads C before writing it.
// Exit status 0: launched and finished without a CUDA error; 1: a CUDA error
// (its message on stderr); 2: bad arguments.

#include <cuda_runtime.h>
#include <cudaTypedefs.h>   // PFN_cuTensorMapEncodeTiled: the driver's function, found through the runtime
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <string>
#include <vector>

static int fail(cudaError_t err, const char* what)
{
    std::fprintf(stderr, "launch: %s failed: %s\n", what, cudaGetErrorString(err));
    return 1;
}

#define CHECK(call)                                  \
    do {                                             \
        cudaError_t err_ = (call);                   \
        if (err_ != cudaSuccess) return fail(err_, #call); \
    } while (0)

// A row-major rows x cols matrix of `elem`-byte elements (4: float32, 2: BF16, 1: FP8) at `base`, boxes of box_rows x
// box_cols, or of `blocks` such boxes side by side (a 3-D map: a block's columns, rows, blocks) where cols is a
// multiple of box_cols; false if the driver refuses.
static bool encode(CUtensorMap* map, const void* base, int rows, int cols, const unsigned (&b)[3], int elem = 4)
{
    const unsigned box_rows = b[0], box_cols = b[1], blocks = b[2];
    static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
    cudaDriverEntryPointQueryResult found;
    if (!fn && (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", reinterpret_cast<void**>(&fn), 12000,
                                                 cudaEnableDefault, &found) != cudaSuccess ||
                found != cudaDriverEntryPointSuccess))
        return false;
    const bool blocked = blocks > 1 && cols % box_cols == 0;
    const cuuint64_t dims[3] = {blocked ? box_cols : (cuuint64_t)cols, (cuuint64_t)rows, blocked ? cols / box_cols : 1};
    const cuuint64_t strides[2] = {(cuuint64_t)cols * elem, (cuuint64_t)box_cols * elem};
    const cuuint32_t box[3] = {box_cols, box_rows, blocked ? blocks : 1}, steps[3] = {1, 1, 1};
    const CUtensorMapDataType type = elem == 1   ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                     : elem == 2 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    return fn(map, type, blocked ? 3 : 2, const_cast<void*>(base), dims, strides, box, steps,
              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// pad_copy's grid and launch (256 threads, 4 elements each; launch.py's copy_grid): dst (rows x cols, stride
// dst_ld) = src (src_rows x src_cols, stride src_ld), zeros outside src, elements of the kernel's size.
static cudaError_t copy(cudaKernel_t pad, const void* src, int src_rows, int src_cols, int src_ld, void* dst,
                        int rows, int cols, int dst_ld)
{
    dim3 grid((cols + 1023) / 1024, rows < 65535 ? rows : 65535), block(256);
    void* args[] = {&src, &src_rows, &src_cols, &src_ld, &dst, &rows, &cols, &dst_ld};
    return cudaLaunchKernel((const void*)pad, grid, block, args, 0, nullptr);
}

int main(int argc, char** argv)
{
    const char* pad_name = nullptr;
    int elem = 4;               // bytes of an element of A and B as the kernel reads them
    long workspace_bytes = -1;  // -1: the kernel takes no workspace
    while (argc > 10 && (std::strncmp(argv[argc - 1], "pad=", 4) == 0 || std::strncmp(argv[argc - 1], "elem=", 5) == 0 ||
                         std::strncmp(argv[argc - 1], "ws=", 3) == 0)) {
        if (argv[argc - 1][0] == 'p')
            pad_name = argv[--argc] + 4;
        else if (argv[argc - 1][0] == 'e')
            elem = std::atoi(argv[--argc] + 5);
        else
            workspace_bytes = std::atol(argv[--argc] + 3);
    }
    if (elem != 4 && elem != 2 && elem != 1) {
        std::fprintf(stderr, "launch: elem= is 4, 2 or 1\n");
        return 2;
    }
    const bool b_transposed = elem == 1;   // FP8: B stored N x K
    if (argc != 10 && argc != 11 && argc != 13 && argc != 14) {
        std::fprintf(stderr, "usage: launch CUBIN KERNEL M N K GRID_X GRID_Y BLOCK_X BLOCK_Y "
                             "[SHARED [A_BOX B_BOX [C_BOX]]] [pad=COPY_KERNEL] [elem=BYTES] [ws=BYTES]\n");
        return 2;
    }
    const int shared = argc > 10 ? std::atoi(argv[10]) : 0, nmaps = argc > 11 ? argc - 11 : 0;
    unsigned boxes[3][3] = {{0, 0, 1}, {0, 0, 1}, {0, 0, 1}};
    for (int i = 0; i < nmaps; ++i)
        if (std::sscanf(argv[11 + i], "%ux%ux%u", &boxes[i][0], &boxes[i][1], &boxes[i][2]) < 2) {
            std::fprintf(stderr, "launch: a box is ROWSxCOLS or ROWSxCOLSxBLOCKS, got %s\n", argv[11 + i]);
            return 2;
        }
    int M = std::atoi(argv[3]), N = std::atoi(argv[4]), K = std::atoi(argv[5]);
    dim3 grid(std::atoi(argv[6]), std::atoi(argv[7])), block(std::atoi(argv[8]), std::atoi(argv[9]));
    if (M < 1 || N < 1 || K < 1) {
        std::fprintf(stderr, "launch: M, N, K must be >= 1\n");
        return 2;
    }
    cudaLibrary_t library;
    CHECK(cudaLibraryLoadFromFile(&library, argv[1], nullptr, nullptr, 0, nullptr, nullptr, 0));
    cudaKernel_t kernel;
    CHECK(cudaLibraryGetKernel(&kernel, library, argv[2]));

    size_t a_count = (size_t)M * K, b_count = (size_t)K * N, c_count = (size_t)M * N;
    std::vector<float> host(a_count > b_count ? a_count : b_count);
    unsigned state = 12345u;   // a fixed LCG: the same inputs on every run
    for (float& x : host) {
        state = state * 1664525u + 1013904223u;
        x = (state >> 8) * (2.0f / 16777216.0f) - 1.0f;
    }
    float *a, *b, *c;
    CHECK(cudaMalloc(&a, a_count * sizeof(float)));
    CHECK(cudaMalloc(&b, b_count * sizeof(float)));
    CHECK(cudaMalloc(&c, c_count * sizeof(float)));
    CHECK(cudaMemcpy(a, host.data(), a_count * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b, host.data(), b_count * sizeof(float), cudaMemcpyHostToDevice));

    if (shared > 48 * 1024)
        CHECK(cudaFuncSetAttribute((const void*)kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared));
    // The problem the kernel multiplies, and its operands: the study's, or the padded copies (launch.py's rule;
    // cudaMalloc's addresses are on 256 bytes, so only K and N decide).
    const int per16 = 16 / elem;   // elements of A and B in 16 bytes: rows start on 16 bytes where K, N are multiples
    const int n16 = b_transposed ? 4 : per16;   // N's multiple: C's float32 rows, or B's too
    const int Kp = (K + per16 - 1) / per16 * per16, Np = (N + n16 - 1) / n16 * n16;
    const bool pad_a = pad_name && Kp != K, pad_b = pad_name && (Kp != K || Np != N), pad_c = pad_name && Np != N;
    cudaKernel_t pad = nullptr, pad_operands = nullptr;   // C's copy (4-byte elements), and A's and B's
    if (pad_name) {
        // launch.py's copy_kernel: the name for 4-byte elements, with _16 or _8 for 2- and 1-byte ones
        const std::string name = pad_name, operands = elem == 4 ? name : name + "_" + std::to_string(8 * elem);
        CHECK(cudaLibraryGetKernel(&pad, library, name.c_str()));
        CHECK(cudaLibraryGetKernel(&pad_operands, library, operands.c_str()));
    }
    float *ka = a, *kb = b, *kc = c;
    int kN = pad_name ? Np : N, kK = pad_name ? Kp : K;
    if (pad_a) {
        CHECK(cudaMalloc(&ka, (size_t)M * Kp * elem));
        CHECK(copy(pad_operands, a, M, K, K, ka, M, Kp, Kp));
    }
    if (pad_b) {
        CHECK(cudaMalloc(&kb, (size_t)Kp * Np * elem));
        CHECK(b_transposed ? copy(pad_operands, b, N, K, K, kb, Np, Kp, Kp)
                           : copy(pad_operands, b, K, N, N, kb, Kp, Np, Np));
    }
    if (pad_c) {   // zeroed once, as launch.py does: initcheck does not see the copy engine's stores into it
        CHECK(cudaMalloc(&kc, (size_t)M * Np * sizeof(float)));
        CHECK(cudaMemset(kc, 0, (size_t)M * Np * sizeof(float)));
    }
    CUtensorMap maps[3];
    std::memset(maps, 0, sizeof maps);
    const bool loads = nmaps >= 2 && kK % per16 == 0 && (b_transposed || kN % per16 == 0),
               store = nmaps == 3 && kN % 4 == 0;
    const bool b_map = !loads || (b_transposed ? encode(&maps[1], kb, kN, kK, boxes[1], elem)
                                                : encode(&maps[1], kb, kK, kN, boxes[1], elem));
    if ((loads && !(encode(&maps[0], ka, M, kK, boxes[0], elem) && b_map)) ||
        (store && !encode(&maps[2], kc, M, kN, boxes[2]))) {
        std::fprintf(stderr, "launch: cuTensorMapEncodeTiled refused a map\n");
        return 1;
    }
    // The kernel reads what it takes: after C its tensor maps and its workspace, or a launch number (1;
    // stream_k.cuh's steps).
    unsigned launch_number = 1;
    void* workspace = nullptr;
    if (workspace_bytes > 0) {
        CHECK(cudaMalloc(&workspace, workspace_bytes));
        CHECK(cudaMemset(workspace, 0, workspace_bytes));
    }
    void* args[10] = {&M, &kN, &kK, &ka, &kb, &kc, nmaps ? static_cast<void*>(&maps[0]) : &launch_number, &maps[1],
                      &maps[2], nullptr};
    if (workspace_bytes >= 0)
        args[6 + nmaps] = &workspace;
    CHECK(cudaLaunchKernel((const void*)kernel, grid, block, args, shared, nullptr));
    CHECK(cudaGetLastError());
    if (pad_c)
        CHECK(copy(pad, kc, M, N, Np, c, M, N, N));
    CHECK(cudaDeviceSynchronize());
    for (float* w : {pad_a ? ka : nullptr, pad_b ? kb : nullptr, pad_c ? kc : nullptr})
        if (w)
            CHECK(cudaFree(w));
    if (workspace)
        CHECK(cudaFree(workspace));

    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    CHECK(cudaLibraryUnload(library));
    std::printf("launched %s on %dx%dx%d: grid %ux%u, block %ux%u\n", argv[2], M, N, K, grid.x, grid.y, block.x,
                block.y);
    return 0;
}
