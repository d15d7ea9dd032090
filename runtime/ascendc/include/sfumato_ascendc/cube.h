// Cube calls of the public Ascend C API over the kernel API's: LoadData (2D: L1 or GM -> L0A/L0B
// whole fractals, optionally transposed; 3D: img2col from an NC1HWC0 feature map), Mmad, and
// Fixpipe (CO1 -> GM or L1 on split cores, with the quantisation modes the FixPipe has). Field
// meanings follow the public parameter structs; what a field asks for that the modelled ISA
// cannot do (a 3D load's small-K mode, a 1-byte transpose, Fixpipe over several ND matrices)
// stops the run naming the block, the call and the field.
#pragma once
#include <string>

#include "runtime/kernel/api.h"
#include "sfumato_ascendc/tensor.h"

namespace sfumato::ascendc {

inline kernel::LoadData2DParams kload2d(const AscendC::LoadData2DParams& p) {
    if (p.repeatTimes == 0) fail("LoadData2DParams::repeatTimes = 0 (1..255)");
    kernel::LoadData2DParams k;
    k.startIndex = p.startIndex, k.repeatTimes = p.repeatTimes, k.srcStride = p.srcStride;
    k.dstGap = p.dstGap, k.ifTranspose = p.ifTranspose;
    return k;
}
// The kernel API's parameters of a FixpipeParamsV220 (the V* quantPre modes: quant VECTOR).
kernel::FixpipeParams kfixpipe(const AscendC::FixpipeParamsV220& p, bool nz2nd);
// One fixpipe; with quant VECTOR it reads the quantisation words where SetFixPipeConfig put the
// FPC register (runtime/ascendc/fixpipe.cpp), and without a SetFixPipeConfig the run stops.
void fixpipe_fpc(isa::DType acc, isa::DType out, const isa::Addr& dst, const isa::Addr& src,
                 const kernel::FixpipeParams& k);
// Fixpipe with a quantisation tensor in L1 (cbufWorkspace): copy_l1_to_fb + fixpipe per chunk.
void fixpipe_workspace(isa::DType acc, isa::DType out, const isa::Addr& dst, bool nd, const isa::Addr& src,
                       AscendC::TPosition ws_pos, uint32_t ws, uint64_t ws_len, const AscendC::FixpipeParamsV220& p);
template <class T>
constexpr isa::DType dtype_of() {
    return isa::DTypeOf<storage_t<T>>::v;
}
// A unit flag's value (0, 2 or 3), else the run stops naming `what`.
uint8_t unit_flag(const char* what, uint8_t uf);

}  // namespace sfumato::ascendc

