// The conformance program's BatchNorm/GroupNorm family (tests/ascendc/conformance.cpp dispatches to it): one
// AIV kernel runs BatchNorm on float [B 5, S 2, H 24] and on half [3, 1, 32], GroupNorm on float [n 2, C 6,
// H x W 16] with 3 groups and on half [1, 4, 32] with 2 groups, the scratch from the host functions' sizes
// (BatchNorm float) or the free UB (the others); the host computes every output in double.
// "norm_more": the above.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tikicpulib.h"
#include "tiling/tiling_api.h"

namespace {

constexpr uint32_t kB = 5, kS = 2, kH = 24, kN = kS * kH;       // BatchNorm float
constexpr uint32_t kHB = 3, kHN = 32;                            // BatchNorm half [3, 1, 32]
constexpr uint32_t kGn = 2, kGc = 6, kGhw = 16, kGg = 3;         // GroupNorm float
constexpr uint32_t kHGn = 1, kHGc = 4, kHGhw = 32, kHGg = 2;     // GroupNorm half
constexpr float kEps = 1e-5f;
// float outputs: y, mean, var of each of the four (packed in one GM buffer)
constexpr uint32_t oBy = 0, oBm = oBy + kB * kN, oBv = oBm + kN, oHBy = oBv + kN, oHBm = oHBy + kHB * kHN,
                   oHBv = oHBm + kHN, oGy = oHBv + kHN, oGm = oGy + kGn * kGc * kGhw, oGv = oGm + 8,
                   oHGy = oGv + 8, oHGm = oHGy + kHGn * kHGc * kHGhw, oHGv = oHGm + 16, oEnd = oHGv + 16;
float xv(uint32_t i) { return static_cast<float>(std::sin(0.37 * i + 0.2) * 3.0 + 0.1 * (i % 11)); }

}  // namespace

extern "C" __global__ __aicore__ void norm_more_kernel(GM_ADDR x, GM_ADDR out, BatchNormTiling bt,
                                                       BatchNormTiling hbt, GroupNormTiling gt, GroupNormTiling hgt,
                                                       uint32_t tmpBytes) {
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> bx, bo, bh, bho, bt0;
    pipe.InitBuffer(bx, 512 * 4);
    pipe.InitBuffer(bo, oEnd * 4);
    pipe.InitBuffer(bh, 256 * 2);
    pipe.InitBuffer(bho, 256 * 2);
    pipe.InitBuffer(bt0, tmpBytes);
    AscendC::GlobalTensor<float> xg, og;
    xg.SetGlobalBuffer((__gm__ float*)x, 512);
    og.SetGlobalBuffer((__gm__ float*)out, oEnd);
    AscendC::LocalTensor<float> xs = bx.Get<float>(), o = bo.Get<float>();
    AscendC::LocalTensor<half> h = bh.Get<half>(), ho = bho.Get<half>();
    AscendC::DataCopy(xs, xg, 512);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    // gamma and beta: elements 400.. and 440.. of x (of its half copy: 192.. and 224..)
    AscendC::BatchNorm<float>(o[oBy], o[oBm], o[oBv], xs, xs[400], xs[440], bt0.Get<uint8_t>(), kEps, bt);
    AscendC::Cast(h, xs, AscendC::RoundMode::CAST_RINT, 256);  // half data: the first 256 of x
    AscendC::BatchNorm<half>(ho, ho[128], ho[160], h, h[192], h[224], static_cast<half>(kEps), hbt);
    AscendC::Cast(o[oHBy], ho, AscendC::RoundMode::CAST_NONE, kHB * kHN);
    AscendC::Cast(o[oHBm], ho[128], AscendC::RoundMode::CAST_NONE, 2 * kHN);
    AscendC::GroupNorm<float>(o[oGy], o[oGm], o[oGv], xs, xs[400], xs[440], kEps, gt);
    AscendC::GroupNorm<half>(ho, ho[128], ho[144], h, h[192], h[224], static_cast<half>(kEps), hgt);
    AscendC::Cast(o[oHGy], ho, AscendC::RoundMode::CAST_NONE, kHGn * kHGc * kHGhw);
    AscendC::Cast(o[oHGm], ho[128], AscendC::RoundMode::CAST_NONE, 32);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(og, o, oEnd);
}

