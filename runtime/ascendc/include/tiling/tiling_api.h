// Host tiling API of the high-level Matmul (namespace matmul_tiling): MatmulApiTiling (one core),
// MultiCoreMatmulTiling (the shape split over cores) and BatchMatmulTiling, filling the
// TCubeTiling tiling data (optiling::TCubeTiling, or the kernel's struct) with GetTiling. The
// tiling rules are sfumato's own (runtime/ascendc/matmul_tiling.cpp; README "Matmul"): they give a
// valid tiling for the chip the program runs on (base blocks within L0A/L0B/L0C and the bias
// table, the L1 buffers within L1), not the vendor's numbers.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iostream>  // the reference's header gives programs std::cout

#include "sfumato_ascendc/cube_tiling.h"
#include "sfumato_ascendc/activation_host.h"
#include "sfumato_ascendc/math_host.h"
#include "sfumato_ascendc/reduce_host.h"
#include "sfumato_ascendc/layout_host.h"
#include "sfumato_ascendc/norm_more_host.h"
#include "sfumato_ascendc/norm_host.h"
#include "sfumato_ascendc/quant_host.h"
#include "sfumato_ascendc/securec.h"
#include "sfumato_ascendc/topk_host.h"
#include "sfumato_ascendc/softmax_host.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
// The operator-project form of the tiling data: set_/get_ accessors, GetDataSize, SaveToBuffer.
class TCubeTiling {
public:
#define SFUMATO_TCUBE_FIELD(name)            \
    int32_t name = 0;                        \
    void set_##name(int32_t v) { name = v; } \
    int32_t get_##name() const { return name; }
    SFUMATO_TCUBE_TILING_FIELDS(SFUMATO_TCUBE_FIELD)
#undef SFUMATO_TCUBE_FIELD
    size_t GetDataSize() const { return sizeof(::TCubeTiling); }
    void SaveToBuffer(void* buf, size_t capacity) const {
        ::TCubeTiling t = to_struct();
        std::memcpy(buf, &t, capacity < sizeof t ? capacity : sizeof t);
    }
    ::TCubeTiling to_struct() const {
        ::TCubeTiling t;
#define SFUMATO_TCUBE_FIELD(name) t.name = name;
        SFUMATO_TCUBE_TILING_FIELDS(SFUMATO_TCUBE_FIELD)
#undef SFUMATO_TCUBE_FIELD
        return t;
    }
    void from_struct(const ::TCubeTiling& t) {
#define SFUMATO_TCUBE_FIELD(name) name = t.name;
        SFUMATO_TCUBE_TILING_FIELDS(SFUMATO_TCUBE_FIELD)
#undef SFUMATO_TCUBE_FIELD
    }
};
}  // namespace optiling

