// The conformance program's load3d-transpose families (tests/ascendc/conformance.cpp dispatches to them):
// "load3d_t": C (24 x 40, float) = A (24 x 32) x B (32 x 40), float operands, with A given transposed (A^T,
// 32 x 24, ND in GM) and both operands moved L1 -> L0 by LoadData with LoadData3DParamsV2 and enTranspose,
// as the vendor's mmad_load3dv2 example does: A^T in L1 as NZ (32 rows = the image's pixels, 24 columns =
// channels) transposed into L0A (A's rows are the channels: 24, a fractal row block padded to 32), B in L1
// as NZ (32 pixel rows, 40 channel columns) transposed into L0B (B's N = 40, padded to 48: k extension
// not a multiple of 16).
// "load3d_kalign": the same with k = 24, not a multiple of 16: A^T's and B's k rows are padded to 32 in L1
// (the transposing load3d's pixels come in 16s), so each of A's row blocks in L0A holds 4 fractals of 8 k,
// of which the first 3 hold k; Mmad with MmadParams::kDirectionAlign steps over the fourth (without it the
// cube would read row block 1 from the fourth fractal on). A is 20 x 24, B 24 x 36.
// "load3d_fmatrix": load3d_t with A's load taking the feature map's size and padding from SetFmatrix
// (FMATRIX_LEFT) and its pad value from SetLoadDataPaddingValue (IsResetLoad3dConfig {false, false}; its
// parameters' l1H, l1W, pads and pad value are wrong on purpose), B's parameters from the reference's
// 17-value LoadData3DParamsV2 constructor.
// The host computes every product exactly (small integers) and compares each float bit for bit.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tikicpulib.h"

namespace {

struct Dims {
    uint32_t m, k, n;
    bool kalign;
    bool regs;  // load3d_fmatrix: A's load through the FMATRIX register, B's params built by the constructor
};
constexpr AscendC::IsResetLoad3dConfig kFromRegisters = {false, false};
constexpr uint32_t up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

float av(uint32_t i, uint32_t j) { return static_cast<float>(static_cast<int>((i * 5 + j * 3) % 11) - 5); }
float bv(uint32_t i, uint32_t j) { return static_cast<float>(static_cast<int>((i * 7 + j * 2) % 9) - 4); }

template <class T>
AscendC::LoadData3DParamsV2<T> transposed_img(uint16_t pixels, uint16_t channels) {
    AscendC::LoadData3DParamsV2<T> p;
    p.l1H = 1, p.l1W = pixels, p.channelSize = channels;
    p.kExtension = channels, p.mExtension = pixels;
    p.strideW = 1, p.strideH = 1, p.filterW = 1, p.filterH = 1, p.dilationFilterW = 1, p.dilationFilterH = 1;
    p.enTranspose = true;
    return p;
}

}  // namespace

