// SoftmaxFlashV2 (the FlashAttention-2 update), SoftmaxGrad/SoftmaxGradFront and AdjustSoftMaxRes,
// over the same row helpers as SoftMax (softmax.h). float, ND, with a sharedTmpBuffer.
#pragma once
#include <cstdint>
#include <cstring>

#include "sfumato_ascendc/softmax.h"

namespace AscendC {

namespace sfumato_adv {

// Per slice of rows: m' = max(inMax, rowmax(x)); dst = exp(x - m'); expMax = exp(inMax - m');
// sum' = expMax * inSum + rowsum(dst) (without update: m' = rowmax(x), sum' = rowsum(dst)).
template <bool isUpdate>
void flash_v2_rows(const LocalTensor<float>& dst, const LocalTensor<float>& sum,
                   const LocalTensor<float>& max, const LocalTensor<float>& src,
                   const LocalTensor<float>& expMax, const LocalTensor<float>& inSum,
                   const LocalTensor<float>& inMax, const LocalTensor<uint8_t>& tmp,
                   const SoftMaxShapeInfo& si) {
    const RowShape r = row_shape("SoftmaxFlashV2", si, src.GetSize());
    const uint32_t step = slice_rows("SoftmaxFlashV2", tmp, r.m);
    for (uint32_t r0 = 0; r0 < r.m; r0 += step) {
        const uint32_t n = std::min(step, r.m - r0);
        const int32_t nb = static_cast<int32_t>(n * kBlkFloats);
        const uint32_t b0 = r0 * kBlkFloats;
        const Scratch s = carve(tmp, n);
        const LocalTensor<float> x = src[r0 * r.k], y = dst[r0 * r.k];
        row_reduce<Fold::MAX>(s, x, n, r.k, r.valid);
        broadcast_rows(s, n);
        if constexpr (isUpdate) {
            Max(s.blk, s.blk, inMax[b0], nb);
            Sub(expMax[b0], inMax[b0], s.blk, nb);
            Exp(expMax[b0], expMax[b0], nb);
        }
        copy(max[b0], s.blk, n * kBlkFloats);
        row_broadcast<Bin::SUB>(y, x, s.blk, n, r.k, r.valid);
        Exp(y, y, static_cast<int32_t>(n * r.k));
        row_reduce<Fold::SUM>(s, y, n, r.k, r.valid);
        broadcast_rows(s, n);
        if constexpr (isUpdate) {
            Mul(sum[b0], expMax[b0], inSum[b0], nb);
            Add(sum[b0], sum[b0], s.blk, nb);
        } else {
            copy(sum[b0], s.blk, n * kBlkFloats);
        }
    }
}

// dst = (grad - blk) * src, a chunk at a time through the fold area (dst may be src or grad).
inline void grad_rows(const Scratch& s, const LocalTensor<float>& dst, const LocalTensor<float>& grad,
                      const LocalTensor<float>& src, uint32_t rows, uint32_t k, uint32_t valid) {
    const uint32_t chunks = (valid + kLanes - 1) / kLanes;
    const bool together = k / kBlkFloats <= kMaxRepeat;
    const uint8_t rs = static_cast<uint8_t>(together ? k / kBlkFloats : 8);
    for (uint32_t r = 0; r < (together ? 1u : rows); ++r) {
        const uint8_t rep = static_cast<uint8_t>(together ? rows : 1);
        const LocalTensor<float> f = s.fold[r * kLanes], b = s.blk[r * kBlkFloats];
        for (uint32_t c = 0; c < chunks; ++c) {
            const uint64_t mask = std::min<uint64_t>(kLanes, valid - c * kLanes);
            const uint32_t o = r * k + c * kLanes;
            Sub(f, grad[o], b, mask, rep, BinaryRepeatParams{1, 1, 0, 8, rs, 1});
            Mul(dst[o], f, src[o], mask, rep, BinaryRepeatParams{1, 1, 1, rs, 8, rs});
        }
    }
}

template <bool front>
void softmax_grad_rows(const char* api, const LocalTensor<float>& dst, const LocalTensor<float>& grad,
                       const LocalTensor<float>& src, const LocalTensor<uint8_t>& tmp,
                       const SoftMaxShapeInfo& si) {
    const RowShape r = row_shape(api, si, src.GetSize());
    const uint32_t step = slice_rows(api, tmp, r.m);
    for (uint32_t r0 = 0; r0 < r.m; r0 += step) {
        const uint32_t n = std::min(step, r.m - r0);
        const Scratch s = carve(tmp, n);
        row_dot(s, grad[r0 * r.k], src[r0 * r.k], n, r.k, r.valid);
        broadcast_rows(s, n);
        if constexpr (front)
            copy(dst[r0 * kBlkFloats], s.blk, n * kBlkFloats);
        else
            grad_rows(s, dst[r0 * r.k], grad[r0 * r.k], src[r0 * r.k], n, r.k, r.valid);
    }
}

}  // namespace sfumato_adv

template <class T, bool isUpdate = false, bool isReuseSource = false, bool isBasicBlock = false,
          bool isDataFormatNZ = false, const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
void SoftmaxFlashV2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& expSumTensor,
                    const LocalTensor<T>& maxTensor, const LocalTensor<T>& srcTensor,
                    const LocalTensor<T>& expMaxTensor, const LocalTensor<T>& inExpSumTensor,
                    const LocalTensor<T>& inMaxTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                    const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}) {
    sfumato_adv::require_float<T>();
    static_assert(!isDataFormatNZ,
                  "AscendC::SoftmaxFlashV2 in NZ format is not supported by sfumato's Ascend C layer");
    (void)tiling;
    sfumato::ascendc::enter("SoftmaxFlashV2");
    sfumato_adv::flash_v2_rows<isUpdate>(dstTensor, expSumTensor, maxTensor, srcTensor, expMaxTensor,
                                         inExpSumTensor, inMaxTensor, sharedTmpBuffer, softmaxShapeInfo);
}

