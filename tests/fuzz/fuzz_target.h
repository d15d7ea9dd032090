// Fuzz targets: each file under tests/fuzz/ defines one with SFUMATO_FUZZ_TARGET(name) { ... },
// a body that feeds `data`/`size` to one input parser the way the CLI does. The same source
// builds two ways: into the libFuzzer binary `sfumato_fuzz` (CMake -DSFUMATO_FUZZ=ON with
// clang++; the target is picked with SFUMATO_FUZZ_TARGET=name) and into `fuzz_replay`, a plain
// program of the normal build that replays the seed corpus and every saved regression input
// (CTest `fuzz:<name>`), so no libFuzzer is needed to keep a fixed bug fixed.
// Contract: an input ends in success or in the documented error (an exception whose exit code
// is 2: InputError, ConfigError); any other exception, a failed property check (fail()), a
// crash or a sanitizer report is a finding.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sfumato::fuzz {

using TargetFn = void (*)(const uint8_t* data, size_t size);

struct Registrar {
    Registrar(const char* name, TargetFn fn);
};

// Runs one input through fn and enforces the contract above (aborts on a finding).
void run_input(const char* target, TargetFn fn, const uint8_t* data, size_t size);
// A property of the target does not hold: print and abort.
[[noreturn]] void fail(const std::string& what);

inline std::string_view as_text(const uint8_t* data, size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

}  // namespace sfumato::fuzz

#define SFUMATO_FUZZ_TARGET(name)                                                                  \
    static void sfumato_fuzz_body_##name(const uint8_t* data, size_t size);                        \
    static ::sfumato::fuzz::Registrar sfumato_fuzz_registrar_##name(#name, sfumato_fuzz_body_##name); \
    static void sfumato_fuzz_body_##name([[maybe_unused]] const uint8_t* data, [[maybe_unused]] size_t size)
