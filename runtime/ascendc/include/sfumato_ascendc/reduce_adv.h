// The advanced API's reductions over a 2-D tensor: Sum and Mean (each row's first n elements), and
// ReduceSum/ReduceMean/ReduceMax/ReduceMin with the patterns AR (one result per row) and RA (one result
// per column), half or float, written with the basic layer's vector calls so their cycles are the
// model's:
//  - a row reduction folds each row onto one repeat (the first 256 bytes): one instruction per
//    256 bytes of row for a slice of up to 255 rows together (a repeat per row), then one whole
//    reduction (WholeReduceSum/Max/Min) per slice writing one value per row. The fold lives in the
//    sharedTmpBuffer (256 bytes a row; a slice is what it holds, a multiple of one block of results),
//    or with isReuseSource in the source rows themselves (no scratch).
//  - a column reduction (RA) copies the first row to dst and combines every further row into it, one
//    count-form instruction per row; no scratch.
// Rows must be whole 32-byte blocks (srcInnerPad, or an inner length that is one); ReduceProd,
// ReduceAny, ReduceAll and the patterns with three or more axes are compile-time errors.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "sfumato_ascendc/core_state.h"
#include "sfumato_ascendc/stack_buffer.h"
#include "sfumato_ascendc/tensor.h"
#include "sfumato_ascendc/unsupported.h"
#include "sfumato_ascendc/vector.h"

