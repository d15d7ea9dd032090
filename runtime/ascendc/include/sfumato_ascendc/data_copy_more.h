// More data movement of the public Ascend C API: the sliced copies between GM and UB (DataCopy
// with SliceInfo per dimension) and SetPadValue (the pad register DataCopyPad uses when its
// isPad is false). A sliced copy is what the chip's DMA does with it: one burst instruction per
// row of the outer dimensions, its bursts the dimension-0 slices (burstLen blocks each, GM gaps in
// bytes, UB gaps in whole blocks), rows walked in the same order on both sides.
#pragma once
#include <utility>
#include <vector>

#include "sfumato_ascendc/data_copy.h"

namespace sfumato::ascendc {

// Element offsets of the dimension-0 slices' rows (the outer dimensions enumerated, last
// dimension slowest), and the slice count and gap of dimension 0.
struct SliceWalk {
    std::vector<uint64_t> rows;  // element offset of each row's first slice
    uint32_t slices = 0;         // slices per row
    uint64_t gap = 0;            // elements between slices
    uint64_t burst = 0;          // elements per slice
};
SliceWalk slice_walk(const AscendC::SliceInfo* info, uint32_t dims, uint32_t elem_bytes);
// Both sides of a sliced copy (the destination's walk, then the source's), checked to agree in rows,
// slices and slice length, the UB side's (ub_dst: the destination's) slices whole 32-byte blocks apart.
std::pair<SliceWalk, SliceWalk> slice_walks(const AscendC::SliceInfo* dst, const AscendC::SliceInfo* src,
                                            uint32_t dims, uint32_t elem_bytes, bool ub_dst);
// InitOutput: `value` duplicated into the last 256 bytes of UB (one vector repeat), then stored
// over [dev, dev + bytes) by MTE3 in 256-byte pieces; returns once the stores completed.
void init_output(const GmSpan& gm, uint64_t dev, uint64_t bytes, isa::DType dt, double value);

}  // namespace sfumato::ascendc

namespace AscendC {

template <class T, TPosition pos = TPosition::MAX>
void SetPadValue(T paddingValue) {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("SetPadValue");
    s.pad_set = true;
    s.pad_value = sfumato::ascendc::scalar_value<T>(paddingValue);
}

template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const SliceInfo dstSliceInfo[],
              const SliceInfo srcSliceInfo[], const uint32_t dimValue = 1) {
    sfumato::ascendc::enter("DataCopy");
    namespace sa = sfumato::ascendc;
    const auto [d, s] = sa::slice_walks(dstSliceInfo, srcSliceInfo, dimValue, sizeof(T), true);
    for (size_t r = 0; r < s.rows.size(); ++r) {
        src.check(s.rows[r], (s.slices - 1) * (s.gap + s.burst) + s.burst);
        sa::check_local_bytes(dst, (d.rows[r] + (d.slices - 1) * (d.gap + d.burst) + d.burst) * sizeof(T));
        sfumato::isa::CopyParams c{s.slices, static_cast<uint32_t>(s.burst * sizeof(T)),
                                   static_cast<uint32_t>(s.gap * sizeof(T)),
                                   static_cast<uint32_t>(d.gap * sizeof(T) / 32)};
        sfumato::kernel::detail::copy_in(dst.kt().ctx(), sa::dt_of<T>(), dst.kt().pos(),
                                         static_cast<uint32_t>(dst.kt().address() + d.rows[r] * sizeof(T)),
                                         src.device_address() + s.rows[r] * sizeof(T), c, 0);
    }
}
template <class T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const SliceInfo dstSliceInfo[],
              const SliceInfo srcSliceInfo[], const uint32_t dimValue = 1) {
    sfumato::ascendc::enter("DataCopy");
    namespace sa = sfumato::ascendc;
    const auto [d, s] = sa::slice_walks(dstSliceInfo, srcSliceInfo, dimValue, sizeof(T), false);
    for (size_t r = 0; r < s.rows.size(); ++r) {
        dst.check(d.rows[r], (d.slices - 1) * (d.gap + d.burst) + d.burst);
        sa::check_local_bytes(src, (s.rows[r] + (s.slices - 1) * (s.gap + s.burst) + s.burst) * sizeof(T));
        sfumato::isa::CopyParams c{d.slices, static_cast<uint32_t>(d.burst * sizeof(T)),
                                   static_cast<uint32_t>(s.gap * sizeof(T) / 32),
                                   static_cast<uint32_t>(d.gap * sizeof(T))};
        sa::copy_out(sa::dt_of<T>(), dst.device_address() + d.rows[r] * sizeof(T), src.kt().pos(),
                     static_cast<uint32_t>(src.kt().address() + s.rows[r] * sizeof(T)), c);
    }
}

// Fills `size` elements of GM with `value` (the reference's InitOutput, MTE3).
template <class T>
void InitOutput(GlobalTensor<T> gmWorkspaceAddr, uint32_t size, T value = 0) {
    sfumato::ascendc::enter("InitOutput");
    sfumato::ascendc::init_output(gmWorkspaceAddr.span(), gmWorkspaceAddr.device_address(),
                                  uint64_t(size) * sizeof(T),
                                  sfumato::isa::DTypeOf<sfumato::ascendc::storage_t<T>>::v,
                                  sfumato::ascendc::scalar_value<T>(value));
}

}  // namespace AscendC
