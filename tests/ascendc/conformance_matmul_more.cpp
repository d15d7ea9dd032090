// The conformance program's Matmul families for C handed to the vector cores and quantised C
// (tests/ascendc/conformance.cpp runs them; the host computes every element with integer-valued data).
// "matmul_ub": a mix kernel (one AIC, two AIVs) whose Matmul has C in VECIN: each AIV takes 40 rows of an
// 80 x 80 x 64 product + bias (half -> float) in base blocks of 32 x 48 x 32 (edge blocks of 8 rows and 32
// columns), AIV 0 with Iterate<false> and one GetTensorC<false> per block, AIV 1 with while (Iterate())
// GetTensorC; each block lands in the AIV's UB (the AIC stores it in the SetWorkspace GM, the AIV copies
// it), the AIV doubles it (Muls) and stores it at its place in C. Without the workspace handover the AIVs
// would read zeros; without the AIC dropping the AIVs' vector work its serving pass would stop the run. The
// AIV also adds 1 to each block's first element by GetValue/SetValue (the serving AIC skips the scalar UB
// access). "matmul_ub_nows": the same without SetWorkspace: GetTensorC stops the run naming the call, exit 2.
// "matmul_end_twice": the same with End called twice: the AIVs' second End waits for a serving pass that
// never comes, a deadlock (exit 4). "matmul_quant" / "matmul_quant_vec": int8 A [48 x 64] x int8 B [64 x 96]
// (B not transposed: square transposes into L0B) + int32 bias into half C through the FixPipe's
// dequantisation, one scale for all of C (SetQuantScalar, 0.25) or one per column (SetQuantVector: 0.25, 0.5,
// 1, 2 in turn), base blocks of 32 x 64 x 32 (edge blocks of 16 rows and 32 columns), on one cube core.
// "matmul_int4": int4 A [48 x 128] x int4 B [128 x 128] (B not transposed: 64 x 64 square transposes into
// L0B)
// + int32 bias into int32 C, base blocks of 32 x 64 x 64 (an edge block of 16 rows, two K steps), one cube
// core. "matmul_tscm": a mix kernel whose AIV 0 copies A (32 x 64 half, NZ in GM) into a TSCM queue and hands
// the L1 tensor to a Matmul with A in TSCM (B 64 x 64 half, float bias and C), base blocks of 16 x 32 x 32 (A
// read from L1 at each block's rows and K); its AIC does the copy in the serving pass, the AIV drops it.
// "matmul_bsngd": IterateBatch of the BSNGD layout: A [B 2, S 32, N 1, G 3, D 64], B transposed [2, 48, 1, 3,
// 64], C [2, 32, 1, 3, 48], all six matrices in one call (matrix i: b = i / 3, g = i % 3; rows N G D apart).
// "matmul_nbatch": the same by IterateNBatch (2 rounds of 3 matrices, C through SetWorkspace) and
// GetBatchTensorC<false>.
// "matmul_ibshare_b": a mix kernel (one AIC, two AIVs) whose Matmul shares B (MatmulType's IBSHARE on B,
// CFG_IBSHARE_NORM): each AIV takes 32 rows of a 64 x 128 x 128 product (half -> float), both the same B, in
// base blocks of 32 x 64 x 64 (two N blocks of two K steps: four slots of B in L1). The AIC's pass for AIV 1
// finds B in L1 and loads only its A. "matmul_ibshare_b_off": the same kernel without IBSHARE (B loaded for
// each AIV). "layout_coord": the layout API's coordinates (MakeCoord, Coord) mapped by layouts with explicit
// strides (MakeShape, MakeStride, MakeLayout) to element offsets, against the host's sum of coordinate x
// stride.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernel_tiling/kernel_tiling.h"
#include "lib/matmul_intf.h"
#include "tikicpulib.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"

