// Element-wise activations of the advanced API (Sigmoid, Gelu, FasterGelu, Swish, Silu, SwiGLU, GeGLU,
// Tanh), each a chain of the basic layer's count-form vector calls (Muls, Exp, Adds, Div, ...), so their
// cycles are the model's. Intermediate values live in dst when dst is not an input the chain still
// reads; otherwise in the sharedTmpBuffer (count x sizeof(T) bytes, what the Get...TmpSize functions
// return). half and float are computed in their own type (the chip's float path for half is not
// modelled: half results may differ from it in the last bits).
// Formulas (the reference's): sigmoid(x) = 1 / (1 + e^-x); gelu(x) = x / (1 + e^(-1.5957691216 (x +
// 0.044715 x^3))); fastergelu(x) = x / (1 + e^(-1.702 x)); swish(x, b) = x / (1 + e^(-b x)); silu =
// swish(x, 1); swiglu = src0 * swish(src1, b); geglu = src0 * gelu(src1); tanh(x) = 2 / (1 + e^(-2x)) - 1.
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>

#include "sfumato_ascendc/core_state.h"
#include "sfumato_ascendc/tensor.h"
#include "sfumato_ascendc/unsupported.h"
#include "sfumato_ascendc/vector.h"

namespace AscendC {
namespace sfumato_act {

template <class T>
constexpr void require_half_float() {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, half> || sfumato_unsupported::always_false<T>,
                  "the activation APIs of sfumato's Ascend C layer take half or float tensors");
}

template <class T>
bool overlaps(const LocalTensor<T>& a, const LocalTensor<T>& b) {
    if (a.GetPosition() != b.GetPosition()) return false;
    const uint64_t a0 = a.GetPhyAddr(), a1 = a0 + uint64_t{a.GetSize()} * sizeof(T);
    const uint64_t b0 = b.GetPhyAddr(), b1 = b0 + uint64_t{b.GetSize()} * sizeof(T);
    return a0 < b1 && b0 < a1;
}

// Where the chain's intermediate values go: dst if it shares no bytes with `inputs`, else the
// sharedTmpBuffer (which must hold count elements).
template <class T, class... In>
LocalTensor<T> scratch(const char* api, const LocalTensor<T>& dst, const LocalTensor<uint8_t>& tmp,
                       uint32_t count, const In&... inputs) {
    if (count > dst.GetSize() || ((count > inputs.GetSize()) || ...))
        sfumato::ascendc::fail(std::string(api) + ": count " + std::to_string(count) +
                               " exceeds a tensor's size (dst " + std::to_string(dst.GetSize()) + ")");
    if (!(overlaps(dst, inputs) || ...)) return dst;
    if (uint64_t{tmp.GetSize()} < uint64_t{count} * sizeof(T))
        sfumato::ascendc::fail(std::string(api) +
                               ": dst overlaps an input, so the intermediate values need a "
                               "sharedTmpBuffer of " +
                               std::to_string(uint64_t{count} * sizeof(T)) + " bytes (it has " +
                               std::to_string(tmp.GetSize()) + ")");
    return tmp.ReinterpretCast<T>();
}

// t = 1 + e^(k * x) for the first n elements.
template <class T>
void one_plus_exp(const LocalTensor<T>& t, const LocalTensor<T>& x, float k, int32_t n) {
    Muls(t, x, static_cast<T>(k), n);
    Exp(t, t, n);
    Adds(t, t, static_cast<T>(1.0f), n);
}

// t = 1 + e^(-1.5957691216 (x + 0.044715 x^3)), the tanh form of GELU's denominator.
template <class T>
void gelu_denominator(const LocalTensor<T>& t, const LocalTensor<T>& x, int32_t n) {
    Mul(t, x, x, n);
    Mul(t, t, x, n);
    Muls(t, t, static_cast<T>(0.044715f), n);
    Add(t, t, x, n);
    one_plus_exp(t, t, -1.5957691216057308f, n);
}

}  // namespace sfumato_act

