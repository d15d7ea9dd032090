// The conformance program's normalisation and quantisation families (tests/ascendc/conformance.cpp
// dispatches to them); the host compares every valid element with its double-precision formula.
//   "norm": [B 2, S 13, H 40] floats (26 rows: slices of 8, 8, 8, 2 with the minimum sharedTmpBuffer of
//   the host functions), RmsNorm and LayerNorm with 36 valid columns (originalHLength), LayerNormGrad and
//   LayerNormGradBeta on LayerNorm's mean and variance (all 40 columns), DeepNorm (alpha 0.7).
//   "quant": AscendQuant float -> int8 (296 elements, scale 3.1, offset 0.4; and per channel, 8 channels),
//   AscendDequant into half ([3, 32]), AscendDequant int32 x float
//   scales ([5, 24]), AscendAntiQuant int8 -> half ([6, 48], two groups of 3 rows).
//   "welford": WelfordUpdate and WelfordFinalize with counts and without (below).
//   "norm_v2": LayerNorm with LayerNormPara (mean and rstd out; 36 valid of 40 columns, slices of 8 rows) and
//   Normalize from that mean and the variance recomputed from rstd.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tikicpulib.h"
#include "tiling/tiling_api.h"

namespace {

constexpr uint32_t kB = 2, kS = 13, kH = 40, kValid = 36, kRows = kB * kS, kN = kRows * kH;
constexpr float kEps = 1e-3f, kAlpha = 0.7f;
// Output floats: rms, ln y, pdx, res, deep y (kN each), then ln mean, ln var, deep mean, deep var (kRows
// each, in slots of 32 floats so that each starts on a 32-byte block), pd_gamma, pd_beta.
constexpr uint32_t kSlot = 32;
constexpr uint32_t kOut = 5 * kN + 4 * kSlot + 2 * kH;

struct Tilings {
    RmsNormTiling rms;
    LayerNormTiling ln, lnValid;
    LayerNormGradTiling grad;
    LayerNormGradBetaTiling beta;
    DeepNormTiling deep;
    uint32_t tmp;
};

float xv(uint32_t i) { return static_cast<float>(std::sin(0.31 * i + 0.2) * 3.0 + 0.5); }
float gv(uint32_t i) { return static_cast<float>(std::cos(0.7 * i) * 1.5); }

}  // namespace

extern "C" __global__ __aicore__ void norm_kernel(GM_ADDR in, GM_ADDR out, Tilings t) {
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> bin, bout, btmp;
    const uint32_t nin = 3 * kN + 2 * kH;  // x, gx, dy, gamma, beta
    pipe.InitBuffer(bin, nin * 4);
    pipe.InitBuffer(bout, kOut * 4);
    pipe.InitBuffer(btmp, t.tmp);
    AscendC::GlobalTensor<float> ig, og;
    ig.SetGlobalBuffer((__gm__ float*)in, nin);
    og.SetGlobalBuffer((__gm__ float*)out, kOut);
    AscendC::LocalTensor<float> i = bin.Get<float>(), o = bout.Get<float>();
    AscendC::LocalTensor<uint8_t> tmp = btmp.Get<uint8_t>();
    AscendC::DataCopy(i, ig, nin);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    const AscendC::LocalTensor<float> x = i, gx = i[kN], dy = i[2 * kN], gamma = i[3 * kN],
                                      beta = i[3 * kN + kH];
    const AscendC::LocalTensor<float> mean = o[5 * kN], var = o[5 * kN + kSlot];
    AscendC::RmsNorm<float>(o, x, gamma, tmp, kEps, t.rms);
    AscendC::LayerNorm<float>(o[kN], mean, var, x, gamma, beta, tmp, kEps, t.lnValid);
    // The gradients take a full-width forward pass's statistics (into the deep slots, overwritten below).
    AscendC::LayerNorm<float>(o[4 * kN], o[5 * kN + 2 * kSlot], o[5 * kN + 3 * kSlot], x, gamma, beta, tmp,
                              kEps, t.ln);
    AscendC::LayerNormGrad<float>(o[2 * kN], o[3 * kN], dy, x, o[5 * kN + 3 * kSlot], o[5 * kN + 2 * kSlot],
                                  gamma, tmp, kEps, t.grad);
    AscendC::LayerNormGradBeta<float>(o[5 * kN + 4 * kSlot], o[5 * kN + 4 * kSlot + kH], o[3 * kN], dy, tmp,
                                      t.beta);
    AscendC::DeepNorm<float>(o[4 * kN], o[5 * kN + 2 * kSlot], o[5 * kN + 3 * kSlot], x, gx, beta, gamma, tmp,
                             kAlpha, kEps, t.deep);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(og, o, kOut);
}

