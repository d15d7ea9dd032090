// The conformance program's per-channel quantisation and event-flag families (tests/ascendc/conformance.cpp
// dispatches to them), on an AIC: C (16 x 272, float) = A (16 x 32) x B (32 x 272) in half, then three
// FixPipe drains with VQF322B8_PRE (one 64-bit quantisation word per column, scale = bits 31..13 as an fp32;
// some columns' scales have low bits the FixPipe drops) to int8:
//   1. Fixpipe with the words in an L1 tensor (cbufWorkspace), ND into GM: 272 columns, so three chunks of
//      at most 128 (copy_l1_to_fb + fixpipe each);
//   2. the same as NZ into L1, then DataCopy L1 -> GM (the cube core's MTE3, after a FIX -> MTE3 flag);
//   3. DataCopy of the first 256 words L1 -> C2PIPE2GM (the FixPipe buffer), SetFixPipeConfig, and a Fixpipe
//      without a tensor reading them: 256 columns, ND into GM;
//   4. the same words through DataCopy CO1 -> GM with DataCopyCO12DstParams (nz2ndEn, the older form).
// Every int8 against the host's rint(c x scale) saturated to -128..127.
// "perchannel": the above. "flag_twice": the same kernel with the M -> FIX event set and waited twice in a
// row (SetFlag, WaitFlag, SetFlag, WaitFlag, as the vendor's mmad_unitflag example does): the M pipe sets
// the event twice before the FIX pipe's first wait has seen it, and both waits must pass.
// "perchannel_tbuf": the same kernel with the forms catlass's tile copies use: the FixPipe buffer a TBuf of
// TPosition::C2PIPE2GM from TPipe::InitBuffer (in the FixPipe buffer, not UB), SetFixPipeConfig<uint64_t,
// false>(fb, false), and SetHF32Mode(false) and SetMMLayoutTransform(true) before the Mmad (which must not
// change the float products).
// "flag_flood": an AIV sets V -> MTE3 event 0 65537 times with no wait taking one: the run stops, exit 2.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "tikicpulib.h"

namespace {

constexpr uint32_t kM = 16, kK = 32, kN = 272, kFbN = 256, kGroups = (kN + 31) / 32;
constexpr uint32_t kL1B = kM * kK * 2, kL1W = kL1B + kK * kN * 2, kL1Out = kL1W + kN * 8;

float av(uint32_t i, uint32_t k) { return static_cast<float>(static_cast<int>((i * 3 + k * 5) % 7) - 3); }
float bv(uint32_t k, uint32_t j) { return static_cast<float>(static_cast<int>((k * 7 + j * 3) % 5) - 2); }
// Column j's quantisation word: an fp32 scale in the low 32 bits (every fifth one 0.3 x ..., whose low 13
// mantissa bits the FixPipe ignores).
uint64_t word(uint32_t j) {
    const float s = (j % 5 == 0 ? 0.3f : 0.25f) * static_cast<float>(j % 7 + 1) * (j % 2 ? 1.0f : -1.0f);
    uint32_t bits;
    std::memcpy(&bits, &s, 4);
    return bits;
}
int8_t want(uint32_t i, uint32_t j) {
    double c = 0;
    for (uint32_t k = 0; k < kK; ++k) c += double{av(i, k)} * double{bv(k, j)};
    const uint32_t bits = static_cast<uint32_t>(word(j)) & 0xffffe000u;
    float s;
    std::memcpy(&s, &bits, 4);
    const double q = std::nearbyint(c * double{s});
    return static_cast<int8_t>(std::fmax(-128.0, std::fmin(127.0, q)));
}

}  // namespace

