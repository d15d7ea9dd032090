// Quantisation APIs of the advanced API (Atlas A2 forms): AscendQuant (per tensor: int8 = round(src x scale
// + offset)), AscendDequant (int32 x per-column scale, DequantParams), AscendAntiQuant (int8 -> half,
// (src + offset) x scale per column or per group of rows, not transposed), each over the basic layer's
// Cast and vector calls. AscendQuant of float computes in float, converts to half (round to nearest) and
// then to int8 (round to nearest even, saturating), the chip's float -> half -> int8 path; half computes
// in half; per channel (a scale, and an offset, per element of the last axis) the same with one
// instruction per 256 bytes of row for all rows (row_vec). AscendDequant into half goes through float
// (the product rounded to half once). AscendAntiQuant computes in its output type (half: the reference's
// golden data round after each operation). Simplified: AscendAntiQuant with isTranspose or bfloat16
// output is a compile-time error naming the API.
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>

#include "sfumato_ascendc/adv_common.h"
#include "sfumato_ascendc/adv_rows.h"
#include "sfumato_ascendc/core_state.h"
#include "sfumato_ascendc/stack_buffer.h"
#include "sfumato_ascendc/unsupported.h"

namespace AscendC {

struct DequantParams {
    uint32_t m = 0;
    uint32_t n = 0;
    uint32_t calCount = 0;
};
enum class DeQuantMode { DEQUANT_WITH_SINGLE_ROW = 0, DEQUANT_WITH_MULTI_ROW };
struct AscendQuantConfig {
    bool hasOffset = true;
    int32_t kDim = 1;
};
constexpr AscendQuantConfig ASCEND_QUANT_DEFAULT_CFG = {true, 1};
struct AntiQuantShapeInfo {
    uint32_t offsetHeight = 0;
    uint32_t offsetWidth = 0;
    uint32_t scaleHeight = 0;
    uint32_t scaleWidth = 0;
};

// ---- AscendQuant (per tensor) ----
template <class T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<uint8_t>& sharedTmpBuffer, const float scale, const float offset,
                 const uint32_t calCount) {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, half> || sfumato_unsupported::always_false<T>,
                  "AscendC::AscendQuant takes half or float tensors");
    sfumato::ascendc::enter("AscendQuant");
    if (calCount > srcTensor.GetSize() || calCount > dstTensor.GetSize())
        sfumato::ascendc::fail("AscendQuant: calCount " + std::to_string(calCount) +
                               " exceeds a tensor's size");
    const int32_t n = static_cast<int32_t>(calCount);
    if constexpr (std::is_same_v<T, float>) {
        if (uint64_t{sharedTmpBuffer.GetSize()} < uint64_t{calCount} * 6)
            sfumato::ascendc::fail("AscendQuant: a float source needs a sharedTmpBuffer of " +
                                   std::to_string(uint64_t{calCount} * 6) +
                                   " bytes (GetAscendQuantMaxMinTmpSize); it has " +
                                   std::to_string(sharedTmpBuffer.GetSize()));
        const LocalTensor<float> f = sharedTmpBuffer.ReinterpretCast<float>();
        const LocalTensor<half> h = sharedTmpBuffer[calCount * 4].ReinterpretCast<half>();
        Muls(f, srcTensor, scale, n);
        Adds(f, f, offset, n);
        Cast(h, f, RoundMode::CAST_RINT, calCount);
        Cast(dstTensor, h, RoundMode::CAST_RINT, calCount);
    } else {
        if (uint64_t{sharedTmpBuffer.GetSize()} < uint64_t{calCount} * 2)
            sfumato::ascendc::fail("AscendQuant: a half source needs a sharedTmpBuffer of " +
                                   std::to_string(uint64_t{calCount} * 2) + " bytes");
        const LocalTensor<half> h = sharedTmpBuffer.ReinterpretCast<half>();
        Muls(h, srcTensor, static_cast<half>(scale), n);
        Adds(h, h, static_cast<half>(offset), n);
        Cast(dstTensor, h, RoundMode::CAST_RINT, calCount);
    }
}
template <class T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor, const float scale,
                 const float offset, const uint32_t calCount) {
    // The reference's framework-allocated form: sfumato takes the scratch from the unallocated UB
    // (PopStackBuffer).
    LocalTensor<uint8_t> tmp;
    if (!PopStackBuffer<uint8_t, TPosition::LCM>(tmp))
        sfumato::ascendc::fail("AscendQuant: no TPipe to take the scratch from");
    AscendQuant<T, isReuseSource, config>(dstTensor, srcTensor, tmp, scale, offset, calCount);
}
template <class T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor, const float scale,
                 const float offset) {
    AscendQuant<T, isReuseSource, config>(dstTensor, srcTensor, scale, offset, srcTensor.GetSize());
}
template <class T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<uint8_t>& sharedTmpBuffer, const float scale, const float offset) {
    AscendQuant<T, isReuseSource, config>(dstTensor, srcTensor, sharedTmpBuffer, scale, offset,
                                          srcTensor.GetSize());
}