namespace AscendC {

template <class T>
void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParams& p) {
    sfumato::ascendc::enter("LoadData");
    if (kIsInt4<T> && p.ifTranspose)
        sfumato::ascendc::fail("LoadData2DParams::ifTranspose with int4b_t (not modelled)");
    sfumato::kernel::LoadData(sfumato::ascendc::move_view(dst), sfumato::ascendc::move_view(src),
                              sfumato::ascendc::kload2d(p));
}
template <class T>
void LoadData(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const LoadData2DParams& p) {
    sfumato::ascendc::enter("LoadData");
    src.check_bytes(uint64_t{p.startIndex + (p.repeatTimes ? p.repeatTimes - 1u : 0u) * p.srcStride + 1u} * 512u);
    if (kIsInt4<T> && p.ifTranspose)
        sfumato::ascendc::fail("LoadData2DParams::ifTranspose with int4b_t (not modelled)");
    sfumato::kernel::LoadData(sfumato::ascendc::move_view(dst), sfumato::ascendc::move_view(src),
                              sfumato::ascendc::kload2d(p));
}
template <class T>
void LoadDataWithTranspose(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2dTransposeParams& p) {
    sfumato::ascendc::enter("LoadDataWithTranspose");
    if (p.repeatTimes == 0) sfumato::ascendc::fail("LoadData2dTransposeParams::repeatTimes = 0 (1..255)");
    // int4b_t: squares of 64 x 64 (four 16 x 64 fractals), into L0B only (the reference: L0A takes no int4).
    if (kIsInt4<T> && dst.GetPosition() != TPosition::B2)
        sfumato::ascendc::fail("LoadDataWithTranspose of int4b_t writes L0B (B2) only");
    sfumato::kernel::LoadData2dTransposeParams k;
    k.startIndex = p.startIndex, k.repeatTimes = p.repeatTimes, k.srcStride = p.srcStride;
    k.dstGap = p.dstGap, k.dstFracGap = p.dstFracGap;
    sfumato::kernel::LoadDataWithTranspose(dst.kt(), src.kt(), k);
}
template <class T, class U = T>
void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData3DParamsV2<U>& p) {
    static_assert(!kIsInt4<T>, "LoadData with LoadData3DParamsV2 of int4b_t is not supported by sfumato's Ascend C layer");
    sfumato::ascendc::enter("LoadData");
    if (p.enSmallK || p.filterSizeW || p.filterSizeH)
        sfumato::ascendc::fail("LoadData3DParamsV2: enSmallK and filter sizes above 255 are not modelled");
    if (p.enTranspose && dst.GetPosition() != TPosition::B2 && dst.GetPosition() != TPosition::A2)
        sfumato::ascendc::fail("LoadData3DParamsV2::enTranspose into a buffer other than L0A or L0B");
    if (p.enTranspose && sizeof(T) == 1)
        sfumato::ascendc::fail("LoadData3DParamsV2::enTranspose with a 1-byte type (the reference's load3d "
                               "transposes 2- and 4-byte types)");
    constexpr uint32_t c0 = 32 / sizeof(T);
    if (p.channelSize % c0 != 0)
        sfumato::ascendc::fail("LoadData3DParamsV2::channelSize " + std::to_string(p.channelSize) +
                               " is not a multiple of C0 = " + std::to_string(c0));
    sfumato::kernel::LoadData3DParams k;
    k.l1H = p.l1H, k.l1W = p.l1W, k.c1 = static_cast<uint16_t>(p.channelSize / c0);
    k.filterH = p.filterH, k.filterW = p.filterW;
    k.strideH = p.strideH, k.strideW = p.strideW;
    k.dilationH = p.dilationFilterH, k.dilationW = p.dilationFilterW;
    for (int i = 0; i < 4; ++i) k.padList[i] = p.padList[i];
    k.mStartPt = p.mStartPt, k.mExtension = p.mExtension;
    k.kStartPt = p.kStartPt, k.kExtension = p.kExtension;
    k.padValue = sfumato::ascendc::scalar_value<T>(p.padValue);
    k.transpose = p.enTranspose;
    sfumato::kernel::LoadData(dst.kt(), src.kt(), k);
}

