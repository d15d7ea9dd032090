// Select of the public Ascend C API, every form the reference gives for Atlas A2: dst = the selMask bit of
// an element ? src0 : src1, in its three modes (SELMODE):
//  - VSEL_CMPMASK_SPR (0): two tensors; every repeat selects with the same 256 / sizeof(T) mask bits (the
//    chip loads them into the compare-mask register once);
//  - VSEL_TENSOR_SCALAR_MODE (1): a tensor and a scalar; the repeats consume selMask's bits one after the
//    other;
//  - VSEL_TENSOR_TENSOR_MODE (2): two tensors, the bits consumed as in mode 1.
// Forms: the count form (`count` elements), the mask/repeat forms (a lane count or 2 x 64 lane bits, with
// BinaryRepeatParams; isSetMask false takes the mask register's), and the forms without a mask that read
// the mask register and the compare-mask register SetCmpMask set.
// Mode 1 issues what the vendor's library issues on the chip: the scalar duplicated into one 32-byte block
// of the 8 KiB the API reserves at the end of UB (TMP_UB_OFFSET, UB size - 8 KiB: the reference asks a
// kernel using modes 1 and 2 to leave it free), a V barrier, then one vsel in tensor-scalar mode (the ISA's
// vsel with vec.with_index = 1), which takes that block's first element for every unselected lane.
// Simplified: the compare-mask register is modelled as the address SetCmpMask was given: the forms
// without a mask read its value when their vsel executes, not when SetCmpMask ran (the same value unless
// the kernel rewrites that tensor in between). Not supported, stopped naming the call: mode 2 without a
// mask (the register holds selMask's address, which is data: timing mode has none) and mode 0 in the
// mask register's counter mode.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "sfumato_ascendc/unsupported.h"
#include "sfumato_ascendc/vector.h"

namespace sfumato::ascendc {

template <class T, class U>
constexpr void select_types() {
    static_assert(std::is_same_v<T, half> || std::is_same_v<T, float> || sfumato_unsupported::always_false<T>,
                  "AscendC::Select: T is half or float on Atlas A2 (the reference's data types)");
    static_assert(std::is_same_v<U, uint8_t> || std::is_same_v<U, uint16_t> || std::is_same_v<U, uint32_t> ||
                      std::is_same_v<U, uint64_t> || sfumato_unsupported::always_false<U>,
                  "AscendC::Select: the selMask type U is uint8_t, uint16_t, uint32_t or uint64_t");
}
// Mode 1's scalar: duplicated into the reserved block (VDUP, one block) and a V barrier; its address.
isa::Addr select_scalar_block(isa::DType dt, double scalar);
// The compare-mask register: SetCmpMask's tensor (its address); stops the run naming `what` when unset.
void set_cmp_mask(isa::Addr a);
isa::Addr cmp_mask(const char* what);
// The count form: ceil(count / lanes) repeats (instructions of up to 255 whole repeats, a masked last one).
// scalar_mode: src1 is mode 1's block; otherwise src1 a tensor (mode 2).
void select_count(isa::DType dt, isa::Addr dst, isa::Addr sel, isa::Addr src0, isa::Addr src1, bool scalar_mode,
                  uint64_t count);
// Mode 0 over repeats: one vsel per repeat, each reading the same bits at `sel`.
void select_same_bits(isa::DType dt, isa::Addr dst, isa::Addr sel, isa::Addr src0, isa::Addr src1,
                      const isa::VecParams& v, const MaskArg& m);
inline isa::VecParams select_params(uint8_t repeat, const AscendC::BinaryRepeatParams& p, bool scalar_mode) {
    isa::VecParams v = vparams(repeat, p);
    if (scalar_mode) v.with_index = 1, v.src1_blk_stride = 0, v.src1_rep_stride = 0;
    return v;
}
// The mask/repeat forms of every mode.
void select_repeat(isa::DType dt, isa::Addr dst, isa::Addr sel, isa::Addr src0, isa::Addr src1, int mode,
                   const isa::VecParams& v, const MaskArg& m);

}  // namespace sfumato::ascendc