namespace {

bool close(double got, double want) { return std::fabs(got - want) <= 1e-4 + 1e-4 * std::fabs(want); }

struct Ref {
    std::vector<double> rms, y, mean, var, pdx, res, pdg, pdb, dy_, dmean, dvar;
};

// LayerNorm over `valid` of each row's columns (y for every column, as the kernel computes them).
void layer_norm(const std::vector<double>& x, const float* g, const float* b, uint32_t valid,
                std::vector<double>& y, std::vector<double>& mean, std::vector<double>& var) {
    y.assign(kN, 0), mean.assign(kRows, 0), var.assign(kRows, 0);
    for (uint32_t r = 0; r < kRows; ++r) {
        double m = 0, v = 0;
        for (uint32_t c = 0; c < valid; ++c) m += x[r * kH + c];
        m /= valid;
        for (uint32_t c = 0; c < valid; ++c) v += (x[r * kH + c] - m) * (x[r * kH + c] - m);
        v /= valid;
        mean[r] = m, var[r] = v;
        for (uint32_t c = 0; c < kH; ++c)
            y[r * kH + c] = (x[r * kH + c] - m) / std::sqrt(v + kEps) * g[c] + b[c];
    }
}

Ref reference(const float* in) {
    Ref f;
    const float *g = in + 3 * kN, *b = in + 3 * kN + kH;
    std::vector<double> x(in, in + kN), dx(kN);
    f.rms.assign(kN, 0);
    for (uint32_t r = 0; r < kRows; ++r) {
        double ss = 0;
        for (uint32_t c = 0; c < kValid; ++c) ss += x[r * kH + c] * x[r * kH + c];
        const double d = std::sqrt(ss / kValid + kEps);
        for (uint32_t c = 0; c < kH; ++c) f.rms[r * kH + c] = x[r * kH + c] / d * g[c];
    }
    layer_norm(x, g, b, kValid, f.y, f.mean, f.var);
    std::vector<double> y, m, v;
    layer_norm(x, g, b, kH, y, m, v);
    f.pdx.assign(kN, 0), f.res.assign(kN, 0), f.pdg.assign(kH, 0), f.pdb.assign(kH, 0);
    for (uint32_t r = 0; r < kRows; ++r) {
        const double rstd = 1.0 / std::sqrt(v[r] + kEps);
        double s1 = 0, s2 = 0, s3 = 0;
        for (uint32_t c = 0; c < kH; ++c) {
            const double d = x[r * kH + c] - m[r], p = in[2 * kN + r * kH + c] * g[c];
            s1 += p * d, s2 += p, s3 += d;
        }
        const double pvar = -0.5 * s1 * rstd * rstd * rstd, pmean = -s2 * rstd - 2.0 * pvar / kH * s3;
        for (uint32_t c = 0; c < kH; ++c) {
            const double d = x[r * kH + c] - m[r], dyv = in[2 * kN + r * kH + c], p = dyv * g[c];
            f.pdx[r * kH + c] = pmean / kH + 2.0 * pvar / kH * d + p * rstd;
            f.res[r * kH + c] = d * rstd;
            f.pdg[c] += dyv * d * rstd, f.pdb[c] += dyv;
        }
    }
    for (uint32_t k = 0; k < kN; ++k) dx[k] = kAlpha * in[k] + in[kN + k];
    layer_norm(dx, g, b, kH, f.dy_, f.dmean, f.dvar);
    return f;
}

std::string compare(const char* what, const float* got, const std::vector<double>& want, uint32_t stride,
                    uint32_t valid) {
    for (uint32_t k = 0; k < want.size(); ++k) {
        if (k % stride >= valid) continue;
        if (!close(got[k], want[k]))
            return std::string(what) + " element " + std::to_string(k) + " is " + std::to_string(got[k]) +
                   ", expected " + std::to_string(want[k]);
    }
    return "";
}

int norm(const std::string& name) {
    Tilings t{};
    const ge::Shape shape({kB, kS, kH}), valid({kB, kS, kH, kValid});
    uint32_t mx, mn, tmp = 0;
    AscendC::GetRmsNormMaxMinTmpSize(shape, 4, mx, mn);
    tmp = std::max(tmp, mn);
    AscendC::GetLayerNormMaxMinTmpSize(shape, 4, false, mx, mn);
    tmp = std::max(tmp, mn);
    AscendC::GetLayerNormGradMaxMinTmpSize(shape, 4, false, mx, mn);
    tmp = std::max(tmp, mn);
    const uint32_t grad_min = mn;
    AscendC::GetDeepNormMaxMinTmpSize(shape, 4, false, false, mx, mn);
    tmp = std::max(tmp, mn);
    t.tmp = tmp;
    AscendC::GetRmsNormTilingInfo(shape, ge::Shape({kB, kS, kValid}), tmp, 4, t.rms);
    AscendC::GetLayerNormNDTilingInfo(shape, tmp, 4, false, t.ln);
    AscendC::GetLayerNormNDTilingInfo(valid, tmp, 4, false, t.lnValid);
    AscendC::GetLayerNormGradNDTilingInfo(shape, tmp, 4, false, t.grad);
    AscendC::GetLayerNormGradBetaNDTilingInfo(shape, tmp, 4, false, t.beta);
    AscendC::GetDeepNormTilingInfo(shape, shape, tmp, 4, false, false, t.deep);
    std::string bad;
    if (t.grad.sliceRows != 8 || tmp != grad_min || t.lnValid.originalHLength != kValid ||
        t.rms.originalHLength != kValid)
        bad = "host tiling: LayerNormGrad slice " + std::to_string(t.grad.sliceRows) +
              " rows, originalHLength " + std::to_string(t.lnValid.originalHLength) + " / " +
              std::to_string(t.rms.originalHLength);
    const uint32_t nin = 3 * kN + 2 * kH;
    float* ind = static_cast<float*>(AscendC::GmAlloc(nin * 4));
    float* outd = static_cast<float*>(AscendC::GmAlloc(kOut * 4));
    for (uint32_t k = 0; k < 3 * kN; ++k) ind[k] = xv(k);
    for (uint32_t k = 0; k < 2 * kH; ++k) ind[3 * kN + k] = gv(k);
    std::memset(outd, 0, kOut * 4);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(norm_kernel, 1, (uint8_t*)ind, (uint8_t*)outd, t);
    const Ref f = reference(ind);
    const float* o = outd;
    if (bad.empty()) bad = compare("RmsNorm", o, f.rms, kH, kValid);
    if (bad.empty()) bad = compare("LayerNorm", o + kN, f.y, kH, kValid);
    if (bad.empty()) bad = compare("LayerNorm mean", o + 5 * kN, f.mean, 1, 1);
    if (bad.empty()) bad = compare("LayerNorm variance", o + 5 * kN + kSlot, f.var, 1, 1);
    if (bad.empty()) bad = compare("LayerNormGrad pd_x", o + 2 * kN, f.pdx, kH, kH);
    if (bad.empty()) bad = compare("LayerNormGrad resForGamma", o + 3 * kN, f.res, kH, kH);
    if (bad.empty()) bad = compare("LayerNormGradBeta pd_gamma", o + 5 * kN + 4 * kSlot, f.pdg, 1, 1);
    if (bad.empty()) bad = compare("LayerNormGradBeta pd_beta", o + 5 * kN + 4 * kSlot + kH, f.pdb, 1, 1);
    if (bad.empty()) bad = compare("DeepNorm", o + 4 * kN, f.dy_, kH, kH);
    if (bad.empty()) bad = compare("DeepNorm mean", o + 5 * kN + 2 * kSlot, f.dmean, 1, 1);
    if (bad.empty()) bad = compare("DeepNorm variance", o + 5 * kN + 3 * kSlot, f.dvar, 1, 1);
    if (bad.empty())
        std::printf("%s ok\n", name.c_str());
    else
        std::printf("%s wrong: %s\n", name.c_str(), bad.c_str());
    AscendC::GmFree(ind);
    AscendC::GmFree(outd);
    return bad.empty() ? 0 : 1;
}

// ---- quantisation ----
constexpr uint32_t kQn = 296, kDm = 5, kDn = 24, kAk = 6, kAn = 48, kAg = 2;
constexpr float kScale = 3.1f, kOffset = 0.4f;

}  // namespace

