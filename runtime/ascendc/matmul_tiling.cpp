// The high-level Matmul's host tiling (tiling/tiling_api.h): sfumato's own rules, which give a
// valid TCubeTiling for the chip the program runs on. The choices, in order:
//  1. cores (MultiCoreMatmulTiling): M and N split over at most SetDim cores into 16-aligned
//     single-core shapes, the split with the smallest estimated per-core time (cube work at 16 x 16
//     x K0 per cycle plus the A and B bytes each core reads at 64 B/cycle; both only rank the
//     splits), ties to fewer cores; with A in TSCM (a core's whole A in L1) only N is split; a split whose tiles divide M and N is taken unless 1.5 times
//     slower (edge tiles need SetTail in the kernel); K is split only with EnableMultiCoreSplitK, over the
//     cores M and N leave idle, into equal ranges (a multiple of 16 dividing K). SetSingleShape fixes the
//     shapes.
//  2. base block: baseM <= 128, baseN <= 256 (16-aligned, at most the single-core shape), baseK
//     the largest multiple of 16 (of C0 for 1-byte types) with the A and B base blocks twice
//     (double-buffered) in L0A and L0B; baseM x baseN x 4 B in L0C, twice when it fits (dbL0C);
//     with a bias baseN x 4 B within the bias table (1 KiB). SetFixSplit fixes them instead.
//  3. L1: one base block of A and of B per step (stepM = stepN = stepKa = stepKb = 1), two of each
//     (depthA1 = depthB1 = 2) when they fit in L1 with the bias, else one.
//  4. iterateOrder 0 (M first), 1 with SetTraverse(FIRSTN).
#include <algorithm>
#include <cstdio>

#include "tiling/tiling_api.h"