namespace AscendC {

// ---- the count forms ----
template <class T, class U>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
            const LocalTensor<T>& src1, SELMODE selMode, uint32_t count) {
    sfumato::ascendc::enter("Select");
    namespace sa = sfumato::ascendc;
    if (selMode == SELMODE::VSEL_TENSOR_SCALAR_MODE)
        sa::fail("Select with SELMODE::VSEL_TENSOR_SCALAR_MODE takes a scalar src1, not a tensor");
    sa::count_of(count, dst, src0, src1);
    if (selMode == SELMODE::VSEL_TENSOR_TENSOR_MODE) {
        sa::select_count(sa::dt_of<T>(), sa::at(dst), sa::at(selMask), sa::at(src0), sa::at(src1), false, count);
        return;
    }
    // VSEL_CMPMASK_SPR: the same 256 / sizeof(T) bits for every repeat, one vsel per repeat.
    constexpr uint32_t lanes = 256 / sizeof(T);
    for (uint32_t done = 0; done < count; done += lanes) {
        const uint32_t n = std::min<uint32_t>(lanes, count - done);
        sfumato::kernel::detail::vec_one(dst.kt().ctx(), sfumato::isa::Opcode::VSEL, sa::dt_of<T>(),
                                         {sa::at(dst[done]), sa::at(src0[done]), sa::at(src1[done]), sa::at(selMask)},
                                         [&] {
                                             sfumato::isa::VecParams v;
                                             const sfumato::kernel::VecMask m(n);
                                             v.mask_lo = m.lo, v.mask_hi = m.hi;
                                             return v;
                                         }(),
                                         0);
    }
}
template <class T, class U>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, T src1,
            SELMODE selMode, uint32_t count) {
    sfumato::ascendc::select_types<T, U>();
    sfumato::ascendc::enter("Select");
    namespace sa = sfumato::ascendc;
    if (selMode != SELMODE::VSEL_TENSOR_SCALAR_MODE)
        sa::fail("Select with a scalar src1 takes SELMODE::VSEL_TENSOR_SCALAR_MODE");
    sa::count_of(count, dst, src0);
    if (count == 0) return;
    const sfumato::isa::Addr s = sa::select_scalar_block(sa::dt_of<T>(), static_cast<double>(src1));
    sa::select_count(sa::dt_of<T>(), sa::at(dst), sa::at(selMask), sa::at(src0), s, true, count);
}

// ---- the mask/repeat forms ----
#define SFUMATO_ASCENDC_SELECT_MASKED(MaskType, MaskName)                                                           \
    template <class T, class U, bool isSetMask = true>                                                              \
    void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,               \
                const LocalTensor<T>& src1, SELMODE selMode, MaskType mask, uint8_t repeatTime,                     \
                const BinaryRepeatParams& repeatParams) {                                                           \
        sfumato::ascendc::select_types<T, U>();                                                                     \
        sfumato::ascendc::enter("Select");                                                                          \
        namespace sa = sfumato::ascendc;                                                                            \
        if (selMode == SELMODE::VSEL_TENSOR_SCALAR_MODE)                                                            \
            sa::fail("Select with SELMODE::VSEL_TENSOR_SCALAR_MODE takes a scalar src1, not a tensor");             \
        sa::select_repeat(sa::dt_of<T>(), sa::at(dst), sa::at(selMask), sa::at(src0), sa::at(src1),                 \
                          static_cast<int>(selMode), sa::select_params(repeatTime, repeatParams, false),            \
                          sa::marg(isSetMask, MaskName));                                                            \
    }                                                                                                               \
    template <class T, class U, bool isSetMask = true>                                                              \
    void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, T src1,       \
                SELMODE selMode, MaskType mask, uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {       \
        sfumato::ascendc::select_types<T, U>();                                                                     \
        sfumato::ascendc::enter("Select");                                                                          \
        namespace sa = sfumato::ascendc;                                                                            \
        if (selMode != SELMODE::VSEL_TENSOR_SCALAR_MODE)                                                            \
            sa::fail("Select with a scalar src1 takes SELMODE::VSEL_TENSOR_SCALAR_MODE");                           \
        const sfumato::isa::Addr s = sa::select_scalar_block(sa::dt_of<T>(), static_cast<double>(src1));            \
        sa::select_repeat(sa::dt_of<T>(), sa::at(dst), sa::at(selMask), sa::at(src0), s, 1,                         \
                          sa::select_params(repeatTime, repeatParams, true), sa::marg(isSetMask, MaskName));         \
    }
