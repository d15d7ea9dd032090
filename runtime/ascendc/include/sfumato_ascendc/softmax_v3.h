// SoftmaxFlashV3 (the FlashAttention-3 softmax update; T half in and out, U float statistics, ND), over the
// basic layer's vector calls (its cycles are the model's). For rows of K columns (K a multiple of 512, split
// into splitMeanCnt = 8 parts of baseK = K / 8), computed in float:
//   local_j: the 8 partial means. The row is folded onto 64 lanes (lane l: the 8 elements of the row's l-th
//     32-byte block among the first 512, plus lane l of every later 64-column chunk: one BlockReduceSum and
//     one Add a chunk), and local_j is the sum of lanes 8j .. 8j+7 (a second BlockReduceSum) over baseK;
//   global = the mean of the local_j; x -= (global - local_j) * a / (1 - a) over columns [j baseK, (j+1) baseK);
//   mean = global, or with isUpdate (global + inMean (loopCnt - 1)) / loopCnt;
//   shiftCurr = (global - mean) a / (1 - a); max = rowmax(x) + shiftCurr, or with isUpdate
//   max(rowmax(x) + shiftCurr, inMax + shiftPrev), shiftPrev = (inMean - mean) a / (1 - a);
//   y = exp(x - (max - shiftCurr)), sum = rowsum(y) (isUpdate: + expMax inSum, expMax = exp(inMax - max +
//   shiftPrev)).
// (The partial means and the columns they shift group the row differently: the formula of the vendor's golden
// data for its example, which the reference's description leaves open.) mean, sum and max are [m, 8] (a
// 32-byte block a row), expMax [m, 16] of half (its first 8 written). The outputs may be the inputs (all
// inputs are read before any output is written). Scratch: the float copy of src and a few [m, 8] vectors,
// from the sharedTmpBuffer or the free UB. Simplified: NZ, isBasicBlock and rows over 255 are not
// modelled (a message names the API).
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>

#include "sfumato_ascendc/adv_rows.h"
#include "sfumato_ascendc/core_state.h"
#include "sfumato_ascendc/softmax.h"
#include "sfumato_ascendc/stack_buffer.h"
#include "sfumato_ascendc/unsupported.h"
#include "sfumato_ascendc/vector.h"

