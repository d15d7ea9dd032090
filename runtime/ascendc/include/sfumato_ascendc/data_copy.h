// Data movement of the public Ascend C API over the kernel API's copies: DataCopy between GM and
// local buffers (count form and DataCopyParams bursts), between local buffers, GM -> L1 with
// ND -> NZ conversion (Nd2NzParams), the coupled cores' CO1 -> CO2 drain (DataCopyParams with
// DataCopyEnhancedParams in matrix mode), DataCopyPad (byte-exact bursts with padding) and
// atomic-add stores (SetAtomicAdd). Every GM range is checked against the allocation its
// GlobalTensor points into, and count forms against the local tensor's size.
#pragma once
#include <type_traits>

#include "runtime/kernel/api.h"
#include "sfumato_ascendc/unsupported.h"
#include "sfumato_ascendc/vector.h"

namespace sfumato::ascendc {

// GM bytes a burst copy touches: blockCount bursts of len bytes, gap bytes between bursts.
inline uint64_t burst_span(uint64_t count, uint64_t len, uint64_t gap) {
    return count == 0 ? 0 : count * len + (count - 1) * gap;
}
// Local bytes of a tensor a burst copy uses: bursts padded to 32 bytes and gaps in 32-byte
// blocks, the last burst's data only (its padding lies in the 32-byte granule every local buffer
// is allocated in, so a 16-byte tensor can take a 16-byte burst).
inline uint64_t local_span(uint64_t count, uint64_t len, uint64_t gap_blocks) {
    const uint64_t padded = (len + 31) / 32 * 32;
    return count == 0 ? 0 : (count - 1) * (padded + gap_blocks * 32) + len;
}
template <class T>
void check_local_bytes(const AscendC::LocalTensor<T>& t, uint64_t bytes) {
    if (!t.valid()) fail("the LocalTensor was never allocated");
    if (bytes > t.GetLength())
        fail(std::to_string(bytes) + " bytes exceed a LocalTensor of " + std::to_string(t.GetLength()) + " bytes");
}
// A store from a local buffer to GM, adding into GM while SetAtomicAdd is in force.
void copy_out(isa::DType t, uint64_t dst, isa::Pos src_pos, uint32_t src, isa::CopyParams c);
// C1 -> C2PIPE2GM (L1 -> the FixPipe buffer): one copy_l1_to_fb; src_len, dst_len: the tensors' bytes.
void copy_l1_to_fb(AscendC::TPosition src_pos, uint32_t src, uint32_t dst, isa::CopyParams c, uint64_t src_len,
                   uint64_t dst_len);

}  // namespace sfumato::ascendc

namespace AscendC {

// ---- GM -> local ----
template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t calCount) {
    static_assert(!kIsInt4<T>, "DataCopy with an element count of int4b_t tensors is not supported by sfumato's Ascend C layer (copy them as int8_t)");
    sfumato::ascendc::enter("DataCopy");
    sfumato::ascendc::count_of(calCount, dst);
    src.check(0, calCount);
    const uint32_t n = sfumato::ascendc::kIs64<T> ? calCount * 2 : calCount;  // 64-bit: pairs of 32-bit
    sfumato::kernel::DataCopy(sfumato::ascendc::move_view(dst), sfumato::ascendc::move_view(src), n);
}
template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p) {
    sfumato::ascendc::enter("DataCopy");
    src.check_bytes(sfumato::ascendc::burst_span(p.blockCount, p.blockLen * 32ull, p.srcStride * 32ull));
    sfumato::ascendc::check_local_bytes(dst, sfumato::ascendc::local_span(p.blockCount, p.blockLen * 32ull, p.dstStride));
    sfumato::kernel::DataCopy(sfumato::ascendc::move_view(dst), sfumato::ascendc::move_view(src),
                              sfumato::kernel::DataCopyParams{p.blockCount, p.blockLen, p.srcStride, p.dstStride});
}
template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& p) {
    sfumato::ascendc::enter("DataCopy");
    if (p.ndNum && p.nValue)
        src.check_bytes(((p.ndNum - 1ull) * p.srcNdMatrixStride + (p.nValue - 1ull) * p.srcDValue + p.dValue) * sizeof(T));
    // int4b_t: dValue, srcDValue and srcNdMatrixStride count bytes (two elements each), as the reference says.
    sfumato::kernel::Nd2NzParams k;
    k.ndNum = p.ndNum, k.nValue = p.nValue, k.dValue = p.dValue;
    k.srcNdMatrixStride = p.srcNdMatrixStride, k.srcDValue = p.srcDValue;
    k.dstNzC0Stride = p.dstNzC0Stride, k.dstNzNStride = p.dstNzNStride;
    // dstNzMatrixStride counts elements (the reference); the instruction's stride counts 32-byte blocks.
    const uint64_t matrix_bytes = kIsInt4<T> ? p.dstNzMatrixStride / 2u : uint64_t{p.dstNzMatrixStride} * sizeof(T);
    if (p.ndNum > 1 && (matrix_bytes % 32 != 0 || (kIsInt4<T> && p.dstNzMatrixStride % 2 != 0)))
        sfumato::ascendc::fail("Nd2NzParams::dstNzMatrixStride " + std::to_string(p.dstNzMatrixStride) +
                               " elements is not a whole number of 32-byte blocks");
    k.dstNzMatrixStride = static_cast<uint32_t>(matrix_bytes / 32);
    sfumato::kernel::DataCopy(sfumato::ascendc::move_view(dst), sfumato::ascendc::move_view(src), k);
}

