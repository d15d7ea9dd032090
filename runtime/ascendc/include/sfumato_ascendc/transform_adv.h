// The advanced API's data rearrangements (the reference's pad/transpose families), each over the basic
// layer's instructions so their cycles are the model's:
//  - Fill(gm, size, value): a vector core duplicates value into the UB the TPipe has not handed out
//    (at most 16 KiB) and stores it to GM with MTE3 (DataCopy, DataCopyPad for a tail that is not whole
//    32-byte blocks), between barriers of every pipe; on a cube core it does nothing (as the reference's
//    Atlas A2 implementation).
//  - Broadcast<T, dim, axis>(dst, src, dstShape, srcShape): dim 1 ([1] -> [n]) and dim 2 ([1, n] -> [m, n]
//    along axis 0, [m, 1] -> [m, n] along axis 1). A row is copied to every row by one instruction per
//    256 bytes of row (a repeat per row, the source repeat stride 0); a column is spread into one block
//    per row by Brcb (scratch: a block per row), then copied out the same way (source block stride 0).
//    Rows must be whole 32-byte blocks.
//  - Pad(dst, src, PadParams{leftPad, rightPad, padValue}, tiling): rows of srcWidth elements (contiguous,
//    the valid srcOriWidth of them when the rows are already whole 32-byte blocks) become rows of
//    leftPad + width + rightPad (or srcWidth) elements: the source element of every destination element
//    is gathered (vgather; its byte offsets computed with vci and float arithmetic), then the pad
//    columns are written with a masked Duplicate (a repeat per row).
//  - UnPad(dst, src, UnPadParams{leftPad, rightPad}, tiling): rows of srcWidth elements lose leftPad and
//    rightPad columns and are packed contiguously (vgather the same way).
//  - Transpose(dst, src, TRANSPOSE_NZ2ND_0213, tiling): [B, N, H/16, S/16, 16, 16] (NZ) -> [B, S, N, H]:
//    one strided UB -> UB DataCopy of the S rows of 16 elements per (b, n, h/16). The other
//    TransposeTypes stop the run naming the type.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "sfumato_ascendc/core_state.h"
#include "sfumato_ascendc/data_copy.h"
#include "sfumato_ascendc/math_adv.h"
#include "sfumato_ascendc/misc.h"
#include "sfumato_ascendc/stack_buffer.h"
#include "sfumato_ascendc/sync.h"
#include "sfumato_ascendc/tensor.h"
#include "sfumato_ascendc/transform_tiling.h"
#include "sfumato_ascendc/unsupported.h"
#include "sfumato_ascendc/vector.h"
#include "sfumato_ascendc/vector_more.h"

