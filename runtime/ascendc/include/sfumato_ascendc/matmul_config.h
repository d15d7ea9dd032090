// The high-level Matmul's compile-time configuration (MatmulConfig and the functions that build
// one: GetNormalConfig, GetMDLConfig, ..., GetMMConfig; the CFG_NORM/CFG_MDL/CFG_IBSHARE_NORM
// constants), with the fields, enumerations and default arguments of the public API reference.
// sfumato's Matmul (sfumato_ascendc/matmul.h) runs every template the same way (NORM's schedule:
// README "Matmul"); the fields it reads are iterateOrder, enUnitFlag (not yet), isPartialOutput
// and isEnableChannelSplit; the others are accepted and kept.
#pragma once
#include <cstdint>

#include "sfumato_ascendc/cube_tiling.h"

enum class CubeFormat { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR, ROW_MAJOR = ND, COLUMN_MAJOR = 8 };
enum class LayoutMode { NONE = 0, BSNGD, SBNGD, BNGS1S2, NORMAL };
enum class BatchMode { NONE = 0, BATCH_LESS_THAN_L1, BATCH_LARGE_THAN_L1, SINGLE_LARGE_THAN_L1 };
enum BatchOutMode { SINGLE_BATCH = 0, MULTI_BATCH, DYNAMIC };
enum class IterateOrder { ORDER_M = 0, ORDER_N, UNDEF };
enum class ScheduleType { INNER_PRODUCT = 0, OUTER_PRODUCT };
enum IterateMode : uint8_t {
    ITERATE_MODE_NORMAL = 1,
    ITERATE_MODE_ALL = 2,
    ITERATE_MODE_BATCH = 4,
    ITERATE_MODE_N_BATCH = 8,
    ITERATE_MODE_DEFAULT = 255
};
enum class MatmulConfigMode { CONFIG_NORM, CONFIG_MDL, CONFIG_SPECIALMDL, CONFIG_IBSHARE };
enum class DecompressionMode { DECOMP_NONE = 0 };
constexpr uint32_t SHARED_CO1_BUFFER_SIZE = 64 * 1024;

struct MatmulConfig {
    bool doNorm = false;
    bool doBasicBlock = false;
    bool doMultiDataLoad = false;
    uint32_t basicM = 0, basicN = 0, basicK = 0;
    bool intrinsicsCheck = false;
    bool isNBatch = false;
    bool enVecND2NZ = false;
    bool doSpecialBasicBlock = false;
    uint32_t doMTE2Preload = 0;
    uint32_t singleCoreM = 0, singleCoreN = 0, singleCoreK = 0;
    uint32_t stepM = 0, stepN = 0;
    uint32_t baseMN = 0, singleCoreMN = 0;
    bool enUnitFlag = true;
    bool isPerTensor = false;
    bool hasAntiQuantOffset = false;
    bool doIBShareNorm = false;
    bool doSpecialMDL = false;
    bool enableInit = true;
    BatchMode batchMode = BatchMode::NONE;
    bool enableEnd = true;
    bool enableGetTensorC = true;
    bool enableSetOrgShape = true;
    bool enableSetBias = true;
    bool enableSetTail = true;
    bool enableQuantVector = true;
    bool enableSetDefineData = true;
    uint8_t iterateMode = ITERATE_MODE_DEFAULT;
    bool enableReuse = true;
    bool enableUBReuse = false;
    bool enableL1CacheUB = false;
    bool intraBlockPartSum = false;
    IterateOrder iterateOrder = IterateOrder::UNDEF;
    ScheduleType scheduleType = ScheduleType::INNER_PRODUCT;
    bool enableDoubleCache = false;
    bool isBiasBatch = true;
    bool enableStaticPadZeros = false;
    bool isPartialOutput = false;
    bool enableMixDualMaster = false;
    bool isA2B2Shared = false;
    bool isEnableChannelSplit = false;
    bool enableKdimReorderLoad = false;
    bool isCO1Shared = false;
    uint32_t sharedCO1BufferSize = SHARED_CO1_BUFFER_SIZE;
    BatchOutMode bmmOutMode = BatchOutMode::SINGLE_BATCH;
    bool enableL1BankConflictOptimise = false;
    bool enableRelu = false;
    DecompressionMode decompMode = DecompressionMode::DECOMP_NONE;
};

