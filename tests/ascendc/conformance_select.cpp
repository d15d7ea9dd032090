// The conformance program's family of Select's forms (tests/ascendc/conformance.cpp dispatches to it), on an
// AIV: "select": every form the reference gives for Atlas A2, each against the host's reading of the
// reference (a selMask bit 1 takes src0, 0 takes src1; modes 1 and 2 consume the bits repeat after repeat,
// mode 0 reuses the first 256 / sizeof(T) bits every repeat; lanes a mask leaves off keep dst's value):
//  A  mode 1, count form, float, 200 elements (three whole repeats and a masked one), scalar 0.5
//  B  mode 1, continuous mask 100 of half's 128 lanes, 2 repeats, scalar -2
//  C  mode 1, bit mask (lanes 4..7 of every 8, float), 4 repeats, scalar 9
//  D  mode 1 without a mask: the scalar 3 (Duplicate, SetCmpMask), the mask register (SetVectorMask, 48 lanes)
//  E  mode 2, continuous mask 64, 4 repeats, src1 a tensor
//  F  mode 0, continuous mask 64, 4 repeats (the first 64 bits each time)
//  G  mode 0 without a mask: the bits SetCmpMask was given, the full mask register
//  H  mode 1 in place, the way catlass's MLA epilogue uses it: CompareScalar writes the bits over the
//     tensor it compares, Select keeps the elements <= 10 and zeroes the others.
// dst starts as -7 everywhere. Small integers and halves: every value compared exactly. The "shift" family
// (ShiftLeft) is below.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tikicpulib.h"

namespace {

constexpr uint32_t kN = 256;      // floats (4 repeats of 64), or halves (2 repeats of 128)
constexpr uint32_t kCases = 8;    // A..H, kN floats each (B: kN halves in the first half of its slot)
constexpr float kInit = -7.0f;

float xv(uint32_t i) { return static_cast<float>(static_cast<int>((i * 7) % 23) - 11); }
float yv(uint32_t i) { return static_cast<float>(static_cast<int>((i * 5) % 19) + 20); }
uint8_t sv(uint32_t byte) { return static_cast<uint8_t>((byte * 37 + 11) & 0xff); }
bool bit(uint32_t i) { return (sv(i / 8) >> (i % 8)) & 1u; }

}  // namespace

