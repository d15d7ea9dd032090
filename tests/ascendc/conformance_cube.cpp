// The conformance program's cube and cross-core families (tests/ascendc/conformance.cpp runs them):
// "fixpipe": one Mmad (m 32, k 32, n 48, half -> float) drained by Fixpipe three ways: NZ float (16-column
// fractals, the accumulator's; column groups dstStride blocks of 32 B apart), NZ float with
// isChannelSplit (16 x 8 fractals), and ND with ReLU; "gemv": Mmad with m = 1, the chip's GEMV mode (A a
// row vector of K contiguous elements in L0A, as LoadData moves it from a vector in L1); "xflags":
// CrossCoreSetFlag/WaitFlag in the three modes on a mix kernel of 4 blocks (mode 0: all 8 AIVs meet; mode
// 1: the two AIVs of a core meet, the wait with the default mode; mode 2: the AIC waits for both of its
// AIVs, then releases them), each AIV arriving later than the one before; "poll": a block polls a GM word
// that another block sets late (GetValue after DataCacheCleanAndInvalid, as the vendor's gm_by_dcache
// example does). The host computes every output (integer-valued data: the products and sums are exact) and
// compares bit for bit. "co12": the older DataCopy form of the FixPipe (DataCopyCO12DstParams, with
// SetFixpipePreQuantFlag and SetFixpipeNz2ndFlag): float -> int8 with a scale and ReLU to ND, float ->
// half to NZ (16-column fractals of 32-byte rows). "c2": as "fixpipe", with C starting from the bias table
// (MmadParams::cmatrixInitVal false, cmatrixSource true, Mmad without a bias tensor: the table's address 0);
// "c2h": the bias given as half in L1, converted to float by the DataCopy into the bias table (the <T, U>
// form), then Mmad with the bias tensor.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tikicpulib.h"