// ---- local -> GM ----
template <class T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t calCount) {
    static_assert(!kIsInt4<T>, "DataCopy with an element count of int4b_t tensors is not supported by sfumato's Ascend C layer (copy them as int8_t)");
    sfumato::ascendc::enter("DataCopy");
    sfumato::ascendc::count_of(calCount, src);
    dst.check(0, calCount);
    sfumato::ascendc::copy_out(sfumato::isa::DTypeOf<sfumato::ascendc::storage_t<T>>::v, dst.device_address(),
                               src.kt().pos(), src.kt().address(),
                               {1, calCount * static_cast<uint32_t>(sizeof(T)), 0, 0});
}
template <class T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    sfumato::ascendc::enter("DataCopy");
    dst.check_bytes(sfumato::ascendc::burst_span(p.blockCount, p.blockLen * 32ull, p.dstStride * 32ull));
    sfumato::ascendc::check_local_bytes(src, sfumato::ascendc::local_span(p.blockCount, p.blockLen * 32ull, p.srcStride));
    sfumato::ascendc::copy_out(sfumato::ascendc::move_dtype<T>(), dst.device_address(),
                               src.kt().pos(), src.kt().address(),
                               {p.blockCount, p.blockLen * 32u, p.srcStride, p.dstStride * 32u});
}

