// Conformance of the Ascend C layer's API families: a CPU-debug program whose argument names a family; one
// kernel exercises that family's calls on data from a fixed generator and the host compares every output
// element with its own computation of what the public API reference says the call does. Prints "<family> ok"
// and exits 0, or names the first wrong element and exits 1. ascendc_conformance
// copy|symbol|reduce_repeat|reduce_block|counter|slice|pad|atomic|cache|init_output|pair|index|gathermask|ibsync|
// determine|group|bufpool|list|sort|gatherb (the last two in conformance_sort.cpp)|fixpipe|gemv|xflags|poll|
// poll_never (conformance_cube.cpp)|int4|int4_mmad (conformance_int4.cpp)|load3d_t|load3d_kalign
// (conformance_load3d.cpp)|fixpipe_nd|unitflag|unitflag_never (conformance_fixpipe.cpp)|perchannel|flag_twice|
// perchannel_tbuf|hf32_on|flag_flood (conformance_quant.cpp)|catlass_vec (conformance_catlass.cpp)|trans5hd
// (conformance_trans5hd.cpp)|sparse (conformance_sparse.cpp)|trig (conformance_trig.cpp)
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kernel_operator_list_tensor_intf.h"
#include "tikicpulib.h"

namespace {

std::string g_family;
constexpr uint32_t kN = 1024;

float in_value(uint32_t i) { return static_cast<float>((i * 37u) % 101u) - 50.0f + 0.25f * (i % 4u); }

// The "gathermask" family's user pattern: 16 uint32 words, repeat r's 64 bits in words 8r, 8r + 1.
constexpr uint32_t kGatherBits[16] = {0x0000f00fu, 0x80000001u, 0, 0, 0, 0, 0, 0, 0xaaaaaaaau, 0x1u};

}  // namespace

