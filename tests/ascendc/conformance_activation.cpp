// The conformance program's activation family (tests/ascendc/conformance.cpp dispatches to it): one AIV
// kernel runs Sigmoid, Tanh, Gelu, FasterGelu, Swish (beta 1.702), Silu, SwiGLU (beta 0.8) and GeGLU on
// 300 floats (not a whole number of 64-lane repeats), Gelu and SwiGLU once more in place (dst is an
// input, so through the sharedTmpBuffer of the host's GetGeluMaxTmpSize / GetSwiGLUMaxMinTmpSize bytes),
// and Sigmoid on half; the host compares every element with its double-precision formula.
// "activation": the above.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "tikicpulib.h"
#include "tiling/tiling_api.h"

namespace {

constexpr uint32_t kN = 300;
constexpr uint32_t kOuts = 11;  // sigmoid tanh gelu fastergelu swish silu swiglu geglu gelu_inplace
                                // swiglu_inplace sigmoid_half (as float)
float av(uint32_t i) { return static_cast<float>(std::sin(0.29 * i + 0.3) * 4.0); }
float bv(uint32_t i) { return static_cast<float>(std::cos(0.17 * i) * 3.0); }

}  // namespace

extern "C" __global__ __aicore__ void activation_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR out,
                                                        uint32_t tmpBytes) {
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> ba, bb, by, bh, bt;
    pipe.InitBuffer(ba, kN * 4);
    pipe.InitBuffer(bb, kN * 4);
    pipe.InitBuffer(by, kN * 4);
    pipe.InitBuffer(bh, kN * 2 * 2);
    pipe.InitBuffer(bt, tmpBytes);
    AscendC::GlobalTensor<float> ag, bg, og;
    ag.SetGlobalBuffer((__gm__ float*)a, kN);
    bg.SetGlobalBuffer((__gm__ float*)b, kN);
    og.SetGlobalBuffer((__gm__ float*)out, kN * kOuts);
    AscendC::LocalTensor<float> x = ba.Get<float>(), z = bb.Get<float>(), y = by.Get<float>();
    AscendC::LocalTensor<half> h = bh.Get<half>();
    AscendC::LocalTensor<uint8_t> tmp = bt.Get<uint8_t>();
    auto load = [&]() {
        AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVENT_ID0);
        AscendC::DataCopy(x, ag, kN);
        AscendC::DataCopy(z, bg, kN);
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    };
    auto store = [&](uint32_t slot, const AscendC::LocalTensor<float>& t) {
        AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
        AscendC::DataCopy(og[slot * kN], t, kN);
        AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID0);
    };
    load();
    AscendC::Sigmoid<float>(y, x, kN);
    store(0, y);
    AscendC::Tanh<float>(y, x, kN);
    store(1, y);
    AscendC::Gelu<float>(y, x, kN);
    store(2, y);
    AscendC::FasterGelu<float>(y, x, kN);
    store(3, y);
    AscendC::Swish<float>(y, x, kN, 1.702f);
    store(4, y);
    AscendC::Silu<float>(y, x, kN);
    store(5, y);
    AscendC::SwiGLU<float>(y, x, z, 0.8f, kN);
    store(6, y);
    AscendC::GeGLU<float>(y, x, z, kN);
    store(7, y);
    AscendC::Gelu<float>(x, x, tmp, kN);  // in place: the chain needs the sharedTmpBuffer
    store(8, x);
    load();
    AscendC::SwiGLU<float>(z, x, z, 0.8f, tmp, kN);
    store(9, z);
    AscendC::Cast(h, x, AscendC::RoundMode::CAST_NONE, kN);
    AscendC::Sigmoid<half>(h, h, kN);
    AscendC::Cast(y, h, AscendC::RoundMode::CAST_NONE, kN);
    store(10, y);
}

namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double gelu(double x) { return x / (1.0 + std::exp(-1.5957691216057308 * (x + 0.044715 * x * x * x))); }

}  // namespace

int activation_family(const std::string& name) {
    if (name != "activation") return -1;
    const ge::Shape shape({kN});
    uint32_t mx = 0, mn = 0;
    AscendC::GetSwiGLUMaxMinTmpSize(shape, sizeof(float), mx, mn, false);
    const uint32_t tmp = std::max(AscendC::GetGeluMaxTmpSize(shape, sizeof(float)), mn);
    float* ad = static_cast<float*>(AscendC::GmAlloc(kN * 4));
    float* bd = static_cast<float*>(AscendC::GmAlloc(kN * 4));
    float* od = static_cast<float*>(AscendC::GmAlloc(kN * kOuts * 4));
    for (uint32_t i = 0; i < kN; ++i) ad[i] = av(i), bd[i] = bv(i);
    std::memset(od, 0, kN * kOuts * 4);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(activation_kernel, 1, (uint8_t*)ad, (uint8_t*)bd, (uint8_t*)od, tmp);
    const char* what[kOuts] = {"Sigmoid",       "Tanh",   "Gelu",  "FasterGelu",    "Swish",
                               "Silu",          "SwiGLU", "GeGLU", "Gelu in place", "SwiGLU in place",
                               "Sigmoid (half)"};
    std::string bad =
        tmp == kN * 4 ? "" : "tmp size " + std::to_string(tmp) + ", expected " + std::to_string(kN * 4);
    for (uint32_t i = 0; i < kN && bad.empty(); ++i) {
        const double x = ad[i], z = bd[i];
        const double want[kOuts] = {sigmoid(x),
                                    std::tanh(x),
                                    gelu(x),
                                    x * sigmoid(1.702 * x),
                                    x * sigmoid(1.702 * x),
                                    x * sigmoid(x),
                                    x * z * sigmoid(0.8 * z),
                                    x * gelu(z),
                                    gelu(x),
                                    x * z * sigmoid(0.8 * z),
                                    sigmoid(x)};
        for (uint32_t t = 0; t < kOuts && bad.empty(); ++t) {
            const double tol = t == 10 ? 2e-3 : 1e-5 + 1e-5 * std::fabs(want[t]);
            const float got = od[t * kN + i];
            if (!(std::fabs(got - want[t]) <= tol))
                bad = std::string(what[t]) + " of element " + std::to_string(i) + " (" + std::to_string(x) +
                      ") is " + std::to_string(got) + ", expected " + std::to_string(want[t]);
        }
    }
    if (bad.empty())
        std::printf("activation ok\n");
    else
        std::printf("activation wrong: %s\n", bad.c_str());
    AscendC::GmFree(ad);
    AscendC::GmFree(bd);
    AscendC::GmFree(od);
    return bad.empty() ? 0 : 1;
}