namespace matmul_tiling {

namespace {

int32_t type_bytes_x2(DataType t) {  // element size x 2 (int4: 1)
    switch (t) {
        case DataType::DT_FLOAT:
        case DataType::DT_INT32:
        case DataType::DT_UINT32:
            return 8;
        case DataType::DT_FLOAT16:
        case DataType::DT_BF16:
        case DataType::DT_BFLOAT16:
        case DataType::DT_INT16:
        case DataType::DT_UINT16:
            return 4;
        case DataType::DT_INT8:
        case DataType::DT_UINT8:
        case DataType::DT_HIFLOAT8:
        case DataType::DT_FLOAT8_E4M3FN:
        case DataType::DT_FLOAT8_E5M2:
            return 2;
        case DataType::DT_INT4:
            return 1;
        default:
            return 0;
    }
}
int64_t align(int64_t v, int64_t a) { return (v + a - 1) / a * a; }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t fail(const char* why) {
    std::fprintf(stderr, "matmul_tiling: GetTiling: %s\n", why);
    return -1;
}

}  // namespace

MatmulApiTilingBase::MatmulApiTilingBase()
    : MatmulApiTilingBase(*platform_ascendc::PlatformAscendCManager::GetInstance()) {}

MatmulApiTilingBase::MatmulApiTilingBase(const platform_ascendc::PlatformAscendC& platform) {
    using platform_ascendc::CoreMemType;
    m_aic = std::max(1u, platform.GetCoreNumAic());
    platform.GetCoreMemSize(CoreMemType::L1, m_l1);
    platform.GetCoreMemSize(CoreMemType::L0_A, m_l0a);
    platform.GetCoreMemSize(CoreMemType::L0_B, m_l0b);
    platform.GetCoreMemSize(CoreMemType::L0_C, m_l0c);
    platform.GetCoreMemSize(CoreMemType::UB, m_ub);
}

int32_t MatmulApiTilingBase::SetAType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans) {
    m_a = {pos, type, dataType, isTrans, true};
    return 0;
}
int32_t MatmulApiTilingBase::SetBType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans) {
    m_b = {pos, type, dataType, isTrans, true};
    return 0;
}
int32_t MatmulApiTilingBase::SetCType(TPosition pos, CubeFormat type, DataType dataType) {
    m_c = {pos, type, dataType, false, true};
    return 0;
}
int32_t MatmulApiTilingBase::SetBiasType(TPosition pos, CubeFormat type, DataType dataType) {
    m_bias = {pos, type, dataType, false, true};
    return 0;
}
int32_t MatmulApiTilingBase::SetDequantType(DequantType) { return 0; }
int32_t MatmulApiTilingBase::SetOrgShape(int32_t orgMIn, int32_t orgNIn, int32_t orgKIn) {
    return SetOrgShape(orgMIn, orgNIn, orgKIn, orgKIn);
}
int32_t MatmulApiTilingBase::SetOrgShape(int32_t orgMIn, int32_t orgNIn, int32_t orgKaIn, int32_t orgKbIn) {
    m_orgM = orgMIn, m_orgN = orgNIn, m_orgKa = orgKaIn, m_orgKb = orgKbIn;
    return 0;
}
int32_t MatmulApiTilingBase::SetShape(int32_t m, int32_t n, int32_t k) {
    m_m = m, m_n = n, m_k = k;
    return 0;
}
int32_t MatmulApiTilingBase::SetFixSplit(int32_t baseMIn, int32_t baseNIn, int32_t baseKIn) {
    m_fixM = baseMIn, m_fixN = baseNIn, m_fixK = baseKIn;
    return 0;
}
int32_t MatmulApiTilingBase::SetBufferSpace(int32_t l1Size, int32_t l0CSize, int32_t ubSize, int32_t btSize) {
    if (l1Size > 0) m_l1 = std::min<uint64_t>(m_l1, static_cast<uint64_t>(l1Size));
    if (l0CSize > 0) m_l0c = std::min<uint64_t>(m_l0c, static_cast<uint64_t>(l0CSize));
    if (ubSize > 0) m_ub = std::min<uint64_t>(m_ub, static_cast<uint64_t>(ubSize));
    if (btSize > 0) m_bt = std::min<uint64_t>(m_bt, static_cast<uint64_t>(btSize));
    return 0;
}
int32_t MatmulApiTilingBase::SetTraverse(MatrixTraverse traverse) {
    m_traverse = traverse;
    return 0;
}
int32_t MatmulApiTilingBase::SetMadType(MatrixMadType) { return 0; }
int32_t MatmulApiTilingBase::SetSplitRange(int32_t maxBaseM, int32_t maxBaseN, int32_t maxBaseK, int32_t,
                                           int32_t, int32_t) {
    m_maxBaseM = maxBaseM, m_maxBaseN = maxBaseN, m_maxBaseK = maxBaseK;
    return 0;
}
int32_t MatmulApiTilingBase::SetDoubleBuffer(bool, bool, bool, bool, bool, bool) { return 0; }
int32_t MatmulApiTilingBase::EnableBias(bool isBiasIn) {
    m_bias_on = isBiasIn;
    return 0;
}
int32_t MatmulApiTilingBase::SetALayout(int32_t b, int32_t s, int32_t n, int32_t g, int32_t d) {
    const int32_t v[5] = {b, s, n, g, d};
    std::copy(v, v + 5, m_layout);
    return 0;
}
int32_t MatmulApiTilingBase::SetBLayout(int32_t b, int32_t s, int32_t n, int32_t g, int32_t d) {
    const int32_t v[5] = {b, s, n, g, d};
    std::copy(v, v + 5, m_layout + 5);
    return 0;
}
int32_t MatmulApiTilingBase::SetCLayout(int32_t b, int32_t s1, int32_t n, int32_t g, int32_t s2) {
    const int32_t v[5] = {b, s1, n, g, s2};
    std::copy(v, v + 5, m_layout + 10);
    return 0;
}
int32_t MatmulApiTilingBase::SetBatchNum(int32_t batch) {
    m_batch = batch;
    return 0;
}
int32_t MatmulApiTilingBase::SetSparse(bool isSparseIn) {
    m_sparse = isSparseIn;
    return 0;
}
void MatmulApiTilingBase::SetMatmulConfigParams(int32_t, bool, ScheduleType, MatrixTraverse traverseIn,
                                                bool) {
    if (traverseIn != MatrixTraverse::NOSET) m_traverse = traverseIn;
}
void MatmulApiTilingBase::SetMatmulConfigParams(const MatmulConfigParams& p) {
    SetMatmulConfigParams(p.mmConfigType, p.enableL1CacheUB, p.scheduleType, p.traverse, p.enVecND2NZ);
}

