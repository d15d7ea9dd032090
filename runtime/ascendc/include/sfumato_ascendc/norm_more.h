// BatchNorm and GroupNorm of the advanced API (half and float, computed in float), over the basic layer's
// vector calls and the row helpers of adv_rows.h, so their cycles are the model's:
//  - BatchNorm: x [B, S, H] (the kernel reads B = originalBLength and S x H = shCurLength from the tiling),
//    mean and variance over B for each of the S x H positions (one Add / one Sub and MulAddDst a batch),
//    y[b] = gamma[b] (x[b] - mean) / sqrt(variance + epsilon) + beta[b] (gamma and beta per batch, Brcb'd to a
//    block each and applied with a source block stride of 0).
//  - GroupNorm: x [n, C, H x W] with g groups of d = C / g channels (the tiling's n, c, hw, g, d), mean and
//    variance over each group's d x hw elements (a row reduction of the group, rows of hw whole 32-byte
//    blocks), y = gamma[c] (x - mean) / sqrt(variance + epsilon) + beta[c].
// Scratch (the sharedTmpBuffer or the free UB): the float copy of x for half, the normalised rows and the
// statistics; the host functions return the size. BatchNormTiling and GroupNormTiling have the reference's
// members; sfumato's host functions fill the ones these kernels read.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "sfumato_ascendc/adv_rows.h"
#include "sfumato_ascendc/core_state.h"
#include "sfumato_ascendc/norm_more_tiling.h"
#include "sfumato_ascendc/stack_buffer.h"
#include "sfumato_ascendc/unsupported.h"
#include "sfumato_ascendc/vector.h"

namespace AscendC {
namespace sfumato_norm_more {

inline LocalTensor<uint8_t> scratch(const char* api, const LocalTensor<uint8_t>& tmp, uint64_t need) {
    LocalTensor<uint8_t> t = tmp;
    if (!t.valid() || t.GetSize() == 0) {
        if (!PopStackBuffer<uint8_t, TPosition::LCM>(t))
            sfumato::ascendc::fail(std::string(api) + ": no sharedTmpBuffer and no TPipe to take the scratch from");
    }
    if (t.GetSize() < need)
        sfumato::ascendc::fail(std::string(api) + ": the scratch holds " + std::to_string(t.GetSize()) + " bytes, " +
                               std::to_string(need) + " needed");
    return t;
}

// f = src as float (a copy through Cast for half; src itself for float).
template <class T>
LocalTensor<float> as_float(const LocalTensor<T>& src, const LocalTensor<float>& room, uint32_t n) {
    if constexpr (std::is_same_v<T, float>) {
        (void)room, (void)n;
        return src;
    } else {
        Cast(room, src, RoundMode::CAST_NONE, n);
        return room;
    }
}
template <class T>
void store(const LocalTensor<T>& dst, const LocalTensor<float>& f, uint32_t n) {
    if constexpr (std::is_same_v<T, float>) {
        if (dst.GetPhyAddr() != f.GetPhyAddr() || dst.GetPosition() != f.GetPosition())
            Muls(dst, f, 1.0f, static_cast<int32_t>(n));
    } else {
        Cast(dst, f, RoundMode::CAST_RINT, n);
    }
}
template <class T>
constexpr void require_half_float() {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, half> || sfumato_unsupported::always_false<T>,
                  "BatchNorm and GroupNorm take half or float tensors");
}

}  // namespace sfumato_norm_more

