// The conformance program's reduction, index, filter and layout family (tests/ascendc/conformance.cpp
// dispatches to it): one AIV kernel runs Sum (37 of 40 columns), ReduceMax (AR, the host's minimum
// scratch), ReduceMin (RA), ReduceMean (AR, folding in the source) and ReduceSum (RA), Arange, Select
// with a byte mask (mask rows longer than the source's, and the scalar-first form), DropOut (byte and bit
// masks), Broadcast ([1, n] -> [m, n], [m, 1] -> [m, n], [1] -> [n]), Pad (rows of 13 -> 16, one left,
// two right), UnPad (16 -> 13), Transpose NZ2ND_0213 (half) and Fill of GM (a tail of less than a block);
// the host compares every element with its own computation.
// "layout": the above.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tikicpulib.h"
#include "tiling/tiling_api.h"

namespace {

constexpr uint32_t kIn = 2048;   // floats of input
constexpr uint32_t kOut = 4096;  // floats of output
constexpr uint32_t kTB = 1, kTN = 2, kTS = 32, kTH = 32;  // Transpose [B, N, S, H]
// Output slots (float offsets).
constexpr uint32_t oSum = 0, oMax = 8, oMin = 16, oMean = 48, oRsum = 56, oArange = 80, oSel = 184, oSel2 = 304,
                   oDropB = 424, oDropBit = 584, oBc0 = 840, oBc1 = 960, oBc2 = 1080, oPad = 1104, oUnpad = 1200,
                   oFill = 1288;
float xv(uint32_t i) { return static_cast<float>(std::sin(0.61 * i + 0.2) * 4.0 + 0.25 * (i % 7)); }
uint8_t mv(uint32_t i) { return static_cast<uint8_t>((i * 2654435761u >> 7) % 3 == 0 ? 0 : (i % 5) + 1); }

}  // namespace

