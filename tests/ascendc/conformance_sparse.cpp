// The conformance program's sparse family (tests/ascendc/conformance.cpp dispatches to it): "sparse" multiplies
// an int8 A (m 32 x k 128, ND; DataCopy with Nd2NzParams into L1, LoadData 2D into L0A) by a 4:2 sparse B given
// densified (k/2 x n 48 int8, in the fractal order L0B holds) with its 2-bit index (128 bytes per fractal), both
// moved GM -> L1 by DataCopy and L1 -> L0B by LoadDataWithSparse in two calls (startIndex 0 and 3; the second
// through a tensor re-pointed with SetAddr at `address_`, as catlass's tile copies do), then MmadWithSparse into
// int32 twice (the second accumulating) and Fixpipe to GM (ND). The host takes every group's two kept positions
// from the reference's selection table (the index pair's meaning, including the two rows that pick one element
// twice) and compares every int32 with twice the exact sum.
// "sparse_mm": the high-level Matmul with a SparseMatmulType B (int8, transposed: the densified n x k/2 in GM) and
// its index (SetSparseIndex, NZ), m 32 x n 64 x k 128 on one core with base blocks 32 x 32 x 64 (two N blocks, two
// K steps: the index's k-group and band offsets) and an int32 bias; every int32 against the exact sum.
#include <cstdio>
#include <cstring>
#include <string>

#include "kernel_tiling/kernel_tiling.h"
#include "lib/matmul_intf.h"
#include "tikicpulib.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"

namespace {

constexpr uint32_t kM = 32, kK = 128, kN = 48, kD = kK / 2;  // kD: B's dense rows
constexpr uint32_t kN1 = kN / 16, kFr = (kD / 32) * kN1;       // B fractals (32 dense k x 16 n each)

// The reference's table: index pair (i0, i1) -> the kept positions (x, y) in a group of four.
struct Pick {
    uint8_t i0, i1, x, y;
};
constexpr Pick kTable[8] = {{2, 2, 2, 3}, {1, 2, 1, 3}, {0, 2, 0, 3}, {1, 1, 1, 2},
                            {0, 1, 0, 2}, {0, 0, 0, 1}, {2, 0, 2, 2}, {1, 0, 1, 1}};

int8_t a_val(uint32_t i, uint32_t k) { return static_cast<int8_t>(static_cast<int>((i * 7 + k * 5) % 29) - 14); }
int8_t d_val(uint32_t d, uint32_t j) { return static_cast<int8_t>(static_cast<int>((d * 11 + j * 3) % 17) - 8); }
const Pick& pick(uint32_t g, uint32_t j) { return kTable[(g * 5 + j * 3) % 8]; }
// Byte offset of dense element (d, j) in B's fractal order (fractal (d / 32, j / 16), rows of 32 k per n).
uint32_t b_off(uint32_t d, uint32_t j) { return ((d / 32) * kN1 + j / 16) * 512 + (j % 16) * 32 + d % 32; }

}  // namespace

