// TCubeTiling: the Matmul tiling data the host's tiling API (tiling/tiling_api.h) fills and the
// kernel's Matmul object (lib/matmul_intf.h) reads. The fields and their meanings are those of the
// public API reference (all int32); the host class optiling::TCubeTiling and the kernel struct
// ::TCubeTiling share this one field list, so the bytes SaveToBuffer writes are the struct the
// kernel copies word by word from its GM tiling pointer.
#pragma once
#include <cstdint>

// clang-format off
#define SFUMATO_TCUBE_TILING_FIELDS(X)                                                           \
    X(usedCoreNum) X(M) X(N) X(Ka) X(Kb) X(singleCoreM) X(singleCoreN) X(singleCoreK)            \
    X(baseM) X(baseN) X(baseK) X(depthA1) X(depthB1) X(stepM) X(stepN) X(isBias) X(transLength) \
    X(iterateOrder) X(shareMode) X(shareL1Size) X(shareL0CSize) X(shareUbSize) X(batchM)         \
    X(batchN) X(singleBatchM) X(singleBatchN) X(stepKa) X(stepKb) X(depthAL1CacheUB)             \
    X(depthBL1CacheUB) X(dbL0A) X(dbL0B) X(dbL0C) X(ALayoutInfoB) X(ALayoutInfoS)              \
    X(ALayoutInfoN) X(ALayoutInfoG) X(ALayoutInfoD) X(BLayoutInfoB) X(BLayoutInfoS)             \
    X(BLayoutInfoN) X(BLayoutInfoG) X(BLayoutInfoD) X(CLayoutInfoB) X(CLayoutInfoS1)            \
    X(CLayoutInfoN) X(CLayoutInfoG) X(CLayoutInfoS2) X(BatchNum) X(mxTypePara)
// clang-format on

#define SFUMATO_TCUBE_FIELD(name) int32_t name = 0;
struct TCubeTiling {
    SFUMATO_TCUBE_TILING_FIELDS(SFUMATO_TCUBE_FIELD)
};
#undef SFUMATO_TCUBE_FIELD