template <class C, class A, class B>
void Mmad(const LocalTensor<C>& dst, const LocalTensor<A>& fm, const LocalTensor<B>& filter, const MmadParams& p) {
    sfumato::ascendc::enter("Mmad");
    static_assert(std::is_same_v<A, B>, "Mmad: the left and right matrices have one element type");
    if (p.cmatrixSource && !p.cmatrixInitVal && !p.isBias) {
        // C starts from the bias table (C2): this form's mad has no bias operand, so its bias-table address
        // field is 0 (the vendor's mmad example puts the bias at C2 address 0 for it). The bias form's mad.
        const LocalTensor<C> bt(TPosition::C2, 0, (p.n + 15) / 16 * 16);
        MmadParams q = p;
        q.cmatrixSource = false;
        Mmad(dst, fm, filter, bt, q);
        return;
    }
    sfumato::kernel::MmadParams k;
    k.m = p.m, k.n = p.n, k.k = p.k;
    k.cmatrixInitVal = p.cmatrixInitVal && !p.isBias;
    // Atlas A2's cube computes m = 1 as a GEMV: A is read as a row vector, contiguous in L0A.
    if (p.disableGemv)
        sfumato::ascendc::fail(
            "MmadParams::disableGemv (Ascend 950 only; Atlas A2 always uses GEMV for m = 1)");
    k.gemv = p.m == 1;
    // float A with its k direction aligned to 16 in L0A (two 8-wide fractals a row step); the
    // reference: other types ignore the field, and a GEMV's A is a contiguous row.
    k.kDirectionAlign = p.kDirectionAlign && std::is_same_v<A, float> && !k.gemv;
    k.unitFlag = sfumato::ascendc::unit_flag("MmadParams::unitFlag", p.unitFlag);
    sfumato::kernel::Mmad(dst.kt(), fm.kt(), filter.kt(), k);
}
template <class C, class A, class B, class Bias>
void Mmad(const LocalTensor<C>& dst, const LocalTensor<A>& fm, const LocalTensor<B>& filter,
          const LocalTensor<Bias>& bias, const MmadParams& p) {
    sfumato::ascendc::enter("Mmad");
    static_assert(std::is_same_v<A, B>, "Mmad: the left and right matrices have one element type");
    sfumato::kernel::MmadParams k;
    k.m = p.m, k.n = p.n, k.k = p.k;
    k.cmatrixInitVal = true;
    if (p.disableGemv)
        sfumato::ascendc::fail(
            "MmadParams::disableGemv (Ascend 950 only; Atlas A2 always uses GEMV for m = 1)");
    k.gemv = p.m == 1;
    // float A with its k direction aligned to 16 in L0A (two 8-wide fractals a row step); the
    // reference: other types ignore the field, and a GEMV's A is a contiguous row.
    k.kDirectionAlign = p.kDirectionAlign && std::is_same_v<A, float> && !k.gemv;
    k.unitFlag = sfumato::ascendc::unit_flag("MmadParams::unitFlag", p.unitFlag);
    sfumato::kernel::Mmad(dst.kt(), fm.kt(), filter.kt(), bias.template ReinterpretCast<C>().kt(), k);
}

// The reference counts blockNum and dstGap in 32-byte blocks in L1 and in 512-byte fractals in L0A/L0B (catlass's
// conv fills L0A so); the ISA's fill counts 32-byte blocks everywhere.
template <class T>
void InitConstValue(const LocalTensor<T>& dst, const InitConstValueParams<T>& p) {
    sfumato::ascendc::enter("InitConstValue");
    const TPosition pos = dst.GetPosition();
    const uint32_t unit = pos == TPosition::A2 || pos == TPosition::B2 ? 16 : 1;
    if (p.blockNum * unit > 65535u || p.dstGap * unit > 65535u)
        sfumato::ascendc::fail("InitConstValueParams: blockNum " + std::to_string(p.blockNum) + " or dstGap " +
                               std::to_string(p.dstGap) + " (512-byte fractals in L0A/L0B) is past the buffer");
    sfumato::kernel::InitConstValueParams k;
    k.repeatTimes = p.repeatTimes, k.blockNum = static_cast<uint16_t>(p.blockNum * unit),
    k.dstGap = static_cast<uint16_t>(p.dstGap * unit);
    k.initValue = sfumato::ascendc::scalar_value<T>(p.initValue);
    sfumato::kernel::InitConstValue(dst.kt(), k);
}
// Fill of an L0A/L0B (or L1) tensor with InitConstValueParams: the reference's other name for InitConstValue (the
// vendor's compatibility guide fills L0A and L0B with it on Atlas A2).
template <class T>
void Fill(const LocalTensor<T>& dst, const InitConstValueParams<T>& p) {
    InitConstValue(dst, p);
}