namespace {

std::string g_cube_family;

constexpr uint32_t kM = 32, kK = 32, kN = 48;  // fixpipe
constexpr uint32_t kGk = 256, kGn = 32;        // gemv: A 1 x kGk, B kGk x kGn (stored as B^T, kGn x kGk)
constexpr uint32_t kOut = 6144;                // output floats
constexpr uint32_t kNz = 0, kSplit = 1536, kNd = 3072;

float a_value(uint32_t i, uint32_t j) {
    return static_cast<float>(static_cast<int>((i * 7 + j * 3) % 9) - 4);
}
float b_value(uint32_t i, uint32_t j) {
    return static_cast<float>(static_cast<int>((i * 5 + j * 11) % 7) - 3);
}

// The "c2" family's bias (kN floats of GM): the kernel's y at kBiasIn, set by the host before the run.
constexpr uint32_t kBiasIn = 5120;
float bias_value(uint32_t j) { return static_cast<float>(static_cast<int>(j % 5) - 2); }
GM_ADDR yg_bias = nullptr;

// GM (ND, k x n) -> L1 (NZ) -> L0A/L0B, one Mmad; every tile is whole fractals. "c2": C starts from the
// bias table (MmadParams::cmatrixSource, the form without a bias tensor), which holds y[kBiasIn..].
void load_and_mad(AscendC::GlobalTensor<half>& ag, AscendC::GlobalTensor<half>& bg,
                  AscendC::LocalTensor<float>& c) {
    AscendC::LocalTensor<half> a1(AscendC::TPosition::A1, 0, kM * kK);
    AscendC::LocalTensor<half> b1(AscendC::TPosition::B1, kM * kK * 2, kK * kN);
    AscendC::LocalTensor<half> a2(AscendC::TPosition::A2, 0, kM * kK);
    AscendC::LocalTensor<half> b2(AscendC::TPosition::B2, 0, kK * kN);
    AscendC::Nd2NzParams pa;
    pa.ndNum = 1, pa.nValue = kM, pa.dValue = kK, pa.srcDValue = kK, pa.dstNzC0Stride = kM,
    pa.dstNzNStride = 1;
    AscendC::DataCopy(a1, ag, pa);
    AscendC::Nd2NzParams pb;
    pb.ndNum = 1, pb.nValue = kK, pb.dValue = kN, pb.srcDValue = kN, pb.dstNzC0Stride = kK,
    pb.dstNzNStride = 1;
    AscendC::DataCopy(b1, bg, pb);
    const bool c2 = g_cube_family == "c2", c2h = g_cube_family == "c2h";
    AscendC::LocalTensor<float> bias1(AscendC::TPosition::C1, (kM * kK + kK * kN) * 2, kN);
    AscendC::LocalTensor<half> bias1h = bias1.ReinterpretCast<half>();
    if (c2) {  // the bias, GM (after the output area) -> L1 -> the bias table at address 0
        AscendC::GlobalTensor<float> biasg;
        biasg.SetGlobalBuffer((__gm__ float*)(yg_bias), kN);
        AscendC::DataCopy(bias1, biasg, kN);
    } else if (c2h) {  // 64 halves (kN and zeros)
        AscendC::GlobalTensor<half> biasg;
        biasg.SetGlobalBuffer((__gm__ half*)(yg_bias), 64);
        AscendC::DataCopy(bias1h, biasg, {1, 4, 0, 0});  // a braced DataCopyParams, as catlass's conv copies write it
    }
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    AscendC::LocalTensor<float> bt(AscendC::TPosition::C2, 0, 64);
    if (c2) AscendC::DataCopy(bt, bias1, AscendC::DataCopyParams(1, kN * 4 / 64, 0, 0));
    if (c2h) AscendC::DataCopy(bt, bias1h, AscendC::DataCopyParams(1, 2, 0, 0));  // 128 B of half -> 64 floats
    AscendC::LoadData2DParams la;
    la.repeatTimes = kK / 16, la.srcStride = kM / 16;
    for (uint32_t i = 0; i < kM / 16; ++i) AscendC::LoadData(a2[i * kK * 16], a1[i * 256], la);
    AscendC::LoadData2DParams lb;
    lb.repeatTimes = kN / 16, lb.srcStride = kK / 16, lb.ifTranspose = true;
    for (uint32_t i = 0; i < kK / 16; ++i) AscendC::LoadData(b2[i * kN * 16], b1[i * 256], lb);
    AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
    AscendC::MmadParams mp;
    mp.m = kM, mp.n = kN, mp.k = kK;
    if (c2) mp.cmatrixInitVal = false, mp.cmatrixSource = true;  // C starts from the bias table
    if (c2h)
        AscendC::Mmad(c, a2, b2, bt, mp);
    else
        AscendC::Mmad(c, a2, b2, mp);
    AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
}

void fixpipe_body(GM_ADDR a, GM_ADDR b, GM_ADDR y) {
    AscendC::GlobalTensor<half> ag, bg;
    AscendC::GlobalTensor<float> yg;
    ag.SetGlobalBuffer((__gm__ half*)a, kM * kK);
    bg.SetGlobalBuffer((__gm__ half*)b, kK * kN);
    yg.SetGlobalBuffer((__gm__ float*)y, kOut);
    AscendC::LocalTensor<float> c(AscendC::TPosition::CO1, 0, kM * kN);
    AscendC::TPipe pipe;
    if (g_cube_family == "c2h") {
        // A cube-only kernel's AIC keeps the books of UB buffers, as catlass's Arch::Resource sets one up on
        // every core (its AIC has no UB: the TBuf is reserved, nothing touches it).
        AscendC::TBuf<AscendC::TPosition::VECCALC> ub;
        pipe.InitBuffer(ub, 64 * 1024);
    }
    load_and_mad(ag, bg, c);
    AscendC::FixpipeParamsV220 nz;
    nz.nSize = kN, nz.mSize = kM, nz.srcStride = kM, nz.dstStride = kM * 16 * 4 / 32;
    AscendC::Fixpipe<float, float, AscendC::CFG_NZ>(yg[kNz], c, nz);
    AscendC::FixpipeParamsV220 split = nz;
    split.dstStride = kM * 8 * 4 / 32, split.isChannelSplit = true;
    AscendC::Fixpipe<float, float, AscendC::CFG_NZ>(yg[kSplit], c, split);
    AscendC::FixpipeParamsV220 nd;
    nd.nSize = kN, nd.mSize = kM, nd.srcStride = kM, nd.dstStride = kN, nd.reluEn = true;
    AscendC::Fixpipe<float, float, AscendC::CFG_ROW_MAJOR>(yg[kNd], c, nd);
}

// DataCopy(GM <- CO1, DataCopyCO12DstParams): scale 0.5 from SetFixpipePreQuantFlag (an fp32 word with
// the sign bit 46 set: int8 out), ReLU, ND int8 at byte 0; F322F16 NZ half at byte kCo12Nz.
constexpr uint32_t kCo12Nz = 2048;
void co12_body(GM_ADDR a, GM_ADDR b, GM_ADDR y) {
    AscendC::GlobalTensor<half> ag, bg;
    AscendC::GlobalTensor<int8_t> yi;
    AscendC::GlobalTensor<half> yh;
    ag.SetGlobalBuffer((__gm__ half*)a, kM * kK);
    bg.SetGlobalBuffer((__gm__ half*)b, kK * kN);
    yi.SetGlobalBuffer((__gm__ int8_t*)y, kOut * 4);
    yh.SetGlobalBuffer((__gm__ half*)(y + kCo12Nz), kM * kN);
    AscendC::LocalTensor<float> c(AscendC::TPosition::CO1, 0, kM * kN);
    load_and_mad(ag, bg, c);
    const float scale = 0.5f;
    uint32_t bits;
    std::memcpy(&bits, &scale, 4);
    AscendC::SetFixpipePreQuantFlag(uint64_t{bits} | uint64_t{1} << 46);
    AscendC::SetFixpipeNz2ndFlag(1, 0, 0);
    AscendC::DataCopyCO12DstParams nd(kN, kM, kN, kM, QuantMode_t::QF322B8_PRE, 1, false, true);
    AscendC::DataCopy(yi, c, nd);
    AscendC::DataCopyCO12DstParams nz;
    nz.nSize = kN, nz.mSize = kM, nz.srcStride = kM, nz.dstStride = kM, nz.quantPre = QuantMode_t::F322F16;
    AscendC::DataCopy(yh, c, nz);
}

void gemv_body(GM_ADDR a, GM_ADDR b, GM_ADDR y) {
    AscendC::GlobalTensor<half> ag, bg;
    AscendC::GlobalTensor<float> yg;
    ag.SetGlobalBuffer((__gm__ half*)a, kGk);
    bg.SetGlobalBuffer((__gm__ half*)b, kGk * kGn);
    yg.SetGlobalBuffer((__gm__ float*)y, kOut);
    AscendC::LocalTensor<half> a1(AscendC::TPosition::A1, 0, kGk);
    AscendC::LocalTensor<half> b1(AscendC::TPosition::B1, kGk * 2, kGk * kGn);
    AscendC::LocalTensor<half> a2(AscendC::TPosition::A2, 0, kGk);
    AscendC::LocalTensor<half> b2(AscendC::TPosition::B2, 0, kGk * kGn);
    AscendC::LocalTensor<float> c(AscendC::TPosition::CO1, 0, 16 * kGn);
    AscendC::Nd2NzParams pa;  // one row: C0 groups one block apart, a contiguous vector
    pa.ndNum = 1, pa.nValue = 1, pa.dValue = kGk, pa.srcDValue = kGk, pa.dstNzC0Stride = 1,
    pa.dstNzNStride = 1;
    AscendC::DataCopy(a1, ag, pa);
    AscendC::Nd2NzParams pb;  // B^T (n x k) as NZ: each fractal 16 n-rows of 16 k
    pb.ndNum = 1, pb.nValue = kGn, pb.dValue = kGk, pb.srcDValue = kGk, pb.dstNzC0Stride = kGn,
    pb.dstNzNStride = 1;
    AscendC::DataCopy(b1, bg, pb);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    AscendC::LoadData2DParams la;
    la.repeatTimes = kGk / 256, la.srcStride = 1;
    AscendC::LoadData(a2, a1, la);
    AscendC::LoadData2DParams lb;
    lb.repeatTimes = kGn / 16 * kGk / 16, lb.srcStride = 1;
    AscendC::LoadData(b2, b1, lb);
    AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
    AscendC::MmadParams mp;
    mp.m = 1, mp.n = kGn, mp.k = kGk;
    AscendC::Mmad(c, a2, b2, mp);
    AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
    AscendC::FixpipeParamsV220 nd;
    nd.nSize = kGn, nd.mSize = 1, nd.srcStride = 16, nd.dstStride = kGn;
    AscendC::Fixpipe(yg, c, nd);
}

// ---- cross-core flags: output regions (floats) ----
constexpr uint32_t kSlots0 = 0, kCopies0 = 64, kSlots1 = 576, kPartner1 = 640, kSlots2 = 704, kAic2 = 768,
                   kBack2 = 800;

// AIV `idx` stores `value` in 8 lanes at y[at] after `idx` rounds of vector work (later for higher idx).
void late_store(AscendC::GlobalTensor<float>& yg, AscendC::LocalTensor<float>& t, uint32_t idx, uint32_t at,
                float value) {
    AscendC::LocalTensor<float> work = t[64];
    for (uint32_t r = 0; r < idx * 4; ++r) AscendC::Adds(work, work, 1.0f, 2048);
    AscendC::Duplicate(t, value, 8);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(yg[at], t, 8);
}

void copy_gm(AscendC::GlobalTensor<float>& yg, AscendC::LocalTensor<float>& t, uint32_t from, uint32_t to,
             uint32_t n) {
    AscendC::DataCopy(t, yg[from], n);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE3>(EVENT_ID1);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE3>(EVENT_ID1);
    AscendC::DataCopy(yg[to], t, n);
    AscendC::SetFlag<AscendC::HardEvent::MTE3_MTE2>(EVENT_ID1);
    AscendC::WaitFlag<AscendC::HardEvent::MTE3_MTE2>(EVENT_ID1);
    AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID1);
    AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID1);
}

