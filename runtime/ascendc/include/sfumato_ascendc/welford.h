// WelfordUpdate and WelfordFinalize (float), the online mean/variance pair of the advanced API, over the
// basic layer's vector calls:
//   WelfordUpdate on src [rnLength, abLength], for the first abComputeLength columns of each row:
//     d = x - inMean, outMean = inMean + d nRec, outVar = inVar + d (x - outMean);
//   the other columns get inMean/inVar (so the in-place and the separate configurations agree);
//   WelfordFinalize with counts (abLength <= 64 partial results):
//     mean = rRec sum(counts_i mean_i), var = rRec (sum(var_i) + sum(counts_i (mean_i - mean)^2)),
//   written to element 0 of outputMean/outputVariance.
// Simplified: WelfordFinalize without counts (its formula is not in the public text sfumato read) and half
// inputs are compile-time errors naming the API.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "sfumato_ascendc/adv_rows.h"
#include "sfumato_ascendc/stack_buffer.h"
#include "sfumato_ascendc/unsupported.h"

namespace AscendC {

struct WelfordUpdateParam {
    uint32_t rnLength = 0;
    uint32_t abLength = 0;
    uint32_t abComputeLength = 0;
    float nRec = 0;
};
struct WelfordUpdateConfig {
    bool isInplace = false;
};
constexpr WelfordUpdateConfig WFUPDATE_DEFAULT_CFG = {false};
struct WelfordFinalizePara {
    uint32_t rnLength = 0;
    uint32_t abLength = 0;
    uint32_t headCount = 0;
    uint32_t headCountLength = 0;
    uint32_t tailCount = 0;
    uint32_t tailCountLength = 0;
    float abRec = 0;
    float rRec = 0;
};

template <class T, class U, bool isReuseSource = false,
          const WelfordUpdateConfig& config = WFUPDATE_DEFAULT_CFG>
void WelfordUpdate(const LocalTensor<U>& outputMean, const LocalTensor<U>& outputVariance,
                   const LocalTensor<U>& inputMean, const LocalTensor<U>& inputVariance,
                   const LocalTensor<T>& inputX, const LocalTensor<uint8_t>& sharedTmpBuffer,
                   const WelfordUpdateParam& para) {
    static_assert(
        (std::is_same_v<T, float> && std::is_same_v<U, float>) || sfumato_unsupported::always_false<T>,
        "AscendC::WelfordUpdate: sfumato's Ascend C layer supports float only");
    sfumato::ascendc::enter("WelfordUpdate");
    const uint32_t rn = para.rnLength, ab = para.abLength, comp = para.abComputeLength;
    const uint64_t n = uint64_t{rn} * ab;
    if (rn == 0 || ab == 0 || ab % 8 != 0 || comp > ab || rn > 255 || ab / 8 > 255 || n > inputX.GetSize() ||
        n > inputMean.GetSize() || n > inputVariance.GetSize() || n > outputMean.GetSize() ||
        n > outputVariance.GetSize())
        sfumato::ascendc::fail(
            "WelfordUpdate: rnLength " + std::to_string(rn) + ", abLength " + std::to_string(ab) +
            ", abComputeLength " + std::to_string(comp) +
            " (abLength a multiple of 8, at most 2040; rnLength at most 255; the tensors that "
            "large)");
    if (uint64_t{sharedTmpBuffer.GetSize()} < 2 * n * 4)
        sfumato::ascendc::fail("WelfordUpdate: sharedTmpBuffer of " +
                               std::to_string(sharedTmpBuffer.GetSize()) + " bytes, it needs " +
                               std::to_string(2 * n * 4) + " (GetWelfordUpdateMaxMinTmpSize)");
    const LocalTensor<float> d = sharedTmpBuffer.ReinterpretCast<float>(), e = d[static_cast<uint32_t>(n)];
    const int32_t all = static_cast<int32_t>(n);
    if (comp < ab) {
        if (outputMean.GetPhyAddr() != inputMean.GetPhyAddr()) sfumato_adv::copy(outputMean, inputMean, all);
        if (outputVariance.GetPhyAddr() != inputVariance.GetPhyAddr())
            sfumato_adv::copy(outputVariance, inputVariance, all);
    }
    const uint8_t rs = static_cast<uint8_t>(ab / 8), rep = static_cast<uint8_t>(rn);
    const BinaryRepeatParams bp{1, 1, 1, rs, rs, rs};
    const UnaryRepeatParams up{1, 1, rs, rs};
    for (uint32_t c = 0; c * 64 < comp; ++c) {
        const uint64_t lanes = std::min<uint32_t>(64, comp - c * 64);
        const uint32_t o = c * 64;
        Sub(d[o], inputX[o], inputMean[o], lanes, rep, bp);
        Muls(e[o], d[o], para.nRec, lanes, rep, up);
        Add(outputMean[o], e[o], inputMean[o], lanes, rep, bp);
        Sub(e[o], inputX[o], outputMean[o], lanes, rep, bp);
        Mul(e[o], d[o], e[o], lanes, rep, bp);
        Add(outputVariance[o], inputVariance[o], e[o], lanes, rep, bp);
    }
}
template <class T, class U, bool isReuseSource = false,
          const WelfordUpdateConfig& config = WFUPDATE_DEFAULT_CFG>
void WelfordUpdate(const LocalTensor<U>& outputMean, const LocalTensor<U>& outputVariance,
                   const LocalTensor<U>& inputMean, const LocalTensor<U>& inputVariance,
                   const LocalTensor<T>& inputX, const WelfordUpdateParam& para) {
    LocalTensor<uint8_t> tmp;
    if (!PopStackBuffer<uint8_t, TPosition::LCM>(tmp))
        sfumato::ascendc::fail("WelfordUpdate: no UB left for its scratch (the TPipe took it all)");
    WelfordUpdate<T, U, isReuseSource, config>(outputMean, outputVariance, inputMean, inputVariance, inputX,
                                               tmp, para);
}

namespace sfumato_welford {
// WelfordFinalize over abLength partial results with weights (counts) c_i in cf:
// mean = rRec * sum c_i mean_i (or abRec * sum mean_i when every weight is rnLength: `plainMean`),
// var = rRec * sum (var_i + c_i (mean_i - mean)^2).
inline void finalize(const LocalTensor<float>& outputMean, const LocalTensor<float>& outputVariance,
                     const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                     const LocalTensor<float>& cf, const LocalTensor<float>& t, const LocalTensor<float>& blk,
                     const WelfordFinalizePara& para, bool plainMean) {
    const uint32_t ab = para.abLength;
    const int32_t n = static_cast<int32_t>(ab);
    if (plainMean) {
        Muls(t, inputMean, para.abRec, n);
        WholeReduceSum(outputMean, t, static_cast<uint64_t>(ab), 1, 1, 1, 8);
    } else {
        Mul(t, cf, inputMean, n);
        WholeReduceSum(outputMean, t, static_cast<uint64_t>(ab), 1, 1, 1, 8);
        Muls(outputMean, outputMean, para.rRec, 1);
    }
    Brcb(blk, outputMean, 1, BrcbRepeatParams{1, 8});
    Sub(t, inputMean, blk, static_cast<uint64_t>(ab), 1, BinaryRepeatParams{1, 1, 0, 8, 8, 0});
    Mul(t, t, t, n);
    Mul(t, t, cf, n);
    Add(t, t, inputVariance, n);
    WholeReduceSum(outputVariance, t, static_cast<uint64_t>(ab), 1, 1, 1, 8);
    Muls(outputVariance, outputVariance, para.rRec, 1);
}
inline void check_finalize(const LocalTensor<float>& outputMean, const LocalTensor<float>& outputVariance,
                           const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, const WelfordFinalizePara& para) {
    const uint32_t ab = para.abLength;
    if (ab == 0 || ab > 64 || ab > inputMean.GetSize() || ab > inputVariance.GetSize() ||
        outputMean.GetSize() < 8 || outputVariance.GetSize() < 8)
        sfumato::ascendc::fail("WelfordFinalize: abLength " + std::to_string(ab) +
                               " (1..64 partial results, the outputs a 32-byte block each)");
    if (sharedTmpBuffer.GetSize() < 3 * 256)
        sfumato::ascendc::fail("WelfordFinalize: sharedTmpBuffer of " + std::to_string(sharedTmpBuffer.GetSize()) +
                               " bytes, it needs 768 (GetWelfordFinalizeMaxMinTmpSize)");
}
}  // namespace sfumato_welford

template <bool isReuseSource = false>
void WelfordFinalize(const LocalTensor<float>& outputMean, const LocalTensor<float>& outputVariance,
                     const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                     const LocalTensor<int32_t>& counts, const LocalTensor<uint8_t>& sharedTmpBuffer,
                     WelfordFinalizePara& para) {
    sfumato::ascendc::enter("WelfordFinalize");
    sfumato_welford::check_finalize(outputMean, outputVariance, inputMean, inputVariance, sharedTmpBuffer, para);
    if (para.abLength > counts.GetSize())
        sfumato::ascendc::fail("WelfordFinalize: abLength " + std::to_string(para.abLength) + " exceeds the " +
                               std::to_string(counts.GetSize()) + " counts");
    const LocalTensor<float> cf = sharedTmpBuffer.ReinterpretCast<float>(), t = cf[64], blk = cf[128];
    Cast(cf, counts, RoundMode::CAST_NONE, para.abLength);
    sfumato_welford::finalize(outputMean, outputVariance, inputMean, inputVariance, cf, t, blk, para, false);
}
template <bool isReuseSource = false>
void WelfordFinalize(const LocalTensor<float>& outputMean, const LocalTensor<float>& outputVariance,
                     const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                     const LocalTensor<int32_t>& counts, WelfordFinalizePara& para) {
    LocalTensor<uint8_t> tmp;
    if (!PopStackBuffer<uint8_t, TPosition::LCM>(tmp))
        sfumato::ascendc::fail("WelfordFinalize: no UB left for its scratch (the TPipe took it all)");
    WelfordFinalize<isReuseSource>(outputMean, outputVariance, inputMean, inputVariance, counts, tmp, para);
}
// Without counts: the first headCountLength partial results weigh headCount, the other tailCountLength
// tailCount; with no tail every one weighs rnLength and the mean is abRec times the sum of the means.
template <bool isReuseSource = false>
void WelfordFinalize(const LocalTensor<float>& outputMean, const LocalTensor<float>& outputVariance,
                     const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                     const LocalTensor<uint8_t>& sharedTmpBuffer, WelfordFinalizePara& para) {
    sfumato::ascendc::enter("WelfordFinalize");
    sfumato_welford::check_finalize(outputMean, outputVariance, inputMean, inputVariance, sharedTmpBuffer, para);
    const LocalTensor<float> cf = sharedTmpBuffer.ReinterpretCast<float>(), t = cf[64], blk = cf[128];
    const int32_t n = static_cast<int32_t>(para.abLength);
    const bool noTail = para.tailCountLength == 0 || para.tailCount == 0;
    if (!noTail && para.headCountLength + para.tailCountLength != para.abLength)
        sfumato::ascendc::fail("WelfordFinalize: headCountLength " + std::to_string(para.headCountLength) +
                               " + tailCountLength " + std::to_string(para.tailCountLength) + " is not abLength " +
                               std::to_string(para.abLength));
    if (noTail) {
        Duplicate(cf, static_cast<float>(para.rnLength), n);
    } else {
        Duplicate(cf, static_cast<float>(para.tailCount), n);
        if (para.headCountLength > 0)
            Duplicate(cf, static_cast<float>(para.headCount),
                      static_cast<int32_t>(std::min(para.headCountLength, para.abLength)));
    }
    sfumato_welford::finalize(outputMean, outputVariance, inputMean, inputVariance, cf, t, blk, para, noTail);
}
template <bool isReuseSource = false>
void WelfordFinalize(const LocalTensor<float>& outputMean, const LocalTensor<float>& outputVariance,
                     const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                     WelfordFinalizePara& para) {
    LocalTensor<uint8_t> tmp;
    if (!PopStackBuffer<uint8_t, TPosition::LCM>(tmp))
        sfumato::ascendc::fail("WelfordFinalize: no UB left for its scratch (the TPipe took it all)");
    WelfordFinalize<isReuseSource>(outputMean, outputVariance, inputMean, inputVariance, tmp, para);
}

}  // namespace AscendC