// One kernel for all families: x = kN floats, y = kN floats (output), the family picks the calls.
extern "C" __global__ __aicore__ void conformance_kernel(GM_ADDR x, GM_ADDR y) {
    AscendC::GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, kN);
    yg.SetGlobalBuffer((__gm__ float*)y, kN);
    AscendC::LocalMemAllocator<AscendC::Hardware::UB> ub;
    AscendC::LocalTensor<float> a = ub.Alloc<float, kN>();
    AscendC::LocalTensor<float> b = ub.Alloc<float, kN>();
    AscendC::DataCopy(b, xg, kN);  // b = x, then b is overwritten by the family where it writes
    AscendC::DataCopy(a, xg, kN);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    const std::string& f = g_family;
    if (f == "copy") {
        // rows of 64: the first 8 of each of 16 rows, packed (mask 8, dst rep 1 block, src rep 8).
        AscendC::Duplicate(b, 0.0f, kN);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Copy(b, a, 8, 16, {1, 1, 1, 8});
    } else if (f == "reduce_repeat") {
        AscendC::Duplicate(b, 0.0f, kN);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::ReduceRepeat<AscendC::ReduceType::SUM, float>(b, a, 64, 16, 1, 1, 8);
        AscendC::ReduceRepeat<AscendC::ReduceType::MAX, float>(b[16], a, 40, 16, 1, 1, 8,
                                                               AscendC::ReduceOrder::ORDER_ONLY_VALUE);
        AscendC::ReduceRepeat<AscendC::ReduceType::MIN, float>(b[32], a, 64, 16, 1, 1, 8);  // value, index
    } else if (f == "reduce_block") {
        AscendC::Duplicate(b, 0.0f, kN);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::ReduceDataBlock<AscendC::ReduceType::SUM, float>(b, a, 64, 16, 1, 1, 8);
        AscendC::ReduceDataBlock<AscendC::ReduceType::MAX, float>(b[128], a, 64, 16, 1, 1, 8);
        AscendC::BlockReduceMin<float>(b[256], a, 16, 64, 1, 1, 8);
    } else if (f == "counter") {
        // Counter mode: 300 elements through Adds with the mask register's count (5 repeats, the last with 44
        // lanes), then a sum per repeat of 200 elements.
        AscendC::Duplicate(b, 0.0f, kN);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::SetMaskCount();
        AscendC::SetVectorMask<float, AscendC::MaskMode::COUNTER>(0, 300);
        AscendC::Adds<float, float, false>(b, a, 1.0f, AscendC::MASK_PLACEHOLDER, 1, {1, 1, 8, 8});
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::SetVectorMask<float, AscendC::MaskMode::COUNTER>(0, 200);
        AscendC::ReduceRepeat<AscendC::ReduceType::SUM, float, float, false>(
            b[512], a, AscendC::MASK_PLACEHOLDER, 1, 1, 1, 8);
        AscendC::SetMaskNorm();
        AscendC::ResetMask();
    } else if (f == "pair") {
        // Pairs summed: 10 repeats of 64 lanes (32 results each, packed), then 4 repeats with
        // lanes 0..39 enabled at a dst repeat stride of 2 (results 128 bytes x 2 apart) from b[512];
        // the older name with a bit mask on every other pair.
        AscendC::Duplicate(b, 0.0f, kN);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::ReducePairElem<AscendC::ReduceType::SUM, float>(b, a, 64, 10, 1, 1, 8);
        AscendC::ReducePairElem<AscendC::ReduceType::SUM, float>(b[512], a, 40, 4, 2, 1, 8);
        uint64_t bits[2] = {0x3333333333333333ull, 0};
        AscendC::PairReduceSum<float>(b[768], a[256], 2, bits, 1, 1, 8);
    } else if (f == "index") {
        // 300 indices from -7 (count form: 4 repeats and 44 lanes), then from 1000 with a mask of
        // 16 lanes over 3 repeats (dst repeat stride 4 blocks) from b[512].
        AscendC::Duplicate(b, 0.0f, kN);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::CreateVecIndex(b, -7.0f, 300);
        AscendC::LocalTensor<float> d = b[512];
        AscendC::CreateVecIndex(d, 1000.0f, 16, 3, 1, 4);
    } else if (f == "gathermask") {
        // Built-in pattern 2 (odd lanes) over 4 normal-mode repeats into b; pattern 3 (element 0 of
        // four) in counter mode (Atlas A2: 150 elements in each of 2 repeats, 8 blocks apart) from
        // a[256] into b[256]; the
        // bit pattern kGatherBits over 2 repeats (src0 16 blocks apart, the bits 1 block apart)
        // from a[512] into b[640]; the three rsvdCnt into b[1000..1002].
        AscendC::Duplicate(b, 0.0f, kN);
        AscendC::LocalTensor<uint32_t> bits = ub.Alloc<uint32_t, 16>();
        for (uint32_t i = 0; i < 16; ++i) bits.SetValue(i, kGatherBits[i]);
        AscendC::SetFlag<AscendC::HardEvent::S_V>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::S_V>(EVENT_ID0);
        AscendC::PipeBarrier<PIPE_V>();
        uint64_t n[3] = {};
        AscendC::GatherMask(b, a, 2, false, 0, {1, 4, 8, 0}, n[0]);
        AscendC::GatherMask(b[256], a[256], 3, true, 150, {1, 2, 8, 0}, n[1]);
        AscendC::GatherMask(b[640], a[512], bits, false, 0, {1, 2, 16, 1}, n[2]);
        for (uint32_t i = 0; i < 3; ++i) b.SetValue(1000 + i, static_cast<float>(n[i]));
    } else if (f == "slice") {
        // x as 4 rows of 256; rows 1 and 3, from element 8: 3 slices of 16 (2 blocks) 16 apart.
        AscendC::SliceInfo src[] = {{8, 8 + 16 * 3 + 16 * 2 - 1, 16, 2, 256}, {1, 3, 1, 1, 4}};
        AscendC::SliceInfo dst[] = {{0, 47, 0, 2, 48}, {0, 1, 0, 1, 2}};
        AscendC::Duplicate(b, 0.0f, kN);
        AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVENT_ID0);
        AscendC::DataCopy(b, xg, dst, src, 2);
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID1);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID1);
    } else if (f == "pad") {
        // 5 rows of 13 floats each padded with 3 elements of the SetPadValue value to 16.
        AscendC::SetPadValue(-9.0f);
        AscendC::DataCopyExtParams p{5, 13 * sizeof(float), 0, 0, 0};
        AscendC::DataCopyPadExtParams<float> pad{false, 0, 3, 0.0f};
        AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVENT_ID0);
        AscendC::DataCopyPad(b, xg, p, pad);
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID1);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID1);
    }
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(yg, b, kN);
    if (f == "atomic") {
        // y = x, then a store of -x keeping the max (y = |x|) and one of x - 1 keeping the min.
        AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID0);
        AscendC::Muls(a, b, -1.0f, kN);
        AscendC::Adds(b, b, -1.0f, kN);
        AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID1);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID1);
        AscendC::SetAtomicMax<float>();
        AscendC::DataCopy(yg, a, kN);
        AscendC::SetAtomicMin<float>();
        AscendC::DataCopy(yg, b, kN);
        AscendC::DisableDmaAtomic();
    } else if (f == "symbol") {
        // The operator form (dst = p op q over dst's size): p = x[0, 256), q = x[256, 512); b[0, 256) = p + q,
        // b[256, 512) = p - q, b[512, 768) = p * q, and a dst of 128 elements at b[768] = p + q (its size, not
        // the sources', counts), b[896, 1024) keeping x.
        AscendC::LocalTensor<float> p = a, q = a[256], d0 = b, d1 = b[256], d2 = b[512], d3 = b[768];
        p.SetSize(256), q.SetSize(256), d0.SetSize(256), d1.SetSize(256), d2.SetSize(256), d3.SetSize(128);
        d0 = p + q;
        d1 = p - q;
        d2 = p * q;
        d3 = p + q;
    } else if (f == "cache") {
        // After every pipe drained: y[0] = x[5] + 1 through the scalar unit, bypassing the data cache.
        AscendC::PipeBarrier<PIPE_ALL>();
        const float v = AscendC::ReadGmByPassDCache<float>((__gm__ float*)x + 5);
        AscendC::DataSyncBarrier<AscendC::MemDsbT::DDR>();
        AscendC::WriteGmByPassDCache<float>((__gm__ float*)y, v + 1.0f);
        AscendC::DataCacheCleanAndInvalid<float, AscendC::CacheLine::ENTIRE_DATA_CACHE>(yg);
    } else if (f == "init_output") {
        // y = x, then its first 1000 elements set to 3.5 (MTE3 after MTE3: in order); the task
        // ordering calls around it have nothing to wait for (one launch).
        AscendC::WaitPreTaskEnd();
        AscendC::InitOutput<float>(yg, 1000, 3.5f);
        AscendC::SetNextTaskStart();
    }
}

