// The conformance program's trigonometric family (tests/ascendc/conformance.cpp dispatches to it): one AIV kernel
// runs Sin, Cos (|x| up to the reference's 65504), Tan, Asin, Acos (with +-1 and 0), Atan (up to 1e4), Sinh,
// Cosh, Atanh, Asinh, Sign (with zeros) and Round (with halves) on 300 floats each, in slices of the host's minimum sharedTmpBuffer
// (two slices), and Sin and Atan on half; the host compares every element with its double-precision value.
// "trig": the above.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "tikicpulib.h"
#include "tiling/tiling_api.h"

namespace {

constexpr uint32_t kN = 300, kPad = 320;
enum Api { kSin, kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh, kAtanh, kAsinh, kSign, kRound, kApis };
constexpr uint32_t kHalfOuts = 2;  // Sin and Atan of half

double wave(uint32_t i) { return std::sin(0.37 * i + 0.1); }
// The inputs of each API (within the reference's domain).
float input(int api, uint32_t i) {
    const double w = wave(i);
    switch (api) {
        case kSin:
        case kCos: return static_cast<float>(i % 10 == 9 ? w * 65504.0 : w * 7.0);
        case kTan: return static_cast<float>(w * 1.5);
        case kAsin:
        case kAcos: return i < 3 ? static_cast<float>(i) - 1.0f : static_cast<float>(w);
        case kAtan: return static_cast<float>(i % 10 == 9 ? w * 1e4 : w * 4.0);
        case kSinh:
        case kCosh: return static_cast<float>(w * 5.0);
        case kAtanh: return static_cast<float>(w * 0.98);
        case kAsinh: return static_cast<float>(w * 300.0);
        case kRound: return i % 5 == 0 ? static_cast<float>(i / 5) - 30.5f : static_cast<float>(w * 10.0);
        default: return i % 7 == 0 ? 0.0f : static_cast<float>(w);
    }
}
double want(int api, double x) {
    switch (api) {
        case kSin: return std::sin(x);
        case kCos: return std::cos(x);
        case kTan: return std::tan(x);
        case kAsin: return std::asin(x);
        case kAcos: return std::acos(x);
        case kAtan: return std::atan(x);
        case kSinh: return std::sinh(x);
        case kCosh: return std::cosh(x);
        case kAtanh: return std::atanh(x);
        case kAsinh: return std::asinh(x);
        case kRound: return std::round(x);  // halves away from zero
        default: return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
    }
}
const char* kNames[kApis] = {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Atanh", "Asinh", "Sign", "Round"};

}  // namespace

extern "C" __global__ __aicore__ void trig_kernel(GM_ADDR in, GM_ADDR out, uint32_t tmpBytes) {
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> bx, by, bh, bt;
    pipe.InitBuffer(bx, kApis * kPad * 4);
    pipe.InitBuffer(by, kPad * 4);
    pipe.InitBuffer(bh, 2 * kPad * 2);
    pipe.InitBuffer(bt, tmpBytes);
    AscendC::GlobalTensor<float> ig, og;
    ig.SetGlobalBuffer((__gm__ float*)in, kApis * kPad);
    og.SetGlobalBuffer((__gm__ float*)out, (kApis + kHalfOuts) * kPad);
    AscendC::LocalTensor<float> x = bx.Get<float>(), y = by.Get<float>();
    AscendC::LocalTensor<half> h = bh.Get<half>(), hy = h[kPad];
    AscendC::LocalTensor<uint8_t> tmp = bt.Get<uint8_t>();
    AscendC::DataCopy(x, ig, kApis * kPad);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    uint32_t slot = 0;
    auto store = [&](const AscendC::LocalTensor<float>& t) {
        AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
        AscendC::DataCopy(og[slot++ * kPad], t, kPad);
        AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID0);
    };
    AscendC::Sin<float>(y, x[kSin * kPad], tmp, kN);
    store(y);
    AscendC::Cos<float>(y, x[kCos * kPad], tmp, kN);
    store(y);
    AscendC::Tan<float>(y, x[kTan * kPad], tmp, kN);
    store(y);
    AscendC::Asin<float>(y, x[kAsin * kPad], tmp, kN);
    store(y);
    AscendC::Acos<float>(y, x[kAcos * kPad], tmp, kN);
    store(y);
    AscendC::Atan<float>(y, x[kAtan * kPad], tmp, kN);
    store(y);
    AscendC::Sinh<float>(y, x[kSinh * kPad], tmp, kN);
    store(y);
    AscendC::Cosh<float>(y, x[kCosh * kPad], kN);  // the scratch from the UB the TPipe has not handed out
    store(y);
    AscendC::Atanh<float>(y, x[kAtanh * kPad], tmp, kN);
    store(y);
    AscendC::Asinh<float>(y, x[kAsinh * kPad], tmp, kN);
    store(y);
    AscendC::Sign<float>(y, x[kSign * kPad], tmp, kN);
    store(y);
    AscendC::Round<float>(y, x[kRound * kPad], tmp, kN);
    store(y);
    AscendC::Cast(h, x[kSin * kPad], AscendC::RoundMode::CAST_RINT, kN);
    AscendC::Sin<half>(hy, h, tmp, kN);
    AscendC::Cast(y, hy, AscendC::RoundMode::CAST_NONE, kN);
    store(y);
    AscendC::Cast(h, x[kAtan * kPad], AscendC::RoundMode::CAST_RINT, kN);
    AscendC::Atan<half>(hy, h, tmp, kN);
    AscendC::Cast(y, hy, AscendC::RoundMode::CAST_NONE, kN);
    store(y);
}