extern "C" __global__ __aicore__ void quant_api_kernel(GM_ADDR qin, GM_ADDR qout, GM_ADDR din, GM_ADDR dscale,
                                                       GM_ADDR dout, GM_ADDR ain, GM_ADDR aoff,
                                                       GM_ADDR ascale, GM_ADDR aout, GM_ADDR qout2, GM_ADDR dhalf,
                                                       uint32_t tmpBytes) {
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, bt;
    pipe.InitBuffer(b10, 320);
    pipe.InitBuffer(b11, 96 * 2);
    pipe.InitBuffer(b1, kQn * 4);
    pipe.InitBuffer(b2, 320);
    pipe.InitBuffer(b3, kDm * kDn * 4);
    pipe.InitBuffer(b4, kDn * 4);
    pipe.InitBuffer(b5, kDm * kDn * 4);
    pipe.InitBuffer(b6, kAk * kAn);
    pipe.InitBuffer(b7, kAg * kAn * 2);
    pipe.InitBuffer(b8, kAg * kAn * 2);
    pipe.InitBuffer(b9, kAk * kAn * 2);
    pipe.InitBuffer(bt, tmpBytes);
    AscendC::GlobalTensor<float> qi, ds, dout_g;
    AscendC::GlobalTensor<int8_t> qo, ai;
    AscendC::GlobalTensor<int32_t> di;
    AscendC::GlobalTensor<half> ao, as, ao_g;
    qi.SetGlobalBuffer((__gm__ float*)qin, kQn);
    qo.SetGlobalBuffer((__gm__ int8_t*)qout, 320);
    di.SetGlobalBuffer((__gm__ int32_t*)din, kDm * kDn);
    ds.SetGlobalBuffer((__gm__ float*)dscale, kDn);
    dout_g.SetGlobalBuffer((__gm__ float*)dout, kDm * kDn);
    ai.SetGlobalBuffer((__gm__ int8_t*)ain, kAk * kAn);
    ao.SetGlobalBuffer((__gm__ half*)aoff, kAg * kAn);
    as.SetGlobalBuffer((__gm__ half*)ascale, kAg * kAn);
    ao_g.SetGlobalBuffer((__gm__ half*)aout, kAk * kAn);
    AscendC::LocalTensor<float> q = b1.Get<float>(), dsl = b4.Get<float>(), dol = b5.Get<float>();
    AscendC::LocalTensor<int8_t> qol = b2.Get<int8_t>(), ail = b6.Get<int8_t>();
    AscendC::LocalTensor<int32_t> dil = b3.Get<int32_t>();
    AscendC::LocalTensor<half> aol = b7.Get<half>(), asl = b8.Get<half>(), aout_l = b9.Get<half>();
    AscendC::DataCopy(q, qi, kQn);
    AscendC::DataCopy(dil, di, kDm * kDn);
    AscendC::DataCopy(dsl, ds, kDn);
    AscendC::DataCopy(ail, ai, kAk * kAn);
    AscendC::DataCopy(aol, ao, kAg * kAn);
    AscendC::DataCopy(asl, as, kAg * kAn);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::AscendQuant<float>(qol, q, bt.Get<uint8_t>(), kScale, kOffset, kQn);
    AscendC::AscendDequant(dol, dil, dsl, {kDm, kDn, kDn});
    // per channel: the first 8 dequantisation scales as 8 channels' scales, 37 rows
    AscendC::LocalTensor<int8_t> qol2 = b10.Get<int8_t>();
    AscendC::AscendQuant<float>(qol2, q, bt.Get<uint8_t>(), dsl, kOffset, 8, kQn);
    // into half: [3, 32] of the int32 input, the first 32 quantisation inputs as scales
    AscendC::LocalTensor<half> dhl = b11.Get<half>();
    AscendC::AscendDequant(dhl, dil, q, bt.Get<uint8_t>(), {3, 32, 32});
    uint32_t shape[2] = {kAg, kAn};
    aol.SetShapeInfo(AscendC::ShapeInfo(2, shape, AscendC::DataFormat::ND));
    AscendC::AscendAntiQuant<int8_t, half>(aout_l, ail, aol, asl, bt.Get<uint8_t>(), kAk);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(qo, qol, 320);
    AscendC::DataCopy(dout_g, dol, kDm * kDn);
    AscendC::DataCopy(ao_g, aout_l, kAk * kAn);
    AscendC::GlobalTensor<int8_t> qo2;
    qo2.SetGlobalBuffer((__gm__ int8_t*)qout2, 320);
    AscendC::DataCopy(qo2, qol2, 320);
    AscendC::GlobalTensor<half> dh;
    dh.SetGlobalBuffer((__gm__ half*)dhalf, 96);
    AscendC::DataCopy(dh, dhl, 96);
}