// Blocks in a chain through GM flags: block k waits for block k - 1 (IBWait, or WaitPreBlock for
// the "determine" family), reads y[k - 1] through the scalar unit and writes y[k] = y[k - 1] + 1,
// then lets block k + 1 go (IBSet / NotifyNextBlock). Only the flags order the blocks.
extern "C" __global__ __aicore__ void chain_kernel(GM_ADDR y, GM_ADDR flags)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    AscendC::LocalTensor<int32_t> ub = buf.Get<int32_t>();
    AscendC::GlobalTensor<int32_t> fg;
    fg.SetGlobalBuffer((__gm__ int32_t*)flags, 2048);
    const int32_t k = static_cast<int32_t>(AscendC::GetBlockIdx());
    __gm__ float* yp = (__gm__ float*)y;
    const bool ib = g_family == "ibsync";
    if (!ib) AscendC::InitDetermineComputeWorkspace(fg, ub);
    if (ib && k > 0) AscendC::IBWait(fg, ub, k - 1, 0);
    if (!ib) AscendC::WaitPreBlock(fg, ub);
    const float prev = k > 0 ? AscendC::ReadGmByPassDCache<float>(yp + k - 1) : 0.0f;
    AscendC::WriteGmByPassDCache<float>(yp + k, prev + 1.0f);
    if (ib)
        AscendC::IBSet(fg, ub, k, 0);
    else
        AscendC::NotifyNextBlock(fg, ub);
}

