// The conformance program's Matmul families for other element types and batch layouts (tests/ascendc/
// conformance.cpp runs them; the host computes every element with integer-valued data; matmul_host.h has
// the host side they share).
// "matmul_quant" / "matmul_quant_vec": int8 A [48 x 64] x int8 B [64 x 96] (B not transposed: square
// transposes into L0B) + int32 bias into half C through the FixPipe's dequantisation, one scale for all of
// C (SetQuantScalar, 0.25) or one per column (SetQuantVector: 0.25, 0.5, 1, 2 in turn), base blocks of
// 32 x 64 x 32 (edge blocks of 16 rows and 32 columns), on one cube core.
// "matmul_int4": int4 A [48 x 128] x int4 B [128 x 128] (B not transposed: 64 x 64 square transposes into
// L0B) + int32 bias into int32 C, base blocks of 32 x 64 x 64 (an edge block of 16 rows, two K steps), one
// cube core.
// "matmul_bsngd": IterateBatch of the BSNGD layout: A [B 2, S 32, N 1, G 3, D 64], B transposed [2, 48, 1, 3,
// 64], C [2, 32, 1, 3, 48], all six matrices in one call (matrix i: b = i / 3, g = i % 3; rows N G D apart).
// "matmul_nbatch": the same by IterateNBatch (2 rounds of 3 matrices, C through SetWorkspace) and
// GetBatchTensorC<false>.
// "layout_coord": the layout API's coordinates (MakeCoord, Coord) mapped by layouts with explicit strides
// (MakeShape, MakeStride, MakeLayout) to element offsets, against the host's sum of coordinate x stride.
#include <cstdio>
#include <cstring>
#include <string>

#include "matmul_host.h"

namespace {

using namespace mm_host;
using matmul_tiling::DataType;
using MF = matmul_tiling::CubeFormat;
using TP = matmul_tiling::TPosition;

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
    g_quant_vec = name == "matmul_quant_vec";
    HostRun r(name);
    if (!r.tile({.a = {TP::GM, MF::ND, DataType::DT_INT8},
                 .b = {TP::GM, MF::ND, DataType::DT_INT8},
                 .c = {TP::GM, MF::ND, DataType::DT_FLOAT16},
                 .bias = {TP::GM, MF::ND, DataType::DT_INT32},
                 .org_m = kQm, .org_n = kQn, .org_k = kQk,
                 .m = kQm, .n = kQn, .k = kQk,
                 .with_bias = true,
                 .base_m = 32, .base_n = 64, .base_k = 32,
                 .more = [](matmul_tiling::MatmulApiTiling& api) {
                     api.SetDequantType(g_quant_vec ? matmul_tiling::DequantType::TENSOR
                                                    : matmul_tiling::DequantType::SCALAR);
                 }}))
        return 1;
    int8_t* a = r.gm<int8_t>(kQm * kQk);
    int8_t* b = r.gm<int8_t>(kQk * kQn);
    int32_t* bias = r.gm<int32_t>(kQn);
    half* c = r.gm<half>(kQm * kQn);
    uint64_t* words = r.gm<uint64_t>(kQn);
    uint8_t* tiling = r.tiling_gm();
    for (uint32_t i = 0; i < kQm; ++i)
        for (uint32_t k = 0; k < kQk; ++k) a[i * kQk + k] = static_cast<int8_t>(a_int(i, k));
    for (uint32_t k = 0; k < kQk; ++k)
        for (uint32_t j = 0; j < kQn; ++j) b[k * kQn + j] = static_cast<int8_t>(b_int(k, j));
    for (uint32_t j = 0; j < kQn; ++j)
        bias[j] = static_cast<int32_t>(j % 13) - 6, words[j] = word_of(scale_of(j));
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(quant_kernel, 1, (uint8_t*)a, (uint8_t*)b, (uint8_t*)bias, (uint8_t*)c, (uint8_t*)words,
                tiling);
    r.compare("C", kQm, kQn, [&](uint32_t i, uint32_t j) { return static_cast<float>(c[i * kQn + j]); },
              [&](uint32_t i, uint32_t j) {
                  int32_t acc = bias[j];
                  for (uint32_t k = 0; k < kQk; ++k) acc += a_int(i, k) * b_int(k, j);
                  return static_cast<float>(acc) * scale_of(j);  // exact in half for these values
              });
    return r.verdict();
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
    HostRun r(name);
    if (!r.tile({.a = {TP::GM, MF::ND, DataType::DT_INT4},
                 .b = {TP::GM, MF::ND, DataType::DT_INT4},
                 .c = {TP::GM, MF::ND, DataType::DT_INT32},
                 .bias = {TP::GM, MF::ND, DataType::DT_INT32},
                 .org_m = kIm, .org_n = kIn, .org_k = kIk,
                 .m = kIm, .n = kIn, .k = kIk,
                 .with_bias = true,
                 .base_m = 32, .base_n = 64, .base_k = 64}))
        return 1;
    uint8_t* a = r.gm<uint8_t>(kIm * kIk / 2);
    uint8_t* b = r.gm<uint8_t>(kIk * kIn / 2);
    int32_t* bias = r.gm<int32_t>(kIn);
    int32_t* c = r.gm<int32_t>(kIm * kIn);
    uint8_t* tiling = r.tiling_gm();
    for (uint32_t i = 0; i < kIm; ++i)
        for (uint32_t k = 0; k < kIk; ++k) put4(a, i * kIk + k, a4(i, k));
    for (uint32_t k = 0; k < kIk; ++k)
        for (uint32_t j = 0; j < kIn; ++j) put4(b, k * kIn + j, b4(k, j));
    for (uint32_t j = 0; j < kIn; ++j) bias[j] = static_cast<int32_t>(j % 11) - 5;
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(int4_kernel, 1, a, b, (uint8_t*)bias, (uint8_t*)c, tiling);
    r.compare("C", kIm, kIn, [&](uint32_t i, uint32_t j) { return c[i * kIn + j]; },
              [&](uint32_t i, uint32_t j) {
                  int32_t want = bias[j];
                  for (uint32_t k = 0; k < kIk; ++k) want += a4(i, k) * b4(k, j);
                  return want;
              });
    return r.verdict();
}

