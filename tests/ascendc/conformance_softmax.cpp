// The conformance program's softmax family (tests/ascendc/conformance.cpp dispatches to it): one AIV
// kernel runs SoftMax, SimpleSoftMax (with SoftMax's max and sum), LogSoftMax, SoftmaxFlashV2 (update form,
// given inMax/inSum), SoftmaxGrad and SoftmaxGradFront on two float shapes, and the host compares every
// valid element with its own double-precision computation of the reference's formulas:
//   A: 20 rows x 136 columns of which 130 are valid (oriSrcK), with the minimum sharedTmpBuffer
//      (GetSoftMaxMinTmpSize: slices of 8 rows, so 8 + 8 + 4), a partial last 64-lane chunk;
//   B: 3 rows x 2560 columns (a row longer than one repeat stride can step: the per-row form).
// The host tiling is checked too: SoftMaxTilingFunc's splitM is 8 with the minimum and every row with
// GetSoftMaxMaxTmpSize. "softmax": the above.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tikicpulib.h"
#include "tiling/tiling_api.h"

namespace {

struct Shape {
    uint32_t m, k, valid;
};
constexpr Shape kShapes[2] = {{20, 136, 130}, {3, 2560, 2560}};
constexpr float kInMax = 0.25f, kInSum = 3.0f;

// Output regions of one shape, in floats: y, simple, log, flash, grad (m x k each), then m x 8 blocks of
// flash max, flash sum, flash expMax, front, sum, max.
uint32_t out_floats(const Shape& s) { return 5 * s.m * s.k + 6 * s.m * 8; }

float xv(uint32_t i) { return static_cast<float>(std::sin(0.37 * i + 0.11) * 0.9); }

}  // namespace

extern "C" __global__ __aicore__ void softmax_kernel(GM_ADDR x, GM_ADDR out, uint32_t tmpA, uint32_t tmpB) {
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> bx, by, bs, btmp;
    constexpr uint32_t kMax = 3 * 2560;
    pipe.InitBuffer(bx, kMax * 4);
    pipe.InitBuffer(by, kMax * 4);
    pipe.InitBuffer(bs, 7 * 20 * 8 * 4);
    pipe.InitBuffer(btmp, tmpA > tmpB ? tmpA : tmpB);
    uint32_t xoff = 0, ooff = 0;
    for (int i = 0; i < 2; ++i) {
        const Shape s = kShapes[i];
        const uint32_t n = s.m * s.k, nb = s.m * 8;
        AscendC::GlobalTensor<float> xg, og;
        xg.SetGlobalBuffer((__gm__ float*)x + xoff, n);
        og.SetGlobalBuffer((__gm__ float*)out + ooff, out_floats(s));
        AscendC::LocalTensor<float> xl = bx.Get<float>(), yl = by.Get<float>(), sm = bs.Get<float>();
        AscendC::LocalTensor<float> sum = sm, max = sm[nb], fmax = sm[2 * nb], fsum = sm[3 * nb],
                                    fexp = sm[4 * nb], front = sm[5 * nb];
        AscendC::LocalTensor<uint8_t> tmp = btmp.Get<uint8_t>(i == 0 ? tmpA : tmpB);
        SoftMaxTiling tiling;
        const AscendC::SoftMaxShapeInfo si{s.m, s.k, s.m, s.valid};
        auto store = [&](uint32_t at, const AscendC::LocalTensor<float>& t, uint32_t count) {
            AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
            AscendC::DataCopy(og[at], t, count);
            AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID0);
            AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID0);
        };
        AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVENT_ID0);
        AscendC::DataCopy(xl, xg, n);
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
        AscendC::SoftMax<float>(yl, sum, max, xl, tmp, tiling, si);
        store(0, yl, n);
        store(5 * n + 4 * nb, sum, nb);
        store(5 * n + 5 * nb, max, nb);
        AscendC::SimpleSoftMax<float>(yl, sum, max, xl, tmp, tiling, si);
        store(n, yl, n);
        AscendC::LogSoftMax<float>(yl, sum, max, xl, tmp, tiling, si);
        store(2 * n, yl, n);
        AscendC::Duplicate(fmax, kInMax, static_cast<int32_t>(nb));
        AscendC::Duplicate(fsum, kInSum, static_cast<int32_t>(nb));
        AscendC::SoftmaxFlashV2<float, true>(yl, fsum, fmax, xl, fexp, fsum, fmax, tmp, tiling, si);
        store(3 * n, yl, n);
        store(5 * n, fmax, nb);
        store(5 * n + nb, fsum, nb);
        store(5 * n + 2 * nb, fexp, nb);
        AscendC::SoftMax<float>(yl, sum, max, xl, tmp, tiling, si);
        AscendC::SoftmaxGradFront<float>(front, xl, yl, tmp, tiling, si);
        AscendC::SoftmaxGrad<float>(yl, xl, yl, tmp, tiling, false,
                                    si);  // dst is src, as the vendor's example
        store(4 * n, yl, n);
        store(5 * n + 3 * nb, front, nb);
        xoff += n;
        ooff += out_floats(s);
    }
}