extern "C" __global__ __aicore__ void quant_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR w, GM_ADDR y1, GM_ADDR y2,
                                                   GM_ADDR y3, GM_ADDR y4, uint32_t variant) {
    const bool twice = variant == 1, tbuf = variant == 2;
    AscendC::GlobalTensor<half> ag, bg;
    AscendC::GlobalTensor<uint64_t> wg;
    AscendC::GlobalTensor<int8_t> y1g, y2g, y3g, y4g;
    ag.SetGlobalBuffer((__gm__ half*)a, kM * kK);
    bg.SetGlobalBuffer((__gm__ half*)b, kK * kN);
    wg.SetGlobalBuffer((__gm__ uint64_t*)w, kN);
    y1g.SetGlobalBuffer((__gm__ int8_t*)y1, kM * kN);
    y2g.SetGlobalBuffer((__gm__ int8_t*)y2, kGroups * kM * 32);
    y3g.SetGlobalBuffer((__gm__ int8_t*)y3, kM * kFbN);
    y4g.SetGlobalBuffer((__gm__ int8_t*)y4, kM * kFbN);
    AscendC::LocalTensor<half> a1(AscendC::TPosition::A1, 0, kM * kK), b1(AscendC::TPosition::B1, kL1B, kK * kN);
    AscendC::LocalTensor<uint64_t> ws(AscendC::TPosition::C1, kL1W, kN);
    AscendC::LocalTensor<int8_t> out(AscendC::TPosition::C1, kL1Out, kGroups * kM * 32);
    AscendC::LocalTensor<half> a2(AscendC::TPosition::A2, 0, kM * kK), b2(AscendC::TPosition::B2, 0, kK * kN);
    AscendC::LocalTensor<float> c(AscendC::TPosition::CO1, 0, kM * kN);
    AscendC::LocalTensor<uint64_t> fb(AscendC::TPosition::C2PIPE2GM, 0, kFbN);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::C2PIPE2GM> fbuf;
    if (tbuf) {
        pipe.InitBuffer(fbuf, kFbN * 8);
        fb = fbuf.Get<uint64_t>();
    }
    AscendC::Nd2NzParams pa;
    pa.ndNum = 1, pa.nValue = kM, pa.dValue = kK, pa.srcDValue = kK, pa.dstNzC0Stride = kM, pa.dstNzNStride = 1;
    AscendC::DataCopy(a1, ag, pa);
    AscendC::Nd2NzParams pb;
    pb.ndNum = 1, pb.nValue = kK, pb.dValue = kN, pb.srcDValue = kN, pb.dstNzC0Stride = kK, pb.dstNzNStride = 1;
    AscendC::DataCopy(b1, bg, pb);
    AscendC::DataCopy(ws, wg, kN);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    AscendC::LoadData2DParams la;  // NZ -> ZZ (one row block)
    la.repeatTimes = kK / 16, la.srcStride = 1, la.ifTranspose = false;
    AscendC::LoadData(a2, a1, la);
    AscendC::LoadData2DParams lb;  // NZ -> ZN, one k block at a time, each fractal transposed
    lb.repeatTimes = kN / 16, lb.srcStride = kK / 16, lb.ifTranspose = true;
    for (uint32_t i = 0; i < kK / 16; ++i) AscendC::LoadData(b2[i * kN * 16], b1[i * 256], lb);
    AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
    AscendC::MmadParams mp;
    mp.m = kM, mp.n = kN, mp.k = kK;
    if (tbuf) {
        AscendC::SetHF32Mode(false);
        AscendC::SetMMLayoutTransform(true);
    }
    AscendC::Mmad(c, a2, b2, mp);
    for (uint32_t t = 0; t < (twice ? 2u : 1u); ++t) {
        AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
    }
    AscendC::SetFlag<AscendC::HardEvent::MTE2_FIX>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_FIX>(EVENT_ID0);
    AscendC::FixpipeParamsV220 f;
    f.nSize = kN, f.mSize = kM, f.srcStride = kM, f.dstStride = kN;
    f.quantPre = QuantMode_t::VQF322B8_PRE;
    AscendC::Fixpipe<int8_t, float, AscendC::CFG_ROW_MAJOR>(y1g, c, ws, f);
    AscendC::FixpipeParamsV220 fz = f;
    fz.dstStride = kM;  // NZ: a column group of 16 rows x 32 bytes is 16 blocks
    AscendC::Fixpipe<int8_t, float, AscendC::CFG_NZ>(out, c, ws, fz);
    AscendC::DataCopy(fb, ws, AscendC::DataCopyParams(1, kFbN * 8 / 128, 0, 0));
    if (tbuf) AscendC::SetFixPipeConfig<uint64_t, false>(fb, false);
    else AscendC::SetFixPipeConfig(fb);
    AscendC::FixpipeParamsV220 f3 = f;
    f3.nSize = kFbN, f3.dstStride = kFbN;
    AscendC::Fixpipe<int8_t, float, AscendC::CFG_ROW_MAJOR>(y3g, c, f3);
    AscendC::DataCopyCO12DstParams co12(kFbN, kM, kFbN, kM, QuantMode_t::VQF322B8_PRE, 0, false, true);
    AscendC::DataCopy(y4g, c, co12);
    AscendC::SetFlag<AscendC::HardEvent::FIX_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::FIX_MTE3>(EVENT_ID0);
    AscendC::DataCopy(y2g, out, AscendC::DataCopyParams(1, kGroups * kM, 0, 0));
}