void xflags_aiv(AscendC::GlobalTensor<float>& yg) {
    const uint32_t idx = static_cast<uint32_t>(AscendC::GetBlockIdx());
    AscendC::LocalTensor<float> t(AscendC::TPosition::VECCALC, 0, 4096);
    AscendC::Duplicate(t[64], 0.0f, 2048);
    // mode 0: every AIV's slot is in GM before any AIV goes on.
    late_store(yg, t, idx, kSlots0 + idx * 8, static_cast<float>(idx + 1));
    AscendC::CrossCoreSetFlag<0, PIPE_MTE3>(1);
    AscendC::CrossCoreWaitFlag(1);
    copy_gm(yg, t, kSlots0, kCopies0 + idx * 64, 64);
    // mode 1: the two AIVs of a core; the wait with its default mode.
    late_store(yg, t, idx % 2, kSlots1 + idx * 8, static_cast<float>(100 + idx));
    AscendC::CrossCoreSetFlag<1, PIPE_MTE3>(2);
    AscendC::CrossCoreWaitFlag(2);
    copy_gm(yg, t, kSlots1 + (idx ^ 1u) * 8, kPartner1 + idx * 8, 8);
    // mode 2: both AIVs tell their AIC (the second one later), which answers both.
    late_store(yg, t, idx % 2 * 3, kSlots2 + idx * 8, static_cast<float>(200 + idx));
    AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(3);
    AscendC::CrossCoreWaitFlag<2>(4);
    copy_gm(yg, t, kAic2 + idx / 2 * 8, kBack2 + idx * 8, 8);
}

