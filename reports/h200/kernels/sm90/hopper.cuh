// Hopper's asynchronous machinery, one small wrapper per PTX instruction, for
// the TMA + wgmma kernels (gemm.cuh and its roles; a change here rebuilds them).
//
// Sources: the PTX ISA ("mbarrier", "cp.async.bulk.tensor", "Asynchronous
// warpgroup level matrix multiply-accumulate instructions": wgmma.mma_async,
// wgmma.fence, commit_group, wait_group, the shared-memory matrix descriptor
// and its 128-byte swizzle; "setmaxnreg"; "membar/fence" for fence.proxy.async),
// and the CUDA programming guide ("Using the Tensor Memory Accelerator").
// Everything here needs sm_90a (`needs: sm_90a` in the registry): wgmma and
// setmaxnreg exist on that architecture only.
//
// The pieces, in the order a tile goes through them:
// - a tensor map (CUtensorMap, 128 bytes, made on the host by the driver's
//   cuTensorMapEncodeTiled: matmulstudy/gpu/tma.py) describes a row-major matrix
//   in global memory and the box of it one copy moves;
// - tma_load_2d() asks the copy engine for one box into shared memory; the
//   engine writes it (zeros where the box leaves the matrix: ragged edges
//   cost nothing) and then counts its bytes on an mbarrier;
// - an mbarrier is a 64-bit counter in shared memory with a phase bit:
//   a phase completes when its expected arrivals have arrived and its
//   expected bytes have landed; waiters poll the phase's parity;
// - wgmma_tf32<256>() is one warpgroup-wide (4 warps, 128 threads)
//   multiply of a 64 x 8 A fragment, held in registers, by an 8 x 256 B
//   operand that the tensor cores read from shared memory themselves, through
//   a descriptor; it is asynchronous: issued, committed as a group, and waited
//   for with wait_group. The BF16 steps' wgmma_bf16<256>() reads both
//   operands from shared memory, B MN-major (descriptor_sw128_mn).

#pragma once

#include <cuda.h>     // CUtensorMap
#include <cstdint>

static_assert(sizeof(CUtensorMap) == 128 && alignof(CUtensorMap) == 128,
              "matmulstudy/gpu/tma.py places each tensor map on a 128-byte boundary of the kernel's parameters");

__device__ __forceinline__ uint32_t smem_address(const void* p)
{
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// --- mbarrier ----------------------------------------------------------------

__device__ __forceinline__ void mbarrier_init(uint64_t* bar, unsigned arrivals)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_address(bar)), "r"(arrivals) : "memory");
}

// Makes the initialised barriers visible to the copy engine (the async proxy) before any copy names them.
__device__ __forceinline__ void mbarrier_init_fence()
{
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_address(bar)) : "memory");
}

// One arrival that also tells the barrier to wait for `bytes` more bytes from the copy engine.
__device__ __forceinline__ void mbarrier_arrive_expect_bytes(uint64_t* bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_address(bar)), "r"(bytes)
                 : "memory");
}

// Wait until the phase of this parity has completed. A freshly initialised barrier is in phase 0, and
// the phase before it (parity 1) counts as complete: waiting on parity 1 returns at once.
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, unsigned parity)
{
    unsigned done = 0;
    while (!done)
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done) : "r"(smem_address(bar)), "r"(parity) : "memory");
}

// --- the copy engine (TMA) ----------------------------------------------------

// The box of `map` whose first element is (column x, row y) -> shared memory at dst (1024-byte aligned for
// the 128-byte swizzle), completing on `bar`. The map is a __grid_constant__ kernel parameter: its address
// is a generic address the engine reads it from.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int x, int y, uint64_t* bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(smem_address(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y),
                 "r"(smem_address(bar))
                 : "memory");
}

// The box of a 3-D map whose first element is (x, y, z) -> dst (B's map where one copy brings several boxes:
// (a 64-column block's columns, rows, blocks), and one box is several blocks side by side, laid one after
// another in shared memory, each as a 2-D box of the block would be).
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, int x, int y, int z, uint64_t* bar)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4}], [%5];"
                 ::"r"(smem_address(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(z),
                 "r"(smem_address(bar))
                 : "memory");
}

// The same box into the shared memory of every block of the cluster named in `blocks` (a bit per block
// rank), at the same offset, each completing on its own barrier at the same offset (TMA multicast).
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map, int x, int y, uint64_t* bar,
                                                      uint16_t blocks)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%2, %3}], [%4], %5;"
                 ::"r"(smem_address(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y),
                 "r"(smem_address(bar)), "h"(blocks)
                 : "memory");
}

// --- clocks ---------------------------------------------------------------------