int trig_family(const std::string& name) {
    if (name != "trig") return -1;
    // The minimum sharedTmpBuffer of the API needing most (Asin on half), so 300 elements take two slices.
    uint32_t maxB = 0, minB = 0, worst = 0;
    const ge::Shape shape({kN});
    for (uint32_t ts : {2u, 4u}) {
        AscendC::GetAsinMaxMinTmpSize(shape, ts, false, maxB, minB);
        worst = std::max(worst, minB);
        AscendC::GetSinMaxMinTmpSize(shape, ts, false, maxB, minB);
        worst = std::max(worst, minB);
    }
    float* in = static_cast<float*>(AscendC::GmAlloc(kApis * kPad * 4));
    float* out = static_cast<float*>(AscendC::GmAlloc((kApis + kHalfOuts) * kPad * 4));
    std::memset(in, 0, kApis * kPad * 4);
    for (int a = 0; a < kApis; ++a)
        for (uint32_t i = 0; i < kN; ++i) in[a * kPad + i] = input(a, i);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(trig_kernel, 1, (uint8_t*)in, (uint8_t*)out, worst);
    int bad = 0;
    auto check = [&](const char* api, uint32_t slot, int ref, double tol, bool half) {
        for (uint32_t i = 0; i < kN && bad < 5; ++i) {
            double x = in[ref * kPad + i];
            if (half) x = static_cast<float>(static_cast<::half>(static_cast<float>(x)));
            const double w = want(ref, x), g = out[slot * kPad + i];
            if (!(std::fabs(g - w) <= tol * (1.0 + std::fabs(w)))) {
                std::printf("trig wrong: %s%s(%.9g) is %.9g, expected %.9g\n", api, half ? " (half)" : "", x, g, w);
                ++bad;
            }
        }
    };
    for (int a = 0; a < kApis; ++a) check(kNames[a], static_cast<uint32_t>(a), a, 4e-6, false);
    check("Sin", kApis, kSin, 2e-3, true);
    check("Atan", kApis + 1, kAtan, 2e-3, true);
    if (!bad) std::printf("trig ok\n");
    AscendC::GmFree(in);
    AscendC::GmFree(out);
    return bad ? 1 : 0;
}