// GroupBarrier: blocks 0 and 1 arrive after writing y[k] = 10 (k + 1) through the scalar unit;
// blocks 2..7 wait, then write y[8 + k] = y[0] + y[1] (30 when the barrier held). Twice: in the
// second round the arrivers write y[2 + k] = 100 (k + 1) and the waiters y[16 + k] = y[2] + y[3]
// (300), which needs the arrival counts of the second Arrive calls.
extern "C" __global__ __aicore__ void group_kernel(GM_ADDR y, GM_ADDR ws) {
    AscendC::GroupBarrier<AscendC::PipeMode::MTE3_MODE> bar(ws, 2, 6);
    const int32_t k = static_cast<int32_t>(AscendC::GetBlockIdx());
    __gm__ float* yp = (__gm__ float*)y;
    for (int32_t round = 0; round < 2; ++round) {
        if (k < 2) {
            AscendC::WriteGmByPassDCache<float>(yp + 2 * round + k, (round ? 100.0f : 10.0f) * static_cast<float>(k + 1));
            bar.Arrive(static_cast<uint32_t>(k));
        } else {
            bar.Wait(static_cast<uint32_t>(k - 2));
            const float s = AscendC::ReadGmByPassDCache<float>(yp + 2 * round) +
                            AscendC::ReadGmByPassDCache<float>(yp + 2 * round + 1);
            AscendC::WriteGmByPassDCache<float>(yp + 8 * (round + 1) + k, s);
        }
    }
}

// TBufPool: a pool of 3 x 2 KiB from the TPipe holds an output queue and a sub-pool of 2 x 2 KiB,
// and a second sub-pool shares the first one's range. Phase 1 (first sub-pool) writes
// y[0, 512) = 2 x; phase 2 (the shared range, after Reset) y[512, 1024) = x + 1; a user-defined
// pool (EXTERN_IMPL_BUFPOOL) placing one queue and one TBuf by hand then adds 1 to y[0, 512) in
// place of phase 1's result.
class ConfPool {
public:
    ConfPool() { Init(); }
    template <class Q>
    bool InitBuffer(Q& que, uint8_t num, uint32_t len) {
        AscendC::TBufHandle h = GetBufHandle(GetCurBufSize());
        que.InitStartBufHandle(h, num, len);
        for (uint32_t i = 0; i < num; ++i) que.InitBufHandle(this, i, h, GetCurAddr() + i * len, len);
        SetCurAddr(GetCurAddr() + num * len);
        SetCurBufSize(GetCurBufSize() + num);
        return true;
    }
    EXTERN_IMPL_BUFPOOL(ConfPool, AscendC::TPosition::VECCALC, 4);
};

extern "C" __global__ __aicore__ void bufpool_kernel(GM_ADDR x, GM_ADDR y) {
    constexpr uint32_t kHalf = kN / 2, kBytes = kHalf * sizeof(float);
    AscendC::GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, kN);
    yg.SetGlobalBuffer((__gm__ float*)y, kN);
    AscendC::TPipe pipe;
    AscendC::TBufPool<AscendC::TPosition::VECCALC> p0, p1, p2;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> in1, in2, in3;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> out;
    pipe.InitBufPool(p0, 3 * kBytes);
    p0.InitBufPool(p1, 2 * kBytes);
    p0.InitBuffer(out, 1, kBytes);
    p0.InitBufPool(p2, 2 * kBytes, p1);
    for (int phase = 0; phase < 2; ++phase) {
        AscendC::TBufPool<AscendC::TPosition::VECCALC>& p = phase ? p2 : p1;
        AscendC::TQue<AscendC::TPosition::VECIN, 1>& in = phase ? in2 : in1;
        p.InitBuffer(in, 1, kBytes);
        AscendC::LocalTensor<float> a = in.AllocTensor<float>();
        AscendC::DataCopy(a, xg[phase * kHalf], kHalf);
        in.EnQue(a);
        a = in.DeQue<float>();
        AscendC::LocalTensor<float> o = out.AllocTensor<float>();
        if (phase)
            AscendC::Adds(o, a, 1.0f, kHalf);
        else
            AscendC::Muls(o, a, 2.0f, kHalf);
        out.EnQue(o);
        in.FreeTensor(a);
        o = out.DeQue<float>();
        AscendC::DataCopy(yg[phase * kHalf], o, kHalf);
        out.FreeTensor(o);
        p.Reset();
    }
    ConfPool mine;
    pipe.InitBufPool(mine, 2 * kBytes);
    mine.InitBuffer(in3, 1, kBytes);
    AscendC::LocalTensor<float> a = in3.AllocTensor<float>();
    AscendC::PipeBarrier<PIPE_ALL>();  // y[0, 512) is in GM
    AscendC::DataCopy(a, yg, kHalf);
    in3.EnQue(a);
    a = in3.DeQue<float>();
    AscendC::Adds(a, a, 1.0f, kHalf);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(yg, a, kHalf);
    in3.FreeTensor(a);
    mine.Reset();
}

