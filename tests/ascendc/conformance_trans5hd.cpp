// The conformance program's TransDataTo5HD family (tests/ascendc/conformance.cpp dispatches to it): one AIV
// kernel calls TransDataTo5HD in each of the reference's three forms and the host compares every output
// element with its own computation of the reference's mapping.
// "trans5hd": half NCHW -> NC1HWC0 (C 16, H x W 64: 4 repeats, uint64_t address lists, the reference's
// strides 16 and 1); a single repeat with a source stride of one block (the strides added once); float 16 x
// 16 transposed with LocalTensor lists (2 repeats, a destination row in two blocks); int8 16 x 32 with the
// address lists in LocalTensor<uint64_t> (SetValue), low then high halves.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "tikicpulib.h"

namespace {

constexpr uint32_t kC = 16, kHW = 64;       // half: [C, HW] -> [HW, C]
constexpr uint32_t kF = 16;                 // float: 16 x 16
constexpr uint32_t kBR = 16, kBC = 32;      // int8: 16 rows of 32
// Byte offsets of the parts in the input and output buffers.
constexpr uint32_t bHalf = 0, bOne = bHalf + kC * kHW * 2, bFloat = bOne + 16 * 16 * 2, bInt8 = bFloat + kF * kF * 4,
                   kBytes = bInt8 + kBR * kBC;

half hv(uint32_t i) { return static_cast<half>(static_cast<float>(i % 1021) * 0.5f - 200.0f); }
float fv(uint32_t i) { return static_cast<float>(i) * 1.25f - 77.0f; }
int8_t bv(uint32_t i) { return static_cast<int8_t>((i * 37u + 11u) % 251u - 125); }

}  // namespace

extern "C" __global__ __aicore__ void trans5hd_kernel(GM_ADDR in, GM_ADDR out) {
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> bx, by, bl;
    pipe.InitBuffer(bx, kBytes);
    pipe.InitBuffer(by, kBytes);
    pipe.InitBuffer(bl, 2 * 16 * 8);
    AscendC::GlobalTensor<uint8_t> ig, og;
    ig.SetGlobalBuffer((__gm__ uint8_t*)in, kBytes);
    og.SetGlobalBuffer((__gm__ uint8_t*)out, kBytes);
    AscendC::LocalTensor<uint8_t> x = bx.Get<uint8_t>(), y = by.Get<uint8_t>();
    AscendC::DataCopy(x, ig, kBytes);
    AscendC::Duplicate(y.ReinterpretCast<int16_t>(), int16_t{0}, kBytes / 2);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);

    // half NCHW -> NC1HWC0: source c is channel c's plane, destination j the j-th pixel's 16 channels.
    AscendC::LocalTensor<half> xh = x[bHalf].ReinterpretCast<half>(), yh = y[bHalf].ReinterpretCast<half>();
    uint64_t dl[16], sl[16];
    for (uint32_t i = 0; i < 16; ++i) sl[i] = xh[i * kHW].GetPhyAddr(), dl[i] = yh[i * kC].GetPhyAddr();
    AscendC::TransDataTo5HDParams p;
    p.repeatTimes = kHW / 16, p.dstRepStride = 16, p.srcRepStride = 1;
    AscendC::TransDataTo5HD<half>(dl, sl, p);
    // One repeat, source stride 1: the sources' second blocks (pixels 16..31) into the destinations as given
    // plus 0 blocks.
    AscendC::LocalTensor<half> yo = y[bOne].ReinterpretCast<half>();
    for (uint32_t i = 0; i < 16; ++i) dl[i] = yo[i * 16].GetPhyAddr();
    AscendC::TransDataTo5HD<half>(dl, sl, AscendC::TransDataTo5HDParams(false, false, 1, 0, 1));

    // float 16 x 16: sources the rows' first 8 columns (then the next 8), destinations consecutive blocks.
    AscendC::LocalTensor<float> xf = x[bFloat].ReinterpretCast<float>(), yf = y[bFloat].ReinterpretCast<float>();
    AscendC::LocalTensor<float> fd[16], fs[16];
    for (uint32_t i = 0; i < 16; ++i) fs[i] = xf[i * kF], fd[i] = yf[i * 8];
    AscendC::TransDataTo5HD<float>(fd, fs, AscendC::TransDataTo5HDParams(false, false, 2, 16, 1));

    // int8: the lists in UB; low halves, then high halves.
    AscendC::LocalTensor<int8_t> xb = x[bInt8].ReinterpretCast<int8_t>(), yb = y[bInt8].ReinterpretCast<int8_t>();
    AscendC::LocalTensor<uint64_t> ld = bl.Get<uint64_t>(), ls = ld[16];
    for (uint32_t i = 0; i < 16; ++i) {
        ld.SetValue(i, yb[i * kBC].GetPhyAddr());
        ls.SetValue(i, xb[i * kBC].GetPhyAddr());
    }
    AscendC::TransDataTo5HD<int8_t>(ld, ls, AscendC::TransDataTo5HDParams(false, false, 1, 0, 0));
    AscendC::TransDataTo5HD<int8_t>(ld, ls, AscendC::TransDataTo5HDParams(true, true, 1, 0, 0));
    AscendC::TransDataTo5HD<int8_t>(ld, ls, AscendC::TransDataTo5HDParams(true, true, 0, 0, 0));  // a no-op

    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(og, y, kBytes);
}