// ---- AscendQuant per channel: scale (and offset) per element of the last axis ----
namespace sfumato_quant {
template <class T>
struct same {
    using type = T;
};
template <class T>
using same_t = typename same<T>::type;  // std::type_identity_t (C++20): a non-deduced context
// int8 dst = round(src x scale[c] + offset[c] or offset) for calCount elements in rows of scaleCount.
template <class T>
void per_channel(const LocalTensor<int8_t>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer,
                 const LocalTensor<T>& scale, const sfumato_quant::same_t<LocalTensor<T>>* offsetTensor,
                 sfumato_quant::same_t<T> offset, uint32_t scaleCount,
                 uint32_t offsetCount, uint32_t calCount) {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, half> || sfumato_unsupported::always_false<T>,
                  "AscendC::AscendQuant takes half or float tensors");
    sfumato::ascendc::enter("AscendQuant");
    if (scaleCount == 0 || calCount % scaleCount != 0 || scaleCount * sizeof(T) % 32 != 0 ||
        calCount > src.GetSize() || calCount > dst.GetSize() || scaleCount > scale.GetSize() ||
        (offsetTensor && (offsetCount != scaleCount || offsetCount > offsetTensor->GetSize())))
        sfumato::ascendc::fail("AscendQuant: calCount " + std::to_string(calCount) + " in rows of scaleCount " +
                               std::to_string(scaleCount) +
                               " (whole rows of whole 32-byte blocks; an offset tensor of as many elements)");
    const uint32_t rows = calCount / scaleCount;
    LocalTensor<uint8_t> t = sharedTmpBuffer;
    if (!t.valid() || t.GetSize() == 0) {
        if (!PopStackBuffer<uint8_t, TPosition::LCM>(t))
            sfumato::ascendc::fail("AscendQuant: no sharedTmpBuffer and no TPipe to take the scratch from");
    }
    const uint64_t need = uint64_t{calCount} * (std::is_same_v<T, float> ? 6 : 2);
    if (t.GetSize() < need)
        sfumato::ascendc::fail("AscendQuant: the sharedTmpBuffer must hold " + std::to_string(need) +
                               " bytes (GetAscendQuantMaxMinTmpSize); it has " + std::to_string(t.GetSize()));
    const LocalTensor<T> v = t.ReinterpretCast<T>();
    sfumato_adv::row_vec<sfumato_adv::Bin::MUL>(v, src, scale, rows, scaleCount);
    if (offsetTensor)
        sfumato_adv::row_vec<sfumato_adv::Bin::ADD>(v, v, *offsetTensor, rows, scaleCount);
    else
        Adds(v, v, offset, static_cast<int32_t>(calCount));
    if constexpr (std::is_same_v<T, float>) {
        const LocalTensor<half> h = t[calCount * 4].ReinterpretCast<half>();
        Cast(h, v, RoundMode::CAST_RINT, calCount);
        Cast(dst, h, RoundMode::CAST_RINT, calCount);
    } else {
        Cast(dst, v, RoundMode::CAST_RINT, calCount);
    }
}
}  // namespace sfumato_quant