namespace AscendC {

struct SumParams {
    uint32_t outter = 1;
    uint32_t inner = 0;  // n rounded up to 32 bytes
    uint32_t n = 0;      // the elements of a row that are summed
};
struct MeanParams {
    uint32_t outter = 1;
    uint32_t inner = 0;
    uint32_t n = 0;
};

namespace Pattern::Reduce {
struct R {};
struct AR {};
struct RA {};
struct ARA {};
struct RAR {};
struct ARAR {};
struct RARA {};
}  // namespace Pattern::Reduce

namespace sfumato_reduce {

enum class Op { SUM, MAX, MIN };

template <class T>
constexpr void require_float() {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, half> || sfumato_unsupported::always_false<T>,
                  "the advanced reductions of sfumato's Ascend C layer take half or float tensors");
}
template <class T>
constexpr uint32_t lanes() {
    return 256 / sizeof(T);
}
template <class T>
constexpr uint32_t per_block() {
    return 32 / sizeof(T);
}
constexpr uint32_t kFoldBytes = 256;  // a row's fold: one repeat

template <Op O, class T>
void combine(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, uint64_t mask, uint8_t rep,
             const BinaryRepeatParams& p) {
    if constexpr (O == Op::SUM)
        Add(d, a, b, mask, rep, p);
    else if constexpr (O == Op::MAX)
        Max(d, a, b, mask, rep, p);
    else
        Min(d, a, b, mask, rep, p);
}
template <Op O, class T>
void combine(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, int32_t n) {
    if constexpr (O == Op::SUM)
        Add(d, a, b, n);
    else if constexpr (O == Op::MAX)
        Max(d, a, b, n);
    else
        Min(d, a, b, n);
}
template <Op O, class T>
void whole(const LocalTensor<T>& d, const LocalTensor<T>& src, uint64_t mask, int32_t rep, int32_t srcRepStride) {
    if constexpr (O == Op::SUM)
        WholeReduceSum(d, src, mask, rep, 1, 1, srcRepStride);
    else if constexpr (O == Op::MAX)
        WholeReduceMax(d, src, mask, rep, 1, 1, srcRepStride, ReduceOrder::ORDER_ONLY_VALUE);
    else
        WholeReduceMin(d, src, mask, rep, 1, 1, srcRepStride, ReduceOrder::ORDER_ONLY_VALUE);
}

// dst[r] = op over src[r, 0..valid) for r < rows, rows `inner` elements apart.
template <Op O, class T>
void rows_reduce(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& tmp,
                 uint32_t rows, uint32_t inner, uint32_t valid, bool inSource) {
    require_float<T>();
    constexpr uint32_t L = lanes<T>(), B = per_block<T>();
    if (inner == 0 || inner % B != 0 || valid == 0 || valid > inner)
        sfumato::ascendc::fail(std::string(api) + ": rows of " + std::to_string(inner) + " elements with " +
                               std::to_string(valid) +
                               " valid (a row must be a non-zero number of 32-byte blocks holding the valid ones)");
    if (rows == 0) return;
    sfumato::ascendc::count_of(uint64_t{rows} * inner, src);
    sfumato::ascendc::count_of(rows, dst);
    const uint32_t rs = inner / B;  // a row's stride in blocks
    LocalTensor<T> fold;
    uint32_t cap = 255;
    if (!inSource) {
        LocalTensor<uint8_t> t = tmp;
        if (!t.valid() || t.GetSize() == 0) {
            if (!PopStackBuffer<uint8_t, TPosition::LCM>(t))
                sfumato::ascendc::fail(std::string(api) + ": no sharedTmpBuffer and no TPipe to take the scratch from");
        }
        cap = std::min<uint32_t>(cap, t.GetSize() / kFoldBytes);
        fold = t.template ReinterpretCast<T>();
    }
    // A slice of rows writes whole 32-byte blocks of results, unless it is the last.
    if (cap < rows) cap = cap / B * B;
    if (cap == 0)
        sfumato::ascendc::fail(std::string(api) + ": the sharedTmpBuffer holds " + std::to_string(tmp.GetSize()) +
                               " bytes, a slice of " + std::to_string(B) + " rows needs " +
                               std::to_string(B * kFoldBytes));
    const uint32_t chunks = (valid + L - 1) / L;
    const uint64_t first = std::min(valid, L);
    for (uint32_t r0 = 0; r0 < rows; r0 += cap) {
        const uint32_t n = std::min(cap, rows - r0);
        const LocalTensor<T> s = src[r0 * inner];
        const bool together = rs <= 255;
        for (uint32_t r = 0; r < (together ? 1u : n); ++r) {
            const uint8_t rep = static_cast<uint8_t>(together ? n : 1);
            const LocalTensor<T> row = s[r * inner];
            const LocalTensor<T> f = inSource ? row : fold[r * L];
            const uint8_t fs = static_cast<uint8_t>(inSource ? (together ? rs : 8) : 8);
            const uint8_t ss = static_cast<uint8_t>(together ? rs : 8);
            if (!inSource) Muls(f, row, static_cast<T>(1.0f), first, rep, UnaryRepeatParams{1, 1, fs, ss});
            for (uint32_t c = 1; c < chunks; ++c)
                combine<O>(f, f, row[c * L], std::min<uint64_t>(L, valid - c * L), rep,
                           BinaryRepeatParams{1, 1, 1, fs, fs, ss});
        }
        if (inSource && !together) {  // rows too far apart for one repeat stride: one reduction each
            for (uint32_t r = 0; r < n; ++r) whole<O>(dst[r0 + r], s[r * inner], first, 1, 8);
        } else {
            whole<O>(dst[r0], inSource ? s : fold, first, static_cast<int32_t>(n),
                     static_cast<int32_t>(inSource ? rs : 8));
        }
    }
}

// dst[c] = op over src[r, c] for c < cols (rows `inner` apart).
template <Op O, class T>
void cols_reduce(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t rows, uint32_t inner,
                 uint32_t cols) {
    require_float<T>();
    if (inner == 0 || inner % per_block<T>() != 0 || cols == 0 || cols > inner)
        sfumato::ascendc::fail(std::string(api) + ": rows of " + std::to_string(inner) + " elements with " +
                               std::to_string(cols) +
                               " valid (a row must be a non-zero number of 32-byte blocks holding the valid ones)");
    if (rows == 0) return;
    sfumato::ascendc::count_of(uint64_t{rows} * inner, src);
    const int32_t c = static_cast<int32_t>(cols);
    Muls(dst, src, static_cast<T>(1.0f), c);
    for (uint32_t r = 1; r < rows; ++r) combine<O>(dst, dst, src[r * inner], c);
}

template <class T>
uint32_t padded(uint32_t n, bool pad) {
    return pad ? (n + per_block<T>() - 1) / per_block<T>() * per_block<T>() : n;
}

template <Op O, class T, class pattern>
void reduce2d(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& tmp,
              const uint32_t srcShape[], bool srcInnerPad, bool reuse, float scale) {
    static_assert(std::is_same_v<pattern, Pattern::Reduce::AR> || std::is_same_v<pattern, Pattern::Reduce::RA> ||
                      sfumato_unsupported::always_false<pattern>,
                  "the advanced reductions of sfumato's Ascend C layer take the patterns AR and RA");
    sfumato::ascendc::enter(api);
    const uint32_t outer = srcShape[0], inner = srcShape[1], stride = padded<T>(inner, srcInnerPad);
    if constexpr (std::is_same_v<pattern, Pattern::Reduce::AR>) {
        rows_reduce<O>(api, dst, src, tmp, outer, stride, inner, reuse);
        if (scale != 1.0f) Muls(dst, dst, static_cast<T>(scale), static_cast<int32_t>(outer));
    } else {
        cols_reduce<O>(api, dst, src, outer, stride, inner);
        if (scale != 1.0f) Muls(dst, dst, static_cast<T>(scale), static_cast<int32_t>(inner));
    }
}

}  // namespace sfumato_reduce