extern "C" __global__ __aicore__ void sparse_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR idx, GM_ADDR y) {
    AscendC::GlobalTensor<int8_t> ag, bg;
    AscendC::GlobalTensor<uint8_t> ig;
    AscendC::GlobalTensor<int32_t> yg;
    ag.SetGlobalBuffer((__gm__ int8_t*)a, kM * kK);
    bg.SetGlobalBuffer((__gm__ int8_t*)b, kFr * 512);
    ig.SetGlobalBuffer((__gm__ uint8_t*)idx, kFr * 128);
    yg.SetGlobalBuffer((__gm__ int32_t*)y, kM * kN);
    AscendC::LocalTensor<int8_t> a1(AscendC::TPosition::A1, 0, kM * kK);
    AscendC::LocalTensor<int8_t> b1(AscendC::TPosition::B1, kM * kK, kFr * 512);
    AscendC::LocalTensor<uint8_t> i1(AscendC::TPosition::B1, kM * kK + kFr * 512, kFr * 128);
    AscendC::LocalTensor<int8_t> a2(AscendC::TPosition::A2, 0, kM * kK);
    AscendC::LocalTensor<int8_t> b2(AscendC::TPosition::B2, 0, kFr * 512);
    AscendC::LocalTensor<int32_t> c(AscendC::TPosition::CO1, 0, kM * kN);
    AscendC::Nd2NzParams pa;
    pa.ndNum = 1, pa.nValue = kM, pa.dValue = kK, pa.srcDValue = kK, pa.dstNzC0Stride = kM, pa.dstNzNStride = 1;
    AscendC::DataCopy(a1, ag, pa);
    AscendC::DataCopy(b1, bg, kFr * 512);
    AscendC::DataCopy(i1, ig, kFr * 128);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    AscendC::LoadData2DParams la;  // NZ -> ZZ: per 16-row block, its k fractals
    la.repeatTimes = kK / 32, la.srcStride = kM / 16;
    for (uint32_t i = 0; i < kM / 16; ++i) AscendC::LoadData(a2[i * (kK / 32) * 512], a1[i * 512], la);
    AscendC::LoadData2dParams lb;
    lb.startIndex = 0, lb.repeatTimes = 3;
    AscendC::LoadDataWithSparse(b2, b1, i1, lb);
    AscendC::LocalTensor<int8_t> rest;  // the rest of L0B, as catlass builds its tile tensors
    rest.SetAddr(b2[3 * 512].address_);
    lb.startIndex = 3, lb.repeatTimes = kFr - 3;
    AscendC::LoadDataWithSparse(rest, b1, i1, lb);
    AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
    AscendC::MmadParams mp;
    mp.m = kM, mp.n = kN, mp.k = kK;
    AscendC::MmadWithSparse(c, a2, b2, mp);
    mp.cmatrixInitVal = false;
    AscendC::MmadWithSparse(c, a2, b2, mp);
    AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
    AscendC::FixpipeParamsV220 nd;
    nd.nSize = kN, nd.mSize = kM, nd.srcStride = kM, nd.dstStride = kN;
    AscendC::Fixpipe<int32_t, int32_t, AscendC::CFG_ROW_MAJOR>(yg, c, nd);
}

// ---- "sparse_mm": the high-level Matmul with a SparseMatmulType B ----
namespace {

constexpr uint32_t kSm = 32, kSn = 64, kSk = 128;  // two N blocks and two K steps of the tiling below

int32_t bias_val(uint32_t j) { return static_cast<int32_t>(j % 7) - 3; }
// The index pairs of the Matmul's B: no period across its k-groups and 16-column bands (so a block reading another
// block's index fractals gets other selections).
const Pick& pick_mm(uint32_t g, uint32_t j) { return kTable[(g * 7 + j * 13 + (g * j) % 5) % 8]; }

using SparseMM = AscendC::Matmul<
    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, int8_t>,
    AscendC::SparseMatmulType<AscendC::TPosition::GM, AscendC::TPosition::GM, CubeFormat::ND, int8_t, true>,
    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, int32_t>,
    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, int32_t>, CFG_MDL>;

}  // namespace