// The parameter groups GetMMConfig takes (in any order), members in the reference's order.
struct MatmulShapeParams {
    uint32_t singleCoreM, singleCoreN, singleCoreK, basicM, basicN, basicK;
};
struct MatmulQuantParams {
    bool isPerTensor;
    bool hasAntiQuantOffset;
};
struct MatmulBatchParams {
    bool isNBatch;
    BatchMode batchMode;
    bool isBiasBatch = true;
    BatchOutMode bmmOutMode = BatchOutMode::SINGLE_BATCH;
};
struct MatmulFuncParams {
    bool intrinsicsCheck;
    bool enVecND2NZ;
    bool enableDoubleCache;
    bool enableL1CacheUB;
    uint32_t doMTE2Preload;
    IterateOrder iterateOrder;
    ScheduleType scheduleType;
    bool enableReuse = true;
    bool enableUBReuse;
    bool isPartialOutput = false;
    bool isA2B2Shared = false;
    bool isEnableChannelSplit = false;
    bool enableKdimReorderLoad = false;
    bool enableL1BankConflictOptimise = false;
    bool enableRelu = false;
    DecompressionMode decompMode = DecompressionMode::DECOMP_NONE;
};
struct MatmulBiasParams {
    bool enableSetBias = true;
};

constexpr MatmulConfig GetNormalConfig(const bool intrinsicsLimit = false, const bool batchLoop = false,
                                       const bool isVecND2NZ = false,
                                       const BatchMode bmmMode = BatchMode::BATCH_LESS_THAN_L1,
                                       const bool isMsgReuse = true,
                                       const IterateOrder iterateOrder = IterateOrder::UNDEF,
                                       const ScheduleType scheduleType = ScheduleType::INNER_PRODUCT,
                                       const bool enUnitFlag = true, const bool enableMixDualMaster = false,
                                       const BatchOutMode bmmOutMode = BatchOutMode::SINGLE_BATCH) {
    MatmulConfig c;
    c.doNorm = true;
    c.intrinsicsCheck = intrinsicsLimit, c.isNBatch = batchLoop, c.enVecND2NZ = isVecND2NZ;
    c.batchMode = bmmMode, c.enableReuse = isMsgReuse, c.iterateOrder = iterateOrder;
    c.scheduleType = scheduleType, c.enUnitFlag = enUnitFlag, c.enableMixDualMaster = enableMixDualMaster;
    c.bmmOutMode = bmmOutMode;
    return c;
}
constexpr MatmulConfig GetMDLConfig(const bool intrinsicsLimit = false, const bool batchLoop = false,
                                    const uint32_t doMTE2Preload = 0, const bool isVecND2NZ = false,
                                    bool isPerTensor = false, bool hasAntiQuantOffset = false,
                                    const bool enUnitFlag = false, const bool isMsgReuse = true,
                                    const bool enableUBReuse = true, const bool enableL1CacheUB = false,
                                    const bool enableMixDualMaster = false,
                                    const bool enableKdimReorderLoad = false,
                                    const bool enableL1BankConflictOptimise = false) {
    MatmulConfig c;
    c.doMultiDataLoad = true;
    c.intrinsicsCheck = intrinsicsLimit, c.isNBatch = batchLoop, c.doMTE2Preload = doMTE2Preload;
    c.enVecND2NZ = isVecND2NZ, c.isPerTensor = isPerTensor, c.hasAntiQuantOffset = hasAntiQuantOffset;
    c.enUnitFlag = enUnitFlag, c.enableReuse = isMsgReuse, c.enableUBReuse = enableUBReuse;
    c.enableL1CacheUB = enableL1CacheUB, c.enableMixDualMaster = enableMixDualMaster;
    c.enableKdimReorderLoad = enableKdimReorderLoad,
    c.enableL1BankConflictOptimise = enableL1BankConflictOptimise;
    c.batchMode = BatchMode::BATCH_LESS_THAN_L1;
    return c;
}
constexpr MatmulConfig GetSpecialMDLConfig(const bool intrinsicsLimit = false, const bool batchLoop = false,
                                           const uint32_t doMTE2Preload = 0, const bool isVecND2NZ = false,
                                           bool isPerTensor = false, bool hasAntiQuantOffset = false) {
    MatmulConfig c =
        GetMDLConfig(intrinsicsLimit, batchLoop, doMTE2Preload, isVecND2NZ, isPerTensor, hasAntiQuantOffset);
    c.doMultiDataLoad = false, c.doSpecialMDL = true;
    return c;
}
constexpr MatmulConfig GetBasicConfig(const uint32_t basicM, const uint32_t basicN, const uint32_t basicK,
                                      const bool intrinsicsLimit = false, const bool batchLoop = false,
                                      const BatchMode bmmMode = BatchMode::BATCH_LESS_THAN_L1) {
    MatmulConfig c;
    c.doBasicBlock = true, c.basicM = basicM, c.basicN = basicN, c.basicK = basicK;
    c.intrinsicsCheck = intrinsicsLimit, c.isNBatch = batchLoop, c.batchMode = bmmMode;
    return c;
}
constexpr MatmulConfig GetIBShareNormConfig(const bool intrinsicsLimit = false, const bool batchLoop = false,
                                            const bool isVecND2NZ = false,
                                            const BatchMode bmmMode = BatchMode::BATCH_LESS_THAN_L1,
                                            const bool isDoubleCache = false, const bool enUnitFlag = true) {
    MatmulConfig c;
    c.doIBShareNorm = true;
    c.intrinsicsCheck = intrinsicsLimit, c.isNBatch = batchLoop, c.enVecND2NZ = isVecND2NZ;
    c.batchMode = bmmMode, c.enableDoubleCache = isDoubleCache, c.enUnitFlag = enUnitFlag;
    return c;
}

