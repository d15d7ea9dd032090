// LayerNormGrad and LayerNormGradBeta (float, [B, S, H]) over the row helpers, with the reference's
// formulas (d = x - mean, rstd = 1 / sqrt(var + eps), pd_xl = dy * gamma):
//   pd_var  = -0.5 rstd^3 sum(pd_xl d),  pd_mean = -rstd sum(pd_xl) - 2 pd_var / H sum(d),
//   pd_x    = pd_mean / H + 2 pd_var / H d + pd_xl rstd,  resForGamma = d rstd,
//   pd_gamma = column sums of dy resForGamma, pd_beta = column sums of dy.
#pragma once
#include <cstdint>

#include "sfumato_ascendc/norm.h"
#include "sfumato_ascendc/vector_forms.h"

namespace AscendC {
namespace sfumato_norm {

// One slice of n rows. Blocks: A pd_var, B rstd, C pd_mean, D scratch; buffers: 0 d, 1 pd_xl.
inline void layer_norm_grad_slice(const Slice& sl, const LocalTensor<float>& pdX,
                                  const LocalTensor<float>& res, const LocalTensor<float>& dy,
                                  const LocalTensor<float>& x, const LocalTensor<float>& var,
                                  const LocalTensor<float>& mean, const LocalTensor<float>& gamma, float eps,
                                  uint32_t n, const Shape& sh) {
    namespace sa = sfumato_adv;
    const int32_t cn = static_cast<int32_t>(n), nb = static_cast<int32_t>(n * kBlkFloats);
    const int32_t all = static_cast<int32_t>(n * sh.h);
    const float inv = 1.0f / static_cast<float>(sh.valid);
    const LocalTensor<float>&A = sl.blk[0], &B = sl.blk[1], &C = sl.blk[2], &D = sl.blk[3];
    const LocalTensor<float>&d = sl.buf[0], &p = sl.buf[1];
    sa::Scratch s = sl.s;
    auto to_blocks = [&](const LocalTensor<float>& blk) {
        s.blk = blk;
        sa::broadcast_rows(s, n);
    };
    sa::copy(s.red, mean, n);
    to_blocks(D);
    sa::row_broadcast<Bin::SUB>(d, x, D, n, sh.h, sh.h);
    sa::copy(s.red, var, n);
    Adds(s.red, s.red, eps, cn);
    Sqrt(s.red, s.red, cn);
    Reciprocal(s.red, s.red, cn);
    to_blocks(B);
    sa::row_broadcast<Bin::MUL>(res, d, B, n, sh.h, sh.h);
    sa::row_vec<Bin::MUL>(p, dy, gamma, n, sh.h);
    sa::row_dot(s, p, d, n, sh.h, sh.valid);  // sum(pd_xl d)
    to_blocks(A);
    Mul(A, A, B, nb);
    Mul(A, A, B, nb);
    Mul(A, A, B, nb);
    Muls(A, A, -0.5f, nb);  // pd_var
    sa::row_reduce<sa::Fold::SUM>(s, p, n, sh.h, sh.valid);
    to_blocks(C);
    Mul(C, C, B, nb);  // rstd sum(pd_xl)
    sa::row_reduce<sa::Fold::SUM>(s, d, n, sh.h, sh.valid);
    to_blocks(D);
    Mul(D, D, A, nb);
    Muls(D, D, -2.0f * inv, nb);
    Sub(C, D, C, nb);  // pd_mean
    sa::row_broadcast<Bin::MUL>(pdX, d, A, n, sh.h, sh.h);
    Muls(pdX, pdX, 2.0f * inv, all);
    sa::row_broadcast<Bin::MUL>(p, p, B, n, sh.h, sh.h);
    Add(pdX, pdX, p, all);
    Muls(C, C, inv, nb);
    sa::row_broadcast<Bin::ADD>(pdX, pdX, C, n, sh.h, sh.h);
}

}  // namespace sfumato_norm

template <class T, bool isReuseSource = false>
void LayerNormGrad(const LocalTensor<T>& outputPdX, const LocalTensor<T>& resForGamma,
                   const LocalTensor<T>& inputDy, const LocalTensor<T>& inputX,
                   const LocalTensor<T>& inputVariance, const LocalTensor<T>& inputMean,
                   const LocalTensor<T>& inputGamma, const LocalTensor<uint8_t>& sharedTmpBuffer, T epsilon,
                   LayerNormGradTiling& tiling) {
    sfumato_norm::require_float<T>();
    sfumato::ascendc::enter("LayerNormGrad");
    const sfumato_norm::Shape sh =
        sfumato_norm::shape_of("LayerNormGrad", tiling.bLength, tiling.sLength, tiling.hLength,
                               tiling.originalHLength, inputX.GetSize());
    const uint32_t step = sfumato_norm::slice_rows("LayerNormGrad", sharedTmpBuffer, sh, 4, 2);
    for (uint32_t r0 = 0; r0 < sh.rows; r0 += step) {
        const uint32_t n = std::min(step, sh.rows - r0), o = r0 * sh.h;
        sfumato_norm::layer_norm_grad_slice(sfumato_norm::carve(sharedTmpBuffer, n, sh.h, 4, 2), outputPdX[o],
                                            resForGamma[o], inputDy[o], inputX[o], inputVariance[r0],
                                            inputMean[r0], inputGamma, static_cast<float>(epsilon), n, sh);
    }
}
template <class T, bool isReuseSource = false>
void LayerNormGrad(const LocalTensor<T>& outputPdX, const LocalTensor<T>& resForGamma,
                   const LocalTensor<T>& inputDy, const LocalTensor<T>& inputX,
                   const LocalTensor<T>& inputVariance, const LocalTensor<T>& inputMean,
                   const LocalTensor<T>& inputGamma, T epsilon, LayerNormGradTiling& tiling) {
    LayerNormGrad<T, isReuseSource>(outputPdX, resForGamma, inputDy, inputX, inputVariance, inputMean,
                                    inputGamma, sfumato_norm::stack("LayerNormGrad"), epsilon, tiling);
}

// Column sums over every row: one Add (and one MulAddDst) per row.
template <class T, bool isReuseSource = false>
void LayerNormGradBeta(const LocalTensor<T>& outputPdGamma, const LocalTensor<T>& outputPdBeta,
                       const LocalTensor<T>& resForGamma, const LocalTensor<T>& inputDy,
                       const LocalTensor<uint8_t>& sharedTmpBuffer, const LayerNormGradBetaTiling& tiling) {
    sfumato_norm::require_float<T>();
    (void)sharedTmpBuffer;
    sfumato::ascendc::enter("LayerNormGradBeta");
    const sfumato_norm::Shape sh =
        sfumato_norm::shape_of("LayerNormGradBeta", tiling.bLength, tiling.sLength, tiling.hLength,
                               tiling.originalHLength, inputDy.GetSize());
    const int32_t h = static_cast<int32_t>(sh.h);
    Duplicate(outputPdGamma, 0.0f, h);
    Duplicate(outputPdBeta, 0.0f, h);
    for (uint32_t r = 0; r < sh.rows; ++r) {
        Add(outputPdBeta, outputPdBeta, inputDy[r * sh.h], h);
        MulAddDst(outputPdGamma, inputDy[r * sh.h], resForGamma[r * sh.h], h);
    }
}
template <class T, bool isReuseSource = false>
void LayerNormGradBeta(const LocalTensor<T>& outputPdGamma, const LocalTensor<T>& outputPdBeta,
                       const LocalTensor<T>& resForGamma, const LocalTensor<T>& inputDy,
                       const LayerNormGradBetaTiling& tiling) {
    LayerNormGradBeta<T, isReuseSource>(outputPdGamma, outputPdBeta, resForGamma, inputDy,
                                        LocalTensor<uint8_t>(), tiling);
}

}  // namespace AscendC