namespace {

int quant(const std::string& name) {
    uint32_t mx = 0, mn = 0;
    AscendC::GetAscendQuantMaxMinTmpSize(ge::Shape({kQn}), 4, mx, mn);
    float* q = static_cast<float*>(AscendC::GmAlloc(kQn * 4));
    int8_t* qo = static_cast<int8_t*>(AscendC::GmAlloc(320));
    int32_t* di = static_cast<int32_t*>(AscendC::GmAlloc(kDm * kDn * 4));
    float* ds = static_cast<float*>(AscendC::GmAlloc(kDn * 4));
    float* dout = static_cast<float*>(AscendC::GmAlloc(kDm * kDn * 4));
    int8_t* ai = static_cast<int8_t*>(AscendC::GmAlloc(kAk * kAn));
    half* ao = static_cast<half*>(AscendC::GmAlloc(kAg * kAn * 2));
    half* as = static_cast<half*>(AscendC::GmAlloc(kAg * kAn * 2));
    half* aout = static_cast<half*>(AscendC::GmAlloc(kAk * kAn * 2));
    int8_t* qo2 = static_cast<int8_t*>(AscendC::GmAlloc(320));
    half* dh = static_cast<half*>(AscendC::GmAlloc(96 * 2));
    for (uint32_t k = 0; k < kQn; ++k) q[k] = static_cast<float>(std::sin(0.41 * k) * 45.0);
    for (uint32_t k = 0; k < kDm * kDn; ++k) di[k] = static_cast<int32_t>(k * 37 % 201) - 100;
    for (uint32_t k = 0; k < kDn; ++k) ds[k] = 0.25f * static_cast<float>(k % 7) - 0.8f;
    for (uint32_t k = 0; k < kAk * kAn; ++k)
        ai[k] = static_cast<int8_t>(static_cast<int>(k * 13 % 255) - 127);
    for (uint32_t k = 0; k < kAg * kAn; ++k)
        ao[k] = half(static_cast<float>(k % 9) - 4.5f),
        as[k] = half(0.125f * static_cast<float>(k % 11) - 0.6f);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(quant_api_kernel, 1, (uint8_t*)q, (uint8_t*)qo, (uint8_t*)di, (uint8_t*)ds, (uint8_t*)dout,
                (uint8_t*)ai, (uint8_t*)ao, (uint8_t*)as, (uint8_t*)aout, (uint8_t*)qo2, (uint8_t*)dh, mn);
    std::string bad = mn == kQn * 6 ? "" : "GetAscendQuantMaxMinTmpSize " + std::to_string(mn);
    for (uint32_t k = 0; k < kQn && bad.empty(); ++k) {
        // float -> half (nearest) -> int8 (nearest even, saturating): the chip's path
        const float f = q[k] * kScale + kOffset;
        const double h = static_cast<float>(half(f));
        const int want = static_cast<int>(std::fmax(-128.0, std::fmin(127.0, std::nearbyint(h))));
        if (qo[k] != want)
            bad = "AscendQuant element " + std::to_string(k) + " is " + std::to_string(qo[k]) +
                  ", expected " + std::to_string(want);
    }
    for (uint32_t k = 0; k < kQn && bad.empty(); ++k) {  // per channel
        const float f = q[k] * ds[k % 8] + kOffset;
        const int want = static_cast<int>(std::fmax(-128.0, std::fmin(127.0, std::nearbyint(float(half(f))))));
        if (qo2[k] != want)
            bad = "AscendQuant (per channel) element " + std::to_string(k) + " is " + std::to_string(qo2[k]) +
                  ", expected " + std::to_string(want);
    }
    for (uint32_t k = 0; k < 96 && bad.empty(); ++k) {  // into half: the float product rounded once
        const float want = static_cast<float>(half(static_cast<float>(di[k]) * q[k % 32]));
        if (static_cast<float>(dh[k]) != want)
            bad = "AscendDequant (into half) element " + std::to_string(k) + " is " +
                  std::to_string(static_cast<float>(dh[k])) + ", expected " + std::to_string(want);
    }
    for (uint32_t k = 0; k < kDm * kDn && bad.empty(); ++k) {
        const float want = static_cast<float>(di[k]) * ds[k % kDn];
        if (dout[k] != want)
            bad = "AscendDequant element " + std::to_string(k) + " is " + std::to_string(dout[k]) +
                  ", expected " + std::to_string(want);
    }
    for (uint32_t k = 0; k < kAk * kAn && bad.empty(); ++k) {
        const uint32_t g = (k / kAn) / (kAk / kAg), c = k % kAn;
        // half arithmetic: round after the add and after the multiply
        const half sum = half(static_cast<float>(ai[k]) + static_cast<float>(ao[g * kAn + c]));
        const half want = half(static_cast<float>(sum) * static_cast<float>(as[g * kAn + c]));
        if (static_cast<float>(aout[k]) != static_cast<float>(want))
            bad = "AscendAntiQuant element " + std::to_string(k) + " is " +
                  std::to_string(static_cast<float>(aout[k])) + ", expected " +
                  std::to_string(static_cast<float>(want));
    }
    if (bad.empty())
        std::printf("%s ok\n", name.c_str());
    else
        std::printf("%s wrong: %s\n", name.c_str(), bad.c_str());
    for (void* p : {static_cast<void*>(q), static_cast<void*>(qo), static_cast<void*>(di),
                    static_cast<void*>(ds), static_cast<void*>(dout), static_cast<void*>(ai),
                    static_cast<void*>(ao), static_cast<void*>(as), static_cast<void*>(aout),
                    static_cast<void*>(qo2), static_cast<void*>(dh)})
        AscendC::GmFree(p);
    return bad.empty() ? 0 : 1;
}

// ---- Welford ----
constexpr uint32_t kWr = 2, kWab = 72, kWcomp = 70, kWparts = 16;
constexpr float kNrec = 0.25f;

}  // namespace

