// The conformance program's high-level Matmul families (tests/ascendc/conformance.cpp runs them). The host
// tiling API (MultiCoreMatmulTiling / MatmulApiTiling, GetTiling into optiling::TCubeTiling, saved to bytes
// the kernel copies) tiles each shape for the running chip; the kernel runs AscendC::Matmul on the cube
// cores; the host computes C with integer-valued data (every product and sum exact in fp32) and compares
// every element.
// "matmul": C = A x B + bias, half -> float, M 100 N 200 K 150 (no dimension a multiple of 16) over
// several cores with SetTail for the edge blocks, A and B not transposed, IterateAll to ND.
// "matmul_trans": A and B transposed (stored K x M and N x K), no bias, half -> half C, one core
// (MatmulApiTiling), Iterate + GetTensorC block by block, the traversal N first (SetTraverse FIRSTN).
// "matmul_nz": C in NZ (column groups of 16 with all rows), float, a tiling with small fixed base blocks
// (SetFixSplit 32 x 48 x 32: several blocks and K slices per core).
// "raw_gm": a kernel reads aclrtMalloc memory through a plain __gm__ pointer (the vendor examples' tiling
// copy) and writes what it read through a GlobalTensor; "raw_gm_store" stores through such a pointer: the
// run stops, exit 2, naming the store.
// "matmul_bad_tiling": the "matmul" run with a tiling whose baseM is no multiple of 16: Init stops the run
// naming the field, exit 2.
// "matmul_batch": IterateBatch (NORMAL layout) of three matmuls with BatchMatmulTiling (below).
// "matmul_mix": the "matmul" kernel launched as a mix kernel (half as many blocks: each AIV takes a tile, as
// GetBlockIdx numbers it), ASCENDC_CUBE_ONLY not defined: the AIVs' Matmuls are served by their AIC.
// "matmul_partial": a mix kernel (one AIC and its two AIVs) whose Matmul has isPartialOutput: C = A x B,
// M 32 N 48 K 96 in base blocks of 32 x 48 x 32 (SetFixSplit), each Iterate one K step's product alone,
// GetTensorC packed into a GM workspace (3 slices); the AIV then (after its End, which waits for the AIC
// that served it) sums the slices with the operator form (dst = a + b) into C. The host checks every slice
// against its K range's sum and C against the whole product (without the wait the AIV would read zeros).
// "matmul_tiling": the tiling rules on many shapes and types: base blocks aligned and within L0A/L0B/L0C
// (double-buffered as dbL0A/B/C say) and the bias table, the L1 buffers within L1, the cores used within
// SetDim and the single-core shapes covering the shape.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "matmul_host.h"
#include "kernel_tiling/kernel_tiling.h"
#include "lib/matmul_intf.h"
#include "tikicpulib.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"

