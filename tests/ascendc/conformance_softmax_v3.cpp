// The conformance program's SoftmaxFlashV3 family (tests/ascendc/conformance.cpp dispatches to it): one AIV
// kernel runs SoftmaxFlashV3<half, float> on [3, 1024] without update, then with update (loopCnt 3, alpha
// 0.9375, the statistics of the first call as inMean/inSum/inMax, the outputs written over them); the host
// computes the same formula in double (softmax_v3.h) and compares y, mean, sum, max and expMax.
// "softmax_v3": the above.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tikicpulib.h"

namespace {

constexpr uint32_t kM = 3, kK = 1024;
float sv(uint32_t i) { return static_cast<float>(std::sin(0.013 * i + 0.4 * (i % 5)) * 3.0 + 4.0); }

struct V3 {
    std::vector<double> y, mean, sum, max, expMax;
};
// One call on src (half values as doubles), with the statistics of a previous call when `prev`.
V3 reference(const std::vector<double>& src, const V3* prev, uint32_t loopCnt, double alpha) {
    const double scalar = alpha / (1 - alpha);
    V3 o;
    o.y.resize(kM * kK), o.mean.resize(kM), o.sum.resize(kM), o.max.resize(kM), o.expMax.resize(kM);
    for (uint32_t r = 0; r < kM; ++r) {
        const double* x0 = &src[r * kK];
        double lanes[64] = {};
        for (uint32_t l = 0; l < 64; ++l) {
            for (uint32_t t = 0; t < 8; ++t) lanes[l] += x0[8 * l + t];
            for (uint32_t c = 512; c < kK; c += 64) lanes[l] += x0[c + l];
        }
        double local[8] = {}, global = 0;
        for (uint32_t j = 0; j < 8; ++j) {
            for (uint32_t l = 0; l < 8; ++l) local[j] += lanes[8 * j + l];
            local[j] /= kK / 8;
            global += local[j] / 8;
        }
        std::vector<double> x(x0, x0 + kK);
        for (uint32_t c = 0; c < kK; ++c) x[c] -= (global - local[c / (kK / 8)]) * scalar;
        const double mean = prev ? (global + prev->mean[r] * (loopCnt - 1)) / loopCnt : global;
        const double shiftCurr = (global - mean) * scalar;
        double mx = *std::max_element(x.begin(), x.end()) + shiftCurr;
        double shiftPrev = 0, em = 0;
        if (prev) {
            shiftPrev = (prev->mean[r] - mean) * scalar;
            mx = std::max(mx, prev->max[r] + shiftPrev);
            em = std::exp(prev->max[r] - mx + shiftPrev);
        }
        double sum = 0;
        for (uint32_t c = 0; c < kK; ++c) sum += o.y[r * kK + c] = std::exp(x[c] - (mx - shiftCurr));
        o.mean[r] = mean, o.max[r] = mx, o.sum[r] = prev ? em * prev->sum[r] + sum : sum, o.expMax[r] = em;
    }
    return o;
}

}  // namespace

extern "C" __global__ __aicore__ void softmax_v3_kernel(GM_ADDR src, GM_ADDR y1, GM_ADDR y2, GM_ADDR stats1,
                                                        GM_ADDR stats2, GM_ADDR expMax) {
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> bs, by, bst, bem;
    pipe.InitBuffer(bs, kM * kK * 2);
    pipe.InitBuffer(by, kM * kK * 2);
    pipe.InitBuffer(bst, 3 * kM * 8 * 4);
    pipe.InitBuffer(bem, kM * 16 * 2);
    AscendC::GlobalTensor<half> sg, y1g, y2g, emg;
    AscendC::GlobalTensor<float> s1g, s2g;
    sg.SetGlobalBuffer((__gm__ half*)src, kM * kK);
    y1g.SetGlobalBuffer((__gm__ half*)y1, kM * kK);
    y2g.SetGlobalBuffer((__gm__ half*)y2, kM * kK);
    s1g.SetGlobalBuffer((__gm__ float*)stats1, 3 * kM * 8);
    s2g.SetGlobalBuffer((__gm__ float*)stats2, 3 * kM * 8);
    emg.SetGlobalBuffer((__gm__ half*)expMax, kM * 16);
    AscendC::LocalTensor<half> s = bs.Get<half>(), y = by.Get<half>(), em = bem.Get<half>();
    AscendC::LocalTensor<float> st = bst.Get<float>(), mean = st, sum = st[kM * 8], mx = st[2 * kM * 8];
    AscendC::DataCopy(s, sg, kM * kK);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    SoftMaxTiling tiling;
    const AscendC::SoftMaxParams p1{kM, kK, kM, kK, 1, 8, 0.9375f};
    AscendC::SoftmaxFlashV3<half, float, false>(y, mean, sum, mx, s, em, mean, sum, mx, tiling, p1);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(y1g, y, kM * kK);
    AscendC::DataCopy(s1g, st, 3 * kM * 8);
    AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID0);
    const AscendC::SoftMaxParams p2{kM, kK, kM, kK, 3, 8, 0.9375f};
    AscendC::SoftmaxFlashV3<half, float, true>(y, mean, sum, mx, s, em, mean, sum, mx, tiling, p2);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(y2g, y, kM * kK);
    AscendC::DataCopy(s2g, st, 3 * kM * 8);
    AscendC::DataCopy(emg, em, kM * 16);
}

