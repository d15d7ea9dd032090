// Row-wise building blocks of the advanced APIs (softmax, normalisation): a [rows, k] float tensor in
// UB, reduced per row and combined with per-row values broadcast over 32-byte blocks, written only
// with the basic layer's vector calls (mask/repeat forms), so every step is a vector instruction the
// core model times. Each helper needs k a multiple of 8 (rows 32-byte aligned, as the reference
// requires of the last axis); `valid` (<= k) columns take part, the rest are padding.
//
// Layout of a row slice's scratch (float): red (align8(rows) values), blk (align8(rows) blocks of 8),
// fold (rows x 64: the row folded onto one repeat).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

#include "sfumato_ascendc/adv_sizes.h"
#include "sfumato_ascendc/core_state.h"
#include "sfumato_ascendc/defs.h"
#include "sfumato_ascendc/tensor.h"
#include "sfumato_ascendc/vector.h"
#include "sfumato_ascendc/vector_forms.h"

namespace AscendC::sfumato_adv {

struct Scratch {
    LocalTensor<float> red, blk, fold;
};

inline Scratch carve(const LocalTensor<uint8_t>& tmp, uint32_t rows) {
    LocalTensor<float> f = tmp.ReinterpretCast<float>();
    Scratch s;
    s.red = f;
    s.blk = f[align8(rows)];
    s.fold = f[align8(rows) + align8(rows) * kBlkFloats];
    return s;
}

// Checks a [rows, k] shape with `valid` columns; stops the run naming the API otherwise.
inline void check_shape(const char* api, uint32_t rows, uint32_t k, uint32_t valid) {
    if (k == 0 || k % kBlkFloats != 0 || valid == 0 || valid > k || rows == 0)
        sfumato::ascendc::fail(
            std::string(api) + ": shape [" + std::to_string(rows) + ", " + std::to_string(k) + "] with " +
            std::to_string(valid) +
            " valid columns (the last axis must be a non-zero multiple of 32 bytes, the valid "
            "columns within it)");
}

enum class Fold { MAX, SUM };

template <Fold F>
void fold_op(const LocalTensor<float>& d, const LocalTensor<float>& a, const LocalTensor<float>& b,
             uint64_t mask, uint8_t rep, const BinaryRepeatParams& p) {
    if constexpr (F == Fold::MAX)
        Max(d, a, b, mask, rep, p);
    else
        Add(d, a, b, mask, rep, p);
}

// red[r] = max or sum of src[r, 0..valid) for r < rows (rows <= 255): each row folded onto one
// 64-lane repeat (one instruction per 64 columns for all rows), then one whole reduction per row.
template <Fold F>
void row_reduce(const Scratch& s, const LocalTensor<float>& src, uint32_t rows, uint32_t k, uint32_t valid) {
    const uint32_t chunks = (valid + kLanes - 1) / kLanes;
    const uint64_t first = std::min(valid, kLanes);
    if (k / kBlkFloats <= kMaxRepeat) {
        const uint8_t rs = static_cast<uint8_t>(k / kBlkFloats);
        Muls(s.fold, src, 1.0f, first, static_cast<uint8_t>(rows), UnaryRepeatParams{1, 1, 8, rs});
        for (uint32_t c = 1; c < chunks; ++c)
            fold_op<F>(s.fold, s.fold, src[c * kLanes], std::min<uint64_t>(kLanes, valid - c * kLanes),
                       static_cast<uint8_t>(rows), BinaryRepeatParams{1, 1, 1, 8, 8, rs});
    } else {
        for (uint32_t r = 0; r < rows; ++r) {
            const LocalTensor<float> row = src[r * k];
            const LocalTensor<float> f = s.fold[r * kLanes];
            Muls(f, row, 1.0f, first, 1, UnaryRepeatParams{});
            for (uint32_t c = 1; c < chunks; ++c)
                fold_op<F>(f, f, row[c * kLanes], std::min<uint64_t>(kLanes, valid - c * kLanes), 1,
                           BinaryRepeatParams{});
        }
    }
    if constexpr (F == Fold::MAX)
        WholeReduceMax(s.red, s.fold, first, static_cast<int32_t>(rows), 1, 1, 8,
                       ReduceOrder::ORDER_ONLY_VALUE);
    else
        WholeReduceSum(s.red, s.fold, first, static_cast<int32_t>(rows), 1, 1, 8);
}

// red[r] = sum over c < valid of grad[r, c] * src[r, c], folded with multiply-accumulate.
inline void row_dot(const Scratch& s, const LocalTensor<float>& grad, const LocalTensor<float>& src,
                    uint32_t rows, uint32_t k, uint32_t valid) {
    const uint32_t chunks = (valid + kLanes - 1) / kLanes;
    const uint64_t first = std::min(valid, kLanes);
    const bool together = k / kBlkFloats <= kMaxRepeat;
    const uint8_t rs = static_cast<uint8_t>(together ? k / kBlkFloats : 8);
    for (uint32_t r = 0; r < (together ? 1u : rows); ++r) {
        const uint8_t rep = static_cast<uint8_t>(together ? rows : 1);
        const LocalTensor<float> f = s.fold[r * kLanes], g = grad[r * k], x = src[r * k];
        Mul(f, g, x, first, rep, BinaryRepeatParams{1, 1, 1, 8, rs, rs});
        for (uint32_t c = 1; c < chunks; ++c)
            MulAddDst(f, g[c * kLanes], x[c * kLanes], std::min<uint64_t>(kLanes, valid - c * kLanes), rep,
                      BinaryRepeatParams{1, 1, 1, 8, rs, rs});
    }
    WholeReduceSum(s.red, s.fold, first, static_cast<int32_t>(rows), 1, 1, 8);
}

// blk[r, 0..8) = red[r]: one Brcb over align8(rows) values.
inline void broadcast_rows(const Scratch& s, uint32_t rows) {
    Brcb(s.blk, s.red, static_cast<uint8_t>(align8(rows) / 8u), BrcbRepeatParams{1, 8});
}

enum class Bin { SUB, DIV, MUL, ADD };

// d = a op b, the basic API's masked repeat form (float here, row_vec's any type).
template <Bin B, class T>
void bin_any(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, uint64_t mask,
             uint8_t rep, const BinaryRepeatParams& p) {
    if constexpr (B == Bin::SUB)
        Sub(d, a, b, mask, rep, p);
    else if constexpr (B == Bin::DIV)
        Div(d, a, b, mask, rep, p);
    else if constexpr (B == Bin::MUL)
        Mul(d, a, b, mask, rep, p);
    else
        Add(d, a, b, mask, rep, p);
}

// dst[r, c] = src[r, c] op blk[r] for c < valid, with blk a block of 8 per row (32 bytes apart).
template <Bin B>
void row_broadcast(const LocalTensor<float>& dst, const LocalTensor<float>& src,
                   const LocalTensor<float>& blk, uint32_t rows, uint32_t k, uint32_t valid) {
    const uint32_t chunks = (valid + kLanes - 1) / kLanes;
    if (k / kBlkFloats <= kMaxRepeat && chunks <= rows) {
        const uint8_t rs = static_cast<uint8_t>(k / kBlkFloats);
        for (uint32_t c = 0; c < chunks; ++c)
            bin_any<B>(dst[c * kLanes], src[c * kLanes], blk, std::min<uint64_t>(kLanes, valid - c * kLanes),
                      static_cast<uint8_t>(rows), BinaryRepeatParams{1, 1, 0, rs, rs, 1});
        return;
    }
    const uint32_t full = valid / kLanes, tail = valid % kLanes;
    for (uint32_t r = 0; r < rows; ++r) {
        for (uint32_t done = 0; done < full; done += kMaxRepeat) {
            const uint32_t n = std::min(kMaxRepeat, full - done);
            bin_any<B>(dst[r * k + done * kLanes], src[r * k + done * kLanes], blk[r * kBlkFloats], kLanes,
                      static_cast<uint8_t>(n), BinaryRepeatParams{1, 1, 0, 8, 8, 0});
        }
        if (tail)
            bin_any<B>(dst[r * k + full * kLanes], src[r * k + full * kLanes], blk[r * kBlkFloats], tail, 1,
                      BinaryRepeatParams{1, 1, 0, 8, 8, 0});
    }
}

// dst = op(src) over `count` contiguous floats (the count forms of the basic layer).
inline void copy(const LocalTensor<float>& dst, const LocalTensor<float>& src, uint32_t count) {
    Muls(dst, src, 1.0f, static_cast<int32_t>(count));
}

}  // namespace AscendC::sfumato_adv