namespace {

std::string g_mm_family;

float a_value(uint32_t i, uint32_t k) {
    return static_cast<float>(static_cast<int>((i * 7 + k * 3) % 9) - 4);
}
float b_value(uint32_t k, uint32_t j) {
    return static_cast<float>(static_cast<int>((k * 5 + j * 11) % 7) - 3);
}

struct Shape {
    uint32_t m, n, k;
    bool transA, transB, bias;
};

template <class C, CubeFormat CF, bool TRANS>
using MM = AscendC::Matmul<AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half, TRANS>,
                           AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half, TRANS>,
                           AscendC::MatmulType<AscendC::TPosition::GM, CF, C>,
                           AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>, CFG_NORM>;

// Each block takes its (M, N) tile of C from the tiling, as the vendor's examples do.
template <class C, CubeFormat CF, bool TRANS>
void run_block(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR tilingGm, bool iterate) {
    TCubeTiling t;
    uint32_t* w = reinterpret_cast<uint32_t*>(&t);
    for (uint32_t i = 0; i < sizeof(TCubeTiling) / 4; ++i)
        w[i] = reinterpret_cast<__gm__ uint32_t*>(tilingGm)[i];
    AscendC::TPipe pipe;
    MM<C, CF, TRANS> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    if (AscendC::GetBlockIdx() >= t.usedCoreNum) return;  // mix mode: an AIV past the tiles
    const int32_t mBlocks = (t.M + t.singleCoreM - 1) / t.singleCoreM;
    const int32_t mi = static_cast<int32_t>(AscendC::GetBlockIdx()) % mBlocks;
    const int32_t ni = static_cast<int32_t>(AscendC::GetBlockIdx()) / mBlocks;
    AscendC::GlobalTensor<half> ag, bg;
    AscendC::GlobalTensor<float> biasg;
    AscendC::GlobalTensor<C> cg;
    ag.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(a), t.M * t.Ka);
    bg.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(b), t.Kb * t.N);
    cg.SetGlobalBuffer(reinterpret_cast<__gm__ C*>(c), (t.M + 15) / 16 * 16 * ((t.N + 15) / 16 * 16));
    const int64_t offA = TRANS ? mi * t.singleCoreM : int64_t{mi} * t.singleCoreM * t.Ka;
    const int64_t offB = TRANS ? int64_t{ni} * t.singleCoreN * t.Kb : ni * t.singleCoreN;
    const int64_t offC = CF == CubeFormat::NZ
                             ? int64_t{ni} * t.singleCoreN * ((t.M + 15) / 16 * 16) + mi * t.singleCoreM * 16
                             : int64_t{mi} * t.singleCoreM * t.N + ni * t.singleCoreN;
    const int32_t tailM = std::min(t.singleCoreM, t.M - mi * t.singleCoreM);
    const int32_t tailN = std::min(t.singleCoreN, t.N - ni * t.singleCoreN);
    if (tailM < t.singleCoreM || tailN < t.singleCoreN) mm.SetTail(tailM, tailN);
    mm.SetTensorA(ag[offA], TRANS);
    mm.SetTensorB(bg[offB], TRANS);
    if (t.isBias) {
        biasg.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(bias), t.N);
        mm.SetBias(biasg[ni * t.singleCoreN]);
    }
    if (iterate) {
        while (mm.Iterate()) mm.GetTensorC(cg[offC]);
    } else {
        mm.IterateAll(cg[offC]);
    }
    mm.End();
}

void mm_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR tiling) {
    if (g_mm_family == "matmul")
        run_block<float, CubeFormat::ND, false>(a, b, bias, c, tiling, false);
    else if (g_mm_family == "matmul_trans")
        run_block<half, CubeFormat::ND, true>(a, b, bias, c, tiling, true);
    else
        run_block<float, CubeFormat::NZ, false>(a, b, bias, c, tiling, false);
}

template <class T>
T* gm_alloc(size_t n) {
    T* p = static_cast<T*>(AscendC::GmAlloc(n * sizeof(T)));
    std::memset(p, 0, n * sizeof(T));
    return p;
}

constexpr uint32_t kPm = 32, kPn = 48, kPk = 96, kPbk = 32, kPsteps = kPk / kPbk;
constexpr MatmulConfig partial_cfg() {
    MatmulConfig c = CFG_NORM;
    c.isPartialOutput = true;
    return c;
}
constexpr MatmulConfig kPartialCfg = partial_cfg();
void partial_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR ws, GM_ADDR c, GM_ADDR tilingGm) {
    TCubeTiling t;
    uint32_t* w = reinterpret_cast<uint32_t*>(&t);
    for (uint32_t i = 0; i < sizeof(TCubeTiling) / 4; ++i)
        w[i] = reinterpret_cast<__gm__ uint32_t*>(tilingGm)[i];
    AscendC::TPipe pipe;
    AscendC::Matmul<AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>, kPartialCfg>
        mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    if (AscendC::GetBlockIdx() != 0) return;  // one AIV's work
    AscendC::GlobalTensor<half> ag, bg;
    AscendC::GlobalTensor<float> wg, cg;
    ag.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(a), kPm * kPk);
    bg.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(b), kPk * kPn);
    wg.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws), kPsteps * kPm * kPn);
    cg.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(c), kPm * kPn);
    mm.SetTensorA(ag);
    mm.SetTensorB(bg);
    uint32_t off = 0;
    while (mm.Iterate()) {
        mm.GetTensorC(wg[off], 0, true);
        off += kPm * kPn;
    }
    mm.End();
    AscendC::TBuf<AscendC::TPosition::VECCALC> sumBuf, tmpBuf;
    pipe.InitBuffer(sumBuf, kPm * kPn * sizeof(float));
    pipe.InitBuffer(tmpBuf, kPm * kPn * sizeof(float));
    AscendC::LocalTensor<float> sum = sumBuf.Get<float>(), tmp = tmpBuf.Get<float>();
    AscendC::DataCopy(sum, wg, kPm * kPn);
    for (uint32_t s = 1; s < kPsteps; ++s) {
        AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVENT_ID0);
        AscendC::DataCopy(tmp, wg[s * kPm * kPn], kPm * kPn);
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
        sum = sum + tmp;
    }
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(cg, sum, kPm * kPn);
}

