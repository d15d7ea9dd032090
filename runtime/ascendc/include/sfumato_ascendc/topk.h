// The advanced API's TopK (Atlas A2 forms TOPK_NORMAL and TOPK_NSMALL, which sfumato runs the same way)
// over the basic layer: per row of srcValue [outter, inner] (inner a multiple of 32, the first n valid):
// the scores (negated with Muls for the k smallest; the inner - n padding columns set to the type's lowest
// value with a masked Duplicate, so no sort picks them while k <= n), the indices (CreateVecIndex, or the caller's with
// isInitIndex), one Sort32 and the MrgSort rounds of the advanced Sort (sort_adv.h), then the first k
// values and indices out of the structures with GatherMask in counter mode (patterns 1 and 2), values
// negated back for the smallest. dstValue rows are kPad = k rounded up to 32 bytes apart (dstIndex the
// same for the index type); only the first k of each row are written. With isHasfinish, a row whose
// finish flag is true gets the index n for each of its k (the flag is read by the scalar unit after a
// barrier of every pipe; the Duplicate is issued for every row, into a scratch row when the flag is
// false, so timing mode, which reads every flag as false, takes the same cycles).
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>

#include "kernel_tiling/kernel_tiling.h"
#include "sfumato_ascendc/adv_common.h"
#include "sfumato_ascendc/sort_adv.h"
#include "sfumato_ascendc/stack_buffer.h"
#include "sfumato_ascendc/sync.h"