bool MatmulApiTilingBase::check_input(const char*& why) const {
    if (!m_a.set || !m_b.set || !m_c.set) return why = "SetAType, SetBType and SetCType come first", false;
    if (type_bytes_x2(m_a.type) == 0 || m_a.type != m_b.type)
        return why = "A and B need one supported element type (float, half, bfloat16, int8, int4)", false;
    if (m_m <= 0 || m_n <= 0 || m_k <= 0)
        return why = "SetShape(m, n, k) with positive sizes comes first", false;
    if (m_m > (1 << 24) || m_n > (1 << 24) || m_k > (1 << 24)) return why = "a dimension past 2^24", false;
    return true;
}

int64_t MatmulApiTilingBase::GetTiling(optiling::TCubeTiling& tiling) {
    ::TCubeTiling t{};
    const int64_t r = GetTiling(t);
    if (r == 0) tiling.from_struct(t);
    return r;
}

int64_t MatmulApiTilingBase::GetTiling(::TCubeTiling& tiling) {
    const char* why = nullptr;
    // SetShape's -1: the original shape's size (SetOrgShape).
    if (m_m <= 0 && m_orgM > 0) m_m = m_orgM;
    if (m_n <= 0 && m_orgN > 0) m_n = m_orgN;
    if (m_k <= 0 && m_orgKa > 0) m_k = m_orgKa;
    if (!check_input(why)) return fail(why);
    ::TCubeTiling t{};
    t.M = m_orgM > 0 ? m_orgM : m_m;
    t.N = m_orgN > 0 ? m_orgN : m_n;
    t.Ka = m_orgKa > 0 ? m_orgKa : m_k;
    t.Kb = m_orgKb > 0 ? m_orgKb : m_k;
    if (!split_cores(t.singleCoreM, t.singleCoreN, t.singleCoreK))
        return fail("no split of the shape over the cores");
    t.usedCoreNum = static_cast<int32_t>(ceil_div(m_m, t.singleCoreM) * ceil_div(m_n, t.singleCoreN) *
                                         ceil_div(m_k, t.singleCoreK));
    if (!compute(t)) return fail("the base blocks do not fit L0A/L0B/L0C/the bias table or L1 of this chip");
    m_out = tiling = t;
    return 0;
}