// ---- BatchNorm ----
template <class T, bool isReuseSource = false, bool isBasicBlock = false>
void BatchNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean, const LocalTensor<T>& outputVariance,
               const LocalTensor<T>& inputX, const LocalTensor<T>& gamm, const LocalTensor<T>& beta,
               const LocalTensor<uint8_t>& sharedTmpBuffer, const T epsilon, BatchNormTiling& tiling) {
    namespace sn = sfumato_norm_more;
    namespace sa = sfumato_adv;
    sn::require_half_float<T>();
    sfumato::ascendc::enter("BatchNorm");
    const uint32_t B = tiling.originalBLength, N = tiling.shCurLength;
    if (B == 0 || N == 0 || N % 8 != 0)
        sfumato::ascendc::fail("BatchNorm: B " + std::to_string(B) + ", S x H " + std::to_string(N) +
                               " (the tiling's originalBLength and shCurLength; S x H a multiple of 8)");
    sfumato::ascendc::count_of(uint64_t{B} * N, output, inputX);
    sfumato::ascendc::count_of(N, outputMean, outputVariance);
    sfumato::ascendc::count_of(B, gamm, beta);
    const uint32_t b8 = sa::align8(B);
    constexpr bool isHalf = std::is_same_v<T, half>;
    // float: mean, variance, sqrt, gamma and beta blocks (+ half: x, gamma, beta as float)
    const uint64_t need = 3ull * N * 4 + 2ull * b8 * 32 + (isHalf ? uint64_t{B} * N * 4 + 2ull * b8 * 4 : 0);
    const LocalTensor<uint8_t> t = sn::scratch("BatchNorm", sharedTmpBuffer, need);
    const LocalTensor<float> f = t.ReinterpretCast<float>();
    const LocalTensor<float> mean = f, var = f[N], sd = f[2 * N], gBlk = f[3 * N], bBlk = gBlk[b8 * 8],
                             xf = bBlk[b8 * 8], gf = xf[isHalf ? B * N : 0], bf = gf[isHalf ? b8 : 0];
    const LocalTensor<float> x = sn::as_float(inputX, xf, B * N);
    const LocalTensor<float> g = sn::as_float(gamm, gf, B), be = sn::as_float(beta, bf, B);
    const int32_t n = static_cast<int32_t>(N);
    Muls(mean, x, 1.0f, n);
    for (uint32_t b = 1; b < B; ++b) Add(mean, mean, x[b * N], n);
    Muls(mean, mean, 1.0f / static_cast<float>(B), n);
    Duplicate(var, 0.0f, n);
    for (uint32_t b = 0; b < B; ++b) {
        Sub(sd, x[b * N], mean, n);
        MulAddDst(var, sd, sd, n);
    }
    Muls(var, var, 1.0f / static_cast<float>(B), n);
    Adds(sd, var, static_cast<float>(epsilon), n);
    Sqrt(sd, sd, n);
    Brcb(gBlk, g, static_cast<uint8_t>(b8 / 8), BrcbRepeatParams{1, 8});
    Brcb(bBlk, be, static_cast<uint8_t>(b8 / 8), BrcbRepeatParams{1, 8});
    // y = gamma[b] (x - mean) / sd + beta[b], in the float room (x itself for half), then stored
    const LocalTensor<float> y = isHalf ? xf : output.template ReinterpretCast<float>();
    for (uint32_t b0 = 0; b0 < B; b0 += 255) {
        const uint32_t rows = std::min(255u, B - b0);
        sa::row_vec<sa::Bin::SUB>(y[b0 * N], x[b0 * N], mean, rows, N);
        sa::row_vec<sa::Bin::DIV>(y[b0 * N], y[b0 * N], sd, rows, N);
        sa::row_broadcast<sa::Bin::MUL>(y[b0 * N], y[b0 * N], gBlk[b0 * 8], rows, N, N);
        sa::row_broadcast<sa::Bin::ADD>(y[b0 * N], y[b0 * N], bBlk[b0 * 8], rows, N, N);
    }
    if constexpr (isHalf) sn::store(output, y, B * N);
    sn::store(outputMean, mean, N);
    sn::store(outputVariance, var, N);
}
template <class T, bool isReuseSource = false, bool isBasicBlock = false>
void BatchNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean, const LocalTensor<T>& outputVariance,
               const LocalTensor<T>& inputX, const LocalTensor<T>& gamm, const LocalTensor<T>& beta, const T epsilon,
               BatchNormTiling& tiling) {
    BatchNorm<T, isReuseSource, isBasicBlock>(output, outputMean, outputVariance, inputX, gamm, beta,
                                              LocalTensor<uint8_t>(), epsilon, tiling);
}