void xflags_aic(AscendC::GlobalTensor<float>& yg) {
    const uint32_t b = static_cast<uint32_t>(AscendC::GetBlockIdx());
    AscendC::CrossCoreWaitFlag<2>(3);
    AscendC::DataCacheCleanAndInvalid<float, AscendC::CacheLine::ENTIRE_DATA_CACHE>(yg);
    const float sum = yg.GetValue(kSlots2 + 2 * b * 8) + yg.GetValue(kSlots2 + (2 * b + 1) * 8);
    yg.SetValue(kAic2 + b * 8, sum);
    AscendC::DataCacheCleanAndInvalid<float, AscendC::CacheLine::ENTIRE_DATA_CACHE>(yg);
    AscendC::CrossCoreSetFlag<2, PIPE_FIX>(4);
}

}  // namespace

extern "C" __global__ __aicore__ void cube_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR y) {
    yg_bias = y + kBiasIn * sizeof(float);
    if (g_cube_family == "fixpipe" || g_cube_family == "c2" || g_cube_family == "c2h")
        fixpipe_body(a, b, y);
    else if (g_cube_family == "co12")
        co12_body(a, b, y);
    else
        gemv_body(a, b, y);
}

extern "C" __global__ __aicore__ void xflags_kernel(GM_ADDR y) {
    AscendC::GlobalTensor<float> yg;
    yg.SetGlobalBuffer((__gm__ float*)y, kOut);
    if ASCEND_IS_AIV {
        xflags_aiv(yg);
    }
    if ASCEND_IS_AIC {
        xflags_aic(yg);
    }
}