int trans5hd_family(const std::string& name) {
    if (name != "trans5hd") return -1;
    uint8_t* id = static_cast<uint8_t*>(AscendC::GmAlloc(kBytes));
    uint8_t* od = static_cast<uint8_t*>(AscendC::GmAlloc(kBytes));
    half* ih = reinterpret_cast<half*>(id + bHalf);
    float* ifl = reinterpret_cast<float*>(id + bFloat);
    int8_t* ib = reinterpret_cast<int8_t*>(id + bInt8);
    std::memset(id, 0, kBytes);
    for (uint32_t i = 0; i < kC * kHW; ++i) ih[i] = hv(i);
    for (uint32_t i = 0; i < kF * kF; ++i) ifl[i] = fv(i);
    for (uint32_t i = 0; i < kBR * kBC; ++i) ib[i] = bv(i);
    std::memset(od, 0xff, kBytes);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(trans5hd_kernel, 1, id, od);
    std::string bad;
    auto check = [&](const char* what, uint32_t i, double got, double want) {
        if (bad.empty() && got != want)
            bad = std::string(what) + " element " + std::to_string(i) + " is " + std::to_string(got) +
                  ", expected " + std::to_string(want);
    };
    const half* oh = reinterpret_cast<const half*>(od + bHalf);
    for (uint32_t hw = 0; hw < kHW; ++hw)
        for (uint32_t c = 0; c < kC; ++c)
            check("half NCHW -> NC1HWC0", hw * kC + c, static_cast<float>(oh[hw * kC + c]),
                  static_cast<float>(ih[c * kHW + hw]));
    const half* oo = reinterpret_cast<const half*>(od + bOne);
    for (uint32_t j = 0; j < 16; ++j)
        for (uint32_t c = 0; c < 16; ++c)
            check("half, one repeat with a source stride", j * 16 + c, static_cast<float>(oo[j * 16 + c]),
                  static_cast<float>(ih[c * kHW + 16 + j]));
    const float* of = reinterpret_cast<const float*>(od + bFloat);
    for (uint32_t r = 0; r < kF; ++r)
        for (uint32_t c = 0; c < kF; ++c) check("float 16 x 16", r * kF + c, of[r * kF + c], ifl[c * kF + r]);
    const int8_t* ob = reinterpret_cast<const int8_t*>(od + bInt8);
    for (uint32_t j = 0; j < 16; ++j)
        for (uint32_t i = 0; i < 16; ++i) {
            check("int8 low halves", j * kBC + i, ob[j * kBC + i], ib[i * kBC + j]);
            check("int8 high halves", j * kBC + 16 + i, ob[j * kBC + 16 + i], ib[i * kBC + 16 + j]);
        }
    AscendC::GmFree(id);
    AscendC::GmFree(od);
    if (!bad.empty()) {
        std::printf("trans5hd FAILED: %s\n", bad.c_str());
        return 1;
    }
    std::printf("trans5hd ok\n");
    return 0;
}
