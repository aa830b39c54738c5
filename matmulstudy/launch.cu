// One launch of one kernel of a cubin, for compute-sanitizer (matmulstudy/sanitize.py).
//
//   launch CUBIN KERNEL M N K GRID_X GRID_Y BLOCK_X BLOCK_Y
//
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
#include <cstdio>
#include <cstdlib>
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

int main(int argc, char** argv)
{
    if (argc != 10) {
        std::fprintf(stderr, "usage: launch CUBIN KERNEL M N K GRID_X GRID_Y BLOCK_X BLOCK_Y\n");
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

    void* args[] = {&M, &N, &K, &a, &b, &c};
    CHECK(cudaLaunchKernel((const void*)kernel, grid, block, args, 0, nullptr));
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());

    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    CHECK(cudaLibraryUnload(library));
    std::printf("launched %s on %dx%dx%d: grid %ux%u, block %ux%u\n", argv[2], M, N, K, grid.x, grid.y, block.x,
                block.y);
    return 0;
}
