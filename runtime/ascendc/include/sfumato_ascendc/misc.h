// The rest of the kernel-side API: printf/PRINTF (a kernel's output carries its block index),
// DumpTensor, small utilities kernels use (Std::ceil_div, IsSameType), Transpose, and the
// public APIs sfumato does not model: each is declared so that a kernel calling it fails to
// compile with the API's name in the message, instead of linking to something that does
// nothing. (Names the vendor's headers do not declare fail to compile by themselves.)
#pragma once
#include <cstdio>
#include <type_traits>

#include "sfumato_ascendc/unsupported.h"
#include "sfumato_ascendc/vector.h"

// printf in kernel code (plain or AscendC::printf) goes through here: inside a running block the
// line is prefixed with "[AIV Block N/M] " ("AIC" on a cube core; N = GetBlockIdx(), M = GetBlockNum()), as the
// vendor's examples show it; elsewhere it is the C library's printf.
extern "C++" int sfumato_ascendc_printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
namespace std {
using ::sfumato_ascendc_printf;
}
#define printf sfumato_ascendc_printf

// The device compiler's scalar min/max builtins, which kernels call unqualified (non-template overloads,
// so a `using namespace std` caller still picks them over std::min/std::max).
#define SFUMATO_SCALAR_MINMAX(T)                                 \
    inline T min(T a, T b) { return b < a ? b : a; }             \
    inline T max(T a, T b) { return a < b ? b : a; }
SFUMATO_SCALAR_MINMAX(int16_t)
SFUMATO_SCALAR_MINMAX(uint16_t)
SFUMATO_SCALAR_MINMAX(int32_t)
SFUMATO_SCALAR_MINMAX(uint32_t)
SFUMATO_SCALAR_MINMAX(int64_t)
SFUMATO_SCALAR_MINMAX(uint64_t)
SFUMATO_SCALAR_MINMAX(float)
#undef SFUMATO_SCALAR_MINMAX

// The levels of KERNEL_LOG (global names, as the reference's).
enum KernelLogLevel : int { KERNEL_DEBUG = 0, KERNEL_INFO = 1, KERNEL_WARN = 2, KERNEL_ERROR = 3 };