extern "C" __global__ __aicore__ void select_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR s, GM_ADDR out) {
    AscendC::GlobalTensor<float> xg, yg, og;
    AscendC::GlobalTensor<uint8_t> sg;
    xg.SetGlobalBuffer((__gm__ float*)x, kN);
    yg.SetGlobalBuffer((__gm__ float*)y, kN);
    sg.SetGlobalBuffer((__gm__ uint8_t*)s, kN / 8);
    og.SetGlobalBuffer((__gm__ float*)out, kCases * kN);
    AscendC::LocalMemAllocator<AscendC::Hardware::UB> ub;
    AscendC::LocalTensor<float> a = ub.Alloc<float, kN>(), b = ub.Alloc<float, kN>();
    AscendC::LocalTensor<uint8_t> sel = ub.Alloc<uint8_t, kN / 8>();
    AscendC::LocalTensor<float> o = ub.Alloc<float, kCases * kN>(), tmp = ub.Alloc<float, 8>();
    AscendC::LocalTensor<float> t = ub.Alloc<float, kN>();
    AscendC::LocalTensor<half> h = ub.Alloc<half, kN>();
    AscendC::DataCopy(a, xg, kN);
    AscendC::DataCopy(b, yg, kN);
    AscendC::DataCopy(sel, sg, kN / 8);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::Duplicate(o, kInit, kCases * kN);
    AscendC::Cast(h, a, AscendC::RoundMode::CAST_NONE, kN);
    AscendC::PipeBarrier<PIPE_V>();
    const AscendC::BinaryRepeatParams p(1, 1, 1, 8, 8, 8);
    // A
    AscendC::Select(o, sel, a, 0.5f, AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, 200);
    // B (half: 128 lanes a repeat)
    AscendC::LocalTensor<half> ob = o[kN].ReinterpretCast<half>();
    AscendC::Duplicate(ob, static_cast<half>(kInit), kN);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Select(ob, sel, h, static_cast<half>(-2.0f), AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, uint64_t{100}, 2, p);
    // C
    uint64_t lanes47[2] = {0xF0F0F0F0F0F0F0F0ull, 0};
    AscendC::Select(o[2 * kN], sel, a, 9.0f, AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, lanes47, 4, p);
    // D
    AscendC::Duplicate(tmp, 3.0f, 8);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::SetCmpMask(tmp);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::SetVectorMask<float>(0, (uint64_t{1} << 48) - 1);
    AscendC::Select(o[3 * kN], sel, a, 4, p);
    AscendC::ResetMask();
    // E, F
    AscendC::Select(o[4 * kN], sel, a, b, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, uint64_t{64}, 4, p);
    AscendC::Select(o[5 * kN], sel, a, b, AscendC::SELMODE::VSEL_CMPMASK_SPR, uint64_t{64}, 4, p);
    // G
    AscendC::SetCmpMask(sel);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Select<float, AscendC::SELMODE::VSEL_CMPMASK_SPR>(o[6 * kN], a, b, 4, p);
    // H: t = a; bits over t (t <= 10); o = bit ? a : 0
    AscendC::Adds(t, a, 0.0f, kN);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::LocalTensor<uint8_t> tb = t.ReinterpretCast<uint8_t>();
    AscendC::CompareScalar(tb, t, 10.0f, AscendC::CMPMODE::LE, kN);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Select(o[7 * kN], tb, a, 0.0f, AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, kN);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(og, o, kCases * kN);
}

// "shift": ShiftLeft of uint16_t by 7 (count form, as catlass's fp8 dequantisation shifts) and by 16 (every bit
// out: zeros), of uint32_t by 3 (mask form: 64 lanes, 2 repeats) over the same bytes; the host shifts the bits.
constexpr uint32_t kShN = 256;  // uint16 elements
uint16_t shv(uint32_t i) { return static_cast<uint16_t>((i * 40503u + 977u) & 0xffffu); }

extern "C" __global__ __aicore__ void shift_kernel(GM_ADDR x, GM_ADDR out) {
    AscendC::GlobalTensor<uint16_t> xg, og;
    xg.SetGlobalBuffer((__gm__ uint16_t*)x, kShN);
    og.SetGlobalBuffer((__gm__ uint16_t*)out, 3 * kShN);
    AscendC::LocalMemAllocator<AscendC::Hardware::UB> ub;
    AscendC::LocalTensor<uint16_t> a = ub.Alloc<uint16_t, kShN>(), o = ub.Alloc<uint16_t, 3 * kShN>();
    AscendC::DataCopy(a, xg, kShN);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::ShiftLeft<uint16_t>(o, a, 7, kShN);
    AscendC::ShiftLeft<uint16_t>(o[kShN], a, 16, kShN);
    AscendC::LocalTensor<uint32_t> a32 = a.ReinterpretCast<uint32_t>(), o32 = o[2 * kShN].ReinterpretCast<uint32_t>();
    AscendC::ShiftLeft<uint32_t>(o32, a32, 3u, uint64_t{64}, 2, AscendC::UnaryRepeatParams(1, 1, 8, 8));
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(og, o, 3 * kShN);
}