namespace {

int a_int(uint32_t i, uint32_t k) { return static_cast<int>((i * 7 + k * 3) % 9) - 4; }
int b_int(uint32_t k, uint32_t j) { return static_cast<int>((k * 5 + j * 11) % 7) - 3; }

template <class T>
T* gm_alloc(size_t n) {
    T* p = static_cast<T*>(AscendC::GmAlloc(n * sizeof(T)));
    std::memset(p, 0, n * sizeof(T));
    return p;
}

bool tiling_of(matmul_tiling::MatmulApiTiling& api, TCubeTiling& t) {
    optiling::TCubeTiling data;
    if (api.GetTiling(data) != 0) return false;
    std::vector<uint8_t> bytes(data.GetDataSize());
    data.SaveToBuffer(bytes.data(), bytes.size());
    std::memcpy(&t, bytes.data(), sizeof t);
    return true;
}

TCubeTiling read_tiling(GM_ADDR gm) {
    TCubeTiling t;
    uint32_t* w = reinterpret_cast<uint32_t*>(&t);
    for (uint32_t i = 0; i < sizeof(TCubeTiling) / 4; ++i) w[i] = reinterpret_cast<__gm__ uint32_t*>(gm)[i];
    return t;
}

// ---- matmul_ub ----
bool g_no_ws = false, g_end_twice = false;
constexpr uint32_t kUm = 80, kUn = 80, kUk = 64, kRows = 40;
using MMU = AscendC::Matmul<AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>,
                            AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>,
                            AscendC::MatmulType<AscendC::TPosition::VECIN, CubeFormat::ND, float>,
                            AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>>;

void ub_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR ws, GM_ADDR tilingGm) {
    TCubeTiling t = read_tiling(tilingGm);
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> in;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> out;
    pipe.InitBuffer(in, 1, t.baseM * t.baseN * sizeof(float));
    pipe.InitBuffer(out, 1, t.baseM * t.baseN * sizeof(float));
    MMU mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    const uint32_t v = static_cast<uint32_t>(AscendC::GetBlockIdx());
    AscendC::GlobalTensor<half> ag, bg;
    AscendC::GlobalTensor<float> biasg, cg, wg;
    ag.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(a), kUm * kUk);
    bg.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(b), kUk * kUn);
    biasg.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(bias), kUn);
    cg.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(c), kUm * kUn);
    wg.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws), kUm * kUn);
    mm.SetTensorA(ag[v * kRows * kUk]);
    mm.SetTensorB(bg);
    mm.SetBias(biasg);
    if (!g_no_ws) mm.SetWorkspace(wg[v * kRows * kUn]);
    const uint32_t mIters = (kRows + t.baseM - 1) / t.baseM, nIters = (kUn + t.baseN - 1) / t.baseN;
    auto block = [&](uint32_t j) {
        const uint32_t mi = j % mIters, ni = j / mIters;  // iterateOrder 0: M first
        const uint32_t rows = std::min<uint32_t>(t.baseM, kRows - mi * t.baseM);
        const uint32_t cols = std::min<uint32_t>(t.baseN, kUn - ni * t.baseN);
        AscendC::LocalTensor<float> x = in.DeQue<float>();
        x.SetValue(0, x.GetValue(0) + 1.0f);  // scalar UB access: the AIV's (the serving AIC skips it)
        AscendC::LocalTensor<float> y = out.AllocTensor<float>();
        const uint32_t padded = (cols + 7) / 8 * 8;
        AscendC::Muls(y, x, 2.0f, rows * padded);
        out.EnQue(y);
        in.FreeTensor(x);
        y = out.DeQue<float>();
        AscendC::DataCopyExtParams p(static_cast<uint16_t>(rows), cols * 4, 0, (kUn - cols) * 4, 0);
        AscendC::DataCopyPad(cg[(v * kRows + mi * t.baseM) * kUn + ni * t.baseN], y, p);
        out.FreeTensor(y);
    };
    if (v == 0) {
        mm.template Iterate<false>();
        for (uint32_t j = 0; j < mIters * nIters; ++j) {
            AscendC::LocalTensor<float> x = in.AllocTensor<float>();
            mm.template GetTensorC<false>(x, false, true);
            in.EnQue(x);
            block(j);
        }
    } else {
        uint32_t j = 0;
        while (mm.Iterate()) {
            AscendC::LocalTensor<float> x = in.AllocTensor<float>();
            mm.GetTensorC(x);
            in.EnQue(x);
            block(j++);
        }
    }
    mm.End();
    if (g_end_twice) mm.End();
}

