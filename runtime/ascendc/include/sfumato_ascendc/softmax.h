// The softmax family of the advanced API (SoftMax, SimpleSoftMax, SoftmaxFlashV2, LogSoftMax,
// SoftmaxGrad, SoftmaxGradFront, AdjustSoftMaxRes) on float tensors in ND format, written over the
// basic layer's vector calls (adv_rows.h), in the steps the public reference describes: row max,
// broadcast over a 32-byte block per row ([m, 8] max/sum tensors), subtract, exp, row sum, broadcast,
// divide. Rows are processed in slices that fit the caller's sharedTmpBuffer (adv_rows.h's scratch),
// so the tiling data's numbers are not needed (LogSoftMax's examples pass an uninitialised one).
// Simplified: half tensors, the NZ format and the forms without a sharedTmpBuffer are compile-time
// errors naming the API; isReuseSource and isBasicBlock change nothing.
#pragma once
#include <cstdint>

#include "kernel_tiling/kernel_tiling.h"
#include "sfumato_ascendc/adv_common.h"
#include "sfumato_ascendc/adv_rows.h"
#include "sfumato_ascendc/core_state.h"
#include "sfumato_ascendc/sync.h"
#include "sfumato_ascendc/unsupported.h"

namespace AscendC {

struct SoftMaxShapeInfo {
    uint32_t srcM = 0;
    uint32_t srcK = 0;
    uint32_t oriSrcM = 0;
    uint32_t oriSrcK = 0;
};

enum class SoftmaxMode { SOFTMAX_NORMAL = 0, SOFTMAX_OUTPUT_WITHOUT_BRC = 1 };
struct SoftmaxConfig {
    constexpr SoftmaxConfig() = default;
    constexpr SoftmaxConfig(bool isCheckTilingIn, uint32_t oriSrcMIn = 0, uint32_t oriSrcKIn = 0,
                            SoftmaxMode modeIn = SoftmaxMode::SOFTMAX_NORMAL)
        : isCheckTiling(isCheckTilingIn), oriSrcM(oriSrcMIn), oriSrcK(oriSrcKIn), mode(modeIn) {}
    bool isCheckTiling = true;
    uint32_t oriSrcM = 0;
    uint32_t oriSrcK = 0;
    SoftmaxMode mode = SoftmaxMode::SOFTMAX_NORMAL;
};
constexpr SoftmaxConfig SOFTMAX_DEFAULT_CFG = {true, 0, 0, SoftmaxMode::SOFTMAX_NORMAL};

namespace sfumato_adv {

struct RowShape {
    uint32_t m, k, valid;
};

inline RowShape row_shape(const char* api, const SoftMaxShapeInfo& si, uint32_t src_size) {
    RowShape r{si.srcM, si.srcK, si.oriSrcK ? si.oriSrcK : si.srcK};
    if (r.k == 0 && r.m == 0)
        sfumato::ascendc::fail(std::string(api) + ": SoftMaxShapeInfo is empty (srcM, srcK 0)");
    check_shape(api, r.m, r.k, r.valid);
    if (uint64_t{r.m} * r.k > src_size)
        sfumato::ascendc::fail(std::string(api) + ": shape [" + std::to_string(r.m) + ", " +
                               std::to_string(r.k) + "] exceeds the source tensor's " +
                               std::to_string(src_size) + " elements");
    return r;
}

inline uint32_t slice_rows(const char* api, const LocalTensor<uint8_t>& tmp, uint32_t m) {
    const uint32_t s = rows_fitting(tmp.GetSize(), m);
    if (s == 0)
        sfumato::ascendc::fail(std::string(api) + ": sharedTmpBuffer of " + std::to_string(tmp.GetSize()) +
                               " bytes is below the minimum (" + std::to_string(slice_bytes(1)) +
                               " bytes: use the API's Get...MinTmpSize)");
    return s;
}

template <class T>
constexpr void require_float() {
    static_assert(
        sfumato_unsupported::always_false<T> || std::is_same_v<T, float>,
        "the softmax APIs of sfumato's Ascend C layer support float tensors only (half is not supported)");
}

enum class Post { DIV, NONE, LOG10 };

// dst = exp(src - rowmax) [/ rowsum | log10 of that], max/sum written as [m, 8] blocks.
template <Post P>
void softmax_rows(const char* api, const LocalTensor<float>& dst, const LocalTensor<float>& sum,
                  const LocalTensor<float>& max, const LocalTensor<float>& src,
                  const LocalTensor<uint8_t>& tmp, const SoftMaxShapeInfo& si) {
    const RowShape r = row_shape(api, si, src.GetSize());
    const uint32_t step = slice_rows(api, tmp, r.m);
    for (uint32_t r0 = 0; r0 < r.m; r0 += step) {
        const uint32_t n = std::min(step, r.m - r0);
        const Scratch s = carve(tmp, n);
        const LocalTensor<float> x = src[r0 * r.k], y = dst[r0 * r.k];
        row_reduce<Fold::MAX>(s, x, n, r.k, r.valid);
        broadcast_rows(s, n);
        copy(max[r0 * kBlkFloats], s.blk, n * kBlkFloats);
        row_broadcast<Bin::SUB>(y, x, s.blk, n, r.k, r.valid);
        Exp(y, y, static_cast<int32_t>(n * r.k));
        row_reduce<Fold::SUM>(s, y, n, r.k, r.valid);
        broadcast_rows(s, n);
        copy(sum[r0 * kBlkFloats], s.blk, n * kBlkFloats);
        if constexpr (P != Post::NONE) row_broadcast<Bin::DIV>(y, y, s.blk, n, r.k, r.valid);
        if constexpr (P == Post::LOG10) {
            Ln(y, y, static_cast<int32_t>(n * r.k));
            Muls(y, y, 0.43429448190325176f, static_cast<int32_t>(n * r.k));  // 1 / ln(10)
        }
    }
}

}  // namespace sfumato_adv

template <class T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor,
             const LocalTensor<T>& maxTensor, const LocalTensor<T>& srcTensor,
             const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
             const SoftMaxShapeInfo& softmaxShapeInfo = {}) {
    sfumato_adv::require_float<T>();
    static_assert(!isDataFormatNZ,
                  "AscendC::SoftMax in NZ format is not supported by sfumato's Ascend C layer");
    (void)tiling;
    sfumato::ascendc::enter("SoftMax");
    sfumato_adv::softmax_rows<sfumato_adv::Post::DIV>("SoftMax", dstTensor, sumTensor, maxTensor, srcTensor,
                                                      sharedTmpBuffer, softmaxShapeInfo);
}