namespace AscendC {

struct PadParams {
    uint16_t leftPad = 0;
    uint16_t rightPad = 0;
    int32_t padValue = 0;
};
struct UnPadParams {
    uint16_t leftPad = 0;
    uint16_t rightPad = 0;
};

// ---- Fill (GM) ----
template <class T>
void Fill(GlobalTensor<T>& gmWorkspaceAddr, const uint64_t size, const T value) {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("Fill");
    if (s.core_type == AIC && !s.coupled) return;
    if (size == 0) return;
    LocalTensor<uint8_t> t;
    if (!PopStackBuffer<uint8_t, TPosition::LCM>(t) || t.GetSize() < 32)
        sfumato::ascendc::fail("Fill: no free UB to stage the value in (every byte is handed out by the TPipe)");
    const uint64_t perBlock = 32 / sizeof(T);
    const uint64_t chunk = std::min<uint64_t>(std::min<uint32_t>(t.GetSize(), 16384) / 32 * perBlock,
                                              (size + perBlock - 1) / perBlock * perBlock);
    const LocalTensor<T> buf = t.template ReinterpretCast<T>();
    Duplicate(buf, value, static_cast<int32_t>(chunk));
    PipeBarrier<PIPE_ALL>();
    for (uint64_t o = 0; o < size; o += chunk) {
        const uint64_t n = std::min(chunk, size - o);
        if (n % perBlock == 0)
            DataCopy(gmWorkspaceAddr[o], buf, static_cast<uint32_t>(n));
        else
            DataCopyPad(gmWorkspaceAddr[o], buf, DataCopyExtParams{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0});
    }
    PipeBarrier<PIPE_ALL>();
}

namespace sfumato_transform {

template <class T>
constexpr uint32_t lanes() {
    return 256 / sizeof(T);
}
// The bits of T as the integer type of its size (copies by Or are exact for any element type).
template <class T>
using Bits = std::conditional_t<sizeof(T) == 4, int32_t, int16_t>;

// dst rows [rows, cols] (row stride `dstRow` elements) = src, one Or of a 256-byte repeat per row and
// 256 bytes of row: the source's repeat `srcRepStride` blocks apart (0: the same for every row), its
// blocks `srcBlkStride` apart, its next 256 bytes of row `srcColStep` elements on.
template <class T>
void copy_rows(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t rows, uint32_t cols, uint32_t dstRow,
               uint8_t srcBlkStride, uint8_t srcRepStride, uint32_t srcColStep) {
    using B = Bits<T>;
    const LocalTensor<B> d = dst.template ReinterpretCast<B>(), s = src.template ReinterpretCast<B>();
    constexpr uint32_t L = lanes<T>();
    const uint32_t rs = dstRow * sizeof(T) / 32, blk = 32 / sizeof(T);
    for (uint32_t r0 = 0; r0 < rows; r0 += 255) {
        const uint32_t n = std::min(255u, rows - r0);
        for (uint32_t c = 0; c < cols; c += L) {
            const uint64_t m = std::min(L, cols - c);
            const uint32_t so = r0 * srcRepStride * blk + c / L * srcColStep;
            if (rs <= 255) {
                Or(d[r0 * dstRow + c], s[so], s[so], m, static_cast<uint8_t>(n),
                   BinaryRepeatParams{1, srcBlkStride, srcBlkStride, static_cast<uint8_t>(rs), srcRepStride,
                                      srcRepStride});
            } else {
                for (uint32_t r = 0; r < n; ++r) {
                    const uint32_t sr = so + r * srcRepStride * blk;
                    Or(d[(r0 + r) * dstRow + c], s[sr], s[sr], m, 1,
                       BinaryRepeatParams{1, srcBlkStride, srcBlkStride, 8, 8, 8});
                }
            }
        }
    }
}

template <class T>
void require_rows(const char* api, uint32_t cols) {
    if (cols == 0 || cols * sizeof(T) % 32 != 0)
        sfumato::ascendc::fail(std::string(api) + ": rows of " + std::to_string(cols) +
                               " elements are not whole 32-byte blocks");
}

// dst[k] for k < rows * outW (rows of outW elements, packed) = src[r * inRow + clamp(j + shift, 0, valid - 1)]
// for k = r * outW + j: the byte offsets computed in float (exact for these integers) from vci, then one
// vgather per slice.
template <class T>
void gather_rows(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& tmp,
                 uint32_t rows, uint32_t outW, uint32_t inRow, int32_t shift, uint32_t valid) {
    const uint32_t total = rows * outW;
    if (total == 0) return;
    sfumato::ascendc::count_of(total, dst);
    const sfumato_math::Scratch s = sfumato_math::carve(api, tmp, 2, 0, total);
    sfumato_math::slices(total, s.slice, [&](uint32_t k0, uint32_t n) {
        const int32_t c = static_cast<int32_t>(n);
        const LocalTensor<float> k = s.buf<float>(0), r = s.buf<float>(1);
        CreateVecIndex(k, static_cast<float>(k0), n);
        Adds(r, k, 0.5f, c);
        Muls(r, r, 1.0f / static_cast<float>(outW), c);
        Cast(r, r, RoundMode::CAST_FLOOR, n);                       // the row
        Axpy(k, r, -static_cast<float>(outW), c);                   // the column j
        Adds(k, k, static_cast<float>(shift), c);
        Maxs(k, k, 0.0f, c);
        Mins(k, k, static_cast<float>(valid - 1), c);               // the source column
        Axpy(k, r, static_cast<float>(inRow), c);                   // the source element
        Muls(k, k, static_cast<float>(sizeof(T)), c);               // its byte offset
        const LocalTensor<int32_t> off = s.buf<int32_t>(0);
        Cast(off, k, RoundMode::CAST_RINT, n);
        Gather(dst[k0], src, off.template ReinterpretCast<uint32_t>(), 0u, n);
    });
}

}  // namespace sfumato_transform

// ---- Broadcast ----
template <class T, int32_t dim, int32_t axis, bool isReuseSource = false>
void Broadcast(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const uint32_t dstShape[dim],
               const uint32_t srcShape[dim], LocalTensor<uint8_t>& sharedTmpBuffer) {
    static_assert(dim == 1 || dim == 2, "AscendC::Broadcast of sfumato's Ascend C layer takes 1 or 2 dimensions");
    static_assert(axis == 0 || axis == 1, "AscendC::Broadcast: axis 0 or 1");
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4, "AscendC::Broadcast: 1, 2 or 4-byte elements");
    namespace st = sfumato_transform;
    sfumato::ascendc::enter("Broadcast");
    const uint32_t rows = dim == 1 ? 1 : dstShape[0];
    const uint32_t cols = dim == 1 ? dstShape[0] : dstShape[1];
    const bool column = dim == 2 && axis == 1;  // [m, 1] -> [m, n]
    if (dim == 2 && (column ? srcShape[0] != rows || srcShape[1] != 1 : srcShape[0] != 1 || srcShape[1] != cols))
        sfumato::ascendc::fail("Broadcast: source shape [" + std::to_string(srcShape[0]) + ", " +
                               std::to_string(srcShape[1]) + "] does not broadcast to [" + std::to_string(rows) +
                               ", " + std::to_string(cols) + "] along axis " + std::to_string(axis));
    sfumato::ascendc::count_of(uint64_t{rows} * cols, dstLocal);
    if (dim == 2 && !column) {  // a row to every row
        st::require_rows<T>("Broadcast", cols);
        if constexpr (sizeof(T) == 1) {  // byte rows copied as pairs of bytes
            const LocalTensor<int16_t> d = dstLocal.template ReinterpretCast<int16_t>();
            const LocalTensor<int16_t> s = srcLocal.template ReinterpretCast<int16_t>();
            st::copy_rows(d, s, rows, cols / 2, cols / 2, 1, 0, st::lanes<int16_t>());
        } else {
            st::copy_rows(dstLocal, srcLocal, rows, cols, cols, 1, 0, st::lanes<T>());
        }
        return;
    }
    if constexpr (sizeof(T) == 1) {
        sfumato::ascendc::fail("Broadcast of 1-byte elements along the last axis (Brcb takes 2- and 4-byte "
                               "elements) is not supported by sfumato's Ascend C layer");
    } else {
        // a value per row (dim 1: one row): Brcb spreads each into a block of scratch, then each row's
        // block is copied along the row (source block stride 0).
        if (dim == 2) st::require_rows<T>("Broadcast", cols);
        LocalTensor<uint8_t> t = sharedTmpBuffer;
        if (!t.valid() || t.GetSize() == 0) {
            if (!PopStackBuffer<uint8_t, TPosition::LCM>(t))
                sfumato::ascendc::fail("Broadcast: no sharedTmpBuffer and no TPipe to take the scratch from");
        }
        const uint32_t blocks = (rows + 7) / 8 * 8;
        if (t.GetSize() < blocks * 32)
            sfumato::ascendc::fail("Broadcast: the scratch holds " + std::to_string(t.GetSize()) + " bytes, " +
                                   std::to_string(blocks * 32) + " needed (a 32-byte block per row)");
        const LocalTensor<T> blk = t.template ReinterpretCast<T>();
        Brcb(blk, srcLocal, static_cast<uint8_t>(blocks / 8), BrcbRepeatParams{1, 8});
        if (dim == 1) {
            const uint32_t padded = (cols * sizeof(T) + 31) / 32 * 32 / static_cast<uint32_t>(sizeof(T));
            st::copy_rows(dstLocal, blk, 1, padded, padded, 0, 0, 0);
            return;
        }
        st::copy_rows(dstLocal, blk, rows, cols, cols, 0, 1, 0);
    }
}
template <class T, int32_t dim, int32_t axis, bool isReuseSource = false>
void Broadcast(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const uint32_t dstShape[dim],
               const uint32_t srcShape[dim]) {
    LocalTensor<uint8_t> none;
    Broadcast<T, dim, axis, isReuseSource>(dstLocal, srcLocal, dstShape, srcShape, none);
}

