// SetHF32Mode (off only) and SetMMLayoutTransform; the load3d registers (SetFmatrix, SetLoadDataPaddingValue, and
// LoadData with an IsResetLoad3dConfig reading them; Load3DSetFMatrixCal/BCal and LoadData with LoadData3DParamsV2Pro,
// the packed forms); 4:2 sparse matmul (LoadDataWithSparse, MmadWithSparse). Parameter structs are the reference's.
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>

#include "sfumato_ascendc/cube.h"

namespace AscendC {

// Which FMATRIX register a load3d reads (the left one for L0A, the right one for L0B).
enum class FmatrixMode : uint8_t { FMATRIX_LEFT = 0, FMATRIX_RIGHT = 1 };

// Whether a load3d sets the FMATRIX and padding registers from its own parameters (true) or uses
// what SetFmatrix/SetLoadDataPaddingValue set (false).
struct IsResetLoad3dConfig {
    bool isSetFMatrix = true;
    bool isSetPadding = true;
};
inline constexpr IsResetLoad3dConfig IS_RESER_LOAD3D_DEFAULT_CONFIG = {true, true};

// load3d v2 with its position and steps packed in extConfig (m start << 48 | k start << 32 |
// m step << 16 | k step) and the filter in filterConfig.
struct LoadData3DParamsV2Pro {
    uint16_t channelSize = 0;
    bool enTranspose = false;
    bool enSmallK = false;
    bool filterSizeW = false;
    bool filterSizeH = false;
    bool fMatrixCtrl = false;
    uint64_t extConfig = 0;
    uint64_t filterConfig = 0X10101010101;
};

// The 2D load's parameters under their other spelling (the sparse load takes them).
using LoadData2dParams = LoadData2DParams;

// The reference's 2D load of Ascend 950 (LoadData with LoadData2DParamsV2: not supported on Atlas A2). Declared so
// that programs holding an Ascend 950 path beside their A2 one compile (the vendor's compatibility-guide examples
// keep both in one class); a call stops the run naming it.
struct LoadData2DParamsV2 {
    uint32_t mStartPosition = 0;
    uint32_t kStartPosition = 0;
    uint16_t mStep = 0;
    uint16_t kStep = 0;
    int32_t srcStride = 0;
    uint16_t dstStride = 0;
    bool ifTranspose = false;
    uint8_t sid = 0;
};
template <class T>
void LoadData(const LocalTensor<T>&, const LocalTensor<T>&, const LoadData2DParamsV2&) {
    sfumato::ascendc::enter("LoadData");
    sfumato::ascendc::fail("LoadData with LoadData2DParamsV2 is Ascend 950's (the reference: not supported on Atlas A2; "
                           "use LoadData2DParams)");
}

// The FMATRIX register of the load3d that writes L0A (left) or L0B (right): the feature map's height, width and
// padding (left, right, top, bottom), used by a LoadData whose IsResetLoad3dConfig::isSetFMatrix is false.
inline void SetFmatrix(uint16_t l1H, uint16_t l1W, const uint8_t padList[4], const FmatrixMode& fmatrixMode) {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("SetFmatrix");
    const int r = fmatrixMode == FmatrixMode::FMATRIX_RIGHT ? 1 : 0;
    s.fmatrix_h[r] = l1H, s.fmatrix_w[r] = l1W, s.fmatrix_set[r] = true;
    for (int i = 0; i < 4; ++i) s.fmatrix_pad[r][i] = padList[i];
}
// The load3d pad value register, used by a LoadData whose IsResetLoad3dConfig::isSetPadding is false.
template <class T>
void SetLoadDataPaddingValue(const T padValue) {
    sfumato::ascendc::enter("SetLoadDataPaddingValue").load3d_pad_value = sfumato::ascendc::scalar_value<T>(padValue);
}
// load3d v2 with the registers: isSetFMatrix false takes l1H, l1W and padList from SetFmatrix's register
// (left for L0A, right for L0B), isSetPadding false the pad value from SetLoadDataPaddingValue's; true takes
// them from the parameters, as the plain form does (on the chip it also sets the registers: so here).
template <class T, const IsResetLoad3dConfig& defaultConfig, class U = T>
void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData3DParamsV2<U>& p) {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("LoadData");
    const int r = dst.GetPosition() == TPosition::B2 ? 1 : 0;
    LoadData3DParamsV2<U> q = p;
    if (defaultConfig.isSetFMatrix) {
        s.fmatrix_h[r] = p.l1H, s.fmatrix_w[r] = p.l1W, s.fmatrix_set[r] = true;
        for (int i = 0; i < 4; ++i) s.fmatrix_pad[r][i] = p.padList[i];
    } else {
        if (!s.fmatrix_set[r])
            sfumato::ascendc::fail(std::string("LoadData with IsResetLoad3dConfig::isSetFMatrix false before SetFmatrix (") +
                                   (r ? "FMATRIX_RIGHT" : "FMATRIX_LEFT") + ")");
        q.l1H = s.fmatrix_h[r], q.l1W = s.fmatrix_w[r];
        for (int i = 0; i < 4; ++i) q.padList[i] = s.fmatrix_pad[r][i];
    }
    if (defaultConfig.isSetPadding)
        s.load3d_pad_value = sfumato::ascendc::scalar_value<T>(p.padValue);
    else
        q.padValue = static_cast<U>(s.load3d_pad_value);
    LoadData(dst, src, q);
}
// The FMATRIX registers set from the fields the chip packs into them (the reference's Load3DSetFMatrixCal: left,
// for load3d into L0A; ...BCal: right): the same registers SetFmatrix sets.
inline void Load3DSetFMatrixCal(uint16_t l1H, uint16_t l1W, const uint8_t padList[4]) {
    SetFmatrix(l1H, l1W, padList, FmatrixMode::FMATRIX_LEFT);
}
inline void Load3DSetFMatrixBCal(uint16_t l1H, uint16_t l1W, const uint8_t padList[4]) {
    SetFmatrix(l1H, l1W, padList, FmatrixMode::FMATRIX_RIGHT);
}
// load3d v2 with the window and the filter packed (extConfig: m start << 48 | k start << 32 | m extension << 16
// | k extension; filterConfig: dilation H << 40 | dilation W << 32 | filter H << 24 | filter W << 16 | stride H << 8
// | stride W), the feature map's height, width and padding from the FMATRIX register fMatrixCtrl names (false:
// left) and the pad value from SetLoadDataPaddingValue's register: then the LoadData3DParamsV2 form.
template <class T>
void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData3DParamsV2Pro& p) {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("LoadData");
    const int r = p.fMatrixCtrl ? 1 : 0;
    if (!s.fmatrix_set[r])
        sfumato::ascendc::fail(std::string("LoadData with LoadData3DParamsV2Pro before Load3DSetFMatrixCal/SetFmatrix (") +
                               (r ? "FMATRIX_RIGHT" : "FMATRIX_LEFT") + ")");
    LoadData3DParamsV2<T> q;
    q.l1H = s.fmatrix_h[r], q.l1W = s.fmatrix_w[r];
    for (int i = 0; i < 4; ++i) q.padList[i] = s.fmatrix_pad[r][i];
    q.channelSize = p.channelSize;
    const uint64_t e = p.extConfig, f = p.filterConfig;
    q.mStartPt = static_cast<uint16_t>(e >> 48), q.kStartPt = static_cast<uint16_t>(e >> 32);
    q.mExtension = static_cast<uint16_t>(e >> 16), q.kExtension = static_cast<uint16_t>(e);
    q.dilationFilterH = static_cast<uint8_t>(f >> 40), q.dilationFilterW = static_cast<uint8_t>(f >> 32);
    q.filterH = static_cast<uint8_t>(f >> 24), q.filterW = static_cast<uint8_t>(f >> 16);
    q.strideH = static_cast<uint8_t>(f >> 8), q.strideW = static_cast<uint8_t>(f);
    q.enTranspose = p.enTranspose, q.enSmallK = p.enSmallK;
    q.filterSizeW = p.filterSizeW, q.filterSizeH = p.filterSizeH;
    q.padValue = static_cast<T>(s.load3d_pad_value);
    LoadData(dst, src, q);
}