namespace {

bool close(double got, double want) { return std::fabs(got - want) <= 2e-5 + 1e-4 * std::fabs(want); }

// Checks one shape's outputs; returns a description of the first wrong element or "".
std::string check(const Shape& s, const float* x, const float* o) {
    const uint32_t n = s.m * s.k, nb = s.m * 8;
    for (uint32_t r = 0; r < s.m; ++r) {
        const float* xr = x + r * s.k;
        double mx = -INFINITY, fm, sum = 0, fsum = 0, dot = 0;
        for (uint32_t c = 0; c < s.valid; ++c) mx = std::fmax(mx, xr[c]);
        fm = std::fmax(mx, kInMax);
        for (uint32_t c = 0; c < s.valid; ++c) sum += std::exp(xr[c] - mx), fsum += std::exp(xr[c] - fm);
        for (uint32_t c = 0; c < s.valid; ++c) dot += xr[c] * (std::exp(xr[c] - mx) / sum);
        const double fexp = std::exp(kInMax - fm);
        fsum += fexp * kInSum;
        struct Blk {
            uint32_t at;
            double want;
            const char* what;
        };
        const Blk blks[] = {{5 * n, fm, "flash max"},
                            {5 * n + nb, fsum, "flash sum"},
                            {5 * n + 2 * nb, fexp, "flash expMax"},
                            {5 * n + 3 * nb, dot, "grad front"},
                            {5 * n + 4 * nb, sum, "sum"},
                            {5 * n + 5 * nb, mx, "max"}};
        for (const Blk& b : blks)
            for (uint32_t j = 0; j < 8; ++j)
                if (!close(o[b.at + r * 8 + j], b.want))
                    return std::string(b.what) + " of row " + std::to_string(r) + " is " +
                           std::to_string(o[b.at + r * 8 + j]) + ", expected " + std::to_string(b.want);
        for (uint32_t c = 0; c < s.valid; ++c) {
            const double p = std::exp(xr[c] - mx) / sum;
            const double want[5] = {p, p, std::log10(p), std::exp(xr[c] - fm), (xr[c] - dot) * p};
            const char* what[5] = {"SoftMax", "SimpleSoftMax", "LogSoftMax", "SoftmaxFlashV2", "SoftmaxGrad"};
            for (int t = 0; t < 5; ++t) {
                const float got = o[t * n + r * s.k + c];
                if (!close(got, want[t]))
                    return std::string(what[t]) + " (" + std::to_string(r) + ", " + std::to_string(c) +
                           ") is " + std::to_string(got) + ", expected " + std::to_string(want[t]);
            }
        }
    }
    return "";
}

}  // namespace

int softmax_family(const std::string& name) {
    if (name != "softmax") return -1;
    uint32_t tmp[2];
    std::string bad;
    for (int i = 0; i < 2; ++i) {
        const ge::Shape shape({kShapes[i].m, kShapes[i].k});
        tmp[i] = AscendC::GetSoftMaxMinTmpSize(shape, sizeof(float), false);
        optiling::SoftMaxTiling lo, hi;
        AscendC::SoftMaxTilingFunc(shape, sizeof(float), tmp[i], lo);
        AscendC::SoftMaxTilingFunc(shape, sizeof(float),
                                   AscendC::GetSoftMaxMaxTmpSize(shape, sizeof(float), false), hi);
        if (lo.get_splitM() != std::min(8u, kShapes[i].m) || hi.get_splitM() != kShapes[i].m ||
            lo.get_outMaxK() != 8 || lo.get_srcK() != kShapes[i].k)
            bad = "host tiling of shape " + std::to_string(i) + ": splitM " +
                  std::to_string(lo.get_splitM()) + " / " + std::to_string(hi.get_splitM());
    }
    const uint32_t nx = kShapes[0].m * kShapes[0].k + kShapes[1].m * kShapes[1].k;
    const uint32_t no = out_floats(kShapes[0]) + out_floats(kShapes[1]);
    float* xd = static_cast<float*>(AscendC::GmAlloc(nx * sizeof(float)));
    float* od = static_cast<float*>(AscendC::GmAlloc(no * sizeof(float)));
    for (uint32_t i = 0; i < nx; ++i) xd[i] = xv(i);
    std::memset(od, 0, no * sizeof(float));
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(softmax_kernel, 1, (uint8_t*)xd, (uint8_t*)od, tmp[0], tmp[1]);
    if (bad.empty()) bad = check(kShapes[0], xd, od);
    if (bad.empty()) bad = check(kShapes[1], xd + kShapes[0].m * kShapes[0].k, od + out_floats(kShapes[0]));
    if (bad.empty())
        std::printf("softmax ok\n");
    else
        std::printf("softmax wrong: %s\n", bad.c_str());
    AscendC::GmFree(xd);
    AscendC::GmFree(od);
    return bad.empty() ? 0 : 1;
}