extern "C" __global__ __aicore__ void layout_kernel(GM_ADDR in, GM_ADDR masks, GM_ADDR out, GM_ADDR halfIn,
                                                    GM_ADDR halfOut, uint32_t maxTmp) {
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> bx, bm, by, bt, bh, bh2, bw;
    pipe.InitBuffer(bx, kIn * 4);
    pipe.InitBuffer(bm, 512);
    pipe.InitBuffer(by, 512 * 4);
    pipe.InitBuffer(bt, maxTmp);
    pipe.InitBuffer(bh, kTB * kTN * kTS * kTH * 2);
    pipe.InitBuffer(bh2, kTB * kTN * kTS * kTH * 2);
    pipe.InitBuffer(bw, kIn * 4);
    AscendC::GlobalTensor<float> ig, og;
    AscendC::GlobalTensor<uint8_t> mg;
    AscendC::GlobalTensor<half> hig, hog;
    ig.SetGlobalBuffer((__gm__ float*)in, kIn);
    og.SetGlobalBuffer((__gm__ float*)out, kOut);
    mg.SetGlobalBuffer((__gm__ uint8_t*)masks, 512);
    hig.SetGlobalBuffer((__gm__ half*)halfIn, kTB * kTN * kTS * kTH);
    hog.SetGlobalBuffer((__gm__ half*)halfOut, kTB * kTN * kTS * kTH);
    AscendC::LocalTensor<float> x = bx.Get<float>(), y = by.Get<float>(), w = bw.Get<float>();
    AscendC::LocalTensor<uint8_t> m = bm.Get<uint8_t>(), tmp = bt.Get<uint8_t>();
    AscendC::LocalTensor<half> h = bh.Get<half>(), h2 = bh2.Get<half>();
    AscendC::DataCopy(x, ig, kIn);
    AscendC::DataCopy(m, mg, 512);
    AscendC::DataCopy(h, hig, kTB * kTN * kTS * kTH);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    auto store = [&](uint32_t slot, const AscendC::LocalTensor<float>& t, uint32_t n) {
        AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
        AscendC::DataCopy(og[slot], t, (n + 7) / 8 * 8);
        AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID0);
    };
    AscendC::Sum(y, x, tmp, AscendC::SumParams{5, 40, 37});
    store(oSum, y, 5);
    const uint32_t arShape[2] = {6, 72}, raShape[2] = {7, 24};
    AscendC::ReduceMax<float, AscendC::Pattern::Reduce::AR>(y, x, tmp, arShape, true);
    store(oMax, y, 6);
    AscendC::ReduceMin<float, AscendC::Pattern::Reduce::RA>(y, x, tmp, raShape, true);
    store(oMin, y, 24);
    AscendC::Adds(w, x, 0.0f, 6 * 72);  // a copy: the reuse form folds in its source
    AscendC::ReduceMean<float, AscendC::Pattern::Reduce::AR, true>(y, w, arShape, true);
    store(oMean, y, 6);
    AscendC::ReduceSum<float, AscendC::Pattern::Reduce::RA>(y, x, raShape, true);
    store(oRsum, y, 24);
    AscendC::Arange<float>(y, 1.5f, -0.25f, 100);
    store(oArange, y, 100);
    AscendC::SelectWithBytesMaskShapeInfo si;
    si.firstAxis = 3, si.srcLastAxis = 40, si.maskLastAxis = 64;
    AscendC::Select(y, x, 7.5f, m, tmp, si);
    store(oSel, y, 120);
    si.maskLastAxis = 40;
    AscendC::Select(y, -2.0f, x, m, tmp, si);
    store(oSel2, y, 120);
    AscendC::DropOutShapeInfo di;
    di.firstAxis = 4, di.srcLastAxis = 40, di.maskLastAxis = 40;
    AscendC::DropOut(y, x, m, tmp, 0.8f, di);
    store(oDropB, y, 160);
    di.srcLastAxis = 64, di.maskLastAxis = 8;
    AscendC::DropOut(y, x, m, tmp, 0.5f, di);
    store(oDropBit, y, 256);
    const uint32_t d0[2] = {5, 24}, s0[2] = {1, 24}, s1[2] = {5, 1}, d2[1] = {20}, s2[1] = {1};
    AscendC::Broadcast<float, 2, 0>(y, x, d0, s0, tmp);
    store(oBc0, y, 120);
    AscendC::Broadcast<float, 2, 1>(y, x, d0, s1);
    store(oBc1, y, 120);
    AscendC::Broadcast<float, 1, 0>(y, x[8], d2, s2, tmp);
    store(oBc2, y, 20);
    AscendC::PadParams pp;
    pp.leftPad = 1, pp.rightPad = 2, pp.padValue = -3;
    AscendC::tiling::PadTiling pt;
    pt.srcHeight = 6, pt.srcWidth = 13, pt.srcOriWidth = 13;
    AscendC::Pad(y, x, pp, tmp, pt);
    store(oPad, y, 96);
    AscendC::UnPadParams up;
    up.leftPad = 2, up.rightPad = 1;
    AscendC::tiling::UnPadTiling ut;
    ut.srcHeight = 6, ut.srcWidth = 16;
    AscendC::UnPad(y, x, up, tmp, ut);
    store(oUnpad, y, 78);
    ConfusionTransposeTiling tt;
    tt.param0 = kTB, tt.param1 = kTN, tt.param2 = kTS, tt.param3 = kTH;
    AscendC::Transpose(h2, h, AscendC::TransposeType::TRANSPOSE_NZ2ND_0213, tt);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(hog, h2, kTB * kTN * kTS * kTH);
    AscendC::GlobalTensor<float> fg = og[oFill];
    AscendC::Fill(fg, 100, 2.5f);
}