// ---- matmul_bsngd, matmul_nbatch ----
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
    HostRun r(name);
    if (!r.tile({.a = {TP::GM, MF::ND, DataType::DT_FLOAT16},
                 .b = {TP::GM, MF::ND, DataType::DT_FLOAT16, true},
                 .c = {TP::GM, MF::ND, DataType::DT_FLOAT},
                 .bias = {TP::GM, MF::ND, DataType::DT_FLOAT},
                 .org_m = kLs, .org_n = kLn, .org_k = kLd,
                 .m = kLs, .n = kLn, .k = kLd,
                 .with_bias = false,
                 .base_m = 32, .base_n = 32, .base_k = -1,
                 .more = [](matmul_tiling::MatmulApiTiling& api) {
                     api.SetALayout(kLb, kLs, 1, kLg, kLd);
                     api.SetBLayout(kLb, kLn, 1, kLg, kLd);
                     api.SetCLayout(kLb, kLs, 1, kLg, kLn);
                     api.SetBatchNum(kLb * kLg);
                 }}))
        return 1;
    half* a = r.gm<half>(kLb * kLs * kLg * kLd);
    half* b = r.gm<half>(kLb * kLn * kLg * kLd);
    float* c = r.gm<float>(kLb * kLs * kLg * kLn);
    uint8_t* tiling = r.tiling_gm();
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
    for (uint32_t x = 0; x < kLb; ++x)
        for (uint32_t g = 0; g < kLg; ++g)
            r.compare("C(b " + std::to_string(x) + ", g " + std::to_string(g) + ")", kLs, kLn,
                      [&](uint32_t s, uint32_t n) { return c[at_c(x, s, g, n)]; },
                      [&](uint32_t s, uint32_t n) {
                          float want = 0;
                          for (uint32_t d = 0; d < kLd; ++d)
                              want += float(a_int(s + 5 * x + 7 * g, d) * b_int(d, n + 3 * x + 11 * g));
                          return want;
                      });
    return r.verdict();
}

// ---- layout_coord ----
int run_layout_coord(const std::string& name) {
    HostRun r(name);
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
                        r.wrong("(" + std::to_string(i) + ", " + std::to_string(j) + ") of " +
                                std::to_string(m) + " x " + std::to_string(k) + " maps to " +
                                std::to_string(row(c)) + " / " + std::to_string(col(c)));
                }
        }
    return r.verdict();
}

}  // namespace

int matmul_forms_family(const std::string& name) {
    if (name == "matmul_quant" || name == "matmul_quant_vec") return run_quant(name);
    if (name == "matmul_int4") return run_int4(name);
    if (name == "matmul_bsngd" || name == "matmul_nbatch") return run_bsngd(name);
    if (name == "layout_coord") return run_layout_coord(name);
    return -1;
}