namespace AscendC {

using ::sfumato_ascendc_printf;
#define PRINTF sfumato_ascendc_printf

namespace Std {
template <class A, class B>
constexpr auto ceil_div(A a, B b) {
    return (a + b - 1) / b;
}
template <class A, class B>
constexpr auto min(A a, B b) {
    return a < b ? a : b;
}
template <class A, class B>
constexpr auto max(A a, B b) {
    return a < b ? b : a;
}
}  // namespace Std
template <class A, class B>
constexpr auto CeilDiv(A a, B b) {
    return (a + b - 1) / b;
}
template <class A, class B>
constexpr auto DivCeil(A a, B b) {
    return (a + b - 1) / b;
}
template <class A, class B>
struct IsSameType {
    static constexpr bool value = std::is_same_v<A, B>;
};

// 16 x 16 transposes of 16-bit elements.
template <class T>
void Transpose(const LocalTensor<T>& dst, const LocalTensor<T>& src) {
    sfumato::ascendc::enter("Transpose");
    static_assert(sizeof(T) == 2, "AscendC::Transpose(dst, src) transposes 16 x 16 blocks of 16-bit elements");
    sfumato::kernel::Transpose(dst.kt(), src.kt(), 1);
}

enum class TransposeType : uint8_t {
    TRANSPOSE_TYPE_NONE,
    TRANSPOSE_NZ2ND_0213,
    TRANSPOSE_NZ2NZ_0213,
    TRANSPOSE_NZ2NZ_012_WITH_N,
    TRANSPOSE_NZ2ND_012_WITH_N,
    TRANSPOSE_NZ2ND_012_WITHOUT_N,
    TRANSPOSE_NZ2NZ_012_WITHOUT_N,
    TRANSPOSE_ND2ND_ONLY,
    TRANSPOSE_ND_UB_GM,
    TRANSPOSE_GRAD_ND_UB_GM,
    TRANSPOSE_ND2ND_B16,
    TRANSPOSE_NCHW2NHWC,
    TRANSPOSE_NHWC2NCHW,
};
struct TransDataTo5HDParams {
    constexpr TransDataTo5HDParams() = default;
    constexpr TransDataTo5HDParams(bool dstHighHalfIn, bool srcHighHalfIn, uint8_t repeatTimesIn, uint16_t dstRepStrideIn,
                                   uint16_t srcRepStrideIn)
        : dstHighHalf(dstHighHalfIn), srcHighHalf(srcHighHalfIn), repeatTimes(repeatTimesIn), dstRepStride(dstRepStrideIn),
          srcRepStride(srcRepStrideIn) {}
    bool dstHighHalf = false;
    bool srcHighHalf = false;
    uint8_t repeatTimes = 1;
    uint16_t dstRepStride = 0;
    uint16_t srcRepStride = 0;
};
struct TransposeParamsExt {
    constexpr TransposeParamsExt() = default;
    constexpr TransposeParamsExt(uint16_t nSizeIn, uint16_t cSizeIn, uint16_t hSizeIn, uint16_t wSizeIn,
                                 TransposeType transposeTypeIn)
        : nSize(nSizeIn), cSize(cSizeIn), hSize(hSizeIn), wSize(wSizeIn), transposeType(transposeTypeIn) {}
    uint16_t nSize = 0;
    uint16_t cSize = 0;
    uint16_t hSize = 0;
    uint16_t wSize = 0;
    TransposeType transposeType = TransposeType::TRANSPOSE_ND2ND_B16;
};
// The layout transposes (NCHW <-> NHWC through vnchwconv) are not modelled.
template <class T>
void Transpose(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<uint8_t>&, const TransposeParamsExt&) {
    static_assert(sizeof(T) == 0,
                  "AscendC::Transpose with TransposeParamsExt is not supported by sfumato's Ascend C layer (see "
                  "runtime/ascendc/README.md)");
}

// Prints `dataLen` elements of a tensor (functional mode; a marker line in timing mode).
void dump_tensor(const char* what, uint32_t desc, const std::string& values);
template <class T>
void DumpTensor(const LocalTensor<T>& t, uint32_t desc, uint32_t dataLen) {
    sfumato::ascendc::enter("DumpTensor");
    std::string s;
    for (uint32_t i = 0; i < dataLen && i < t.GetSize(); ++i)
        s += (i ? " " : "") + std::to_string(static_cast<float>(t.GetValue(i)));
    dump_tensor("LocalTensor", desc, s);
}
template <class T>
void DumpTensor(const GlobalTensor<T>& t, uint32_t desc, uint32_t dataLen) {
    sfumato::ascendc::enter("DumpTensor");
    std::string s;
    for (uint32_t i = 0; i < dataLen && i < t.GetSize(); ++i)
        s += (i ? " " : "") + std::to_string(static_cast<float>(t.GetValue(i)));
    dump_tensor("GlobalTensor", desc, s);
}

// ascendc_assert(expr[, fmt, args...]) in a kernel: a false expression stops the run with the
// block, the call and the expression named (exit 2), as a failed assertion stops the chip's kernel.
[[noreturn]] void assert_failed(const char* expr, const char* file, int line);
#undef ascendc_assert
#define ascendc_assert(expr, ...) \
    (static_cast<bool>(expr) ? void(0) : ::AscendC::assert_failed(#expr, __FILE__, __LINE__))
// KERNEL_LOG(level, fmt, args...) prints one line on stderr with the block and the level;
// ASCENDC_ASSERT(cond, behaviour) runs the behaviour (usually a KERNEL_LOG) and stops the run as a
// failed ascendc_assert when cond is false.
void kernel_log(int level, const char* fmt, ...);
#undef KERNEL_LOG
#define KERNEL_LOG(level, ...) ::AscendC::kernel_log(level, __VA_ARGS__)
#undef ASCENDC_ASSERT
#define ASCENDC_ASSERT(cond, ...)                                              \
    do {                                                                       \
        if (!(cond)) {                                                         \
            __VA_ARGS__;                                                       \
            ::AscendC::assert_failed(#cond, __FILE__, __LINE__);               \
        }                                                                      \
    } while (0)
// The vendor's headers give kernels the same assert (a message after the expression allowed).
#undef assert
#define assert(expr, ...) ascendc_assert(expr)
#undef ASSERT
#define ASSERT(expr, ...) ascendc_assert(expr)

#define SFUMATO_ASCENDC_UNSUPPORTED(Name)                                                                  \
    template <class... SfumatoArgs, class... SfumatoParams>                                               \
    void Name(SfumatoParams&&...) {                                                                       \
        static_assert(sfumato_unsupported::always_false<SfumatoArgs...>,                                  \
                      "AscendC::" #Name " is not supported by sfumato's Ascend C layer (see runtime/ascendc/README.md)"); \
    }
SFUMATO_ASCENDC_UNSUPPORTED(Softmax)
SFUMATO_ASCENDC_UNSUPPORTED(LoadImageToLocal)
SFUMATO_ASCENDC_UNSUPPORTED(Mmad_sparse)
SFUMATO_ASCENDC_UNSUPPORTED(ShiftRight)
SFUMATO_ASCENDC_UNSUPPORTED(SetLoadDataBoundary)
SFUMATO_ASCENDC_UNSUPPORTED(SetLoadDataRepeat)
#undef SFUMATO_ASCENDC_UNSUPPORTED
// APIs the vendor says Atlas A2 does not have: the region-proposal sorts of the older chips (the reference lists
// them as not supported there) and Scatter (its compatibility guide: no Scatter instruction on A2/A3).
#define SFUMATO_ASCENDC_NOT_ON_A2(Name, Why)                                                                  \
    template <class... SfumatoArgs, class... SfumatoParams>                                                  \
    void Name(SfumatoParams&&...) {                                                                          \
        static_assert(sfumato_unsupported::always_false<SfumatoArgs...>, "AscendC::" #Name " is not on Atlas A2 " Why); \
    }
SFUMATO_ASCENDC_NOT_ON_A2(MrgSort4, "(the reference: not supported there; Sort32 and MrgSort are A2's sorts)")
SFUMATO_ASCENDC_NOT_ON_A2(RpSort16, "(the reference: not supported there; Sort32 and MrgSort are A2's sorts)")
SFUMATO_ASCENDC_NOT_ON_A2(ProposalConcat, "(the reference: not supported there; Sort32 and MrgSort are A2's sorts)")
SFUMATO_ASCENDC_NOT_ON_A2(ProposalExtract, "(the reference: not supported there; Sort32 and MrgSort are A2's sorts)")
SFUMATO_ASCENDC_NOT_ON_A2(Scatter, "(the vendor's compatibility guide: no Scatter instruction on A2/A3; store the "
                                   "elements with GetValue/SetValue)")
#undef SFUMATO_ASCENDC_NOT_ON_A2

// Trap: stops the AI Core's run (the reference: in CPU mode an assert), naming the call and the block, exit 2.
inline void Trap() {
    sfumato::ascendc::enter("Trap");
    sfumato::ascendc::fail("the kernel trapped (the AI Core's run stops)");
}

// The system workspace (the high-level APIs' GM scratch): what SetSysWorkspace set for the running
// block, else null (sfumato's Matmul needs none).
inline void SetSysWorkspace(GM_ADDR workspace) { sfumato::ascendc::enter("SetSysWorkspace").sys_workspace = workspace; }
inline GM_ADDR GetSysWorkSpacePtr() { return sfumato::ascendc::enter("GetSysWorkSpacePtr").sys_workspace; }

}  // namespace AscendC

using AscendC::GetSysWorkSpacePtr;
using AscendC::SetSysWorkspace;

