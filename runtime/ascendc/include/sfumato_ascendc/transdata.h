// TransData (the advanced API's 3-D format conversions of 16-bit data) and the pieces of the layout API its
// callers build their arguments with (MakeShape, MakeStride, MakeLayout, Layout, TransDataParams):
//   NCDHW -> FRACTAL_Z_3D [D, C1, H, W, N1, N0, C0] and -> NDC1HWC0 [N, D, C1, H, W, C0], and back.
// The NCDHW side is in UB with each (n, c, d) row of H x W elements padded to a multiple of 16 (what the
// vendor's example DataCopyPad's). For each (n, c1, d) and 16 H x W positions, the 16 channel rows are
// gathered into a contiguous 16 x 16 block (a strided UB -> UB DataCopy), transposed (one vtranspose), and
// the 16 positions' C0 rows copied to their places (a strided DataCopy); the other direction the same
// backwards. Channels and batches past C and N are zeros in the fractal formats (dst is zeroed first with
// Duplicate). Scratch: one 512-byte block of the sharedTmpBuffer (transposed in place: the modelled
// vtranspose reads its block before writing it).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "sfumato_ascendc/adv_common.h"
#include "sfumato_ascendc/core_state.h"
#include "sfumato_ascendc/data_copy.h"
#include "sfumato_ascendc/misc.h"
#include "sfumato_ascendc/stack_buffer.h"
#include "sfumato_ascendc/tensor.h"
#include "sfumato_ascendc/unsupported.h"
#include "sfumato_ascendc/vector.h"

