// The conformance program's advanced sort family (tests/ascendc/conformance.cpp dispatches to it):
//   Concat + Sort<float, true> + Extract of 160 floats (five lists of 32: two merge rounds, the second
//   merging a list of 128 with a lone one of 32), the host's descending order with the lower index first
//   among equal scores; TopK of [3, 64] floats, k 5, the largest (n 64) and the smallest of the first 50
//   (n 50 < inner: the padding never picked), with finish flags
//   {true, false, true} (a finished row's indices are n), against the host's stable order.
// "sort_adv": the above.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "tikicpulib.h"
#include "tiling/tiling_api.h"

namespace {

constexpr uint32_t kS = 160, kRows = 3, kInner = 64, kK = 5, kPad = 8, kValid = 50;

// Scores with ties (so that the order among equal scores is checked).
float sv(uint32_t i) { return static_cast<float>(static_cast<int>((i * 37) % 23) - 11); }

}  // namespace

extern "C" __global__ __aicore__ void sort_adv_kernel(GM_ADDR x, GM_ADDR t, GM_ADDR fin, GM_ADDR out,
                                                      uint32_t topkTmp) {
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> bx, bi, bs, bt, bv, bo, btk, bf, btv, bti, btmp;
    pipe.InitBuffer(bx, kS * 4);
    pipe.InitBuffer(bi, kS * 4);
    pipe.InitBuffer(bs, kS * 8);
    pipe.InitBuffer(bt, kS * 8);
    pipe.InitBuffer(bv, kS * 4);
    pipe.InitBuffer(bo, kS * 4);
    pipe.InitBuffer(btk, kRows * kInner * 4);
    pipe.InitBuffer(bf, 32);
    pipe.InitBuffer(btv, 2 * kRows * kPad * 4);
    pipe.InitBuffer(bti, 2 * kRows * kPad * 4);
    pipe.InitBuffer(btmp, topkTmp);
    AscendC::GlobalTensor<float> xg, tg, og;
    AscendC::GlobalTensor<uint8_t> fg;
    xg.SetGlobalBuffer((__gm__ float*)x, kS);
    tg.SetGlobalBuffer((__gm__ float*)t, kRows * kInner);
    fg.SetGlobalBuffer((__gm__ uint8_t*)fin, 32);
    og.SetGlobalBuffer((__gm__ float*)out, 2 * kS + 4 * kRows * kPad);
    AscendC::LocalTensor<float> xl = bx.Get<float>(), sorted = bs.Get<float>(), tmp = bt.Get<float>(),
                                val = bv.Get<float>(), tk = btk.Get<float>(), tv = btv.Get<float>();
    AscendC::LocalTensor<uint32_t> idx = bi.Get<uint32_t>(), oidx = bo.Get<uint32_t>();
    AscendC::LocalTensor<int32_t> ti = bti.Get<int32_t>();
    AscendC::LocalTensor<bool> fl = bf.Get<bool>();
    AscendC::DataCopy(xl, xg, kS);
    AscendC::DataCopy(tk, tg, kRows * kInner);
    AscendC::DataCopy(bf.Get<uint8_t>(), fg, 32);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::CreateVecIndex(idx.ReinterpretCast<int32_t>(), 0, kS);
    AscendC::LocalTensor<float> concat;
    AscendC::Concat(concat, xl, tmp, kS / 16);
    AscendC::Sort<float, true>(sorted, concat, idx, tmp, kS / 32);
    AscendC::Extract(val, oidx, sorted, kS / 32);
    AscendC::Duplicate(tv, 0.0f, 2 * kRows * kPad);
    AscendC::Duplicate(ti, 0, 2 * kRows * kPad);
    AscendC::TopKInfo info;
    info.outter = kRows, info.inner = kInner, info.n = kInner;
    TopkTiling tiling;
    AscendC::LocalTensor<uint8_t> scratch = btmp.Get<uint8_t>();
    AscendC::TopK<float, false, true>(tv, ti, tk, ti, fl, scratch, kK, tiling, info, true);
    AscendC::TopKInfo info2 = info;  // the smallest of the first kValid of each row (n < inner)
    info2.n = kValid;
    AscendC::TopK<float, false, true>(tv[kRows * kPad], ti[kRows * kPad], tk, ti, fl, scratch, kK, tiling,
                                      info2, false);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(og, val, kS);
    AscendC::DataCopy(og[kS], oidx.ReinterpretCast<float>(), kS);
    AscendC::DataCopy(og[2 * kS], tv, 2 * kRows * kPad);
    AscendC::DataCopy(og[2 * kS + 2 * kRows * kPad], ti.ReinterpretCast<float>(), 2 * kRows * kPad);
}