// ListTensorDesc: a list of two tensors (shapes {2, 3, 4} and {1024}, indices 7 and 9) whose
// second pointer is x; y[0..] gets the list's size, dims, indices and shapes, then x[0, 512) copied
// through the second tensor's GlobalTensor into y[512, 1024).
extern "C" __global__ __aicore__ void list_kernel(GM_ADDR list, GM_ADDR y) {
    AscendC::ListTensorDesc l((__gm__ void*)list);
    __gm__ float* yp = (__gm__ float*)y;
    uint64_t shape[4] = {};
    float out[16] = {static_cast<float>(l.GetSize())};
    uint32_t n = 1;
    for (uint32_t t = 0; t < 2; ++t) {
        AscendC::TensorDesc<float> d;
        d.SetShapeAddr(shape);
        l.GetDesc(d, t);
        out[n++] = static_cast<float>(d.GetDim());
        out[n++] = static_cast<float>(d.GetIndex());
        for (uint32_t i = 0; i < d.GetDim(); ++i) out[n++] = static_cast<float>(d.GetShape(i));
    }
    for (uint32_t i = 0; i < n; ++i) AscendC::WriteGmByPassDCache<float>(yp + i, out[i]);
    AscendC::GlobalTensor<float> xg;
    xg.SetGlobalBuffer(l.GetDataPtr<float>(1), 512);
    AscendC::GlobalTensor<float> yg;
    yg.SetGlobalBuffer(yp + 512, 512);
    AscendC::LocalMemAllocator<AscendC::Hardware::UB> ub;
    AscendC::LocalTensor<float> a = ub.Alloc<float, 512>();
    AscendC::DataCopy(a, xg, 512);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE3>(EVENT_ID0);
    AscendC::DataCopy(yg, a, 512);
}