namespace AscendC::sfumato_adv {

// dst[r, c] = src[r, c] op vec[c] for a [rows, n] tensor (n a multiple of 32 bytes): one instruction per
// repeat-wide column chunk covering up to 255 rows (vec's repeat stride 0), or row by row when a row is
// longer than a repeat stride can step.
template <Bin B, class T>
void row_vec(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& vec, uint32_t rows,
             uint32_t n) {
    constexpr uint32_t lanes = 256 / sizeof(T), blk = 32 / sizeof(T);
    const uint32_t chunks = (n + lanes - 1) / lanes;
    if (n / blk <= kMaxRepeat) {
        const uint8_t rs = static_cast<uint8_t>(n / blk);
        for (uint32_t r0 = 0; r0 < rows; r0 += kMaxRepeat)
            for (uint32_t c = 0; c < chunks; ++c)
                bin_any<B>(dst[r0 * n + c * lanes], src[r0 * n + c * lanes], vec[c * lanes],
                           std::min<uint64_t>(lanes, n - c * lanes),
                           static_cast<uint8_t>(std::min(kMaxRepeat, rows - r0)),
                           BinaryRepeatParams{1, 1, 1, rs, rs, 0});
        return;
    }
    const uint32_t full = n / lanes, tail = n % lanes;
    for (uint32_t r = 0; r < rows; ++r) {
        for (uint32_t done = 0; done < full; done += kMaxRepeat)
            bin_any<B>(dst[r * n + done * lanes], src[r * n + done * lanes], vec[done * lanes], lanes,
                       static_cast<uint8_t>(std::min(kMaxRepeat, full - done)), BinaryRepeatParams{});
        if (tail)
            bin_any<B>(dst[r * n + full * lanes], src[r * n + full * lanes], vec[full * lanes], tail, 1,
                       BinaryRepeatParams{});
    }
}

}  // namespace AscendC::sfumato_adv