// WelfordUpdate on [2, 72] (70 columns computed: two 64-lane chunks, the last partial), then WelfordFinalize
// of the first row's first 16 results with counts 1..16, whose first count the kernel sets with SetValue
// right after a Duplicate (the scalar write must land after the vector one: automatic synchronisation);
// then WelfordFinalize without counts, with a head and a tail (5 results weighing 8, 11 weighing 3) and
// without a tail (every result weighing rnLength 6, the mean abRec times the sum).
extern "C" __global__ __aicore__ void welford_kernel(GM_ADDR x, GM_ADDR m, GM_ADDR v, GM_ADDR out) {
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> bx, bm, bv, bo, bc, bt;
    const uint32_t n = kWr * kWab;
    pipe.InitBuffer(bx, n * 4);
    pipe.InitBuffer(bm, n * 4);
    pipe.InitBuffer(bv, n * 4);
    pipe.InitBuffer(bo, 2 * n * 4 + 192);
    pipe.InitBuffer(bc, kWparts * 4);
    pipe.InitBuffer(bt, 2 * n * 4);
    AscendC::GlobalTensor<float> xg, mg, vg, og;
    xg.SetGlobalBuffer((__gm__ float*)x, n);
    mg.SetGlobalBuffer((__gm__ float*)m, n);
    vg.SetGlobalBuffer((__gm__ float*)v, n);
    og.SetGlobalBuffer((__gm__ float*)out, 2 * n + 48);
    AscendC::LocalTensor<float> xl = bx.Get<float>(), ml = bm.Get<float>(), vl = bv.Get<float>(),
                                o = bo.Get<float>();
    AscendC::LocalTensor<int32_t> counts = bc.Get<int32_t>();
    AscendC::DataCopy(xl, xg, n);
    AscendC::DataCopy(ml, mg, n);
    AscendC::DataCopy(vl, vg, n);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WelfordUpdateParam up{kWr, kWab, kWcomp, kNrec};
    AscendC::WelfordUpdate<float, float>(o, o[n], ml, vl, xl, bt.Get<uint8_t>(), up);
    AscendC::CreateVecIndex(counts, 1, kWparts);
    AscendC::Duplicate(counts, 7, 8);
    counts.SetValue(0, 1);  // counts: 1, 7 x 7, 9..16
    AscendC::WelfordFinalizePara fp{1, kWparts, 0, 0, 0, 0, 1.0f / kWparts, 1.0f / 100.0f};
    AscendC::WelfordFinalize<false>(o[2 * n], o[2 * n + 8], o, o[n], counts, bt.Get<uint8_t>(), fp);
    AscendC::WelfordFinalizePara ht{0, kWparts, 8, 5, 3, kWparts - 5, 0.0f, 1.0f / 73.0f};
    AscendC::WelfordFinalize<false>(o[2 * n + 16], o[2 * n + 24], o, o[n], bt.Get<uint8_t>(), ht);
    AscendC::WelfordFinalizePara nt{6, kWparts, 0, 0, 0, 0, 1.0f / kWparts, 1.0f / 96.0f};
    AscendC::WelfordFinalize<false>(o[2 * n + 32], o[2 * n + 40], o, o[n], nt);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(og, o, 2 * n + 48);
}