namespace {

// The host's expectation: out starts as the kernel's b would (x, or zeros), then the family.
using Expect = std::function<void(const std::vector<float>& x, std::vector<float>& out)>;

std::map<std::string, Expect> expectations() {
    std::map<std::string, Expect> e;
    e["copy"] = [](const std::vector<float>& x, std::vector<float>& o) {
        o.assign(kN, 0.0f);
        for (uint32_t r = 0; r < 16; ++r)
            for (uint32_t l = 0; l < 8; ++l) o[r * 8 + l] = x[r * 64 + l];
    };
    e["reduce_repeat"] = [](const std::vector<float>& x, std::vector<float>& o) {
        o.assign(kN, 0.0f);
        for (uint32_t r = 0; r < 16; ++r) {
            double s = 0;
            float mx = x[r * 64], mn = x[r * 64];
            uint32_t mi = 0;
            for (uint32_t l = 0; l < 64; ++l) s += x[r * 64 + l];
            for (uint32_t l = 0; l < 40; ++l) mx = std::max(mx, x[r * 64 + l]);
            for (uint32_t l = 0; l < 64; ++l)
                if (x[r * 64 + l] < mn) mn = x[r * 64 + l], mi = l;
            o[r] = static_cast<float>(s);
            o[16 + r] = mx;
            o[32 + 2 * r] = mn;
            std::memcpy(&o[32 + 2 * r + 1], &mi, 4);
        }
    };
    e["reduce_block"] = [](const std::vector<float>& x, std::vector<float>& o) {
        o.assign(kN, 0.0f);
        for (uint32_t k = 0; k < 128; ++k) {
            float s = 0, mx = x[k * 8], mn = x[k * 8];
            for (uint32_t j = 0; j < 8; ++j) {
                s += x[k * 8 + j];
                mx = std::max(mx, x[k * 8 + j]);
                mn = std::min(mn, x[k * 8 + j]);
            }
            o[k] = s, o[128 + k] = mx, o[256 + k] = mn;
        }
    };
    e["counter"] = [](const std::vector<float>& x, std::vector<float>& o) {
        o.assign(kN, 0.0f);
        for (uint32_t i = 0; i < 300; ++i) o[i] = x[i] + 1.0f;
        for (uint32_t r = 0; r < 4; ++r) {
            double s = 0;
            for (uint32_t l = 0; l < (r < 3 ? 64u : 8u); ++l) s += x[r * 64 + l];
            o[512 + r] = static_cast<float>(s);
        }
    };
    e["slice"] = [](const std::vector<float>& x, std::vector<float>& o) {
        o.assign(kN, 0.0f);
        const uint32_t rows[] = {1, 3};
        for (uint32_t r = 0; r < 2; ++r)
            for (uint32_t s = 0; s < 3; ++s)
                for (uint32_t e2 = 0; e2 < 16; ++e2)
                    o[r * 48 + s * 16 + e2] = x[rows[r] * 256 + 8 + s * 32 + e2];
    };
    e["pad"] = [](const std::vector<float>& x, std::vector<float>& o) {
        o = x;
        for (uint32_t r = 0; r < 5; ++r)
            for (uint32_t c = 0; c < 16; ++c) o[r * 16 + c] = c < 13 ? x[r * 13 + c] : -9.0f;
    };
    e["atomic"] = [](const std::vector<float>& x, std::vector<float>& o) {
        o.resize(kN);
        for (uint32_t i = 0; i < kN; ++i) o[i] = std::min(std::fabs(x[i]), x[i] - 1.0f);
    };
    e["symbol"] = [](const std::vector<float>& x, std::vector<float>& o) {
        o = x;
        for (uint32_t i = 0; i < 256; ++i) {
            o[i] = x[i] + x[256 + i];
            o[256 + i] = x[i] - x[256 + i];
            o[512 + i] = x[i] * x[256 + i];
            if (i < 128) o[768 + i] = x[i] + x[256 + i];
        }
    };
    e["cache"] = [](const std::vector<float>& x, std::vector<float>& o) {
        o = x;
        o[0] = x[5] + 1.0f;
    };
    e["pair"] = [](const std::vector<float>& x, std::vector<float>& o) {
        o.assign(kN, 0.0f);
        for (uint32_t j = 0; j < 320; ++j) o[j] = x[2 * j] + x[2 * j + 1];
        for (uint32_t r = 0; r < 4; ++r)
            for (uint32_t j = 0; j < 20; ++j) o[512 + r * 64 + j] = x[r * 64 + 2 * j] + x[r * 64 + 2 * j + 1];
        for (uint32_t r = 0; r < 2; ++r)
            for (uint32_t j = 0; j < 32; ++j)
                if (j % 2 == 0) o[768 + r * 32 + j] = x[256 + r * 64 + 2 * j] + x[256 + r * 64 + 2 * j + 1];
    };
    e["gathermask"] = [](const std::vector<float>& x, std::vector<float>& o) {
        o.assign(kN, 0.0f);
        uint32_t n[3] = {};
        for (uint32_t l = 0; l < 4 * 64; ++l)
            if (l % 2 == 1) o[n[0]++] = x[l];
        for (uint32_t r = 0; r < 2; ++r)
            for (uint32_t e = 0; e < 150; ++e)
                if (e % 4 == 0) o[256 + n[1]++] = x[256 + 64 * r + e];
        for (uint32_t r = 0; r < 2; ++r)
            for (uint32_t l = 0; l < 64; ++l)
                if ((kGatherBits[8 * r + l / 32] >> (l % 32)) & 1u) o[640 + n[2]++] = x[512 + 128 * r + l];
        for (uint32_t i = 0; i < 3; ++i) o[1000 + i] = static_cast<float>(n[i]);
    };
    e["index"] = [](const std::vector<float>&, std::vector<float>& o) {
        o.assign(kN, 0.0f);
        for (uint32_t i = 0; i < 300; ++i) o[i] = -7.0f + static_cast<float>(i);
        for (uint32_t r = 0; r < 3; ++r)
            for (uint32_t l = 0; l < 16; ++l) o[512 + r * 32 + l] = 1000.0f + static_cast<float>(r * 64 + l);
    };
    e["list"] = [](const std::vector<float>& x, std::vector<float>& o) {
        o.assign(kN, 0.0f);
        const float head[] = {2, 3, 7, 2, 3, 4, 1, 9, 1024};
        for (uint32_t i = 0; i < 9; ++i) o[i] = head[i];
        for (uint32_t i = 0; i < 512; ++i) o[512 + i] = x[i];
    };
    e["init_output"] = [](const std::vector<float>& x, std::vector<float>& o) {
        o = x;
        for (uint32_t i = 0; i < 1000; ++i) o[i] = 3.5f;
    };
    e["bufpool"] = [](const std::vector<float>& x, std::vector<float>& o) {
        o.resize(kN);
        for (uint32_t i = 0; i < kN; ++i) o[i] = i < kN / 2 ? 2.0f * x[i] + 1.0f : x[i] + 1.0f;
    };
    return e;
}

bool same(float a, float b) {
    if (a == b) return true;
    uint32_t ua, ub;
    std::memcpy(&ua, &a, 4);
    std::memcpy(&ub, &b, 4);
    return ua == ub || std::fabs(a - b) <= 1e-5f * std::max(1.0f, std::fabs(b));
}

}  // namespace

