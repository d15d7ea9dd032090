// The conformance program's FixPipe families (tests/ascendc/conformance.cpp dispatches to them), on an AIC:
// "fixpipe_nd": three products C_q (20 x 24, float) = A_q (20 x 32) x B_q (32 x 24) in half, batched as the
//   vendor's batch_matmul example does (Nd2Nz with ndNum 3 into L1, LoadData 2D per matrix, one Mmad each
//   into consecutive 4 KiB of L0C), drained by ONE Fixpipe with ndNum 3 (srcNdStride 4 blocks of 1024 B,
//   dstNdStride m x n + 8 elements): every element against the host's exact product, and the 8 elements
//   between the matrices untouched.
// "unitflag": the first product computed over k in two steps of 16 (Mmad unitFlag 2, then 3)
//   and drained by a Fixpipe with unitFlag 3, with no M -> FIX flag between them; then a second product
//   into the same L0C (unitFlag 2 then 3; no FIX -> M flag: the unit bits order the Mmad after the first
//   Fixpipe's read) and a second Fixpipe. Both results against the host.
// "unitflag_never": a Fixpipe with unitFlag 3 whose L0C no Mmad with a unit flag wrote: a deadlock (exit 4).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tikicpulib.h"

namespace {

constexpr uint32_t kB = 3, kM = 20, kK = 32, kN = 24, kMp = 32, kKp = 32, kNp = 32, kGap = 8;

float av(uint32_t q, uint32_t i, uint32_t j) {
    return static_cast<float>(static_cast<int>((q * 3 + i * 5 + j * 3) % 11) - 5);
}
float bv(uint32_t q, uint32_t i, uint32_t j) {
    return static_cast<float>(static_cast<int>((q * 5 + i * 7 + j * 2) % 9) - 4);
}

// A_q and B_q of every matrix from GM into L1 (NZ, kMp x kKp and kKp x kNp elements each), then
// matrix q's A into L0A (ZZ) and B into L0B (ZN) at q x 1024 elements; with `slices`, also matrix 0's A
// as two ZZ matrices of k 16 each (its NZ column groups, each a run of row-block fractals) after them.
__aicore__ void load_operands(AscendC::GlobalTensor<half>& ag, AscendC::GlobalTensor<half>& bg,
                              uint32_t count, bool slices) {
    AscendC::LocalTensor<half> a1(AscendC::TPosition::A1, 0, kB * kMp * kKp);
    AscendC::LocalTensor<half> b1(AscendC::TPosition::B1, kB * kMp * kKp * 2, kB * kKp * kNp);
    AscendC::LocalTensor<half> a2(AscendC::TPosition::A2, 0, (kB + 1) * kMp * kKp);
    AscendC::LocalTensor<half> b2(AscendC::TPosition::B2, 0, kB * kKp * kNp);
    AscendC::Nd2NzParams pa;
    pa.ndNum = count, pa.nValue = kM, pa.dValue = kK, pa.srcNdMatrixStride = kM * kK, pa.srcDValue = kK;
    pa.dstNzC0Stride = kMp, pa.dstNzNStride = 1, pa.dstNzMatrixStride = kMp * kKp;
    AscendC::DataCopy(a1, ag, pa);
    AscendC::Nd2NzParams pb;
    pb.ndNum = count, pb.nValue = kK, pb.dValue = kN, pb.srcNdMatrixStride = kK * kN, pb.srcDValue = kN;
    pb.dstNzC0Stride = kKp, pb.dstNzNStride = 1, pb.dstNzMatrixStride = kKp * kNp;
    AscendC::DataCopy(b1, bg, pb);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    for (uint32_t q = 0; q < count; ++q) {
        AscendC::LoadData2DParams la;  // NZ -> ZZ, one row block at a time
        la.repeatTimes = kKp / 16, la.srcStride = kMp / 16, la.ifTranspose = false;
        for (uint32_t i = 0; i < kMp / 16; ++i)
            AscendC::LoadData(a2[q * kMp * kKp + i * kKp * 16], a1[q * kMp * kKp + i * 256], la);
        AscendC::LoadData2DParams lb;  // NZ -> ZN, one k block at a time, each fractal transposed
        lb.repeatTimes = kNp / 16, lb.srcStride = kKp / 16, lb.ifTranspose = true;
        for (uint32_t i = 0; i < kKp / 16; ++i)
            AscendC::LoadData(b2[q * kKp * kNp + i * kNp * 16], b1[q * kKp * kNp + i * 256], lb);
    }
    for (uint32_t s = 0; slices && s < kKp / 16; ++s) {
        AscendC::LoadData2DParams ls;
        ls.repeatTimes = kMp / 16, ls.srcStride = 1, ls.ifTranspose = false;
        AscendC::LoadData(a2[count * kMp * kKp + s * kMp * 16], a1[s * kMp * 16], ls);
    }
    AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
}

AscendC::FixpipeParamsV220 nd_out() {
    AscendC::FixpipeParamsV220 f;
    f.nSize = kN, f.mSize = kM, f.srcStride = kMp, f.dstStride = kN;
    return f;
}

}  // namespace