namespace matmul_tiling {

// The values of the public enumerations.
enum class DataType : int32_t {
    DT_FLOAT = 0,
    DT_FLOAT16 = 1,
    DT_INT8 = 2,
    DT_INT32 = 3,
    DT_UINT8 = 4,
    DT_INT16 = 6,
    DT_UINT16 = 7,
    DT_UINT32 = 8,
    DT_INT64 = 9,
    DT_UINT64 = 10,
    DT_DOUBLE = 11,
    DT_BOOL = 12,
    DT_BF16 = 27,
    DT_UNDEFINED = 28,
    DT_INT4 = 29,
    DT_BFLOAT16 = 33,
    DT_HIFLOAT8 = 34,
    DT_FLOAT8_E4M3FN = 35,
    DT_FLOAT8_E5M2 = 36,
    DT_FLOAT4_E2M1 = 37,
    DT_FLOAT8_E8M0 = 38,
    DT_FLOAT4_E1M2 = 39,
    DT_MAX = 40
};
enum class TPosition : int32_t {
    GM,
    A1,
    A2,
    B1,
    B2,
    C1,
    C2,
    CO1,
    CO2,
    VECIN,
    VECOUT,
    VECCALC,
    LCM = VECCALC,
    SPM,
    SHM = SPM,
    TSCM,
    MAX
};
enum class CubeFormat : int32_t {
    ND = 0,
    NZ,
    ZN,
    ZZ,
    NN,
    ND_ALIGN,
    SCALAR,
    VECTOR,
    ROW_MAJOR = ND,
    COLUMN_MAJOR = 8
};
enum class MatrixTraverse : int32_t { NOSET = 0, FIRSTM = 1, FIRSTN = 2 };
enum class MatrixMadType : int32_t { NORMAL = 0, HF32 = 1, MXMODE = 2 };
enum class DequantType : int32_t { SCALAR = 0, TENSOR = 1 };
enum class ScheduleType : int32_t { INNER_PRODUCT = 0, OUTER_PRODUCT = 1, N_BUFFER_33 = 2 };

struct MatmulConfigParams {
    MatmulConfigParams(int32_t mmConfigTypeIn = 1, bool enableL1CacheUBIn = false,
                       ScheduleType scheduleTypeIn = ScheduleType::INNER_PRODUCT,
                       MatrixTraverse traverseIn = MatrixTraverse::NOSET, bool enVecND2NZIn = false)
        : mmConfigType(mmConfigTypeIn),
          enableL1CacheUB(enableL1CacheUBIn),
          scheduleType(scheduleTypeIn),
          traverse(traverseIn),
          enVecND2NZ(enVecND2NZIn) {}
    int32_t mmConfigType = 1;
    bool enableL1CacheUB = false;
    ScheduleType scheduleType = ScheduleType::INNER_PRODUCT;
    MatrixTraverse traverse = MatrixTraverse::NOSET;
    bool enVecND2NZ = false;
};

// The operands' description (SetAType/SetBType/SetCType/SetBiasType).
struct MatType {
    TPosition pos = TPosition::GM;
    CubeFormat format = CubeFormat::ND;
    DataType type = DataType::DT_UNDEFINED;
    bool trans = false;
    bool set = false;
};

class MatmulApiTilingBase {
public:
    MatmulApiTilingBase();
    explicit MatmulApiTilingBase(const platform_ascendc::PlatformAscendC& platform);
    virtual ~MatmulApiTilingBase() = default;

    int32_t SetAType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans = false);
    int32_t SetBType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans = false);
    int32_t SetCType(TPosition pos, CubeFormat type, DataType dataType);
    int32_t SetBiasType(TPosition pos, CubeFormat type, DataType dataType);
    int32_t SetDequantType(DequantType dequantType);
    int32_t SetOrgShape(int32_t orgMIn, int32_t orgNIn, int32_t orgKIn);
    int32_t SetOrgShape(int32_t orgMIn, int32_t orgNIn, int32_t orgKaIn, int32_t orgKbIn);
    int32_t SetShape(int32_t m, int32_t n, int32_t k);
    int32_t SetFixSplit(int32_t baseMIn = -1, int32_t baseNIn = -1, int32_t baseKIn = -1);
    int32_t SetBufferSpace(int32_t l1Size = -1, int32_t l0CSize = -1, int32_t ubSize = -1,
                           int32_t btSize = -1);
    int32_t SetTraverse(MatrixTraverse traverse);
    int32_t SetMadType(MatrixMadType madType);
    int32_t SetSplitRange(int32_t maxBaseM = -1, int32_t maxBaseN = -1, int32_t maxBaseK = -1,
                          int32_t minBaseM = -1, int32_t minBaseN = -1, int32_t minBaseK = -1);
    int32_t SetDoubleBuffer(bool a, bool b, bool c, bool bias, bool transND2NZ = true,
                            bool transNZ2ND = true);
    int32_t EnableBias(bool isBiasIn = false);
    int32_t SetBias(bool isBiasIn = false) { return EnableBias(isBiasIn); }
    int32_t SetALayout(int32_t b, int32_t s, int32_t n, int32_t g, int32_t d);
    int32_t SetBLayout(int32_t b, int32_t s, int32_t n, int32_t g, int32_t d);
    int32_t SetCLayout(int32_t b, int32_t s1, int32_t n, int32_t g, int32_t s2);
    int32_t SetBatchNum(int32_t batch);
    int32_t SetSparse(bool isSparseIn = false);
    void SetMatmulConfigParams(int32_t mmConfigTypeIn = 1, bool enableL1CacheUBIn = false,
                               ScheduleType scheduleTypeIn = ScheduleType::INNER_PRODUCT,
                               MatrixTraverse traverseIn = MatrixTraverse::NOSET, bool enVecND2NZIn = false);
    void SetMatmulConfigParams(const MatmulConfigParams& configParams);
    int32_t GetBaseM() const { return m_out.baseM; }
    int32_t GetBaseN() const { return m_out.baseN; }
    int32_t GetBaseK() const { return m_out.baseK; }

    // 0 and the tiling data filled, or -1 (the reason on stderr) when no valid tiling exists.
    int64_t GetTiling(optiling::TCubeTiling& tiling);
    int64_t GetTiling(::TCubeTiling& tiling);

