// TransDataTo5HD of the public Ascend C API as the chip's vnchwconv (isa/instr.h): per repeat, 16 source
// blocks of 32 bytes at their own UB addresses transposed into 16 destination blocks at theirs (the chip's
// VA registers hold the 32 addresses). The reference's three forms: uint64_t address lists (what
// GetPhyAddr returns), LocalTensor lists, and two LocalTensor<uint64_t> holding the addresses (read by the
// scalar unit after a barrier of every pipe; timing mode reads them as 0). repeatTimes 0 is a no-op;
// dstHighHalf/srcHighHalf matter for 1-byte types only (ignored for the others, as the chip's 16- and
// 32-bit forms take no such operand). An address that is not 32-byte aligned stops the run naming the call.
#pragma once
#include <cstdint>

#include "sfumato_ascendc/misc.h"
#include "sfumato_ascendc/vector.h"

namespace AscendC {
constexpr uint32_t NCHW_CONV_ADDR_LIST_SIZE = 16;
}  // namespace AscendC

namespace sfumato::ascendc {
struct Trans5hdCall {
    isa::DType dt = isa::DType::INT16;
    uint32_t esize = 2;
    uint64_t dst[isa::kNchwList] = {}, src[isa::kNchwList] = {};
    AscendC::TransDataTo5HDParams p;
};
// Checks the call's addresses and issues its vnchwconv (nothing for repeatTimes 0).
void trans_5hd(const Trans5hdCall& c);
// The form with the address lists in UB: reads them (after a barrier of every pipe) into c.
void read_5hd_lists(Trans5hdCall& c, const isa::Addr& dst_list, uint32_t dst_elems, const isa::Addr& src_list,
                    uint32_t src_elems);
template <class T>
Trans5hdCall trans_5hd_call(const AscendC::TransDataTo5HDParams& p) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4,
                  "TransDataTo5HD: int8_t, uint8_t, int16_t, uint16_t, half, int32_t, uint32_t or float");
    Trans5hdCall c;
    c.dt = kernel::detail::bits_type<storage_t<T>>();
    c.esize = sizeof(T);
    c.p = p;
    return c;
}
}  // namespace sfumato::ascendc

namespace AscendC {

template <typename T>
void TransDataTo5HD(uint64_t dstList[NCHW_CONV_ADDR_LIST_SIZE], uint64_t srcList[NCHW_CONV_ADDR_LIST_SIZE],
                    const TransDataTo5HDParams& nchwconvParams) {
    namespace sa = sfumato::ascendc;
    sa::enter("TransDataTo5HD");
    sa::Trans5hdCall c = sa::trans_5hd_call<T>(nchwconvParams);
    for (uint32_t i = 0; i < NCHW_CONV_ADDR_LIST_SIZE; ++i) c.dst[i] = dstList[i], c.src[i] = srcList[i];
    sa::trans_5hd(c);
}
template <typename T>
void TransDataTo5HD(const LocalTensor<T> (&dstList)[NCHW_CONV_ADDR_LIST_SIZE],
                    const LocalTensor<T> (&srcList)[NCHW_CONV_ADDR_LIST_SIZE], const TransDataTo5HDParams& nchwconvParams) {
    namespace sa = sfumato::ascendc;
    sa::enter("TransDataTo5HD");
    sa::Trans5hdCall c = sa::trans_5hd_call<T>(nchwconvParams);
    for (uint32_t i = 0; i < NCHW_CONV_ADDR_LIST_SIZE; ++i)
        c.dst[i] = sa::at(dstList[i]).addr, c.src[i] = sa::at(srcList[i]).addr;
    sa::trans_5hd(c);
}
template <typename T>
void TransDataTo5HD(const LocalTensor<uint64_t>& dst, const LocalTensor<uint64_t>& src,
                    const TransDataTo5HDParams& nchwconvParams) {
    namespace sa = sfumato::ascendc;
    sa::enter("TransDataTo5HD");
    sa::Trans5hdCall c = sa::trans_5hd_call<T>(nchwconvParams);
    sa::read_5hd_lists(c, sa::at(dst), dst.GetSize(), sa::at(src), src.GetSize());
    sa::trans_5hd(c);
}

}  // namespace AscendC