int run_ub(const std::string& name) {
    g_no_ws = name == "matmul_ub_nows";
    g_end_twice = name == "matmul_end_twice";
    using matmul_tiling::DataType, matmul_tiling::TPosition;
    using MF = matmul_tiling::CubeFormat;
    matmul_tiling::MatmulApiTiling api(*platform_ascendc::PlatformAscendCManager::GetInstance());
    api.SetAType(TPosition::GM, MF::ND, DataType::DT_FLOAT16, false);
    api.SetBType(TPosition::GM, MF::ND, DataType::DT_FLOAT16, false);
    api.SetCType(TPosition::VECIN, MF::ND, DataType::DT_FLOAT);
    api.SetBiasType(TPosition::GM, MF::ND, DataType::DT_FLOAT);
    api.SetOrgShape(kUm, kUn, kUk);
    api.SetShape(kRows, kUn, kUk);
    api.EnableBias(true);
    api.SetFixSplit(32, 48, 32);
    api.SetBufferSpace(-1, -1, -1);
    TCubeTiling t;
    if (!tiling_of(api, t)) {
        std::printf("%s wrong: GetTiling failed\n", name.c_str());
        return 1;
    }
    half* a = gm_alloc<half>(kUm * kUk);
    half* b = gm_alloc<half>(kUk * kUn);
    float* bias = gm_alloc<float>(kUn);
    float* c = gm_alloc<float>(kUm * kUn);
    float* ws = gm_alloc<float>(kUm * kUn);
    uint8_t* tiling = gm_alloc<uint8_t>(sizeof t);
    std::memcpy(tiling, &t, sizeof t);
    for (uint32_t i = 0; i < kUm; ++i)
        for (uint32_t k = 0; k < kUk; ++k) a[i * kUk + k] = half(static_cast<float>(a_int(i, k)));
    for (uint32_t k = 0; k < kUk; ++k)
        for (uint32_t j = 0; j < kUn; ++j) b[k * kUn + j] = half(static_cast<float>(b_int(k, j)));
    for (uint32_t j = 0; j < kUn; ++j) bias[j] = static_cast<float>(static_cast<int>(j % 13) - 6);
    AscendC::SetKernelMode(KernelMode::MIX_MODE);
    ICPU_RUN_KF(ub_kernel, 1, (uint8_t*)a, (uint8_t*)b, (uint8_t*)bias, (uint8_t*)c, (uint8_t*)ws, tiling);
    std::string bad;
    for (uint32_t i = 0; i < kUm && bad.empty(); ++i)
        for (uint32_t j = 0; j < kUn && bad.empty(); ++j) {
            float want = bias[j];
            for (uint32_t k = 0; k < kUk; ++k) want += static_cast<float>(a_int(i, k) * b_int(k, j));
            if (ws[i * kUn + j] != want)
                bad = "workspace[" + std::to_string(i) + "][" + std::to_string(j) + "] is " +
                      std::to_string(ws[i * kUn + j]) + ", expected " + std::to_string(want);
            // each block's first element, incremented by the AIV before doubling
            want += i % kRows % t.baseM == 0 && j % t.baseN == 0 ? 1.0f : 0.0f;
            if (bad.empty() && c[i * kUn + j] != 2 * want)
                bad = "C[" + std::to_string(i) + "][" + std::to_string(j) + "] is " +
                      std::to_string(c[i * kUn + j]) + ", expected " + std::to_string(2 * want);
        }
    if (bad.empty())
        std::printf("%s ok\n", name.c_str());
    else
        std::printf("%s wrong: %s (base %d x %d x %d)\n", name.c_str(), bad.c_str(), t.baseM, t.baseN,
                    t.baseK);
    for (void* p : {static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(bias),
                    static_cast<void*>(c), static_cast<void*>(ws), static_cast<void*>(tiling)})
        AscendC::GmFree(p);
    return bad.empty() ? 0 : 1;
}

// ---- matmul_quant, matmul_quant_vec ----
constexpr uint32_t kQm = 48, kQn = 96, kQk = 64;
using MMQ = AscendC::Matmul<AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, int8_t>,
                            AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, int8_t>,
                            AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>,
                            AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, int32_t>>;
bool g_quant_vec = false;
float scale_of(uint32_t j) { return g_quant_vec ? 0.25f * static_cast<float>(1u << (j % 4)) : 0.25f; }
uint64_t word_of(float s) {
    uint32_t bits;
    std::memcpy(&bits, &s, 4);
    return bits;
}

void quant_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR words, GM_ADDR tilingGm) {
    TCubeTiling t = read_tiling(tilingGm);
    AscendC::TPipe pipe;
    MMQ mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    AscendC::GlobalTensor<int8_t> ag, bg;
    AscendC::GlobalTensor<int32_t> biasg;
    AscendC::GlobalTensor<half> cg;
    AscendC::GlobalTensor<uint64_t> wg;
    ag.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t*>(a), kQm * kQk);
    bg.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t*>(b), kQk * kQn);
    biasg.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(bias), kQn);
    cg.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(c), kQm * kQn);
    wg.SetGlobalBuffer(reinterpret_cast<__gm__ uint64_t*>(words), kQn);
    if (g_quant_vec)
        mm.SetQuantVector(wg);
    else
        mm.SetQuantScalar(word_of(0.25f));
    mm.SetTensorA(ag);
    mm.SetTensorB(bg);
    mm.SetBias(biasg);
    mm.IterateAll(cg);
    mm.End();
}