// ---- local -> local (L1 -> UB, UB -> L1, UB -> UB; CO1 -> CO2 on coupled cores) ----
template <class T>
void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    sfumato::ascendc::enter("DataCopy");
    if (dst.GetPosition() == TPosition::C2PIPE2GM) {  // C1 -> the FixPipe buffer: blockLen in 128 B
        sfumato::ascendc::copy_l1_to_fb(src.GetPosition(), src.kt().address(), dst.kt().address(),
                                        {p.blockCount, p.blockLen * 128u, p.srcStride, p.dstStride},
                                        src.GetLength(), dst.GetLength());
        return;
    }
    if (dst.GetPosition() == TPosition::C2) {  // C1 -> the bias table: blockLen and dstGap in 64 B (Atlas A2)
        if (sizeof(T) != 4)
            sfumato::ascendc::fail("DataCopy C1 -> C2 into a bias table of other than float or int32_t (half converts "
                                   "through the form with a float destination)");
        if (p.blockCount == 0 || p.blockLen == 0) return;  // the reference: a NOP
        sfumato::ascendc::check_local_bytes(src, sfumato::ascendc::local_span(p.blockCount, p.blockLen * 64ull, p.srcStride));
        sfumato::ascendc::check_local_bytes(dst, sfumato::ascendc::local_span(p.blockCount, p.blockLen * 64ull, p.dstStride * 2u));
        sfumato::kernel::DataCopy(sfumato::ascendc::move_view(dst), sfumato::ascendc::move_view(src),
                                  sfumato::kernel::DataCopyParams{p.blockCount, static_cast<uint16_t>(p.blockLen * 2u),
                                                                  p.srcStride, static_cast<uint16_t>(p.dstStride * 2u)});
        return;
    }
    sfumato::ascendc::check_local_bytes(src, sfumato::ascendc::local_span(p.blockCount, p.blockLen * 32ull, p.srcStride));
    sfumato::ascendc::check_local_bytes(dst, sfumato::ascendc::local_span(p.blockCount, p.blockLen * 32ull, p.dstStride));
    if (src.GetPosition() == TPosition::CO1)
        sfumato::ascendc::fail("CO1 -> CO2 takes DataCopyEnhancedParams with BlockMode::BLOCK_MODE_MATRIX");
    sfumato::kernel::DataCopy(sfumato::ascendc::move_view(dst), sfumato::ascendc::move_view(src),
                              sfumato::kernel::DataCopyParams{p.blockCount, p.blockLen, p.srcStride, p.dstStride});
}
// C1 -> C2 with the source and destination of different types (the reference's <T, U> form): half in L1 becomes
// float in the bias table (one copy_l1_to_bt of fp16, which converts); blockLen counts 64 B of the source,
// srcStride 32-byte blocks of L1, dstStride 64 B of the bias table (Atlas A2). Types of one size move as they are.
template <class T, class U, std::enable_if_t<!std::is_same_v<T, U>, int> = 0>
void DataCopy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const DataCopyParams& p) {
    if constexpr (sizeof(T) == sizeof(U)) {
        DataCopy(dst, src.template ReinterpretCast<T>(), p);
    } else {
        static_assert((std::is_same_v<T, float> && std::is_same_v<U, half>) || sfumato_unsupported::always_false<T, U>,
                      "AscendC::DataCopy between local tensors of different types: sfumato's Ascend C layer converts "
                      "half (L1) to float (the bias table) only");
        sfumato::ascendc::enter("DataCopy");
        if (dst.GetPosition() != TPosition::C2 || (src.GetPosition() != TPosition::C1 && src.GetPosition() != TPosition::A1 &&
                                                   src.GetPosition() != TPosition::B1))
            sfumato::ascendc::fail("DataCopy of half into float converts from L1 (C1) to the bias table (C2) only");
        if (p.blockCount == 0 || p.blockLen == 0) return;  // the reference: a NOP
        sfumato::ascendc::check_local_bytes(src, sfumato::ascendc::local_span(p.blockCount, p.blockLen * 64ull, p.srcStride));
        sfumato::ascendc::check_local_bytes(dst,
                                            sfumato::ascendc::local_span(p.blockCount, p.blockLen * 128ull, p.dstStride * 2u));
        sfumato::kernel::detail::copy_local(dst.kt().ctx(), sfumato::isa::DType::FP16, sfumato::ascendc::at(dst),
                                            sfumato::ascendc::at(src),
                                            {p.blockCount, p.blockLen * 64u, p.srcStride, static_cast<uint32_t>(p.dstStride * 2u)});
    }
}
template <class T>
void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t calCount) {
    static_assert(!kIsInt4<T>, "DataCopy with an element count of int4b_t tensors is not supported by sfumato's Ascend C layer (copy them as int8_t)");
    sfumato::ascendc::enter("DataCopy");
    sfumato::ascendc::count_of(calCount, dst, src);
    const uint32_t bytes = calCount * static_cast<uint32_t>(sizeof(T));
    if (bytes % 32 != 0) sfumato::ascendc::fail("a local copy moves whole 32-byte blocks; " + std::to_string(bytes) + " bytes");
    sfumato::kernel::DataCopy(dst.kt(), src.kt(),
                              sfumato::kernel::DataCopyParams{1, static_cast<uint16_t>(bytes / 32), 0, 0});
}
// CO1 (L0C, NZ fractals of 16 x 16) -> CO2 (UB) through the vector pipe, converting the
// element type; blockLen counts 16 x 16 fractals (matrix mode), which keep their layout: a run
// of fractals is one column group of 16 * blockLen rows, written as rows of 16 elements.
template <class D, class S>
void DataCopy(const LocalTensor<D>& dst, const LocalTensor<S>& src, const DataCopyParams& p,
              const DataCopyEnhancedParams& e) {
    sfumato::ascendc::enter("DataCopy");
    if (src.GetPosition() != TPosition::CO1 || e.blockMode != BlockMode::BLOCK_MODE_MATRIX)
        sfumato::ascendc::fail("DataCopy with DataCopyEnhancedParams: only CO1 -> CO2 in BLOCK_MODE_MATRIX");
    for (uint32_t b = 0; b < p.blockCount; ++b) {
        sfumato::kernel::FixpipeParams f;
        f.mSize = static_cast<uint16_t>(16 * p.blockLen);
        f.nSize = 16;
        f.nz2ndEn = true;
        f.dstStride = 16;
        f.reluEn = e.isRelu;
        const uint32_t src_el = b * (p.blockLen + p.srcStride) * 256u;
        const uint32_t dst_el = b * (p.blockLen + p.dstStride) * 256u;
        sfumato::kernel::DataCopy(dst.kt()[dst_el], src.kt()[src_el], f);
    }
}