namespace {

// y [B, N] of a BatchNorm over B (gamma/beta per batch); mean/var per position.
void batch_ref(const std::vector<double>& x, const std::vector<double>& gm, const std::vector<double>& be,
               uint32_t B, uint32_t N, std::vector<double>& y, std::vector<double>& mean, std::vector<double>& var) {
    y.assign(B * N, 0), mean.assign(N, 0), var.assign(N, 0);
    for (uint32_t p = 0; p < N; ++p) {
        for (uint32_t b = 0; b < B; ++b) mean[p] += x[b * N + p] / B;
        for (uint32_t b = 0; b < B; ++b) var[p] += (x[b * N + p] - mean[p]) * (x[b * N + p] - mean[p]) / B;
        for (uint32_t b = 0; b < B; ++b)
            y[b * N + p] = gm[b] * (x[b * N + p] - mean[p]) / std::sqrt(var[p] + kEps) + be[b];
    }
}
void group_ref(const std::vector<double>& x, const std::vector<double>& gm, const std::vector<double>& be, uint32_t n,
               uint32_t C, uint32_t hw, uint32_t g, std::vector<double>& y, std::vector<double>& mean,
               std::vector<double>& var) {
    const uint32_t d = C / g, K = d * hw;
    y.assign(n * C * hw, 0), mean.assign(n * g, 0), var.assign(n * g, 0);
    for (uint32_t r = 0; r < n * g; ++r) {
        for (uint32_t k = 0; k < K; ++k) mean[r] += x[r * K + k] / K;
        for (uint32_t k = 0; k < K; ++k) var[r] += (x[r * K + k] - mean[r]) * (x[r * K + k] - mean[r]) / K;
        for (uint32_t k = 0; k < K; ++k) {
            const uint32_t c = (r % g) * d + k / hw;
            y[r * K + k] = gm[c] * (x[r * K + k] - mean[r]) / std::sqrt(var[r] + kEps) + be[c];
        }
    }
}

}  // namespace

int norm_more_family(const std::string& name) {
    if (name != "norm_more") return -1;
    BatchNormTiling bt, hbt;
    GroupNormTiling gt, hgt;
    uint32_t mx = 0, mn = 0;
    AscendC::GetBatchNormMaxMinTmpSize(ge::Shape({kB, kS, kH}), ge::Shape({kB, kS, kH}), 4, false, mx, mn);
    std::string bad;
    if (!AscendC::GetBatchNormNDTilingInfo(ge::Shape({kB, kS, kH}), ge::Shape({kB, kS, kH}), mn, 4, false, bt))
        bad = "GetBatchNormNDTilingInfo refused its own minimum size";
    AscendC::GetBatchNormNDTilingInfo(ge::Shape({kHB, 1, kHN}), ge::Shape({kHB, 1, kHN}), 1u << 20, 2, false, hbt);
    AscendC::GetGroupNormNDTilingInfo(ge::Shape({kGn, kGc, 4, 4}), 0, 4, false, kGg, gt);
    AscendC::GetGroupNormNDTilingInfo(ge::Shape({kHGn, kHGc, 4, 8}), 0, 2, false, kHGg, hgt);
    float* xd = static_cast<float*>(AscendC::GmAlloc(512 * 4));
    float* od = static_cast<float*>(AscendC::GmAlloc(oEnd * 4));
    for (uint32_t i = 0; i < 512; ++i) xd[i] = xv(i);
    std::memset(od, 0, oEnd * 4);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(norm_more_kernel, 1, (uint8_t*)xd, (uint8_t*)od, bt, hbt, gt, hgt, mn);
    auto check = [&](const char* what, const std::vector<double>& want, uint32_t at, double tol) {
        for (uint32_t i = 0; i < want.size() && bad.empty(); ++i)
            if (!(std::fabs(od[at + i] - want[i]) <= tol * (1 + std::fabs(want[i]))))
                bad = std::string(what) + " element " + std::to_string(i) + " is " + std::to_string(od[at + i]) +
                      ", expected " + std::to_string(want[i]);
    };
    std::vector<double> x(xd, xd + 512), xh(512), gm(x.begin() + 400, x.end()), be(x.begin() + 440, x.end());
    for (uint32_t i = 0; i < 512; ++i) xh[i] = static_cast<float>(static_cast<half>(xd[i]));
    std::vector<double> gmh(xh.begin() + 192, xh.end()), beh(xh.begin() + 224, xh.end());
    std::vector<double> y, mean, var;
    batch_ref(x, gm, be, kB, kN, y, mean, var);
    check("BatchNorm (float) y", y, oBy, 1e-4);
    check("BatchNorm (float) mean", mean, oBm, 1e-5);
    check("BatchNorm (float) variance", var, oBv, 1e-4);
    batch_ref(xh, gmh, beh, kHB, kHN, y, mean, var);
    check("BatchNorm (half) y", y, oHBy, 4e-3);
    check("BatchNorm (half) mean", mean, oHBm, 2e-3);
    check("BatchNorm (half) variance", var, oHBv, 4e-3);
    group_ref(x, gm, be, kGn, kGc, kGhw, kGg, y, mean, var);
    check("GroupNorm (float) y", y, oGy, 1e-4);
    check("GroupNorm (float) mean", mean, oGm, 1e-5);
    check("GroupNorm (float) variance", var, oGv, 1e-4);
    group_ref(xh, gmh, beh, kHGn, kHGc, kHGhw, kHGg, y, mean, var);
    check("GroupNorm (half) y", y, oHGy, 4e-3);
    check("GroupNorm (half) mean", mean, oHGm, 2e-3);
    check("GroupNorm (half) variance", std::vector<double>(var.begin(), var.end()), oHGm + 16, 4e-3);
    if (bad.empty())
        std::printf("norm_more ok\n");
    else
        std::printf("norm_more wrong: %s\n", bad.c_str());
    AscendC::GmFree(xd);
    AscendC::GmFree(od);
    return bad.empty() ? 0 : 1;
}
