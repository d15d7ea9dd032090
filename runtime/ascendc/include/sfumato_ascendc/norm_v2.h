// The newer LayerNorm form (LayerNormConfig, LayerNormPara, LayerNormSeparateTiling: mean and rstd out)
// and Normalize (y = (x - mean) rstd gamma + beta from the caller's mean and variance, rstd out), float,
// [aLength rows, rLength valid of rLengthWithPad columns], over the row helpers (norm.h). Simplified:
// isNoGamma/isNoBeta are honoured, isOnlyOutput still writes mean and rstd; half is a compile-time error.
#pragma once
#include <cstdint>
#include <string>

#include "sfumato_ascendc/reduce_pattern.h"
#include "sfumato_ascendc/norm.h"

namespace AscendC {

struct LayerNormConfig {
    bool isNoBeta = false;
    bool isNoGamma = false;
    bool isOnlyOutput = false;
    bool isOutputRstd = true;
};
constexpr LayerNormConfig LNCFG_NORM = {false, false, false, true};
struct LayerNormPara {
    uint32_t aLength = 0;
    uint32_t rLength = 0;
    uint32_t rLengthWithPad = 0;
};
struct NormalizeConfig {
    ReducePattern reducePattern = ReducePattern::AR;
    int32_t aLength = -1;
    bool isNoBeta = false;
    bool isNoGamma = false;
    bool isOnlyOutput = false;
};
constexpr NormalizeConfig NLCFG_NORM = {ReducePattern::AR, -1, false, false, false};
struct NormalizePara {
    uint32_t aLength = 0;
    uint32_t rLength = 0;
    uint32_t rLengthWithPad = 0;
};

namespace sfumato_norm {

// y = d rstd [gamma] [+ beta] for a slice whose red holds var (without eps); rstd written out.
inline void scale_slice(const Slice& sl, const LocalTensor<float>& y, const LocalTensor<float>& rstdOut,
                        const LocalTensor<float>& gamma, const LocalTensor<float>& beta, float eps,
                        uint32_t n, const Shape& sh, bool noGamma, bool noBeta) {
    namespace sa = sfumato_adv;
    const int32_t cn = static_cast<int32_t>(n);
    Adds(sl.s.red, sl.s.red, eps, cn);
    Sqrt(sl.s.red, sl.s.red, cn);
    Reciprocal(sl.s.red, sl.s.red, cn);
    sa::copy(rstdOut, sl.s.red, n);
    sa::broadcast_rows(sl.s, n);
    sa::row_broadcast<Bin::MUL>(y, y, sl.s.blk, n, sh.h, sh.h);
    if (!noGamma) sa::row_vec<Bin::MUL>(y, y, gamma, n, sh.h);
    if (!noBeta) sa::row_vec<Bin::ADD>(y, y, beta, n, sh.h);
}

inline Shape ar_shape(const char* api, uint32_t a, uint32_t r, uint32_t pad, uint32_t size) {
    return shape_of(api, a, 1, pad ? pad : r, r, size);
}

}  // namespace sfumato_norm

template <class U, class T, bool isReuseSource = false, const LayerNormConfig& config = LNCFG_NORM>
void LayerNorm(const LocalTensor<T>& output, const LocalTensor<float>& outputMean,
               const LocalTensor<float>& outputRstd, const LocalTensor<T>& inputX,
               const LocalTensor<U>& gamma, const LocalTensor<U>& beta, const float epsilon,
               const LocalTensor<uint8_t>& sharedTmpBuffer, const LayerNormPara& para,
               const LayerNormSeparateTiling& tiling) {
    sfumato_norm::require_float<T>();
    sfumato_norm::require_float<U>();
    (void)tiling;
    sfumato::ascendc::enter("LayerNorm");
    namespace sa = sfumato_adv;
    const sfumato_norm::Shape sh = sfumato_norm::ar_shape("LayerNorm", para.aLength, para.rLength,
                                                          para.rLengthWithPad, inputX.GetSize());
    const uint32_t step = sfumato_norm::slice_rows("LayerNorm", sharedTmpBuffer, sh, 1, 0);
    const float inv = 1.0f / static_cast<float>(sh.valid);
    for (uint32_t r0 = 0; r0 < sh.rows; r0 += step) {
        const uint32_t n = std::min(step, sh.rows - r0);
        const sfumato_norm::Slice sl = sfumato_norm::carve(sharedTmpBuffer, n, sh.h, 1, 0);
        const LocalTensor<float> x = inputX[r0 * sh.h], y = output[r0 * sh.h];
        sa::row_reduce<sa::Fold::SUM>(sl.s, x, n, sh.h, sh.valid);
        Muls(sl.s.red, sl.s.red, inv, static_cast<int32_t>(n));
        sa::copy(outputMean[r0], sl.s.red, n);
        sa::broadcast_rows(sl.s, n);
        sa::row_broadcast<sa::Bin::SUB>(y, x, sl.s.blk, n, sh.h, sh.h);
        sa::row_dot(sl.s, y, y, n, sh.h, sh.valid);
        Muls(sl.s.red, sl.s.red, inv, static_cast<int32_t>(n));
        sfumato_norm::scale_slice(sl, y, outputRstd[r0], gamma, beta, epsilon, n, sh, config.isNoGamma,
                                  config.isNoBeta);
    }
}
template <class U, class T, bool isReuseSource = false, const LayerNormConfig& config = LNCFG_NORM>
void LayerNorm(const LocalTensor<T>& output, const LocalTensor<float>& outputMean,
               const LocalTensor<float>& outputRstd, const LocalTensor<T>& inputX,
               const LocalTensor<U>& gamma, const LocalTensor<U>& beta, const float epsilon,
               const LayerNormPara& para, const LayerNormSeparateTiling& tiling) {
    LayerNorm<U, T, isReuseSource, config>(output, outputMean, outputRstd, inputX, gamma, beta, epsilon,
                                           sfumato_norm::stack("LayerNorm"), para, tiling);
}

template <class U, class T, bool isReuseSource = false, const NormalizeConfig& config = NLCFG_NORM>
void Normalize(const LocalTensor<T>& output, const LocalTensor<float>& outputRstd,
               const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
               const LocalTensor<T>& inputX, const LocalTensor<U>& gamma, const LocalTensor<U>& beta,
               const LocalTensor<uint8_t>& sharedTmpBuffer, const float epsilon, const NormalizePara& para) {
    sfumato_norm::require_float<T>();
    sfumato_norm::require_float<U>();
    static_assert(
        config.reducePattern == ReducePattern::AR,
        "AscendC::Normalize with a reduce pattern other than AR is not supported by sfumato's Ascend C "
        "layer");
    sfumato::ascendc::enter("Normalize");
    namespace sa = sfumato_adv;
    const sfumato_norm::Shape sh = sfumato_norm::ar_shape("Normalize", para.aLength, para.rLength,
                                                          para.rLengthWithPad, inputX.GetSize());
    const uint32_t step = sfumato_norm::slice_rows("Normalize", sharedTmpBuffer, sh, 1, 0);
    for (uint32_t r0 = 0; r0 < sh.rows; r0 += step) {
        const uint32_t n = std::min(step, sh.rows - r0);
        const sfumato_norm::Slice sl = sfumato_norm::carve(sharedTmpBuffer, n, sh.h, 1, 0);
        const LocalTensor<float> x = inputX[r0 * sh.h], y = output[r0 * sh.h];
        sa::copy(sl.s.red, inputMean[r0], n);
        sa::broadcast_rows(sl.s, n);
        sa::row_broadcast<sa::Bin::SUB>(y, x, sl.s.blk, n, sh.h, sh.h);
        sa::copy(sl.s.red, inputVariance[r0], n);
        sfumato_norm::scale_slice(sl, y, outputRstd[r0], gamma, beta, epsilon, n, sh, config.isNoGamma,
                                  config.isNoBeta);
    }
}

// AscendCUtils::SetOverflow: the saturation mode of float conversions; sfumato's conversions saturate
// in either mode (isa/README.md), so it issues nothing.
struct AscendCUtils {
    static void SetOverflow(uint64_t ctrlValue) { (void)ctrlValue; }
};

}  // namespace AscendC