// ---- DataCopyPad: byte-exact bursts ----
template <class T, PaddingMode mode = PaddingMode::Normal>
void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                 const DataCopyPadExtParams<T>& pad) {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("DataCopyPad");
    static_assert(mode == PaddingMode::Normal, "DataCopyPad with PaddingMode::Compact is an Ascend 950 feature");
    src.check_bytes(sfumato::ascendc::burst_span(p.blockCount, p.blockLen, p.srcStride));
    if constexpr (kIsInt4<T>) {  // blockLen counts bytes, two elements each; moved as bytes
        (void)s;
        if (pad.leftPadding || pad.rightPadding)
            sfumato::ascendc::fail("DataCopyPad of int4b_t with padding elements is not supported by sfumato's "
                                   "Ascend C layer");
        sfumato::ascendc::check_local_bytes(dst, sfumato::ascendc::local_span(p.blockCount, p.blockLen, p.dstStride));
        sfumato::kernel::DataCopyPad(sfumato::ascendc::move_view(dst), sfumato::ascendc::move_view(src),
                                     sfumato::kernel::DataCopyExtParams{p.blockCount, p.blockLen, p.srcStride, p.dstStride},
                                     sfumato::kernel::DataCopyPadExtParams<int8_t>{});
    } else {
        const uint64_t padded = p.blockLen + (pad.isPad ? (pad.leftPadding + pad.rightPadding) * sizeof(T) : 0);
        sfumato::ascendc::check_local_bytes(dst, sfumato::ascendc::local_span(p.blockCount, padded, p.dstStride));
        sfumato::kernel::DataCopyPadExtParams<sfumato::ascendc::storage_t<T>> kp;
        kp.isPad = pad.isPad, kp.leftPadding = pad.leftPadding, kp.rightPadding = pad.rightPadding;
        kp.paddingValue = sfumato::ascendc::kscalar<T>(pad.paddingValue);
        if (!pad.isPad && s.pad_set && (pad.leftPadding || pad.rightPadding)) {
            // isPad false: the pad value is the one SetPadValue put in the register.
            kp.isPad = true;
            kp.paddingValue = sfumato::ascendc::kscalar<T>(static_cast<T>(s.pad_value));
        }
        sfumato::kernel::DataCopyPad(dst.kt(), src.kernel_tensor(),
                                     sfumato::kernel::DataCopyExtParams{p.blockCount, p.blockLen, p.srcStride, p.dstStride},
                                     kp);
    }
}
template <class T, PaddingMode mode = PaddingMode::Normal>
void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                 const DataCopyPadParams& pad) {
    DataCopyExtParams e;
    e.blockCount = p.blockCount, e.blockLen = p.blockLen, e.srcStride = p.srcStride, e.dstStride = p.dstStride;
    DataCopyPadExtParams<T> pe;
    pe.isPad = pad.isPad, pe.leftPadding = pad.leftPadding, pe.rightPadding = pad.rightPadding;
    pe.paddingValue = static_cast<T>(pad.paddingValue);
    DataCopyPad<T, mode>(dst, src, e, pe);
}
template <class T, PaddingMode mode = PaddingMode::Normal>
void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p) {
    sfumato::ascendc::enter("DataCopyPad");
    dst.check_bytes(sfumato::ascendc::burst_span(p.blockCount, p.blockLen, p.dstStride));
    sfumato::ascendc::check_local_bytes(src, sfumato::ascendc::local_span(p.blockCount, p.blockLen, p.srcStride));
    sfumato::ascendc::copy_out(sfumato::ascendc::move_dtype<T>(), dst.device_address(), src.kt().pos(),
                               src.kt().address(), {p.blockCount, p.blockLen, p.srcStride, p.dstStride});
}
template <class T, PaddingMode mode = PaddingMode::Normal>
void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    DataCopyExtParams e;
    e.blockCount = p.blockCount, e.blockLen = p.blockLen, e.srcStride = p.srcStride, e.dstStride = p.dstStride;
    DataCopyPad(dst, src, e);
}

// ---- atomic stores ----
template <class T>
void SetAtomicAdd() {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("SetAtomicAdd");
    s.atomic_op = 1;
    s.atomic_dtype = sfumato::isa::DTypeOf<sfumato::ascendc::storage_t<T>>::v;
}
template <class T>
void SetAtomicMax() {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("SetAtomicMax");
    s.atomic_op = 2;
    s.atomic_dtype = sfumato::isa::DTypeOf<sfumato::ascendc::storage_t<T>>::v;
}
template <class T>
void SetAtomicMin() {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("SetAtomicMin");
    s.atomic_op = 3;
    s.atomic_dtype = sfumato::isa::DTypeOf<sfumato::ascendc::storage_t<T>>::v;
}
inline void SetAtomicNone() { sfumato::ascendc::enter("SetAtomicNone").atomic_op = 0; }
inline void DisableDmaAtomic() { sfumato::ascendc::enter("DisableDmaAtomic").atomic_op = 0; }
template <class T>
void SetAtomicType() {
    sfumato::ascendc::enter("SetAtomicType").atomic_dtype = sfumato::isa::DTypeOf<sfumato::ascendc::storage_t<T>>::v;
}

}  // namespace AscendC
