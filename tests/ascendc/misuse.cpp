// A CPU-debug program that misuses the Ascend C API in the way its argument names, for the tests
// of how a run ends: bad input exits 2 naming the block and the call, a flag nobody sets is a
// deadlock (exit 4), a missing flag is a race when SFUMATO_CHECK_RACES=1 (exit 3).
//   ascendc_misuse alloc|deque|ub|gm|gmfree|trap|gathermask|gathermask_count|mrgsort_valid|mrgsort_repeat|
//   mrgsort_overlap|sort32|gatherb|gatherb_range|deadlock|race|ok
#include <cstring>
#include <string>

#include "tikicpulib.h"

namespace {
std::string g_case;
}

extern "C" __global__ __aicore__ void misuse_kernel(GM_ADDR x, GM_ADDR y)
{
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, 2> inQueue;
    AscendC::TQue<AscendC::QuePosition::VECOUT, 1> outQueue;
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float *)x + 256 * AscendC::GetBlockIdx(), 256);
    yGm.SetGlobalBuffer((__gm__ float *)y + 256 * AscendC::GetBlockIdx(), 256);
    if (g_case == "ub") {
        pipe.InitBuffer(inQueue, 2, 1 << 20);
    }
    pipe.InitBuffer(inQueue, 2, 256 * sizeof(float));
    pipe.InitBuffer(outQueue, 1, 256 * sizeof(float));
    AscendC::LocalTensor<float> a = inQueue.AllocTensor<float>();
    if (g_case == "alloc" && AscendC::GetBlockIdx() == 1) {
        inQueue.AllocTensor<float>();
        inQueue.AllocTensor<float>();
    }
    if (g_case == "gm") {
        AscendC::DataCopy(a, xGm[128], 256);
    }
    AscendC::DataCopy(a, xGm, 256);
    if (g_case == "gathermask" || g_case == "gathermask_count") {
        // A built-in pattern outside 1..7; 256 counter-mode repeats.
        uint64_t kept = 0;
        const bool counter = g_case == "gathermask_count";
        AscendC::GatherMask(a, a, counter ? 1 : 8, counter, counter ? 16 : 0, {1, uint16_t(counter ? 256 : 1), 8, 0},
                            kept);
    }
    if (g_case.rfind("mrgsort", 0) == 0) {
        // validBit 5; repeatTimes 2 with three lists; dst overlapping the first list.
        const uint16_t len[4] = {16, 16, 16, 0};
        const bool overlap = g_case == "mrgsort_overlap";
        const uint16_t valid = g_case == "mrgsort_valid" ? 5 : 7;
        const AscendC::MrgSortSrcList<float> src(a, a[32], a[64], a[96]);
        AscendC::MrgSort<float>(a[overlap ? 16 : 128], src,
                                AscendC::MrgSort4Info(len, false, valid, g_case == "mrgsort_repeat" ? 2 : 1));
    }
    if (g_case == "trap" && AscendC::GetBlockIdx() == 2) AscendC::Trap();
    if (g_case == "sort32") {  // 5 groups of 32 need 1280 bytes of dst, a holds 1024
        AscendC::Sort32<float>(a, a, a.ReinterpretCast<uint32_t>(), 5);
    }
    if (g_case == "gatherb_range") {  // an offset past src0's 768 bytes, found when the vgatherb runs
        AscendC::LocalTensor<uint32_t> off = a.ReinterpretCast<uint32_t>()[224];
        for (uint32_t j = 0; j < 8; ++j) off.SetValue(j, j == 5 ? 4096 : 0);
        AscendC::SetFlag<AscendC::HardEvent::S_V>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::S_V>(EVENT_ID0);
        AscendC::Gatherb(a.ReinterpretCast<uint32_t>(), a.ReinterpretCast<uint32_t>()[64], off, 1, {1, 8});
    }
    if (g_case == "gatherb") {  // the offsets 4 bytes past a block boundary
        AscendC::Gatherb(a.ReinterpretCast<uint32_t>()[128], a.ReinterpretCast<uint32_t>(),
                         a.ReinterpretCast<uint32_t>()[1], 1, {1, 8});
    }
    if (g_case == "deque") {
        outQueue.DeQue<float>();
    }
    if (g_case == "race") {
        // The vector unit reads what the MTE2 writes, with no flag between them.
        AscendC::LocalTensor<float> b = outQueue.AllocTensor<float>();
        AscendC::Adds(b, a, 1.0f, 256);
        outQueue.EnQue(b);
        b = outQueue.DeQue<float>();
        AscendC::DataCopy(yGm, b, 256);
        outQueue.FreeTensor(b);
        inQueue.FreeTensor(a);
        return;
    }
    if (g_case == "deadlock") {
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID3);  // nobody sets it
    }
    inQueue.EnQue(a);
    a = inQueue.DeQue<float>();
    AscendC::LocalTensor<float> b = outQueue.AllocTensor<float>();
    AscendC::Adds(b, a, 1.0f, 256);
    outQueue.EnQue(b);
    inQueue.FreeTensor(a);
    b = outQueue.DeQue<float>();
    AscendC::DataCopy(yGm, b, 256);
    outQueue.FreeTensor(b);
}

int main(int argc, char *argv[])
{
    g_case = argc > 1 ? argv[1] : "ok";
    const size_t bytes = 4 * 256 * sizeof(float);
    uint8_t *x = (uint8_t *)AscendC::GmAlloc(bytes);
    uint8_t *y = (uint8_t *)AscendC::GmAlloc(bytes);
    for (int i = 0; i < 4 * 256; i++) reinterpret_cast<float *>(x)[i] = static_cast<float>(i);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(misuse_kernel, 4, x, y);
    if (g_case == "gmfree") AscendC::GmFree(x + 4);
    bool good = true;
    for (int i = 0; i < 4 * 256; i++) good = good && reinterpret_cast<float *>(y)[i] == static_cast<float>(i) + 1.0f;
    AscendC::GmFree(x);
    AscendC::GmFree(y);
    std::printf("%s\n", good ? "result ok" : "result wrong");
    return good ? 0 : 1;
}