// ---- Sum, Mean: the first n elements of each of `outter` rows ----
template <class T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
void Sum(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
         const SumParams& sumParams) {
    sfumato::ascendc::enter("Sum");
    sfumato_reduce::rows_reduce<sfumato_reduce::Op::SUM>("Sum", dstTensor, srcTensor, sharedTmpBuffer, sumParams.outter,
                                                          sumParams.inner, sumParams.n, isReuseSource);
}
template <class T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
void Sum(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const SumParams& sumParams) {
    Sum<T, reduceDim, isReuseSource, isBasicBlock>(dstTensor, srcTensor, LocalTensor<uint8_t>(), sumParams);
}
template <class T, class accType = T, bool isReuseSource = false, bool isBasicBlock = false, int32_t reduceDim = -1>
void Mean(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
          const MeanParams& meanParams) {
    static_assert(std::is_same_v<T, accType> || sfumato_unsupported::always_false<T>,
                  "AscendC::Mean with an accumulation type other than T is not supported by sfumato's Ascend C layer");
    sfumato::ascendc::enter("Mean");
    sfumato_reduce::rows_reduce<sfumato_reduce::Op::SUM>("Mean", dstTensor, srcTensor, sharedTmpBuffer,
                                                          meanParams.outter, meanParams.inner, meanParams.n,
                                                          isReuseSource);
    if (meanParams.n != 0)
        Muls(dstTensor, dstTensor, static_cast<T>(1.0f / static_cast<float>(meanParams.n)),
             static_cast<int32_t>(meanParams.outter));
}
template <class T, class accType = T, bool isReuseSource = false, bool isBasicBlock = false, int32_t reduceDim = -1>
void Mean(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const MeanParams& meanParams) {
    Mean<T, accType, isReuseSource, isBasicBlock, reduceDim>(dstTensor, srcTensor, LocalTensor<uint8_t>(), meanParams);
}

// ---- ReduceSum / ReduceMean / ReduceMax / ReduceMin with a pattern ----
#define SFUMATO_REDUCE_PATTERN(Name, O, MEAN)                                                                   \
    template <class T, class pattern, bool isReuseSource = false>                                               \
    void Name(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                                 \
              const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t srcShape[], bool srcInnerPad) {       \
        const bool ar = std::is_same_v<pattern, Pattern::Reduce::AR>;                                           \
        const float scale = MEAN ? 1.0f / static_cast<float>(ar ? srcShape[1] : srcShape[0]) : 1.0f;           \
        sfumato_reduce::reduce2d<sfumato_reduce::Op::O, T, pattern>(#Name, dstTensor, srcTensor, sharedTmpBuffer, \
                                                                     srcShape, srcInnerPad, isReuseSource, scale); \
    }                                                                                                           \
    template <class T, class pattern, bool isReuseSource = false>                                               \
    void Name(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t srcShape[],      \
              bool srcInnerPad) {                                                                               \
        Name<T, pattern, isReuseSource>(dstTensor, srcTensor, LocalTensor<uint8_t>(), srcShape, srcInnerPad);   \
    }
SFUMATO_REDUCE_PATTERN(ReduceSum, SUM, false)
SFUMATO_REDUCE_PATTERN(ReduceMean, SUM, true)
SFUMATO_REDUCE_PATTERN(ReduceMax, MAX, false)
SFUMATO_REDUCE_PATTERN(ReduceMin, MIN, false)
#undef SFUMATO_REDUCE_PATTERN

}  // namespace AscendC
