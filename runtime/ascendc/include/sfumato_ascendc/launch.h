// Kernel launches: ICPU_RUN_KF (CPU-debug programs) and `kernel<<<blockDim, l2ctrl, stream>>>(args)`
// (rewritten by scripts/ascendc-build into make_launcher(kernel, ...)(args)) both capture the
// kernel's arguments by value, as the launch packs them for the device (GM pointers, tiling
// structs), and hand a body to runtime/ascendc, which runs it on block_dim blocks of the
// simulated chip through the device runtime.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

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
                args_block_bytes<P...>()});
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

template <class... P, class... A>
void run_kf(void (*k)(P...), const char* name, uint32_t blockDim, A&&... args) {
    static_assert(sizeof...(A) == sizeof...(P), "ICPU_RUN_KF: wrong number of kernel arguments");
    std::tuple<std::decay_t<P>...> packed(std::forward<A>(args)...);
    launch({name, blockDim, nullptr, LaunchKind::FromMode, true, [k, packed] { std::apply(k, packed); },
            args_block_bytes<P...>()});
}

}  // namespace sfumato::ascendc