// The global timer, in nanoseconds: the same clock on every SM, against which clock64's cycles give the SM
// clock a block ran at.
__device__ __forceinline__ uint64_t global_ns()
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// --- thread block clusters ------------------------------------------------------

__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    return rank;
}

// Every thread of every block of the cluster arrives, then waits for all the others (release, acquire).
__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}

// An arrival on the barrier at the same offset in the shared memory of the cluster's block `rank`, with
// the instruction's default semantics (release at CTA scope), as CUTLASS's cluster barriers arrive: what it
// orders is this warp's finished reads of its own block's stage. Written .release.cluster, ptxas puts a
// MEMBAR.ALL.GPU before each arrival, which cost more than half the rate of the first kernel with clusters
// (measured when the multicast step was written).
// The address, in the cluster's shared-memory window, of what lies at `p`'s offset in block `rank`'s shared memory.
__device__ __forceinline__ unsigned cluster_address(const void* p, unsigned rank)
{
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_address(p)), "r"(rank));
    return remote;
}

__device__ __forceinline__ void mbarrier_arrive_cluster(uint64_t* bar, unsigned rank)
{
    const unsigned remote = cluster_address(bar, rank);
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
}

// QueuedTiles' tile numbers (scheduler.cuh), written by one thread into every block of its cluster: a 32-bit
// store into the shared memory of block `rank`, then an arrival on its barrier that releases the store at
// cluster scope (one MEMBAR a tile, not a slice: see above), and a wait that acquires at cluster scope what
// such an arrival released.
__device__ __forceinline__ void store_cluster(int* p, unsigned rank, int value)
{
    const unsigned remote = cluster_address(p, rank);
    asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(remote), "r"(value) : "memory");
}

__device__ __forceinline__ void mbarrier_arrive_release_cluster(uint64_t* bar, unsigned rank)
{
    const unsigned remote = cluster_address(bar, rank);
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
}

__device__ __forceinline__ void mbarrier_wait_acquire_cluster(uint64_t* bar, unsigned parity)
{
    unsigned done = 0;
    while (!done)
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done) : "r"(smem_address(bar)), "r"(parity) : "memory");
}

// The other way (epilogue.cuh's stores): the box of `map` at (column x, row y) from shared memory at src (laid out as a
// load of that box would write it) to global memory; what lies outside the matrix is not written. Its reads
// of shared memory are tracked as a bulk group of the issuing thread: commit, then wait until they are done
// before that memory is reused or the block ends.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, int x, int y, const void* src)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                 ::"l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(smem_address(src))
                 : "memory");
}

__device__ __forceinline__ void tma_store_commit_and_wait()
{
    asm volatile("cp.async.bulk.commit_group;\n\tcp.async.bulk.wait_group.read 0;" ::: "memory");
}

// The copy engine can write an FP32 C where its rows start on 16 bytes (N a multiple of 4, C on 16 bytes: the
// epilogues that store by the copy engine, epilogue.cuh; matmulstudy/gpu/tma.py's rule too).
__device__ __forceinline__ bool store_map_usable(int N, const float* C)
{
    return N % 4 == 0 && reinterpret_cast<uintptr_t>(C) % 16 == 0;
}

// The same in two halves (a persistent block's epilogue): close the bulk group of the stores issued since the
// last commit; later, before their shared memory is written again, wait until every committed group has read it.
__device__ __forceinline__ void tma_store_commit()
{
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

__device__ __forceinline__ void tma_store_wait_read()
{
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

// A barrier for `threads` threads (a multiple of 32) of the block, on hardware barrier `id` (1 to 15; 0 is
// __syncthreads'): the consumer warpgroups meet on it without the producer.
__device__ __forceinline__ void named_barrier(unsigned id, unsigned threads)
{
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// Shared memory written by ordinary stores, then read by the tensor cores (the async proxy): each writing
// thread fences before it signals the readers.
__device__ __forceinline__ void fence_proxy_async()
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// --- registers per warpgroup --------------------------------------------------

// A warpgroup that only issues copies gives registers back; one that holds the accumulators takes them.
// Both need the kernel's register cap at entry (__launch_bounds__(threads, 1)).
template <int Registers>
__device__ __forceinline__ void registers_release()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Registers));
}

template <int Registers>
__device__ __forceinline__ void registers_claim()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Registers));
}

// --- wgmma ---------------------------------------------------------------------

