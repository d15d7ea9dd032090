// The conformance program's family of the vector forms catlass's tiles use (tests/ascendc/conformance.cpp
// dispatches to it), on an AIV: "catlass_vec": with the mask register set once (isSetMask false),
// Muls with a UnaryRepeatParams built by its constructor, MulAddDst<T, U, false> with a BinaryRepeatParams
// built by its constructor (acc = z + 2x * y over 4 repeats of 64 floats), then the count form
// MulAddDst<float, float> (acc2 = z + x * y); x read through a GlobalTensor with SetL2CacheHint(
// CACHE_MODE_DISABLE), which changes no value; ICachePreLoad first. Small integers: every float compared exactly.
#include <cstdio>
#include <cstring>
#include <string>

#include "tikicpulib.h"

namespace {

constexpr uint32_t kLen = 256;
float xv(uint32_t i) { return static_cast<float>(static_cast<int>(i % 13) - 6); }
float yv(uint32_t i) { return static_cast<float>(static_cast<int>((i * 7) % 11) - 5); }
float zv(uint32_t i) { return static_cast<float>(static_cast<int>((i * 3) % 17) - 8); }

}  // namespace

extern "C" __global__ __aicore__ void catlass_vec_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR out) {
    AscendC::ICachePreLoad(2);  // issues nothing (no instruction fetch is modelled)
    AscendC::GlobalTensor<float> xg, yg, zg, og;
    xg.SetGlobalBuffer((__gm__ float*)x, kLen);
    xg.SetL2CacheHint(AscendC::CacheMode::CACHE_MODE_DISABLE);
    yg.SetGlobalBuffer((__gm__ float*)y, kLen);
    zg.SetGlobalBuffer((__gm__ float*)z, kLen);
    og.SetGlobalBuffer((__gm__ float*)out, 2 * kLen);
    AscendC::LocalMemAllocator<AscendC::Hardware::UB> ub;
    AscendC::LocalTensor<float> a = ub.Alloc<float, kLen>(), b = ub.Alloc<float, kLen>();
    AscendC::LocalTensor<float> acc = ub.Alloc<float, 2 * kLen>(), t = ub.Alloc<float, kLen>();
    AscendC::DataCopy(a, xg, kLen);
    AscendC::DataCopy(b, yg, kLen);
    AscendC::DataCopy(acc, zg, kLen);
    AscendC::DataCopy(acc[kLen], zg, kLen);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::SetMaskNorm();
    AscendC::SetVectorMask<float, AscendC::MaskMode::NORMAL>(0, ~uint64_t{0});  // 64 float lanes
    AscendC::Muls<float, false>(t, a, 2.0f, AscendC::MASK_PLACEHOLDER, kLen / 64, AscendC::UnaryRepeatParams(1, 1, 8, 8));
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::MulAddDst<float, float, false>(acc, t, b, AscendC::MASK_PLACEHOLDER, kLen / 64,
                                            AscendC::BinaryRepeatParams(1, 1, 1, 8, 8, 8));
    AscendC::ResetMask();
    AscendC::MulAddDst<float, float>(acc[kLen], a, b, kLen);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(og, acc, 2 * kLen);
}

int catlass_family(const std::string& name) {
    if (name != "catlass_vec") return -1;
    float* xd = static_cast<float*>(AscendC::GmAlloc(kLen * 4));
    float* yd = static_cast<float*>(AscendC::GmAlloc(kLen * 4));
    float* zd = static_cast<float*>(AscendC::GmAlloc(kLen * 4));
    float* od = static_cast<float*>(AscendC::GmAlloc(2 * kLen * 4));
    for (uint32_t i = 0; i < kLen; ++i) xd[i] = xv(i), yd[i] = yv(i), zd[i] = zv(i);
    std::memset(od, 0, 2 * kLen * 4);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(catlass_vec_kernel, 1, (uint8_t*)xd, (uint8_t*)yd, (uint8_t*)zd, (uint8_t*)od);
    int bad = -1;
    float want = 0;
    for (uint32_t e = 0; e < 2 * kLen && bad < 0; ++e) {
        const uint32_t i = e % kLen;
        want = zv(i) + (e < kLen ? 2.0f : 1.0f) * xv(i) * yv(i);
        if (od[e] != want) bad = static_cast<int>(e);
    }
    if (bad >= 0) std::printf("%s wrong: element %d is %g, expected %g\n", name.c_str(), bad, od[bad], want);
    else std::printf("%s ok\n", name.c_str());
    for (void* p : {static_cast<void*>(xd), static_cast<void*>(yd), static_cast<void*>(zd), static_cast<void*>(od)})
        AscendC::GmFree(p);
    return bad >= 0 ? 1 : 0;
}