constexpr MatmulConfig CFG_NORM = GetNormalConfig();
constexpr MatmulConfig CFG_MDL = GetMDLConfig();
constexpr MatmulConfig MM_CFG_BB = GetBasicConfig(128, 128, 128);
constexpr MatmulConfig CFG_IBSHARE_NORM = GetIBShareNormConfig();

namespace sfumato::ascendc {
constexpr void mm_config_apply(MatmulConfig& c, const MatmulShapeParams& p) {
    c.singleCoreM = p.singleCoreM, c.singleCoreN = p.singleCoreN, c.singleCoreK = p.singleCoreK;
    c.basicM = p.basicM, c.basicN = p.basicN, c.basicK = p.basicK;
}
constexpr void mm_config_apply(MatmulConfig& c, const MatmulQuantParams& p) {
    c.isPerTensor = p.isPerTensor, c.hasAntiQuantOffset = p.hasAntiQuantOffset;
}
constexpr void mm_config_apply(MatmulConfig& c, const MatmulBatchParams& p) {
    c.isNBatch = p.isNBatch, c.batchMode = p.batchMode, c.isBiasBatch = p.isBiasBatch,
    c.bmmOutMode = p.bmmOutMode;
}
constexpr void mm_config_apply(MatmulConfig& c, const MatmulFuncParams& p) {
    c.intrinsicsCheck = p.intrinsicsCheck, c.enVecND2NZ = p.enVecND2NZ,
    c.enableDoubleCache = p.enableDoubleCache;
    c.enableL1CacheUB = p.enableL1CacheUB, c.doMTE2Preload = p.doMTE2Preload, c.iterateOrder = p.iterateOrder;
    c.scheduleType = p.scheduleType, c.enableReuse = p.enableReuse, c.enableUBReuse = p.enableUBReuse;
    c.isPartialOutput = p.isPartialOutput, c.isA2B2Shared = p.isA2B2Shared;
    c.isEnableChannelSplit = p.isEnableChannelSplit, c.enableKdimReorderLoad = p.enableKdimReorderLoad;
    c.enableL1BankConflictOptimise = p.enableL1BankConflictOptimise, c.enableRelu = p.enableRelu;
    c.decompMode = p.decompMode;
}
constexpr void mm_config_apply(MatmulConfig& c, const MatmulBiasParams& p) {
    c.enableSetBias = p.enableSetBias;
}
}  // namespace sfumato::ascendc