// The cube's HF32 mode (float Mmad operands rounded to HF32): off, the chip's default, is what sfumato's
// Mmad computes; turning it on stops the run naming the call (not modelled).
inline void SetHF32Mode(bool hf32Mode) {
    sfumato::ascendc::enter("SetHF32Mode");
    if (hf32Mode) sfumato::ascendc::fail("SetHF32Mode(true): HF32 Mmad is not modelled (float Mmad is exact fp32)");
}
// Which of M and N the cube walks first inside one Mmad: the order of the same fractal products, so the
// result and (in sfumato's model, which times an Mmad by its fractal count) the cycles do not change.
inline void SetMMLayoutTransform(bool mmLayoutMode) {
    sfumato::ascendc::enter("SetMMLayoutTransform");
    (void)mmLayoutMode;
}

// 4:2 structured sparsity (Atlas A2/A3): repeatTimes consecutive int8 fractals of a densified B from fractal
// startIndex of src (B1) into dst (B2), with their 128-byte index fractals from idx (B1) into the cube's index
// buffer, which MmadWithSparse reads (isa/instr.h: Load2dParams::sparse). The reference uses startIndex and
// repeatTimes only (the others are ignored, as there); repeatTimes 0 is a NOP.
template <class T = int8_t, class U = uint8_t>
void LoadDataWithSparse(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<U>& idx,
                        const LoadData2dParams& p) {
    static_assert(std::is_same_v<T, int8_t> && std::is_same_v<U, uint8_t>,
                  "LoadDataWithSparse: int8_t matrices and a uint8_t index (the reference's types)");
    sfumato::ascendc::enter("LoadDataWithSparse");
    if (p.repeatTimes == 0) return;
    sfumato::kernel::LoadData2DParams k;
    k.startIndex = p.startIndex, k.repeatTimes = p.repeatTimes;
    sfumato::kernel::LoadDataWithSparse(dst.kt(), src.kt(), idx.kt(), k);
}
// C (CO1, int32) [+]= A (A2, int8, m x k, its 4:2 groups selected per column of B by the index) x the densified B
// (B2, k/2 x n) that LoadDataWithSparse loaded (isa/instr.h: MadParams::sparse). m, n or k 0 is a NOP (the
// reference); no GEMV (m = 1 is a 16-row product whose other rows are discarded); kDirectionAlign must be false;
// cmatrixSource takes C's initial value from the bias table (C2 address 0), as Mmad does.
template <class T = int32_t, class U = int8_t>
void MmadWithSparse(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<U>& filter,
                    const MmadParams& p) {
    static_assert(std::is_same_v<T, int32_t> && std::is_same_v<U, int8_t>,
                  "MmadWithSparse: int8_t matrices into int32_t (the reference's types)");
    sfumato::ascendc::enter("MmadWithSparse");
    if (p.m == 0 || p.n == 0 || p.k == 0) return;
    if (p.kDirectionAlign) sfumato::ascendc::fail("MmadParams::kDirectionAlign with MmadWithSparse (the reference: false only)");
    if (p.k % 4 != 0)
        sfumato::ascendc::fail("MmadWithSparse: MmadParams::k " + std::to_string(p.k) +
                               " is not a multiple of 4 (4:2 sparsity keeps two of every four)");
    sfumato::kernel::MmadParams k;
    k.m = p.m, k.n = p.n, k.k = p.k;
    k.cmatrixInitVal = p.cmatrixInitVal && !p.isBias;
    k.unitFlag = sfumato::ascendc::unit_flag("MmadParams::unitFlag", p.unitFlag);
    k.sparse = true;
    if (p.cmatrixSource && !p.cmatrixInitVal && !p.isBias) {
        const LocalTensor<T> bt(TPosition::C2, 0, (p.n + 15) / 16 * 16);
        k.cmatrixInitVal = true;
        sfumato::kernel::Mmad(dst.kt(), fm.kt(), filter.kt(), bt.kt(), k);
        return;
    }
    sfumato::kernel::MmadWithSparse(dst.kt(), fm.kt(), filter.kt(), k);
}


}  // namespace AscendC
