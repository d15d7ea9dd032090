// Names of the public Ascend C API that are plain definitions: the function qualifiers (empty
// here: a kernel is host C++ that sfumato runs on a simulated core), GM_ADDR, the pipe and
// event enumerations (global, as in the vendor's headers), positions, rounding and comparison
// modes, and the parameter structs of the copy, vector and cube calls with their public field
// names and order (so aggregate initialisation in kernels means what it means on the chip).
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "sfumato_ascendc/scalar_types.h"

#define __global__
#define __aicore__
#define __vector__
#define __cube__
#define __gm__
#define __ubuf__
#define __cbuf__
#define __ca__
#define __cb__
#define __cc__
#define __mix__(...)
#define __inline__ inline
// The vendor compiler's `__forceinline__[host, aicore]` (placement list included) is an inline
// function here: sfumato-asc removes the list from the preprocessed source (asc-rewrite --preprocessed).
#ifndef __forceinline__
#define __forceinline__ inline
#endif
#ifndef GM_ADDR
#define GM_ADDR __gm__ uint8_t*
#endif
// The vendor's kernel headers' branch hint (catlass uses it).
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif
#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif

enum pipe_t : uint8_t {
    PIPE_S = 0,
    PIPE_V,
    PIPE_M,
    PIPE_MTE1,
    PIPE_MTE2,
    PIPE_MTE3,
    PIPE_ALL,
    PIPE_MTE4,
    PIPE_MTE5,
    PIPE_V2,
    PIPE_FIX,
};

enum event_t : uint8_t {
    EVENT_ID0 = 0,
    EVENT_ID1,
    EVENT_ID2,
    EVENT_ID3,
    EVENT_ID4,
    EVENT_ID5,
    EVENT_ID6,
    EVENT_ID7,
};

// FixPipe conversions (global in the vendor's headers).
enum class QuantMode_t : uint8_t {
    NoQuant = 0,
    F322F16,
    F322BF16,
    DEQF16,
    VDEQF16,
    QF322B8_PRE,
    VQF322B8_PRE,
    REQ8,
    VREQ8,
    F322F32,
};

// CPU-debug kernel mode (global in the vendor's headers: `SetKernelMode(KernelMode::AIV_MODE)`).
enum class KernelMode { MIX_MODE = 0, AIC_MODE, AIV_MODE };