int layout_family(const std::string& name) {
    if (name != "layout") return -1;
    uint32_t mx = 0, mn = 0, tmp = 0;
    AscendC::GetReduceMaxMaxMinTmpSize(ge::Shape({6, 72}), ge::DT_FLOAT, AscendC::ReducePattern::AR, true, false,
                                       mx, mn);
    tmp = mn;
    AscendC::GetSelectMaxMinTmpSize(ge::Shape({3, 40}), ge::Shape({1}), 4, ge::Shape({3, 64}), 1, false, mx, mn);
    tmp = std::max(tmp, mn);
    AscendC::GetDropOutMaxMinTmpSize(ge::Shape({4, 64}), 4, false, mx, mn);
    tmp = std::max(tmp, mn);
    AscendC::GetPadMaxMinTmpSize(ge::Shape({6, 13}), 4, mx, mn);
    tmp = std::max(tmp, mn);
    const uint32_t nh = kTB * kTN * kTS * kTH;
    float* id = static_cast<float*>(AscendC::GmAlloc(kIn * 4));
    uint8_t* md = static_cast<uint8_t*>(AscendC::GmAlloc(512));
    float* od = static_cast<float*>(AscendC::GmAlloc(kOut * 4));
    half* hid = static_cast<half*>(AscendC::GmAlloc(nh * 2));
    half* hod = static_cast<half*>(AscendC::GmAlloc(nh * 2));
    for (uint32_t i = 0; i < kIn; ++i) id[i] = xv(i);
    for (uint32_t i = 0; i < 512; ++i) md[i] = mv(i);
    for (uint32_t i = 0; i < nh; ++i) hid[i] = static_cast<half>(static_cast<float>(i % 997) - 400.0f);
    std::memset(od, 0, kOut * 4);
    std::memset(hod, 0, nh * 2);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(layout_kernel, 1, (uint8_t*)id, md, (uint8_t*)od, (uint8_t*)hid, (uint8_t*)hod, tmp);
    std::string bad;
    auto check = [&](const char* what, uint32_t slot, uint32_t i, double want, double tol = 1e-5) {
        const float got = od[slot + i];
        if (bad.empty() && !(std::fabs(got - want) <= tol * (1 + std::fabs(want))))
            bad = std::string(what) + " element " + std::to_string(i) + " is " + std::to_string(got) +
                  ", expected " + std::to_string(want);
    };
    for (uint32_t r = 0; r < 5; ++r) {
        double s = 0;
        for (uint32_t c = 0; c < 37; ++c) s += id[r * 40 + c];
        check("Sum", oSum, r, s);
    }
    for (uint32_t r = 0; r < 6; ++r) {
        double mxv = -1e30, s = 0;
        for (uint32_t c = 0; c < 72; ++c) mxv = std::max<double>(mxv, id[r * 72 + c]), s += id[r * 72 + c];
        check("ReduceMax (AR)", oMax, r, mxv);
        check("ReduceMean (AR, reuse)", oMean, r, s / 72);
    }
    for (uint32_t c = 0; c < 24; ++c) {
        double mnv = 1e30, s = 0;
        for (uint32_t r = 0; r < 7; ++r) mnv = std::min<double>(mnv, id[r * 24 + c]), s += id[r * 24 + c];
        check("ReduceMin (RA)", oMin, c, mnv);
        check("ReduceSum (RA)", oRsum, c, s);
    }
    for (uint32_t i = 0; i < 100; ++i) check("Arange", oArange, i, 1.5 - 0.25 * i);
    for (uint32_t r = 0; r < 3; ++r)
        for (uint32_t c = 0; c < 40; ++c) {
            const uint32_t k = r * 40 + c;
            check("Select (byte mask, per row)", oSel, k, md[r * 64 + c] ? 7.5 : id[k]);
            check("Select (scalar first)", oSel2, k, md[k] ? id[k] : -2.0);
        }
    for (uint32_t k = 0; k < 160; ++k)
        check("DropOut (byte mask)", oDropB, k, id[k] * md[k] * static_cast<double>(1.0f / 0.8f));
    for (uint32_t k = 0; k < 256; ++k)
        check("DropOut (bit mask)", oDropBit, k, ((md[k / 8] >> (k % 8)) & 1) ? id[k] * 2.0 : 0.0);
    for (uint32_t r = 0; r < 5; ++r)
        for (uint32_t c = 0; c < 24; ++c) {
            check("Broadcast [1, n] -> [m, n]", oBc0, r * 24 + c, id[c]);
            check("Broadcast [m, 1] -> [m, n]", oBc1, r * 24 + c, id[r]);
        }
    for (uint32_t i = 0; i < 20; ++i) check("Broadcast [1] -> [n]", oBc2, i, id[8]);
    for (uint32_t r = 0; r < 6; ++r)
        for (uint32_t c = 0; c < 16; ++c) check("Pad", oPad, r * 16 + c, c < 1 || c >= 14 ? -3.0 : id[r * 13 + c - 1]);
    for (uint32_t r = 0; r < 6; ++r)
        for (uint32_t c = 0; c < 13; ++c) check("UnPad", oUnpad, r * 13 + c, id[r * 16 + c + 2]);
    for (uint32_t i = 0; i < 100; ++i) check("Fill", oFill, i, 2.5);
    if (bad.empty() && od[oFill + 100] != 0.0f) bad = "Fill wrote past its 100 elements";
    // NZ [b, n, h/16, s, 16] -> ND [b, s, n, h]
    for (uint32_t n = 0; n < kTN && bad.empty(); ++n)
        for (uint32_t s = 0; s < kTS && bad.empty(); ++s)
            for (uint32_t hh = 0; hh < kTH && bad.empty(); ++hh) {
                const float want = static_cast<float>(hid[((n * (kTH / 16) + hh / 16) * kTS + s) * 16 + hh % 16]);
                const float got = static_cast<float>(hod[(s * kTN + n) * kTH + hh]);
                if (got != want)
                    bad = "Transpose NZ2ND_0213 (n " + std::to_string(n) + ", s " + std::to_string(s) + ", h " +
                          std::to_string(hh) + ") is " + std::to_string(got) + ", expected " + std::to_string(want);
            }
    if (bad.empty())
        std::printf("layout ok\n");
    else
        std::printf("layout wrong: %s\n", bad.c_str());
    AscendC::GmFree(id);
    AscendC::GmFree(md);
    AscendC::GmFree(od);
    AscendC::GmFree(hid);
    AscendC::GmFree(hod);
    return bad.empty() ? 0 : 1;
}

