// The one source transformation an Ascend C program needs to build as host C++: each kernel
// launch `kernel<<<blockDim, l2ctrl, stream>>>(args)` (the kernel may be qualified or a
// template specialisation) becomes `::sfumato::ascendc::make_launcher(kernel, "kernel", KIND,
// blockDim, l2ctrl, stream)(args)`, everything else (comments, strings, line breaks) is kept,
// and a #line directive keeps diagnostics on the original file. KIND comes from the kernel's
// definition in the same source: __vector__ -> Vector, __cube__ -> Cube, __mix__(...) -> Mix;
// a kernel that is only __aicore__ takes KERNEL_TASK_TYPE_DEFAULT if the source names one, else
// what the source uses (cube calls only -> Cube, vector calls only -> Vector, both -> Mix), else
// the CPU-debug kernel mode (SetKernelMode). Heads of one kernel that disagree on the kind are alternatives
// of the preprocessor (`#if SCENARIO_NUM == 2` a __cube__ head, `#else` an __aicore__ one): each then gets
// `#define SFUMATO_ASC_KIND_<name> KIND` on the line before it (a #line after it keeps the numbering) and
// the launch names that macro, so the kind is the compiled head's.
#pragma once
#include <string>

namespace sfumato::ascendc {

// Throws InputError naming `file` and the line of an unterminated launch.
std::string rewrite_launches(const std::string& source, const std::string& file);

// The launches left in a preprocessed translation unit (those in headers, such as catlass's
// `Catlass::KernelAdapter<GemmKernel><<<blockDim, nullptr, stream>>>(params)`, where the kernel may be
// overloaded and its kind is not known from the text): each becomes
// `::sfumato::ascendc::make_call_launcher("callee", [](auto... a) { callee(a...); }, blockDim, l2ctrl,
// stream)(args)`, so the overload is chosen by the launch's arguments, and the kernel's kind is the
// CPU-debug kernel mode's (MIX unless set), or MIX when the unit is compiled once per core kind.
std::string rewrite_unit_launches(const std::string& preprocessed, const std::string& file);

// The vendor compiler's placement lists on a preprocessed translation unit: a function declared
// `__forceinline__[host, aicore]` (a bracketed list of where it runs, after the function
// specifier; __forceinline__ expands to `inline`) is an inline function of host C++ here, so each
// `inline [identifier, ...]` outside comments and literals loses its list (white space and line
// markers between them are kept). `inline [[attr]]` (a C++ attribute) is kept. Throws InputError naming `file` and the line of an unclosed list.
std::string strip_placement_lists(const std::string& preprocessed, const std::string& file);

}  // namespace sfumato::ascendc
