// The conformance program's load3d-transpose family (tests/ascendc/conformance.cpp dispatches to it):
// "load3d_t": C (24 x 40, float) = A (24 x 32) x B (32 x 40), float operands, with A given transposed (A^T,
// 32 x 24, ND in GM) and both operands moved L1 -> L0 by LoadData with LoadData3DParamsV2 and enTranspose,
// as the vendor's mmad_load3dv2 example does: A^T in L1 as NZ (32 rows = the image's pixels, 24 columns =
// channels) transposed into L0A (A's rows are the channels: 24, a fractal row block padded to 32), B in L1
// as NZ (32 pixel rows, 40 channel columns) transposed into L0B (B's N = 40, padded to 48: k extension
// not a multiple of 16). The host computes every product exactly (small integers) and compares each float.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tikicpulib.h"

namespace {

constexpr uint32_t kM = 24, kK = 32, kN = 40;

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

extern "C" __global__ __aicore__ void load3d_t_kernel(GM_ADDR at, GM_ADDR b, GM_ADDR y) {
    AscendC::GlobalTensor<float> ag, bg, yg;
    ag.SetGlobalBuffer((__gm__ float*)at, kK * kM);
    bg.SetGlobalBuffer((__gm__ float*)b, kK * kN);
    yg.SetGlobalBuffer((__gm__ float*)y, kM * kN);
    AscendC::LocalTensor<float> a1(AscendC::TPosition::A1, 0, kK * kM);
    AscendC::LocalTensor<float> b1(AscendC::TPosition::B1, kK * kM * 4, kK * kN);
    AscendC::LocalTensor<float> a2(AscendC::TPosition::A2, 0, 32 * kK);
    AscendC::LocalTensor<float> b2(AscendC::TPosition::B2, 0, kK * 48);
    AscendC::LocalTensor<float> c(AscendC::TPosition::CO1, 0, 32 * 48);
    AscendC::Nd2NzParams pa;  // A^T: 32 rows (pixels) of 24 channels
    pa.ndNum = 1, pa.nValue = kK, pa.dValue = kM, pa.srcDValue = kM, pa.dstNzC0Stride = kK, pa.dstNzNStride = 1;
    AscendC::DataCopy(a1, ag, pa);
    AscendC::Nd2NzParams pb;  // B: 32 rows (pixels) of 40 channels
    pb.ndNum = 1, pb.nValue = kK, pb.dValue = kN, pb.srcDValue = kN, pb.dstNzC0Stride = kK, pb.dstNzNStride = 1;
    AscendC::DataCopy(b1, bg, pb);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    AscendC::LoadData(a2, a1, transposed_img<float>(kK, kM));
    AscendC::LoadData(b2, b1, transposed_img<float>(kK, kN));
    AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
    AscendC::MmadParams mp;
    mp.m = kM, mp.n = kN, mp.k = kK;
    AscendC::Mmad(c, a2, b2, mp);
    AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
    AscendC::FixpipeParamsV220 nd;
    nd.nSize = kN, nd.mSize = kM, nd.srcStride = 32, nd.dstStride = kN;
    AscendC::Fixpipe<float, float, AscendC::CFG_ROW_MAJOR>(yg, c, nd);
}

int load3d_family(const std::string& name) {
    if (name != "load3d_t") return -1;
    float* ad = static_cast<float*>(AscendC::GmAlloc(kK * kM * 4));
    float* bd = static_cast<float*>(AscendC::GmAlloc(kK * kN * 4));
    float* yd = static_cast<float*>(AscendC::GmAlloc(kM * kN * 4));
    for (uint32_t q = 0; q < kK; ++q) {
        for (uint32_t i = 0; i < kM; ++i) ad[q * kM + i] = av(i, q);
        for (uint32_t j = 0; j < kN; ++j) bd[q * kN + j] = bv(q, j);
    }
    std::memset(yd, 0, kM * kN * 4);
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(load3d_t_kernel, 1, (uint8_t*)ad, (uint8_t*)bd, (uint8_t*)yd);
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
