// Normalisation APIs of the advanced API on float tensors [B, S, H] (rows B x S of H, the last axis a
// multiple of 32 bytes; originalHLength valid columns): RmsNorm, LayerNorm (output, mean, variance),
// LayerNormGrad (pd_x and resForGamma), LayerNormGradBeta (pd_gamma, pd_beta), DeepNorm (LayerNorm of
// alpha x + gx), over the row helpers of adv_rows.h (row sums folded onto one repeat, whole reductions,
// Brcb to a block per row, broadcast Sub/Div/Mul, gamma and beta applied with a repeat stride of 0).
// Rows go in slices that fit the sharedTmpBuffer (or, for the forms without one, the UB the TPipe left,
// PopStackBuffer). Mean and variance are [B, S] (one float a row). Simplified: half tensors are a
// compile-time error naming the API; isReuseSource and isBasicBlock change nothing.
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>

#include "kernel_tiling/kernel_tiling.h"
#include "sfumato_ascendc/adv_rows.h"
#include "sfumato_ascendc/stack_buffer.h"
#include "sfumato_ascendc/unsupported.h"

namespace AscendC {
namespace sfumato_norm {

using sfumato_adv::Bin;
using sfumato_adv::kBlkFloats;

template <class T>
constexpr void require_float() {
    static_assert(
        std::is_same_v<T, float> || sfumato_unsupported::always_false<T>,
        "the normalisation APIs of sfumato's Ascend C layer support float tensors only (half is not "
        "supported)");
}

struct Shape {
    uint32_t rows, h, valid;
};

inline Shape shape_of(const char* api, uint32_t b, uint32_t s, uint32_t h, uint32_t ori, uint32_t size) {
    const Shape r{b * s, h, ori ? ori : h};
    sfumato_adv::check_shape(api, r.rows, r.h, r.valid);
    if (uint64_t{b} * s * h > size)
        sfumato::ascendc::fail(std::string(api) + ": [" + std::to_string(b) + ", " + std::to_string(s) +
                               ", " + std::to_string(h) + "] exceeds the source tensor's " +
                               std::to_string(size) + " elements");
    return r;
}

// A slice's scratch: red, block arrays, fold (adv_rows.h's Scratch over blk[0]) and row buffers.
struct Slice {
    sfumato_adv::Scratch s;
    LocalTensor<float> blk[4];
    LocalTensor<float> buf[2];
};

inline Slice carve(const LocalTensor<uint8_t>& tmp, uint32_t rows, uint32_t h, uint32_t blks, uint32_t bufs) {
    const LocalTensor<float> f = tmp.ReinterpretCast<float>();
    const uint32_t a8 = sfumato_adv::align8(rows);
    Slice sl;
    uint32_t at = 0;
    sl.s.red = f;
    at += a8;
    for (uint32_t i = 0; i < blks; ++i, at += a8 * kBlkFloats) sl.blk[i] = f[at];
    sl.s.blk = sl.blk[0];
    sl.s.fold = f[at];
    at += rows * sfumato_adv::kLanes;
    for (uint32_t i = 0; i < bufs; ++i, at += rows * h) sl.buf[i] = f[at];
    return sl;
}

inline uint32_t slice_rows(const char* api, const LocalTensor<uint8_t>& tmp, const Shape& sh, uint32_t blks,
                           uint32_t bufs) {
    const uint32_t n = sfumato_adv::norm_rows_fitting(tmp.GetSize(), sh.rows, sh.h, blks, bufs);
    if (n == 0)
        sfumato::ascendc::fail(
            std::string(api) + ": sharedTmpBuffer of " + std::to_string(tmp.GetSize()) +
            " bytes holds no slice of rows (" +
            std::to_string(sfumato_adv::norm_slice_bytes(std::min(sh.rows, 8u), sh.h, blks, bufs)) +
            " bytes needed: use the API's Get...MaxMinTmpSize)");
    return n;
}

inline LocalTensor<uint8_t> stack(const char* api) {
    LocalTensor<uint8_t> t;
    if (!PopStackBuffer<uint8_t, TPosition::LCM>(t))
        sfumato::ascendc::fail(std::string(api) + ": no UB left for its scratch (the TPipe took it all)");
    return t;
}

// y = (x - mean) / sqrt(var + eps) * gamma + beta for a slice of n rows; mean and var out, one a row.
inline void layer_norm_slice(const Slice& sl, const LocalTensor<float>& y, const LocalTensor<float>& mean,
                             const LocalTensor<float>& var, const LocalTensor<float>& x,
                             const LocalTensor<float>& gamma, const LocalTensor<float>& beta, float eps,
                             uint32_t n, const Shape& sh) {
    namespace sa = sfumato_adv;
    const int32_t cn = static_cast<int32_t>(n);
    const float inv = 1.0f / static_cast<float>(sh.valid);
    sa::row_reduce<sa::Fold::SUM>(sl.s, x, n, sh.h, sh.valid);
    Muls(sl.s.red, sl.s.red, inv, cn);
    sa::copy(mean, sl.s.red, n);
    sa::broadcast_rows(sl.s, n);
    sa::row_broadcast<Bin::SUB>(y, x, sl.s.blk, n, sh.h, sh.valid);
    sa::row_dot(sl.s, y, y, n, sh.h, sh.valid);
    Muls(sl.s.red, sl.s.red, inv, cn);
    sa::copy(var, sl.s.red, n);
    Adds(sl.s.red, sl.s.red, eps, cn);
    Sqrt(sl.s.red, sl.s.red, cn);
    sa::broadcast_rows(sl.s, n);
    sa::row_broadcast<Bin::DIV>(y, y, sl.s.blk, n, sh.h, sh.valid);
    sa::row_vec<Bin::MUL>(y, y, gamma, n, sh.h);
    sa::row_vec<Bin::ADD>(y, y, beta, n, sh.h);
}

inline void layer_norm(const char* api, const LocalTensor<float>& y, const LocalTensor<float>& mean,
                       const LocalTensor<float>& var, const LocalTensor<float>& x,
                       const LocalTensor<float>& gamma, const LocalTensor<float>& beta, float eps,
                       const LocalTensor<uint8_t>& tmp, const Shape& sh) {
    const uint32_t step = slice_rows(api, tmp, sh, 1, 0);
    for (uint32_t r0 = 0; r0 < sh.rows; r0 += step) {
        const uint32_t n = std::min(step, sh.rows - r0);
        layer_norm_slice(carve(tmp, n, sh.h, 1, 0), y[r0 * sh.h], mean[r0], var[r0], x[r0 * sh.h], gamma,
                         beta, eps, n, sh);
    }
}

}  // namespace sfumato_norm

// ---- RmsNorm: x / sqrt(mean(x^2) + eps) * gamma ----
template <class T, bool isBasicBlock = false>
void RmsNorm(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LocalTensor<T>& gammaLocal,
             const LocalTensor<uint8_t>& sharedTmpBuffer, const T epsilon, const RmsNormTiling& tiling) {
    sfumato_norm::require_float<T>();
    sfumato::ascendc::enter("RmsNorm");
    namespace sa = sfumato_adv;
    const sfumato_norm::Shape sh =
        sfumato_norm::shape_of("RmsNorm", tiling.bLength, tiling.sLength, tiling.hLength,
                               tiling.originalHLength, srcLocal.GetSize());
    const uint32_t step = sfumato_norm::slice_rows("RmsNorm", sharedTmpBuffer, sh, 1, 0);
    for (uint32_t r0 = 0; r0 < sh.rows; r0 += step) {
        const uint32_t n = std::min(step, sh.rows - r0);
        const sa::Scratch s = sfumato_norm::carve(sharedTmpBuffer, n, sh.h, 1, 0).s;
        const LocalTensor<float> x = srcLocal[r0 * sh.h], y = dstLocal[r0 * sh.h];
        sa::row_dot(s, x, x, n, sh.h, sh.valid);
        Muls(s.red, s.red, 1.0f / static_cast<float>(sh.valid), static_cast<int32_t>(n));
        Adds(s.red, s.red, static_cast<float>(epsilon), static_cast<int32_t>(n));
        Sqrt(s.red, s.red, static_cast<int32_t>(n));
        sa::broadcast_rows(s, n);
        sa::row_broadcast<sa::Bin::DIV>(y, x, s.blk, n, sh.h, sh.valid);
        sa::row_vec<sa::Bin::MUL>(y, y, gammaLocal, n, sh.h);
    }
}
template <class T, bool isBasicBlock = false>
void RmsNorm(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LocalTensor<T>& gammaLocal,
             const T epsilon, const RmsNormTiling& tiling) {
    RmsNorm<T, isBasicBlock>(dstLocal, srcLocal, gammaLocal, sfumato_norm::stack("RmsNorm"), epsilon, tiling);
}

// ---- LayerNorm (output, mean, variance) ----
template <class T, bool isReuseSource = false>
void LayerNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean,
               const LocalTensor<T>& outputVariance, const LocalTensor<T>& inputX,
               const LocalTensor<T>& gamma, const LocalTensor<T>& beta,
               const LocalTensor<uint8_t>& sharedTmpBuffer, const T epsilon, const LayerNormTiling& tiling) {
    sfumato_norm::require_float<T>();
    sfumato::ascendc::enter("LayerNorm");
    const sfumato_norm::Shape sh =
        sfumato_norm::shape_of("LayerNorm", tiling.bLength, tiling.sLength, tiling.hLength,
                               tiling.originalHLength, inputX.GetSize());
    sfumato_norm::layer_norm("LayerNorm", output, outputMean, outputVariance, inputX, gamma, beta,
                             static_cast<float>(epsilon), sharedTmpBuffer, sh);
}
template <class T, bool isReuseSource = false>
void LayerNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean,
               const LocalTensor<T>& outputVariance, const LocalTensor<T>& inputX,
               const LocalTensor<T>& gamma, const LocalTensor<T>& beta, const T epsilon,
               const LayerNormTiling& tiling) {
    LayerNorm<T, isReuseSource>(output, outputMean, outputVariance, inputX, gamma, beta,
                                sfumato_norm::stack("LayerNorm"), epsilon, tiling);
}

