// The conformance program's int4 family (tests/ascendc/conformance.cpp dispatches to it): "int4" casts 512
// halves in [-10, 9.5] (quarters, ties included) to int4b_t three ways and back: the mask/repeat form with
// CAST_CEIL (mask 128, 4 repeats, dst repeat stride 2 blocks: 128 nibbles; the vendor's cast example), the
// count form with CAST_RINT over 500 elements (3 whole repeats and a masked tail), the mask form with
// CAST_FLOOR and a dst block stride of 2 (a 32-byte gap after each 64-nibble block); then the CEIL result
// back to half (count form, exact). The host rounds each value by the reference's mode, saturates to
// -8..7 and packs two elements to a byte, element 2i in the low nibble; every byte and half is compared.
// "int4_mmad": int4 A (m 32 x k 96, ND) and B given as B^T (n 48 x k 96, ND) moved GM -> L1 by DataCopy
// with Nd2NzParams (dValue in bytes: two elements each, as the reference has it), L1 -> L0A/L0B by
// LoadData 2D (K0 = 64: k padded to 128), one Mmad into int32, Fixpipe to GM (ND); the host sums the
// products exactly and compares every int32.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tikicpulib.h"

namespace {

constexpr uint32_t kLen = 512;
constexpr uint32_t kRint = 500;
// GM output: CEIL bytes [0, 256), RINT bytes [256, 512), FLOOR bytes [512, 1024) (stride 2: every
// other 32-byte block), CEIL back to half [1024, 2048).
constexpr uint32_t kOutCeil = 0, kOutRint = 256, kOutFloor = 512, kOutHalf = 1024, kOutBytes = 2048;

float in_value(uint32_t i) { return static_cast<float>((i * 37u) % 79u) * 0.25f - 10.0f; }

}  // namespace

extern "C" __global__ __aicore__ void int4_kernel(GM_ADDR x, GM_ADDR y) {
    AscendC::GlobalTensor<half> xg;
    AscendC::GlobalTensor<int8_t> yg;
    AscendC::GlobalTensor<half> hg;
    xg.SetGlobalBuffer((__gm__ half*)x, kLen);
    yg.SetGlobalBuffer((__gm__ int8_t*)y, kOutHalf);
    hg.SetGlobalBuffer((__gm__ half*)(y + kOutHalf), kLen);
    AscendC::LocalMemAllocator<AscendC::Hardware::UB> ub;
    AscendC::LocalTensor<half> xl = ub.Alloc<half, kLen>();
    AscendC::LocalTensor<int8_t> yl = ub.Alloc<int8_t, kOutHalf>();
    AscendC::LocalTensor<half> hl = ub.Alloc<half, kLen>();
    AscendC::DataCopy(xl, xg, kLen);
    AscendC::Duplicate(yl.ReinterpretCast<int16_t>(), int16_t{0}, kOutHalf / 2);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::LocalTensor<AscendC::int4b_t> ceil4 = yl.ReinterpretCast<AscendC::int4b_t>();
    AscendC::Cast<AscendC::int4b_t, half>(ceil4, xl, AscendC::RoundMode::CAST_CEIL, 128, 4, {1, 1, 2, 8});
    AscendC::LocalTensor<AscendC::int4b_t> rint4 = ceil4[kOutRint * 2];
    AscendC::Cast(rint4, xl, AscendC::RoundMode::CAST_RINT, kRint);
    AscendC::LocalTensor<AscendC::int4b_t> floor4 = ceil4[kOutFloor * 2];
    AscendC::Cast<AscendC::int4b_t, half>(floor4, xl, AscendC::RoundMode::CAST_FLOOR, 128, 4, {2, 1, 4, 8});
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Cast(hl, ceil4, AscendC::RoundMode::CAST_NONE, kLen);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(yg, yl, kOutHalf);
    AscendC::DataCopy(hg, hl, kLen);
}

namespace {

constexpr uint32_t kM = 32, kK = 96, kKp = 128, kN = 48;  // int4_mmad; kKp: k padded to K0 = 64

int a4(uint32_t i, uint32_t j) { return static_cast<int>((i * 7 + j * 5) % 16) - 8; }
int b4(uint32_t i, uint32_t j) { return static_cast<int>((i * 3 + j * 11 + 5) % 16) - 8; }  // B (k x n)

}  // namespace