extern "C" __global__ __aicore__ void sparse_mm_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR idx, GM_ADDR bias, GM_ADDR y,
                                                        GM_ADDR tilingGm) {
    TCubeTiling t;
    uint32_t* w = reinterpret_cast<uint32_t*>(&t);
    for (uint32_t i = 0; i < sizeof(TCubeTiling) / 4; ++i) w[i] = reinterpret_cast<__gm__ uint32_t*>(tilingGm)[i];
    AscendC::TPipe pipe;
    SparseMM mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    AscendC::GlobalTensor<int8_t> ag, bg;
    AscendC::GlobalTensor<uint8_t> ig;
    AscendC::GlobalTensor<int32_t> biasg, yg;
    ag.SetGlobalBuffer((__gm__ int8_t*)a, kSm * kSk);
    bg.SetGlobalBuffer((__gm__ int8_t*)b, kSn * kSk / 2);
    ig.SetGlobalBuffer((__gm__ uint8_t*)idx, kSn * kSk / 8);
    biasg.SetGlobalBuffer((__gm__ int32_t*)bias, kSn);
    yg.SetGlobalBuffer((__gm__ int32_t*)y, kSm * kSn);
    mm.SetTensorA(ag);
    mm.SetTensorB(bg, true);
    mm.SetSparseIndex(ig);
    mm.SetBias(biasg);
    mm.IterateAll(yg);
    mm.End();
}

namespace {

int sparse_mm_family() {
    // The tiling: one core, base blocks 32 x 32 x 64 (SetSparse: baseK a multiple of 64).
    auto* plat = platform_ascendc::PlatformAscendCManager::GetInstance();
    matmul_tiling::MatmulApiTiling api(*plat);
    using matmul_tiling::DataType, matmul_tiling::TPosition;
    using MF = matmul_tiling::CubeFormat;
    api.SetAType(TPosition::GM, MF::ND, DataType::DT_INT8, false);
    api.SetBType(TPosition::GM, MF::ND, DataType::DT_INT8, true);
    api.SetCType(TPosition::GM, MF::ND, DataType::DT_INT32);
    api.SetBiasType(TPosition::GM, MF::ND, DataType::DT_INT32);
    api.SetOrgShape(kSm, kSn, kSk);
    api.SetShape(kSm, kSn, kSk);
    api.EnableBias(true);
    api.SetSparse(true);
    api.SetFixSplit(32, 32, 64);
    api.SetBufferSpace(-1, -1, -1);
    optiling::TCubeTiling data;
    if (api.GetTiling(data) != 0 || data.get_baseM() != 32 || data.get_baseN() != 32 || data.get_baseK() != 64 ||
        data.get_singleCoreN() != static_cast<int32_t>(kSn) || data.get_singleCoreK() != static_cast<int32_t>(kSk)) {
        std::printf("sparse_mm wrong: the tiling is not 32 x 32 x 64 blocks of one core's %u x %u x %u (base %d x %d x %d, "
                    "single %d x %d x %d)\n", kSm, kSn, kSk, data.get_baseM(), data.get_baseN(), data.get_baseK(),
                    data.get_singleCoreM(), data.get_singleCoreN(), data.get_singleCoreK());
        return 1;
    }
    // The densified B (n x k/2, row-major: B transposed) and its index as NZ: (k/64, n/16, 16, 8) bytes.
    int8_t* ad = static_cast<int8_t*>(AscendC::GmAlloc(kSm * kSk));
    int8_t* bd = static_cast<int8_t*>(AscendC::GmAlloc(kSn * kSk / 2));
    uint8_t* id = static_cast<uint8_t*>(AscendC::GmAlloc(kSn * kSk / 8));
    int32_t* biasd = static_cast<int32_t*>(AscendC::GmAlloc(kSn * 4));
    int32_t* yd = static_cast<int32_t*>(AscendC::GmAlloc(kSm * kSn * 4));
    uint8_t* td = static_cast<uint8_t*>(AscendC::GmAlloc(data.GetDataSize()));
    data.SaveToBuffer(td, data.GetDataSize());
    std::memset(id, 0, kSn * kSk / 8);
    for (uint32_t i = 0; i < kSm; ++i)
        for (uint32_t q = 0; q < kSk; ++q) ad[i * kSk + q] = a_val(i, q);
    for (uint32_t j = 0; j < kSn; ++j) {
        biasd[j] = bias_val(j);
        for (uint32_t d = 0; d < kSk / 2; ++d) {
            bd[j * (kSk / 2) + d] = d_val(d, j);
            const Pick& p = pick_mm(d / 2, j);
            const uint32_t byte = ((d / 32) * (kSn / 16) + j / 16) * 128 + (j % 16) * 8 + (d % 32) / 4;
            id[byte] = static_cast<uint8_t>(id[byte] | ((d % 2 ? p.i1 : p.i0) << (2 * (d % 4))));
        }
    }
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(sparse_mm_kernel, 1, (uint8_t*)ad, (uint8_t*)bd, id, (uint8_t*)biasd, (uint8_t*)yd, td);
    int bad = -1;
    int32_t want = 0;
    for (uint32_t e = 0; e < kSm * kSn && bad < 0; ++e) {
        const uint32_t i = e / kSn, j = e % kSn;
        want = bias_val(j);
        for (uint32_t g = 0; g < kSk / 4; ++g) {
            const Pick& p = pick_mm(g, j);
            want += a_val(i, 4 * g + p.x) * d_val(2 * g, j) + a_val(i, 4 * g + p.y) * d_val(2 * g + 1, j);
        }
        if (yd[e] != want) bad = static_cast<int>(e);
    }
    if (bad >= 0)
        std::printf("sparse_mm wrong: element %d is %d, expected %d\n", bad, yd[bad], want);
    else
        std::printf("sparse_mm ok\n");
    for (void* p : {static_cast<void*>(ad), static_cast<void*>(bd), static_cast<void*>(id),
                    static_cast<void*>(biasd), static_cast<void*>(yd), static_cast<void*>(td)})
        AscendC::GmFree(p);
    return bad >= 0 ? 1 : 0;
}

}  // namespace

