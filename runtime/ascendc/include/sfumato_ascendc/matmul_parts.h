// The high-level Matmul's declarations besides the class (sfumato_ascendc/matmul.h): MatmulType, the
// callback and policy templates, the library's small utilities (DEFAULT_C0_SIZE, Ceil, GetMmDstType,
// AscendC::Std's tuple helpers), and the moves the Matmul issues (ND -> NZ into L1, L1 -> L0 loads).
#pragma once
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "sfumato_ascendc/cube.h"
#include "sfumato_ascendc/cube_tiling.h"
#include "sfumato_ascendc/data_copy.h"
#include "sfumato_ascendc/matmul_config.h"
#include "sfumato_ascendc/pipe.h"
#include "sfumato_ascendc/sync.h"

namespace AscendC {

template <TPosition POSITION, CubeFormat FORMAT, class TYPE, bool ISTRANS = false,
          LayoutMode LAYOUT = LayoutMode::NONE, bool IBSHARE = false, TPosition SRCPOS = TPosition::GM>
struct MatmulType {
    constexpr static TPosition pos = POSITION;
    constexpr static CubeFormat format = FORMAT;
    using T = TYPE;
    constexpr static bool isTrans = ISTRANS;
    constexpr static LayoutMode layout = LAYOUT;
    constexpr static bool ibShare = IBSHARE;
    constexpr static TPosition srcPos = SRCPOS;
};
// B of a 4:2 sparse Matmul (the reference's SparseMatmulType): the densified int8 B, transposed (n x k/2 in GM),
// with its index matrix at INDEX_POSITION (SetSparseIndex).
template <TPosition POSITION, TPosition INDEX_POSITION, CubeFormat FORMAT, class TYPE, bool ISTRANS = false,
          LayoutMode LAYOUT = LayoutMode::NONE, bool IBSHARE = false>
struct SparseMatmulType : public MatmulType<POSITION, FORMAT, TYPE, ISTRANS, LAYOUT, IBSHARE> {
    constexpr static TPosition indexPosition = INDEX_POSITION;
};

// Callbacks replacing the Matmul's own moves: CopyA1/CopyB1 fill an L1 tile (NZ, rows padded to 16)
// of the block at (row, col) in base blocks, useM x useK (A) or useK x useN (B), given
// SetUserDefInfo's and SetSelfDefineData's values; DataCopyOut is not supported.
template <auto DataCopyOut = nullptr, auto CopyA1 = nullptr, auto CopyB1 = nullptr>
struct MatmulCallBackFunc {
    constexpr static bool kOut = DataCopyOut != nullptr;
    constexpr static auto kCopyA1 = CopyA1;
    constexpr static auto kCopyB1 = CopyB1;
};

template <const auto& MM_CFG = CFG_NORM, class... Rest>
struct MatmulPolicy {};
namespace Impl::Detail {
template <const auto& MM_CFG = CFG_NORM, class... Rest>
struct MatmulPolicy {};
// Triangular policies: only the base blocks on and above (Upper) or on and below (Lower) the
// diagonal of the core's blocks are computed; the others are left as they are in C.
template <const auto& MM_CFG = CFG_NORM, class... Rest>
struct TrianUpperMatmulPolicy {};
template <const auto& MM_CFG = CFG_NORM, class... Rest>
struct TrianLowerMatmulPolicy {};
// N_BUFFER_33: a data-reuse schedule on the chip; the same results by sfumato's one schedule.
template <const auto& MM_CFG = CFG_NORM, class... Rest>
struct NBuffer33MatmulPolicy {};
}  // namespace Impl::Detail

}  // namespace AscendC

namespace AscendC {
constexpr uint32_t DEFAULT_C0_SIZE = 32;  // bytes of a fractal row
// Ceil of two integers (a / b rounded up), the scalar utility (the tensor Ceil is math_adv.h's).
template <class T, class U, std::enable_if_t<std::is_integral_v<T> && std::is_integral_v<U>, int> = 0>
constexpr auto Ceil(T a, U b) {
    return (a + b - 1) / b;
}
namespace Impl {
constexpr int32_t QUEUE_DEPTH =
    1;  // the Matmul library's queue depth (examples declare their CO1 queue with it)
}  // namespace Impl
// The accumulator type of a Matmul's A type (int32_t for 8- and 4-bit integers, else float).
template <class T>
struct GetMmDstType {
    using Type = std::conditional_t<std::is_same_v<T, int8_t> || std::is_same_v<T, int4b_t>, int32_t, float>;
};
}  // namespace AscendC

