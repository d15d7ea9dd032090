// The advanced API's Select with a byte mask (SelectWithBytesMask) and DropOut, written with the basic
// layer's vector calls (their cycles are the model's):
//  - Select(dst, src0, src1Scalar, mask, tmp, info): dst = mask ? src1 : src0 (mask elements non-zero:
//    true), and the form with the scalar first (dst = mask ? src1 : src0Scalar). The byte mask becomes a
//    bit mask (a 1-byte mask through a Cast to half, then CompareScalar != 0; 2- and 4-byte masks compared
//    as int16/int32), the scalar is duplicated, one Select picks.
//  - DropOut(dst, src, mask, tmp, keepProb, info): dst = src * keep / keepProb. A mask row at least as
//    long as a source row is a byte mask (1 keeps; Cast to half (and float), Mul, Muls); a shorter one is
//    a bit mask, bit j of a row's bytes for element j, lowest bit first (Muls by 1 / keepProb, then
//    Select against zeros).
// Rows are processed together when source and mask rows are laid out alike, else row by row, in slices
// of what the sharedTmpBuffer holds (a multiple of 256 elements; the forms without one use the UB the
// TPipe has not handed out).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "sfumato_ascendc/core_state.h"
#include "sfumato_ascendc/math_adv.h"
#include "sfumato_ascendc/tensor.h"
#include "sfumato_ascendc/unsupported.h"
#include "sfumato_ascendc/vector.h"