int sparse_family(const std::string& name) {
    if (name == "sparse_mm") return sparse_mm_family();
    if (name != "sparse") return -1;
    int8_t* ad = static_cast<int8_t*>(AscendC::GmAlloc(kM * kK));
    int8_t* bd = static_cast<int8_t*>(AscendC::GmAlloc(kFr * 512));
    uint8_t* id = static_cast<uint8_t*>(AscendC::GmAlloc(kFr * 128));
    int32_t* yd = static_cast<int32_t*>(AscendC::GmAlloc(kM * kN * 4));
    std::memset(bd, 0, kFr * 512);
    std::memset(id, 0, kFr * 128);
    for (uint32_t i = 0; i < kM; ++i)
        for (uint32_t q = 0; q < kK; ++q) ad[i * kK + q] = a_val(i, q);
    for (uint32_t d = 0; d < kD; ++d)
        for (uint32_t j = 0; j < kN; ++j) {
            const uint32_t o = b_off(d, j);
            bd[o] = d_val(d, j);
            const Pick& p = pick(d / 2, j);
            id[o / 4] = static_cast<uint8_t>(id[o / 4] | ((d % 2 ? p.i1 : p.i0) << (2 * (o % 4))));
        }
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(sparse_kernel, 1, (uint8_t*)ad, (uint8_t*)bd, id, (uint8_t*)yd);
    int bad = -1;
    int32_t want = 0;
    for (uint32_t e = 0; e < kM * kN && bad < 0; ++e) {
        const uint32_t i = e / kN, j = e % kN;
        want = 0;
        for (uint32_t g = 0; g < kK / 4; ++g) {
            const Pick& p = pick(g, j);
            want += a_val(i, 4 * g + p.x) * d_val(2 * g, j) + a_val(i, 4 * g + p.y) * d_val(2 * g + 1, j);
        }
        want *= 2;
        if (yd[e] != want) bad = static_cast<int>(e);
    }
    if (bad >= 0)
        std::printf("sparse wrong: element %d is %d, expected %d\n", bad, yd[bad], want);
    else
        std::printf("sparse ok\n");
    AscendC::GmFree(ad);
    AscendC::GmFree(bd);
    AscendC::GmFree(id);
    AscendC::GmFree(yd);
    return bad >= 0 ? 1 : 0;
}
