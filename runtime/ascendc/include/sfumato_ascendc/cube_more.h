// SetHF32Mode (off only) and SetMMLayoutTransform; and cube APIs of the reference that sfumato's layer declares so that code naming them compiles (catlass's
// tile copies name every form in templates a kernel may never instantiate), and that fail at compile
// time naming the API when a kernel does use them: the FMATRIX register forms of load3d
// (`SetFmatrix`, `Load3DSetFMatrixCal`, `LoadData` with `IsResetLoad3dConfig` or
// `LoadData3DParamsV2Pro`), sparse loads (`LoadDataWithSparse`), `LocalTensor::SetAddr`. Their
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

template <class T, const IsResetLoad3dConfig& defaultConfig, class U = T, class... Rest>
void LoadData(const LocalTensor<T>&, const LocalTensor<T>&, const LoadData3DParamsV2<U>&) {
    static_assert(sfumato_unsupported::always_false<T>,
                  "AscendC::LoadData with an IsResetLoad3dConfig (load3d from the FMATRIX register set by SetFmatrix) "
                  "is not supported by sfumato's Ascend C layer (see runtime/ascendc/README.md)");
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