namespace {

int welford(const std::string& name) {
    const uint32_t n = kWr * kWab;
    float* x = static_cast<float*>(AscendC::GmAlloc(n * 4));
    float* m = static_cast<float*>(AscendC::GmAlloc(n * 4));
    float* v = static_cast<float*>(AscendC::GmAlloc(n * 4));
    float* o = static_cast<float*>(AscendC::GmAlloc((2 * n + 48) * 4));
    for (uint32_t k = 0; k < n; ++k)
        x[k] = static_cast<float>(std::sin(0.3 * k) * 50.0),
        m[k] = static_cast<float>(std::cos(0.2 * k) * 20.0), v[k] = static_cast<float>(k % 13) * 3.0f;
    std::memset(o, 0, (2 * n + 48) * 4);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(welford_kernel, 1, (uint8_t*)x, (uint8_t*)m, (uint8_t*)v, (uint8_t*)o);
    std::string bad;
    std::vector<float> om(n), ov(n);
    for (uint32_t k = 0; k < n; ++k) {
        const bool comp = k % kWab < kWcomp;
        const float d = x[k] - m[k];
        om[k] = comp ? d * kNrec + m[k] : m[k];
        ov[k] = comp ? v[k] + d * (x[k] - om[k]) : v[k];
        if (bad.empty() && (!close(o[k], om[k]) || !close(o[n + k], ov[k])))
            bad = "WelfordUpdate element " + std::to_string(k) + ": (" + std::to_string(o[k]) + ", " +
                  std::to_string(o[n + k]) + "), expected (" + std::to_string(om[k]) + ", " +
                  std::to_string(ov[k]) + ")";
    }
    double mean = 0, var = 0;
    for (uint32_t i = 0; i < kWparts; ++i) mean += (i == 0 ? 1 : i < 8 ? 7 : i + 1) * double{om[i]};
    mean /= 100.0;
    for (uint32_t i = 0; i < kWparts; ++i) {
        const double c = i == 0 ? 1 : i < 8 ? 7 : i + 1;
        var += ov[i] + c * (om[i] - mean) * (om[i] - mean);
    }
    var /= 100.0;
    if (bad.empty() && (!close(o[2 * n], mean) || !close(o[2 * n + 8], var)))
        bad = "WelfordFinalize: (" + std::to_string(o[2 * n]) + ", " + std::to_string(o[2 * n + 8]) +
              "), expected (" + std::to_string(mean) + ", " + std::to_string(var) + ")";
    // without counts: weights 8 (5 head results) and 3 (11 tail), then rnLength 6 with the mean by abRec
    for (int form = 0; form < 2 && bad.empty(); ++form) {
        auto weight = [&](uint32_t i) { return form == 0 ? (i < 5 ? 8.0 : 3.0) : 6.0; };
        double mn = 0, vr = 0;
        for (uint32_t i = 0; i < kWparts; ++i) mn += (form == 0 ? weight(i) / 73.0 : 1.0 / kWparts) * om[i];
        for (uint32_t i = 0; i < kWparts; ++i) vr += ov[i] + weight(i) * (om[i] - mn) * (om[i] - mn);
        vr /= form == 0 ? 73.0 : 96.0;
        const float gm = o[2 * n + 16 + 16 * form], gv = o[2 * n + 24 + 16 * form];
        if (!close(gm, mn) || !close(gv, vr))
            bad = std::string("WelfordFinalize without counts (") + (form == 0 ? "head and tail" : "no tail") +
                  "): (" + std::to_string(gm) + ", " + std::to_string(gv) + "), expected (" + std::to_string(mn) +
                  ", " + std::to_string(vr) + ")";
    }
    if (bad.empty())
        std::printf("%s ok\n", name.c_str());
    else
        std::printf("%s wrong: %s\n", name.c_str(), bad.c_str());
    for (void* p :
         {static_cast<void*>(x), static_cast<void*>(m), static_cast<void*>(v), static_cast<void*>(o)})
        AscendC::GmFree(p);
    return bad.empty() ? 0 : 1;
}

}  // namespace