// CO1 -> GM through the FixPipe; config CFG_ROW_MAJOR converts NZ to ND, CFG_NZ keeps NZ.
template <class T, class U, const FixpipeConfig& config = CFG_ROW_MAJOR>
void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& p) {
    sfumato::ascendc::enter("Fixpipe");
    const bool nd = config.format == CO2Layout::ROW_MAJOR;
    if (nd && p.ndNum == 0) return;  // the reference: no matrix, a NOP
    const sfumato::kernel::FixpipeParams k = sfumato::ascendc::kfixpipe(p, nd);
    const uint64_t stride = p.dstStride ? p.dstStride : p.nSize;
    if (nd && p.mSize)
        dst.check_bytes(((k.ndNum - 1ull) * k.dstNdStride + (p.mSize - 1ull) * stride + p.nSize) * sizeof(T));
    else dst.check_bytes(1);
    sfumato::ascendc::fixpipe_fpc(sfumato::ascendc::dtype_of<U>(), sfumato::ascendc::dtype_of<T>(),
                                  {dst.device_address(), sfumato::isa::Pos::GM}, {src.kt().address(), src.kt().pos()}, k);
}
// CO1 -> L1 (split cores) or -> UB through the FixPipe.
template <class T, class U, const FixpipeConfig& config = CFG_ROW_MAJOR>
void Fixpipe(const LocalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& p) {
    sfumato::ascendc::enter("Fixpipe");
    if (config.format == CO2Layout::ROW_MAJOR && p.ndNum == 0) return;  // the reference: a NOP
    sfumato::ascendc::fixpipe_fpc(sfumato::ascendc::dtype_of<U>(), sfumato::ascendc::dtype_of<T>(),
                                  {dst.kt().address(), dst.kt().pos()}, {src.kt().address(), src.kt().pos()},
                                  sfumato::ascendc::kfixpipe(p, config.format == CO2Layout::ROW_MAJOR));
}
// The same with the per-channel quantisation words in an L1 tensor (cbufWorkspace, uint64_t).
template <class T, class U, const FixpipeConfig& config = CFG_ROW_MAJOR>
void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const LocalTensor<uint64_t>& cbufWorkspace,
             const FixpipeParamsV220& p) {
    sfumato::ascendc::enter("Fixpipe");
    const bool nd = config.format == CO2Layout::ROW_MAJOR;
    if (nd && p.ndNum == 0) return;
    const uint64_t stride = p.dstStride ? p.dstStride : p.nSize;
    if (nd && p.mSize) dst.check_bytes(((p.mSize - 1ull) * stride + p.nSize) * sizeof(T));
    else dst.check_bytes(1);
    sfumato::ascendc::fixpipe_workspace(sfumato::ascendc::dtype_of<U>(), sfumato::ascendc::dtype_of<T>(),
                                        {dst.device_address(), sfumato::isa::Pos::GM}, nd,
                                        {src.kt().address(), src.kt().pos()}, cbufWorkspace.GetPosition(),
                                        cbufWorkspace.kt().address(), cbufWorkspace.GetLength(), p);
}
template <class T, class U, const FixpipeConfig& config = CFG_ROW_MAJOR>
void Fixpipe(const LocalTensor<T>& dst, const LocalTensor<U>& src, const LocalTensor<uint64_t>& cbufWorkspace,
             const FixpipeParamsV220& p) {
    sfumato::ascendc::enter("Fixpipe");
    const bool nd = config.format == CO2Layout::ROW_MAJOR;
    if (nd && p.ndNum == 0) return;
    sfumato::ascendc::fixpipe_workspace(sfumato::ascendc::dtype_of<U>(), sfumato::ascendc::dtype_of<T>(),
                                        {dst.kt().address(), dst.kt().pos()}, nd, {src.kt().address(), src.kt().pos()},
                                        cbufWorkspace.GetPosition(), cbufWorkspace.kt().address(),
                                        cbufWorkspace.GetLength(), p);
}

}  // namespace AscendC