int run_quant(const std::string& name) {
    using matmul_tiling::DataType, matmul_tiling::TPosition;
    using MF = matmul_tiling::CubeFormat;
    g_quant_vec = name == "matmul_quant_vec";
    matmul_tiling::MatmulApiTiling api(*platform_ascendc::PlatformAscendCManager::GetInstance());
    api.SetAType(TPosition::GM, MF::ND, DataType::DT_INT8, false);
    api.SetBType(TPosition::GM, MF::ND, DataType::DT_INT8, false);
    api.SetCType(TPosition::GM, MF::ND, DataType::DT_FLOAT16);
    api.SetBiasType(TPosition::GM, MF::ND, DataType::DT_INT32);
    api.SetDequantType(g_quant_vec ? matmul_tiling::DequantType::TENSOR : matmul_tiling::DequantType::SCALAR);
    api.SetOrgShape(kQm, kQn, kQk);
    api.SetShape(kQm, kQn, kQk);
    api.EnableBias(true);
    api.SetFixSplit(32, 64, 32);
    api.SetBufferSpace(-1, -1, -1);
    TCubeTiling t;
    if (!tiling_of(api, t)) {
        std::printf("%s wrong: GetTiling failed\n", name.c_str());
        return 1;
    }
    int8_t* a = gm_alloc<int8_t>(kQm * kQk);
    int8_t* b = gm_alloc<int8_t>(kQk * kQn);
    int32_t* bias = gm_alloc<int32_t>(kQn);
    half* c = gm_alloc<half>(kQm * kQn);
    uint64_t* words = gm_alloc<uint64_t>(kQn);
    uint8_t* tiling = gm_alloc<uint8_t>(sizeof t);
    std::memcpy(tiling, &t, sizeof t);
    for (uint32_t i = 0; i < kQm; ++i)
        for (uint32_t k = 0; k < kQk; ++k) a[i * kQk + k] = static_cast<int8_t>(a_int(i, k));
    for (uint32_t k = 0; k < kQk; ++k)
        for (uint32_t j = 0; j < kQn; ++j) b[k * kQn + j] = static_cast<int8_t>(b_int(k, j));
    for (uint32_t j = 0; j < kQn; ++j)
        bias[j] = static_cast<int32_t>(j % 13) - 6, words[j] = word_of(scale_of(j));
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(quant_kernel, 1, (uint8_t*)a, (uint8_t*)b, (uint8_t*)bias, (uint8_t*)c, (uint8_t*)words,
                tiling);
    std::string bad;
    for (uint32_t i = 0; i < kQm && bad.empty(); ++i)
        for (uint32_t j = 0; j < kQn && bad.empty(); ++j) {
            int32_t acc = bias[j];
            for (uint32_t k = 0; k < kQk; ++k) acc += a_int(i, k) * b_int(k, j);
            const float want = static_cast<float>(acc) * scale_of(j);  // exact in half for these values
            const float got = static_cast<float>(c[i * kQn + j]);
            if (got != want)
                bad = "C[" + std::to_string(i) + "][" + std::to_string(j) + "] is " + std::to_string(got) +
                      ", expected " + std::to_string(want);
        }
    if (bad.empty())
        std::printf("%s ok\n", name.c_str());
    else
        std::printf("%s wrong: %s (base %d x %d x %d)\n", name.c_str(), bad.c_str(), t.baseM, t.baseN,
                    t.baseK);
    for (void* p : {static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(bias),
                    static_cast<void*>(c), static_cast<void*>(words), static_cast<void*>(tiling)})
        AscendC::GmFree(p);
    return bad.empty() ? 0 : 1;
}

// ---- matmul_int4 ----
constexpr uint32_t kIm = 48, kIn = 128, kIk = 128;
using MMI = AscendC::Matmul<AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, AscendC::int4b_t>,
                            AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, AscendC::int4b_t>,
                            AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, int32_t>,
                            AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, int32_t>>;
int a4(uint32_t i, uint32_t k) { return static_cast<int>((i * 3 + k * 5) % 16) - 8; }
int b4(uint32_t k, uint32_t j) { return static_cast<int>((k * 7 + j * 9 + 3) % 16) - 8; }
// Element e of a row-major int4 matrix: byte e / 2, element 2i in the low nibble.
void put4(uint8_t* m, uint32_t e, int v) {
    const uint8_t nib = static_cast<uint8_t>(v & 0xf);
    m[e / 2] = static_cast<uint8_t>(e % 2 ? (m[e / 2] & 0x0f) | (nib << 4) : (m[e / 2] & 0xf0) | nib);
}

void int4_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR tilingGm) {
    TCubeTiling t = read_tiling(tilingGm);
    AscendC::TPipe pipe;
    MMI mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    AscendC::GlobalTensor<AscendC::int4b_t> ag, bg;
    AscendC::GlobalTensor<int32_t> biasg, cg;
    ag.SetGlobalBuffer(reinterpret_cast<__gm__ AscendC::int4b_t*>(a), kIm * kIk);
    bg.SetGlobalBuffer(reinterpret_cast<__gm__ AscendC::int4b_t*>(b), kIk * kIn);
    biasg.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(bias), kIn);
    cg.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(c), kIm * kIn);
    mm.SetTensorA(ag);
    mm.SetTensorB(bg);
    mm.SetBias(biasg);
    mm.IterateAll(cg);
    mm.End();
}