// ---- DeepNorm: LayerNorm of alpha x + gx ----
template <class T, bool isReuseSrc = false, bool isBasicBlock = false>
void DeepNorm(const LocalTensor<T>& dstLocal, const LocalTensor<T>& meanLocal,
              const LocalTensor<T>& rstdLocal, const LocalTensor<T>& srcLocal, const LocalTensor<T>& gxLocal,
              const LocalTensor<T>& betaLocal, const LocalTensor<T>& gammaLocal,
              const LocalTensor<uint8_t>& sharedTmpBuffer, const T alpha, const T epsilon,
              DeepNormTiling& tiling) {
    sfumato_norm::require_float<T>();
    sfumato::ascendc::enter("DeepNorm");
    const sfumato_norm::Shape sh =
        sfumato_norm::shape_of("DeepNorm", tiling.bLength, tiling.sLength, tiling.hLength,
                               tiling.originalHLength, srcLocal.GetSize());
    const int32_t all = static_cast<int32_t>(sh.rows * sh.h);
    Muls(dstLocal, srcLocal, static_cast<float>(alpha), all);
    Add(dstLocal, dstLocal, gxLocal, all);
    sfumato_norm::layer_norm("DeepNorm", dstLocal, meanLocal, rstdLocal, dstLocal, gammaLocal, betaLocal,
                             static_cast<float>(epsilon), sharedTmpBuffer, sh);
}
template <class T, bool isReuseSrc = false, bool isBasicBlock = false>
void DeepNorm(const LocalTensor<T>& dstLocal, const LocalTensor<T>& meanLocal,
              const LocalTensor<T>& rstdLocal, const LocalTensor<T>& srcLocal, const LocalTensor<T>& gxLocal,
              const LocalTensor<T>& betaLocal, const LocalTensor<T>& gammaLocal, const T alpha,
              const T epsilon, DeepNormTiling& tiling) {
    DeepNorm<T, isReuseSrc, isBasicBlock>(dstLocal, meanLocal, rstdLocal, srcLocal, gxLocal, betaLocal,
                                          gammaLocal, sfumato_norm::stack("DeepNorm"), alpha, epsilon,
                                          tiling);
}

}  // namespace AscendC