// ---- Pad, UnPad ----
template <class T>
void Pad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, PadParams& padParams,
         const LocalTensor<uint8_t>& sharedTmpBuffer, tiling::PadTiling& tiling) {
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "AscendC::Pad takes 2- or 4-byte elements");
    namespace st = sfumato_transform;
    sfumato::ascendc::enter("Pad");
    const uint32_t rows = tiling.srcHeight, w = tiling.srcWidth;
    const bool aligned = w * sizeof(T) % 32 == 0;
    // Rows already whole blocks keep their width, the columns past srcOriWidth padded; others grow.
    const uint32_t left = aligned ? 0u : padParams.leftPad;
    const uint32_t valid = aligned ? std::min(tiling.srcOriWidth, w) : w;
    const uint32_t outW = aligned ? w : left + w + padParams.rightPad;
    if (rows == 0 || w == 0 || valid == 0) return;
    st::require_rows<T>("Pad", outW);
    sfumato::ascendc::count_of(uint64_t{rows} * w, srcTensor);
    st::gather_rows("Pad", dstTensor, srcTensor, sharedTmpBuffer, rows, outW, w, -static_cast<int32_t>(left), valid);
    // the pad columns: a masked Duplicate per 256 bytes of row, a repeat per row
    constexpr uint32_t L = st::lanes<T>();
    const uint32_t rs = outW * sizeof(T) / 32;
    const T pv = static_cast<T>(static_cast<float>(padParams.padValue));
    for (uint32_t c = 0; c < outW; c += L) {
        uint64_t m[2] = {0, 0};
        for (uint32_t l = 0; l < L && c + l < outW; ++l) {
            const uint32_t j = c + l;
            if (j < left || j >= left + valid) m[l / 64] |= uint64_t{1} << (l % 64);
        }
        if (m[0] == 0 && m[1] == 0) continue;
        for (uint32_t r0 = 0; r0 < rows; r0 += 255) {
            const uint32_t n = std::min(255u, rows - r0);
            if (rs <= 255) {
                Duplicate(dstTensor[r0 * outW + c], pv, m, static_cast<uint8_t>(n), 1, static_cast<uint8_t>(rs));
            } else {
                for (uint32_t r = 0; r < n; ++r) Duplicate(dstTensor[(r0 + r) * outW + c], pv, m, 1, 1, 8);
            }
        }
    }
}
template <class T>
void Pad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, PadParams& padParams,
         tiling::PadTiling& tiling) {
    Pad(dstTensor, srcTensor, padParams, LocalTensor<uint8_t>(), tiling);
}
template <class T>
void UnPad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, UnPadParams& unPadParams,
           LocalTensor<uint8_t>& sharedTmpBuffer, tiling::UnPadTiling& tiling) {
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "AscendC::UnPad takes 2- or 4-byte elements");
    sfumato::ascendc::enter("UnPad");
    const uint32_t rows = tiling.srcHeight, w = tiling.srcWidth;
    if (unPadParams.leftPad + unPadParams.rightPad >= w)
        sfumato::ascendc::fail("UnPad: leftPad " + std::to_string(unPadParams.leftPad) + " and rightPad " +
                               std::to_string(unPadParams.rightPad) + " leave nothing of rows of " +
                               std::to_string(w));
    const uint32_t outW = w - unPadParams.leftPad - unPadParams.rightPad;
    if (rows == 0) return;
    sfumato::ascendc::count_of(uint64_t{rows} * w, srcTensor);
    sfumato_transform::gather_rows("UnPad", dstTensor, srcTensor, sharedTmpBuffer, rows, outW, w,
                                   static_cast<int32_t>(unPadParams.leftPad), w);
}
template <class T>
void UnPad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, UnPadParams& unPadParams,
           tiling::UnPadTiling& tiling) {
    LocalTensor<uint8_t> none;
    UnPad(dstTensor, srcTensor, unPadParams, none, tiling);
}

