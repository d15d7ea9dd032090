// The conformance program's Matmul families in mix kernels: C handed to the vector cores, A in TSCM, B shared
// by the two AIVs (tests/ascendc/conformance.cpp runs them; the host computes every element with
// integer-valued data; matmul_host.h has the host side they share).
// "matmul_ub": a mix kernel (one AIC, two AIVs) whose Matmul has C in VECIN: each AIV takes 40 rows of an
// 80 x 80 x 64 product + bias (half -> float) in base blocks of 32 x 48 x 32 (edge blocks of 8 rows and 32
// columns), AIV 0 with Iterate<false> and one GetTensorC<false> per block, AIV 1 with while (Iterate())
// GetTensorC; each block lands in the AIV's UB (the AIC stores it in the SetWorkspace GM, the AIV copies
// it), the AIV doubles it (Muls) and stores it at its place in C. Without the workspace handover the AIVs
// would read zeros; without the AIC dropping the AIVs' vector work its serving pass would stop the run. The
// AIV also adds 1 to each block's first element by GetValue/SetValue (the serving AIC skips the scalar UB
// access). "matmul_ub_nows": the same without SetWorkspace: GetTensorC stops the run naming the call, exit 2.
// "matmul_end_twice": the same with End called twice: the AIVs' second End waits for a serving pass that
// never comes, a deadlock (exit 4).
// "matmul_tscm": a mix kernel whose AIV 0 copies A (32 x 64 half, NZ in GM) into a TSCM queue and hands
// the L1 tensor to a Matmul with A in TSCM (B 64 x 64 half, float bias and C), base blocks of 16 x 32 x 32 (A
// read from L1 at each block's rows and K); its AIC does the copy in the serving pass, the AIV drops it.
// "matmul_ibshare_b": a mix kernel (one AIC, two AIVs) whose Matmul shares B (MatmulType's IBSHARE on B,
// CFG_IBSHARE_NORM): each AIV takes 32 rows of a 64 x 128 x 128 product (half -> float), both the same B, in
// base blocks of 32 x 64 x 64 (two N blocks of two K steps: four slots of B in L1). The AIC's pass for AIV 1
// finds B in L1 and loads only its A. "matmul_ibshare_b_off": the same kernel without IBSHARE (B loaded for
// each AIV).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "matmul_host.h"