// ---- "transdata": TransData NCDHW <-> FRACTAL_Z_3D and NCDHW <-> NDC1HWC0 on half [N 18, C 17, D 1, H 2,
// W 9] (N and C past one 16-block: zero padding in the fractal formats; H x W = 18: two position chunks,
// rows padded to 32), each result against the host's index arithmetic, each way back against the input.
namespace {
constexpr uint32_t tN = 18, tC = 17, tD = 1, tH = 2, tW = 9, tHW = tH * tW, tHp = 32, tN1 = 2, tC1 = 2;
constexpr uint32_t tNcdhw = tN * tC * tD * tHp, tFz = tD * tC1 * tHW * tN1 * 256, tNdc = tN * tD * tC1 * tHW * 16;
constexpr AscendC::TransDataConfig kToFz = {AscendC::DataFormat::NCDHW, AscendC::DataFormat::FRACTAL_Z_3D};
constexpr AscendC::TransDataConfig kFromFz = {AscendC::DataFormat::FRACTAL_Z_3D, AscendC::DataFormat::NCDHW};
constexpr AscendC::TransDataConfig kToNdc = {AscendC::DataFormat::NCDHW, AscendC::DataFormat::NDC1HWC0};
constexpr AscendC::TransDataConfig kFromNdc = {AscendC::DataFormat::NDC1HWC0, AscendC::DataFormat::NCDHW};
}  // namespace

extern "C" __global__ __aicore__ void transdata_kernel(GM_ADDR in, GM_ADDR out) {
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> bs, bf, bb, bn, bb2, bt;
    pipe.InitBuffer(bs, tNcdhw * 2);
    pipe.InitBuffer(bf, tFz * 2);
    pipe.InitBuffer(bb, tNcdhw * 2);
    pipe.InitBuffer(bn, tNdc * 2);
    pipe.InitBuffer(bb2, tNcdhw * 2);
    pipe.InitBuffer(bt, 512);
    AscendC::GlobalTensor<half> ig, og;
    ig.SetGlobalBuffer((__gm__ half*)in, tNcdhw);
    og.SetGlobalBuffer((__gm__ half*)out, tFz + tNdc + 2 * tNcdhw);
    AscendC::LocalTensor<half> s = bs.Get<half>(), fz = bf.Get<half>(), back = bb.Get<half>(), ndc = bn.Get<half>(),
                               back2 = bb2.Get<half>();
    AscendC::LocalTensor<uint8_t> tmp = bt.Get<uint8_t>();
    AscendC::DataCopy(s, ig, tNcdhw);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::Layout ncdhw = AscendC::MakeLayout(AscendC::MakeShape(tN, tC, tD, tH, tW), AscendC::MakeStride());
    AscendC::Layout fzl = AscendC::MakeLayout(AscendC::MakeShape(tD, tC1, tH, tW, tN1, 16, 16), AscendC::MakeStride());
    AscendC::Layout ndcl = AscendC::MakeLayout(AscendC::MakeShape(tN, tD, tC1, tH, tW, 16), AscendC::MakeStride());
    AscendC::TransData<kToFz>(fz, s, tmp, AscendC::TransDataParams<decltype(ncdhw), decltype(fzl)>{ncdhw, fzl});
    AscendC::TransData<kFromFz>(back, fz, tmp, AscendC::TransDataParams<decltype(fzl), decltype(ncdhw)>{fzl, ncdhw});
    AscendC::TransData<kToNdc>(ndc, s, AscendC::TransDataParams<decltype(ncdhw), decltype(ndcl)>{ncdhw, ndcl});
    AscendC::TransData<kFromNdc>(back2, ndc, tmp,
                                 AscendC::TransDataParams<decltype(ndcl), decltype(ncdhw)>{ndcl, ncdhw});
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(og, fz, tFz);
    AscendC::DataCopy(og[tFz], ndc, tNdc);
    AscendC::DataCopy(og[tFz + tNdc], back, tNcdhw);
    AscendC::DataCopy(og[tFz + tNdc + tNcdhw], back2, tNcdhw);
}