namespace AscendC {

struct TopKInfo {
    int32_t outter = 1;
    int32_t inner = 32;
    int32_t n = 32;
};

template <class T, bool isInitIndex = false, bool isHasfinish = false, bool isReuseSrc = false,
          enum TopKMode topkMode = TopKMode::TOPK_NORMAL>
void TopK(const LocalTensor<T>& dstValueLocal, const LocalTensor<int32_t>& dstIndexLocal,
          const LocalTensor<T>& srcValueLocal, const LocalTensor<int32_t>& srcIndexLocal,
          const LocalTensor<bool>& finishLocal, const LocalTensor<uint8_t>& tmpLocal, const int32_t k,
          const TopkTiling& tilling, const TopKInfo& topKInfo, const bool isLargest = true) {
    static_assert(std::is_same_v<T, half> || std::is_same_v<T, float> || sfumato_unsupported::always_false<T>,
                  "AscendC::TopK takes half or float values");
    (void)tilling;
    sfumato::ascendc::enter("TopK");
    const uint32_t outter = static_cast<uint32_t>(topKInfo.outter),
                   inner = static_cast<uint32_t>(topKInfo.inner);
    const uint32_t kk = static_cast<uint32_t>(k);
    constexpr uint32_t blk = 32 / sizeof(T);
    const uint32_t kpad = (kk + blk - 1) / blk * blk, kpad_i = (kk + 7) / 8 * 8;
    const uint32_t valid = static_cast<uint32_t>(topKInfo.n);
    if (topKInfo.outter <= 0 || topKInfo.inner <= 0 || inner % 32 != 0 || topKInfo.n <= 0 || valid > inner ||
        k <= 0 || kk > valid || uint64_t{outter} * inner > srcValueLocal.GetSize() ||
        uint64_t{outter} * kpad > dstValueLocal.GetSize() ||
        uint64_t{outter} * kpad_i > dstIndexLocal.GetSize())
        sfumato::ascendc::fail(
            "TopK: outter " + std::to_string(topKInfo.outter) + ", inner " + std::to_string(topKInfo.inner) +
            ", n " + std::to_string(topKInfo.n) + ", k " + std::to_string(k) +
            " (inner a multiple of 32, 0 < n <= inner, 0 < k <= n, the tensors large enough)");
    if (tmpLocal.GetSize() < sfumato_topk::row_bytes(inner, kk))
        sfumato::ascendc::fail("TopK: tmpLocal of " + std::to_string(tmpLocal.GetSize()) +
                               " bytes, a row needs " + std::to_string(sfumato_topk::row_bytes(inner, kk)) +
                               " (GetTopKMaxMinTmpSize)");
    LocalTensor<T> score = tmpLocal.ReinterpretCast<T>();
    const LocalTensor<uint32_t> index = tmpLocal[inner * 4].ReinterpretCast<uint32_t>();
    LocalTensor<T> sortA = tmpLocal[inner * 8].ReinterpretCast<T>(),
                   sortB = tmpLocal[inner * 16].ReinterpretCast<T>();
    const LocalTensor<int32_t> spare = tmpLocal[inner * 24].ReinterpretCast<int32_t>();
    const int32_t blocks = static_cast<int32_t>(inner / 32);
    if constexpr (!isInitIndex) CreateVecIndex(index.ReinterpretCast<int32_t>(), 0, inner);
    for (uint32_t r = 0; r < outter; ++r) {
        Muls(score, srcValueLocal[r * inner], static_cast<T>(isLargest ? 1.0f : -1.0f),
             static_cast<int32_t>(inner));
        if (valid < inner) {  // the padding columns: the lowest value (a masked Duplicate per repeat)
            constexpr uint32_t lanes = 256 / sizeof(T);
            const T lowest = static_cast<T>(std::is_same_v<T, float> ? -3.4028234663852886e38f : -65504.0f);
            for (uint32_t c = valid / blk * blk; c < inner; c += lanes) {
                uint64_t m[2] = {0, 0};
                for (uint32_t l = 0; l < lanes && c + l < inner; ++l)
                    if (c + l >= valid) m[l / 64] |= uint64_t{1} << (l % 64);
                Duplicate(score[c], lowest, m, 1, 1, 8);
            }
        }
        const LocalTensor<uint32_t> idx = isInitIndex ? srcIndexLocal.ReinterpretCast<uint32_t>()
                                                      : index;  // the caller's: one row of inner
        Sort<T, true>(sortA, score, idx, sortB, blocks);
        uint64_t cnt = 0;
        const GatherMaskParams p(1, 1, 8, 0);
        GatherMask(dstValueLocal[r * kpad], sortA, static_cast<uint8_t>(sizeof(T) == 4 ? 1 : 3), true,
                   (sizeof(T) == 4 ? 2u : 4u) * kk, p, cnt);
        GatherMask(dstIndexLocal[r * kpad_i].ReinterpretCast<uint32_t>(),
                   sortA.template ReinterpretCast<uint32_t>(), static_cast<uint8_t>(2), true, 2u * kk, p,
                   cnt);
        if (!isLargest)
            Muls(dstValueLocal[r * kpad], dstValueLocal[r * kpad], static_cast<T>(-1.0f),
                 static_cast<int32_t>(kk));
        if constexpr (isHasfinish) {
            PipeBarrier<PIPE_ALL>();
            const bool done = finishLocal.GetValue(r);
            Duplicate(done ? dstIndexLocal[r * kpad_i] : spare, topKInfo.n, static_cast<int32_t>(kk));
        }
    }
}

template <class T, bool isInitIndex = false, bool isHasfinish = false, bool isReuseSrc = false,
          enum TopKMode topkMode = TopKMode::TOPK_NORMAL>
void TopK(const LocalTensor<T>& dstValueLocal, const LocalTensor<int32_t>& dstIndexLocal,
          const LocalTensor<T>& srcValueLocal, const LocalTensor<int32_t>& srcIndexLocal,
          const LocalTensor<bool>& finishLocal, const int32_t k, const TopkTiling& tilling,
          const TopKInfo& topKInfo, const bool isLargest = true) {
    LocalTensor<uint8_t> tmp;
    if (!PopStackBuffer<uint8_t, TPosition::LCM>(tmp))
        sfumato::ascendc::fail("TopK: no UB left for its scratch (the TPipe took it all)");
    TopK<T, isInitIndex, isHasfinish, isReuseSrc, topkMode>(dstValueLocal, dstIndexLocal, srcValueLocal,
                                                            srcIndexLocal, finishLocal, tmp, k, tilling,
                                                            topKInfo, isLargest);
}

}  // namespace AscendC