namespace AscendC {

using ::KernelMode;
using TEventID = int8_t;

enum class TPosition : uint8_t {
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
    C2PIPE2GM,
    C2PIPE2LOCAL,
    MAX,
};
using QuePosition = TPosition;

enum class Hardware : uint8_t { GM, UB, L1, L0A, L0B, L0C, BIAS, FIXBUF, MAX };

enum class HardEvent : uint8_t {
    MTE2_MTE1,
    MTE1_MTE2,
    MTE1_M,
    M_MTE1,
    MTE2_V,
    V_MTE2,
    MTE3_V,
    V_MTE3,
    M_V,
    V_M,
    V_V,
    MTE3_MTE1,
    MTE1_MTE3,
    MTE1_V,
    MTE2_M,
    M_MTE2,
    V_MTE1,
    M_FIX,
    FIX_M,
    MTE3_MTE2,
    MTE2_MTE3,
    S_V,
    V_S,
    S_MTE2,
    MTE2_S,
    S_MTE3,
    MTE3_S,
    MTE2_FIX,
    FIX_MTE2,
    FIX_S,
    M_S,
    FIX_MTE3,
    MTE1_FIX,
    FIX_MTE1,
    FIX_FIX,
    MAX,
};

enum class RoundMode : uint8_t {
    CAST_NONE = 0,
    CAST_RINT,
    CAST_FLOOR,
    CAST_CEIL,
    CAST_ROUND,
    CAST_TRUNC,
    CAST_ODD,
};

enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };
enum class ReduceOrder : uint8_t { ORDER_VALUE_INDEX = 0, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };
enum class BlockMode : uint8_t { BLOCK_MODE_NORMAL = 0, BLOCK_MODE_MATRIX, BLOCK_MODE_VECTOR, BLOCK_MODE_SMALL_CHANNEL, BLOCK_MODE_DEPTHWISE };
enum class DeqScale : uint8_t { DEQ_NONE = 0, DEQ, VDEQ, DEQ8, VDEQ8, DEQ16, VDEQ16 };
enum class pad_t : uint8_t { PAD_NONE = 0, PAD_MODE1, PAD_MODE2, PAD_MODE3, PAD_MODE4, PAD_MODE5 };
enum CoreType : int { AIC = 1, AIV = 2, MIX = 3 };
enum class ReduceType { NONE = -1, SUM = 0, MAX, MIN };
// Sizes kernels compute with: a 32-byte block, a 256-byte repeat, a 16 x 16 cube fractal.
constexpr uint32_t BLOCK_CUBE = 16;
constexpr uint32_t ONE_BLK_SIZE = 32;
constexpr int32_t CUBE_MAX_SIZE = 256;
constexpr uint32_t ONE_REPEAT_BYTE_SIZE = 256;
constexpr uint32_t DEFAULT_BLK_NUM = 8;
constexpr uint16_t DEFAULT_BLK_STRIDE = 1;
constexpr uint8_t DEFAULT_REPEAT_STRIDE = 8;
constexpr uint32_t MAX_REPEAT_TIMES = 255;
enum class MaskMode : uint8_t { NORMAL = 0, COUNTER };
// The mask argument of a call whose mask comes from the mask register (isSetMask = false).
constexpr uint64_t MASK_PLACEHOLDER = 0;
constexpr uint64_t MASK_PLACEHOLDER_LIST[2] = {0, 0};

// The 4-bit integer: a LocalTensor<int4b_t> holds two elements per byte (element 2i in the low
// nibble of byte i); its sizes and offsets count elements, as the reference's. Cast converts it
// to and from half; scalar element access is not available (a compile-time error).
struct int4b_t {
    int4b_t() = default;
    // From an integer (its low four bits, two's complement: -8..7), as the reference's int4b_t is made
    // from a literal (DataCopyPadExtParams<int4b_t>(false, 0, 0, 0)).
    template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
    constexpr int4b_t(I v) : storage(static_cast<uint8_t>(static_cast<unsigned>(v) & 0xfu)) {}  // NOLINT
    uint8_t storage;
};
template <class T>
inline constexpr bool kIsInt4 = std::is_same_v<std::remove_cv_t<T>, int4b_t>;

// The bits one element of T takes in a tensor: 4 for int4b_t (two per byte), else 8 x sizeof(T).
template <class T>
struct SizeOfBits {
    static constexpr size_t value = kIsInt4<T> ? 4 : sizeof(T) * 8;
};

template <bool cond, class A, class B>
struct Conditional {
    using type = A;
};
template <class A, class B>
struct Conditional<false, A, B> {
    using type = B;
};