int shift_family() {
    uint16_t* xd = static_cast<uint16_t*>(AscendC::GmAlloc(kShN * 2));
    uint16_t* od = static_cast<uint16_t*>(AscendC::GmAlloc(3 * kShN * 2));
    for (uint32_t i = 0; i < kShN; ++i) xd[i] = shv(i);
    std::memset(od, 0xa5, 3 * kShN * 2);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(shift_kernel, 1, (uint8_t*)xd, (uint8_t*)od);
    std::vector<uint16_t> want(3 * kShN, 0);
    for (uint32_t i = 0; i < kShN; ++i) want[i] = static_cast<uint16_t>(xd[i] << 7);
    for (uint32_t i = 0; i < kShN / 2; ++i) {
        const uint32_t w = (uint32_t{xd[2 * i + 1]} << 16 | xd[2 * i]) << 3;
        want[2 * kShN + 2 * i] = static_cast<uint16_t>(w & 0xffffu);
        want[2 * kShN + 2 * i + 1] = static_cast<uint16_t>(w >> 16);
    }
    int bad = -1;
    for (uint32_t e = 0; e < 3 * kShN && bad < 0; ++e)
        if (od[e] != want[e]) bad = static_cast<int>(e);
    if (bad >= 0)
        std::printf("shift wrong: halfword %d is 0x%04x, expected 0x%04x\n", bad, od[bad], want[bad]);
    else
        std::printf("shift ok\n");
    AscendC::GmFree(xd);
    AscendC::GmFree(od);
    return bad >= 0 ? 1 : 0;
}

int select_family(const std::string& name) {
    if (name == "shift") return shift_family();
    if (name != "select") return -1;
    float* xd = static_cast<float*>(AscendC::GmAlloc(kN * 4));
    float* yd = static_cast<float*>(AscendC::GmAlloc(kN * 4));
    uint8_t* sd = static_cast<uint8_t*>(AscendC::GmAlloc(kN / 8));
    float* od = static_cast<float*>(AscendC::GmAlloc(kCases * kN * 4));
    for (uint32_t i = 0; i < kN; ++i) xd[i] = xv(i), yd[i] = yv(i);
    for (uint32_t i = 0; i < kN / 8; ++i) sd[i] = sv(i);
    std::memset(od, 0, kCases * kN * 4);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(select_kernel, 1, (uint8_t*)xd, (uint8_t*)yd, sd, (uint8_t*)od);
    // The host's expectation per case and element.
    std::vector<float> want(kCases * kN, kInit);
    for (uint32_t i = 0; i < kN; ++i) {
        const uint32_t l = i % 64, r = i / 64;
        if (i < 200) want[i] = bit(i) ? xv(i) : 0.5f;
        if (i < 2 * 128 && i % 128 < 100) want[kN + i] = bit(i) ? xv(i) : -2.0f;  // B, as half (read below)
        if ((l / 4) % 2 == 1) want[2 * kN + i] = bit(i) ? xv(i) : 9.0f;
        if (l < 48) want[3 * kN + i] = bit(i) ? xv(i) : 3.0f;
        want[4 * kN + i] = bit(i) ? xv(i) : yv(i);
        want[5 * kN + i] = bit(l) ? xv(i) : yv(i);
        want[6 * kN + i] = bit(l) ? xv(i) : yv(i);
        want[7 * kN + i] = xv(i) <= 10.0f ? xv(i) : 0.0f;
        (void)r;
    }
    int bad = -1;
    float got = 0;
    for (uint32_t e = 0; e < kCases * kN && bad < 0; ++e) {
        if (e >= kN && e < 2 * kN) {  // B: kN halves in the slot's first half
            const half* hv = reinterpret_cast<const half*>(od + kN);
            got = static_cast<float>(hv[e - kN]);
        } else {
            got = od[e];
        }
        if (got != want[e]) bad = static_cast<int>(e);
    }
    if (bad >= 0)
        std::printf("%s wrong: case %c element %u is %g, expected %g\n", name.c_str(), 'A' + bad / kN, bad % kN, got,
                    want[bad]);
    else
        std::printf("%s ok\n", name.c_str());
    for (void* q : {static_cast<void*>(xd), static_cast<void*>(yd), static_cast<void*>(sd), static_cast<void*>(od)})
        AscendC::GmFree(q);
    return bad >= 0 ? 1 : 0;
}