// Block 1 sets y[0] = 1 late (by a scalar store after vector work); block 0 polls it with GetValue
// after a dcci, then stores 2 at y[8]; under "poll_never" nobody sets it (the run must stop, exit 2).
extern "C" __global__ __aicore__ void poll_kernel(GM_ADDR y) {
    AscendC::GlobalTensor<int32_t> yg;
    yg.SetGlobalBuffer((__gm__ int32_t*)y, kOut);
    if (AscendC::GetBlockIdx() == 1) {
        AscendC::LocalTensor<float> t(AscendC::TPosition::VECCALC, 0, 4096);
        AscendC::Duplicate(t, 0.0f, 4096);
        for (int r = 0; r < 20; ++r) AscendC::Adds(t, t, 1.0f, 4096);
        AscendC::SetFlag<AscendC::HardEvent::V_S>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::V_S>(EVENT_ID0);
        if (g_cube_family == "poll") yg.SetValue(0, 1);
        AscendC::DataCacheCleanAndInvalid<int32_t, AscendC::CacheLine::SINGLE_CACHE_LINE>(yg);
        return;
    }
    while (true) {
        AscendC::DataCacheCleanAndInvalid<int32_t, AscendC::CacheLine::SINGLE_CACHE_LINE>(yg);
        if (yg.GetValue(0) == 1) break;
    }
    yg.SetValue(8, 2);
}