// The shared-memory matrix descriptor of a K-major operand in the 128-byte swizzle (what the copy engine
// writes with CU_TENSOR_MAP_SWIZZLE_128B): rows of 128 bytes, the 16-byte chunks of row r permuted by
// XOR with r % 8, groups of 8 rows (1,024 bytes) one after another (stride byte offset 1024; the leading
// byte offset is unused in this mode). Bits: start address / 16 in 0-13, leading offset / 16 in 16-29,
// stride offset / 16 in 32-45, swizzle mode in 62-63 (1: 128 bytes). Advancing along K within a row is
// advancing the start address (32 bytes per k-step of 8 TF32 values).
__device__ __forceinline__ uint64_t descriptor_sw128(const void* p)
{
    const uint64_t address = smem_address(p);
    return ((address & 0x3FFFF) >> 4) | (1ull << 16) | ((1024ull >> 4) << 32) | (1ull << 62);
}

// The descriptor of an MN-major operand in the 128-byte swizzle (BF16's B: row-major B,
// N contiguous, as the study stores it). The copy engine writes B's slice as boxes of 64 columns (128 bytes)
// by the slice's k, one box after another every `box_bytes`: in a box, row k is 128 bytes at k * 128, its
// 16-byte chunks permuted by XOR with k % 8. For this layout the PTX ISA's "Leading dimension byte offset"
// is the step from one box of 64 columns to the next (box_bytes), and the "Stride dimension byte offset" the
// step from one group of 8 k to the next (1,024 bytes). Advancing along K is advancing the start address by
// 128 bytes a k (2,048 per k-step of 16), whole 1,024-byte swizzle patterns: the base offset stays 0.
__device__ __forceinline__ uint64_t descriptor_sw128_mn(const void* p, unsigned box_bytes)
{
    const uint64_t address = smem_address(p);
    return ((address & 0x3FFFF) >> 4) | (uint64_t((box_bytes & 0x3FFFF) >> 4) << 16) | ((1024ull >> 4) << 32) |
           (1ull << 62);
}

// Before a wgmma that reads registers written since the last one (fragments, or the accumulators).
__device__ __forceinline__ void wgmma_fence()
{
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

// Wait until at most `Pending` committed groups of this warpgroup are still running.
template <int Pending>
__device__ __forceinline__ void wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(Pending) : "memory");
}

// The FP32 accumulators of a 64 x N wgmma (N / 2 a thread: 32, 64 or 128), as the asm statements below name
// them: the registers' text, %0 to %(N/2 - 1), and the operands, d[0] to d[N/2 - 1], read and written. Each
// list is the one before it and its second half.
#define WGMMA_D_REGISTERS_32 \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define WGMMA_D_REGISTERS_64 \
    WGMMA_D_REGISTERS_32 ", " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define WGMMA_D_REGISTERS_128 \
    WGMMA_D_REGISTERS_64 ", " \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define WGMMA_D_OPERANDS_32 \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define WGMMA_D_OPERANDS_64 \
    WGMMA_D_OPERANDS_32, \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define WGMMA_D_OPERANDS_128 \
    WGMMA_D_OPERANDS_64, \
    "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
    "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
    "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
    "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
    "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
    "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
    "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
    "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

// The text of one wgmma with its accumulators (REGISTERS: WGMMA_D_REGISTERS_*) and the other operands' places
// after them, always accumulating (the predicate set to true).
#define WGMMA_TF32_TEXT(SHAPE, REGISTERS, A, B) \
    "{\n\t.reg .pred accumulate;\n\tsetp.ne.u32 accumulate, 1, 0;\n\t" \
    "wgmma.mma_async.sync.aligned." SHAPE ".f32.tf32.tf32 {" REGISTERS "}, {" A "}, " B ", accumulate, 1, 1;\n}"
#define WGMMA_BF16_TEXT(SHAPE, REGISTERS, A, B) \
    "{\n\t.reg .pred accumulate;\n\tsetp.ne.u32 accumulate, 1, 0;\n\t" \
    "wgmma.mma_async.sync.aligned." SHAPE ".f32.bf16.bf16 {" REGISTERS "}, " A ", " B ", accumulate, 1, 1, 0, 1;\n}"
// FP8's says whether it adds to the accumulators or starts them from zero (ACCUMULATE: the place of an
// immediate, 1 or 0).
#define WGMMA_E4M3_TEXT(SHAPE, REGISTERS, A, B, ACCUMULATE) \
    "{\n\t.reg .pred accumulate;\n\tsetp.ne.u32 accumulate, " ACCUMULATE ", 0;\n\t" \
    "wgmma.mma_async.sync.aligned." SHAPE ".f32.e4m3.e4m3 {" REGISTERS "}, " A ", " B ", accumulate, 1, 1;\n}"