namespace AscendC {

struct TransDataConfig {
    DataFormat srcFormat;
    DataFormat dstFormat;
};

// The layout API's shapes, strides, coordinates and layouts, as far as its callers use them: a shape of N
// extents; a stride left empty (compact, what TransData takes) or of N extents; a coordinate (a tuple,
// MakeCoord); a layout with explicit strides maps a coordinate to the element offset sum(coord[i] *
// stride[i]).
template <size_t N>
struct LayoutShape {
    std::array<int64_t, N> dims{};
    int64_t operator[](size_t i) const { return dims[i]; }
};
struct LayoutStride {};
template <size_t N>
struct LayoutStrides {
    std::array<int64_t, N> dims{};
    int64_t operator[](size_t i) const { return dims[i]; }
};
template <class... I>
LayoutShape<sizeof...(I)> MakeShape(I... extents) {
    return LayoutShape<sizeof...(I)>{{static_cast<int64_t>(extents)...}};
}
template <class... I>
auto MakeStride(I... strides) {
    if constexpr (sizeof...(I) == 0)
        return LayoutStride{};
    else
        return LayoutStrides<sizeof...(I)>{{static_cast<int64_t>(strides)...}};
}
template <class... T>
using Coord = std::tuple<T...>;
template <class... T>
Coord<T...> MakeCoord(T... c) {
    return Coord<T...>{c...};
}
template <class ShapeT, class StrideT>
struct Layout {
    ShapeT shape;
    StrideT stride;
    const ShapeT& GetShape() const { return shape; }
    const StrideT& GetStride() const { return stride; }
    template <class... T>
    int64_t operator()(const std::tuple<T...>& coord) const {
        static_assert(!std::is_same_v<StrideT, LayoutStride>,
                      "AscendC::Layout of a compact stride mapping a coordinate is not supported by sfumato's "
                      "Ascend C layer");
        return offset(coord, std::index_sequence_for<T...>{});
    }

private:
    template <class C, size_t... I>
    int64_t offset(const C& coord, std::index_sequence<I...>) const {
        static_assert(sizeof...(I) == std::tuple_size_v<decltype(stride.dims)>,
                      "AscendC::Layout: the coordinate has one value per stride");
        return ((static_cast<int64_t>(std::get<I>(coord)) * stride[I]) + ... + 0);
    }
};
template <class ShapeT, class StrideT>
Layout<ShapeT, StrideT> MakeLayout(const ShapeT& shape, const StrideT& stride) {
    return Layout<ShapeT, StrideT>{shape, stride};
}
template <class U, class S>
struct TransDataParams {
    U srcLayout;
    S dstLayout;
};

namespace sfumato_transdata {

struct Dims {
    uint32_t n, c, d, hw, hp, c1, n1;
};

template <class L>
Dims ncdhw_dims(const L& layout) {
    const auto& s = layout.shape;
    static_assert(std::tuple_size_v<decltype(s.dims)> == 5, "TransData: the NCDHW layout has 5 extents");
    Dims k{};
    k.n = static_cast<uint32_t>(s[0]), k.c = static_cast<uint32_t>(s[1]), k.d = static_cast<uint32_t>(s[2]);
    k.hw = static_cast<uint32_t>(s[3] * s[4]);
    k.hp = (k.hw + 15) / 16 * 16;
    k.c1 = (k.c + 15) / 16, k.n1 = (k.n + 15) / 16;
    return k;
}

// The fractal side's element offset of (n, c1, d, position p): its row of 16 channels.
inline uint64_t fractal_row(const Dims& k, bool fz3d, uint32_t n, uint32_t c1, uint32_t d, uint32_t p) {
    if (fz3d)  // [D, C1, HW, N1, N0, C0]
        return ((((uint64_t{d} * k.c1 + c1) * k.hw + p) * k.n1 + n / 16) * 16 + n % 16) * 16;
    return (((uint64_t{n} * k.d + d) * k.c1 + c1) * k.hw + p) * 16;  // [N, D, C1, HW, C0]
}

}  // namespace sfumato_transdata

template <const TransDataConfig& config, class T, class U, class S>
void TransData(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
               const LocalTensor<uint8_t>& sharedTmpBuffer, const TransDataParams<U, S>& params) {
    static_assert(sizeof(T) == 2, "AscendC::TransData of sfumato's Ascend C layer takes 16-bit data");
    constexpr bool toFractal = config.srcFormat == DataFormat::NCDHW;
    constexpr DataFormat other = toFractal ? config.dstFormat : config.srcFormat;
    static_assert((config.srcFormat == DataFormat::NCDHW || config.dstFormat == DataFormat::NCDHW) &&
                      (other == DataFormat::FRACTAL_Z_3D || other == DataFormat::NDC1HWC0),
                  "AscendC::TransData: sfumato's Ascend C layer converts NCDHW to and from FRACTAL_Z_3D and "
                  "NDC1HWC0");
    namespace st = sfumato_transdata;
    sfumato::ascendc::enter("TransData");
    st::Dims k{};
    if constexpr (toFractal)
        k = st::ncdhw_dims(params.srcLayout);
    else
        k = st::ncdhw_dims(params.dstLayout);
    constexpr bool fz3d = other == DataFormat::FRACTAL_Z_3D;
    const uint64_t ncdhw = uint64_t{k.n} * k.c * k.d * k.hp;
    const uint64_t fractal = fz3d ? uint64_t{k.d} * k.c1 * k.hw * k.n1 * 256 : uint64_t{k.n} * k.d * k.c1 * k.hw * 16;
    sfumato::ascendc::count_of(toFractal ? ncdhw : fractal, srcTensor);
    sfumato::ascendc::count_of(toFractal ? fractal : ncdhw, dstTensor);
    if (sharedTmpBuffer.GetSize() < 512)
        sfumato::ascendc::fail("TransData: the sharedTmpBuffer holds " + std::to_string(sharedTmpBuffer.GetSize()) +
                               " bytes, 512 needed (a 16 x 16 block)");
    const LocalTensor<T> a = sharedTmpBuffer.ReinterpretCast<T>();
    const uint32_t nOut = toFractal ? (fz3d ? k.n1 * 16 : k.n) : k.n;
    if constexpr (toFractal) Duplicate(dstTensor, static_cast<T>(0.0f), static_cast<int32_t>(fractal));
    const uint16_t rowGap = static_cast<uint16_t>(uint64_t{k.d} * k.hp / 16 - 1);  // blocks between channel rows
    for (uint32_t n = 0; n < nOut; ++n)
        for (uint32_t c1 = 0; c1 < k.c1; ++c1)
            for (uint32_t d = 0; d < k.d; ++d)
                for (uint32_t p0 = 0; p0 < k.hw; p0 += 16) {
                    const uint32_t chans = std::min(16u, k.c - c1 * 16), pos = std::min(16u, k.hw - p0);
                    const uint64_t base = ((uint64_t{n} * k.c + c1 * 16) * k.d + d) * k.hp + p0;
                    const uint64_t fr = st::fractal_row(k, fz3d, n, c1, d, p0);
                    const uint16_t fgap =
                        static_cast<uint16_t>(fz3d ? k.n1 * 16 - 1 : 0);  // blocks between positions' rows
                    if constexpr (toFractal) {
                        if (n >= k.n) continue;  // padding batches: zeros
                        if (chans < 16) Duplicate(a, static_cast<T>(0.0f), 256);
                        DataCopy(a, srcTensor[static_cast<uint32_t>(base)],
                                 DataCopyParams{static_cast<uint16_t>(chans), 1, rowGap, 0});
                        Transpose(a, a);  // [channel][position] -> [position][channel], in place
                        DataCopy(dstTensor[static_cast<uint32_t>(fr)], a,
                                 DataCopyParams{static_cast<uint16_t>(pos), 1, 0, fgap});
                    } else {
                        if (pos < 16) Duplicate(a, static_cast<T>(0.0f), 256);
                        DataCopy(a, srcTensor[static_cast<uint32_t>(fr)],
                                 DataCopyParams{static_cast<uint16_t>(pos), 1, fgap, 0});
                        Transpose(a, a);  // [position][channel] -> [channel][position], in place
                        DataCopy(dstTensor[static_cast<uint32_t>(base)], a,
                                 DataCopyParams{static_cast<uint16_t>(chans), 1, 0, rowGap});
                    }
                }
}
template <const TransDataConfig& config, class T, class U, class S>
void TransData(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const TransDataParams<U, S>& params) {
    LocalTensor<uint8_t> tmp;
    if (!PopStackBuffer<uint8_t, TPosition::LCM>(tmp))
        sfumato::ascendc::fail("TransData: no sharedTmpBuffer and no TPipe to take the scratch from");
    TransData<config, T, U, S>(dstTensor, srcTensor, tmp, params);
}

}  // namespace AscendC