template <class T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<uint8_t>& sharedTmpBuffer, const LocalTensor<T>& scaleTensor, const T offset,
                 const uint32_t scaleCount, const uint32_t calCount) {
    sfumato_quant::per_channel(dstTensor, srcTensor, sharedTmpBuffer, scaleTensor, nullptr, offset, scaleCount, 0,
                               calCount);
}
template <class T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<T>& scaleTensor, const T offset, const uint32_t scaleCount,
                 const uint32_t calCount) {
    sfumato_quant::per_channel(dstTensor, srcTensor, LocalTensor<uint8_t>(), scaleTensor, nullptr, offset, scaleCount,
                               0, calCount);
}
template <class T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<uint8_t>& sharedTmpBuffer, const LocalTensor<T>& scaleTensor, const T offset) {
    sfumato_quant::per_channel(dstTensor, srcTensor, sharedTmpBuffer, scaleTensor, nullptr, offset,
                               scaleTensor.GetSize(), 0, srcTensor.GetSize());
}
template <class T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<T>& scaleTensor, const T offset) {
    sfumato_quant::per_channel(dstTensor, srcTensor, LocalTensor<uint8_t>(), scaleTensor, nullptr, offset,
                               scaleTensor.GetSize(), 0, srcTensor.GetSize());
}
template <class T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<uint8_t>& sharedTmpBuffer, const LocalTensor<T>& scaleTensor,
                 const LocalTensor<T>& offsetTensor, const uint32_t scaleCount, const uint32_t offsetCount,
                 const uint32_t calCount) {
    sfumato_quant::per_channel(dstTensor, srcTensor, sharedTmpBuffer, scaleTensor, &offsetTensor, T{}, scaleCount,
                               offsetCount, calCount);
}
template <class T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<T>& scaleTensor, const LocalTensor<T>& offsetTensor, const uint32_t scaleCount,
                 const uint32_t offsetCount, const uint32_t calCount) {
    sfumato_quant::per_channel(dstTensor, srcTensor, LocalTensor<uint8_t>(), scaleTensor, &offsetTensor, T{},
                               scaleCount, offsetCount, calCount);
}
template <class T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<uint8_t>& sharedTmpBuffer, const LocalTensor<T>& scaleTensor,
                 const LocalTensor<T>& offsetTensor) {
    sfumato_quant::per_channel(dstTensor, srcTensor, sharedTmpBuffer, scaleTensor, &offsetTensor, T{},
                               scaleTensor.GetSize(), offsetTensor.GetSize(), srcTensor.GetSize());
}
template <class T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<T>& scaleTensor, const LocalTensor<T>& offsetTensor) {
    sfumato_quant::per_channel(dstTensor, srcTensor, LocalTensor<uint8_t>(), scaleTensor, &offsetTensor, T{},
                               scaleTensor.GetSize(), offsetTensor.GetSize(), srcTensor.GetSize());
}