// D (64 x N, FP32) += A (64 x 8, TF32, registers) * B (8 x N, TF32, shared memory, K-major: each of B's N
// columns is a row of 8 consecutive k in memory), N = 64, 128 or 256. Per warp w of the warpgroup and lane
// (g = lane / 4, t = lane % 4), as for mma.sync m16n8k8: a[0] = A(16w + g, t), a[1] = A(16w + g + 8, t),
// a[2] = A(16w + g, t + 4), a[3] = A(16w + g + 8, t + 4); d[4i + 0, 1] = D(16w + g, 8i + 2t + 0, 1),
// d[4i + 2, 3] = D(16w + g + 8, 8i + 2t + 0, 1). The tensor cores read the top 19 bits of each input.
template <int N>
__device__ __forceinline__ void wgmma_tf32(float (&d)[N / 2], const unsigned (&a)[4], uint64_t b)
{
    static_assert(N == 64 || N == 128 || N == 256, "wgmma m64nNk8 as the mainloops use it: N = 64, 128 or 256");
    if constexpr (N == 256)
        asm volatile(WGMMA_TF32_TEXT("m64n256k8", WGMMA_D_REGISTERS_128, "%128, %129, %130, %131", "%132")
                     : WGMMA_D_OPERANDS_128 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
    else if constexpr (N == 128)
        asm volatile(WGMMA_TF32_TEXT("m64n128k8", WGMMA_D_REGISTERS_64, "%64, %65, %66, %67", "%68")
                     : WGMMA_D_OPERANDS_64 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
    else
        asm volatile(WGMMA_TF32_TEXT("m64n64k8", WGMMA_D_REGISTERS_32, "%32, %33, %34, %35", "%36")
                     : WGMMA_D_OPERANDS_32 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}

// D (64 x N, FP32) += A (64 x 16, BF16) * B (16 x N, BF16), both from shared memory through descriptors:
// A K-major (descriptor_sw128), B MN-major (descriptor_sw128_mn: the instruction's last immediate,
// B transposed, says so). D's layout is wgmma_tf32's. The products are exact in FP32; the sums are
// the tensor cores' (matmulstudy/precisions.py's BF16 row).
template <int N>
__device__ __forceinline__ void wgmma_bf16(float (&d)[N / 2], uint64_t a, uint64_t b)
{
    static_assert(N == 64 || N == 128 || N == 256, "wgmma m64nNk16 as the mainloops use it: N = 64, 128 or 256");
    if constexpr (N == 256)
        asm volatile(WGMMA_BF16_TEXT("m64n256k16", WGMMA_D_REGISTERS_128, "%128", "%129")
                     : WGMMA_D_OPERANDS_128 : "l"(a), "l"(b));
    else if constexpr (N == 128)
        asm volatile(WGMMA_BF16_TEXT("m64n128k16", WGMMA_D_REGISTERS_64, "%64", "%65")
                     : WGMMA_D_OPERANDS_64 : "l"(a), "l"(b));
    else
        asm volatile(WGMMA_BF16_TEXT("m64n64k16", WGMMA_D_REGISTERS_32, "%32", "%33")
                     : WGMMA_D_OPERANDS_32 : "l"(a), "l"(b));
}

// D (64 x N, FP32) += A (64 x 32, e4m3) * B (32 x N, e4m3), both from shared memory through descriptors, both
// K-major (descriptor_sw128: FP8's wgmma has no transposed operand); with Accumulate false, D = A * B (D's
// earlier values unread). D's layout is wgmma_tf32's. The products are exact; the sums are the tensor cores'
// (matmulstudy/precisions.py's FP8 rows).
template <int N, bool Accumulate = true>
__device__ __forceinline__ void wgmma_e4m3(float (&d)[N / 2], uint64_t a, uint64_t b)
{
    static_assert(N == 64 || N == 128 || N == 256, "wgmma m64nNk32 as the mainloops use it: N = 64, 128 or 256");
    if constexpr (N == 256)
        asm volatile(WGMMA_E4M3_TEXT("m64n256k32", WGMMA_D_REGISTERS_128, "%128", "%129", "%130")
                     : WGMMA_D_OPERANDS_128 : "l"(a), "l"(b), "n"(int(Accumulate)));
    else if constexpr (N == 128)
        asm volatile(WGMMA_E4M3_TEXT("m64n128k32", WGMMA_D_REGISTERS_64, "%64", "%65", "%66")
                     : WGMMA_D_OPERANDS_64 : "l"(a), "l"(b), "n"(int(Accumulate)));
    else
        asm volatile(WGMMA_E4M3_TEXT("m64n64k32", WGMMA_D_REGISTERS_32, "%32", "%33", "%34")
                     : WGMMA_D_OPERANDS_32 : "l"(a), "l"(b), "n"(int(Accumulate)));
}
