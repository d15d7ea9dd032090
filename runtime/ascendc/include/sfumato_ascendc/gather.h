// GatherMask of the public Ascend C API as the chip's vreducev2: the lanes of src0 that a built-in
// pattern (1..7) or a user bit tensor selects, packed into dst in order; rsvdCnt gets their count.
// reduceMode false (normal): repeatTimes whole 256-byte repeats, the mask ignored. reduceMode true
// (counter, the Atlas A2 form VERSION_V2): mask is the total element count, repeatTimes ignored;
// one instruction covers it (ceil(mask / lanes) repeats, the last one partly masked), so more than
// 255 repeats is rejected. The call leaves the mask register in normal mode, as the reference says.
// rsvdCnt is read by the scalar unit once the pipes drained (a barrier); with a user pattern it
// counts the tensor's bits, which timing mode (no data) reads as 0.
#pragma once
#include <cstdint>
#include <type_traits>

#include "sfumato_ascendc/vector.h"

namespace AscendC {

enum class GatherMaskMode : uint8_t { VERSION_V1 = 0, VERSION_V2 = 1 };
constexpr GatherMaskMode defaultGatherMaskMode = GatherMaskMode::VERSION_V2;  // Atlas A2
// The reference's older spelling.
constexpr GatherMaskMode defaultGahterMaskMode = defaultGatherMaskMode;

// Gatherb's parameters: the destination's block and repeat strides (in 32-byte blocks; a block stride
// of 0 counts as 1); the other fields are reserved by the reference and ignored.
struct GatherRepeatParams {
    GatherRepeatParams() = default;
    GatherRepeatParams(const uint8_t dstBlkStrideIn, const uint8_t dstRepStrideIn)
        : dstRepStride(dstRepStrideIn), dstBlkStride(dstBlkStrideIn) {}
    uint32_t blockNumber = DEFAULT_BLK_NUM;
    uint16_t dstRepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t dstBlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src0BlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src1BlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src0RepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t src1RepStride = DEFAULT_REPEAT_STRIDE;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};

struct GatherMaskParams {
    GatherMaskParams() = default;
    GatherMaskParams(uint8_t src0BlockStrideIn, uint16_t repeatTimesIn, uint16_t src0RepeatStrideIn,
                     uint8_t src1RepeatStrideIn)
        : src0BlockStride(src0BlockStrideIn),
          repeatTimes(repeatTimesIn),
          src0RepeatStride(src0RepeatStrideIn),
          src1RepeatStride(src1RepeatStrideIn) {}
    uint8_t src0BlockStride = 1;
    uint16_t repeatTimes = 0;
    uint16_t src0RepeatStride = 8;
    uint8_t src1RepeatStride = 8;
};

}  // namespace AscendC

namespace sfumato::ascendc {

struct GatherMaskCall {
    isa::DType dt = isa::DType::FP32;
    isa::Addr dst, src0, bits;  // bits: the user pattern (pattern 0)
    uint32_t pattern = 0;       // 1..7 built in, 0 = bits
    bool counter = false;       // reduceMode
    uint32_t mask = 0;
    AscendC::GatherMaskParams p;
};
// Issues the vreducev2 and returns rsvdCnt.
uint64_t gather_mask(const GatherMaskCall& c);

struct GatherbCall {
    isa::DType dt = isa::DType::FP32;
    isa::Addr dst, src, offset;
    uint64_t dst_bytes = 0, src_bytes = 0, offset_bytes = 0;
    int32_t repeat = 0;
    AscendC::GatherRepeatParams p;
};
// Checks Gatherb's operands and issues its vgatherb.
void gatherb(const GatherbCall& c);

}  // namespace sfumato::ascendc

namespace AscendC {

template <class T, class U, GatherMaskMode mode = defaultGatherMaskMode>
void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<U>& src1Pattern,
                const bool reduceMode, const uint32_t mask, const GatherMaskParams& gatherMaskParams,
                uint64_t& rsvdCnt) {
    namespace sa = sfumato::ascendc;
    sa::enter("GatherMask");
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "GatherMask: 16- or 32-bit elements");
    static_assert(std::is_same_v<U, uint16_t> || std::is_same_v<U, uint32_t>,
                  "GatherMask: the pattern tensor is uint16_t or uint32_t");
    rsvdCnt = sa::gather_mask({sa::dt_of<T>(), sa::at(dst), sa::at(src0), sa::at(src1Pattern), 0, reduceMode,
                               mask, gatherMaskParams});
}
template <class T, GatherMaskMode mode = defaultGatherMaskMode>
void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t src1Pattern,
                const bool reduceMode, const uint32_t mask, const GatherMaskParams& gatherMaskParams,
                uint64_t& rsvdCnt) {
    namespace sa = sfumato::ascendc;
    sa::enter("GatherMask");
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "GatherMask: 16- or 32-bit elements");
    if (src1Pattern < 1 || src1Pattern > 7)
        sa::fail("src1Pattern " + std::to_string(src1Pattern) + " (the built-in patterns are 1..7)");
    rsvdCnt = sa::gather_mask(
        {sa::dt_of<T>(), sa::at(dst), sa::at(src0), {}, src1Pattern, reduceMode, mask, gatherMaskParams});
}

// Gatherb: per repeat, the 8 blocks of 32 bytes of src at the byte offsets in offset (multiples of 32),
// into dst's 8 blocks (the chip's vgatherb; Atlas A2: 16- and 32-bit elements).
template <class T>
void Gatherb(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<uint32_t>& offset,
             const uint8_t repeatTime, const GatherRepeatParams& repeatParams) {
    namespace sa = sfumato::ascendc;
    sa::enter("Gatherb");
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "Gatherb: 16- or 32-bit elements on Atlas A2");
    sa::gatherb({sa::dt_of<T>(), sa::at(dst), sa::at(src0), sa::at(offset), dst.GetLength(), src0.GetLength(),
                 offset.GetLength(), repeatTime, repeatParams});
}

}  // namespace AscendC