int softmax_v3_family(const std::string& name) {
    if (name != "softmax_v3") return -1;
    half* sd = static_cast<half*>(AscendC::GmAlloc(kM * kK * 2));
    half* y1 = static_cast<half*>(AscendC::GmAlloc(kM * kK * 2));
    half* y2 = static_cast<half*>(AscendC::GmAlloc(kM * kK * 2));
    float* s1 = static_cast<float*>(AscendC::GmAlloc(3 * kM * 8 * 4));
    float* s2 = static_cast<float*>(AscendC::GmAlloc(3 * kM * 8 * 4));
    half* em = static_cast<half*>(AscendC::GmAlloc(kM * 16 * 2));
    std::vector<double> src(kM * kK);
    for (uint32_t i = 0; i < kM * kK; ++i) sd[i] = static_cast<half>(sv(i)), src[i] = static_cast<float>(sd[i]);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(softmax_v3_kernel, 1, (uint8_t*)sd, (uint8_t*)y1, (uint8_t*)y2, (uint8_t*)s1, (uint8_t*)s2,
                (uint8_t*)em);
    const V3 a = reference(src, nullptr, 1, 0.9375);
    const V3 b = reference(src, &a, 3, 0.9375);
    std::string bad;
    auto check = [&](const char* what, uint32_t i, double got, double want, double tol) {
        if (bad.empty() && !(std::fabs(got - want) <= tol * (1 + std::fabs(want))))
            bad = std::string(what) + " " + std::to_string(i) + " is " + std::to_string(got) + ", expected " +
                  std::to_string(want);
    };
    for (uint32_t i = 0; i < kM * kK; ++i) {
        check("y (no update)", i, static_cast<float>(y1[i]), a.y[i], 2e-3);
        check("y (update)", i, static_cast<float>(y2[i]), b.y[i], 2e-3);
    }
    for (uint32_t r = 0; r < kM; ++r)
        for (uint32_t l = 0; l < 8; ++l) {
            check("mean (no update), row", r, s1[r * 8 + l], a.mean[r], 1e-4);
            check("sum (no update), row", r, s1[kM * 8 + r * 8 + l], a.sum[r], 1e-4);
            check("max (no update), row", r, s1[2 * kM * 8 + r * 8 + l], a.max[r], 1e-4);
            check("mean (update), row", r, s2[r * 8 + l], b.mean[r], 1e-4);
            check("sum (update), row", r, s2[kM * 8 + r * 8 + l], b.sum[r], 1e-4);
            check("max (update), row", r, s2[2 * kM * 8 + r * 8 + l], b.max[r], 1e-4);
            check("expMax (update), row", r, static_cast<float>(em[r * 16 + l]), b.expMax[r], 2e-3);
        }
    if (bad.empty())
        std::printf("softmax_v3 ok\n");
    else
        std::printf("softmax_v3 wrong: %s\n", bad.c_str());
    for (void* p : {static_cast<void*>(sd), static_cast<void*>(y1), static_cast<void*>(y2), static_cast<void*>(s1),
                    static_cast<void*>(s2), static_cast<void*>(em)})
        AscendC::GmFree(p);
    return bad.empty() ? 0 : 1;
}