// The tuple utilities of AscendC::Std the Matmul examples use (the standard library's).
namespace AscendC::Std {
using std::forward;
using std::get;
using std::make_tuple;
using std::tuple;
}  // namespace AscendC::Std

// The system workspace parameter's marker in a kernel's signature.
#ifndef __kfc_workspace__
#define __kfc_workspace__
#endif

namespace sfumato::ascendc {
// A constant tiling (MatmulApiStaticTiling) as the run's TCubeTiling: one core's shape.
template <class C>
TCubeTiling mm_static_tiling(const C& c) {
    TCubeTiling t;
#define SFUMATO_TCUBE_FIELD(name) t.name = c.name;
    SFUMATO_TCUBE_TILING_FIELDS(SFUMATO_TCUBE_FIELD)
#undef SFUMATO_TCUBE_FIELD
    t.M = t.singleCoreM, t.N = t.singleCoreN, t.Ka = t.Kb = t.singleCoreK, t.usedCoreNum = 1;
    return t;
}
// Whether a Matmul's B type is a SparseMatmulType (it has an indexPosition).
template <class B, class = void>
inline constexpr bool kIsSparseB = false;
template <class B>
inline constexpr bool kIsSparseB<B, std::void_t<decltype(B::indexPosition)>> = true;
inline uint32_t mm_align(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }
inline uint32_t mm_ceil(uint32_t v, uint32_t a) { return (v + a - 1) / a; }
// rows x cols of a row-major GM matrix (row stride ld) into L1 as NZ, rows padded to rowPad (16, or 32 and 64
// for the int8 and int4 operand a square transpose loads).
template <class T>
void mm_nd2nz(const AscendC::LocalTensor<T>& dst, const AscendC::GlobalTensor<T>& src, uint32_t rows,
              uint32_t cols, uint32_t ld, uint32_t rowPad = 16) {
    if (ld > 65535) fail("Matmul: a row stride past 65535 elements (intrinsicsCheck) is not modelled");
    AscendC::Nd2NzParams p;
    if constexpr (AscendC::kIsInt4<T>) {  // the copy's dValue and srcDValue count bytes, two elements each
        if (cols % 2 || ld % 2)
            fail("Matmul: int4b_t rows of " + std::to_string(cols) + " elements, " + std::to_string(ld) +
                 " apart (an even count is needed: two a byte)");
        cols /= 2, ld /= 2;
    }
    p.ndNum = 1, p.nValue = static_cast<uint16_t>(rows), p.dValue = static_cast<uint16_t>(cols);
    p.srcDValue = static_cast<uint16_t>(ld), p.dstNzC0Stride = static_cast<uint16_t>(mm_align(rows, rowPad));
    p.dstNzNStride = 1;
    AscendC::DataCopy(dst, src, p);
}
// One row of n elements (the bias) GM -> L1.
template <class T>
void mm_nd2nz_row(const AscendC::LocalTensor<T>& dst, const AscendC::GlobalTensor<T>& src, uint32_t n) {
    static_assert(sizeof(T) == 4,
                  "Matmul: a half bias (the bias table's conversion to fp32) is not modelled");
    AscendC::Nd2NzParams p;
    p.ndNum = 1, p.nValue = 1, p.dValue = static_cast<uint16_t>(n), p.srcDValue = static_cast<uint16_t>(n);
    p.dstNzC0Stride = 1, p.dstNzNStride = 1;
    AscendC::DataCopy(dst, src, p);
}
template <class T>
void mm_load2d(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, uint32_t repeat,
               uint32_t stride, bool trans) {
    AscendC::LoadData2DParams p;
    p.repeatTimes = static_cast<uint8_t>(repeat), p.srcStride = static_cast<uint16_t>(stride),
    p.ifTranspose = trans;
    AscendC::LoadData(dst, src, p);
}
}  // namespace sfumato::ascendc

