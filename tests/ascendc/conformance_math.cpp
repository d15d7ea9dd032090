// The conformance program's advanced-math family (tests/ascendc/conformance.cpp dispatches to it): one AIV
// kernel runs Exp (10 Taylor terms and none), Log, Log2, Log10, Ceil, Floor, Trunc, Frac, ClampMax,
// ClampMin, Erf, Acosh, Power (tensor^tensor with negative bases and integral and fractional exponents,
// tensor^scalar, scalar^tensor), Fmod and Axpy (half source, float dst) on 300 floats, in slices of the
// host's minimum sharedTmpBuffer (300 elements are two slices), Ceil on half, Xor on int16 and CumSum
// along the first and the last axis of [10, 32]; the host compares every element with its double-precision
// value.
// "math": the above.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "tikicpulib.h"
#include "tiling/tiling_api.h"

namespace {

constexpr uint32_t kN = 300;
constexpr uint32_t kPad = 320;                       // kN rounded up to 32-byte blocks of every type
constexpr uint32_t kRows = 10, kCols = 32;           // CumSum
constexpr uint32_t kOuts = 21;                       // float results of kN elements
float av(uint32_t i) { return static_cast<float>(std::sin(0.37 * i + 0.1) * 5.0); }
float bv(uint32_t i) {  // |b| in [0.5, 3], the sign alternating
    const double m = 0.5 + 2.5 * std::fabs(std::cos(0.23 * i));
    return static_cast<float>(i % 2 ? -m : m);
}
float ev(uint32_t i) {  // exponents: every third one integral
    const double e = std::cos(0.19 * i) * 3.0;
    return static_cast<float>(i % 3 == 0 ? std::round(e) : e);
}
int16_t iv(uint32_t i, uint32_t k) { return static_cast<int16_t>((i * 2654435761u + k * 40503u) >> 13); }

}  // namespace

