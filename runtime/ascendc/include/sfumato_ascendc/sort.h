// The sort family of the public Ascend C API on Atlas A2 (the chip's vbitsort and vmrgsort4):
// Sort32 (groups of 32 scores with their uint32 indices sorted into 8-byte (score, index) structures,
// descending), MrgSort with MrgSortSrcList and MrgSort4Info (up to four sorted lists merged; the basic
// API), the advanced API's MrgSort overload (element counts, sortedNum, validBit, repeatTime), and
// GetMrgSortResult (how many structures each list gave when an exhausted suspension stopped the merge).
// Structure: fp32 score in bytes 0..3, fp16 score in 0..1 with 2..3 reserved; the index in 4..7. Ties
// keep the input order. Misuse (validBit other than 3/7/15, a length past 4095, repeatTimes > 1 without
// four contiguous lists of one length, a list overlapping dst, misaligned or too small tensors) stops
// the program naming the call. MrgSort4, RpSort16, ProposalConcat and ProposalExtract (the region-
// proposal forms) are not on Atlas A2: they stay compile-time errors.
// GetMrgSortResult and the advanced form's sortedNum are read by the scalar unit once the pipes drained
// (a barrier); the counts are recomputed from the last merge's lists, so those must still hold their
// data; timing mode (no data) sees every score equal.
#pragma once
#include <cstdint>
#include <type_traits>

#include "sfumato_ascendc/vector.h"

namespace AscendC {

constexpr int32_t MRG_SORT_ELEMENT_LEN = 4;

struct MrgSort4Info {
    MrgSort4Info() = default;
    MrgSort4Info(const uint16_t elementLengthsIn[MRG_SORT_ELEMENT_LEN], const bool ifExhaustedSuspensionIn,
                 const uint16_t validBitIn, const uint16_t repeatTimesIn)
        : ifExhaustedSuspension(ifExhaustedSuspensionIn),
          validBit(validBitIn),
          repeatTimes(static_cast<uint8_t>(repeatTimesIn)) {
        for (int32_t i = 0; i < MRG_SORT_ELEMENT_LEN; ++i) elementLengths[i] = elementLengthsIn[i];
    }
    uint16_t elementLengths[MRG_SORT_ELEMENT_LEN] = {0, 0, 0, 0};
    bool ifExhaustedSuspension = false;
    uint16_t validBit = 0;
    uint8_t repeatTimes = 1;
};

template <class T>
struct MrgSortSrcList {
    MrgSortSrcList() = default;
    MrgSortSrcList(const LocalTensor<T>& src1In, const LocalTensor<T>& src2In, const LocalTensor<T>& src3In,
                   const LocalTensor<T>& src4In)
        : src1(src1In), src2(src2In), src3(src3In), src4(src4In) {}
    LocalTensor<T> src1;
    LocalTensor<T> src2;
    LocalTensor<T> src3;
    LocalTensor<T> src4;
};

}  // namespace AscendC

namespace sfumato::ascendc {

// A tensor as the sort calls check it: address, bytes from there to its end, allocated at all.
struct SortOperand {
    isa::Addr a;
    uint64_t bytes = 0;
    bool valid = false;
};
template <class T>
SortOperand sort_operand(const AscendC::LocalTensor<T>& t) {
    if (!t.valid()) return {};
    return {{t.kt().address(), t.kt().pos()}, uint64_t{t.GetSize()} * sizeof(T), true};
}

void sort32(isa::DType dt, const SortOperand& dst, const SortOperand& score, const SortOperand& index,
            int32_t repeat);
// Issues the vmrgsort4 of MrgSort (both APIs) after checking the call.
void mrg_sort(isa::DType dt, const SortOperand& dst, const SortOperand lists[4], const uint16_t len[4],
              bool exhausted, uint16_t valid, int32_t repeat);
// The structures each list of the last MrgSort gave (VMS4_SR), read by the scalar unit.
void mrg_sort_result(uint32_t out[4]);

}  // namespace sfumato::ascendc

namespace AscendC {

template <class T>
void Sort32(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<uint32_t>& src1,
            const int32_t repeatTime) {
    namespace sa = sfumato::ascendc;
    sa::enter("Sort32");
    static_assert(std::is_same_v<T, half> || std::is_same_v<T, float>, "Sort32: half or float scores");
    sa::sort32(sa::dt_of<T>(), sa::sort_operand(dst), sa::sort_operand(src0), sa::sort_operand(src1),
               repeatTime);
}

template <class T>
void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& src, const MrgSort4Info& params) {
    namespace sa = sfumato::ascendc;
    sa::enter("MrgSort");
    static_assert(std::is_same_v<T, half> || std::is_same_v<T, float>, "MrgSort: half or float scores");
    const sa::SortOperand lists[4] = {sa::sort_operand(src.src1), sa::sort_operand(src.src2),
                                      sa::sort_operand(src.src3), sa::sort_operand(src.src4)};
    sa::mrg_sort(sa::dt_of<T>(), sa::sort_operand(dst), lists, params.elementLengths,
                 params.ifExhaustedSuspension, params.validBit, params.repeatTimes);
}

// The advanced API's form: sortedNum gets each list's count when isExhaustedSuspension stopped the merge.
template <class T, bool isExhaustedSuspension = false>
void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& sortList, const uint16_t elementCountList[4],
             uint32_t sortedNum[4], uint16_t validBit, const int32_t repeatTime) {
    namespace sa = sfumato::ascendc;
    sa::enter("MrgSort");
    static_assert(std::is_same_v<T, half> || std::is_same_v<T, float>, "MrgSort: half or float scores");
    const sa::SortOperand lists[4] = {sa::sort_operand(sortList.src1), sa::sort_operand(sortList.src2),
                                      sa::sort_operand(sortList.src3), sa::sort_operand(sortList.src4)};
    sa::mrg_sort(sa::dt_of<T>(), sa::sort_operand(dst), lists, elementCountList, isExhaustedSuspension,
                 validBit, repeatTime);
    if constexpr (isExhaustedSuspension) sa::mrg_sort_result(sortedNum);
}

inline void GetMrgSortResult(uint16_t& mrgSortList1, uint16_t& mrgSortList2, uint16_t& mrgSortList3,
                             uint16_t& mrgSortList4) {
    namespace sa = sfumato::ascendc;
    sa::enter("GetMrgSortResult");
    uint32_t n[4];
    sa::mrg_sort_result(n);
    mrgSortList1 = static_cast<uint16_t>(n[0]), mrgSortList2 = static_cast<uint16_t>(n[1]);
    mrgSortList3 = static_cast<uint16_t>(n[2]), mrgSortList4 = static_cast<uint16_t>(n[3]);
}

}  // namespace AscendC