template <MatmulConfigMode configMode, typename... ArgTypes>
constexpr MatmulConfig GetMMConfig(ArgTypes&&... args) {
    MatmulConfig c = CFG_NORM;
    if constexpr (configMode == MatmulConfigMode::CONFIG_MDL)
        c = CFG_MDL;
    else if constexpr (configMode == MatmulConfigMode::CONFIG_SPECIALMDL)
        c = GetSpecialMDLConfig();
    else if constexpr (configMode == MatmulConfigMode::CONFIG_IBSHARE)
        c = CFG_IBSHARE_NORM;
    (sfumato::ascendc::mm_config_apply(c, args), ...);
    return c;
}

// A constant tiling (the Matmul template's MM_CFG may be one): the TCubeTiling fields, -1 where
// not set, and the MatmulConfig. GetMatmulApiTiling builds one from a MatmulConfig whose
// MatmulShapeParams give the single-core and base shapes (sfumato's rules for the rest: one base
// block of A and B a step, two in L1, double-buffered L0A/L0B, L0C when two base blocks fit 128 KiB).
struct MatmulApiStaticTiling {
#define SFUMATO_TCUBE_FIELD(name) int32_t name = -1;
    SFUMATO_TCUBE_TILING_FIELDS(SFUMATO_TCUBE_FIELD)
#undef SFUMATO_TCUBE_FIELD
    MatmulConfig cfg = CFG_NORM;
};

namespace AscendC {
template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE>
constexpr MatmulApiStaticTiling GetMatmulApiTiling(const MatmulConfig& mmCFG, int32_t l1Size = 512 * 1024) {
    MatmulApiStaticTiling t;
    t.cfg = mmCFG;
    t.singleCoreM = static_cast<int32_t>(mmCFG.singleCoreM),
    t.singleCoreN = static_cast<int32_t>(mmCFG.singleCoreN);
    t.singleCoreK = static_cast<int32_t>(mmCFG.singleCoreK);
    t.baseM = static_cast<int32_t>(mmCFG.basicM), t.baseN = static_cast<int32_t>(mmCFG.basicN);
    t.baseK = static_cast<int32_t>(mmCFG.basicK);
    t.stepM = t.stepN = t.stepKa = t.stepKb = 1;
    t.depthA1 = t.depthB1 = l1Size > 0 ? 2 : 1;
    t.dbL0A = t.dbL0B = 2;
    t.dbL0C = t.baseM * t.baseN * 4 * 2 <= 128 * 1024 ? 2 : 1;
    t.iterateOrder = 0;
    t.isBias = mmCFG.enableSetBias ? 1 : 0;
    return t;
}
}  // namespace AscendC

namespace sfumato::ascendc {
// The MatmulConfig of a Matmul's MM_CFG (a MatmulConfig or a constant tiling).
constexpr const MatmulConfig& mm_cfg_of(const MatmulConfig& c) { return c; }
constexpr const MatmulConfig& mm_cfg_of(const MatmulApiStaticTiling& t) { return t.cfg; }
}  // namespace sfumato::ascendc