extern "C" __global__ __aicore__ void math_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR e, GM_ADDR ints, GM_ADDR out,
                                                  GM_ADDR intOut, uint32_t tmpBytes) {
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> ba, bb, be, by, bh, bt, bi, bc;
    pipe.InitBuffer(ba, kPad * 4);
    pipe.InitBuffer(bb, kPad * 4);
    pipe.InitBuffer(be, kPad * 4);
    pipe.InitBuffer(by, kPad * 4);
    pipe.InitBuffer(bh, kPad * 2);
    pipe.InitBuffer(bt, tmpBytes);
    pipe.InitBuffer(bi, kPad * 2 * 3);
    pipe.InitBuffer(bc, kRows * kCols * 4 * 3 + kCols * 4 + 64);
    AscendC::GlobalTensor<float> ag, bg, eg, og;
    AscendC::GlobalTensor<int16_t> ig, iog;
    ag.SetGlobalBuffer((__gm__ float*)a, kPad);
    bg.SetGlobalBuffer((__gm__ float*)b, kPad);
    eg.SetGlobalBuffer((__gm__ float*)e, kPad);
    og.SetGlobalBuffer((__gm__ float*)out, kN * kOuts + 2 * kRows * kCols + kCols + 16);
    ig.SetGlobalBuffer((__gm__ int16_t*)ints, kPad * 2);
    iog.SetGlobalBuffer((__gm__ int16_t*)intOut, kPad);
    AscendC::LocalTensor<float> x = ba.Get<float>(), z = bb.Get<float>(), ex = be.Get<float>(), y = by.Get<float>();
    AscendC::LocalTensor<half> h = bh.Get<half>();
    AscendC::LocalTensor<uint8_t> tmp = bt.Get<uint8_t>();
    AscendC::LocalTensor<int16_t> i0 = bi.Get<int16_t>(), i1 = i0[kPad], i2 = i0[2 * kPad];
    AscendC::DataCopy(x, ag, kPad);
    AscendC::DataCopy(z, bg, kPad);
    AscendC::DataCopy(ex, eg, kPad);
    AscendC::DataCopy(i0, ig, kPad * 2);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    uint32_t slot = 0;
    auto store = [&](const AscendC::LocalTensor<float>& t) {
        AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
        AscendC::DataCopy(og[slot++ * kN], t, kPad);
        AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID0);
    };
    AscendC::Exp<float, 10>(y, x, tmp, kN);
    store(y);
    AscendC::Exp<float, 0>(y, x, kN);
    store(y);
    AscendC::Abs(y, x, kN);
    AscendC::Adds(y, y, 0.5f, kN);
    AscendC::Log<float>(y, y, kN);
    store(y);
    AscendC::Abs(y, x, kN);
    AscendC::Log2<float>(y, y, tmp, kN);
    store(y);
    AscendC::Abs(y, x, kN);
    AscendC::Log10<float>(y, y, kN);
    store(y);
    AscendC::Ceil<float>(y, x, tmp, kN);
    store(y);
    AscendC::Floor<float>(y, x, kN);
    store(y);
    AscendC::Trunc<float>(y, x, tmp, kN);
    store(y);
    AscendC::Frac<float>(y, x, tmp, kN);
    store(y);
    AscendC::ClampMax<float>(y, x, tmp, 1.5f, kN);
    store(y);
    AscendC::ClampMin<float>(y, x, -1.0f, kN);
    store(y);
    AscendC::Erf<float>(y, x, tmp, kN);
    store(y);
    AscendC::Abs(y, x, kN);
    AscendC::Adds(y, y, 1.0f, kN);
    AscendC::Acosh<float>(y, y, tmp, kN);
    store(y);
    AscendC::Power<float>(y, x, ex, tmp, kN);
    store(y);
    AscendC::Power<float>(y, x, 3.0f, tmp, kN);
    store(y);
    AscendC::Power<float>(y, 1.5f, ex, tmp, kN);
    store(y);
    AscendC::Fmod<float>(y, x, z, tmp, kN);
    store(y);
    AscendC::Cast(h, x, AscendC::RoundMode::CAST_RINT, kN);
    AscendC::Duplicate(y, 1.0f, kN);
    AscendC::Axpy(y, h, static_cast<half>(-0.75f), tmp, kN);  // y = 1 + half(x) * -0.75
    store(y);
    AscendC::Ceil<half>(h, h, tmp, kN);
    AscendC::Cast(y, h, AscendC::RoundMode::CAST_NONE, kN);
    store(y);
    AscendC::Exp<float, 10>(x, x, kN);  // in place, the scratch from the unallocated UB
    store(x);
    AscendC::Erf<float>(y, z, kN);
    store(y);
    AscendC::Xor<int16_t>(i2, i0, i1, tmp, kN);
    AscendC::LocalTensor<float> c = bc.Get<float>(), cs = c[kRows * kCols], last = c[2 * kRows * kCols];
    AscendC::SetFlag<AscendC::HardEvent::MTE3_MTE2>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE3_MTE2>(EVENT_ID0);
    AscendC::DataCopy(c, og, kRows * kCols);  // the first results as CumSum's source
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    static constexpr AscendC::CumSumConfig kCfg = {false, false, true,
                                                   AscendC::CumSumAlgorithm::CUMSUM_ALGORITHM_LINEBYLINE};
    AscendC::CumSum<float, kCfg>(cs, last, c, tmp, AscendC::CumSumInfo{kRows, kCols});
    static constexpr AscendC::CumSumConfig kCfgLast = {true, false, true,
                                                       AscendC::CumSumAlgorithm::CUMSUM_ALGORITHM_LINEBYLINE};
    AscendC::LocalTensor<float> cs2 = c[2 * kRows * kCols + kCols], last2 = cs2[kRows * kCols];
    AscendC::CumSum<float, kCfgLast>(cs2, last2, c, tmp, AscendC::CumSumInfo{kRows, kCols});
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(og[kN * kOuts], cs, kRows * kCols + kCols);
    AscendC::DataCopy(og[kN * kOuts + kRows * kCols + kCols], cs2, kRows * kCols + 16);
    AscendC::DataCopy(iog, i2, kPad);
}

namespace {

double erf_d(double v) { return std::erf(v); }

}  // namespace