int run_int4(const std::string& name) {
    using matmul_tiling::DataType, matmul_tiling::TPosition;
    using MF = matmul_tiling::CubeFormat;
    matmul_tiling::MatmulApiTiling api(*platform_ascendc::PlatformAscendCManager::GetInstance());
    api.SetAType(TPosition::GM, MF::ND, DataType::DT_INT4, false);
    api.SetBType(TPosition::GM, MF::ND, DataType::DT_INT4, false);
    api.SetCType(TPosition::GM, MF::ND, DataType::DT_INT32);
    api.SetBiasType(TPosition::GM, MF::ND, DataType::DT_INT32);
    api.SetOrgShape(kIm, kIn, kIk);
    api.SetShape(kIm, kIn, kIk);
    api.EnableBias(true);
    api.SetFixSplit(32, 64, 64);
    api.SetBufferSpace(-1, -1, -1);
    TCubeTiling t;
    if (!tiling_of(api, t)) {
        std::printf("%s wrong: GetTiling failed\n", name.c_str());
        return 1;
    }
    uint8_t* a = gm_alloc<uint8_t>(kIm * kIk / 2);
    uint8_t* b = gm_alloc<uint8_t>(kIk * kIn / 2);
    int32_t* bias = gm_alloc<int32_t>(kIn);
    int32_t* c = gm_alloc<int32_t>(kIm * kIn);
    uint8_t* tiling = gm_alloc<uint8_t>(sizeof t);
    std::memcpy(tiling, &t, sizeof t);
    for (uint32_t i = 0; i < kIm; ++i)
        for (uint32_t k = 0; k < kIk; ++k) put4(a, i * kIk + k, a4(i, k));
    for (uint32_t k = 0; k < kIk; ++k)
        for (uint32_t j = 0; j < kIn; ++j) put4(b, k * kIn + j, b4(k, j));
    for (uint32_t j = 0; j < kIn; ++j) bias[j] = static_cast<int32_t>(j % 11) - 5;
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(int4_kernel, 1, a, b, (uint8_t*)bias, (uint8_t*)c, tiling);
    std::string bad;
    for (uint32_t i = 0; i < kIm && bad.empty(); ++i)
        for (uint32_t j = 0; j < kIn && bad.empty(); ++j) {
            int32_t want = bias[j];
            for (uint32_t k = 0; k < kIk; ++k) want += a4(i, k) * b4(k, j);
            if (c[i * kIn + j] != want)
                bad = "C[" + std::to_string(i) + "][" + std::to_string(j) + "] is " + std::to_string(c[i * kIn + j]) +
                      ", expected " + std::to_string(want);
        }
    if (bad.empty())
        std::printf("%s ok\n", name.c_str());
    else
        std::printf("%s wrong: %s (base %d x %d x %d)\n", name.c_str(), bad.c_str(), t.baseM, t.baseN, t.baseK);
    for (void* p : {static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(bias), static_cast<void*>(c),
                    static_cast<void*>(tiling)})
        AscendC::GmFree(p);
    return bad.empty() ? 0 : 1;
}

// ---- matmul_tscm ----
constexpr uint32_t kTm = 32, kTn = 64, kTk = 64;
using MMT = AscendC::Matmul<AscendC::MatmulType<AscendC::TPosition::TSCM, CubeFormat::NZ, half>,
                            AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>,
                            AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>,
                            AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>>;

void tscm_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR tilingGm) {
    TCubeTiling t = read_tiling(tilingGm);
    AscendC::TPipe pipe;
    MMT mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    if (AscendC::GetBlockIdx() != 0) return;  // one client: AIV 0
    AscendC::GlobalTensor<half> ag, bg;
    AscendC::GlobalTensor<float> biasg, cg;
    ag.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(a), kTm * kTk);
    bg.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(b), kTk * kTn);
    biasg.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(bias), kTn);
    cg.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(c), kTm * kTn);
    // A (NZ in GM) into L1 by the kernel: the AIC does it in its serving pass, the AIV drops it.
    AscendC::TSCM<AscendC::TPosition::GM, 1> scm;
    pipe.InitBuffer(scm, 1, kTm * kTk * sizeof(half));
    AscendC::LocalTensor<half> s = scm.AllocTensor<half>();
    AscendC::DataCopy(s, ag, kTm * kTk);
    scm.EnQue(s);
    AscendC::LocalTensor<half> sl = scm.DeQue<half>();
    mm.SetTensorA(sl);
    mm.SetTensorB(bg);
    mm.SetBias(biasg);
    mm.IterateAll(cg);
    mm.End();
    scm.FreeTensor(sl);
}