extern "C" __global__ __aicore__ void hf32_kernel() { AscendC::SetHF32Mode(true); }

extern "C" __global__ __aicore__ void flood_kernel() {
    for (uint32_t i = 0; i <= 65536; ++i) AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
}

int quant_family(const std::string& name) {
    if (name == "flag_flood") {
        AscendC::SetKernelMode(KernelMode::AIV_MODE);
        ICPU_RUN_KF(flood_kernel, 1);
        std::printf("flag_flood: the run went on\n");
        return 1;
    }
    if (name == "hf32_on") {  // HF32 Mmad is not modelled: the run stops naming the call
        AscendC::SetKernelMode(KernelMode::AIC_MODE);
        ICPU_RUN_KF(hf32_kernel, 1);
        std::printf("hf32_on: the run went on\n");
        return 1;
    }
    if (name != "perchannel" && name != "flag_twice" && name != "perchannel_tbuf") return -1;
    half* ad = static_cast<half*>(AscendC::GmAlloc(kM * kK * sizeof(half)));
    half* bd = static_cast<half*>(AscendC::GmAlloc(kK * kN * sizeof(half)));
    uint64_t* wd = static_cast<uint64_t*>(AscendC::GmAlloc(kN * 8));
    int8_t* y1 = static_cast<int8_t*>(AscendC::GmAlloc(kM * kN));
    int8_t* y2 = static_cast<int8_t*>(AscendC::GmAlloc(kGroups * kM * 32));
    int8_t* y3 = static_cast<int8_t*>(AscendC::GmAlloc(kM * kFbN));
    int8_t* y4 = static_cast<int8_t*>(AscendC::GmAlloc(kM * kFbN));
    for (uint32_t i = 0; i < kM * kK; ++i) ad[i] = half(av(i / kK, i % kK));
    for (uint32_t i = 0; i < kK * kN; ++i) bd[i] = half(bv(i / kN, i % kN));
    for (uint32_t j = 0; j < kN; ++j) wd[j] = word(j);
    std::memset(y1, 99, kM * kN);
    std::memset(y2, 99, kGroups * kM * 32);
    std::memset(y3, 99, kM * kFbN);
    std::memset(y4, 99, kM * kFbN);
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(quant_kernel, 1, (uint8_t*)ad, (uint8_t*)bd, (uint8_t*)wd, (uint8_t*)y1, (uint8_t*)y2, (uint8_t*)y3,
                (uint8_t*)y4, static_cast<uint32_t>(name == "flag_twice" ? 1 : name == "perchannel_tbuf" ? 2 : 0));
    std::string bad;
    for (uint32_t i = 0; i < kM && bad.empty(); ++i)
        for (uint32_t j = 0; j < kN && bad.empty(); ++j) {
            const int8_t q = want(i, j);
            const int8_t nz = y2[(j / 32) * kM * 32 + i * 32 + j % 32];
            if (y1[i * kN + j] != q) bad = "ND (L1 words) " + std::to_string(y1[i * kN + j]);
            else if (nz != q) bad = "NZ via L1 -> GM " + std::to_string(nz);
            else if (j < kFbN && y3[i * kFbN + j] != q) bad = "SetFixPipeConfig " + std::to_string(y3[i * kFbN + j]);
            else if (j < kFbN && y4[i * kFbN + j] != q) bad = "DataCopyCO12DstParams " + std::to_string(y4[i * kFbN + j]);
            if (!bad.empty()) bad += " at (" + std::to_string(i) + ", " + std::to_string(j) + "), expected " + std::to_string(q);
        }
    if (bad.empty()) std::printf("%s ok\n", name.c_str());
    else std::printf("%s wrong: %s\n", name.c_str(), bad.c_str());
    for (void* p : {static_cast<void*>(ad), static_cast<void*>(bd), static_cast<void*>(wd), static_cast<void*>(y1),
                    static_cast<void*>(y2), static_cast<void*>(y3), static_cast<void*>(y4)})
        AscendC::GmFree(p);
    return bad.empty() ? 0 : 1;
}