int math_family(const std::string& name) {
    if (name != "math") return -1;
    uint32_t mx = 0, tmp = 0;
    const ge::Shape shape({kN});
    AscendC::GetPowerMaxMinTmpSize(shape, ge::Shape({1}), false, sizeof(float), false, mx, tmp);
    std::string bad;
    {
        uint32_t m2 = 0, n2 = 0;
        AscendC::GetErfMaxMinTmpSize(shape, sizeof(float), false, m2, n2);
        if (n2 > tmp || mx < m2 || tmp > mx) bad = "Power's minimum scratch is not the largest minimum";
    }
    const uint32_t outFloats = kN * kOuts + 2 * kRows * kCols + kCols + 16;
    float* ad = static_cast<float*>(AscendC::GmAlloc(kPad * 4));
    float* bd = static_cast<float*>(AscendC::GmAlloc(kPad * 4));
    float* ed = static_cast<float*>(AscendC::GmAlloc(kPad * 4));
    int16_t* id = static_cast<int16_t*>(AscendC::GmAlloc(kPad * 2 * 2));
    float* od = static_cast<float*>(AscendC::GmAlloc((outFloats + kPad) * 4));
    int16_t* iod = static_cast<int16_t*>(AscendC::GmAlloc(kPad * 2));
    for (uint32_t i = 0; i < kPad; ++i) {
        ad[i] = av(i), bd[i] = bv(i), ed[i] = ev(i);
        id[i] = iv(i, 1), id[kPad + i] = iv(i, 2);
    }
    std::memset(od, 0, (outFloats + kPad) * 4);
    std::memset(iod, 0, kPad * 2);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(math_kernel, 1, (uint8_t*)ad, (uint8_t*)bd, (uint8_t*)ed, (uint8_t*)id, (uint8_t*)od,
                (uint8_t*)iod, tmp);
    const char* what[kOuts] = {"Exp (10 terms)", "Exp", "Log", "Log2", "Log10", "Ceil", "Floor", "Trunc",
                               "Frac", "ClampMax", "ClampMin", "Erf", "Acosh", "Power (tensor, tensor)",
                               "Power (tensor, scalar)", "Power (scalar, tensor)", "Fmod", "Axpy (half to float)",
                               "Ceil (half)", "Exp (in place, no sharedTmpBuffer)", "Erf (no sharedTmpBuffer)"};
    for (uint32_t i = 0; i < kN && bad.empty(); ++i) {
        const double x = ad[i], z = bd[i], e = ed[i];
        const double xh = static_cast<float>(static_cast<half>(ad[i]));  // x rounded to half
        const double want[kOuts] = {std::exp(x),
                                    std::exp(x),
                                    std::log(std::fabs(x) + 0.5),
                                    std::log2(std::fabs(x)),
                                    std::log10(std::fabs(x)),
                                    std::ceil(x),
                                    std::floor(x),
                                    std::trunc(x),
                                    x - std::floor(x),
                                    std::min(x, 1.5),
                                    std::max(x, -1.0),
                                    erf_d(x),
                                    std::acosh(std::fabs(x) + 1.0),
                                    std::pow(x, e),
                                    std::pow(x, 3.0),
                                    std::pow(1.5, e),
                                    std::fmod(x, z),
                                    1.0 + xh * static_cast<double>(static_cast<float>(static_cast<half>(-0.75f))),
                                    std::ceil(xh),
                                    std::exp(x),
                                    erf_d(z)};
        for (uint32_t t = 0; t < kOuts && bad.empty(); ++t) {
            const double tol = 2e-6 + 1e-5 * std::fabs(want[t]);
            const float got = od[t * kN + i];
            const bool ok = std::isnan(want[t]) ? std::isnan(got) : std::fabs(got - want[t]) <= tol;
            if (!ok)
                bad = std::string(what[t]) + " of element " + std::to_string(i) + " (" + std::to_string(x) +
                      ", " + std::to_string(z) + ", " + std::to_string(e) + ") is " + std::to_string(got) +
                      ", expected " + std::to_string(want[t]);
        }
    }
    for (uint32_t i = 0; i < kN && bad.empty(); ++i) {
        const int16_t want = static_cast<int16_t>(id[i] ^ id[kPad + i]);
        if (iod[i] != want)
            bad = "Xor of element " + std::to_string(i) + " is " + std::to_string(iod[i]) + ", expected " +
                  std::to_string(want);
    }
    for (uint32_t c = 0; c < kCols && bad.empty(); ++c) {
        double sum = 0;
        for (uint32_t r = 0; r < kRows; ++r) {
            sum += od[r * kCols + c];
            const float got = od[kN * kOuts + r * kCols + c];
            if (std::fabs(got - sum) > 1e-4 * (1 + std::fabs(sum)))
                bad = "CumSum row " + std::to_string(r) + " column " + std::to_string(c) + " is " +
                      std::to_string(got) + ", expected " + std::to_string(sum);
        }
        const float last = od[kN * kOuts + kRows * kCols + c];
        if (bad.empty() && last != od[kN * kOuts + (kRows - 1) * kCols + c])
            bad = "CumSum's last row, column " + std::to_string(c) + ", is " + std::to_string(last);
    }
    for (uint32_t r = 0; r < kRows && bad.empty(); ++r) {  // along the last axis, and each row's last
        double sum = 0;
        for (uint32_t c = 0; c < kCols && bad.empty(); ++c) {
            sum += od[r * kCols + c];
            const float got = od[kN * kOuts + kRows * kCols + kCols + r * kCols + c];
            if (std::fabs(got - sum) > 1e-4 * (1 + std::fabs(sum)))
                bad = "CumSum (last axis) row " + std::to_string(r) + " column " + std::to_string(c) + " is " +
                      std::to_string(got) + ", expected " + std::to_string(sum);
        }
        const float lastv = od[kN * kOuts + 2 * kRows * kCols + kCols + r];
        if (bad.empty() && lastv != od[kN * kOuts + kRows * kCols + kCols + r * kCols + kCols - 1])
            bad = "CumSum (last axis)'s last element of row " + std::to_string(r) + " is " + std::to_string(lastv);
    }
    if (bad.empty())
        std::printf("math ok\n");
    else
        std::printf("math wrong: %s\n", bad.c_str());
    AscendC::GmFree(ad);
    AscendC::GmFree(bd);
    AscendC::GmFree(ed);
    AscendC::GmFree(id);
    AscendC::GmFree(od);
    AscendC::GmFree(iod);
    return bad.empty() ? 0 : 1;
}