namespace AscendC {

struct SelectWithBytesMaskShapeInfo {
    uint32_t firstAxis = 0;
    uint32_t srcLastAxis = 0;
    uint32_t maskLastAxis = 0;
};
struct DropOutShapeInfo {
    uint32_t firstAxis = 0;
    uint32_t srcLastAxis = 0;
    uint32_t maskLastAxis = 0;
};

namespace sfumato_filter {

// bits (one per element, n elements) = mask != 0.
template <class U>
void bits_of(const LocalTensor<uint8_t>& bits, const LocalTensor<U>& mask, const LocalTensor<half>& h, uint32_t n) {
    if constexpr (sizeof(U) == 1) {
        Cast(h, mask.template ReinterpretCast<uint8_t>(), RoundMode::CAST_NONE, n);
        CompareScalar(bits, h, static_cast<half>(0.0f), CMPMODE::NE, n);
    } else if constexpr (sizeof(U) == 2) {
        CompareScalar(bits, mask.template ReinterpretCast<int16_t>(), static_cast<int16_t>(0), CMPMODE::NE, n);
    } else {
        static_assert(sizeof(U) == 4, "a byte mask of 1, 2 or 4-byte elements");
        CompareScalar(bits, mask.template ReinterpretCast<int32_t>(), static_cast<int32_t>(0), CMPMODE::NE, n);
    }
}

// Calls f(srcOffset, maskOffset, n) over the rows (together when laid out alike) in slices of `slice`.
template <class F>
void over_rows(uint32_t rows, uint32_t srcRow, uint32_t maskRow, uint32_t maskPerElem8, uint32_t slice, F&& f) {
    // maskPerElem8: mask elements per 8 source elements (8: byte mask, 1: bit mask counted in bytes)
    const bool together = (uint64_t{srcRow} * maskPerElem8 == uint64_t{maskRow} * 8);
    if (together) {
        sfumato_math::slices(rows * srcRow, slice, [&](uint32_t o, uint32_t n) { f(o, o * maskPerElem8 / 8, n); });
        return;
    }
    for (uint32_t r = 0; r < rows; ++r)
        sfumato_math::slices(srcRow, slice,
                             [&](uint32_t o, uint32_t n) { f(r * srcRow + o, r * maskRow + o * maskPerElem8 / 8, n); });
}

template <class T, class U>
void select_bytes(const LocalTensor<T>& dst, const LocalTensor<T>& tensor, T scalar, const LocalTensor<U>& mask,
                  const LocalTensor<uint8_t>& tmp, const SelectWithBytesMaskShapeInfo& info, bool scalarIfTrue) {
    sfumato_math::require_float<T>();
    sfumato::ascendc::enter("Select");
    const uint32_t rows = info.firstAxis, cols = info.srcLastAxis, mcols = info.maskLastAxis;
    if (mcols < cols)
        sfumato::ascendc::fail("Select: a mask row of " + std::to_string(mcols) + " elements is shorter than a source "
                               "row of " + std::to_string(cols));
    sfumato::ascendc::count_of(uint64_t{rows} * cols, dst, tensor);
    sfumato::ascendc::count_of(uint64_t{rows} * mcols, mask);
    // buffers: 0 the scalar duplicated, 1 the mask as half; one bit mask
    const sfumato_math::Scratch s = sfumato_math::carve("Select", tmp, 2, 1, std::max(cols, 1u) * (mcols == cols ? rows : 1));
    const LocalTensor<T> dup = s.buf<T>(0);
    const LocalTensor<half> h = s.buf<half>(1);
    const LocalTensor<uint8_t> bits = s.mask(0);
    Duplicate(dup, scalar, static_cast<int32_t>(s.slice));
    over_rows(rows, cols, mcols, 8, s.slice, [&](uint32_t so0, uint32_t mo0, uint32_t n0) {
        sfumato_math::bit_pieces<T>(n0, [&](uint32_t po, uint32_t n) {
            const uint32_t so = so0 + po, mo = mo0 + po;
            bits_of(bits, mask[mo], h, n);
            if (scalarIfTrue)
                Select(dst[so], bits, dup, tensor[so], SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
            else
                Select(dst[so], bits, tensor[so], dup, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
        });
    });
}

}  // namespace sfumato_filter

// ---- Select with a byte mask ----
template <class T, class U, bool isReuseMask = true>
void Select(const LocalTensor<T>& dst, const LocalTensor<T>& src0, T src1, const LocalTensor<U>& mask,
            const LocalTensor<uint8_t>& sharedTmpBuffer, const SelectWithBytesMaskShapeInfo& info) {
    sfumato_filter::select_bytes(dst, src0, src1, mask, sharedTmpBuffer, info, true);
}
template <class T, class U, bool isReuseMask = true>
void Select(const LocalTensor<T>& dst, T src0, const LocalTensor<T>& src1, const LocalTensor<U>& mask,
            const LocalTensor<uint8_t>& sharedTmpBuffer, const SelectWithBytesMaskShapeInfo& info) {
    sfumato_filter::select_bytes(dst, src1, src0, mask, sharedTmpBuffer, info, false);
}

// ---- DropOut ----
template <class T, bool isInitBitMode = false, uint32_t dropOutMode = 0>
void DropOut(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LocalTensor<uint8_t>& maskLocal,
             const LocalTensor<uint8_t>& sharedTmpBuffer, const float keepProb, const DropOutShapeInfo& info) {
    static_assert(dropOutMode <= 4, "DropOut: dropOutMode is 0 to 4");
    sfumato_math::require_float<T>();
    sfumato::ascendc::enter("DropOut");
    const uint32_t rows = info.firstAxis, cols = info.srcLastAxis, mcols = info.maskLastAxis;
    // Modes 1/2 are the byte mask, 3/4 the bit mask; 0 tells them apart by the mask row's length.
    const bool byteMask = dropOutMode == 1 || dropOutMode == 2 || (dropOutMode == 0 && mcols >= cols);
    if (byteMask ? mcols < cols : uint64_t{mcols} * 8 < cols)
        sfumato::ascendc::fail("DropOut: a mask row of " + std::to_string(mcols) + " bytes is too short for a source "
                               "row of " + std::to_string(cols) + " elements");
    sfumato::ascendc::count_of(uint64_t{rows} * cols, dstLocal, srcLocal);
    sfumato::ascendc::count_of(uint64_t{rows} * mcols, maskLocal);
    const T scale = static_cast<T>(1.0f / keepProb);
    // byte mask: buffers 0 (half) and 1 (float) hold the mask converted; bit mask: 0 the scaled source,
    // 1 zeros
    const bool flat = byteMask ? mcols == cols : uint64_t{mcols} * 8 == cols;
    const sfumato_math::Scratch s =
        sfumato_math::carve("DropOut", sharedTmpBuffer, 2, 1, std::max(cols, 1u) * (flat ? rows : 1));
    if (byteMask) {
        sfumato_filter::over_rows(rows, cols, mcols, 8, s.slice, [&](uint32_t so, uint32_t mo, uint32_t n) {
            const LocalTensor<half> h = s.buf<half>(0);
            const int32_t c = static_cast<int32_t>(n);
            Cast(h, maskLocal[mo], RoundMode::CAST_NONE, n);
            if constexpr (std::is_same_v<T, float>) {
                const LocalTensor<float> f = s.buf<float>(1);
                Cast(f, h, RoundMode::CAST_NONE, n);
                Mul(dstLocal[so], srcLocal[so], f, c);
            } else {
                Mul(dstLocal[so], srcLocal[so], h, c);
            }
            Muls(dstLocal[so], dstLocal[so], scale, c);
        });
        return;
    }
    const LocalTensor<T> zeros = s.buf<T>(1);
    Duplicate(zeros, static_cast<T>(0.0f), static_cast<int32_t>(s.slice));
    sfumato_filter::over_rows(rows, cols, mcols, 1, s.slice, [&](uint32_t so0, uint32_t mo0, uint32_t n0) {
        sfumato_math::bit_pieces<T>(n0, [&](uint32_t po, uint32_t n) {
            const uint32_t so = so0 + po, mo = mo0 + po / 8;
            LocalTensor<uint8_t> bits = maskLocal[mo];
            if ((maskLocal.GetPhyAddr() + mo) % 32 != 0) {
                // a last partial repeat whose bits start off a 32-byte boundary: its (at most 8) bytes are
                // copied to the aligned scratch mask by the scalar unit
                bits = s.mask(0);
                for (uint32_t b = 0; b < (n + 7) / 8; ++b) bits.SetValue(b, maskLocal.GetValue(mo + b));
            }
            const LocalTensor<T> scaled = s.buf<T>(0);
            Muls(scaled, srcLocal[so], scale, static_cast<int32_t>(n));
            Select(dstLocal[so], bits, scaled, zeros, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
        });
    });
}
template <class T, bool isInitBitMode = false, uint32_t dropOutMode = 0>
void DropOut(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LocalTensor<uint8_t>& maskLocal,
             const float keepProb, const DropOutShapeInfo& info) {
    DropOut<T, isInitBitMode, dropOutMode>(dstLocal, srcLocal, maskLocal, LocalTensor<uint8_t>(), keepProb, info);
}

}  // namespace AscendC