SFUMATO_ASCENDC_SELECT_MASKED(const uint64_t*, mask)
SFUMATO_ASCENDC_SELECT_MASKED(uint64_t, mask)
#undef SFUMATO_ASCENDC_SELECT_MASKED

// ---- the forms without a mask: the mask register (SetVectorMask) and the compare-mask register ----
// Mode 1: src1 is the first element of the tensor SetCmpMask was given.
template <class T, class U>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, uint8_t repeatTime,
            const BinaryRepeatParams& repeatParams) {
    sfumato::ascendc::select_types<T, U>();
    sfumato::ascendc::enter("Select");
    namespace sa = sfumato::ascendc;
    const sfumato::isa::Addr s = sa::cmp_mask("Select in VSEL_TENSOR_SCALAR_MODE without a mask");
    sa::select_repeat(sa::dt_of<T>(), sa::at(dst), sa::at(selMask), sa::at(src0), s, 1,
                      sa::select_params(repeatTime, repeatParams, true), sa::marg(false, uint64_t{0}));
}
// Mode 0: the bits of the tensor SetCmpMask was given; mode 2 is not supported (see the top).
template <class T, SELMODE selMode>
void Select(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, uint8_t repeatTime,
            const BinaryRepeatParams& repeatParams) {
    static_assert(selMode != SELMODE::VSEL_TENSOR_SCALAR_MODE || sfumato_unsupported::always_false<T>,
                  "AscendC::Select<T, VSEL_TENSOR_SCALAR_MODE> has no src1 tensor: call Select(dst, selMask, src0, "
                  "repeatTime, repeatParams)");
    static_assert(selMode != SELMODE::VSEL_TENSOR_TENSOR_MODE || sfumato_unsupported::always_false<T>,
                  "AscendC::Select<T, VSEL_TENSOR_TENSOR_MODE> without a mask (selMask's address in the compare-mask "
                  "register) is not supported by sfumato's Ascend C layer: pass selMask (see runtime/ascendc/README.md)");
    sfumato::ascendc::select_types<T, uint8_t>();
    sfumato::ascendc::enter("Select");
    namespace sa = sfumato::ascendc;
    const sfumato::isa::Addr bits = sa::cmp_mask("Select in VSEL_CMPMASK_SPR mode without a mask");
    sa::select_repeat(sa::dt_of<T>(), sa::at(dst), bits, sa::at(src0), sa::at(src1), 0,
                      sa::select_params(repeatTime, repeatParams, false), sa::marg(false, uint64_t{0}));
}

// The compare-mask register: mode 0's bits or mode 1's scalar (the reference's SetCmpMask). GetCmpMask
// (reading it back) is not modelled.
template <class T>
void SetCmpMask(const LocalTensor<T>& src) {
    sfumato::ascendc::enter("SetCmpMask");
    sfumato::ascendc::set_cmp_mask(sfumato::ascendc::at(src));
}
template <class T>
void GetCmpMask(const LocalTensor<T>&) {
    sfumato::ascendc::enter("GetCmpMask");
    sfumato::ascendc::fail("GetCmpMask: reading the compare-mask register back is not modelled by sfumato");
}

}  // namespace AscendC
