// The shapes a tensor-core kernel is built for, as the types its roles take (CUTLASS's TileShape, StageCount
// and ClusterShape): a step's file names them once, and every role reads them from the types it is given,
// never from a define.

#pragma once

// The block's tile of C, TILE_M x TILE_N, and the K-slice one stage of the ring holds, TILE_K deep.
template <int M, int N, int K>
struct TileShape {
    static constexpr int TILE_M = M, TILE_N = N, TILE_K = K;
};

// The K-slices in flight: the ring's stages (ring.cuh).
template <int Stages>
struct StageCount {
    static constexpr int STAGE_COUNT = Stages;
};

// The blocks of a thread block cluster, side by side along N, that share A's slices (TMA multicast,
// producer.cuh); 1: no cluster.
template <int Blocks>
struct ClusterShape {
    static constexpr int CLUSTER_SIZE = Blocks;
};