// ---- LayerNorm with LayerNormPara (mean, rstd) and Normalize ----
extern "C" __global__ __aicore__ void norm_v2_kernel(GM_ADDR in, GM_ADDR out, LayerNormSeparateTiling t,
                                                     uint32_t tmpBytes) {
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> bin, bout, btmp;
    const uint32_t nin = kN + 2 * kH, nout = 2 * kN + 4 * kSlot;
    pipe.InitBuffer(bin, nin * 4);
    pipe.InitBuffer(bout, nout * 4);
    pipe.InitBuffer(btmp, tmpBytes);
    AscendC::GlobalTensor<float> ig, og;
    ig.SetGlobalBuffer((__gm__ float*)in, nin);
    og.SetGlobalBuffer((__gm__ float*)out, nout);
    AscendC::LocalTensor<float> i = bin.Get<float>(), o = bout.Get<float>();
    AscendC::LocalTensor<uint8_t> tmp = btmp.AllocTensor<uint8_t>();
    AscendC::DataCopy(i, ig, nin);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    const AscendC::LocalTensor<float> mean = o[2 * kN], rstd = o[2 * kN + kSlot], var = o[2 * kN + 2 * kSlot];
    AscendC::LayerNormPara lp{kRows, kValid, kH};
    AscendC::LayerNorm<float, float>(o, mean, rstd, i, i[kN], i[kN + kH], kEps, tmp, lp, t);
    AscendC::Mul(var, rstd, rstd, kRows);  // var = 1 / rstd^2 - eps, as the vendor's example does
    AscendC::Reciprocal(var, var, kRows);
    AscendC::Adds(var, var, -kEps, kRows);
    AscendC::NormalizePara np{kRows, kValid, kH};
    AscendC::Normalize<float, float>(o[kN], o[2 * kN + 3 * kSlot], mean, var, i, i[kN], i[kN + kH], tmp, kEps,
                                     np);
    btmp.FreeTensor(tmp);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(og, o, nout);
}