protected:
    virtual bool split_cores(int32_t& singleM, int32_t& singleN, int32_t& singleK) = 0;
    bool compute(::TCubeTiling& t);
    bool check_input(const char*& why) const;

    uint32_t m_aic = 1;
    uint64_t m_l1 = 0, m_l0a = 0, m_l0b = 0, m_l0c = 0, m_ub = 0, m_bt = 1024;
    MatType m_a, m_b, m_c, m_bias;
    int32_t m_orgM = -1, m_orgN = -1, m_orgKa = -1, m_orgKb = -1;
    int32_t m_m = -1, m_n = -1, m_k = -1;
    int32_t m_fixM = -1, m_fixN = -1, m_fixK = -1;
    int32_t m_maxBaseM = -1, m_maxBaseN = -1, m_maxBaseK = -1;
    int32_t m_batch = 1;
    bool m_bias_on = false;
    bool m_sparse = false;  // SetSparse(true): a 4:2 sparse B (baseK a multiple of 64)
    MatrixTraverse m_traverse = MatrixTraverse::NOSET;
    int32_t m_layout[15] = {};
    ::TCubeTiling m_out{};
};

// One core: the single-core shape is the whole shape (or SetShape's).
class MatmulApiTiling : public MatmulApiTilingBase {
public:
    MatmulApiTiling() = default;
    explicit MatmulApiTiling(const platform_ascendc::PlatformAscendC& platform)
        : MatmulApiTilingBase(platform) {}

protected:
    bool split_cores(int32_t& singleM, int32_t& singleN, int32_t& singleK) override;
};

// The shape split over SetDim cores (M and N; K whole unless EnableMultiCoreSplitK).
class MultiCoreMatmulTiling : public MatmulApiTilingBase {
public:
    MultiCoreMatmulTiling() = default;
    explicit MultiCoreMatmulTiling(const platform_ascendc::PlatformAscendC& platform)
        : MatmulApiTilingBase(platform) {}
    int32_t SetDim(int32_t dim);
    int32_t SetSingleShape(int32_t singleMIn = -1, int32_t singleNIn = -1, int32_t singleKIn = -1);
    int32_t SetSingleRange(int32_t maxM = -1, int32_t maxN = -1, int32_t maxK = -1, int32_t minM = -1,
                           int32_t minN = -1, int32_t minK = -1);
    int32_t GetSingleShape(int32_t& shapeM, int32_t& shapeN, int32_t& shapeK);
    int32_t GetCoreNum(int32_t& dim, int32_t& mDim, int32_t& nDim);
    void EnableMultiCoreSplitK(bool flag) { m_split_k = flag; }
    void SetSplitK(bool flag) { m_split_k = flag; }
    int32_t SetAlignSplit(int32_t alignM, int32_t alignN, int32_t alignK);

protected:
    bool split_cores(int32_t& singleM, int32_t& singleN, int32_t& singleK) override;
    int32_t m_dim = -1, m_singleM = -1, m_singleN = -1, m_singleK = -1;
    int32_t m_mDim = 1, m_nDim = 1;
    bool m_split_k = false;
};

// A batch of matmuls of one shape on one core (the kernel's IterateBatch walks the batch): the one-core
// tiling of one [M, N, K] with BatchNum set; SetBatchInfoForNormal gives the batch counts and the shape of
// the NORMAL layout (each matrix contiguous).
class BatchMatmulTiling : public MatmulApiTiling {
public:
    BatchMatmulTiling() = default;
    explicit BatchMatmulTiling(const platform_ascendc::PlatformAscendC& platform) : MatmulApiTiling(platform) {}
    int32_t SetBatchInfoForNormal(int32_t batchA, int32_t batchB, int32_t m, int32_t n, int32_t k);
};

}  // namespace matmul_tiling

namespace optiling {
using matmul_tiling::MatmulApiTiling;
using matmul_tiling::MultiCoreMatmulTiling;
}  // namespace optiling