int run_tscm(const std::string& name) {
    using matmul_tiling::DataType, matmul_tiling::TPosition;
    using MF = matmul_tiling::CubeFormat;
    matmul_tiling::MatmulApiTiling api(*platform_ascendc::PlatformAscendCManager::GetInstance());
    api.SetAType(TPosition::TSCM, MF::NZ, DataType::DT_FLOAT16, false);
    api.SetBType(TPosition::GM, MF::ND, DataType::DT_FLOAT16, false);
    api.SetCType(TPosition::GM, MF::ND, DataType::DT_FLOAT);
    api.SetBiasType(TPosition::GM, MF::ND, DataType::DT_FLOAT);
    api.SetOrgShape(kTm, kTn, kTk);
    api.SetShape(kTm, kTn, kTk);
    api.EnableBias(true);
    api.SetFixSplit(16, 32, 32);  // 2 x 2 blocks of 2 K steps each: A read from L1 at every block's m0 and k0
    api.SetBufferSpace(-1, -1, -1);
    TCubeTiling t;
    if (!tiling_of(api, t)) {
        std::printf("%s wrong: GetTiling failed\n", name.c_str());
        return 1;
    }
    half* a = gm_alloc<half>(kTm * kTk);
    half* b = gm_alloc<half>(kTk * kTn);
    float* bias = gm_alloc<float>(kTn);
    float* c = gm_alloc<float>(kTm * kTn);
    uint8_t* tiling = gm_alloc<uint8_t>(sizeof t);
    std::memcpy(tiling, &t, sizeof t);
    for (uint32_t i = 0; i < kTm; ++i)  // NZ: column groups of 16 k, each with every row
        for (uint32_t k = 0; k < kTk; ++k)
            a[(k / 16) * kTm * 16 + i * 16 + k % 16] = static_cast<half>(static_cast<float>(a_int(i, k)));
    for (uint32_t k = 0; k < kTk; ++k)
        for (uint32_t j = 0; j < kTn; ++j) b[k * kTn + j] = static_cast<half>(static_cast<float>(b_int(k, j)));
    for (uint32_t j = 0; j < kTn; ++j) bias[j] = static_cast<float>(j % 7) - 3.0f;
    AscendC::SetKernelMode(KernelMode::MIX_MODE);
    ICPU_RUN_KF(tscm_kernel, 1, (uint8_t*)a, (uint8_t*)b, (uint8_t*)bias, (uint8_t*)c, tiling);
    std::string bad;
    for (uint32_t i = 0; i < kTm && bad.empty(); ++i)
        for (uint32_t j = 0; j < kTn && bad.empty(); ++j) {
            float want = bias[j];
            for (uint32_t k = 0; k < kTk; ++k) want += static_cast<float>(a_int(i, k) * b_int(k, j));
            if (c[i * kTn + j] != want)
                bad = "C[" + std::to_string(i) + "][" + std::to_string(j) + "] is " + std::to_string(c[i * kTn + j]) +
                      ", expected " + std::to_string(want);
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

// ---- matmul_ibshare_b ----
constexpr uint32_t kSm = 64, kSn = 128, kSk = 128;  // each AIV: kSm / 2 rows of A and C, all of B
using MMIA = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;
using MMIC = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>;
using MMIShared = AscendC::Matmul<
    MMIA, AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half, false, LayoutMode::NONE, true>,
    MMIC, MMIC, CFG_IBSHARE_NORM>;
using MMIEach = AscendC::Matmul<MMIA, MMIA, MMIC, MMIC, CFG_NORM>;

template <class MM>
void ibshare_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR tilingGm) {
    TCubeTiling t = read_tiling(tilingGm);
    AscendC::TPipe pipe;
    MM mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    const uint64_t rows = kSm / 2, i = AscendC::GetBlockIdx();
    AscendC::GlobalTensor<half> ag, bg;
    AscendC::GlobalTensor<float> cg;
    ag.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(a) + i * rows * kSk, rows * kSk);
    bg.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(b), kSk * kSn);  // the same B for both AIVs
    cg.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(c) + i * rows * kSn, rows * kSn);
    mm.SetTensorA(ag);
    mm.SetTensorB(bg);
    mm.IterateAll(cg);
    mm.End();
}