// Steps 2-4 of the rules above, on t with its shapes and single-core shapes set.
bool MatmulApiTilingBase::compute(::TCubeTiling& t) {
    const int64_t esx2 = type_bytes_x2(m_a.type);
    // C0 of 1-byte (and int4) types, else 16; a 4:2 sparse B's index covers k in groups of 64.
    const int64_t kAlign = m_sparse ? 64 : esx2 <= 2 ? 32 * 2 / esx2 : 16;
    const int64_t bias_es = m_bias.set && type_bytes_x2(m_bias.type) == 4 ? 2 : 4;
    int64_t baseM =
        m_fixM > 0 ? m_fixM : std::min<int64_t>(align(t.singleCoreM, 16), m_maxBaseM > 0 ? m_maxBaseM : 128);
    int64_t baseN =
        m_fixN > 0 ? m_fixN : std::min<int64_t>(align(t.singleCoreN, 16), m_maxBaseN > 0 ? m_maxBaseN : 256);
    if (m_bias_on && m_fixN <= 0) baseN = std::min<int64_t>(baseN, static_cast<int64_t>(m_bt / 4) / 16 * 16);
    while (m_fixN <= 0 && baseN > 16 && baseM * baseN * 4 > static_cast<int64_t>(m_l0c)) baseN -= 16;
    while (m_fixM <= 0 && baseM > 16 && baseM * baseN * 4 > static_cast<int64_t>(m_l0c)) baseM -= 16;
    int64_t baseK = m_fixK;
    if (baseK <= 0) {
        const int64_t l0 = static_cast<int64_t>(
            std::min(m_l0a * 2 / std::max<int64_t>(baseM, 1), m_l0b * 2 / std::max<int64_t>(baseN, 1)));
        baseK = l0 / (2 * esx2) / kAlign * kAlign;  // 2 buffers, esx2/2 bytes an element
        baseK = std::min<int64_t>(baseK, align(t.singleCoreK, kAlign));
        if (m_maxBaseK > 0)
            baseK = std::min<int64_t>(baseK, std::max<int64_t>(kAlign, m_maxBaseK / kAlign * kAlign));
    }
    if (baseM <= 0 || baseN <= 0 || baseK <= 0 || baseM % 16 || baseN % 16 || baseK % 16) return false;
    const int64_t a0 = baseM * baseK * esx2 / 2, b0 = baseN * baseK * esx2 / 2, c0 = baseM * baseN * 4;
    if (a0 > static_cast<int64_t>(m_l0a) || b0 > static_cast<int64_t>(m_l0b) ||
        c0 > static_cast<int64_t>(m_l0c))
        return false;
    if (m_bias_on && baseN * 4 > static_cast<int64_t>(m_bt)) return false;
    const int64_t bias_l1 = m_bias_on ? align(baseN * bias_es, 32) : 0;
    const int64_t l1_db = 2 * (a0 + b0) + bias_l1 <= static_cast<int64_t>(m_l1) ? 2 : 1;
    if (a0 + b0 + bias_l1 > static_cast<int64_t>(m_l1)) return false;
    t.baseM = static_cast<int32_t>(baseM), t.baseN = static_cast<int32_t>(baseN),
    t.baseK = static_cast<int32_t>(baseK);
    t.stepM = t.stepN = t.stepKa = t.stepKb = 1;
    t.depthA1 = t.depthB1 = static_cast<int32_t>(l1_db);
    t.dbL0A = 2 * a0 <= static_cast<int64_t>(m_l0a) ? 2 : 1;
    t.dbL0B = 2 * b0 <= static_cast<int64_t>(m_l0b) ? 2 : 1;
    t.dbL0C = 2 * c0 <= static_cast<int64_t>(m_l0c) ? 2 : 1;
    t.isBias = m_bias_on ? 1 : 0;
    t.iterateOrder = m_traverse == MatrixTraverse::FIRSTN ? 1 : 0;
    t.shareMode = 0, t.shareL1Size = static_cast<int32_t>((a0 + b0) * l1_db + bias_l1);
    t.shareL0CSize = static_cast<int32_t>(c0 * t.dbL0C), t.shareUbSize = 0, t.transLength = 0;
    t.BatchNum = m_batch;
    int32_t* layout = &t.ALayoutInfoB;
    std::copy(m_layout, m_layout + 15, layout);
    return true;
}

bool MatmulApiTiling::split_cores(int32_t& singleM, int32_t& singleN, int32_t& singleK) {
    singleM = m_m, singleN = m_n, singleK = m_k;
    return true;
}

int32_t BatchMatmulTiling::SetBatchInfoForNormal(int32_t batchA, int32_t batchB, int32_t m, int32_t n, int32_t k) {
    if (batchA <= 0 || batchB <= 0 || m <= 0 || n <= 0 || k <= 0) return -1;
    SetBatchNum(std::max(batchA, batchB));
    SetOrgShape(m, n, k);
    SetShape(m, n, k);
    return 0;
}