int cube_family(const std::string& name) {
    if (name != "fixpipe" && name != "gemv" && name != "xflags" && name != "poll" && name != "poll_never" &&
        name != "co12" && name != "c2" && name != "c2h")
        return -1;
    g_cube_family = name;
    float* yd = static_cast<float*>(AscendC::GmAlloc(kOut * sizeof(float)));
    std::memset(yd, 0, kOut * sizeof(float));
    std::vector<float> want(kOut, 0.0f);
    if (name == "poll" || name == "poll_never") {
        AscendC::SetKernelMode(KernelMode::AIV_MODE);
        ICPU_RUN_KF(poll_kernel, 2, (uint8_t*)yd);
        int32_t w[9];
        std::memcpy(w, yd, sizeof w);
        const bool good = w[0] == 1 && w[8] == 2;
        std::printf("%s %s\n", name.c_str(), good ? "ok" : "wrong: the poller did not see the late store");
        AscendC::GmFree(yd);
        return good ? 0 : 1;
    }
    if (name == "xflags") {
        AscendC::SetKernelMode(KernelMode::MIX_MODE);
        ICPU_RUN_KF(xflags_kernel, 4, (uint8_t*)yd);
        for (uint32_t i = 0; i < 8; ++i)
            for (uint32_t l = 0; l < 8; ++l) {
                want[kSlots0 + i * 8 + l] = static_cast<float>(i + 1);
                for (uint32_t j = 0; j < 8; ++j)
                    want[kCopies0 + i * 64 + j * 8 + l] = static_cast<float>(j + 1);
                want[kSlots1 + i * 8 + l] = static_cast<float>(100 + i);
                want[kPartner1 + i * 8 + l] = static_cast<float>(100 + (i ^ 1u));
                want[kSlots2 + i * 8 + l] = static_cast<float>(200 + i);
            }
        for (uint32_t b = 0; b < 4; ++b) {
            want[kAic2 + b * 8] = static_cast<float>(401 + 4 * b);
            for (uint32_t s = 0; s < 2; ++s) want[kBack2 + (2 * b + s) * 8] = static_cast<float>(401 + 4 * b);
        }
    } else {
        const bool gemv = name == "gemv";
        const uint32_t m = gemv ? 1 : kM, k = gemv ? kGk : kK, n = gemv ? kGn : kN;
        half* ad = static_cast<half*>(AscendC::GmAlloc(m * k * sizeof(half)));
        half* bd = static_cast<half*>(AscendC::GmAlloc(k * n * sizeof(half)));
        std::vector<double> c(m * n, 0.0);
        for (uint32_t i = 0; i < m; ++i)
            for (uint32_t j = 0; j < k; ++j) ad[i * k + j] = half(a_value(i, j));
        for (uint32_t i = 0; i < k; ++i)
            for (uint32_t j = 0; j < n; ++j) bd[gemv ? j * k + i : i * n + j] = half(b_value(i, j));
        for (uint32_t i = 0; i < m; ++i)
            for (uint32_t j = 0; j < n; ++j)
                for (uint32_t q = 0; q < k; ++q)
                    c[i * n + j] += double{a_value(i, q)} * double{b_value(q, j)};
        if (name == "c2" || name == "c2h") {
            half* bh = reinterpret_cast<half*>(yd + kBiasIn);
            half* wh = reinterpret_cast<half*>(want.data() + kBiasIn);
            for (uint32_t j = 0; j < n; ++j) {
                if (name == "c2")
                    yd[kBiasIn + j] = want[kBiasIn + j] = bias_value(j);
                else
                    bh[j] = wh[j] = half(bias_value(j) + 0.5f);
                for (uint32_t i = 0; i < m; ++i) c[i * n + j] += bias_value(j) + (name == "c2h" ? 0.5 : 0.0);
            }
        }
        AscendC::SetKernelMode(KernelMode::AIC_MODE);
        ICPU_RUN_KF(cube_kernel, 1, (uint8_t*)ad, (uint8_t*)bd, (uint8_t*)yd);
        for (uint32_t i = 0; i < m; ++i)
            for (uint32_t j = 0; j < n; ++j) {
                const float v = static_cast<float>(c[i * n + j]);
                if (gemv) {
                    want[j] = v;
                    continue;
                }
                if (name == "co12") {
                    uint8_t* w = reinterpret_cast<uint8_t*>(want.data());
                    const float q = std::min(127.0f, std::nearbyint(std::max(v * 0.5f, 0.0f)));
                    w[i * kN + j] = static_cast<uint8_t>(static_cast<int8_t>(q));
                    const half h(v);
                    std::memcpy(w + kCo12Nz + ((j / 16) * kM * 16 + i * 16 + j % 16) * 2, &h, 2);
                    continue;
                }
                want[kNz + (j / 16) * kM * 16 + i * 16 + j % 16] = v;
                want[kSplit + (j / 8) * kM * 8 + i * 8 + j % 8] = v;
                want[kNd + i * kN + j] = v > 0 ? v : 0.0f;
            }
        AscendC::GmFree(ad);
        AscendC::GmFree(bd);
    }
    int bad = -1;
    for (uint32_t i = 0; i < kOut && bad < 0; ++i)
        if (std::memcmp(&yd[i], &want[i], sizeof(float)) != 0) bad = static_cast<int>(i);
    if (bad >= 0)
        std::printf("%s wrong: element %d is %g, expected %g\n", name.c_str(), bad, yd[bad], want[bad]);
    else
        std::printf("%s ok\n", name.c_str());
    AscendC::GmFree(yd);
    return bad >= 0 ? 1 : 0;
}