// ---- GroupNorm ----
template <class T, bool isReuseSource = false>
void GroupNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean, const LocalTensor<T>& outputVariance,
               const LocalTensor<T>& inputX, const LocalTensor<T>& gamma, const LocalTensor<T>& beta,
               const LocalTensor<uint8_t>& sharedTmpBuffer, const T epsilon, GroupNormTiling& tiling) {
    namespace sn = sfumato_norm_more;
    namespace sa = sfumato_adv;
    sn::require_half_float<T>();
    sfumato::ascendc::enter("GroupNorm");
    const uint32_t n = tiling.n, C = tiling.c, hw = tiling.hw, g = tiling.g;
    if (n == 0 || C == 0 || g == 0 || C % g != 0 || hw == 0 || hw % 8 != 0 || hw * sizeof(T) % 32 != 0)
        sfumato::ascendc::fail("GroupNorm: n " + std::to_string(n) + ", C " + std::to_string(C) + ", H x W " +
                               std::to_string(hw) + ", groups " + std::to_string(g) +
                               " (C a multiple of the groups, H x W whole 32-byte blocks of T and of float)");
    const uint32_t d = C / g, K = d * hw, rows = n * g, total = n * C * hw;
    sfumato::ascendc::count_of(total, output, inputX);
    sfumato::ascendc::count_of(rows, outputMean, outputVariance);
    sfumato::ascendc::count_of(C, gamma, beta);
    const uint32_t c8 = sa::align8(C), r8 = sa::align8(rows), slice = std::min(rows, 248u);
    constexpr bool isHalf = std::is_same_v<T, half>;
    // y (float), mean, variance, their blocks, gamma/beta blocks, the row helpers' scratch (+ half: gamma,
    // beta as float)
    const uint64_t need = uint64_t{total} * 4 + 2ull * r8 * 4 + r8 * 32 + 2ull * c8 * 32 + sa::slice_bytes(slice) +
                          (isHalf ? 2ull * c8 * 4 : 0);
    const LocalTensor<uint8_t> t = sn::scratch("GroupNorm", sharedTmpBuffer, need);
    const LocalTensor<float> f = t.ReinterpretCast<float>();
    const LocalTensor<float> y = f, mean = f[total], var = mean[r8], blk = var[r8], gBlk = blk[r8 * 8],
                             bBlk = gBlk[c8 * 8], gf = bBlk[c8 * 8], bf = gf[isHalf ? c8 : 0];
    const sa::Scratch rs = sa::carve(t[(total + 2 * r8 + r8 * 8 + 2 * c8 * 8 + (isHalf ? 2 * c8 : 0)) * 4], slice);
    const LocalTensor<float> x = sn::as_float(inputX, y, total);  // half: converted into y
    const LocalTensor<float> gm = sn::as_float(gamma, gf, C), bt = sn::as_float(beta, bf, C);
    const float inv = 1.0f / static_cast<float>(K);
    for (uint32_t r0 = 0; r0 < rows; r0 += slice) {
        const uint32_t m = std::min(slice, rows - r0);
        const LocalTensor<float> xs = x[r0 * K], ys = y[r0 * K];
        sa::row_reduce<sa::Fold::SUM>(rs, xs, m, K, K);
        Muls(mean[r0], rs.red, inv, static_cast<int32_t>(m));
        Brcb(blk, mean[r0], static_cast<uint8_t>(sa::align8(m) / 8), BrcbRepeatParams{1, 8});
        sa::row_broadcast<sa::Bin::SUB>(ys, xs, blk, m, K, K);
        sa::row_dot(rs, ys, ys, m, K, K);
        Muls(var[r0], rs.red, inv, static_cast<int32_t>(m));
        Adds(rs.red, var[r0], static_cast<float>(epsilon), static_cast<int32_t>(m));
        Sqrt(rs.red, rs.red, static_cast<int32_t>(m));
        Brcb(blk, rs.red, static_cast<uint8_t>(sa::align8(m) / 8), BrcbRepeatParams{1, 8});
        sa::row_broadcast<sa::Bin::DIV>(ys, ys, blk, m, K, K);
    }
    Brcb(gBlk, gm, static_cast<uint8_t>(c8 / 8), BrcbRepeatParams{1, 8});
    Brcb(bBlk, bt, static_cast<uint8_t>(c8 / 8), BrcbRepeatParams{1, 8});
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t c0 = 0; c0 < C; c0 += 255) {
            const uint32_t m = std::min(255u, C - c0);
            const LocalTensor<float> yc = y[(i * C + c0) * hw];
            sa::row_broadcast<sa::Bin::MUL>(yc, yc, gBlk[c0 * 8], m, hw, hw);
            sa::row_broadcast<sa::Bin::ADD>(yc, yc, bBlk[c0 * 8], m, hw, hw);
        }
    sn::store(output, y, total);
    sn::store(outputMean, mean, rows);
    sn::store(outputVariance, var, rows);
}
template <class T, bool isReuseSource = false>
void GroupNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean, const LocalTensor<T>& outputVariance,
               const LocalTensor<T>& inputX, const LocalTensor<T>& gamma, const LocalTensor<T>& beta, const T epsilon,
               GroupNormTiling& tiling) {
    GroupNorm<T, isReuseSource>(output, outputMean, outputVariance, inputX, gamma, beta, LocalTensor<uint8_t>(),
                                epsilon, tiling);
}

}  // namespace AscendC