namespace {

int norm_v2(const std::string& name) {
    uint32_t mx = 0, mn = 0;
    const ge::Shape shape({kRows, kH});
    AscendC::GetLayerNormMaxMinTmpSize(shape, 4, false, true, false, mx, mn);
    LayerNormSeparateTiling t;
    AscendC::GetLayerNormNDTilingInfo(shape, mn, 4, false, true, t);
    const uint32_t nin = kN + 2 * kH, nout = 2 * kN + 4 * kSlot;
    float* ind = static_cast<float*>(AscendC::GmAlloc(nin * 4));
    float* outd = static_cast<float*>(AscendC::GmAlloc(nout * 4));
    for (uint32_t k = 0; k < kN; ++k) ind[k] = xv(k);
    for (uint32_t k = 0; k < 2 * kH; ++k) ind[kN + k] = gv(k);
    std::memset(outd, 0, nout * 4);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(norm_v2_kernel, 1, (uint8_t*)ind, (uint8_t*)outd, t, mn);
    std::vector<double> x(ind, ind + kN), y, m, v, rstd(kRows);
    layer_norm(x, ind + kN, ind + kN + kH, kValid, y, m, v);
    for (uint32_t r = 0; r < kRows; ++r) rstd[r] = 1.0 / std::sqrt(v[r] + kEps);
    std::string bad =
        t.sliceRows == 8 ? "" : "GetLayerNormNDTilingInfo: sliceRows " + std::to_string(t.sliceRows);
    if (bad.empty()) bad = compare("LayerNorm (LayerNormPara)", outd, y, kH, kValid);
    if (bad.empty()) bad = compare("LayerNorm mean", outd + 2 * kN, m, 1, 1);
    if (bad.empty()) bad = compare("LayerNorm rstd", outd + 2 * kN + kSlot, rstd, 1, 1);
    if (bad.empty()) bad = compare("Normalize", outd + kN, y, kH, kValid);
    if (bad.empty()) bad = compare("Normalize rstd", outd + 2 * kN + 3 * kSlot, rstd, 1, 1);
    if (bad.empty())
        std::printf("%s ok\n", name.c_str());
    else
        std::printf("%s wrong: %s\n", name.c_str(), bad.c_str());
    AscendC::GmFree(ind);
    AscendC::GmFree(outd);
    return bad.empty() ? 0 : 1;
}

}  // namespace

int norm_family(const std::string& name) {
    if (name == "norm_v2") return norm_v2(name);
    if (name == "norm") return norm(name);
    if (name == "quant") return quant(name);
    if (name == "welford") return welford(name);
    return -1;
}