int run_partial(const std::string& name) {
    using matmul_tiling::DataType;
    using MF = matmul_tiling::CubeFormat;
    using TP = matmul_tiling::TPosition;
    mm_host::HostRun r(name);
    if (!r.tile({.a = {TP::GM, MF::ND, DataType::DT_FLOAT16},
                 .b = {TP::GM, MF::ND, DataType::DT_FLOAT16},
                 .c = {TP::GM, MF::ND, DataType::DT_FLOAT},
                 .bias = {TP::GM, MF::ND, DataType::DT_FLOAT},
                 .org_m = kPm, .org_n = kPn, .org_k = kPk,
                 .m = kPm, .n = kPn, .k = kPk,
                 .with_bias = false,
                 .base_m = kPm, .base_n = kPn, .base_k = kPbk}))
        return 1;
    half* a = r.gm<half>(kPm * kPk);
    half* b = r.gm<half>(kPk * kPn);
    float* ws = r.gm<float>(kPsteps * kPm * kPn);
    float* c = r.gm<float>(kPm * kPn);
    uint8_t* tiling = r.tiling_gm();
    for (uint32_t i = 0; i < kPm; ++i)
        for (uint32_t k = 0; k < kPk; ++k) a[i * kPk + k] = half(a_value(i, k));
    for (uint32_t k = 0; k < kPk; ++k)
        for (uint32_t j = 0; j < kPn; ++j) b[k * kPn + j] = half(b_value(k, j));
    AscendC::SetKernelMode(KernelMode::MIX_MODE);
    ICPU_RUN_KF(partial_kernel, 1, (uint8_t*)a, (uint8_t*)b, (uint8_t*)ws, (uint8_t*)c, tiling);
    // Each K step's product alone in its slice of the workspace; C their sum.
    auto part = [&](uint32_t s, uint32_t i, uint32_t j) {
        float sum = 0;
        for (uint32_t k = s * kPbk; k < (s + 1) * kPbk; ++k) sum += a_value(i, k) * b_value(k, j);
        return sum;
    };
    for (uint32_t s = 0; s < kPsteps; ++s)
        r.compare("slice " + std::to_string(s) + " ", kPm, kPn,
                  [&](uint32_t i, uint32_t j) { return ws[s * kPm * kPn + i * kPn + j]; },
                  [&](uint32_t i, uint32_t j) { return part(s, i, j); });
    r.compare("C", kPm, kPn, [&](uint32_t i, uint32_t j) { return c[i * kPn + j]; },
              [&](uint32_t i, uint32_t j) {
                  float whole = 0;
                  for (uint32_t s = 0; s < kPsteps; ++s) whole += part(s, i, j);
                  return whole;
              });
    return r.verdict();
}