// ---- data movement ----
enum class PaddingMode : uint8_t { Normal = 0, Compact };
constexpr uint32_t K_MAX_DIM = 8;
// One dimension of a sliced copy: slices of burstLen 32-byte blocks (dimension 0; 1 above it)
// from startIndex to endIndex, stride elements (rows, ...) apart, in a dimension of shapeValue.
struct SliceInfo {
    SliceInfo() = default;
    SliceInfo(uint32_t startIndexIn, uint32_t endIndexIn, uint32_t strideIn, uint32_t burstLenIn,
              uint32_t shapeValueIn = 0)
        : startIndex(startIndexIn), endIndex(endIndexIn), stride(strideIn), burstLen(burstLenIn), shapeValue(shapeValueIn) {}
    uint32_t startIndex = 0;
    uint32_t endIndex = 0;
    uint32_t stride = 0;
    uint32_t burstLen = 1;
    uint32_t shapeValue = 0;
};
// Burst copies: lengths and local-side strides in 32-byte blocks. The reference's constructors
// (programs write DataCopyParams(1, len, 0, 0), which needs them before C++20's parenthesised
// aggregate initialisation, absent from clang < 16).
struct DataCopyParams {
    DataCopyParams() = default;
    DataCopyParams(uint16_t count, uint16_t len, uint16_t srcStrideIn = 0, uint16_t dstStrideIn = 0)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
    uint16_t blockCount = 1;
    uint16_t blockLen = 0;
    uint16_t srcStride = 0;
    uint16_t dstStride = 0;
};
// Byte-exact bursts (DataCopyPad): blockLen and GM-side strides in bytes, local-side in blocks.
struct DataCopyExtParams {
    // The reference's constructors (no aggregate: a 4-value brace list is a DataCopyParams).
    DataCopyExtParams() = default;
    DataCopyExtParams(uint16_t count, uint32_t len, uint32_t srcStrideIn, uint32_t dstStrideIn, uint32_t rsvIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}
    uint16_t blockCount = 1;
    uint32_t blockLen = 0;
    uint32_t srcStride = 0;
    uint32_t dstStride = 0;
    uint32_t rsv = 0;
};
template <class T>
struct DataCopyPadExtParams {
    DataCopyPadExtParams() = default;
    DataCopyPadExtParams(bool isPadIn, uint8_t leftPaddingIn, uint8_t rightPaddingIn, T paddingValueIn)
        : isPad(isPadIn), leftPadding(leftPaddingIn), rightPadding(rightPaddingIn), paddingValue(paddingValueIn) {}
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    T paddingValue = T();
};
struct DataCopyPadParams {
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    uint64_t paddingValue = 0;
};
struct DataCopyEnhancedParams {
    BlockMode blockMode = BlockMode::BLOCK_MODE_NORMAL;
    DeqScale deqScale = DeqScale::DEQ_NONE;
    uint64_t deqValue = 0;
    uint8_t sidStoreMode = 0;
    bool isRelu = false;
    pad_t padMode = pad_t::PAD_NONE;
    uint64_t padValue = 0;
    uint64_t deqTensorAddr = 0;
};
struct Nd2NzParams {
    // The reference's constructors (not an aggregate: a braced list of four values is DataCopyParams', as
    // catlass's conv copies write it, not ambiguous with this).
    Nd2NzParams() {}
    Nd2NzParams(const uint16_t ndNumIn, const uint16_t nValueIn, const uint16_t dValueIn,
                const uint16_t srcNdMatrixStrideIn, const uint16_t srcDValueIn, const uint16_t dstNzC0StrideIn,
                const uint16_t dstNzNStrideIn, const uint16_t dstNzMatrixStrideIn)
        : ndNum(ndNumIn), nValue(nValueIn), dValue(dValueIn), srcNdMatrixStride(srcNdMatrixStrideIn),
          srcDValue(srcDValueIn), dstNzC0Stride(dstNzC0StrideIn), dstNzNStride(dstNzNStrideIn),
          dstNzMatrixStride(dstNzMatrixStrideIn) {}
    uint16_t ndNum = 1;
    uint16_t nValue = 0;
    uint16_t dValue = 0;
    uint16_t srcNdMatrixStride = 0;
    uint16_t srcDValue = 0;
    uint16_t dstNzC0Stride = 0;
    uint16_t dstNzNStride = 0;
    uint16_t dstNzMatrixStride = 0;
};