int sort_adv_family(const std::string& name) {
    if (name != "sort_adv") return -1;
    uint32_t mx = 0, mn = 0;
    TopkTiling host;
    const platform_ascendc::PlatformAscendC& plat = *platform_ascendc::PlatformAscendCManager::GetInstance();
    AscendC::GetTopKMaxMinTmpSize(plat, kInner, kRows, false, false, AscendC::TopKMode::TOPK_NORMAL, true, 4,
                                  mx, mn);
    const bool tiled = AscendC::TopKTilingFunc(plat, kInner, kRows, kK, 4, false,
                                               AscendC::TopKMode::TOPK_NORMAL, true, host);
    float* xd = static_cast<float*>(AscendC::GmAlloc(kS * 4));
    float* td = static_cast<float*>(AscendC::GmAlloc(kRows * kInner * 4));
    uint8_t* fd = static_cast<uint8_t*>(AscendC::GmAlloc(32));
    const uint32_t no = 2 * kS + 4 * kRows * kPad;
    float* od = static_cast<float*>(AscendC::GmAlloc(no * 4));
    for (uint32_t i = 0; i < kS; ++i) xd[i] = sv(i);
    for (uint32_t i = 0; i < kRows * kInner; ++i) td[i] = static_cast<float>(std::sin(0.9 * i) * 100.0);
    td[7] = td[9];  // a tie in row 0
    std::memset(fd, 0, 32);
    fd[0] = 1, fd[2] = 1;
    std::memset(od, 0, no * 4);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(sort_adv_kernel, 1, (uint8_t*)xd, (uint8_t*)td, fd, (uint8_t*)od, mn);
    std::string bad = tiled && host.kPad == static_cast<int32_t>(kPad) ? "" : "TopKTilingFunc";
    std::vector<uint32_t> order(kS);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return xd[a] > xd[b]; });
    uint32_t idx[kS];
    std::memcpy(idx, od + kS, sizeof idx);
    for (uint32_t i = 0; i < kS && bad.empty(); ++i)
        if (od[i] != xd[order[i]] || idx[i] != order[i])
            bad = "Sort position " + std::to_string(i) + ": (" + std::to_string(od[i]) + ", " +
                  std::to_string(idx[i]) + "), expected (" + std::to_string(xd[order[i]]) + ", " +
                  std::to_string(order[i]) + ")";
    int32_t ti[2 * kRows * kPad];
    std::memcpy(ti, od + 2 * kS + 2 * kRows * kPad, sizeof ti);
    for (uint32_t m = 0; m < 2 && bad.empty(); ++m)
        for (uint32_t r = 0; r < kRows && bad.empty(); ++r) {
            const uint32_t valid = m == 0 ? kInner : kValid;
            std::vector<uint32_t> o(valid);
            std::iota(o.begin(), o.end(), 0u);
            const float* row = td + r * kInner;
            std::stable_sort(o.begin(), o.end(), [&](uint32_t a, uint32_t b) {
                return m == 0 ? row[a] > row[b] : row[a] < row[b];
            });
            for (uint32_t j = 0; j < kPad && bad.empty(); ++j) {
                const uint32_t at = (m * kRows + r) * kPad + j;
                const float wv = j < kK ? row[o[j]] : 0.0f;
                const int32_t wi =
                    j < kK ? (fd[r] ? static_cast<int32_t>(valid) : static_cast<int32_t>(o[j])) : 0;
                if (od[2 * kS + at] != wv || ti[at] != wi)
                    bad = std::string("TopK ") + (m == 0 ? "largest" : "smallest") + " row " +
                          std::to_string(r) + " position " + std::to_string(j) + ": (" +
                          std::to_string(od[2 * kS + at]) + ", " + std::to_string(ti[at]) + "), expected (" +
                          std::to_string(wv) + ", " + std::to_string(wi) + ")";
            }
        }
    if (bad.empty())
        std::printf("sort_adv ok\n");
    else
        std::printf("sort_adv wrong: %s\n", bad.c_str());
    for (void* p :
         {static_cast<void*>(xd), static_cast<void*>(td), static_cast<void*>(fd), static_cast<void*>(od)})
        AscendC::GmFree(p);
    return bad.empty() ? 0 : 1;
}