// ---- Sigmoid ----
template <class T, bool isReuseSource = false>
void Sigmoid(const LocalTensor<T>& dst, const LocalTensor<T>& src,
             const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount) {
    sfumato_act::require_half_float<T>();
    sfumato::ascendc::enter("Sigmoid");
    (void)sharedTmpBuffer;
    const int32_t n = static_cast<int32_t>(calCount);
    // Every step reads only the previous one's result, so dst serves even when it is src.
    sfumato_act::scratch("Sigmoid", dst, LocalTensor<uint8_t>(), calCount);
    sfumato_act::one_plus_exp(dst, src, -1.0f, n);
    Reciprocal(dst, dst, n);
}
template <class T, bool isReuseSource = false>
void Sigmoid(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t calCount) {
    Sigmoid<T, isReuseSource>(dst, src, LocalTensor<uint8_t>(), calCount);
}
template <class T, bool isReuseSource = false>
void Sigmoid(const LocalTensor<T>& dst, const LocalTensor<T>& src,
             const LocalTensor<uint8_t>& sharedTmpBuffer) {
    Sigmoid<T, isReuseSource>(dst, src, sharedTmpBuffer, src.GetSize());
}
template <class T, bool isReuseSource = false>
void Sigmoid(const LocalTensor<T>& dst, const LocalTensor<T>& src) {
    Sigmoid<T, isReuseSource>(dst, src, LocalTensor<uint8_t>(), src.GetSize());
}

// ---- Tanh: 2 sigmoid(2x) - 1 ----
template <class T, bool isReuseSource = false>
void Tanh(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer,
          const uint32_t calCount) {
    sfumato_act::require_half_float<T>();
    sfumato::ascendc::enter("Tanh");
    (void)sharedTmpBuffer;
    const int32_t n = static_cast<int32_t>(calCount);
    sfumato_act::scratch("Tanh", dst, LocalTensor<uint8_t>(), calCount);
    sfumato_act::one_plus_exp(dst, src, -2.0f, n);
    Reciprocal(dst, dst, n);
    Muls(dst, dst, static_cast<T>(2.0f), n);
    Adds(dst, dst, static_cast<T>(-1.0f), n);
}
template <class T, bool isReuseSource = false>
void Tanh(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t calCount) {
    Tanh<T, isReuseSource>(dst, src, LocalTensor<uint8_t>(), calCount);
}

// ---- Gelu, FasterGelu ----
template <class T, bool highPrecision = false, bool highPerformance = false>
void Gelu(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer,
          const uint32_t dataSize) {
    sfumato_act::require_half_float<T>();
    sfumato::ascendc::enter("Gelu");
    const int32_t n = static_cast<int32_t>(dataSize);
    const LocalTensor<T> t = sfumato_act::scratch("Gelu", dst, sharedTmpBuffer, dataSize, src);
    sfumato_act::gelu_denominator(t, src, n);
    Div(dst, src, t, n);
}
template <class T, bool highPrecision = false, bool highPerformance = false>
void Gelu(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dataSize) {
    Gelu<T, highPrecision, highPerformance>(dst, src, LocalTensor<uint8_t>(), dataSize);
}

template <class T, bool highPrecision = false, bool highPerformance = false>
void FasterGelu(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t dataSize) {
    sfumato_act::require_half_float<T>();
    sfumato::ascendc::enter("FasterGelu");
    const int32_t n = static_cast<int32_t>(dataSize);
    const LocalTensor<T> t = sfumato_act::scratch("FasterGelu", dst, sharedTmpBuffer, dataSize, src);
    sfumato_act::one_plus_exp(t, src, -1.702f, n);
    Div(dst, src, t, n);
}
template <class T, bool highPrecision = false, bool highPerformance = false>
void FasterGelu(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dataSize) {
    FasterGelu<T, highPrecision, highPerformance>(dst, src, LocalTensor<uint8_t>(), dataSize);
}