int sort_family(const std::string& name);  // conformance_sort.cpp
int cube_family(const std::string& name);  // conformance_cube.cpp
int int4_family(const std::string& name);  // conformance_int4.cpp
int load3d_family(const std::string& name);  // conformance_load3d.cpp
int fixpipe_family(const std::string& name);  // conformance_fixpipe.cpp
int quant_family(const std::string& name);  // conformance_quant.cpp
int catlass_family(const std::string& name);  // conformance_catlass.cpp
int select_family(const std::string& name);  // conformance_select.cpp
int matmul_family(const std::string& name);  // conformance_matmul.cpp
int matmul_more_family(const std::string& name);  // conformance_matmul_more.cpp
int matmul_forms_family(const std::string& name);  // conformance_matmul_forms.cpp
int softmax_family(const std::string& name);  // conformance_softmax.cpp
int activation_family(const std::string& name);  // conformance_activation.cpp
int norm_family(const std::string& name);  // conformance_norm.cpp
int sort_adv_family(const std::string& name);  // conformance_sort_adv.cpp
int math_family(const std::string& name);  // conformance_math.cpp
int layout_family(const std::string& name);  // conformance_layout.cpp
int transdata_family(const std::string& name);  // conformance_layout.cpp
int softmax_v3_family(const std::string& name);  // conformance_softmax_v3.cpp
int norm_more_family(const std::string& name);  // conformance_norm_more.cpp
int trans5hd_family(const std::string& name);  // conformance_trans5hd.cpp
int sparse_family(const std::string& name);  // conformance_sparse.cpp
int trig_family(const std::string& name);  // conformance_trig.cpp