extern "C" __global__ __aicore__ void load3d_t_kernel(GM_ADDR at, GM_ADDR b, GM_ADDR y, Dims d) {
    const uint32_t kp = up(d.k, 16), mc = up(d.m, 8), nc = up(d.n, 8);  // pixels in 16s, channels in C0s
    AscendC::GlobalTensor<float> ag, bg, yg;
    ag.SetGlobalBuffer((__gm__ float*)at, d.k * d.m);
    bg.SetGlobalBuffer((__gm__ float*)b, d.k * d.n);
    yg.SetGlobalBuffer((__gm__ float*)y, d.m * d.n);
    AscendC::LocalTensor<float> a1(AscendC::TPosition::A1, 0, kp * mc);
    AscendC::LocalTensor<float> b1(AscendC::TPosition::B1, kp * mc * 4, kp * nc);
    AscendC::LocalTensor<float> a2(AscendC::TPosition::A2, 0, up(d.m, 16) * kp);
    AscendC::LocalTensor<float> b2(AscendC::TPosition::B2, 0, kp * up(d.n, 16));
    AscendC::LocalTensor<float> c(AscendC::TPosition::CO1, 0, up(d.m, 16) * up(d.n, 16));
    AscendC::Nd2NzParams pa;  // A^T: k rows (pixels) of m channels
    pa.ndNum = 1, pa.nValue = d.k, pa.dValue = d.m, pa.srcDValue = d.m, pa.dstNzC0Stride = kp,
    pa.dstNzNStride = 1;
    AscendC::DataCopy(a1, ag, pa);
    AscendC::Nd2NzParams pb;  // B: k rows (pixels) of n channels
    pb.ndNum = 1, pb.nValue = d.k, pb.dValue = d.n, pb.srcDValue = d.n, pb.dstNzC0Stride = kp,
    pb.dstNzNStride = 1;
    AscendC::DataCopy(b1, bg, pb);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    if (d.regs) {
        // The register form: A's feature map size and padding from SetFmatrix (its params' l1H, l1W and pads
        // are wrong on purpose), the pad value from SetLoadDataPaddingValue; B by the 17-value constructor.
        const uint8_t pads[4] = {0, 0, 0, 0}, wrong[4] = {1, 2, 1, 2};
        AscendC::SetFmatrix(1, static_cast<uint16_t>(kp), pads, AscendC::FmatrixMode::FMATRIX_LEFT);
        AscendC::SetLoadDataPaddingValue(0.0f);
        AscendC::LoadData3DParamsV2<float> pa2 = transposed_img<float>(kp, mc);
        pa2.l1H = 3, pa2.l1W = 5;
        for (int i = 0; i < 4; ++i) pa2.padList[i] = wrong[i];
        pa2.padValue = 9.0f;
        AscendC::LoadData<float, kFromRegisters>(a2, a1, pa2);
        AscendC::LoadData(b2, b1,
                          AscendC::LoadData3DParamsV2<float>(pads, 1, static_cast<uint16_t>(kp), static_cast<uint16_t>(nc),
                                                             static_cast<uint16_t>(nc), static_cast<uint16_t>(kp), 0, 0,
                                                             1, 1, 1, 1, 1, 1, true, false, 0.0f));
    } else {
        AscendC::LoadData(a2, a1, transposed_img<float>(kp, mc));
        AscendC::LoadData(b2, b1, transposed_img<float>(kp, nc));
    }
    AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
    AscendC::MmadParams mp;
    mp.m = d.m, mp.n = d.n, mp.k = d.k;
    mp.kDirectionAlign = d.kalign;
    AscendC::Mmad(c, a2, b2, mp);
    AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
    AscendC::FixpipeParamsV220 nd;
    nd.nSize = d.n, nd.mSize = d.m, nd.srcStride = up(d.m, 16), nd.dstStride = d.n;
    AscendC::Fixpipe<float, float, AscendC::CFG_ROW_MAJOR>(yg, c, nd);
}

int load3d_family(const std::string& name) {
    if (name != "load3d_t" && name != "load3d_kalign" && name != "load3d_fmatrix") return -1;
    const Dims d = name == "load3d_kalign" ? Dims{20, 24, 36, true, false}
                                           : Dims{24, 32, 40, false, name == "load3d_fmatrix"};
    const uint32_t kM = d.m, kK = d.k, kN = d.n;
    float* ad = static_cast<float*>(AscendC::GmAlloc(kK * kM * 4));
    float* bd = static_cast<float*>(AscendC::GmAlloc(kK * kN * 4));
    float* yd = static_cast<float*>(AscendC::GmAlloc(kM * kN * 4));
    for (uint32_t q = 0; q < kK; ++q) {
        for (uint32_t i = 0; i < kM; ++i) ad[q * kM + i] = av(i, q);
        for (uint32_t j = 0; j < kN; ++j) bd[q * kN + j] = bv(q, j);
    }
    std::memset(yd, 0, kM * kN * 4);
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(load3d_t_kernel, 1, (uint8_t*)ad, (uint8_t*)bd, (uint8_t*)yd, d);
    int bad = -1;
    float want = 0;
    for (uint32_t e = 0; e < kM * kN && bad < 0; ++e) {
        double s = 0;
        for (uint32_t q = 0; q < kK; ++q) s += double{av(e / kN, q)} * double{bv(q, e % kN)};
        want = static_cast<float>(s);
        if (std::memcmp(&yd[e], &want, 4) != 0) bad = static_cast<int>(e);
    }
    if (bad >= 0)
        std::printf("%s wrong: element %d is %g, expected %g\n", name.c_str(), bad, yd[bad], want);
    else
        std::printf("%s ok\n", name.c_str());
    AscendC::GmFree(ad);
    AscendC::GmFree(bd);
    AscendC::GmFree(yd);
    return bad >= 0 ? 1 : 0;
}