int run_ibshare(const std::string& name) {
    using matmul_tiling::DataType, matmul_tiling::TPosition;
    using MF = matmul_tiling::CubeFormat;
    matmul_tiling::MatmulApiTiling api(*platform_ascendc::PlatformAscendCManager::GetInstance());
    api.SetAType(TPosition::GM, MF::ND, DataType::DT_FLOAT16, false);
    api.SetBType(TPosition::GM, MF::ND, DataType::DT_FLOAT16, false);
    api.SetCType(TPosition::GM, MF::ND, DataType::DT_FLOAT);
    api.SetBiasType(TPosition::GM, MF::ND, DataType::DT_FLOAT);
    api.SetOrgShape(kSm, kSn, kSk);
    api.SetShape(kSm / 2, kSn, kSk);
    api.EnableBias(false);
    api.SetFixSplit(32, 64, 64);
    api.SetBufferSpace(-1, -1, -1);
    TCubeTiling t;
    if (!tiling_of(api, t)) {
        std::printf("%s wrong: GetTiling failed\n", name.c_str());
        return 1;
    }
    half* a = gm_alloc<half>(kSm * kSk);
    half* b = gm_alloc<half>(kSk * kSn);
    float* c = gm_alloc<float>(kSm * kSn);
    uint8_t* tiling = gm_alloc<uint8_t>(sizeof t);
    std::memcpy(tiling, &t, sizeof t);
    for (uint32_t i = 0; i < kSm; ++i)
        for (uint32_t k = 0; k < kSk; ++k)
            a[i * kSk + k] = static_cast<half>(static_cast<float>(a_int(i, k)));
    for (uint32_t k = 0; k < kSk; ++k)
        for (uint32_t j = 0; j < kSn; ++j)
            b[k * kSn + j] = static_cast<half>(static_cast<float>(b_int(k, j)));
    AscendC::SetKernelMode(KernelMode::MIX_MODE);
    if (name == "matmul_ibshare_b")
        ICPU_RUN_KF(ibshare_kernel<MMIShared>, 1, (uint8_t*)a, (uint8_t*)b, (uint8_t*)c, tiling);
    else
        ICPU_RUN_KF(ibshare_kernel<MMIEach>, 1, (uint8_t*)a, (uint8_t*)b, (uint8_t*)c, tiling);
    std::string bad;
    for (uint32_t i = 0; i < kSm && bad.empty(); ++i)
        for (uint32_t j = 0; j < kSn && bad.empty(); ++j) {
            float want = 0;
            for (uint32_t k = 0; k < kSk; ++k) want += static_cast<float>(a_int(i, k) * b_int(k, j));
            if (c[i * kSn + j] != want)
                bad = "C[" + std::to_string(i) + "][" + std::to_string(j) + "] is " +
                      std::to_string(c[i * kSn + j]) + ", expected " + std::to_string(want);
        }
    if (bad.empty())
        std::printf("%s ok\n", name.c_str());
    else
        std::printf("%s wrong: %s\n", name.c_str(), bad.c_str());
    for (void* p :
         {static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(c), static_cast<void*>(tiling)})
        AscendC::GmFree(p);
    return bad.empty() ? 0 : 1;
}

// ---- matmul_bsngd ----
constexpr uint32_t kLb = 2, kLg = 3, kLs = 32, kLn = 48, kLd = 64;
bool g_nbatch = false;
using LA = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half, false, LayoutMode::BSNGD>;
using LB = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half, true, LayoutMode::BSNGD>;
using LC = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float, false, LayoutMode::BSNGD>;
using MML = AscendC::Matmul<LA, LB, LC, AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>>;
// Element offsets of A (b, s, g, d), B^T (b, n, g, d) and C (b, s, g, n).
uint64_t at_a(uint32_t b, uint32_t s, uint32_t g, uint32_t d) { return ((b * kLs + s) * kLg + g) * kLd + d; }
uint64_t at_b(uint32_t b, uint32_t n, uint32_t g, uint32_t d) { return ((b * kLn + n) * kLg + g) * kLd + d; }
uint64_t at_c(uint32_t b, uint32_t s, uint32_t g, uint32_t n) { return ((b * kLs + s) * kLg + g) * kLn + n; }

void bsngd_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR tilingGm) {
    TCubeTiling t = read_tiling(tilingGm);
    AscendC::TPipe pipe;
    MML mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    AscendC::GlobalTensor<half> ag, bg;
    AscendC::GlobalTensor<float> cg;
    ag.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(a), kLb * kLs * kLg * kLd);
    bg.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(b), kLb * kLn * kLg * kLd);
    cg.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(c), kLb * kLs * kLg * kLn);
    mm.SetTensorA(ag, false);
    mm.SetTensorB(bg, true);
    if (g_nbatch) {
        mm.SetWorkspace(cg);
        mm.template IterateNBatch<false>(kLb, kLg, kLg, false);
        for (uint32_t j = 0; j < kLb; ++j) mm.template GetBatchTensorC<false>(kLg, kLg, false);
    } else {
        mm.IterateBatch(cg, kLb * kLg, kLb * kLg, false);
    }
    mm.End();
}