namespace sfumato::ascendc {
// The FixPipe's conversion of an L0cT accumulator into DstT: quantised types by SetQuantScalar (quant 1: one
// word) or SetQuantVector (2: a word per column).
template <class L0cT, class DstT>
QuantMode_t mm_quant_mode(uint8_t quant) {
    constexpr bool i32 = std::is_same_v<L0cT, int32_t>;
    constexpr bool quantised =
        (i32 && std::is_same_v<DstT, half>) || std::is_same_v<DstT, int8_t> || std::is_same_v<DstT, uint8_t>;
    if constexpr (quantised) {
        if (quant == 0) fail("Matmul: a quantised C type without SetQuantScalar or SetQuantVector");
        const bool vec = quant == 2;
        if constexpr (i32 && std::is_same_v<DstT, half>)
            return vec ? QuantMode_t::VDEQF16 : QuantMode_t::DEQF16;
        else if constexpr (i32)
            return vec ? QuantMode_t::VREQ8 : QuantMode_t::REQ8;
        else
            return vec ? QuantMode_t::VQF322B8_PRE : QuantMode_t::QF322B8_PRE;
    } else if constexpr (std::is_same_v<L0cT, float> && std::is_same_v<DstT, half>) {
        return QuantMode_t::F322F16;
    } else if constexpr (std::is_same_v<L0cT, float> && std::is_same_v<DstT, bfloat16_t>) {
        return QuantMode_t::F322BF16;
    } else {
        static_assert(std::is_same_v<DstT, L0cT>,
                      "AscendC::Matmul: C's type is no conversion of the accumulator the FixPipe makes");
        return QuantMode_t::NoQuant;
    }
}
// SetQuantVector's words of a block's n columns GM -> L1 (MTE2; the 8-byte words moved as pairs of 4-byte
// ones) for the FixPipe: after the previous block's FixPipe read them (FIX -> MTE2), before this one (MTE2 ->
// FIX).
inline AscendC::LocalTensor<uint64_t> mm_quant_words(AscendC::TPipe& pipe,
                                                     AscendC::TBuf<AscendC::TPosition::C1>& buf,
                                                     const AscendC::GlobalTensor<uint64_t>& src, uint32_t n) {
    using AscendC::HardEvent;
    AscendC::LocalTensor<uint64_t> words = buf.template Get<uint64_t>();
    const AscendC::TEventID back = pipe.FetchEventID(HardEvent::FIX_MTE2);
    AscendC::SetFlag<HardEvent::FIX_MTE2>(back);
    AscendC::WaitFlag<HardEvent::FIX_MTE2>(back);
    AscendC::DataCopyExtParams cp;
    cp.blockCount = 1, cp.blockLen = n * 8;
    AscendC::GlobalTensor<uint32_t> src32;
    src32.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t*>(src.GetPhyAddr()));
    AscendC::DataCopyPad(words.template ReinterpretCast<uint32_t>(), src32, cp,
                         AscendC::DataCopyPadExtParams<uint32_t>{});
    const AscendC::TEventID ready = pipe.FetchEventID(HardEvent::MTE2_FIX);
    AscendC::SetFlag<HardEvent::MTE2_FIX>(ready);
    AscendC::WaitFlag<HardEvent::MTE2_FIX>(ready);
    return words;
}
// A mix kernel's client AIV waits for the AIC's pass serving it to end, its stores in GM: the AIC serves its
// AIVs in sub-block order and its mode-2 set after each pass gives each AIV one count, so the AIV of
// sub-block i waits for i + 1 (core_state.h).
inline void mm_wait_served(CoreState& st) {
    for (int64_t i = 0; i <= st.sub_block_idx; ++i)
        kernel::CrossCoreWaitFlag(*st.ctx, 2, kMmServedFlag, isa::Pipe::S, true);
}
}  // namespace sfumato::ascendc

namespace sfumato::ascendc {
inline void regist_matmul(AscendC::TPipe*) {}
template <class MM, class... Rest>
void regist_matmul(AscendC::TPipe* pipe, MM& mm, const TCubeTiling* tiling, Rest&&... rest) {
    mm.Init(tiling, pipe);
    regist_matmul(pipe, rest...);
}
}  // namespace sfumato::ascendc

// REGIST_MATMUL_OBJ(tpipe, workspace, matmul objects each followed by its tiling): Init of each.
#define REGIST_MATMUL_OBJ(tpipe, workspace, ...) \
    ((void)(workspace), ::sfumato::ascendc::regist_matmul((tpipe), __VA_ARGS__))