int32_t MultiCoreMatmulTiling::SetDim(int32_t dim) {
    m_dim = dim;
    return 0;
}
int32_t MultiCoreMatmulTiling::SetSingleShape(int32_t singleMIn, int32_t singleNIn, int32_t singleKIn) {
    m_singleM = singleMIn, m_singleN = singleNIn, m_singleK = singleKIn;
    return 0;
}
int32_t MultiCoreMatmulTiling::SetSingleRange(int32_t, int32_t, int32_t, int32_t, int32_t, int32_t) {
    return 0;
}
int32_t MultiCoreMatmulTiling::SetAlignSplit(int32_t, int32_t, int32_t) { return 0; }
int32_t MultiCoreMatmulTiling::GetSingleShape(int32_t& shapeM, int32_t& shapeN, int32_t& shapeK) {
    shapeM = m_out.singleCoreM, shapeN = m_out.singleCoreN, shapeK = m_out.singleCoreK;
    return 0;
}
int32_t MultiCoreMatmulTiling::GetCoreNum(int32_t& dim, int32_t& mDim, int32_t& nDim) {
    dim = m_out.usedCoreNum, mDim = m_mDim, nDim = m_nDim;
    return 0;
}

bool MultiCoreMatmulTiling::split_cores(int32_t& singleM, int32_t& singleN, int32_t& singleK) {
    const int64_t dim = m_dim > 0 ? m_dim : m_aic;
    singleK = m_singleK > 0 ? m_singleK : m_k;
    if (m_singleM > 0 && m_singleN > 0) {
        singleM = m_singleM, singleN = m_singleN;
    } else {
        const int64_t esx2 = type_bytes_x2(m_a.type), k = m_k;
        struct Pick {
            double work = -1;
            int64_t used = 0, sm = 0, sn = 0;
        } best, even;  // the best split, and the best whose tiles divide M and N
        // A in TSCM (the core's whole A resident in L1, the kernel's copy): M is not split over cores.
        const int64_t md_max = m_a.pos == TPosition::TSCM ? 1 : dim;
        for (int64_t md = 1; md <= md_max; ++md)
            for (int64_t nd = 1; md * nd <= dim; ++nd) {
                const int64_t sm = align(ceil_div(m_m, md), 16), sn = align(ceil_div(m_n, nd), 16);
                const int64_t used = ceil_div(m_m, sm) * ceil_div(m_n, sn);
                const double work = static_cast<double>(sm) * sn * k / (16.0 * 16.0 * (64.0 / esx2)) +
                                    static_cast<double>(sm + sn) * k * esx2 / 2.0 / 64.0;
                for (Pick* p : {&best, &even}) {
                    if (p == &even && (m_m % sm != 0 || m_n % sn != 0)) continue;
                    if (p->work < 0 || work < p->work * 0.999 || (work <= p->work * 1.001 && used < p->used))
                        *p = {work, used, sm, sn};
                }
            }
        // Edge cores with a smaller tile need SetTail in the kernel: a split without them is taken
        // unless it is 1.5 times slower.
        const Pick& pick = even.work >= 0 && even.work <= 1.5 * best.work ? even : best;
        singleM = static_cast<int32_t>(std::min<int64_t>(pick.sm, m_m));
        singleN = static_cast<int32_t>(std::min<int64_t>(pick.sn, m_n));
    }
    m_mDim = static_cast<int32_t>(ceil_div(m_m, singleM)),
    m_nDim = static_cast<int32_t>(ceil_div(m_n, singleN));
    // Split K (EnableMultiCoreSplitK): the cores M and N leave idle take equal K ranges, a multiple
    // of 16 each and dividing K (each core's partial sum is added into C with an atomic store).
    if (m_split_k && m_singleK <= 0 && singleM > 0 && singleN > 0) {
        const int64_t free_cores = dim / std::max<int64_t>(1, int64_t{m_mDim} * m_nDim);
        for (int64_t kd = free_cores; kd > 1; --kd)
            if (m_k % kd == 0 && (m_k / kd) % 16 == 0) {
                singleK = static_cast<int32_t>(m_k / kd);
                break;
            }
    }
    return singleM > 0 && singleN > 0 && singleK > 0;
}

}  // namespace matmul_tiling