extern "C" __global__ __aicore__ void fixpipe_nd_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR y) {
    AscendC::GlobalTensor<half> ag, bg;
    AscendC::GlobalTensor<float> yg;
    ag.SetGlobalBuffer((__gm__ half*)a, kB * kM * kK);
    bg.SetGlobalBuffer((__gm__ half*)b, kB * kK * kN);
    yg.SetGlobalBuffer((__gm__ float*)y, kB * (kM * kN + kGap));
    load_operands(ag, bg, kB, false);
    AscendC::LocalTensor<half> a2(AscendC::TPosition::A2, 0, (kB + 1) * kMp * kKp);
    AscendC::LocalTensor<half> b2(AscendC::TPosition::B2, 0, kB * kKp * kNp);
    AscendC::LocalTensor<float> c(AscendC::TPosition::CO1, 0, kB * kMp * kNp);
    for (uint32_t q = 0; q < kB; ++q) {
        AscendC::MmadParams mp;
        mp.m = kM, mp.n = kN, mp.k = kK;
        AscendC::Mmad(c[q * kMp * kNp], a2[q * kMp * kKp], b2[q * kKp * kNp], mp);
    }
    AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
    AscendC::FixpipeParamsV220 f = nd_out();
    f.ndNum = kB, f.srcNdStride = kMp * kNp * 4 / 1024, f.dstNdStride = kM * kN + kGap;
    AscendC::Fixpipe<float, float, AscendC::CFG_ROW_MAJOR>(yg, c, f);
}

// never: the Fixpipe's L0C was written by no Mmad with a unit flag.
extern "C" __global__ __aicore__ void unitflag_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR y, uint32_t never) {
    AscendC::GlobalTensor<half> ag, bg;
    AscendC::GlobalTensor<float> yg;
    ag.SetGlobalBuffer((__gm__ half*)a, 2 * kM * kK);
    bg.SetGlobalBuffer((__gm__ half*)b, 2 * kK * kN);
    yg.SetGlobalBuffer((__gm__ float*)y, 2 * kM * kN);
    load_operands(ag, bg, 2, true);
    AscendC::LocalTensor<half> a2(AscendC::TPosition::A2, 0, 3 * kMp * kKp);
    AscendC::LocalTensor<half> b2(AscendC::TPosition::B2, 0, 2 * kKp * kNp);
    AscendC::LocalTensor<float> c(AscendC::TPosition::CO1, 0, kMp * kNp);
    // Product 0 over k in two steps of 16 (A's k slices after both matrices in L0A, B's k blocks of its ZN
    // layout), unit flag 2 then 3.
    for (uint32_t s = 0; s < kKp / 16 && !never; ++s) {
        AscendC::MmadParams mp;
        mp.m = kM, mp.n = kN, mp.k = 16;
        mp.cmatrixInitVal = s == 0;
        mp.unitFlag = s + 1 == kKp / 16 ? 3 : 2;
        AscendC::Mmad(c, a2[2 * kMp * kKp + s * kMp * 16], b2[s * 16 * kNp], mp);
    }
    AscendC::FixpipeParamsV220 f = nd_out();
    f.unitFlag = 3;
    AscendC::Fixpipe<float, float, AscendC::CFG_ROW_MAJOR>(yg, c, f);
    if (never) return;
    // Product 1 into the same L0C: its first Mmad waits for the Fixpipe's read through the unit bits.
    AscendC::MmadParams mp;
    mp.m = kM, mp.n = kN, mp.k = kK;
    mp.unitFlag = 3;
    AscendC::Mmad(c, a2[kMp * kKp], b2[kKp * kNp], mp);
    AscendC::Fixpipe<float, float, AscendC::CFG_ROW_MAJOR>(yg[kM * kN], c, f);
}

int fixpipe_family(const std::string& name) {
    if (name != "fixpipe_nd" && name != "unitflag" && name != "unitflag_never") return -1;
    const bool nd = name == "fixpipe_nd";
    const uint32_t count = nd ? kB : 2;
    const uint32_t ylen = nd ? kB * (kM * kN + kGap) : 2 * kM * kN;
    half* ad = static_cast<half*>(AscendC::GmAlloc(count * kM * kK * sizeof(half)));
    half* bd = static_cast<half*>(AscendC::GmAlloc(count * kK * kN * sizeof(half)));
    float* yd = static_cast<float*>(AscendC::GmAlloc(ylen * 4));
    for (uint32_t q = 0; q < count; ++q) {
        for (uint32_t i = 0; i < kM * kK; ++i) ad[q * kM * kK + i] = half(av(q, i / kK, i % kK));
        for (uint32_t i = 0; i < kK * kN; ++i) bd[q * kK * kN + i] = half(bv(q, i / kN, i % kN));
    }
    for (uint32_t i = 0; i < ylen; ++i) yd[i] = -777.0f;
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    if (nd)
        ICPU_RUN_KF(fixpipe_nd_kernel, 1, (uint8_t*)ad, (uint8_t*)bd, (uint8_t*)yd);
    else
        ICPU_RUN_KF(unitflag_kernel, 1, (uint8_t*)ad, (uint8_t*)bd, (uint8_t*)yd,
                    static_cast<uint32_t>(name == "unitflag_never"));
    int bad = -1;
    float want = 0;
    for (uint32_t q = 0; q < count && bad < 0; ++q) {
        const uint32_t base = nd ? q * (kM * kN + kGap) : q * kM * kN;
        for (uint32_t e = 0; e < kM * kN && bad < 0; ++e) {
            double s = 0;
            for (uint32_t k = 0; k < kK; ++k) s += double{av(q, e / kN, k)} * double{bv(q, k, e % kN)};
            want = static_cast<float>(s);
            if (std::memcmp(&yd[base + e], &want, 4) != 0) bad = static_cast<int>(base + e);
        }
        for (uint32_t g = 0; nd && g < kGap && bad < 0; ++g)
            if (yd[base + kM * kN + g] != -777.0f) bad = static_cast<int>(base + kM * kN + g), want = -777.0f;
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