// ---- AscendDequant (per column) ----
template <class dstT, class scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                   const LocalTensor<scaleT>& deqScale, const LocalTensor<uint8_t>& sharedTmpBuffer,
                   DequantParams params) {
    static_assert((std::is_same_v<dstT, float> && std::is_same_v<scaleT, float>) ||
                      (std::is_same_v<dstT, half> && (std::is_same_v<scaleT, float> || std::is_same_v<scaleT, half>)) ||
                      sfumato_unsupported::always_false<dstT>,
                  "AscendC::AscendDequant: sfumato's Ascend C layer supports float scales into float, and float or "
                  "half scales into half");
    sfumato::ascendc::enter("AscendDequant");
    const uint64_t total = uint64_t{params.m} * params.n;
    if (params.n == 0 || params.n * sizeof(dstT) % 32 != 0 || total > srcTensor.GetSize() ||
        total > dstTensor.GetSize() || params.calCount > params.n || params.n > deqScale.GetSize())
        sfumato::ascendc::fail("AscendDequant: DequantParams {m " + std::to_string(params.m) + ", n " +
                               std::to_string(params.n) + ", calCount " + std::to_string(params.calCount) +
                               "} do not fit its tensors (rows of whole 32-byte blocks of dst, calCount <= n)");
    if constexpr (std::is_same_v<dstT, float>) {
        (void)sharedTmpBuffer;
        Cast(dstTensor, srcTensor, RoundMode::CAST_NONE, static_cast<uint32_t>(total));
        sfumato_adv::row_vec<sfumato_adv::Bin::MUL>(dstTensor, dstTensor, deqScale, params.m, params.n);
    } else {
        // half: int32 -> float, times the (float) scale of each column, rounded to half (the chip's path);
        // scratch: the float product (and a half scale converted to float)
        LocalTensor<uint8_t> t = sharedTmpBuffer;
        if (!t.valid() || t.GetSize() == 0) {
            if (!PopStackBuffer<uint8_t, TPosition::LCM>(t))
                sfumato::ascendc::fail("AscendDequant: no sharedTmpBuffer and no TPipe to take the scratch from");
        }
        const uint64_t need = total * 4 + (std::is_same_v<scaleT, half> ? uint64_t{params.n} * 4 : 0);
        if (t.GetSize() < need)
            sfumato::ascendc::fail("AscendDequant: into half the sharedTmpBuffer must hold " + std::to_string(need) +
                                   " bytes (GetAscendDequantMaxMinTmpSize); it has " + std::to_string(t.GetSize()));
        const LocalTensor<float> f = t.ReinterpretCast<float>();
        Cast(f, srcTensor, RoundMode::CAST_NONE, static_cast<uint32_t>(total));
        if constexpr (std::is_same_v<scaleT, float>) {
            sfumato_adv::row_vec<sfumato_adv::Bin::MUL>(f, f, deqScale, params.m, params.n);
        } else {
            const LocalTensor<float> sc = f[static_cast<uint32_t>(total)];
            Cast(sc, deqScale, RoundMode::CAST_NONE, params.n);
            sfumato_adv::row_vec<sfumato_adv::Bin::MUL>(f, f, sc, params.m, params.n);
        }
        Cast(dstTensor, f, RoundMode::CAST_RINT, static_cast<uint32_t>(total));
    }
}
template <class dstT, class scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                   const LocalTensor<scaleT>& deqScale, DequantParams params) {
    AscendDequant<dstT, scaleT, mode>(dstTensor, srcTensor, deqScale, LocalTensor<uint8_t>(), params);
}

// ---- AscendAntiQuant (per column / per group of rows, not transposed) ----
template <class InputDataType, class OutputDataType, bool isTranspose = false>
void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                     const LocalTensor<OutputDataType>& offset, const LocalTensor<OutputDataType>& scale,
                     const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t K,
                     const AntiQuantShapeInfo& shapeInfo = {}) {
    static_assert(!isTranspose,
                  "AscendC::AscendAntiQuant with isTranspose is not supported by sfumato's Ascend C layer");
    static_assert((std::is_same_v<InputDataType, int8_t> && std::is_same_v<OutputDataType, half>) ||
                      sfumato_unsupported::always_false<InputDataType>,
                  "AscendC::AscendAntiQuant: sfumato's Ascend C layer supports int8 into half only");
    (void)sharedTmpBuffer;
    sfumato::ascendc::enter("AscendAntiQuant");
    const ShapeInfo os = offset.GetShapeInfo();
    uint32_t groups = shapeInfo.offsetHeight ? shapeInfo.offsetHeight : (os.shapeDim == 2 ? os.shape[0] : 1);
    uint32_t n =
        shapeInfo.offsetWidth ? shapeInfo.offsetWidth : (os.shapeDim == 2 ? os.shape[1] : offset.GetSize());
    if (K == 0 || groups == 0 || n == 0 || K % groups != 0 || n % 16 != 0 ||
        uint64_t{K} * n > src.GetSize() || uint64_t{K} * n > dst.GetSize() ||
        uint64_t{groups} * n > scale.GetSize() || uint64_t{groups} * n > offset.GetSize())
        sfumato::ascendc::fail(
            "AscendAntiQuant: K " + std::to_string(K) + " rows of " + std::to_string(n) + " columns with " +
            std::to_string(groups) +
            " offset/scale rows do not fit its tensors (columns a multiple of 16, K a multiple "
            "of the groups)");
    Cast(dst, src, RoundMode::CAST_NONE, K * n);
    const uint32_t per = K / groups;
    for (uint32_t g = 0; g < groups; ++g) {
        sfumato_adv::row_vec<sfumato_adv::Bin::ADD>(dst[g * per * n], dst[g * per * n], offset[g * n], per,
                                                    n);
        sfumato_adv::row_vec<sfumato_adv::Bin::MUL>(dst[g * per * n], dst[g * per * n], scale[g * n], per, n);
    }
}

}  // namespace AscendC