// ---- Transpose (the confusion transposes) ----
template <class T>
void Transpose(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer,
               TransposeType transposeType, ConfusionTransposeTiling& tiling) {
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "AscendC::Transpose takes 2- or 4-byte elements");
    (void)sharedTmpBuffer;
    sfumato::ascendc::enter("Transpose");
    if (transposeType != TransposeType::TRANSPOSE_NZ2ND_0213)
        sfumato::ascendc::fail("Transpose: TransposeType " + std::to_string(static_cast<int>(transposeType)) +
                               " is not supported by sfumato's Ascend C layer (TRANSPOSE_NZ2ND_0213 is)");
    const uint32_t B = tiling.param0, N = tiling.param1, S = tiling.param2, H = tiling.param3;
    if (H % 16 != 0 || S % 16 != 0)
        sfumato::ascendc::fail("Transpose: [B, N, S, H/N] = [" + std::to_string(B) + ", " + std::to_string(N) + ", " +
                               std::to_string(S) + ", " + std::to_string(H) + "]: S and H/N must be multiples of 16");
    const uint64_t total = uint64_t{B} * N * S * H;
    sfumato::ascendc::count_of(total, dst, src);
    // NZ [b, n, h/16, s, 16] -> ND [b, s, n, h]: per (b, n, h/16) the S rows of 16 elements, one block
    // (half) or two (float) each, go N * H elements apart.
    const uint16_t len = static_cast<uint16_t>(16 * sizeof(T) / 32);
    const uint32_t gap = static_cast<uint32_t>(uint64_t{N} * H * sizeof(T) / 32) - len;
    for (uint32_t b = 0; b < B; ++b)
        for (uint32_t n = 0; n < N; ++n)
            for (uint32_t h1 = 0; h1 < H / 16; ++h1) {
                const uint64_t so = ((uint64_t{b} * N + n) * (H / 16) + h1) * S * 16;
                const uint64_t dof = uint64_t{b} * S * N * H + uint64_t{n} * H + h1 * 16;
                for (uint32_t s0 = 0; s0 < S; s0 += 4095) {
                    const uint16_t cnt = static_cast<uint16_t>(std::min(4095u, S - s0));
                    DataCopy(dst[static_cast<uint32_t>(dof + uint64_t{s0} * N * H)],
                             src[static_cast<uint32_t>(so + uint64_t{s0} * 16)],
                             DataCopyParams{cnt, len, 0, static_cast<uint16_t>(gap)});
                }
            }
}
template <class T>
void Transpose(const LocalTensor<T>& dst, const LocalTensor<T>& src, TransposeType transposeType,
               ConfusionTransposeTiling& tiling) {
    Transpose(dst, src, LocalTensor<uint8_t>(), transposeType, tiling);
}
template <class T>
void ConfusionTranspose(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                        const LocalTensor<uint8_t>& sharedTmpBuffer, TransposeType transposeType,
                        ConfusionTransposeTiling& tiling) {
    Transpose(dst, src, sharedTmpBuffer, transposeType, tiling);
}
template <class T>
void ConfusionTranspose(const LocalTensor<T>& dst, const LocalTensor<T>& src, TransposeType transposeType,
                        ConfusionTransposeTiling& tiling) {
    Transpose(dst, src, LocalTensor<uint8_t>(), transposeType, tiling);
}

}  // namespace AscendC