int run_bsngd(const std::string& name) {
    g_nbatch = name == "matmul_nbatch";
    using matmul_tiling::DataType, matmul_tiling::TPosition;
    using MF = matmul_tiling::CubeFormat;
    matmul_tiling::MatmulApiTiling api(*platform_ascendc::PlatformAscendCManager::GetInstance());
    api.SetAType(TPosition::GM, MF::ND, DataType::DT_FLOAT16, false);
    api.SetBType(TPosition::GM, MF::ND, DataType::DT_FLOAT16, true);
    api.SetCType(TPosition::GM, MF::ND, DataType::DT_FLOAT);
    api.SetBiasType(TPosition::GM, MF::ND, DataType::DT_FLOAT);
    api.SetOrgShape(kLs, kLn, kLd);
    api.SetShape(kLs, kLn, kLd);
    api.EnableBias(false);
    api.SetFixSplit(32, 32, -1);
    api.SetALayout(kLb, kLs, 1, kLg, kLd);
    api.SetBLayout(kLb, kLn, 1, kLg, kLd);
    api.SetCLayout(kLb, kLs, 1, kLg, kLn);
    api.SetBatchNum(kLb * kLg);
    api.SetBufferSpace(-1, -1, -1);
    TCubeTiling t;
    if (!tiling_of(api, t)) {
        std::printf("%s wrong: GetTiling failed\n", name.c_str());
        return 1;
    }
    half* a = gm_alloc<half>(kLb * kLs * kLg * kLd);
    half* b = gm_alloc<half>(kLb * kLn * kLg * kLd);
    float* c = gm_alloc<float>(kLb * kLs * kLg * kLn);
    uint8_t* tiling = gm_alloc<uint8_t>(sizeof t);
    std::memcpy(tiling, &t, sizeof t);
    // Matrix (x, g) of A is a_int shifted by 5 x + 7 g rows, of B by 3 x + 11 g columns.
    for (uint32_t x = 0; x < kLb; ++x)
        for (uint32_t g = 0; g < kLg; ++g) {
            for (uint32_t s = 0; s < kLs; ++s)
                for (uint32_t d = 0; d < kLd; ++d)
                    a[at_a(x, s, g, d)] = half(float(a_int(s + 5 * x + 7 * g, d)));
            for (uint32_t n = 0; n < kLn; ++n)
                for (uint32_t d = 0; d < kLd; ++d)
                    b[at_b(x, n, g, d)] = half(float(b_int(d, n + 3 * x + 11 * g)));
        }
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(bsngd_kernel, 1, (uint8_t*)a, (uint8_t*)b, (uint8_t*)c, tiling);
    std::string bad;
    for (uint32_t x = 0; x < kLb && bad.empty(); ++x)
        for (uint32_t g = 0; g < kLg && bad.empty(); ++g)
            for (uint32_t s = 0; s < kLs && bad.empty(); ++s)
                for (uint32_t n = 0; n < kLn && bad.empty(); ++n) {
                    float want = 0;
                    for (uint32_t d = 0; d < kLd; ++d)
                        want += float(a_int(s + 5 * x + 7 * g, d) * b_int(d, n + 3 * x + 11 * g));
                    const float got = c[at_c(x, s, g, n)];
                    if (got != want)
                        bad = "C(b " + std::to_string(x) + ", g " + std::to_string(g) + ")[" +
                              std::to_string(s) + "][" + std::to_string(n) + "] is " + std::to_string(got) +
                              ", expected " + std::to_string(want);
                }
    if (bad.empty())
        std::printf("%s ok\n", name.c_str());
    else
        std::printf("%s wrong: %s\n", name.c_str(), bad.c_str());
    for (void* p :
         {static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(c), static_cast<void*>(tiling)})
        AscendC::GmFree(p);
    return bad.empty() ? 0 : 1;
}

// ---- layout_coord ----
int run_layout_coord(const std::string& name) {
    std::string bad;
    for (int64_t m : {1, 7, 30720})
        for (int64_t k : {1, 64, 4096}) {
            const auto row = AscendC::MakeLayout(AscendC::MakeShape(m, k), AscendC::MakeStride(k, 1));
            const auto col = AscendC::MakeLayout(AscendC::MakeShape(m, k), AscendC::MakeStride(1, m));
            const auto three =
                AscendC::MakeLayout(AscendC::MakeShape(2, m, k), AscendC::MakeStride(m * k, k, 1));
            for (int64_t i : {int64_t{0}, m - 1, m / 2})
                for (int64_t j : {int64_t{0}, k - 1, k / 3}) {
                    const AscendC::Coord<int64_t, int64_t> c = AscendC::MakeCoord(i, j);
                    if (row(c) != i * k + j || col(c) != i + j * m ||
                        three(AscendC::MakeCoord(int64_t{1}, i, j)) != m * k + i * k + j)
                        bad = "(" + std::to_string(i) + ", " + std::to_string(j) + ") of " +
                              std::to_string(m) + " x " + std::to_string(k) + " maps to " +
                              std::to_string(row(c)) + " / " + std::to_string(col(c));
                }
        }
    if (bad.empty())
        std::printf("%s ok\n", name.c_str());
    else
        std::printf("%s wrong: %s\n", name.c_str(), bad.c_str());
    return bad.empty() ? 0 : 1;
}

}  // namespace

int matmul_more_family(const std::string& name) {
    if (name == "matmul_ub" || name == "matmul_ub_nows" || name == "matmul_end_twice") return run_ub(name);
    if (name == "matmul_quant" || name == "matmul_quant_vec") return run_quant(name);
    if (name == "matmul_int4") return run_int4(name);
    if (name == "matmul_tscm") return run_tscm(name);
    if (name == "matmul_ibshare_b" || name == "matmul_ibshare_b_off") return run_ibshare(name);
    if (name == "matmul_bsngd" || name == "matmul_nbatch") return run_bsngd(name);
    if (name == "layout_coord") return run_layout_coord(name);
    return -1;
}