template <class T, bool isUpdate = false, bool isReuseSource = false, bool isBasicBlock = false,
          bool isDataFormatNZ = false, const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
void SoftmaxFlashV2(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<T>&,
                    const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<T>&,
                    const LocalTensor<T>&, const SoftMaxTiling&, const SoftMaxShapeInfo& = {}) {
    static_assert(
        sfumato_unsupported::always_false<T>,
        "AscendC::SoftmaxFlashV2 without a sharedTmpBuffer is not supported by sfumato's Ascend C layer");
}

// dst = (grad - rowsum(grad * src)) * src, or with isFront the row sums as [m, 8] blocks.
template <class T, bool isReuseSource = false, bool isDataFormatNZ = false>
void SoftmaxGrad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor,
                 const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                 const SoftMaxTiling& tiling, bool isFront = false,
                 const SoftMaxShapeInfo& softmaxShapeInfo = {}) {
    sfumato_adv::require_float<T>();
    static_assert(!isDataFormatNZ,
                  "AscendC::SoftmaxGrad in NZ format is not supported by sfumato's Ascend C layer");
    (void)tiling;
    sfumato::ascendc::enter("SoftmaxGrad");
    if (isFront)
        sfumato_adv::softmax_grad_rows<true>("SoftmaxGrad", dstTensor, gradTensor, srcTensor, sharedTmpBuffer,
                                             softmaxShapeInfo);
    else
        sfumato_adv::softmax_grad_rows<false>("SoftmaxGrad", dstTensor, gradTensor, srcTensor,
                                              sharedTmpBuffer, softmaxShapeInfo);
}

template <class T, bool isBasicBlock = false, bool isDataFormatNZ = false>
void SoftmaxGradFront(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor,
                      const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                      const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}) {
    sfumato_adv::require_float<T>();
    static_assert(!isDataFormatNZ,
                  "AscendC::SoftmaxGradFront in NZ format is not supported by sfumato's Ascend C layer");
    (void)tiling;
    sfumato::ascendc::enter("SoftmaxGradFront");
    sfumato_adv::softmax_grad_rows<true>("SoftmaxGradFront", dstTensor, gradTensor, srcTensor,
                                         sharedTmpBuffer, softmaxShapeInfo);
}

// Rows whose max (first value of its block) has the bit pattern `from` get `to` everywhere; true if
// any did. The scalar unit reads the max values once every pipe drained (a barrier), as a scalar
// read of UB must wait for the vector pipe; in timing mode (no data) they read 0.
template <class T1, class T2, bool isDataFormatNZ = false, uint8_t stepSizeMode = 0>
bool AdjustSoftMaxRes(const LocalTensor<T1>& softMaxRes, const LocalTensor<T2>& maxTensor,
                      const uint32_t from, const T1 to, const SoftMaxShapeInfo& softmaxShapeInfo) {
    static_assert(!isDataFormatNZ,
                  "AscendC::AdjustSoftMaxRes in NZ format is not supported by sfumato's Ascend C layer");
    static_assert(sizeof(T2) == 4 || sizeof(T2) == 2, "AdjustSoftMaxRes: max of float or half");
    sfumato::ascendc::enter("AdjustSoftMaxRes");
    const uint32_t m = softmaxShapeInfo.srcM, k = softmaxShapeInfo.srcK;
    const uint32_t per_row = stepSizeMode ? 1u : 32u / static_cast<uint32_t>(sizeof(T2));
    if (uint64_t{m} * k > softMaxRes.GetSize() || uint64_t{m} * per_row > maxTensor.GetSize())
        sfumato::ascendc::fail("AdjustSoftMaxRes: shape [" + std::to_string(m) + ", " + std::to_string(k) +
                               "] exceeds its tensors");
    PipeBarrier<PIPE_ALL>();
    bool any = false;
    for (uint32_t r = 0; r < m; ++r) {
        const T2 v = maxTensor.GetValue(r * per_row);
        uint32_t bits = 0;
        std::memcpy(&bits, &v, sizeof(T2));
        if (bits != from) continue;
        any = true;
        Duplicate(softMaxRes[r * k], to, static_cast<int32_t>(k));
    }
    return any;
}

}  // namespace AscendC