extern "C" __global__ __aicore__ void int4_mmad_kernel(GM_ADDR a, GM_ADDR bt, GM_ADDR y) {
    AscendC::GlobalTensor<AscendC::int4b_t> ag, bg;
    AscendC::GlobalTensor<int32_t> yg;
    ag.SetGlobalBuffer((__gm__ AscendC::int4b_t*)a, kM * kK);
    bg.SetGlobalBuffer((__gm__ AscendC::int4b_t*)bt, kN * kK);
    yg.SetGlobalBuffer((__gm__ int32_t*)y, kM * kN);
    AscendC::LocalTensor<AscendC::int4b_t> a1(AscendC::TPosition::A1, 0, kM * kKp);
    AscendC::LocalTensor<AscendC::int4b_t> b1(AscendC::TPosition::B1, kM * kKp / 2, kN * kKp);
    AscendC::LocalTensor<AscendC::int4b_t> a2(AscendC::TPosition::A2, 0, kM * kKp);
    AscendC::LocalTensor<AscendC::int4b_t> b2(AscendC::TPosition::B2, 0, kN * kKp);
    AscendC::LocalTensor<int32_t> c(AscendC::TPosition::CO1, 0, kM * kN);
    AscendC::Nd2NzParams pa;  // bytes: a row of k int4 is k / 2 bytes
    pa.ndNum = 1, pa.nValue = kM, pa.dValue = kK / 2, pa.srcDValue = kK / 2, pa.dstNzC0Stride = kM,
    pa.dstNzNStride = 1;
    AscendC::DataCopy(a1, ag, pa);
    AscendC::Nd2NzParams pb;
    pb.ndNum = 1, pb.nValue = kN, pb.dValue = kK / 2, pb.srcDValue = kK / 2, pb.dstNzC0Stride = kN,
    pb.dstNzNStride = 1;
    AscendC::DataCopy(b1, bg, pb);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    constexpr uint32_t kFrac = 16 * 64;  // elements of one int4 fractal
    AscendC::LoadData2DParams la;      // NZ -> ZZ: per 16-row block, its k fractals
    la.repeatTimes = kKp / 64, la.srcStride = kM / 16;
    for (uint32_t i = 0; i < kM / 16; ++i) AscendC::LoadData(a2[i * (kKp / 64) * kFrac], a1[i * kFrac], la);
    AscendC::LoadData2DParams lb;  // B^T in NZ is already ZN fractal by fractal: per k block, its n fractals
    lb.repeatTimes = kN / 16, lb.srcStride = 1;
    for (uint32_t i = 0; i < kKp / 64; ++i)
        AscendC::LoadData(b2[i * (kN / 16) * kFrac], b1[i * (kN / 16) * kFrac], lb);
    AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
    AscendC::MmadParams mp;
    mp.m = kM, mp.n = kN, mp.k = kK;
    AscendC::Mmad(c, a2, b2, mp);
    AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
    AscendC::FixpipeParamsV220 nd;
    nd.nSize = kN, nd.mSize = kM, nd.srcStride = kM, nd.dstStride = kN;
    AscendC::Fixpipe<int32_t, int32_t, AscendC::CFG_ROW_MAJOR>(yg, c, nd);
}

namespace {

int int4_mmad() {
    uint8_t* ad = static_cast<uint8_t*>(AscendC::GmAlloc(kM * kK / 2));
    uint8_t* bd = static_cast<uint8_t*>(AscendC::GmAlloc(kN * kK / 2));
    int32_t* yd = static_cast<int32_t*>(AscendC::GmAlloc(kM * kN * 4));
    std::memset(ad, 0, kM * kK / 2);
    std::memset(bd, 0, kN * kK / 2);
    for (uint32_t i = 0; i < kM; ++i)
        for (uint32_t q = 0; q < kK; ++q) sfumato::isa::int4_set(ad, uint64_t{i} * kK + q, static_cast<uint32_t>(a4(i, q)));
    for (uint32_t j = 0; j < kN; ++j)
        for (uint32_t q = 0; q < kK; ++q) sfumato::isa::int4_set(bd, uint64_t{j} * kK + q, static_cast<uint32_t>(b4(q, j)));
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(int4_mmad_kernel, 1, ad, bd, (uint8_t*)yd);
    int bad = -1;
    int32_t want = 0;
    for (uint32_t e = 0; e < kM * kN && bad < 0; ++e) {
        want = 0;
        for (uint32_t q = 0; q < kK; ++q) want += a4(e / kN, q) * b4(q, e % kN);
        if (yd[e] != want) bad = static_cast<int>(e);
    }
    if (bad >= 0)
        std::printf("int4_mmad wrong: element %d is %d, expected %d\n", bad, yd[bad], want);
    else
        std::printf("int4_mmad ok\n");
    AscendC::GmFree(ad);
    AscendC::GmFree(bd);
    AscendC::GmFree(yd);
    return bad >= 0 ? 1 : 0;
}

int nibble(double v) { return static_cast<int>(std::min(7.0, std::max(-8.0, v))); }
void put(std::vector<uint8_t>& w, uint32_t byte0, uint32_t e, int v) {
    uint8_t& b = w[byte0 + e / 2];
    const uint8_t n = static_cast<uint8_t>(v) & 15u;
    b = (e & 1) ? static_cast<uint8_t>((b & 0x0f) | (n << 4)) : static_cast<uint8_t>((b & 0xf0) | n);
}

}  // namespace

int int4_family(const std::string& name) {
    if (name == "int4_mmad") return int4_mmad();
    if (name != "int4") return -1;
    half* xd = static_cast<half*>(AscendC::GmAlloc(kLen * sizeof(half)));
    uint8_t* yd = static_cast<uint8_t*>(AscendC::GmAlloc(kOutBytes));
    std::memset(yd, 0xa5, kOutBytes);
    std::vector<uint8_t> want(kOutBytes, 0);
    for (uint32_t i = 0; i < kLen; ++i) {
        const double v = in_value(i);
        xd[i] = half(static_cast<float>(v));
        put(want, kOutCeil, i, nibble(std::ceil(v)));
        if (i < kRint) put(want, kOutRint, i, nibble(std::nearbyint(v)));  // ties to even
        put(want, kOutFloor + (i / 64) * 64, i % 64, nibble(std::floor(v)));
        const half h(static_cast<float>(nibble(std::ceil(v))));
        std::memcpy(&want[kOutHalf + i * 2], &h, 2);
    }
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(int4_kernel, 1, (uint8_t*)xd, yd);
    int bad = -1;
    for (uint32_t i = 0; i < kOutBytes && bad < 0; ++i)
        if (yd[i] != want[i]) bad = static_cast<int>(i);
    if (bad >= 0)
        std::printf("%s wrong: byte %d is 0x%02x, expected 0x%02x\n", name.c_str(), bad, yd[bad], want[bad]);
    else
        std::printf("%s ok\n", name.c_str());
    AscendC::GmFree(xd);
    AscendC::GmFree(yd);
    return bad >= 0 ? 1 : 0;
}