// ---- Swish, Silu ----
template <class T, bool isReuseSource = false>
void Swish(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, uint32_t dataSize,
           const T& scalarValue) {
    sfumato_act::require_half_float<T>();
    sfumato::ascendc::enter("Swish");
    const int32_t n = static_cast<int32_t>(dataSize);
    const LocalTensor<T> t =
        sfumato_act::scratch("Swish", dstLocal, LocalTensor<uint8_t>(), dataSize, srcLocal);
    sfumato_act::one_plus_exp(t, srcLocal, -static_cast<float>(scalarValue), n);
    Div(dstLocal, srcLocal, t, n);
}
template <class T, bool isReuseSource = false>
void Silu(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, uint32_t dataSize) {
    sfumato_act::require_half_float<T>();
    sfumato::ascendc::enter("Silu");
    const int32_t n = static_cast<int32_t>(dataSize);
    const LocalTensor<T> t =
        sfumato_act::scratch("Silu", dstLocal, LocalTensor<uint8_t>(), dataSize, srcLocal);
    sfumato_act::one_plus_exp(t, srcLocal, -1.0f, n);
    Div(dstLocal, srcLocal, t, n);
}

// ---- SwiGLU, GeGLU ----
template <class T, bool isReuseSource = false>
void SwiGLU(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0,
            const LocalTensor<T>& srcTensor1, const T& scalarValue,
            const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount) {
    sfumato_act::require_half_float<T>();
    sfumato::ascendc::enter("SwiGLU");
    const int32_t n = static_cast<int32_t>(calCount);
    const LocalTensor<T> t =
        sfumato_act::scratch("SwiGLU", dstTensor, sharedTmpBuffer, calCount, srcTensor0, srcTensor1);
    sfumato_act::one_plus_exp(t, srcTensor1, -static_cast<float>(scalarValue), n);
    Div(t, srcTensor1, t, n);
    Mul(dstTensor, t, srcTensor0, n);
}
template <class T, bool isReuseSource = false>
void SwiGLU(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0,
            const LocalTensor<T>& srcTensor1, const T& scalarValue,
            const LocalTensor<uint8_t>& sharedTmpBuffer) {
    SwiGLU<T, isReuseSource>(dstTensor, srcTensor0, srcTensor1, scalarValue, sharedTmpBuffer,
                             srcTensor0.GetSize());
}
template <class T, bool isReuseSource = false>
void SwiGLU(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0,
            const LocalTensor<T>& srcTensor1, const T& scalarValue, const uint32_t calCount) {
    SwiGLU<T, isReuseSource>(dstTensor, srcTensor0, srcTensor1, scalarValue, LocalTensor<uint8_t>(),
                             calCount);
}
template <class T, bool isReuseSource = false>
void SwiGLU(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0,
            const LocalTensor<T>& srcTensor1, const T& scalarValue) {
    SwiGLU<T, isReuseSource>(dstTensor, srcTensor0, srcTensor1, scalarValue, LocalTensor<uint8_t>(),
                             srcTensor0.GetSize());
}

template <class T, bool isReuseSource = false>
void GeGLU(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0,
           const LocalTensor<T>& srcTensor1, const LocalTensor<uint8_t>& sharedTmpBuffer, uint32_t calCount) {
    sfumato_act::require_half_float<T>();
    sfumato::ascendc::enter("GeGLU");
    const int32_t n = static_cast<int32_t>(calCount);
    const LocalTensor<T> t =
        sfumato_act::scratch("GeGLU", dstTensor, sharedTmpBuffer, calCount, srcTensor0, srcTensor1);
    sfumato_act::gelu_denominator(t, srcTensor1, n);
    Div(t, srcTensor1, t, n);
    Mul(dstTensor, t, srcTensor0, n);
}
template <class T, bool isReuseSource = false>
void GeGLU(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0,
           const LocalTensor<T>& srcTensor1, const LocalTensor<uint8_t>& sharedTmpBuffer) {
    GeGLU<T, isReuseSource>(dstTensor, srcTensor0, srcTensor1, sharedTmpBuffer, srcTensor0.GetSize());
}
template <class T, bool isReuseSource = false>
void GeGLU(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0,
           const LocalTensor<T>& srcTensor1, uint32_t calCount) {
    GeGLU<T, isReuseSource>(dstTensor, srcTensor0, srcTensor1, LocalTensor<uint8_t>(), calCount);
}
template <class T, bool isReuseSource = false>
void GeGLU(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0,
           const LocalTensor<T>& srcTensor1) {
    GeGLU<T, isReuseSource>(dstTensor, srcTensor0, srcTensor1, LocalTensor<uint8_t>(), srcTensor0.GetSize());
}

}  // namespace AscendC