void raw_kernel(GM_ADDR src, GM_ADDR dst) {
    AscendC::GlobalTensor<uint32_t> out;
    out.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t*>(dst), 64);
    const __gm__ uint32_t* words = reinterpret_cast<__gm__ uint32_t*>(src);
    for (uint32_t i = 0; i < 64; ++i) out.SetValue(i, words[i] * 3u + 1u);
    if (g_mm_family == "raw_gm_store") reinterpret_cast<__gm__ uint32_t*>(src)[0] = 7;
}

int run_raw(const std::string& name) {
    void *src = nullptr, *dst = nullptr;
    uint32_t host[64], back[64] = {};
    for (uint32_t i = 0; i < 64; ++i) host[i] = i * 1000u + 17u;
    aclrtMalloc(&src, sizeof host, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&dst, sizeof host, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(src, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(raw_kernel, 1, (uint8_t*)src, (uint8_t*)dst);
    aclrtMemcpy(back, sizeof back, dst, sizeof back, ACL_MEMCPY_DEVICE_TO_HOST);
    int bad = -1;
    for (uint32_t i = 0; i < 64 && bad < 0; ++i)
        if (back[i] != host[i] * 3u + 1u) bad = static_cast<int>(i);
    if (bad >= 0)
        std::printf("%s wrong: word %d is %u, expected %u\n", name.c_str(), bad, back[bad],
                    host[bad] * 3u + 1u);
    else
        std::printf("%s ok\n", name.c_str());
    aclrtFree(src);
    aclrtFree(dst);
    return bad >= 0 ? 1 : 0;
}

int64_t make_tiling(const Shape& s, bool single, matmul_tiling::DataType ct, int32_t fix, TCubeTiling& out) {
    using matmul_tiling::DataType, matmul_tiling::TPosition, matmul_tiling::MatrixTraverse;
    using matmul_tiling::MultiCoreMatmulTiling, matmul_tiling::MatmulApiTiling,
        matmul_tiling::MatmulApiTilingBase;
    using MF = matmul_tiling::CubeFormat;
    auto* plat = platform_ascendc::PlatformAscendCManager::GetInstance();
    MultiCoreMatmulTiling multi(*plat);
    MatmulApiTiling one(*plat);
    MatmulApiTilingBase& api = single ? static_cast<MatmulApiTilingBase&>(one) : multi;
    multi.SetDim(static_cast<int32_t>(plat->GetCoreNumAic()));
    api.SetAType(TPosition::GM, MF::ND, DataType::DT_FLOAT16, s.transA);
    api.SetBType(TPosition::GM, MF::ND, DataType::DT_FLOAT16, s.transB);
    api.SetCType(TPosition::GM, MF::ND, ct);
    api.SetBiasType(TPosition::GM, MF::ND, DataType::DT_FLOAT);
    api.SetOrgShape(s.m, s.n, s.k);
    api.SetShape(s.m, s.n, s.k);
    api.EnableBias(s.bias);
    if (single) api.SetTraverse(MatrixTraverse::FIRSTN);
    if (fix) api.SetFixSplit(32, 48, 32);
    api.SetBufferSpace(-1, -1, -1);
    optiling::TCubeTiling data;
    const int64_t rc = api.GetTiling(data);
    std::vector<uint8_t> bytes(data.GetDataSize());
    data.SaveToBuffer(bytes.data(), bytes.size());
    std::memcpy(&out, bytes.data(), sizeof out);
    return rc;
}

int run_matmul(const std::string& name) {
    const bool trans = name == "matmul_trans", nz = name == "matmul_nz", mix = name == "matmul_mix";
    if (name == "matmul_bad_tiling" || mix) g_mm_family = "matmul";
    const Shape s = trans ? Shape{100, 72, 90, true, true, false} : Shape{100, 200, 150, false, false, !nz};
    TCubeTiling t;
    if (make_tiling(s, trans, trans ? matmul_tiling::DataType::DT_FLOAT16 : matmul_tiling::DataType::DT_FLOAT,
                    nz, t) != 0) {
        std::printf("%s wrong: GetTiling failed\n", name.c_str());
        return 1;
    }
    if (name == "matmul_bad_tiling") t.baseM = 20;
    const uint32_t mPad = (s.m + 15) / 16 * 16;
    half* a = gm_alloc<half>(s.m * s.k);
    half* b = gm_alloc<half>(s.k * s.n);
    float* bias = gm_alloc<float>(s.n);
    float* c = gm_alloc<float>(mPad * ((s.n + 15) / 16 * 16));  // NZ: whole 16-column groups
    uint8_t* tiling = gm_alloc<uint8_t>(sizeof t);
    std::memcpy(tiling, &t, sizeof t);
    for (uint32_t i = 0; i < s.m; ++i)
        for (uint32_t k = 0; k < s.k; ++k) a[s.transA ? k * s.m + i : i * s.k + k] = half(a_value(i, k));
    for (uint32_t k = 0; k < s.k; ++k)
        for (uint32_t j = 0; j < s.n; ++j) b[s.transB ? j * s.k + k : k * s.n + j] = half(b_value(k, j));
    for (uint32_t j = 0; j < s.n; ++j) bias[j] = static_cast<float>(static_cast<int>(j % 13) - 6);
    // mix mode (this source does not define ASCENDC_CUBE_ONLY): each AIV's tile is computed by its AIC
    AscendC::SetKernelMode(mix ? KernelMode::MIX_MODE : KernelMode::AIC_MODE);
    ICPU_RUN_KF(mm_kernel, mix ? (t.usedCoreNum + 1) / 2 : t.usedCoreNum, (uint8_t*)a, (uint8_t*)b, (uint8_t*)bias,
                (uint8_t*)c, tiling);
    int bad = -1;
    float got = 0, want = 0;
    for (uint32_t i = 0; i < s.m && bad < 0; ++i)
        for (uint32_t j = 0; j < s.n && bad < 0; ++j) {
            want = s.bias ? bias[j] : 0.0f;
            for (uint32_t k = 0; k < s.k; ++k) want += a_value(i, k) * b_value(k, j);
            if (trans)
                got = static_cast<float>(reinterpret_cast<half*>(c)[i * s.n + j]);
            else
                got = nz ? c[(j / 16) * mPad * 16 + i * 16 + j % 16] : c[i * s.n + j];
            if (got != want) bad = static_cast<int>(i * s.n + j);
        }
    if (bad >= 0)
        std::printf("%s wrong: C[%d][%d] is %g, expected %g (cores %d, base %d x %d x %d)\n", name.c_str(),
                    bad / static_cast<int>(s.n), bad % static_cast<int>(s.n), got, want, t.usedCoreNum,
                    t.baseM, t.baseN, t.baseK);
    else
        std::printf("%s ok\n", name.c_str());
    for (void* p : {static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(bias),
                    static_cast<void*>(c), static_cast<void*>(tiling)})
        AscendC::GmFree(p);
    return bad >= 0 ? 1 : 0;
}

// "matmul_batch": IterateBatch of 3 matmuls [32 x 64] x [64 x 48] + bias in the NORMAL layout (each matrix
// contiguous, the bias every matrix's), half -> float, one core, the tiling of BatchMatmulTiling
// (SetBatchInfoForNormal).
constexpr uint32_t kBatch = 3, kBm = 32, kBn = 48, kBk = 64;
using MMB = AscendC::Matmul<AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half, false, LayoutMode::NORMAL>,
                            AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half, false, LayoutMode::NORMAL>,
                            AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float, false, LayoutMode::NORMAL>,
                            AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>, CFG_NORM>;
void batch_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR tilingGm) {
    TCubeTiling t;
    uint32_t* w = reinterpret_cast<uint32_t*>(&t);
    for (uint32_t i = 0; i < sizeof(TCubeTiling) / 4; ++i) w[i] = reinterpret_cast<__gm__ uint32_t*>(tilingGm)[i];
    AscendC::TPipe pipe;
    MMB mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    AscendC::GlobalTensor<half> ag, bg;
    AscendC::GlobalTensor<float> biasg, cg;
    ag.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(a), kBatch * kBm * kBk);
    bg.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(b), kBatch * kBk * kBn);
    biasg.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(bias), kBn);
    cg.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(c), kBatch * kBm * kBn);
    mm.SetTensorA(ag, false);
    mm.SetTensorB(bg, false);
    mm.SetBias(biasg);
    mm.IterateBatch(cg, t.BatchNum, t.BatchNum, false);
    mm.End();
}
int run_batch(const std::string& name) {
    using matmul_tiling::DataType, matmul_tiling::TPosition;
    using MF = matmul_tiling::CubeFormat;
    auto* plat = platform_ascendc::PlatformAscendCManager::GetInstance();
    matmul_tiling::BatchMatmulTiling api(*plat);
    api.SetAType(TPosition::GM, MF::ND, DataType::DT_FLOAT16, false);
    api.SetBType(TPosition::GM, MF::ND, DataType::DT_FLOAT16, false);
    api.SetCType(TPosition::GM, MF::ND, DataType::DT_FLOAT);
    api.SetBiasType(TPosition::GM, MF::ND, DataType::DT_FLOAT);
    api.EnableBias(true);
    api.SetBatchInfoForNormal(kBatch, kBatch, kBm, kBn, kBk);
    optiling::TCubeTiling data;
    TCubeTiling t;
    if (api.GetTiling(data) != 0) {
        std::printf("%s wrong: GetTiling failed\n", name.c_str());
        return 1;
    }
    std::vector<uint8_t> bytes(data.GetDataSize());
    data.SaveToBuffer(bytes.data(), bytes.size());
    std::memcpy(&t, bytes.data(), sizeof t);
    half* a = gm_alloc<half>(kBatch * kBm * kBk);
    half* b = gm_alloc<half>(kBatch * kBk * kBn);
    float* bias = gm_alloc<float>(kBn);
    float* c = gm_alloc<float>(kBatch * kBm * kBn);
    uint8_t* tiling = gm_alloc<uint8_t>(sizeof t);
    std::memcpy(tiling, &t, sizeof t);
    for (uint32_t x = 0; x < kBatch; ++x) {
        for (uint32_t i = 0; i < kBm; ++i)
            for (uint32_t k = 0; k < kBk; ++k) a[(x * kBm + i) * kBk + k] = half(a_value(i + 7 * x, k));
        for (uint32_t k = 0; k < kBk; ++k)
            for (uint32_t j = 0; j < kBn; ++j) b[(x * kBk + k) * kBn + j] = half(b_value(k, j + 5 * x));
    }
    for (uint32_t j = 0; j < kBn; ++j) bias[j] = static_cast<float>(static_cast<int>(j % 13) - 6);
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(batch_kernel, 1, (uint8_t*)a, (uint8_t*)b, (uint8_t*)bias, (uint8_t*)c, tiling);
    std::string bad = t.BatchNum == static_cast<int32_t>(kBatch) ? "" : "BatchNum " + std::to_string(t.BatchNum);
    for (uint32_t x = 0; x < kBatch && bad.empty(); ++x)
        for (uint32_t i = 0; i < kBm && bad.empty(); ++i)
            for (uint32_t j = 0; j < kBn && bad.empty(); ++j) {
                float want = bias[j];
                for (uint32_t k = 0; k < kBk; ++k) want += a_value(i + 7 * x, k) * b_value(k, j + 5 * x);
                const float got = c[(x * kBm + i) * kBn + j];
                if (got != want)
                    bad = "C" + std::to_string(x) + "[" + std::to_string(i) + "][" + std::to_string(j) + "] is " +
                          std::to_string(got) + ", expected " + std::to_string(want);
            }
    if (bad.empty())
        std::printf("%s ok\n", name.c_str());
    else
        std::printf("%s wrong: %s\n", name.c_str(), bad.c_str());
    for (void* p : {static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(bias), static_cast<void*>(c),
                    static_cast<void*>(tiling)})
        AscendC::GmFree(p);
    return bad.empty() ? 0 : 1;
}