int transdata_family(const std::string& name) {
    if (name != "transdata") return -1;
    half* id = static_cast<half*>(AscendC::GmAlloc(tNcdhw * 2));
    half* od = static_cast<half*>(AscendC::GmAlloc((tFz + tNdc + 2 * tNcdhw) * 2));
    auto at = [](uint32_t n, uint32_t c, uint32_t d, uint32_t p) { return ((n * tC + c) * tD + d) * tHp + p; };
    for (uint32_t i = 0; i < tNcdhw; ++i) id[i] = static_cast<half>(static_cast<float>(i % 1999) - 900.0f);
    std::memset(od, 0, (tFz + tNdc + 2 * tNcdhw) * 2);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(transdata_kernel, 1, (uint8_t*)id, (uint8_t*)od);
    std::string bad;
    auto want_src = [&](uint32_t n, uint32_t c, uint32_t d, uint32_t p) {
        return n < tN && c < tC ? static_cast<float>(id[at(n, c, d, p)]) : 0.0f;
    };
    for (uint32_t d = 0; d < tD; ++d)
        for (uint32_t c1 = 0; c1 < tC1; ++c1)
            for (uint32_t p = 0; p < tHW; ++p)
                for (uint32_t n = 0; n < tN1 * 16; ++n)
                    for (uint32_t c0 = 0; c0 < 16 && bad.empty(); ++c0) {
                        const uint32_t k = ((((d * tC1 + c1) * tHW + p) * tN1 + n / 16) * 16 + n % 16) * 16 + c0;
                        const float want = want_src(n, c1 * 16 + c0, d, p), got = static_cast<float>(od[k]);
                        if (got != want)
                            bad = "TransData NCDHW -> FRACTAL_Z_3D element " + std::to_string(k) + " is " +
                                  std::to_string(got) + ", expected " + std::to_string(want);
                    }
    for (uint32_t n = 0; n < tN; ++n)
        for (uint32_t d = 0; d < tD; ++d)
            for (uint32_t c1 = 0; c1 < tC1; ++c1)
                for (uint32_t p = 0; p < tHW; ++p)
                    for (uint32_t c0 = 0; c0 < 16 && bad.empty(); ++c0) {
                        const uint32_t k = (((n * tD + d) * tC1 + c1) * tHW + p) * 16 + c0;
                        const float want = want_src(n, c1 * 16 + c0, d, p), got = static_cast<float>(od[tFz + k]);
                        if (got != want)
                            bad = "TransData NCDHW -> NDC1HWC0 element " + std::to_string(k) + " is " +
                                  std::to_string(got) + ", expected " + std::to_string(want);
                    }
    for (uint32_t way = 0; way < 2; ++way)
        for (uint32_t n = 0; n < tN; ++n)
            for (uint32_t c = 0; c < tC; ++c)
                for (uint32_t p = 0; p < tHW && bad.empty(); ++p) {
                    const float got = static_cast<float>(od[tFz + tNdc + way * tNcdhw + at(n, c, 0, p)]);
                    if (got != static_cast<float>(id[at(n, c, 0, p)]))
                        bad = std::string("TransData ") + (way ? "NDC1HWC0" : "FRACTAL_Z_3D") + " -> NCDHW (n " +
                              std::to_string(n) + ", c " + std::to_string(c) + ", position " + std::to_string(p) +
                              ") is " + std::to_string(got);
                }
    if (bad.empty())
        std::printf("transdata ok\n");
    else
        std::printf("transdata wrong: %s\n", bad.c_str());
    AscendC::GmFree(id);
    AscendC::GmFree(od);
    return bad.empty() ? 0 : 1;
}