int main(int argc, char* argv[]) {
    g_family = argc > 1 ? argv[1] : "";
    if (const int rc = sort_family(g_family); rc >= 0) return rc;
    if (const int rc = cube_family(g_family); rc >= 0) return rc;
    if (const int rc = int4_family(g_family); rc >= 0) return rc;
    if (const int rc = load3d_family(g_family); rc >= 0) return rc;
    if (const int rc = fixpipe_family(g_family); rc >= 0) return rc;
    if (const int rc = quant_family(g_family); rc >= 0) return rc;
    if (const int rc = catlass_family(g_family); rc >= 0) return rc;
    if (const int rc = select_family(g_family); rc >= 0) return rc;
    if (const int rc = matmul_family(g_family); rc >= 0) return rc;
    if (const int rc = matmul_more_family(g_family); rc >= 0) return rc;
    if (const int rc = matmul_forms_family(g_family); rc >= 0) return rc;
    if (const int rc = softmax_family(g_family); rc >= 0) return rc;
    if (const int rc = activation_family(g_family); rc >= 0) return rc;
    if (const int rc = norm_family(g_family); rc >= 0) return rc;
    if (const int rc = sort_adv_family(g_family); rc >= 0) return rc;
    if (const int rc = math_family(g_family); rc >= 0) return rc;
    if (const int rc = layout_family(g_family); rc >= 0) return rc;
    if (const int rc = transdata_family(g_family); rc >= 0) return rc;
    if (const int rc = softmax_v3_family(g_family); rc >= 0) return rc;
    if (const int rc = norm_more_family(g_family); rc >= 0) return rc;
    if (const int rc = trans5hd_family(g_family); rc >= 0) return rc;
    if (const int rc = sparse_family(g_family); rc >= 0) return rc;
    if (const int rc = trig_family(g_family); rc >= 0) return rc;
    const auto exp = expectations();
    if (g_family == "group") {
        float* yd = static_cast<float*>(AscendC::GmAlloc(kN * sizeof(float)));
        uint8_t* wd = static_cast<uint8_t*>(AscendC::GmAlloc(6 * 512));
        std::memset(yd, 0, kN * sizeof(float));
        std::memset(wd, 0, 6 * 512);
        AscendC::SetKernelMode(KernelMode::AIV_MODE);
        ICPU_RUN_KF(group_kernel, 8, (uint8_t*)yd, wd);
        bool good = true;
        for (uint32_t k = 2; k < 8; ++k) good = good && yd[8 + k] == 30.0f && yd[16 + k] == 300.0f;
        std::printf("group %s\n", good ? "ok" : "wrong: a waiter read before both arrivals");
        AscendC::GmFree(yd);
        AscendC::GmFree(wd);
        return good ? 0 : 1;
    }
    if (!exp.count(g_family) && g_family != "ibsync" && g_family != "determine") {
        std::fprintf(stderr, "ascendc_conformance: unknown family '%s'\n", g_family.c_str());
        return 2;
    }
    if (g_family == "ibsync" || g_family == "determine") {
        constexpr uint32_t kBlocks = 6;
        float* yd = static_cast<float*>(AscendC::GmAlloc(kN * sizeof(float)));
        uint8_t* fd = static_cast<uint8_t*>(AscendC::GmAlloc(2048 * sizeof(int32_t)));
        std::memset(yd, 0, kN * sizeof(float));
        std::memset(fd, 0, 2048 * sizeof(int32_t));
        AscendC::SetKernelMode(KernelMode::AIV_MODE);
        ICPU_RUN_KF(chain_kernel, kBlocks, (uint8_t*)yd, fd);
        bool good = true;
        for (uint32_t k = 0; k < kBlocks; ++k) good = good && yd[k] == static_cast<float>(k + 1);
        std::printf("%s %s\n", g_family.c_str(), good ? "ok" : "wrong: the blocks did not run in order");
        AscendC::GmFree(yd);
        AscendC::GmFree(fd);
        return good ? 0 : 1;
    }
    std::vector<float> x(kN);
    for (uint32_t i = 0; i < kN; ++i) x[i] = in_value(i);
    float* xd = static_cast<float*>(AscendC::GmAlloc(kN * sizeof(float)));
    float* yd = static_cast<float*>(AscendC::GmAlloc(kN * sizeof(float)));
    std::memcpy(xd, x.data(), kN * sizeof(float));
    std::memset(yd, 0, kN * sizeof(float));
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    uint64_t* list = nullptr;
    if (g_family == "bufpool") {
        ICPU_RUN_KF(bufpool_kernel, 1, (uint8_t*)xd, (uint8_t*)yd);
    } else if (g_family == "list") {
        // word 0: the pointers' byte offset; {dim 3 | index 7 << 32, 2, 3, 4}; {1 | 9 << 32, 1024}
        list = static_cast<uint64_t*>(AscendC::GmAlloc(9 * sizeof(uint64_t)));
        const uint64_t words[] = {7 * 8, 3 | 7ull << 32, 2, 3, 4, 1 | 9ull << 32, 1024,
                                  reinterpret_cast<uintptr_t>(yd), reinterpret_cast<uintptr_t>(xd)};
        std::memcpy(list, words, sizeof words);
        ICPU_RUN_KF(list_kernel, 1, (uint8_t*)list, (uint8_t*)yd);
    } else {
        ICPU_RUN_KF(conformance_kernel, 1, (uint8_t*)xd, (uint8_t*)yd);
    }
    std::vector<float> want;
    exp.at(g_family)(x, want);
    int bad = -1;
    for (uint32_t i = 0; i < kN && bad < 0; ++i)
        if (!same(yd[i], want[i])) bad = static_cast<int>(i);
    if (bad >= 0)
        std::printf("%s wrong: element %d is %g, expected %g\n", g_family.c_str(), bad, yd[bad], want[bad]);
    else
        std::printf("%s ok\n", g_family.c_str());
    AscendC::GmFree(xd);
    AscendC::GmFree(yd);
    if (list) AscendC::GmFree(list);
    return bad >= 0 ? 1 : 0;
}