namespace {

using namespace mm_host;
using matmul_tiling::DataType;
using MF = matmul_tiling::CubeFormat;
using TP = matmul_tiling::TPosition;

// ---- matmul_ub, matmul_ub_nows, matmul_end_twice ----
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
    HostRun r(name);
    if (!r.tile({.a = {TP::GM, MF::ND, DataType::DT_FLOAT16},
                 .b = {TP::GM, MF::ND, DataType::DT_FLOAT16},
                 .c = {TP::VECIN, MF::ND, DataType::DT_FLOAT},
                 .bias = {TP::GM, MF::ND, DataType::DT_FLOAT},
                 .org_m = kUm, .org_n = kUn, .org_k = kUk,
                 .m = kRows, .n = kUn, .k = kUk,
                 .with_bias = true,
                 .base_m = 32, .base_n = 48, .base_k = 32}))
        return 1;
    const TCubeTiling& t = r.tiling();
    half* a = r.gm<half>(kUm * kUk);
    half* b = r.gm<half>(kUk * kUn);
    float* bias = r.gm<float>(kUn);
    float* c = r.gm<float>(kUm * kUn);
    float* ws = r.gm<float>(kUm * kUn);
    uint8_t* tiling = r.tiling_gm();
    for (uint32_t i = 0; i < kUm; ++i)
        for (uint32_t k = 0; k < kUk; ++k) a[i * kUk + k] = half(static_cast<float>(a_int(i, k)));
    for (uint32_t k = 0; k < kUk; ++k)
        for (uint32_t j = 0; j < kUn; ++j) b[k * kUn + j] = half(static_cast<float>(b_int(k, j)));
    for (uint32_t j = 0; j < kUn; ++j) bias[j] = static_cast<float>(static_cast<int>(j % 13) - 6);
    AscendC::SetKernelMode(KernelMode::MIX_MODE);
    ICPU_RUN_KF(ub_kernel, 1, (uint8_t*)a, (uint8_t*)b, (uint8_t*)bias, (uint8_t*)c, (uint8_t*)ws, tiling);
    auto product = [&](uint32_t i, uint32_t j) {
        float want = bias[j];
        for (uint32_t k = 0; k < kUk; ++k) want += static_cast<float>(a_int(i, k) * b_int(k, j));
        return want;
    };
    r.compare("workspace", kUm, kUn, [&](uint32_t i, uint32_t j) { return ws[i * kUn + j]; }, product);
    // each block's first element, incremented by the AIV before doubling
    r.compare("C", kUm, kUn, [&](uint32_t i, uint32_t j) { return c[i * kUn + j]; },
              [&](uint32_t i, uint32_t j) {
                  return 2 * (product(i, j) + (i % kRows % t.baseM == 0 && j % t.baseN == 0 ? 1.0f : 0.0f));
              });
    return r.verdict();
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
    HostRun r(name);
    // 2 x 2 blocks of 2 K steps each: A read from L1 at every block's m0 and k0
    if (!r.tile({.a = {TP::TSCM, MF::NZ, DataType::DT_FLOAT16},
                 .b = {TP::GM, MF::ND, DataType::DT_FLOAT16},
                 .c = {TP::GM, MF::ND, DataType::DT_FLOAT},
                 .bias = {TP::GM, MF::ND, DataType::DT_FLOAT},
                 .org_m = kTm, .org_n = kTn, .org_k = kTk,
                 .m = kTm, .n = kTn, .k = kTk,
                 .with_bias = true,
                 .base_m = 16, .base_n = 32, .base_k = 32}))
        return 1;
    half* a = r.gm<half>(kTm * kTk);
    half* b = r.gm<half>(kTk * kTn);
    float* bias = r.gm<float>(kTn);
    float* c = r.gm<float>(kTm * kTn);
    uint8_t* tiling = r.tiling_gm();
    for (uint32_t i = 0; i < kTm; ++i)  // NZ: column groups of 16 k, each with every row
        for (uint32_t k = 0; k < kTk; ++k)
            a[(k / 16) * kTm * 16 + i * 16 + k % 16] = static_cast<half>(static_cast<float>(a_int(i, k)));
    for (uint32_t k = 0; k < kTk; ++k)
        for (uint32_t j = 0; j < kTn; ++j)
            b[k * kTn + j] = static_cast<half>(static_cast<float>(b_int(k, j)));
    for (uint32_t j = 0; j < kTn; ++j) bias[j] = static_cast<float>(j % 7) - 3.0f;
    AscendC::SetKernelMode(KernelMode::MIX_MODE);
    ICPU_RUN_KF(tscm_kernel, 1, (uint8_t*)a, (uint8_t*)b, (uint8_t*)bias, (uint8_t*)c, tiling);
    r.compare("C", kTm, kTn, [&](uint32_t i, uint32_t j) { return c[i * kTn + j]; },
              [&](uint32_t i, uint32_t j) {
                  float want = bias[j];
                  for (uint32_t k = 0; k < kTk; ++k) want += static_cast<float>(a_int(i, k) * b_int(k, j));
                  return want;
              });
    return r.verdict();
}

// ---- matmul_ibshare_b, matmul_ibshare_b_off ----
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
    HostRun r(name);
    if (!r.tile({.a = {TP::GM, MF::ND, DataType::DT_FLOAT16},
                 .b = {TP::GM, MF::ND, DataType::DT_FLOAT16},
                 .c = {TP::GM, MF::ND, DataType::DT_FLOAT},
                 .bias = {TP::GM, MF::ND, DataType::DT_FLOAT},
                 .org_m = kSm, .org_n = kSn, .org_k = kSk,
                 .m = kSm / 2, .n = kSn, .k = kSk,
                 .with_bias = false,
                 .base_m = 32, .base_n = 64, .base_k = 64}))
        return 1;
    half* a = r.gm<half>(kSm * kSk);
    half* b = r.gm<half>(kSk * kSn);
    float* c = r.gm<float>(kSm * kSn);
    uint8_t* tiling = r.tiling_gm();
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
    r.compare("C", kSm, kSn, [&](uint32_t i, uint32_t j) { return c[i * kSn + j]; },
              [&](uint32_t i, uint32_t j) {
                  float want = 0;
                  for (uint32_t k = 0; k < kSk; ++k) want += static_cast<float>(a_int(i, k) * b_int(k, j));
                  return want;
              });
    return r.verdict();
}

}  // namespace

int matmul_more_family(const std::string& name) {
    if (name == "matmul_ub" || name == "matmul_ub_nows" || name == "matmul_end_twice") return run_ub(name);
    if (name == "matmul_tscm") return run_tscm(name);
    if (name == "matmul_ibshare_b" || name == "matmul_ibshare_b_off") return run_ibshare(name);
    return -1;
}