// ---- vector ----
struct BinaryRepeatParams {
    BinaryRepeatParams() = default;
    BinaryRepeatParams(uint8_t dstBlkStrideIn, uint8_t src0BlkStrideIn, uint8_t src1BlkStrideIn, uint8_t dstRepStrideIn,
                       uint8_t src0RepStrideIn, uint8_t src1RepStrideIn)
        : dstBlkStride(dstBlkStrideIn), src0BlkStride(src0BlkStrideIn), src1BlkStride(src1BlkStrideIn),
          dstRepStride(dstRepStrideIn), src0RepStride(src0RepStrideIn), src1RepStride(src1RepStrideIn) {}
    uint8_t dstBlkStride = 1;
    uint8_t src0BlkStride = 1;
    uint8_t src1BlkStride = 1;
    uint8_t dstRepStride = 8;
    uint8_t src0RepStride = 8;
    uint8_t src1RepStride = 8;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};
struct UnaryRepeatParams {
    UnaryRepeatParams() = default;
    UnaryRepeatParams(uint16_t dstBlkStrideIn, uint16_t srcBlkStrideIn, uint8_t dstRepStrideIn, uint8_t srcRepStrideIn)
        : dstBlkStride(dstBlkStrideIn), srcBlkStride(srcBlkStrideIn), dstRepStride(dstRepStrideIn), srcRepStride(srcRepStrideIn) {}
    uint16_t dstBlkStride = 1;
    uint16_t srcBlkStride = 1;
    uint8_t dstRepStride = 8;
    uint8_t srcRepStride = 8;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};
struct BrcbRepeatParams {
    BrcbRepeatParams() = default;
    BrcbRepeatParams(uint16_t dstBlkStrideIn, uint16_t dstRepStrideIn) : dstBlkStride(dstBlkStrideIn), dstRepStride(dstRepStrideIn) {}
    uint16_t dstBlkStride = 1;
    uint16_t dstRepStride = 8;
};

// GlobalTensor::SetL2CacheHint's modes (the reference's values) and which accesses a hint is for.
enum class CacheMode { CACHE_MODE_DISABLE = 0, CACHE_MODE_NORMAL = 1, CACHE_MODE_LAST = 2, CACHE_MODE_PERSISTENT = 4 };
enum class CacheRwMode { READ = 1, WRITE = 2, RW = 3 };