namespace AscendC {

struct SoftMaxParams {
    uint32_t srcM{0};
    uint32_t srcK{0};
    uint32_t oriSrcM{0};
    uint32_t oriSrcK{0};
    uint32_t loopCnt{1};
    uint32_t splitMeanCnt{8};
    float alpha{0.9375};
};

template <class T, class U, bool isUpdate = false, bool isReuseSource = false, bool isBasicBlock = false,
          bool isDataFormatNZ = false, const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
void SoftmaxFlashV3(const LocalTensor<T>& dstTensor, const LocalTensor<U>& meanTensor,
                    const LocalTensor<U>& expSumTensor, const LocalTensor<U>& maxTensor,
                    const LocalTensor<T>& srcTensor, const LocalTensor<T>& expMaxTensor,
                    const LocalTensor<U>& inMeanTensor, const LocalTensor<U>& inExpSumTensor,
                    const LocalTensor<U>& inMaxTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                    const SoftMaxTiling& tiling, const SoftMaxParams& params) {
    static_assert(std::is_same_v<T, half> && std::is_same_v<U, float>,
                  "AscendC::SoftmaxFlashV3 takes half data and float statistics");
    static_assert(!isDataFormatNZ,
                  "AscendC::SoftmaxFlashV3 in NZ format is not supported by sfumato's Ascend C layer");
    (void)tiling;
    namespace sa = sfumato_adv;
    sfumato::ascendc::enter("SoftmaxFlashV3");
    const uint32_t m = params.srcM, K = params.srcK;
    if (m == 0 || m > 255 || K < 512 || K % 512 != 0 || params.splitMeanCnt != 8 || params.loopCnt == 0 ||
        params.alpha >= 1.0f)
        sfumato::ascendc::fail("SoftmaxFlashV3: srcM " + std::to_string(m) + ", srcK " + std::to_string(K) +
                               ", splitMeanCnt " + std::to_string(params.splitMeanCnt) + ", loopCnt " +
                               std::to_string(params.loopCnt) +
                               " (1..255 rows of a multiple of 512 columns, 8 parts, loopCnt > 0, alpha < 1)");
    sfumato::ascendc::count_of(uint64_t{m} * K, dstTensor, srcTensor);
    sfumato::ascendc::count_of(uint64_t{m} * 8, meanTensor, expSumTensor, maxTensor, inMeanTensor, inExpSumTensor,
                               inMaxTensor);
    LocalTensor<uint8_t> t = sharedTmpBuffer;
    if (!t.valid() || t.GetSize() == 0) {
        if (!PopStackBuffer<uint8_t, TPosition::LCM>(t))
            sfumato::ascendc::fail("SoftmaxFlashV3: no sharedTmpBuffer and no TPipe to take the scratch from");
    }
    const uint32_t m8 = sa::align8(m) * 8;  // floats of an [m, 8] vector, whole repeats of rows
    const uint64_t need = uint64_t{m} * K * 4 + uint64_t{m} * 64 * 4 + 9ull * m8 * 4 + sa::slice_bytes(m);
    if (t.GetSize() < need)
        sfumato::ascendc::fail("SoftmaxFlashV3: the scratch holds " + std::to_string(t.GetSize()) + " bytes, " +
                               std::to_string(need) + " needed (a float copy of src and the row statistics)");
    const LocalTensor<float> f = t.ReinterpretCast<float>();
    const LocalTensor<float> x = f, fold = f[m * K], local = fold[m * 64], gBlk = local[m8], mean = gBlk[m8],
                             shiftCurr = mean[m8], shiftPrev = shiftCurr[m8], mx = shiftPrev[m8], em = mx[m8],
                             blk = em[m8], red = blk[m8];
    const sa::Scratch rs = sa::carve(t[static_cast<uint32_t>((uint64_t{m} * K + m * 64 + 9ull * m8) * 4)], m);
    const float scalar = params.alpha / (1.0f - params.alpha);
    const int32_t n8 = static_cast<int32_t>(m * 8);
    Cast(x, srcTensor, RoundMode::CAST_NONE, m * K);
    // the partial means: fold each row onto 64 lanes, then sum lanes in blocks of 8
    for (uint32_t r = 0; r < m; ++r) {
        BlockReduceSum(fold[r * 64], x[r * K], 8, static_cast<uint64_t>(64), 1, 1, 8);
        for (uint32_t c = 512; c < K; c += 64) Add(fold[r * 64], fold[r * 64], x[r * K + c], 64);
    }
    BlockReduceSum(local, fold, static_cast<int32_t>(m), static_cast<uint64_t>(64), 1, 1, 8);
    Muls(local, local, 8.0f / static_cast<float>(K), n8);
    // the global mean, a block a row
    WholeReduceSum(red, local, static_cast<uint64_t>(8), static_cast<int32_t>(m), 1, 1, 1);
    Muls(red, red, 0.125f, static_cast<int32_t>(m));
    Brcb(gBlk, red, static_cast<uint8_t>(sa::align8(m) / 8), BrcbRepeatParams{1, 8});
    // x -= (global - local_j) * a / (1 - a) over the j-th baseK columns
    Sub(local, gBlk, local, n8);
    Muls(local, local, scalar, n8);
    Brcb(fold, local, static_cast<uint8_t>(m), BrcbRepeatParams{1, 8});  // a block per (row, part)
    const uint32_t baseK = K / 8;
    for (uint32_t r = 0; r < m; ++r)
        for (uint32_t j = 0; j < 8; ++j)
            Sub(x[r * K + j * baseK], x[r * K + j * baseK], fold[(r * 8 + j) * 8], static_cast<uint64_t>(64),
                static_cast<uint8_t>(baseK / 64), BinaryRepeatParams{1, 1, 0, 8, 8, 0});
    // the mean and the shifts
    if constexpr (isUpdate) {
        const float c = static_cast<float>(params.loopCnt);
        Muls(mean, inMeanTensor, c - 1.0f, n8);
        Add(mean, mean, gBlk, n8);
        Muls(mean, mean, 1.0f / c, n8);
        Sub(shiftPrev, inMeanTensor, mean, n8);
        Muls(shiftPrev, shiftPrev, scalar, n8);
    } else {
        Muls(mean, gBlk, 1.0f, n8);
    }
    Sub(shiftCurr, gBlk, mean, n8);
    Muls(shiftCurr, shiftCurr, scalar, n8);
    // the max
    sa::row_reduce<sa::Fold::MAX>(rs, x, m, K, K);
    Brcb(mx, rs.red, static_cast<uint8_t>(sa::align8(m) / 8), BrcbRepeatParams{1, 8});
    Add(mx, mx, shiftCurr, n8);
    if constexpr (isUpdate) {
        Add(blk, inMaxTensor, shiftPrev, n8);
        Max(mx, mx, blk, n8);
        Sub(em, inMaxTensor, mx, n8);  // expMax = exp(inMax - max + shiftPrev)
        Add(em, em, shiftPrev, n8);
        Exp(em, em, n8);
    }
    // y = exp(x - (max - shiftCurr))
    Sub(blk, mx, shiftCurr, n8);
    for (uint32_t r = 0; r < m; ++r)
        for (uint32_t c0 = 0; c0 < K / 64; c0 += 255)
            Sub(x[r * K + c0 * 64], x[r * K + c0 * 64], blk[r * 8], static_cast<uint64_t>(64),
                static_cast<uint8_t>(std::min(255u, K / 64 - c0)), BinaryRepeatParams{1, 1, 0, 8, 8, 0});
    Exp(x, x, static_cast<int32_t>(m * K));
    sa::row_reduce<sa::Fold::SUM>(rs, x, m, K, K);
    Brcb(fold, rs.red, static_cast<uint8_t>(sa::align8(m) / 8), BrcbRepeatParams{1, 8});
    // the outputs (every input has been read)
    if constexpr (isUpdate) {
        Mul(blk, em, inExpSumTensor, n8);
        Add(expSumTensor, blk, fold, n8);
        Cast(expMaxTensor, em, RoundMode::CAST_RINT, static_cast<uint64_t>(8), static_cast<uint8_t>(m),
             UnaryRepeatParams{1, 1, 1, 1});
    } else {
        Muls(expSumTensor, fold, 1.0f, n8);
    }
    Muls(meanTensor, mean, 1.0f, n8);
    Muls(maxTensor, mx, 1.0f, n8);
    Cast(dstTensor, x, RoundMode::CAST_RINT, m * K);
}
template <class T, class U, bool isUpdate = false, bool isReuseSource = false, bool isBasicBlock = false,
          bool isDataFormatNZ = false, const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
void SoftmaxFlashV3(const LocalTensor<T>& dstTensor, const LocalTensor<U>& meanTensor,
                    const LocalTensor<U>& expSumTensor, const LocalTensor<U>& maxTensor,
                    const LocalTensor<T>& srcTensor, const LocalTensor<T>& expMaxTensor,
                    const LocalTensor<U>& inMeanTensor, const LocalTensor<U>& inExpSumTensor,
                    const LocalTensor<U>& inMaxTensor, const SoftMaxTiling& tiling, const SoftMaxParams& params) {
    SoftmaxFlashV3<T, U, isUpdate, isReuseSource, isBasicBlock, isDataFormatNZ, config>(
        dstTensor, meanTensor, expSumTensor, maxTensor, srcTensor, expMaxTensor, inMeanTensor, inExpSumTensor,
        inMaxTensor, LocalTensor<uint8_t>(), tiling, params);
}

}  // namespace AscendC