template <class T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
void SoftMax(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<T>&,
             const SoftMaxTiling&, const SoftMaxShapeInfo& = {}) {
    static_assert(
        sfumato_unsupported::always_false<T>,
        "AscendC::SoftMax without a sharedTmpBuffer is not supported by sfumato's Ascend C layer (pass one "
        "of GetSoftMaxMinTmpSize bytes)");
}

// dst = exp(src - inMax) / inSum with the caller's [m, 8] max and sum.
template <class T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
void SimpleSoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& inSumTensor,
                   const LocalTensor<T>& inMaxTensor, const LocalTensor<T>& srcTensor,
                   const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
                   const SoftMaxShapeInfo& softmaxShapeInfo = {}) {
    sfumato_adv::require_float<T>();
    static_assert(!isDataFormatNZ,
                  "AscendC::SimpleSoftMax in NZ format is not supported by sfumato's Ascend C layer");
    (void)tiling, (void)sharedTmpBuffer;
    sfumato::ascendc::enter("SimpleSoftMax");
    namespace sa = sfumato_adv;
    const sa::RowShape r = sa::row_shape("SimpleSoftMax", softmaxShapeInfo, srcTensor.GetSize());
    for (uint32_t r0 = 0; r0 < r.m; r0 += sa::kMaxRepeat) {
        const uint32_t n = std::min(sa::kMaxRepeat, r.m - r0);
        const LocalTensor<float> y = dstTensor[r0 * r.k];
        sa::row_broadcast<sa::Bin::SUB>(y, srcTensor[r0 * r.k], inMaxTensor[r0 * sa::kBlkFloats], n, r.k,
                                        r.valid);
        Exp(y, y, static_cast<int32_t>(n * r.k));
        sa::row_broadcast<sa::Bin::DIV>(y, y, inSumTensor[r0 * sa::kBlkFloats], n, r.k, r.valid);
    }
}

template <class T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
void SimpleSoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& inSumTensor,
                   const LocalTensor<T>& inMaxTensor, const LocalTensor<T>& srcTensor,
                   const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}) {
    SimpleSoftMax<T, isReuseSource, isBasicBlock, isDataFormatNZ, config>(
        dstTensor, inSumTensor, inMaxTensor, srcTensor, LocalTensor<uint8_t>(), tiling, softmaxShapeInfo);
}

// dst = log10(softmax(src)) (the reference's LogSoftMax), max and sum as SoftMax writes them.
template <class T, bool isReuseSource = false, bool isDataFormatNZ = false>
void LogSoftMax(const LocalTensor<T>& dst, const LocalTensor<T>& sumTensor, const LocalTensor<T>& maxTensor,
                const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer,
                const LogSoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}) {
    sfumato_adv::require_float<T>();
    static_assert(!isDataFormatNZ,
                  "AscendC::LogSoftMax in NZ format is not supported by sfumato's Ascend C layer");
    (void)tiling;
    sfumato::ascendc::enter("LogSoftMax");
    sfumato_adv::softmax_rows<sfumato_adv::Post::LOG10>("LogSoftMax", dst, sumTensor, maxTensor, src,
                                                        sharedTmpBuffer, softmaxShapeInfo);
}

}  // namespace AscendC