// ---- cube ----
struct LoadData2DParams {
    uint16_t startIndex = 0;
    uint8_t repeatTimes = 0;
    uint16_t srcStride = 0;
    uint8_t sid = 0;
    uint16_t dstGap = 0;
    bool ifTranspose = false;
    uint8_t addrMode = 0;
};
// img2col (load3d v2): the feature map in L1 is NC1HWC0 with channelSize channels. The reference's
// constructors (not an aggregate: catlass's conv copies build it from a pad list pointer and 16 values).
template <class T>
struct LoadData3DParamsV2 {
    LoadData3DParamsV2() = default;
    LoadData3DParamsV2(const uint8_t padListIn[4], uint16_t l1HIn, uint16_t l1WIn, uint16_t channelSizeIn,
                       uint16_t kExtensionIn, uint16_t mExtensionIn, uint16_t kStartPtIn, uint16_t mStartPtIn,
                       uint8_t strideWIn, uint8_t strideHIn, uint8_t filterWIn, uint8_t filterHIn,
                       uint8_t dilationFilterWIn, uint8_t dilationFilterHIn, bool enTransposeIn, bool enSmallKIn,
                       T padValueIn, bool filterSizeWIn = false, bool filterSizeHIn = false, bool fMatrixCtrlIn = false)
        : l1H(l1HIn), l1W(l1WIn), channelSize(channelSizeIn), kExtension(kExtensionIn), mExtension(mExtensionIn),
          kStartPt(kStartPtIn), mStartPt(mStartPtIn), strideW(strideWIn), strideH(strideHIn), filterW(filterWIn),
          filterH(filterHIn), dilationFilterW(dilationFilterWIn), dilationFilterH(dilationFilterHIn),
          enTranspose(enTransposeIn), enSmallK(enSmallKIn), padValue(padValueIn), filterSizeW(filterSizeWIn),
          filterSizeH(filterSizeHIn), fMatrixCtrl(fMatrixCtrlIn) {
        for (int i = 0; i < 4; ++i) padList[i] = padListIn[i];
    }
    uint8_t padList[4] = {0, 0, 0, 0};
    uint16_t l1H = 0;
    uint16_t l1W = 0;
    uint16_t channelSize = 0;
    uint16_t kExtension = 0;
    uint16_t mExtension = 0;
    uint16_t kStartPt = 0;
    uint16_t mStartPt = 0;
    uint8_t strideW = 1;
    uint8_t strideH = 1;
    uint8_t filterW = 1;
    uint8_t filterH = 1;
    uint8_t dilationFilterW = 1;
    uint8_t dilationFilterH = 1;
    bool enTranspose = false;
    bool enSmallK = false;
    T padValue = T();
    bool filterSizeW = false;
    bool filterSizeH = false;
    bool fMatrixCtrl = false;
};
// Transposing 2D loads (LoadDataWithTranspose): counts of 1 KiB squares for 1- and 4-byte types.
struct LoadData2dTransposeParams {
    LoadData2dTransposeParams() = default;
    LoadData2dTransposeParams(uint16_t startIndexIn, uint8_t repeatTimesIn, uint16_t srcStrideIn, uint16_t dstGapIn,
                              uint16_t dstfracGapIn, uint8_t addrModeIn = 0)
        : startIndex(startIndexIn), repeatTimes(repeatTimesIn), srcStride(srcStrideIn), dstGap(dstGapIn),
          dstFracGap(dstfracGapIn), addrMode(addrModeIn) {}
    uint16_t startIndex = 0;
    uint8_t repeatTimes = 0;
    uint16_t srcStride = 0;
    uint16_t dstGap = 0;
    uint16_t dstFracGap = 0;
    uint8_t addrMode = 0;
};
struct MmadParams {
    // The reference's constructors: (m, n, k, isBias, fmOffset, enSsparse, enWinogradA, enWinogradB) and
    // (m, n, k, unitFlag, cmatrixSource, cmatrixInitVal); the fields they do not name keep their defaults.
    MmadParams() {}
    MmadParams(uint16_t mIn, uint16_t nIn, uint16_t kIn, bool isBiasIn, int32_t fmOffsetIn, bool enSsparseIn,
               bool enWinogradAIn, bool enWinogradBIn)
        : m(mIn), n(nIn), k(kIn), isBias(isBiasIn), fmOffset(fmOffsetIn), enSsparse(enSsparseIn),
          enWinogradA(enWinogradAIn), enWinogradB(enWinogradBIn) {}
    MmadParams(uint16_t mIn, uint16_t nIn, uint16_t kIn, uint8_t unitFlagIn, bool cmatrixSourceIn, bool cmatrixInitValIn)
        : m(mIn), n(nIn), k(kIn), unitFlag(unitFlagIn), cmatrixSource(cmatrixSourceIn), cmatrixInitVal(cmatrixInitValIn) {}
    uint16_t m = 0;
    uint16_t n = 0;
    uint16_t k = 0;
    uint8_t unitFlag = 0;
    bool cmatrixSource = false;
    bool cmatrixInitVal = true;
    // Older fields, accepted by name: isBias = true accumulates (C += A * B).
    bool isBias = false;
    int32_t fmOffset = 0;
    bool enSsparse = false;
    bool enWinogradA = false;
    bool enWinogradB = false;
    bool kDirectionAlign = false;
    bool disableGemv = false;  // Ascend 950 only: Atlas A2 always computes m = 1 as a GEMV
};
// The older DataCopy form of the FixPipe (CO1 -> GM/L1): C0 = 16 columns (8 with channelSplit).
struct DataCopyCO12DstParams {
    DataCopyCO12DstParams() {}
    DataCopyCO12DstParams(uint16_t nSizeIn, uint16_t mSizeIn, uint32_t dstStrideIn, uint16_t srcStrideIn,
                          QuantMode_t quantPreIn, uint8_t reluPreIn, bool channelSplitIn, bool nz2ndEnIn)
        : nSize(nSizeIn),
          mSize(mSizeIn),
          dstStride(dstStrideIn),
          srcStride(srcStrideIn),
          quantPre(quantPreIn),
          reluPre(reluPreIn),
          channelSplit(channelSplitIn),
          nz2ndEn(nz2ndEnIn) {}
    uint8_t sid = 0;
    uint16_t nSize = 0;
    uint16_t mSize = 0;
    uint32_t dstStride = 0;
    uint16_t srcStride = 0;
    uint8_t unitFlag = 0;
    uint8_t clipReluPre = 0;
    uint8_t eltWiseOp = 0;
    QuantMode_t quantPre = QuantMode_t::NoQuant;
    uint8_t reluPre = 0;
    bool channelSplit = false;
    bool nz2ndEn = false;
};
struct FixpipeParamsV220 {
    FixpipeParamsV220() = default;
    FixpipeParamsV220(uint16_t nSizeIn, uint16_t mSizeIn, uint16_t srcStrideIn, uint32_t dstStrideIn, bool reluEnIn)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), reluEn(reluEnIn) {}
    FixpipeParamsV220(uint16_t nSizeIn, uint16_t mSizeIn, uint16_t srcStrideIn, uint32_t dstStrideIn, bool reluEnIn,
                      QuantMode_t quantPreIn, int64_t deqScalarIn, uint16_t ndNumIn, uint16_t srcNdStrideIn,
                      uint16_t dstNdStrideIn, uint8_t unitFlagIn)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), reluEn(reluEnIn),
          quantPre(quantPreIn), deqScalar(static_cast<uint64_t>(deqScalarIn)), ndNum(ndNumIn), srcNdStride(srcNdStrideIn),
          dstNdStride(dstNdStrideIn), unitFlag(unitFlagIn) {}
    uint16_t nSize = 0;
    uint16_t mSize = 0;
    uint16_t srcStride = 0;
    uint32_t dstStride = 0;
    bool reluEn = false;
    QuantMode_t quantPre = QuantMode_t::NoQuant;
    uint64_t deqScalar = 0;
    uint16_t ndNum = 1;
    uint16_t srcNdStride = 0;
    uint16_t dstNdStride = 0;
    uint8_t unitFlag = 0;
    bool isChannelSplit = false;
};
using FixpipeParams = FixpipeParamsV220;
enum class CO2Layout : uint8_t { NZ = 0, ROW_MAJOR, COLUMN_MAJOR };
struct FixpipeConfig {
    CO2Layout format;
    bool isToUB = false;  // the reference's: the destination is UB (the Fixpipe follows the tensor's position)
};
inline constexpr FixpipeConfig CFG_NZ = {CO2Layout::NZ};
inline constexpr FixpipeConfig CFG_ROW_MAJOR = {CO2Layout::ROW_MAJOR};
template <class T>
struct InitConstValueParams {
    // The reference's constructors (catlass's conv blocks construct it with four values).
    InitConstValueParams() {}
    InitConstValueParams(const uint16_t repeatTimesIn, const uint16_t blockNumIn, const uint16_t dstGapIn,
                         const T initValueIn)
        : repeatTimes(repeatTimesIn), blockNum(blockNumIn), dstGap(dstGapIn), initValue(initValueIn) {}
    InitConstValueParams(const uint16_t repeatTimesIn, const T initValueIn)
        : repeatTimes(repeatTimesIn), initValue(initValueIn) {}
    uint16_t repeatTimes = 0;
    uint16_t blockNum = 0;
    uint16_t dstGap = 0;
    T initValue = T();
};

}  // namespace AscendC

// The older name of the namespace.
namespace tik2 = AscendC;
