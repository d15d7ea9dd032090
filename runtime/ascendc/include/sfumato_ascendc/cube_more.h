// SetHF32Mode (off only) and SetMMLayoutTransform; the load3d registers (SetFmatrix, SetLoadDataPaddingValue, and
// LoadData with an IsResetLoad3dConfig reading them); and cube APIs of the reference that sfumato's layer declares
// so that code naming them compiles (catlass's tile copies name every form in templates a kernel may never
// instantiate), and that fail at compile time naming the API when a kernel does use them: `Load3DSetFMatrixCal`,
// `LoadData` with `LoadData3DParamsV2Pro`, sparse loads (`LoadDataWithSparse`), `LocalTensor::SetAddr`. Their
// parameter structs are the reference's, so code filling them compiles.
#pragma once
#include <cstdint>

#include "sfumato_ascendc/cube.h"
#include "sfumato_ascendc/unsupported.h"

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
template <class T>
void LoadData(const LocalTensor<T>&, const LocalTensor<T>&, const LoadData3DParamsV2Pro&) {
    static_assert(sfumato_unsupported::always_false<T>,
                  "AscendC::LoadData with LoadData3DParamsV2Pro is not supported by sfumato's Ascend C layer "
                  "(see runtime/ascendc/README.md)");
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

#define SFUMATO_ASCENDC_UNSUPPORTED_CUBE(Name)                                                              \
    template <class... SfumatoArgs, class... SfumatoParams>                                               \
    void Name(SfumatoParams&&...) {                                                                       \
        static_assert(sfumato_unsupported::always_false<SfumatoArgs..., SfumatoParams...>,                \
                      "AscendC::" #Name " is not supported by sfumato's Ascend C layer (see runtime/ascendc/README.md)"); \
    }
SFUMATO_ASCENDC_UNSUPPORTED_CUBE(Load3DSetFMatrixCal)
SFUMATO_ASCENDC_UNSUPPORTED_CUBE(Load3DSetFMatrixBCal)
SFUMATO_ASCENDC_UNSUPPORTED_CUBE(LoadDataWithSparse)
#undef SFUMATO_ASCENDC_UNSUPPORTED_CUBE

}  // namespace AscendC