// The tiling's own rules on a set of shapes (no kernel run).
int run_tiling() {
    auto* plat = platform_ascendc::PlatformAscendCManager::GetInstance();
    uint64_t l1, l0a, l0b, l0c;
    plat->GetCoreMemSize(platform_ascendc::CoreMemType::L1, l1);
    plat->GetCoreMemSize(platform_ascendc::CoreMemType::L0_A, l0a);
    plat->GetCoreMemSize(platform_ascendc::CoreMemType::L0_B, l0b);
    plat->GetCoreMemSize(platform_ascendc::CoreMemType::L0_C, l0c);
    const Shape shapes[] = {{128, 2048, 1024, false, false, true}, {1, 1, 1, false, false, false},
                            {4096, 4096, 4096, true, false, true}, {17, 3000, 33, false, true, false},
                            {2048, 16, 8192, false, false, true},  {100, 200, 150, true, true, true}};
    for (const Shape& s : shapes) {
        TCubeTiling t;
        if (make_tiling(s, false, matmul_tiling::DataType::DT_FLOAT, 0, t) != 0) {
            std::printf("matmul_tiling wrong: no tiling for %u x %u x %u\n", s.m, s.n, s.k);
            return 1;
        }
        const uint64_t a0 = uint64_t{2} * t.baseM * t.baseK, b0 = uint64_t{2} * t.baseN * t.baseK;
        const uint64_t c0 = uint64_t{4} * t.baseM * t.baseN;
        const uint64_t mBlocks = (s.m + t.singleCoreM - 1) / t.singleCoreM,
                       nBlocks = (s.n + t.singleCoreN - 1) / t.singleCoreN;
        const bool ok = t.baseM % 16 == 0 && t.baseN % 16 == 0 && t.baseK % 16 == 0 && a0 * t.dbL0A <= l0a &&
                        b0 * t.dbL0B <= l0b && c0 * t.dbL0C <= l0c && (!s.bias || t.baseN * 4 <= 1024) &&
                        (a0 + b0) * std::max(t.depthA1, t.depthB1) + (s.bias ? t.baseN * 4u : 0u) <= l1 &&
                        t.usedCoreNum >= 1 && static_cast<uint32_t>(t.usedCoreNum) <= plat->GetCoreNumAic() &&
                        mBlocks * nBlocks == static_cast<uint64_t>(t.usedCoreNum) &&
                        t.singleCoreK == static_cast<int32_t>(s.k) && t.M == static_cast<int32_t>(s.m) &&
                        t.N == static_cast<int32_t>(s.n) && t.isBias == s.bias;
        if (!ok) {
            std::printf(
                "matmul_tiling wrong: %u x %u x %u: cores %d single %d x %d base %d x %d x %d db %d %d %d "
                "depth %d\n",
                s.m, s.n, s.k, t.usedCoreNum, t.singleCoreM, t.singleCoreN, t.baseM, t.baseN, t.baseK,
                t.dbL0A, t.dbL0B, t.dbL0C, t.depthA1);
            return 1;
        }
    }
    // No types set: GetTiling says -1.
    matmul_tiling::MatmulApiTiling bad(*plat);
    optiling::TCubeTiling data;
    if (bad.GetTiling(data) != -1) {
        std::printf("matmul_tiling wrong: GetTiling without types did not fail\n");
        return 1;
    }
    std::printf("matmul_tiling ok\n");
    return 0;
}

}  // namespace

int matmul_family(const std::string& name) {
    g_mm_family = name;
    if (name == "matmul" || name == "matmul_trans" || name == "matmul_nz" || name == "matmul_bad_tiling" ||
        name == "matmul_mix")
        return run_matmul(name);
    if (name == "matmul_tiling") return run_tiling();
    if (name == "matmul_batch") return run_batch(name);
    if (name == "matmul_partial") return run_partial(name);
    if (name == "raw_gm" || name == "raw_gm_store") return run_raw(name);
    return -1;
}
