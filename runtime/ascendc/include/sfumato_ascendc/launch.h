// Kernel launches: ICPU_RUN_KF (CPU-debug programs) and `kernel<<<blockDim, l2ctrl, stream>>>(args)`
// (rewritten by scripts/ascendc-build into make_launcher(kernel, ...)(args)) both capture the
// kernel's arguments by value, as the launch packs them for the device (GM pointers, tiling
// structs), and hand a body to runtime/ascendc, which runs it on block_dim blocks of the
// simulated chip through the device runtime.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "sfumato_ascendc/core_state.h"
#include "sfumato_ascendc/defs.h"

namespace sfumato::ascendc {

// Which cores a block needs: from the kernel's qualifier (__vector__, __cube__, __mix__), or
// from SetKernelMode for CPU-debug launches (MIX by default, as the vendor's).
enum class LaunchKind : uint8_t { Vector, Cube, Mix, FromMode };

struct LaunchRequest {
    std::string name;
    uint32_t block_dim = 1;
    void* stream = nullptr;  // aclrtStream; null = the default stream
    LaunchKind kind = LaunchKind::FromMode;
    bool cpu_debug = false;  // ICPU_RUN_KF: returns when done, GmAlloc buffers in sync
    std::function<void()> body;  // the kernel with its arguments, on the running block
    // The argument block each core reads at start-up: the kernel's parameters as the launch packs
    // them (8-byte slots: GM pointers, scalars, tiling passed by value).
    uint32_t args_bytes = 0;
    // A unit compiled once per core kind (g_coreType a constant; sfumato-asc): body is the AIC
    // program's, body_aiv the AIV program's; such a kernel runs as a mix kernel.
    std::function<void()> body_aiv;
};
template <class... P>
constexpr uint32_t args_block_bytes() {
    return static_cast<uint32_t>((0 + ... + ((sizeof(std::decay_t<P>) + 7) / 8 * 8)));
}
// Launches on the simulated chip (set up on first use). Errors print and exit (code 2 for bad
// input, as the sfumato command does).
void launch(LaunchRequest r);

template <class... P>
class Launcher {
public:
    Launcher(void (*k)(P...), const char* name, uint32_t block_dim, void* stream, LaunchKind kind)
        : m_k(k), m_name(name), m_block_dim(block_dim), m_stream(stream), m_kind(kind) {}
    template <class... A>
    void operator()(A&&... args) const {
        static_assert(sizeof...(A) == sizeof...(P), "kernel launch: wrong number of arguments");
        std::tuple<std::decay_t<P>...> packed(std::forward<A>(args)...);
        void (*k)(P...) = m_k;
        launch({m_name, m_block_dim, m_stream, m_kind, false, [k, packed] { std::apply(k, packed); },
                args_block_bytes<P...>(), {}});
    }

private:
    void (*m_k)(P...);
    const char* m_name;
    uint32_t m_block_dim;
    void* m_stream;
    LaunchKind m_kind;
};

inline void* stream_arg(void* s) { return s; }
inline void* stream_arg(std::nullptr_t) { return nullptr; }
inline void* stream_arg(int) { return nullptr; }

template <class... P, class L2, class S>
Launcher<P...> make_launcher(void (*k)(P...), const char* name, LaunchKind kind, uint32_t blockDim, L2&&, S&& stream) {
    return Launcher<P...>(k, name, blockDim, stream_arg(stream), kind);
}
template <class... P, class L2>
Launcher<P...> make_launcher(void (*k)(P...), const char* name, LaunchKind kind, uint32_t blockDim, L2&&) {
    return Launcher<P...>(k, name, blockDim, nullptr, kind);
}
template <class... P>
Launcher<P...> make_launcher(void (*k)(P...), const char* name, LaunchKind kind, uint32_t blockDim) {
    return Launcher<P...>(k, name, blockDim, nullptr, kind);
}

// Kernels compiled once per core kind: each program registers, before main, its body of each launch
// (by the launch's lambda type and argument types, which name the same launch in both programs); the
// AIC program's launch finds the AIV program's body there.
// closure: the launch lambda (empty: it captures nothing; the AIC program's object serves both programs, whose
// closure types are the same type compiled twice); packed_args: the launch's argument tuple.
using CoreBodyFn = void (*)(const void* closure, const void* packed_args);
bool register_core_body(const char* key, int core_type, CoreBodyFn fn);
CoreBodyFn core_body(const std::string& key, int core_type);  // null when none registered

template <class F, class Tuple>
void call_packed(const void* closure, const void* packed) {
    std::apply(*static_cast<const F*>(closure), *static_cast<const Tuple*>(packed));
}
template <class F, class Tuple>
std::string launch_key() {
    return std::string(typeid(F).name()) + "|" + typeid(Tuple).name();
}
#if defined(__DAV_CUBE__) || defined(__DAV_VEC__)
template <class F, class Tuple>
struct CoreBody {
    static inline const bool registered =
        register_core_body(launch_key<F, Tuple>().c_str(), g_coreType, &call_packed<F, Tuple>);
};
#endif

// A launch found in a preprocessed unit (asc_rewrite.h: rewrite_unit_launches): F calls the kernel
// with the launch's arguments, which are packed by value as given.
template <class F>
class CallLauncher {
public:
    // kind: FromMode, or the core kind a kernel's attribute names (__attribute__((aic)) / ((aiv))).
    CallLauncher(F f, const char* name, uint32_t block_dim, void* stream, LaunchKind kind = LaunchKind::FromMode)
        : m_f(f), m_name(name), m_block_dim(block_dim), m_stream(stream), m_kind(kind) {}
    template <class... A>
    void operator()(A&&... args) const {
        using Tuple = std::tuple<std::decay_t<A>...>;
        auto packed = std::make_shared<const Tuple>(std::forward<A>(args)...);
        const F f = m_f;
        LaunchRequest r{m_name, m_block_dim, m_stream, LaunchKind::FromMode, false,
                        [f, packed] { call_packed<F, Tuple>(&f, packed.get()); }, args_block_bytes<A...>(), {}};
#if defined(__DAV_CUBE__) || defined(__DAV_VEC__)
        (void)CoreBody<F, Tuple>::registered;
        const CoreBodyFn aiv = core_body(launch_key<F, Tuple>(), AscendC::AIV);
        std::function<void()> aiv_body = [f, packed, aiv] { aiv(&f, packed.get()); };
        if (!aiv) aiv_body = [] { fail("the AIV program of this kernel was not linked (sfumato-asc builds both)"); };
        if (m_kind == LaunchKind::Cube) {  // the AIC program's body on AICs only
            r.kind = LaunchKind::Cube;
        } else if (m_kind == LaunchKind::Vector) {  // the AIV program's body on AIVs only
            r.kind = LaunchKind::Vector;
            r.body = aiv_body;
        } else {
            r.kind = LaunchKind::Mix;
            r.body_aiv = aiv_body;
        }
#else
        r.kind = m_kind;
#endif
        launch(std::move(r));
    }

private:
    F m_f;
    const char* m_name;
    uint32_t m_block_dim;
    void* m_stream;
    LaunchKind m_kind;
};
template <class F, class L2, class S>
CallLauncher<F> make_call_launcher(const char* name, F f, uint32_t blockDim, L2&&, S&& stream) {
    return CallLauncher<F>(f, name, blockDim, stream_arg(stream));
}
template <class F, class L2>
CallLauncher<F> make_call_launcher(const char* name, F f, uint32_t blockDim, L2&&) {
    return CallLauncher<F>(f, name, blockDim, nullptr);
}
template <class F>
CallLauncher<F> make_call_launcher(const char* name, F f, uint32_t blockDim) {
    return CallLauncher<F>(f, name, blockDim, nullptr);
}
// A kernel whose definition names its core kind (__attribute__((aic)) / ((aiv))).
template <class F, class L2, class S>
CallLauncher<F> make_call_launcher(const char* name, LaunchKind kind, F f, uint32_t blockDim, L2&&, S&& stream) {
    return CallLauncher<F>(f, name, blockDim, stream_arg(stream), kind);
}
template <class F, class L2>
CallLauncher<F> make_call_launcher(const char* name, LaunchKind kind, F f, uint32_t blockDim, L2&&) {
    return CallLauncher<F>(f, name, blockDim, nullptr, kind);
}
template <class F>
CallLauncher<F> make_call_launcher(const char* name, LaunchKind kind, F f, uint32_t blockDim) {
    return CallLauncher<F>(f, name, blockDim, nullptr, kind);
}

template <class... P, class... A>
void run_kf(void (*k)(P...), const char* name, uint32_t blockDim, A&&... args) {
    static_assert(sizeof...(A) == sizeof...(P), "ICPU_RUN_KF: wrong number of kernel arguments");
    std::tuple<std::decay_t<P>...> packed(std::forward<A>(args)...);
    launch({name, blockDim, nullptr, LaunchKind::FromMode, true, [k, packed] { std::apply(k, packed); },
            args_block_bytes<P...>(), {}});
}

}  // namespace sfumato::ascendc
